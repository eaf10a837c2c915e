package hostcache

import (
	"fmt"
	"slices"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// PackMultiBufferMeta groups a flat, page-major meta list under keys
// (SGLang _pack_multi_buffer_meta, with explicit errors where it would mis-group)
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

// UsesMultiBuffer reports whether m is in multi-buffer form (SGLang
// _uses_multi_buffer: non-empty and grouped). Such a batch goes to the
// multi-buffer store calls.
func UsesMultiBuffer(m hostmem.Buffers) bool { return len(m.Offsets) > 1 }
