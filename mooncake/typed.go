package mooncake

import (
	"errors"
	"fmt"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// Typed zero-copy calls: the same calls as PutFrom, GetInto and the Batch*
// methods, over host memory the store knows. A Span is checked against its
// Memory (not freed, in range) before the call, and a Memory registered
// with RegisterMemory cannot be freed until it is unregistered or the
// store is closed, so a transfer never runs into unmapped memory. The
// uintptr calls stay as the low level.

// RegisterMemory registers all of m for zero-copy transfers and records the
// registration in m (m.Free then refuses until UnregisterMemory or Close).
func (s *Store) RegisterMemory(m *hostmem.Memory) error {
	if err := m.MarkRegistered(); err != nil {
		return &Error{Op: OpRegisterBuffer, Code: ErrInvalidParams, Err: err}
	}
	c := s.c()
	if !c.gate.Enter() {
		m.MarkUnregistered()
		return closedErr(OpRegisterBuffer, "")
	}
	defer c.gate.Leave()
	// memMu is taken inside the gate, as Close takes it, so the two orders
	// never cross.
	c.memMu.Lock()
	defer c.memMu.Unlock()
	addr, size := m.Addr(), m.Size()
	t0 := now()
	rc := c.handle.RegisterBuffer(addr, size)
	c.stats.single(OpRegisterBuffer, t0, int64(rc), 0)
	if rc != 0 {
		m.MarkUnregistered()
		return regionErr(OpRegisterBuffer, rc, fmt.Errorf("host memory [%#x, +%d)", addr, size))
	}
	if c.mems == nil {
		c.mems = map[uintptr]*hostmem.Memory{}
	}
	c.mems[addr] = m
	return nil
}

// UnregisterMemory unregisters memory registered with RegisterMemory.
func (s *Store) UnregisterMemory(m *hostmem.Memory) error {
	c := s.c()
	if !c.gate.Enter() {
		return closedErr(OpUnregisterBuffer, "")
	}
	defer c.gate.Leave()
	c.memMu.Lock()
	defer c.memMu.Unlock()
	addr := m.Addr()
	if addr == 0 || c.mems[addr] != m {
		return &Error{Op: OpUnregisterBuffer, Code: ErrInvalidParams, Err: errors.New("memory is not registered with this store through RegisterMemory")}
	}
	t0 := now()
	rc := c.handle.UnregisterBuffer(addr)
	c.stats.single(OpUnregisterBuffer, t0, int64(rc), 0)
	if rc != 0 {
		return regionErr(OpUnregisterBuffer, rc, fmt.Errorf("host memory at %#x", addr))
	}
	delete(c.mems, addr)
	m.MarkUnregistered()
	return nil
}

// releaseMemory ends the registrations RegisterMemory recorded; Close calls
// it once the client (and with it every registration) is gone.
func (c *conn) releaseMemory() {
	c.memMu.Lock()
	defer c.memMu.Unlock()
	for addr, m := range c.mems {
		m.MarkUnregistered()
		delete(c.mems, addr)
	}
}

func spanAddr(op Op, key string, sp hostmem.Span) (uintptr, error) {
	a, err := sp.Addr()
	if err != nil {
		return 0, &Error{Op: op, Key: key, Code: ErrInvalidParams, Err: err}
	}
	return a, nil
}

// PutSpan is PutFrom over a span of host memory.
func (s *Store) PutSpan(key string, sp hostmem.Span) error {
	a, err := spanAddr(OpPutFrom, key, sp)
	if err != nil {
		return err
	}
	return s.putFrom(OpPutFrom, key, a, sp.Len())
}

// UpsertSpan is UpsertFrom over a span of host memory.
func (s *Store) UpsertSpan(key string, sp hostmem.Span) error {
	a, err := spanAddr(OpUpsertFrom, key, sp)
	if err != nil {
		return err
	}
	return s.putFrom(OpUpsertFrom, key, a, sp.Len())
}

// GetIntoSpan is GetInto over a span of host memory: it reads the object
// into sp and returns the object size.
func (s *Store) GetIntoSpan(key string, sp hostmem.Span) (int64, error) {
	a, err := spanAddr(OpGetInto, key, sp)
	if err != nil {
		return 0, err
	}
	return s.GetInto(key, a, sp.Len())
}

// BatchPutFromBuffers stores, for each packed key i, its buffers in bufs:
// one buffer per key (bufs.Offsets nil, as BatchPutFrom) or a list per key
// (as BatchPutFromMultiBuffers). Packed keys cross into C as they are, with
// no per-key string and no packing copy.
func (s *Store) BatchPutFromBuffers(keys *hostmem.Keys, bufs hostmem.Buffers, results []int64) ([]int64, error) {
	return s.typedBatch(OpBatchPutFrom, OpBatchPutFromMultiBuffers, keys, bufs, results)
}

// BatchUpsertFromBuffers is BatchPutFromBuffers that replaces existing
// objects.
func (s *Store) BatchUpsertFromBuffers(keys *hostmem.Keys, bufs hostmem.Buffers, results []int64) ([]int64, error) {
	return s.typedBatch(OpBatchUpsertFrom, OpBatchUpsertFromMultiBuffers, keys, bufs, results)
}

// BatchGetIntoBuffers reads each packed key's object into its buffers, as
// BatchGetInto (one buffer per key: it must hold the object) or
// BatchGetIntoMultiBuffers (a list per key: the sizes must total the object
// size).
func (s *Store) BatchGetIntoBuffers(keys *hostmem.Keys, bufs hostmem.Buffers, results []int64) ([]int64, error) {
	return s.typedBatch(OpBatchGetInto, OpBatchGetIntoMultiBuffers, keys, bufs, results)
}

// BatchIsExistKeys is BatchIsExist over packed keys.
func (s *Store) BatchIsExistKeys(keys *hostmem.Keys, results []int64) ([]int64, error) {
	if err := keys.Validate(); err != nil {
		return nil, &Error{Op: OpBatchIsExist, Code: ErrInvalidParams, Err: err}
	}
	return s.batchIsExist(keysOrEmpty(keys), results)
}

func (s *Store) typedBatch(single, multi Op, keys *hostmem.Keys, bufs hostmem.Buffers, results []int64) ([]int64, error) {
	op := single
	if bufs.Multi() {
		op = multi
	}
	if err := keys.Validate(); err != nil {
		return nil, &Error{Op: op, Code: ErrInvalidParams, Err: err}
	}
	if err := bufs.Validate(keys.Len()); err != nil {
		return nil, &Error{Op: op, Code: ErrInvalidParams, Err: err}
	}
	return s.batchPacked(op, keysOrEmpty(keys), bufs, results)
}

var noKeys hostmem.Keys

func keysOrEmpty(k *hostmem.Keys) *hostmem.Keys {
	if k == nil {
		return &noKeys
	}
	return k
}

// BatchKeysError is BatchResultError for packed keys.
func BatchKeysError(op Op, keys *hostmem.Keys, results []int64) error {
	return batchError(op, results, func(i int) string {
		if i < keys.Len() {
			return keys.String(i)
		}
		return ""
	})
}
