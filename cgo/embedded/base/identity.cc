//go:build !mooncake_native

// Embedded backend: the identity functions of mcgo/common.h.
#include "mcgo/common.h"

extern "C" {

uint32_t mcgo_abi_version(void) { return MCGO_ABI_VERSION; }
const char *mcgo_backend_name(void) { return "embedded"; }
const char *mcgo_upstream_commit(void) { return ""; }

}  // extern "C"
