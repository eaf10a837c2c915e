package mooncake

import (
	"context"
	"errors"
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

// BatchPutFrom stores, for each key i, its buffers in bufs without copying
// them through Go: one buffer per key (bufs.Offsets nil; upstream's
// batch_put_from) or a list per key in CSR form, stored as the
// concatenation (upstream's batch_put_from_multi_buffers: a layer-first
// HiCache page, one buffer per layer, in one call). The buffers must lie in
// registered memory (RegisterMemory, RegisterBuffer). Write-once, like Put:
// an existing key reports 0 and keeps its value. Packed keys cross into C as
// they are, with no string per key.
//
// results[i] is 0 or key i's negative code; when any is negative the error
// is a *BatchError naming those keys (see the package doc, Batch calls).
func (s *Store) BatchPutFrom(keys *hostmem.Keys, bufs hostmem.Buffers, results []int64) ([]int64, error) {
	return s.typedBatch(context.Background(), OpBatchPutFrom, OpBatchPutFromMultiBuffers, keys, bufs, results)
}

// BatchPutFromContext is BatchPutFrom with a context, which bounds the
// call's one wait in Go: for room in the store's batch-write budget
// (Config.BatchWriteKeys, BatchWriteBytes) behind other batch writes in
// upstream. A context that has ended when the call starts, or ends while it
// waits, gives an *Error wrapping the context's error and nil results, and
// the call has stored nothing; once it has crossed into C it returns its
// real results (see "Contexts").
func (s *Store) BatchPutFromContext(ctx context.Context, keys *hostmem.Keys, bufs hostmem.Buffers, results []int64) ([]int64, error) {
	return s.typedBatch(ctx, OpBatchPutFrom, OpBatchPutFromMultiBuffers, keys, bufs, results)
}

// BatchUpsertFrom is BatchPutFrom that replaces existing objects (see
// Upsert for what a reader may see). With a buffer list per key it needs
// Capabilities.MultiBufferUpsert, else it fails with ErrNotSupported.
func (s *Store) BatchUpsertFrom(keys *hostmem.Keys, bufs hostmem.Buffers, results []int64) ([]int64, error) {
	return s.typedBatch(context.Background(), OpBatchUpsertFrom, OpBatchUpsertFromMultiBuffers, keys, bufs, results)
}

// BatchUpsertFromContext is BatchUpsertFrom with a context, as
// BatchPutFromContext.
func (s *Store) BatchUpsertFromContext(ctx context.Context, keys *hostmem.Keys, bufs hostmem.Buffers, results []int64) ([]int64, error) {
	return s.typedBatch(ctx, OpBatchUpsertFrom, OpBatchUpsertFromMultiBuffers, keys, bufs, results)
}

// BatchGetInto reads each key's object into its buffers in bufs: one
// buffer per key (it must hold the object; ErrInvalidParams when smaller)
// or a list per key over which the object is scattered (the sizes must
// total the object size: smaller gives ErrInvalidParams, larger
// ErrTransferFail, as upstream's batch_get_into_multi_buffers). results[i]
// is the object size or key i's negative code (ErrObjectNotFound, ...).
func (s *Store) BatchGetInto(keys *hostmem.Keys, bufs hostmem.Buffers, results []int64) ([]int64, error) {
	return s.typedBatch(context.Background(), OpBatchGetInto, OpBatchGetIntoMultiBuffers, keys, bufs, results)
}

func (s *Store) typedBatch(ctx context.Context, single, multi Op, keys *hostmem.Keys, bufs hostmem.Buffers, results []int64) ([]int64, error) {
	op := single
	if bufs.Multi() {
		op = multi
	}
	if ctx == nil {
		return nil, &Error{Op: op, Code: ErrInvalidParams, Err: errors.New("nil context")}
	}
	if err := keys.Validate(); err != nil {
		return nil, &Error{Op: op, Code: ErrInvalidParams, Err: err}
	}
	if err := bufs.Validate(keys.Len()); err != nil {
		return nil, &Error{Op: op, Code: ErrInvalidParams, Err: err}
	}
	return s.batchPacked(ctx, op, keysOrEmpty(keys), bufs, results)
}

var noKeys hostmem.Keys

func keysOrEmpty(k *hostmem.Keys) *hostmem.Keys {
	if k == nil {
		return &noKeys
	}
	return k
}

// checkedKeys validates packed keys for op: the keys, or an error.
func checkedKeys(op Op, k *hostmem.Keys) (*hostmem.Keys, error) {
	if err := k.Validate(); err != nil {
		return nil, &Error{Op: op, Code: ErrInvalidParams, Err: err}
	}
	return keysOrEmpty(k), nil
}

// isMulti reports whether op takes a CSR buffer list.
func isMulti(op Op) bool {
	return op == OpBatchPutFromMultiBuffers || op == OpBatchUpsertFromMultiBuffers || op == OpBatchGetIntoMultiBuffers
}

// batchPacked makes the one cgo call of a zero-copy batch whose keys and
// buffers were checked; ctx bounds the wait for the write budget.
func (s *Store) batchPacked(ctx context.Context, op Op, k *hostmem.Keys, bufs hostmem.Buffers, results []int64) ([]int64, error) {
	write := op != OpBatchGetInto && op != OpBatchGetIntoMultiBuffers
	if write && s.policyError() != nil {
		return nil, &Error{Op: op, Code: ErrInvalidParams, Err: s.policyError()}
	}
	res := resultsFor(results, k.Len())
	if len(res) == 0 {
		return res, nil
	}
	c, err := s.enter(ctx, op, "")
	if err != nil {
		return nil, err
	}
	h := c.handle
	a, sz, o := bufs.Addrs, bufs.Sizes, bufs.Offsets
	t0 := now()
	var bound *writeBudget // Config.BatchWriteKeys and BatchWriteBytes: writes only
	var w budget
	if write {
		bound = c.writes
	}
	if bound != nil {
		var bytes uint64
		for _, b := range bufs.Sizes {
			bytes += b
		}
		w = bound.weight(k.Len(), bytes)
		if !bound.acquire(ctx.Done(), w) {
			c.gate.Leave()
			return nil, ctxErr(op, "", ctx.Err())
		}
	}
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
	if bound != nil {
		bound.release(w)
	}
	if write {
		c.stats.batch(op, t0, rc, res, &bufs)
	} else {
		c.stats.batch(op, t0, rc, res, nil)
	}
	c.gate.Leave()
	return batchResult(op, k, rc, res)
}

// BatchIsExist reports, for each key, 1 (present) or 0 (absent); a key
// whose check failed has its negative code, and the error is then a
// *BatchError.
func (s *Store) BatchIsExist(keys *hostmem.Keys, results []int64) ([]int64, error) {
	k, err := checkedKeys(OpBatchIsExist, keys)
	if err != nil {
		return nil, err
	}
	return s.packedKeysCall(OpBatchIsExist, k, results, func(h cstore.Client, k *hostmem.Keys, res []int64) int32 {
		return h.BatchIsExist(k.Buf, k.Offsets, res)
	})
}

// BatchRemove removes each key as Remove does, in one call: results[i] is 0
// or a negative code (ErrObjectNotFound; ErrObjectHasLease unless force;
// ErrReplicaIsNotReady while a write of it is in flight), and the error a
// *BatchError when any key failed. Like upstream's batch_remove it is not
// atomic: some keys may be removed and others not.
func (s *Store) BatchRemove(keys *hostmem.Keys, force bool, results []int64) ([]int64, error) {
	k, err := checkedKeys(OpBatchRemove, keys)
	if err != nil {
		return nil, err
	}
	return s.packedKeysCall(OpBatchRemove, k, results, func(h cstore.Client, k *hostmem.Keys, res []int64) int32 {
		return h.BatchRemove(k.Buf, k.Offsets, force, res)
	})
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

// batchResult is the outcome of a batch crossing whose results are one
// per key of k: a whole-call refusal (nil results), or the results with a
// *BatchError when any key failed.
func batchResult(op Op, k *hostmem.Keys, rc int32, res []int64) ([]int64, error) {
	if rc != 0 {
		return nil, refused(op, k, rc)
	}
	return res, keysError(op, k, res)
}

// refused is the error of a batch call that C refused as a whole (rc != 0):
// a key longer than MaxKeyLen is named.
func refused(op Op, k *hostmem.Keys, rc int32) error {
	if ErrorCode(rc) == ErrInvalidParams && k.Validate() == nil {
		for i := 0; i < k.Len(); i++ {
			if len(k.Bytes(i)) > MaxKeyLen {
				return &Error{Op: op, Key: k.String(i), Code: ErrInvalidParams, Err: ErrKeyTooLong}
			}
		}
	}
	_, err := callResult(op, rc, nil)
	return err
}

// keysError is batchError with the keys of a packed batch, one per result.
// The keys are named only when their packing is valid (checked once, on
// the error path): the calls refuse a malformed one before they cross, and
// an error must never be the thing that panics.
func keysError(op Op, k *hostmem.Keys, res []int64) error {
	checked, valid := false, false
	return batchError(op, res, func(i int) string {
		if !checked {
			checked, valid = true, k.Validate() == nil
		}
		if valid && i < k.Len() {
			return k.String(i)
		}
		return ""
	})
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
