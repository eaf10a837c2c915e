// The native store's transfer sessions and ranged reads (package
// mooncake's sessions.go).

#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "native/store/call.h"

using namespace mcgo::native::store;  // NOLINT: the store part's frame (call.h)

namespace {

// Splits a CSR column (sizes or offsets) into upstream's nested vectors.
[[maybe_unused]] std::vector<std::vector<size_t>> NestedColumn(const uint64_t *col, const uint64_t *bo, size_t n) {
  std::vector<std::vector<size_t>> out(n);
  for (size_t i = 0; i < n; ++i) out[i].assign(col + bo[i], col + bo[i + 1]);
  return out;
}

// The range calls: the checks both backends make, then upstream's call with
// nested vectors.
template <typename F>
int32_t RangeCall(mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
                  const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *offsets,
                  const uint64_t *bo, int64_t *results, F &&call_upstream) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (int32_t rc = BatchPrologue(call.client(), keys, key_offsets, n, results)) return rc;
    if (call.dummy()) return Refuse(results, n, MCGO_NOT_SUPPORTED);  // sessions are RealClient's
    if (!mcgo::args::RangesOk(addrs, sizes, offsets, bo, n)) return Refuse(results, n, MCGO_INVALID_PARAMS);
    std::vector<std::vector<void *>> ptrs;
    std::vector<std::vector<size_t>> lens;
    Nested(addrs, sizes, bo, n, &ptrs, &lens);
    return Results(call_upstream(call.client(), Keys(keys, key_offsets, n), ptrs, lens,
                                 NestedColumn(offsets, bo, n)),
                   n, results);
  });
}

// Calls upstream with the keys that are not refused (refused[i] holds the
// code of a key refused here, else 0) and scatters its results back.
template <typename F>
int32_t SubsetCall(const std::vector<std::string> &ks, const std::vector<int64_t> &refused,
                   int64_t *results, F &&call_upstream) {
  std::vector<size_t> index;
  std::vector<std::string> sub;
  for (size_t i = 0; i < ks.size(); ++i) {
    results[i] = refused[i];
    if (refused[i] == 0) {
      index.push_back(i);
      sub.push_back(ks[i]);
    }
  }
  if (sub.empty()) return MCGO_OK;
  const auto got = call_upstream(sub, index);
  if (got.size() != sub.size()) {
    for (size_t i : index) results[i] = MCGO_INTERNAL_ERROR;
    return MCGO_INTERNAL_ERROR;
  }
  for (size_t k = 0; k < index.size(); ++k) results[index[k]] = static_cast<int64_t>(got[k]);
  return MCGO_OK;
}

#if !MCGO_HAVE_SESSIONS
// Upstream before the session calls (v0.3.12.post1): each of them is
// MCGO_NOT_SUPPORTED, refused as a whole after the argument checks (the
// batch prologue, then check(), which returns 0 or the refusal's code), so
// that malformed input is MCGO_INVALID_PARAMS on every upstream.
int32_t NoSessions(mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
                   int64_t *results, const std::function<int32_t()> &check = [] { return MCGO_OK; }) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (int32_t rc = BatchPrologue(call.client(), keys, key_offsets, n, results)) return rc;
    if (int32_t rc = check()) return Refuse(results, n, rc);
    return Refuse(results, n, MCGO_NOT_SUPPORTED);
  });
}
#endif

}  // namespace

extern "C" {

int32_t mcgo_store_batch_get_session_start(mcgo_store *s, const char *keys,
                                           const uint64_t *key_offsets, size_t n,
                                           int64_t *results) {
#if MCGO_HAVE_SESSIONS
  return KeysOnly<true>(s, keys, key_offsets, n, results, [&](mooncake::PyClient *c, const std::vector<std::string> &ks) {
    return c->batch_get_session_start(ks);
  });
#else
  return NoSessions(s, keys, key_offsets, n, results);
#endif
}

int32_t mcgo_store_batch_get_into_multi_buffer_ranges(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *offsets,
    const uint64_t *buf_offsets, int64_t *results) {
#if MCGO_HAVE_SESSIONS
  return RangeCall(s, keys, key_offsets, n, addrs, sizes, offsets, buf_offsets, results,
                   [](mooncake::PyClient *c, const auto &ks, const auto &p, const auto &l, const auto &o) {
                     return c->batch_get_into_multi_buffer_ranges(ks, p, l, o);
                   });
#else
  return NoSessions(s, keys, key_offsets, n, results, [&]() -> int32_t {
    return mcgo::args::RangesOk(addrs, sizes, offsets, buf_offsets, n) ? MCGO_OK : MCGO_INVALID_PARAMS;
  });
#endif
}

int32_t mcgo_store_batch_get_session_end(mcgo_store *s, const char *keys,
                                         const uint64_t *key_offsets, size_t n) {
  return Guard32([&]() -> int32_t {
    if (n == 0) return MCGO_OK;
    Call call(s);
    if (call.client() == nullptr || !KeysOk(keys, key_offsets, n)) return MCGO_INVALID_PARAMS;
    if (call.dummy()) return MCGO_NOT_SUPPORTED;
#if MCGO_HAVE_SESSIONS
    return call.client()->batch_get_session_end(Keys(keys, key_offsets, n));
#else
    return MCGO_NOT_SUPPORTED;  // upstream before the session calls (v0.3.12.post1)
#endif
  });
}

int32_t mcgo_store_batch_put_session_start(mcgo_store *s, const char *keys,
                                           const uint64_t *key_offsets, size_t n,
                                           const uint64_t *sizes, mcgo_replicate_config cfg,
                                           int64_t *results) {
#if !MCGO_HAVE_SESSIONS
  return NoSessions(s, keys, key_offsets, n, results, [&]() -> int32_t {
    mooncake::ReplicateConfig rc;
    return sizes == nullptr ? MCGO_INVALID_PARAMS : ToReplicate(cfg, &rc);
  });
#else
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (int32_t rc = BatchPrologue(call.client(), keys, key_offsets, n, results)) return rc;
    if (call.dummy()) return Refuse(results, n, MCGO_NOT_SUPPORTED);
    mooncake::ReplicateConfig rc;
    if (sizes == nullptr) return Refuse(results, n, MCGO_INVALID_PARAMS);
    if (int32_t refused = ToReplicate(cfg, &rc)) return Refuse(results, n, refused);
    // Refused here as the embedded engine refuses them: size 0, and a key
    // a second time in one call (upstream would reserve it twice).
    const std::vector<std::string> ks = Keys(keys, key_offsets, n);
    std::vector<int64_t> refused(n, 0);
    std::unordered_set<std::string_view> seen;
    for (size_t i = 0; i < n; ++i) {
      if (sizes[i] == 0 || !seen.insert(ks[i]).second) refused[i] = MCGO_INVALID_PARAMS;
    }
    return SubsetCall(ks, refused, results, [&](const std::vector<std::string> &sub, const std::vector<size_t> &index) {
      std::vector<size_t> sub_sizes;
      for (size_t i : index) sub_sizes.push_back(static_cast<size_t>(sizes[i]));
      return call.client()->batch_put_session_start(sub, sub_sizes, rc);
    });
  });
#endif
}

int32_t mcgo_store_batch_put_from_multi_buffer_ranges(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *offsets,
    const uint64_t *buf_offsets, int64_t *results) {
#if MCGO_HAVE_SESSIONS
  return RangeCall(s, keys, key_offsets, n, addrs, sizes, offsets, buf_offsets, results,
                   [](mooncake::PyClient *c, const auto &ks, const auto &p, const auto &l, const auto &o) {
                     return c->batch_put_from_multi_buffer_ranges(ks, p, l, o);
                   });
#else
  return NoSessions(s, keys, key_offsets, n, results, [&]() -> int32_t {
    return mcgo::args::RangesOk(addrs, sizes, offsets, buf_offsets, n) ? MCGO_OK : MCGO_INVALID_PARAMS;
  });
#endif
}

int32_t mcgo_store_batch_put_session_end(mcgo_store *s, const char *keys,
                                         const uint64_t *key_offsets, size_t n,
                                         int64_t *results) {
#if MCGO_HAVE_SESSIONS
  return KeysOnly<true>(s, keys, key_offsets, n, results, [&](mooncake::PyClient *c, const std::vector<std::string> &ks) {
    return c->batch_put_session_end(ks);
  });
#else
  return NoSessions(s, keys, key_offsets, n, results);
#endif
}

int32_t mcgo_store_batch_put_session_revoke(mcgo_store *s, const char *keys,
                                            const uint64_t *key_offsets, size_t n,
                                            int64_t *results) {
#if MCGO_HAVE_SESSIONS
  return KeysOnly<true>(s, keys, key_offsets, n, results, [&](mooncake::PyClient *c, const std::vector<std::string> &ks) {
    return c->batch_put_session_revoke(ks);
  });
#else
  return NoSessions(s, keys, key_offsets, n, results);
#endif
}

int32_t mcgo_store_get_into_ranges(mcgo_store *s, const char *keys, const uint64_t *key_offsets,
                                   size_t n, const uintptr_t *addrs, const uint64_t *sizes,
                                   const uint64_t *offsets, const uint64_t *buf_offsets,
                                   int64_t *results) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (n == 0) return MCGO_OK;
    size_t m = 0;
    if (int32_t rc = mcgo::args::RangedReadArgs(call.client() != nullptr, keys, key_offsets, n, addrs, sizes,
                                                offsets, buf_offsets, results, &m)) {
      return rc;
    }
    // One upstream "buffer" per range, at the range's own address (dst
    // offset 0): upstream sizes a buffer by the registration it starts in,
    // so ranges of one key in different registrations stay independent.
    std::vector<void *> buffers(m);
    std::vector<std::vector<std::string>> all_keys(m);
    std::vector<std::vector<std::vector<size_t>>> dst(m), src(m), len(m);
    for (size_t i = 0; i < n; ++i) {
      const std::string key = KeyAt(keys, key_offsets, i);
      for (uint64_t j = buf_offsets[i]; j < buf_offsets[i + 1]; ++j) {
        buffers[j] = reinterpret_cast<void *>(addrs[j]);
        all_keys[j] = {key};
        dst[j] = {{0}};
        src[j] = {{static_cast<size_t>(offsets[j])}};
        len[j] = {{static_cast<size_t>(sizes[j])}};
      }
    }
    const auto got = call.client()->get_into_ranges(buffers, all_keys, dst, src, len);
    if (got.size() != m) return Refuse(results, m, MCGO_INTERNAL_ERROR);
    for (size_t j = 0; j < m; ++j) {
      results[j] = got[j].size() == 1 && got[j][0].size() == 1 ? got[j][0][0] : MCGO_INTERNAL_ERROR;
    }
    return MCGO_OK;
  });
}

}  // extern "C"
