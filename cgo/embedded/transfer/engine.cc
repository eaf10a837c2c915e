//go:build !mooncake_native

#include "engine.h"

#include <cstring>
#include <utility>

namespace mcgo::embedded::te {

void Core::Kill() {
  alive_.store(false, std::memory_order_release);
  // Waits for every copy that holds the regions' read lock.
  regions_->Clear();
}

bool Core::Deliver(Notify n) {
  std::lock_guard<std::mutex> lock(inbox_mu_);
  const uint64_t size = n.name.size() + n.msg.size();
  if (size > kInboxMaxBytes - inbox_bytes_) return false;
  inbox_bytes_ += size;
  inbox_.push_back(std::move(n));
  return true;
}

void Core::Drain(char *buf, uint64_t cap, uint64_t *name_lens,
                 uint64_t *msg_lens, size_t max_n, size_t *n, uint64_t *need) {
  std::lock_guard<std::mutex> lock(inbox_mu_);
  size_t count = 0;
  uint64_t used = 0;
  if (need != nullptr) *need = 0;
  while (count < max_n && !inbox_.empty()) {
    const Notify &x = inbox_.front();
    const uint64_t size = x.name.size() + x.msg.size();
    if (size > cap - used) {
      if (need != nullptr) *need = size;
      break;
    }
    if (!x.name.empty()) std::memcpy(buf + used, x.name.data(), x.name.size());
    if (!x.msg.empty()) std::memcpy(buf + used + x.name.size(), x.msg.data(), x.msg.size());
    name_lens[count] = x.name.size();
    msg_lens[count] = x.msg.size();
    used += size;
    ++count;
    inbox_bytes_ -= size;
    inbox_.pop_front();
  }
  *n = count;
}

namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, std::weak_ptr<Namespace>> spaces;
};

Registry &GetRegistry() {
  static Registry *r = new Registry();
  return *r;
}

std::atomic<uint32_t> g_port{0};

}  // namespace

std::shared_ptr<Namespace> Namespace::Join(const std::string &metadata) {
  Registry &r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.spaces.find(metadata);
  if (it != r.spaces.end()) {
    if (auto live = it->second.lock()) return live;
  }
  auto ns = std::make_shared<Namespace>();
  r.spaces[metadata] = ns;
  return ns;
}

bool Namespace::Add(const std::shared_ptr<Core> &core) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cores_.find(core->name());
  if (it != cores_.end()) {
    auto other = it->second.lock();
    if (other && other->Alive()) return false;
  }
  cores_[core->name()] = core;
  return true;
}

void Namespace::Remove(const Core *core) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cores_.find(core->name());
  if (it == cores_.end()) return;
  auto live = it->second.lock();
  if (!live || live.get() == core) cores_.erase(it);
}

std::shared_ptr<Core> Namespace::Find(const std::string &name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cores_.find(name);
  if (it == cores_.end()) return nullptr;
  auto live = it->second.lock();
  return live && live->Alive() ? live : nullptr;
}

uint32_t NextPort() {
  // Ports in 15000..64999, as if bound; only their uniqueness matters.
  return 15000 + g_port.fetch_add(1) % 50000;
}

void FailTask(Batch *batch, Task *task) noexcept {
  task->bytes = 0;
  task->state.store(MCGO_TE_FAILED, std::memory_order_release);
  (void)batch;
}

void RunTask(const Core &self, Batch *batch, Task *task) noexcept {
  task->state.store(MCGO_TE_PENDING, std::memory_order_release);
  bool ok = task->length == 0;
  if (!ok) {
    std::shared_ptr<Core> target = task->target.lock();
    if (target && target->Alive() && self.Alive()) {
      // Both sets stay read-locked for the copy, so neither side's memory
      // can be unregistered (or its engine destroyed) under it.
      RegionSet::Reader r(*self.regions(), *target->regions());
      if (r.Contains(task->local, task->length) &&
          r.ContainsSecond(task->remote, task->length)) {
        void *local = reinterpret_cast<void *>(task->local);
        void *remote = reinterpret_cast<void *>(task->remote);
        const size_t n = static_cast<size_t>(task->length);
        if (task->opcode == MCGO_TE_WRITE) {
          std::memmove(remote, local, n);
        } else {
          std::memmove(local, remote, n);
        }
        ok = true;
      }
    }
  }
  task->bytes = ok ? task->length : 0;
  task->state.store(ok ? MCGO_TE_COMPLETED : MCGO_TE_FAILED,
                    std::memory_order_release);
  (void)batch;
}

void Workers::Start(std::shared_ptr<Core> self, size_t n) {
  self_ = std::move(self);
  for (size_t i = 0; i < n; ++i) threads_.emplace_back([this] { Loop(); });
}

void Workers::Enqueue(std::shared_ptr<Batch> batch, Task *task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_) {
      queue_.push_back(Job{std::move(batch), task});
      cv_.notify_one();
      return;
    }
  }
  FailTask(batch.get(), task);
}

void Workers::Loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    RunTask(*self_, job.batch.get(), job.task);
  }
}

void Workers::Stop() noexcept {
  std::deque<Job> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    left.swap(queue_);
    cv_.notify_all();
  }
  for (Job &j : left) FailTask(j.batch.get(), j.task);
  for (std::thread &t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

bool AttachStore(mcgo_te *e, std::shared_ptr<RegionSet> *regions,
                 std::string *segment_name, std::string *metadata) {
  if (e == nullptr || !e->core) return false;
  {
    std::lock_guard<std::mutex> lock(e->transport_mu);
    if (e->transports.empty()) return false;
  }
  e->stores.fetch_add(1, std::memory_order_acq_rel);
  *regions = e->core->regions();
  *segment_name = e->core->name();
  *metadata = e->metadata;
  return true;
}

void DetachStore(mcgo_te *e) noexcept {
  if (e != nullptr) e->stores.fetch_sub(1, std::memory_order_acq_rel);
}

}  // namespace mcgo::embedded::te
