// Native backend: the identity functions of mcgo/common.h.
#include "mcgo/common.h"

#ifndef MCGO_UPSTREAM_COMMIT
#error "MCGO_UPSTREAM_COMMIT must be defined by the build (CMakeLists.txt)"
#endif

extern "C" {

uint32_t mcgo_abi_version(void) { return MCGO_ABI_VERSION; }
const char *mcgo_backend_name(void) { return "native"; }
const char *mcgo_upstream_commit(void) { return MCGO_UPSTREAM_COMMIT; }

}  // extern "C"
