// Native backend: the identity functions of mcgo/common.h, and the
// control of upstream's logging.
#include <glog/logging.h>

#include <string>

#include "mcgo/codes.h"
#include "mcgo/common.h"
#include "common/guard.h"
#include "common/log_dir.h"

#ifndef MCGO_UPSTREAM_COMMIT
#error "MCGO_UPSTREAM_COMMIT must be defined by the build (CMakeLists.txt)"
#endif

extern "C" {

uint32_t mcgo_abi_version(void) { return MCGO_ABI_VERSION; }
const char *mcgo_backend_name(void) { return "native"; }
const char *mcgo_upstream_commit(void) { return MCGO_UPSTREAM_COMMIT; }

// Upstream's own switches, which reach this file through Mooncake::store's
// compile definitions (FindMooncake reads them from its build tree).
uint32_t mcgo_connect_forms(void) {
  uint32_t forms = 0;
#ifdef STORE_USE_ETCD
  forms |= MCGO_CONNECT_MASTER_ETCD;
#endif
#ifdef STORE_USE_REDIS
  forms |= MCGO_CONNECT_MASTER_REDIS;
#endif
#ifdef STORE_USE_K8S_LEASE
  forms |= MCGO_CONNECT_MASTER_K8S;
#endif
#ifdef USE_HTTP
  forms |= MCGO_CONNECT_METADATA_HTTP;
#endif
#ifdef USE_ETCD
  forms |= MCGO_CONNECT_METADATA_ETCD;
#endif
#ifdef USE_REDIS
  forms |= MCGO_CONNECT_METADATA_REDIS;
#endif
  return forms;
}

int32_t mcgo_set_log(int32_t min_level, const char *dir, size_t dir_len) {
  return mcgo::Guard32([&]() -> int32_t {
    if (!mcgo::LogArgsOk(min_level, dir, dir_len)) return MCGO_INVALID_PARAMS;
    if (dir_len > 0) {
      bool first = false;
      if (int32_t rc = mcgo::ChooseLogDir(std::string(dir, dir_len), &first)) return rc;
      if (first) {
        if (google::IsGoogleLoggingInitialized()) return MCGO_INVALID_PARAMS;
        FLAGS_log_dir = std::string(dir, dir_len);
        FLAGS_logtostderr = false;
        FLAGS_stop_logging_if_full_disk = true;
        google::InitGoogleLogging("mooncake-go");
      }
    }
    if (min_level >= 0) FLAGS_minloglevel = min_level;
    return MCGO_OK;
  });
}

}  // extern "C"
