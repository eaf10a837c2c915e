//go:build !cgo

package ctransfer

import (
	"unsafe"

	"github.com/mooncake-go/mooncake-go/internal/codes"
)

// Without cgo every call fails with CodeNoCgo (see cabi).

// Engine is an opaque handle; without cgo it can never be valid.
type Engine struct{ _ uintptr }

// CodeNoCgo is what every call returns here: the engine code space's
// NOT_IMPLEMENTED.
const CodeNoCgo = codes.EngineNotImplemented

func Create(*Config) (Engine, int32, string)                   { return Engine{}, CodeNoCgo, "built without cgo" }
func (e Engine) InstallTransport(string, string, string) int32 { return CodeNoCgo }
func (e Engine) Destroy() int32                                { return 0 }
func (e Engine) Ptr() unsafe.Pointer                           { return nil }
func (e Engine) SegmentName() (string, int32)                  { return "", CodeNoCgo }
func (e Engine) LocalAddress() (string, int32)                 { return "", CodeNoCgo }
func (e Engine) Topology() (string, int32)                     { return "", CodeNoCgo }
func (e Engine) RPCPort() (uint32, int32)                      { return 0, CodeNoCgo }
func (e Engine) Register(uintptr, uint64, string, bool) int32  { return CodeNoCgo }
func (e Engine) Unregister(uintptr) int32                      { return CodeNoCgo }
func (e Engine) RegisterBatch([]uintptr, []uint64, string) int32 {
	return CodeNoCgo
}
func (e Engine) UnregisterBatch([]uintptr) int32    { return CodeNoCgo }
func (e Engine) OpenSegment(string) (uint64, int32) { return 0, CodeNoCgo }
func (e Engine) CloseSegment(uint64) int32          { return CodeNoCgo }
func (e Engine) SegmentBuffers(uint64, bool, []uint64, []uint64) (int, int32) {
	return 0, CodeNoCgo
}
func (e Engine) BatchAlloc(uint32) (uint64, int32)                             { return 0, CodeNoCgo }
func (e Engine) BatchSubmit(uint64, unsafe.Pointer, int, string, string) int32 { return CodeNoCgo }
func (e Engine) BatchStatus(uint64, unsafe.Pointer, int, unsafe.Pointer) int32 { return CodeNoCgo }
func (e Engine) BatchFree(uint64) int32                                        { return CodeNoCgo }
func (e Engine) NotifySend(uint64, string, string, string) int32               { return CodeNoCgo }
func (e Engine) NotifyRecv([]byte, []uint64, []uint64) (int, uint64, int32)    { return 0, 0, CodeNoCgo }

// Layout is empty without cgo.
func Layout() map[string]uintptr { return nil }
