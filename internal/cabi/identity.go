//go:build cgo

package cabi

/*
#cgo CFLAGS: -I${SRCDIR}/../../cgo/include
#include "dispatch_gen.h" // the ABI, called through the dispatch table

#if MCGO_ABI_VERSION != 7
#error "cgo/include/mcgo/common.h changed its ABI version: update ABIVersion in internal/cabi/abi.go, this check and the one in cgo/embedded/base/link.go"
#endif
*/
import "C"

import "unsafe"

// BackendABIVersion reports the ABI version the linked backend implements
// (without cgo, this package's: no backend can disagree).
//
//nocgo:return ABIVersion
func BackendABIVersion() uint32 {
	_ = Select() // a library that failed to load leaves the linked backend
	return uint32(C.mcgo_abi_version())
}

// BackendName reports "embedded" or "native".
//
//nocgo:return "none (built without cgo)"
func BackendName() string {
	_ = Select()
	return C.GoString(C.mcgo_backend_name())
}

// SetLog sets upstream's log level (-1: keep) and, once per process, its
// log directory ("" : keep); see mcgo_set_log.
func SetLog(minLevel int32, dir string) int32 {
	_ = Select()
	var p *C.char
	if dir != "" {
		p = (*C.char)(unsafe.Pointer(unsafe.StringData(dir)))
	}
	return int32(C.mcgo_set_log(C.int32_t(minLevel), p, C.size_t(len(dir))))
}

// UpstreamCommit reports the upstream commit the native backend was built
// against ("" for the embedded backend).
func UpstreamCommit() string {
	_ = Select()
	return C.GoString(C.mcgo_upstream_commit())
}
