//go:build !mooncake_native

// Embedded backend: the identity functions of mcgo/common.h.
#include <string>

#include "mcgo/codes.h"
#include "mcgo/common.h"
#include "common/guard.h"
#include "common/log_dir.h"

extern "C" {

uint32_t mcgo_abi_version(void) { return MCGO_ABI_VERSION; }
const char *mcgo_backend_name(void) { return "embedded"; }
const char *mcgo_upstream_commit(void) { return ""; }
uint32_t mcgo_connect_forms(void) {
  return MCGO_CONNECT_MASTER_ETCD | MCGO_CONNECT_MASTER_REDIS | MCGO_CONNECT_MASTER_K8S |
         MCGO_CONNECT_METADATA_HTTP | MCGO_CONNECT_METADATA_ETCD | MCGO_CONNECT_METADATA_REDIS;
}

// The embedded engine writes no log: it refuses what the native backend
// refuses, and records the directory choice the same way.
int32_t mcgo_set_log(int32_t min_level, const char *dir, size_t dir_len) {
  return mcgo::Guard32([&]() -> int32_t {
    if (!mcgo::LogArgsOk(min_level, dir, dir_len)) return MCGO_INVALID_PARAMS;
    bool first = false;
    return dir_len > 0 ? mcgo::ChooseLogDir(std::string(dir, dir_len), &first) : MCGO_OK;
  });
}

}  // extern "C"
