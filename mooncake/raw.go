package mooncake

import (
	"context"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// Raw is the low level of a Store: the zero-copy calls in upstream's
// Python shapes, with addresses as uintptr and keys as []string. Nothing
// checks that an address lies in memory that is mapped and registered: a
// wrong one makes the engine read or write wherever it points (RDMA refuses
// unregistered memory; upstream's TCP transport does not check). Use it to
// port code written against upstream's client, or for memory that no
// hostmem.Memory describes; everything else has a typed call on Store
// (PutFrom, GetInto, BatchPutFrom, BatchGetInto, ...), which this level
// only restates.
//
// A Raw is a value that shares its Store's connection and placement
// policy; results and errors follow the Store's rules (a *BatchError when
// any key of a batch failed, the results still filled).
type Raw struct {
	s *Store
}

// Raw returns the low level of s.
func (s *Store) Raw() Raw { return Raw{s: s} }

// PutFrom stores size bytes at addr under key (upstream's put_from).
// addr must point into registered memory that stays mapped during the
// call, never Go heap memory. size 0 is refused with ErrInvalidParams.
func (r Raw) PutFrom(key string, addr uintptr, size uint64) error {
	return r.s.putFrom(context.Background(), OpPutFrom, key, addr, size)
}

// UpsertFrom is PutFrom that replaces an existing object.
func (r Raw) UpsertFrom(key string, addr uintptr, size uint64) error {
	return r.s.putFrom(context.Background(), OpUpsertFrom, key, addr, size)
}

// GetInto reads the object stored under key into [addr, addr+size) and
// returns its size (upstream's get_into); a size smaller than the object
// fails with ErrInvalidParams.
func (r Raw) GetInto(key string, addr uintptr, size uint64) (int64, error) {
	return r.s.getInto(context.Background(), key, addr, size)
}

// BatchPutFrom stores, for each key i, sizes[i] bytes at addrs[i]
// (upstream's batch_put_from).
func (r Raw) BatchPutFrom(keys []string, addrs []uintptr, sizes []uint64, results []int64) ([]int64, error) {
	return r.batch(OpBatchPutFrom, keys, addrs, sizes, nil, results)
}

// BatchUpsertFrom is BatchPutFrom that replaces existing objects.
func (r Raw) BatchUpsertFrom(keys []string, addrs []uintptr, sizes []uint64, results []int64) ([]int64, error) {
	return r.batch(OpBatchUpsertFrom, keys, addrs, sizes, nil, results)
}

// BatchGetInto reads each object into [addrs[i], addrs[i]+sizes[i])
// (upstream's batch_get_into).
func (r Raw) BatchGetInto(keys []string, addrs []uintptr, sizes []uint64, results []int64) ([]int64, error) {
	return r.batch(OpBatchGetInto, keys, addrs, sizes, nil, results)
}

// BatchPutFromMultiBuffers stores, for each key i, the concatenation of
// the buffers addrs[offsets[i]:offsets[i+1]] (sizes likewise): the CSR
// form of upstream's batch_put_from_multi_buffers. len(offsets) must be
// len(keys)+1, offsets[0] = 0 and offsets[len(keys)] = len(addrs).
func (r Raw) BatchPutFromMultiBuffers(keys []string, addrs []uintptr, sizes []uint64, offsets []uint64, results []int64) ([]int64, error) {
	return r.batch(OpBatchPutFromMultiBuffers, keys, addrs, sizes, offsets, results)
}

// BatchUpsertFromMultiBuffers is BatchPutFromMultiBuffers that replaces
// existing objects (Capabilities.MultiBufferUpsert; without it the call
// fails with ErrNotSupported).
func (r Raw) BatchUpsertFromMultiBuffers(keys []string, addrs []uintptr, sizes []uint64, offsets []uint64, results []int64) ([]int64, error) {
	return r.batch(OpBatchUpsertFromMultiBuffers, keys, addrs, sizes, offsets, results)
}

// BatchGetIntoMultiBuffers scatters each object over its buffers (CSR
// form, as BatchPutFromMultiBuffers; upstream's
// batch_get_into_multi_buffers).
func (r Raw) BatchGetIntoMultiBuffers(keys []string, addrs []uintptr, sizes []uint64, offsets []uint64, results []int64) ([]int64, error) {
	return r.batch(OpBatchGetIntoMultiBuffers, keys, addrs, sizes, offsets, results)
}

// batch checks the arguments of a Raw batch call and packs its keys into
// the connection's reused scratch (no allocation in steady state) for the
// crossing every batch call makes.
func (r Raw) batch(op Op, keys []string, addrs []uintptr, sizes []uint64, offsets []uint64, results []int64) ([]int64, error) {
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
	c := r.s.c()
	ks := c.packKeys(keys)
	res, err := r.s.batchPacked(context.Background(), op, &ks.k, bufs, results)
	c.freeKeys(ks)
	return res, err
}
