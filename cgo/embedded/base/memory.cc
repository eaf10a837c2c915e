//go:build !mooncake_native

#include "memory.h"

#include <sys/mman.h>

#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define MCGO_OBJECT_CACHE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MCGO_OBJECT_CACHE 0
#endif
#endif
#ifndef MCGO_OBJECT_CACHE
#define MCGO_OBJECT_CACHE 1
#endif

namespace mcgo::embedded {
namespace {

constexpr size_t kCachedMin = 256 * 1024;     // smaller: plain malloc
constexpr size_t kHugePage = 2 * 1024 * 1024; // mmap + MADV_HUGEPAGE from here
constexpr size_t kCacheCap = size_t{1} << 30;

struct Cache {
  std::mutex mu;
  std::unordered_map<size_t, std::vector<void *>> free;  // block length -> blocks
  size_t bytes = 0;
};

// Never destroyed: object memory may be released during static destruction.
Cache &GetCache() {
  static Cache *cache = new Cache();
  return *cache;
}

bool Mapped(size_t len) { return MCGO_OBJECT_CACHE && len >= kHugePage; }

size_t BlockLength(size_t size) {
  if (Mapped(size)) return (size + kHugePage - 1) / kHugePage * kHugePage;
  return size;
}

void *MapHuge(size_t len) {
  const size_t span = len + kHugePage;
  void *raw = mmap(nullptr, span, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = start + span, used_end = aligned + len;
  if (end > used_end) munmap(reinterpret_cast<void *>(used_end), end - used_end);
#ifdef MADV_HUGEPAGE
  madvise(reinterpret_cast<void *>(aligned), len, MADV_HUGEPAGE);  // best effort
#endif
  return reinterpret_cast<void *>(aligned);
}

void FreeBlock(void *p, size_t len) {
  if (Mapped(len)) {
    munmap(p, len);
  } else {
    std::free(p);
  }
}

void *AcquireBlock(size_t len) {
  if (MCGO_OBJECT_CACHE && len >= kCachedMin) {
    Cache &c = GetCache();
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.free.find(len);
    if (it != c.free.end() && !it->second.empty()) {
      void *p = it->second.back();
      it->second.pop_back();
      c.bytes -= len;
      return p;
    }
  }
  if (Mapped(len)) return MapHuge(len);
  return std::malloc(len);
}

void ReleaseBlock(void *p, size_t len) noexcept {
  if (MCGO_OBJECT_CACHE && len >= kCachedMin) {
    Cache &c = GetCache();
    try {
      std::lock_guard<std::mutex> lock(c.mu);
      if (c.bytes + len <= kCacheCap) {
        c.free[len].push_back(p);
        c.bytes += len;
        return;
      }
    } catch (...) {
      // fall through: free it
    }
  }
  FreeBlock(p, len);
}

}  // namespace

Bytes AllocateObjectBytes(uint64_t size) {
  if (size == 0 || size > SIZE_MAX - kHugePage) return Bytes();
  const size_t len = BlockLength(static_cast<size_t>(size));
  void *p = AcquireBlock(len);
  if (p == nullptr) return Bytes();
  // If allocating the control block throws, shared_ptr calls the deleter.
  return Bytes(static_cast<uint8_t *>(p),
               [len](uint8_t *q) { ReleaseBlock(q, len); });
}

bool ObjectCacheEnabled() { return MCGO_OBJECT_CACHE != 0; }

void TrimObjectCache() {
  if (!MCGO_OBJECT_CACHE) return;
  std::unordered_map<size_t, std::vector<void *>> blocks;
  {
    Cache &c = GetCache();
    std::lock_guard<std::mutex> lock(c.mu);
    blocks.swap(c.free);
    c.bytes = 0;
  }
  for (auto &kv : blocks) {
    for (void *p : kv.second) FreeBlock(p, kv.first);
  }
}

size_t CachedObjectBytes() {
  if (!MCGO_OBJECT_CACHE) return 0;
  Cache &c = GetCache();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.bytes;
}

}  // namespace mcgo::embedded
