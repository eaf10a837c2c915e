// The native store's zero-copy batch calls (package mooncake's batch.go):
// put, upsert and get of one buffer or a CSR buffer list per key, exists
// and remove.

#include <vector>

#include "native/store/call.h"

using namespace mcgo::native::store;  // NOLINT: the store part's frame (call.h)

namespace {

int32_t BatchWrite(mcgo_store *s, const char *keys,
                   const uint64_t *key_offsets, size_t n,
                   const uintptr_t *addrs, const uint64_t *sizes,
                   mcgo_replicate_config cfg, int64_t *results,
                   bool upsert) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (int32_t rc = BatchPrologue(call.client(), keys, key_offsets, n, results)) {
      return rc;
    }
    mooncake::ReplicateConfig rc;
    // Upstream fails every key of a single-buffer batch put that asks for
    // same-node allocation; like the embedded engine, refuse the call.
    if (addrs == nullptr || sizes == nullptr) return Refuse(results, n, MCGO_INVALID_PARAMS);
    if (int32_t refused = ToReplicate(cfg, &rc)) return Refuse(results, n, refused);
    if (rc.prefer_alloc_in_same_node) return Refuse(results, n, MCGO_INVALID_PARAMS);
    auto k = Keys(keys, key_offsets, n);
    auto p = Ptrs(addrs, n);
    auto z = Sizes(sizes, n);
    if (upsert) return Results(call.client()->batch_upsert_from(k, p, z, rc), n, results);
    return Results(call.client()->batch_put_from(k, p, z, rc), n, results);
  });
}

int32_t BatchWriteMulti(mcgo_store *s, const char *keys,
                        const uint64_t *key_offsets, size_t n,
                        const uintptr_t *addrs, const uint64_t *sizes,
                        const uint64_t *buf_offsets,
                        mcgo_replicate_config cfg, int64_t *results,
                        bool upsert) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (int32_t rc = BatchPrologue(call.client(), keys, key_offsets, n, results)) {
      return rc;
    }
    mooncake::ReplicateConfig rc;
    // Upstream fails every key when same-node allocation asks for more than
    // one replica; like the embedded engine, refuse the call.
    if (!CsrOk(addrs, sizes, buf_offsets, n)) return Refuse(results, n, MCGO_INVALID_PARAMS);
    if (int32_t refused = ToReplicate(cfg, &rc)) return Refuse(results, n, refused);
    if (rc.prefer_alloc_in_same_node && rc.replica_num != 1) {
      return Refuse(results, n, MCGO_INVALID_PARAMS);
    }
#if !MCGO_HAVE_MULTI_BUFFER_UPSERT
    // Upstream before batch_upsert_from_multi_buffers (v0.3.12.post1):
    // refused as a whole, after the argument checks.
    if (upsert) return Refuse(results, n, MCGO_NOT_SUPPORTED);
#endif
    std::vector<std::vector<void *>> ptrs;
    std::vector<std::vector<size_t>> szs;
    Nested(addrs, sizes, buf_offsets, n, &ptrs, &szs);
    auto k = Keys(keys, key_offsets, n);
#if MCGO_HAVE_MULTI_BUFFER_UPSERT
    if (upsert) {
      return Results(call.client()->batch_upsert_from_multi_buffers(k, ptrs, szs, rc),
                     n, results);
    }
#endif
    return Results(call.client()->batch_put_from_multi_buffers(k, ptrs, szs, rc), n,
                   results);
  });
}

}  // namespace

extern "C" {

int32_t mcgo_store_batch_put_from(mcgo_store *s, const char *keys,
                            const uint64_t *key_offsets, size_t n,
                            const uintptr_t *addrs, const uint64_t *sizes,
                            mcgo_replicate_config cfg, int64_t *results) {
  return BatchWrite(s, keys, key_offsets, n, addrs, sizes, cfg, results, false);
}

int32_t mcgo_store_batch_upsert_from(mcgo_store *s, const char *keys,
                               const uint64_t *key_offsets, size_t n,
                               const uintptr_t *addrs, const uint64_t *sizes,
                               mcgo_replicate_config cfg, int64_t *results) {
  return BatchWrite(s, keys, key_offsets, n, addrs, sizes, cfg, results, true);
}

int32_t mcgo_store_batch_get_into(mcgo_store *s, const char *keys,
                            const uint64_t *key_offsets, size_t n,
                            const uintptr_t *addrs, const uint64_t *sizes,
                            int64_t *results) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (int32_t rc = BatchPrologue(call.client(), keys, key_offsets, n, results)) {
      return rc;
    }
    if (addrs == nullptr || sizes == nullptr) {
      return Refuse(results, n, MCGO_INVALID_PARAMS);
    }
    return Results(call.client()->batch_get_into(Keys(keys, key_offsets, n),
                                                 Ptrs(addrs, n), Sizes(sizes, n)),
                   n, results);
  });
}

int32_t mcgo_store_batch_put_from_multi_buffers(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *buf_offsets,
    mcgo_replicate_config cfg, int64_t *results) {
  return BatchWriteMulti(s, keys, key_offsets, n, addrs, sizes, buf_offsets, cfg,
                         results, false);
}

int32_t mcgo_store_batch_upsert_from_multi_buffers(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *buf_offsets,
    mcgo_replicate_config cfg, int64_t *results) {
  return BatchWriteMulti(s, keys, key_offsets, n, addrs, sizes, buf_offsets, cfg,
                         results, true);
}

int32_t mcgo_store_batch_get_into_multi_buffers(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *buf_offsets,
    int32_t prefer_same_node, int64_t *results) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (int32_t rc = BatchPrologue(call.client(), keys, key_offsets, n, results)) {
      return rc;
    }
    if (!CsrOk(addrs, sizes, buf_offsets, n)) {
      return Refuse(results, n, MCGO_INVALID_PARAMS);
    }
    std::vector<std::vector<void *>> ptrs;
    std::vector<std::vector<size_t>> szs;
    Nested(addrs, sizes, buf_offsets, n, &ptrs, &szs);
    return Results(call.client()->batch_get_into_multi_buffers(
                       Keys(keys, key_offsets, n), ptrs, szs, prefer_same_node != 0),
                   n, results);
  });
}

int32_t mcgo_store_batch_is_exist(mcgo_store *s, const char *keys,
                            const uint64_t *key_offsets, size_t n,
                            int64_t *results) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (int32_t rc = BatchPrologue(call.client(), keys, key_offsets, n, results)) {
      return rc;
    }
    return Results(call.client()->batchIsExist(Keys(keys, key_offsets, n)), n, results);
  });
}

int32_t mcgo_store_batch_remove(mcgo_store *s, const char *keys,
                                const uint64_t *key_offsets, size_t n,
                                int32_t force, int64_t *results) {
  return KeysOnly(s, keys, key_offsets, n, results, [&](mooncake::PyClient *c, const std::vector<std::string> &ks) {
    return c->batchRemove(ks, force != 0);
  });
}

}  // extern "C"
