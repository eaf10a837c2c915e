//go:build !mooncake_native

#include "regions.h"

#include <iterator>
#include <mutex>

#include "mcgo/common.h"

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

int32_t RegionSet::Add(uintptr_t addr, uint64_t size) {
  if (addr == 0 || size == 0) return MCGO_INVALID_PARAMS;
  if (size - 1 > UINTPTR_MAX - addr) return MCGO_INVALID_PARAMS;  // wraps
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (Overlaps(local_base_, local_size_, addr, size)) {
    return MCGO_INVALID_PARAMS;
  }
  auto next = regions_.lower_bound(addr);  // first region starting >= addr
  if (next != regions_.end() && Overlaps(next->first, next->second, addr, size)) {
    return MCGO_INVALID_PARAMS;
  }
  if (next != regions_.begin()) {
    auto prev = std::prev(next);
    if (Overlaps(prev->first, prev->second, addr, size)) {
      return MCGO_INVALID_PARAMS;
    }
  }
  regions_.emplace_hint(next, addr, size);
  return MCGO_OK;
}

int32_t RegionSet::Remove(uintptr_t addr) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  auto it = regions_.find(addr);
  if (it == regions_.end()) return MCGO_INVALID_PARAMS;
  regions_.erase(it);
  return MCGO_OK;
}

bool RegionSet::Contains(uintptr_t addr, uint64_t size) const {
  return Reader(*this).Contains(addr, size);
}

bool RegionSet::ContainsLocked(uintptr_t addr, uint64_t size) const {
  if (Inside(local_base_, local_size_, addr, size)) return true;
  auto it = regions_.upper_bound(addr);  // first region starting > addr
  if (it == regions_.begin()) return false;
  --it;
  return Inside(it->first, it->second, addr, size);
}

size_t RegionSet::Count() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return regions_.size();
}

}  // namespace mcgo::embedded
