// Read leases. A cluster takes the TTL set by SetLeaseTtlForNewClusters when
// it is created, so each test makes clusters with the TTL it needs:
// a long one (kLongMs) where a lease must still hold, a short one (kShortMs)
// where it must have run out. Timing only ever errs in the safe direction on
// a loaded machine: a "still leased" check follows its grant immediately and
// has seconds of slack, an "expired" check sleeps well past the TTL.
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

using namespace tu;

namespace {

constexpr int kLongMs = 5000;
constexpr int kShortMs = 100;

std::unique_ptr<Store> StoreWithTtl(int ttl_ms, const char *tag,
                                    const std::string &master = "") {
  mcgo::embedded::SetLeaseTtlForNewClusters(static_cast<uint64_t>(ttl_ms));
  auto s = std::make_unique<Store>(master.empty() ? UniqueMaster(tag) : master);
  mcgo::embedded::SetLeaseTtlForNewClusters(mcgo::embedded::kDefaultLeaseTtlMs);
  return s;
}

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }
void SleepPastShortTtl() { SleepMs(kShortMs * 3); }

}  // namespace

TEST(TtlComesFromTheEnvironment) {
  auto s = StoreWithTtl(kLongMs, "ttl");
  CHECK_EQ(Stats(*s).lease_ttl_ms, static_cast<uint64_t>(kLongMs));
  auto t = StoreWithTtl(kShortMs, "ttl");
  CHECK_EQ(Stats(*t).lease_ttl_ms, static_cast<uint64_t>(kShortMs));
}

TEST(GetGrantsLease) {
  auto l = StoreWithTtl(kLongMs, "get");
  Store &s = *l;
  CHECK_EQ(Put(s, "k", "v"), 0);
  CHECK_EQ(Remove(s, "k"), 0);  // a put grants no lease
  CHECK_EQ(Put(s, "k", "v"), 0);
  CHECK_EQ(Get(s, "k"), "v");
  CHECK_EQ(Remove(s, "k"), MCGO_OBJECT_HAS_LEASE);
  CHECK_EQ(Exists(s, "k"), 1);
  CHECK_EQ(Remove(s, "k", true), 0);  // force ignores the lease
  CHECK_EQ(Remove(s, "k", true), MCGO_OBJECT_NOT_FOUND);

  auto sh = StoreWithTtl(kShortMs, "get");
  CHECK_EQ(Put(*sh, "k", "v"), 0);
  CHECK_EQ(Get(*sh, "k"), "v");
  SleepPastShortTtl();
  CHECK_EQ(Remove(*sh, "k"), 0);  // expired
}

TEST(EveryLookupGrantsLease) {
  const std::string m = UniqueMaster("lookup");
  auto ls = StoreWithTtl(kLongMs, "lookup", m);
  Store &s = *ls;
  Store t(m);  // same cluster
  Mem buf(4096, s), small(4096, s), unreg(4096);
  using Probe = std::function<void(const std::string &)>;
  const std::vector<std::pair<const char *, Probe>> probes = {
      {"get_size", [&](const std::string &k) { CHECK_EQ(Size(s, k), 1); }},
      {"is_exist", [&](const std::string &k) { CHECK_EQ(Exists(s, k), 1); }},
      {"batch_is_exist",
       [&](const std::string &k) {
         Keys ks{k};
         int64_t r = 0;
         CHECK_EQ(mcgo_store_batch_is_exist(s, ks.data(), ks.offsets(), 1, &r), 0);
         CHECK_EQ(r, 1);
       }},
      {"get", [&](const std::string &k) { CHECK_EQ(Get(s, k), "v"); }},
      {"get_into", [&](const std::string &k) { CHECK_EQ(GetInto(s, k, buf.addr(), 64), 1); }},
      {"batch_get_into",
       [&](const std::string &k) {
         Keys ks{k};
         uintptr_t a = buf.addr();
         uint64_t z = 64;
         int64_t r = 0;
         CHECK_EQ(mcgo_store_batch_get_into(s, ks.data(), ks.offsets(), 1, &a, &z, &r), 0);
         CHECK_EQ(r, 1);
       }},
      {"batch_get_into_multi_buffers",
       [&](const std::string &k) {
         Keys ks{k};
         uintptr_t a = buf.addr();
         uint64_t z = 1, bo[2] = {0, 1};
         int64_t r = 0;
         CHECK_EQ(mcgo_store_batch_get_into_multi_buffers(s, ks.data(), ks.offsets(), 1, &a, &z, bo, 0, &r), 0);
         CHECK_EQ(r, 1);
       }},
      // The lease is granted when the object is looked up, before the
      // destination is checked (upstream queries first).
      {"get_into too small", [&](const std::string &k) { CHECK_EQ(GetInto(s, k, small.addr(), 0), MCGO_INVALID_PARAMS); }},
      {"get_into unregistered", [&](const std::string &k) { CHECK_EQ(GetInto(s, k, unreg.addr(), 64), MCGO_TRANSFER_FAIL); }},
      {"get overflow",
       [&](const std::string &k) {
         uint64_t os = 0;
         CHECK_EQ(tu::GetCopy(s, k.data(), k.size(), nullptr, 0, &os), MCGO_BUFFER_OVERFLOW);
       }},
  };
  int i = 0;
  for (const auto &p : probes) {
    const std::string key = "probe" + std::to_string(i++);
    CHECK_EQ(Put(s, key, "v"), 0);
    p.second(key);
    // Leases are cluster-wide: another client cannot remove it either.
    if (Remove(t, key) != MCGO_OBJECT_HAS_LEASE) {
      std::fprintf(stderr, "probe %s granted no lease\n", p.first);
      CHECK(false);
    }
  }
  CHECK_EQ(Size(s, "absent"), MCGO_OBJECT_NOT_FOUND);
  CHECK_EQ(mcgo_store_remove_all(t, 0), 0);
  CHECK_EQ(mcgo_store_remove_all(t, 1), i);
}

TEST(BulkRemovalSkipsLeasedObjects) {
  auto l = StoreWithTtl(kLongMs, "bulk");
  Store &s = *l;
  for (const char *k : {"a1", "a2", "a3", "b1"}) CHECK_EQ(Put(s, k, "v"), 0);
  CHECK_EQ(Get(s, "a1"), "v");
  CHECK_EQ(Get(s, "b1"), "v");
  CHECK_EQ(RemoveRegex(s, "^a"), 2);  // a2, a3; a1 is leased
  CHECK_EQ(Exists(s, "a1"), 1);
  CHECK_EQ(mcgo_store_remove_all(s, 0), 0);
  CHECK_EQ(RemoveRegex(s, "^a", true), 1);
  CHECK_EQ(mcgo_store_remove_all(s, 1), 1);
  CHECK_EQ(Stats(s).objects, 0u);

  auto sh = StoreWithTtl(kShortMs, "bulk");
  for (const char *k : {"c1", "c2"}) CHECK_EQ(Put(*sh, k, "v"), 0);
  CHECK_EQ(Get(*sh, "c1"), "v");
  CHECK_EQ(Get(*sh, "c2"), "v");
  SleepPastShortTtl();
  CHECK_EQ(RemoveRegex(*sh, "1$"), 1);
  CHECK_EQ(mcgo_store_remove_all(*sh, 0), 1);
}

TEST(LeasesAndUpsert) {
  auto l = StoreWithTtl(kLongMs, "upsert");
  Store &s = *l;
  CHECK_EQ(Put(s, "k", "aaaa"), 0);
  CHECK_EQ(Get(s, "k"), "aaaa");
  // Upsert ignores leases; the same size keeps the object's lease...
  CHECK_EQ(Upsert(s, "k", "bbbb"), 0);
  CHECK_EQ(Remove(s, "k"), MCGO_OBJECT_HAS_LEASE);
  CHECK_EQ(Get(s, "k"), "bbbb");
  // ...a size change re-creates the object without one.
  CHECK_EQ(Upsert(s, "k", "cc"), 0);
  CHECK_EQ(Remove(s, "k"), 0);
}

TEST(LeaseIsExtendedNotShortened) {
  // TTL 1 s. Grant at t0, renew at t1 >= t0 + 600 ms, check at about
  // t1 + 600 ms: past the first lease, inside the renewed one as long as the
  // process does not stall for 400 ms between the renewal and the check.
  constexpr int kTtl = 1000;
  auto l = StoreWithTtl(kTtl, "extend");
  Store &s = *l;
  CHECK_EQ(Put(s, "k", "v"), 0);
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_EQ(Get(s, "k"), "v");
  SleepMs(600);
  CHECK_EQ(Exists(s, "k"), 1);  // renews to now + ttl
  SleepMs(600);
  const auto elapsed = std::chrono::steady_clock::now() - t0;
  CHECK(elapsed >= std::chrono::milliseconds(kTtl));  // first lease is over
  CHECK_EQ(Remove(s, "k"), MCGO_OBJECT_HAS_LEASE);
  // ...and runs out a TTL after the renewal.
  SleepMs(kTtl + 300);
  CHECK_EQ(Remove(s, "k"), 0);
}

TEST(TtlIsReadWhenAClusterIsCreated) {
  const std::string m = UniqueMaster("ttlchange");
  auto first = StoreWithTtl(kLongMs, "ttlchange", m);
  auto same = StoreWithTtl(0, "ttlchange", m);  // joins: TTL unchanged
  CHECK_EQ(Stats(*same).lease_ttl_ms, static_cast<uint64_t>(kLongMs));
  auto zero = StoreWithTtl(0, "ttlchange");
  CHECK_EQ(Stats(*zero).lease_ttl_ms, 0u);
  CHECK_EQ(Put(*zero, "k", "v"), 0);
  CHECK_EQ(Get(*zero, "k"), "v");
  CHECK_EQ(Remove(*zero, "k"), 0);  // TTL 0: no effective lease
  Store d(UniqueMaster("ttlchange"));
  CHECK_EQ(Stats(d).lease_ttl_ms, 10000u);
}

MCGO_TEST_MAIN()

// A get session reads while the lease its lookup took runs, and drops the
// key once it has run out (LEASE_EXPIRED, then no session at all).
TEST(GetSessionLeaseRunsOut) {
  auto sh = StoreWithTtl(kShortMs, "session");
  Store &s = *sh;
  Mem m(4096, s);
  CHECK_EQ(Put(s, "k", "value"), 0);
  const Keys k{"k"};
  int64_t res = 1;
  CHECK_EQ(mcgo_store_batch_get_session_start(s, k.data(), k.offsets(), 1, &res), 0);
  CHECK_EQ(res, 0);
  const uintptr_t addr = m.addr();
  const uint64_t size = 5, off = 0, bo[2] = {0, 1};
  CHECK_EQ(mcgo_store_batch_get_into_multi_buffer_ranges(s, k.data(), k.offsets(), 1, &addr, &size, &off, bo, &res), 0);
  CHECK_EQ(res, 5);
  CHECK_EQ(std::string(reinterpret_cast<char *>(m.data()), 5), "value");
  SleepPastShortTtl();
  CHECK_EQ(mcgo_store_batch_get_into_multi_buffer_ranges(s, k.data(), k.offsets(), 1, &addr, &size, &off, bo, &res), 0);
  CHECK_EQ(res, MCGO_LEASE_EXPIRED);
  CHECK_EQ(mcgo_store_batch_get_into_multi_buffer_ranges(s, k.data(), k.offsets(), 1, &addr, &size, &off, bo, &res), 0);
  CHECK_EQ(res, MCGO_INVALID_PARAMS);  // dropped
  CHECK_EQ(mcgo_store_batch_get_session_end(s, k.data(), k.offsets(), 1), 0);
}
