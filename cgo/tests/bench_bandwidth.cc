// Bandwidth micro benchmark of the embedded engine: zero-copy put_from +
// get_into of large objects against a plain memcpy of the same bytes.
//
//   mcgo_bench [object_MiB=4] [iterations=256] [threads=1]
//
// Modes:
//   cycle: per iteration put_from(key) ; get_into(key) ; remove(key)
//          (steady state: the engine's allocation is reused)
//   bulk:  put_from 32 distinct keys, then get_into all, then remove all
//          (each put writes fresh memory, as a cache filling up does)
// Baseline: memcpy(dst, src) twice per iteration (the put and the get copy)
// on the same buffers. Build without sanitizers for meaningful numbers:
//   cmake -S . -B build/cpp-bench -DCMAKE_BUILD_TYPE=Release
//   cmake --build build/cpp-bench --target mcgo_bench && build/cpp-bench/mcgo_bench
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "mcgo.h"

namespace {

using Clock = std::chrono::steady_clock;

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

struct Result {
  double memcpy_gbs = 0, cycle_put = 0, cycle_get = 0, cycle_both = 0,
         bulk_put = 0, bulk_get = 0, bulk_both = 0;
  bool ok = true;
};

// One thread's work. Returns bandwidths in GB/s (1e9 bytes/s).
Result RunOne(mcgo_store *s, int tid, size_t size, int iters) {
  Result r;
  uint8_t *src = AllocTouched(size);
  uint8_t *dst = AllocTouched(size);
  for (size_t i = 0; i < size; ++i) src[i] = static_cast<uint8_t>(i * 131 + tid);
  mcgo_replicate_config cfg{};
  cfg.replica_num = 1;
  if (mcgo_register_buffer(s, reinterpret_cast<uintptr_t>(src), size) != 0 ||
      mcgo_register_buffer(s, reinterpret_cast<uintptr_t>(dst), size) != 0) {
    std::fprintf(stderr, "register failed\n");
    std::exit(2);
  }
  const uintptr_t sa = reinterpret_cast<uintptr_t>(src), da = reinterpret_cast<uintptr_t>(dst);

  // Baseline.
  auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) {
    std::memcpy(dst, src, size);
    std::memcpy(src, dst, size);
  }
  auto t1 = Clock::now();
  r.memcpy_gbs = 2.0 * iters * size / Seconds(t0, t1) / 1e9;

  // Cycle.
  const std::string key = "cycle-" + std::to_string(tid);
  double put_s = 0, get_s = 0;
  for (int i = -2; i < iters; ++i) {  // 2 warm-up rounds
    auto a = Clock::now();
    int32_t p = mcgo_put_from(s, key.data(), key.size(), sa, size, cfg);
    auto b = Clock::now();
    int64_t g = mcgo_get_into(s, key.data(), key.size(), da, size);
    auto c = Clock::now();
    if (p != 0 || g != static_cast<int64_t>(size) ||
        mcgo_remove(s, key.data(), key.size(), 1) != 0) {
      r.ok = false;
    }
    if (i >= 0) {
      put_s += Seconds(a, b);
      get_s += Seconds(b, c);
    }
  }
  if (std::memcmp(src, dst, size) != 0) r.ok = false;
  r.cycle_put = 1.0 * iters * size / put_s / 1e9;
  r.cycle_get = 1.0 * iters * size / get_s / 1e9;
  r.cycle_both = 2.0 * iters * size / (put_s + get_s) / 1e9;

  // Bulk.
  constexpr int kKeys = 32;
  put_s = get_s = 0;
  const int rounds = iters / kKeys > 0 ? iters / kKeys : 1;
  for (int round = 0; round < rounds; ++round) {
    auto a = Clock::now();
    for (int k = 0; k < kKeys; ++k) {
      const std::string bk = "bulk-" + std::to_string(tid) + "-" + std::to_string(k);
      if (mcgo_put_from(s, bk.data(), bk.size(), sa, size, cfg) != 0) r.ok = false;
    }
    auto b = Clock::now();
    for (int k = 0; k < kKeys; ++k) {
      const std::string bk = "bulk-" + std::to_string(tid) + "-" + std::to_string(k);
      if (mcgo_get_into(s, bk.data(), bk.size(), da, size) != static_cast<int64_t>(size)) r.ok = false;
    }
    auto c = Clock::now();
    for (int k = 0; k < kKeys; ++k) {
      const std::string bk = "bulk-" + std::to_string(tid) + "-" + std::to_string(k);
      if (mcgo_remove(s, bk.data(), bk.size(), 1) != 0) r.ok = false;
    }
    put_s += Seconds(a, b);
    get_s += Seconds(b, c);
  }
  r.bulk_put = 1.0 * rounds * kKeys * size / put_s / 1e9;
  r.bulk_get = 1.0 * rounds * kKeys * size / get_s / 1e9;
  r.bulk_both = 2.0 * rounds * kKeys * size / (put_s + get_s) / 1e9;

  mcgo_unregister_buffer(s, sa);
  mcgo_unregister_buffer(s, da);
  munmap(src, size);
  munmap(dst, size);
  return r;
}

}  // namespace

int main(int argc, char **argv) {
  const size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 4;
  const int iters = argc > 2 ? std::atoi(argv[2]) : 256;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
  const size_t size = mib << 20;

  mcgo_store *s = nullptr;
  mcgo_create(&s);
  mcgo_config cfg{};
  cfg.local_hostname = "127.0.0.1";
  cfg.metadata_server = "P2PHANDSHAKE";
  cfg.global_segment_size = static_cast<uint64_t>(threads) * 40 * size;
  cfg.local_buffer_size = 16 << 20;
  cfg.protocol = "tcp";
  cfg.device_name = "";
  cfg.master_server_address = "bench:50051";
  char err[256];
  if (mcgo_setup(s, &cfg, err, sizeof err) != 0) {
    std::fprintf(stderr, "setup: %s\n", err);
    return 2;
  }

  std::vector<Result> results(static_cast<size_t>(threads));
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] { results[static_cast<size_t>(t)] = RunOne(s, t, size, iters); });
  }
  for (auto &t : ts) t.join();
  mcgo_destroy(s);

  Result sum;
  for (const auto &r : results) {
    sum.ok = sum.ok && r.ok;
    sum.memcpy_gbs += r.memcpy_gbs;
    sum.cycle_put += r.cycle_put;
    sum.cycle_get += r.cycle_get;
    sum.cycle_both += r.cycle_both;
    sum.bulk_put += r.bulk_put;
    sum.bulk_get += r.bulk_get;
    sum.bulk_both += r.bulk_both;
  }
  std::printf("object %zu MiB, %d iterations, %d thread(s); GB/s summed over threads\n",
              mib, iters, threads);
  std::printf("  memcpy baseline            %7.2f\n", sum.memcpy_gbs);
  std::printf("  cycle put_from             %7.2f\n", sum.cycle_put);
  std::printf("  cycle get_into             %7.2f\n", sum.cycle_get);
  std::printf("  cycle put_from+get_into    %7.2f  (%.0f%% of memcpy)\n",
              sum.cycle_both, 100.0 * sum.cycle_both / sum.memcpy_gbs);
  std::printf("  bulk  put_from (fresh mem) %7.2f\n", sum.bulk_put);
  std::printf("  bulk  get_into             %7.2f\n", sum.bulk_get);
  std::printf("  bulk  put_from+get_into    %7.2f  (%.0f%% of memcpy)\n",
              sum.bulk_both, 100.0 * sum.bulk_both / sum.memcpy_gbs);
  if (!sum.ok) {
    std::printf("ERROR: some engine call failed or data did not round-trip\n");
    return 1;
  }
  return 0;
}
