package hostcache

import (
	"fmt"
	"slices"
)

// PackMultiBufferMeta groups a flat, page-major meta list under keys
// (SGLang _pack_multi_buffer_meta, hardened as hicache-spec §3.2 recommends)
// and returns the grouping in CSR form: key i owns
// ptrs[offsets[i]:offsets[i+1]] and the same range of sizes. ptrs and sizes
// are not copied or reordered, so "flattening" a packed list is the identity.
//
// It returns nil offsets when no packing is needed (len(ptrs) == len(keys):
// one buffer per key), and an error (errors.Is(err, ErrPack)) when:
//   - len(ptrs) != len(sizes), even when no packing is needed;
//   - there are no keys but there are pointers;
//   - there are keys but no pointers;
//   - there are fewer pointers than keys;
//   - len(ptrs) is not a multiple of len(keys).
//
// Empty keys and empty lists give nil offsets and no error. The offsets are
// appended to dst[:0] (pass a reused slice to avoid allocating).
//
// Grouping consecutive entries is only correct when each key owns a fixed
// number of consecutive entries — one key per page with a fixed number of
// entries per page. Never pack MHA K/V (K and V of one layer are adjacent);
// the Backend refuses that case.
func PackMultiBufferMeta(keys []string, ptrs []uintptr, sizes []uint64, dst []uint64) ([]uint64, error) {
	return packCSR(len(keys), len(ptrs), len(sizes), dst)
}

func packCSR(nk, np, ns int, dst []uint64) ([]uint64, error) {
	if np != ns {
		return nil, &PackError{Keys: nk, Ptrs: np, Sizes: ns, Reason: "pointer and size counts differ"}
	}
	switch {
	case nk == 0 && np == 0:
		return nil, nil
	case nk == 0:
		return nil, &PackError{Keys: nk, Ptrs: np, Sizes: ns, Reason: "pointers without keys"}
	case np == 0:
		return nil, &PackError{Keys: nk, Ptrs: np, Sizes: ns, Reason: "keys without pointers"}
	case np == nk:
		return nil, nil
	case np < nk:
		return nil, &PackError{Keys: nk, Ptrs: np, Sizes: ns, Reason: "fewer pointers than keys"}
	case np%nk != 0:
		return nil, &PackError{Keys: nk, Ptrs: np, Sizes: ns, Reason: fmt.Sprintf("%d pointers do not divide evenly among %d keys", np, nk)}
	}
	nbuf := uint64(np / nk)
	dst = slices.Grow(dst[:0], nk+1)[:nk+1]
	for i := range dst {
		dst[i] = uint64(i) * nbuf
	}
	return dst, nil
}

// MultiBuffers is a CSR multi-buffer meta list: key i's object is the
// concatenation of Addrs[Offsets[i]:Offsets[i+1]] (sizes likewise). A nil
// Offsets means one buffer per key (Addrs[i], Sizes[i]).
type MultiBuffers struct {
	Addrs   []uintptr
	Sizes   []uint64
	Offsets []uint64
}

// UsesMultiBuffer reports whether m is in multi-buffer form (SGLang
// _uses_multi_buffer: non-empty and grouped). Such a batch goes to
// BatchPutFromMultiBuffers / BatchGetIntoMultiBuffers.
func UsesMultiBuffer(m MultiBuffers) bool { return len(m.Offsets) > 1 }

// Len returns the number of keys (groups) m describes.
func (m MultiBuffers) Len() int {
	if m.Offsets != nil {
		if len(m.Offsets) == 0 {
			return 0
		}
		return len(m.Offsets) - 1
	}
	return len(m.Addrs)
}

// Group returns key i's buffers.
func (m MultiBuffers) Group(i int) ([]uintptr, []uint64) {
	if m.Offsets == nil {
		return m.Addrs[i : i+1], m.Sizes[i : i+1]
	}
	lo, hi := m.Offsets[i], m.Offsets[i+1]
	return m.Addrs[lo:hi], m.Sizes[lo:hi]
}

// ObjectSize returns the byte size of key i's object (sum of its sizes).
func (m MultiBuffers) ObjectSize(i int) uint64 {
	_, s := m.Group(i)
	var n uint64
	for _, x := range s {
		n += x
	}
	return n
}

// Flatten returns the concatenation of every group (a new slice): the inverse
// of packing.
func (m MultiBuffers) Flatten() ([]uintptr, []uint64) {
	var a []uintptr
	var s []uint64
	for i := 0; i < m.Len(); i++ {
		ga, gs := m.Group(i)
		a = append(a, ga...)
		s = append(s, gs...)
	}
	return a, s
}

// Nested returns m as nested slices, the shape SGLang passes to
// batch_put_from_multi_buffers (for debugging and comparisons).
func (m MultiBuffers) Nested() ([][]uintptr, [][]uint64) {
	a := make([][]uintptr, m.Len())
	s := make([][]uint64, m.Len())
	for i := range a {
		ga, gs := m.Group(i)
		a[i], s[i] = slices.Clone(ga), slices.Clone(gs)
	}
	return a, s
}

// Validate checks the CSR invariants the Store multi-buffer calls require
// for n keys.
func (m MultiBuffers) Validate(n int) error {
	if len(m.Addrs) != len(m.Sizes) {
		return &PackError{Keys: n, Ptrs: len(m.Addrs), Sizes: len(m.Sizes), Reason: "pointer and size counts differ"}
	}
	if m.Offsets == nil {
		if len(m.Addrs) != n {
			return &PackError{Keys: n, Ptrs: len(m.Addrs), Sizes: len(m.Sizes), Reason: "one buffer per key expected"}
		}
		return nil
	}
	if len(m.Offsets) != n+1 || m.Offsets[0] != 0 || m.Offsets[n] != uint64(len(m.Addrs)) {
		return &PackError{Keys: n, Ptrs: len(m.Addrs), Sizes: len(m.Sizes), Reason: "offsets do not cover the buffers"}
	}
	for i := 0; i < n; i++ {
		if m.Offsets[i] > m.Offsets[i+1] {
			return &PackError{Keys: n, Ptrs: len(m.Addrs), Sizes: len(m.Sizes), Reason: "offsets decrease"}
		}
	}
	return nil
}
