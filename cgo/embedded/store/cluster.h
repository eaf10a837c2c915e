// Embedded engine: the in-process "cluster" that stands in for a Mooncake
// master plus the memory segments its clients mount. Clients created with
// the same master_server_address share one Cluster (see Cluster::Join).
//
// The cluster owns object metadata, segment capacity accounting and read
// leases. Object bytes live in one heap allocation per object, shared by all
// of the object's replicas (a replica here is only an accounting record on a
// segment). The bytes are reference counted, so a reader that looked an
// object up keeps its bytes alive even if the object is removed or replaced
// while the reader copies.
//
// Locking: one mutex per cluster guards all metadata. It is held only for
// lookups and bookkeeping, never while object bytes are copied: writers
// reserve the key under the lock (Reserve), copy outside it, and publish
// under the lock again (Commit); readers take a reference to the bytes under
// the lock (Acquire) and copy outside it.
#ifndef MCGO_EMBEDDED_STORE_CLUSTER_H_
#define MCGO_EMBEDDED_STORE_CLUSTER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "embedded/base/memory.h"
#include "kv_events.h"
#include "regex.h"

namespace mcgo::embedded {

using Clock = std::chrono::steady_clock;

// Default read-lease TTL, Mooncake's DEFAULT_DEFAULT_KV_LEASE_TTL.
constexpr uint64_t kDefaultLeaseTtlMs = 10000;
// Sets the lease TTL of clusters created after the call (a test hook, not
// part of the C ABI: upstream's TTL is a master flag).
void SetLeaseTtlForNewClusters(uint64_t ms);

// Mooncake's ReplicateConfig, as far as the embedded engine uses it.
struct PlacementConfig {
  uint64_t replica_num = 1;
  bool prefer_same_node = false;
  std::vector<std::string> preferred_segments;
  // The engine has no NoF or DFS storage: such replicas are refused as
  // upstream refuses them on a cluster without it.
  uint64_t nof_replica_num = 0;
  uint64_t dfs_replica_num = 0;
  // Upstream's group_ids: given, one per key of the call.
  bool has_groups = false;
  std::vector<std::string> groups;
};

// One key of a write (put or upsert) as it goes through Reserve, the copy
// done by the caller, and Commit.
struct WriteOp {
  std::string key;
  uint64_t size = 0;  // object size
  bool active = true; // false: already resolved by the caller, skipped
  // Set by Reserve. token != 0 means the key is reserved for this op: the
  // caller fills data (or sets result < 0) and must then call Commit.
  uint64_t token = 0;
  uint64_t first_segment = 0;  // segment of the object's first replica
  int64_t result = 0;          // 0 or an error code
  Bytes data;
};

// One key of a read as filled by Acquire.
struct ReadOp {
  std::string key;
  int64_t result = 0;  // object size, or an error code
  Bytes data;          // the object's bytes when result > 0
  uint64_t first_segment = 0;
};

struct SegmentStats {
  std::string name;
  uint64_t capacity = 0;
  uint64_t used = 0;
};

struct ClusterStats {
  size_t objects = 0;
  size_t pending = 0;
  size_t clients = 0;
  uint64_t lease_ttl_ms = 0;
  std::vector<SegmentStats> segments;
};

class Cluster {
 public:
  Cluster(std::string address, uint64_t lease_ttl_ms);
  Cluster(const Cluster &) = delete;
  Cluster &operator=(const Cluster &) = delete;

  // Returns the live cluster for address, creating it (and reading the
  // lease-TTL environment variable) when there is none.
  static std::shared_ptr<Cluster> Join(const std::string &address);
  // Drops the caller's reference and forgets the cluster once no client
  // holds it any more.
  static void Leave(std::shared_ptr<Cluster> *cluster);
  // Number of live clusters in this process (tests).
  static size_t LiveClusters();

  // KV events (kv_events.h): recording for the cluster at address starts
  // (MCGO_OK; MCGO_INVALID_PARAMS when it already records) whether or not
  // the cluster exists yet, and stops (MCGO_OBJECT_NOT_FOUND when it did
  // not record). KvEvents is the queue, null when not recording.
  static int32_t StartKvEvents(const std::string &address, uint64_t capacity);
  static int32_t StopKvEvents(const std::string &address);
  static std::shared_ptr<KvEventQueue> KvEvents(const std::string &address);

  // Registers a client. host is the configured local_hostname; a port from
  // a process-wide counter is appended when it has none. Mounts a segment
  // of segment_size bytes named after the client when segment_size > 0.
  int32_t AddClient(const std::string &host, uint64_t segment_size,
                    std::string *name, uint64_t *segment_id, std::string *err);
  // Unmounts the client's segment: replicas on it are dropped and objects
  // left without a replica are removed, whatever their lease.
  void RemoveClient(const std::string &name, uint64_t segment_id);
  // Mounts one more segment of capacity bytes for the client called name
  // (upstream's MountSegment); returns its id.
  uint64_t MountSegment(const std::string &name, uint64_t capacity);
  // Unmounts a segment as RemoveClient does, at once (grace_ms 0) or, as
  // upstream's graceful unmount, after grace_ms during which it stays
  // readable and takes no new replicas. False when there is no such segment.
  bool UnmountSegment(uint64_t segment_id, uint64_t grace_ms);

  // Writes. own_segment is the writing client's segment (0 = none),
  // writer its name (the object's owner for ClearReplicas).
  void Reserve(WriteOp *ops, size_t n, bool upsert, const PlacementConfig &cfg,
               uint64_t own_segment, const std::string &writer);
  void Commit(WriteOp *ops, size_t n) noexcept;

  // Reads: look keys up and grant read leases.
  void Acquire(ReadOp *ops, size_t n);
  // 1 / 0 per key; grants a lease to each existing key.
  void Exists(const std::string *keys, size_t n, int64_t *results);

  // kv_event: record Removed (upstream's single Remove does; its
  // BatchRemove does not).
  int32_t Remove(const std::string &key, bool force, bool kv_event = true);
  int64_t RemoveMatching(const KeyPattern &pattern, bool force);
  int64_t RemoveAll(bool force);

  ClusterStats Stats() const;
  uint64_t lease_ttl_ms() const { return lease_ttl_ms_; }
  // One replica as Describe reports it.
  struct ReplicaInfo {
    std::string segment;
    uint64_t size = 0;
  };
  // Describe looks key up like a get (granting a read lease) and lists its
  // replicas: 0, MCGO_OBJECT_NOT_FOUND (missing, or not yet readable).
  int32_t Describe(const std::string &key, std::vector<ReplicaInfo> *out);
  // ClearReplicas is upstream's BatchReplicaClear for one key: the replicas
  // on segment (all of them when segment is empty) of an object writer
  // wrote, whose lease has expired and which is not being written. An
  // object left without replicas is removed. True if cleared.
  bool ClearReplicas(const std::string &key, const std::string &writer,
                     const std::string &segment);
  // Copy and move tasks (upstream's create_copy_task, create_move_task,
  // query_task). The embedded engine runs a task as it is created, so a
  // query finds it finished: SUCCESS, or FAILED with the code's name as its
  // message. Creation refusals are returned; *id is set on success.
  struct TaskInfo {
    int32_t type = 0;    // MCGO_TASK_*
    int32_t status = 0;  // MCGO_TASK_*
    int64_t created_ms = 0, updated_ms = 0;
    std::string message;
  };
  int32_t CreateCopyTask(const std::string &key, const std::vector<std::string> &targets, uint64_t *id);
  int32_t CreateMoveTask(const std::string &key, const std::string &source, const std::string &target,
                         uint64_t *id);
  bool QueryTask(uint64_t id, TaskInfo *out) const;

  // Names of the segments holding key's replicas, in replica order.
  std::vector<std::string> ReplicaSegments(const std::string &key) const;

 private:
  struct Segment {
    std::string name;
    uint64_t capacity = 0;
    uint64_t used = 0;
    bool draining = false;  // gracefully unmounting: readable, no new replicas
    Clock::time_point unmount_at{};
  };
  struct Object {
    uint64_t size = 0;
    Bytes data;                     // null until the first commit
    std::vector<uint64_t> replicas; // segment ids, never empty
    uint64_t pending_token = 0;     // != 0 while a put/upsert is in flight
    std::string writer;             // the client that wrote it last
    Clock::time_point lease_until{};
    std::string group;              // its routing group, "" for none
  };
  using ObjectMap = std::unordered_map<std::string, Object>;

  std::vector<uint64_t> PlaceLocked(uint64_t size, const PlacementConfig &cfg,
                                    uint64_t own_segment);
  void ReleaseLocked(const Object &obj);
  ObjectMap::iterator EraseLocked(ObjectMap::iterator it);
  bool RemovableLocked(const Object &obj, bool force,
                       Clock::time_point now) const;
  void GrantLeaseLocked(Object *obj, Clock::time_point now);
  void RevokeLocked(WriteOp *op) noexcept;
  // The target checks of a task: MCGO_OK, MCGO_INVALID_PARAMS (no segment
  // of that name), MCGO_UNAVAILABLE_IN_CURRENT_STATUS (all draining).
  int32_t TargetOkLocked(const std::string &name) const;
  // A segment of that name that takes size more bytes, or 0.
  uint64_t RoomOnLocked(const std::string &name, uint64_t size) const;
  bool HasReplicaOnLocked(const Object &obj, const std::string &name) const;
  uint64_t AddTaskLocked(int32_t type, int32_t code);
  // Erases an object and its group membership.
  ObjectMap::iterator ForgetLocked(ObjectMap::iterator it);
  // Drops a segment: its replicas go, and objects left without one.
  void DropSegmentLocked(uint64_t id);
  // Locks the cluster and first unmounts the draining segments whose grace
  // period is over, so they go at the next call after it, as if a timer had
  // run (upstream's master has one).
  std::unique_lock<std::mutex> LockAndSweep();

  const std::string address_;
  const uint64_t lease_ttl_ms_;

  mutable std::mutex mu_;
  std::shared_ptr<KvEventQueue> kv_events_;  // null unless recording
  ObjectMap objects_;
  std::map<uint64_t, Segment> segments_;  // id -> segment
  size_t draining_ = 0;                    // segments with draining set
  std::set<std::string> client_names_;
  uint64_t next_segment_id_ = 1;
  std::map<uint64_t, TaskInfo> tasks_;  // the newest kMaxTasks
  std::unordered_map<std::string, std::set<std::string>> groups_;  // group -> member keys
  uint64_t next_task_id_ = 1;
  uint64_t next_token_ = 1;
};

}  // namespace mcgo::embedded

#endif  // MCGO_EMBEDDED_STORE_CLUSTER_H_
