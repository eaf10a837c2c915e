// The embedded transfer engine through its C ABI: engines meeting through a
// metadata string, registration, segments, batches, handles, notifications.
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "mcgo/store.h"
#include "mcgo/transfer.h"

namespace {

std::string UniqueMeta() {
  static std::atomic<int> n{0};
  return "http://test-" + std::to_string(n++) + ".invalid/metadata";
}

class Engine {
 public:
  Engine(const std::string &meta, const std::string &name) {
    mcgo_te_config c{};
    c.metadata_server = meta.c_str();
    c.local_server_name = name.c_str();
    char err[256];
    const int32_t rc = mcgo_te_create(&c, &e_, err, sizeof err);
    if (rc != 0) std::fprintf(stderr, "create: %s\n", err);
    CHECK_EQ(rc, 0);
    CHECK_EQ(mcgo_te_install_transport(e_, "tcp", "", ""), 0);
  }
  ~Engine() {
    if (e_ != nullptr) CHECK_EQ(mcgo_te_destroy(e_), 0);
  }
  Engine(const Engine &) = delete;
  Engine &operator=(const Engine &) = delete;
  operator mcgo_te *() const { return e_; }
  void Destroy() {
    CHECK_EQ(mcgo_te_destroy(e_), 0);
    e_ = nullptr;
  }
  std::string Name() const {
    char buf[256];
    CHECK_EQ(mcgo_te_segment_name(e_, buf, sizeof buf, nullptr), 0);
    return buf;
  }
  uint64_t Open(const std::string &name) const {
    uint64_t seg = 0;
    CHECK_EQ(mcgo_te_open_segment(e_, name.data(), name.size(), &seg), 0);
    CHECK(seg != 0);
    return seg;
  }

 private:
  mcgo_te *e_ = nullptr;
};

uintptr_t A(const std::vector<uint8_t> &v, size_t off = 0) {
  return reinterpret_cast<uintptr_t>(v.data()) + off;
}

mcgo_te_request Req(uint32_t op, uint64_t seg, uintptr_t local, uintptr_t remote, uint64_t len) {
  mcgo_te_request r{};
  r.opcode = op;
  r.segment = seg;
  r.local_addr = local;
  r.remote_addr = remote;
  r.length = len;
  return r;
}

// Polls until no task is in flight.
mcgo_te_batch_summary Wait(mcgo_te *e, uint64_t batch, std::vector<mcgo_te_task_status> *tasks = nullptr) {
  mcgo_te_batch_summary s{};
  for (int i = 0; i < 100000; ++i) {
    std::vector<mcgo_te_task_status> st(tasks ? tasks->size() : 0);
    CHECK_EQ(mcgo_te_batch_status(e, batch, st.data(), st.size(), &s), 0);
    if (tasks) *tasks = st;
    if (s.in_flight == 0) return s;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  CHECK(false);  // never finished
  return s;
}

}  // namespace

TEST(CreateRefusals) {
  mcgo_te *e = nullptr;
  mcgo_te_config c{};
  char err[128];
  c.local_server_name = "127.0.0.1:1";
  // A protocol upstream has no plugin for (it would abort the process).
  c.metadata_server = "zk://127.0.0.1:2181";
  CHECK_EQ(mcgo_te_create(&c, &e, err, sizeof err), MCGO_TE_ERR_INVALID_ARGUMENT);
  CHECK(e == nullptr);
  CHECK(std::strstr(err, "unknown protocol") != nullptr);
  // etcd and Redis metadata: the embedded engine has every form
  // (mcgo_connect_forms); its metadata are names.
  CHECK(mcgo_connect_forms() & MCGO_CONNECT_METADATA_ETCD);
  for (const char *m : {"127.0.0.1:2379", "etcd://127.0.0.1:2379", "redis://127.0.0.1:6379"}) {
    c.metadata_server = m;
    CHECK_EQ(mcgo_te_create(&c, &e, err, sizeof err), 0);
    CHECK(e != nullptr);
    mcgo_te_destroy(e);
    e = nullptr;
  }
  c.metadata_server = "P2PHANDSHAKE";
  c.local_server_name = "";
  CHECK_EQ(mcgo_te_create(&c, &e, err, sizeof err), MCGO_TE_ERR_INVALID_ARGUMENT);
  CHECK_EQ(mcgo_te_create(nullptr, &e, err, sizeof err), MCGO_TE_ERR_INVALID_ARGUMENT);
  CHECK_EQ(mcgo_te_destroy(nullptr), 0);
  // A duplicate live name in one namespace is refused.
  const std::string meta = UniqueMeta();
  Engine a(meta, "127.0.0.1:9000");
  c.metadata_server = meta.c_str();
  c.local_server_name = "127.0.0.1:9000";
  CHECK_EQ(mcgo_te_create(&c, &e, err, sizeof err), MCGO_TE_ERR_METADATA);
  // ... but another namespace is another world.
  const std::string other = UniqueMeta();
  c.metadata_server = other.c_str();
  CHECK_EQ(mcgo_te_create(&c, &e, err, sizeof err), 0);
  CHECK_EQ(mcgo_te_install_transport(e, "carrier-pigeon", "", ""), MCGO_TE_ERR_INVALID_ARGUMENT);
  CHECK_EQ(mcgo_te_install_transport(e, "rdma", "", ""), 0);
  CHECK_EQ(mcgo_te_install_transport(e, "rdma", "", ""), 0);
  CHECK_EQ(mcgo_te_destroy(e), 0);
}

TEST(HandshakeNamesGetAPort) {
  Engine a("P2PHANDSHAKE", "127.0.0.1");
  Engine b("P2PHANDSHAKE", "127.0.0.1");
  CHECK(a.Name() != b.Name());
  CHECK(a.Name().rfind("127.0.0.1:", 0) == 0);
  uint32_t port = 0;
  CHECK_EQ(mcgo_te_rpc_port(a, &port), 0);
  CHECK(port > 0);
  b.Open(a.Name());
}

TEST(Registration) {
  Engine e(UniqueMeta(), "127.0.0.1:1");
  std::vector<uint8_t> m(1 << 16);
  CHECK_EQ(mcgo_te_register(e, A(m), 0, "", 1), MCGO_TE_ERR_INVALID_ARGUMENT);
  CHECK_EQ(mcgo_te_register(e, 0, 10, "", 1), MCGO_TE_ERR_INVALID_ARGUMENT);
  CHECK_EQ(mcgo_te_register(e, UINTPTR_MAX - 4, 10, "", 1), MCGO_TE_ERR_INVALID_ARGUMENT);
  CHECK_EQ(mcgo_te_register(e, A(m), 4096, "*", 1), 0);
  CHECK_EQ(mcgo_te_register(e, A(m), 4096, "", 1), MCGO_TE_ERR_ADDRESS_OVERLAPPED);
  CHECK_EQ(mcgo_te_register(e, A(m, 100), 10, "", 1), MCGO_TE_ERR_ADDRESS_OVERLAPPED);
  CHECK_EQ(mcgo_te_unregister(e, A(m, 1)), MCGO_TE_ERR_ADDRESS_NOT_REGISTERED);
  CHECK_EQ(mcgo_te_unregister(e, A(m)), 0);
  // Batches are all or nothing.
  uintptr_t addrs[3] = {A(m), A(m, 8192), A(m, 8192 + 100)};
  uint64_t lens[3] = {4096, 4096, 4096};
  CHECK_EQ(mcgo_te_register_batch(e, addrs, lens, 3, ""), MCGO_TE_ERR_ADDRESS_OVERLAPPED);
  CHECK_EQ(mcgo_te_unregister(e, A(m)), MCGO_TE_ERR_ADDRESS_NOT_REGISTERED);  // nothing added
  CHECK_EQ(mcgo_te_register_batch(e, addrs, lens, 2, ""), 0);
  uintptr_t un[2] = {A(m), A(m, 1)};
  CHECK_EQ(mcgo_te_unregister_batch(e, un, 2), MCGO_TE_ERR_ADDRESS_NOT_REGISTERED);
  // Upstream leaves the valid one a "zombie" here; ours is untouched.
  CHECK_EQ(mcgo_te_unregister(e, A(m)), 0);
  CHECK_EQ(mcgo_te_register(e, A(m), 4096, "", 1), 0);
  uintptr_t both[2] = {A(m), A(m, 8192)};
  CHECK_EQ(mcgo_te_unregister_batch(e, both, 2), 0);
}

TEST(SegmentsAndBuffers) {
  const std::string meta = UniqueMeta();
  Engine a(meta, "127.0.0.1:1"), b(meta, "127.0.0.1:2");
  std::vector<uint8_t> m(1 << 16);
  CHECK_EQ(mcgo_te_register(b, A(m, 4096), 100, "", 1), 0);
  CHECK_EQ(mcgo_te_register(b, A(m), 200, "", 1), 0);
  uint64_t seg = 0;
  CHECK_EQ(mcgo_te_open_segment(a, "", 0, &seg), MCGO_TE_ERR_INVALID_ARGUMENT);
  CHECK_EQ(mcgo_te_open_segment(a, "///", 3, &seg), MCGO_TE_ERR_INVALID_ARGUMENT);
  CHECK_EQ(mcgo_te_open_segment(a, "nobody", 6, &seg), MCGO_TE_ERR_METADATA);
  seg = a.Open("/127.0.0.1:2");
  uint64_t addrs[4], lens[4];
  size_t total = 0;
  CHECK_EQ(mcgo_te_segment_buffers(a, seg, 0, addrs, lens, 4, &total), 0);
  CHECK_EQ(total, 2u);
  CHECK_EQ(addrs[0], static_cast<uint64_t>(A(m, 4096)));  // registration order
  CHECK_EQ(lens[1], 200u);
  // A snapshot until refreshed.
  CHECK_EQ(mcgo_te_register(b, A(m, 8192), 300, "", 1), 0);
  CHECK_EQ(mcgo_te_segment_buffers(a, seg, 0, addrs, lens, 0, &total), 0);
  CHECK_EQ(total, 2u);
  CHECK_EQ(mcgo_te_segment_buffers(a, seg, 1, addrs, lens, 1, &total), 0);
  CHECK_EQ(total, 3u);
  // Handles are validated.
  CHECK_EQ(mcgo_te_close_segment(a, seg), 0);
  CHECK_EQ(mcgo_te_close_segment(a, seg), MCGO_TE_ERR_INVALID_HANDLE);
  CHECK_EQ(mcgo_te_segment_buffers(a, seg, 0, addrs, lens, 4, &total), MCGO_TE_ERR_INVALID_HANDLE);
  const uint64_t own = b.Open(b.Name());
  CHECK_EQ(mcgo_te_segment_buffers(a, own, 0, addrs, lens, 4, &total), MCGO_TE_ERR_INVALID_HANDLE);
  CHECK_EQ(mcgo_te_close_segment(a, 12345), MCGO_TE_ERR_INVALID_HANDLE);
  CHECK_EQ(mcgo_te_close_segment(a, 0), MCGO_TE_ERR_INVALID_HANDLE);
}

TEST(WriteAndReadMoveBytes) {
  const std::string meta = UniqueMeta();
  Engine a(meta, "127.0.0.1:1"), b(meta, "127.0.0.1:2");
  std::vector<uint8_t> la(1 << 20), lb(1 << 20);
  for (size_t i = 0; i < la.size(); ++i) la[i] = static_cast<uint8_t>(i * 7);
  CHECK_EQ(mcgo_te_register(a, A(la), la.size(), "", 1), 0);
  CHECK_EQ(mcgo_te_register(b, A(lb), lb.size(), "", 1), 0);
  const uint64_t seg = a.Open(b.Name());
  uint64_t batch = 0;
  CHECK_EQ(mcgo_te_batch_alloc(a, 8, &batch), 0);
  mcgo_te_request w[2] = {Req(MCGO_TE_WRITE, seg, A(la), A(lb), 4096),
                          Req(MCGO_TE_WRITE, seg, A(la, 4096), A(lb, 65536), 1 << 19)};
  CHECK_EQ(mcgo_te_batch_submit(a, batch, w, 2, nullptr, 0, nullptr, 0), 0);
  std::vector<mcgo_te_task_status> st(2);
  mcgo_te_batch_summary s = Wait(a, batch, &st);
  CHECK_EQ(s.state, MCGO_TE_COMPLETED);
  CHECK_EQ(s.tasks, 2u);
  CHECK_EQ(s.bytes, 4096u + (1u << 19));
  CHECK_EQ(st[1].bytes, 1u << 19);
  CHECK_BYTES(lb.data(), la.data(), 4096);
  CHECK_BYTES(lb.data() + 65536, la.data() + 4096, 1 << 19);
  // Read it back into another place.
  mcgo_te_request r = Req(MCGO_TE_READ, seg, A(la, 1 << 19 | 4096), A(lb, 65536), 4096);
  CHECK_EQ(mcgo_te_batch_submit(a, batch, &r, 1, nullptr, 0, nullptr, 0), 0);
  CHECK_EQ(Wait(a, batch).state, MCGO_TE_COMPLETED);
  CHECK_BYTES(la.data() + (1 << 19 | 4096), la.data() + 4096, 4096);
  CHECK_EQ(mcgo_te_batch_free(a, batch), 0);
  CHECK_EQ(mcgo_te_batch_free(a, batch), MCGO_TE_ERR_INVALID_HANDLE);
  CHECK_EQ(mcgo_te_batch_submit(a, batch, &r, 1, nullptr, 0, nullptr, 0), MCGO_TE_ERR_INVALID_HANDLE);
}

TEST(SubmitRefusalsAddNothing) {
  const std::string meta = UniqueMeta();
  Engine a(meta, "127.0.0.1:1"), b(meta, "127.0.0.1:2");
  std::vector<uint8_t> la(1 << 16), lb(1 << 16), unreg(4096);
  CHECK_EQ(mcgo_te_register(a, A(la), la.size(), "", 1), 0);
  CHECK_EQ(mcgo_te_register(b, A(lb), lb.size(), "", 1), 0);
  const uint64_t seg = a.Open(b.Name());
  uint64_t batch = 0;
  CHECK_EQ(mcgo_te_batch_alloc(a, 2, &batch), 0);
  CHECK_EQ(mcgo_te_batch_alloc(a, MCGO_TE_MAX_BATCH + 1, &batch), MCGO_TE_ERR_INVALID_ARGUMENT);
  CHECK_EQ(mcgo_te_batch_alloc(a, 2, &batch), 0);
  const mcgo_te_request ok = Req(MCGO_TE_WRITE, seg, A(la), A(lb), 100);
  struct Case {
    const char *name;
    mcgo_te_request r;
    int32_t rc;
  } cases[] = {
      {"opcode", Req(7, seg, A(la), A(lb), 100), MCGO_TE_ERR_INVALID_ARGUMENT},
      {"unknown segment", Req(MCGO_TE_WRITE, seg + 1, A(la), A(lb), 100), MCGO_TE_ERR_INVALID_HANDLE},
      {"no segment", Req(MCGO_TE_WRITE, 0, A(la), A(lb), 100), MCGO_TE_ERR_INVALID_HANDLE},
      {"local not registered", Req(MCGO_TE_WRITE, seg, A(unreg), A(lb), 100), MCGO_TE_ERR_ADDRESS_NOT_REGISTERED},
      {"local past its region", Req(MCGO_TE_WRITE, seg, A(la, (1 << 16) - 50), A(lb), 100), MCGO_TE_ERR_ADDRESS_NOT_REGISTERED},
      {"local wraps", Req(MCGO_TE_WRITE, seg, UINTPTR_MAX - 10, A(lb), 100), MCGO_TE_ERR_INVALID_ARGUMENT},
      {"remote wraps", Req(MCGO_TE_WRITE, seg, A(la), UINT64_MAX - 10, 100), MCGO_TE_ERR_INVALID_ARGUMENT},
  };
  for (const Case &c : cases) {
    mcgo_te_request two[2] = {ok, c.r};
    if (mcgo_te_batch_submit(a, batch, two, 2, nullptr, 0, nullptr, 0) != c.rc) {
      std::fprintf(stderr, "case %s\n", c.name);
      CHECK(false);
    }
  }
  mcgo_te_request bad = ok;
  bad.reserved = 1;
  CHECK_EQ(mcgo_te_batch_submit(a, batch, &bad, 1, nullptr, 0, nullptr, 0), MCGO_TE_ERR_INVALID_ARGUMENT);
  mcgo_te_batch_summary s{};
  CHECK_EQ(mcgo_te_batch_status(a, batch, nullptr, 0, &s), 0);
  CHECK_EQ(s.tasks, 0u);  // every refusal added nothing
  CHECK_EQ(s.state, MCGO_TE_COMPLETED);  // an empty batch
  // Capacity counts over the batch's life.
  // Disjoint ranges: two tasks writing the same bytes at once would race (TSan).
  mcgo_te_request three[3] = {ok, Req(MCGO_TE_WRITE, seg, A(la, 128), A(lb, 128), 100),
                              Req(MCGO_TE_WRITE, seg, A(la, 256), A(lb, 256), 100)};
  CHECK_EQ(mcgo_te_batch_submit(a, batch, three, 3, nullptr, 0, nullptr, 0), MCGO_TE_ERR_TOO_MANY_REQUESTS);
  CHECK_EQ(mcgo_te_batch_submit(a, batch, three, 1, nullptr, 0, nullptr, 0), 0);
  CHECK_EQ(mcgo_te_batch_submit(a, batch, three + 1, 1, nullptr, 0, nullptr, 0), 0);
  CHECK_EQ(mcgo_te_batch_submit(a, batch, three + 2, 1, nullptr, 0, nullptr, 0), MCGO_TE_ERR_TOO_MANY_REQUESTS);
  CHECK_EQ(Wait(a, batch).tasks, 2u);
  CHECK_EQ(mcgo_te_batch_submit(a, batch, nullptr, 0, nullptr, 0, nullptr, 0), 0);  // empty: a no-op
  CHECK_EQ(mcgo_te_batch_free(a, batch), 0);
  // A zero-length request completes without checks.
  CHECK_EQ(mcgo_te_batch_alloc(a, 1, &batch), 0);
  mcgo_te_request zero = Req(MCGO_TE_READ, seg, 0, 0, 0);
  CHECK_EQ(mcgo_te_batch_submit(a, batch, &zero, 1, nullptr, 0, nullptr, 0), 0);
  s = Wait(a, batch);
  CHECK_EQ(s.state, MCGO_TE_COMPLETED);
  CHECK_EQ(s.bytes, 0u);
  CHECK_EQ(mcgo_te_batch_free(a, batch), 0);
}

TEST(RemoteRangeOutsidePeerMemoryFailsTheTask) {
  const std::string meta = UniqueMeta();
  Engine a(meta, "127.0.0.1:1"), b(meta, "127.0.0.1:2");
  std::vector<uint8_t> la(1 << 16), lb(1 << 16);
  CHECK_EQ(mcgo_te_register(a, A(la), la.size(), "", 1), 0);
  CHECK_EQ(mcgo_te_register(b, A(lb), 4096, "", 1), 0);
  CHECK_EQ(mcgo_te_register(b, A(lb, 4096), 4096, "", 1), 0);
  const uint64_t seg = a.Open(b.Name());
  uint64_t batch = 0;
  CHECK_EQ(mcgo_te_batch_alloc(a, 4, &batch), 0);
  mcgo_te_request r[3] = {Req(MCGO_TE_WRITE, seg, A(la), A(lb), 4096),
                          Req(MCGO_TE_WRITE, seg, A(la), A(lb, 4000), 200),   // across two regions
                          Req(MCGO_TE_WRITE, seg, A(la), A(lb, 16384), 10)};  // unregistered
  CHECK_EQ(mcgo_te_batch_submit(a, batch, r, 3, nullptr, 0, nullptr, 0), 0);
  std::vector<mcgo_te_task_status> st(3);
  mcgo_te_batch_summary s = Wait(a, batch, &st);
  CHECK_EQ(s.state, MCGO_TE_FAILED);
  CHECK_EQ(st[0].state, MCGO_TE_COMPLETED);
  CHECK_EQ(st[1].state, MCGO_TE_FAILED);
  CHECK_EQ(st[1].bytes, 0u);
  CHECK_EQ(st[2].state, MCGO_TE_FAILED);
  CHECK_EQ(mcgo_te_batch_free(a, batch), 0);
}

TEST(Notifications) {
  const std::string meta = UniqueMeta();
  Engine a(meta, "127.0.0.1:1"), b(meta, "127.0.0.1:2");
  std::vector<uint8_t> la(4096), lb(4096);
  CHECK_EQ(mcgo_te_register(a, A(la), la.size(), "", 1), 0);
  CHECK_EQ(mcgo_te_register(b, A(lb), lb.size(), "", 1), 0);
  const uint64_t seg = a.Open(b.Name());
  char buf[64];
  uint64_t nl[4], ml[4], need = 0;
  size_t n = 0;
  // A batch's notification arrives when the initiator sees it COMPLETED.
  uint64_t batch = 0;
  CHECK_EQ(mcgo_te_batch_alloc(a, 1, &batch), 0);
  mcgo_te_request w = Req(MCGO_TE_WRITE, seg, A(la), A(lb), 4096);
  CHECK_EQ(mcgo_te_batch_submit(a, batch, &w, 1, "done", 4, "128 pages", 9), 0);
  mcgo_te_batch_summary s = Wait(a, batch);
  CHECK_EQ(s.notify, MCGO_TE_NOTIFY_SENT);
  CHECK_EQ(mcgo_te_notify_recv(b, buf, sizeof buf, nl, ml, 4, &n, &need), 0);
  CHECK_EQ(n, 1u);
  CHECK_EQ(std::string(buf, nl[0]), "done");
  CHECK_EQ(std::string(buf + nl[0], ml[0]), "128 pages");
  CHECK_EQ(mcgo_te_notify_recv(b, buf, sizeof buf, nl, ml, 4, &n, &need), 0);
  CHECK_EQ(n, 0u);  // drained
  CHECK_EQ(mcgo_te_batch_free(a, batch), 0);
  // A failed batch sends none.
  CHECK_EQ(mcgo_te_batch_alloc(a, 1, &batch), 0);
  mcgo_te_request bad = Req(MCGO_TE_WRITE, seg, A(la), A(lb, 100), 4096);
  CHECK_EQ(mcgo_te_batch_submit(a, batch, &bad, 1, "x", 1, "", 0), 0);
  CHECK_EQ(Wait(a, batch).notify, MCGO_TE_NOTIFY_DROPPED);
  CHECK_EQ(mcgo_te_notify_recv(b, buf, sizeof buf, nl, ml, 4, &n, &need), 0);
  CHECK_EQ(n, 0u);
  CHECK_EQ(mcgo_te_batch_free(a, batch), 0);
  // Direct sends, by segment and by name; FIFO; too small a buffer.
  CHECK_EQ(mcgo_te_notify_send(a, seg, nullptr, 0, "n1", 2, "m1", 2), 0);
  CHECK_EQ(mcgo_te_notify_send(a, 0, b.Name().data(), b.Name().size(), "n2", 2, "a longer message", 16), 0);
  CHECK_EQ(mcgo_te_notify_send(a, 0, "ghost", 5, "n", 1, "m", 1), MCGO_TE_ERR_METADATA);
  CHECK_EQ(mcgo_te_notify_send(a, seg, nullptr, 0, "\xff", 1, "", 0), MCGO_TE_ERR_INVALID_ARGUMENT);
  std::string big(MCGO_TE_NOTIFY_MAX_BYTES + 1, 'x');
  CHECK_EQ(mcgo_te_notify_send(a, seg, nullptr, 0, "", 0, big.data(), big.size()), MCGO_TE_ERR_INVALID_ARGUMENT);
  CHECK_EQ(mcgo_te_notify_recv(b, buf, 10, nl, ml, 4, &n, &need), 0);
  CHECK_EQ(n, 1u);  // the second does not fit in what is left
  CHECK_EQ(need, 18u);
  CHECK_EQ(mcgo_te_notify_recv(b, buf, sizeof buf, nl, ml, 4, &n, &need), 0);
  CHECK_EQ(n, 1u);
  CHECK_EQ(std::string(buf + nl[0], ml[0]), "a longer message");
}

TEST(FreeWhileBusyAndDestroyEndsEverything) {
  const std::string meta = UniqueMeta();
  auto a = std::make_unique<Engine>(meta, "127.0.0.1:1");
  Engine b(meta, "127.0.0.1:2");
  std::vector<uint8_t> la(16 << 20), lb(16 << 20);
  CHECK_EQ(mcgo_te_register(*a, A(la), la.size(), "", 1), 0);
  CHECK_EQ(mcgo_te_register(b, A(lb), lb.size(), "", 1), 0);
  const uint64_t seg = a->Open(b.Name());
  uint64_t batch = 0;
  CHECK_EQ(mcgo_te_batch_alloc(*a, 16, &batch), 0);
  // Sixteen 1 MiB writes into disjoint ranges: two workers writing the same bytes at once would
  // be a race of the test's own making.
  std::vector<mcgo_te_request> r;
  for (size_t i = 0; i < 16; ++i) r.push_back(Req(MCGO_TE_WRITE, seg, A(la, i << 20), A(lb, i << 20), 1 << 20));
  CHECK_EQ(mcgo_te_batch_submit(*a, batch, r.data(), r.size(), nullptr, 0, nullptr, 0), 0);
  mcgo_te_batch_summary s{};
  CHECK_EQ(mcgo_te_batch_status(*a, batch, nullptr, 0, &s), 0);
  if (s.in_flight > 0) CHECK_EQ(mcgo_te_batch_free(*a, batch), MCGO_TE_ERR_BATCH_BUSY);
  a->Destroy();  // ends the batch; b's memory is no longer touched after this
  std::memset(lb.data(), 0, lb.size());  // no race (TSan) with a late copy
  // The peer is gone for b.
  uint64_t back = 0;
  CHECK_EQ(mcgo_te_open_segment(b, "127.0.0.1:1", 11, &back), MCGO_TE_ERR_METADATA);
}

TEST(ConcurrentBatches) {
  const std::string meta = UniqueMeta();
  Engine a(meta, "127.0.0.1:1"), b(meta, "127.0.0.1:2");
  std::vector<uint8_t> la(1 << 20), lb(1 << 20);
  CHECK_EQ(mcgo_te_register(a, A(la), la.size(), "", 1), 0);
  CHECK_EQ(mcgo_te_register(b, A(lb), lb.size(), "", 1), 0);
  const uint64_t sa = b.Open(a.Name());
  const uint64_t sb = a.Open(b.Name());
  std::vector<std::thread> th;
  for (int w = 0; w < 4; ++w) {
    th.emplace_back([&, w] {
      mcgo_te *e = w % 2 ? static_cast<mcgo_te *>(a) : static_cast<mcgo_te *>(b);
      const uint64_t seg = w % 2 ? sb : sa;
      const std::vector<uint8_t> &mine = w % 2 ? la : lb;
      const std::vector<uint8_t> &theirs = w % 2 ? lb : la;
      for (int i = 0; i < 50; ++i) {
        uint64_t batch = 0;
        CHECK_EQ(mcgo_te_batch_alloc(e, 4, &batch), 0);
        const size_t off = static_cast<size_t>(w) * 65536;
        mcgo_te_request r[2] = {Req(MCGO_TE_WRITE, seg, A(mine, off), A(theirs, off + 262144), 8192),
                                Req(MCGO_TE_READ, seg, A(mine, off + 16384), A(theirs, off + 524288), 8192)};
        CHECK_EQ(mcgo_te_batch_submit(e, batch, r, 2, nullptr, 0, nullptr, 0), 0);
        CHECK_EQ(Wait(e, batch).state, MCGO_TE_COMPLETED);
        CHECK_EQ(mcgo_te_batch_free(e, batch), 0);
      }
    });
  }
  for (auto &t : th) t.join();
}

TEST(StoreOnEngine) {
  const std::string meta = UniqueMeta();
  auto e = std::make_unique<Engine>(meta, "127.0.0.1:5");
  mcgo_store *s = nullptr;
  CHECK_EQ(mcgo_store_create(&s), 0);
  mcgo_store_config c{};
  c.protocol = "tcp";
  c.master_server_address = "on-engine-test:1";
  c.local_buffer_size = 1 << 20;
  c.global_segment_size = 16 << 20;
  char err[256];
  c.local_hostname = "127.0.0.1:6";
  CHECK_EQ(mcgo_store_setup_on_engine(s, &c, *e, err, sizeof err), MCGO_INVALID_PARAMS);
  c.local_hostname = "";
  CHECK_EQ(mcgo_store_setup_on_engine(s, &c, nullptr, err, sizeof err), MCGO_INVALID_PARAMS);
  CHECK_EQ(mcgo_store_setup_on_engine(s, &c, *e, err, sizeof err), 0);
  char host[64];
  CHECK_EQ(mcgo_store_hostname(s, host, sizeof host, nullptr), 0);
  CHECK_EQ(std::string(host), "127.0.0.1:5");
  // One set of registrations.
  std::vector<uint8_t> m(8192);
  CHECK_EQ(mcgo_te_register(*e, A(m), m.size(), "", 1), 0);
  CHECK_EQ(mcgo_store_register_buffer(s, A(m), 4096), MCGO_INVALID_PARAMS);
  mcgo_replicate_config one{};
  one.replica_num = 1;
  CHECK_EQ(mcgo_store_put_from(s, "k", 1, A(m), 4096, one), 0);
  CHECK_EQ(mcgo_te_destroy(*e), MCGO_TE_ERR_BATCH_BUSY);  // the store runs on it
  mcgo_store_destroy(s);
  CHECK_EQ(mcgo_te_unregister(*e, A(m)), 0);
  e.reset();  // now it goes
}

MCGO_TEST_MAIN()
