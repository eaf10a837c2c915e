// Native backend of mcgo/transfer.h, over upstream Mooncake's C++
// TransferEngine (not its C API, which validates no handle). Built by CMake
// (make native) into libmcgo_native.so; never compiled by cgo.
//
// Rules of this file:
//   - every entry point catches every C++ exception (MCGO_TE_ERR_INTERNAL,
//     cgo/common/guard.h);
//   - argument checks are the embedded engine's (cgo/common/transfer_args.h),
//     and so is the summary of a batch (cgo/common/transfer_batch.h),
//     and batches and segments are handles of our tables
//     (cgo/common/handles.h), so a stale or double-freed id never reaches
//     upstream, which would treat it as a pointer;
//   - upstream's Status codes become the ERR_* of the same name
//     (mcgo_te_code_from_status);
//   - what upstream does differently is tightened here, never widened:
//     an unsupported metadata string is refused (upstream aborts), a local
//     range outside registered memory is refused at submit (upstream's TCP
//     transport does not check), a batch unregister is all or nothing
//     (upstream can leave regions half removed), a batch's notification is
//     sent by this shim when it first sees the batch COMPLETED (upstream's
//     keeps the notification of a failed batch under a reusable address).

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/guard.h"
#include "common/handles.h"
#include "common/transfer_args.h"
#include "common/transfer_batch.h"
#include "mcgo/transfer.h"
#include "transfer_engine.h"
#include "transport/transport.h"

#include "native/transfer_engine_handle.h"

#ifndef MCGO_HAVE_TE_TOPOLOGY_STRING
#error "MCGO_HAVE_TE_TOPOLOGY_STRING must be defined by the build (cgo/native/features.cmake)"
#endif

namespace {

using mcgo::GuardTE;
using mcgo::args::WriteString;
using mooncake::TransferEngine;
using mooncake::TransferMetadata;
using mooncake::TransferRequest;
using mooncake::TransferStatus;
using mooncake::TransferStatusEnum;
using mooncake::Transport;

int32_t FromStatus(const mooncake::Status &st) {
  return st.ok() ? MCGO_OK : mcgo_te_code_from_status(static_cast<int32_t>(st.code()));
}

// The local segment's registered buffers (empty before a transport is
// installed: upstream then only records registrations).
std::vector<std::pair<uint64_t, uint64_t>> LocalBuffers(TransferEngine &e) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  auto desc = e.getMetadata() ? e.getMetadata()->getSegmentDescByID(0) : nullptr;
  if (!desc) return out;
  for (const auto &b : desc->buffers) out.push_back({b.addr, b.length});
  return out;
}

bool Inside(const std::vector<std::pair<uint64_t, uint64_t>> &bufs, uint64_t addr, uint64_t len) {
  for (const auto &[base, size] : bufs) {
    if (addr >= base && addr - base <= size && len <= size - (addr - base)) return true;
  }
  return false;
}

int32_t TaskState(TransferStatusEnum s) {
  switch (s) {
    case TransferStatusEnum::WAITING:
      return MCGO_TE_WAITING;
    case TransferStatusEnum::PENDING:
      return MCGO_TE_PENDING;
    case TransferStatusEnum::COMPLETED:
      return MCGO_TE_COMPLETED;
    default:  // FAILED, TIMEOUT, CANCELED, INVALID: final, nothing moved
      return MCGO_TE_FAILED;
  }
}

}  // namespace

namespace mcgo::native {

struct SegmentRef {
  uint64_t sid = 0;
  std::string name;
};

struct NativeBatch {
  std::mutex mu;
  mooncake::BatchID id = 0;
  uint32_t capacity = 0;
  size_t tasks = 0;
  bool has_notify = false;
  uint64_t notify_sid = 0;
  std::string notify_name, notify_msg;
  int32_t notify = MCGO_TE_NOTIFY_NONE;
  int32_t notify_rc = 0;
};

}  // namespace mcgo::native

struct mcgo_te {
  std::shared_ptr<TransferEngine> engine;
  std::string metadata, name;
  std::atomic<int> stores{0};
  mcgo::HandleTable<mcgo::native::SegmentRef> segments;
  mcgo::HandleTable<mcgo::native::NativeBatch> batches;
  std::mutex inbox_mu;
  std::deque<TransferMetadata::NotifyDesc> inbox;
};

namespace mcgo::native {

bool AttachStore(mcgo_te *e, std::shared_ptr<TransferEngine> *engine, std::string *name,
                 std::string *metadata) {
  if (e == nullptr || !e->engine) return false;
  e->stores.fetch_add(1);
  *engine = e->engine;
  *name = e->name;
  *metadata = e->metadata;
  return true;
}

void DetachStore(mcgo_te *e) noexcept {
  if (e != nullptr) e->stores.fetch_sub(1);
}

}  // namespace mcgo::native

namespace {

using mcgo::native::NativeBatch;
using mcgo::native::SegmentRef;

// Polls every task (which also marks finished tasks for freeBatchID) and
// computes the summary; sends the notification once the batch is COMPLETED.
int32_t Poll(mcgo_te *e, NativeBatch &b, mcgo_te_task_status *tasks, size_t cap,
             mcgo_te_batch_summary *out) {
  auto state = [&](size_t i, uint64_t *bytes) {
    TransferStatus st{};
    const mooncake::Status rs = e->engine->getTransferStatus(b.id, i, st);
    *bytes = st.transferred_bytes;
    return rs.ok() ? TaskState(st.s) : MCGO_TE_FAILED;
  };
  auto send = [&]() -> int32_t {
    TransferMetadata::NotifyDesc n;
    n.name = b.notify_name;
    n.notify_msg = b.notify_msg;
    return e->engine->sendNotifyByID(b.notify_sid, n);
  };
  mcgo_te_batch_summary sum;
  mcgo::te::Summarize(b.tasks, state, tasks, cap, &sum);
  mcgo::te::SettleNotify(&b.notify, &b.notify_rc, send, &sum);
  if (out != nullptr) *out = sum;
  return MCGO_OK;
}

}  // namespace

extern "C" {

int32_t mcgo_te_create(const mcgo_te_config *cfg, mcgo_te **out, char *errmsg,
                       size_t errmsg_cap) {
  auto make = [&](const std::string &metadata, const std::string &name, const auto &fail) -> int32_t {
    auto e = std::make_unique<mcgo_te>();
    e->engine = std::make_shared<TransferEngine>(false);
    const int rc = e->engine->init(metadata, name, mcgo::args::Str(cfg->host),
                                   cfg->rpc_port == 0 ? 12345 : cfg->rpc_port);
    if (rc != 0) {
      return fail(rc < 0 ? rc : MCGO_TE_ERR_INTERNAL,
                  "upstream init failed (see its log on stderr; is the metadata server reachable?)");
    }
    e->metadata = metadata;
    // With P2PHANDSHAKE upstream names the segment host:rpc_port.
    e->name = metadata == "P2PHANDSHAKE" ? name + ":" + std::to_string(e->engine->getRpcPort()) : name;
    *out = e.release();
    return MCGO_OK;
  };
  return mcgo::args::CreateEngine(cfg, out, errmsg, errmsg_cap, make);
}

int32_t mcgo_te_install_transport(mcgo_te *e, const char *protocol,
                                  const char *device_names,
                                  const char *nic_priority_matrix) {
  if (e == nullptr) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&]() -> int32_t {
    const std::string p = mcgo::args::Str(protocol);
    if (!mcgo::args::ProtocolOk(p)) return MCGO_TE_ERR_INVALID_ARGUMENT;
    if (e->engine->getTransport(p) != nullptr) return MCGO_OK;
    const std::string matrix = mcgo::args::Str(nic_priority_matrix);
    if (p == "rdma") {
      const std::string devices = mcgo::args::Str(device_names);
      if (!devices.empty()) {
        std::vector<std::string> list;
        std::stringstream ss(devices);
        for (std::string d; std::getline(ss, d, ',');) {
          if (!d.empty()) list.push_back(d);
        }
        if (auto topo = e->engine->getLocalTopology()) topo->discover(list);
      }
    }
    void *args[2] = {matrix.empty() ? nullptr : const_cast<char *>(matrix.c_str()), nullptr};
    Transport *t = e->engine->installTransport(p, matrix.empty() ? nullptr : args);
    if (t == nullptr) return p == "rdma" ? MCGO_TE_ERR_DEVICE_NOT_FOUND : MCGO_TE_ERR_INTERNAL;
    return MCGO_OK;
  });
}

int32_t mcgo_te_destroy(mcgo_te *e) {
  if (e == nullptr) return MCGO_OK;
  if (e->stores.load() > 0) return MCGO_TE_ERR_BATCH_BUSY;
  std::vector<std::shared_ptr<NativeBatch>> left = e->batches.All();
  try {
    // Upstream's destructor fails the queued work and joins its threads:
    // after it nothing touches caller memory. The batches it leaves are
    // deleted afterwards, since failing the work still touches them.
    e->engine.reset();
  } catch (...) {
  }
  for (auto &b : left) {
    if (b->id != 0) delete &Transport::toBatchDesc(b->id);
  }
  e->segments.Clear();
  e->batches.Clear();
  delete e;
  return MCGO_OK;
}

int32_t mcgo_te_segment_name(mcgo_te *e, char *buf, size_t buf_cap, size_t *len) {
  if (e == nullptr) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&] { return WriteString(e->name, buf, buf_cap, len); });
}

int32_t mcgo_te_local_address(mcgo_te *e, char *buf, size_t buf_cap, size_t *len) {
  if (e == nullptr) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&] { return WriteString(e->engine->getLocalIpAndPort(), buf, buf_cap, len); });
}

int32_t mcgo_te_rpc_port(mcgo_te *e, uint32_t *port) {
  if (e == nullptr || port == nullptr) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&]() -> int32_t {
    *port = static_cast<uint32_t>(e->engine->getRpcPort());
    return MCGO_OK;
  });
}

int32_t mcgo_te_topology(mcgo_te *e, char *buf, size_t buf_cap, size_t *len) {
  if (e == nullptr) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&] {
#if MCGO_HAVE_TE_TOPOLOGY_STRING
    std::string t = e->engine->getLocalTopologyString();
#else
    // Upstream before getLocalTopologyString (v0.3.12.post1): what that
    // call prints on the classic engine, the local topology's own string.
    auto topo = e->engine->getLocalTopology();
    std::string t = topo ? topo->toString() : std::string();
#endif
    return WriteString(t.empty() ? "{}" : t, buf, buf_cap, len);
  });
}

int32_t mcgo_te_register(mcgo_te *e, uintptr_t addr, uint64_t len,
                         const char *location, int32_t remote_accessible) {
  if (e == nullptr || addr == 0 || len == 0 || len - 1 > UINTPTR_MAX - addr) {
    return MCGO_TE_ERR_INVALID_ARGUMENT;
  }
  return GuardTE([&] {
    std::string loc = mcgo::args::Str(location);
    if (loc.empty()) loc = "*";
    return e->engine->registerLocalMemory(reinterpret_cast<void *>(addr), static_cast<size_t>(len),
                                          loc, remote_accessible != 0, true);
  });
}

int32_t mcgo_te_unregister(mcgo_te *e, uintptr_t addr) {
  if (e == nullptr) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&] { return e->engine->unregisterLocalMemory(reinterpret_cast<void *>(addr), true); });
}

int32_t mcgo_te_register_batch(mcgo_te *e, const uintptr_t *addrs,
                               const uint64_t *lens, size_t n,
                               const char *location) {
  if (e == nullptr || (n > 0 && (addrs == nullptr || lens == nullptr))) {
    return MCGO_TE_ERR_INVALID_ARGUMENT;
  }
  return GuardTE([&]() -> int32_t {
    std::vector<mooncake::BufferEntry> list(n);
    for (size_t i = 0; i < n; ++i) {
      if (addrs[i] == 0 || lens[i] == 0 || lens[i] - 1 > UINTPTR_MAX - addrs[i]) {
        return MCGO_TE_ERR_INVALID_ARGUMENT;
      }
      list[i].addr = reinterpret_cast<void *>(addrs[i]);
      list[i].length = static_cast<size_t>(lens[i]);
    }
    std::string loc = mcgo::args::Str(location);
    if (loc.empty()) loc = "*";
    return e->engine->registerLocalMemoryBatch(list, loc);
  });
}

int32_t mcgo_te_unregister_batch(mcgo_te *e, const uintptr_t *addrs, size_t n) {
  if (e == nullptr || (n > 0 && addrs == nullptr)) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&]() -> int32_t {
    // All or nothing: upstream removes the known regions of a list that has
    // an unknown one, then cannot register or unregister them any more.
    const auto bufs = LocalBuffers(*e->engine);
    for (size_t i = 0; i < n; ++i) {
      bool found = false;
      for (const auto &b : bufs) found = found || b.first == addrs[i];
      if (!found) return MCGO_TE_ERR_ADDRESS_NOT_REGISTERED;
    }
    std::vector<void *> list(n);
    for (size_t i = 0; i < n; ++i) list[i] = reinterpret_cast<void *>(addrs[i]);
    return e->engine->unregisterLocalMemoryBatch(list);
  });
}

int32_t mcgo_te_open_segment(mcgo_te *e, const char *name, size_t name_len,
                             uint64_t *seg) {
  if (!mcgo::args::OpenSegmentArgsOk(e, name, name_len, seg)) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&]() -> int32_t {
    const std::string n(mcgo::args::SegmentName(name, name_len));
    if (n.empty()) return MCGO_TE_ERR_INVALID_ARGUMENT;
    const mooncake::SegmentHandle sid = n == e->name ? 0 : e->engine->openSegment(n);
    if (sid == static_cast<mooncake::SegmentHandle>(-1)) return MCGO_TE_ERR_METADATA;
    auto r = std::make_shared<SegmentRef>();
    r->sid = sid;
    r->name = n;
    const uint64_t h = e->segments.Add(std::move(r));
    return mcgo::args::GiveHandle(h, seg);
  });
}

int32_t mcgo_te_close_segment(mcgo_te *e, uint64_t seg) {
  if (e == nullptr) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&]() -> int32_t {
    std::shared_ptr<SegmentRef> r = e->segments.Remove(seg);
    if (!r) return MCGO_TE_ERR_INVALID_HANDLE;
    if (r->sid != 0) e->engine->closeSegment(r->sid);
    return MCGO_OK;
  });
}

int32_t mcgo_te_segment_buffers(mcgo_te *e, uint64_t seg, int32_t refresh,
                                uint64_t *addrs, uint64_t *lens, size_t cap,
                                size_t *total) {
  if (!mcgo::args::SegmentBuffersArgsOk(e, addrs, lens, cap, total)) {
    return MCGO_TE_ERR_INVALID_ARGUMENT;
  }
  return GuardTE([&]() -> int32_t {
    std::shared_ptr<SegmentRef> r = e->segments.Get(seg);
    if (!r) return MCGO_TE_ERR_INVALID_HANDLE;
    auto desc = e->engine->getMetadata()->getSegmentDescByID(r->sid, refresh != 0 && r->sid != 0);
    if (!desc) return MCGO_TE_ERR_METADATA;
    *total = desc->buffers.size();
    for (size_t i = 0; i < cap && i < desc->buffers.size(); ++i) {
      addrs[i] = desc->buffers[i].addr;
      lens[i] = desc->buffers[i].length;
    }
    return MCGO_OK;
  });
}

int32_t mcgo_te_batch_alloc(mcgo_te *e, uint32_t capacity, uint64_t *batch) {
  if (!mcgo::args::BatchAllocArgsOk(e, capacity, batch)) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&]() -> int32_t {
    auto b = std::make_shared<NativeBatch>();
    b->capacity = capacity;
    b->id = e->engine->allocateBatchID(capacity);
    const int32_t rc = mcgo::args::GiveHandle(e->batches.Add(b), batch);
    if (rc != MCGO_OK) (void)e->engine->freeBatchID(b->id);
    return rc;
  });
}

int32_t mcgo_te_batch_submit(mcgo_te *e, uint64_t batch,
                             const mcgo_te_request *reqs, size_t n,
                             const char *notify_name, size_t notify_name_len,
                             const char *notify_msg, size_t notify_msg_len) {
  if (e == nullptr || (n > 0 && reqs == nullptr)) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&]() -> int32_t {
    std::shared_ptr<NativeBatch> b = e->batches.Get(batch);
    if (!b) return MCGO_TE_ERR_INVALID_HANDLE;
    bool with_notify = false;
    if (int32_t rc = mcgo::args::SubmitNotifyOk(n, notify_name, notify_name_len, notify_msg,
                                                notify_msg_len, &with_notify)) {
      return rc;
    }
    if (n == 0) return MCGO_OK;
    const auto local = LocalBuffers(*e->engine);
    std::vector<TransferRequest> entries(n);
    for (size_t i = 0; i < n; ++i) {
      const mcgo_te_request &r = reqs[i];
      if (int32_t rc = mcgo::args::RequestShapeOk(r); rc != MCGO_OK) return rc;
      std::shared_ptr<SegmentRef> s = e->segments.Get(r.segment);
      if (!s) return MCGO_TE_ERR_INVALID_HANDLE;
      if (r.length > 0 && !Inside(local, r.local_addr, r.length)) {
        return MCGO_TE_ERR_ADDRESS_NOT_REGISTERED;
      }
      TransferRequest &t = entries[i];
      t.opcode = r.opcode == MCGO_TE_WRITE ? TransferRequest::WRITE : TransferRequest::READ;
      t.source = reinterpret_cast<void *>(r.local_addr);
      t.target_id = s->sid;
      t.target_offset = r.remote_addr;
      t.length = static_cast<size_t>(r.length);
    }
    std::lock_guard<std::mutex> lock(b->mu);
    if (!mcgo::args::BatchFits(b->capacity, b->tasks, n)) return MCGO_TE_ERR_TOO_MANY_REQUESTS;
    const mooncake::Status st = e->engine->submitTransfer(b->id, entries);
    // Upstream can have started a prefix (RDMA) before refusing the rest:
    // its task list says how many tasks the batch now has.
    b->tasks = Transport::toBatchDesc(b->id).task_list.size();
    if (!st.ok()) return FromStatus(st);
    if (with_notify) {
      b->notify_sid = e->segments.Get(reqs[0].segment)->sid;
      mcgo::te::ArmNotify(b.get(), notify_name, notify_name_len, notify_msg, notify_msg_len);
    }
    return MCGO_OK;
  });
}

int32_t mcgo_te_batch_status(mcgo_te *e, uint64_t batch,
                             mcgo_te_task_status *tasks, size_t cap,
                             mcgo_te_batch_summary *summary) {
  if (!mcgo::args::BatchStatusArgsOk(e, tasks, cap, summary)) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&]() -> int32_t {
    std::shared_ptr<NativeBatch> b = e->batches.Get(batch);
    if (!b) return MCGO_TE_ERR_INVALID_HANDLE;
    std::lock_guard<std::mutex> lock(b->mu);
    return Poll(e, *b, tasks, cap, summary);
  });
}

int32_t mcgo_te_batch_free(mcgo_te *e, uint64_t batch) {
  if (e == nullptr) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&]() -> int32_t {
    std::shared_ptr<NativeBatch> b = e->batches.Get(batch);
    if (!b) return MCGO_TE_ERR_INVALID_HANDLE;
    {
      std::lock_guard<std::mutex> lock(b->mu);
      // Polling first marks finished tasks, which upstream's free needs.
      mcgo_te_batch_summary sum{};
      Poll(e, *b, nullptr, 0, &sum);
      if (sum.in_flight > 0) return MCGO_TE_ERR_BATCH_BUSY;
      const mooncake::Status st = e->engine->freeBatchID(b->id);
      if (!st.ok()) return FromStatus(st);
      b->id = 0;
    }
    e->batches.Remove(batch);
    return MCGO_OK;
  });
}

int32_t mcgo_te_notify_send(mcgo_te *e, uint64_t seg, const char *peer,
                            size_t peer_len, const char *name, size_t name_len,
                            const char *msg, size_t msg_len) {
  if (e == nullptr || (peer == nullptr && peer_len > 0)) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&]() -> int32_t {
    if (!mcgo::args::NotifyOk(name, name_len, msg, msg_len)) return MCGO_TE_ERR_INVALID_ARGUMENT;
    TransferMetadata::NotifyDesc n;
    n.name.assign(name == nullptr ? "" : name, name_len);
    n.notify_msg.assign(msg == nullptr ? "" : msg, msg_len);
    if (seg != 0) {
      std::shared_ptr<SegmentRef> s = e->segments.Get(seg);
      if (!s) return MCGO_TE_ERR_INVALID_HANDLE;
      return e->engine->sendNotifyByID(s->sid, n);
    }
    const std::string to(mcgo::args::SegmentName(peer, peer_len));
    if (to.empty()) return MCGO_TE_ERR_METADATA;
    return e->engine->sendNotifyByName(to, n);
  });
}

int32_t mcgo_te_notify_recv(mcgo_te *e, char *buf, uint64_t buf_cap,
                            uint64_t *name_lens, uint64_t *msg_lens,
                            size_t max_n, size_t *n, uint64_t *need) {
  if (!mcgo::args::NotifyRecvArgsOk(e, buf, buf_cap, name_lens, msg_lens, max_n, n, need)) {
    return MCGO_TE_ERR_INVALID_ARGUMENT;
  }
  return GuardTE([&]() -> int32_t {
    std::lock_guard<std::mutex> lock(e->inbox_mu);
    std::vector<TransferMetadata::NotifyDesc> got;
    if (int rc = e->engine->getNotifies(got); rc != 0) return rc;
    for (auto &g : got) e->inbox.push_back(std::move(g));
    size_t count = 0;
    uint64_t used = 0;
    while (count < max_n && !e->inbox.empty()) {
      const auto &x = e->inbox.front();
      const uint64_t size = x.name.size() + x.notify_msg.size();
      if (size > buf_cap - used) {
        if (need != nullptr) *need = size;
        break;
      }
      if (!x.name.empty()) std::memcpy(buf + used, x.name.data(), x.name.size());
      if (!x.notify_msg.empty()) {
        std::memcpy(buf + used + x.name.size(), x.notify_msg.data(), x.notify_msg.size());
      }
      name_lens[count] = x.name.size();
      msg_lens[count] = x.notify_msg.size();
      used += size;
      ++count;
      e->inbox.pop_front();
    }
    *n = count;
    return MCGO_OK;
  });
}

}  // extern "C"
