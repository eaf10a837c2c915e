// replica_desc.h: packing replica descriptors into the caller's arrays
// for mcgo_store_batch_get_replica_desc, shared by both backends.
// Header-only, C++17.
#ifndef MCGO_COMMON_REPLICA_DESC_H_
#define MCGO_COMMON_REPLICA_DESC_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "mcgo/codes.h"
#include "mcgo/store.h"

namespace mcgo {

// DescWriter appends descriptors while there is room and counts what the
// whole answer needs.
class DescWriter {
 public:
  DescWriter(mcgo_replica_desc *descs, size_t descs_cap, char *names, size_t names_cap)
      : descs_(descs), descs_cap_(descs_cap), names_(names), names_cap_(names_cap) {}

  void Add(mcgo_replica_desc d, const std::string &location) {
    d.location_offset = names_len_;
    d.location_len = location.size();
    if (descs_ != nullptr && n_ < descs_cap_) descs_[n_] = d;
    if (names_ != nullptr && names_len_ + location.size() <= names_cap_ && !location.empty()) {
      std::memcpy(names_ + names_len_, location.data(), location.size());
    }
    ++n_;
    names_len_ += location.size();
  }

  // Finish sets the needed sizes and returns MCGO_OK or MCGO_BUFFER_OVERFLOW.
  int32_t Finish(size_t *descs_needed, size_t *names_needed) const {
    if (descs_needed != nullptr) *descs_needed = n_;
    if (names_needed != nullptr) *names_needed = names_len_;
    return (n_ > descs_cap_ || names_len_ > names_cap_) ? MCGO_BUFFER_OVERFLOW : MCGO_OK;
  }

 private:
  mcgo_replica_desc *descs_;
  size_t descs_cap_;
  char *names_;
  size_t names_cap_;
  size_t n_ = 0;
  size_t names_len_ = 0;
};

// DescArgsOk checks the output arguments: a non-zero capacity needs its
// buffer.
inline bool DescArgsOk(const mcgo_replica_desc *descs, size_t descs_cap, const char *names,
                       size_t names_cap) {
  return (descs != nullptr || descs_cap == 0) && (names != nullptr || names_cap == 0);
}

}  // namespace mcgo

#endif  // MCGO_COMMON_REPLICA_DESC_H_
