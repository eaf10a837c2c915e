// Embedded backend: a set of memory regions registered for zero-copy
// transfers, shared by the parts of the ABI: a store client's registered
// buffers (plus its local buffer, which the real client registers with its
// transfer engine at setup), or a transfer engine's registered memory,
// which a store opened on that engine shares.
//
// Copies hold a Reader (the shared lock) while they touch registered
// memory, so Remove and Clear wait for copies in flight: once they return,
// nothing copies into or out of the region any more.
#ifndef MCGO_EMBEDDED_BASE_REGIONS_H_
#define MCGO_EMBEDDED_BASE_REGIONS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <vector>

namespace mcgo::embedded {

// Why an Add or Remove was refused; each part maps it to its own code.
enum class RegionResult { kOk, kInvalid, kOverlap, kNotFound };

struct Region {
  uintptr_t addr = 0;
  uint64_t size = 0;
};

class RegionSet {
 public:
  // Records the client's local buffer. Called once during setup, before the
  // client is published to other threads; it cannot be unregistered.
  void SetLocalBuffer(uintptr_t base, uint64_t size);

  // kInvalid for addr 0, size 0 or a range that wraps around the address
  // space; kOverlap for any overlap with a region or the local buffer.
  RegionResult Add(uintptr_t addr, uint64_t size);
  // All or nothing: the first refusal is returned and nothing is added
  // (regions of the list overlapping each other are refused too).
  RegionResult AddAll(const std::vector<Region> &regions);

  // kNotFound when no region starts at addr.
  RegionResult Remove(uintptr_t addr);
  // All or nothing: kNotFound (and nothing removed) when one address starts
  // no region.
  RegionResult RemoveAll(const std::vector<uintptr_t> &addrs);
  // Removes every region (waiting for copies in flight).
  void Clear();

  // True when [addr, addr+size) lies entirely inside ONE region or inside
  // the local buffer. size must be > 0.
  bool Contains(uintptr_t addr, uint64_t size) const;

  // The regions in the order they were registered (the local buffer is not
  // one).
  std::vector<Region> List() const;
  size_t Count() const;

  // Holds the read lock of one set, or of two sets in a fixed order (the
  // source and the target of a copy: locking them in any order could
  // deadlock against a writer waiting on each), for the length of a copy or
  // of many checks.
  class Reader {
   public:
    explicit Reader(const RegionSet &set) : a_(&set), lock_a_(set.mu_) {}
    Reader(const RegionSet &x, const RegionSet &y);
    bool Contains(uintptr_t addr, uint64_t size) const {
      return a_->ContainsLocked(addr, size);
    }
    // With two sets: the one given second to the constructor.
    bool ContainsSecond(uintptr_t addr, uint64_t size) const {
      return b_->ContainsLocked(addr, size);
    }

   private:
    const RegionSet *a_;
    const RegionSet *b_ = nullptr;
    std::shared_lock<std::shared_mutex> lock_a_;
    std::shared_lock<std::shared_mutex> lock_b_;
  };

 private:
  struct Entry {
    uint64_t size = 0;
    uint64_t seq = 0;  // registration order
  };
  bool ContainsLocked(uintptr_t addr, uint64_t size) const;
  RegionResult CheckLocked(uintptr_t addr, uint64_t size) const;
  static bool Inside(uintptr_t base, uint64_t len, uintptr_t addr,
                     uint64_t size);
  static bool Overlaps(uintptr_t a, uint64_t alen, uintptr_t b, uint64_t blen);

  mutable std::shared_mutex mu_;
  std::map<uintptr_t, Entry> regions_;  // start -> entry
  uint64_t next_seq_ = 0;
  uintptr_t local_base_ = 0;
  uint64_t local_size_ = 0;
};

}  // namespace mcgo::embedded

#endif  // MCGO_EMBEDDED_BASE_REGIONS_H_
