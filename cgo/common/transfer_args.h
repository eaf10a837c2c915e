// transfer_args.h: the argument rules of mcgo/transfer.h, shared by both
// backends so that they refuse the same inputs with the same codes, and the
// frames both run their calls in (string results, mcgo_te_create).
// Header-only, C++17.
#ifndef MCGO_COMMON_TRANSFER_ARGS_H_
#define MCGO_COMMON_TRANSFER_ARGS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/guard.h"
#include "mcgo/transfer.h"

namespace mcgo::args {

inline std::string Str(const char *s) { return s == nullptr ? std::string() : std::string(s); }

// What a metadata string is to upstream's MetadataStoragePlugin::Create
// (transfer_metadata_plugin.cpp: no "://" means etcd), checked against the
// backend's mcgo_connect_forms: upstream aborts the process (LOG(FATAL)) on
// a protocol it was not built with, so both backends refuse one first.
enum class MetadataCheck { kOk, kUnknown, kNotBuilt };

inline MetadataCheck CheckMetadata(const std::string &m, std::string *why) {
  if (m == "P2PHANDSHAKE") return MetadataCheck::kOk;  // no plugin
  const size_t pos = m.find("://");
  const std::string proto = pos == std::string::npos ? "etcd" : m.substr(0, pos);
  uint32_t form = 0;
  const char *flag = "";
  if (proto == "http" || proto == "https") {
    form = MCGO_CONNECT_METADATA_HTTP, flag = "USE_HTTP";
  } else if (proto == "etcd") {
    form = MCGO_CONNECT_METADATA_ETCD, flag = "USE_ETCD";
  } else if (proto == "redis") {
    form = MCGO_CONNECT_METADATA_REDIS, flag = "USE_REDIS";
  } else {
    *why = "metadata_server \"" + m + "\": unknown protocol \"" + proto +
           "\" (want P2PHANDSHAKE, http(s)://, etcd:// or redis://)";
    return MetadataCheck::kUnknown;
  }
  if ((mcgo_connect_forms() & form) == 0) {
    *why = "metadata_server \"" + m + "\": this backend's upstream was built without " + flag;
    return MetadataCheck::kNotBuilt;
  }
  return MetadataCheck::kOk;
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

// ---- the argument checks of each call ---------------------------------------
// Each returns whether the call may go on; a false is
// MCGO_TE_ERR_INVALID_ARGUMENT. Outputs are cleared first, so that a refused
// call leaves no stale value.

// mcgo_te_open_segment: *seg is 0 until it succeeds.
inline bool OpenSegmentArgsOk(const mcgo_te *e, const char *name, size_t name_len, uint64_t *seg) {
  if (seg != nullptr) *seg = 0;
  return e != nullptr && seg != nullptr && (name != nullptr || name_len == 0);
}

inline bool SegmentBuffersArgsOk(const mcgo_te *e, const uint64_t *addrs, const uint64_t *lens,
                                 size_t cap, const size_t *total) {
  return e != nullptr && total != nullptr && (cap == 0 || (addrs != nullptr && lens != nullptr));
}

// mcgo_te_batch_alloc: *batch is 0 until it succeeds.
inline bool BatchAllocArgsOk(const mcgo_te *e, uint32_t capacity, uint64_t *batch) {
  if (batch != nullptr) *batch = 0;
  return e != nullptr && batch != nullptr && capacity <= MCGO_TE_MAX_BATCH;
}

inline bool BatchStatusArgsOk(const mcgo_te *e, const mcgo_te_task_status *tasks, size_t cap,
                              const mcgo_te_batch_summary *summary) {
  return e != nullptr && summary != nullptr && (cap == 0 || tasks != nullptr);
}

// mcgo_te_notify_recv: *n and *need are 0 until it succeeds.
inline bool NotifyRecvArgsOk(const mcgo_te *e, const char *buf, uint64_t buf_cap,
                             const uint64_t *name_lens, const uint64_t *msg_lens, size_t max_n,
                             size_t *n, uint64_t *need) {
  if (n != nullptr) *n = 0;
  if (need != nullptr) *need = 0;
  return e != nullptr && n != nullptr && (buf != nullptr || buf_cap == 0) &&
         (max_n == 0 || (name_lens != nullptr && msg_lens != nullptr));
}

// The notification of mcgo_te_batch_submit, checked once the batch is
// known: *with is whether there is one. MCGO_OK, or
// MCGO_TE_ERR_INVALID_ARGUMENT for one without requests or one NotifyOk
// refuses.
inline int32_t SubmitNotifyOk(size_t n, const char *name, size_t name_len, const char *msg,
                              size_t msg_len, bool *with) {
  *with = name_len > 0 || msg_len > 0;
  if (*with && (n == 0 || !NotifyOk(name, name_len, msg, msg_len))) {
    return MCGO_TE_ERR_INVALID_ARGUMENT;
  }
  return MCGO_OK;
}

// Whether n more requests fit a batch of capacity that holds used.
inline bool BatchFits(uint64_t capacity, uint64_t used, size_t n) {
  return n <= capacity - std::min<uint64_t>(capacity, used);
}

// Hands out handle h of a table (0: the table is full).
inline int32_t GiveHandle(uint64_t h, uint64_t *out) {
  if (h == 0) return MCGO_TE_ERR_TOO_MANY_REQUESTS;
  *out = h;
  return MCGO_OK;
}

// A string result (segment name, address, topology): its length into *len
// (when len is not NULL) and the string, NUL-terminated and cut to fit,
// into buf. A NULL buf is refused only with a capacity.
inline int32_t WriteString(const std::string &v, char *buf, size_t cap, size_t *len) {
  if (buf == nullptr && cap > 0) return MCGO_TE_ERR_INVALID_ARGUMENT;
  if (len != nullptr) *len = v.size();
  WriteMessage(buf, cap, v);
  return MCGO_OK;
}

// mcgo_te_create as both backends run it: the message and exception
// boundary of MessageGuard, *out NULL until it succeeds, the config's rules
// (a metadata string this backend can use, a local_server_name); then
// make(metadata, name, fail) creates the engine, sets *out and returns
// MCGO_OK, or returns fail(code, why).
template <typename Make>
int32_t CreateEngine(const mcgo_te_config *cfg, mcgo_te **out, char *errmsg, size_t errmsg_cap,
                     Make &&make) {
  auto body = [&](const auto &fail) -> int32_t {
    if (out == nullptr || cfg == nullptr) {
      return fail(MCGO_TE_ERR_INVALID_ARGUMENT, "NULL config or out");
    }
    *out = nullptr;
    const std::string metadata = Str(cfg->metadata_server);
    std::string why;
    switch (CheckMetadata(metadata, &why)) {
      case MetadataCheck::kOk:
        break;
      case MetadataCheck::kUnknown:
        return fail(MCGO_TE_ERR_INVALID_ARGUMENT, why);
      case MetadataCheck::kNotBuilt:
        return fail(MCGO_TE_ERR_NOT_IMPLEMENTED, why);
    }
    const std::string name = Str(cfg->local_server_name);
    if (name.empty()) return fail(MCGO_TE_ERR_INVALID_ARGUMENT, "local_server_name is empty");
    return make(metadata, name, fail);
  };
  return MessageGuard("mcgo_te_create", MCGO_TE_ERR_INTERNAL, errmsg, errmsg_cap, body);
}

}  // namespace mcgo::args

#endif  // MCGO_COMMON_TRANSFER_ARGS_H_
