// mcbench_c: the C floor of the benchmarks. It runs the single-call,
// zero-copy batch and raw multi-buffer cases of an mcbench plan through
// mooncake-go's C ABI (mcgo/store.h, linked against libmcgo_native.so) in
// plain loops, the same calls cmd/mcbench makes through cgo, so that the
// report can say how far
// the Go binding (and upstream's Python client) is from a caller that pays
// nothing but the calls themselves.
//
// It speaks the serve protocol of cmd/internal/benchdrive: it opens its store,
// prefaults its segment, writes a Run header line, then answers every case
// name read on stdin with one JSON line. Cases it does not run (copying
// batches, HiCache, copies, the Go client's combining twins) get an empty
// result list, which the drive skips. Its
// measuring is mcbench's, step for step: the same keys, dataset, warm-up,
// busy-time limit, generations of fresh keys and percentile definition
// (cmd/mcbench/runner.go, hicache.go), and for the single calls with
// several callers, mcbench's caller group (cmd/mcbench/callers.go): one
// thread per caller, each with its own keys, buffers, dataset and share of
// gen_bytes, started and stopped together.
//
//   mcbench_c -serve -own-segment -plan PLAN -master ADDR -metadata URL
//             [-hostname H] [-protocol P] [-device D] [-tick]
//
// The plan reader is minimal on purpose: plan lines are the flat JSON
// objects that `mcbench -list` writes, and it looks fields up by name.
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mcgo/store.h"

// Hooks for cgo/bench/floorhost, which runs this floor inside a Go process
// to measure what the runtime's crossings between C and Go cost: linked in,
// the callers run on goroutines locked to their threads (spawn), and with
// -tick every request of several callers is preceded by an empty callback
// into Go (tick). Weak, so that the plain floor has neither.
extern "C" {
__attribute__((weak)) void mcbench_c_spawn(void *fn, void *arg);
__attribute__((weak)) void mcbench_c_tick(void);
}

namespace {

bool tick_requests = false;  // -tick

// ---- the plan -------------------------------------------------------------

// field returns the text of "name": in a flat JSON object (up to the next
// , or }), or "" when absent.
std::string field(const std::string &obj, const std::string &name) {
  std::string pat = "\"" + name + "\":";
  size_t at = obj.find(pat);
  if (at == std::string::npos) return "";
  at += pat.size();
  if (at < obj.size() && obj[at] == '"') {
    size_t end = obj.find('"', at + 1);
    return obj.substr(at + 1, end - at - 1);
  }
  size_t end = obj.find_first_of(",}", at);
  return obj.substr(at, end - at);
}

double num(const std::string &obj, const std::string &name) {
  std::string v = field(obj, name);
  return v.empty() ? 0 : std::strtod(v.c_str(), nullptr);
}

struct Case {
  std::string json;  // the case line as written, echoed in the result
  std::string name, scenario, api;
  long value_size = 0, batch = 0, buffers = 0, buffer_size = 0, objects = 0, callers = 0;
  bool timed = false;
  bool combining = false;  // a combining twin: the Go client's only
};

struct Settings {
  double duration_s = 1, warmup_s = 0.2;
  long long gen_bytes = 0, segment = 0, local_buffer = 0;
  bool populate = true, thp = true;
  std::string prefault = "auto";
};

bool load_plan(const std::string &path, Settings *st, std::vector<Case> *cases) {
  std::ifstream f(path);
  std::string line;
  if (!std::getline(f, line) || field(line, "schema") != "mcbench-plan/1") return false;
  st->duration_s = num(line, "duration_s");
  st->warmup_s = num(line, "warmup_s");
  st->gen_bytes = static_cast<long long>(num(line, "gen_bytes"));
  st->segment = static_cast<long long>(num(line, "segment"));
  st->local_buffer = static_cast<long long>(num(line, "local_buffer"));
  st->populate = field(line, "populate") == "true";
  st->thp = field(line, "thp") == "true";
  st->prefault = field(line, "prefault");
  while (std::getline(f, line)) {
    if (line.empty()) continue;
    Case c;
    c.json = line;
    c.name = field(line, "name");
    c.scenario = field(line, "scenario");
    c.api = field(line, "api");
    c.value_size = static_cast<long>(num(line, "value_size"));
    c.batch = static_cast<long>(num(line, "batch"));
    c.buffers = static_cast<long>(num(line, "buffers"));
    c.buffer_size = static_cast<long>(num(line, "buffer_size"));
    c.objects = static_cast<long>(num(line, "objects"));
    c.callers = static_cast<long>(num(line, "callers"));
    c.timed = field(line, "timed") == "true";
    c.combining = field(line, "combining") == "true";
    cases->push_back(c);
  }
  return true;
}

// ---- measuring (cmd/mcbench/stats.go) ------------------------------------

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// proc_cpu_ns is the process's user plus system time, as mcbench's procCPU.
int64_t proc_cpu_ns() {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}

struct Recorder {
  std::vector<int64_t> lat;
  // window, when set (several callers), is the measured wall time, over
  // which throughput is computed instead of the sum of latencies.
  int64_t busy = 0, bytes = 0, cpu = 0, start = now_ns(), window = 0;
  long requests = 0, keys = 0, errors = 0;
  void add(int64_t d, long k, int64_t b) {
    lat.push_back(d);
    busy += d;
    requests++;
    keys += k;
    bytes += b;
  }
  void merge(const Recorder &o) {
    lat.insert(lat.end(), o.lat.begin(), o.lat.end());
    busy += o.busy;
    requests += o.requests;
    keys += o.keys;
    bytes += o.bytes;
    errors += o.errors;
  }
};

// Group is mcbench's callerGroup: every caller prepares and warms up, then
// all start at once and stop at the same deadline. A caller that fails
// before the start aborts the others.
struct Group {
  std::mutex mu;
  std::condition_variable cv;
  int ready = 0;
  bool started = false, aborted = false;
  int64_t t0 = 0;

  // arrive counts a caller in and returns false when the case was aborted.
  bool arrive() {
    std::unique_lock<std::mutex> l(mu);
    ready++;
    cv.notify_all();
    cv.wait(l, [&] { return started || aborted; });
    return !aborted;
  }
  void abort() {
    std::lock_guard<std::mutex> l(mu);
    aborted = true;
    cv.notify_all();
  }
  // open waits for n callers (or an abort), then opens the window.
  bool open(int n, int64_t *cpu0) {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return ready == n || aborted; });
    if (aborted) return false;
    *cpu0 = proc_cpu_ns();
    t0 = now_ns();
    started = true;
    cv.notify_all();
    return true;
  }
};

double percentile(const std::vector<int64_t> &s, double p) {
  if (s.empty()) return 0;
  double rank = (s.size() - 1) * p;
  size_t lo = static_cast<size_t>(std::floor(rank)), hi = static_cast<size_t>(std::ceil(rank));
  return s[lo] + (static_cast<double>(s[hi]) - s[lo]) * (rank - lo);
}

std::string result_json(const Case &c, Recorder &r) {
  std::sort(r.lat.begin(), r.lat.end());
  double busy = (r.window > 0 ? r.window : r.busy) / 1e9, n = static_cast<double>(r.lat.size());
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                ",\"requests\":%ld,\"keys\":%ld,\"bytes\":%lld,\"busy_s\":%.9g,\"wall_s\":%.9g,"
                "\"ops_per_s\":%.9g,\"req_per_s\":%.9g,\"gbps\":%.9g,\"mean_us\":%.9g,\"p50_us\":%.9g,"
                "\"p99_us\":%.9g,\"p999_us\":%.9g,\"errors\":%ld,\"cpu_s\":%.9g,\"cpu_us_per_op\":%.9g}",
                r.requests, r.keys, static_cast<long long>(r.bytes), busy, (now_ns() - r.start) / 1e9,
                busy > 0 ? r.keys / busy : 0, busy > 0 ? r.requests / busy : 0, busy > 0 ? r.bytes / busy / 1e9 : 0,
                n > 0 ? r.busy / n / 1e3 : 0, percentile(r.lat, 0.5) / 1e3, percentile(r.lat, 0.99) / 1e3,
                percentile(r.lat, 0.999) / 1e3, r.errors, r.cpu / 1e9, r.keys > 0 ? r.cpu / 1e3 / r.keys : 0);
  std::string j = c.json;
  j.pop_back();  // the closing brace of the case
  return j + buf;
}

// ---- memory (mooncake/hostmem: mmap, THP advice, prefaulted) ------------

struct Mem {
  char *p = nullptr;
  size_t n = 0;
  Mem(size_t size, bool thp) : n(size) {
    void *m = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (thp ? 0 : MAP_POPULATE), -1, 0);
    if (m == MAP_FAILED) {
      std::perror("mmap");
      std::exit(1);
    }
    p = static_cast<char *>(m);
    if (thp) {
      madvise(p, n, MADV_HUGEPAGE);
      std::memset(p, 0, n);
    }
  }
  ~Mem() { munmap(p, n); }
  uintptr_t addr(size_t off = 0) const { return reinterpret_cast<uintptr_t>(p + off); }
};

// ---- the client ----------------------------------------------------------

struct Bench {
  mcgo_store *st = nullptr;
  Settings set;
  std::string run;
  std::string host;  // this client's segment, for -own-segment
  mcgo_replicate_config rc{};

  void remove_prefix(const std::string &prefix) {
    std::string pat = "^" + prefix;
    mcgo_store_remove_by_regex(st, pat.data(), pat.size(), 1);
  }
};

// Packed keys, as the binding passes them: bytes back to back and n+1 offsets.
struct Packed {
  std::string bytes;
  std::vector<uint64_t> offs;
  void pack(const std::vector<std::string> &keys, size_t lo, size_t n) {
    bytes.clear();
    offs.assign(1, 0);
    for (size_t i = lo; i < lo + n; i++) {
      bytes += keys[i];
      offs.push_back(bytes.size());
    }
  }
};

struct CaseRun {
  Bench *b;
  const Case &c;
  int idx;
  std::string run;                 // the key prefix: the client's, or a caller's (its last two digits its number)
  long long gen_limit = 0;         // this caller's share of gen_bytes
  Group *group = nullptr;          // several callers: the group this one measures with
  int gen = 0;
  long long gen_bytes = 0;
  long next_id = 0;

  CaseRun(Bench *bench, const Case &cs, int i, std::string r, long long limit, Group *g = nullptr)
      : b(bench), c(cs), idx(i), run(std::move(r)), gen_limit(limit), group(g) {}

  std::string prefix() const {
    char p[64];
    std::snprintf(p, sizeof p, "%s-%03d-", run.c_str(), idx);
    return p;
  }
  std::string key(char ns, int g, long id) const {
    char k[128];
    std::snprintf(k, sizeof k, "%s-%03d-%c%04d-%012ld", run.c_str(), idx, ns, g, id);
    return k;
  }
  // remove_gen removes the current generation by its keys, as mcbench does
  // (caseRun.removeGen): a pattern would make the master run std::regex
  // over every key it holds, which at 64 callers took most of the machine.
  void remove_gen() {
    std::vector<std::string> keys;
    Packed pk;
    std::vector<int64_t> res;
    for (long lo = 0; lo < next_id; lo += kRemoveChunk) {
      long hi = std::min(next_id, lo + kRemoveChunk);
      keys.clear();
      for (long id = lo; id < hi; id++) keys.push_back(key('w', gen, id));
      pk.pack(keys, 0, keys.size());
      res.resize(keys.size());
      mcgo_store_batch_remove(b->st, pk.bytes.data(), pk.offs.data(), keys.size(), 1, res.data());
    }
  }
  static constexpr long kRemoveChunk = 4096;

  // fresh is mcbench's: never-written keys, the generation removed once it
  // would pass gen_bytes.
  void fresh(std::vector<std::string> *keys, long n, long long req_bytes) {
    if (gen_bytes > 0 && gen_bytes + req_bytes > gen_limit) {
      remove_gen();
      gen++;
      gen_bytes = 0;
      next_id = 0;
    }
    gen_bytes += req_bytes;
    keys->clear();
    for (long i = 0; i < n; i++) keys->push_back(key('w', gen, next_id++));
  }

  // drive returns false when another caller of the group failed.
  template <class Step>
  bool drive(Recorder *out, Step step) {
    if (b->set.warmup_s > 0) {
      Recorder w;
      for (int64_t t0 = now_ns(); now_ns() - t0 < static_cast<int64_t>(b->set.warmup_s * 1e9);) step(w);
    }
    Recorder rec;
    int64_t limit = static_cast<int64_t>(b->set.duration_s * 1e9), wall = 4 * limit + 1000000000LL;
    if (group != nullptr) {
      entered = true;
      if (!group->arrive()) return false;
      while (rec.requests == 0 || now_ns() - group->t0 < limit) {
        if (tick_requests) mcbench_c_tick();
        step(rec);
      }
      *out = std::move(rec);
      return true;
    }
    int64_t cpu0 = proc_cpu_ns();
    while (rec.requests == 0 || (rec.busy < limit && now_ns() - rec.start < wall)) step(rec);
    rec.cpu = proc_cpu_ns() - cpu0;
    *out = std::move(rec);
    return true;
  }
  bool entered = false;  // the caller reached its group's start
};


// A combining twin is not a case of the floor: the C ABI makes each call
// as it is asked, and the report holds the twin against the floor's run of
// the case without "/combining".
bool single_case(const Case &c) {
  return !c.combining && c.batch == 1 && (c.scenario == "write_perf" || c.scenario == "read_perf") &&
         (c.api == "plain" || c.api == "zcopy");
}

bool multi_case(const Case &c) {
  return !c.combining && c.callers <= 1 && (c.scenario == "multi_put" || c.scenario == "multi_get");
}

// batch_case: the zero-copy batches of write_perf / read_perf (one buffer
// per key), which mcbench makes through Raw's BatchPutFrom / BatchGetInto.
bool batch_case(const Case &c) {
  return !c.combining && c.batch > 1 && c.buffers <= 1 && c.api == "zcopy" &&
         (c.scenario == "write_perf" || c.scenario == "read_perf");
}

// run_batch is write_perf / read_perf of c.batch zero-copy keys per call
// (runner.go's kv with newKVRig: one registered span written from, one
// read into; reads cycle through a prepared dataset of c.objects keys).
// Packing the keys is inside the clock, as Raw packs them inside its call.
bool run_batch(CaseRun &cr, Recorder *rec) {
  const Case &c = cr.c;
  mcgo_store *st = cr.b->st;
  const size_t size = c.value_size, n = c.batch, span = n * size;
  Mem mem(2 * span, cr.b->set.thp);
  if (mcgo_store_register_buffer(st, mem.addr(), mem.n) != 0) return false;
  std::memset(mem.p, 0x5a, span);
  std::vector<uintptr_t> waddr(n), raddr(n);
  std::vector<uint64_t> sizes(n, size);
  std::vector<int64_t> res(n);
  for (size_t i = 0; i < n; i++) {
    waddr[i] = mem.addr(i * size);
    raddr[i] = mem.addr(span + i * size);
  }
  Packed pk;
  std::vector<std::string> keys;
  auto count = [&](Recorder &r, int64_t d, int32_t rc, bool read) {
    long failed = 0;
    for (size_t i = 0; i < n; i++)
      failed += rc != 0 || (read ? res[i] != static_cast<int64_t>(size) : res[i] != 0);
    r.add(d, static_cast<long>(n), static_cast<int64_t>(n - failed) * static_cast<int64_t>(size));
    r.errors += failed;
  };
  bool ok = true;
  if (c.scenario == "write_perf") {
    ok = cr.drive(rec, [&](Recorder &r) {
      cr.fresh(&keys, static_cast<long>(n), static_cast<long long>(span));
      int64_t t0 = now_ns();
      pk.pack(keys, 0, n);
      int32_t rc = mcgo_store_batch_put_from(st, pk.bytes.data(), pk.offs.data(), n, waddr.data(), sizes.data(),
                                             cr.b->rc, res.data());
      count(r, now_ns() - t0, rc, false);
    });
  } else {
    std::vector<std::string> data;
    for (long i = 0; i < c.objects; i++) data.push_back(cr.key('d', 0, i));
    for (size_t lo = 0; lo < data.size(); lo += n) {
      size_t m = std::min(n, data.size() - lo);
      pk.pack(data, lo, m);
      int32_t rc = mcgo_store_batch_put_from(st, pk.bytes.data(), pk.offs.data(), m, waddr.data(), sizes.data(),
                                             cr.b->rc, res.data());
      if (rc != 0 || std::any_of(res.begin(), res.begin() + m, [](int64_t v) { return v != 0; })) {
        mcgo_store_unregister_buffer(st, mem.addr());
        return false;
      }
    }
    size_t cursor = 0;
    ok = cr.drive(rec, [&](Recorder &r) {
      int64_t t0 = now_ns();
      pk.pack(data, cursor, n);
      cursor = (cursor + n) % data.size();
      int32_t rc = mcgo_store_batch_get_into(st, pk.bytes.data(), pk.offs.data(), n, raddr.data(), sizes.data(),
                                             res.data());
      count(r, now_ns() - t0, rc, true);
    });
  }
  mcgo_store_unregister_buffer(st, mem.addr());
  return ok;
}

// run_single is write_perf / read_perf of one key per call (runner.go's put
// and get for Batch 1): put / get_begin+get_finish into one reused buffer,
// or put_from / get_into registered memory. It returns false when a call
// failed while preparing (or another caller did).
bool run_single(CaseRun &cr, Recorder *rec) {
  const Case &c = cr.c;
  mcgo_store *st = cr.b->st;
  const size_t size = c.value_size;
  Mem mem(2 * size, cr.b->set.thp);
  if (mcgo_store_register_buffer(st, mem.addr(), mem.n) != 0) return false;
  std::memset(mem.p, 0x5a, size);
  std::vector<char> payload(size, 0x5a), dst(size);
  const bool plain = c.api == "plain";
  std::vector<std::string> keys;
  bool ok = true;
  if (c.scenario == "write_perf") {
    ok = cr.drive(rec, [&](Recorder &r) {
      cr.fresh(&keys, 1, size);
      const std::string &k = keys[0];
      int64_t t0 = now_ns();
      int32_t rc = plain ? mcgo_store_put(st, k.data(), k.size(), payload.data(), size, cr.b->rc)
                         : mcgo_store_put_from(st, k.data(), k.size(), mem.addr(), size, cr.b->rc);
      int64_t d = now_ns() - t0;
      long failed = rc != 0;
      r.add(d, 1, (1 - failed) * static_cast<int64_t>(size));
      r.errors += failed;
    });
  } else {
    std::vector<std::string> data;
    for (long i = 0; i < c.objects; i++) data.push_back(cr.key('d', 0, i));
    Packed pk;
    for (size_t i = 0; i < data.size(); i++) {
      // mcbench prepares with one-key zero-copy batch puts
      pk.pack(data, i, 1);
      uintptr_t a = mem.addr();
      uint64_t z = size;
      int64_t res = 0;
      if (mcgo_store_batch_put_from(st, pk.bytes.data(), pk.offs.data(), 1, &a, &z, cr.b->rc, &res) != 0 || res != 0) {
        mcgo_store_unregister_buffer(st, mem.addr());
        return false;
      }
    }
    size_t cursor = 0;
    ok = cr.drive(rec, [&](Recorder &r) {
      const std::string &k = data[cursor];
      cursor = (cursor + 1) % data.size();
      long failed = 0;
      int64_t t0 = now_ns();
      if (plain) {
        uintptr_t h = 0;
        int64_t n = mcgo_store_get_begin(st, k.data(), k.size(), &h);
        if (n < 0) {
          failed = 1;
        } else if (static_cast<size_t>(n) > dst.size()) {
          mcgo_store_get_finish(h, nullptr, 0);
          failed = 1;
        } else if (mcgo_store_get_finish(h, dst.data(), dst.size()) != 0 || static_cast<size_t>(n) != size) {
          failed = 1;
        }
      } else {
        int64_t n = mcgo_store_get_into(st, k.data(), k.size(), mem.addr(size), size);
        failed = n != static_cast<int64_t>(size);
      }
      int64_t d = now_ns() - t0;
      r.add(d, 1, (1 - failed) * static_cast<int64_t>(size));
      r.errors += failed;
    });
  }
  mcgo_store_unregister_buffer(st, mem.addr());
  return ok;
}

// Caller is one caller's thread: a std::thread, or in the Go host a
// goroutine locked to its thread (mcbench_c_spawn).
class Caller {
 public:
  explicit Caller(std::function<void()> fn) : fn_(std::move(fn)) {
    if (mcbench_c_spawn != nullptr) mcbench_c_spawn(reinterpret_cast<void *>(&Caller::run), this);
    else t_ = std::thread([this] { fn_(); });
  }
  Caller(const Caller &) = delete;
  Caller &operator=(const Caller &) = delete;
  void join() {
    if (t_.joinable()) {
      t_.join();
      return;
    }
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return done_; });
  }
  static void run(void *p) {
    Caller *c = static_cast<Caller *>(p);
    c->fn_();
    std::lock_guard<std::mutex> l(c->mu_);
    c->done_ = true;
    c->cv_.notify_all();
  }

 private:
  std::function<void()> fn_;
  std::thread t_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

// run_kv runs a write_perf / read_perf case of the floor: one key or a
// zero-copy batch per call.
bool run_kv(CaseRun &cr, Recorder *rec) { return batch_case(cr.c) ? run_batch(cr, rec) : run_single(cr, rec); }

// run_callers runs a single-call or batch case with c.callers threads, each a
// CaseRun of its own, and returns one result over all of them (throughput
// and CPU over the common window), or "" when a caller failed.
std::string run_callers(Bench &b, const Case &c, int idx) {
  const int n = static_cast<int>(c.callers);
  Group g;
  std::vector<std::unique_ptr<CaseRun>> runs;
  std::vector<Recorder> recs(n);
  std::vector<char> oks(n, 0);
  for (int k = 0; k < n; k++) {
    char r[16];
    std::snprintf(r, sizeof r, "%.*s%02x", static_cast<int>(b.run.size() - 2), b.run.c_str(), k);
    runs.push_back(std::make_unique<CaseRun>(&b, c, idx, r, std::max(b.set.gen_bytes / n, 1LL), &g));
  }
  std::vector<std::unique_ptr<Caller>> threads;
  for (int k = 0; k < n; k++) {
    threads.push_back(std::make_unique<Caller>([&, k] {
      oks[k] = run_kv(*runs[k], &recs[k]);
      if (!runs[k]->entered) g.abort();  // failed before the start: release the others
    }));
  }
  int64_t cpu0 = 0;
  bool opened = g.open(n, &cpu0);
  for (auto &t : threads) t->join();
  int64_t window = now_ns() - g.t0, cpu = proc_cpu_ns() - cpu0;
  for (auto &cr : runs) b.remove_prefix(cr->prefix());
  if (!opened || std::find(oks.begin(), oks.end(), 0) != oks.end()) return "";
  Recorder all;
  all.start = g.t0;
  for (auto &r : recs) all.merge(r);
  all.window = window;
  all.cpu = cpu;
  return result_json(c, all);
}

// run_multi is multi_put / multi_get with prebuilt layer-first CSR lists
// (hicache.go's multi).
std::string run_multi(CaseRun &cr) {
  const Case &c = cr.c;
  mcgo_store *st = cr.b->st;
  const size_t span = static_cast<size_t>(c.batch) * c.buffers * c.buffer_size;
  Mem mem(2 * span, cr.b->set.thp);
  for (size_t i = 0; i < span; i++) mem.p[i] = static_cast<char>(i * 7 + 1);
  if (mcgo_store_register_buffer(st, mem.addr(), mem.n) != 0) return "";
  std::vector<uintptr_t> src, dst;
  std::vector<uint64_t> sizes, offs{0};
  for (long k = 0; k < c.batch; k++) {
    for (long l = 0; l < c.buffers; l++) {
      size_t off = (static_cast<size_t>(l) * c.batch + k) * c.buffer_size;
      src.push_back(mem.addr(off));
      dst.push_back(mem.addr(span + off));
      sizes.push_back(c.buffer_size);
    }
    offs.push_back(src.size());
  }
  std::vector<int64_t> res(c.batch);
  std::vector<std::string> keys;
  Packed pk;
  auto count_failed = [&](int32_t rc, int64_t want) {
    if (rc != 0) return c.batch;
    long f = 0;
    for (int64_t r : res) f += r < 0 || r != want;
    return f;
  };
  Recorder rec;
  if (c.scenario == "multi_put") {
    cr.drive(&rec, [&](Recorder &r) {
      cr.fresh(&keys, c.batch, span);
      int64_t t0 = now_ns();
      pk.pack(keys, 0, c.batch);
      int32_t rc = mcgo_store_batch_put_from_multi_buffers(st, pk.bytes.data(), pk.offs.data(), c.batch, src.data(),
                                                           sizes.data(), offs.data(), cr.b->rc, res.data());
      long failed = count_failed(rc, 0);
      r.add(now_ns() - t0, c.batch, (c.batch - failed) * static_cast<int64_t>(c.value_size));
      r.errors += failed;
    });
  } else {
    std::vector<std::string> data;
    for (long i = 0; i < c.objects; i++) data.push_back(cr.key('d', 0, i));
    for (size_t lo = 0; lo < data.size(); lo += c.batch) {
      pk.pack(data, lo, c.batch);
      int32_t rc = mcgo_store_batch_put_from_multi_buffers(st, pk.bytes.data(), pk.offs.data(), c.batch, src.data(),
                                                           sizes.data(), offs.data(), cr.b->rc, res.data());
      if (count_failed(rc, 0) > 0) {
        mcgo_store_unregister_buffer(st, mem.addr());
        return "";
      }
    }
    // Keys are packed inside the clock, as the binding packs a []string in
    // its call: the floor does the same work, minus what Go adds.
    size_t cursor = 0;
    cr.drive(&rec, [&](Recorder &r) {
      size_t lo = cursor;
      cursor = (cursor + c.batch) % data.size();
      int64_t t0 = now_ns();
      pk.pack(data, lo, c.batch);
      int32_t rc = mcgo_store_batch_get_into_multi_buffers(st, pk.bytes.data(), pk.offs.data(), c.batch, dst.data(),
                                                           sizes.data(), offs.data(), 0, res.data());
      long failed = count_failed(rc, c.value_size);
      r.add(now_ns() - t0, c.batch, (c.batch - failed) * static_cast<int64_t>(c.value_size));
      r.errors += failed;
    });
  }
  mcgo_store_unregister_buffer(st, mem.addr());
  return result_json(c, rec);
}

// prefault is mcbench's prefaultSegment: 32 MiB objects up to 85% of the
// segment, then removed, so that writes land on resident pages.
void prefault(Bench &b) {
  const size_t chunk = 32 << 20;
  Mem mem(chunk, b.set.thp);
  if (mcgo_store_register_buffer(b.st, mem.addr(), chunk) != 0) return;
  long long limit = b.set.segment * 85 / 100, n = 0;
  for (int i = 0; n + static_cast<long long>(chunk) <= limit; i++) {
    char k[64];
    std::snprintf(k, sizeof k, "%s-pf-%06d", b.run.c_str(), i);
    if (mcgo_store_put_from(b.st, k, std::strlen(k), mem.addr(), chunk, b.rc) != 0) break;
    n += chunk;
  }
  b.remove_prefix(b.run + "-pf-");
  mcgo_store_unregister_buffer(b.st, mem.addr());
  std::fprintf(stderr, "mcbench_c: prefaulted the segment: wrote and removed %lld MiB\n", n >> 20);
}

std::string host_json() {
  utsname u{};
  uname(&u);
  char h[512];
  std::snprintf(h, sizeof h, "{\"os\":\"linux\",\"arch\":\"%s\",\"cpus\":%ld,\"hostname\":\"%s\"}", u.machine,
                sysconf(_SC_NPROCESSORS_ONLN), u.nodename);
  return h;
}

}  // namespace

#ifdef MCBENCH_C_HOSTED
extern "C" int mcbench_c_main(int argc, char **argv) {  // called by cgo/bench/floorhost
#else
int main(int argc, char **argv) {
#endif
  std::string plan, master, metadata, hostname = "127.0.0.1", protocol = "tcp", device;
  bool serve = false, own = false;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "mcbench_c: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "-serve") serve = true;
    else if (a == "-own-segment") own = true;
    else if (a == "-plan") plan = val();
    else if (a == "-master") master = val();
    else if (a == "-metadata") metadata = val();
    else if (a == "-hostname") hostname = val();
    else if (a == "-protocol") protocol = val();
    else if (a == "-device") device = val();
    else if (a == "-tick") tick_requests = true;
    else {
      std::fprintf(stderr, "mcbench_c: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (tick_requests && mcbench_c_tick == nullptr) {
    std::fprintf(stderr, "mcbench_c: -tick needs the Go host (cgo/bench/floorhost)\n");
    return 2;
  }
  Bench b;
  std::vector<Case> cases;
  if (!serve || plan.empty() || master.empty() || !load_plan(plan, &b.set, &cases)) {
    std::fprintf(stderr, "usage: mcbench_c -serve [-own-segment] -plan PLAN -master ADDR -metadata URL [-hostname H] [-protocol P] [-device D] [-tick]\n");
    return 2;
  }
  if (mcgo_store_create(&b.st) != 0) return 1;
  mcgo_store_config cfg{};
  cfg.local_hostname = hostname.c_str();
  cfg.metadata_server = metadata.c_str();
  cfg.global_segment_size = b.set.segment;
  cfg.local_buffer_size = b.set.local_buffer;
  cfg.protocol = protocol.c_str();
  cfg.device_name = device.c_str();
  cfg.master_server_address = master.c_str();
  char err[512] = "";
  if (int32_t rc = mcgo_store_setup(b.st, &cfg, err, sizeof err); rc != 0) {
    std::fprintf(stderr, "mcbench_c: setup: %d %s\n", rc, err);
    return 1;
  }
  if (own) {
    char h[256];
    size_t n = 0;
    mcgo_store_hostname(b.st, h, sizeof h, &n);
    b.host.assign(h, std::min(n, sizeof h - 1));
    b.host.push_back('\0');
    b.rc.preferred_segment_count = 1;
    b.rc.preferred_segments = b.host.data();
    b.rc.preferred_segments_len = b.host.size();
  }
  std::random_device rd;
  char run[16];
  std::snprintf(run, sizeof run, "%08x", static_cast<unsigned>(rd()));
  b.run = run;
  if (b.set.prefault != "off") prefault(b);

  char started[32];
  time_t t = time(nullptr);
  strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
  std::printf("{\"schema\":\"mcbench/1\",\"client\":\"c\",\"engine\":\"%s\",\"version\":\"C++ %s\",\"host\":%s,"
              "\"started\":\"%s\",\"params\":{},\"results\":null}\n",
              mcgo_backend_name(), __VERSION__, host_json().c_str(), started);
  std::fflush(stdout);
  std::string line;
  for (int seq = 0; std::getline(std::cin, line); seq++) {
    if (line.empty()) continue;
    if (line == "quit") break;
    const Case *c = nullptr;
    for (const Case &x : cases)
      if (x.name == line) c = &x;
    std::string reply;
    if (c == nullptr) {
      reply = "{\"results\":[],\"error\":\"no case " + line + " in the plan\"}";
    } else if (!single_case(*c) && !multi_case(*c) && !batch_case(*c)) {
      reply = "{\"results\":[]}";  // not a case of the floor
    } else {
      std::string r;
      if ((single_case(*c) || batch_case(*c)) && c->callers > 1) {
        r = run_callers(b, *c, seq);
      } else {
        CaseRun cr(&b, *c, seq, b.run, b.set.gen_bytes);
        Recorder rec;
        if (multi_case(*c)) r = run_multi(cr);
        else if (run_kv(cr, &rec)) r = result_json(*c, rec);
        b.remove_prefix(cr.prefix());
      }
      reply = r.empty() ? "{\"results\":[],\"error\":\"" + line + ": a store call failed while preparing\"}"
                        : "{\"results\":[" + r + "]}";
    }
    std::printf("%s\n", reply.c_str());
    std::fflush(stdout);
  }
  mcgo_store_destroy(b.st);
  return 0;
}
