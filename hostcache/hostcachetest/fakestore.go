// Package hostcachetest provides test doubles for package hostcache: an
// in-memory Store with Mooncake's semantics (FakeStore), host memory
// allocators for tests (Allocator, VirtualAllocator), and an end-to-end
// conformance runner (RunEndToEnd) that runs unchanged against the fake, the
// embedded engine and a live Mooncake cluster.
package hostcachetest

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"

	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/internal/codes"
)

// Op names a Store method (for FakeStore statistics and interception).
type Op string

// Store operations.
const (
	OpRegister  Op = "RegisterBuffer"
	OpExist     Op = "BatchIsExist"
	OpPut       Op = "BatchPutFrom"
	OpGet       Op = "BatchGetInto"
	OpPutMulti  Op = "BatchPutFromMultiBuffers"
	OpGetMulti  Op = "BatchGetIntoMultiBuffers"
	OpRemoveAll Op = "RemoveAll"
)

// ErrClosed is returned by every FakeStore call after Close.
var ErrClosed = errors.New("hostcachetest: store closed")

// CodeError is a failed registration, or the first failed key of a batch
// (wrapped in the error the batch returns beside its results), with its
// Mooncake code.
type CodeError struct {
	Op   Op
	Code int64
	Msg  string
}

func (e *CodeError) Error() string { return fmt.Sprintf("%s: code %d: %s", e.Op, e.Code, e.Msg) }

// FakeStore is an in-memory hostcache.Store with the Mooncake semantics the
// backend relies on (upstream mooncake-store, at the commit in third_party/mooncake/PIN): write-once puts (an existing key
// returns 0 and keeps its value), -704 for a missing key, -600 for a
// destination smaller than the object, -800 for a multi-buffer destination
// larger than the object, registration that refuses null, empty and
// overlapping regions, and -800 for any buffer not inside a registered
// region. It reads and writes only memory inside registered regions.
// It is safe for concurrent use.
type FakeStore struct {
	// Capacity limits the total object bytes (0: unlimited); a put that does
	// not fit fails with -200.
	Capacity uint64
	// Intercept, when set, sees every batch call's result before it is
	// returned and may replace it (e.g. truncate it or inject codes).
	Intercept func(op Op, keys []string, results []int64) ([]int64, error)

	mu      sync.Mutex
	closed  bool
	regions []region
	objects map[string][]byte
	used    uint64
	calls   map[Op]int
	keys    map[Op]int
}

type region struct {
	addr uintptr
	size uint64
}

// NewFakeStore returns an empty store.
func NewFakeStore() *FakeStore {
	return &FakeStore{objects: map[string][]byte{}, calls: map[Op]int{}, keys: map[Op]int{}}
}

var _ hostcache.Store = (*FakeStore)(nil)

// Close makes every later call fail with ErrClosed.
func (s *FakeStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// Calls returns how many times op was called and how many keys it carried.
func (s *FakeStore) Calls(op Op) (calls, keys int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[op], s.keys[op]
}

// ResetStats clears the call counters.
func (s *FakeStore) ResetStats() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls, s.keys = map[Op]int{}, map[Op]int{}
}

// Object returns a copy of a stored object.
func (s *FakeStore) Object(key string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.objects[key]
	return append([]byte(nil), v...), ok
}

// Keys returns every stored key, sorted.
func (s *FakeStore) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.objects))
	for k := range s.objects {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Registered returns the number of registered regions.
func (s *FakeStore) Registered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.regions)
}

// RegisterBuffer implements hostcache.Store.
func (s *FakeStore) RegisterBuffer(addr uintptr, size uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[OpRegister]++
	if s.closed {
		return ErrClosed
	}
	if addr == 0 || size == 0 || addr+uintptr(size) < addr {
		return &CodeError{Op: OpRegister, Code: codes.StoreInvalidParams, Msg: fmt.Sprintf("invalid region [%#x, +%d)", addr, size)}
	}
	for _, r := range s.regions {
		if addr < r.addr+uintptr(r.size) && r.addr < addr+uintptr(size) {
			return &CodeError{Op: OpRegister, Code: codes.StoreInvalidParams, Msg: fmt.Sprintf("[%#x, +%d) overlaps registered [%#x, +%d)", addr, size, r.addr, r.size)}
		}
	}
	s.regions = append(s.regions, region{addr, size})
	return nil
}

// UnregisterBuffer implements hostcache.Store.
func (s *FakeStore) UnregisterBuffer(addr uintptr) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	for i, r := range s.regions {
		if r.addr == addr {
			s.regions = append(s.regions[:i], s.regions[i+1:]...)
			return nil
		}
	}
	return &CodeError{Op: "UnregisterBuffer", Code: codes.StoreInvalidParams, Msg: fmt.Sprintf("%#x is not registered", addr)}
}

// mem returns the registered memory [addr, addr+size), or nil when it is not
// entirely inside one registered region.
func (s *FakeStore) mem(addr uintptr, size uint64) []byte {
	if size == 0 {
		return nil
	}
	for _, r := range s.regions {
		if addr >= r.addr && size <= r.size && uint64(addr-r.addr) <= r.size-size {
			// The region was registered by the test: memory outside the Go
			// heap (mmap) that stays mapped while registered.
			p := *(*unsafe.Pointer)(unsafe.Pointer(&addr))
			return unsafe.Slice((*byte)(p), size)
		}
	}
	return nil
}

func (s *FakeStore) begin(op Op, n int) error {
	s.calls[op]++
	s.keys[op] += n
	if s.closed {
		return ErrClosed
	}
	return nil
}

func (s *FakeStore) finish(op Op, keys *hostmem.Keys, res []int64, err error) ([]int64, error) {
	if f := s.Intercept; f != nil {
		return f(op, keys.Strings(), res)
	}
	if err == nil {
		err = keysFailed(op, keys, res)
	}
	return res, err
}

// keysFailed is the error a batch whose keys failed returns beside its
// results, as *mooncake.Store's *BatchError: nil when none failed.
func keysFailed(op Op, keys *hostmem.Keys, res []int64) error {
	failed, first := 0, -1
	for i, r := range res {
		if r < 0 {
			if first < 0 {
				first = i
			}
			failed++
		}
	}
	if failed == 0 {
		return nil
	}
	return fmt.Errorf("hostcachetest: %s: %d of %d keys failed; %q: %w", op, failed, len(res), keys.String(first),
		&CodeError{Op: op, Code: res[first], Msg: "key failed"})
}

func results(dst []int64, n int) []int64 {
	if cap(dst) >= n {
		return dst[:n]
	}
	return make([]int64, n)
}

// BatchIsExist implements hostcache.Store.
func (s *FakeStore) BatchIsExist(packed *hostmem.Keys, dst []int64) ([]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(OpExist, packed.Len()); err != nil {
		return nil, err
	}
	if err := packed.Validate(); err != nil {
		return nil, fmt.Errorf("hostcachetest: %s: %w", OpExist, err)
	}
	res := results(dst, packed.Len())
	for i := range res {
		if _, ok := s.objects[string(packed.Bytes(i))]; ok {
			res[i] = 1
		} else {
			res[i] = 0
		}
	}
	return s.finish(OpExist, packed, res, nil)
}

// BatchPutFrom implements hostcache.Store.
func (s *FakeStore) BatchPutFrom(packed *hostmem.Keys, bufs hostmem.Buffers, dst []int64) ([]int64, error) {
	op := OpPut
	if bufs.Multi() {
		op = OpPutMulti
	}
	if err := s.open(op, packed, bufs); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	keys := packed.Strings()
	if op == OpPut {
		return s.finish(op, packed, s.putSingle(keys, bufs, dst), nil)
	}
	return s.finish(op, packed, s.putMulti(keys, bufs, dst), nil)
}

// BatchGetInto implements hostcache.Store.
func (s *FakeStore) BatchGetInto(packed *hostmem.Keys, bufs hostmem.Buffers, dst []int64) ([]int64, error) {
	op := OpGet
	if bufs.Multi() {
		op = OpGetMulti
	}
	if err := s.open(op, packed, bufs); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if op == OpGet {
		return s.finish(op, packed, s.getSingle(packed, bufs, dst), nil)
	}
	return s.finish(op, packed, s.getMulti(packed, bufs, dst), nil)
}

// open locks the store for one batch call and checks its lists the way the
// real binding does; on success the caller holds s.mu.
func (s *FakeStore) open(op Op, packed *hostmem.Keys, bufs hostmem.Buffers) error {
	s.mu.Lock()
	err := s.begin(op, packed.Len())
	if err == nil {
		err = packed.Validate()
	}
	if err == nil {
		err = bufs.Validate(packed.Len())
	}
	if err != nil {
		s.mu.Unlock()
		if !errors.Is(err, ErrClosed) {
			err = fmt.Errorf("hostcachetest: %s: %w", op, err)
		}
		return err
	}
	return nil
}

func (s *FakeStore) store(key string, parts [][]byte) int64 {
	if _, ok := s.objects[key]; ok {
		return 0 // write-once: OBJECT_ALREADY_EXISTS is reported as success
	}
	var total uint64
	for _, p := range parts {
		total += uint64(len(p))
	}
	if total == 0 {
		return codes.StoreInvalidParams
	}
	if s.Capacity > 0 && s.used+total > s.Capacity {
		return codes.StoreNoAvailableHandle
	}
	v := make([]byte, 0, total)
	for _, p := range parts {
		v = append(v, p...)
	}
	s.objects[strings.Clone(key)] = v
	s.used += total
	return 0
}

// lastIndex maps each key to the last position it occurs at: Mooncake keeps
// one buffer list per key, so duplicates all use the last one given.
func lastIndex(keys []string) map[string]int {
	m := make(map[string]int, len(keys))
	for i, k := range keys {
		m[k] = i
	}
	return m
}

func (s *FakeStore) putSingle(keys []string, bufs hostmem.Buffers, dst []int64) []int64 {
	addrs, sizes := bufs.Addrs, bufs.Sizes
	res := results(dst, len(keys))
	last := lastIndex(keys)
	for i, k := range keys {
		j := last[k]
		if sizes[j] == 0 {
			res[i] = codes.StoreInvalidParams
			continue
		}
		m := s.mem(addrs[j], sizes[j])
		if m == nil {
			res[i] = codes.StoreTransferFail
			continue
		}
		res[i] = s.store(k, [][]byte{m})
	}
	return res
}

func (s *FakeStore) getSingle(keys *hostmem.Keys, bufs hostmem.Buffers, dst []int64) []int64 {
	addrs, sizes := bufs.Addrs, bufs.Sizes
	res := results(dst, keys.Len())
	for i := range res {
		v, ok := s.objects[string(keys.Bytes(i))]
		switch {
		case !ok:
			res[i] = codes.StoreObjectNotFound
		case sizes[i] < uint64(len(v)):
			res[i] = codes.StoreInvalidParams
		default:
			// A larger destination is fine: only the object's bytes are written.
			m := s.mem(addrs[i], uint64(len(v)))
			if m == nil {
				res[i] = codes.StoreTransferFail
				continue
			}
			copy(m, v)
			res[i] = int64(len(v))
		}
	}
	return res
}

func (s *FakeStore) putMulti(keys []string, bufs hostmem.Buffers, dst []int64) []int64 {
	addrs, sizes, offsets := bufs.Addrs, bufs.Sizes, bufs.Offsets
	res := results(dst, len(keys))
	last := lastIndex(keys)
	for i, k := range keys {
		j := last[k]
		var parts [][]byte
		code := int64(0)
		for b := offsets[j]; b < offsets[j+1]; b++ {
			if sizes[b] == 0 {
				continue
			}
			m := s.mem(addrs[b], sizes[b])
			if m == nil {
				code = codes.StoreTransferFail
				break
			}
			parts = append(parts, m)
		}
		if code == 0 {
			code = s.store(k, parts)
		}
		res[i] = code
	}
	return res
}

func (s *FakeStore) getMulti(keys *hostmem.Keys, bufs hostmem.Buffers, dst []int64) []int64 {
	addrs, sizes, offsets := bufs.Addrs, bufs.Sizes, bufs.Offsets
	res := results(dst, keys.Len())
	for i := range res {
		v, ok := s.objects[string(keys.Bytes(i))]
		if !ok {
			res[i] = codes.StoreObjectNotFound
			continue
		}
		var total uint64
		for b := offsets[i]; b < offsets[i+1]; b++ {
			total += sizes[b]
		}
		switch {
		case total < uint64(len(v)):
			res[i] = codes.StoreInvalidParams
			continue
		case total > uint64(len(v)):
			res[i] = codes.StoreTransferFail
			continue
		}
		code := int64(len(v))
		off := uint64(0)
		for b := offsets[i]; b < offsets[i+1]; b++ {
			if sizes[b] == 0 {
				continue
			}
			m := s.mem(addrs[b], sizes[b])
			if m == nil {
				code = codes.StoreTransferFail
				break
			}
			copy(m, v[off:off+sizes[b]])
			off += sizes[b]
		}
		res[i] = code
	}
	return res
}

// RemoveAll implements hostcache.Store.
func (s *FakeStore) RemoveAll(force bool) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(OpRemoveAll, 0); err != nil {
		return 0, err
	}
	n := int64(len(s.objects))
	s.objects = map[string][]byte{}
	s.used = 0
	return n, nil
}
