package hostmem

import (
	"fmt"
	"math"
	"slices"
)

// Buffers is a list of buffers for a batch of keys, in CSR form: key i owns
// Addrs[Offsets[i]:Offsets[i+1]] and the same range of Sizes, and its object
// is the concatenation of those buffers in order. A nil Offsets means one
// buffer per key (Addrs[i], Sizes[i]).
//
// The addresses must lie in memory that stays mapped during the call that
// takes them, never the Go heap (see Memory).
type Buffers struct {
	Addrs   []uintptr
	Sizes   []uint64
	Offsets []uint64
}

// Multi reports whether b groups several buffers per key (Offsets set).
func (b Buffers) Multi() bool { return b.Offsets != nil }

// Len returns the number of keys b describes.
func (b Buffers) Len() int {
	if b.Offsets == nil {
		return len(b.Addrs)
	}
	return max(len(b.Offsets)-1, 0)
}

// Group returns key i's buffers.
func (b Buffers) Group(i int) ([]uintptr, []uint64) {
	if b.Offsets == nil {
		return b.Addrs[i : i+1], b.Sizes[i : i+1]
	}
	lo, hi := b.Offsets[i], b.Offsets[i+1]
	return b.Addrs[lo:hi], b.Sizes[lo:hi]
}

// ObjectSize returns the byte size of key i's object (the sum of its
// sizes), or math.MaxUint64 when the sum does not fit in 64 bits (no such
// object can exist, and no store takes it).
func (b Buffers) ObjectSize(i int) uint64 {
	_, s := b.Group(i)
	var n uint64
	for _, x := range s {
		if n+x < n {
			return math.MaxUint64
		}
		n += x
	}
	return n
}

// Validate checks that b describes exactly n keys: as many addresses as
// sizes; with Offsets, n+1 of them, starting at 0, never decreasing, ending
// at the number of buffers; without, one buffer per key. Every batch call
// of this module checks its buffers with it before crossing into C.
func (b Buffers) Validate(n int) error {
	if n < 0 {
		return shapeErr("buffers", "%d keys: want a count >= 0", n)
	}
	if len(b.Addrs) != len(b.Sizes) {
		return shapeErr("buffers", "%d addresses and %d sizes: want equal counts", len(b.Addrs), len(b.Sizes))
	}
	if b.Offsets == nil {
		if len(b.Addrs) != n {
			return shapeErr("buffers", "%d keys and %d buffers: want one buffer per key", n, len(b.Addrs))
		}
		return nil
	}
	if len(b.Offsets) != n+1 {
		return shapeErr("buffers", "%d keys need %d offsets, got %d", n, n+1, len(b.Offsets))
	}
	if b.Offsets[0] != 0 {
		return shapeErr("buffers", "offsets[0] = %d, want 0", b.Offsets[0])
	}
	for i := 0; i < n; i++ {
		if b.Offsets[i+1] < b.Offsets[i] {
			return shapeErr("buffers", "offsets decrease at key %d: %d then %d", i, b.Offsets[i], b.Offsets[i+1])
		}
	}
	if b.Offsets[n] != uint64(len(b.Addrs)) {
		return shapeErr("buffers", "offsets[%d] = %d, want the number of buffers %d", n, b.Offsets[n], len(b.Addrs))
	}
	return nil
}

// Flatten returns the concatenation of every key's buffers (new slices).
func (b Buffers) Flatten() ([]uintptr, []uint64) {
	var a []uintptr
	var s []uint64
	for i := 0; i < b.Len(); i++ {
		ga, gs := b.Group(i)
		a = append(a, ga...)
		s = append(s, gs...)
	}
	return a, s
}

// Nested returns b as one slice per key, the shape upstream's Python
// batch_put_from_multi_buffers takes (for debugging and comparisons).
func (b Buffers) Nested() ([][]uintptr, [][]uint64) {
	a := make([][]uintptr, b.Len())
	s := make([][]uint64, b.Len())
	for i := range a {
		ga, gs := b.Group(i)
		a[i], s[i] = slices.Clone(ga), slices.Clone(gs)
	}
	return a, s
}

// ShapeError reports a malformed buffer or key list; it matches ErrShape.
type ShapeError struct {
	What   string // "buffers" or "keys"
	Reason string
}

func (e *ShapeError) Error() string { return "hostmem: " + e.What + ": " + e.Reason }

// Is makes errors.Is(err, ErrShape) true.
func (e *ShapeError) Is(target error) bool { return target == ErrShape }

func shapeErr(what, format string, args ...any) error {
	return &ShapeError{What: what, Reason: fmt.Sprintf(format, args...)}
}
