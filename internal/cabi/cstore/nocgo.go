//go:build !cgo

package cstore

import (
	"unsafe"

	"github.com/mooncake-go/mooncake-go/internal/cabi"
)

// This file lets the module build with CGO_ENABLED=0 (so that pure-Go
// packages such as hostcache, and programs that only use them, still build).
// Every call fails with cabi.CodeNoCgo.

// Client is an opaque handle; without cgo it can never be valid.
type Client struct{ _ uintptr }

func Create() (Client, int32)                  { return Client{}, cabi.CodeNoCgo }
func (c Client) Destroy()                      {}
func (c Client) Setup(*Config) (int32, string) { return cabi.CodeNoCgo, "built without cgo" }
func (c Client) SetupOnEngine(*Config, unsafe.Pointer) (int32, string) {
	return cabi.CodeNoCgo, "built without cgo"
}
func (c Client) HealthCheck() int32 { return cabi.CodeNoCgo }
func (c Client) SetupDummy(uint64, uint64, string) (int32, string) {
	return cabi.CodeNoCgo, "built without cgo"
}
func (c Client) AllocFromMemPool(uint64) (unsafe.Pointer, int32)      { return nil, cabi.CodeNoCgo }
func (c Client) Hostname() (string, int32)                            { return "", cabi.CodeNoCgo }
func (c Client) RegisterBuffer(uintptr, uint64) int32                 { return cabi.CodeNoCgo }
func (c Client) UnregisterBuffer(uintptr) int32                       { return cabi.CodeNoCgo }
func (c Client) Put(string, []byte, *Replicate) int32                 { return cabi.CodeNoCgo }
func (c Client) Upsert(string, []byte, *Replicate) int32              { return cabi.CodeNoCgo }
func (c Client) GetBegin(string) (int64, uintptr)                     { return cabi.CodeNoCgo, 0 }
func GetFinish(uintptr, []byte) int32                                 { return cabi.CodeNoCgo }
func (c Client) PutFrom(string, uintptr, uint64, *Replicate) int32    { return cabi.CodeNoCgo }
func (c Client) UpsertFrom(string, uintptr, uint64, *Replicate) int32 { return cabi.CodeNoCgo }
func (c Client) GetInto(string, uintptr, uint64) int64                { return cabi.CodeNoCgo }

func (c Client) BatchPutFrom(_ []byte, _ []uint64, _ []uintptr, _ []uint64, _ *Replicate, r []int64) int32 {
	return fail(r)
}
func (c Client) BatchUpsertFrom(_ []byte, _ []uint64, _ []uintptr, _ []uint64, _ *Replicate, r []int64) int32 {
	return fail(r)
}
func (c Client) BatchGetInto(_ []byte, _ []uint64, _ []uintptr, _ []uint64, r []int64) int32 {
	return fail(r)
}
func (c Client) BatchPutFromMultiBuffers(_ []byte, _ []uint64, _ []uintptr, _ []uint64, _ []uint64, _ *Replicate, r []int64) int32 {
	return fail(r)
}
func (c Client) BatchUpsertFromMultiBuffers(_ []byte, _ []uint64, _ []uintptr, _ []uint64, _ []uint64, _ *Replicate, r []int64) int32 {
	return fail(r)
}
func (c Client) BatchGetIntoMultiBuffers(_ []byte, _ []uint64, _ []uintptr, _ []uint64, _ []uint64, _ bool, r []int64) int32 {
	return fail(r)
}
func (c Client) IsExist(string) int32                               { return cabi.CodeNoCgo }
func (c Client) BatchIsExist(_ []byte, _ []uint64, r []int64) int32 { return fail(r) }
func (c Client) GetSize(string) int64                               { return cabi.CodeNoCgo }
func (c Client) Remove(string, bool) int32                          { return cabi.CodeNoCgo }
func (c Client) RemoveByRegex(string, bool) int64                   { return cabi.CodeNoCgo }
func (c Client) BatchRemove([]byte, []uint64, bool, []int64) int32  { return cabi.CodeNoCgo }
func (c Client) BatchReplicaClear([]byte, []uint64, string, []int64) int32 {
	return cabi.CodeNoCgo
}
func (c Client) BatchGetReplicaDesc([]byte, []uint64, []int64) ([]ReplicaDesc, int32) {
	return nil, cabi.CodeNoCgo
}
func (c Client) PutParts(string, []uintptr, []uint64, *Replicate, bool) int32 {
	return cabi.CodeNoCgo
}
func (c Client) PutBatch([]byte, []uint64, []uintptr, []uint64, *Replicate, bool) int32 {
	return cabi.CodeNoCgo
}
func (c Client) RemoveAll(bool) int64 { return cabi.CodeNoCgo }

func (c Client) AllocateAndMountSegment(uint64, string, string, []SegmentID) (int, uint64, int32) {
	return 0, 0, cabi.CodeNoCgo
}
func (c Client) MountSegment(string, uint64, uint64, string, string, []SegmentID) (int, int32) {
	return 0, cabi.CodeNoCgo
}
func (c Client) UnmountSegments(_ []SegmentID, _ uint64, _ bool, r []int64) int32 { return fail(r) }

func fail(r []int64) int32 {
	for i := range r {
		r[i] = cabi.CodeNoCgo
	}
	return cabi.CodeNoCgo
}

// Capabilities: none without cgo.
func Capabilities() uint32 { return 0 }

func (c Client) BatchGetSessionStart(_ []byte, _ []uint64, r []int64) int32 { return fail(r) }
func (c Client) BatchGetIntoMultiBufferRanges(_ []byte, _ []uint64, _ *Ranges, r []int64) int32 {
	return fail(r)
}
func (c Client) BatchGetSessionEnd([]byte, []uint64) int32 { return cabi.CodeNoCgo }
func (c Client) BatchPutSessionStart(_ []byte, _ []uint64, _ []uint64, _ *Replicate, r []int64) int32 {
	return fail(r)
}
func (c Client) BatchPutFromMultiBufferRanges(_ []byte, _ []uint64, _ *Ranges, r []int64) int32 {
	return fail(r)
}
func (c Client) BatchPutSessionSettle(_ []byte, _ []uint64, _ bool, r []int64) int32 { return fail(r) }

func (c Client) CreateCopyTask(string, []string) (SegmentID, int32) {
	return SegmentID{}, cabi.CodeNoCgo
}
func (c Client) CreateMoveTask(string, string, string) (SegmentID, int32) {
	return SegmentID{}, cabi.CodeNoCgo
}
func (c Client) QueryTask(SegmentID) (TaskInfo, int32)                          { return TaskInfo{}, cabi.CodeNoCgo }
func (c Client) GetIntoRanges(_ []byte, _ []uint64, _ *Ranges, r []int64) int32 { return fail(r) }
func (c Client) UnmountLocalDiskSegment(uint64) int32                           { return cabi.CodeNoCgo }
func (c Client) OffloadRPCReadCount() int64                                     { return cabi.CodeNoCgo }
