package mooncake

import (
	"fmt"
	"sync"

	"github.com/mooncake-go/mooncake-go/internal/cabi"
	"github.com/mooncake-go/mooncake-go/internal/cabi/cstore"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// keyScratch packs keys into one buffer plus offsets for the crossing.
// Scratch buffers are recycled through a few per-connection slots (which,
// unlike a sync.Pool, survive garbage collections, so a steady stream of
// batches packs keys without allocating), then through a sync.Pool.
type keyScratch struct {
	k hostmem.Keys
}

const scratchSlots = 8

var keyPool = sync.Pool{New: func() any { return new(keyScratch) }}

func (c *conn) packKeys(keys []string) *keyScratch {
	var ks *keyScratch
	for i := range c.scratch {
		if ks = c.scratch[i].Swap(nil); ks != nil {
			break
		}
	}
	if ks == nil {
		ks = keyPool.Get().(*keyScratch)
	}
	total := 0
	for _, k := range keys {
		total += len(k)
	}
	buf := ks.k.Buf[:0]
	if cap(buf) < total || cap(buf) == 0 {
		buf = make([]byte, 0, max(total, 64))
	}
	offs := ks.k.Offsets[:0]
	if cap(offs) < len(keys)+1 {
		offs = make([]uint64, 0, len(keys)+1)
	}
	offs = append(offs, 0)
	for _, k := range keys {
		buf = append(buf, k...)
		offs = append(offs, uint64(len(buf)))
	}
	ks.k.Buf, ks.k.Offsets = buf, offs
	return ks
}

func (c *conn) freeKeys(ks *keyScratch) {
	if cap(ks.k.Buf) > 1<<20 || cap(ks.k.Offsets) > 1<<16 {
		return // do not keep unusually large buffers alive
	}
	for i := range c.scratch {
		if c.scratch[i].CompareAndSwap(nil, ks) {
			return
		}
	}
	keyPool.Put(ks)
}

func resultsFor(results []int64, n int) []int64 {
	if cap(results) >= n {
		return results[:n]
	}
	return make([]int64, n)
}

func argErr(op Op, format string, args ...any) error {
	return &Error{Op: op, Code: ErrInvalidParams, Err: fmt.Errorf(format, args...)}
}

// BatchPutFrom stores, for each key i, sizes[i] bytes at addrs[i]
// (write-once; existing keys report 0 and keep their value).
func (s *Store) BatchPutFrom(keys []string, addrs []uintptr, sizes []uint64, results []int64) ([]int64, error) {
	return s.batch(OpBatchPutFrom, keys, addrs, sizes, nil, results)
}

// BatchUpsertFrom is BatchPutFrom that replaces existing objects.
func (s *Store) BatchUpsertFrom(keys []string, addrs []uintptr, sizes []uint64, results []int64) ([]int64, error) {
	return s.batch(OpBatchUpsertFrom, keys, addrs, sizes, nil, results)
}

// BatchGetInto reads each object into [addrs[i], addrs[i]+sizes[i]); each
// entry is the object size, or ErrInvalidParams when the destination is
// smaller than the object.
func (s *Store) BatchGetInto(keys []string, addrs []uintptr, sizes []uint64, results []int64) ([]int64, error) {
	return s.batch(OpBatchGetInto, keys, addrs, sizes, nil, results)
}

// BatchPutFromMultiBuffers stores, for each key i, the concatenation of the
// buffers addrs[offsets[i]:offsets[i+1]] (sizes likewise): the layer-first
// HiCache page, one buffer per layer, in one call. len(offsets) must be
// len(keys)+1, offsets[0] = 0 and offsets[len(keys)] = len(addrs).
// Write-once, like BatchPutFrom.
func (s *Store) BatchPutFromMultiBuffers(keys []string, addrs []uintptr, sizes []uint64, offsets []uint64, results []int64) ([]int64, error) {
	return s.batch(OpBatchPutFromMultiBuffers, keys, addrs, sizes, offsets, results)
}

// BatchUpsertFromMultiBuffers is BatchPutFromMultiBuffers that replaces
// existing objects.
func (s *Store) BatchUpsertFromMultiBuffers(keys []string, addrs []uintptr, sizes []uint64, offsets []uint64, results []int64) ([]int64, error) {
	return s.batch(OpBatchUpsertFromMultiBuffers, keys, addrs, sizes, offsets, results)
}

// BatchGetIntoMultiBuffers scatters each object over its buffers (CSR form
// as in BatchPutFromMultiBuffers). Each entry is the object size; the
// buffers' total must equal it: smaller gives ErrInvalidParams, larger
// ErrTransferFail, as Mooncake does.
func (s *Store) BatchGetIntoMultiBuffers(keys []string, addrs []uintptr, sizes []uint64, offsets []uint64, results []int64) ([]int64, error) {
	return s.batch(OpBatchGetIntoMultiBuffers, keys, addrs, sizes, offsets, results)
}

// batch is every zero-copy batch call with string keys: it checks the
// arguments and packs the keys for batchPacked. offsets is nil for the
// single-buffer calls.
func (s *Store) batch(op Op, keys []string, addrs []uintptr, sizes []uint64, offsets []uint64, results []int64) ([]int64, error) {
	bufs := hostmem.Buffers{Addrs: addrs, Sizes: sizes, Offsets: offsets}
	if isMulti(op) && offsets == nil {
		if len(keys) == 0 && len(addrs) == 0 && len(sizes) == 0 {
			return resultsFor(results, 0), nil
		}
		bufs.Offsets = []uint64{} // refused by Validate: a multi-buffer call needs offsets
	}
	if err := bufs.Validate(len(keys)); err != nil {
		return nil, &Error{Op: op, Code: ErrInvalidParams, Err: err}
	}
	if len(keys) == 0 {
		return resultsFor(results, 0), nil
	}
	ks := s.c().packKeys(keys)
	res, err := s.batchPacked(op, &ks.k, bufs, results)
	s.c().freeKeys(ks)
	return res, err
}

// isMulti reports whether op takes a CSR buffer list.
func isMulti(op Op) bool {
	return op == OpBatchPutFromMultiBuffers || op == OpBatchUpsertFromMultiBuffers || op == OpBatchGetIntoMultiBuffers
}

// batchPacked makes the one cgo call of a zero-copy batch whose keys and
// buffers were checked.
func (s *Store) batchPacked(op Op, k *hostmem.Keys, bufs hostmem.Buffers, results []int64) ([]int64, error) {
	if op != OpBatchGetInto && op != OpBatchGetIntoMultiBuffers && s.policyError() != nil {
		return nil, &Error{Op: op, Code: ErrInvalidParams, Err: s.policyError()}
	}
	res := resultsFor(results, k.Len())
	if len(res) == 0 {
		return res, nil
	}
	if !s.c().gate.Enter() {
		return nil, closedErr(op, "")
	}
	h := s.c().handle
	a, sz, o := bufs.Addrs, bufs.Sizes, bufs.Offsets
	t0 := now()
	var rc int32
	switch op {
	case OpBatchPutFrom:
		rc = h.BatchPutFrom(k.Buf, k.Offsets, a, sz, &s.cpolicy, res)
	case OpBatchUpsertFrom:
		rc = h.BatchUpsertFrom(k.Buf, k.Offsets, a, sz, &s.cpolicy, res)
	case OpBatchGetInto:
		rc = h.BatchGetInto(k.Buf, k.Offsets, a, sz, res)
	case OpBatchPutFromMultiBuffers:
		rc = h.BatchPutFromMultiBuffers(k.Buf, k.Offsets, a, sz, o, &s.cpolicy, res)
	case OpBatchUpsertFromMultiBuffers:
		rc = h.BatchUpsertFromMultiBuffers(k.Buf, k.Offsets, a, sz, o, &s.cpolicy, res)
	default:
		rc = h.BatchGetIntoMultiBuffers(k.Buf, k.Offsets, a, sz, o, s.policy.PreferAllocInSameNode, res)
	}
	if op == OpBatchGetInto || op == OpBatchGetIntoMultiBuffers {
		s.c().stats.batch(op, t0, rc, res, nil)
	} else {
		s.c().stats.batch(op, t0, rc, res, &bufs)
	}
	s.c().gate.Leave()
	return batchResult(op, k, rc, res)
}

// BatchIsExist reports, for each key, 1 (present), 0 (absent) or a negative
// ErrorCode.
func (s *Store) BatchIsExist(keys []string, results []int64) ([]int64, error) {
	return s.keysCall(OpBatchIsExist, keys, results, s.batchIsExist)
}

func (s *Store) batchIsExist(k *hostmem.Keys, results []int64) ([]int64, error) {
	return s.packedKeysCall(OpBatchIsExist, k, results, func(h cstore.Client, k *hostmem.Keys, res []int64) int32 {
		return h.BatchIsExist(k.Buf, k.Offsets, res)
	})
}

// BatchRemove removes each key as Remove does, in one call: results[i] is 0
// or a negative ErrorCode (ErrObjectNotFound; ErrObjectHasLease unless
// force; ErrReplicaIsNotReady while a write of it is in flight). Like
// upstream's batch_remove it is not atomic: some keys may be removed and
// others not. Turn the results into an error with BatchResultError.
func (s *Store) BatchRemove(keys []string, force bool, results []int64) ([]int64, error) {
	return s.keysCall(OpBatchRemove, keys, results, func(k *hostmem.Keys, res []int64) ([]int64, error) {
		return s.packedKeysCall(OpBatchRemove, k, res, func(h cstore.Client, k *hostmem.Keys, res []int64) int32 {
			return h.BatchRemove(k.Buf, k.Offsets, force, res)
		})
	})
}

// keysCall packs keys for call, a batch call that takes only keys.
func (s *Store) keysCall(op Op, keys []string, results []int64, call func(*hostmem.Keys, []int64) ([]int64, error)) ([]int64, error) {
	if len(keys) == 0 {
		return resultsFor(results, 0), nil
	}
	ks := s.c().packKeys(keys)
	res, err := call(&ks.k, results)
	s.c().freeKeys(ks)
	return res, err
}

// packedKeysCall makes one crossing with packed keys and a result per key.
func (s *Store) packedKeysCall(op Op, k *hostmem.Keys, results []int64, cross func(cstore.Client, *hostmem.Keys, []int64) int32) ([]int64, error) {
	res := resultsFor(results, k.Len())
	if len(res) == 0 {
		return res, nil
	}
	if !s.c().gate.Enter() {
		return nil, closedErr(op, "")
	}
	t0 := now()
	rc := cross(s.c().handle, k, res)
	s.c().stats.batch(op, t0, rc, res, nil)
	s.c().gate.Leave()
	return batchResult(op, k, rc, res)
}

// batchResult is callResult for a batch of keys: a whole-call refusal for
// a key longer than MaxKeyLen names that key.
func batchResult(op Op, k *hostmem.Keys, rc int32, res []int64) ([]int64, error) {
	if ErrorCode(rc) == ErrInvalidParams {
		for i := 0; i < k.Len(); i++ {
			if len(k.Bytes(i)) > MaxKeyLen {
				return nil, &Error{Op: op, Key: k.String(i), Code: ErrInvalidParams, Err: ErrKeyTooLong}
			}
		}
	}
	return callResult(op, rc, res)
}

func callResult(op Op, rc int32, res []int64) ([]int64, error) {
	if rc == 0 {
		return res, nil
	}
	if rc == cabi.CodeNoCgo {
		return nil, &Error{Op: op, Code: ErrNotSupported, Err: ErrNoCgo}
	}
	return nil, &Error{Op: op, Code: ErrorCode(rc)}
}
