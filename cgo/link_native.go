//go:build cgo && mooncake_native

package mcgo

// The native build links libmcgo_native, our self-contained shared library
// over upstream Mooncake (make native). Point the linker at it with
// CGO_LDFLAGS="-L<dir> -Wl,-rpath,<dir>" or PKG_CONFIG_PATH; the Makefile
// does both.

// #cgo LDFLAGS: -lmcgo_native
import "C"

// YieldAfterCalls is true in the native build: its calls block on RPCs and
// on upstream's transfer threads for tens of microseconds or more, and
// package mooncake yields the goroutine after each (see client.release).
const YieldAfterCalls = true
