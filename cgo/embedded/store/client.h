// Embedded engine: one store client (the object behind mcgo_store*) and the
// data-moving operations: zero-copy batch writes and reads, copying put/get.
// Argument checking of the C ABI happens in api.cc; these functions
// assume well-formed arguments and a client that is set up.
#ifndef MCGO_EMBEDDED_STORE_CLIENT_H_
#define MCGO_EMBEDDED_STORE_CLIENT_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cluster.h"
#include "common/dummy_args.h"
#include "embedded/base/regions.h"
#include "mcgo/store.h"
#include "embedded/transfer/engine.h"

namespace mcgo::embedded {
// What a set-up real client shares with its dummies: alive turns false when
// it is torn down, after which every call of a dummy fails.
struct Served {
  std::atomic<bool> alive{true};
};
}  // namespace mcgo::embedded

struct mcgo_store {
  std::mutex setup_mu;            // serialises mcgo_store_setup
  std::atomic<bool> ready{false}; // set (release) once setup succeeded
  // Written by setup before `ready`, read-only afterwards.
  std::shared_ptr<mcgo::embedded::Cluster> cluster;
  std::string hostname;     // segment / client name, always with a port
  uint64_t segment_id = 0;  // 0: mounts no segment
  void *local_buffer = nullptr;
  uint64_t local_buffer_size = 0;
  // The transfer engine the store runs on (mcgo_store_setup_on_engine), or
  // null.
  mcgo_te *engine = nullptr;
  // Thread safe on its own; the engine's when the store runs on one.
  std::shared_ptr<mcgo::embedded::RegionSet> regions =
      std::make_shared<mcgo::embedded::RegionSet>();
  std::string protocol;  // set up with; the default of the segment calls
  // Segments mounted after setup (mcgo_store_mount_segment and
  // mcgo_store_allocate_and_mount_segment) and their memory.
  struct Mount {
    uint64_t id = 0;
    void *base = nullptr;
    uint64_t size = 0;
    bool allocated = false;  // by allocate_and_mount (else a file's mapping)
    bool unmounted = false;  // gracefully: the memory stays until unmap_at
    mcgo::embedded::Clock::time_point unmap_at{};
  };
  std::mutex mounts_mu;
  std::vector<Mount> mounts;
  // Transfer sessions (sessions.cc), per key as upstream's RealClient keeps
  // them, guarded by sessions_mu; sessions_cv wakes an end or revoke waiting
  // for range writes in flight.
  struct GetSession {
    mcgo::embedded::Bytes data;  // the object's bytes as the lookup found them
    uint64_t size = 0;
    mcgo::embedded::Clock::time_point lease_until{};
  };
  struct PutSession {
    mcgo::embedded::WriteOp op;  // reserved; op.data is the object being filled
    bool writable = true;
    size_t inflight = 0;
  };
  std::mutex sessions_mu;
  std::condition_variable sessions_cv;
  std::unordered_map<std::string, GetSession> get_sessions;
  std::unordered_map<std::string, PutSession> put_sessions;
  // Dummy clients (mcgo_store_setup_dummy). A real client's served is its
  // own; a dummy shares its real client's, and with it the real client's
  // cluster, segment, name and registrations: the real client does a
  // dummy's work, as upstream's does over RPC. Written before `ready`.
  std::shared_ptr<mcgo::embedded::Served> served;
  bool dummy = false;
  mcgo::args::DummyPool pool;  // mcgo_store_alloc_from_mem_pool's memory
};

namespace mcgo::embedded {

// The buffers of a batch in CSR form. Key i owns buffers
// [offsets[i], offsets[i+1]), or just buffer i when offsets is null.
struct BufferList {
  const uintptr_t *addrs = nullptr;
  const uint64_t *sizes = nullptr;
  const uint64_t *offsets = nullptr;
  size_t Begin(size_t i) const { return offsets ? offsets[i] : i; }
  size_t End(size_t i) const { return offsets ? offsets[i + 1] : i + 1; }
};

// A dummy is ready only while its real client is.
inline bool IsReady(const mcgo_store *s) {
  return s != nullptr && s->ready.load(std::memory_order_acquire) &&
         (!s->dummy || s->served->alive.load(std::memory_order_acquire));
}

// A dummy whose real client is gone: its calls fail as upstream's do when
// the real client does not answer, with RPC_FAIL (not INVALID_PARAMS, the
// code of a store that was never set up).
inline bool Orphaned(const mcgo_store *s) {
  return s != nullptr && s->ready.load(std::memory_order_acquire) && s->dummy &&
         !s->served->alive.load(std::memory_order_acquire);
}

// A ready dummy client: the calls upstream's DummyClient lacks refuse it.
inline bool IsDummy(const mcgo_store *s) { return IsReady(s) && s->dummy; }

// engine, when not null, is the transfer engine to run on.
int32_t Setup(mcgo_store *s, const mcgo_store_config &cfg, std::string *err,
              mcgo_te *engine = nullptr);
// Sets s up as a dummy of the real client named server (its hostname).
int32_t SetupDummy(mcgo_store *s, uint64_t local_buffer_size, const std::string &server,
                   std::string *err);
// Unmounts the client's segment and releases everything setup acquired.
void Teardown(mcgo_store *s) noexcept;

// Zero-copy put/upsert. ops[i].key and ops[i].size are set by the caller;
// ops[i] reads the buffers of CSR row rows[i] (row i when rows is null).
// group_by_segment: fail every key of a segment when one of them fails its
// transfer (Mooncake's prefer-same-node batching). Results in ops[i].result.
void WriteFromBuffers(mcgo_store *s, std::vector<WriteOp> *ops,
                      const BufferList &bufs, const size_t *rows, bool upsert,
                      const PlacementConfig &cfg, bool group_by_segment);

// Zero-copy get. multi: every key has a buffer list whose sizes must sum to
// exactly the object size; otherwise key i has one destination of sizes[i]
// bytes that must hold the object. Results in ops[i].result.
void ReadIntoBuffers(mcgo_store *s, std::vector<ReadOp> *ops,
                     const BufferList &bufs, bool multi, bool group_by_segment);

// Copying put/upsert from any memory (staged through the local buffer).
int32_t PutCopy(mcgo_store *s, std::string key, const void *data,
                uint64_t size, const PlacementConfig &cfg, bool upsert);
// An object read by mcgo_store_get_begin, held until mcgo_store_get_finish.
struct HeldObject {
  Bytes data;
  uint64_t size;
};
// The first step of the two-step copying get: on success (the object size)
// *out owns a reference to the object's bytes.
int64_t GetHold(mcgo_store *s, std::string key, HeldObject **out);
// PutGather stores, for each key i, the concatenation of parts[i], copied
// and staged like PutCopy (the call's whole size must fit in the local
// buffer; an empty object, or a key twice, refuses the call). Returns 0 or
// the first failed key's code.
int32_t PutGather(mcgo_store *s, std::vector<std::string> keys,
                  const std::vector<std::vector<std::pair<const void *, uint64_t>>> &parts,
                  const PlacementConfig &cfg, bool upsert);

// The first half of every segment and task id this process hands out.
uint64_t IdNonce();

// Mooncake's ReplicateConfig as the engine uses it: MCGO_OK, or
// MCGO_INVALID_PARAMS for malformed segment names or a bad soft-pin action.
int32_t ParsePlacement(const mcgo_replicate_config &in, PlacementConfig *out);

// Mounts [base, base+size) as one more segment of the client and keeps the
// memory (munmapped when unmounted); allocated says which unmount call owns
// it. Sets *id.
int32_t MountMemory(mcgo_store *s, void *base, uint64_t size, bool allocated,
                    mcgo_segment_id *id);
// Unmounts a segment MountMemory mounted with the same allocated:
// MCGO_INVALID_PARAMS for any other id.
int32_t UnmountMemory(mcgo_store *s, const mcgo_segment_id &id, uint64_t grace_seconds,
                      bool allocated);

// Introspection for the C++ tests (not part of the C ABI).
bool DebugStats(mcgo_store *s, ClusterStats *out);
std::vector<std::string> DebugReplicaSegments(mcgo_store *s,
                                              const std::string &key);
size_t DebugLiveClusters();

}  // namespace mcgo::embedded

#endif  // MCGO_EMBEDDED_STORE_CLIENT_H_
