// transfer_args.h: the argument rules of mcgo/transfer.h, shared by both
// backends so that they refuse the same inputs with the same codes.
// Header-only, C++17.
#ifndef MCGO_COMMON_TRANSFER_ARGS_H_
#define MCGO_COMMON_TRANSFER_ARGS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mcgo/transfer.h"

namespace mcgo::args {

inline std::string Str(const char *s) { return s == nullptr ? std::string() : std::string(s); }

// The metadata strings both backends accept: upstream's HTTP metadata
// server and its handshake mode. (Upstream aborts the process on a string
// for a plugin it was not built with, such as etcd.)
inline bool MetadataOk(const std::string &m) {
  return m.rfind("http://", 0) == 0 || m.rfind("https://", 0) == 0 || m == "P2PHANDSHAKE";
}

inline bool ProtocolOk(const std::string &p) { return p == "tcp" || p == "rdma"; }

// Leading '/' are ignored, as upstream's openSegment does.
inline std::string_view SegmentName(const char *name, size_t len) {
  std::string_view v = name == nullptr ? std::string_view() : std::string_view(name, len);
  while (!v.empty() && v.front() == '/') v.remove_prefix(1);
  return v;
}

// Strict UTF-8 (no overlongs, no surrogates): upstream sends notifications
// as JSON strings and replaces invalid bytes, so they would not arrive as
// sent.
inline bool Utf8Ok(std::string_view s) {
  size_t i = 0;
  const auto *p = reinterpret_cast<const unsigned char *>(s.data());
  while (i < s.size()) {
    const unsigned c = p[i];
    size_t n;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      n = 1, cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      n = 2, cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      n = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;  // truncated sequence
    for (size_t k = 1; k <= n; ++k) {
      if ((p[i + k] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (p[i + k] & 0x3f);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
        cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    i += n + 1;
  }
  return true;
}

// A notification's name and message: valid UTF-8, small enough for one of
// upstream's handshake frames. NULL is allowed only with length 0.
inline bool NotifyOk(const char *name, size_t name_len, const char *msg, size_t msg_len) {
  if ((name == nullptr && name_len > 0) || (msg == nullptr && msg_len > 0)) return false;
  if (name_len > MCGO_TE_NOTIFY_MAX_BYTES || msg_len > MCGO_TE_NOTIFY_MAX_BYTES - name_len) {
    return false;
  }
  return Utf8Ok(std::string_view(name == nullptr ? "" : name, name_len)) &&
         Utf8Ok(std::string_view(msg == nullptr ? "" : msg, msg_len));
}

// The checks of one request that need no engine state: opcode, reserved
// field, ranges that wrap. Returns 0 or MCGO_TE_ERR_INVALID_ARGUMENT.
inline int32_t RequestShapeOk(const mcgo_te_request &r) {
  if (r.opcode != MCGO_TE_READ && r.opcode != MCGO_TE_WRITE) return MCGO_TE_ERR_INVALID_ARGUMENT;
  if (r.reserved != 0) return MCGO_TE_ERR_INVALID_ARGUMENT;
  if (r.length == 0) return MCGO_OK;
  if (r.local_addr == 0 || r.remote_addr == 0) return MCGO_TE_ERR_INVALID_ARGUMENT;
  if (r.length - 1 > UINT64_MAX - r.local_addr || r.length - 1 > UINT64_MAX - r.remote_addr) {
    return MCGO_TE_ERR_INVALID_ARGUMENT;
  }
  return MCGO_OK;
}

}  // namespace mcgo::args

#endif  // MCGO_COMMON_TRANSFER_ARGS_H_
