// The native store's copy and move tasks (package mooncake's tasks.go).

#include <string>
#include <vector>

#include "native/store/call.h"

using namespace mcgo::native::store;  // NOLINT: the store part's frame (call.h)

namespace {

int32_t TaskId(const tl::expected<mooncake::UUID, mooncake::ErrorCode> &got, mcgo_uuid *task) {
  if (!got) return static_cast<int32_t>(got.error());
  *task = mcgo_uuid{got.value().first, got.value().second};
  return MCGO_OK;
}

}  // namespace

extern "C" {

int32_t mcgo_store_create_copy_task(mcgo_store *s, const char *key, size_t key_len,
                                    const char *targets, uint32_t target_count,
                                    uint64_t targets_len, mcgo_uuid *task) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    std::vector<std::string> names;
    if (call.client() == nullptr || !KeyOk(key, key_len) || task == nullptr ||
        !mcgo::args::ParseNames(target_count, targets, targets_len, &names)) {
      return MCGO_INVALID_PARAMS;
    }
    return TaskId(call.client()->create_copy_task(MakeKey(key, key_len), names), task);
  });
}

int32_t mcgo_store_create_move_task(mcgo_store *s, const char *key, size_t key_len,
                                    const char *source, size_t source_len,
                                    const char *target, size_t target_len, mcgo_uuid *task) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (call.client() == nullptr || !KeyOk(key, key_len) || !KeyOk(source, source_len) ||
        !KeyOk(target, target_len) || task == nullptr) {
      return MCGO_INVALID_PARAMS;
    }
    return TaskId(call.client()->create_move_task(MakeKey(key, key_len), MakeKey(source, source_len),
                                                  MakeKey(target, target_len)),
                  task);
  });
}

int32_t mcgo_store_query_task(mcgo_store *s, mcgo_uuid task, mcgo_task_info *out) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (call.client() == nullptr || out == nullptr) return MCGO_INVALID_PARAMS;
    const auto got = call.client()->query_task(mooncake::UUID{task.first, task.second});
    if (!got) return static_cast<int32_t>(got.error());
    const mooncake::QueryTaskResponse &r = got.value();
    *out = mcgo_task_info{};
    out->id = mcgo_uuid{r.id.first, r.id.second};
    out->type = r.type == mooncake::TaskType::REPLICA_MOVE ? MCGO_TASK_MOVE : MCGO_TASK_COPY;
    switch (r.status) {
      case mooncake::TaskStatus::PENDING: out->status = MCGO_TASK_PENDING; break;
      case mooncake::TaskStatus::PROCESSING: out->status = MCGO_TASK_PROCESSING; break;
      case mooncake::TaskStatus::FAILED: out->status = MCGO_TASK_FAILED; break;
      case mooncake::TaskStatus::SUCCESS: out->status = MCGO_TASK_SUCCESS; break;
    }
    out->created_at_ms = r.created_at_ms_epoch;
    out->updated_at_ms = r.last_updated_at_ms_epoch;
    out->assigned_client = mcgo_uuid{r.assigned_client.first, r.assigned_client.second};
    mcgo::args::WriteMessage(out->message, sizeof out->message, r.message);
    return MCGO_OK;
  });
}

}  // extern "C"
