package mooncake

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// PutParts stores the concatenation of parts under key (upstream's
// put_parts): one object from several slices of any memory, copied once,
// into the client's local buffer, with no joining copy in Go. The whole must
// fit in the local buffer and be at least one byte (ErrInvalidParams; upstream
// would store nothing and report success). Write-once, like Put.
func (s *Store) PutParts(key string, parts ...[]byte) error {
	return s.putParts(OpPutParts, key, parts)
}

// UpsertParts is PutParts that replaces an existing object.
func (s *Store) UpsertParts(key string, parts ...[]byte) error {
	return s.putParts(OpUpsertParts, key, parts)
}

// PutBatch stores a copy of values[i] under key i in one call (upstream's
// put_batch): any memory, copied into the client's local buffer, where all
// the values are staged at once, so their total must fit. An empty value,
// a key given twice or a placement with PreferAllocInSameNode fails the
// whole call with ErrInvalidParams before anything is stored. The result is
// one error for the batch, as upstream's: nil, or the first failed key's
// code (other keys may have been stored). Write-once, like Put. For large
// batches or memory that is registered, BatchPutFrom copies nothing.
func (s *Store) PutBatch(keys *hostmem.Keys, values [][]byte) error {
	return s.putBatch(OpPutBatch, keys, values)
}

// UpsertBatch is PutBatch that replaces existing objects.
func (s *Store) UpsertBatch(keys *hostmem.Keys, values [][]byte) error {
	return s.putBatch(OpUpsertBatch, keys, values)
}

// pinned holds the addresses of Go byte slices pinned for one call: C reads
// them through an array of addresses, which the cgo rules allow only for
// pinned memory.
type pinned struct {
	p     runtime.Pinner
	addrs []uintptr
	sizes []uint64
	total uint64
}

func (pn *pinned) add(b []byte) {
	if len(b) == 0 {
		pn.addrs = append(pn.addrs, 0)
		pn.sizes = append(pn.sizes, 0)
		return
	}
	pn.p.Pin(&b[0])
	pn.addrs = append(pn.addrs, uintptr(unsafe.Pointer(&b[0])))
	pn.sizes = append(pn.sizes, uint64(len(b)))
	pn.total += uint64(len(b))
}

func (s *Store) putParts(op Op, key string, parts [][]byte) error {
	if s.policyError() != nil {
		return &Error{Op: op, Key: key, Code: ErrInvalidParams, Err: s.policyError()}
	}
	pn := pinned{addrs: make([]uintptr, 0, len(parts)), sizes: make([]uint64, 0, len(parts))}
	defer pn.p.Unpin()
	for _, b := range parts {
		pn.add(b)
	}
	if pn.total == 0 {
		return &Error{Op: op, Key: key, Code: ErrInvalidParams, Err: errors.New("no bytes: nothing to store")}
	}
	if !s.c().gate.Enter() {
		return closedErr(op, key)
	}
	t0 := now()
	rc := s.c().handle.PutParts(key, pn.addrs, pn.sizes, &s.cpolicy, op == OpUpsertParts)
	s.c().stats.single(op, t0, int64(rc), pn.total)
	s.c().gate.Leave()
	return codeErr(op, key, int64(rc))
}

func (s *Store) putBatch(op Op, keys *hostmem.Keys, values [][]byte) error {
	k, err := checkedKeys(op, keys)
	if err != nil {
		return err
	}
	if k.Len() != len(values) {
		return &Error{Op: op, Code: ErrInvalidParams, Err: fmt.Errorf("%d keys, %d values", k.Len(), len(values))}
	}
	if k.Len() == 0 {
		return nil
	}
	if s.policyError() != nil {
		return &Error{Op: op, Code: ErrInvalidParams, Err: s.policyError()}
	}
	for i, v := range values {
		if len(v) == 0 {
			return &Error{Op: op, Key: k.String(i), Code: ErrInvalidParams, Err: errors.New("empty value")}
		}
	}
	pn := pinned{addrs: make([]uintptr, 0, len(values)), sizes: make([]uint64, 0, len(values))}
	defer pn.p.Unpin()
	for _, v := range values {
		pn.add(v)
	}
	if !s.c().gate.Enter() {
		return closedErr(op, "")
	}
	t0 := now()
	rc := s.c().handle.PutBatch(k.Buf, k.Offsets, pn.addrs, pn.sizes, &s.cpolicy, op == OpUpsertBatch)
	s.c().stats.whole(op, t0, k.Len(), int64(rc), pn.total)
	s.c().gate.Leave()
	if rc != 0 {
		return refused(op, k, rc)
	}
	return nil
}
