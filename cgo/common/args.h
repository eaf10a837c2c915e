// args.h: argument helpers shared by both backends of the C ABI
// (the embedded engine and the native shim), so that both refuse exactly
// the same inputs in exactly the same way. Header-only, C++17.
#ifndef MCGO_COMMON_ARGS_H_
#define MCGO_COMMON_ARGS_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "mcgo/store.h"

namespace mcgo::args {

// Sets results[0..n) to code (no-op when results is NULL).
inline void Fill(int64_t *results, size_t n, int64_t code) {
  if (results == nullptr) return;
  for (size_t i = 0; i < n; ++i) results[i] = code;
}

// A whole-call refusal: every result gets the code, which is returned.
inline int32_t Refuse(int64_t *results, size_t n, int32_t code) {
  Fill(results, n, code);
  return code;
}

// Copies msg into buf as a NUL-terminated string of at most cap bytes.
inline void WriteMessage(char *buf, size_t cap, const std::string &msg) {
  if (buf == nullptr || cap == 0) return;
  const size_t n = msg.size() < cap - 1 ? msg.size() : cap - 1;
  std::memcpy(buf, msg.data(), n);
  buf[n] = '\0';
}

// Single key: NULL is allowed only for the empty key; at most
// MCGO_MAX_KEY_LEN bytes.
inline bool KeyOk(const char *key, size_t len) {
  return (key != nullptr || len == 0) && len <= MCGO_MAX_KEY_LEN;
}
inline std::string MakeKey(const char *key, size_t len) {
  return len == 0 ? std::string() : std::string(key, len);
}

// Packed keys: keys and key_offsets non-NULL, offsets non-decreasing, no
// key longer than MCGO_MAX_KEY_LEN.
inline bool KeysOk(const char *keys, const uint64_t *off, size_t n) {
  if (keys == nullptr || off == nullptr) return false;
  for (size_t i = 0; i < n; ++i) {
    if (off[i + 1] < off[i] || off[i + 1] - off[i] > MCGO_MAX_KEY_LEN) return false;
  }
  return true;
}
inline std::string KeyAt(const char *keys, const uint64_t *off, size_t i) {
  return std::string(keys + off[i], static_cast<size_t>(off[i + 1] - off[i]));
}

// CSR buffer list: buf_offsets[0] == 0, non-decreasing; addrs and sizes
// non-NULL when there is at least one buffer.
inline bool CsrOk(const uintptr_t *addrs, const uint64_t *sizes,
                  const uint64_t *bo, size_t n) {
  if (bo == nullptr || bo[0] != 0) return false;
  for (size_t i = 0; i < n; ++i) {
    if (bo[i + 1] < bo[i]) return false;
  }
  return bo[n] == 0 || (addrs != nullptr && sizes != nullptr);
}

// CSR range list (the session calls): a CSR buffer list whose ranges also
// have object offsets.
inline bool RangesOk(const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *offsets,
                     const uint64_t *bo, size_t n) {
  return CsrOk(addrs, sizes, bo, n) && (bo[n] == 0 || offsets != nullptr);
}

// The checks of get_into_ranges, whose results are one per range (n > 0):
// MCGO_OK to go on with *m the range count, else the code to return, with
// every result filled when there is room for them.
inline int32_t RangedReadArgs(bool ready, const char *keys, const uint64_t *off, size_t n,
                              const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *offsets,
                              const uint64_t *bo, int64_t *results, size_t *m) {
  if (bo == nullptr) return MCGO_INVALID_PARAMS;
  *m = static_cast<size_t>(bo[n]);
  if (*m > 0 && results == nullptr) return MCGO_INVALID_PARAMS;
  if (!ready || !KeysOk(keys, off, n) || !RangesOk(addrs, sizes, offsets, bo, n)) {
    return Refuse(results, *m, MCGO_INVALID_PARAMS);
  }
  return MCGO_OK;
}

// Whether [offset, offset+size) lies inside an object of limit bytes
// (upstream's is_object_range_overflow, negated).
inline bool RangeInside(uint64_t offset, uint64_t size, uint64_t limit) {
  return size <= limit && offset <= limit - size;
}

// Splits mcgo_replicate_config's packed preferred segment names. Returns
// false when the buffer holds fewer NUL-terminated names than the count.
inline bool ParseNames(uint32_t count, const char *names, uint64_t names_len,
                       std::vector<std::string> *out) {
  out->clear();
  if (count == 0) return true;
  if (names == nullptr) return false;
  const char *p = names;
  uint64_t left = names_len;
  for (uint32_t k = 0; k < count; ++k) {
    const size_t cap =
        left > SIZE_MAX ? SIZE_MAX : static_cast<size_t>(left);
    const void *nul = std::memchr(p, 0, cap);
    if (nul == nullptr) return false;
    const size_t len = static_cast<size_t>(static_cast<const char *>(nul) - p);
    out->emplace_back(p, len);
    p += len + 1;
    left -= len + 1;
  }
  return true;
}

inline bool ParseSegments(const mcgo_replicate_config &in,
                          std::vector<std::string> *out) {
  return ParseNames(in.preferred_segment_count, in.preferred_segments,
                    in.preferred_segments_len, out);
}

inline bool ParseNoFSegments(const mcgo_replicate_config &in,
                             std::vector<std::string> *out) {
  return ParseNames(in.preferred_nof_segment_count, in.preferred_nof_segments,
                    in.preferred_nof_segments_len, out);
}

// Splits the group ids; an absent list is empty. False when malformed.
inline bool ParseGroupIds(const mcgo_replicate_config &in, std::vector<std::string> *out) {
  return ParseNames(in.has_group_ids ? in.group_id_count : 0, in.group_ids, in.group_ids_len, out);
}

// Whether the group list fits a call of n keys (absent, or one per key).
inline bool GroupIdsFit(const mcgo_replicate_config &in, size_t n) {
  return !in.has_group_ids || in.group_id_count == n;
}

// upstream's ObjectDataType values, 0 .. 9 (10-255 reserved).
inline bool DataTypeOk(const mcgo_replicate_config &in) { return in.data_type >= 0 && in.data_type <= 9; }

// PartsOk checks the (address, size) pairs of a copying multi-part call:
// the arrays exist when n > 0, and only an empty part may have address 0.
inline bool PartsOk(const uintptr_t *datas, const uint64_t *sizes, size_t n) {
  if (n == 0) return true;
  if (datas == nullptr || sizes == nullptr) return false;
  for (size_t i = 0; i < n; ++i) {
    if (datas[i] == 0 && sizes[i] > 0) return false;
  }
  return true;
}

// SoftPinActionOk checks soft_pin_action.
inline bool SoftPinActionOk(const mcgo_replicate_config &in) {
  return in.soft_pin_action >= MCGO_SOFT_PIN_PRESERVE && in.soft_pin_action <= MCGO_SOFT_PIN_DISABLE;
}

}  // namespace mcgo::args

#endif  // MCGO_COMMON_ARGS_H_
