// The native store's dummy clients (package mooncake's dummy.go): after
// mcgo_store_setup_dummy the store holds upstream's DummyClient, talking to
// a standalone real client (mooncake_client), instead of its RealClient.

#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>

#include "common/dummy_args.h"
#include "dummy_client.h"
#include "native/store/call.h"
#include "shm_helper.h"

using namespace mcgo::native::store;  // NOLINT: the store part's frame (call.h)

namespace mcgo::native::store {

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

}  // namespace mcgo::native::store

extern "C" {

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

}  // extern "C"
