// Many threads on one handle and on several handles of one cluster: puts,
// upserts, gets, removes, registration changes and a client destroyed while
// the others keep working. Readers must only ever see a whole value. Also
// the multi-threaded stress test for the ThreadSanitizer build.
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

using namespace tu;

namespace {

// Values carry their seed in the first 4 bytes, so a reader can check that
// what it got is one complete value, not a mix of two writes.
void MakeValue(uint8_t *p, size_t n, uint32_t seed) {
  std::memcpy(p, &seed, 4);
  for (size_t i = 4; i < n; ++i) p[i] = PatternByte(seed, i);
}
bool IsWholeValue(const uint8_t *p, size_t n) {
  if (n < 4) return false;
  uint32_t seed;
  std::memcpy(&seed, p, 4);
  for (size_t i = 4; i < n; ++i) {
    if (p[i] != PatternByte(seed, i)) return false;
  }
  return true;
}

}  // namespace

TEST(ManyThreadsOneHandle) {
  Store s(UniqueMaster("threads"), 256 * MiB, 16 * MiB);
  constexpr int kThreads = 4;
  constexpr size_t kObj = 64 * KiB;
  std::atomic<long> torn{0}, unexpected{0}, reads{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Mem src(4 * kObj, s), dst(4 * kObj, s);
      const int n = 300;
      for (int i = 0; i < n; ++i) {
        const uint32_t seed = static_cast<uint32_t>(t * 100000 + i);
        // Private key: put, read back, remove.
        const std::string own = "own-" + std::to_string(t) + "-" + std::to_string(i);
        MakeValue(src.data(), kObj, seed);
        if (PutFrom(s, own, src.addr(), kObj) != 0) ++unexpected;
        if (GetInto(s, own, dst.addr(), kObj) != static_cast<int64_t>(kObj)) ++unexpected;
        if (std::memcmp(src.data(), dst.data(), kObj) != 0) ++torn;
        if (Remove(s, own, true) != 0) ++unexpected;
        // Shared keys: everyone upserts and reads them.
        const std::string shared = "shared-" + std::to_string(i % 8);
        const size_t size = kObj - 8 * static_cast<size_t>(i % 3);  // sizes change
        MakeValue(src.data(), size, seed);
        if (mcgo_store_upsert_from(s, shared.data(), shared.size(), src.addr(), size, Cfg()) != 0) ++unexpected;
        int64_t got = GetInto(s, shared, dst.addr(), dst.size());
        if (got > 0) {
          ++reads;
          if (!IsWholeValue(dst.data(), static_cast<size_t>(got))) ++torn;
        } else if (got != -703 && got != MCGO_OBJECT_NOT_FOUND) {
          ++unexpected;
        }
        // Multi-buffer batch of 3 keys, 3 buffers each.
        Keys keys;
        Csr put, get;
        for (int k = 0; k < 3; ++k) {
          keys.Add("mb-" + std::to_string(t) + "-" + std::to_string(i) + "-" + std::to_string(k));
          for (int b = 0; b < 3; ++b) {
            put.Buf(src.at(static_cast<size_t>(k * 3 + b) * 1000), 1000);
            get.Buf(dst.at(static_cast<size_t>(k * 3 + b) * 1000), 1000);
          }
          put.EndKey();
          get.EndKey();
        }
        std::vector<int64_t> r(3, 7);
        mcgo_store_batch_put_from_multi_buffers(s, keys.data(), keys.offsets(), 3, put.a(), put.s(), put.offsets.data(), Cfg(), r.data());
        for (int64_t v : r) if (v != 0) ++unexpected;
        mcgo_store_batch_get_into_multi_buffers(s, keys.data(), keys.offsets(), 3, get.a(), get.s(), get.offsets.data(), 0, r.data());
        for (int64_t v : r) if (v != 3000) ++unexpected;
        if (std::memcmp(src.data(), dst.data(), 9000) != 0) ++torn;
        std::string prefix = "^mb-" + std::to_string(t) + "-" + std::to_string(i) + "-";
        if (RemoveRegex(s, prefix, true) != 3) ++unexpected;
      }
    });
  }
  for (auto &th : threads) th.join();
  CHECK_EQ(torn.load(), 0L);
  CHECK_EQ(unexpected.load(), 0L);
  CHECK(reads.load() > 0);
  CHECK_EQ(Stats(s).pending, 0u);
  CHECK_EQ(mcgo_store_remove_all(s, 1), 8);  // the shared keys
  CHECK_EQ(SegmentUsed(s, s.Hostname()), 0u);
}

TEST(RemoveAndReplaceDuringGets) {
  const std::string m = UniqueMaster("rmget");
  Store w(m, 256 * MiB), r1(m, 0), r2(m, 0);
  constexpr size_t kBig = 1 * MiB;
  std::atomic<bool> stop{false};
  std::atomic<long> torn{0}, unexpected{0}, hits{0};
  std::thread writer([&] {
    Mem src(kBig, w);
    for (uint32_t i = 0; i < 40; ++i) {
      MakeValue(src.data(), kBig, i);
      if (i % 2 == 0) {
        if (PutFrom(w, "hot", src.addr(), kBig) != 0) ++unexpected;
      } else {
        if (mcgo_store_upsert_from(w, "hot", 3, src.addr(), kBig - 4096 * (i % 4), Cfg()) != 0) ++unexpected;
      }
      if (Remove(w, "hot", true) != 0) ++unexpected;
    }
    stop = true;
  });
  auto reader = [&](mcgo_store *s) {
    Mem dst(kBig, s);
    while (!stop.load()) {
      int64_t got = GetInto(s, "hot", dst.addr(), kBig);
      if (got > 0) {
        ++hits;
        if (!IsWholeValue(dst.data(), static_cast<size_t>(got))) ++torn;
      } else if (got != MCGO_OBJECT_NOT_FOUND && got != -703) {
        ++unexpected;
      }
    }
  };
  std::thread t1(reader, r1.get()), t2(reader, r2.get());
  writer.join();
  t1.join();
  t2.join();
  CHECK_EQ(torn.load(), 0L);
  CHECK_EQ(unexpected.load(), 0L);
  std::fprintf(stderr, "  reader hits: %ld\n", hits.load());
  CHECK_EQ(Stats(w).objects, 0u);
}

TEST(DestroyOneClientWhileOthersWork) {
  const std::string m = UniqueMaster("destroy");
  Store a(m, 64 * MiB), b(m, 64 * MiB);
  mcgo_store *c = nullptr;
  CHECK_EQ(mcgo_store_create(&c), 0);
  mcgo_store_config cfg = Config(m.c_str(), 64 * MiB, MiB);
  CHECK_EQ(mcgo_store_setup(c, &cfg, nullptr, 0), 0);
  // Put objects on c's segment so that its departure removes some.
  Mem cm(4096, c);
  char hn[128];
  size_t hl = 0;
  CHECK_EQ(mcgo_store_hostname(c, hn, sizeof hn, &hl), 0);
  const Preferred pc{std::string(hn)};
  for (int i = 0; i < 20; ++i) {
    CHECK_EQ(PutFrom(c, "on-c-" + std::to_string(i), cm.addr(), 4096, pc.Apply(Cfg())), 0);
  }

  std::atomic<bool> stop{false};
  std::atomic<long> unexpected{0}, ops{0};
  auto worker = [&](mcgo_store *s, int id) {
    Mem src(64 * KiB, s), dst(64 * KiB, s);
    int i = 0;
    while (!stop.load()) {
      const std::string k = "w" + std::to_string(id) + "-" + std::to_string(i++ % 50);
      MakeValue(src.data(), 64 * KiB, static_cast<uint32_t>(i));
      int32_t p = mcgo_store_upsert_from(s, k.data(), k.size(), src.addr(), 64 * KiB, Cfg());
      // -704: the object was placed on c's segment and c left mid-write.
      if (p != 0 && p != MCGO_OBJECT_NOT_FOUND) ++unexpected;
      int64_t g = GetInto(s, k, dst.addr(), 64 * KiB);
      if (g > 0 && !IsWholeValue(dst.data(), static_cast<size_t>(g))) ++unexpected;
      if (g < 0 && g != MCGO_OBJECT_NOT_FOUND && g != -703) ++unexpected;
      const std::string ck = "on-c-" + std::to_string(i % 20);
      int64_t cg = GetInto(s, ck, dst.addr(), 64 * KiB);
      if (cg != 4096 && cg != MCGO_OBJECT_NOT_FOUND) ++unexpected;
      ++ops;
    }
  };
  std::thread ta(worker, a.get(), 0), tb(worker, b.get(), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  mcgo_store_destroy(c);  // while a and b are busy
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  stop = true;
  ta.join();
  tb.join();
  CHECK_EQ(unexpected.load(), 0L);
  CHECK(ops.load() > 0);
  for (int i = 0; i < 20; ++i) CHECK_EQ(Exists(a, "on-c-" + std::to_string(i)), 0);
  auto st = Stats(a);
  CHECK_EQ(st.clients, 2u);
  CHECK_EQ(st.segments.size(), 2u);
  CHECK_EQ(st.pending, 0u);
  mcgo_store_remove_all(a, 1);
  CHECK_EQ(SegmentUsed(a, a.Hostname()), 0u);
  CHECK_EQ(SegmentUsed(a, b.Hostname()), 0u);
}

TEST(RegistrationChangesDuringTransfers) {
  Store s(UniqueMaster("regchange"));
  Mem stable(64 * KiB, s), flapping(64 * KiB), out(64 * KiB, s);
  std::atomic<bool> stop{false};
  std::atomic<long> unexpected{0};
  std::thread flapper([&] {
    while (!stop.load()) {
      if (mcgo_store_register_buffer(s, flapping.addr(), flapping.size()) != 0) ++unexpected;
      if (mcgo_store_unregister_buffer(s, flapping.addr()) != 0) ++unexpected;
    }
  });
  std::thread io([&] {
    for (int i = 0; i < 500; ++i) {
      const std::string k = "r" + std::to_string(i);
      if (PutFrom(s, k, stable.addr(), 4096) != 0) ++unexpected;
      if (GetInto(s, k, out.addr(), 4096) != 4096) ++unexpected;
      // The flapping region may or may not be registered right now.
      int32_t f = PutFrom(s, k + "f", flapping.addr(), 4096);
      if (f != 0 && f != MCGO_TRANSFER_FAIL) ++unexpected;
    }
    stop = true;
  });
  io.join();
  flapper.join();
  CHECK_EQ(unexpected.load(), 0L);
}

TEST(ManyClientsCreatedAndDestroyedConcurrently) {
  const std::string m = UniqueMaster("churn");
  // Larger than the churning clients' segments, so that their objects are
  // placed on the anchor (most free space) and outlive their writers.
  Store anchor(m, 16 * kMinSegment);
  std::atomic<long> unexpected{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        mcgo_store *s = nullptr;
        if (mcgo_store_create(&s) != 0) ++unexpected;
        // Half join the anchor's cluster, half make their own.
        const std::string master = (i % 2) ? m : UniqueMaster("churn-own");
        mcgo_store_config cfg = Config(master.c_str(), kMinSegment, 64 * KiB);
        if (mcgo_store_setup(s, &cfg, nullptr, 0) != 0) ++unexpected;
        const std::string k = "c" + std::to_string(t) + "-" + std::to_string(i);
        if (Put(s, k, "v") != 0) ++unexpected;
        if (Get(s, k) != "v") ++unexpected;
        mcgo_store_destroy(s);
      }
    });
  }
  for (auto &th : threads) th.join();
  CHECK_EQ(unexpected.load(), 0L);
  CHECK_EQ(Stats(anchor).clients, 1u);
  CHECK_EQ(Stats(anchor).segments.size(), 1u);
}

TEST(ObjectCacheIsEmptiedWhenNoStoreRemains) {
  CHECK_EQ(mcgo::embedded::DebugLiveClusters(), 0u);  // earlier tests cleaned up
  {
    Store s(UniqueMaster("cache"));
    Mem src(4 * MiB, s);
    CHECK_EQ(PutFrom(s, "big", src.addr(), 4 * MiB), 0);
    CHECK_EQ(Remove(s, "big"), 0);
    if (mcgo::embedded::ObjectCacheEnabled()) {
      CHECK(mcgo::embedded::CachedObjectBytes() >= 4 * MiB);
      // The cached block is reused by the next object of that size.
      const size_t before = mcgo::embedded::CachedObjectBytes();
      CHECK_EQ(PutFrom(s, "big2", src.addr(), 4 * MiB), 0);
      CHECK(mcgo::embedded::CachedObjectBytes() < before);
    } else {
      CHECK_EQ(mcgo::embedded::CachedObjectBytes(), 0u);
    }
  }
  CHECK_EQ(mcgo::embedded::CachedObjectBytes(), 0u);
}

MCGO_TEST_MAIN()

// A put session's end waits for the range writes in flight, and none starts
// after it: the object holds exactly what the writes that succeeded wrote.
TEST(PutSessionEndWaitsForRangeWrites) {
  const std::string m = UniqueMaster("session-race");
  Store s(m);
  constexpr uint64_t kObj = 1 << 20, kPiece = 64 << 10;
  Mem src(kObj, s), dst(kObj, s);
  Fill(src.data(), kObj, 9);
  const Keys k{"k"};
  int64_t res = 1;
  const uint64_t size = kObj;
  CHECK_EQ(mcgo_store_batch_put_session_start(s, k.data(), k.offsets(), 1, &size, Cfg(), &res), 0);
  CHECK_EQ(res, 0);
  std::atomic<int> after_end{0};
  std::atomic<bool> ended{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w) {
    // Each writer its own pieces: two writing the same bytes at once would
    // race whatever the engine does.
    writers.emplace_back([&, w] {
      for (int round = 0; round < 200; ++round) {
        for (uint64_t off = w * kPiece; off < kObj; off += 2 * kPiece) {
          const uintptr_t a = src.addr(off);
          const uint64_t bo[2] = {0, 1};
          int64_t r = 0;
          const bool was_ended = ended.load();
          CHECK_EQ(mcgo_store_batch_put_from_multi_buffer_ranges(s, k.data(), k.offsets(), 1, &a, &kPiece, &off, bo, &r), 0);
          if (was_ended) CHECK_EQ(r, MCGO_INVALID_PARAMS);
          if (r < 0) ++after_end;
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK_EQ(mcgo_store_batch_put_session_end(s, k.data(), k.offsets(), 1, &res), 0);
  ended = true;
  CHECK_EQ(res, 0);
  for (auto &t : writers) t.join();
  CHECK(after_end.load() > 0);  // the end really came while they were writing
  CHECK_EQ(GetInto(s, "k", dst.addr(), kObj), static_cast<int64_t>(kObj));
  // Every piece is the source's (each write wrote the same bytes) or still
  // zero if no write reached it before the end.
  for (uint64_t off = 0; off < kObj; off += kPiece) {
    const bool copied = std::memcmp(dst.at(off), src.at(off), kPiece) == 0;
    bool zero = true;
    for (uint64_t i = 0; i < kPiece && zero; ++i) zero = dst.at(off)[i] == 0;
    CHECK(copied || zero);
  }
}
