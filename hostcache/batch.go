package hostcache

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// batch is reusable scratch for one storage call: the component keys
// (packed), the page buffer meta and, when pages are multi-buffer objects,
// the CSR offsets that group the meta under the keys. Its slices grow once
// and are reused, so preparing a batch of the same shape again does not
// allocate. A batch is not safe for concurrent use; the backend keeps a few
// in slots and a sync.Pool.
type batch struct {
	// keys are the tagged component keys, page-major.
	keys hostmem.Keys
	// bufs are the buffers of every key, key-major; bufs.Offsets is set
	// when some key owns more than one buffer (the multi-buffer calls).
	bufs hostmem.Buffers
	// pages is the number of logical pages, keysPerPage the key multiplier
	// of a single-pool batch (v1), 0 for a v2 batch that mixes pools.
	pages       int
	keysPerPage int

	offs    []uint64 // keeps the capacity of bufs.Offsets across resets
	segs    []segment
	kc      keyCache
	results []int64
	exist   []int64
	sub     subset
}

// segment is the part of a batch that belongs to one pool transfer.
type segment struct {
	name     PoolName
	keyStart int
	keyEnd   int
	m        int // keys per page
	pages    int
	skip     bool
}

type subset struct {
	idx     []int
	keys    hostmem.Keys
	bufs    hostmem.Buffers
	results []int64
}

// nkeys returns the number of keys of the batch.
func (b *batch) nkeys() int { return b.keys.Len() }

// multi reports whether the batch goes to the multi-buffer store calls.
func (b *batch) multi() bool { return b.bufs.Offsets != nil }

func (b *batch) reset() {
	b.keys.Reset()
	b.bufs.Addrs = b.bufs.Addrs[:0]
	b.bufs.Sizes = b.bufs.Sizes[:0]
	if b.bufs.Offsets != nil {
		b.offs = b.bufs.Offsets[:0]
	}
	b.bufs.Offsets = nil
	b.pages = 0
	b.keysPerPage = 0
	b.segs = b.segs[:0]
}

// addSegment appends one pool's pages: keys = prefix+pageKey+suffix for each
// suffix, meta from metaFn. When a page has more entries than keys, the
// entries are grouped (packed) under the keys, which is only allowed with one
// key per page.
func (b *batch) addSegment(name PoolName, scheme *KeyScheme, pageKeys []string, suffixes []string,
	metaFn func(a []uintptr, s []uint64) ([]uintptr, []uint64, error), pool Pool, pages int) error {
	k0, a0 := b.nkeys(), len(b.bufs.Addrs)
	var err error
	b.bufs.Addrs, b.bufs.Sizes, err = metaFn(b.bufs.Addrs, b.bufs.Sizes)
	if err != nil {
		return err
	}
	b.buildKeys(scheme.tagPrefix, pageKeys, suffixes)
	nk, ne := b.nkeys()-k0, len(b.bufs.Addrs)-a0
	m := len(suffixes)
	b.segs = append(b.segs, segment{name: name, keyStart: k0, keyEnd: b.nkeys(), m: m, pages: pages})
	switch {
	case ne == nk:
		if b.multi() {
			b.extendOffsets(nk, 1)
		}
		return nil
	case ne > nk && nk > 0 && ne%nk == 0:
		if m != 1 {
			return &LayoutError{Pool: pool.String(), Kind: pool.host().kind, Layout: pool.Layout(), Op: "storage",
				Reason: fmt.Sprintf("pages have %d buffers for %d keys per page (MHA K and V); grouping consecutive buffers would mix K and V, so multi-buffer pages are only supported with one key per page (MLA-style); use page_first or page_first_direct for MHA", ne/(nk/m), m)}
		}
		if !b.multi() {
			// Earlier keys of this batch had one buffer each.
			b.bufs.Offsets = append(slices.Grow(b.offs[:0], b.nkeys()+1), 0)
			b.extendOffsets(k0, 1)
		}
		b.extendOffsets(nk, ne/nk)
		return nil
	default:
		_, err := packCSR(nk, ne, ne, nil)
		if err == nil {
			err = &PackError{Keys: nk, Ptrs: ne, Sizes: ne, Reason: "entries do not match keys"}
		}
		return fmt.Errorf("hostcache: pool %s (%s): %w", string(name), pool, err)
	}
}

// extendOffsets appends offsets for n more keys of nbuf buffers each.
func (b *batch) extendOffsets(n, nbuf int) {
	o := b.bufs.Offsets
	last := o[len(o)-1]
	o = slices.Grow(o, n)
	for i := 0; i < n; i++ {
		last += uint64(nbuf)
		o = append(o, last)
	}
	b.bufs.Offsets = o
}

// keyCache remembers the keys of the first key segment built in a batch so
// that the next build of the same page list (e.g. BatchExists followed by
// BatchGetV1 on a pooled batch) rewrites only the pages whose key changed.
// This rewrites key bytes in place, which is safe because keys leave the
// batch packed (bytes that the Store contract says are not kept), never as
// strings.
type keyCache struct {
	valid  bool
	prefix string
	sfx    []string // compared by identity (same backing array and length)
	pages  []string // the page keys the cached keys were built from
	n      int      // number of keys
	bytes  int      // key bytes they use
}

func sameStrings(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.SliceData(a) == unsafe.SliceData(b))
}

// buildKeys appends the keys of pageKeys×suffixes to b.keys.
func (b *batch) buildKeys(prefix string, pageKeys []string, suffixes []string) {
	total := keysLen(prefix, pageKeys, suffixes)
	if total == 0 {
		return
	}
	first := b.nkeys() == 0
	kc := &b.kc
	if first && kc.valid && kc.prefix == prefix && sameStrings(kc.sfx, suffixes) && len(kc.pages) == len(pageKeys) &&
		kc.bytes == total && cap(b.keys.Offsets) > kc.n && b.refreshKeys(prefix, pageKeys, suffixes) {
		b.keys.Buf = b.keys.Buf[:kc.bytes]
		b.keys.Offsets = b.keys.Offsets[:kc.n+1]
		return
	}
	appendKeys(&b.keys, prefix, pageKeys, suffixes)
	if first {
		kc.valid, kc.prefix, kc.sfx = true, prefix, suffixes
		kc.pages = append(kc.pages[:0], pageKeys...)
		kc.n, kc.bytes = b.nkeys(), len(b.keys.Buf)
	}
}

// refreshKeys rewrites, in place, the keys of every page whose page key
// differs from the cached one; the offsets are unchanged since every page
// key keeps its length. It returns false (leaving a full rebuild to the
// caller) when a page key has a different length or when many pages
// changed.
func (b *batch) refreshKeys(prefix string, pageKeys []string, suffixes []string) bool {
	kc := &b.kc
	if n := len(pageKeys); n > 4 && pageKeys[0] != kc.pages[0] && pageKeys[n-1] != kc.pages[n-1] {
		return false // a new page list: rebuild without comparing every key
	}
	changed, limit := 0, len(pageKeys)/4
	for i, pk := range pageKeys {
		if pk != kc.pages[i] {
			if len(pk) != len(kc.pages[i]) {
				return false
			}
			if changed++; changed > limit {
				return false // mostly new pages: the sequential build is faster
			}
		}
	}
	if changed == 0 {
		return true
	}
	a := b.keys.Buf[:kc.bytes]
	off := 0
	for i, pk := range pageKeys {
		stem := len(prefix) + len(pk)
		rewrite := pk != kc.pages[i]
		for _, x := range suffixes {
			if rewrite {
				o := off
				o += copy(a[o:], prefix)
				o += copy(a[o:], pk)
				copy(a[o:], x)
			}
			off += stem + len(x)
		}
		if rewrite {
			kc.pages[i] = pk
		}
	}
	return true
}

// objectSize returns the size of key i's object.
func (b *batch) objectSize(i int) uint64 { return b.bufs.ObjectSize(i) }
