// Identity, lifecycle, setup validation, hostnames, calls before setup,
// buffer registration, cluster sharing and lifetime.
#include <string>

#include "test_util.h"

using namespace tu;

TEST(Identity) {
  CHECK_EQ(mcgo_abi_version(), 8u);
  CHECK_EQ(mcgo_abi_version(), static_cast<uint32_t>(MCGO_ABI_VERSION));
  CHECK_EQ(std::string(mcgo_backend_name()), "embedded");
  CHECK_EQ(std::string(mcgo_upstream_commit()), "");
  // Accepts, honours none of, the setup options; has every call and option
  // that upstream versions differ in.
  CHECK_EQ(mcgo_store_capabilities(), MCGO_CAP_SESSIONS | MCGO_CAP_MULTI_BUFFER_UPSERT |
                                          MCGO_CAP_SOFT_PIN_ACTIONS | MCGO_CAP_UNMOUNT_LOCAL_DISK);
}

// mcgo_set_log: the embedded engine writes no log but refuses what the
// native backend refuses, and keeps the first log directory.
TEST(SetLog) {
  CHECK_EQ(mcgo_set_log(-1, nullptr, 0), MCGO_OK);
  CHECK_EQ(mcgo_set_log(2, nullptr, 0), MCGO_OK);
  CHECK_EQ(mcgo_set_log(4, nullptr, 0), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_set_log(-2, nullptr, 0), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_set_log(0, nullptr, 3), MCGO_INVALID_PARAMS);
  const std::string missing = "/nonexistent/mcgo-logs";
  CHECK_EQ(mcgo_set_log(-1, missing.data(), missing.size()), MCGO_INVALID_PARAMS);
  const std::string tmp = "/tmp", root = "/";
  CHECK_EQ(mcgo_set_log(-1, tmp.data(), tmp.size()), MCGO_OK);
  CHECK_EQ(mcgo_set_log(1, tmp.data(), tmp.size()), MCGO_OK);  // the same again
  CHECK_EQ(mcgo_set_log(-1, root.data(), root.size()), MCGO_INVALID_PARAMS);
}

TEST(CreateDestroy) {
  CHECK_EQ(mcgo_store_create(nullptr), MCGO_INVALID_PARAMS);
  mcgo_store *s = nullptr;
  CHECK_EQ(mcgo_store_create(&s), 0);
  CHECK(s != nullptr);
  mcgo_store_destroy(s);       // never set up
  mcgo_store_destroy(nullptr); // ignored
}

// Every call on a client that is not set up (or NULL) is refused with -600;
// batch calls fill every result.
static void CheckRefusesEverything(mcgo_store *s) {
  const std::string key = "k";
  char buf[64];
  size_t len = 0;
  uint64_t osize = 0;
  int64_t results[3] = {7, 7, 7};
  Keys keys{"a", "b", "c"};
  uintptr_t addrs[3] = {A(buf), A(buf), A(buf)};
  uint64_t sizes[3] = {1, 1, 1};
  uint64_t bo[4] = {0, 1, 2, 3};
  auto all = [&](int64_t code) {
    bool ok = results[0] == code && results[1] == code && results[2] == code;
    results[0] = results[1] = results[2] = 7;
    return ok;
  };

  CHECK_EQ(mcgo_store_health_check(s), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_hostname(s, buf, sizeof buf, &len), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_register_buffer(s, A(buf), sizeof buf), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_unregister_buffer(s, A(buf)), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_put(s, "k", 1, "v", 1, Cfg()), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_upsert(s, "k", 1, "v", 1, Cfg()), MCGO_INVALID_PARAMS);
  CHECK_EQ(tu::GetCopy(s, "k", 1, buf, sizeof buf, &osize), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_put_from(s, "k", 1, A(buf), 1, Cfg()), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_upsert_from(s, "k", 1, A(buf), 1, Cfg()), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_get_into(s, "k", 1, A(buf), 1), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_batch_put_from(s, keys.data(), keys.offsets(), 3, addrs, sizes,
                               Cfg(), results),
           MCGO_INVALID_PARAMS);
  CHECK(all(MCGO_INVALID_PARAMS));
  CHECK_EQ(mcgo_store_batch_upsert_from(s, keys.data(), keys.offsets(), 3, addrs,
                                  sizes, Cfg(), results),
           MCGO_INVALID_PARAMS);
  CHECK(all(MCGO_INVALID_PARAMS));
  CHECK_EQ(mcgo_store_batch_get_into(s, keys.data(), keys.offsets(), 3, addrs, sizes,
                               results),
           MCGO_INVALID_PARAMS);
  CHECK(all(MCGO_INVALID_PARAMS));
  CHECK_EQ(mcgo_store_batch_put_from_multi_buffers(s, keys.data(), keys.offsets(), 3,
                                             addrs, sizes, bo, Cfg(), results),
           MCGO_INVALID_PARAMS);
  CHECK(all(MCGO_INVALID_PARAMS));
  CHECK_EQ(mcgo_store_batch_upsert_from_multi_buffers(s, keys.data(), keys.offsets(),
                                                3, addrs, sizes, bo, Cfg(),
                                                results),
           MCGO_INVALID_PARAMS);
  CHECK(all(MCGO_INVALID_PARAMS));
  CHECK_EQ(mcgo_store_batch_get_into_multi_buffers(s, keys.data(), keys.offsets(), 3,
                                             addrs, sizes, bo, 0, results),
           MCGO_INVALID_PARAMS);
  CHECK(all(MCGO_INVALID_PARAMS));
  CHECK_EQ(mcgo_store_is_exist(s, "k", 1), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_batch_is_exist(s, keys.data(), keys.offsets(), 3, results),
           MCGO_INVALID_PARAMS);
  CHECK(all(MCGO_INVALID_PARAMS));
  CHECK_EQ(mcgo_store_get_size(s, "k", 1), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_remove(s, "k", 1, 0), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_batch_remove(s, keys.data(), keys.offsets(), 3, 1, results),
           MCGO_INVALID_PARAMS);
  CHECK(all(MCGO_INVALID_PARAMS));
  CHECK_EQ(mcgo_store_remove_by_regex(s, ".*", 2, 0), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_remove_all(s, 1), MCGO_INVALID_PARAMS);
}

TEST(CallsBeforeSetupAreRefused) {
  CheckRefusesEverything(nullptr);
  mcgo_store *s = nullptr;
  CHECK_EQ(mcgo_store_create(&s), 0);
  CheckRefusesEverything(s);
  // A failed setup leaves the client unusable as well.
  mcgo_store_config c = Config("m", kMinSegment, MiB, "127.0.0.1", "udp");
  CHECK_EQ(mcgo_store_setup(s, &c, nullptr, 0), MCGO_INVALID_PARAMS);
  CheckRefusesEverything(s);
  mcgo_store_destroy(s);
}

TEST(EmptyBatchIsANoOp) {
  // n == 0 returns 0 and touches nothing, even before setup.
  mcgo_store *s = nullptr;
  CHECK_EQ(mcgo_store_create(&s), 0);
  int64_t r = 42;
  CHECK_EQ(mcgo_store_batch_put_from(s, nullptr, nullptr, 0, nullptr, nullptr, Cfg(), &r), 0);
  CHECK_EQ(mcgo_store_batch_get_into(s, nullptr, nullptr, 0, nullptr, nullptr, nullptr), 0);
  CHECK_EQ(mcgo_store_batch_is_exist(s, nullptr, nullptr, 0, nullptr), 0);
  CHECK_EQ(mcgo_store_batch_get_into_multi_buffers(s, nullptr, nullptr, 0, nullptr,
                                             nullptr, nullptr, 0, nullptr),
           0);
  CHECK_EQ(r, 42);
  mcgo_store_destroy(s);
}

static int32_t SetupWith(mcgo_store *s, const mcgo_store_config &c, std::string *msg) {
  char err[512];
  std::memset(err, 'x', sizeof err);
  int32_t rc = mcgo_store_setup(s, &c, err, sizeof err);
  *msg = err;
  return rc;
}

TEST(SetupValidation) {
  const std::string master = UniqueMaster("setup");
  mcgo_store *s = nullptr;
  CHECK_EQ(mcgo_store_create(&s), 0);
  std::string msg;

  CHECK_EQ(mcgo_store_setup(nullptr, nullptr, nullptr, 0), MCGO_INVALID_PARAMS);
  char err[128];
  CHECK_EQ(mcgo_store_setup(s, nullptr, err, sizeof err), MCGO_INVALID_PARAMS);
  CHECK(std::string(err).find("config") != std::string::npos);

  for (const char *bad : {"", "udp", "TCP", "rdma "}) {
    mcgo_store_config c = Config(master.c_str(), kMinSegment, MiB, "127.0.0.1", bad);
    CHECK_EQ(SetupWith(s, c, &msg), MCGO_INVALID_PARAMS);
    CHECK(msg.find("protocol") != std::string::npos);
  }
  mcgo_store_config c = Config(master.c_str(), kMinSegment, MiB);
  c.protocol = nullptr;  // NULL means ""
  CHECK_EQ(SetupWith(s, c, &msg), MCGO_INVALID_PARAMS);
  CHECK(msg.find("protocol") != std::string::npos);

  c = Config("", kMinSegment, MiB);
  CHECK_EQ(SetupWith(s, c, &msg), MCGO_INVALID_PARAMS);
  CHECK(msg.find("master_server_address") != std::string::npos);
  c.master_server_address = nullptr;
  CHECK_EQ(SetupWith(s, c, &msg), MCGO_INVALID_PARAMS);
  CHECK(msg.find("master_server_address") != std::string::npos);

  c = Config(master.c_str(), kMinSegment, MiB, "");
  CHECK_EQ(SetupWith(s, c, &msg), MCGO_INVALID_PARAMS);
  CHECK(msg.find("local_hostname") != std::string::npos);

  // The message is truncated to the capacity and always NUL-terminated.
  c = Config(master.c_str(), kMinSegment, MiB, "127.0.0.1", "udp");
  char small[8];
  std::memset(small, 'x', sizeof small);
  CHECK_EQ(mcgo_store_setup(s, &c, small, sizeof small), MCGO_INVALID_PARAMS);
  CHECK_EQ(std::strlen(small), 7u);
  CHECK_EQ(std::string(small), "mcgo_st");
  CHECK_EQ(mcgo_store_setup(s, &c, small, 0), MCGO_INVALID_PARAMS);  // cap 0: untouched

  // rdma is accepted; a good setup after failed ones works.
  c = Config(master.c_str(), kMinSegment, MiB, "127.0.0.1", "rdma");
  CHECK_EQ(SetupWith(s, c, &msg), 0);
  CHECK_EQ(msg, "");
  CHECK_EQ(mcgo_store_health_check(s), 0);

  // Setting up twice is refused and leaves the client working.
  c = Config(master.c_str(), kMinSegment, MiB);
  CHECK_EQ(SetupWith(s, c, &msg), MCGO_INVALID_PARAMS);
  CHECK(msg.find("already") != std::string::npos);
  CHECK_EQ(mcgo_store_health_check(s), 0);
  mcgo_store_destroy(s);
}

// Upstream mounts a segment through its slab allocator, which refuses less
// than one slab (16 MiB), so setup fails with -600; 0 mounts nothing.
TEST(SegmentBelowSixteenMiBIsRefused) {
  const std::string master = UniqueMaster("minseg");
  const size_t clusters = mcgo::embedded::DebugLiveClusters();
  std::string msg;
  for (uint64_t size : {uint64_t{1}, MiB, kMinSegment - 1}) {
    mcgo_store *s = nullptr;
    CHECK_EQ(mcgo_store_create(&s), 0);
    mcgo_store_config c = Config(master.c_str(), size, MiB);
    CHECK_EQ(SetupWith(s, c, &msg), MCGO_INVALID_PARAMS);
    CHECK(msg.rfind("mcgo_store_setup: global_segment_size " + std::to_string(size) + " ", 0) == 0);
    CHECK_EQ(mcgo_store_health_check(s), MCGO_INVALID_PARAMS);     // not set up
    CHECK_EQ(mcgo::embedded::DebugLiveClusters(), clusters);  // joined nothing
    // The same client can then be set up with the minimum.
    c.global_segment_size = kMinSegment;
    CHECK_EQ(SetupWith(s, c, &msg), 0);
    CHECK_EQ(msg, "");
    CHECK_EQ(mcgo_store_health_check(s), 0);
    mcgo_store_destroy(s);
  }
  CHECK_EQ(mcgo::embedded::DebugLiveClusters(), clusters);

  // 0 and exactly 16 MiB are accepted.
  mcgo_store *zero = nullptr, *min = nullptr;
  CHECK_EQ(mcgo_store_create(&zero), 0);
  CHECK_EQ(mcgo_store_create(&min), 0);
  mcgo_store_config c = Config(master.c_str(), 0, MiB);
  CHECK_EQ(SetupWith(zero, c, &msg), 0);
  CHECK_EQ(msg, "");
  CHECK_EQ(Stats(zero).segments.size(), 0u);  // mounts nothing
  c.global_segment_size = kMinSegment;
  CHECK_EQ(SetupWith(min, c, &msg), 0);
  CHECK_EQ(msg, "");
  const auto st = Stats(min);
  CHECK_EQ(st.segments.size(), 1u);
  if (st.segments.size() == 1) CHECK_EQ(st.segments[0].capacity, kMinSegment);
  // All of it can be used.
  Mem src(kMinSegment, min);
  CHECK_EQ(PutFrom(min, "fill", src.addr(), kMinSegment), 0);
  CHECK_EQ(PutFrom(min, "one", src.addr(), 1), MCGO_NO_AVAILABLE_HANDLE);
  mcgo_store_destroy(min);
  mcgo_store_destroy(zero);
}

TEST(Hostnames) {
  const std::string master = UniqueMaster("host");
  Store a(master, kMinSegment, MiB, "127.0.0.1");
  Store b(master, kMinSegment, MiB, "127.0.0.1");
  const std::string ha = a.Hostname(), hb = b.Hostname();
  CHECK(ha.rfind("127.0.0.1:", 0) == 0);
  CHECK(hb.rfind("127.0.0.1:", 0) == 0);
  CHECK(ha != hb);
  CHECK(std::stoul(ha.substr(10)) >= 17000u);
  CHECK(std::stoul(ha.substr(10)) <= 65535u);

  // An explicit port is kept; a second client of the same cluster cannot
  // use it, a client of another cluster can.
  Store c(master, kMinSegment, MiB, "node-1:12345");
  CHECK_EQ(c.Hostname(), "node-1:12345");
  mcgo_store *dup = nullptr;
  CHECK_EQ(mcgo_store_create(&dup), 0);
  mcgo_store_config cfg = Config(master.c_str(), kMinSegment, MiB, "node-1:12345");
  std::string msg;
  CHECK_EQ(SetupWith(dup, cfg, &msg), MCGO_INVALID_PARAMS);
  CHECK(msg.find("node-1:12345") != std::string::npos);
  mcgo_store_destroy(dup);
  Store other(UniqueMaster("host"), kMinSegment, MiB, "node-1:12345");
  CHECK_EQ(other.Hostname(), "node-1:12345");
  // Once the owner is gone the name is free again.
  c.Destroy();
  Store c2(master, kMinSegment, MiB, "node-1:12345");
  CHECK_EQ(c2.Hostname(), "node-1:12345");

  // IPv6.
  Store v6(master, 0, 0, "::1");
  CHECK(v6.Hostname().rfind("[::1]:", 0) == 0);
  Store v6p(master, 0, 0, "[::1]:5000");
  CHECK_EQ(v6p.Hostname(), "[::1]:5000");
  Store v6b(master, 0, 0, "[::1]");
  CHECK(v6b.Hostname().rfind("[::1]:", 0) == 0);

  // Truncation, length, NULL arguments.
  char buf[8];
  size_t len = 0;
  CHECK_EQ(mcgo_store_hostname(a, buf, sizeof buf, &len), 0);
  CHECK_EQ(len, ha.size());
  CHECK_EQ(std::string(buf), ha.substr(0, 7));
  len = 0;
  CHECK_EQ(mcgo_store_hostname(a, nullptr, 0, &len), 0);
  CHECK_EQ(len, ha.size());
  CHECK_EQ(mcgo_store_hostname(a, nullptr, 4, &len), MCGO_INVALID_PARAMS);
  char big[64];
  CHECK_EQ(mcgo_store_hostname(a, big, sizeof big, nullptr), 0);
  CHECK_EQ(std::string(big), ha);
}

TEST(Registration) {
  Store s(UniqueMaster("reg"), kMinSegment, MiB);
  Mem m(64 * KiB);
  const uintptr_t base = m.addr();

  CHECK_EQ(mcgo_store_register_buffer(s, 0, 4096), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_register_buffer(s, base, 0), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_register_buffer(s, UINTPTR_MAX - 10, 100), MCGO_INVALID_PARAMS);  // wraps
  CHECK_EQ(mcgo_store_register_buffer(s, base + 16 * KiB, 16 * KiB), 0);  // [16K,32K)
  CHECK_EQ(mcgo_store_register_buffer(s, base + 16 * KiB, 16 * KiB), MCGO_INVALID_PARAMS);  // same
  CHECK_EQ(mcgo_store_register_buffer(s, base + 8 * KiB, 9 * KiB), MCGO_INVALID_PARAMS);   // overlaps front
  CHECK_EQ(mcgo_store_register_buffer(s, base + 31 * KiB, 2 * KiB), MCGO_INVALID_PARAMS);  // overlaps back
  CHECK_EQ(mcgo_store_register_buffer(s, base + 20 * KiB, 1 * KiB), MCGO_INVALID_PARAMS);  // inside
  CHECK_EQ(mcgo_store_register_buffer(s, base, 64 * KiB), MCGO_INVALID_PARAMS);            // contains
  CHECK_EQ(mcgo_store_register_buffer(s, base + 32 * KiB - 1, 1), MCGO_INVALID_PARAMS);    // last byte
  CHECK_EQ(mcgo_store_register_buffer(s, base + 8 * KiB, 8 * KiB), 0);   // adjacent before
  CHECK_EQ(mcgo_store_register_buffer(s, base + 32 * KiB, 8 * KiB), 0);  // adjacent after

  CHECK_EQ(mcgo_store_unregister_buffer(s, base), MCGO_INVALID_PARAMS);  // unknown
  CHECK_EQ(mcgo_store_unregister_buffer(s, base + 17 * KiB), MCGO_INVALID_PARAMS);  // interior
  CHECK_EQ(mcgo_store_unregister_buffer(s, 0), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_unregister_buffer(s, base + 16 * KiB), 0);
  CHECK_EQ(mcgo_store_unregister_buffer(s, base + 16 * KiB), MCGO_INVALID_PARAMS);  // twice
  CHECK_EQ(mcgo_store_register_buffer(s, base + 20 * KiB, 4 * KiB), 0);  // space is free again

  // Registrations belong to one client: another client (another transfer
  // engine) may register the same memory.
  Store t(UniqueMaster("reg"), kMinSegment, MiB);
  CHECK_EQ(mcgo_store_register_buffer(t, base, 64 * KiB), 0);
}

TEST(LocalBufferCountsAsRegistered) {
  // The local buffer is registered at setup, so its range cannot be
  // registered again and zero-copy I/O from it works. Its address is only
  // visible to the engine, so check through the internals.
  Store s(UniqueMaster("local"), kMinSegment, 64 * KiB);
  const uintptr_t lb = reinterpret_cast<uintptr_t>(s.get()->local_buffer);
  CHECK(lb != 0);
  CHECK_EQ(mcgo_store_register_buffer(s, lb, 4096), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_register_buffer(s, lb + 60 * KiB, 8 * KiB), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_unregister_buffer(s, lb), MCGO_INVALID_PARAMS);
  std::memset(s.get()->local_buffer, 0x5a, 1000);
  CHECK_EQ(mcgo_store_put_from(s, "lk", 2, lb, 1000, Cfg()), 0);
  Mem out(1000, s);
  CHECK_EQ(GetInto(s, "lk", out.addr(), 1000), 1000);
  CHECK_EQ(out.data()[999], 0x5a);
  // Past its end: not registered.
  CHECK_EQ(mcgo_store_put_from(s, "lk2", 3, lb + 64 * KiB - 10, 20, Cfg()), MCGO_TRANSFER_FAIL);

  // local_buffer_size 0 registers nothing.
  Store z(UniqueMaster("local"), kMinSegment, 0);
  CHECK(z.get()->local_buffer == nullptr);
  CHECK_EQ(Put(z, "k", "v"), MCGO_INVALID_PARAMS);  // copying put needs it
}

TEST(ClustersAreSharedByMasterAddress) {
  const size_t before = mcgo::embedded::DebugLiveClusters();
  const std::string m1 = UniqueMaster("share"), m2 = UniqueMaster("share");
  {
    Store a(m1), b(m1), c(m2);
    CHECK_EQ(mcgo::embedded::DebugLiveClusters(), before + 2);
    CHECK_EQ(Put(a, "shared", "from-a"), 0);
    CHECK_EQ(Get(b, "shared"), "from-a");   // same cluster
    CHECK_EQ(Exists(c, "shared"), 0);       // other cluster
    CHECK_EQ(Stats(a).clients, 2u);
    CHECK_EQ(Stats(a).segments.size(), 2u);
    a.Destroy();
    // b's segment holds the object only if it was placed there; use a fresh
    // object to check the cluster survives a's departure.
    CHECK_EQ(Put(b, "after", "b"), 0);
    CHECK_EQ(Get(b, "after"), "b");
    CHECK_EQ(Stats(b).clients, 1u);
  }
  // Last client gone: the cluster is freed, a new client starts empty.
  CHECK_EQ(mcgo::embedded::DebugLiveClusters(), before);
  Store d(m1);
  CHECK_EQ(Exists(d, "after"), 0);
  CHECK_EQ(Stats(d).objects, 0u);
}

TEST(ZeroSizedSegmentAndNoSegments) {
  const std::string m = UniqueMaster("noseg");
  Store s(m, 0, MiB);  // mounts nothing
  CHECK_EQ(Stats(s).segments.size(), 0u);
  CHECK_EQ(Put(s, "k", "v"), MCGO_NO_AVAILABLE_HANDLE);
  Store t(m, kMinSegment, MiB);  // now there is room
  CHECK_EQ(Put(s, "k", "v"), 0);
  CHECK_EQ(Replicas(s, "k"), std::vector<std::string>{t.Hostname()});
  CHECK_EQ(Get(s, "k"), "v");
}

MCGO_TEST_MAIN()
