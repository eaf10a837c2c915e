//go:build !mooncake_native

// Embedded engine: the extern "C" boundary of mcgo/store.h. Every function checks
// its arguments (never trusting a pointer or a length), converts the packed
// keys / CSR buffer lists, and catches every C++ exception, reporting it as
// MCGO_INTERNAL_ERROR. Whole-call refusals also fill every results[i].

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "client.h"
#include "mcgo/store.h"
#include "common/replica_desc.h"
#include "common/args.h"
#include "common/dummy_args.h"
#include "common/guard.h"
#include "common/segment_args.h"

namespace {

// Argument checks shared with the native backend (cgo/common/args.h), so that
// both engines refuse exactly the same inputs.
using mcgo::args::CsrOk;
using mcgo::args::KeyAt;
using mcgo::args::KeyOk;
using mcgo::args::KeysOk;
using mcgo::args::MakeKey;
using mcgo::args::Refuse;
using mcgo::args::WriteMessage;
using mcgo::embedded::BufferList;
using mcgo::embedded::IsDummy;
using mcgo::embedded::IsReady;
using mcgo::embedded::Orphaned;
using mcgo::embedded::PlacementConfig;
using mcgo::embedded::ReadOp;
using mcgo::embedded::WriteOp;

using mcgo::Guard32;
using mcgo::Guard64;
using mcgo::GuardBatch;

// KeysPrologue checks a batch call that takes only keys: kProceed, or the
// code to return (every result filled with it when the call is refused).
constexpr int32_t kProceed = 1;
int32_t KeysPrologue(mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
                     int64_t *results) {
  if (s == nullptr) return Refuse(results, n, MCGO_INVALID_PARAMS);
  if (n == 0) return MCGO_OK;
  if (results == nullptr) return MCGO_INVALID_PARAMS;
  if (Orphaned(s)) return Refuse(results, n, MCGO_RPC_FAIL);
  if (!IsReady(s) || !KeysOk(keys, key_offsets, n)) return Refuse(results, n, MCGO_INVALID_PARAMS);
  return kProceed;
}

// The store reports every registration refusal as INVALID_PARAMS, as
// upstream's register_buffer does.
int32_t StoreCode(mcgo::embedded::RegionResult r) {
  return r == mcgo::embedded::RegionResult::kOk ? MCGO_OK : MCGO_INVALID_PARAMS;
}

int32_t SingleWrite(mcgo_store *s, const char *key, size_t key_len,
                    uintptr_t addr, uint64_t size, mcgo_replicate_config cfg,
                    bool upsert) {
  if (Orphaned(s)) return MCGO_RPC_FAIL;
  if (!IsReady(s)) return MCGO_INVALID_PARAMS;
  PlacementConfig pc;
  if (mcgo::embedded::ParsePlacement(cfg, &pc) != MCGO_OK) return MCGO_INVALID_PARAMS;
  if (pc.prefer_same_node) return MCGO_INVALID_PARAMS;
  if (!KeyOk(key, key_len)) return MCGO_INVALID_PARAMS;
  if (size == 0) return MCGO_OK;  // upstream: "put empty data", nothing stored
  std::vector<WriteOp> ops(1);
  ops[0].key = MakeKey(key, key_len);
  ops[0].size = size;
  BufferList bufs;
  bufs.addrs = &addr;
  bufs.sizes = &size;
  mcgo::embedded::WriteFromBuffers(s, &ops, bufs, nullptr, upsert, pc, false);
  return static_cast<int32_t>(ops[0].result);
}

int32_t BatchWrite(mcgo_store *s, const char *keys, const uint64_t *key_offsets,
                   size_t n, const uintptr_t *addrs, const uint64_t *sizes,
                   mcgo_replicate_config cfg, int64_t *results, bool upsert) {
  if (s == nullptr) return Refuse(results, n, MCGO_INVALID_PARAMS);
  if (n == 0) return MCGO_OK;
  if (results == nullptr) return MCGO_INVALID_PARAMS;
  if (Orphaned(s)) return Refuse(results, n, MCGO_RPC_FAIL);
  if (!IsReady(s)) return Refuse(results, n, MCGO_INVALID_PARAMS);
  PlacementConfig pc;
  if (mcgo::embedded::ParsePlacement(cfg, &pc) != MCGO_OK || pc.prefer_same_node ||
      !KeysOk(keys, key_offsets, n) || addrs == nullptr || sizes == nullptr) {
    return Refuse(results, n, MCGO_INVALID_PARAMS);
  }
  std::vector<WriteOp> ops(n);
  for (size_t i = 0; i < n; ++i) ops[i].key = KeyAt(keys, key_offsets, i);
  // Upstream batch_put_from keeps slices in a per-key map: a key given twice
  // is stored from the buffer of its LAST occurrence (cluster.cc, note 7).
  std::vector<size_t> rows;
  if (!upsert && n > 1) {
    std::unordered_map<std::string_view, size_t> last;
    last.reserve(n);
    for (size_t i = 0; i < n; ++i) last[ops[i].key] = i;
    if (last.size() != n) {
      rows.resize(n);
      for (size_t i = 0; i < n; ++i) rows[i] = last[ops[i].key];
    }
  }
  for (size_t i = 0; i < n; ++i) ops[i].size = sizes[rows.empty() ? i : rows[i]];
  BufferList bufs;
  bufs.addrs = addrs;
  bufs.sizes = sizes;
  mcgo::embedded::WriteFromBuffers(s, &ops, bufs, rows.empty() ? nullptr : rows.data(),
                                upsert, pc, false);
  for (size_t i = 0; i < n; ++i) results[i] = ops[i].result;
  return MCGO_OK;
}

int32_t BatchWriteMulti(mcgo_store *s, const char *keys,
                        const uint64_t *key_offsets, size_t n,
                        const uintptr_t *addrs, const uint64_t *sizes,
                        const uint64_t *buf_offsets, mcgo_replicate_config cfg,
                        int64_t *results, bool upsert) {
  if (s == nullptr) return Refuse(results, n, MCGO_INVALID_PARAMS);
  if (n == 0) return MCGO_OK;
  if (results == nullptr) return MCGO_INVALID_PARAMS;
  if (Orphaned(s)) return Refuse(results, n, MCGO_RPC_FAIL);
  if (!IsReady(s)) return Refuse(results, n, MCGO_INVALID_PARAMS);
  PlacementConfig pc;
  if (mcgo::embedded::ParsePlacement(cfg, &pc) != MCGO_OK ||
      (pc.prefer_same_node && pc.replica_num != 1) ||
      !KeysOk(keys, key_offsets, n) || !CsrOk(addrs, sizes, buf_offsets, n)) {
    return Refuse(results, n, MCGO_INVALID_PARAMS);
  }
  std::vector<WriteOp> ops(n);
  BufferList bufs;
  bufs.addrs = addrs;
  bufs.sizes = sizes;
  bufs.offsets = buf_offsets;
  for (size_t i = 0; i < n; ++i) {
    WriteOp &op = ops[i];
    op.key = KeyAt(keys, key_offsets, i);
    uint64_t total = 0;
    for (size_t b = bufs.Begin(i); b < bufs.End(i); ++b) {
      if (sizes[b] > UINT64_MAX - total) {
        op.active = false;  // cannot be an object size
        op.result = MCGO_INVALID_PARAMS;
        break;
      }
      total += sizes[b];
    }
    op.size = total;
  }
  mcgo::embedded::WriteFromBuffers(s, &ops, bufs, nullptr, upsert, pc,
                                pc.prefer_same_node);
  for (size_t i = 0; i < n; ++i) results[i] = ops[i].result;
  return MCGO_OK;
}

int64_t SingleRead(mcgo_store *s, const char *key, size_t key_len) {
  std::vector<ReadOp> ops(1);
  ops[0].key = MakeKey(key, key_len);
  s->cluster->Acquire(ops.data(), 1);
  return ops[0].result;
}

// SetupGuard runs the body of the setup call named what: body(&err)
// returns a code and, on failure, says why in err; the message (prefixed
// with what) goes into errmsg. An exception is MCGO_INTERNAL_ERROR.
template <typename F>
int32_t SetupGuard(const char *what, char *errmsg, size_t errmsg_cap, F &&body) {
  WriteMessage(errmsg, errmsg_cap, "");
  try {
    std::string err;
    const int32_t rc = body(&err);
    if (rc != MCGO_OK) WriteMessage(errmsg, errmsg_cap, std::string(what) + ": " + err);
    return rc;
  } catch (const std::exception &e) {
    WriteMessage(errmsg, errmsg_cap, std::string(what) + ": internal error: " + e.what());
  } catch (...) {
    WriteMessage(errmsg, errmsg_cap, std::string(what) + ": internal error");
  }
  return MCGO_INTERNAL_ERROR;
}

int32_t SetupOn(mcgo_store *s, const mcgo_store_config *cfg, mcgo_te *engine,
                char *errmsg, size_t errmsg_cap) {
  return SetupGuard("mcgo_store_setup", errmsg, errmsg_cap, [&](std::string *err) -> int32_t {
    if (s == nullptr) {
      *err = "store handle is NULL";
      return MCGO_INVALID_PARAMS;
    }
    if (cfg == nullptr) {
      *err = "config is NULL";
      return MCGO_INVALID_PARAMS;
    }
    return mcgo::embedded::Setup(s, *cfg, err, engine);
  });
}

}  // namespace

extern "C" {

// None of the setup options; every call and option upstream versions differ
// in, since the engine implements the pinned upstream's semantics.
uint32_t mcgo_store_capabilities(void) {
  return MCGO_CAP_SESSIONS | MCGO_CAP_MULTI_BUFFER_UPSERT | MCGO_CAP_SOFT_PIN_ACTIONS |
         MCGO_CAP_UNMOUNT_LOCAL_DISK;
}

int32_t mcgo_store_create(mcgo_store **out) {
  if (out == nullptr) return MCGO_INVALID_PARAMS;
  *out = nullptr;
  return Guard32([&]() -> int32_t {
    *out = new mcgo_store();
    return MCGO_OK;
  });
}

void mcgo_store_destroy(mcgo_store *s) {
  if (s == nullptr) return;
  mcgo::embedded::Teardown(s);
  delete s;
}

int32_t mcgo_store_setup(mcgo_store *s, const mcgo_store_config *cfg, char *errmsg,
                   size_t errmsg_cap) {
  return SetupOn(s, cfg, nullptr, errmsg, errmsg_cap);
}

int32_t mcgo_store_setup_on_engine(mcgo_store *s, const mcgo_store_config *cfg,
                                   mcgo_te *engine, char *errmsg,
                                   size_t errmsg_cap) {
  if (engine == nullptr) {
    WriteMessage(errmsg, errmsg_cap, "mcgo_store_setup: engine is NULL");
    return MCGO_INVALID_PARAMS;
  }
  return SetupOn(s, cfg, engine, errmsg, errmsg_cap);
}

int32_t mcgo_store_setup_dummy(mcgo_store *s, uint64_t mem_pool_size, uint64_t local_buffer_size,
                               const char *server_address, char *errmsg, size_t errmsg_cap) {
  (void)mem_pool_size;  // as upstream's DummyClient, which takes it and does not use it
  return SetupGuard("mcgo_store_setup_dummy", errmsg, errmsg_cap, [&](std::string *err) -> int32_t {
    if (s == nullptr) {
      *err = "store handle is NULL";
      return MCGO_INVALID_PARAMS;
    }
    int port = 0;
    if (!mcgo::args::ServerAddressOk(server_address, &port, err)) return MCGO_INVALID_PARAMS;
    return mcgo::embedded::SetupDummy(s, local_buffer_size, server_address, err);
  });
}

int32_t mcgo_store_alloc_from_mem_pool(mcgo_store *s, uint64_t size, uintptr_t *addr) {
  if (addr != nullptr) *addr = 0;
  return Guard32([&]() -> int32_t {
    if (Orphaned(s)) return MCGO_RPC_FAIL;
    if (!IsReady(s) || addr == nullptr || !mcgo::args::PoolSizeOk(size)) return MCGO_INVALID_PARAMS;
    if (!s->dummy) return MCGO_NOT_SUPPORTED;
    // Shared memory as upstream's (a memfd there, to hand to another
    // process); mapped lazily, so a large pool costs nothing until touched.
    void *p = mmap(nullptr, static_cast<size_t>(size), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return MCGO_NO_AVAILABLE_HANDLE;
    s->pool.Add(p, size);
    *addr = reinterpret_cast<uintptr_t>(p);
    return MCGO_OK;
  });
}

int32_t mcgo_store_health_check(mcgo_store *s) {
  // A dummy whose real client is gone no longer answers.
  if (Orphaned(s)) return MCGO_RPC_FAIL;
  return IsReady(s) ? MCGO_OK : MCGO_INVALID_PARAMS;
}

int32_t mcgo_store_hostname(mcgo_store *s, char *buf, size_t buf_cap, size_t *len) {
  if (Orphaned(s)) return MCGO_RPC_FAIL;
  if (!IsReady(s)) return MCGO_INVALID_PARAMS;
  if (buf == nullptr && buf_cap > 0) return MCGO_INVALID_PARAMS;
  const std::string &name = s->dummy ? std::string() : s->hostname;  // upstream's dummy has none
  if (len != nullptr) *len = name.size();
  WriteMessage(buf, buf_cap, name);
  return MCGO_OK;
}

int32_t mcgo_store_register_buffer(mcgo_store *s, uintptr_t addr, uint64_t size) {
  if (Orphaned(s)) return MCGO_RPC_FAIL;
  if (!IsReady(s)) return MCGO_INVALID_PARAMS;
  if (s->dummy && (addr == 0 || size == 0 || !s->pool.Has(addr, size))) return MCGO_INVALID_PARAMS;
  return Guard32(
                          [&] { return StoreCode(s->regions->Add(addr, size)); });
}

int32_t mcgo_store_unregister_buffer(mcgo_store *s, uintptr_t addr) {
  if (Orphaned(s)) return MCGO_RPC_FAIL;
  if (!IsReady(s)) return MCGO_INVALID_PARAMS;
  if (s->dummy && (addr == 0 || !s->pool.Has(addr, 0))) return MCGO_INVALID_PARAMS;
  return Guard32(
                          [&] { return StoreCode(s->regions->Remove(addr)); });
}

int32_t mcgo_store_put(mcgo_store *s, const char *key, size_t key_len,
                 const void *data, uint64_t size, mcgo_replicate_config cfg) {
  return Guard32([&]() -> int32_t {
    if (Orphaned(s)) return MCGO_RPC_FAIL;
    if (!IsReady(s)) return MCGO_INVALID_PARAMS;
    PlacementConfig pc;
    if (mcgo::embedded::ParsePlacement(cfg, &pc) != MCGO_OK || pc.prefer_same_node ||
        !KeyOk(key, key_len) || (data == nullptr && size > 0)) {
      return MCGO_INVALID_PARAMS;
    }
    return mcgo::embedded::PutCopy(s, MakeKey(key, key_len), data, size, pc, false);
  });
}

int32_t mcgo_store_upsert(mcgo_store *s, const char *key, size_t key_len,
                    const void *data, uint64_t size,
                    mcgo_replicate_config cfg) {
  return Guard32([&]() -> int32_t {
    if (Orphaned(s)) return MCGO_RPC_FAIL;
    if (!IsReady(s)) return MCGO_INVALID_PARAMS;
    PlacementConfig pc;
    if (mcgo::embedded::ParsePlacement(cfg, &pc) != MCGO_OK || pc.prefer_same_node ||
        !KeyOk(key, key_len) || (data == nullptr && size > 0)) {
      return MCGO_INVALID_PARAMS;
    }
    return mcgo::embedded::PutCopy(s, MakeKey(key, key_len), data, size, pc, true);
  });
}

static int32_t PutParts(mcgo_store *s, const char *key, size_t key_len,
                        const uintptr_t *datas, const uint64_t *sizes,
                        size_t n_parts, mcgo_replicate_config cfg, bool upsert) {
  return Guard32([&]() -> int32_t {
    if (Orphaned(s)) return MCGO_RPC_FAIL;
    if (!IsReady(s)) return MCGO_INVALID_PARAMS;
    PlacementConfig pc;
    if (mcgo::embedded::ParsePlacement(cfg, &pc) != MCGO_OK || pc.prefer_same_node ||
        !KeyOk(key, key_len) || !mcgo::args::PartsOk(datas, sizes, n_parts)) {
      return MCGO_INVALID_PARAMS;
    }
    std::vector<std::vector<std::pair<const void *, uint64_t>>> parts(1);
    for (size_t i = 0; i < n_parts; ++i) {
      parts[0].emplace_back(reinterpret_cast<const void *>(datas[i]), sizes[i]);
    }
    return mcgo::embedded::PutGather(s, {MakeKey(key, key_len)}, parts, pc, upsert);
  });
}

int32_t mcgo_store_put_parts(mcgo_store *s, const char *key, size_t key_len,
                             const uintptr_t *datas, const uint64_t *sizes,
                             size_t n_parts, mcgo_replicate_config cfg) {
  return PutParts(s, key, key_len, datas, sizes, n_parts, cfg, false);
}

int32_t mcgo_store_upsert_parts(mcgo_store *s, const char *key, size_t key_len,
                                const uintptr_t *datas, const uint64_t *sizes,
                                size_t n_parts, mcgo_replicate_config cfg) {
  return PutParts(s, key, key_len, datas, sizes, n_parts, cfg, true);
}

static int32_t PutBatch(mcgo_store *s, const char *keys, const uint64_t *key_offsets,
                        size_t n, const uintptr_t *datas, const uint64_t *sizes,
                        mcgo_replicate_config cfg, bool upsert) {
  return Guard32([&]() -> int32_t {
    if (Orphaned(s)) return MCGO_RPC_FAIL;
    if (!IsReady(s)) return MCGO_INVALID_PARAMS;
    if (n == 0) return MCGO_OK;
    PlacementConfig pc;
    if (mcgo::embedded::ParsePlacement(cfg, &pc) != MCGO_OK || pc.prefer_same_node ||
        !KeysOk(keys, key_offsets, n) || !mcgo::args::PartsOk(datas, sizes, n)) {
      return MCGO_INVALID_PARAMS;
    }
    std::vector<std::string> ks(n);
    std::vector<std::vector<std::pair<const void *, uint64_t>>> parts(n);
    for (size_t i = 0; i < n; ++i) {
      ks[i] = KeyAt(keys, key_offsets, i);
      parts[i].emplace_back(reinterpret_cast<const void *>(datas[i]), sizes[i]);
    }
    return mcgo::embedded::PutGather(s, std::move(ks), parts, pc, upsert);
  });
}

int32_t mcgo_store_put_batch(mcgo_store *s, const char *keys,
                             const uint64_t *key_offsets, size_t n,
                             const uintptr_t *datas, const uint64_t *sizes,
                             mcgo_replicate_config cfg) {
  return PutBatch(s, keys, key_offsets, n, datas, sizes, cfg, false);
}

int32_t mcgo_store_upsert_batch(mcgo_store *s, const char *keys,
                                const uint64_t *key_offsets, size_t n,
                                const uintptr_t *datas, const uint64_t *sizes,
                                mcgo_replicate_config cfg) {
  return PutBatch(s, keys, key_offsets, n, datas, sizes, cfg, true);
}

int64_t mcgo_store_get_begin(mcgo_store *s, const char *key, size_t key_len,
                       uintptr_t *handle) {
  if (handle != nullptr) *handle = 0;
  return Guard64([&]() -> int64_t {
    if (Orphaned(s)) return MCGO_RPC_FAIL;
    if (!IsReady(s) || handle == nullptr || !KeyOk(key, key_len)) {
      return MCGO_INVALID_PARAMS;
    }
    mcgo::embedded::HeldObject *held = nullptr;
    const int64_t r = mcgo::embedded::GetHold(s, MakeKey(key, key_len), &held);
    if (r >= 0) *handle = reinterpret_cast<uintptr_t>(held);
    return r;
  });
}

int32_t mcgo_store_get_finish(uintptr_t handle, void *dst, uint64_t dst_cap) {
  if (handle == 0) return MCGO_INVALID_PARAMS;
  std::unique_ptr<mcgo::embedded::HeldObject> held(
      reinterpret_cast<mcgo::embedded::HeldObject *>(handle));
  if (dst == nullptr && dst_cap == 0) return MCGO_OK;
  if (dst == nullptr) return MCGO_INVALID_PARAMS;
  if (dst_cap < held->size) return MCGO_BUFFER_OVERFLOW;
  if (held->size > 0) {
    std::memcpy(dst, held->data.get(), static_cast<size_t>(held->size));
  }
  return MCGO_OK;
}

int32_t mcgo_store_put_from(mcgo_store *s, const char *key, size_t key_len,
                      uintptr_t addr, uint64_t size, mcgo_replicate_config cfg) {
  return Guard32([&] {
    return SingleWrite(s, key, key_len, addr, size, cfg, false);
  });
}

int32_t mcgo_store_upsert_from(mcgo_store *s, const char *key, size_t key_len,
                         uintptr_t addr, uint64_t size,
                         mcgo_replicate_config cfg) {
  return Guard32([&] {
    return SingleWrite(s, key, key_len, addr, size, cfg, true);
  });
}

int64_t mcgo_store_get_into(mcgo_store *s, const char *key, size_t key_len,
                      uintptr_t addr, uint64_t size) {
  return Guard64([&]() -> int64_t {
    if (Orphaned(s)) return MCGO_RPC_FAIL;
    if (!IsReady(s) || !KeyOk(key, key_len)) return MCGO_INVALID_PARAMS;
    std::vector<ReadOp> ops(1);
    ops[0].key = MakeKey(key, key_len);
    BufferList bufs;
    bufs.addrs = &addr;
    bufs.sizes = &size;
    mcgo::embedded::ReadIntoBuffers(s, &ops, bufs, false, false);
    return ops[0].result;
  });
}

int32_t mcgo_store_batch_put_from(mcgo_store *s, const char *keys,
                            const uint64_t *key_offsets, size_t n,
                            const uintptr_t *addrs, const uint64_t *sizes,
                            mcgo_replicate_config cfg, int64_t *results) {
  return GuardBatch(results, n, [&] {
    return BatchWrite(s, keys, key_offsets, n, addrs, sizes, cfg, results, false);
  });
}

int32_t mcgo_store_batch_upsert_from(mcgo_store *s, const char *keys,
                               const uint64_t *key_offsets, size_t n,
                               const uintptr_t *addrs, const uint64_t *sizes,
                               mcgo_replicate_config cfg, int64_t *results) {
  return GuardBatch(results, n, [&] {
    return BatchWrite(s, keys, key_offsets, n, addrs, sizes, cfg, results, true);
  });
}

int32_t mcgo_store_batch_get_into(mcgo_store *s, const char *keys,
                            const uint64_t *key_offsets, size_t n,
                            const uintptr_t *addrs, const uint64_t *sizes,
                            int64_t *results) {
  return GuardBatch(results, n, [&]() -> int32_t {
    if (s == nullptr) return Refuse(results, n, MCGO_INVALID_PARAMS);
    if (n == 0) return MCGO_OK;
    if (results == nullptr) return MCGO_INVALID_PARAMS;
    if (Orphaned(s)) return MCGO_RPC_FAIL;
    if (!IsReady(s) || !KeysOk(keys, key_offsets, n) || addrs == nullptr ||
        sizes == nullptr) {
      return Refuse(results, n, MCGO_INVALID_PARAMS);
    }
    std::vector<ReadOp> ops(n);
    for (size_t i = 0; i < n; ++i) ops[i].key = KeyAt(keys, key_offsets, i);
    BufferList bufs;
    bufs.addrs = addrs;
    bufs.sizes = sizes;
    mcgo::embedded::ReadIntoBuffers(s, &ops, bufs, false, false);
    for (size_t i = 0; i < n; ++i) results[i] = ops[i].result;
    return MCGO_OK;
  });
}

int32_t mcgo_store_batch_put_from_multi_buffers(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *buf_offsets,
    mcgo_replicate_config cfg, int64_t *results) {
  return GuardBatch(results, n, [&] {
    return BatchWriteMulti(s, keys, key_offsets, n, addrs, sizes, buf_offsets,
                           cfg, results, false);
  });
}

int32_t mcgo_store_batch_upsert_from_multi_buffers(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *buf_offsets,
    mcgo_replicate_config cfg, int64_t *results) {
  return GuardBatch(results, n, [&] {
    return BatchWriteMulti(s, keys, key_offsets, n, addrs, sizes, buf_offsets,
                           cfg, results, true);
  });
}

int32_t mcgo_store_batch_get_into_multi_buffers(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *buf_offsets,
    int32_t prefer_same_node, int64_t *results) {
  return GuardBatch(results, n, [&]() -> int32_t {
    if (s == nullptr) return Refuse(results, n, MCGO_INVALID_PARAMS);
    if (n == 0) return MCGO_OK;
    if (results == nullptr) return MCGO_INVALID_PARAMS;
    if (Orphaned(s)) return MCGO_RPC_FAIL;
    if (!IsReady(s) || !KeysOk(keys, key_offsets, n) ||
        !CsrOk(addrs, sizes, buf_offsets, n)) {
      return Refuse(results, n, MCGO_INVALID_PARAMS);
    }
    std::vector<ReadOp> ops(n);
    for (size_t i = 0; i < n; ++i) ops[i].key = KeyAt(keys, key_offsets, i);
    BufferList bufs;
    bufs.addrs = addrs;
    bufs.sizes = sizes;
    bufs.offsets = buf_offsets;
    mcgo::embedded::ReadIntoBuffers(s, &ops, bufs, true, prefer_same_node != 0);
    for (size_t i = 0; i < n; ++i) results[i] = ops[i].result;
    return MCGO_OK;
  });
}

int32_t mcgo_store_is_exist(mcgo_store *s, const char *key, size_t key_len) {
  return Guard32([&]() -> int32_t {
    if (Orphaned(s)) return MCGO_RPC_FAIL;
    if (!IsReady(s) || !KeyOk(key, key_len)) return MCGO_INVALID_PARAMS;
    const std::string k = MakeKey(key, key_len);
    int64_t result = 0;
    s->cluster->Exists(&k, 1, &result);
    return static_cast<int32_t>(result);
  });
}

int32_t mcgo_store_batch_is_exist(mcgo_store *s, const char *keys,
                            const uint64_t *key_offsets, size_t n,
                            int64_t *results) {
  return GuardBatch(results, n, [&]() -> int32_t {
    if (int32_t rc = KeysPrologue(s, keys, key_offsets, n, results); rc != kProceed) return rc;
    std::vector<std::string> ks(n);
    for (size_t i = 0; i < n; ++i) ks[i] = KeyAt(keys, key_offsets, i);
    s->cluster->Exists(ks.data(), n, results);
    return MCGO_OK;
  });
}

int64_t mcgo_store_get_size(mcgo_store *s, const char *key, size_t key_len) {
  return Guard64([&]() -> int64_t {
    if (Orphaned(s)) return MCGO_RPC_FAIL;
    if (!IsReady(s) || !KeyOk(key, key_len)) return MCGO_INVALID_PARAMS;
    return SingleRead(s, key, key_len);
  });
}

int32_t mcgo_store_remove(mcgo_store *s, const char *key, size_t key_len,
                    int32_t force) {
  return Guard32([&]() -> int32_t {
    if (Orphaned(s)) return MCGO_RPC_FAIL;
    if (!IsReady(s) || !KeyOk(key, key_len)) return MCGO_INVALID_PARAMS;
    return s->cluster->Remove(MakeKey(key, key_len), force != 0);
  });
}

int32_t mcgo_store_batch_get_replica_desc(mcgo_store *s, const char *keys,
                                          const uint64_t *key_offsets, size_t n,
                                          mcgo_replica_desc *descs, size_t descs_cap,
                                          char *names, size_t names_cap,
                                          size_t *descs_needed, size_t *names_needed,
                                          int64_t *results) {
  return GuardBatch(results, n, [&]() -> int32_t {
    if (s == nullptr) return Refuse(results, n, MCGO_INVALID_PARAMS);
    if (n > 0 && results == nullptr) return MCGO_INVALID_PARAMS;
    if (Orphaned(s)) return MCGO_RPC_FAIL;
    if (!IsReady(s) || (n > 0 && !KeysOk(keys, key_offsets, n)) ||
        !mcgo::DescArgsOk(descs, descs_cap, names, names_cap)) {
      return Refuse(results, n, MCGO_INVALID_PARAMS);
    }
    if (s->dummy) return Refuse(results, n, MCGO_NOT_SUPPORTED);  // as the native backend
    mcgo::DescWriter w(descs, descs_cap, names, names_cap);
    std::vector<mcgo::embedded::Cluster::ReplicaInfo> infos;
    for (size_t i = 0; i < n; ++i) {
      const int32_t rc = s->cluster->Describe(KeyAt(keys, key_offsets, i), &infos);
      if (rc != MCGO_OK) {
        results[i] = rc;
        continue;
      }
      results[i] = static_cast<int64_t>(infos.size());
      for (size_t r = 0; r < infos.size(); ++r) {
        mcgo_replica_desc d{};
        d.id = r;
        d.kind = MCGO_REPLICA_MEMORY;
        d.status = 3;  // COMPLETE: only readable objects are described
        d.size = infos[r].size;
        w.Add(d, infos[r].segment);
      }
    }
    return w.Finish(descs_needed, names_needed);
  });
}

int32_t mcgo_store_batch_replica_clear(mcgo_store *s, const char *keys,
                                       const uint64_t *key_offsets, size_t n,
                                       const char *segment, size_t segment_len,
                                       int64_t *results) {
  return GuardBatch(results, n, [&]() -> int32_t {
    if (int32_t rc = KeysPrologue(s, keys, key_offsets, n, results); rc != kProceed) return rc;
    if (segment == nullptr && segment_len > 0) return Refuse(results, n, MCGO_INVALID_PARAMS);
    if (s->dummy) return Refuse(results, n, MCGO_NOT_SUPPORTED);  // as the native backend
    const std::string seg(segment == nullptr ? "" : segment, segment_len);
    for (size_t i = 0; i < n; ++i) {
      results[i] = s->cluster->ClearReplicas(KeyAt(keys, key_offsets, i), s->hostname, seg) ? 1 : 0;
    }
    return MCGO_OK;
  });
}

int32_t mcgo_store_batch_remove(mcgo_store *s, const char *keys,
                                const uint64_t *key_offsets, size_t n,
                                int32_t force, int64_t *results) {
  return GuardBatch(results, n, [&]() -> int32_t {
    if (int32_t rc = KeysPrologue(s, keys, key_offsets, n, results); rc != kProceed) return rc;
    // Upstream's master removes key by key under each key's shard lock: a
    // batch is not atomic, and neither is this. Its BatchRemove publishes
    // no KV event (kv_events.h).
    for (size_t i = 0; i < n; ++i) {
      results[i] = s->cluster->Remove(KeyAt(keys, key_offsets, i), force != 0, /*kv_event=*/false);
    }
    return MCGO_OK;
  });
}

int64_t mcgo_store_remove_by_regex(mcgo_store *s, const char *pattern,
                             size_t pattern_len, int32_t force) {
  return Guard64([&]() -> int64_t {
    if (Orphaned(s)) return MCGO_RPC_FAIL;
    if (!IsReady(s) || !KeyOk(pattern, pattern_len)) return MCGO_INVALID_PARAMS;
    mcgo::embedded::KeyPattern re;
    if (!re.Compile(MakeKey(pattern, pattern_len))) return MCGO_INVALID_PARAMS;
    return s->cluster->RemoveMatching(re, force != 0);
  });
}

int64_t mcgo_store_remove_all(mcgo_store *s, int32_t force) {
  return Guard64([&]() -> int64_t {
    if (Orphaned(s)) return MCGO_RPC_FAIL;
    if (!IsReady(s)) return MCGO_INVALID_PARAMS;
    return s->cluster->RemoveAll(force != 0);
  });
}

}  // extern "C"

// ---- segments ---------------------------------------------------------------

namespace {

// Maps size bytes (a file's range when fd >= 0) for a mount; nullptr when
// the kernel refuses.
void *MapForMount(uint64_t size, int fd, uint64_t offset) {
  if (size > SIZE_MAX) return nullptr;
  void *p = fd >= 0 ? mmap(nullptr, static_cast<size_t>(size), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                           static_cast<off_t>(offset))
                    : mmap(nullptr, static_cast<size_t>(size), PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// Mounts mapped memory as one segment (the embedded engine never splits:
// neither tcp nor rdma caps a registration), unmapping it on failure.
int32_t MountMapped(mcgo_store *s, void *base, uint64_t size, bool allocated, mcgo_segment_id *ids,
                    size_t ids_cap, size_t *n_ids) {
  if (base == nullptr) return MCGO_INTERNAL_ERROR;
  *n_ids = 1;
  int32_t rc = ids_cap < 1 ? MCGO_BUFFER_OVERFLOW : MCGO_INTERNAL_ERROR;
  if (ids_cap >= 1) {
    try {
      rc = mcgo::embedded::MountMemory(s, base, size, allocated, &ids[0]);
    } catch (...) {
      rc = MCGO_INTERNAL_ERROR;
    }
  }
  if (rc != MCGO_OK) munmap(base, static_cast<size_t>(size));
  return rc;
}

int32_t UnmountEach(mcgo_store *s, const mcgo_segment_id *ids, size_t n, uint64_t grace,
                    int64_t *results, bool allocated) {
  return GuardBatch(results, n, [&]() -> int32_t {
    if (n == 0) return MCGO_OK;
    if (results == nullptr) return MCGO_INVALID_PARAMS;
    if (Orphaned(s)) return Refuse(results, n, MCGO_RPC_FAIL);
    if (!IsReady(s) || ids == nullptr) return Refuse(results, n, MCGO_INVALID_PARAMS);
    if (s->dummy) return Refuse(results, n, MCGO_NOT_SUPPORTED);  // a dummy has no segments
    int32_t first = MCGO_OK;
    for (size_t i = 0; i < n; ++i) {
      const int32_t rc = mcgo::embedded::UnmountMemory(s, ids[i], grace, allocated);
      results[i] = rc;
      if (rc != MCGO_OK && first == MCGO_OK) first = rc;
    }
    return first;
  });
}

}  // namespace

extern "C" {

int32_t mcgo_store_allocate_and_mount_segment(mcgo_store *s, uint64_t size,
                                              const char *protocol, const char *location,
                                              mcgo_segment_id *ids, size_t ids_cap,
                                              size_t *n_ids, uint64_t *allocated) {
  (void)location;  // the embedded engine has no NUMA or device placement
  return Guard32([&]() -> int32_t {
    uint64_t aligned = 0;
    std::string proto;
    if (IsDummy(s)) return MCGO_NOT_SUPPORTED;  // checked first, as the native backend
    if (Orphaned(s)) return MCGO_RPC_FAIL;
    if (!IsReady(s) ||
        !mcgo::args::AllocateArgsOk(ids, ids_cap, n_ids, allocated, size, protocol, s->protocol, &aligned, &proto)) {
      return MCGO_INVALID_PARAMS;
    }
    *n_ids = 0;
    *allocated = 0;
    const int32_t rc = MountMapped(s, MapForMount(aligned, -1, 0), aligned, true, ids, ids_cap, n_ids);
    if (rc == MCGO_OK) *allocated = aligned;
    return rc;
  });
}

int32_t mcgo_store_mount_segment(mcgo_store *s, const char *path, uint64_t offset,
                                 uint64_t size, const char *protocol, const char *location,
                                 mcgo_segment_id *ids, size_t ids_cap, size_t *n_ids) {
  (void)location;
  return Guard32([&]() -> int32_t {
    std::string proto;
    if (IsDummy(s)) return MCGO_NOT_SUPPORTED;
    if (Orphaned(s)) return MCGO_RPC_FAIL;
    if (!IsReady(s) ||
        !mcgo::args::MountArgsOk(ids, ids_cap, n_ids, path, offset, size, protocol, s->protocol, &proto)) {
      return MCGO_INVALID_PARAMS;
    }
    *n_ids = 0;
    const int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return MCGO_INVALID_PARAMS;  // gone since the check
    void *base = MapForMount(size, fd, offset);
    close(fd);  // the mapping keeps the file
    return MountMapped(s, base, size, false, ids, ids_cap, n_ids);
  });
}

int32_t mcgo_store_unmount_segment(mcgo_store *s, const mcgo_segment_id *ids, size_t n,
                                   uint64_t grace_seconds, int64_t *results) {
  return UnmountEach(s, ids, n, grace_seconds, results, false);
}

int32_t mcgo_store_unmount_and_free_segment(mcgo_store *s, const mcgo_segment_id *ids,
                                            size_t n, uint64_t grace_seconds,
                                            int64_t *results) {
  return UnmountEach(s, ids, n, grace_seconds, results, true);
}

}  // extern "C"

// ---- copy and move tasks -------------------------------------------------------

extern "C" {

int32_t mcgo_store_create_copy_task(mcgo_store *s, const char *key, size_t key_len,
                                    const char *targets, uint32_t target_count,
                                    uint64_t targets_len, mcgo_uuid *task) {
  return Guard32([&]() -> int32_t {
    std::vector<std::string> names;
    if (Orphaned(s)) return MCGO_RPC_FAIL;
    if (!IsReady(s) || !KeyOk(key, key_len) || task == nullptr ||
        !mcgo::args::ParseNames(target_count, targets, targets_len, &names)) {
      return MCGO_INVALID_PARAMS;
    }
    uint64_t id = 0;
    const int32_t rc = s->cluster->CreateCopyTask(MakeKey(key, key_len), names, &id);
    if (rc == MCGO_OK) *task = mcgo_uuid{mcgo::embedded::IdNonce(), id};
    return rc;
  });
}

int32_t mcgo_store_create_move_task(mcgo_store *s, const char *key, size_t key_len,
                                    const char *source, size_t source_len,
                                    const char *target, size_t target_len, mcgo_uuid *task) {
  return Guard32([&]() -> int32_t {
    if (Orphaned(s)) return MCGO_RPC_FAIL;
    if (!IsReady(s) || !KeyOk(key, key_len) || !KeyOk(source, source_len) || !KeyOk(target, target_len) ||
        task == nullptr) {
      return MCGO_INVALID_PARAMS;
    }
    uint64_t id = 0;
    const int32_t rc = s->cluster->CreateMoveTask(MakeKey(key, key_len), MakeKey(source, source_len),
                                                  MakeKey(target, target_len), &id);
    if (rc == MCGO_OK) *task = mcgo_uuid{mcgo::embedded::IdNonce(), id};
    return rc;
  });
}

int32_t mcgo_store_query_task(mcgo_store *s, mcgo_uuid task, mcgo_task_info *out) {
  return Guard32([&]() -> int32_t {
    if (Orphaned(s)) return MCGO_RPC_FAIL;
    if (!IsReady(s) || out == nullptr) return MCGO_INVALID_PARAMS;
    mcgo::embedded::Cluster::TaskInfo t;
    if (task.first != mcgo::embedded::IdNonce() || !s->cluster->QueryTask(task.second, &t)) {
      return MCGO_TASK_NOT_FOUND;
    }
    *out = mcgo_task_info{};
    out->id = task;
    out->type = t.type;
    out->status = t.status;
    out->created_at_ms = t.created_ms;
    out->updated_at_ms = t.updated_ms;
    WriteMessage(out->message, sizeof out->message, t.message);
    return MCGO_OK;
  });
}

}  // extern "C"

// ---- SSD offload tier: the embedded engine has none --------------------------------

extern "C" {

int32_t mcgo_store_unmount_local_disk_segment(mcgo_store *s, uint64_t grace_seconds) {
  (void)grace_seconds;  // nothing to drain, so nothing to wait for
  if (IsDummy(s)) return MCGO_NOT_SUPPORTED;
  return IsReady(s) ? MCGO_OK : (Orphaned(s) ? MCGO_RPC_FAIL : MCGO_INVALID_PARAMS);
}

int64_t mcgo_store_offload_rpc_read_count(mcgo_store *s) {
  if (IsDummy(s)) return MCGO_NOT_SUPPORTED;
  return IsReady(s) ? 0 : (Orphaned(s) ? MCGO_RPC_FAIL : MCGO_INVALID_PARAMS);
}

}  // extern "C"
