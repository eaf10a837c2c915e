//go:build !mooncake_native

#include "regions.h"

#include <algorithm>
#include <functional>
#include <iterator>

namespace mcgo::embedded {

bool RegionSet::Inside(uintptr_t base, uint64_t len, uintptr_t addr,
                       uint64_t size) {
  if (len == 0 || addr < base) return false;
  const uint64_t off = static_cast<uint64_t>(addr - base);
  return off < len && size <= len - off;
}

bool RegionSet::Overlaps(uintptr_t a, uint64_t alen, uintptr_t b,
                         uint64_t blen) {
  if (alen == 0 || blen == 0) return false;
  // Written with subtractions so that ranges ending at the top of the
  // address space do not overflow.
  if (a <= b) return static_cast<uint64_t>(b - a) < alen;
  return static_cast<uint64_t>(a - b) < blen;
}

void RegionSet::SetLocalBuffer(uintptr_t base, uint64_t size) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  local_base_ = base;
  local_size_ = size;
}

RegionResult RegionSet::CheckLocked(uintptr_t addr, uint64_t size) const {
  if (addr == 0 || size == 0) return RegionResult::kInvalid;
  if (size - 1 > UINTPTR_MAX - addr) return RegionResult::kInvalid;  // wraps
  if (Overlaps(local_base_, local_size_, addr, size)) {
    return RegionResult::kOverlap;
  }
  auto next = regions_.lower_bound(addr);  // first region starting >= addr
  if (next != regions_.end() && Overlaps(next->first, next->second.size, addr, size)) {
    return RegionResult::kOverlap;
  }
  if (next != regions_.begin()) {
    auto prev = std::prev(next);
    if (Overlaps(prev->first, prev->second.size, addr, size)) {
      return RegionResult::kOverlap;
    }
  }
  return RegionResult::kOk;
}

RegionResult RegionSet::Add(uintptr_t addr, uint64_t size) {
  return AddAll({Region{addr, size}});
}

RegionResult RegionSet::AddAll(const std::vector<Region> &list) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  for (size_t i = 0; i < list.size(); ++i) {
    const RegionResult r = CheckLocked(list[i].addr, list[i].size);
    if (r != RegionResult::kOk) return r;
    for (size_t j = 0; j < i; ++j) {
      if (Overlaps(list[j].addr, list[j].size, list[i].addr, list[i].size)) {
        return RegionResult::kOverlap;
      }
    }
  }
  for (const Region &r : list) regions_[r.addr] = Entry{r.size, next_seq_++};
  return RegionResult::kOk;
}

RegionResult RegionSet::Remove(uintptr_t addr) { return RemoveAll({addr}); }

RegionResult RegionSet::RemoveAll(const std::vector<uintptr_t> &addrs) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  for (uintptr_t a : addrs) {
    if (regions_.find(a) == regions_.end()) return RegionResult::kNotFound;
  }
  for (uintptr_t a : addrs) regions_.erase(a);
  return RegionResult::kOk;
}

void RegionSet::Clear() {
  std::unique_lock<std::shared_mutex> lock(mu_);
  regions_.clear();
}

bool RegionSet::Contains(uintptr_t addr, uint64_t size) const {
  return Reader(*this).Contains(addr, size);
}

bool RegionSet::ContainsLocked(uintptr_t addr, uint64_t size) const {
  if (Inside(local_base_, local_size_, addr, size)) return true;
  auto it = regions_.upper_bound(addr);  // first region starting > addr
  if (it == regions_.begin()) return false;
  --it;
  return Inside(it->first, it->second.size, addr, size);
}

std::vector<Region> RegionSet::List() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<std::pair<uint64_t, Region>> by_seq;
  by_seq.reserve(regions_.size());
  for (const auto &[addr, e] : regions_) by_seq.push_back({e.seq, Region{addr, e.size}});
  std::sort(by_seq.begin(), by_seq.end(),
            [](const auto &x, const auto &y) { return x.first < y.first; });
  std::vector<Region> out;
  out.reserve(by_seq.size());
  for (const auto &p : by_seq) out.push_back(p.second);
  return out;
}

size_t RegionSet::Count() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return regions_.size();
}

RegionSet::Reader::Reader(const RegionSet &x, const RegionSet &y)
    : a_(&x), b_(&y) {
  if (&x == &y) {
    lock_a_ = std::shared_lock<std::shared_mutex>(x.mu_);
    return;
  }
  // Lock in address order; remember which lock belongs to which set.
  if (std::less<const RegionSet *>()(&x, &y)) {
    lock_a_ = std::shared_lock<std::shared_mutex>(x.mu_);
    lock_b_ = std::shared_lock<std::shared_mutex>(y.mu_);
  } else {
    lock_b_ = std::shared_lock<std::shared_mutex>(y.mu_);
    lock_a_ = std::shared_lock<std::shared_mutex>(x.mu_);
  }
}

}  // namespace mcgo::embedded
