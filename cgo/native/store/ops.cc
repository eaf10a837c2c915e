// The native store's single-key calls and registrations (package
// mooncake's ops.go): copying and zero-copy put, upsert and get, exists,
// size, remove, remove by regex and remove all, buffer registration.

#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "common/key_pattern.h"
#include "native/store/call.h"

using namespace mcgo::native::store;  // NOLINT: the store part's frame (call.h)

namespace {

int32_t CopyWrite(mcgo_store *s, const char *key, size_t key_len,
                  const void *data, uint64_t size,
                  mcgo_replicate_config cfg, bool upsert) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    mooncake::ReplicateConfig rc;
    if (call.client() == nullptr || !KeyOk(key, key_len) ||
        (data == nullptr && size != 0)) {
      return MCGO_INVALID_PARAMS;
    }
    if (int32_t refused = ToReplicate(cfg, &rc)) return refused;
    std::span<const char> value(static_cast<const char *>(data),
                                static_cast<size_t>(size));
    const std::string k = MakeKey(key, key_len);
    return upsert ? call.client()->upsert(k, value, rc)
                  : call.client()->put(k, value, rc);
  });
}

// GetBuffer reads key into the client's local buffer (the copying gets
// stage objects there): 0 with *h set, or an error code.
int64_t GetBuffer(mooncake::PyClient *c, const std::string &k,
                  std::shared_ptr<mooncake::BufferHandle> *h) {
  *h = c->get_buffer(k);
  if (*h) return 0;
  // get_buffer drops the code: ask for the size to recover it.
  int64_t sz = c->getSize(k);
  if (sz < 0) return sz;
  // The object exists now. Either get_buffer refused it (larger than the
  // local buffer), or a put of it completed between the two RPCs (the
  // stress test saw that answered INVALID_PARAMS): read it once more.
  *h = c->get_buffer(k);
  if (*h) return 0;
  sz = c->getSize(k);
  if (sz < 0) return sz;
  return MCGO_INVALID_PARAMS;  // e.g. larger than the local buffer
}

// A read held between mcgo_store_get_begin and mcgo_store_get_finish: the
// handle keeps the object's bytes in the client's local buffer.
struct HeldGet {
  std::shared_ptr<mooncake::BufferHandle> h;
};

int32_t ZeroCopyWrite(mcgo_store *s, const char *key, size_t key_len,
                      uintptr_t addr, uint64_t size,
                      mcgo_replicate_config cfg, bool upsert) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    mooncake::ReplicateConfig rc;
    if (call.client() == nullptr || !KeyOk(key, key_len)) {
      return MCGO_INVALID_PARAMS;
    }
    if (int32_t refused = ToReplicate(cfg, &rc)) return refused;
    const std::string k = MakeKey(key, key_len);
    void *buf = reinterpret_cast<void *>(addr);
    const size_t n = static_cast<size_t>(size);
    return upsert ? call.client()->upsert_from(k, buf, n, rc)
                  : call.client()->put_from(k, buf, n, rc);
  });
}

}  // namespace

extern "C" {

int32_t mcgo_store_register_buffer(mcgo_store *s, uintptr_t addr, uint64_t size) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (call.client() == nullptr || addr == 0 || size == 0) {
      return MCGO_INVALID_PARAMS;
    }
    // A dummy registers only whole pool allocations (upstream answers -1,
    // INTERNAL_ERROR, for anything else): refused here as a bad argument,
    // as every other registration refusal.
    if (call.dummy() && !s->pool.Has(addr, size)) return MCGO_INVALID_PARAMS;
    return call.client()->register_buffer(reinterpret_cast<void *>(addr),
                                          static_cast<size_t>(size));
  });
}

int32_t mcgo_store_unregister_buffer(mcgo_store *s, uintptr_t addr) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (call.client() == nullptr || addr == 0) return MCGO_INVALID_PARAMS;
    if (call.dummy()) {
      if (!s->pool.Has(addr, 0)) return MCGO_INVALID_PARAMS;
      // Upstream answers -1 for pool memory that is not registered.
      const int rc = call.client()->unregister_buffer(reinterpret_cast<void *>(addr));
      return rc == -1 ? MCGO_INVALID_PARAMS : rc;
    }
    return call.client()->unregister_buffer(reinterpret_cast<void *>(addr));
  });
}

int32_t mcgo_store_put(mcgo_store *s, const char *key, size_t key_len,
                 const void *data, uint64_t size, mcgo_replicate_config cfg) {
  return CopyWrite(s, key, key_len, data, size, cfg, false);
}

int32_t mcgo_store_upsert(mcgo_store *s, const char *key, size_t key_len,
                    const void *data, uint64_t size, mcgo_replicate_config cfg) {
  return CopyWrite(s, key, key_len, data, size, cfg, true);
}

int64_t mcgo_store_get_begin(mcgo_store *s, const char *key, size_t key_len,
                       uintptr_t *handle) {
  if (handle != nullptr) *handle = 0;
  return Guard64([&]() -> int64_t {
    Call call(s);
    if (call.client() == nullptr || handle == nullptr ||
        !KeyOk(key, key_len)) {
      return MCGO_INVALID_PARAMS;
    }
    std::shared_ptr<mooncake::BufferHandle> h;
    const int64_t r = GetBuffer(call.client(), MakeKey(key, key_len), &h);
    if (r < 0) return r;
    const int64_t n = static_cast<int64_t>(h->size());
    *handle = reinterpret_cast<uintptr_t>(new HeldGet{std::move(h)});
    return n;
  });
}

int32_t mcgo_store_get_finish(uintptr_t handle, void *dst, uint64_t dst_cap) {
  if (handle == 0) return MCGO_INVALID_PARAMS;
  return Guard32([&]() -> int32_t {
    std::unique_ptr<HeldGet> held(reinterpret_cast<HeldGet *>(handle));
    if (dst == nullptr && dst_cap == 0) return MCGO_OK;
    if (dst == nullptr) return MCGO_INVALID_PARAMS;
    const uint64_t n = held->h->size();
    if (dst_cap < n) return MCGO_BUFFER_OVERFLOW;
    if (n > 0) std::memcpy(dst, held->h->ptr(), static_cast<size_t>(n));
    return MCGO_OK;
  });
}

int32_t mcgo_store_put_from(mcgo_store *s, const char *key, size_t key_len,
                      uintptr_t addr, uint64_t size, mcgo_replicate_config cfg) {
  return ZeroCopyWrite(s, key, key_len, addr, size, cfg, false);
}

int32_t mcgo_store_upsert_from(mcgo_store *s, const char *key, size_t key_len,
                         uintptr_t addr, uint64_t size,
                         mcgo_replicate_config cfg) {
  return ZeroCopyWrite(s, key, key_len, addr, size, cfg, true);
}

int64_t mcgo_store_get_into(mcgo_store *s, const char *key, size_t key_len,
                      uintptr_t addr, uint64_t size) {
  return Guard64([&]() -> int64_t {
    Call call(s);
    if (call.client() == nullptr || !KeyOk(key, key_len)) {
      return MCGO_INVALID_PARAMS;
    }
    return call.client()->get_into(MakeKey(key, key_len),
                                   reinterpret_cast<void *>(addr),
                                   static_cast<size_t>(size));
  });
}

int32_t mcgo_store_is_exist(mcgo_store *s, const char *key, size_t key_len) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (call.client() == nullptr || !KeyOk(key, key_len)) return MCGO_INVALID_PARAMS;
    return call.client()->isExist(MakeKey(key, key_len));
  });
}

int64_t mcgo_store_get_size(mcgo_store *s, const char *key, size_t key_len) {
  return Guard64([&]() -> int64_t {
    Call call(s);
    if (call.client() == nullptr || !KeyOk(key, key_len)) return MCGO_INVALID_PARAMS;
    return call.client()->getSize(MakeKey(key, key_len));
  });
}

int32_t mcgo_store_remove(mcgo_store *s, const char *key, size_t key_len,
                    int32_t force) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (call.client() == nullptr || !KeyOk(key, key_len)) return MCGO_INVALID_PARAMS;
    return call.client()->remove(MakeKey(key, key_len), force != 0);
  });
}

int64_t mcgo_store_remove_by_regex(mcgo_store *s, const char *pattern,
                             size_t pattern_len, int32_t force) {
  return Guard64([&]() -> int64_t {
    Call call(s);
    if (call.client() == nullptr || !KeyOk(pattern, pattern_len)) {
      return MCGO_INVALID_PARAMS;
    }
    // Upstream's master runs the pattern through std::regex over every key:
    // only the subset that cannot crash or hang it is sent (key_pattern.h).
    mcgo::pattern::Program program;
    std::string why;
    if (!mcgo::pattern::Compile(std::string_view(pattern == nullptr ? "" : pattern, pattern_len), &program, &why)) {
      return MCGO_INVALID_PARAMS;
    }
    return call.client()->removeByRegex(MakeKey(pattern, pattern_len), force != 0);
  });
}

int64_t mcgo_store_remove_all(mcgo_store *s, int32_t force) {
  return Guard64([&]() -> int64_t {
    Call call(s);
    if (call.client() == nullptr) return MCGO_INVALID_PARAMS;
    return call.client()->removeAll(force != 0);
  });
}

}  // extern "C"
