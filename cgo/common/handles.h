// handles.h: validated 64-bit handles for objects the C ABI hands out (the
// transfer engine's batches and segments), shared by both backends, so that
// a stale, double-freed or another engine's handle is an error code and
// never a dangling pointer. Header-only, C++17.
//
// A handle is tag << 48 | generation << 24 | (slot + 1): the tag names the
// table (one per engine), the generation changes every time a slot is
// reused, and 0 is never a handle.
#ifndef MCGO_COMMON_HANDLES_H_
#define MCGO_COMMON_HANDLES_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace mcgo {

template <typename T>
class HandleTable {
 public:
  static constexpr uint64_t kSlotBits = 24;
  static constexpr uint64_t kGenBits = 24;
  static constexpr size_t kMaxSlots = (size_t{1} << kSlotBits) - 1;

  HandleTable() : tag_(NextTag()) {}
  HandleTable(const HandleTable &) = delete;
  HandleTable &operator=(const HandleTable &) = delete;

  // Stores obj and returns its handle, or 0 when the table is full.
  uint64_t Add(std::shared_ptr<T> obj) {
    std::lock_guard<std::mutex> lock(mu_);
    size_t slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else {
      if (slots_.size() >= kMaxSlots) return 0;
      slot = slots_.size();
      slots_.push_back(Slot{});
    }
    Slot &s = slots_[slot];
    s.obj = std::move(obj);
    return Make(slot, s.gen);
  }

  // The object of handle h, or null for a handle this table does not hold.
  std::shared_ptr<T> Get(uint64_t h) const {
    std::lock_guard<std::mutex> lock(mu_);
    const Slot *s = Find(h);
    return s == nullptr ? nullptr : s->obj;
  }

  // Removes handle h and returns its object (null when not held). The
  // slot's next handle gets a new generation.
  std::shared_ptr<T> Remove(uint64_t h) {
    std::lock_guard<std::mutex> lock(mu_);
    Slot *s = const_cast<Slot *>(Find(h));
    if (s == nullptr) return nullptr;
    std::shared_ptr<T> obj = std::move(s->obj);
    s->obj = nullptr;
    s->gen = (s->gen + 1) & ((uint64_t{1} << kGenBits) - 1);
    free_.push_back(static_cast<size_t>(s - slots_.data()));
    return obj;
  }

  // Every object held, in slot order.
  std::vector<std::shared_ptr<T>> All() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::shared_ptr<T>> out;
    for (const Slot &s : slots_) {
      if (s.obj) out.push_back(s.obj);
    }
    return out;
  }

  // Removes every handle.
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].obj) {
        slots_[i].obj = nullptr;
        slots_[i].gen = (slots_[i].gen + 1) & ((uint64_t{1} << kGenBits) - 1);
        free_.push_back(i);
      }
    }
  }

 private:
  struct Slot {
    uint64_t gen = 0;
    std::shared_ptr<T> obj;
  };

  static uint64_t NextTag() {
    static std::atomic<uint64_t> next{1};
    uint64_t t = next.fetch_add(1) & 0xffff;
    return t == 0 ? next.fetch_add(1) & 0xffff : t;  // never 0
  }

  uint64_t Make(size_t slot, uint64_t gen) const {
    return (tag_ << (kSlotBits + kGenBits)) | (gen << kSlotBits) |
           (static_cast<uint64_t>(slot) + 1);
  }

  const Slot *Find(uint64_t h) const {
    if ((h >> (kSlotBits + kGenBits)) != tag_) return nullptr;
    const uint64_t slot1 = h & ((uint64_t{1} << kSlotBits) - 1);
    const uint64_t gen = (h >> kSlotBits) & ((uint64_t{1} << kGenBits) - 1);
    if (slot1 == 0 || slot1 > slots_.size()) return nullptr;
    const Slot &s = slots_[slot1 - 1];
    if (!s.obj || s.gen != gen) return nullptr;
    return &s;
  }

  const uint64_t tag_;
  mutable std::mutex mu_;
  std::vector<Slot> slots_;
  std::vector<size_t> free_;
};

}  // namespace mcgo

#endif  // MCGO_COMMON_HANDLES_H_
