// Embedded engine: the set of memory regions one client has registered for
// zero-copy transfers (mcgo_store_register_buffer), plus the client's own local
// buffer, which the real client registers with its transfer engine at setup.
#ifndef MCGO_EMBEDDED_BASE_REGIONS_H_
#define MCGO_EMBEDDED_BASE_REGIONS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <shared_mutex>

namespace mcgo::embedded {

class RegionSet {
 public:
  // Records the client's local buffer. Called once during setup, before the
  // client is published to other threads; it cannot be unregistered.
  void SetLocalBuffer(uintptr_t base, uint64_t size);

  // 0, or MCGO_INVALID_PARAMS for addr 0, size 0, a range that wraps around
  // the address space, or any overlap with a registered region or the local
  // buffer.
  int32_t Add(uintptr_t addr, uint64_t size);

  // 0, or MCGO_INVALID_PARAMS when no registered region starts at addr.
  int32_t Remove(uintptr_t addr);

  // True when [addr, addr+size) lies entirely inside ONE registered region
  // or inside the local buffer. size must be > 0.
  bool Contains(uintptr_t addr, uint64_t size) const;

  // Holds the set's read lock, for checking many buffers at once.
  class Reader {
   public:
    explicit Reader(const RegionSet &set) : set_(set), lock_(set.mu_) {}
    bool Contains(uintptr_t addr, uint64_t size) const {
      return set_.ContainsLocked(addr, size);
    }

   private:
    const RegionSet &set_;
    std::shared_lock<std::shared_mutex> lock_;
  };

  size_t Count() const;

 private:
  bool ContainsLocked(uintptr_t addr, uint64_t size) const;
  static bool Inside(uintptr_t base, uint64_t len, uintptr_t addr,
                     uint64_t size);
  static bool Overlaps(uintptr_t a, uint64_t alen, uintptr_t b, uint64_t blen);

  mutable std::shared_mutex mu_;
  std::map<uintptr_t, uint64_t> regions_;  // start -> length
  uintptr_t local_base_ = 0;
  uint64_t local_size_ = 0;
};

}  // namespace mcgo::embedded

#endif  // MCGO_EMBEDDED_BASE_REGIONS_H_
