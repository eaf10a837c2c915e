// Dummy clients (mcgo_store_setup_dummy, mcgo_store_alloc_from_mem_pool) on
// the embedded engine: a dummy works on its real client's cluster,
// segment and registrations; registers only whole pool allocations; refuses
// what upstream's DummyClient lacks; and fails, never crashes, once its
// real client is destroyed, also while calls are running.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

using namespace tu;

namespace {

// A dummy of the real client named server; null when setup failed (its code
// in *rc).
mcgo_store *Dummy(const std::string &server, int32_t *rc, uint64_t local = 16 * MiB) {
  mcgo_store *d = nullptr;
  CHECK_EQ(mcgo_store_create(&d), 0);
  char err[256];
  *rc = mcgo_store_setup_dummy(d, 0, local, server.c_str(), err, sizeof err);
  if (*rc != 0) {
    mcgo_store_destroy(d);
    return nullptr;
  }
  return d;
}

}  // namespace

TEST(DummySetupRefusals) {
  int32_t rc = 0;
  for (const char *bad : {"", "127.0.0.1", ":1", "h:0", "h:65536", "h:12x", "h:123456"}) {
    CHECK(Dummy(bad, &rc) == nullptr);
    CHECK_EQ(rc, MCGO_INVALID_PARAMS);
  }
  CHECK(Dummy("127.0.0.1:1", &rc) == nullptr);  // nobody serves there
  CHECK_EQ(rc, MCGO_RPC_FAIL);
  char err[64];
  CHECK_EQ(mcgo_store_setup_dummy(nullptr, 0, 0, "h:1", err, sizeof err), MCGO_INVALID_PARAMS);
  // Set up twice: refused, whichever came first.
  Store real(UniqueMaster("dummy-twice"));
  mcgo_store *d = Dummy(real.Hostname(), &rc);
  CHECK(d != nullptr);
  CHECK_EQ(mcgo_store_setup_dummy(d, 0, 0, real.Hostname().c_str(), err, sizeof err), MCGO_INVALID_PARAMS);
  mcgo_store_config c = Config("x:1", 0, 0);
  CHECK_EQ(mcgo_store_setup(d, &c, err, sizeof err), MCGO_INVALID_PARAMS);
  mcgo_store_destroy(d);
  CHECK_EQ(mcgo_store_setup_dummy(real, 0, 0, real.Hostname().c_str(), err, sizeof err), MCGO_INVALID_PARAMS);
}

TEST(DummyPoolAndData) {
  const std::string m = UniqueMaster("dummy-data");
  Store real(m), peer(m);
  int32_t rc = 0;
  mcgo_store *d = Dummy(real.Hostname(), &rc);
  CHECK(d != nullptr);
  size_t len = 99;
  char name[16];
  CHECK_EQ(mcgo_store_hostname(d, name, sizeof name, &len), 0);
  CHECK_EQ(len, 0u);
  CHECK_EQ(mcgo_store_health_check(d), 0);

  uintptr_t pool = 0, none = 1;
  CHECK_EQ(mcgo_store_alloc_from_mem_pool(d, 0, &pool), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_alloc_from_mem_pool(d, (uint64_t{1} << 40) + 1, &pool), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_alloc_from_mem_pool(d, 4096, nullptr), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_alloc_from_mem_pool(real, 4096, &none), MCGO_NOT_SUPPORTED);
  CHECK_EQ(none, 0u);
  CHECK_EQ(mcgo_store_alloc_from_mem_pool(d, 8192, &pool), 0);
  CHECK(pool != 0);
  Mem heap(8192);
  CHECK_EQ(mcgo_store_register_buffer(d, heap.addr(), 8192), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_register_buffer(d, pool, 4096), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_register_buffer(d, pool + 4096, 4096), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_unregister_buffer(d, pool), MCGO_INVALID_PARAMS);  // not registered yet
  CHECK_EQ(mcgo_store_register_buffer(d, pool, 8192), 0);

  auto *bytes = reinterpret_cast<uint8_t *>(pool);
  Fill(bytes, 4096, 7);
  CHECK_EQ(PutFrom(d, "k", pool, 4096), 0);
  CHECK_EQ(GetInto(d, "k", pool + 4096, 4096), 4096);
  CHECK(HasPattern(bytes + 4096, 4096, 7));
  Mem out(4096, peer);
  CHECK_EQ(GetInto(peer, "k", out.addr(), 4096), 4096);  // the cluster's object
  CHECK(HasPattern(out.data(), 4096, 7));
  CHECK_EQ(PutFrom(d, "h", heap.addr(), 4096), MCGO_TRANSFER_FAIL);  // not registered memory

  // What upstream's DummyClient lacks.
  Keys ks{"k"};
  int64_t res = 0;
  CHECK_EQ(mcgo_store_batch_replica_clear(d, ks.data(), ks.offsets(), 1, "", 0, &res), MCGO_NOT_SUPPORTED);
  CHECK_EQ(res, MCGO_NOT_SUPPORTED);
  CHECK_EQ(mcgo_store_batch_get_session_start(d, ks.data(), ks.offsets(), 1, &res), MCGO_NOT_SUPPORTED);
  CHECK_EQ(mcgo_store_batch_get_session_end(d, ks.data(), ks.offsets(), 1), MCGO_NOT_SUPPORTED);
  CHECK_EQ(mcgo_store_offload_rpc_read_count(d), MCGO_NOT_SUPPORTED);
  CHECK_EQ(mcgo_store_unmount_local_disk_segment(d, 0), MCGO_NOT_SUPPORTED);
  mcgo_segment_id ids[2];
  size_t n_ids = 0;
  uint64_t got = 0;
  CHECK_EQ(mcgo_store_allocate_and_mount_segment(d, kMinSegment, nullptr, nullptr, ids, 2, &n_ids, &got),
           MCGO_NOT_SUPPORTED);
  CHECK_EQ(mcgo_store_unmount_segment(d, ids, 1, 0, &res), MCGO_NOT_SUPPORTED);

  CHECK_EQ(mcgo_store_unregister_buffer(d, pool), 0);
  mcgo_store_destroy(d);  // unmaps the pool; the object stays the real client's
  CHECK_EQ(GetInto(peer, "k", out.addr(), 4096), 4096);
  CHECK_EQ(mcgo_store_health_check(real), 0);
}

// The real client goes while dummy calls run: they fail from then on, and
// nothing crashes or races (run under ASan and TSan).
TEST(RealClientDestroyedUnderDummies) {
  const std::string m = UniqueMaster("dummy-gone");
  auto *real = new Store(m);
  int32_t rc = 0;
  mcgo_store *d = Dummy(real->Hostname(), &rc);
  CHECK(d != nullptr);
  uintptr_t pool = 0;
  CHECK_EQ(mcgo_store_alloc_from_mem_pool(d, 64 * KiB, &pool), 0);
  CHECK_EQ(mcgo_store_register_buffer(d, pool, 64 * KiB), 0);
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0}, failed{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 2; ++w) {
    workers.emplace_back([&, w] {
      const uintptr_t mine = pool + static_cast<uintptr_t>(w) * 32 * KiB;  // disjoint halves
      for (int i = 0; !stop.load(); ++i) {
        const std::string key = "w" + std::to_string(w) + "-" + std::to_string(i);
        if (PutFrom(d, key, mine, 16 * KiB) == 0 && GetInto(d, key, mine + 16 * KiB, 16 * KiB) == 16 * KiB) {
          ok.fetch_add(1);
        } else {
          failed.fetch_add(1);
        }
      }
    });
  }
  while (ok.load() < 50) std::this_thread::yield();
  delete real;
  const int failed_before = failed.load();
  while (failed.load() < failed_before + 20) std::this_thread::yield();
  stop = true;
  for (auto &t : workers) t.join();
  CHECK_EQ(mcgo_store_health_check(d), MCGO_RPC_FAIL);
  CHECK(PutFrom(d, "after", pool, 16) != 0);
  mcgo_store_destroy(d);
}

MCGO_TEST_MAIN()
