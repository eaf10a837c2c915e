// The native store's replica calls (package mooncake's replicas.go):
// replica descriptors and clearing replicas.

#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_set>
#include <variant>
#include <vector>

#include "common/replica_desc.h"
#include "native/store/call.h"
#include "replica.h"

using namespace mcgo::native::store;  // NOLINT: the store part's frame (call.h)

namespace {

// ToDesc maps upstream's descriptor variant onto mcgo_replica_desc and
// its location string.
mcgo_replica_desc ToDesc(const mooncake::Replica::Descriptor &r, std::string *location) {
  mcgo_replica_desc d{};
  d.id = static_cast<uint64_t>(r.id);
  d.status = static_cast<int32_t>(r.status);
  std::visit(
      [&](const auto &v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, mooncake::MemoryDescriptor> ||
                      std::is_same_v<T, mooncake::NoFDescriptor>) {
          d.kind = std::is_same_v<T, mooncake::MemoryDescriptor> ? MCGO_REPLICA_MEMORY : MCGO_REPLICA_NOF;
          d.size = v.buffer_descriptor.size_;
          d.address = v.buffer_descriptor.buffer_address_;
          *location = v.buffer_descriptor.transport_endpoint_;
        } else if constexpr (std::is_same_v<T, mooncake::DiskDescriptor>) {
          d.kind = MCGO_REPLICA_DISK;
          d.size = v.object_size;
          *location = v.file_path;
        } else if constexpr (std::is_same_v<T, mooncake::LocalDiskDescriptor>) {
          d.kind = MCGO_REPLICA_LOCAL_DISK;
          d.size = v.object_size;
          *location = v.transport_endpoint;
        } else {
          d.kind = MCGO_REPLICA_DFS;
          d.size = v.object_size;
          d.file_offset = v.offset;
          *location = v.file_path;
        }
      },
      r.descriptor_variant);
  return d;
}

}  // namespace

extern "C" {

int32_t mcgo_store_batch_get_replica_desc(mcgo_store *s, const char *keys,
                                          const uint64_t *key_offsets, size_t n,
                                          mcgo_replica_desc *descs, size_t descs_cap,
                                          char *names, size_t names_cap,
                                          size_t *descs_needed, size_t *names_needed,
                                          int64_t *results) {
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (n > 0) {
      if (int32_t rc = BatchPrologue(call.client(), keys, key_offsets, n, results)) return rc;
    } else if (call.client() == nullptr) {
      return MCGO_INVALID_PARAMS;
    }
    if (!mcgo::DescArgsOk(descs, descs_cap, names, names_cap)) {
      return Refuse(results, n, MCGO_INVALID_PARAMS);
    }
    // Upstream's standalone real client (real_client_main.cpp) serves no
    // get_replica_desc or batch_get_replica_desc: a DummyClient's call fails
    // ("the rpc function not registered") and answers an empty map, which
    // would read as "no such key".
    if (call.dummy()) return Refuse(results, n, MCGO_NOT_SUPPORTED);
    const std::vector<std::string> ks = Keys(keys, key_offsets, n);
    // Upstream's batch answer is a map without the failed keys: a key that
    // is missing, or not readable yet, has no entry (or an empty list).
    const auto found = n > 0 ? call.client()->batch_get_replica_desc(ks)
                             : std::map<std::string, std::vector<mooncake::Replica::Descriptor>>{};
    mcgo::DescWriter w(descs, descs_cap, names, names_cap);
    for (size_t i = 0; i < n; ++i) {
      auto it = found.find(ks[i]);
      if (it == found.end() || it->second.empty()) {
        results[i] = MCGO_OBJECT_NOT_FOUND;
        continue;
      }
      results[i] = static_cast<int64_t>(it->second.size());
      for (const auto &r : it->second) {
        std::string location;
        const mcgo_replica_desc d = ToDesc(r, &location);
        w.Add(d, location);
      }
    }
    return w.Finish(descs_needed, names_needed);
  });
}

int32_t mcgo_store_batch_replica_clear(mcgo_store *s, const char *keys,
                                       const uint64_t *key_offsets, size_t n,
                                       const char *segment, size_t segment_len,
                                       int64_t *results) {
  if (n == 0) return MCGO_OK;
  return GuardBatch(results, n, [&]() -> int32_t {
    Call call(s);
    if (int32_t rc = BatchPrologue(call.client(), keys, key_offsets, n, results)) return rc;
    if (segment == nullptr && segment_len > 0) return Refuse(results, n, MCGO_INVALID_PARAMS);
    // Upstream's DummyClient answers every clear with "nothing cleared"
    // without asking anyone: refused instead, so no caller mistakes it.
    if (call.dummy()) return Refuse(results, n, MCGO_NOT_SUPPORTED);
    const std::vector<std::string> ks = Keys(keys, key_offsets, n);
    // Upstream answers with the keys it cleared (and an empty list when
    // the call fails as a whole).
    const std::vector<std::string> cleared = call.client()->batch_replica_clear(
        ks, std::string(segment == nullptr ? "" : segment, segment_len));
    const std::unordered_set<std::string_view> done(cleared.begin(), cleared.end());
    for (size_t i = 0; i < n; ++i) results[i] = done.count(ks[i]) ? 1 : 0;
    return MCGO_OK;
  });
}

}  // extern "C"
