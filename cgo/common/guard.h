// guard.h: the exception boundary of every mcgo_* function, shared by the
// embedded and the native backend. A C++ exception must never cross into C
// (or Go): it would terminate the process. Header-only, C++17.
#ifndef MCGO_COMMON_GUARD_H_
#define MCGO_COMMON_GUARD_H_

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "common/args.h"
#include "mcgo/codes.h"

namespace mcgo {

// Runs body and returns its result, or code if it throws.
template <typename R, typename F>
R GuardOr(R code, F &&body) noexcept {
  try {
    return body();
  } catch (...) {
    return code;
  }
}

// The store's calls: MCGO_INTERNAL_ERROR if body throws.
template <typename F>
int32_t Guard32(F &&body) noexcept {
  return GuardOr<int32_t>(MCGO_INTERNAL_ERROR, body);
}

template <typename F>
int64_t Guard64(F &&body) noexcept {
  return GuardOr<int64_t>(MCGO_INTERNAL_ERROR, body);
}

// The transfer engine's calls, in its own code space: MCGO_TE_ERR_INTERNAL
// if body throws.
template <typename F>
int32_t GuardTE(F &&body) noexcept {
  return GuardOr<int32_t>(MCGO_TE_ERR_INTERNAL, body);
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

// A call that says why it refuses in errmsg (a create or setup call named
// what): errmsg is cleared, then body(fail) returns a code and reports a
// refusal as fail(code, why), which writes "what: why". An exception is
// internal (the code of the caller's code space) with its message.
template <typename F>
int32_t MessageGuard(const char *what, int32_t internal, char *errmsg, size_t errmsg_cap,
                     F &&body) noexcept {
  args::WriteMessage(errmsg, errmsg_cap, "");
  auto fail = [&](int32_t code, const std::string &why) -> int32_t {
    args::WriteMessage(errmsg, errmsg_cap, std::string(what) + ": " + why);
    return code;
  };
  try {
    return body(fail);
  } catch (const std::exception &e) {
    return fail(internal, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(internal, "internal error");
  }
}

}  // namespace mcgo

#endif  // MCGO_COMMON_GUARD_H_
