//go:build cgo

package cabi

/*
#cgo CFLAGS: -I${SRCDIR}/../../cgo/include
#include "mcgo/common.h"

#if MCGO_ABI_VERSION != 3
#error "cgo/include/mcgo/common.h changed its ABI version: update ABIVersion in internal/cabi/abi.go and this check"
#endif
*/
import "C"

// BackendABIVersion reports the ABI version the linked backend implements.
func BackendABIVersion() uint32 { return uint32(C.mcgo_abi_version()) }

// BackendName reports "embedded" or "native".
func BackendName() string { return C.GoString(C.mcgo_backend_name()) }

// UpstreamCommit reports the upstream commit the native backend was built
// against ("" for the embedded backend).
func UpstreamCommit() string { return C.GoString(C.mcgo_upstream_commit()) }
