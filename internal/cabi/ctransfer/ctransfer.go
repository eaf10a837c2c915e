//go:build cgo

package ctransfer

/*
#cgo CFLAGS: -I${SRCDIR}/../../../cgo/include -I${SRCDIR}/..
#include <stdlib.h>
#include "dispatch_gen.h" // the ABI, called through the dispatch table

// None of these functions keeps a pointer or calls back into Go.
#cgo noescape mcgo_te_create
#cgo nocallback mcgo_te_create
#cgo noescape mcgo_te_segment_name
#cgo nocallback mcgo_te_segment_name
#cgo noescape mcgo_te_local_address
#cgo nocallback mcgo_te_local_address
#cgo noescape mcgo_te_topology
#cgo nocallback mcgo_te_topology
#cgo noescape mcgo_te_rpc_port
#cgo nocallback mcgo_te_rpc_port
#cgo noescape mcgo_te_register_batch
#cgo nocallback mcgo_te_register_batch
#cgo noescape mcgo_te_unregister_batch
#cgo nocallback mcgo_te_unregister_batch
#cgo noescape mcgo_te_open_segment
#cgo nocallback mcgo_te_open_segment
#cgo noescape mcgo_te_segment_buffers
#cgo nocallback mcgo_te_segment_buffers
#cgo noescape mcgo_te_batch_alloc
#cgo nocallback mcgo_te_batch_alloc
#cgo noescape mcgo_te_batch_submit
#cgo nocallback mcgo_te_batch_submit
#cgo noescape mcgo_te_batch_status
#cgo nocallback mcgo_te_batch_status
#cgo noescape mcgo_te_notify_send
#cgo nocallback mcgo_te_notify_send
#cgo noescape mcgo_te_notify_recv
#cgo nocallback mcgo_te_notify_recv
*/
import "C"

import (
	"unsafe"

	"github.com/mooncake-go/mooncake-go/internal/cabi"
)

// Engine is an opaque handle to one C-side transfer engine. The zero value
// is not usable; get one from Create.
type Engine struct {
	p *C.mcgo_te
}

// Create makes and initialises an engine. On failure it returns the code and
// the backend's message.
func Create(cfg *Config) (Engine, int32, string) {
	strs := [...]string{cfg.MetadataServer, cfg.LocalServerName, cfg.Host}
	var cs [len(strs)]*C.char
	for i, s := range strs {
		cs[i] = C.CString(s)
	}
	defer func() {
		for _, p := range cs {
			C.free(unsafe.Pointer(p))
		}
	}()
	cc := C.mcgo_te_config{
		metadata_server:   cs[0],
		local_server_name: cs[1],
		host:              cs[2],
		rpc_port:          C.uint32_t(cfg.RPCPort),
	}
	var p *C.mcgo_te
	var msg [512]byte
	rc := int32(C.mcgo_te_create(&cc, &p, (*C.char)(unsafe.Pointer(&msg[0])), C.size_t(len(msg))))
	if rc != 0 {
		return Engine{}, rc, cabi.TrimNUL(msg[:])
	}
	return Engine{p: p}, 0, ""
}

// InstallTransport installs "tcp" or "rdma".
func (e Engine) InstallTransport(protocol, devices, matrix string) int32 {
	cp, cd, cm := C.CString(protocol), C.CString(devices), C.CString(matrix)
	defer C.free(unsafe.Pointer(cp))
	defer C.free(unsafe.Pointer(cd))
	defer C.free(unsafe.Pointer(cm))
	return int32(C.mcgo_te_install_transport(e.p, cp, cd, cm))
}

// Destroy ends the engine; it refuses (a code) while a store runs on it.
// The caller guarantees no concurrent call. Without cgo there is no engine
// to destroy, which succeeds.
//
//nocgo:return 0
func (e Engine) Destroy() int32 { return int32(C.mcgo_te_destroy(e.p)) }

// Ptr is the engine's C handle as an opaque pointer-sized value, for the
// store's setup on an engine.
func (e Engine) Ptr() unsafe.Pointer { return unsafe.Pointer(e.p) }

type stringCall func(buf *C.char, capacity C.size_t, n *C.size_t) C.int32_t

func readString(call stringCall) (string, int32) {
	buf := make([]byte, 256)
	for {
		var n C.size_t
		if rc := int32(call((*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &n)); rc != 0 {
			return "", rc
		}
		if int(n) < len(buf) {
			return string(buf[:n]), 0
		}
		buf = make([]byte, int(n)+1)
	}
}

// SegmentName is the name peers open.
func (e Engine) SegmentName() (string, int32) {
	return readString(func(b *C.char, c C.size_t, n *C.size_t) C.int32_t { return C.mcgo_te_segment_name(e.p, b, c, n) })
}

// LocalAddress is the RPC endpoint "ip:port".
func (e Engine) LocalAddress() (string, int32) {
	return readString(func(b *C.char, c C.size_t, n *C.size_t) C.int32_t { return C.mcgo_te_local_address(e.p, b, c, n) })
}

// Topology is the local NIC topology as JSON.
func (e Engine) Topology() (string, int32) {
	return readString(func(b *C.char, c C.size_t, n *C.size_t) C.int32_t { return C.mcgo_te_topology(e.p, b, c, n) })
}

// RPCPort is the engine's RPC port.
func (e Engine) RPCPort() (uint32, int32) {
	var p C.uint32_t
	rc := int32(C.mcgo_te_rpc_port(e.p, &p))
	return uint32(p), rc
}

// Register registers [addr, addr+n).
func (e Engine) Register(addr uintptr, n uint64, location string, remote bool) int32 {
	cl := C.CString(location)
	defer C.free(unsafe.Pointer(cl))
	return int32(C.mcgo_te_register(e.p, C.uintptr_t(addr), C.uint64_t(n), cl, cbool(remote)))
}

// Unregister unregisters the region that starts at addr.
func (e Engine) Unregister(addr uintptr) int32 {
	return int32(C.mcgo_te_unregister(e.p, C.uintptr_t(addr)))
}

// RegisterBatch registers every (addrs[i], lens[i]), all or nothing.
func (e Engine) RegisterBatch(addrs []uintptr, lens []uint64, location string) int32 {
	cl := C.CString(location)
	defer C.free(unsafe.Pointer(cl))
	return int32(C.mcgo_te_register_batch(e.p, addrsPtr(addrs), u64Ptr(lens), C.size_t(len(addrs)), cl))
}

// UnregisterBatch unregisters every region starting at addrs, all or nothing.
func (e Engine) UnregisterBatch(addrs []uintptr) int32 {
	return int32(C.mcgo_te_unregister_batch(e.p, addrsPtr(addrs), C.size_t(len(addrs))))
}

// OpenSegment opens the segment named name.
func (e Engine) OpenSegment(name string) (uint64, int32) {
	var seg C.uint64_t
	rc := int32(C.mcgo_te_open_segment(e.p, strPtr(name), C.size_t(len(name)), &seg))
	return uint64(seg), rc
}

// CloseSegment invalidates seg.
func (e Engine) CloseSegment(seg uint64) int32 {
	return int32(C.mcgo_te_close_segment(e.p, C.uint64_t(seg)))
}

// SegmentBuffers fills addrs and lens (equal lengths) and returns the total
// number of buffers.
func (e Engine) SegmentBuffers(seg uint64, refresh bool, addrs, lens []uint64) (int, int32) {
	var total C.size_t
	rc := int32(C.mcgo_te_segment_buffers(e.p, C.uint64_t(seg), cbool(refresh), u64Ptr(addrs), u64Ptr(lens),
		C.size_t(min(len(addrs), len(lens))), &total))
	return int(total), rc
}

// BatchAlloc allocates a batch for up to capacity requests.
func (e Engine) BatchAlloc(capacity uint32) (uint64, int32) {
	var b C.uint64_t
	rc := int32(C.mcgo_te_batch_alloc(e.p, C.uint32_t(capacity), &b))
	return uint64(b), rc
}

// BatchSubmit adds n requests laid out as mcgo_te_request at reqs (Go
// memory without pointers, read during the call only).
func (e Engine) BatchSubmit(batch uint64, reqs unsafe.Pointer, n int, notifyName, notifyMsg string) int32 {
	return int32(C.mcgo_te_batch_submit(e.p, C.uint64_t(batch), (*C.mcgo_te_request)(reqs), C.size_t(n),
		strPtr(notifyName), C.size_t(len(notifyName)), strPtr(notifyMsg), C.size_t(len(notifyMsg))))
}

// BatchStatus fills n task states laid out as mcgo_te_task_status at tasks
// and the summary laid out as mcgo_te_batch_summary at sum.
func (e Engine) BatchStatus(batch uint64, tasks unsafe.Pointer, n int, sum unsafe.Pointer) int32 {
	return int32(C.mcgo_te_batch_status(e.p, C.uint64_t(batch), (*C.mcgo_te_task_status)(tasks), C.size_t(n),
		(*C.mcgo_te_batch_summary)(sum)))
}

// BatchFree frees the batch.
func (e Engine) BatchFree(batch uint64) int32 {
	return int32(C.mcgo_te_batch_free(e.p, C.uint64_t(batch)))
}

// NotifySend sends a notification to seg, or with seg 0 to the engine named
// peer.
func (e Engine) NotifySend(seg uint64, peer, name, msg string) int32 {
	return int32(C.mcgo_te_notify_send(e.p, C.uint64_t(seg), strPtr(peer), C.size_t(len(peer)),
		strPtr(name), C.size_t(len(name)), strPtr(msg), C.size_t(len(msg))))
}

// NotifyRecv moves received notifications into buf (names and messages back
// to back; their lengths into nameLens and msgLens, equal lengths). It
// returns how many moved and, when the next one did not fit, its size.
func (e Engine) NotifyRecv(buf []byte, nameLens, msgLens []uint64) (n int, need uint64, rc int32) {
	var cn C.size_t
	var cneed C.uint64_t
	rc = int32(C.mcgo_te_notify_recv(e.p, (*C.char)(bytesPtr(buf)), C.uint64_t(len(buf)), u64Ptr(nameLens), u64Ptr(msgLens),
		C.size_t(min(len(nameLens), len(msgLens))), &cn, &cneed))
	return int(cn), uint64(cneed), rc
}

// Layout reports the sizes and field offsets of the C structs the Go types
// of package transfer mirror, so a test can check they agree.
func Layout() map[string]uintptr {
	var r C.mcgo_te_request
	var t C.mcgo_te_task_status
	var s C.mcgo_te_batch_summary
	return map[string]uintptr{
		"request":           unsafe.Sizeof(r),
		"request.opcode":    unsafe.Offsetof(r.opcode),
		"request.segment":   unsafe.Offsetof(r.segment),
		"request.local":     unsafe.Offsetof(r.local_addr),
		"request.remote":    unsafe.Offsetof(r.remote_addr),
		"request.length":    unsafe.Offsetof(r.length),
		"task":              unsafe.Sizeof(t),
		"task.state":        unsafe.Offsetof(t.state),
		"task.bytes":        unsafe.Offsetof(t.bytes),
		"summary":           unsafe.Sizeof(s),
		"summary.state":     unsafe.Offsetof(s.state),
		"summary.in_flight": unsafe.Offsetof(s.in_flight),
		"summary.tasks":     unsafe.Offsetof(s.tasks),
		"summary.bytes":     unsafe.Offsetof(s.bytes),
		"summary.notify":    unsafe.Offsetof(s.notify),
		"summary.notify_rc": unsafe.Offsetof(s.notify_rc),
		"max_batch":         uintptr(C.MCGO_TE_MAX_BATCH),
		"notify_max_bytes":  uintptr(C.MCGO_TE_NOTIFY_MAX_BYTES),
	}
}

func cbool(b bool) C.int32_t {
	if b {
		return 1
	}
	return 0
}

func strPtr(s string) *C.char          { return (*C.char)(cabi.StringPtr(s)) }
func bytesPtr(b []byte) unsafe.Pointer { return cabi.SlicePtr(b) }
func u64Ptr(s []uint64) *C.uint64_t    { return (*C.uint64_t)(cabi.SlicePtr(s)) }
func addrsPtr(a []uintptr) *C.uintptr_t {
	return (*C.uintptr_t)(cabi.SlicePtr(a))
}
