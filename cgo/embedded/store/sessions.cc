//go:build !mooncake_native

// Embedded engine: upstream's transfer sessions (mcgo/store.h, "sessions"),
// after RealClient's batch_*_session_* calls at the pinned commit
// (mooncake-store/src/real_client.cpp): per key and per client; a get
// session keeps what its one lookup found, its lease included, and its range
// reads ask the cluster nothing; a put session holds a reserved object
// whose bytes the range writes fill, made readable (end) or dropped
// (revoke) once no range write of the key is in flight.

#include <cstring>
#include <string>
#include <vector>

#include "client.h"
#include "common/args.h"
#include "common/guard.h"
#include "mcgo/store.h"

namespace {

using mcgo::GuardBatch;
using mcgo::args::KeyAt;
using mcgo::args::KeysOk;
using mcgo::args::RangeInside;
using mcgo::args::RangesOk;
using mcgo::args::Refuse;
using mcgo::embedded::Clock;
using mcgo::embedded::IsReady;
using mcgo::embedded::Orphaned;
using mcgo::embedded::ReadOp;
using mcgo::embedded::RegionSet;
using mcgo::embedded::WriteOp;

// The checks every session call makes first: MCGO_OK to go on, else the
// code returned (with every result filled).
int32_t Prologue(mcgo_store *s, const char *keys, const uint64_t *off, size_t n, int64_t *results) {
  if (results == nullptr) return MCGO_INVALID_PARAMS;
  if (Orphaned(s)) return Refuse(results, n, MCGO_RPC_FAIL);
  if (!IsReady(s) || !KeysOk(keys, off, n)) return Refuse(results, n, MCGO_INVALID_PARAMS);
  if (s->dummy) return Refuse(results, n, MCGO_NOT_SUPPORTED);  // sessions are RealClient's
  return MCGO_OK;
}

// A call's CSR range list.
struct Ranges {
  const uintptr_t *addrs;
  const uint64_t *sizes, *offsets, *bo;
};

// Prologue for the range calls, which also check the CSR range list.
int32_t RangePrologue(mcgo_store *s, const char *keys, const uint64_t *off, size_t n, const Ranges &r,
                      int64_t *results) {
  if (int32_t rc = Prologue(s, keys, off, n, results)) return rc;
  return RangesOk(r.addrs, r.sizes, r.offsets, r.bo, n) ? MCGO_OK : Refuse(results, n, MCGO_INVALID_PARAMS);
}

// Checks key i's ranges against an object of size bytes and the registered
// memory: the bytes they move, or MCGO_INVALID_PARAMS (past the object's
// end) or MCGO_TRANSFER_FAIL (memory not registered).
int64_t CheckRanges(const RegionSet::Reader &regions, const Ranges &r, size_t i, uint64_t size) {
  int64_t bytes = 0;
  for (uint64_t j = r.bo[i]; j < r.bo[i + 1]; ++j) {
    if (!RangeInside(r.offsets[j], r.sizes[j], size)) return MCGO_INVALID_PARAMS;
  }
  for (uint64_t j = r.bo[i]; j < r.bo[i + 1]; ++j) {
    if (r.sizes[j] > 0 && !regions.Contains(r.addrs[j], r.sizes[j])) return MCGO_TRANSFER_FAIL;
    bytes += static_cast<int64_t>(r.sizes[j]);
  }
  return bytes;
}

}  // namespace

extern "C" {

int32_t mcgo_store_batch_get_session_start(mcgo_store *s, const char *keys,
                                           const uint64_t *key_offsets, size_t n,
                                           int64_t *results) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    if (int32_t rc = Prologue(s, keys, key_offsets, n, results)) return rc;
    std::vector<ReadOp> ops(n);
    for (size_t i = 0; i < n; ++i) ops[i].key = KeyAt(keys, key_offsets, i);
    const auto lease_until = Clock::now() + std::chrono::milliseconds(s->cluster->lease_ttl_ms());
    s->cluster->Acquire(ops.data(), n);  // one lookup, granting the lease
    std::lock_guard<std::mutex> lock(s->sessions_mu);
    for (size_t i = 0; i < n; ++i) {
      s->get_sessions.erase(ops[i].key);
      if (ops[i].result <= 0) {
        results[i] = ops[i].result < 0 ? ops[i].result : MCGO_INVALID_REPLICA;
        continue;
      }
      s->get_sessions[ops[i].key] = {std::move(ops[i].data), static_cast<uint64_t>(ops[i].result), lease_until};
      results[i] = MCGO_OK;
    }
    return MCGO_OK;
  });
}

int32_t mcgo_store_batch_get_into_multi_buffer_ranges(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *offsets,
    const uint64_t *buf_offsets, int64_t *results) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    const Ranges r{addrs, sizes, offsets, buf_offsets};
    if (int32_t rc = RangePrologue(s, keys, key_offsets, n, r, results)) return rc;
    // The bytes are referenced, so the copies run outside the session lock.
    std::vector<mcgo::embedded::Bytes> data(n);
    {
      std::lock_guard<std::mutex> lock(s->sessions_mu);
      const auto now = Clock::now();
      RegionSet::Reader regions(*s->regions);
      for (size_t i = 0; i < n; ++i) {
        auto it = s->get_sessions.find(KeyAt(keys, key_offsets, i));
        if (it == s->get_sessions.end()) {
          results[i] = MCGO_INVALID_PARAMS;
          continue;
        }
        if (now >= it->second.lease_until) {
          s->get_sessions.erase(it);
          results[i] = MCGO_LEASE_EXPIRED;
          continue;
        }
        results[i] = CheckRanges(regions, r, i, it->second.size);
        if (results[i] >= 0) data[i] = it->second.data;
      }
    }
    RegionSet::Reader regions(*s->regions);  // held while copying, as every zero-copy call
    for (size_t i = 0; i < n; ++i) {
      if (!data[i]) continue;
      for (uint64_t j = buf_offsets[i]; j < buf_offsets[i + 1]; ++j) {
        if (sizes[j] == 0) continue;
        std::memcpy(reinterpret_cast<void *>(addrs[j]), data[i].get() + offsets[j], static_cast<size_t>(sizes[j]));
      }
    }
    return MCGO_OK;
  });
}

int32_t mcgo_store_batch_get_session_end(mcgo_store *s, const char *keys,
                                         const uint64_t *key_offsets, size_t n) {
  return mcgo::Guard32([&]() -> int32_t {
    if (n == 0) return MCGO_OK;
    if (Orphaned(s)) return MCGO_RPC_FAIL;
    if (!IsReady(s) || !KeysOk(keys, key_offsets, n)) return MCGO_INVALID_PARAMS;
    if (s->dummy) return MCGO_NOT_SUPPORTED;
    std::lock_guard<std::mutex> lock(s->sessions_mu);
    for (size_t i = 0; i < n; ++i) s->get_sessions.erase(KeyAt(keys, key_offsets, i));
    return MCGO_OK;
  });
}

int32_t mcgo_store_batch_put_session_start(mcgo_store *s, const char *keys,
                                           const uint64_t *key_offsets, size_t n,
                                           const uint64_t *sizes, mcgo_replicate_config cfg,
                                           int64_t *results) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    if (int32_t rc = Prologue(s, keys, key_offsets, n, results)) return rc;
    mcgo::embedded::PlacementConfig pc;
    if (sizes == nullptr || mcgo::embedded::ParsePlacement(cfg, &pc) != MCGO_OK) {
      return Refuse(results, n, MCGO_INVALID_PARAMS);
    }
    std::vector<WriteOp> ops(n);
    {
      std::lock_guard<std::mutex> lock(s->sessions_mu);
      for (size_t i = 0; i < n; ++i) {
        ops[i].key = KeyAt(keys, key_offsets, i);
        ops[i].size = sizes[i];
        // A key twice in one call is refused the second time, as one that
        // has a session already.
        for (size_t j = 0; j < i && ops[i].active; ++j) ops[i].active = ops[j].key != ops[i].key;
        if (!ops[i].active || s->put_sessions.count(ops[i].key) != 0) {
          ops[i].active = false;
          results[i] = MCGO_INVALID_PARAMS;
        }
      }
    }
    s->cluster->Reserve(ops.data(), n, false, pc, s->segment_id, s->hostname);
    std::vector<WriteOp> revoke;
    std::lock_guard<std::mutex> lock(s->sessions_mu);
    for (size_t i = 0; i < n; ++i) {
      WriteOp &op = ops[i];
      if (!op.active) continue;
      if (op.token == 0) {  // refused, or write-once kept the existing object
        results[i] = op.result < 0 ? op.result : MCGO_OBJECT_ALREADY_EXISTS;
        continue;
      }
      op.data = mcgo::embedded::AllocateObjectBytes(op.size);
      if (!op.data) {
        op.result = MCGO_NO_AVAILABLE_HANDLE;
        results[i] = op.result;
        revoke.push_back(std::move(op));
        continue;
      }
      std::memset(op.data.get(), 0, static_cast<size_t>(op.size));
      auto &entry = s->put_sessions[op.key];
      entry.op = std::move(op);
      results[i] = MCGO_OK;
    }
    if (!revoke.empty()) s->cluster->Commit(revoke.data(), revoke.size());
    return MCGO_OK;
  });
}

int32_t mcgo_store_batch_put_from_multi_buffer_ranges(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *offsets,
    const uint64_t *buf_offsets, int64_t *results) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    const Ranges r{addrs, sizes, offsets, buf_offsets};
    if (int32_t rc = RangePrologue(s, keys, key_offsets, n, r, results)) return rc;
    // Entries stay put while inflight > 0 (end and revoke wait), so their
    // bytes are written outside the session lock.
    std::vector<mcgo_store::PutSession *> entries(n, nullptr);
    {
      std::lock_guard<std::mutex> lock(s->sessions_mu);
      RegionSet::Reader regions(*s->regions);
      for (size_t i = 0; i < n; ++i) {
        auto it = s->put_sessions.find(KeyAt(keys, key_offsets, i));
        if (it == s->put_sessions.end() || !it->second.writable) {
          results[i] = MCGO_INVALID_PARAMS;
          continue;
        }
        results[i] = CheckRanges(regions, r, i, it->second.op.size);
        if (results[i] < 0) continue;
        ++it->second.inflight;
        entries[i] = &it->second;
      }
    }
    struct Done {
      mcgo_store *s;
      const std::vector<mcgo_store::PutSession *> &entries;
      ~Done() {
        std::lock_guard<std::mutex> lock(s->sessions_mu);
        for (auto *e : entries) {
          if (e != nullptr) --e->inflight;
        }
        s->sessions_cv.notify_all();
      }
    } done{s, entries};
    RegionSet::Reader regions(*s->regions);
    for (size_t i = 0; i < n; ++i) {
      if (entries[i] == nullptr) continue;
      uint8_t *dst = entries[i]->op.data.get();
      for (uint64_t j = buf_offsets[i]; j < buf_offsets[i + 1]; ++j) {
        if (sizes[j] == 0) continue;
        std::memcpy(dst + offsets[j], reinterpret_cast<const void *>(addrs[j]), static_cast<size_t>(sizes[j]));
      }
    }
    return MCGO_OK;
  });
}

}  // extern "C"

namespace {

// end (commit) or revoke: seals the keys' sessions, waits for their range
// writes in flight, then settles them with the cluster.
int32_t Settle(mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
               int64_t *results, bool commit) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    if (int32_t rc = Prologue(s, keys, key_offsets, n, results)) return rc;
    std::vector<std::string> ks(n);
    std::vector<WriteOp> ops;
    std::vector<size_t> index;
    std::unique_lock<std::mutex> lock(s->sessions_mu);
    for (size_t i = 0; i < n; ++i) {
      ks[i] = KeyAt(keys, key_offsets, i);
      auto it = s->put_sessions.find(ks[i]);
      results[i] = it == s->put_sessions.end() ? MCGO_INVALID_PARAMS : MCGO_OK;
      if (it != s->put_sessions.end()) it->second.writable = false;
    }
    s->sessions_cv.wait(lock, [&] {
      for (size_t i = 0; i < n; ++i) {
        auto it = s->put_sessions.find(ks[i]);
        if (it != s->put_sessions.end() && it->second.inflight > 0) return false;
      }
      return true;
    });
    for (size_t i = 0; i < n; ++i) {
      auto it = s->put_sessions.find(ks[i]);
      if (results[i] != MCGO_OK || it == s->put_sessions.end()) continue;  // a key twice: settled once
      ops.push_back(std::move(it->second.op));
      if (!commit) ops.back().result = MCGO_INVALID_PARAMS;  // Commit revokes a failed write
      index.push_back(i);
      s->put_sessions.erase(it);
    }
    lock.unlock();
    s->cluster->Commit(ops.data(), ops.size());
    for (size_t k = 0; k < ops.size(); ++k) {
      // A committed key the cluster lost meanwhile (its segment unmounted)
      // reports OBJECT_NOT_FOUND; a revoke always succeeds.
      results[index[k]] = commit && ops[k].result < 0 ? ops[k].result : MCGO_OK;
    }
    return MCGO_OK;
  });
}

}  // namespace

extern "C" {

int32_t mcgo_store_batch_put_session_end(mcgo_store *s, const char *keys,
                                         const uint64_t *key_offsets, size_t n,
                                         int64_t *results) {
  return Settle(s, keys, key_offsets, n, results, true);
}

int32_t mcgo_store_batch_put_session_revoke(mcgo_store *s, const char *keys,
                                            const uint64_t *key_offsets, size_t n,
                                            int64_t *results) {
  return Settle(s, keys, key_offsets, n, results, false);
}

}  // extern "C"

// ---- ranged reads (no session) ---------------------------------------------------

extern "C" {

int32_t mcgo_store_get_into_ranges(mcgo_store *s, const char *keys, const uint64_t *key_offsets,
                                   size_t n, const uintptr_t *addrs, const uint64_t *sizes,
                                   const uint64_t *offsets, const uint64_t *buf_offsets,
                                   int64_t *results) {
  return mcgo::Guard32([&]() -> int32_t {
    if (n == 0) return MCGO_OK;
    size_t m = 0;
    if (int32_t rc = mcgo::args::RangedReadArgs(IsReady(s), keys, key_offsets, n, addrs, sizes, offsets,
                                                buf_offsets, results, &m)) {
      return rc;
    }
    std::vector<ReadOp> ops(n);
    for (size_t i = 0; i < n; ++i) ops[i].key = KeyAt(keys, key_offsets, i);
    s->cluster->Acquire(ops.data(), n);  // one lookup per key, granting the lease
    RegionSet::Reader regions(*s->regions);
    for (size_t i = 0; i < n; ++i) {
      const ReadOp &op = ops[i];
      for (uint64_t j = buf_offsets[i]; j < buf_offsets[i + 1]; ++j) {
        if (op.result <= 0) {
          results[j] = op.result < 0 ? op.result : MCGO_OBJECT_NOT_FOUND;
        } else if (!RangeInside(offsets[j], sizes[j], static_cast<uint64_t>(op.result)) ||
                   (sizes[j] > 0 && !regions.Contains(addrs[j], sizes[j]))) {
          results[j] = MCGO_INVALID_PARAMS;
        } else {
          if (sizes[j] > 0) {
            std::memcpy(reinterpret_cast<void *>(addrs[j]), op.data.get() + offsets[j], static_cast<size_t>(sizes[j]));
          }
          results[j] = static_cast<int64_t>(sizes[j]);
        }
      }
    }
    return MCGO_OK;
  });
}

}  // extern "C"
