//go:build cgo && mooncake_native

package cstore

/*
#cgo CFLAGS: -I${SRCDIR}/../../../cgo/include
#include "mcgo/codes.h"
*/
import "C"

// The native build links no embedded engine: its master publishes KV
// events itself (kvevents_embedded.go has the embedded build's).

// KVEventsStart is MCGO_NOT_SUPPORTED in the native build.
func KVEventsStart(address string, capacity uint64) int32 { return C.MCGO_NOT_SUPPORTED }

// KVEventsStop is MCGO_NOT_SUPPORTED in the native build.
func KVEventsStop(address string) int32 { return C.MCGO_NOT_SUPPORTED }

// KVEventsDrain is MCGO_NOT_SUPPORTED in the native build.
func KVEventsDrain(address string, timeoutMs uint32, buf []byte) (n uint32, seq uint64, used int, dropped uint64, rc int32) {
	return 0, 0, 0, 0, C.MCGO_NOT_SUPPORTED
}
