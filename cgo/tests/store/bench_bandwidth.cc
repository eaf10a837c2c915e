// Bandwidth micro benchmark of the embedded engine: zero-copy put_from +
// get_into of large objects against a plain memcpy of the same bytes.
//
//   mcgo_bench [object_MiB=4] [iterations=256] [threads=1]
//
// Scenarios (each thread works on its own keys; GB/s = 1e9 bytes/s; a
// put+get figure counts the bytes of both copies; every figure is the best
// of several short rounds, baseline and engine rounds alternating):
//   cycle:  per iteration put_from(key), get_into(key), remove(key).
//           Baseline: memcpy src -> mid -> dst on faulted-in buffers.
//   bulk:   put_from 32 distinct keys, get_into all 32, remove all; repeated.
//           The first round writes fresh memory (page faults), later rounds
//           reuse the engine's cached blocks. Baseline: memcpy src -> 32
//           faulted-in buffers -> dst (same working set, no faults).
// Build without sanitizers for meaningful numbers:
//   cmake -S . -B build/cpp-bench -DCMAKE_BUILD_TYPE=Release
//   cmake --build build/cpp-bench --target mcgo_bench && build/cpp-bench/mcgo_bench
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mcgo/store.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kBulkKeys = 32;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

uint8_t *AllocTouched(size_t n) {
  void *p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::exit(2);
  }
  std::memset(p, 0x5a, n);
  return static_cast<uint8_t *>(p);
}

// All threads start each phase together.
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    const int gen = gen_;
    if (++waiting_ == n_) {
      waiting_ = 0;
      ++gen_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return gen != gen_; });
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_, waiting_ = 0, gen_ = 0;
};

struct Result {
  double cycle_memcpy = 0, cycle_put = 0, cycle_get = 0, cycle_both = 0;
  double bulk_memcpy = 0, fresh_put = 0, warm_put = 0, warm_get = 0, warm_both = 0;
  bool ok = true;
};

Result RunOne(mcgo_store *s, Barrier *barrier, int tid, size_t size, int iters) {
  Result r;
  uint8_t *src = AllocTouched(size), *mid = AllocTouched(size), *dst = AllocTouched(size);
  for (size_t i = 0; i < size; ++i) src[i] = static_cast<uint8_t>(i * 131 + tid);
  mcgo_replicate_config cfg{};
  cfg.replica_num = 1;
  const uintptr_t sa = reinterpret_cast<uintptr_t>(src), da = reinterpret_cast<uintptr_t>(dst);
  if (mcgo_store_register_buffer(s, sa, size) != 0 || mcgo_store_register_buffer(s, da, size) != 0) {
    std::fprintf(stderr, "register failed\n");
    std::exit(2);
  }

  // Baseline and engine run in alternating short rounds and the best round
  // of each counts, so that other load on the machine (which only ever
  // slows a round down) affects both sides alike.
  const int per_round = 8;
  const int cycle_rounds = iters / per_round > 0 ? iters / per_round : 1;
  const std::string key = "cycle-" + std::to_string(tid);
  for (int w = 0; w < 2; ++w) {  // warm-up: first put faults its memory in
    if (mcgo_store_put_from(s, key.data(), key.size(), sa, size, cfg) != 0 ||
        mcgo_store_remove(s, key.data(), key.size(), 1) != 0) {
      r.ok = false;
    }
  }
  barrier->Wait();
  for (int round = 0; round < cycle_rounds; ++round) {
    auto t0 = Clock::now();
    for (int i = 0; i < per_round; ++i) {
      std::memcpy(mid, src, size);
      std::memcpy(dst, mid, size);
    }
    const double base = 2.0 * per_round * size / Seconds(t0, Clock::now()) / 1e9;
    if (base > r.cycle_memcpy) r.cycle_memcpy = base;
    double put_s = 0, get_s = 0;
    for (int i = 0; i < per_round; ++i) {
      auto a = Clock::now();
      int32_t p = mcgo_store_put_from(s, key.data(), key.size(), sa, size, cfg);
      auto b = Clock::now();
      int64_t g = mcgo_store_get_into(s, key.data(), key.size(), da, size);
      auto c = Clock::now();
      if (p != 0 || g != static_cast<int64_t>(size) ||
          mcgo_store_remove(s, key.data(), key.size(), 1) != 0) {
        r.ok = false;
      }
      put_s += Seconds(a, b);
      get_s += Seconds(b, c);
    }
    const double bytes = 1.0 * per_round * size;
    if (bytes / put_s / 1e9 > r.cycle_put) r.cycle_put = bytes / put_s / 1e9;
    if (bytes / get_s / 1e9 > r.cycle_get) r.cycle_get = bytes / get_s / 1e9;
    if (2 * bytes / (put_s + get_s) / 1e9 > r.cycle_both) r.cycle_both = 2 * bytes / (put_s + get_s) / 1e9;
  }
  if (std::memcmp(src, dst, size) != 0) r.ok = false;

  // --- bulk
  const int rounds = iters / kBulkKeys > 1 ? iters / kBulkKeys : 2;
  std::vector<uint8_t *> bufs;
  for (int k = 0; k < kBulkKeys; ++k) bufs.push_back(AllocTouched(size));
  std::vector<std::string> keys;
  for (int k = 0; k < kBulkKeys; ++k) {
    keys.push_back("bulk-" + std::to_string(tid) + "-" + std::to_string(k));
  }
  barrier->Wait();
  for (int round = 0; round < rounds; ++round) {
    auto t0 = Clock::now();
    for (int k = 0; k < kBulkKeys; ++k) std::memcpy(bufs[k], src, size);
    for (int k = 0; k < kBulkKeys; ++k) std::memcpy(dst, bufs[k], size);
    const double base = 2.0 * kBulkKeys * size / Seconds(t0, Clock::now()) / 1e9;
    if (base > r.bulk_memcpy) r.bulk_memcpy = base;

    auto a = Clock::now();
    for (const auto &k : keys) {
      if (mcgo_store_put_from(s, k.data(), k.size(), sa, size, cfg) != 0) r.ok = false;
    }
    auto b = Clock::now();
    for (const auto &k : keys) {
      if (mcgo_store_get_into(s, k.data(), k.size(), da, size) != static_cast<int64_t>(size)) r.ok = false;
    }
    auto c = Clock::now();
    for (const auto &k : keys) {
      if (mcgo_store_remove(s, k.data(), k.size(), 1) != 0) r.ok = false;
    }
    const double bytes = 1.0 * kBulkKeys * size;
    if (round == 0) {
      r.fresh_put = bytes / Seconds(a, b) / 1e9;
      continue;
    }
    const double put_s = Seconds(a, b), get_s = Seconds(b, c);
    if (bytes / put_s / 1e9 > r.warm_put) r.warm_put = bytes / put_s / 1e9;
    if (bytes / get_s / 1e9 > r.warm_get) r.warm_get = bytes / get_s / 1e9;
    if (2 * bytes / (put_s + get_s) / 1e9 > r.warm_both) r.warm_both = 2 * bytes / (put_s + get_s) / 1e9;
  }
  for (auto *b : bufs) munmap(b, size);

  mcgo_store_unregister_buffer(s, sa);
  mcgo_store_unregister_buffer(s, da);
  munmap(src, size);
  munmap(mid, size);
  munmap(dst, size);
  return r;
}

}  // namespace

int main(int argc, char **argv) {
  const size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 4;
  const int iters = argc > 2 ? std::atoi(argv[2]) : 256;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
  const size_t size = mib << 20;
  if (mib == 0 || iters <= 0 || threads <= 0) {
    std::fprintf(stderr, "usage: mcgo_bench [object_MiB>0] [iterations>0] [threads>0]\n");
    return 2;
  }

  mcgo_store *s = nullptr;
  mcgo_store_create(&s);
  mcgo_store_config cfg{};
  cfg.local_hostname = "127.0.0.1";
  cfg.metadata_server = "P2PHANDSHAKE";
  // At least (kBulkKeys + 8) MiB: above the 16 MiB a segment needs.
  static_assert((kBulkKeys + 8) * (1ull << 20) >= (16ull << 20),
                "the bench segment must be at least 16 MiB");
  cfg.global_segment_size = static_cast<uint64_t>(threads) * (kBulkKeys + 8) * size;
  cfg.local_buffer_size = 16 << 20;
  cfg.protocol = "tcp";
  cfg.device_name = "";
  cfg.master_server_address = "bench:50051";
  char err[256];
  if (mcgo_store_setup(s, &cfg, err, sizeof err) != 0) {
    std::fprintf(stderr, "setup: %s\n", err);
    return 2;
  }

  Barrier barrier(threads);
  std::vector<Result> results(static_cast<size_t>(threads));
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] { results[static_cast<size_t>(t)] = RunOne(s, &barrier, t, size, iters); });
  }
  for (auto &t : ts) t.join();
  mcgo_store_destroy(s);

  Result sum;
  for (const auto &r : results) {
    sum.ok = sum.ok && r.ok;
    sum.cycle_memcpy += r.cycle_memcpy;
    sum.cycle_put += r.cycle_put;
    sum.cycle_get += r.cycle_get;
    sum.cycle_both += r.cycle_both;
    sum.bulk_memcpy += r.bulk_memcpy;
    sum.fresh_put += r.fresh_put;
    sum.warm_put += r.warm_put;
    sum.warm_get += r.warm_get;
    sum.warm_both += r.warm_both;
  }
  std::printf("object %zu MiB, %d iterations, %d thread(s); GB/s summed over threads\n",
              mib, iters, threads);
  std::printf("  cycle memcpy src->mid->dst        %7.2f\n", sum.cycle_memcpy);
  std::printf("  cycle put_from                    %7.2f\n", sum.cycle_put);
  std::printf("  cycle get_into                    %7.2f\n", sum.cycle_get);
  std::printf("  cycle put_from+get_into           %7.2f  (%.0f%% of memcpy)\n",
              sum.cycle_both, 100.0 * sum.cycle_both / sum.cycle_memcpy);
  std::printf("  bulk  memcpy via %d buffers       %7.2f\n", kBulkKeys, sum.bulk_memcpy);
  std::printf("  bulk  put_from, fresh memory      %7.2f\n", sum.fresh_put);
  std::printf("  bulk  put_from, reused memory     %7.2f\n", sum.warm_put);
  std::printf("  bulk  get_into                    %7.2f\n", sum.warm_get);
  std::printf("  bulk  put_from+get_into (reused)  %7.2f  (%.0f%% of memcpy)\n",
              sum.warm_both, 100.0 * sum.warm_both / sum.bulk_memcpy);
  if (!sum.ok) {
    std::printf("ERROR: some engine call failed or data did not round-trip\n");
    return 1;
  }
  return 0;
}
