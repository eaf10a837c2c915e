// guard.h: the exception boundary of every mcgo_* function, shared by the
// embedded and the native backend. A C++ exception must never cross into C
// (or Go): it would terminate the process. Header-only, C++17.
#ifndef MCGO_COMMON_GUARD_H_
#define MCGO_COMMON_GUARD_H_

#include <cstddef>
#include <cstdint>

#include "common/args.h"
#include "mcgo/codes.h"

namespace mcgo {

// Runs body and returns its result, or MCGO_INTERNAL_ERROR if it throws.
template <typename F>
int32_t Guard32(F &&body) noexcept {
  try {
    return body();
  } catch (...) {
    return MCGO_INTERNAL_ERROR;
  }
}

template <typename F>
int64_t Guard64(F &&body) noexcept {
  try {
    return body();
  } catch (...) {
    return MCGO_INTERNAL_ERROR;
  }
}

// A batch call: an exception refuses the whole call, so every results[i]
// gets MCGO_INTERNAL_ERROR as well.
template <typename F>
int32_t GuardBatch(int64_t *results, size_t n, F &&body) noexcept {
  try {
    return body();
  } catch (...) {
    return args::Refuse(results, n, MCGO_INTERNAL_ERROR);
  }
}

}  // namespace mcgo

#endif  // MCGO_COMMON_GUARD_H_
