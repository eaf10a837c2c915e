// Embedded engine: the KV events its master would publish (upstream's
// KvEventPublisher, mooncake-store/src/kv_event/kv_event_publisher.cpp).
//
// Upstream's master enqueues an event per stored or removed object into a
// bounded queue that drops its oldest event when full, reserving a ZMQ
// sequence number for each dropped one so subscribers can see the loss; a
// worker sends batches of at most 64 events, each batch taking the next
// sequence number. The queue and the numbering are here; the ZMQ socket is
// Go's (mooncake/kvevents.Publisher, started by mooncaketest.StartKVEvents),
// which drains this queue through kv_events_c.h.
//
// Which operations record an event follows upstream's call sites of
// PublishKvStored / PublishKvRemoved in master_service.cpp at the pinned
// commit: a put or upsert that ends (PutEnd, also reached by UpsertEnd and
// BatchPutEnd) records Stored; a single Remove records Removed. BatchRemove,
// RemoveByRegex, RemoveAll, unmounting a segment, BatchReplicaClear, a
// revoked write and the size-changing upsert's discard record nothing,
// there as here. Upstream's evictions record Removed; this engine does not
// evict (cluster.cc, note 15).
#ifndef MCGO_EMBEDDED_STORE_KV_EVENTS_H_
#define MCGO_EMBEDDED_STORE_KV_EVENTS_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>

namespace mcgo::embedded {

// Upstream's --kv_events_queue_capacity default and batch limit.
constexpr uint64_t kKvEventsDefaultCapacity = 65536;
constexpr size_t kKvEventsMaxBatch = 64;

class KvEventQueue {
 public:
  explicit KvEventQueue(uint64_t capacity)
      : capacity_(capacity == 0 ? kKvEventsDefaultCapacity : capacity) {}
  KvEventQueue(const KvEventQueue &) = delete;
  KvEventQueue &operator=(const KvEventQueue &) = delete;

  // Records an event. Never throws (it runs inside Commit, which must
  // not): an event that cannot be stored counts as dropped.
  void Record(bool stored, const std::string &key, const std::string &group) noexcept;

  // One drained batch, packed for the C boundary (kv_events_c.h).
  struct Drained {
    uint64_t seq = 0;   // its sequence number; 0 when no event was taken
    uint32_t n = 0;     // events packed
    size_t used = 0;    // bytes written, or needed when the first did not fit
  };
  // Waits up to timeout for an event (or Close), then packs up to
  // kKvEventsMaxBatch events into buf. Returns false once closed and empty.
  bool Drain(std::chrono::milliseconds timeout, uint8_t *buf, size_t cap, Drained *out);
  // Wakes a waiting Drain; later drains return false when the queue is empty.
  void Close();

  uint64_t dropped() const;
  uint64_t capacity() const { return capacity_; }

 private:
  struct Event {
    bool stored;
    std::string key;
    std::string group;
  };
  const uint64_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Event> queue_;
  uint64_t next_seq_ = 1;
  uint64_t dropped_ = 0;
  bool closed_ = false;
};

}  // namespace mcgo::embedded

#endif  // MCGO_EMBEDDED_STORE_KV_EVENTS_H_
