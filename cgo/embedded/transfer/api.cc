//go:build !mooncake_native

// Embedded backend: the extern "C" boundary of mcgo/transfer.h. Every
// function checks its arguments (the rules shared with the native backend
// are in cgo/common/transfer_args.h), validates handles through the
// engine's tables, and catches every exception (MCGO_TE_ERR_INTERNAL,
// cgo/common/guard.h).

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/guard.h"
#include "common/transfer_args.h"
#include "common/transfer_batch.h"
#include "engine.h"
#include "mcgo/transfer.h"

namespace {

using mcgo::GuardTE;
using mcgo::args::WriteString;
using mcgo::embedded::Region;
using mcgo::embedded::RegionResult;
using mcgo::embedded::RegionSet;
using mcgo::embedded::te::Batch;
using mcgo::embedded::te::Core;
using mcgo::embedded::te::Namespace;
using mcgo::embedded::te::Segment;
using mcgo::embedded::te::Task;

int32_t RegionCode(RegionResult r) {
  switch (r) {
    case RegionResult::kOk:
      return MCGO_OK;
    case RegionResult::kInvalid:
      return MCGO_TE_ERR_INVALID_ARGUMENT;
    case RegionResult::kOverlap:
      return MCGO_TE_ERR_ADDRESS_OVERLAPPED;
    case RegionResult::kNotFound:
      return MCGO_TE_ERR_ADDRESS_NOT_REGISTERED;
  }
  return MCGO_TE_ERR_INTERNAL;
}

size_t WorkerCount() {
  const unsigned hw = std::thread::hardware_concurrency();
  return std::clamp<size_t>(hw == 0 ? 2 : hw, 1, 4);
}

}  // namespace

extern "C" {

int32_t mcgo_te_create(const mcgo_te_config *cfg, mcgo_te **out, char *errmsg,
                       size_t errmsg_cap) {
  auto make = [&](const std::string &metadata, std::string name, const auto &fail) -> int32_t {
    const uint32_t rpc_port = mcgo::embedded::te::NextPort();
    if (metadata == "P2PHANDSHAKE") name += ":" + std::to_string(rpc_port);
    auto e = std::make_unique<mcgo_te>();
    e->metadata = metadata;
    e->rpc_port = rpc_port;
    e->ns = Namespace::Join(metadata);
    e->core = std::make_shared<Core>(name);
    if (!e->ns->Add(e->core)) {
      return fail(MCGO_TE_ERR_METADATA,
                  "an engine with segment name \"" + name + "\" already exists");
    }
    e->workers.Start(e->core, WorkerCount());
    *out = e.release();
    return MCGO_OK;
  };
  return mcgo::args::CreateEngine(cfg, out, errmsg, errmsg_cap, make);
}

int32_t mcgo_te_install_transport(mcgo_te *e, const char *protocol,
                                  const char *device_names,
                                  const char *nic_priority_matrix) {
  (void)device_names;
  (void)nic_priority_matrix;
  if (e == nullptr) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&]() -> int32_t {
    const std::string p = mcgo::args::Str(protocol);
    if (!mcgo::args::ProtocolOk(p)) return MCGO_TE_ERR_INVALID_ARGUMENT;
    std::lock_guard<std::mutex> lock(e->transport_mu);
    e->transports.insert(p);
    return MCGO_OK;
  });
}

int32_t mcgo_te_destroy(mcgo_te *e) {
  if (e == nullptr) return MCGO_OK;
  if (e->stores.load(std::memory_order_acquire) > 0) return MCGO_TE_ERR_BATCH_BUSY;
  try {
    e->ns->Remove(e->core.get());
    e->core->Kill();
  } catch (...) {
  }
  e->workers.Stop();
  e->segments.Clear();
  e->batches.Clear();
  delete e;
  return MCGO_OK;
}

int32_t mcgo_te_segment_name(mcgo_te *e, char *buf, size_t buf_cap, size_t *len) {
  if (e == nullptr) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&] { return WriteString(e->core->name(), buf, buf_cap, len); });
}

int32_t mcgo_te_local_address(mcgo_te *e, char *buf, size_t buf_cap, size_t *len) {
  if (e == nullptr) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&] {
    return WriteString("127.0.0.1:" + std::to_string(e->rpc_port), buf, buf_cap, len);
  });
}

int32_t mcgo_te_rpc_port(mcgo_te *e, uint32_t *port) {
  if (e == nullptr || port == nullptr) return MCGO_TE_ERR_INVALID_ARGUMENT;
  *port = e->rpc_port;
  return MCGO_OK;
}

int32_t mcgo_te_topology(mcgo_te *e, char *buf, size_t buf_cap, size_t *len) {
  if (e == nullptr) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&] { return WriteString("{}", buf, buf_cap, len); });
}

int32_t mcgo_te_register(mcgo_te *e, uintptr_t addr, uint64_t len,
                         const char *location, int32_t remote_accessible) {
  (void)location;
  (void)remote_accessible;
  if (e == nullptr) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&] { return RegionCode(e->core->regions()->Add(addr, len)); });
}

int32_t mcgo_te_unregister(mcgo_te *e, uintptr_t addr) {
  if (e == nullptr) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&] { return RegionCode(e->core->regions()->Remove(addr)); });
}

int32_t mcgo_te_register_batch(mcgo_te *e, const uintptr_t *addrs,
                               const uint64_t *lens, size_t n,
                               const char *location) {
  (void)location;
  if (e == nullptr || (n > 0 && (addrs == nullptr || lens == nullptr))) {
    return MCGO_TE_ERR_INVALID_ARGUMENT;
  }
  return GuardTE([&] {
    std::vector<Region> list(n);
    for (size_t i = 0; i < n; ++i) list[i] = Region{addrs[i], lens[i]};
    return RegionCode(e->core->regions()->AddAll(list));
  });
}

int32_t mcgo_te_unregister_batch(mcgo_te *e, const uintptr_t *addrs, size_t n) {
  if (e == nullptr || (n > 0 && addrs == nullptr)) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&] {
    return RegionCode(e->core->regions()->RemoveAll(std::vector<uintptr_t>(addrs, addrs + n)));
  });
}

int32_t mcgo_te_open_segment(mcgo_te *e, const char *name, size_t name_len,
                             uint64_t *seg) {
  if (!mcgo::args::OpenSegmentArgsOk(e, name, name_len, seg)) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&]() -> int32_t {
    const std::string n(mcgo::args::SegmentName(name, name_len));
    if (n.empty()) return MCGO_TE_ERR_INVALID_ARGUMENT;
    std::shared_ptr<Core> core = n == e->core->name() ? e->core : e->ns->Find(n);
    if (!core) return MCGO_TE_ERR_METADATA;
    auto s = std::make_shared<Segment>();
    s->core = core;
    s->name = n;
    s->snapshot = core->regions()->List();
    const uint64_t h = e->segments.Add(std::move(s));
    return mcgo::args::GiveHandle(h, seg);
  });
}

int32_t mcgo_te_close_segment(mcgo_te *e, uint64_t seg) {
  if (e == nullptr) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&] { return e->segments.Remove(seg) ? MCGO_OK : MCGO_TE_ERR_INVALID_HANDLE; });
}

int32_t mcgo_te_segment_buffers(mcgo_te *e, uint64_t seg, int32_t refresh,
                                uint64_t *addrs, uint64_t *lens, size_t cap,
                                size_t *total) {
  if (!mcgo::args::SegmentBuffersArgsOk(e, addrs, lens, cap, total)) {
    return MCGO_TE_ERR_INVALID_ARGUMENT;
  }
  return GuardTE([&]() -> int32_t {
    std::shared_ptr<Segment> s = e->segments.Get(seg);
    if (!s) return MCGO_TE_ERR_INVALID_HANDLE;
    std::lock_guard<std::mutex> lock(s->mu);
    if (refresh != 0) {
      std::shared_ptr<Core> core = s->core.lock();
      if (!core || !core->Alive()) {
        // A re-created peer of the same name becomes the segment's engine.
        core = s->name == e->core->name() ? e->core : e->ns->Find(s->name);
        if (!core) return MCGO_TE_ERR_METADATA;
        s->core = core;
      }
      s->snapshot = core->regions()->List();
    }
    *total = s->snapshot.size();
    for (size_t i = 0; i < cap && i < s->snapshot.size(); ++i) {
      addrs[i] = s->snapshot[i].addr;
      lens[i] = s->snapshot[i].size;
    }
    return MCGO_OK;
  });
}

int32_t mcgo_te_batch_alloc(mcgo_te *e, uint32_t capacity, uint64_t *batch) {
  if (!mcgo::args::BatchAllocArgsOk(e, capacity, batch)) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&]() -> int32_t {
    auto b = std::make_shared<Batch>();
    b->capacity = capacity;
    return mcgo::args::GiveHandle(e->batches.Add(std::move(b)), batch);
  });
}

int32_t mcgo_te_batch_submit(mcgo_te *e, uint64_t batch,
                             const mcgo_te_request *reqs, size_t n,
                             const char *notify_name, size_t notify_name_len,
                             const char *notify_msg, size_t notify_msg_len) {
  if (e == nullptr || (n > 0 && reqs == nullptr)) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&]() -> int32_t {
    std::shared_ptr<Batch> b = e->batches.Get(batch);
    if (!b) return MCGO_TE_ERR_INVALID_HANDLE;
    bool with_notify = false;
    if (int32_t rc = mcgo::args::SubmitNotifyOk(n, notify_name, notify_name_len, notify_msg,
                                                notify_msg_len, &with_notify)) {
      return rc;
    }
    if (n == 0) return MCGO_OK;
    {
      std::lock_guard<std::mutex> lock(e->transport_mu);
      if (e->transports.empty()) return MCGO_TE_ERR_NOT_SUPPORTED_TRANSPORT;
    }
    // Every check before anything is added: a refusal adds nothing.
    std::vector<std::shared_ptr<Core>> targets(n);
    {
      RegionSet::Reader local(*e->core->regions());
      for (size_t i = 0; i < n; ++i) {
        const mcgo_te_request &r = reqs[i];
        if (int32_t rc = mcgo::args::RequestShapeOk(r); rc != MCGO_OK) return rc;
        std::shared_ptr<Segment> s = e->segments.Get(r.segment);
        if (!s) return MCGO_TE_ERR_INVALID_HANDLE;
        std::lock_guard<std::mutex> slock(s->mu);
        targets[i] = s->core.lock();
        if (r.length > 0 && !local.Contains(r.local_addr, r.length)) {
          return MCGO_TE_ERR_ADDRESS_NOT_REGISTERED;
        }
      }
    }
    std::lock_guard<std::mutex> lock(b->mu);
    if (!mcgo::args::BatchFits(b->capacity, b->tasks.size(), n)) return MCGO_TE_ERR_TOO_MANY_REQUESTS;
    if (with_notify) {
      b->notify_target = targets[0];
      mcgo::te::ArmNotify(b.get(), notify_name, notify_name_len, notify_msg, notify_msg_len);
    }
    const size_t first = b->tasks.size();
    for (size_t i = 0; i < n; ++i) {
      Task &t = b->tasks.emplace_back();
      t.opcode = reqs[i].opcode;
      t.target = targets[i];
      t.local = reqs[i].local_addr;
      t.remote = reqs[i].remote_addr;
      t.length = reqs[i].length;
    }
    for (size_t i = 0; i < n; ++i) {
      Task *t = &b->tasks[first + i];
      if (t->length == 0) {
        mcgo::embedded::te::RunTask(*e->core, b.get(), t);
      } else {
        e->workers.Enqueue(b, t);
      }
    }
    return MCGO_OK;
  });
}

int32_t mcgo_te_batch_status(mcgo_te *e, uint64_t batch,
                             mcgo_te_task_status *tasks, size_t cap,
                             mcgo_te_batch_summary *summary) {
  if (!mcgo::args::BatchStatusArgsOk(e, tasks, cap, summary)) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&]() -> int32_t {
    std::shared_ptr<Batch> b = e->batches.Get(batch);
    if (!b) return MCGO_TE_ERR_INVALID_HANDLE;
    std::lock_guard<std::mutex> lock(b->mu);
    // A task's bytes are written before its state turns final.
    auto state = [&](size_t i, uint64_t *bytes) {
      const Task &t = b->tasks[i];
      const int32_t st = t.state.load(std::memory_order_acquire);
      if (st == MCGO_TE_COMPLETED) *bytes = t.bytes;
      return st;
    };
    auto send = [&]() -> int32_t {
      std::shared_ptr<Core> to = b->notify_target.lock();
      if (!to || !to->Alive()) return MCGO_TE_ERR_METADATA;
      return to->Deliver({b->notify_name, b->notify_msg}) ? MCGO_OK : MCGO_TE_ERR_MEMORY;
    };
    mcgo_te_batch_summary sum;
    mcgo::te::Summarize(b->tasks.size(), state, tasks, cap, &sum);
    mcgo::te::SettleNotify(&b->notify, &b->notify_rc, send, &sum);
    *summary = sum;
    return MCGO_OK;
  });
}

int32_t mcgo_te_batch_free(mcgo_te *e, uint64_t batch) {
  if (e == nullptr) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&]() -> int32_t {
    std::shared_ptr<Batch> b = e->batches.Get(batch);
    if (!b) return MCGO_TE_ERR_INVALID_HANDLE;
    {
      // The same rule as the in_flight of mcgo_te_batch_status.
      std::lock_guard<std::mutex> lock(b->mu);
      for (const Task &t : b->tasks) {
        const int32_t st = t.state.load(std::memory_order_acquire);
        if (st != MCGO_TE_COMPLETED && st != MCGO_TE_FAILED) return MCGO_TE_ERR_BATCH_BUSY;
      }
    }
    return e->batches.Remove(batch) ? MCGO_OK : MCGO_TE_ERR_INVALID_HANDLE;
  });
}

int32_t mcgo_te_notify_send(mcgo_te *e, uint64_t seg, const char *peer,
                            size_t peer_len, const char *name, size_t name_len,
                            const char *msg, size_t msg_len) {
  if (e == nullptr || (peer == nullptr && peer_len > 0)) return MCGO_TE_ERR_INVALID_ARGUMENT;
  return GuardTE([&]() -> int32_t {
    if (!mcgo::args::NotifyOk(name, name_len, msg, msg_len)) return MCGO_TE_ERR_INVALID_ARGUMENT;
    std::shared_ptr<Core> to;
    if (seg != 0) {
      std::shared_ptr<Segment> s = e->segments.Get(seg);
      if (!s) return MCGO_TE_ERR_INVALID_HANDLE;
      std::lock_guard<std::mutex> lock(s->mu);
      to = s->core.lock();
    } else {
      const std::string n(mcgo::args::SegmentName(peer, peer_len));
      if (n.empty()) return MCGO_TE_ERR_METADATA;
      to = n == e->core->name() ? e->core : e->ns->Find(n);
    }
    if (!to || !to->Alive()) return MCGO_TE_ERR_METADATA;
    const bool queued = to->Deliver({std::string(name == nullptr ? "" : name, name_len),
                                     std::string(msg == nullptr ? "" : msg, msg_len)});
    return queued ? MCGO_OK : MCGO_TE_ERR_MEMORY;  // the peer's inbox is full
  });
}

int32_t mcgo_te_notify_recv(mcgo_te *e, char *buf, uint64_t buf_cap,
                            uint64_t *name_lens, uint64_t *msg_lens,
                            size_t max_n, size_t *n, uint64_t *need) {
  if (!mcgo::args::NotifyRecvArgsOk(e, buf, buf_cap, name_lens, msg_lens, max_n, n, need)) {
    return MCGO_TE_ERR_INVALID_ARGUMENT;
  }
  return GuardTE([&] {
    e->core->Drain(buf, buf_cap, name_lens, msg_lens, max_n, n, need);
    return MCGO_OK;
  });
}

}  // extern "C"
