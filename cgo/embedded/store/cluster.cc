//go:build !mooncake_native

// Embedded engine: in-process cluster (objects, segments, leases).
//
// Behaviour follows upstream Mooncake (kvcache-ai/Mooncake at 3b5a5941, the
// commit in third_party/mooncake/PIN). No upstream code is copied. Where
// upstream was unclear or we deliberately differ, the choice is listed here
// with the upstream file that was read (paths under mooncake-store/):
//
//  1. Write-once puts. A put on a key that exists, complete or still being
//     written, keeps the old value and reports 0 (master PutStart returns
//     OBJECT_ALREADY_EXISTS, which Client::Put and Client::CollectResults
//     turn into OK). [src/master_service.cpp, src/client_service.cpp]
//  2. Objects being written ("pending"): get / get_size report -703
//     REPLICA_IS_NOT_READY (GetReplicaList finds no readable replica);
//     is_exist reports 0 (ExistKey requires a readable replica); remove
//     reports -706 if leased, else -703 even with force (Remove checks the
//     lease, then refuses incomplete replicas regardless of force);
//     remove_by_regex and remove_all skip them. [src/master_service.cpp]
//  3. Read leases are granted by every lookup that finds a complete object:
//     all get variants (at query time, so also when the get then fails on a
//     too-small destination or an unregistered buffer), get_size (Query ->
//     GetReplicaList), is_exist and batch_is_exist (ExistKey and
//     BatchExistKey grant a lease too). lease_until = max(lease_until,
//     now + ttl). A same-size upsert keeps the lease (same metadata); a
//     size-changing upsert re-creates the metadata without a lease.
//     [src/master_service.cpp, include/master_service.h GrantReadLease]
//  4. Upsert ignores leases. It preempts an in-flight put/upsert of the same
//     key at once (UpsertStart); the preempted writer reports 0, as if its
//     value had been stored and then replaced. Same size: updated "in place"
//     (replicas and accounting kept; the key reads as -703 until the new
//     bytes are committed). Different size: the old replicas are released
//     first and the object re-placed; with no room the key is gone and -200
//     is returned (UpsertStart case C erases before allocating). A failed
//     upsert transfer (e.g. an unregistered buffer) removes the key, since
//     UpsertRevoke = PutRevoke erases the processing replicas.
//     [src/master_service.cpp UpsertStart, UpsertRevoke, PutRevoke]
//  5. prefer_alloc_in_same_node: every single-buffer put (put, upsert,
//     put_from, upsert_from, batch_put_from, batch_upsert_from) refuses it
//     with -600 whatever replica_num is ("prefer_alloc_in_same_node is not
//     supported", src/real_client.cpp); the multi-buffer put/upsert accept it
//     only with replica_num == 1, else -600 for every key
//     (ValidatePreferSameNodeWriteConfig, src/client_service.cpp). With it,
//     the writer's own segment is tried right after the preferred segments
//     (the master appends the writer host's segments to the preferred list).
//  6. With prefer_alloc_in_same_node (multi-buffer put) / prefer_same_node
//     (multi-buffer get), upstream submits the transfers of all keys whose
//     first replica is on the same segment as ONE batch
//     (BatchWriteWhenPreferSameNode, BatchGetWhenPreferSameNode), so one bad
//     key (unregistered buffer, or sizes summing above the object size)
//     fails every key of that segment with -800. We do the same.
//     [src/client_service.cpp, src/transfer_task.cpp]
//  7. Duplicate keys in one batch put are processed in order: the first
//     occurrence stores, later ones report 0 (already exists).
//     batch_put_from keeps its slices in a per-key map, so the storing
//     occurrence uses the LAST occurrence's buffer and size; we match that.
//     The multi-buffer put uses each occurrence's own buffers (first wins).
//     Upserts: each later occurrence preempts the earlier one, so the last
//     value wins and all report 0. [src/real_client.cpp batch_put_from_internal]
//  8. Duplicate keys in one batch get: upstream keys its slice map by key, so
//     only the last occurrence's destination is written while every
//     occurrence reports success. We write every destination (deliberate
//     difference). [src/real_client.cpp batch_get_into_internal]
//  9. Empty key: puts report -600 per key (PutStart rejects key.empty());
//     reads, is_exist and remove treat it as a missing key (-704 / 0), as the
//     master's lookups do.
// 10. Size 0: put_from / upsert_from of 0 bytes return 0 and store nothing
//     (early return in put_from_internal / upsert_from_internal); copying
//     put / upsert of 0 bytes: -600; a batch entry or multi-buffer key that
//     totals 0 bytes: -600 for that key (PutStart rejects slice_length 0).
// 11. Copying calls stage through the client's local buffer:
//     mcgo_store_put / mcgo_store_upsert of more than local_buffer_size bytes -> -600
//     (ClientBufferAllocator::allocate fails -> INVALID_PARAMS); mcgo_get of
//     an object larger than local_buffer_size -> -600 (get_buffer returns
//     null; -600 is the code the put path uses). This check comes before the
//     dst_cap check. Unlike upstream, concurrent copying calls do not compete
//     for local-buffer space. [src/real_client.cpp, src/client_buffer.cpp]
// 12. Zero-copy calls: every buffer of size > 0 must lie inside ONE
//     registered region of the client or its local buffer, else -800 for
//     that key (RDMA selectDevice containment check; the TCP transport does
//     not check at all, and same-node replicas use memcpy). Zero-size
//     buffers inside a multi-buffer list are allowed and skipped (upstream
//     hands them to the transfer engine). batch_get_into / get_into check
//     only the first object-size bytes of the destination (allocateSlices
//     cuts the slices to the object size). Upstream checks each internal
//     slice (<= ~4 MiB), so a buffer spanning two adjacent registered regions
//     might pass there; here it fails.
// 13. A put with a bad buffer on an existing key still reports 0: existence
//     is decided at PutStart, before any transfer.
// 14. Read check order per key: lookup (-704 / -703), capacity (-600),
//     multi-buffer sum above the object size (-800), registration (-800).
//     [src/real_client.cpp batch_get_into_multi_buffers_internal]
// 15. Placement: preferred segments in the given order (duplicates, unknown
//     names and full segments skipped), then the writer's own segment (5),
//     then the other segments by most free space (upstream's default
//     strategy starts at a random segment). replica_num is best effort on
//     distinct segments, at least one needed (HasExpectedReplicaAllocation,
//     memory-only configs). Capacity counts exact object bytes (no allocator
//     alignment or fragmentation). NO EVICTION: a full cluster yields -200,
//     where the real master evicts leased-out objects at its high watermark
//     and a retried put may then succeed. [include/allocation_strategy.h]
// 16. Destroying a client unmounts its segment: replicas on it are dropped
//     and objects left without a replica are removed whatever their lease or
//     pending state; an in-flight put whose object vanished this way reports
//     -704 (PutEnd -> OBJECT_NOT_FOUND). [src/master_service.cpp UnmountSegment]
// 17. remove_by_regex: std::regex with the ECMAScript grammar, matched with
//     std::regex_search (partial match); bad pattern -> -600.
//     [src/master_service.cpp RemoveByRegex] Here: the same answers for the
//     patterns of cgo/common/key_pattern.h's subset, in linear time; any
//     other pattern -> -600 (on both backends).
// 18. Not set up: every call reports -600 (upstream "Client is not
//     initialized" -> INVALID_PARAMS). mcgo_store_health_check reports -600 too;
//     upstream health_check returns 1 (HC_NOT_INITIALIZED), which is not an
//     ErrorCode. mcgo_store_hostname before setup: -600 (upstream returns "").
// 19. Setup: empty local_hostname -> -600 (setup_internal); protocol must be
//     "tcp" or "rdma" (our ABI; upstream knows more transports); empty
//     master_server_address -> -600; an explicit host:port already used by a
//     live client of the same cluster -> -600 (upstream the second transfer
//     engine cannot bind the port: "Failed to create client" ->
//     INVALID_PARAMS). metadata_server and device_name are not checked.
//     Without a port, ":<n>" is appended from a process-wide counter starting
//     at 17000 (upstream binds a free port in 12300-14300); raw IPv6
//     addresses are bracketed first ("[::1]:17000", buildHostNameWithPort).
// 20. replica_num 0 is treated as 1 (our ABI; upstream PutStart rejects 0).
//     with_soft_pin / with_hard_pin are accepted and ignored (no eviction).
// 21. global_segment_size: 0 mounts no segment; any other size below 16 MiB
//     (16777216 bytes, one cachelib slab) fails setup with -600 and a
//     message naming global_segment_size. Upstream allocates the segment
//     with allocate_buffer_allocator_memory, which refuses anything smaller
//     than a slab ("Total size must be at least 16777216"), and
//     setup_internal then returns INVALID_PARAMS (-600). We check after the
//     protocol / master / hostname checks of 19, before anything is
//     allocated or joined. [src/client_buffer_allocation.cpp,
//     src/real_client.cpp setup_internal]

#include "cluster.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "mcgo/store.h"

namespace mcgo::embedded {
namespace {

const std::string kNoGroup;  // the group of an object written without group ids

struct Registry {
  std::mutex mu;
  std::unordered_map<std::string, std::weak_ptr<Cluster>> clusters;
  // KV event queues by cluster address, kept while recording even when the
  // cluster has no client (kv_events.h).
  std::unordered_map<std::string, std::shared_ptr<KvEventQueue>> kv_events;
};

// Never destroyed: clients may outlive static destruction (e.g. a Go program
// exits without closing its stores), and a leaked singleton reachable from a
// global is not reported by LeakSanitizer.
Registry &GetRegistry() {
  static Registry *registry = new Registry();
  return *registry;
}

constexpr uint32_t kFirstPort = 17000;
constexpr uint32_t kPortSpan = 65536 - kFirstPort;
std::atomic<uint32_t> g_port_counter{0};

// The lease TTL of clusters created from now on; only tests change it.
std::atomic<uint64_t> g_lease_ttl_ms{kDefaultLeaseTtlMs};

size_t CountColons(const std::string &h) {
  return static_cast<size_t>(std::count(h.begin(), h.end(), ':'));
}

// "host:port", "[v6]:port" -> true; "host", "v6::addr", "[v6]" -> false.
bool HasExplicitPort(const std::string &h) {
  if (!h.empty() && h[0] == '[') {
    size_t close = h.find(']');
    return close != std::string::npos && close + 1 < h.size() &&
           h[close + 1] == ':';
  }
  return CountColons(h) == 1;
}

std::string WithPort(const std::string &h, uint32_t port) {
  if (!h.empty() && h[0] != '[' && CountColons(h) >= 2) {
    return "[" + h + "]:" + std::to_string(port);
  }
  return h + ":" + std::to_string(port);
}

}  // namespace

Cluster::Cluster(std::string address, uint64_t lease_ttl_ms)
    : address_(std::move(address)), lease_ttl_ms_(lease_ttl_ms) {}

std::shared_ptr<Cluster> Cluster::Join(const std::string &address) {
  Registry &r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.clusters.find(address);
  if (it != r.clusters.end()) {
    if (auto live = it->second.lock()) return live;
  }
  auto cluster = std::make_shared<Cluster>(address, g_lease_ttl_ms.load());
  auto kv = r.kv_events.find(address);
  if (kv != r.kv_events.end()) cluster->kv_events_ = kv->second;
  r.clusters[address] = cluster;
  return cluster;
}

int32_t Cluster::StartKvEvents(const std::string &address, uint64_t capacity) {
  Registry &r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.kv_events.count(address) != 0) return MCGO_INVALID_PARAMS;
  auto q = std::make_shared<KvEventQueue>(capacity);
  r.kv_events[address] = q;
  auto it = r.clusters.find(address);
  if (it != r.clusters.end()) {
    if (auto live = it->second.lock()) {
      std::lock_guard<std::mutex> cl(live->mu_);
      live->kv_events_ = q;
    }
  }
  return MCGO_OK;
}

int32_t Cluster::StopKvEvents(const std::string &address) {
  Registry &r = GetRegistry();
  std::shared_ptr<KvEventQueue> q;
  std::shared_ptr<Cluster> live;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    auto kv = r.kv_events.find(address);
    if (kv == r.kv_events.end()) return MCGO_OBJECT_NOT_FOUND;
    q = std::move(kv->second);
    r.kv_events.erase(kv);
    auto it = r.clusters.find(address);
    if (it != r.clusters.end()) live = it->second.lock();
    if (live) {
      std::lock_guard<std::mutex> cl(live->mu_);
      live->kv_events_.reset();
    }
  }
  q->Close();
  return MCGO_OK;  // live (if any) is released outside the registry lock
}

std::shared_ptr<KvEventQueue> Cluster::KvEvents(const std::string &address) {
  Registry &r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto kv = r.kv_events.find(address);
  return kv == r.kv_events.end() ? nullptr : kv->second;
}

void SetLeaseTtlForNewClusters(uint64_t ms) { g_lease_ttl_ms.store(ms); }

void Cluster::Leave(std::shared_ptr<Cluster> *cluster) {
  if (!*cluster) return;
  const std::string address = (*cluster)->address_;
  cluster->reset();  // may destroy the cluster, outside the registry lock
  Registry &r = GetRegistry();
  bool none_left;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.clusters.find(address);
    if (it != r.clusters.end() && it->second.expired()) r.clusters.erase(it);
    none_left = r.clusters.empty();
  }
  // No store left in the process: give cached object memory back.
  if (none_left) TrimObjectCache();
}

size_t Cluster::LiveClusters() {
  Registry &r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  size_t n = 0;
  for (const auto &kv : r.clusters) {
    if (!kv.second.expired()) ++n;
  }
  return n;
}

int32_t Cluster::AddClient(const std::string &host, uint64_t segment_size,
                           std::string *name, uint64_t *segment_id,
                           std::string *err) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string chosen;
  if (HasExplicitPort(host)) {
    if (client_names_.count(host) != 0) {
      *err = "local_hostname \"" + host +
             "\" is already used by another client of this cluster";
      return MCGO_INVALID_PARAMS;
    }
    chosen = host;
  } else {
    for (uint32_t attempt = 0; attempt < kPortSpan; ++attempt) {
      uint32_t port = kFirstPort + g_port_counter.fetch_add(1) % kPortSpan;
      std::string candidate = WithPort(host, port);
      if (client_names_.count(candidate) == 0) {
        chosen = std::move(candidate);
        break;
      }
    }
    if (chosen.empty()) {
      *err = "no free port left for local_hostname \"" + host + "\"";
      return MCGO_INVALID_PARAMS;
    }
  }
  client_names_.insert(chosen);
  uint64_t id = 0;
  if (segment_size > 0) {
    id = next_segment_id_++;
    Segment seg;
    seg.name = chosen;
    seg.capacity = segment_size;
    try {
      segments_.emplace(id, std::move(seg));
    } catch (...) {
      client_names_.erase(chosen);
      throw;
    }
  }
  *name = std::move(chosen);
  *segment_id = id;
  return MCGO_OK;
}

void Cluster::RemoveClient(const std::string &name, uint64_t segment_id) {
  auto lock = LockAndSweep();
  client_names_.erase(name);
  if (segment_id != 0) DropSegmentLocked(segment_id);
}

void Cluster::DropSegmentLocked(uint64_t id) {
  auto seg = segments_.find(id);
  if (seg == segments_.end()) return;
  for (auto it = objects_.begin(); it != objects_.end();) {
    auto &reps = it->second.replicas;
    reps.erase(std::remove(reps.begin(), reps.end(), id), reps.end());
    if (reps.empty()) {
      it = ForgetLocked(it);  // its only replicas were on this segment
    } else {
      ++it;
    }
  }
  if (seg->second.draining) --draining_;
  segments_.erase(seg);
}

std::unique_lock<std::mutex> Cluster::LockAndSweep() {
  std::unique_lock<std::mutex> lock(mu_);
  if (draining_ > 0) {
    const auto now = Clock::now();
    for (auto it = segments_.begin(); it != segments_.end();) {
      const uint64_t id = it->first;
      const bool due = it->second.draining && now >= it->second.unmount_at;
      ++it;  // DropSegmentLocked erases id's entry
      if (due) DropSegmentLocked(id);
    }
  }
  return lock;
}

uint64_t Cluster::MountSegment(const std::string &name, uint64_t capacity) {
  auto lock = LockAndSweep();
  const uint64_t id = next_segment_id_++;
  Segment seg;
  seg.name = name;
  seg.capacity = capacity;
  segments_.emplace(id, std::move(seg));
  return id;
}

bool Cluster::UnmountSegment(uint64_t segment_id, uint64_t grace_ms) {
  auto lock = LockAndSweep();
  auto seg = segments_.find(segment_id);
  if (seg == segments_.end()) return false;
  if (grace_ms == 0) {
    DropSegmentLocked(segment_id);
  } else if (!seg->second.draining) {  // a second graceful unmount changes nothing, as upstream
    seg->second.draining = true;
    seg->second.unmount_at = Clock::now() + std::chrono::milliseconds(grace_ms);
    ++draining_;
  }
  return true;
}

std::vector<uint64_t> Cluster::PlaceLocked(uint64_t size,
                                           const PlacementConfig &cfg,
                                           uint64_t own_segment) {
  const uint64_t want = std::max<uint64_t>(cfg.replica_num, 1);
  std::vector<uint64_t> chosen;
  auto try_add = [&](uint64_t id) {
    if (chosen.size() >= want) return;
    if (std::find(chosen.begin(), chosen.end(), id) != chosen.end()) return;
    auto s = segments_.find(id);
    if (s == segments_.end() || s->second.draining) return;
    if (s->second.capacity - s->second.used < size) return;
    chosen.push_back(id);
  };
  // A client that mounted more segments has several of one name: the first
  // with room is the preferred one.
  for (const auto &name : cfg.preferred_segments) {
    for (const auto &kv : segments_) {
      const size_t before = chosen.size();
      if (kv.second.name == name) try_add(kv.first);
      if (chosen.size() > before) break;
    }
  }
  if (cfg.prefer_same_node && own_segment != 0) try_add(own_segment);
  if (chosen.size() < want) {
    std::vector<std::pair<uint64_t, uint64_t>> by_free;  // (free, id)
    by_free.reserve(segments_.size());
    for (const auto &kv : segments_) {
      by_free.emplace_back(kv.second.capacity - kv.second.used, kv.first);
    }
    std::sort(by_free.begin(), by_free.end(),
              [](const auto &a, const auto &b) {
                return a.first != b.first ? a.first > b.first
                                          : a.second < b.second;
              });
    for (const auto &fi : by_free) try_add(fi.second);
  }
  return chosen;
}

void Cluster::ReleaseLocked(const Object &obj) {
  for (uint64_t id : obj.replicas) {
    auto s = segments_.find(id);
    if (s == segments_.end()) continue;
    s->second.used -= std::min(s->second.used, obj.size);
  }
}

Cluster::ObjectMap::iterator Cluster::EraseLocked(ObjectMap::iterator it) {
  ReleaseLocked(it->second);
  return ForgetLocked(it);
}

Cluster::ObjectMap::iterator Cluster::ForgetLocked(ObjectMap::iterator it) {
  if (!it->second.group.empty()) {
    auto g = groups_.find(it->second.group);
    if (g != groups_.end()) {
      g->second.erase(it->first);
      if (g->second.empty()) groups_.erase(g);
    }
  }
  return objects_.erase(it);
}

bool Cluster::RemovableLocked(const Object &obj, bool force,
                              Clock::time_point now) const {
  return obj.pending_token == 0 && (force || now >= obj.lease_until);
}

void Cluster::GrantLeaseLocked(Object *obj, Clock::time_point now) {
  auto until = now + std::chrono::milliseconds(lease_ttl_ms_);
  if (until > obj->lease_until) obj->lease_until = until;
  // A lookup of one member of a group leases them all, as upstream's
  // GrantReadLease does for grouped objects.
  if (obj->group.empty()) return;
  auto g = groups_.find(obj->group);
  if (g == groups_.end()) return;
  for (const auto &key : g->second) {
    auto m = objects_.find(key);
    if (m != objects_.end() && until > m->second.lease_until) m->second.lease_until = until;
  }
}

void Cluster::RevokeLocked(WriteOp *op) noexcept {
  if (op->token == 0) return;
  auto it = objects_.find(op->key);
  if (it != objects_.end() && it->second.pending_token == op->token) {
    EraseLocked(it);
  }
  op->token = 0;
  op->data.reset();
}

void Cluster::Reserve(WriteOp *ops, size_t n, bool upsert,
                      const PlacementConfig &cfg, uint64_t own_segment,
                      const std::string &writer) {
  auto lock = LockAndSweep();
  size_t i = 0;
  // One group per key of the call, as upstream's GetGroupIdForKey wants.
  const bool groups_fit = !cfg.has_groups || cfg.groups.size() == n;
  try {
    for (; i < n; ++i) {
      WriteOp &op = ops[i];
      op.token = 0;
      if (!op.active) continue;
      const std::string &group = cfg.has_groups && groups_fit ? cfg.groups[i] : kNoGroup;
      if (op.key.empty() || op.size == 0 || cfg.nof_replica_num > 0 || !groups_fit) {
        op.result = MCGO_INVALID_PARAMS;
        continue;
      }
      if (cfg.dfs_replica_num > 0) {
        op.result = MCGO_DFS_SERVICE_UNAVAILABLE;
        continue;
      }
      auto it = objects_.find(op.key);
      if (it != objects_.end()) {
        if (!upsert) {
          op.result = MCGO_OK;  // write-once: keep the existing value
          continue;
        }
        Object &obj = it->second;
        if (cfg.has_groups && obj.group != group) {
          op.result = MCGO_INVALID_PARAMS;  // group membership is immutable
          continue;
        }
        if (obj.pending_token == 0 && obj.size == op.size) {
          obj.writer = writer;
          obj.pending_token = next_token_++;  // in-place update
          op.token = obj.pending_token;
          op.first_segment = obj.replicas.front();
          op.result = MCGO_OK;
          continue;
        }
        EraseLocked(it);  // preempt an in-flight write, or size change
      }
      auto slot = objects_.try_emplace(op.key).first;
      std::vector<uint64_t> replicas;
      try {
        replicas = PlaceLocked(op.size, cfg, own_segment);
      } catch (...) {
        objects_.erase(slot);
        throw;
      }
      if (replicas.empty()) {
        objects_.erase(slot);
        op.result = MCGO_NO_AVAILABLE_HANDLE;
        continue;
      }
      for (uint64_t id : replicas) segments_.find(id)->second.used += op.size;
      Object &obj = slot->second;
      if (!group.empty()) {
        groups_[group].insert(op.key);
        obj.group = group;
      }
      obj.size = op.size;
      obj.writer = writer;
      obj.replicas = std::move(replicas);
      obj.pending_token = next_token_++;
      op.token = obj.pending_token;
      op.first_segment = obj.replicas.front();
      op.result = MCGO_OK;
    }
  } catch (...) {
    for (size_t j = 0; j < i && j < n; ++j) RevokeLocked(&ops[j]);
    throw;
  }
}

void Cluster::Commit(WriteOp *ops, size_t n) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < n; ++i) {
    WriteOp &op = ops[i];
    if (op.token == 0) continue;
    auto it = objects_.find(op.key);
    if (it == objects_.end()) {
      // Removed while we were copying (its segment was unmounted).
      if (op.result >= 0) op.result = MCGO_OBJECT_NOT_FOUND;
    } else if (it->second.pending_token != op.token) {
      // Preempted by an upsert of the same key: keep our result.
    } else if (op.result < 0) {
      EraseLocked(it);  // revoke
    } else {
      it->second.data = std::move(op.data);
      it->second.pending_token = 0;
      // Upstream's PutEnd publishes Stored (a put's and an upsert's end).
      if (kv_events_) kv_events_->Record(true, op.key, it->second.group);
    }
    op.token = 0;
    op.data.reset();
  }
}

void Cluster::Acquire(ReadOp *ops, size_t n) {
  const auto now = Clock::now();
  auto lock = LockAndSweep();
  for (size_t i = 0; i < n; ++i) {
    ReadOp &op = ops[i];
    auto it = objects_.find(op.key);
    if (it == objects_.end()) {
      op.result = MCGO_OBJECT_NOT_FOUND;
      continue;
    }
    Object &obj = it->second;
    if (obj.pending_token != 0) {
      op.result = MCGO_REPLICA_IS_NOT_READY;
      continue;
    }
    GrantLeaseLocked(&obj, now);
    op.data = obj.data;
    op.first_segment = obj.replicas.front();
    op.result = static_cast<int64_t>(obj.size);
  }
}

void Cluster::Exists(const std::string *keys, size_t n, int64_t *results) {
  const auto now = Clock::now();
  auto lock = LockAndSweep();
  for (size_t i = 0; i < n; ++i) {
    auto it = objects_.find(keys[i]);
    if (it == objects_.end() || it->second.pending_token != 0) {
      results[i] = 0;
      continue;
    }
    GrantLeaseLocked(&it->second, now);
    results[i] = 1;
  }
}

int32_t Cluster::Remove(const std::string &key, bool force, bool kv_event) {
  const auto now = Clock::now();
  auto lock = LockAndSweep();
  auto it = objects_.find(key);
  if (it == objects_.end()) return MCGO_OBJECT_NOT_FOUND;
  if (!force && now < it->second.lease_until) return MCGO_OBJECT_HAS_LEASE;
  if (it->second.pending_token != 0) return MCGO_REPLICA_IS_NOT_READY;
  if (kv_event && kv_events_) kv_events_->Record(false, key, it->second.group);
  EraseLocked(it);
  return MCGO_OK;
}

int64_t Cluster::RemoveMatching(const KeyPattern &pattern, bool force) {
  const auto now = Clock::now();
  auto lock = LockAndSweep();
  int64_t removed = 0;
  for (auto it = objects_.begin(); it != objects_.end();) {
    if (pattern.Matches(it->first) &&
        RemovableLocked(it->second, force, now)) {
      it = EraseLocked(it);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

int64_t Cluster::RemoveAll(bool force) {
  const auto now = Clock::now();
  auto lock = LockAndSweep();
  int64_t removed = 0;
  for (auto it = objects_.begin(); it != objects_.end();) {
    if (RemovableLocked(it->second, force, now)) {
      it = EraseLocked(it);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

ClusterStats Cluster::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  ClusterStats st;
  st.objects = objects_.size();
  for (const auto &kv : objects_) {
    if (kv.second.pending_token != 0) ++st.pending;
  }
  st.clients = client_names_.size();
  st.lease_ttl_ms = lease_ttl_ms_;
  for (const auto &kv : segments_) {
    st.segments.push_back({kv.second.name, kv.second.capacity, kv.second.used});
  }
  return st;
}

int32_t Cluster::Describe(const std::string &key, std::vector<ReplicaInfo> *out) {
  const auto now = Clock::now();
  auto lock = LockAndSweep();
  out->clear();
  auto it = objects_.find(key);
  // Upstream's lookup reports a key that is not readable yet as missing.
  if (it == objects_.end() || it->second.pending_token != 0) return MCGO_OBJECT_NOT_FOUND;
  Object &obj = it->second;
  GrantLeaseLocked(&obj, now);
  for (uint64_t id : obj.replicas) {
    auto s = segments_.find(id);
    out->push_back(ReplicaInfo{s != segments_.end() ? s->second.name : std::string(), obj.size});
  }
  return MCGO_OK;
}

bool Cluster::ClearReplicas(const std::string &key, const std::string &writer,
                            const std::string &segment) {
  const auto now = Clock::now();
  auto lock = LockAndSweep();
  auto it = objects_.find(key);
  if (it == objects_.end()) return false;
  Object &obj = it->second;
  if (obj.writer != writer || now < obj.lease_until || obj.pending_token != 0) return false;
  if (segment.empty()) {
    EraseLocked(it);
    return true;
  }
  std::vector<uint64_t> kept;
  bool cleared = false;
  for (uint64_t id : obj.replicas) {
    auto s = segments_.find(id);
    if (s != segments_.end() && s->second.name == segment) {
      s->second.used -= std::min(s->second.used, obj.size);
      cleared = true;
    } else {
      kept.push_back(id);
    }
  }
  if (!cleared) return false;
  obj.replicas = std::move(kept);
  if (obj.replicas.empty()) ForgetLocked(it);
  return true;
}

// ---- tasks -------------------------------------------------------------------

namespace {

// Finished tasks are kept for queries; upstream prunes them after a while,
// the embedded engine beyond this many.
constexpr size_t kMaxTasks = 4096;

int64_t EpochMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int32_t Cluster::TargetOkLocked(const std::string &name) const {
  bool any = false;
  for (const auto &kv : segments_) {
    if (kv.second.name != name) continue;
    if (!kv.second.draining) return MCGO_OK;
    any = true;
  }
  return any ? MCGO_UNAVAILABLE_IN_CURRENT_STATUS : MCGO_INVALID_PARAMS;
}

uint64_t Cluster::RoomOnLocked(const std::string &name, uint64_t size) const {
  for (const auto &kv : segments_) {
    const Segment &seg = kv.second;
    if (seg.name == name && !seg.draining && seg.capacity - seg.used >= size) return kv.first;
  }
  return 0;
}

bool Cluster::HasReplicaOnLocked(const Object &obj, const std::string &name) const {
  for (uint64_t id : obj.replicas) {
    auto seg = segments_.find(id);
    if (seg != segments_.end() && seg->second.name == name) return true;
  }
  return false;
}

uint64_t Cluster::AddTaskLocked(int32_t type, int32_t code) {
  const uint64_t id = next_task_id_++;
  TaskInfo t;
  t.type = type;
  t.status = code == MCGO_OK ? MCGO_TASK_SUCCESS : MCGO_TASK_FAILED;
  t.created_ms = t.updated_ms = EpochMs();
  t.message = code == MCGO_OK ? "Task completed successfully" : "error " + std::to_string(code);
  tasks_.emplace(id, std::move(t));
  while (tasks_.size() > kMaxTasks) tasks_.erase(tasks_.begin());
  return id;
}

int32_t Cluster::CreateCopyTask(const std::string &key, const std::vector<std::string> &targets, uint64_t *id) {
  auto lock = LockAndSweep();
  if (targets.empty()) return MCGO_INVALID_PARAMS;
  auto it = objects_.find(key);
  if (it == objects_.end()) return MCGO_OBJECT_NOT_FOUND;
  for (const auto &t : targets) {
    if (int32_t rc = TargetOkLocked(t)) return rc;
  }
  // The copy, all or nothing, as upstream's CopyStart allocates every new
  // replica before it transfers.
  Object &obj = it->second;
  int32_t code = obj.pending_token != 0 ? MCGO_REPLICA_NOT_FOUND : MCGO_OK;
  std::vector<uint64_t> added;
  for (size_t i = 0; code == MCGO_OK && i < targets.size(); ++i) {
    if (HasReplicaOnLocked(obj, targets[i])) continue;
    const uint64_t seg = RoomOnLocked(targets[i], obj.size);
    if (seg == 0) {
      code = MCGO_NO_AVAILABLE_HANDLE;
      break;
    }
    segments_.find(seg)->second.used += obj.size;
    obj.replicas.push_back(seg);
    added.push_back(seg);
  }
  if (code != MCGO_OK) {
    for (uint64_t seg : added) {
      segments_.find(seg)->second.used -= obj.size;
      obj.replicas.pop_back();
    }
  }
  *id = AddTaskLocked(MCGO_TASK_COPY, code);
  return MCGO_OK;
}

int32_t Cluster::CreateMoveTask(const std::string &key, const std::string &source,
                                const std::string &target, uint64_t *id) {
  auto lock = LockAndSweep();
  auto it = objects_.find(key);
  if (it == objects_.end()) return MCGO_OBJECT_NOT_FOUND;
  if (source == target) return MCGO_INVALID_PARAMS;
  if (int32_t rc = TargetOkLocked(target)) return rc;
  Object &obj = it->second;
  auto from = obj.replicas.end();
  for (auto r = obj.replicas.begin(); r != obj.replicas.end(); ++r) {
    auto seg = segments_.find(*r);
    if (seg != segments_.end() && seg->second.name == source) from = r;
  }
  if (from == obj.replicas.end()) return MCGO_INVALID_PARAMS;  // no replica on source
  int32_t code = obj.pending_token != 0 ? MCGO_REPLICA_NOT_FOUND : MCGO_OK;
  if (code == MCGO_OK) {
    const uint64_t src = *from;
    if (HasReplicaOnLocked(obj, target)) {
      obj.replicas.erase(from);  // the target has one already: only the source's goes
    } else if (const uint64_t seg = RoomOnLocked(target, obj.size); seg != 0) {
      segments_.find(seg)->second.used += obj.size;
      *from = seg;  // the moved replica takes the source's place
    } else {
      code = MCGO_NO_AVAILABLE_HANDLE;
    }
    auto seg = segments_.find(src);
    if (code == MCGO_OK && seg != segments_.end()) seg->second.used -= std::min(seg->second.used, obj.size);
  }
  *id = AddTaskLocked(MCGO_TASK_MOVE, code);
  return MCGO_OK;
}

bool Cluster::QueryTask(uint64_t id, TaskInfo *out) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return false;
  *out = it->second;
  return true;
}

std::vector<std::string> Cluster::ReplicaSegments(const std::string &key) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  auto it = objects_.find(key);
  if (it == objects_.end()) return names;
  for (uint64_t id : it->second.replicas) {
    auto s = segments_.find(id);
    if (s != segments_.end()) names.push_back(s->second.name);
  }
  return names;
}

}  // namespace mcgo::embedded
