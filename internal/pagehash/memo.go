package pagehash

import (
	"bytes"
	"hash/maphash"
	"math/bits"
	"sync"
)

// Memo remembers the digests of recently hashed pages, keyed by the whole
// input of their SHA-256 (the previous digest, the page's words), which it
// compares in full on every hit: a digest found in the memo is the digest
// SHA-256 would give. Requests to a router share prefixes (a system prompt,
// the turns of a conversation so far), so most pages of a request were
// hashed before; a hit costs a hash of the input, a slot's comparison and
// a striped lock instead of the page's SHA-256 (docs/prefix.md, "The
// memo"). It is a direct-mapped table of a fixed number of slots: a page
// replaces whatever page held its slot, so it needs no eviction list and a
// miss costs little more than the SHA-256 it could not save. Safe for
// concurrent use.
type Memo struct {
	seed   maphash.Seed
	mask   uint64
	stride int // bytes of page words a slot holds
	slots  []memoSlot
	words  []byte // slot i's page words at [i*stride, i*stride+n)
	locks  [memoLocks]memoLock
}

// Striped locks keep concurrent hashing from serialising on one lock.
const memoLocks = 64

type memoLock struct {
	sync.Mutex
	hits, misses, used uint64
	_                  [40]byte // keep the stripes off each other's cache lines
}

type memoSlot struct {
	key     uint64
	prior   [Size]byte // the previous digest, when chained
	digest  [Size]byte
	n       int32 // length of the page's words; 0: empty
	chained bool
	wide    bool
}

// NewMemo returns a memo of pages slots (rounded up to a power of two) for
// spec's hashing (its page size bounds the words a slot holds). A slot is
// about 80 bytes plus the page's words (4 bytes a token; 8 with EAGLE
// bigrams; twice that for wide pages); the memory is touched as slots fill.
func NewMemo(pages int, s Spec) *Memo {
	n := uint64(1) << bits.Len64(uint64(max(pages, 1)-1))
	stride := 4 * s.PageSize
	if s.Bigram {
		stride *= 2
	}
	if s.Wide {
		stride *= 2
	}
	return &Memo{seed: maphash.MakeSeed(), mask: n - 1, stride: stride,
		slots: make([]memoSlot, n), words: make([]byte, int(n)*stride)}
}

// MemoStats counts a memo's lookups.
type MemoStats struct {
	Hits, Misses uint64
	Pages        int // slots holding a page
}

// Stats sums the stripes' counts.
func (m *Memo) Stats() MemoStats {
	var st MemoStats
	for i := range m.locks {
		l := &m.locks[i]
		l.Lock()
		st.Hits += l.hits
		st.Misses += l.misses
		st.Pages += int(l.used)
		l.Unlock()
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

func (m *Memo) lock(i uint64) *memoLock { return &m.locks[i%memoLocks] }

// get copies the digest remembered for this input into sum (which holds
// the prior) and reports whether there was one.
func (m *Memo) get(key uint64, chained, wide bool, sum *[Size]byte, b []byte) bool {
	i := key & m.mask
	l := m.lock(i)
	l.Lock()
	s := &m.slots[i]
	off := int(i) * m.stride
	ok := s.n != 0 && s.key == key && s.chained == chained && s.wide == wide && int(s.n) == len(b) &&
		(!chained || s.prior == *sum) && bytes.Equal(m.words[off:off+len(b)], b)
	if ok {
		*sum = s.digest
		l.hits++
	} else {
		l.misses++
	}
	l.Unlock()
	return ok
}

// put remembers digest for the input (prior if chained, b) in its slot. A
// page whose words do not fit a slot (another spec's) is not remembered.
func (m *Memo) put(key uint64, chained, wide bool, prior *[Size]byte, b []byte, digest *[Size]byte) {
	if len(b) == 0 || len(b) > m.stride {
		return
	}
	i := key & m.mask
	l := m.lock(i)
	l.Lock()
	s := &m.slots[i]
	if s.n == 0 {
		l.used++
	}
	*s = memoSlot{key: key, digest: *digest, n: int32(len(b)), chained: chained, wide: wide}
	if chained {
		s.prior = *prior
	}
	copy(m.words[int(i)*m.stride:], b)
	l.Unlock()
}
