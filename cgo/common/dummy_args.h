// dummy_args.h: the argument rules of the dummy-client calls
// (mcgo_store_setup_dummy, mcgo_store_alloc_from_mem_pool), shared by both
// backends so that they refuse exactly the same inputs.
#ifndef MCGO_COMMON_DUMMY_ARGS_H_
#define MCGO_COMMON_DUMMY_ARGS_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace mcgo::args {

// The largest single allocation from the shared-memory pool (1 TiB): far
// beyond any host, and small enough that page rounding cannot overflow.
constexpr uint64_t kMaxPoolAlloc = uint64_t{1} << 40;

// ServerAddressOk checks a real client's "host:port" (upstream's
// parseHostNameWithPort would take a missing port as its default and a
// malformed one as 0): a non-empty host, and a port of 1..65535 in decimal.
// Sets *port, or *why.
inline bool ServerAddressOk(const char *addr, int *port, std::string *why) {
  const std::string a = addr == nullptr ? "" : addr;
  const size_t colon = a.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    *why = "server_address \"" + a + "\": want host:port";
    return false;
  }
  const std::string p = a.substr(colon + 1);
  long v = 0;
  bool ok = !p.empty() && p.size() <= 5;
  for (char ch : p) {
    ok = ok && ch >= '0' && ch <= '9';
    if (ok) v = v * 10 + (ch - '0');
  }
  if (!ok || v < 1 || v > 65535) {
    *why = "server_address \"" + a + "\": port must be 1..65535";
    return false;
  }
  *port = static_cast<int>(v);
  return true;
}

// The abstract Unix socket upstream's standalone real client listens on
// for shared-memory registrations (real_client_main.cpp; Python's
// setup_dummy names it the same way).
inline std::string IpcSocketPath(int port) {
  return "@mooncake_client_" + std::to_string(port) + ".sock";
}

inline bool PoolSizeOk(uint64_t size) { return size > 0 && size <= kMaxPoolAlloc; }

// A dummy's shared-memory allocations (mcgo_store_alloc_from_mem_pool). A
// dummy registers only whole allocations, as upstream's DummyClient, which
// maps each one into its real client.
class DummyPool {
 public:
  using Chunks = std::vector<std::pair<void *, uint64_t>>;
  void Add(void *p, uint64_t size) {
    std::lock_guard<std::mutex> lock(mu_);
    chunks_.emplace_back(p, size);
  }
  // Has reports whether an allocation starts at addr (and is size bytes
  // long, unless size is 0).
  bool Has(uintptr_t addr, uint64_t size) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto &c : chunks_) {
      if (reinterpret_cast<uintptr_t>(c.first) == addr && (size == 0 || c.second == size)) return true;
    }
    return false;
  }
  // Take hands every allocation to the caller, to free.
  Chunks Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(chunks_, {});
  }

 private:
  std::mutex mu_;
  Chunks chunks_;
};

}  // namespace mcgo::args

#endif  // MCGO_COMMON_DUMMY_ARGS_H_
