package pagehash

import (
	"bytes"
	"hash/maphash"
	"sync"
)

// Memo remembers the digests of recently hashed pages, keyed by the whole
// input of their SHA-256 (the previous digest, the page's words), which it
// compares in full on every hit: a digest found in the memo is the digest
// SHA-256 would give. Requests to a router share prefixes (a system prompt,
// the turns of a conversation so far), so most pages of a request were
// hashed before; a hit costs a map probe and a comparison instead of the
// SHA-256 of the page (docs/prefix.md, "Hashing"). It is bounded (CLOCK
// eviction) and safe for concurrent use.
type Memo struct {
	seed   maphash.Seed
	shards [memoShards]memoShard
}

// Shards keep concurrent hashing from serialising on one lock.
const memoShards = 16

type memoShard struct {
	mu      sync.Mutex
	index   map[uint64]int32 // key hash -> entry
	entries []memoEntry
	words   []byte // entry i's page words at [i*stride, i*stride+len)
	stride  int
	limit   int // entries at most
	hand    int // CLOCK hand
	hits    uint64
	misses  uint64
	_       [64]byte // keep shards' locks off each other's cache lines
}

type memoEntry struct {
	key     uint64
	prior   [Size]byte // the previous digest, when chained
	digest  [Size]byte
	n       int32 // length of the page's words
	chained bool
	wide    bool
	ref     bool // looked up since the hand last passed
}

// NewMemo returns a memo of at most pages pages of spec's hashing (its
// page size bounds the words an entry holds). It holds about 100 bytes
// plus the page's words (4 bytes a token; 8 with EAGLE bigrams; twice that
// for wide pages) per page.
func NewMemo(pages int, s Spec) *Memo {
	m := &Memo{seed: maphash.MakeSeed()}
	stride := 4 * s.PageSize
	if s.Bigram {
		stride *= 2
	}
	if s.Wide {
		stride *= 2
	}
	per := max(1, (pages+memoShards-1)/memoShards)
	for i := range m.shards {
		sh := &m.shards[i]
		sh.stride, sh.limit = stride, per
		sh.index = make(map[uint64]int32, per)
	}
	return m
}

// MemoStats counts a memo's lookups.
type MemoStats struct {
	Hits, Misses uint64
	Pages        int // pages held
}

// Stats sums the shards' counts.
func (m *Memo) Stats() MemoStats {
	var st MemoStats
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		st.Hits += sh.hits
		st.Misses += sh.misses
		st.Pages += len(sh.entries)
		sh.mu.Unlock()
	}
	return st
}

func (m *Memo) key(chained, wide bool, prior *[Size]byte, b []byte) uint64 {
	k := maphash.Bytes(m.seed, b)
	if chained {
		k ^= maphash.Bytes(m.seed, prior[:]) * 0x9e3779b97f4a7c15
	}
	if wide {
		k = ^k
	}
	return k
}

func (m *Memo) shard(key uint64) *memoShard { return &m.shards[key>>60] }

// get copies the digest remembered for this input into sum (which holds
// the prior) and reports whether there was one.
func (m *Memo) get(key uint64, chained, wide bool, sum *[Size]byte, b []byte) bool {
	sh := m.shard(key)
	sh.mu.Lock()
	i, ok := sh.index[key]
	if ok {
		e := &sh.entries[i]
		off := int(i) * sh.stride
		ok = e.chained == chained && e.wide == wide && int(e.n) == len(b) &&
			(!chained || e.prior == *sum) && bytes.Equal(sh.words[off:off+len(b)], b)
		if ok {
			e.ref = true
			*sum = e.digest
		}
	}
	if ok {
		sh.hits++
	} else {
		sh.misses++
	}
	sh.mu.Unlock()
	return ok
}

// put remembers digest for the input (prior if chained, b). A page whose
// words do not fit an entry (another spec's) is not remembered.
func (m *Memo) put(key uint64, chained, wide bool, prior *[Size]byte, b []byte, digest *[Size]byte) {
	sh := m.shard(key)
	if len(b) > sh.stride {
		return
	}
	sh.mu.Lock()
	i, ok := sh.index[key] // a page with the same key hash is replaced
	if !ok {
		if len(sh.entries) < sh.limit {
			i = int32(len(sh.entries))
			sh.entries = append(sh.entries, memoEntry{})
			sh.words = append(sh.words, make([]byte, sh.stride)...)
		} else {
			for sh.entries[sh.hand].ref {
				sh.entries[sh.hand].ref = false
				sh.hand = (sh.hand + 1) % len(sh.entries)
			}
			i = int32(sh.hand)
			sh.hand = (sh.hand + 1) % len(sh.entries)
			delete(sh.index, sh.entries[i].key)
		}
		sh.index[key] = i
	}
	e := &sh.entries[i]
	*e = memoEntry{key: key, digest: *digest, n: int32(len(b)), chained: chained, wide: wide}
	if chained {
		e.prior = *prior
	}
	copy(sh.words[int(i)*sh.stride:], b)
	sh.mu.Unlock()
}
