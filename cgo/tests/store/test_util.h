// Helpers shared by the engine tests: stores, packed keys, CSR lists,
// registered memory, byte patterns.
#ifndef MCGO_TESTS_TEST_UTIL_H_
#define MCGO_TESTS_TEST_UTIL_H_

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "check.h"
#include "embedded/store/client.h"  // debug hooks (not part of the C ABI)
#include "mcgo/store.h"

namespace tu {

constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1024 * 1024;
// The smallest segment a client may mount (0 mounts none): upstream's slab
// allocator refuses less (embedded/store/cluster.cc, note 21).
constexpr uint64_t kMinSegment = 16 * MiB;

// A master address no other test uses, so each test gets a fresh cluster.
inline std::string UniqueMaster(const char *tag) {
  static std::atomic<int> n{0};
  return std::string("test-") + tag + "-" + std::to_string(n++) + ":50051";
}

inline mcgo_store_config Config(const char *master, uint64_t segment, uint64_t local,
                          const char *host = "127.0.0.1",
                          const char *protocol = "tcp") {
  mcgo_store_config c{};
  c.local_hostname = host;
  c.metadata_server = "P2PHANDSHAKE";
  c.global_segment_size = segment;
  c.local_buffer_size = local;
  c.protocol = protocol;
  c.device_name = "";
  c.master_server_address = master;
  return c;
}

// A set-up client; destroyed with the object.
class Store {
 public:
  explicit Store(const std::string &master, uint64_t segment = 64 * MiB,
                 uint64_t local = 16 * MiB, const char *host = "127.0.0.1") {
    CHECK_EQ(mcgo_store_create(&s_), 0);
    mcgo_store_config c = Config(master.c_str(), segment, local, host);
    char err[256];
    int32_t rc = mcgo_store_setup(s_, &c, err, sizeof err);
    if (rc != 0) std::fprintf(stderr, "setup failed: %s\n", err);
    CHECK_EQ(rc, 0);
  }
  ~Store() { mcgo_store_destroy(s_); }
  Store(const Store &) = delete;
  Store &operator=(const Store &) = delete;
  operator mcgo_store *() const { return s_; }
  mcgo_store *get() const { return s_; }
  void Destroy() {
    mcgo_store_destroy(s_);
    s_ = nullptr;
  }
  std::string Hostname() const {
    char buf[256];
    size_t len = 0;
    CHECK_EQ(mcgo_store_hostname(s_, buf, sizeof buf, &len), 0);
    return std::string(buf);
  }

 private:
  mcgo_store *s_ = nullptr;
};

inline mcgo_replicate_config Cfg(uint64_t replicas = 1) {
  mcgo_replicate_config c{};
  c.replica_num = replicas;
  return c;
}

// Preferred segment names packed the way mcgo/store.h wants them.
struct Preferred {
  std::string blob;
  uint32_t count = 0;
  Preferred(std::initializer_list<std::string> names) {
    for (const auto &n : names) {
      blob += n;
      blob.push_back('\0');
      ++count;
    }
  }
  mcgo_replicate_config Apply(mcgo_replicate_config c) const {
    c.preferred_segment_count = count;
    c.preferred_segments = blob.data();
    c.preferred_segments_len = blob.size();
    return c;
  }
};

// Packed keys: one byte buffer plus offsets[n+1].
struct Keys {
  std::string bytes;
  std::vector<uint64_t> off{0};
  Keys() = default;
  Keys(std::initializer_list<std::string> ks) {
    for (const auto &k : ks) Add(k);
  }
  void Add(const std::string &k) {
    bytes += k;
    off.push_back(bytes.size());
  }
  // Never NULL, even with no key bytes (NULL keys is a refusal).
  const char *data() const { return bytes.c_str(); }
  const uint64_t *offsets() const { return off.data(); }
  size_t n() const { return off.size() - 1; }
};

// A CSR buffer list.
struct Csr {
  std::vector<uintptr_t> addrs;
  std::vector<uint64_t> sizes;
  std::vector<uint64_t> offsets{0};
  void Buf(const void *p, uint64_t n) {
    addrs.push_back(reinterpret_cast<uintptr_t>(p));
    sizes.push_back(n);
  }
  void EndKey() { offsets.push_back(addrs.size()); }
  const uintptr_t *a() const { return addrs.empty() ? nullptr : addrs.data(); }
  const uint64_t *s() const { return sizes.empty() ? nullptr : sizes.data(); }
};

// Page-aligned heap memory, optionally registered with a store. Does not
// unregister on destruction (the store may already be gone).
class Mem {
 public:
  explicit Mem(size_t size, mcgo_store *register_with = nullptr)
      : size_(size) {
    const size_t rounded = ((size ? size : 1) + 4095) / 4096 * 4096;
    p_ = static_cast<uint8_t *>(std::aligned_alloc(4096, rounded));
    std::memset(p_, 0, rounded);
    if (register_with != nullptr) {
      CHECK_EQ(mcgo_store_register_buffer(register_with, addr(), size), 0);
    }
  }
  ~Mem() { std::free(p_); }
  Mem(const Mem &) = delete;
  Mem &operator=(const Mem &) = delete;
  uint8_t *data() const { return p_; }
  uint8_t *at(size_t off) const { return p_ + off; }
  uintptr_t addr(size_t off = 0) const {
    return reinterpret_cast<uintptr_t>(p_) + off;
  }
  size_t size() const { return size_; }

 private:
  uint8_t *p_ = nullptr;
  size_t size_ = 0;
};

inline uint8_t PatternByte(uint32_t seed, size_t i) {
  return static_cast<uint8_t>((seed * 2654435761u) ^ (i * 40503u) ^ (i >> 8));
}
inline void Fill(uint8_t *p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) p[i] = PatternByte(seed, i);
}
inline bool HasPattern(const uint8_t *p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != PatternByte(seed, i)) return false;
  }
  return true;
}

inline uintptr_t A(const void *p) { return reinterpret_cast<uintptr_t>(p); }

inline int64_t GetInto(mcgo_store *s, const std::string &key, uintptr_t addr,
                       uint64_t size) {
  return mcgo_store_get_into(s, key.data(), key.size(), addr, size);
}
inline int32_t PutFrom(mcgo_store *s, const std::string &key, uintptr_t addr,
                       uint64_t size, mcgo_replicate_config c = Cfg()) {
  return mcgo_store_put_from(s, key.data(), key.size(), addr, size, c);
}
inline int32_t Put(mcgo_store *s, const std::string &key, const std::string &v,
                   mcgo_replicate_config c = Cfg()) {
  return mcgo_store_put(s, key.data(), key.size(), v.data(), v.size(), c);
}
inline int32_t Upsert(mcgo_store *s, const std::string &key,
                      const std::string &v, mcgo_replicate_config c = Cfg()) {
  return mcgo_store_upsert(s, key.data(), key.size(), v.data(), v.size(), c);
}
// The one-step copying get on top of mcgo_store_get_begin/_finish: the
// object size, MCGO_BUFFER_OVERFLOW when dst_cap is too small (the size is
// still stored in *object_size), or an error.
inline int64_t GetCopy(mcgo_store *s, const char *key, size_t key_len,
                       void *dst, uint64_t dst_cap, uint64_t *object_size) {
  if (dst == nullptr && dst_cap > 0) return MCGO_INVALID_PARAMS;
  uintptr_t h = 0;
  const int64_t n = mcgo_store_get_begin(s, key, key_len, &h);
  if (n < 0) return n;
  if (object_size != nullptr) *object_size = static_cast<uint64_t>(n);
  if (static_cast<uint64_t>(n) > dst_cap) {
    CHECK_EQ(mcgo_store_get_finish(h, nullptr, 0), MCGO_OK);
    return MCGO_BUFFER_OVERFLOW;
  }
  const int32_t rc = mcgo_store_get_finish(h, n == 0 ? nullptr : dst, n == 0 ? 0 : dst_cap);
  return rc != MCGO_OK ? rc : n;
}

// Copying get; returns the value, or "<code>" on error.
inline std::string Get(mcgo_store *s, const std::string &key) {
  std::string buf(1 << 20, '\0');
  uint64_t size = 0;
  int64_t n = GetCopy(s, key.data(), key.size(), &buf[0], buf.size(), &size);
  if (n < 0) return "<" + std::to_string(n) + ">";
  buf.resize(static_cast<size_t>(n));
  return buf;
}
inline int32_t Exists(mcgo_store *s, const std::string &key) {
  return mcgo_store_is_exist(s, key.data(), key.size());
}
inline int64_t Size(mcgo_store *s, const std::string &key) {
  return mcgo_store_get_size(s, key.data(), key.size());
}
inline int32_t Remove(mcgo_store *s, const std::string &key, bool force = false) {
  return mcgo_store_remove(s, key.data(), key.size(), force ? 1 : 0);
}
inline int64_t RemoveRegex(mcgo_store *s, const std::string &pattern,
                           bool force = false) {
  return mcgo_store_remove_by_regex(s, pattern.data(), pattern.size(), force ? 1 : 0);
}

inline mcgo::embedded::ClusterStats Stats(mcgo_store *s) {
  mcgo::embedded::ClusterStats st;
  CHECK(mcgo::embedded::DebugStats(s, &st));
  return st;
}
inline uint64_t SegmentUsed(mcgo_store *s, const std::string &name) {
  for (const auto &seg : Stats(s).segments) {
    if (seg.name == name) return seg.used;
  }
  return UINT64_MAX;
}
inline std::vector<std::string> Replicas(mcgo_store *s, const std::string &key) {
  return mcgo::embedded::DebugReplicaSegments(s, key);
}

}  // namespace tu

#endif  // MCGO_TESTS_TEST_UTIL_H_
