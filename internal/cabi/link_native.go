//go:build cgo && mooncake_native

package cabi

// The native build links libmcgo_native, our self-contained shared library
// over upstream Mooncake (make native). Point the linker at it with
// CGO_LDFLAGS="-L<dir> -Wl,-rpath,<dir>" or PKG_CONFIG_PATH; the Makefile
// does both.

// #cgo LDFLAGS: -lmcgo_native
import "C"

// linkedYields is true in the native build: its calls block on upstream's
// RPC and transfer threads, so Gate.Leave yields the goroutine (see there).
const linkedYields = true
