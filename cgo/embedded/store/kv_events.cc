//go:build !mooncake_native

// Embedded engine: the KV event queue (kv_events.h) and its C functions
// (kv_events_c.h).

#include "kv_events.h"

#include <cstring>
#include <exception>
#include <memory>
#include <utility>

#include "cluster.h"
#include "kv_events_c.h"
#include "mcgo/codes.h"

namespace mcgo::embedded {
namespace {

constexpr size_t kHeader = 10;  // kind, medium, key length, group length

void PutU32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

void KvEventQueue::Record(bool stored, const std::string &key, const std::string &group) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  if (queue_.size() >= capacity_) {
    queue_.pop_front();
    ++dropped_;
    ++next_seq_;  // the gap subscribers will see
  }
  try {
    queue_.push_back(Event{stored, key, group});
  } catch (...) {
    ++dropped_;
    ++next_seq_;
    return;
  }
  cv_.notify_one();
}

bool KvEventQueue::Drain(std::chrono::milliseconds timeout, uint8_t *buf, size_t cap, Drained *out) {
  *out = Drained{};
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return closed_ || !queue_.empty(); });
  if (queue_.empty()) return !closed_;
  size_t used = 0;
  uint32_t n = 0;
  while (n < kKvEventsMaxBatch && !queue_.empty()) {
    const Event &ev = queue_.front();
    const size_t need = kHeader + ev.key.size() + ev.group.size();
    if (need > cap - used) {
      if (n == 0) {
        out->used = need;
        return true;
      }
      break;
    }
    uint8_t *p = buf + used;
    p[0] = ev.stored ? 1 : 2;
    p[1] = 1;  // "cpu": the engine's objects are all in memory
    PutU32(p + 2, static_cast<uint32_t>(ev.key.size()));
    PutU32(p + 6, static_cast<uint32_t>(ev.group.size()));
    if (!ev.key.empty()) std::memcpy(p + kHeader, ev.key.data(), ev.key.size());
    if (!ev.group.empty()) std::memcpy(p + kHeader + ev.key.size(), ev.group.data(), ev.group.size());
    used += need;
    ++n;
    queue_.pop_front();
  }
  out->seq = next_seq_++;
  out->n = n;
  out->used = used;
  return true;
}

void KvEventQueue::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

uint64_t KvEventQueue::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

}  // namespace mcgo::embedded

using mcgo::embedded::Cluster;
using mcgo::embedded::KvEventQueue;

extern "C" {

int32_t mcgo_embedded_kv_events_start(const char *address, size_t address_len, uint64_t capacity) {
  try {
    if (address == nullptr || address_len == 0) return MCGO_INVALID_PARAMS;
    return Cluster::StartKvEvents(std::string(address, address_len), capacity);
  } catch (...) {
    return MCGO_INTERNAL_ERROR;
  }
}

int32_t mcgo_embedded_kv_events_stop(const char *address, size_t address_len) {
  try {
    if (address == nullptr || address_len == 0) return MCGO_INVALID_PARAMS;
    return Cluster::StopKvEvents(std::string(address, address_len));
  } catch (...) {
    return MCGO_INTERNAL_ERROR;
  }
}

int32_t mcgo_embedded_kv_events_drain(const char *address, size_t address_len, uint32_t timeout_ms,
                                      uint8_t *buf, size_t cap, uint32_t *n, uint64_t *seq,
                                      size_t *used, uint64_t *dropped) {
  try {
    if (address == nullptr || address_len == 0 || (buf == nullptr && cap != 0) || n == nullptr ||
        seq == nullptr || used == nullptr || dropped == nullptr) {
      return MCGO_INVALID_PARAMS;
    }
    *n = 0;
    *seq = 0;
    *used = 0;
    *dropped = 0;
    std::shared_ptr<KvEventQueue> q = Cluster::KvEvents(std::string(address, address_len));
    if (!q) return MCGO_OBJECT_NOT_FOUND;
    KvEventQueue::Drained d;
    if (!q->Drain(std::chrono::milliseconds(timeout_ms), buf, cap, &d)) return MCGO_OBJECT_NOT_FOUND;
    *dropped = q->dropped();
    *used = d.used;
    if (d.seq == 0 && d.used > 0) return MCGO_BUFFER_OVERFLOW;
    *n = d.n;
    *seq = d.seq;
    return MCGO_OK;
  } catch (...) {
    return MCGO_INTERNAL_ERROR;
  }
}

}  // extern "C"
