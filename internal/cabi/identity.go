//go:build cgo

package cabi

/*
#cgo CFLAGS: -I${SRCDIR}/../../cgo/include
#include "dispatch_gen.h" // the ABI, called through the dispatch table

#if MCGO_ABI_VERSION != 8
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

// The Go constants are the header's.
var (
	_ [ConnectMasterEtcd - C.MCGO_CONNECT_MASTER_ETCD]struct{}
	_ [C.MCGO_CONNECT_MASTER_ETCD - ConnectMasterEtcd]struct{}
	_ [ConnectMasterRedis - C.MCGO_CONNECT_MASTER_REDIS]struct{}
	_ [C.MCGO_CONNECT_MASTER_REDIS - ConnectMasterRedis]struct{}
	_ [ConnectMasterK8s - C.MCGO_CONNECT_MASTER_K8S]struct{}
	_ [C.MCGO_CONNECT_MASTER_K8S - ConnectMasterK8s]struct{}
	_ [ConnectMetadataHTTP - C.MCGO_CONNECT_METADATA_HTTP]struct{}
	_ [C.MCGO_CONNECT_METADATA_HTTP - ConnectMetadataHTTP]struct{}
	_ [ConnectMetadataEtcd - C.MCGO_CONNECT_METADATA_ETCD]struct{}
	_ [C.MCGO_CONNECT_METADATA_ETCD - ConnectMetadataEtcd]struct{}
	_ [ConnectMetadataRedis - C.MCGO_CONNECT_METADATA_REDIS]struct{}
	_ [C.MCGO_CONNECT_METADATA_REDIS - ConnectMetadataRedis]struct{}
)

// ConnectForms reports the Connect* forms the backend can use (see
// mcgo_connect_forms).
func ConnectForms() uint32 {
	_ = Select()
	return uint32(C.mcgo_connect_forms())
}
