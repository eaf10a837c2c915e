// The embedded master's KV events (embedded/store/kv_events.h) through their
// C functions (kv_events_c.h): which operations record, the packing, the
// drop-oldest queue that reserves a sequence number per dropped event, and
// starting before the cluster exists.
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "embedded/store/kv_events_c.h"
#include "test_util.h"

using namespace tu;

namespace {

struct Ev {
  int kind;  // 1 stored, 2 removed
  std::string key, group;
};

struct Batch {
  int32_t rc = 0;
  uint64_t seq = 0, dropped = 0;
  std::vector<Ev> events;
};

Batch Drain(const std::string &master, uint32_t timeout_ms = 0, size_t cap = 1 << 16) {
  std::vector<uint8_t> buf(cap);
  Batch b;
  uint32_t n = 0;
  size_t used = 0;
  b.rc = mcgo_embedded_kv_events_drain(master.data(), master.size(), timeout_ms, buf.data(), buf.size(), &n,
                                       &b.seq, &used, &b.dropped);
  if (b.rc == MCGO_BUFFER_OVERFLOW) {
    b.seq = used;  // the size needed
    return b;
  }
  const uint8_t *p = buf.data();
  auto u32 = [](const uint8_t *q) { return uint32_t(q[0]) | uint32_t(q[1]) << 8 | uint32_t(q[2]) << 16 | uint32_t(q[3]) << 24; };
  for (uint32_t i = 0; i < n; ++i) {
    CHECK_EQ(int(p[1]), 1);  // medium "cpu"
    const uint32_t kl = u32(p + 2), gl = u32(p + 6);
    b.events.push_back(Ev{p[0], std::string(reinterpret_cast<const char *>(p + 10), kl),
                          std::string(reinterpret_cast<const char *>(p + 10 + kl), gl)});
    p += 10 + kl + gl;
  }
  CHECK_EQ(size_t(p - buf.data()), used);
  return b;
}

int32_t Start(const std::string &m, uint64_t cap = 0) { return mcgo_embedded_kv_events_start(m.data(), m.size(), cap); }
int32_t Stop(const std::string &m) { return mcgo_embedded_kv_events_stop(m.data(), m.size()); }

int32_t BatchRemove(mcgo_store *s, const std::vector<std::string> &keys) {
  std::string packed;
  std::vector<uint64_t> offs{0};
  for (const auto &k : keys) {
    packed += k;
    offs.push_back(packed.size());
  }
  std::vector<int64_t> res(keys.size());
  return mcgo_store_batch_remove(s, packed.data(), offs.data(), keys.size(), 1, res.data());
}

}  // namespace

TEST(RecordsWhatUpstreamPublishes) {
  const std::string m = UniqueMaster("kv");
  CHECK_EQ(Start(m), MCGO_OK);  // before the cluster exists
  CHECK_EQ(Start(m), MCGO_INVALID_PARAMS);
  {
    Store s(m);
    CHECK_EQ(Put(s, "a", "1"), 0);
    CHECK_EQ(Put(s, "a", "2"), 0);     // exists: nothing
    CHECK_EQ(Upsert(s, "a", "3"), 0);  // same size
    CHECK_EQ(Upsert(s, "a", "44"), 0); // another size: Stored only
    CHECK_EQ(Put(s, "b", "1"), 0);
    CHECK_EQ(Put(s, "c", "1"), 0);
    CHECK_EQ(Remove(s, "a", true), 0);
    CHECK_EQ(BatchRemove(s, {"b"}), 0);       // nothing
    CHECK_EQ(RemoveRegex(s, "^c$", true), 1); // nothing
    CHECK_EQ(Put(s, "d", "1"), 0);
    CHECK_EQ(mcgo_store_remove_all(s, 1), 1); // nothing
    CHECK_EQ(Put(s, "e", "1"), 0);
  }  // closing the only client drops its segment and "e": nothing
  Batch b = Drain(m);
  CHECK_EQ(b.rc, MCGO_OK);
  CHECK_EQ(b.seq, 1u);
  CHECK_EQ(b.dropped, 0u);
  const std::vector<std::pair<int, std::string>> want = {
      {1, "a"}, {1, "a"}, {1, "a"}, {1, "b"}, {1, "c"}, {2, "a"}, {1, "d"}, {1, "e"}};
  CHECK_EQ(b.events.size(), want.size());
  for (size_t i = 0; i < want.size() && i < b.events.size(); ++i) {
    CHECK_EQ(b.events[i].kind, want[i].first);
    CHECK_EQ(b.events[i].key, want[i].second);
  }
  b = Drain(m, 1);  // empty: times out
  CHECK_EQ(b.rc, MCGO_OK);
  CHECK_EQ(b.events.size(), 0u);
  CHECK_EQ(b.seq, 0u);  // no sequence taken
  CHECK_EQ(Stop(m), MCGO_OK);
  CHECK_EQ(Stop(m), MCGO_OBJECT_NOT_FOUND);
  CHECK_EQ(Drain(m).rc, MCGO_OBJECT_NOT_FOUND);
}

TEST(BatchesOf64AndDropOldest) {
  const std::string m = UniqueMaster("kv");
  Store s(m);
  CHECK_EQ(Start(m, 100), MCGO_OK);  // on a live cluster
  for (int i = 0; i < 150; ++i) CHECK_EQ(Put(s, "k" + std::to_string(i), "v"), 0);
  // 50 dropped: sequences 1..50 are reserved for them.
  Batch b = Drain(m);
  CHECK_EQ(b.rc, MCGO_OK);
  CHECK_EQ(b.seq, 51u);
  CHECK_EQ(b.dropped, 50u);
  CHECK_EQ(b.events.size(), 64u);
  CHECK_EQ(b.events.front().key, std::string("k50"));
  b = Drain(m);
  CHECK_EQ(b.seq, 52u);
  CHECK_EQ(b.events.size(), 36u);
  CHECK_EQ(b.events.back().key, std::string("k149"));
  CHECK_EQ(Stop(m), MCGO_OK);
  // Started again: numbered from 1, as a restarted master.
  CHECK_EQ(Start(m), MCGO_OK);
  CHECK_EQ(Put(s, "again", "v"), 0);
  CHECK_EQ(Drain(m).seq, 1u);
  CHECK_EQ(Stop(m), MCGO_OK);
}

TEST(SmallBufferAndGroups) {
  const std::string m = UniqueMaster("kv");
  Store s(m);
  CHECK_EQ(Start(m), MCGO_OK);
  const std::string key(300, 'x');
  CHECK_EQ(Put(s, key, "v"), 0);
  CHECK_EQ(Put(s, "y", "v"), 0);
  Batch b = Drain(m, 0, 100);  // the first event needs 310 bytes
  CHECK_EQ(b.rc, MCGO_BUFFER_OVERFLOW);
  CHECK_EQ(b.seq, 310u);
  b = Drain(m, 0, 320);  // room for the first only
  CHECK_EQ(b.rc, MCGO_OK);
  CHECK_EQ(b.events.size(), 1u);
  CHECK_EQ(b.seq, 1u);
  b = Drain(m);
  CHECK_EQ(b.events.size(), 1u);
  CHECK_EQ(b.seq, 2u);

  mcgo_replicate_config cfg = Cfg();
  cfg.has_group_ids = 1;
  cfg.group_id_count = 1;
  cfg.group_ids = "g1";
  cfg.group_ids_len = 3;
  const std::string v = "value";
  CHECK_EQ(mcgo_store_put(s, "grouped", 7, v.data(), v.size(), cfg), 0);
  CHECK_EQ(Remove(s, "grouped", true), 0);
  b = Drain(m);
  CHECK_EQ(b.events.size(), 2u);
  CHECK_EQ(b.events[0].group, std::string("g1"));
  CHECK_EQ(b.events[1].group, std::string("g1"));
  CHECK_EQ(b.events[1].kind, 2);
  CHECK_EQ(Stop(m), MCGO_OK);
}

// Writers record while a drainer waits and takes batches: every event
// arrives once, in each writer's order, with consecutive sequences.
TEST(ConcurrentDrain) {
  const std::string m = UniqueMaster("kv");
  Store s(m);
  CHECK_EQ(Start(m), MCGO_OK);
  constexpr int kWriters = 4, kEach = 500;
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kEach; ++i) Put(s, "w" + std::to_string(w) + "-" + std::to_string(i), "v");
    });
  }
  std::vector<int> next(kWriters, 0);
  uint64_t seq = 0;
  int got = 0;
  while (got < kWriters * kEach) {
    Batch b = Drain(m, 1000);
    CHECK_EQ(b.rc, MCGO_OK);
    if (b.events.empty()) break;
    CHECK_EQ(b.seq, seq + 1);
    seq = b.seq;
    for (const Ev &ev : b.events) {
      const int w = ev.key[1] - '0';
      CHECK_EQ(ev.key, "w" + std::to_string(w) + "-" + std::to_string(next[w]));
      ++next[w];
      ++got;
    }
  }
  for (auto &t : writers) t.join();
  CHECK_EQ(got, kWriters * kEach);
  CHECK_EQ(Stop(m), MCGO_OK);
}

TEST(Arguments) {
  uint32_t n;
  uint64_t seq, dropped;
  size_t used;
  uint8_t buf[16];
  CHECK_EQ(mcgo_embedded_kv_events_start(nullptr, 0, 0), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_embedded_kv_events_stop("", 0), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_embedded_kv_events_drain("m", 1, 0, nullptr, 16, &n, &seq, &used, &dropped), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_embedded_kv_events_drain("m", 1, 0, buf, 16, nullptr, &seq, &used, &dropped), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_embedded_kv_events_drain("never-started", 13, 0, buf, 16, &n, &seq, &used, &dropped),
           MCGO_OBJECT_NOT_FOUND);
}

MCGO_TEST_MAIN()
