// The feature probe of the native backend (features.cmake): compiled once
// at configure time against the upstream tree being linked, with
// Mooncake::store's include directories, definitions and options, never
// linked into libmcgo_native. Each feature is an expression that compiles
// only when upstream has what the shim calls under MCGO_HAVE_<name>; a
// requires-expression on a template parameter makes a missing member a
// false instead of an error, so one compile answers for every feature.
// The answers are written into the object as a string,
// "MCGO_HAVE[<name>=<0|1>] ...", which features.cmake reads back (as
// CMake's own CheckTypeSize reads its INFO:size string).
//
// A feature here must be what the shim's #if MCGO_HAVE_<name> branch
// uses, exactly: add the call there and its expression here together.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pyclient.h"
#include "real_client.h"
#include "replica.h"
#include "transfer_engine.h"

namespace {

using Keys = std::vector<std::string>;
using Bufs = std::vector<std::vector<void *>>;
using Lens = std::vector<std::vector<size_t>>;

// Upstream's transfer sessions on PyClient (batch_get_session_*,
// batch_put_session_*, the range calls): all seven, or the feature is off.
template <typename C, typename R>
constexpr bool kSessions = requires(C &c, const Keys &k, const Bufs &b, const Lens &l,
                                    const std::vector<size_t> &z, const R &rc) {
  { c.batch_get_session_start(k) } -> std::convertible_to<std::vector<int>>;
  { c.batch_get_into_multi_buffer_ranges(k, b, l, l) } -> std::convertible_to<std::vector<int>>;
  { c.batch_get_session_end(k) } -> std::convertible_to<int>;
  { c.batch_put_session_start(k, z, rc) } -> std::convertible_to<std::vector<int>>;
  { c.batch_put_from_multi_buffer_ranges(k, b, l, l) } -> std::convertible_to<std::vector<int>>;
  { c.batch_put_session_end(k) } -> std::convertible_to<std::vector<int>>;
  { c.batch_put_session_revoke(k) } -> std::convertible_to<std::vector<int>>;
};

// PyClient::batch_upsert_from_multi_buffers.
template <typename C, typename R>
constexpr bool kMultiBufferUpsert = requires(C &c, const Keys &k, const Bufs &b, const Lens &l,
                                             const R &rc) {
  { c.batch_upsert_from_multi_buffers(k, b, l, rc) } -> std::convertible_to<std::vector<int>>;
};

// ReplicateConfig's soft_pin_action (an enum with PRESERVE, ENABLE and
// DISABLE: mooncake::SoftPinAction, named by the shim through decltype)
// and its optional soft_pin_ttl_ms; before them, the bool with_soft_pin.
template <typename R>
constexpr bool kSoftPinActions = requires(R &r) {
  r.soft_pin_action = decltype(r.soft_pin_action)::PRESERVE;
  r.soft_pin_action = decltype(r.soft_pin_action)::ENABLE;
  r.soft_pin_action = decltype(r.soft_pin_action)::DISABLE;
  r.soft_pin_ttl_ms = uint64_t{1};
};

// ReplicateConfig::dfs_replica_num.
template <typename R>
constexpr bool kDFSReplicas = requires(R &r) { r.dfs_replica_num = size_t{1}; };

// RealClient::drainLocalDiskSegment (mcgo_store_unmount_local_disk_segment).
template <typename C>
constexpr bool kDrainLocalDisk = requires(C &c) {
  { c.drainLocalDiskSegment(uint64_t{0}) } -> std::convertible_to<int>;
};

// TransferEngine::getLocalTopologyString (before it, the shim prints
// getLocalTopology() itself, which is what that call does on the classic
// engine).
template <typename E>
constexpr bool kTopologyString = requires(E &e) {
  { e.getLocalTopologyString() } -> std::convertible_to<std::string>;
};

struct Feature {
  std::string_view name;
  bool have;
};

constexpr Feature kFeatures[] = {
    {"SESSIONS", kSessions<mooncake::PyClient, mooncake::ReplicateConfig>},
    {"MULTI_BUFFER_UPSERT", kMultiBufferUpsert<mooncake::PyClient, mooncake::ReplicateConfig>},
    {"SOFT_PIN_ACTIONS", kSoftPinActions<mooncake::ReplicateConfig>},
    {"DFS_REPLICAS", kDFSReplicas<mooncake::ReplicateConfig>},
    {"DRAIN_LOCAL_DISK", kDrainLocalDisk<mooncake::RealClient>},
    {"TE_TOPOLOGY_STRING", kTopologyString<mooncake::TransferEngine>},
};

constexpr std::string_view kOpen = "MCGO_HAVE[", kClose = "] ";

constexpr size_t Length() {
  size_t n = 0;
  for (const Feature &f : kFeatures) n += kOpen.size() + f.name.size() + 2 + kClose.size();
  return n + 1;
}

constexpr std::array<char, Length()> Encode() {
  std::array<char, Length()> out{};
  size_t i = 0;
  auto put = [&](std::string_view s) {
    for (char ch : s) out[i++] = ch;
  };
  for (const Feature &f : kFeatures) {
    put(kOpen);
    put(f.name);
    put(f.have ? "=1" : "=0");
    put(kClose);
  }
  out[i] = '\0';
  return out;
}

}  // namespace

// External linkage keeps the string in the object.
extern const std::array<char, Length()> mcgo_feature_probe;
const std::array<char, Length()> mcgo_feature_probe = Encode();
