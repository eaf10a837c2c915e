package hostcache

import (
	"fmt"
	"slices"
	"unsafe"
)

// Batch is reusable scratch for one storage call: the component keys, the
// page buffer meta and, when pages are multi-buffer objects, the CSR offsets
// that group the meta under the keys. Its slices grow once and are reused, so
// preparing a batch of the same shape again does not allocate.
//
// A Batch is not safe for concurrent use. Keys point into an internal arena
// and are valid only until the Batch is prepared again (see Keys).
type Batch struct {
	// Keys are the tagged component keys, page-major.
	Keys []string
	// Addrs and Sizes are the buffers of every key, key-major: key i owns
	// Addrs[Offsets[i]:Offsets[i+1]] when Multi, else Addrs[i].
	Addrs []uintptr
	Sizes []uint64
	// Offsets is the CSR index (len(Keys)+1 entries) when Multi.
	Offsets []uint64
	// Multi reports whether any key owns more than one buffer; the batch
	// then goes to the multi-buffer store calls.
	Multi bool
	// Pages is the number of logical pages, KeysPerPage the key multiplier of
	// a single-pool batch (v1), 0 for a v2 batch that mixes pools.
	Pages       int
	KeysPerPage int

	segs      []segment
	arenaUsed int
	kc        keyCache
	keys      Keys
	results   []int64
	exist     []int64
	sub       subset
	pageOK    []bool
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
	keys    []string
	addrs   []uintptr
	sizes   []uint64
	offsets []uint64
	results []int64
}

// MultiBuffers returns the batch meta as a MultiBuffers value (Offsets nil
// when the batch is single-buffer).
func (b *Batch) MultiBuffers() MultiBuffers {
	m := MultiBuffers{Addrs: b.Addrs, Sizes: b.Sizes}
	if b.Multi {
		m.Offsets = b.Offsets
	}
	return m
}

// ObjectSize returns the size of key i's object.
func (b *Batch) ObjectSize(i int) uint64 {
	if !b.Multi {
		return b.Sizes[i]
	}
	var n uint64
	for _, s := range b.Sizes[b.Offsets[i]:b.Offsets[i+1]] {
		n += s
	}
	return n
}

func (b *Batch) reset() {
	b.Keys = b.keys.Keys[:0]
	b.Addrs = b.Addrs[:0]
	b.Sizes = b.Sizes[:0]
	b.Offsets = b.Offsets[:0]
	b.Multi = false
	b.Pages = 0
	b.KeysPerPage = 0
	b.segs = b.segs[:0]
	b.arenaUsed = 0
}

// addSegment appends one pool's pages: keys = prefix+pageKey+suffix for each
// suffix, meta from metaFn. When a page has more entries than keys, the
// entries are grouped (packed) under the keys, which is only allowed with one
// key per page.
func (b *Batch) addSegment(name PoolName, scheme *KeyScheme, pageKeys []string, suffixes []string,
	metaFn func(a []uintptr, s []uint64) ([]uintptr, []uint64, error), pool Pool, pages int) error {
	k0, a0 := len(b.Keys), len(b.Addrs)
	var err error
	b.Addrs, b.Sizes, err = metaFn(b.Addrs, b.Sizes)
	if err != nil {
		return err
	}
	b.Keys = buildKeysAt(b, scheme.tagPrefix, pageKeys, suffixes)
	nk, ne := len(b.Keys)-k0, len(b.Addrs)-a0
	m := len(suffixes)
	b.segs = append(b.segs, segment{name: name, keyStart: k0, keyEnd: len(b.Keys), m: m, pages: pages})
	switch {
	case ne == nk:
		if b.Multi {
			b.extendOffsets(nk, 1)
		}
		return nil
	case ne > nk && nk > 0 && ne%nk == 0:
		if m != 1 {
			return &LayoutError{Pool: pool.String(), Kind: pool.host().kind, Layout: pool.Layout(), Op: "storage",
				Reason: fmt.Sprintf("pages have %d buffers for %d keys per page (MHA K and V); grouping consecutive buffers would mix K and V, so multi-buffer pages are only supported with one key per page (MLA-style); use page_first or page_first_direct for MHA", ne/(nk/m), m)}
		}
		if !b.Multi {
			b.Multi = true
			b.Offsets = slices.Grow(b.Offsets[:0], len(b.Keys)+1)[:1]
			b.Offsets[0] = 0
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
func (b *Batch) extendOffsets(n, nbuf int) {
	last := b.Offsets[len(b.Offsets)-1]
	b.Offsets = slices.Grow(b.Offsets, n)
	for i := 0; i < n; i++ {
		last += uint64(nbuf)
		b.Offsets = append(b.Offsets, last)
	}
}

// keySlack is the spare arena room appendKeys may scribble into (it stores
// short suffixes as one 8-byte word).
const keySlack = 8

// keyCache remembers the first key segment built in a Batch so that the
// next build of the same page list (e.g. BatchExists followed by
// BatchGetV1 on a pooled Batch, or a caller re-preparing its own Batch)
// rewrites only the pages whose key changed.
type keyCache struct {
	valid  bool
	prefix string
	sfx    []string // compared by identity (same backing array and length)
	pages  []string // the page keys the cached keys were built from
	n      int      // number of keys
	bytes  int      // arena bytes they use
}

func sameStrings(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.SliceData(a) == unsafe.SliceData(b))
}

// buildKeysAt appends keys for pageKeys×suffixes to b.Keys in the batch
// arena. When a later segment needs more room than is left, a larger arena
// is allocated; earlier keys of this batch keep pointing at the previous,
// unchanged array, so they stay valid.
func buildKeysAt(b *Batch, prefix string, pageKeys []string, suffixes []string) []string {
	total := keysLen(prefix, pageKeys, suffixes)
	if total == 0 {
		return b.Keys
	}
	first := len(b.Keys) == 0 && b.arenaUsed == 0
	kc := &b.kc
	if first && kc.valid && kc.prefix == prefix && sameStrings(kc.sfx, suffixes) && len(kc.pages) == len(pageKeys) &&
		kc.bytes == total && b.refreshKeys(prefix, pageKeys, suffixes) {
		b.Keys = b.keys.Keys[:kc.n]
		b.arenaUsed = kc.bytes
		return b.Keys
	}
	if cap(b.keys.arena)-b.arenaUsed < total+keySlack {
		n := 2 * cap(b.keys.arena)
		if n < b.arenaUsed+total+keySlack {
			n = b.arenaUsed + total + keySlack
		}
		b.keys.arena = make([]byte, n)
		b.arenaUsed = 0
		kc.valid = false // the cached keys live in the previous array
	}
	a := b.keys.arena[:cap(b.keys.arena)]
	keys := appendKeys(b.Keys, a[b.arenaUsed:b.arenaUsed+total+keySlack], prefix, pageKeys, suffixes)
	b.arenaUsed += total
	b.keys.Keys = keys
	if first && b.arenaUsed == total {
		kc.valid, kc.prefix, kc.sfx = true, prefix, suffixes
		kc.pages = append(kc.pages[:0], pageKeys...)
		kc.n, kc.bytes = len(keys), total
	} else if first {
		kc.valid = false
	}
	return keys
}

// refreshKeys rewrites, in place, the keys of every page whose page key
// differs from the cached one. It returns false (leaving a full rebuild to
// the caller) when a page key has a different length or when many pages
// changed.
func (b *Batch) refreshKeys(prefix string, pageKeys []string, suffixes []string) bool {
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
	a := b.keys.arena
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
