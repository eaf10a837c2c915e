// Several clients of one cluster: placement, replicas, capacity (-200),
// accounting, unmount on destroy, and objects whose write is in flight
// ("pending"), driven through the cluster internals.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

using namespace tu;
using mcgo::embedded::WriteOp;

// Capacity tests use segments of the minimum size (16 MiB) and measure
// objects in 1/1024ths of one.
constexpr uint64_t kSeg = kMinSegment;
constexpr uint64_t kU = kSeg / 1024;  // 16 KiB

TEST(ClientsShareObjects) {
  const std::string m = UniqueMaster("share");
  Store a(m), b(m);
  Mem ma(4096, a), mb(4096, b);
  Fill(ma.data(), 4096, 1);
  CHECK_EQ(PutFrom(a, "x", ma.addr(), 4096), 0);
  CHECK_EQ(GetInto(b, "x", mb.addr(), 4096), 4096);
  CHECK(HasPattern(mb.data(), 4096, 1));
  CHECK_EQ(PutFrom(b, "x", mb.addr(), 10), 0);  // write-once across clients
  CHECK_EQ(Size(a, "x"), 4096);
  CHECK_EQ(Remove(b, "x", true), 0);
  CHECK_EQ(Exists(a, "x"), 0);
}

TEST(Placement) {
  const std::string m = UniqueMaster("place");
  Store a(m, 1 * kSeg), b(m, 2 * kSeg), c(m, 3 * kSeg);
  const std::string na = a.Hostname(), nb = b.Hostname(), nc = c.Hostname();

  // Most free space first.
  CHECK_EQ(Put(a, "k1", "v"), 0);
  CHECK_EQ(Replicas(a, "k1"), std::vector<std::string>{nc});
  // Preferred segments in order; unknown names and duplicates skipped.
  const Preferred p1{"nobody:1", na, na, nb};
  CHECK_EQ(Put(a, "k2", "v", p1.Apply(Cfg(1))), 0);
  CHECK_EQ(Replicas(a, "k2"), std::vector<std::string>{na});
  CHECK_EQ(Put(a, "k3", "v", p1.Apply(Cfg(2))), 0);
  CHECK_EQ(Replicas(a, "k3"), (std::vector<std::string>{na, nb}));
  // Replicas land on distinct segments; more than there are is best effort.
  CHECK_EQ(Put(a, "k4", "v", Cfg(3)), 0);
  CHECK_EQ(Replicas(a, "k4"), (std::vector<std::string>{nc, nb, na}));
  CHECK_EQ(Put(a, "k5", "v", Cfg(10)), 0);
  CHECK_EQ(Replicas(a, "k5").size(), 3u);
  CHECK_EQ(Get(b, "k5"), "v");
  // Accounting: one byte per replica.
  CHECK_EQ(SegmentUsed(a, na), 4u);  // k2 k3 k4 k5
  CHECK_EQ(SegmentUsed(a, nb), 3u);  // k3 k4 k5
  CHECK_EQ(SegmentUsed(a, nc), 3u);  // k1 k4 k5
  CHECK_EQ(Remove(a, "k4"), 0);
  CHECK_EQ(SegmentUsed(a, na), 3u);
  CHECK_EQ(SegmentUsed(a, nb), 2u);
  CHECK_EQ(SegmentUsed(a, nc), 2u);
  // A full preferred segment is skipped.
  Mem big(kSeg, a);
  const Preferred pa{na};
  CHECK_EQ(PutFrom(a, "fill-a", big.addr(), kSeg - 3, pa.Apply(Cfg())), 0);
  CHECK_EQ(Replicas(a, "fill-a"), std::vector<std::string>{na});
  CHECK_EQ(SegmentUsed(a, na), kSeg);
  CHECK_EQ(Put(a, "k6", "v", pa.Apply(Cfg())), 0);
  CHECK_EQ(Replicas(a, "k6"), std::vector<std::string>{nc});
}

TEST(CapacityAndNoAvailableHandle) {
  const std::string m = UniqueMaster("cap");
  Store a(m, kSeg), b(m, kSeg);
  Mem src(2 * kSeg, a);
  // 600 kU objects (segments are 1024 kU): one fits per segment.
  CHECK_EQ(PutFrom(a, "o1", src.addr(), 600 * kU), 0);
  CHECK_EQ(PutFrom(a, "o2", src.addr(), 600 * kU), 0);
  CHECK_EQ(PutFrom(a, "o3", src.addr(), 600 * kU), MCGO_NO_AVAILABLE_HANDLE);
  CHECK_EQ(Exists(a, "o3"), 0);
  // Bigger than any segment.
  CHECK_EQ(PutFrom(a, "o4", src.addr(), kSeg + 1), MCGO_NO_AVAILABLE_HANDLE);
  // Two replicas wanted, room for none/one: -200 / best effort.
  CHECK_EQ(PutFrom(a, "o5", src.addr(), 400 * kU, Cfg(2)), 0);
  CHECK_EQ(Replicas(a, "o5").size(), 2u);
  CHECK_EQ(Remove(a, "o5"), 0);
  CHECK_EQ(Remove(a, "o1"), 0);  // frees room on one segment
  CHECK_EQ(PutFrom(a, "o6", src.addr(), 500 * kU, Cfg(2)), 0);
  CHECK_EQ(Replicas(a, "o6").size(), 1u);
  // Batch: each key on its own (free now: one segment 524 kU, the other 424 kU).
  Keys keys{"b1", "b2", "b3"};
  std::vector<uintptr_t> addrs{src.addr(), src.addr(), src.addr()};
  std::vector<uint64_t> sizes{400 * kU, 450 * kU, 10};
  std::vector<int64_t> r(3, 7);
  CHECK_EQ(mcgo_store_batch_put_from(a, keys.data(), keys.offsets(), 3, addrs.data(), sizes.data(), Cfg(), r.data()), 0);
  CHECK_EQ(r[0], 0);
  CHECK_EQ(r[1], MCGO_NO_AVAILABLE_HANDLE);
  CHECK_EQ(r[2], 0);
  // Exact fill, then not one byte more.
  auto st = Stats(a);
  uint64_t free_total = 0;
  for (const auto &seg : st.segments) free_total += seg.capacity - seg.used;
  CHECK_EQ(mcgo_store_remove_all(a, 1), 4);
  CHECK_EQ(SegmentUsed(a, a.Hostname()), 0u);
  CHECK_EQ(SegmentUsed(a, b.Hostname()), 0u);
  CHECK_EQ(free_total, 2 * kSeg - (600 + 500 + 400) * kU - 10);  // o2 o6 b1 b3
  CHECK_EQ(PutFrom(a, "full", src.addr(), kSeg), 0);
  CHECK_EQ(PutFrom(a, "full2", src.addr(), kSeg), 0);
  CHECK_EQ(PutFrom(a, "one", src.addr(), 1), MCGO_NO_AVAILABLE_HANDLE);
}

TEST(UpsertPlacementAndCapacity) {
  const std::string m = UniqueMaster("upcap");
  Store a(m, kSeg);
  Mem src(kSeg, a);
  CHECK_EQ(PutFrom(a, "u", src.addr(), 400 * kU), 0);
  CHECK_EQ(PutFrom(a, "other", src.addr(), 400 * kU), 0);
  // Same size: in place.
  CHECK_EQ(mcgo_store_upsert_from(a, "u", 1, src.addr(), 400 * kU, Cfg()), 0);
  CHECK_EQ(SegmentUsed(a, a.Hostname()), 800 * kU);
  // Growing: the old space is released first, so 600 kU fits (of 1024).
  CHECK_EQ(mcgo_store_upsert_from(a, "u", 1, src.addr(), 600 * kU, Cfg()), 0);
  CHECK_EQ(SegmentUsed(a, a.Hostname()), 1000 * kU);
  // No room for the new size: the key is gone (upstream case C).
  CHECK_EQ(mcgo_store_upsert_from(a, "u", 1, src.addr(), 700 * kU, Cfg()), MCGO_NO_AVAILABLE_HANDLE);
  CHECK_EQ(Exists(a, "u"), 0);
  CHECK_EQ(SegmentUsed(a, a.Hostname()), 400 * kU);
}

TEST(DestroyUnmountsSegment) {
  const std::string m = UniqueMaster("unmount");
  Store a(m), b(m);
  const Preferred pb{b.Hostname()}, pab{a.Hostname(), b.Hostname()};
  CHECK_EQ(Put(a, "only-b", "1", pb.Apply(Cfg())), 0);
  CHECK_EQ(Put(a, "both", "2", pab.Apply(Cfg(2))), 0);
  CHECK_EQ(Put(a, "only-a", "3", pab.Apply(Cfg(1))), 0);
  CHECK_EQ(Get(a, "only-b"), "1");  // leased: unmount removes it anyway
  CHECK_EQ(Replicas(a, "both"), (std::vector<std::string>{a.Hostname(), b.Hostname()}));
  b.Destroy();
  CHECK_EQ(Exists(a, "only-b"), 0);
  CHECK_EQ(Get(a, "both"), "2");
  CHECK_EQ(Replicas(a, "both"), std::vector<std::string>{a.Hostname()});
  CHECK_EQ(Get(a, "only-a"), "3");
  CHECK_EQ(Stats(a).segments.size(), 1u);
  CHECK_EQ(Stats(a).objects, 2u);
  CHECK_EQ(SegmentUsed(a, a.Hostname()), 2u);
  // A client without a segment leaves objects alone.
  Store c(m, 0, MiB);
  CHECK_EQ(Put(c, "via-c", "4"), 0);
  c.Destroy();
  CHECK_EQ(Get(a, "via-c"), "4");
}

// Segments mounted after setup: a too-small id array mounts nothing, the
// unmount calls refuse the other kind and strangers' ids, a graceful
// unmount keeps the objects readable until its deadline, destroy unmounts
// the rest.
TEST(MountedSegments) {
  const std::string m = UniqueMaster("mounts");
  Store a(m), n(m, 0, MiB);
  const size_t base = Stats(a).segments.size();
  mcgo_segment_id ids[2]{};
  size_t count = 0;
  uint64_t got = 0;
  CHECK_EQ(mcgo_store_allocate_and_mount_segment(n, 1, nullptr, nullptr, ids, 0, &count, &got),
           MCGO_BUFFER_OVERFLOW);
  CHECK_EQ(count, 1u);
  CHECK_EQ(Stats(a).segments.size(), base);  // nothing stays mounted
  CHECK_EQ(mcgo_store_allocate_and_mount_segment(n, 0, "", "", ids, 2, &count, &got), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_allocate_and_mount_segment(n, 1, "udp", "", ids, 2, &count, &got), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_allocate_and_mount_segment(n, 1, "tcp", "", ids, 2, &count, &got), 0);
  CHECK_EQ(count, 1u);
  CHECK_EQ(got, MCGO_SEGMENT_SLAB_SIZE);
  CHECK_EQ(mcgo_store_allocate_and_mount_segment(n, MCGO_SEGMENT_SLAB_SIZE + 1, "", "", ids + 1, 1, &count, &got), 0);
  CHECK_EQ(got, 2 * MCGO_SEGMENT_SLAB_SIZE);
  CHECK_EQ(Stats(a).segments.size(), base + 2);
  const Preferred pn{n.Hostname()};
  CHECK_EQ(Put(a, "on-n", "v", pn.Apply(Cfg())), 0);
  CHECK_EQ(Replicas(a, "on-n"), std::vector<std::string>{n.Hostname()});

  int64_t res[2] = {1, 1};
  CHECK_EQ(mcgo_store_unmount_segment(n, ids, 1, 0, res), MCGO_INVALID_PARAMS);  // the other kind
  CHECK_EQ(res[0], MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_unmount_and_free_segment(a, ids, 1, 0, res), MCGO_INVALID_PARAMS);  // not a's
  CHECK_EQ(mcgo_store_unmount_and_free_segment(n, nullptr, 1, 0, res), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_unmount_and_free_segment(n, ids, 1, 0, nullptr), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_unmount_and_free_segment(n, ids, 0, 0, nullptr), 0);
  const mcgo_segment_id forged{ids[0].first + 1, ids[0].second};
  CHECK_EQ(mcgo_store_unmount_and_free_segment(n, &forged, 1, 0, res), MCGO_INVALID_PARAMS);

  // Both segments gracefully, in one call: the first holds "on-n".
  CHECK_EQ(mcgo_store_unmount_and_free_segment(n, ids, 2, 1, res), 0);
  CHECK_EQ(res[0], 0);
  CHECK_EQ(res[1], 0);
  CHECK_EQ(Get(a, "on-n"), "v");  // readable during the grace period
  CHECK_EQ(Put(a, "late", "w", pn.Apply(Cfg())), 0);
  CHECK(Replicas(a, "late") != std::vector<std::string>{n.Hostname()});  // no new replicas there
  CHECK_EQ(mcgo_store_unmount_and_free_segment(n, ids, 1, 0, res), MCGO_INVALID_PARAMS);  // already
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  CHECK_EQ(Exists(a, "on-n"), 0);
  CHECK_EQ(Stats(a).segments.size(), base);

  // Destroy unmounts what is still mounted.
  CHECK_EQ(mcgo_store_allocate_and_mount_segment(n, 1, nullptr, nullptr, ids, 1, &count, &got), 0);
  CHECK_EQ(Put(a, "on-n", "v", pn.Apply(Cfg())), 0);
  n.Destroy();
  CHECK_EQ(Exists(a, "on-n"), 0);
  CHECK_EQ(Stats(a).segments.size(), base);
}

// Copy and move tasks run as they are created: a copy onto a segment with
// no room fails the task (not the creation) and adds nothing; a move frees
// the source's space.
TEST(CopyAndMoveTasks) {
  const std::string m = UniqueMaster("tasks");
  Store a(m, kSeg), b(m, kSeg);
  const Preferred pa{a.Hostname()};
  const std::string big(static_cast<size_t>(kSeg / 2 + kU), 'x');
  Mem mb(big.size(), a);
  std::memcpy(mb.data(), big.data(), big.size());
  CHECK_EQ(PutFrom(a, "big", mb.addr(), big.size(), pa.Apply(Cfg())), 0);
  CHECK_EQ(PutFrom(a, "big2", mb.addr(), big.size(), Preferred{b.Hostname()}.Apply(Cfg())), 0);
  const std::string hb = b.Hostname() + '\0';
  mcgo_uuid id{};
  CHECK_EQ(mcgo_store_create_copy_task(a, "big", 3, hb.data(), 1, hb.size(), &id), 0);
  mcgo_task_info info{};
  CHECK_EQ(mcgo_store_query_task(b, id, &info), 0);  // any client of the cluster can ask
  CHECK_EQ(info.status, MCGO_TASK_FAILED);          // b has no room left for a second big one
  CHECK_EQ(std::string(info.message), "error " + std::to_string(MCGO_NO_AVAILABLE_HANDLE));
  CHECK_EQ(Replicas(a, "big"), std::vector<std::string>{a.Hostname()});
  CHECK_EQ(mcgo_store_create_copy_task(a, "big", 3, hb.data(), 2, hb.size(), &id), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_create_copy_task(a, "big", 3, nullptr, 0, 0, &id), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_create_move_task(a, "big2", 4, b.Hostname().data(), b.Hostname().size(),
                                       a.Hostname().data(), a.Hostname().size(), &id),
           0);
  CHECK_EQ(mcgo_store_query_task(a, id, &info), 0);
  CHECK_EQ(info.status, MCGO_TASK_FAILED);  // a is as full as b
  CHECK_EQ(Remove(a, "big", true), 0);
  CHECK_EQ(mcgo_store_create_move_task(a, "big2", 4, b.Hostname().data(), b.Hostname().size(),
                                       a.Hostname().data(), a.Hostname().size(), &id),
           0);
  CHECK_EQ(mcgo_store_query_task(a, id, &info), 0);
  CHECK_EQ(info.status, MCGO_TASK_SUCCESS);
  CHECK_EQ(info.type, MCGO_TASK_MOVE);
  CHECK_EQ(Replicas(a, "big2"), std::vector<std::string>{a.Hostname()});
  CHECK_EQ(SegmentUsed(a, b.Hostname()), 0u);
  const mcgo_uuid stranger{id.first ^ 1, id.second};
  CHECK_EQ(mcgo_store_query_task(a, stranger, &info), MCGO_TASK_NOT_FOUND);
}

// --- objects whose write is in flight -----------------------------------------

namespace {

// Reserves key through the cluster internals, as a put does before copying.
WriteOp Reserve(mcgo_store *s, const std::string &key, uint64_t size,
                bool upsert = false,
                const mcgo::embedded::PlacementConfig &cfg = {}) {
  WriteOp op;
  op.key = key;
  op.size = size;
  s->cluster->Reserve(&op, 1, upsert, cfg, s->segment_id, s->hostname);
  return op;
}

void Complete(mcgo_store *s, WriteOp *op, char fill) {
  op->data = mcgo::embedded::Bytes(new uint8_t[op->size]);
  std::memset(op->data.get(), fill, op->size);
  s->cluster->Commit(op, 1);
}

}  // namespace

TEST(PendingObjects) {
  const std::string m = UniqueMaster("pending");
  Store s(m), t(m);
  WriteOp op = Reserve(s, "p", 10);
  CHECK(op.token != 0);
  CHECK_EQ(op.result, 0);
  CHECK_EQ(Stats(s).pending, 1u);

  // Readers see REPLICA_IS_NOT_READY, is_exist says 0, removal refuses it.
  CHECK_EQ(Get(t, "p"), "<-703>");
  CHECK_EQ(Size(t, "p"), -703);
  Mem out(64, t);
  CHECK_EQ(GetInto(t, "p", out.addr(), 64), -703);
  CHECK_EQ(Exists(t, "p"), 0);
  Keys k{"p"};
  std::vector<int64_t> r(1, 7);
  CHECK_EQ(mcgo_store_batch_is_exist(t, k.data(), k.offsets(), 1, r.data()), 0);
  CHECK_EQ(r[0], 0);
  CHECK_EQ(Remove(t, "p"), -703);
  CHECK_EQ(Remove(t, "p", true), -703);
  CHECK_EQ(mcgo_store_remove_all(t, 1), 0);
  CHECK_EQ(RemoveRegex(t, "p", true), 0);
  // A put of the same key reports 0 (already exists) and does not store.
  CHECK_EQ(Put(t, "p", "other"), 0);

  Complete(s, &op, 'x');
  CHECK_EQ(op.result, 0);
  CHECK_EQ(Get(t, "p"), std::string(10, 'x'));
  CHECK_EQ(Stats(s).pending, 0u);

  // Upsert of a completed key: in place, unreadable until committed, the
  // old bytes stay valid for a reader that already holds them.
  mcgo::embedded::ReadOp reader;
  reader.key = "p";
  s.get()->cluster->Acquire(&reader, 1);
  CHECK_EQ(reader.result, 10);
  WriteOp up = Reserve(s, "p", 10, true);
  CHECK(up.token != 0);
  CHECK_EQ(Get(t, "p"), "<-703>");
  Complete(s, &up, 'y');
  CHECK_EQ(Get(t, "p"), std::string(10, 'y'));
  CHECK_BYTES(reader.data.get(), std::string(10, 'x').data(), 10);
}

TEST(UpsertPreemptsInFlightWrite) {
  Store s(UniqueMaster("preempt"));
  WriteOp first = Reserve(s, "k", 10);
  WriteOp second = Reserve(s, "k", 20, true);  // preempts, new size
  CHECK(second.token != 0);
  CHECK(second.token != first.token);
  CHECK_EQ(SegmentUsed(s, s.Hostname()), 20u);
  Complete(s, &second, 'b');
  Complete(s, &first, 'a');  // too late: reports 0, value not stored
  CHECK_EQ(first.result, 0);
  CHECK_EQ(Get(s, "k"), std::string(20, 'b'));
  CHECK_EQ(SegmentUsed(s, s.Hostname()), 20u);
}

TEST(FailedWriteIsRevoked) {
  Store s(UniqueMaster("revoke"));
  WriteOp op = Reserve(s, "k", 10);
  op.result = MCGO_TRANSFER_FAIL;
  s.get()->cluster->Commit(&op, 1);
  CHECK_EQ(op.result, MCGO_TRANSFER_FAIL);
  CHECK_EQ(Exists(s, "k"), 0);
  CHECK_EQ(Stats(s).objects, 0u);
  CHECK_EQ(SegmentUsed(s, s.Hostname()), 0u);
}

TEST(UnmountDuringWrite) {
  const std::string m = UniqueMaster("unmountpending");
  Store a(m), b(m);
  mcgo::embedded::PlacementConfig only_b;
  only_b.preferred_segments = {b.Hostname()};
  WriteOp op = Reserve(a, "k", 10, false, only_b);
  CHECK_EQ(Replicas(a, "k"), std::vector<std::string>{b.Hostname()});
  b.Destroy();
  CHECK_EQ(Exists(a, "k"), 0);
  Complete(a, &op, 'z');
  CHECK_EQ(op.result, MCGO_OBJECT_NOT_FOUND);  // PutEnd finds no object
  CHECK_EQ(Stats(a).objects, 0u);
}

MCGO_TEST_MAIN()
