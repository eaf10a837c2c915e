package hostcache

// Store is the subset of the Mooncake client the backend needs. It is
// satisfied by *mooncake.Store and by hostcachetest.FakeStore.
//
// Key lifetime: the backend builds keys in reusable memory (see Batch), so a
// Store must not retain the key strings (or the address, size, offset and
// result slices) after a call returns; copy what must be kept (the cgo
// binding copies keys into C memory, the fake store clones them).
type Store interface {
	RegisterBuffer(addr uintptr, size uint64) error
	UnregisterBuffer(addr uintptr) error
	// Batch calls: results is an optional destination; the returned slice has
	// len(keys) entries (results[:n] when cap(results) >= n, else newly allocated).
	// Entry >= 0 is success (put: 0; get: bytes read; exists: 1 present, 0 absent),
	// < 0 is a Mooncake ErrorCode (-704 not found, -600 invalid params, ...).
	// A non-nil error means the call as a whole failed (closed store, bad arguments);
	// treat every key as failed then. len(keys) == 0 returns (results[:0], nil).
	BatchIsExist(keys []string, results []int64) ([]int64, error)
	BatchPutFrom(keys []string, addrs []uintptr, sizes []uint64, results []int64) ([]int64, error)
	BatchGetInto(keys []string, addrs []uintptr, sizes []uint64, results []int64) ([]int64, error)
	// Multi-buffer calls take CSR form: key i owns addrs[offsets[i]:offsets[i+1]] and the
	// same range of sizes; len(offsets) == len(keys)+1, offsets[0] == 0,
	// offsets[len(keys)] == len(addrs) == len(sizes). The object is the concatenation.
	BatchPutFromMultiBuffers(keys []string, addrs []uintptr, sizes []uint64, offsets []uint64, results []int64) ([]int64, error)
	BatchGetIntoMultiBuffers(keys []string, addrs []uintptr, sizes []uint64, offsets []uint64, results []int64) ([]int64, error)
	RemoveAll(force bool) (int64, error)
}
