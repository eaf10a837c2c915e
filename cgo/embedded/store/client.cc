//go:build !mooncake_native

#include "client.h"

#include "common/args.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <set>
#include <utility>

namespace mcgo::embedded {
namespace {

// The real clients dummies can reach, by hostname: the embedded engine's
// stand-in for upstream's standalone real client, which serves dummies at
// an RPC address. A real client is in it from setup until its teardown
// begins, so a dummy's setup may read its fields under the lock.
struct ServedRegistry {
  std::mutex mu;
  std::unordered_map<std::string, mcgo_store *> by_name;
};
ServedRegistry &ServedByName() {
  static auto *r = new ServedRegistry;  // never destroyed: stores may outlive statics
  return *r;
}

// The smallest segment upstream mounts: one slab of its allocator.
constexpr uint64_t kMinSegmentSize = MCGO_SEGMENT_SLAB_SIZE;

const void *AsPtr(uintptr_t addr) { return reinterpret_cast<const void *>(addr); }
void *AsMutablePtr(uintptr_t addr) { return reinterpret_cast<void *>(addr); }

// Fails every op of a segment that has a failed op. `candidate` marks the
// ops that reached the transfer stage.
template <typename Op>
void FailWholeSegments(std::vector<Op> *ops, const std::vector<char> &candidate) {
  std::set<uint64_t> failed;
  for (size_t i = 0; i < ops->size(); ++i) {
    if (candidate[i] && (*ops)[i].result == MCGO_TRANSFER_FAIL) {
      failed.insert((*ops)[i].first_segment);
    }
  }
  if (failed.empty()) return;
  for (size_t i = 0; i < ops->size(); ++i) {
    if (candidate[i] && failed.count((*ops)[i].first_segment) != 0) {
      (*ops)[i].result = MCGO_TRANSFER_FAIL;
    }
  }
}

}  // namespace

// The first half of this process's segment and task ids (upstream's are
// random UUIDs), so an id of one process is not one of another's.
uint64_t IdNonce() {
  static const uint64_t nonce = [] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32 | rd()) | 1;
  }();
  return nonce;
}

namespace {

// Unmaps what the mounts no longer need: every mount when all is set, else
// those gracefully unmounted whose grace period is over. Caller holds
// mounts_mu.
void ReleaseMountsLocked(mcgo_store *s, bool all) {
  const auto now = Clock::now();
  auto &m = s->mounts;
  for (auto it = m.begin(); it != m.end();) {
    if (all || (it->unmounted && now >= it->unmap_at)) {
      munmap(it->base, static_cast<size_t>(it->size));
      it = m.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace

// Replication options: replica_num 0 means 1 (cluster.cc, note 20); the
// preferred segment names are split by mcgo::args::ParseSegments.
int32_t ParsePlacement(const mcgo_replicate_config &in, PlacementConfig *out) {
  out->replica_num = in.replica_num == 0 ? 1 : in.replica_num;
  out->prefer_same_node = in.prefer_alloc_in_same_node != 0;
  out->nof_replica_num = in.nof_replica_num;
  out->dfs_replica_num = in.dfs_replica_num;
  // Soft pins only matter to eviction, which the embedded engine never
  // does; NoF and DFS replicas it has not (mcgo_store_capabilities).
  std::vector<std::string> nof;
  out->has_groups = in.has_group_ids != 0;
  return mcgo::args::ParseSegments(in, &out->preferred_segments) &&
                 mcgo::args::ParseNoFSegments(in, &nof) && mcgo::args::SoftPinActionOk(in) &&
                 mcgo::args::ParseGroupIds(in, &out->groups) && mcgo::args::DataTypeOk(in)
             ? MCGO_OK
             : MCGO_INVALID_PARAMS;  // fewer names than count, a bad action or data type
}

int32_t MountMemory(mcgo_store *s, void *base, uint64_t size, bool allocated,
                    mcgo_segment_id *id) {
  std::lock_guard<std::mutex> lock(s->mounts_mu);
  ReleaseMountsLocked(s, false);
  mcgo_store::Mount m;
  m.base = base;
  m.size = size;
  m.allocated = allocated;
  s->mounts.reserve(s->mounts.size() + 1);  // so that nothing throws once mounted
  m.id = s->cluster->MountSegment(s->hostname, size);
  s->mounts.push_back(m);
  *id = mcgo_segment_id{IdNonce(), m.id};
  return MCGO_OK;
}

int32_t UnmountMemory(mcgo_store *s, const mcgo_segment_id &id, uint64_t grace_seconds,
                      bool allocated) {
  std::lock_guard<std::mutex> lock(s->mounts_mu);
  ReleaseMountsLocked(s, false);
  for (auto &m : s->mounts) {
    if (id.first != IdNonce() || m.id != id.second || m.unmounted || m.allocated != allocated) continue;
    // Clamped to 1,000 days so that the deadline cannot overflow the clock.
    const uint64_t grace_ms = std::min<uint64_t>(grace_seconds, 86'400'000) * 1000;
    s->cluster->UnmountSegment(m.id, grace_ms);
    m.unmounted = true;
    m.unmap_at = Clock::now() + std::chrono::milliseconds(grace_ms);
    ReleaseMountsLocked(s, false);
    return MCGO_OK;
  }
  return MCGO_INVALID_PARAMS;
}

int32_t Setup(mcgo_store *s, const mcgo_store_config &cfg, std::string *err,
              mcgo_te *engine) {
  std::lock_guard<std::mutex> lock(s->setup_mu);
  if (s->ready.load(std::memory_order_acquire)) {
    *err = "the store is already set up";
    return MCGO_INVALID_PARAMS;
  }
  const std::string protocol = cfg.protocol ? cfg.protocol : "";
  if (protocol != "tcp" && protocol != "rdma") {
    *err = "protocol must be \"tcp\" or \"rdma\", got \"" + protocol + "\"";
    return MCGO_INVALID_PARAMS;
  }
  const std::string master =
      cfg.master_server_address ? cfg.master_server_address : "";
  if (master.empty()) {
    *err = "master_server_address is empty";
    return MCGO_INVALID_PARAMS;
  }
  std::string host = cfg.local_hostname ? cfg.local_hostname : "";
  std::shared_ptr<RegionSet> engine_regions;
  if (engine != nullptr) {
    std::string name, metadata;
    if (!te::AttachStore(engine, &engine_regions, &name, &metadata)) {
      *err = "the transfer engine is not usable (no transport installed?)";
      return MCGO_INVALID_PARAMS;
    }
    const std::string meta = cfg.metadata_server ? cfg.metadata_server : "";
    std::string why;
    if (!host.empty() && host != name) {
      why = "local_hostname \"" + host + "\" is not the engine's segment name \"" + name + "\"";
    } else if (!meta.empty() && meta != metadata) {
      why = "metadata_server \"" + meta + "\" is not the engine's \"" + metadata + "\"";
    }
    if (!why.empty()) {
      te::DetachStore(engine);
      *err = why;
      return MCGO_INVALID_PARAMS;
    }
    host = name;
  }
  // Every refusal below must let go of the engine again.
  struct Detach {
    mcgo_te *e;
    ~Detach() { te::DetachStore(e); }
  } detach{engine};
  if (host.empty()) {
    *err = "local_hostname is empty";
    return MCGO_INVALID_PARAMS;
  }
  // Upstream allocates a mounted segment with its slab allocator, which
  // refuses anything smaller than one slab (16 MiB): setup then fails with
  // INVALID_PARAMS ("Total size must be at least 16777216",
  // client_buffer_allocation.cpp). 0 mounts nothing and is fine.
  if (cfg.global_segment_size > 0 && cfg.global_segment_size < kMinSegmentSize) {
    *err = "global_segment_size " + std::to_string(cfg.global_segment_size) +
           " is below 16 MiB, the smallest segment Mooncake mounts (0 mounts none)";
    return MCGO_INVALID_PARAMS;
  }

  // The real client allocates and registers a local buffer of this size; we
  // map it lazily so that large sizes cost nothing until touched.
  void *local = nullptr;
  const uint64_t local_size = cfg.local_buffer_size;
  if (local_size > 0) {
    local = local_size > SIZE_MAX
                ? MAP_FAILED
                : mmap(nullptr, static_cast<size_t>(local_size),
                       PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (local == MAP_FAILED) {
      *err = "cannot allocate the local buffer (local_buffer_size " +
             std::to_string(local_size) + " bytes): " + std::strerror(errno);
      return MCGO_INVALID_PARAMS;
    }
  }
  auto unmap = [&]() {
    if (local != nullptr) munmap(local, static_cast<size_t>(local_size));
  };

  std::shared_ptr<Cluster> cluster;
  std::string name;
  uint64_t segment_id = 0;
  int32_t rc;
  try {
    cluster = Cluster::Join(master);
    rc = cluster->AddClient(host, cfg.global_segment_size, &name, &segment_id,
                            err);
  } catch (...) {
    Cluster::Leave(&cluster);
    unmap();
    throw;
  }
  if (rc != MCGO_OK) {
    Cluster::Leave(&cluster);
    unmap();
    return rc;
  }
  if (engine_regions) {
    // The engine's registrations are the store's; the local buffer is one
    // of them, as the real client registers it with its engine.
    s->regions = engine_regions;
    if (local != nullptr) s->regions->Add(reinterpret_cast<uintptr_t>(local), local_size);
    s->engine = engine;
    detach.e = nullptr;  // kept until Teardown
  } else {
    s->regions->SetLocalBuffer(reinterpret_cast<uintptr_t>(local), local_size);
  }
  s->cluster = std::move(cluster);
  s->hostname = std::move(name);
  s->segment_id = segment_id;
  s->protocol = protocol;
  s->local_buffer = local;
  s->local_buffer_size = local_size;
  s->served = std::make_shared<mcgo::embedded::Served>();
  {
    ServedRegistry &r = ServedByName();
    std::lock_guard<std::mutex> lock(r.mu);
    r.by_name.emplace(s->hostname, s);  // the first of two same-named clients keeps it
  }
  s->ready.store(true, std::memory_order_release);
  return MCGO_OK;
}

int32_t SetupDummy(mcgo_store *s, uint64_t local_buffer_size, const std::string &server,
                   std::string *err) {
  std::lock_guard<std::mutex> setup_lock(s->setup_mu);
  if (s->ready.load(std::memory_order_acquire)) {
    *err = "the store is already set up";
    return MCGO_INVALID_PARAMS;
  }
  ServedRegistry &r = ServedByName();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.by_name.find(server);
  if (it == r.by_name.end()) {
    // Upstream's DummyClient fails to connect: no real client answers there.
    *err = "no real client serves at " + server +
           " (embedded engine: a store set up in this process, named by its hostname)";
    return MCGO_RPC_FAIL;
  }
  const mcgo_store *real = it->second;
  s->served = real->served;
  s->cluster = real->cluster;  // a reference of the dummy's own; Leave drops it
  s->hostname = real->hostname;  // placement is the real client's; mcgo_store_hostname says ""
  s->segment_id = real->segment_id;
  s->regions = real->regions;
  s->protocol = real->protocol;
  // Only its size matters here: it bounds the copying calls, as upstream
  // stages a dummy's copying gets in its local buffer.
  s->local_buffer_size = local_buffer_size;
  s->dummy = true;
  s->ready.store(true, std::memory_order_release);
  return MCGO_OK;
}

namespace {
// A dummy's teardown: its registrations leave the real client's set, its
// shared memory is unmapped; the real client's segment and objects stay.
void TeardownDummy(mcgo_store *s) noexcept {
  for (const auto &p : s->pool.Take()) {
    s->regions->Remove(reinterpret_cast<uintptr_t>(p.first));
    munmap(p.first, static_cast<size_t>(p.second));
  }
  s->regions = std::make_shared<RegionSet>();
  s->served.reset();
  Cluster::Leave(&s->cluster);
}
}  // namespace

void Teardown(mcgo_store *s) noexcept {
  if (!s->ready.load(std::memory_order_acquire)) return;
  s->ready.store(false, std::memory_order_release);
  if (s->dummy) {
    TeardownDummy(s);
    return;
  }
  {
    ServedRegistry &r = ServedByName();
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.by_name.find(s->hostname);
    if (it != r.by_name.end() && it->second == s) r.by_name.erase(it);
  }
  s->served->alive.store(false, std::memory_order_release);
  try {
    {
      std::lock_guard<std::mutex> lock(s->mounts_mu);
      for (const auto &m : s->mounts) s->cluster->UnmountSegment(m.id, 0);
      ReleaseMountsLocked(s, true);
    }
    s->cluster->RemoveClient(s->hostname, s->segment_id);
  } catch (...) {
  }
  Cluster::Leave(&s->cluster);
  if (s->engine != nullptr) {
    if (s->local_buffer != nullptr) {
      s->regions->Remove(reinterpret_cast<uintptr_t>(s->local_buffer));
    }
    te::DetachStore(s->engine);
    s->engine = nullptr;
  }
  if (s->local_buffer != nullptr) {
    munmap(s->local_buffer, static_cast<size_t>(s->local_buffer_size));
    s->local_buffer = nullptr;
  }
}

void WriteFromBuffers(mcgo_store *s, std::vector<WriteOp> *ops_ptr,
                      const BufferList &bufs, const size_t *rows, bool upsert,
                      const PlacementConfig &cfg, bool group_by_segment) {
  std::vector<WriteOp> &ops = *ops_ptr;
  Cluster &cluster = *s->cluster;
  cluster.Reserve(ops.data(), ops.size(), upsert, cfg, s->segment_id, s->hostname);
  try {
    // Transfer checks, before any copying, under one read lock of the
    // client's registrations.
    std::vector<char> reserved(ops.size(), 0);
    {
      RegionSet::Reader regions(*s->regions);
      for (size_t i = 0; i < ops.size(); ++i) {
        WriteOp &op = ops[i];
        if (op.token == 0) continue;
        reserved[i] = 1;
        const size_t row = rows ? rows[i] : i;
        for (size_t b = bufs.Begin(row); b < bufs.End(row); ++b) {
          if (bufs.sizes[b] > 0 && !regions.Contains(bufs.addrs[b], bufs.sizes[b])) {
            op.result = MCGO_TRANSFER_FAIL;
            break;
          }
        }
      }
    }
    if (group_by_segment) FailWholeSegments(&ops, reserved);
    // Copy outside the cluster lock.
    for (size_t i = 0; i < ops.size(); ++i) {
      WriteOp &op = ops[i];
      if (op.token == 0 || op.result < 0) continue;
      op.data = AllocateObjectBytes(op.size);
      if (!op.data) {
        op.result = MCGO_NO_AVAILABLE_HANDLE;
        continue;
      }
      const size_t row = rows ? rows[i] : i;
      uint64_t off = 0;
      for (size_t b = bufs.Begin(row); b < bufs.End(row); ++b) {
        const uint64_t len = bufs.sizes[b];
        if (len == 0) continue;
        std::memcpy(op.data.get() + off, AsPtr(bufs.addrs[b]), static_cast<size_t>(len));
        off += len;
      }
    }
  } catch (...) {
    for (auto &op : ops) {
      if (op.token != 0) op.result = MCGO_INTERNAL_ERROR;
    }
    cluster.Commit(ops.data(), ops.size());
    throw;
  }
  cluster.Commit(ops.data(), ops.size());
}

void ReadIntoBuffers(mcgo_store *s, std::vector<ReadOp> *ops_ptr,
                     const BufferList &bufs, bool multi, bool group_by_segment) {
  std::vector<ReadOp> &ops = *ops_ptr;
  s->cluster->Acquire(ops.data(), ops.size());
  std::vector<char> transfer(ops.size(), 0);  // reached the transfer stage
  {
    RegionSet::Reader regions(*s->regions);
    for (size_t i = 0; i < ops.size(); ++i) {
      ReadOp &op = ops[i];
      if (op.result <= 0) continue;
      const uint64_t size = static_cast<uint64_t>(op.result);
      if (!multi) {
        if (bufs.sizes[i] < size) {
          op.result = MCGO_INVALID_PARAMS;
          continue;
        }
        transfer[i] = 1;
        if (!regions.Contains(bufs.addrs[i], size)) op.result = MCGO_TRANSFER_FAIL;
        continue;
      }
      uint64_t sum = 0;
      for (size_t b = bufs.Begin(i); b < bufs.End(i); ++b) {
        sum = bufs.sizes[b] > UINT64_MAX - sum ? UINT64_MAX : sum + bufs.sizes[b];
      }
      if (sum < size) {
        op.result = MCGO_INVALID_PARAMS;
        continue;
      }
      transfer[i] = 1;
      if (sum > size) {
        op.result = MCGO_TRANSFER_FAIL;  // slices must add up to the replica
        continue;
      }
      for (size_t b = bufs.Begin(i); b < bufs.End(i); ++b) {
        if (bufs.sizes[b] > 0 && !regions.Contains(bufs.addrs[b], bufs.sizes[b])) {
          op.result = MCGO_TRANSFER_FAIL;
          break;
        }
      }
    }
  }
  if (group_by_segment) FailWholeSegments(&ops, transfer);
  for (size_t i = 0; i < ops.size(); ++i) {
    ReadOp &op = ops[i];
    if (op.result <= 0) continue;
    const uint8_t *src = op.data.get();
    if (!multi) {
      std::memcpy(AsMutablePtr(bufs.addrs[i]), src, static_cast<size_t>(op.result));
    } else {
      uint64_t off = 0;
      for (size_t b = bufs.Begin(i); b < bufs.End(i); ++b) {
        const uint64_t len = bufs.sizes[b];
        if (len == 0) continue;
        std::memcpy(AsMutablePtr(bufs.addrs[b]), src + off, static_cast<size_t>(len));
        off += len;
      }
    }
    op.data.reset();
  }
}

int32_t PutCopy(mcgo_store *s, std::string key, const void *data,
                uint64_t size, const PlacementConfig &cfg, bool upsert) {
  // Staged through the local buffer: a value that does not fit is refused.
  if (size == 0 || size > s->local_buffer_size) return MCGO_INVALID_PARAMS;
  std::vector<WriteOp> ops(1);
  ops[0].key = std::move(key);
  ops[0].size = size;
  Cluster &cluster = *s->cluster;
  cluster.Reserve(ops.data(), 1, upsert, cfg, s->segment_id, s->hostname);
  if (ops[0].token != 0) {
    ops[0].data = AllocateObjectBytes(size);
    if (ops[0].data) {
      std::memcpy(ops[0].data.get(), data, static_cast<size_t>(size));
    } else {
      ops[0].result = MCGO_NO_AVAILABLE_HANDLE;
    }
    cluster.Commit(ops.data(), 1);
  }
  return static_cast<int32_t>(ops[0].result);
}

int32_t PutGather(mcgo_store *s, std::vector<std::string> keys,
                  const std::vector<std::vector<std::pair<const void *, uint64_t>>> &parts,
                  const PlacementConfig &cfg, bool upsert) {
  const size_t n = keys.size();
  std::vector<WriteOp> ops(n);
  uint64_t total = 0;
  std::set<std::string> seen;
  for (size_t i = 0; i < n; ++i) {
    uint64_t size = 0;
    for (const auto &p : parts[i]) size += p.second;
    if (size == 0 || !seen.insert(keys[i]).second) return MCGO_INVALID_PARAMS;
    total += size;
    ops[i].key = std::move(keys[i]);
    ops[i].size = size;
  }
  if (total > s->local_buffer_size) return MCGO_INVALID_PARAMS;
  Cluster &cluster = *s->cluster;
  cluster.Reserve(ops.data(), n, upsert, cfg, s->segment_id, s->hostname);
  for (size_t i = 0; i < n; ++i) {
    if (ops[i].token == 0) continue;
    ops[i].data = AllocateObjectBytes(ops[i].size);
    if (!ops[i].data) {
      ops[i].result = MCGO_NO_AVAILABLE_HANDLE;
      continue;
    }
    unsigned char *dst = ops[i].data.get();
    for (const auto &p : parts[i]) {
      if (p.second == 0) continue;  // an empty part may have no address
      std::memcpy(dst, p.first, static_cast<size_t>(p.second));
      dst += p.second;
    }
  }
  cluster.Commit(ops.data(), n);
  for (const auto &op : ops) {
    if (op.result < 0) return static_cast<int32_t>(op.result);
  }
  return MCGO_OK;
}

int64_t GetHold(mcgo_store *s, std::string key, HeldObject **out) {
  std::vector<ReadOp> ops(1);
  ops[0].key = std::move(key);
  s->cluster->Acquire(ops.data(), 1);
  const int64_t r = ops[0].result;
  if (r < 0) return r;
  const uint64_t size = static_cast<uint64_t>(r);
  if (size > s->local_buffer_size) return MCGO_INVALID_PARAMS;
  // The shared bytes stay valid if the key is removed or replaced meanwhile.
  *out = new HeldObject{std::move(ops[0].data), size};
  return r;
}

bool DebugStats(mcgo_store *s, ClusterStats *out) {
  if (!IsReady(s)) return false;
  *out = s->cluster->Stats();
  return true;
}

std::vector<std::string> DebugReplicaSegments(mcgo_store *s,
                                              const std::string &key) {
  if (!IsReady(s)) return {};
  return s->cluster->ReplicaSegments(key);
}

size_t DebugLiveClusters() { return Cluster::LiveClusters(); }

}  // namespace mcgo::embedded
