// The native store's segments mounted while running and its SSD tier
// (package mooncake's segments.go).

#include <functional>
#include <string>
#include <vector>

#include "common/segment_args.h"
#include "native/store/call.h"

using namespace mcgo::native::store;  // NOLINT: the store part's frame (call.h)

namespace {

// Copies upstream's segment ids out. More than cap: every segment is
// unmounted again (unmount undoes it) and MCGO_BUFFER_OVERFLOW returned.
int32_t MountedIds(const std::vector<std::string> &got, mcgo_segment_id *ids, size_t cap,
                   size_t *n_ids, const std::function<void(const std::vector<std::string> &)> &unmount) {
  *n_ids = got.size();
  std::vector<mcgo_segment_id> parsed(got.size());
  bool ok = got.size() <= cap;
  for (size_t i = 0; ok && i < got.size(); ++i) ok = mcgo::args::ParseSegmentId(got[i], &parsed[i]);
  if (!ok) {
    unmount(got);
    return got.size() > cap ? MCGO_BUFFER_OVERFLOW : MCGO_INTERNAL_ERROR;
  }
  for (size_t i = 0; i < parsed.size(); ++i) ids[i] = parsed[i];
  return MCGO_OK;
}

// Upstream unmounts a list and reports only its first error, -1 for an id
// it does not know: one call per id gives each its own result.
int32_t UnmountEach(mcgo_store *s, const mcgo_segment_id *ids, size_t n, uint64_t grace,
                    int64_t *results, bool free_memory) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (results == nullptr) return MCGO_INVALID_PARAMS;
    if (call.client() == nullptr || ids == nullptr) return Refuse(results, n, MCGO_INVALID_PARAMS);
    if (int32_t rc = call.NeedReal()) return Refuse(results, n, rc);
    int32_t first = MCGO_OK;
    for (size_t i = 0; i < n; ++i) {
      const std::vector<std::string> one{mcgo::args::SegmentIdString(ids[i])};
      int rc = free_memory ? call.real()->unmountAndFreeSegment(one, grace)
                           : call.real()->unmountSegment(one, grace);
      if (rc == -1) rc = MCGO_INVALID_PARAMS;  // not in this client's records of that kind
      results[i] = rc;
      if (rc != 0 && first == MCGO_OK) first = rc;
    }
    return first;
  });
}

}  // namespace

extern "C" {

int32_t mcgo_store_allocate_and_mount_segment(mcgo_store *s, uint64_t size,
                                              const char *protocol, const char *location,
                                              mcgo_segment_id *ids, size_t ids_cap,
                                              size_t *n_ids, uint64_t *allocated) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    uint64_t aligned = 0;
    std::string proto;
    if (call.dummy()) return MCGO_NOT_SUPPORTED;  // checked first: a dummy has no protocol
    if (call.client() == nullptr ||
        !mcgo::args::AllocateArgsOk(ids, ids_cap, n_ids, allocated, size, protocol, s->protocol, &aligned, &proto)) {
      return MCGO_INVALID_PARAMS;
    }
    *n_ids = 0;
    *allocated = 0;
    std::vector<std::string> got;
    size_t done = 0;
    const int rc = call.real()->allocateAndMountSegment(static_cast<size_t>(size), proto,
                                                          location == nullptr ? "" : location, got, &done);
    if (rc != 0) return MCGO_INTERNAL_ERROR;  // upstream says -1 for any failure (its log has why)
    const int32_t out = MountedIds(got, ids, ids_cap, n_ids, [&](const std::vector<std::string> &all) {
      call.real()->unmountAndFreeSegment(all, 0);
    });
    if (out == MCGO_OK) *allocated = done;
    return out;
  });
}

int32_t mcgo_store_mount_segment(mcgo_store *s, const char *path, uint64_t offset,
                                 uint64_t size, const char *protocol, const char *location,
                                 mcgo_segment_id *ids, size_t ids_cap, size_t *n_ids) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    std::string proto;
    if (call.dummy()) return MCGO_NOT_SUPPORTED;
    if (call.client() == nullptr ||
        !mcgo::args::MountArgsOk(ids, ids_cap, n_ids, path, offset, size, protocol, s->protocol, &proto)) {
      return MCGO_INVALID_PARAMS;
    }
    *n_ids = 0;
    std::vector<std::string> got;
    const int rc = call.real()->mountSegment(path, static_cast<size_t>(offset), static_cast<size_t>(size),
                                               proto, location == nullptr ? "" : location, got);
    if (rc != 0) return MCGO_INTERNAL_ERROR;  // -1 for any failure (its log has why)
    return MountedIds(got, ids, ids_cap, n_ids, [&](const std::vector<std::string> &all) {
      call.real()->unmountSegment(all, 0);
    });
  });
}

int32_t mcgo_store_unmount_segment(mcgo_store *s, const mcgo_segment_id *ids, size_t n,
                                   uint64_t grace_seconds, int64_t *results) {
  return UnmountEach(s, ids, n, grace_seconds, results, false);
}

int32_t mcgo_store_unmount_and_free_segment(mcgo_store *s, const mcgo_segment_id *ids,
                                            size_t n, uint64_t grace_seconds,
                                            int64_t *results) {
  return UnmountEach(s, ids, n, grace_seconds, results, true);
}

int32_t mcgo_store_unmount_local_disk_segment(mcgo_store *s, uint64_t grace_seconds) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (int32_t rc = call.NeedReal()) return rc;
#if MCGO_HAVE_DRAIN_LOCAL_DISK
    const int rc = call.real()->drainLocalDiskSegment(grace_seconds);
    return rc == 0 ? MCGO_OK : MCGO_INTERNAL_ERROR;  // upstream says -1 for any failure
#else
    return MCGO_NOT_SUPPORTED;  // upstream before drainLocalDiskSegment (v0.3.12.post1)
#endif
  });
}

int64_t mcgo_store_offload_rpc_read_count(mcgo_store *s) {
  return Guard64([&]() -> int64_t {
    Call call(s);
    if (int32_t rc = call.NeedReal()) return rc;
    return static_cast<int64_t>(call.real()->get_offload_rpc_read_count());
  });
}

}  // extern "C"
