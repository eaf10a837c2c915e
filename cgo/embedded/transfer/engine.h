// Embedded backend: an in-process transfer engine with upstream's
// semantics (the object behind mcgo_te*). Engines created with the same
// metadata string share a Namespace, where they find each other's segments
// by name; a segment is the memory another engine registered. Transfers run
// on each engine's worker threads, so a batch really is asynchronous.
//
// Behaviour follows upstream's TransferEngine at the commit in
// third_party/mooncake/PIN (mooncake-transfer-engine/). No upstream code is
// copied. The choices, with what upstream does:
//
//  1. remote_addr is the peer's absolute address; the range must lie inside
//     ONE region the peer has registered when the task runs, else the task
//     FAILS (upstream's TCP server checks the same way when the request
//     arrives). Submit does not see it.
//  2. The local range must lie inside one region this engine registered:
//     submit refuses it with ADDRESS_NOT_REGISTERED, as upstream's RDMA
//     transport does (its TCP transport does not check; a documented
//     difference). It is checked again when the task runs.
//  3. A batch's capacity counts every request ever submitted to it
//     (TOO_MANY_REQUESTS past it, adding nothing); zero-length requests
//     complete at once without checks; bytes per task are all or nothing;
//     a task never reports TIMEOUT.
//  4. Queued tasks are WAITING, running ones PENDING. The batch is FAILED as
//     soon as one task is, even while others still run (upstream's rule);
//     in_flight says when none does.
//  5. A batch's notification goes to the engine of its first request's
//     segment, when a status call first sees the batch COMPLETED; a failed
//     batch drops it. Notifications queue FIFO in the receiver.
//  6. Segment buffer lists are snapshots taken when a segment is opened or
//     refreshed (upstream's metadata cache).
//  7. Unregistering waits for copies in flight into or out of the region
//     (upstream's TCP lets an accepted write land after it returns).
//  8. A second live engine with the same segment name in one namespace is
//     refused with METADATA (upstream lets the last one win).
//  9. With P2PHANDSHAKE the segment name is host:<port>, the port from a
//     process-wide counter.
#ifndef MCGO_EMBEDDED_TRANSFER_ENGINE_H_
#define MCGO_EMBEDDED_TRANSFER_ENGINE_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/handles.h"
#include "embedded/base/regions.h"
#include "mcgo/transfer.h"

namespace mcgo::embedded::te {

struct Notify {
  std::string name, msg;
};

// What peers see of an engine: its name, its registered memory, its inbox.
class Core {
 public:
  explicit Core(std::string name)
      : name_(std::move(name)), regions_(std::make_shared<RegionSet>()) {}

  const std::string &name() const { return name_; }
  const std::shared_ptr<RegionSet> &regions() const { return regions_; }
  bool Alive() const { return alive_.load(std::memory_order_acquire); }
  // Ends the engine for its peers: no copy touches its memory once this
  // returns.
  void Kill();

  // Deliver queues n in the inbox; false when the inbox holds
  // kInboxMaxBytes of unread notifications already (the sender fails).
  bool Deliver(Notify n);
  // An engine's unread notifications are bounded, so that a peer cannot
  // fill its memory (4,096 of 128 KiB were 512 MiB).
  static constexpr uint64_t kInboxMaxBytes = 64ull << 20;
  // Moves the oldest notifications that fit (see mcgo_te_notify_recv).
  void Drain(char *buf, uint64_t cap, uint64_t *name_lens, uint64_t *msg_lens,
             size_t max_n, size_t *n, uint64_t *need);

 private:
  const std::string name_;
  const std::shared_ptr<RegionSet> regions_;
  std::atomic<bool> alive_{true};
  std::mutex inbox_mu_;
  std::deque<Notify> inbox_;
  uint64_t inbox_bytes_ = 0;
};

// The engines of one metadata string.
class Namespace {
 public:
  static std::shared_ptr<Namespace> Join(const std::string &metadata);
  // False when a live engine already has the name.
  bool Add(const std::shared_ptr<Core> &core);
  void Remove(const Core *core);
  std::shared_ptr<Core> Find(const std::string &name) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::weak_ptr<Core>> cores_;
};

// A port number no other engine of this process has (P2PHANDSHAKE names,
// RPC ports).
uint32_t NextPort();

struct Batch;

struct Task {
  uint32_t opcode = MCGO_TE_READ;
  std::weak_ptr<Core> target;
  uint64_t local = 0, remote = 0, length = 0;
  std::atomic<int32_t> state{MCGO_TE_WAITING};
  uint64_t bytes = 0;  // written before state turns final
};

struct Batch {
  std::mutex mu;  // submit, status and free of this batch
  uint32_t capacity = 0;
  // Stable addresses: workers hold pointers (and a reference to the
  // batch, so that a task's last store never outlives it).
  std::deque<Task> tasks;
  bool has_notify = false;
  std::weak_ptr<Core> notify_target;
  std::string notify_name, notify_msg;
  int32_t notify = MCGO_TE_NOTIFY_NONE;
  int32_t notify_rc = 0;
};

struct Segment {
  std::weak_ptr<Core> core;
  std::string name;
  std::mutex mu;
  std::vector<Region> snapshot;
};

// Worker threads that run one engine's tasks.
class Workers {
 public:
  void Start(std::shared_ptr<Core> self, size_t n);
  void Enqueue(std::shared_ptr<Batch> batch, Task *task);
  // Fails the tasks not started and joins the threads.
  void Stop() noexcept;

 private:
  void Loop();
  struct Job {
    std::shared_ptr<Batch> batch;
    Task *task;
  };
  std::shared_ptr<Core> self_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// Runs one task (a worker, or submit for zero-length requests).
void RunTask(const Core &self, Batch *batch, Task *task) noexcept;
// Ends a task that will not run.
void FailTask(Batch *batch, Task *task) noexcept;

// For a store opened on an engine (mcgo_store_setup_on_engine): the engine's
// registered memory, segment name and metadata string, and the count of
// stores, which keeps mcgo_te_destroy from running under them. False when
// e is not a usable engine.
bool AttachStore(mcgo_te *e, std::shared_ptr<RegionSet> *regions,
                 std::string *segment_name, std::string *metadata);
void DetachStore(mcgo_te *e) noexcept;

}  // namespace mcgo::embedded::te

struct mcgo_te {
  std::string metadata;
  std::shared_ptr<mcgo::embedded::te::Namespace> ns;
  std::shared_ptr<mcgo::embedded::te::Core> core;
  uint32_t rpc_port = 0;
  std::mutex transport_mu;
  std::set<std::string> transports;
  mcgo::HandleTable<mcgo::embedded::te::Segment> segments;
  mcgo::HandleTable<mcgo::embedded::te::Batch> batches;
  mcgo::embedded::te::Workers workers;
  std::atomic<int> stores{0};
};

#endif  // MCGO_EMBEDDED_TRANSFER_ENGINE_H_
