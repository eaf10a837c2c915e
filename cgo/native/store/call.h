// The store part of the native backend (mcgo/store.h over upstream
// Mooncake's store client, mooncake::RealClient), cut by job as package
// mooncake is: setup.cc (create, set up, destroy, health), ops.cc (single
// keys and registrations), batch.cc (zero-copy batches), copybatch.cc
// (copying multi-part and batch puts), replicas.cc, segments.cc (mounted
// segments and the SSD tier), sessions.cc (sessions and ranged reads),
// tasks.cc (copy and move tasks), dummy.cc (dummy clients). This header is
// what they share: the store handle, the call frame and the conversions.
// Built by CMake (make native) into libmcgo_native.so against an upstream
// build; never compiled by cgo.
//
// Rules of the store part:
//   - every entry point catches every C++ exception and reports
//     MCGO_INTERNAL_ERROR;
//   - argument checks are the ones the embedded engine makes
//     (cgo/common/args.h), so both backends refuse the same inputs the same way;
//   - upstream's result vectors are checked for length before use;
//   - nothing passed in is kept after a call returns.
#ifndef MCGO_NATIVE_STORE_CALL_H_
#define MCGO_NATIVE_STORE_CALL_H_

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "common/args.h"
#include "common/dummy_args.h"
#include "common/guard.h"
#include "mcgo/store.h"
#include "native/transfer_engine_handle.h"
#include "real_client.h"

// What the linked upstream has of the calls and options that differ between
// the tested versions: 0 or 1, defined by cgo/native/features.cmake.
#if !defined(MCGO_HAVE_SESSIONS) || !defined(MCGO_HAVE_MULTI_BUFFER_UPSERT) ||  \
    !defined(MCGO_HAVE_SOFT_PIN_ACTIONS) || !defined(MCGO_HAVE_DFS_REPLICAS) || \
    !defined(MCGO_HAVE_DRAIN_LOCAL_DISK)
#error "MCGO_HAVE_* must be defined by the build (cgo/native/features.cmake)"
#endif

struct mcgo_store {
  // A RealClient, or a DummyClient after mcgo_store_setup_dummy; real is
  // client as a RealClient (null for a dummy), for the calls only it has.
  std::shared_ptr<mooncake::PyClient> client;
  mooncake::RealClient *real = nullptr;
  // Shared memory from mcgo_store_alloc_from_mem_pool (a dummy's), freed at
  // destroy: upstream's ShmHelper would keep it until the process ends.
  mcgo::args::DummyPool pool;
  mcgo_te *engine = nullptr;  // the transfer engine it runs on, or null
  // Setup and teardown take it exclusively; calls take it shared, so a call
  // never sees a half set-up client.
  std::shared_mutex mu;
  bool ready = false;
  std::string protocol;  // set up with; the default of the segment calls
};

namespace mcgo::native::store {

using mcgo::Guard32;
using mcgo::Guard64;
using mcgo::GuardBatch;
using mcgo::args::CsrOk;
using mcgo::args::Fill;
using mcgo::args::KeyAt;
using mcgo::args::KeyOk;
using mcgo::args::KeysOk;
using mcgo::args::MakeKey;
using mcgo::args::Refuse;

// A call holds the store's shared lock and sees a ready client, or nothing.
class Call {
 public:
  explicit Call(mcgo_store *s) {
    if (s == nullptr) return;
    lock_ = std::shared_lock<std::shared_mutex>(s->mu);
    if (s->ready && s->client) {
      client_ = s->client.get();
      real_ = s->real;
    }
  }
  mooncake::PyClient *client() const { return client_; }
  // The client as a RealClient: null when not set up, or set up as a dummy.
  mooncake::RealClient *real() const { return real_; }
  // MCGO_OK when the call can use real(); MCGO_NOT_SUPPORTED for a dummy
  // (upstream's DummyClient has no such call), MCGO_INVALID_PARAMS when
  // not set up.
  int32_t NeedReal() const {
    if (client_ == nullptr) return MCGO_INVALID_PARAMS;
    return real_ == nullptr ? MCGO_NOT_SUPPORTED : MCGO_OK;
  }
  bool dummy() const { return client_ != nullptr && real_ == nullptr; }

 private:
  std::shared_lock<std::shared_mutex> lock_;
  mooncake::PyClient *client_ = nullptr;
  mooncake::RealClient *real_ = nullptr;
};

// Converts the C replicate config: MCGO_OK, MCGO_INVALID_PARAMS when it is
// malformed, or MCGO_NOT_SUPPORTED when it asks for an option the linked
// upstream lacks (MCGO_HAVE_SOFT_PIN_ACTIONS, MCGO_HAVE_DFS_REPLICAS).
int32_t ToReplicate(const mcgo_replicate_config &in, mooncake::ReplicateConfig *out);

// Upstream's forms of the packed keys, of addresses and of sizes.
std::vector<std::string> Keys(const char *keys, const uint64_t *off, size_t n);
std::vector<void *> Ptrs(const uintptr_t *addrs, size_t n);
std::vector<size_t> Sizes(const uint64_t *sizes, size_t n);
// A CSR buffer list as upstream's nested vectors, one per key.
void Nested(const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *bo,
            size_t n, std::vector<std::vector<void *>> *all_ptrs,
            std::vector<std::vector<size_t>> *all_sizes);

// Copies upstream's per-key results; a short or long vector (upstream returns
// [] when its client is not initialised) is an internal error for all keys.
template <typename V>
int32_t Results(const V &got, size_t n, int64_t *results) {
  if (got.size() != n) return Refuse(results, n, MCGO_INTERNAL_ERROR);
  for (size_t i = 0; i < n; ++i) results[i] = static_cast<int64_t>(got[i]);
  return MCGO_OK;
}

// Common checks of a batch call. Returns MCGO_OK to proceed, or the
// refusal code (results already filled).
int32_t BatchPrologue(mooncake::PyClient *c, const char *keys,
                      const uint64_t *off, size_t n, int64_t *results);

// A batch call that takes only keys and returns upstream's per-key results.
// kRealOnly: a dummy refuses it (MCGO_NOT_SUPPORTED for every key).
template <bool kRealOnly = false, typename F>
int32_t KeysOnly(mcgo_store *s, const char *keys, const uint64_t *off, size_t n, int64_t *results,
                 F &&call_upstream) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (int32_t rc = BatchPrologue(call.client(), keys, off, n, results)) return rc;
    if (kRealOnly && call.dummy()) return Refuse(results, n, MCGO_NOT_SUPPORTED);
    return Results(call_upstream(call.client(), Keys(keys, off, n)), n, results);
  });
}

// Runs the body of a setup call, which reports a refusal with
// fail(code, message); an exception is MCGO_INTERNAL_ERROR with its message.
template <typename F>
int32_t SetupGuard(char *errmsg, size_t errmsg_cap, F &&body) {
  auto fail = [&](int32_t code, const std::string &msg) {
    mcgo::args::WriteMessage(errmsg, errmsg_cap, msg);
    return code;
  };
  try {
    return body(fail);
  } catch (const std::exception &e) {
    return fail(MCGO_INTERNAL_ERROR, std::string("exception: ") + e.what());
  } catch (...) {
    return fail(MCGO_INTERNAL_ERROR, "unknown exception");
  }
}

// Tears a DummyClient down and frees its pool memory, waiting at most
// kDummyTeardownWait (dummy.cc).
void TearDownDummy(std::shared_ptr<mooncake::PyClient> client, mcgo::args::DummyPool::Chunks pool);

}  // namespace mcgo::native::store

#endif  // MCGO_NATIVE_STORE_CALL_H_
