package mooncake

import (
	"context"
	"errors"
	"fmt"

	"github.com/mooncake-go/mooncake-go/internal/memreg"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// Zero-copy calls of one key, over host memory the store knows. A Span is
// checked against its Memory (not freed, in range) before the call, and a
// Memory registered with RegisterMemory cannot be freed until it is
// unregistered or the store is closed, so a transfer never runs into
// unmapped memory. The uintptr forms are in Raw.

// RegisterMemory registers all of m for zero-copy transfers and records the
// registration in m (m.Free then refuses until UnregisterMemory or Close).
func (s *Store) RegisterMemory(m *hostmem.Memory) error {
	if err := memreg.Mark(m); err != nil {
		return &Error{Op: OpRegisterBuffer, Code: ErrInvalidParams, Err: err}
	}
	c := s.c()
	if !c.gate.Enter() {
		memreg.Unmark(m)
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
		memreg.Unmark(m)
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
	memreg.Unmark(m)
	return nil
}

// releaseMemory ends the registrations RegisterMemory recorded; Close calls
// it once the client (and with it every registration) is gone.
func (c *conn) releaseMemory() {
	c.memMu.Lock()
	defer c.memMu.Unlock()
	for addr, m := range c.mems {
		memreg.Unmark(m)
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

// PutFrom stores the bytes of sp under key without copying them through Go
// (zero-copy; upstream's put_from). sp must lie in registered memory
// (RegisterMemory); it is checked against its Memory (not freed, in range)
// before the call. Write-once, like Put. An empty span is refused with
// ErrInvalidParams (upstream would report success and store nothing).
func (s *Store) PutFrom(key string, sp hostmem.Span) error {
	return s.PutFromContext(context.Background(), key, sp)
}

// PutFromContext is PutFrom with a context (see "Contexts").
func (s *Store) PutFromContext(ctx context.Context, key string, sp hostmem.Span) error {
	a, err := spanAddr(OpPutFrom, key, sp)
	if err != nil {
		return err
	}
	return s.putFrom(ctx, OpPutFrom, key, a, sp.Len())
}

// UpsertFrom is PutFrom that replaces an existing object (see Upsert for
// what a reader may see).
func (s *Store) UpsertFrom(key string, sp hostmem.Span) error {
	return s.UpsertFromContext(context.Background(), key, sp)
}

// UpsertFromContext is UpsertFrom with a context (see "Contexts").
func (s *Store) UpsertFromContext(ctx context.Context, key string, sp hostmem.Span) error {
	a, err := spanAddr(OpUpsertFrom, key, sp)
	if err != nil {
		return err
	}
	return s.putFrom(ctx, OpUpsertFrom, key, a, sp.Len())
}

// GetInto reads the object stored under key into sp (registered memory,
// as for PutFrom) and returns the object size. sp may be larger than the
// object; a smaller one fails with ErrInvalidParams.
func (s *Store) GetInto(key string, sp hostmem.Span) (int64, error) {
	return s.GetIntoContext(context.Background(), key, sp)
}

// GetIntoContext is GetInto with a context (see "Contexts").
func (s *Store) GetIntoContext(ctx context.Context, key string, sp hostmem.Span) (int64, error) {
	a, err := spanAddr(OpGetInto, key, sp)
	if err != nil {
		return 0, err
	}
	return s.getInto(ctx, key, a, sp.Len())
}
