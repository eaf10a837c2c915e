// Single-key calls: copying put/get/upsert, zero-copy put_from/get_into/
// upsert_from, existence, size, removal, argument errors, large objects.
#include <string>
#include <vector>

#include "test_util.h"

using namespace tu;

TEST(CopyingPutGet) {
  Store s(UniqueMaster("copy"));
  CHECK_EQ(Put(s, "k1", "hello"), 0);
  CHECK_EQ(Get(s, "k1"), "hello");
  CHECK_EQ(Size(s, "k1"), 5);
  CHECK_EQ(Exists(s, "k1"), 1);

  // Larger destination: fine, returns the object size.
  char big[32];
  std::memset(big, '#', sizeof big);
  uint64_t osize = 0;
  CHECK_EQ(tu::GetCopy(s, "k1", 2, big, sizeof big, &osize), 5);
  CHECK_EQ(osize, 5u);
  CHECK_BYTES(big, "hello#", 6);
  // Smaller destination: BUFFER_OVERFLOW with the size, nothing written.
  char small[3] = {'x', 'x', 'x'};
  osize = 0;
  CHECK_EQ(tu::GetCopy(s, "k1", 2, small, sizeof small, &osize), MCGO_BUFFER_OVERFLOW);
  CHECK_EQ(osize, 5u);
  CHECK_BYTES(small, "xxx", 3);
  // Size probe with no destination.
  osize = 0;
  CHECK_EQ(tu::GetCopy(s, "k1", 2, nullptr, 0, &osize), MCGO_BUFFER_OVERFLOW);
  CHECK_EQ(osize, 5u);
  CHECK_EQ(tu::GetCopy(s, "k1", 2, nullptr, 0, nullptr), MCGO_BUFFER_OVERFLOW);
  CHECK_EQ(tu::GetCopy(s, "k1", 2, nullptr, 8, &osize), MCGO_INVALID_PARAMS);

  // Binary keys and values.
  const std::string bkey("a\0b\xff", 4), bval("\0\1\2\0", 4);
  CHECK_EQ(Put(s, bkey, bval), 0);
  CHECK_EQ(Get(s, bkey), bval);
  CHECK_EQ(Exists(s, std::string("a\0b", 3)), 0);

  // Missing keys.
  CHECK_EQ(Get(s, "nope"), "<-704>");
  osize = 99;
  CHECK_EQ(tu::GetCopy(s, "nope", 4, big, sizeof big, &osize), MCGO_OBJECT_NOT_FOUND);
  CHECK_EQ(osize, 99u);
  CHECK_EQ(Size(s, "nope"), MCGO_OBJECT_NOT_FOUND);
  CHECK_EQ(Exists(s, "nope"), 0);
}

TEST(WriteOnceAndUpsert) {
  Store s(UniqueMaster("once"));
  CHECK_EQ(Put(s, "k", "first"), 0);
  CHECK_EQ(Put(s, "k", "second value"), 0);  // existing key: 0, kept
  CHECK_EQ(Get(s, "k"), "first");
  CHECK_EQ(Upsert(s, "k", "FIRST"), 0);       // same size
  CHECK_EQ(Get(s, "k"), "FIRST");
  CHECK_EQ(Upsert(s, "k", "a longer value"), 0);  // size change
  CHECK_EQ(Get(s, "k"), "a longer value");
  CHECK_EQ(Size(s, "k"), 14);
  CHECK_EQ(Upsert(s, "k", "x"), 0);
  CHECK_EQ(Get(s, "k"), "x");
  CHECK_EQ(Upsert(s, "new", "created"), 0);   // upsert creates
  CHECK_EQ(Get(s, "new"), "created");
  // Accounting follows the size changes.
  CHECK_EQ(SegmentUsed(s, s.Hostname()), 1u + 7u);
}

TEST(CopyingCallsUseTheLocalBuffer) {
  Store s(UniqueMaster("localbuf"), kMinSegment, 1024);
  std::string v1024(1024, 'a'), v1025(1025, 'b');
  CHECK_EQ(Put(s, "fits", v1024), 0);
  CHECK_EQ(Put(s, "big", v1025), MCGO_INVALID_PARAMS);
  CHECK_EQ(Exists(s, "big"), 0);
  CHECK_EQ(Upsert(s, "fits", v1025), MCGO_INVALID_PARAMS);
  CHECK_EQ(Get(s, "fits"), v1024);
  // Too big for the local buffer even when the key exists.
  CHECK_EQ(Put(s, "fits", v1025), MCGO_INVALID_PARAMS);
  // Size 0.
  CHECK_EQ(mcgo_store_put(s, "z", 1, "", 0, Cfg()), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_put(s, "z", 1, nullptr, 0, Cfg()), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_upsert(s, "z", 1, "", 0, Cfg()), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_put(s, "z", 1, nullptr, 5, Cfg()), MCGO_INVALID_PARAMS);
  // An object larger than the local buffer cannot be read by copy.
  Mem m(4096, s);
  Fill(m.data(), 4096, 1);
  CHECK_EQ(PutFrom(s, "zc", m.addr(), 4096), 0);
  uintptr_t held = 1;
  CHECK_EQ(mcgo_store_get_begin(s, "zc", 2, &held), MCGO_INVALID_PARAMS);
  CHECK_EQ(held, 0u);
  // ... but zero-copy works.
  Mem out(4096, s);
  CHECK_EQ(GetInto(s, "zc", out.addr(), 4096), 4096);
  CHECK(HasPattern(out.data(), 4096, 1));
}

TEST(PreferSameNodeRefusedBySingleBufferPuts) {
  Store s(UniqueMaster("prefer"));
  Mem m(64, s);
  for (uint64_t replicas : {0u, 1u, 2u}) {
    mcgo_replicate_config c = Cfg(replicas);
    c.prefer_alloc_in_same_node = 1;
    CHECK_EQ(mcgo_store_put(s, "k", 1, "v", 1, c), MCGO_INVALID_PARAMS);
    CHECK_EQ(mcgo_store_upsert(s, "k", 1, "v", 1, c), MCGO_INVALID_PARAMS);
    CHECK_EQ(mcgo_store_put_from(s, "k", 1, m.addr(), 64, c), MCGO_INVALID_PARAMS);
    CHECK_EQ(mcgo_store_upsert_from(s, "k", 1, m.addr(), 64, c), MCGO_INVALID_PARAMS);
  }
  CHECK_EQ(Exists(s, "k"), 0);
}

TEST(ZeroCopyPutGet) {
  Store s(UniqueMaster("zc"));
  Mem src(64 * KiB, s), dst(64 * KiB, s);
  Fill(src.data(), src.size(), 7);

  CHECK_EQ(PutFrom(s, "obj", src.addr(), 10000), 0);
  CHECK_EQ(Size(s, "obj"), 10000);
  CHECK_EQ(GetInto(s, "obj", dst.addr(), 10000), 10000);
  CHECK_BYTES(dst.data(), src.data(), 10000);
  // Larger destination: accepted, only the object is written.
  std::memset(dst.data(), 0xee, dst.size());
  CHECK_EQ(GetInto(s, "obj", dst.addr(), dst.size()), 10000);
  CHECK_BYTES(dst.data(), src.data(), 10000);
  CHECK_EQ(dst.data()[10000], 0xee);
  // Smaller destination: -600.
  CHECK_EQ(GetInto(s, "obj", dst.addr(), 9999), MCGO_INVALID_PARAMS);
  CHECK_EQ(GetInto(s, "missing", dst.addr(), dst.size()), MCGO_OBJECT_NOT_FOUND);
  // Interior pointers of a registered region work.
  CHECK_EQ(PutFrom(s, "interior", src.addr(100), 5000), 0);
  CHECK_EQ(GetInto(s, "interior", dst.addr(300), 5000), 5000);
  CHECK_BYTES(dst.at(300), src.at(100), 5000);
  // Copying get of a zero-copy object.
  CHECK_EQ(Get(s, "interior"), std::string(reinterpret_cast<char *>(src.at(100)), 5000));
  // upsert_from replaces.
  Fill(src.data(), 20000, 8);
  CHECK_EQ(mcgo_store_upsert_from(s, "obj", 3, src.addr(), 20000, Cfg()), 0);
  CHECK_EQ(GetInto(s, "obj", dst.addr(), dst.size()), 20000);
  CHECK(HasPattern(dst.data(), 20000, 8));
  // put_from on an existing key keeps the value.
  Fill(src.data(), 20000, 9);
  CHECK_EQ(PutFrom(s, "obj", src.addr(), 20000), 0);
  CHECK_EQ(GetInto(s, "obj", dst.addr(), dst.size()), 20000);
  CHECK(HasPattern(dst.data(), 20000, 8));
}

TEST(ZeroCopyRequiresRegisteredMemory) {
  Store s(UniqueMaster("unreg"));
  Mem reg(16 * KiB, s), unreg(16 * KiB);
  Fill(reg.data(), reg.size(), 3);
  Fill(unreg.data(), unreg.size(), 3);

  CHECK_EQ(PutFrom(s, "u", unreg.addr(), 100), MCGO_TRANSFER_FAIL);
  CHECK_EQ(Exists(s, "u"), 0);  // revoked
  CHECK_EQ(Stats(s).objects, 0u);
  CHECK_EQ(SegmentUsed(s, s.Hostname()), 0u);
  CHECK_EQ(PutFrom(s, "u", 0, 100), MCGO_TRANSFER_FAIL);
  // Crossing the end of the region.
  CHECK_EQ(PutFrom(s, "u", reg.addr(16 * KiB - 50), 100), MCGO_TRANSFER_FAIL);
  CHECK_EQ(PutFrom(s, "u", reg.addr(16 * KiB - 100), 100), 0);

  // An existing key reports 0 even from unregistered memory (write-once is
  // decided before any transfer).
  CHECK_EQ(PutFrom(s, "u", unreg.addr(), 100), 0);

  CHECK_EQ(GetInto(s, "u", unreg.addr(), 100), MCGO_TRANSFER_FAIL);
  CHECK_EQ(GetInto(s, "u", reg.addr(16 * KiB - 99), 100), MCGO_TRANSFER_FAIL);
  // Only the object-size prefix of a get_into destination must be registered.
  CHECK_EQ(GetInto(s, "u", reg.addr(16 * KiB - 100), 4096), 100);

  // A failed upsert transfer removes the existing object (upstream revokes
  // the processing replicas).
  CHECK_EQ(mcgo_store_upsert_from(s, "u", 1, unreg.addr(), 100, Cfg()), MCGO_TRANSFER_FAIL);
  CHECK_EQ(Exists(s, "u"), 0);
  CHECK_EQ(SegmentUsed(s, s.Hostname()), 0u);

  // After unregistering, the same memory fails.
  CHECK_EQ(mcgo_store_unregister_buffer(s, reg.addr()), 0);
  CHECK_EQ(PutFrom(s, "v", reg.addr(), 100), MCGO_TRANSFER_FAIL);

  // Copying calls take any memory.
  CHECK_EQ(mcgo_store_put(s, "c", 1, unreg.data(), 100, Cfg()), 0);
  uint64_t os = 0;
  CHECK_EQ(tu::GetCopy(s, "c", 1, unreg.at(200), 100, &os), 100);
}

TEST(ZeroSizeAndEmptyKeys) {
  Store s(UniqueMaster("empty"));
  Mem m(4096, s);
  // put_from / upsert_from of 0 bytes: 0, nothing stored.
  CHECK_EQ(PutFrom(s, "zero", m.addr(), 0), 0);
  CHECK_EQ(mcgo_store_upsert_from(s, "zero", 4, m.addr(), 0, Cfg()), 0);
  CHECK_EQ(Exists(s, "zero"), 0);
  CHECK_EQ(PutFrom(s, "zero", 0, 0), 0);
  // get_into with size 0 of an existing object: too small.
  CHECK_EQ(PutFrom(s, "one", m.addr(), 1), 0);
  CHECK_EQ(GetInto(s, "one", m.addr(), 0), MCGO_INVALID_PARAMS);

  // Empty key: puts refuse it, reads see a missing key.
  CHECK_EQ(PutFrom(s, "", m.addr(), 10), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_upsert_from(s, "", 0, m.addr(), 10, Cfg()), MCGO_INVALID_PARAMS);
  CHECK_EQ(Put(s, "", "v"), MCGO_INVALID_PARAMS);
  CHECK_EQ(Upsert(s, "", "v"), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_put(s, nullptr, 0, "v", 1, Cfg()), MCGO_INVALID_PARAMS);
  CHECK_EQ(Get(s, ""), "<-704>");
  CHECK_EQ(GetInto(s, "", m.addr(), 10), MCGO_OBJECT_NOT_FOUND);
  CHECK_EQ(Exists(s, ""), 0);
  CHECK_EQ(mcgo_store_is_exist(s, nullptr, 0), 0);
  CHECK_EQ(Size(s, ""), MCGO_OBJECT_NOT_FOUND);
  CHECK_EQ(Remove(s, ""), MCGO_OBJECT_NOT_FOUND);

  // NULL key with a length is an argument error everywhere.
  uint64_t os = 0;
  CHECK_EQ(mcgo_store_put(s, nullptr, 3, "v", 1, Cfg()), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_upsert(s, nullptr, 3, "v", 1, Cfg()), MCGO_INVALID_PARAMS);
  CHECK_EQ(tu::GetCopy(s, nullptr, 3, m.data(), 10, &os), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_put_from(s, nullptr, 3, m.addr(), 10, Cfg()), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_upsert_from(s, nullptr, 3, m.addr(), 10, Cfg()), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_get_into(s, nullptr, 3, m.addr(), 10), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_is_exist(s, nullptr, 3), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_get_size(s, nullptr, 3), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_remove(s, nullptr, 3, 0), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_remove_by_regex(s, nullptr, 3, 0), MCGO_INVALID_PARAMS);
}

TEST(ReplicateConfigParsing) {
  Store s(UniqueMaster("cfg"));
  mcgo_replicate_config c = Cfg();
  c.preferred_segment_count = 1;  // NULL names
  CHECK_EQ(Put(s, "k", "v", c), MCGO_INVALID_PARAMS);
  const char two[] = "a\0b";  // only one NUL inside the given length
  c.preferred_segment_count = 2;
  c.preferred_segments = two;
  c.preferred_segments_len = 2;  // "a\0"
  CHECK_EQ(Put(s, "k", "v", c), MCGO_INVALID_PARAMS);
  c.preferred_segments_len = 4;  // "a\0b\0"
  CHECK_EQ(Put(s, "k", "v", c), 0);  // unknown names ignored
  CHECK_EQ(Get(s, "k"), "v");
  // Empty preferred name, replica_num 0 (treated as 1), pins (ignored).
  const Preferred pref{"", s.Hostname()};
  c = pref.Apply(Cfg(0));
  c.with_hard_pin = 1;
  c.with_soft_pin = 1;
  CHECK_EQ(Put(s, "k2", "v", c), 0);
  CHECK_EQ(Replicas(s, "k2"), std::vector<std::string>{s.Hostname()});
}

TEST(KeyLengthLimit) {
  Store s(UniqueMaster("keylen"));
  const std::string longest(MCGO_MAX_KEY_LEN, 'k');
  CHECK_EQ(Put(s, longest, "v"), 0);
  CHECK_EQ(Exists(s, longest), 1);
  CHECK_EQ(RemoveRegex(s, "^k.*", true), 1);
  const std::string too_long(MCGO_MAX_KEY_LEN + 1, 'k');
  CHECK_EQ(Put(s, too_long, "v"), MCGO_INVALID_PARAMS);
  CHECK_EQ(Remove(s, too_long), MCGO_INVALID_PARAMS);
  CHECK_EQ(Stats(s).objects, 0u);
}

TEST(RemoveAndRegex) {
  Store s(UniqueMaster("rm"));
  CHECK_EQ(Put(s, "k", "v"), 0);
  CHECK_EQ(Remove(s, "k"), 0);
  CHECK_EQ(Remove(s, "k"), MCGO_OBJECT_NOT_FOUND);
  CHECK_EQ(Exists(s, "k"), 0);
  CHECK_EQ(SegmentUsed(s, s.Hostname()), 0u);

  for (const char *k : {"a/1", "a/2", "b/1", "xa/3", "c7", "c8x"}) {
    CHECK_EQ(Put(s, k, "v"), 0);
  }
  // is_exist grants read leases, so the checks below use force.
  CHECK_EQ(RemoveRegex(s, "^a/"), 2);  // anchored
  CHECK_EQ(Exists(s, "xa/3"), 1);
  CHECK_EQ(RemoveRegex(s, "a/", true), 1);  // regex_search: partial match
  CHECK_EQ(Exists(s, "xa/3"), 0);
  CHECK_EQ(RemoveRegex(s, "^c\\d$"), 1);  // ECMAScript \d
  CHECK_EQ(Exists(s, "c7"), 0);
  CHECK_EQ(Exists(s, "c8x"), 1);
  CHECK_EQ(RemoveRegex(s, "("), MCGO_INVALID_PARAMS);  // bad pattern
  CHECK_EQ(RemoveRegex(s, "[a-"), MCGO_INVALID_PARAMS);
  // Outside the subset that cannot crash or hang upstream's master.
  CHECK_EQ(RemoveRegex(s, "(a*)*b"), MCGO_INVALID_PARAMS);
  CHECK_EQ(RemoveRegex(s, "(ab)+"), MCGO_INVALID_PARAMS);
  CHECK_EQ(RemoveRegex(s, "(a)\\1"), MCGO_INVALID_PARAMS);
  CHECK_EQ(RemoveRegex(s, "zzz"), 0);
  CHECK_EQ(Exists(s, "b/1"), 1);
  CHECK_EQ(mcgo_store_remove_by_regex(s, nullptr, 0, 1), 2);  // "" matches everything
  CHECK_EQ(Stats(s).objects, 0u);

  for (int i = 0; i < 5; ++i) CHECK_EQ(Put(s, "all" + std::to_string(i), "v"), 0);
  CHECK_EQ(mcgo_store_remove_all(s, 0), 5);
  CHECK_EQ(mcgo_store_remove_all(s, 0), 0);
  CHECK_EQ(SegmentUsed(s, s.Hostname()), 0u);
}

TEST(LargeObjects) {
  Store s(UniqueMaster("large"), 256 * MiB, 16 * MiB);
  const size_t n = 64 * MiB + 123;
  Mem src(n, s), dst(n, s);
  Fill(src.data(), n, 42);
  CHECK_EQ(PutFrom(s, "big", src.addr(), n), 0);
  CHECK_EQ(Size(s, "big"), static_cast<int64_t>(n));
  CHECK_EQ(GetInto(s, "big", dst.addr(), n), static_cast<int64_t>(n));
  CHECK(HasPattern(dst.data(), n, 42));
  CHECK_EQ(SegmentUsed(s, s.Hostname()), n);
  // Too big for the segment: -200.
  Mem huge(200 * MiB, s);
  CHECK_EQ(PutFrom(s, "huge", huge.addr(), 200 * MiB), MCGO_NO_AVAILABLE_HANDLE);
  CHECK_EQ(Remove(s, "big", true), 0);
  CHECK_EQ(PutFrom(s, "huge", huge.addr(), 200 * MiB), 0);
}

MCGO_TEST_MAIN()

TEST(TwoStepGet) {
  Store s(UniqueMaster("get2"));
  CHECK_EQ(Put(s, "k", "hello"), 0);

  uintptr_t h = 7;
  CHECK_EQ(mcgo_store_get_begin(s, "k", 1, &h), 5);
  CHECK(h != 0);
  // The hold survives removal and replacement of the key.
  CHECK_EQ(Remove(s, "k", true), 0);
  CHECK_EQ(Put(s, "k", "other value"), 0);
  char small[3] = {'x', 'x', 'x'};
  char big[8];
  std::memset(big, '#', sizeof big);
  CHECK_EQ(mcgo_store_get_finish(h, big, sizeof big), MCGO_OK);
  CHECK_BYTES(big, "hello###", 8);

  // Too small a destination: nothing copied, the handle is still released.
  CHECK_EQ(mcgo_store_get_begin(s, "k", 1, &h), 11);
  CHECK_EQ(mcgo_store_get_finish(h, small, sizeof small), MCGO_BUFFER_OVERFLOW);
  CHECK_BYTES(small, "xxx", 3);
  // Release only.
  CHECK_EQ(mcgo_store_get_begin(s, "k", 1, &h), 11);
  CHECK_EQ(mcgo_store_get_finish(h, nullptr, 0), MCGO_OK);
  CHECK_EQ(mcgo_store_get_begin(s, "k", 1, &h), 11);
  CHECK_EQ(mcgo_store_get_finish(h, nullptr, 4), MCGO_INVALID_PARAMS);

  // Errors leave the handle 0 and hold nothing.
  h = 7;
  CHECK_EQ(mcgo_store_get_begin(s, "nope", 4, &h), MCGO_OBJECT_NOT_FOUND);
  CHECK_EQ(h, 0u);
  h = 7;
  CHECK_EQ(mcgo_store_get_begin(s, nullptr, 1, &h), MCGO_INVALID_PARAMS);
  CHECK_EQ(h, 0u);
  CHECK_EQ(mcgo_store_get_begin(s, "k", 1, nullptr), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_get_begin(nullptr, "k", 1, &h), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_get_finish(0, big, sizeof big), MCGO_INVALID_PARAMS);

  // Larger than the local buffer: refused like mcgo_get.
  Store t(UniqueMaster("get2big"), kMinSegment, 4096);
  Mem m(8192, t);
  Fill(m.data(), 8192, 3);
  CHECK_EQ(PutFrom(t, "zc", m.addr(), 8192), 0);
  CHECK_EQ(mcgo_store_get_begin(t, "zc", 2, &h), MCGO_INVALID_PARAMS);
  CHECK_EQ(h, 0u);
}

// put_parts / put_batch and their upserts: copying calls staged in the
// local buffer, one code per call; refusals store nothing.
TEST(PartsAndCopyingBatches) {
  Store s(UniqueMaster("parts"), 64 * MiB, 1 * MiB);
  const std::string a = "ab", b = "cde";
  uintptr_t datas[3] = {A(a.data()), 0, A(b.data())};
  uint64_t sizes[3] = {2, 0, 3};
  CHECK_EQ(mcgo_store_put_parts(s, "p", 1, datas, sizes, 3, Cfg()), 0);
  CHECK_EQ(Get(s, "p"), "abcde");
  CHECK_EQ(mcgo_store_upsert_parts(s, "p", 1, datas + 2, sizes + 2, 1, Cfg()), 0);
  CHECK_EQ(Get(s, "p"), "cde");
  CHECK_EQ(mcgo_store_put_parts(s, "q", 1, datas + 1, sizes + 1, 1, Cfg()), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_put_parts(s, "q", 1, nullptr, nullptr, 0, Cfg()), MCGO_INVALID_PARAMS);
  uint64_t bad[1] = {1};
  uintptr_t null[1] = {0};
  CHECK_EQ(mcgo_store_put_parts(s, "q", 1, null, bad, 1, Cfg()), MCGO_INVALID_PARAMS);
  std::string big(600 * 1024, 'x');
  uintptr_t bigs[2] = {A(big.data()), A(big.data())};
  uint64_t bigsz[2] = {big.size(), big.size()};
  CHECK_EQ(mcgo_store_put_parts(s, "q", 1, bigs, bigsz, 2, Cfg()), MCGO_INVALID_PARAMS);

  Keys keys{"k0", "k1"};
  const std::string v0 = "zero", v1 = "one";
  uintptr_t vd[2] = {A(v0.data()), A(v1.data())};
  uint64_t vs[2] = {4, 3};
  CHECK_EQ(mcgo_store_put_batch(s, keys.data(), keys.offsets(), 2, vd, vs, Cfg()), 0);
  CHECK_EQ(Get(s, "k0"), "zero");
  CHECK_EQ(Get(s, "k1"), "one");
  uintptr_t ud[2] = {A(v1.data()), A(v0.data())};
  uint64_t us[2] = {3, 4};
  CHECK_EQ(mcgo_store_upsert_batch(s, keys.data(), keys.offsets(), 2, ud, us, Cfg()), 0);
  CHECK_EQ(Get(s, "k0"), "one");
  CHECK_EQ(Get(s, "k1"), "zero");
  Keys twice{"n", "n"}, fresh{"f0", "f1"};
  CHECK_EQ(mcgo_store_put_batch(s, twice.data(), twice.offsets(), 2, vd, vs, Cfg()), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_put_batch(s, fresh.data(), fresh.offsets(), 2, bigs, bigsz, Cfg()), MCGO_INVALID_PARAMS);
  uint64_t empty[2] = {4, 0};
  CHECK_EQ(mcgo_store_put_batch(s, fresh.data(), fresh.offsets(), 2, vd, empty, Cfg()), MCGO_INVALID_PARAMS);
  CHECK_EQ(Exists(s, "n"), 0);
  CHECK_EQ(Exists(s, "f0"), 0);
  CHECK_EQ(mcgo_store_put_batch(s, nullptr, nullptr, 0, nullptr, nullptr, Cfg()), 0);
}

// batch_get_replica_desc: counts per key, descriptors in key order, and
// MCGO_BUFFER_OVERFLOW with the sizes needed when the caller's room is short.
TEST(ReplicaDescriptors) {
  Store s(UniqueMaster("desc"));
  CHECK_EQ(Put(s, "a", "hello"), 0);
  Keys keys{"a", "missing"};
  int64_t results[2] = {7, 7};
  size_t need_d = 0, need_n = 0;
  CHECK_EQ(mcgo_store_batch_get_replica_desc(s, keys.data(), keys.offsets(), 2, nullptr, 0, nullptr, 0,
                                             &need_d, &need_n, results),
           MCGO_BUFFER_OVERFLOW);
  CHECK_EQ(need_d, 1u);
  CHECK_EQ(need_n, s.Hostname().size());
  CHECK_EQ(results[0], 1);
  CHECK_EQ(results[1], MCGO_OBJECT_NOT_FOUND);
  mcgo_replica_desc d[1];
  std::string names(need_n, '\0');
  CHECK_EQ(mcgo_store_batch_get_replica_desc(s, keys.data(), keys.offsets(), 2, d, 1, names.data(),
                                             names.size(), &need_d, &need_n, results),
           0);
  CHECK_EQ(d[0].kind, MCGO_REPLICA_MEMORY);
  CHECK_EQ(d[0].status, 3);
  CHECK_EQ(d[0].size, 5u);
  CHECK_EQ(names.substr(d[0].location_offset, d[0].location_len), s.Hostname());
  CHECK_EQ(mcgo_store_batch_get_replica_desc(s, keys.data(), keys.offsets(), 2, nullptr, 1, nullptr, 0,
                                             &need_d, &need_n, results),
           MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_batch_get_replica_desc(s, nullptr, nullptr, 0, nullptr, 0, nullptr, 0, &need_d,
                                             &need_n, nullptr),
           0);
}
