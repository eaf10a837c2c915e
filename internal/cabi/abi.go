package cabi

import (
	"fmt"

	"github.com/mooncake-go/mooncake-go/internal/codes"
)

// ABIVersion is the version of cgo/include/mcgo this Go code was written
// for. It must equal MCGO_ABI_VERSION and what the linked backend reports;
// CheckABI compares them at run time, which also catches a stale object in
// the Go build cache (cgo does not track headers outside a package's own
// directory).
const ABIVersion = 8

// The address forms of mcgo_connect_forms (ConnectForms).
const (
	ConnectMasterEtcd    = 1 << 0
	ConnectMasterRedis   = 1 << 1
	ConnectMasterK8s     = 1 << 2
	ConnectMetadataHTTP  = 1 << 3
	ConnectMetadataEtcd  = 1 << 4
	ConnectMetadataRedis = 1 << 5
)

// CodeNoCgo is returned by every call in a build without cgo: Mooncake's
// NOT_SUPPORTED.
const CodeNoCgo = codes.StoreNotSupported

// CheckABI settles the process's backend for good (see LoadNative) and
// returns an error when it cannot be had (a native library named in the
// environment that failed to load) or implements another ABI version than
// this package. Every Open calls it before it makes a handle.
func CheckABI() error {
	if err := freeze(); err != nil {
		return err
	}
	if got := BackendABIVersion(); got != ABIVersion {
		return fmt.Errorf("backend %q implements ABI %d, this package needs %d (rebuild with go clean -cache, or rebuild the native library)",
			BackendName(), got, ABIVersion)
	}
	return nil
}
