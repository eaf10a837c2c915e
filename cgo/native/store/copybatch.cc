// The native store's copying calls of several parts (package mooncake's
// copybatch.go): one object from parts, and a batch of objects.

#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "native/store/call.h"

using namespace mcgo::native::store;  // NOLINT: the store part's frame (call.h)

namespace {

// Spans of the parts; false for a null pointer with a size.
bool Spans(const uintptr_t *datas, const uint64_t *sizes, size_t n,
           std::vector<std::span<const char>> *out) {
  if (!mcgo::args::PartsOk(datas, sizes, n)) return false;
  out->reserve(n);
  for (size_t i = 0; i < n; ++i) {
    out->emplace_back(reinterpret_cast<const char *>(datas[i]), static_cast<size_t>(sizes[i]));
  }
  return true;
}

int32_t PartsWrite(mcgo_store *s, const char *key, size_t key_len,
                   const uintptr_t *datas, const uint64_t *sizes, size_t n,
                   mcgo_replicate_config cfg, bool upsert) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    mooncake::ReplicateConfig rc;
    std::vector<std::span<const char>> parts;
    if (call.client() == nullptr || !KeyOk(key, key_len) || !Spans(datas, sizes, n, &parts)) {
      return MCGO_INVALID_PARAMS;
    }
    if (int32_t refused = ToReplicate(cfg, &rc)) return refused;
    uint64_t total = 0;
    for (const auto &p : parts) total += p.size();
    // Upstream stores nothing for 0 bytes and reports success.
    if (total == 0) return MCGO_INVALID_PARAMS;
    const std::string k = MakeKey(key, key_len);
    return upsert ? call.client()->upsert_parts(k, std::move(parts), rc)
                  : call.client()->put_parts(k, std::move(parts), rc);
  });
}

int32_t BatchCopyWrite(mcgo_store *s, const char *keys, const uint64_t *key_offsets,
                       size_t n, const uintptr_t *datas, const uint64_t *sizes,
                       mcgo_replicate_config cfg, bool upsert) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (call.client() == nullptr) return MCGO_INVALID_PARAMS;
    if (n == 0) return MCGO_OK;
    mooncake::ReplicateConfig rc;
    std::vector<std::span<const char>> values;
    if (!KeysOk(keys, key_offsets, n) || !Spans(datas, sizes, n, &values)) {
      return MCGO_INVALID_PARAMS;
    }
    if (int32_t refused = ToReplicate(cfg, &rc)) return refused;
    std::vector<std::string> ks = Keys(keys, key_offsets, n);
    // Upstream maps keys to their slices: a key twice would store the
    // first value under both. An empty value fails its allocation.
    std::unordered_set<std::string_view> seen;
    for (size_t i = 0; i < n; ++i) {
      if (values[i].empty() || !seen.insert(ks[i]).second) return MCGO_INVALID_PARAMS;
    }
    return upsert ? call.client()->upsert_batch(ks, values, rc)
                  : call.client()->put_batch(ks, values, rc);
  });
}

}  // namespace

extern "C" {

int32_t mcgo_store_put_parts(mcgo_store *s, const char *key, size_t key_len,
                             const uintptr_t *datas, const uint64_t *sizes,
                             size_t n_parts, mcgo_replicate_config cfg) {
  return PartsWrite(s, key, key_len, datas, sizes, n_parts, cfg, false);
}

int32_t mcgo_store_upsert_parts(mcgo_store *s, const char *key, size_t key_len,
                                const uintptr_t *datas, const uint64_t *sizes,
                                size_t n_parts, mcgo_replicate_config cfg) {
  return PartsWrite(s, key, key_len, datas, sizes, n_parts, cfg, true);
}

int32_t mcgo_store_put_batch(mcgo_store *s, const char *keys,
                             const uint64_t *key_offsets, size_t n,
                             const uintptr_t *datas, const uint64_t *sizes,
                             mcgo_replicate_config cfg) {
  return BatchCopyWrite(s, keys, key_offsets, n, datas, sizes, cfg, false);
}

int32_t mcgo_store_upsert_batch(mcgo_store *s, const char *keys,
                                const uint64_t *key_offsets, size_t n,
                                const uintptr_t *datas, const uint64_t *sizes,
                                mcgo_replicate_config cfg) {
  return BatchCopyWrite(s, keys, key_offsets, n, datas, sizes, cfg, true);
}

}  // extern "C"
