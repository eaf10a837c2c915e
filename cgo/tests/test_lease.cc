// Read leases. main() sets MCGO_EMBEDDED_KV_LEASE_TTL_MS before any cluster
// exists, so clusters created here use a short TTL.
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

using namespace tu;

namespace {

constexpr int kTtlMs = 300;

void SleepPastTtl() {
  std::this_thread::sleep_for(std::chrono::milliseconds(kTtlMs + 150));
}

}  // namespace

TEST(TtlComesFromTheEnvironment) {
  Store s(UniqueMaster("ttl"));
  CHECK_EQ(Stats(s).lease_ttl_ms, static_cast<uint64_t>(kTtlMs));
}

TEST(GetGrantsLease) {
  Store s(UniqueMaster("get"));
  CHECK_EQ(Put(s, "k", "v"), 0);
  CHECK_EQ(Remove(s, "k"), 0);  // a put grants no lease
  CHECK_EQ(Put(s, "k", "v"), 0);
  CHECK_EQ(Get(s, "k"), "v");
  CHECK_EQ(Remove(s, "k"), MCGO_OBJECT_HAS_LEASE);
  CHECK_EQ(Exists(s, "k"), 1);
  SleepPastTtl();
  CHECK_EQ(Remove(s, "k"), 0);
  // force ignores the lease.
  CHECK_EQ(Put(s, "k", "v"), 0);
  CHECK_EQ(Get(s, "k"), "v");
  CHECK_EQ(Remove(s, "k", true), 0);
  CHECK_EQ(Remove(s, "k", true), MCGO_OBJECT_NOT_FOUND);
}

TEST(EveryLookupGrantsLease) {
  const std::string m = UniqueMaster("lookup");
  Store s(m), t(m);
  Mem buf(4096, s), small(4096, s), unreg(4096);
  using Probe = std::function<void(const std::string &)>;
  const std::vector<std::pair<const char *, Probe>> probes = {
      {"get_size", [&](const std::string &k) { CHECK_EQ(Size(s, k), 1); }},
      {"is_exist", [&](const std::string &k) { CHECK_EQ(Exists(s, k), 1); }},
      {"batch_is_exist",
       [&](const std::string &k) {
         Keys ks{k};
         int64_t r = 0;
         CHECK_EQ(mcgo_batch_is_exist(s, ks.data(), ks.offsets(), 1, &r), 0);
         CHECK_EQ(r, 1);
       }},
      {"get_into", [&](const std::string &k) { CHECK_EQ(GetInto(s, k, buf.addr(), 64), 1); }},
      {"batch_get_into",
       [&](const std::string &k) {
         Keys ks{k};
         uintptr_t a = buf.addr();
         uint64_t z = 64;
         int64_t r = 0;
         CHECK_EQ(mcgo_batch_get_into(s, ks.data(), ks.offsets(), 1, &a, &z, &r), 0);
         CHECK_EQ(r, 1);
       }},
      {"batch_get_into_multi_buffers",
       [&](const std::string &k) {
         Keys ks{k};
         uintptr_t a = buf.addr();
         uint64_t z = 1, bo[2] = {0, 1};
         int64_t r = 0;
         CHECK_EQ(mcgo_batch_get_into_multi_buffers(s, ks.data(), ks.offsets(), 1, &a, &z, bo, 0, &r), 0);
         CHECK_EQ(r, 1);
       }},
      // The lease is granted when the object is looked up, before the
      // destination is checked (upstream queries first).
      {"get_into too small", [&](const std::string &k) { CHECK_EQ(GetInto(s, k, small.addr(), 0), MCGO_INVALID_PARAMS); }},
      {"get_into unregistered", [&](const std::string &k) { CHECK_EQ(GetInto(s, k, unreg.addr(), 64), MCGO_TRANSFER_FAIL); }},
      {"get overflow",
       [&](const std::string &k) {
         uint64_t os = 0;
         CHECK_EQ(mcgo_get(s, k.data(), k.size(), nullptr, 0, &os), MCGO_BUFFER_OVERFLOW);
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
  // Missing keys and failed lookups grant nothing (nothing to grant).
  CHECK_EQ(Size(s, "absent"), MCGO_OBJECT_NOT_FOUND);
  SleepPastTtl();
  for (int j = 0; j < i; ++j) CHECK_EQ(Remove(t, "probe" + std::to_string(j)), 0);
}

TEST(BulkRemovalSkipsLeasedObjects) {
  Store s(UniqueMaster("bulk"));
  for (const char *k : {"a1", "a2", "a3", "b1"}) CHECK_EQ(Put(s, k, "v"), 0);
  CHECK_EQ(Get(s, "a1"), "v");
  CHECK_EQ(Get(s, "b1"), "v");
  CHECK_EQ(RemoveRegex(s, "^a"), 2);  // a2, a3; a1 is leased
  CHECK_EQ(Exists(s, "a1"), 1);       // (renews a1's lease)
  CHECK_EQ(mcgo_remove_all(s, 0), 0);
  CHECK_EQ(RemoveRegex(s, "^a", true), 1);
  CHECK_EQ(mcgo_remove_all(s, 1), 1);
  CHECK_EQ(Stats(s).objects, 0u);

  for (const char *k : {"c1", "c2"}) CHECK_EQ(Put(s, k, "v"), 0);
  CHECK_EQ(Get(s, "c1"), "v");
  CHECK_EQ(mcgo_remove_all(s, 0), 1);
  SleepPastTtl();
  CHECK_EQ(mcgo_remove_all(s, 0), 1);
}

TEST(LeasesAndUpsert) {
  Store s(UniqueMaster("upsert"));
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
  Store s(UniqueMaster("extend"));
  CHECK_EQ(Put(s, "k", "v"), 0);
  CHECK_EQ(Get(s, "k"), "v");
  std::this_thread::sleep_for(std::chrono::milliseconds(kTtlMs * 2 / 3));
  CHECK_EQ(Exists(s, "k"), 1);  // renews to now + ttl
  std::this_thread::sleep_for(std::chrono::milliseconds(kTtlMs * 2 / 3));
  CHECK_EQ(Remove(s, "k"), MCGO_OBJECT_HAS_LEASE);  // first lease would be over
  SleepPastTtl();
  CHECK_EQ(Remove(s, "k"), 0);
}

TEST(TtlIsReadWhenAClusterIsCreated) {
  const std::string m = UniqueMaster("envchange");
  Store s(m);
  setenv("MCGO_EMBEDDED_KV_LEASE_TTL_MS", "0", 1);
  Store same(m);  // joins the existing cluster: TTL unchanged
  CHECK_EQ(Stats(same).lease_ttl_ms, static_cast<uint64_t>(kTtlMs));
  Store zero(UniqueMaster("envchange"));
  CHECK_EQ(Stats(zero).lease_ttl_ms, 0u);
  CHECK_EQ(Put(zero, "k", "v"), 0);
  CHECK_EQ(Get(zero, "k"), "v");
  CHECK_EQ(Remove(zero, "k"), 0);  // TTL 0: no effective lease
  for (const char *bad : {"abc", "-5", "", "12x"}) {
    setenv("MCGO_EMBEDDED_KV_LEASE_TTL_MS", bad, 1);
    Store d(UniqueMaster("envchange"));
    CHECK_EQ(Stats(d).lease_ttl_ms, 10000u);  // default
  }
  unsetenv("MCGO_EMBEDDED_KV_LEASE_TTL_MS");
  Store d(UniqueMaster("envchange"));
  CHECK_EQ(Stats(d).lease_ttl_ms, 10000u);
  setenv("MCGO_EMBEDDED_KV_LEASE_TTL_MS", std::to_string(kTtlMs).c_str(), 1);
}

int main() {
  setenv("MCGO_EMBEDDED_KV_LEASE_TTL_MS", std::to_string(kTtlMs).c_str(), 1);
  return mcgo_test::RunAll();
}
