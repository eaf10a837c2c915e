//go:build cgo && !mooncake_native

package cstore

/*
#cgo CFLAGS: -I${SRCDIR}/../../../cgo -I${SRCDIR}/../../../cgo/include
#include "embedded/store/kv_events_c.h"
#include "mcgo/codes.h"

// None of these keeps a pointer or calls back into Go (drain blocks, on
// its own thread, for at most its timeout).
#cgo noescape mcgo_embedded_kv_events_start
#cgo nocallback mcgo_embedded_kv_events_start
#cgo noescape mcgo_embedded_kv_events_stop
#cgo nocallback mcgo_embedded_kv_events_stop
#cgo noescape mcgo_embedded_kv_events_drain
#cgo nocallback mcgo_embedded_kv_events_drain
*/
import "C"

import (
	"unsafe"

	"github.com/mooncake-go/mooncake-go/internal/cabi"
)

// The embedded engine's KV events (cgo/embedded/store/kv_events_c.h): not
// part of the C ABI, so called directly rather than through the dispatch
// table, and refused with MCGO_NOT_SUPPORTED once a native backend is
// selected (whose master publishes its own).

func embeddedSelected() bool {
	_ = cabi.Select()
	return cabi.BackendName() == "embedded"
}

// KVEventsStart starts recording the KV events of the embedded cluster at
// address (its clients' master address) in a queue of capacity events (0:
// upstream's 65536).
func KVEventsStart(address string, capacity uint64) int32 {
	if !embeddedSelected() {
		return C.MCGO_NOT_SUPPORTED
	}
	return int32(C.mcgo_embedded_kv_events_start(strPtr(address), C.size_t(len(address)), C.uint64_t(capacity)))
}

// KVEventsStop stops recording for address and drops what is queued.
func KVEventsStop(address string) int32 {
	if !embeddedSelected() {
		return C.MCGO_NOT_SUPPORTED
	}
	return int32(C.mcgo_embedded_kv_events_stop(strPtr(address), C.size_t(len(address))))
}

// KVEventsDrain takes the next batch of address's events into buf, waiting
// up to timeoutMs for one: n events (packed as kv_events_c.h says) in
// buf[:used], the batch's sequence number, and the events dropped so far.
// With MCGO_BUFFER_OVERFLOW, used is the size the first event needs.
func KVEventsDrain(address string, timeoutMs uint32, buf []byte) (n uint32, seq uint64, used int, dropped uint64, rc int32) {
	if !embeddedSelected() {
		return 0, 0, 0, 0, C.MCGO_NOT_SUPPORTED
	}
	var (
		cn       C.uint32_t
		cseq     C.uint64_t
		cused    C.size_t
		cdropped C.uint64_t
		p        *C.uint8_t
	)
	if len(buf) > 0 {
		p = (*C.uint8_t)(unsafe.Pointer(&buf[0]))
	}
	rc = int32(C.mcgo_embedded_kv_events_drain(strPtr(address), C.size_t(len(address)), C.uint32_t(timeoutMs),
		p, C.size_t(len(buf)), &cn, &cseq, &cused, &cdropped))
	return uint32(cn), uint64(cseq), int(cused), uint64(cdropped), rc
}
