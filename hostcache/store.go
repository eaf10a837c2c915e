package hostcache

import "github.com/mooncake-go/mooncake-go/mooncake/hostmem"

// Store is the subset of the Mooncake client the backend needs. It is
// satisfied by *mooncake.Store and by hostcachetest.FakeStore.
//
// Keys cross packed (hostmem.Keys: one byte buffer plus offsets, the form
// the C ABI takes), so a batch of keys costs no string per key. The backend
// rewrites its key, buffer and result slices for the next batch, so a Store
// must not keep them after a call returns; it copies what it must keep
// (the cgo binding hands them to C for the call only; the fake store
// copies keys into its map).
type Store interface {
	RegisterBuffer(addr uintptr, size uint64) error
	UnregisterBuffer(addr uintptr) error
	// Batch calls: results is an optional destination; the returned slice has
	// keys.Len() entries (results[:n] when cap(results) >= n, else newly
	// allocated). Entry >= 0 is success (put: 0; get: bytes read; exists: 1
	// present, 0 absent), < 0 is a Mooncake ErrorCode (-704 not found, -600
	// invalid params, ...). When some keys failed, the results are returned
	// with an error that describes them (the results say which); when the
	// call failed as a whole (closed store, bad arguments) the slice is nil
	// and every key counts as failed. No keys returns (results[:0], nil).
	BatchIsExist(keys *hostmem.Keys, results []int64) ([]int64, error)
	// The put and get calls take one buffer per key when bufs.Offsets is
	// nil (Mooncake's batch_put_from / batch_get_into), else a list per key
	// in CSR form (batch_put_from_multi_buffers /
	// batch_get_into_multi_buffers: the object is the concatenation).
	BatchPutFrom(keys *hostmem.Keys, bufs hostmem.Buffers, results []int64) ([]int64, error)
	BatchGetInto(keys *hostmem.Keys, bufs hostmem.Buffers, results []int64) ([]int64, error)
	RemoveAll(force bool) (int64, error)
}
