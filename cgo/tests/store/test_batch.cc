// Batch calls: packed keys, per-key results, whole-call refusals, CSR
// multi-buffer lists and their edge cases, duplicate keys, prefer-same-node
// grouping.
#include <string>
#include <vector>

#include "test_util.h"

using namespace tu;

namespace {

// All n results equal code.
bool All(const std::vector<int64_t> &r, int64_t code) {
  for (int64_t v : r) {
    if (v != code) return false;
  }
  return true;
}

std::vector<int64_t> Results(size_t n) { return std::vector<int64_t>(n, 12345); }

}  // namespace

TEST(BatchPutGetMixedResults) {
  Store s(UniqueMaster("batch"));
  Mem reg(64 * KiB, s), unreg(4096);
  Fill(reg.data(), 32 * KiB, 1);
  CHECK_EQ(Put(s, "exists", "old"), 0);

  Keys keys{"ok", "", "zero", "unreg", "exists"};
  std::vector<uintptr_t> addrs{reg.addr(0), reg.addr(100), reg.addr(200),
                               unreg.addr(), unreg.addr()};
  std::vector<uint64_t> sizes{1000, 10, 0, 10, 10};
  auto r = Results(5);
  CHECK_EQ(mcgo_store_batch_put_from(s, keys.data(), keys.offsets(), 5, addrs.data(),
                               sizes.data(), Cfg(), r.data()),
           0);
  CHECK_EQ(r[0], 0);
  CHECK_EQ(r[1], MCGO_INVALID_PARAMS);  // empty key
  CHECK_EQ(r[2], MCGO_INVALID_PARAMS);  // size 0
  CHECK_EQ(r[3], MCGO_TRANSFER_FAIL);   // unregistered
  CHECK_EQ(r[4], 0);                    // exists: kept
  CHECK_EQ(Get(s, "exists"), "old");
  CHECK_EQ(Exists(s, "unreg"), 0);

  Mem out(64 * KiB, s);
  Keys gk{"ok", "missing", "ok", "ok", "ok", "exists"};
  std::vector<uintptr_t> ga{out.addr(0), out.addr(2000), out.addr(4000),
                            unreg.addr(), out.addr(8000), out.addr(9000)};
  std::vector<uint64_t> gs{1000, 1000, 999, 1000, 5000, 3};
  r = Results(6);
  CHECK_EQ(mcgo_store_batch_get_into(s, gk.data(), gk.offsets(), 6, ga.data(), gs.data(), r.data()), 0);
  CHECK_EQ(r[0], 1000);
  CHECK_EQ(r[1], MCGO_OBJECT_NOT_FOUND);
  CHECK_EQ(r[2], MCGO_INVALID_PARAMS);  // too small
  CHECK_EQ(r[3], MCGO_TRANSFER_FAIL);   // unregistered
  CHECK_EQ(r[4], 1000);                 // larger is fine
  CHECK_EQ(r[5], 3);
  CHECK_BYTES(out.at(0), reg.at(0), 1000);
  CHECK_BYTES(out.at(8000), reg.at(0), 1000);
  CHECK_BYTES(out.at(9000), "old", 3);

  // batch_upsert_from replaces existing values.
  Keys uk{"ok", "exists"};
  Fill(reg.data(), 2000, 2);
  std::vector<uintptr_t> ua{reg.addr(0), reg.addr(1000)};
  std::vector<uint64_t> us{1000, 500};
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_upsert_from(s, uk.data(), uk.offsets(), 2, ua.data(), us.data(), Cfg(), r.data()), 0);
  CHECK(All(r, 0));
  CHECK_EQ(Size(s, "exists"), 500);
  CHECK_EQ(GetInto(s, "ok", out.addr(), 1000), 1000);
  CHECK(HasPattern(out.data(), 1000, 2));

  // batch_is_exist.
  Keys ek{"ok", "missing", "", "exists"};
  r = Results(4);
  CHECK_EQ(mcgo_store_batch_is_exist(s, ek.data(), ek.offsets(), 4, r.data()), 0);
  CHECK_EQ(r[0], 1);
  CHECK_EQ(r[1], 0);
  CHECK_EQ(r[2], 0);
  CHECK_EQ(r[3], 1);
}

TEST(BatchWholeCallRefusals) {
  Store s(UniqueMaster("refuse"));
  Mem m(4096, s);
  Keys keys{"a", "b"};
  uintptr_t addrs[2] = {m.addr(), m.addr(100)};
  uint64_t sizes[2] = {10, 10};
  uint64_t bo[3] = {0, 1, 2};
  auto r = Results(2);

  // NULL results with n > 0: refused, nothing to fill.
  CHECK_EQ(mcgo_store_batch_put_from(s, keys.data(), keys.offsets(), 2, addrs, sizes, Cfg(), nullptr), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_batch_get_into(s, keys.data(), keys.offsets(), 2, addrs, sizes, nullptr), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_batch_is_exist(s, keys.data(), keys.offsets(), 2, nullptr), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_batch_put_from_multi_buffers(s, keys.data(), keys.offsets(), 2, addrs, sizes, bo, Cfg(), nullptr), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_batch_get_into_multi_buffers(s, keys.data(), keys.offsets(), 2, addrs, sizes, bo, 0, nullptr), MCGO_INVALID_PARAMS);
  CHECK_EQ(Exists(s, "a"), 0);

  // NULL keys / offsets; decreasing offsets.
  CHECK_EQ(mcgo_store_batch_put_from(s, nullptr, keys.offsets(), 2, addrs, sizes, Cfg(), r.data()), MCGO_INVALID_PARAMS);
  CHECK(All(r, MCGO_INVALID_PARAMS));
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_put_from(s, keys.data(), nullptr, 2, addrs, sizes, Cfg(), r.data()), MCGO_INVALID_PARAMS);
  CHECK(All(r, MCGO_INVALID_PARAMS));
  uint64_t bad_koff[3] = {0, 2, 1};
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_put_from(s, "ab", bad_koff, 2, addrs, sizes, Cfg(), r.data()), MCGO_INVALID_PARAMS);
  CHECK(All(r, MCGO_INVALID_PARAMS));
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_get_into(s, "ab", bad_koff, 2, addrs, sizes, r.data()), MCGO_INVALID_PARAMS);
  CHECK(All(r, MCGO_INVALID_PARAMS));
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_is_exist(s, "ab", bad_koff, 2, r.data()), MCGO_INVALID_PARAMS);
  CHECK(All(r, MCGO_INVALID_PARAMS));
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_is_exist(s, nullptr, keys.offsets(), 2, r.data()), MCGO_INVALID_PARAMS);
  CHECK(All(r, MCGO_INVALID_PARAMS));
  // key_offsets need not start at 0.
  uint64_t shifted[3] = {1, 2, 2};  // "b", ""
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_put_from(s, "ab", shifted, 2, addrs, sizes, Cfg(), r.data()), 0);
  CHECK_EQ(r[0], 0);
  CHECK_EQ(r[1], MCGO_INVALID_PARAMS);
  CHECK_EQ(Exists(s, "b"), 1);

  // NULL addrs / sizes.
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_put_from(s, keys.data(), keys.offsets(), 2, nullptr, sizes, Cfg(), r.data()), MCGO_INVALID_PARAMS);
  CHECK(All(r, MCGO_INVALID_PARAMS));
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_upsert_from(s, keys.data(), keys.offsets(), 2, addrs, nullptr, Cfg(), r.data()), MCGO_INVALID_PARAMS);
  CHECK(All(r, MCGO_INVALID_PARAMS));
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_get_into(s, keys.data(), keys.offsets(), 2, nullptr, sizes, r.data()), MCGO_INVALID_PARAMS);
  CHECK(All(r, MCGO_INVALID_PARAMS));

  // prefer_alloc_in_same_node: every single-buffer batch put refuses it.
  mcgo_replicate_config pc = Cfg(1);
  pc.prefer_alloc_in_same_node = 1;
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_put_from(s, keys.data(), keys.offsets(), 2, addrs, sizes, pc, r.data()), MCGO_INVALID_PARAMS);
  CHECK(All(r, MCGO_INVALID_PARAMS));
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_upsert_from(s, keys.data(), keys.offsets(), 2, addrs, sizes, pc, r.data()), MCGO_INVALID_PARAMS);
  CHECK(All(r, MCGO_INVALID_PARAMS));
  // Multi-buffer puts accept it only with one replica.
  pc.replica_num = 2;
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_put_from_multi_buffers(s, keys.data(), keys.offsets(), 2, addrs, sizes, bo, pc, r.data()), MCGO_INVALID_PARAMS);
  CHECK(All(r, MCGO_INVALID_PARAMS));
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_upsert_from_multi_buffers(s, keys.data(), keys.offsets(), 2, addrs, sizes, bo, pc, r.data()), MCGO_INVALID_PARAMS);
  CHECK(All(r, MCGO_INVALID_PARAMS));
  CHECK_EQ(Exists(s, "a"), 0);
  pc.replica_num = 0;  // treated as 1
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_put_from_multi_buffers(s, keys.data(), keys.offsets(), 2, addrs, sizes, bo, pc, r.data()), 0);
  CHECK(All(r, 0));

  // Malformed preferred segments.
  mcgo_replicate_config badcfg = Cfg();
  badcfg.preferred_segment_count = 3;
  badcfg.preferred_segments = "x";
  badcfg.preferred_segments_len = 1;
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_put_from(s, keys.data(), keys.offsets(), 2, addrs, sizes, badcfg, r.data()), MCGO_INVALID_PARAMS);
  CHECK(All(r, MCGO_INVALID_PARAMS));

  // NULL store with results: filled.
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_get_into(nullptr, keys.data(), keys.offsets(), 2, addrs, sizes, r.data()), MCGO_INVALID_PARAMS);
  CHECK(All(r, MCGO_INVALID_PARAMS));
}

TEST(DuplicateKeysInOneBatch) {
  Store s(UniqueMaster("dup"));
  Mem m(64 * KiB, s);
  std::memset(m.at(0), 'A', 100);
  std::memset(m.at(1000), 'B', 200);
  std::memset(m.at(2000), 'C', 300);

  // batch_put_from: stored from the LAST occurrence's buffer; all report 0.
  Keys keys{"k", "other", "k"};
  std::vector<uintptr_t> a{m.addr(0), m.addr(1000), m.addr(2000)};
  std::vector<uint64_t> z{100, 200, 300};
  auto r = Results(3);
  CHECK_EQ(mcgo_store_batch_put_from(s, keys.data(), keys.offsets(), 3, a.data(), z.data(), Cfg(), r.data()), 0);
  CHECK(All(r, 0));
  CHECK_EQ(Get(s, "k"), std::string(300, 'C'));
  CHECK_EQ(Get(s, "other"), std::string(200, 'B'));

  // batch_upsert_from: the last occurrence wins as well.
  Keys uk{"u", "u"};
  std::vector<uintptr_t> ua{m.addr(0), m.addr(1000)};
  std::vector<uint64_t> uz{100, 200};
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_upsert_from(s, uk.data(), uk.offsets(), 2, ua.data(), uz.data(), Cfg(), r.data()), 0);
  CHECK(All(r, 0));
  CHECK_EQ(Get(s, "u"), std::string(200, 'B'));

  // Multi-buffer put: each occurrence uses its own buffers, the first wins.
  Keys mk{"mb", "mb"};
  Csr csr;
  csr.Buf(m.at(0), 50);
  csr.Buf(m.at(1000), 50);
  csr.EndKey();
  csr.Buf(m.at(2000), 10);
  csr.EndKey();
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_put_from_multi_buffers(s, mk.data(), mk.offsets(), 2, csr.a(), csr.s(), csr.offsets.data(), Cfg(), r.data()), 0);
  CHECK(All(r, 0));
  CHECK_EQ(Get(s, "mb"), std::string(50, 'A') + std::string(50, 'B'));

  // Multi-buffer upsert: the last wins.
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_upsert_from_multi_buffers(s, mk.data(), mk.offsets(), 2, csr.a(), csr.s(), csr.offsets.data(), Cfg(), r.data()), 0);
  CHECK(All(r, 0));
  CHECK_EQ(Get(s, "mb"), std::string(10, 'C'));

  // Batch get with a key twice fills both destinations (upstream writes only
  // the last one; documented difference).
  Mem out(4096, s);
  Keys gk{"other", "other"};
  std::vector<uintptr_t> ga{out.addr(0), out.addr(1000)};
  std::vector<uint64_t> gz{200, 200};
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_get_into(s, gk.data(), gk.offsets(), 2, ga.data(), gz.data(), r.data()), 0);
  CHECK(All(r, 200));
  CHECK_BYTES(out.at(0), std::string(200, 'B').data(), 200);
  CHECK_BYTES(out.at(1000), std::string(200, 'B').data(), 200);
}

TEST(MultiBufferRoundTrip) {
  Store s(UniqueMaster("multi"));
  // Two registered regions; a key may take buffers from both.
  Mem r1(64 * KiB, s), r2(64 * KiB, s), out(128 * KiB, s);
  Fill(r1.data(), r1.size(), 11);
  Fill(r2.data(), r2.size(), 12);

  // 10 keys x 10 buffers x 10 bytes, like upstream's pybind test, plus one
  // key spanning both regions with a zero-size buffer in the middle.
  Keys keys;
  Csr put;
  std::string expect[11];
  for (int k = 0; k < 10; ++k) {
    keys.Add("key" + std::to_string(k));
    for (int b = 0; b < 10; ++b) {
      const uint8_t *p = r1.at(static_cast<size_t>(k * 1000 + b * 37));
      put.Buf(p, 10);
      expect[k].append(reinterpret_cast<const char *>(p), 10);
    }
    put.EndKey();
  }
  keys.Add("span");
  put.Buf(r1.at(60000), 4000);
  put.Buf(r1.at(0), 0);  // zero-size buffers are skipped
  put.Buf(r2.at(10), 3000);
  put.EndKey();
  expect[10].append(reinterpret_cast<const char *>(r1.at(60000)), 4000);
  expect[10].append(reinterpret_cast<const char *>(r2.at(10)), 3000);

  auto r = Results(11);
  CHECK_EQ(mcgo_store_batch_put_from_multi_buffers(s, keys.data(), keys.offsets(), 11, put.a(), put.s(), put.offsets.data(), Cfg(), r.data()), 0);
  CHECK(All(r, 0));
  for (int k = 0; k < 11; ++k) {
    CHECK_EQ(Size(s, k < 10 ? "key" + std::to_string(k) : "span"),
             static_cast<int64_t>(expect[k].size()));
  }

  // Scatter each object into a different split.
  Csr get;
  size_t off = 0;
  for (int k = 0; k < 10; ++k) {
    get.Buf(out.at(off), 30);
    get.Buf(out.at(off + 100), 70);
    get.EndKey();
    off += 200;
  }
  get.Buf(out.at(off), 1);
  get.Buf(out.at(off + 10), 0);
  get.Buf(out.at(off + 20), 6999);
  get.EndKey();
  r = Results(11);
  CHECK_EQ(mcgo_store_batch_get_into_multi_buffers(s, keys.data(), keys.offsets(), 11, get.a(), get.s(), get.offsets.data(), 0, r.data()), 0);
  CHECK(All(r, 100) == false);  // the span key is bigger
  off = 0;
  for (int k = 0; k < 10; ++k) {
    CHECK_EQ(r[k], 100);
    CHECK_BYTES(out.at(off), expect[k].data(), 30);
    CHECK_BYTES(out.at(off + 100), expect[k].data() + 30, 70);
    off += 200;
  }
  CHECK_EQ(r[10], 7000);
  CHECK_BYTES(out.at(off), expect[10].data(), 1);
  CHECK_BYTES(out.at(off + 20), expect[10].data() + 1, 6999);

  // Multi-buffer upsert then get: new data.
  Keys one{"key3"};
  Csr up;
  up.Buf(r2.at(500), 64);
  up.Buf(r2.at(900), 64);
  up.EndKey();
  r = Results(1);
  CHECK_EQ(mcgo_store_batch_upsert_from_multi_buffers(s, one.data(), one.offsets(), 1, up.a(), up.s(), up.offsets.data(), Cfg(), r.data()), 0);
  CHECK_EQ(r[0], 0);
  Mem o2(128, s);
  CHECK_EQ(GetInto(s, "key3", o2.addr(), 128), 128);
  CHECK_BYTES(o2.at(0), r2.at(500), 64);
  CHECK_BYTES(o2.at(64), r2.at(900), 64);
}

TEST(MultiBufferErrors) {
  Store s(UniqueMaster("multierr"));
  Mem m(64 * KiB, s), unreg(4096);
  Fill(m.data(), m.size(), 5);

  // Put: a key with no buffers, a key of only zero-size buffers, one bad
  // buffer among good ones, a good key.
  Keys keys{"none", "zeros", "bad", "good"};
  Csr put;
  put.EndKey();  // none
  put.Buf(m.at(0), 0);
  put.Buf(m.at(10), 0);
  put.EndKey();  // zeros
  put.Buf(m.at(0), 100);
  put.Buf(unreg.data(), 100);
  put.EndKey();  // bad
  put.Buf(m.at(0), 100);
  put.Buf(m.at(5000), 100);
  put.EndKey();  // good
  auto r = Results(4);
  CHECK_EQ(mcgo_store_batch_put_from_multi_buffers(s, keys.data(), keys.offsets(), 4, put.a(), put.s(), put.offsets.data(), Cfg(), r.data()), 0);
  CHECK_EQ(r[0], MCGO_INVALID_PARAMS);
  CHECK_EQ(r[1], MCGO_INVALID_PARAMS);
  CHECK_EQ(r[2], MCGO_TRANSFER_FAIL);
  CHECK_EQ(r[3], 0);
  CHECK_EQ(Exists(s, "bad"), 0);

  // Get: sum < object (-600), sum > object (-800), exact, missing,
  // unregistered, no buffers.
  Mem out(64 * KiB, s);
  Keys gk{"good", "good", "good", "missing", "good", "good"};
  Csr get;
  get.Buf(out.at(0), 100);
  get.Buf(out.at(200), 99);
  get.EndKey();  // 199 < 200
  get.Buf(out.at(1000), 100);
  get.Buf(out.at(1200), 101);
  get.EndKey();  // 201 > 200
  get.Buf(out.at(2000), 150);
  get.Buf(out.at(2200), 50);
  get.EndKey();  // exact
  get.Buf(out.at(3000), 200);
  get.EndKey();  // missing
  get.Buf(out.at(4000), 100);
  get.Buf(unreg.data(), 100);
  get.EndKey();  // unregistered
  get.EndKey();  // no buffers
  r = Results(6);
  CHECK_EQ(mcgo_store_batch_get_into_multi_buffers(s, gk.data(), gk.offsets(), 6, get.a(), get.s(), get.offsets.data(), 0, r.data()), 0);
  CHECK_EQ(r[0], MCGO_INVALID_PARAMS);
  CHECK_EQ(r[1], MCGO_TRANSFER_FAIL);
  CHECK_EQ(r[2], 200);
  CHECK_EQ(r[3], MCGO_OBJECT_NOT_FOUND);
  CHECK_EQ(r[4], MCGO_TRANSFER_FAIL);
  CHECK_EQ(r[5], MCGO_INVALID_PARAMS);
  CHECK_BYTES(out.at(2000), m.at(0), 100);
  CHECK_BYTES(out.at(2100), m.at(5000), 50);
  CHECK_BYTES(out.at(2200), m.at(5050), 50);

  // CSR shape errors refuse the whole call.
  Keys two{"good", "good"};
  uintptr_t a2[2] = {out.addr(0), out.addr(1000)};
  uint64_t s2[2] = {200, 200};
  const uint64_t bad_first[3] = {1, 1, 2};
  const uint64_t decreasing[3] = {0, 2, 1};
  for (const uint64_t *bo : {bad_first, decreasing, static_cast<const uint64_t *>(nullptr)}) {
    r = Results(2);
    CHECK_EQ(mcgo_store_batch_get_into_multi_buffers(s, two.data(), two.offsets(), 2, a2, s2, bo, 0, r.data()), MCGO_INVALID_PARAMS);
    CHECK(All(r, MCGO_INVALID_PARAMS));
    r = Results(2);
    CHECK_EQ(mcgo_store_batch_put_from_multi_buffers(s, two.data(), two.offsets(), 2, a2, s2, bo, Cfg(), r.data()), MCGO_INVALID_PARAMS);
    CHECK(All(r, MCGO_INVALID_PARAMS));
    r = Results(2);
    CHECK_EQ(mcgo_store_batch_upsert_from_multi_buffers(s, two.data(), two.offsets(), 2, a2, s2, bo, Cfg(), r.data()), MCGO_INVALID_PARAMS);
    CHECK(All(r, MCGO_INVALID_PARAMS));
  }
  const uint64_t ok_bo[3] = {0, 1, 2};
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_get_into_multi_buffers(s, two.data(), two.offsets(), 2, nullptr, s2, ok_bo, 0, r.data()), MCGO_INVALID_PARAMS);
  CHECK(All(r, MCGO_INVALID_PARAMS));
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_put_from_multi_buffers(s, two.data(), two.offsets(), 2, a2, nullptr, ok_bo, Cfg(), r.data()), MCGO_INVALID_PARAMS);
  CHECK(All(r, MCGO_INVALID_PARAMS));
  // No buffers at all: NULL arrays are fine, every key has 0 bytes.
  const uint64_t empty_bo[3] = {0, 0, 0};
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_put_from_multi_buffers(s, two.data(), two.offsets(), 2, nullptr, nullptr, empty_bo, Cfg(), r.data()), 0);
  CHECK(All(r, MCGO_INVALID_PARAMS));
  r = Results(2);
  CHECK_EQ(mcgo_store_batch_get_into_multi_buffers(s, two.data(), two.offsets(), 2, nullptr, nullptr, empty_bo, 0, r.data()), 0);
  CHECK(All(r, MCGO_INVALID_PARAMS));
  // Sizes summing past 2^64 cannot be an object.
  Keys ovk{"overflow"};
  uintptr_t oa[2] = {m.addr(), m.addr()};
  uint64_t os[2] = {UINT64_MAX, 2};
  const uint64_t obo[2] = {0, 2};
  r = Results(1);
  CHECK_EQ(mcgo_store_batch_put_from_multi_buffers(s, ovk.data(), ovk.offsets(), 1, oa, os, obo, Cfg(), r.data()), 0);
  CHECK_EQ(r[0], MCGO_INVALID_PARAMS);
  r = Results(1);
  Keys gk1{"good"};
  CHECK_EQ(mcgo_store_batch_get_into_multi_buffers(s, gk1.data(), gk1.offsets(), 1, oa, os, obo, 0, r.data()), 0);
  CHECK_EQ(r[0], MCGO_TRANSFER_FAIL);
}

TEST(PreferSameNodePlacementAndGrouping) {
  const std::string master = UniqueMaster("group");
  Store a(master, 64 * MiB), b(master, 128 * MiB);  // b has more free space
  Mem m(64 * KiB, a), unreg(4096);
  Fill(m.data(), m.size(), 9);

  // Without the flag objects go to the segment with the most free space (b);
  // with it, to the writer's own segment (a).
  Keys k1{"plain"};
  Csr c1;
  c1.Buf(m.at(0), 100);
  c1.EndKey();
  auto r = Results(1);
  CHECK_EQ(mcgo_store_batch_put_from_multi_buffers(a, k1.data(), k1.offsets(), 1, c1.a(), c1.s(), c1.offsets.data(), Cfg(), r.data()), 0);
  CHECK_EQ(Replicas(a, "plain"), std::vector<std::string>{b.Hostname()});
  mcgo_replicate_config same = Cfg(1);
  same.prefer_alloc_in_same_node = 1;
  Keys k2{"local"};
  r = Results(1);
  CHECK_EQ(mcgo_store_batch_put_from_multi_buffers(a, k2.data(), k2.offsets(), 1, c1.a(), c1.s(), c1.offsets.data(), same, r.data()), 0);
  CHECK_EQ(Replicas(a, "local"), std::vector<std::string>{a.Hostname()});
  // Preferred segments come before the own segment.
  const Preferred pb{b.Hostname()};
  Keys k3{"pref"};
  r = Results(1);
  CHECK_EQ(mcgo_store_batch_put_from_multi_buffers(a, k3.data(), k3.offsets(), 1, c1.a(), c1.s(), c1.offsets.data(), pb.Apply(same), r.data()), 0);
  CHECK_EQ(Replicas(a, "pref"), std::vector<std::string>{b.Hostname()});

  // One bad key fails every key bound for the same segment (one transfer
  // batch per segment upstream); keys already present are not affected.
  Keys g{"g1", "g2", "g3", "local"};
  Csr cg;
  cg.Buf(m.at(0), 100);
  cg.EndKey();
  cg.Buf(unreg.data(), 100);
  cg.EndKey();
  cg.Buf(m.at(500), 100);
  cg.EndKey();
  cg.Buf(unreg.data(), 100);
  cg.EndKey();
  r = Results(4);
  CHECK_EQ(mcgo_store_batch_put_from_multi_buffers(a, g.data(), g.offsets(), 4, cg.a(), cg.s(), cg.offsets.data(), same, r.data()), 0);
  CHECK_EQ(r[0], MCGO_TRANSFER_FAIL);
  CHECK_EQ(r[1], MCGO_TRANSFER_FAIL);
  CHECK_EQ(r[2], MCGO_TRANSFER_FAIL);
  CHECK_EQ(r[3], 0);
  CHECK_EQ(Exists(a, "g1"), 0);
  CHECK_EQ(Exists(a, "g3"), 0);
  // Without the flag only the bad key fails.
  r = Results(4);
  CHECK_EQ(mcgo_store_batch_put_from_multi_buffers(a, g.data(), g.offsets(), 4, cg.a(), cg.s(), cg.offsets.data(), Cfg(), r.data()), 0);
  CHECK_EQ(r[0], 0);
  CHECK_EQ(r[1], MCGO_TRANSFER_FAIL);
  CHECK_EQ(r[2], 0);
  CHECK_EQ(r[3], 0);

  // Get with prefer_same_node: g1 and g3 are both on b; a sum that exceeds
  // the object fails the whole segment group, a too-small sum (-600) or a
  // missing key does not join it.
  CHECK_EQ(Replicas(a, "g1"), std::vector<std::string>{b.Hostname()});
  CHECK_EQ(Replicas(a, "g3"), std::vector<std::string>{b.Hostname()});
  Mem out(64 * KiB, a);
  Keys gg{"g1", "g3", "local", "g1", "nope"};
  Csr cgg;
  cgg.Buf(out.at(0), 100);
  cgg.EndKey();
  cgg.Buf(out.at(1000), 101);
  cgg.EndKey();  // too large
  cgg.Buf(out.at(2000), 100);
  cgg.EndKey();  // on a's segment
  cgg.Buf(out.at(3000), 50);
  cgg.EndKey();  // too small
  cgg.Buf(out.at(4000), 100);
  cgg.EndKey();
  r = Results(5);
  CHECK_EQ(mcgo_store_batch_get_into_multi_buffers(a, gg.data(), gg.offsets(), 5, cgg.a(), cgg.s(), cgg.offsets.data(), 1, r.data()), 0);
  CHECK_EQ(r[0], MCGO_TRANSFER_FAIL);
  CHECK_EQ(r[1], MCGO_TRANSFER_FAIL);
  CHECK_EQ(r[2], 100);
  CHECK_EQ(r[3], MCGO_INVALID_PARAMS);
  CHECK_EQ(r[4], MCGO_OBJECT_NOT_FOUND);
  r = Results(5);
  CHECK_EQ(mcgo_store_batch_get_into_multi_buffers(a, gg.data(), gg.offsets(), 5, cgg.a(), cgg.s(), cgg.offsets.data(), 0, r.data()), 0);
  CHECK_EQ(r[0], 100);
  CHECK_EQ(r[1], MCGO_TRANSFER_FAIL);
  CHECK_EQ(r[2], 100);
  CHECK_BYTES(out.at(0), m.at(0), 100);
}

MCGO_TEST_MAIN()
