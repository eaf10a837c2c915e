// Native backend of mcgo/store.h, over upstream Mooncake's store client
// (mooncake::RealClient). Built by CMake (make native) into
// libmcgo_native.so against an upstream build; never compiled by cgo.
//
// Rules of this file:
//   - every entry point catches every C++ exception and reports
//     MCGO_INTERNAL_ERROR;
//   - argument checks are the ones the embedded engine makes
//     (cgo/common/args.h), so both backends refuse the same inputs the same way;
//   - upstream's result vectors are checked for length before use;
//   - nothing passed in is kept after a call returns.

#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <variant>
#include <unordered_set>
#include <vector>

#include "mcgo/store.h"
#include "common/args.h"
#include "common/dummy_args.h"
#include "common/key_pattern.h"
#include "common/guard.h"
#include "common/replica_desc.h"
#include "common/segment_args.h"
#include "dummy_client.h"
#include "real_client.h"
#include "shm_helper.h"
#include "replica.h"
#include "native/transfer_engine_handle.h"

struct mcgo_store {
  // A RealClient, or a DummyClient after mcgo_store_setup_dummy; real is
  // client as a RealClient (null for a dummy), for the calls only it has.
  std::shared_ptr<mooncake::PyClient> client;
  mooncake::RealClient *real = nullptr;
  // Shared memory from mcgo_store_alloc_from_mem_pool (a dummy's), freed at
  // destroy: upstream's ShmHelper would keep it until the process ends.
  mcgo::args::DummyPool pool;
  mcgo_te *engine = nullptr;  // the transfer engine it runs on, or null
  // Setup and teardown take it exclusively; calls take it shared, so a call
  // never sees a half set-up client.
  std::shared_mutex mu;
  bool ready = false;
  std::string protocol;  // set up with; the default of the segment calls
};

namespace {

using mcgo::Guard32;
using mcgo::Guard64;
using mcgo::GuardBatch;
using mcgo::args::CsrOk;
using mcgo::args::Fill;
using mcgo::args::KeyAt;
using mcgo::args::KeyOk;
using mcgo::args::KeysOk;
using mcgo::args::MakeKey;
using mcgo::args::Refuse;

// A call holds the store's shared lock and sees a ready client, or nothing.
class Call {
 public:
  explicit Call(mcgo_store *s) {
    if (s == nullptr) return;
    lock_ = std::shared_lock<std::shared_mutex>(s->mu);
    if (s->ready && s->client) {
      client_ = s->client.get();
      real_ = s->real;
    }
  }
  mooncake::PyClient *client() const { return client_; }
  // The client as a RealClient: null when not set up, or set up as a dummy.
  mooncake::RealClient *real() const { return real_; }
  // MCGO_OK when the call can use real(); MCGO_NOT_SUPPORTED for a dummy
  // (upstream's DummyClient has no such call), MCGO_INVALID_PARAMS when
  // not set up.
  int32_t NeedReal() const {
    if (client_ == nullptr) return MCGO_INVALID_PARAMS;
    return real_ == nullptr ? MCGO_NOT_SUPPORTED : MCGO_OK;
  }
  bool dummy() const { return client_ != nullptr && real_ == nullptr; }

 private:
  std::shared_lock<std::shared_mutex> lock_;
  mooncake::PyClient *client_ = nullptr;
  mooncake::RealClient *real_ = nullptr;
};

bool ToReplicate(const mcgo_replicate_config &in, mooncake::ReplicateConfig *out) {
  std::vector<std::string> segs, nof, groups;
  if (!mcgo::args::ParseSegments(in, &segs) || !mcgo::args::ParseNoFSegments(in, &nof) ||
      !mcgo::args::SoftPinActionOk(in) || !mcgo::args::ParseGroupIds(in, &groups) ||
      !mcgo::args::DataTypeOk(in)) {
    return false;
  }
  if (in.has_group_ids) out->group_ids = std::move(groups);
  out->data_type = static_cast<mooncake::ObjectDataType>(in.data_type);
  out->replica_num = in.replica_num == 0 ? 1 : static_cast<size_t>(in.replica_num);
  out->nof_replica_num = static_cast<size_t>(in.nof_replica_num);
  out->dfs_replica_num = static_cast<size_t>(in.dfs_replica_num);
  // The old with_soft_pin means ENABLE unless an action is given.
  out->soft_pin_action = static_cast<mooncake::SoftPinAction>(in.soft_pin_action);
  if (in.soft_pin_action == MCGO_SOFT_PIN_PRESERVE && in.with_soft_pin) {
    out->soft_pin_action = mooncake::SoftPinAction::ENABLE;
  }
  if (in.has_soft_pin_ttl) out->soft_pin_ttl_ms = in.soft_pin_ttl_ms;
  out->preferred_nof_segments = std::move(nof);
  out->with_hard_pin = in.with_hard_pin != 0;
  out->preferred_segments = std::move(segs);
  out->prefer_alloc_in_same_node = in.prefer_alloc_in_same_node != 0;
  return true;
}

std::vector<std::string> Keys(const char *keys, const uint64_t *off, size_t n) {
  std::vector<std::string> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(KeyAt(keys, off, i));
  return out;
}

std::vector<void *> Ptrs(const uintptr_t *addrs, size_t n) {
  std::vector<void *> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = reinterpret_cast<void *>(addrs[i]);
  return out;
}

std::vector<size_t> Sizes(const uint64_t *sizes, size_t n) {
  return std::vector<size_t>(sizes, sizes + n);
}

void Nested(const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *bo,
            size_t n, std::vector<std::vector<void *>> *all_ptrs,
            std::vector<std::vector<size_t>> *all_sizes) {
  all_ptrs->resize(n);
  all_sizes->resize(n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t a = bo[i], b = bo[i + 1];
    (*all_ptrs)[i].resize(b - a);
    (*all_sizes)[i].assign(sizes + a, sizes + b);
    for (uint64_t j = a; j < b; ++j) {
      (*all_ptrs)[i][j - a] = reinterpret_cast<void *>(addrs[j]);
    }
  }
}

// Copies upstream's per-key results; a short or long vector (upstream returns
// [] when its client is not initialised) is an internal error for all keys.
template <typename V>
int32_t Results(const V &got, size_t n, int64_t *results) {
  if (got.size() != n) return Refuse(results, n, MCGO_INTERNAL_ERROR);
  for (size_t i = 0; i < n; ++i) results[i] = static_cast<int64_t>(got[i]);
  return MCGO_OK;
}

// Common checks of a batch call. Returns MCGO_OK to proceed, or the
// refusal code (results already filled).
int32_t BatchPrologue(mooncake::PyClient *c, const char *keys,
                      const uint64_t *off, size_t n, int64_t *results) {
  if (results == nullptr) return MCGO_INVALID_PARAMS;
  if (c == nullptr || !KeysOk(keys, off, n)) {
    return Refuse(results, n, MCGO_INVALID_PARAMS);
  }
  return MCGO_OK;
}

// A batch call that takes only keys and returns upstream's per-key results.
// kRealOnly: a dummy refuses it (MCGO_NOT_SUPPORTED for every key).
template <bool kRealOnly = false, typename F>
int32_t KeysOnly(mcgo_store *s, const char *keys, const uint64_t *off, size_t n, int64_t *results,
                 F &&call_upstream) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (int32_t rc = BatchPrologue(call.client(), keys, off, n, results)) return rc;
    if (kRealOnly && call.dummy()) return Refuse(results, n, MCGO_NOT_SUPPORTED);
    return Results(call_upstream(call.client(), Keys(keys, off, n)), n, results);
  });
}

// Runs the body of a setup call, which reports a refusal with
// fail(code, message); an exception is MCGO_INTERNAL_ERROR with its message.
template <typename F>
int32_t SetupGuard(char *errmsg, size_t errmsg_cap, F &&body) {
  auto fail = [&](int32_t code, const std::string &msg) {
    mcgo::args::WriteMessage(errmsg, errmsg_cap, msg);
    return code;
  };
  try {
    return body(fail);
  } catch (const std::exception &e) {
    return fail(MCGO_INTERNAL_ERROR, std::string("exception: ") + e.what());
  } catch (...) {
    return fail(MCGO_INTERNAL_ERROR, "unknown exception");
  }
}

// How long destroying a dummy waits for upstream's DummyClient to tear down.
constexpr auto kDummyTeardownWait = std::chrono::seconds(10);

// Tears a DummyClient down and frees its pool memory. Upstream's teardown
// joins its ping thread, which, once the real client stops answering,
// re-registers the shared memory over the IPC socket with a blocking
// receive: a real client that hangs (stopped, not dead) would hang the
// teardown for as long. The teardown runs on a thread of its own; after
// kDummyTeardownWait the thread is left to finish, keeping the client and
// its pool (a leak, where upstream would hang), and destroy returns.
void TearDownDummy(std::shared_ptr<mooncake::PyClient> client, mcgo::args::DummyPool::Chunks pool) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  std::thread([client = std::move(client), pool = std::move(pool), done]() mutable {
    try {
      client->tearDownAll();
      client.reset();
      // Freed only once the client is gone: its ping thread walks the
      // shared-memory segments to re-register them.
      for (const auto &p : pool) mooncake::ShmHelper::getInstance()->free(p.first);
    } catch (...) {
    }
    done->set_value();
  }).detach();
  if (finished.wait_for(kDummyTeardownWait) != std::future_status::ready) {
    LOG(WARNING) << "mooncake-go: the dummy client's teardown did not finish in "
                 << kDummyTeardownWait.count()
                 << " s (its real client does not answer); left running";
  }
}

}  // namespace

extern "C" {


int32_t mcgo_store_create(mcgo_store **out) {
  return Guard32([&]() -> int32_t {
    if (out == nullptr) return MCGO_INVALID_PARAMS;
    *out = nullptr;
    auto s = std::make_unique<mcgo_store>();
    // Not RealClient::create(): that registers the client with upstream's
    // ResourceTracker, whose signal thread would fight the Go runtime over
    // SIGINT/SIGTERM. mcgo_store_destroy tears the client down explicitly.
    auto real = std::make_shared<mooncake::RealClient>();
    s->real = real.get();
    s->client = std::move(real);
    *out = s.release();
    return MCGO_OK;
  });
}

void mcgo_store_destroy(mcgo_store *s) {
  if (s == nullptr) return;
  try {
    std::unique_lock<std::shared_mutex> lock(s->mu);
    s->ready = false;
    if (s->real == nullptr && s->client) {
      TearDownDummy(std::move(s->client), s->pool.Take());
    } else if (s->client) {
      s->client->tearDownAll();
    }
    s->client.reset();
    s->real = nullptr;
  } catch (...) {
  }
  mcgo::native::DetachStore(s->engine);
  delete s;
}

static int32_t SetupOn(mcgo_store *s, const mcgo_store_config *cfg, mcgo_te *te,
                       char *errmsg, size_t errmsg_cap) {
  return SetupGuard(errmsg, errmsg_cap, [&](const auto &fail) -> int32_t {
    if (s == nullptr || cfg == nullptr) {
      return fail(MCGO_INVALID_PARAMS, "null store or config");
    }
    std::unique_lock<std::shared_mutex> lock(s->mu);
    if (s->ready) return fail(MCGO_INVALID_PARAMS, "store is already set up");
    if (!s->client) return fail(MCGO_INVALID_PARAMS, "store was torn down");
    auto str = [](const char *p) { return p ? std::string(p) : std::string(); };
    const std::string protocol = str(cfg->protocol);
    if (protocol != "tcp" && protocol != "rdma") {
      return fail(MCGO_INVALID_PARAMS,
                  "protocol \"" + protocol + "\": want \"tcp\" or \"rdma\"");
    }
    if (str(cfg->master_server_address).empty()) {
      return fail(MCGO_INVALID_PARAMS, "master_server_address is empty");
    }
    std::string host = str(cfg->local_hostname), meta = str(cfg->metadata_server);
    std::shared_ptr<mooncake::TransferEngine> engine;
    if (te != nullptr) {
      std::string name, metadata;
      if (!mcgo::native::AttachStore(te, &engine, &name, &metadata)) {
        return fail(MCGO_INVALID_PARAMS, "the transfer engine is not usable");
      }
      std::string why;
      if (!host.empty() && host != name) {
        why = "local_hostname \"" + host + "\" is not the engine's segment name \"" + name + "\"";
      } else if (!meta.empty() && meta != metadata) {
        why = "metadata_server \"" + meta + "\" is not the engine's \"" + metadata + "\"";
      } else if (engine->getTransport(protocol) == nullptr) {
        why = "the engine has no " + protocol + " transport installed";
      }
      if (!why.empty()) {
        mcgo::native::DetachStore(te);
        return fail(MCGO_INVALID_PARAMS, why);
      }
      host = name;  // upstream needs host:port equal to the engine's segment
      meta = metadata;
    }
    if (cfg->client_http_port < 0 || cfg->client_http_port > 65535) {
      mcgo::native::DetachStore(te);
      return fail(MCGO_INVALID_PARAMS, "client_http_port out of range");
    }
    const std::string tenant = str(cfg->tenant_id).empty() ? "default" : str(cfg->tenant_id);
    const int rc = s->client->setup_real(
        host, meta, static_cast<size_t>(cfg->global_segment_size),
        static_cast<size_t>(cfg->local_buffer_size), protocol,
        str(cfg->device_name), str(cfg->master_server_address), engine,
        /*ipc_socket_path=*/"", cfg->enable_ssd_offload != 0, str(cfg->ssd_offload_path), tenant,
        cfg->enable_client_http_server != 0,
        cfg->client_http_port != 0 ? cfg->client_http_port : mooncake::DEFAULT_CLIENT_HTTP_PORT);
    if (rc != 0) {
      mcgo::native::DetachStore(te);
      return fail(rc < 0 ? rc : MCGO_INTERNAL_ERROR,
                  "upstream setup_real failed (see the client's log on "
                  "stderr; is the master running and the metadata server "
                  "reachable?)");
    }
    s->engine = te;
    s->protocol = protocol;
    s->ready = true;
    return MCGO_OK;
  });
}

int32_t mcgo_store_setup_dummy(mcgo_store *s, uint64_t mem_pool_size, uint64_t local_buffer_size,
                               const char *server_address, char *errmsg, size_t errmsg_cap) {
  return SetupGuard(errmsg, errmsg_cap, [&](const auto &fail) -> int32_t {
    if (s == nullptr) return fail(MCGO_INVALID_PARAMS, "null store");
    std::unique_lock<std::shared_mutex> lock(s->mu);
    if (s->ready) return fail(MCGO_INVALID_PARAMS, "store is already set up");
    if (!s->client) return fail(MCGO_INVALID_PARAMS, "store was torn down");
    int port = 0;
    std::string why;
    if (!mcgo::args::ServerAddressOk(server_address, &port, &why)) {
      return fail(MCGO_INVALID_PARAMS, why);
    }
    // As Python's setup_dummy: the RealClient made at create goes, a
    // DummyClient takes its place.
    auto dummy = std::make_shared<mooncake::DummyClient>();
    const int rc = dummy->setup_dummy(static_cast<size_t>(mem_pool_size),
                                      static_cast<size_t>(local_buffer_size), server_address,
                                      mcgo::args::IpcSocketPath(port));
    if (rc != 0) {
      dummy->tearDownAll();
      return fail(MCGO_RPC_FAIL, std::string("upstream setup_dummy failed: is a real client (mooncake_client) "
                                             "serving at ") + server_address + "? (its log on stderr says more)");
    }
    // Upstream's health check fails until the dummy's ping thread has had
    // its first answer; wait for it (it comes within milliseconds), so that
    // a dummy that is set up also reports healthy.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (dummy->health_check() != mooncake::HC_HEALTHY && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    s->client->tearDownAll();
    s->client = std::move(dummy);
    s->real = nullptr;
    s->ready = true;
    return MCGO_OK;
  });
}

int32_t mcgo_store_alloc_from_mem_pool(mcgo_store *s, uint64_t size, uintptr_t *addr) {
  if (addr != nullptr) *addr = 0;
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (call.client() == nullptr || addr == nullptr || !mcgo::args::PoolSizeOk(size)) {
      return MCGO_INVALID_PARAMS;
    }
    if (!call.dummy()) return MCGO_NOT_SUPPORTED;
    const uint64_t p = call.client()->alloc_from_mem_pool(static_cast<size_t>(size));
    if (p == 0) return MCGO_NO_AVAILABLE_HANDLE;  // upstream logs why (memfd or mmap failed)
    s->pool.Add(reinterpret_cast<void *>(p), size);
    *addr = static_cast<uintptr_t>(p);
    return MCGO_OK;
  });
}

uint32_t mcgo_store_capabilities(void) {
  return MCGO_CAP_TENANTS | MCGO_CAP_SSD_OFFLOAD | MCGO_CAP_CLIENT_HTTP_SERVER |
         MCGO_CAP_NOF_REPLICAS | MCGO_CAP_DFS_REPLICAS;
}

int32_t mcgo_store_setup(mcgo_store *s, const mcgo_store_config *cfg, char *errmsg,
                   size_t errmsg_cap) {
  return SetupOn(s, cfg, nullptr, errmsg, errmsg_cap);
}

int32_t mcgo_store_setup_on_engine(mcgo_store *s, const mcgo_store_config *cfg,
                                   mcgo_te *engine, char *errmsg,
                                   size_t errmsg_cap) {
  if (engine == nullptr) {
    mcgo::args::WriteMessage(errmsg, errmsg_cap, "engine is NULL");
    return MCGO_INVALID_PARAMS;
  }
  return SetupOn(s, cfg, engine, errmsg, errmsg_cap);
}

int32_t mcgo_store_health_check(mcgo_store *s) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (call.client() == nullptr) return MCGO_INVALID_PARAMS;
    switch (call.client()->health_check()) {
      case mooncake::HC_HEALTHY:
        return MCGO_OK;
      case mooncake::HC_NOT_INITIALIZED:
        return MCGO_INVALID_PARAMS;
      default:
        return -900;  // RPC_FAIL: the master does not answer
    }
  });
}

int32_t mcgo_store_hostname(mcgo_store *s, char *buf, size_t buf_cap, size_t *len) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (call.client() == nullptr || len == nullptr) return MCGO_INVALID_PARAMS;
    const std::string h = call.client()->get_hostname();
    *len = h.size();
    mcgo::args::WriteMessage(buf, buf_cap, h);
    return MCGO_OK;
  });
}

int32_t mcgo_store_register_buffer(mcgo_store *s, uintptr_t addr, uint64_t size) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (call.client() == nullptr || addr == 0 || size == 0) {
      return MCGO_INVALID_PARAMS;
    }
    // A dummy registers only whole pool allocations (upstream answers -1,
    // INTERNAL_ERROR, for anything else): refused here as a bad argument,
    // as every other registration refusal.
    if (call.dummy() && !s->pool.Has(addr, size)) return MCGO_INVALID_PARAMS;
    return call.client()->register_buffer(reinterpret_cast<void *>(addr),
                                          static_cast<size_t>(size));
  });
}

int32_t mcgo_store_unregister_buffer(mcgo_store *s, uintptr_t addr) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (call.client() == nullptr || addr == 0) return MCGO_INVALID_PARAMS;
    if (call.dummy()) {
      if (!s->pool.Has(addr, 0)) return MCGO_INVALID_PARAMS;
      // Upstream answers -1 for pool memory that is not registered.
      const int rc = call.client()->unregister_buffer(reinterpret_cast<void *>(addr));
      return rc == -1 ? MCGO_INVALID_PARAMS : rc;
    }
    return call.client()->unregister_buffer(reinterpret_cast<void *>(addr));
  });
}

static int32_t CopyWrite(mcgo_store *s, const char *key, size_t key_len,
                         const void *data, uint64_t size,
                         mcgo_replicate_config cfg, bool upsert) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    mooncake::ReplicateConfig rc;
    if (call.client() == nullptr || !KeyOk(key, key_len) ||
        (data == nullptr && size != 0) || !ToReplicate(cfg, &rc)) {
      return MCGO_INVALID_PARAMS;
    }
    std::span<const char> value(static_cast<const char *>(data),
                                static_cast<size_t>(size));
    const std::string k = MakeKey(key, key_len);
    return upsert ? call.client()->upsert(k, value, rc)
                  : call.client()->put(k, value, rc);
  });
}

// Spans of the parts; false for a null pointer with a size.
static bool Spans(const uintptr_t *datas, const uint64_t *sizes, size_t n,
                  std::vector<std::span<const char>> *out) {
  if (!mcgo::args::PartsOk(datas, sizes, n)) return false;
  out->reserve(n);
  for (size_t i = 0; i < n; ++i) {
    out->emplace_back(reinterpret_cast<const char *>(datas[i]), static_cast<size_t>(sizes[i]));
  }
  return true;
}

static int32_t PartsWrite(mcgo_store *s, const char *key, size_t key_len,
                          const uintptr_t *datas, const uint64_t *sizes, size_t n,
                          mcgo_replicate_config cfg, bool upsert) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    mooncake::ReplicateConfig rc;
    std::vector<std::span<const char>> parts;
    if (call.client() == nullptr || !KeyOk(key, key_len) || !ToReplicate(cfg, &rc) ||
        !Spans(datas, sizes, n, &parts)) {
      return MCGO_INVALID_PARAMS;
    }
    uint64_t total = 0;
    for (const auto &p : parts) total += p.size();
    // Upstream stores nothing for 0 bytes and reports success.
    if (total == 0) return MCGO_INVALID_PARAMS;
    const std::string k = MakeKey(key, key_len);
    return upsert ? call.client()->upsert_parts(k, std::move(parts), rc)
                  : call.client()->put_parts(k, std::move(parts), rc);
  });
}

int32_t mcgo_store_put_parts(mcgo_store *s, const char *key, size_t key_len,
                             const uintptr_t *datas, const uint64_t *sizes,
                             size_t n_parts, mcgo_replicate_config cfg) {
  return PartsWrite(s, key, key_len, datas, sizes, n_parts, cfg, false);
}

int32_t mcgo_store_upsert_parts(mcgo_store *s, const char *key, size_t key_len,
                                const uintptr_t *datas, const uint64_t *sizes,
                                size_t n_parts, mcgo_replicate_config cfg) {
  return PartsWrite(s, key, key_len, datas, sizes, n_parts, cfg, true);
}

static int32_t BatchCopyWrite(mcgo_store *s, const char *keys, const uint64_t *key_offsets,
                              size_t n, const uintptr_t *datas, const uint64_t *sizes,
                              mcgo_replicate_config cfg, bool upsert) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (call.client() == nullptr) return MCGO_INVALID_PARAMS;
    if (n == 0) return MCGO_OK;
    mooncake::ReplicateConfig rc;
    std::vector<std::span<const char>> values;
    if (!KeysOk(keys, key_offsets, n) || !ToReplicate(cfg, &rc) ||
        !Spans(datas, sizes, n, &values)) {
      return MCGO_INVALID_PARAMS;
    }
    std::vector<std::string> ks = Keys(keys, key_offsets, n);
    // Upstream maps keys to their slices: a key twice would store the
    // first value under both. An empty value fails its allocation.
    std::unordered_set<std::string_view> seen;
    for (size_t i = 0; i < n; ++i) {
      if (values[i].empty() || !seen.insert(ks[i]).second) return MCGO_INVALID_PARAMS;
    }
    return upsert ? call.client()->upsert_batch(ks, values, rc)
                  : call.client()->put_batch(ks, values, rc);
  });
}

int32_t mcgo_store_put_batch(mcgo_store *s, const char *keys,
                             const uint64_t *key_offsets, size_t n,
                             const uintptr_t *datas, const uint64_t *sizes,
                             mcgo_replicate_config cfg) {
  return BatchCopyWrite(s, keys, key_offsets, n, datas, sizes, cfg, false);
}

int32_t mcgo_store_upsert_batch(mcgo_store *s, const char *keys,
                                const uint64_t *key_offsets, size_t n,
                                const uintptr_t *datas, const uint64_t *sizes,
                                mcgo_replicate_config cfg) {
  return BatchCopyWrite(s, keys, key_offsets, n, datas, sizes, cfg, true);
}

int32_t mcgo_store_put(mcgo_store *s, const char *key, size_t key_len,
                 const void *data, uint64_t size, mcgo_replicate_config cfg) {
  return CopyWrite(s, key, key_len, data, size, cfg, false);
}

int32_t mcgo_store_upsert(mcgo_store *s, const char *key, size_t key_len,
                    const void *data, uint64_t size, mcgo_replicate_config cfg) {
  return CopyWrite(s, key, key_len, data, size, cfg, true);
}

// GetBuffer reads key into the client's local buffer (the copying gets
// stage objects there): 0 with *h set, or an error code.
static int64_t GetBuffer(mooncake::PyClient *c, const std::string &k,
                         std::shared_ptr<mooncake::BufferHandle> *h) {
  *h = c->get_buffer(k);
  if (*h) return 0;
  // get_buffer drops the code: ask for the size to recover it.
  const int64_t sz = c->getSize(k);
  if (sz < 0) return sz;
  return MCGO_INVALID_PARAMS;  // e.g. larger than the local buffer
}

namespace {
// A read held between mcgo_store_get_begin and mcgo_store_get_finish: the
// handle keeps the object's bytes in the client's local buffer.
struct HeldGet {
  std::shared_ptr<mooncake::BufferHandle> h;
};
}  // namespace

int64_t mcgo_store_get_begin(mcgo_store *s, const char *key, size_t key_len,
                       uintptr_t *handle) {
  if (handle != nullptr) *handle = 0;
  return Guard64([&]() -> int64_t {
    Call call(s);
    if (call.client() == nullptr || handle == nullptr ||
        !KeyOk(key, key_len)) {
      return MCGO_INVALID_PARAMS;
    }
    std::shared_ptr<mooncake::BufferHandle> h;
    const int64_t r = GetBuffer(call.client(), MakeKey(key, key_len), &h);
    if (r < 0) return r;
    const int64_t n = static_cast<int64_t>(h->size());
    *handle = reinterpret_cast<uintptr_t>(new HeldGet{std::move(h)});
    return n;
  });
}

int32_t mcgo_store_get_finish(uintptr_t handle, void *dst, uint64_t dst_cap) {
  if (handle == 0) return MCGO_INVALID_PARAMS;
  return Guard32([&]() -> int32_t {
    std::unique_ptr<HeldGet> held(reinterpret_cast<HeldGet *>(handle));
    if (dst == nullptr && dst_cap == 0) return MCGO_OK;
    if (dst == nullptr) return MCGO_INVALID_PARAMS;
    const uint64_t n = held->h->size();
    if (dst_cap < n) return MCGO_BUFFER_OVERFLOW;
    if (n > 0) std::memcpy(dst, held->h->ptr(), static_cast<size_t>(n));
    return MCGO_OK;
  });
}

static int32_t ZeroCopyWrite(mcgo_store *s, const char *key, size_t key_len,
                             uintptr_t addr, uint64_t size,
                             mcgo_replicate_config cfg, bool upsert) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    mooncake::ReplicateConfig rc;
    if (call.client() == nullptr || !KeyOk(key, key_len) ||
        !ToReplicate(cfg, &rc)) {
      return MCGO_INVALID_PARAMS;
    }
    const std::string k = MakeKey(key, key_len);
    void *buf = reinterpret_cast<void *>(addr);
    const size_t n = static_cast<size_t>(size);
    return upsert ? call.client()->upsert_from(k, buf, n, rc)
                  : call.client()->put_from(k, buf, n, rc);
  });
}

int32_t mcgo_store_put_from(mcgo_store *s, const char *key, size_t key_len,
                      uintptr_t addr, uint64_t size, mcgo_replicate_config cfg) {
  return ZeroCopyWrite(s, key, key_len, addr, size, cfg, false);
}

int32_t mcgo_store_upsert_from(mcgo_store *s, const char *key, size_t key_len,
                         uintptr_t addr, uint64_t size,
                         mcgo_replicate_config cfg) {
  return ZeroCopyWrite(s, key, key_len, addr, size, cfg, true);
}

int64_t mcgo_store_get_into(mcgo_store *s, const char *key, size_t key_len,
                      uintptr_t addr, uint64_t size) {
  return Guard64([&]() -> int64_t {
    Call call(s);
    if (call.client() == nullptr || !KeyOk(key, key_len)) {
      return MCGO_INVALID_PARAMS;
    }
    return call.client()->get_into(MakeKey(key, key_len),
                                   reinterpret_cast<void *>(addr),
                                   static_cast<size_t>(size));
  });
}

static int32_t BatchWrite(mcgo_store *s, const char *keys,
                          const uint64_t *key_offsets, size_t n,
                          const uintptr_t *addrs, const uint64_t *sizes,
                          mcgo_replicate_config cfg, int64_t *results,
                          bool upsert) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (int32_t rc = BatchPrologue(call.client(), keys, key_offsets, n, results)) {
      return rc;
    }
    mooncake::ReplicateConfig rc;
    // Upstream fails every key of a single-buffer batch put that asks for
    // same-node allocation; like the embedded engine, refuse the call.
    if (addrs == nullptr || sizes == nullptr || !ToReplicate(cfg, &rc) ||
        rc.prefer_alloc_in_same_node) {
      return Refuse(results, n, MCGO_INVALID_PARAMS);
    }
    auto k = Keys(keys, key_offsets, n);
    auto p = Ptrs(addrs, n);
    auto z = Sizes(sizes, n);
    if (upsert) return Results(call.client()->batch_upsert_from(k, p, z, rc), n, results);
    return Results(call.client()->batch_put_from(k, p, z, rc), n, results);
  });
}

int32_t mcgo_store_batch_put_from(mcgo_store *s, const char *keys,
                            const uint64_t *key_offsets, size_t n,
                            const uintptr_t *addrs, const uint64_t *sizes,
                            mcgo_replicate_config cfg, int64_t *results) {
  return BatchWrite(s, keys, key_offsets, n, addrs, sizes, cfg, results, false);
}

int32_t mcgo_store_batch_upsert_from(mcgo_store *s, const char *keys,
                               const uint64_t *key_offsets, size_t n,
                               const uintptr_t *addrs, const uint64_t *sizes,
                               mcgo_replicate_config cfg, int64_t *results) {
  return BatchWrite(s, keys, key_offsets, n, addrs, sizes, cfg, results, true);
}

int32_t mcgo_store_batch_get_into(mcgo_store *s, const char *keys,
                            const uint64_t *key_offsets, size_t n,
                            const uintptr_t *addrs, const uint64_t *sizes,
                            int64_t *results) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (int32_t rc = BatchPrologue(call.client(), keys, key_offsets, n, results)) {
      return rc;
    }
    if (addrs == nullptr || sizes == nullptr) {
      return Refuse(results, n, MCGO_INVALID_PARAMS);
    }
    return Results(call.client()->batch_get_into(Keys(keys, key_offsets, n),
                                                 Ptrs(addrs, n), Sizes(sizes, n)),
                   n, results);
  });
}

static int32_t BatchWriteMulti(mcgo_store *s, const char *keys,
                               const uint64_t *key_offsets, size_t n,
                               const uintptr_t *addrs, const uint64_t *sizes,
                               const uint64_t *buf_offsets,
                               mcgo_replicate_config cfg, int64_t *results,
                               bool upsert) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (int32_t rc = BatchPrologue(call.client(), keys, key_offsets, n, results)) {
      return rc;
    }
    mooncake::ReplicateConfig rc;
    // Upstream fails every key when same-node allocation asks for more than
    // one replica; like the embedded engine, refuse the call.
    if (!CsrOk(addrs, sizes, buf_offsets, n) || !ToReplicate(cfg, &rc) ||
        (rc.prefer_alloc_in_same_node && rc.replica_num != 1)) {
      return Refuse(results, n, MCGO_INVALID_PARAMS);
    }
    std::vector<std::vector<void *>> ptrs;
    std::vector<std::vector<size_t>> szs;
    Nested(addrs, sizes, buf_offsets, n, &ptrs, &szs);
    auto k = Keys(keys, key_offsets, n);
    if (upsert) {
      return Results(call.client()->batch_upsert_from_multi_buffers(k, ptrs, szs, rc),
                     n, results);
    }
    return Results(call.client()->batch_put_from_multi_buffers(k, ptrs, szs, rc), n,
                   results);
  });
}

int32_t mcgo_store_batch_put_from_multi_buffers(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *buf_offsets,
    mcgo_replicate_config cfg, int64_t *results) {
  return BatchWriteMulti(s, keys, key_offsets, n, addrs, sizes, buf_offsets, cfg,
                         results, false);
}

int32_t mcgo_store_batch_upsert_from_multi_buffers(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *buf_offsets,
    mcgo_replicate_config cfg, int64_t *results) {
  return BatchWriteMulti(s, keys, key_offsets, n, addrs, sizes, buf_offsets, cfg,
                         results, true);
}

int32_t mcgo_store_batch_get_into_multi_buffers(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *buf_offsets,
    int32_t prefer_same_node, int64_t *results) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (int32_t rc = BatchPrologue(call.client(), keys, key_offsets, n, results)) {
      return rc;
    }
    if (!CsrOk(addrs, sizes, buf_offsets, n)) {
      return Refuse(results, n, MCGO_INVALID_PARAMS);
    }
    std::vector<std::vector<void *>> ptrs;
    std::vector<std::vector<size_t>> szs;
    Nested(addrs, sizes, buf_offsets, n, &ptrs, &szs);
    return Results(call.client()->batch_get_into_multi_buffers(
                       Keys(keys, key_offsets, n), ptrs, szs, prefer_same_node != 0),
                   n, results);
  });
}

int32_t mcgo_store_is_exist(mcgo_store *s, const char *key, size_t key_len) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (call.client() == nullptr || !KeyOk(key, key_len)) return MCGO_INVALID_PARAMS;
    return call.client()->isExist(MakeKey(key, key_len));
  });
}

int32_t mcgo_store_batch_is_exist(mcgo_store *s, const char *keys,
                            const uint64_t *key_offsets, size_t n,
                            int64_t *results) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (int32_t rc = BatchPrologue(call.client(), keys, key_offsets, n, results)) {
      return rc;
    }
    return Results(call.client()->batchIsExist(Keys(keys, key_offsets, n)), n, results);
  });
}

int64_t mcgo_store_get_size(mcgo_store *s, const char *key, size_t key_len) {
  return Guard64([&]() -> int64_t {
    Call call(s);
    if (call.client() == nullptr || !KeyOk(key, key_len)) return MCGO_INVALID_PARAMS;
    return call.client()->getSize(MakeKey(key, key_len));
  });
}

int32_t mcgo_store_remove(mcgo_store *s, const char *key, size_t key_len,
                    int32_t force) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (call.client() == nullptr || !KeyOk(key, key_len)) return MCGO_INVALID_PARAMS;
    return call.client()->remove(MakeKey(key, key_len), force != 0);
  });
}

// ToDesc maps upstream's descriptor variant onto mcgo_replica_desc and
// its location string.
static mcgo_replica_desc ToDesc(const mooncake::Replica::Descriptor &r, std::string *location) {
  mcgo_replica_desc d{};
  d.id = static_cast<uint64_t>(r.id);
  d.status = static_cast<int32_t>(r.status);
  std::visit(
      [&](const auto &v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, mooncake::MemoryDescriptor> ||
                      std::is_same_v<T, mooncake::NoFDescriptor>) {
          d.kind = std::is_same_v<T, mooncake::MemoryDescriptor> ? MCGO_REPLICA_MEMORY : MCGO_REPLICA_NOF;
          d.size = v.buffer_descriptor.size_;
          d.address = v.buffer_descriptor.buffer_address_;
          *location = v.buffer_descriptor.transport_endpoint_;
        } else if constexpr (std::is_same_v<T, mooncake::DiskDescriptor>) {
          d.kind = MCGO_REPLICA_DISK;
          d.size = v.object_size;
          *location = v.file_path;
        } else if constexpr (std::is_same_v<T, mooncake::LocalDiskDescriptor>) {
          d.kind = MCGO_REPLICA_LOCAL_DISK;
          d.size = v.object_size;
          *location = v.transport_endpoint;
        } else {
          d.kind = MCGO_REPLICA_DFS;
          d.size = v.object_size;
          d.file_offset = v.offset;
          *location = v.file_path;
        }
      },
      r.descriptor_variant);
  return d;
}

int32_t mcgo_store_batch_get_replica_desc(mcgo_store *s, const char *keys,
                                          const uint64_t *key_offsets, size_t n,
                                          mcgo_replica_desc *descs, size_t descs_cap,
                                          char *names, size_t names_cap,
                                          size_t *descs_needed, size_t *names_needed,
                                          int64_t *results) {
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (n > 0) {
      if (int32_t rc = BatchPrologue(call.client(), keys, key_offsets, n, results)) return rc;
    } else if (call.client() == nullptr) {
      return MCGO_INVALID_PARAMS;
    }
    if (!mcgo::DescArgsOk(descs, descs_cap, names, names_cap)) {
      return Refuse(results, n, MCGO_INVALID_PARAMS);
    }
    // Upstream's standalone real client (real_client_main.cpp) serves no
    // get_replica_desc or batch_get_replica_desc: a DummyClient's call fails
    // ("the rpc function not registered") and answers an empty map, which
    // would read as "no such key".
    if (call.dummy()) return Refuse(results, n, MCGO_NOT_SUPPORTED);
    const std::vector<std::string> ks = Keys(keys, key_offsets, n);
    // Upstream's batch answer is a map without the failed keys: a key that
    // is missing, or not readable yet, has no entry (or an empty list).
    const auto found = n > 0 ? call.client()->batch_get_replica_desc(ks)
                             : std::map<std::string, std::vector<mooncake::Replica::Descriptor>>{};
    mcgo::DescWriter w(descs, descs_cap, names, names_cap);
    for (size_t i = 0; i < n; ++i) {
      auto it = found.find(ks[i]);
      if (it == found.end() || it->second.empty()) {
        results[i] = MCGO_OBJECT_NOT_FOUND;
        continue;
      }
      results[i] = static_cast<int64_t>(it->second.size());
      for (const auto &r : it->second) {
        std::string location;
        const mcgo_replica_desc d = ToDesc(r, &location);
        w.Add(d, location);
      }
    }
    return w.Finish(descs_needed, names_needed);
  });
}

int32_t mcgo_store_batch_replica_clear(mcgo_store *s, const char *keys,
                                       const uint64_t *key_offsets, size_t n,
                                       const char *segment, size_t segment_len,
                                       int64_t *results) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (int32_t rc = BatchPrologue(call.client(), keys, key_offsets, n, results)) return rc;
    if (segment == nullptr && segment_len > 0) return Refuse(results, n, MCGO_INVALID_PARAMS);
    // Upstream's DummyClient answers every clear with "nothing cleared"
    // without asking anyone: refused instead, so no caller mistakes it.
    if (call.dummy()) return Refuse(results, n, MCGO_NOT_SUPPORTED);
    const std::vector<std::string> ks = Keys(keys, key_offsets, n);
    // Upstream answers with the keys it cleared (and an empty list when
    // the call fails as a whole).
    const std::vector<std::string> cleared = call.client()->batch_replica_clear(
        ks, std::string(segment == nullptr ? "" : segment, segment_len));
    const std::unordered_set<std::string_view> done(cleared.begin(), cleared.end());
    for (size_t i = 0; i < n; ++i) results[i] = done.count(ks[i]) ? 1 : 0;
    return MCGO_OK;
  });
}

int32_t mcgo_store_batch_remove(mcgo_store *s, const char *keys,
                                const uint64_t *key_offsets, size_t n,
                                int32_t force, int64_t *results) {
  return KeysOnly(s, keys, key_offsets, n, results, [&](mooncake::PyClient *c, const std::vector<std::string> &ks) {
    return c->batchRemove(ks, force != 0);
  });
}

int64_t mcgo_store_remove_by_regex(mcgo_store *s, const char *pattern,
                             size_t pattern_len, int32_t force) {
  return Guard64([&]() -> int64_t {
    Call call(s);
    if (call.client() == nullptr || !KeyOk(pattern, pattern_len)) {
      return MCGO_INVALID_PARAMS;
    }
    // Upstream's master runs the pattern through std::regex over every key:
    // only the subset that cannot crash or hang it is sent (key_pattern.h).
    mcgo::pattern::Program program;
    std::string why;
    if (!mcgo::pattern::Compile(std::string_view(pattern == nullptr ? "" : pattern, pattern_len), &program, &why)) {
      return MCGO_INVALID_PARAMS;
    }
    return call.client()->removeByRegex(MakeKey(pattern, pattern_len), force != 0);
  });
}

int64_t mcgo_store_remove_all(mcgo_store *s, int32_t force) {
  return Guard64([&]() -> int64_t {
    Call call(s);
    if (call.client() == nullptr) return MCGO_INVALID_PARAMS;
    return call.client()->removeAll(force != 0);
  });
}

}  // extern "C"

// ---- segments ---------------------------------------------------------------

namespace {

// Copies upstream's segment ids out. More than cap: every segment is
// unmounted again (unmount undoes it) and MCGO_BUFFER_OVERFLOW returned.
int32_t MountedIds(const std::vector<std::string> &got, mcgo_segment_id *ids, size_t cap,
                   size_t *n_ids, const std::function<void(const std::vector<std::string> &)> &unmount) {
  *n_ids = got.size();
  std::vector<mcgo_segment_id> parsed(got.size());
  bool ok = got.size() <= cap;
  for (size_t i = 0; ok && i < got.size(); ++i) ok = mcgo::args::ParseSegmentId(got[i], &parsed[i]);
  if (!ok) {
    unmount(got);
    return got.size() > cap ? MCGO_BUFFER_OVERFLOW : MCGO_INTERNAL_ERROR;
  }
  for (size_t i = 0; i < parsed.size(); ++i) ids[i] = parsed[i];
  return MCGO_OK;
}

// Upstream unmounts a list and reports only its first error, -1 for an id
// it does not know: one call per id gives each its own result.
int32_t UnmountEach(mcgo_store *s, const mcgo_segment_id *ids, size_t n, uint64_t grace,
                    int64_t *results, bool free_memory) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (results == nullptr) return MCGO_INVALID_PARAMS;
    if (call.client() == nullptr || ids == nullptr) return Refuse(results, n, MCGO_INVALID_PARAMS);
    if (int32_t rc = call.NeedReal()) return Refuse(results, n, rc);
    int32_t first = MCGO_OK;
    for (size_t i = 0; i < n; ++i) {
      const std::vector<std::string> one{mcgo::args::SegmentIdString(ids[i])};
      int rc = free_memory ? call.real()->unmountAndFreeSegment(one, grace)
                           : call.real()->unmountSegment(one, grace);
      if (rc == -1) rc = MCGO_INVALID_PARAMS;  // not in this client's records of that kind
      results[i] = rc;
      if (rc != 0 && first == MCGO_OK) first = rc;
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
  return Guard32([&]() -> int32_t {
    Call call(s);
    uint64_t aligned = 0;
    std::string proto;
    if (call.dummy()) return MCGO_NOT_SUPPORTED;  // checked first: a dummy has no protocol
    if (call.client() == nullptr ||
        !mcgo::args::AllocateArgsOk(ids, ids_cap, n_ids, allocated, size, protocol, s->protocol, &aligned, &proto)) {
      return MCGO_INVALID_PARAMS;
    }
    *n_ids = 0;
    *allocated = 0;
    std::vector<std::string> got;
    size_t done = 0;
    const int rc = call.real()->allocateAndMountSegment(static_cast<size_t>(size), proto,
                                                          location == nullptr ? "" : location, got, &done);
    if (rc != 0) return MCGO_INTERNAL_ERROR;  // upstream says -1 for any failure (its log has why)
    const int32_t out = MountedIds(got, ids, ids_cap, n_ids, [&](const std::vector<std::string> &all) {
      call.real()->unmountAndFreeSegment(all, 0);
    });
    if (out == MCGO_OK) *allocated = done;
    return out;
  });
}

int32_t mcgo_store_mount_segment(mcgo_store *s, const char *path, uint64_t offset,
                                 uint64_t size, const char *protocol, const char *location,
                                 mcgo_segment_id *ids, size_t ids_cap, size_t *n_ids) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    std::string proto;
    if (call.dummy()) return MCGO_NOT_SUPPORTED;
    if (call.client() == nullptr ||
        !mcgo::args::MountArgsOk(ids, ids_cap, n_ids, path, offset, size, protocol, s->protocol, &proto)) {
      return MCGO_INVALID_PARAMS;
    }
    *n_ids = 0;
    std::vector<std::string> got;
    const int rc = call.real()->mountSegment(path, static_cast<size_t>(offset), static_cast<size_t>(size),
                                               proto, location == nullptr ? "" : location, got);
    if (rc != 0) return MCGO_INTERNAL_ERROR;  // -1 for any failure (its log has why)
    return MountedIds(got, ids, ids_cap, n_ids, [&](const std::vector<std::string> &all) {
      call.real()->unmountSegment(all, 0);
    });
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

// ---- sessions -----------------------------------------------------------------

namespace {

// Splits a CSR column (sizes or offsets) into upstream's nested vectors.
std::vector<std::vector<size_t>> NestedColumn(const uint64_t *col, const uint64_t *bo, size_t n) {
  std::vector<std::vector<size_t>> out(n);
  for (size_t i = 0; i < n; ++i) out[i].assign(col + bo[i], col + bo[i + 1]);
  return out;
}

// The range calls: the checks both backends make, then upstream's call with
// nested vectors.
template <typename F>
int32_t RangeCall(mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
                  const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *offsets,
                  const uint64_t *bo, int64_t *results, F &&call_upstream) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (int32_t rc = BatchPrologue(call.client(), keys, key_offsets, n, results)) return rc;
    if (call.dummy()) return Refuse(results, n, MCGO_NOT_SUPPORTED);  // sessions are RealClient's
    if (!mcgo::args::RangesOk(addrs, sizes, offsets, bo, n)) return Refuse(results, n, MCGO_INVALID_PARAMS);
    std::vector<std::vector<void *>> ptrs;
    std::vector<std::vector<size_t>> lens;
    Nested(addrs, sizes, bo, n, &ptrs, &lens);
    return Results(call_upstream(call.client(), Keys(keys, key_offsets, n), ptrs, lens,
                                 NestedColumn(offsets, bo, n)),
                   n, results);
  });
}

// Calls upstream with the keys that are not refused (refused[i] holds the
// code of a key refused here, else 0) and scatters its results back.
template <typename F>
int32_t SubsetCall(const std::vector<std::string> &ks, const std::vector<int64_t> &refused,
                   int64_t *results, F &&call_upstream) {
  std::vector<size_t> index;
  std::vector<std::string> sub;
  for (size_t i = 0; i < ks.size(); ++i) {
    results[i] = refused[i];
    if (refused[i] == 0) {
      index.push_back(i);
      sub.push_back(ks[i]);
    }
  }
  if (sub.empty()) return MCGO_OK;
  const auto got = call_upstream(sub, index);
  if (got.size() != sub.size()) {
    for (size_t i : index) results[i] = MCGO_INTERNAL_ERROR;
    return MCGO_INTERNAL_ERROR;
  }
  for (size_t k = 0; k < index.size(); ++k) results[index[k]] = static_cast<int64_t>(got[k]);
  return MCGO_OK;
}

}  // namespace

extern "C" {

int32_t mcgo_store_batch_get_session_start(mcgo_store *s, const char *keys,
                                           const uint64_t *key_offsets, size_t n,
                                           int64_t *results) {
  return KeysOnly<true>(s, keys, key_offsets, n, results, [&](mooncake::PyClient *c, const std::vector<std::string> &ks) {
    return c->batch_get_session_start(ks);
  });
}

int32_t mcgo_store_batch_get_into_multi_buffer_ranges(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *offsets,
    const uint64_t *buf_offsets, int64_t *results) {
  return RangeCall(s, keys, key_offsets, n, addrs, sizes, offsets, buf_offsets, results,
                   [](mooncake::PyClient *c, const auto &ks, const auto &p, const auto &l, const auto &o) {
                     return c->batch_get_into_multi_buffer_ranges(ks, p, l, o);
                   });
}

int32_t mcgo_store_batch_get_session_end(mcgo_store *s, const char *keys,
                                         const uint64_t *key_offsets, size_t n) {
  return Guard32([&]() -> int32_t {
    if (n == 0) return MCGO_OK;
    Call call(s);
    if (call.client() == nullptr || !KeysOk(keys, key_offsets, n)) return MCGO_INVALID_PARAMS;
    if (call.dummy()) return MCGO_NOT_SUPPORTED;
    return call.client()->batch_get_session_end(Keys(keys, key_offsets, n));
  });
}

int32_t mcgo_store_batch_put_session_start(mcgo_store *s, const char *keys,
                                           const uint64_t *key_offsets, size_t n,
                                           const uint64_t *sizes, mcgo_replicate_config cfg,
                                           int64_t *results) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (int32_t rc = BatchPrologue(call.client(), keys, key_offsets, n, results)) return rc;
    if (call.dummy()) return Refuse(results, n, MCGO_NOT_SUPPORTED);
    mooncake::ReplicateConfig rc;
    if (sizes == nullptr || !ToReplicate(cfg, &rc)) return Refuse(results, n, MCGO_INVALID_PARAMS);
    // Refused here as the embedded engine refuses them: size 0, and a key
    // a second time in one call (upstream would reserve it twice).
    const std::vector<std::string> ks = Keys(keys, key_offsets, n);
    std::vector<int64_t> refused(n, 0);
    std::unordered_set<std::string_view> seen;
    for (size_t i = 0; i < n; ++i) {
      if (sizes[i] == 0 || !seen.insert(ks[i]).second) refused[i] = MCGO_INVALID_PARAMS;
    }
    return SubsetCall(ks, refused, results, [&](const std::vector<std::string> &sub, const std::vector<size_t> &index) {
      std::vector<size_t> sub_sizes;
      for (size_t i : index) sub_sizes.push_back(static_cast<size_t>(sizes[i]));
      return call.client()->batch_put_session_start(sub, sub_sizes, rc);
    });
  });
}

int32_t mcgo_store_batch_put_from_multi_buffer_ranges(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *offsets,
    const uint64_t *buf_offsets, int64_t *results) {
  return RangeCall(s, keys, key_offsets, n, addrs, sizes, offsets, buf_offsets, results,
                   [](mooncake::PyClient *c, const auto &ks, const auto &p, const auto &l, const auto &o) {
                     return c->batch_put_from_multi_buffer_ranges(ks, p, l, o);
                   });
}

int32_t mcgo_store_batch_put_session_end(mcgo_store *s, const char *keys,
                                         const uint64_t *key_offsets, size_t n,
                                         int64_t *results) {
  return KeysOnly<true>(s, keys, key_offsets, n, results, [&](mooncake::PyClient *c, const std::vector<std::string> &ks) {
    return c->batch_put_session_end(ks);
  });
}

int32_t mcgo_store_batch_put_session_revoke(mcgo_store *s, const char *keys,
                                            const uint64_t *key_offsets, size_t n,
                                            int64_t *results) {
  return KeysOnly<true>(s, keys, key_offsets, n, results, [&](mooncake::PyClient *c, const std::vector<std::string> &ks) {
    return c->batch_put_session_revoke(ks);
  });
}

}  // extern "C"

// ---- copy and move tasks -------------------------------------------------------

namespace {

int32_t TaskId(const tl::expected<mooncake::UUID, mooncake::ErrorCode> &got, mcgo_uuid *task) {
  if (!got) return static_cast<int32_t>(got.error());
  *task = mcgo_uuid{got.value().first, got.value().second};
  return MCGO_OK;
}

}  // namespace

extern "C" {

int32_t mcgo_store_create_copy_task(mcgo_store *s, const char *key, size_t key_len,
                                    const char *targets, uint32_t target_count,
                                    uint64_t targets_len, mcgo_uuid *task) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    std::vector<std::string> names;
    if (call.client() == nullptr || !KeyOk(key, key_len) || task == nullptr ||
        !mcgo::args::ParseNames(target_count, targets, targets_len, &names)) {
      return MCGO_INVALID_PARAMS;
    }
    return TaskId(call.client()->create_copy_task(MakeKey(key, key_len), names), task);
  });
}

int32_t mcgo_store_create_move_task(mcgo_store *s, const char *key, size_t key_len,
                                    const char *source, size_t source_len,
                                    const char *target, size_t target_len, mcgo_uuid *task) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (call.client() == nullptr || !KeyOk(key, key_len) || !KeyOk(source, source_len) ||
        !KeyOk(target, target_len) || task == nullptr) {
      return MCGO_INVALID_PARAMS;
    }
    return TaskId(call.client()->create_move_task(MakeKey(key, key_len), MakeKey(source, source_len),
                                                  MakeKey(target, target_len)),
                  task);
  });
}

int32_t mcgo_store_query_task(mcgo_store *s, mcgo_uuid task, mcgo_task_info *out) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (call.client() == nullptr || out == nullptr) return MCGO_INVALID_PARAMS;
    const auto got = call.client()->query_task(mooncake::UUID{task.first, task.second});
    if (!got) return static_cast<int32_t>(got.error());
    const mooncake::QueryTaskResponse &r = got.value();
    *out = mcgo_task_info{};
    out->id = mcgo_uuid{r.id.first, r.id.second};
    out->type = r.type == mooncake::TaskType::REPLICA_MOVE ? MCGO_TASK_MOVE : MCGO_TASK_COPY;
    switch (r.status) {
      case mooncake::TaskStatus::PENDING: out->status = MCGO_TASK_PENDING; break;
      case mooncake::TaskStatus::PROCESSING: out->status = MCGO_TASK_PROCESSING; break;
      case mooncake::TaskStatus::FAILED: out->status = MCGO_TASK_FAILED; break;
      case mooncake::TaskStatus::SUCCESS: out->status = MCGO_TASK_SUCCESS; break;
    }
    out->created_at_ms = r.created_at_ms_epoch;
    out->updated_at_ms = r.last_updated_at_ms_epoch;
    out->assigned_client = mcgo_uuid{r.assigned_client.first, r.assigned_client.second};
    mcgo::args::WriteMessage(out->message, sizeof out->message, r.message);
    return MCGO_OK;
  });
}

}  // extern "C"

// ---- ranged reads ----------------------------------------------------------------

extern "C" {

int32_t mcgo_store_get_into_ranges(mcgo_store *s, const char *keys, const uint64_t *key_offsets,
                                   size_t n, const uintptr_t *addrs, const uint64_t *sizes,
                                   const uint64_t *offsets, const uint64_t *buf_offsets,
                                   int64_t *results) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (n == 0) return MCGO_OK;
    size_t m = 0;
    if (int32_t rc = mcgo::args::RangedReadArgs(call.client() != nullptr, keys, key_offsets, n, addrs, sizes,
                                                offsets, buf_offsets, results, &m)) {
      return rc;
    }
    // One upstream "buffer" per range, at the range's own address (dst
    // offset 0): upstream sizes a buffer by the registration it starts in,
    // so ranges of one key in different registrations stay independent.
    std::vector<void *> buffers(m);
    std::vector<std::vector<std::string>> all_keys(m);
    std::vector<std::vector<std::vector<size_t>>> dst(m), src(m), len(m);
    for (size_t i = 0; i < n; ++i) {
      const std::string key = KeyAt(keys, key_offsets, i);
      for (uint64_t j = buf_offsets[i]; j < buf_offsets[i + 1]; ++j) {
        buffers[j] = reinterpret_cast<void *>(addrs[j]);
        all_keys[j] = {key};
        dst[j] = {{0}};
        src[j] = {{static_cast<size_t>(offsets[j])}};
        len[j] = {{static_cast<size_t>(sizes[j])}};
      }
    }
    const auto got = call.client()->get_into_ranges(buffers, all_keys, dst, src, len);
    if (got.size() != m) return Refuse(results, m, MCGO_INTERNAL_ERROR);
    for (size_t j = 0; j < m; ++j) {
      results[j] = got[j].size() == 1 && got[j][0].size() == 1 ? got[j][0][0] : MCGO_INTERNAL_ERROR;
    }
    return MCGO_OK;
  });
}

}  // extern "C"

// ---- SSD offload tier ------------------------------------------------------------

extern "C" {

int32_t mcgo_store_unmount_local_disk_segment(mcgo_store *s, uint64_t grace_seconds) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (int32_t rc = call.NeedReal()) return rc;
    const int rc = call.real()->drainLocalDiskSegment(grace_seconds);
    return rc == 0 ? MCGO_OK : MCGO_INTERNAL_ERROR;  // upstream says -1 for any failure
  });
}

int64_t mcgo_store_offload_rpc_read_count(mcgo_store *s) {
  return Guard64([&]() -> int64_t {
    Call call(s);
    if (int32_t rc = call.NeedReal()) return rc;
    return static_cast<int64_t>(call.real()->get_offload_rpc_read_count());
  });
}

}  // extern "C"
