// The conversions and checks every call of the native store uses
// (declared in call.h).

#include "native/store/call.h"

namespace mcgo::native::store {

int32_t ToReplicate(const mcgo_replicate_config &in, mooncake::ReplicateConfig *out) {
  std::vector<std::string> segs, nof, groups;
  if (!mcgo::args::ParseSegments(in, &segs) || !mcgo::args::ParseNoFSegments(in, &nof) ||
      !mcgo::args::SoftPinActionOk(in) || !mcgo::args::ParseGroupIds(in, &groups) ||
      !mcgo::args::DataTypeOk(in)) {
    return MCGO_INVALID_PARAMS;
  }
  if (in.has_group_ids) out->group_ids = std::move(groups);
  out->data_type = static_cast<mooncake::ObjectDataType>(in.data_type);
  out->replica_num = in.replica_num == 0 ? 1 : static_cast<size_t>(in.replica_num);
  out->nof_replica_num = static_cast<size_t>(in.nof_replica_num);
#if MCGO_HAVE_DFS_REPLICAS
  out->dfs_replica_num = static_cast<size_t>(in.dfs_replica_num);
#else
  // Upstream before dfs_replica_num (v0.3.12.post1) has no DFS replicas.
  if (in.dfs_replica_num != 0) return MCGO_NOT_SUPPORTED;
#endif
  // The old with_soft_pin means ENABLE unless an action is given.
  const bool enable = in.soft_pin_action == MCGO_SOFT_PIN_ENABLE ||
                      (in.soft_pin_action == MCGO_SOFT_PIN_PRESERVE && in.with_soft_pin);
#if MCGO_HAVE_SOFT_PIN_ACTIONS
  using Action = decltype(out->soft_pin_action);
  out->soft_pin_action = enable ? Action::ENABLE
                         : in.soft_pin_action == MCGO_SOFT_PIN_DISABLE ? Action::DISABLE
                                                                       : Action::PRESERVE;
  if (in.has_soft_pin_ttl) out->soft_pin_ttl_ms = in.soft_pin_ttl_ms;
#else
  // Upstream before soft_pin_action (v0.3.12.post1) has the bool
  // with_soft_pin: true is ENABLE (a put and an upsert pin the object);
  // false is PRESERVE for a put and for an upsert that changes the size,
  // but unpins on an upsert of the same size. DISABLE (unpin on every
  // upsert) and a TTL of the request's own cannot be expressed.
  if (in.soft_pin_action == MCGO_SOFT_PIN_DISABLE || in.has_soft_pin_ttl) return MCGO_NOT_SUPPORTED;
  out->with_soft_pin = enable;
#endif
  out->preferred_nof_segments = std::move(nof);
  out->with_hard_pin = in.with_hard_pin != 0;
  out->preferred_segments = std::move(segs);
  out->prefer_alloc_in_same_node = in.prefer_alloc_in_same_node != 0;
  return MCGO_OK;
}

std::vector<std::string> Keys(const char *keys, const uint64_t *off, size_t n) {
  std::vector<std::string> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(KeyAt(keys, off, i));
  return out;
}

std::vector<void *> Ptrs(const uintptr_t *addrs, size_t n) {
  std::vector<void *> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = reinterpret_cast<void *>(addrs[i]);
  return out;
}

std::vector<size_t> Sizes(const uint64_t *sizes, size_t n) {
  return std::vector<size_t>(sizes, sizes + n);
}

void Nested(const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *bo,
            size_t n, std::vector<std::vector<void *>> *all_ptrs,
            std::vector<std::vector<size_t>> *all_sizes) {
  all_ptrs->resize(n);
  all_sizes->resize(n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t a = bo[i], b = bo[i + 1];
    (*all_ptrs)[i].resize(b - a);
    (*all_sizes)[i].assign(sizes + a, sizes + b);
    for (uint64_t j = a; j < b; ++j) {
      (*all_ptrs)[i][j - a] = reinterpret_cast<void *>(addrs[j]);
    }
  }
}

int32_t BatchPrologue(mooncake::PyClient *c, const char *keys,
                      const uint64_t *off, size_t n, int64_t *results) {
  if (results == nullptr) return MCGO_INVALID_PARAMS;
  if (c == nullptr || !KeysOk(keys, off, n)) {
    return Refuse(results, n, MCGO_INVALID_PARAMS);
  }
  return MCGO_OK;
}

}  // namespace mcgo::native::store
