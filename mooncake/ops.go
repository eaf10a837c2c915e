package mooncake

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/mooncake-go/mooncake-go/internal/cabi"
	"github.com/mooncake-go/mooncake-go/internal/memreg"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// Put stores a copy of value under key. value may be any memory (it is
// copied through the client's local buffer). Puts are write-once, as in
// Mooncake: when key already exists its value is kept and Put returns nil.
// Use Upsert to replace.
func (s *Store) Put(key string, value []byte) error {
	return s.putCopy(context.Background(), OpPut, key, value)
}

// PutContext is Put with a context that bounds the call's wait to be
// combined: see "Contexts" in the package documentation.
func (s *Store) PutContext(ctx context.Context, key string, value []byte) error {
	return s.putCopy(ctx, OpPut, key, value)
}

// Upsert stores a copy of value under key, replacing any existing object.
//
// Upstream replaces an object of the same size in place, and a get on
// another client that fetched the object's address just before copies while
// it is overwritten: it can return a mix of the two versions (measured in
// the soak; docs/faults.md). Do not upsert a key that other clients may be
// reading; write a new key and remove the old one without force.
func (s *Store) Upsert(key string, value []byte) error {
	return s.putCopy(context.Background(), OpUpsert, key, value)
}

// UpsertContext is Upsert with a context (see "Contexts").
func (s *Store) UpsertContext(ctx context.Context, key string, value []byte) error {
	return s.putCopy(ctx, OpUpsert, key, value)
}

func (s *Store) putCopy(ctx context.Context, op Op, key string, value []byte) error {
	if s.policyError() != nil {
		return &Error{Op: op, Key: key, Code: ErrInvalidParams, Err: s.policyError()}
	}
	c, err := s.enter(ctx, op, key)
	if err != nil {
		return err
	}
	t0 := now()
	k := combPut
	if op == OpUpsert {
		k = combUpsert
	}
	rc, crossed := c.call(ctx.Done(), k, &combCall{view: s, key: key, buf: value})
	c.counted(op, t0, rc, uint64(len(value)), crossed)
	c.gate.Leave()
	if crossed == 0 {
		return ctxErr(op, key, ctx.Err())
	}
	return codeErr(op, key, rc)
}

// enter admits a single-key call with a context to the store: ErrClosed
// when it is closed, a nil context refused, and one that has ended
// returned as the call's error without a call. The caller must Leave c's
// gate when err is nil.
func (s *Store) enter(ctx context.Context, op Op, key string) (c *conn, err error) {
	c = s.c()
	if !c.gate.Enter() {
		return nil, closedErr(op, key)
	}
	switch {
	case ctx == nil:
		err = &Error{Op: op, Key: key, Code: ErrInvalidParams, Err: errors.New("nil context")}
	case ctx.Err() != nil:
		err = ctxErr(op, key, ctx.Err())
	}
	if err != nil {
		c.gate.Leave()
		return nil, err
	}
	return c, nil
}

// ctxErr is the error of a call whose context ended before it crossed.
func ctxErr(op Op, key string, err error) error { return &Error{Op: op, Key: key, Err: err} }

// Get returns a copy of the object stored under key. A missing key gives an
// error matching ErrObjectNotFound.
func (s *Store) Get(key string) ([]byte, error) {
	return s.appendGet(context.Background(), nil, key)
}

// GetContext is Get with a context (see "Contexts").
func (s *Store) GetContext(ctx context.Context, key string) ([]byte, error) {
	return s.appendGet(ctx, nil, key)
}

// AppendGet appends a copy of the object stored under key to dst and
// returns the extended slice, like the append functions of strconv. When
// dst has room for the object nothing is allocated, so a loop that passes
// buf[:0] reads any number of objects with one buffer:
//
//	buf, err = st.AppendGet(buf[:0], key)
//
// On error dst is returned unchanged. Like Get, it reads the object once
// (no separate size query), staged in the client's local buffer.
func (s *Store) AppendGet(dst []byte, key string) ([]byte, error) {
	return s.appendGet(context.Background(), dst, key)
}

// AppendGetContext is AppendGet with a context (see "Contexts").
func (s *Store) AppendGetContext(ctx context.Context, dst []byte, key string) ([]byte, error) {
	return s.appendGet(ctx, dst, key)
}

func (s *Store) appendGet(ctx context.Context, dst []byte, key string) ([]byte, error) {
	c, err := s.enter(ctx, OpGet, key)
	if err != nil {
		return dst, err
	}
	t0 := now()
	a := combCall{key: key, buf: dst}
	size, crossed := c.call(ctx.Done(), combGet, &a)
	c.counted(OpGet, t0, size, uint64(max(size, 0)), crossed)
	c.gate.Leave()
	if crossed == 0 {
		return dst, ctxErr(OpGet, key, ctx.Err())
	}
	if a.tooBig {
		return dst, &Error{Op: OpGet, Key: key, Code: ErrBufferOverflow,
			Err: fmt.Errorf("%d bytes after %d do not fit in a slice", a.size, len(dst))}
	}
	if size < 0 {
		return dst, codeErr(OpGet, key, size)
	}
	return a.out, nil
}

// growForGet returns dst extended by size bytes, reusing its capacity when
// it can; false if the total length does not fit in an int. (size is at
// most the local buffer size: the engines refuse larger copying reads.)
func growForGet(dst []byte, size int64) ([]byte, bool) {
	if size < 0 || size > int64(math.MaxInt-len(dst)) {
		return nil, false
	}
	n := len(dst) + int(size)
	if n <= cap(dst) {
		return dst[:n], true
	}
	if len(dst) == 0 {
		return make([]byte, n), true // exact size, as Get promises
	}
	out := make([]byte, n, n+n/4)
	copy(out, dst)
	return out, true
}

// GetSize returns the size in bytes of the object stored under key.
func (s *Store) GetSize(key string) (int64, error) {
	if !s.c().gate.Enter() {
		return 0, closedErr(OpGetSize, key)
	}
	t0 := now()
	n := s.c().handle.GetSize(key)
	s.c().stats.single(OpGetSize, t0, n, 0)
	s.c().gate.Leave()
	if n < 0 {
		return 0, codeErr(OpGetSize, key, n)
	}
	return n, nil
}

// putFrom is every single zero-copy put: the typed PutFrom and UpsertFrom
// and the Raw ones.
func (s *Store) putFrom(ctx context.Context, op Op, key string, addr uintptr, size uint64) error {
	if size == 0 {
		// Upstream's put_from/upsert_from report success for an empty buffer
		// and store nothing; a later Get then finds no object. Refuse instead.
		return &Error{Op: op, Key: key, Code: ErrInvalidParams, Err: errors.New("size 0: nothing to store")}
	}
	if s.policyError() != nil {
		return &Error{Op: op, Key: key, Code: ErrInvalidParams, Err: s.policyError()}
	}
	c, err := s.enter(ctx, op, key)
	if err != nil {
		return err
	}
	t0 := now()
	k := combPutFrom
	if op == OpUpsertFrom {
		k = combUpsertFrom
	}
	rc, crossed := c.call(ctx.Done(), k, &combCall{view: s, key: key, addr: addr, size: size})
	c.counted(op, t0, rc, size, crossed)
	c.gate.Leave()
	if crossed == 0 {
		return ctxErr(op, key, ctx.Err())
	}
	return codeErr(op, key, rc)
}

// getInto is every single zero-copy get: it reads the object into
// [addr, addr+size) and returns the object size.
func (s *Store) getInto(ctx context.Context, key string, addr uintptr, size uint64) (int64, error) {
	c, err := s.enter(ctx, OpGetInto, key)
	if err != nil {
		return 0, err
	}
	t0 := now()
	n, crossed := c.call(ctx.Done(), combGetInto, &combCall{key: key, addr: addr, size: size})
	c.counted(OpGetInto, t0, n, uint64(max(n, 0)), crossed)
	c.gate.Leave()
	if crossed == 0 {
		return 0, ctxErr(OpGetInto, key, ctx.Err())
	}
	if n < 0 {
		return 0, codeErr(OpGetInto, key, n)
	}
	return n, nil
}

// IsExist reports whether key exists.
func (s *Store) IsExist(key string) (bool, error) {
	return s.isExist(context.Background(), key)
}

// IsExistContext is IsExist with a context (see "Contexts").
func (s *Store) IsExistContext(ctx context.Context, key string) (bool, error) {
	return s.isExist(ctx, key)
}

func (s *Store) isExist(ctx context.Context, key string) (bool, error) {
	c, err := s.enter(ctx, OpIsExist, key)
	if err != nil {
		return false, err
	}
	t0 := now()
	r, crossed := c.call(ctx.Done(), combIsExist, &combCall{key: key})
	c.counted(OpIsExist, t0, r, 0, crossed)
	c.gate.Leave()
	if crossed == 0 {
		return false, ctxErr(OpIsExist, key, ctx.Err())
	}
	if r < 0 {
		return false, codeErr(OpIsExist, key, r)
	}
	return r == 1, nil
}

// Remove deletes the object stored under key. A missing key gives
// ErrObjectNotFound. Mooncake grants a read lease (10 s by default) on every
// get; removing a leased object fails with ErrObjectHasLease unless force.
// force frees the memory at once: a get still copying from it may return
// the bytes of whatever is stored there next (docs/faults.md).
func (s *Store) Remove(key string, force bool) error {
	return s.remove(context.Background(), key, force)
}

// RemoveContext is Remove with a context (see "Contexts").
func (s *Store) RemoveContext(ctx context.Context, key string, force bool) error {
	return s.remove(ctx, key, force)
}

func (s *Store) remove(ctx context.Context, key string, force bool) error {
	c, err := s.enter(ctx, OpRemove, key)
	if err != nil {
		return err
	}
	t0 := now()
	k := combRemove
	if force {
		k = combRemoveForce
	}
	rc, crossed := c.call(ctx.Done(), k, &combCall{key: key})
	c.counted(OpRemove, t0, rc, 0, crossed)
	c.gate.Leave()
	if crossed == 0 {
		return ctxErr(OpRemove, key, ctx.Err())
	}
	return codeErr(OpRemove, key, rc)
}

// RemoveByRegex deletes every object whose key matches pattern (ECMAScript
// syntax, as upstream's std::regex; a key matches when any part of it
// does) and returns how many were removed. Leased objects are skipped
// unless force.
//
// Upstream's master runs the pattern through a backtracking matcher over
// every key, and some patterns crash or hang it for every client ("(a*)*b"
// spins it for good). So only a safe subset is sent, on both backends:
// literals, ".", classes ([a-z0-9_], [^/]), \d \w \s and their negations,
// escaped punctuation, groups (...) and (?:...) with |, the anchors ^ and
// $, and the quantifiers * + ? {m} {m,} {m,n} (greedy or lazy) on a single
// atom; at most two repetitions that match a variable number of times
// (? * + {m,} {m,n}), bounds up to 100, at most eight '|' and 1,024 bytes.
// Refused: a quantified group, a repeated quantifier, back-references,
// look-around, \b, \x and \u escapes. Any other pattern fails with
// ErrInvalidParams wrapping ErrPatternRefused. The embedded engine matches
// the subset in time linear in the key; the master's backtracking still
// costs a polynomial in the key's length, negligible for ordinary keys.
// Each call scans every key on one of the master's few RPC threads, and
// other clients' calls queued on that thread wait for it: where the keys
// are known, BatchRemove is cheaper for everyone (docs/combining.md).
//
//	st.RemoveByRegex("^sglang/[0-9a-f]+_k$", false) // keys of one kind
//	st.RemoveByRegex("^tenant-7/.*", true)          // a prefix
func (s *Store) RemoveByRegex(pattern string, force bool) (int64, error) {
	if pattern == "" {
		return 0, &Error{Op: OpRemoveByRegex, Code: ErrInvalidParams, Err: errors.New("empty pattern")}
	}
	if !s.c().gate.Enter() {
		return 0, closedErr(OpRemoveByRegex, pattern)
	}
	t0 := now()
	n := s.c().handle.RemoveByRegex(pattern, force)
	s.c().stats.single(OpRemoveByRegex, t0, n, 0)
	s.c().gate.Leave()
	if n < 0 {
		return 0, codeErr(OpRemoveByRegex, pattern, n)
	}
	return n, nil
}

// RemoveAll deletes every object in the cluster and returns how many were
// removed. Leased objects are skipped unless force.
func (s *Store) RemoveAll(force bool) (int64, error) {
	if !s.c().gate.Enter() {
		return 0, closedErr(OpRemoveAll, "")
	}
	t0 := now()
	n := s.c().handle.RemoveAll(force)
	s.c().stats.single(OpRemoveAll, t0, n, 0)
	s.c().gate.Leave()
	if n < 0 {
		return 0, codeErr(OpRemoveAll, "", n)
	}
	return n, nil
}

// RegisterBuffer registers [addr, addr+size) for zero-copy transfers:
// memory the program mapped itself (hostmem memory goes through
// RegisterMemory, which also keeps it from being freed while registered).
// The memory must stay mapped until UnregisterBuffer or Close, and must not
// be Go heap memory. Registering a null or empty range, one that overlaps a
// registered range, or one that is not all mapped memory of the process
// (hostmem.CheckMapped) fails with ErrInvalidParams.
func (s *Store) RegisterBuffer(addr uintptr, size uint64) error {
	if !s.c().gate.Enter() {
		return closedErr(OpRegisterBuffer, "")
	}
	if err := hostmem.CheckMapped(addr, size); err != nil {
		s.c().gate.Leave()
		return &Error{Op: OpRegisterBuffer, Code: ErrInvalidParams, Err: err}
	}
	t0 := now()
	rc := s.c().handle.RegisterBuffer(addr, size)
	s.c().stats.single(OpRegisterBuffer, t0, int64(rc), 0)
	s.c().gate.Leave()
	return regionErr(OpRegisterBuffer, rc, fmt.Errorf("region [%#x, +%d)", addr, size))
}

// UnregisterBuffer unregisters the region that starts at addr. For the
// start of memory registered with RegisterMemory it is UnregisterMemory:
// the registration the memory counts ends with it.
func (s *Store) UnregisterBuffer(addr uintptr) error {
	c := s.c()
	if !c.gate.Enter() {
		return closedErr(OpUnregisterBuffer, "")
	}
	defer c.gate.Leave()
	c.memMu.Lock() // as UnregisterMemory: one count for both calls
	defer c.memMu.Unlock()
	t0 := now()
	rc := c.handle.UnregisterBuffer(addr)
	c.stats.single(OpUnregisterBuffer, t0, int64(rc), 0)
	if rc == 0 {
		if m := c.mems[addr]; m != nil {
			delete(c.mems, addr)
			memreg.Unmark(m)
		}
	}
	return regionErr(OpUnregisterBuffer, rc, fmt.Errorf("region at %#x", addr))
}

// regionErr is the error of a registration call: nil for rc 0, else the
// code with what names the region.
func regionErr(op Op, rc int32, what error) error {
	if rc == 0 {
		return nil
	}
	if rc == cabi.CodeNoCgo {
		return &Error{Op: op, Code: ErrNotSupported, Err: ErrNoCgo}
	}
	return &Error{Op: op, Code: codeOf(int64(rc)), Err: what}
}
