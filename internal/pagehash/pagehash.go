// Package pagehash is SGLang's HiCache page hashing (get_hash_str in
// python/sglang/srt/mem_cache/utils.py over the compiled helper
// mem_cache/cpp_utils/hash_binding.cpp): the one implementation behind
// hostcache.PageHashes and hostcache/prefix.Hasher.
//
// A page's hash is SHA-256 over the previous page's 32-byte digest (omitted
// for the first page when there is no prior) followed by the page's words:
//
//   - plain: each token id as a little-endian uint32;
//   - bigram (EAGLE): the page's bigrams (t[i], t[i+1]) as two uint32 each, a
//     page of P bigrams reading P+1 tokens (the next page starts at the last
//     token of this one);
//   - wide (the variant of hash_binding.cpp that accepts ids of 2^32 and
//     more): a page holding such an id is hashed as the byte 0xff followed by
//     its words as little-endian uint64 (bigram pairs likewise), so it never
//     collides with a uint32 page; other pages hash as above.
//
// Only full pages are hashed: a trailing partial page is never stored by
// HiCache, whose radix tree inserts page-aligned keys.
package pagehash

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"math"
	"sync"
	"unsafe"
)

// Size is the length of a page digest.
const Size = sha256.Size

// Spec selects the hashing of pages: the page size (tokens, or bigrams in
// bigram mode), EAGLE bigrams, and whether ids of 2^32 and more are hashed
// as wide pages (else refused).
type Spec struct {
	PageSize int
	Bigram   bool
	Wide     bool
	// Memo, when set, remembers recent pages' digests (see Memo); the
	// digests are the same with or without it.
	Memo *Memo
}

// Pages returns the number of full pages n tokens make.
func (s Spec) Pages(n int) int {
	if s.PageSize <= 0 {
		return 0
	}
	if s.Bigram {
		if n < 2 {
			return 0
		}
		return (n - 1) / s.PageSize
	}
	return n / s.PageSize
}

// MaxToken returns the largest token id s accepts.
func (s Spec) MaxToken() uint64 {
	if s.Wide {
		return math.MaxInt64
	}
	return math.MaxUint32
}

// scratch is one hashing state and its word buffer, pooled so that hashing
// allocates nothing in steady state.
type scratch struct {
	h    hash.Hash
	buf  []byte
	sum  [Size]byte // the previous page's digest (first: a copy of the prior)
	prev [Size]byte // with a memo: the digest sum chained from, kept for its entry
}

var pool = sync.Pool{New: func() any { return &scratch{h: sha256.New()} }}

// littleEndian: uint32 token ids are then hashed from their own memory.
var littleEndian = func() bool {
	x := uint32(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// AppendUint32 appends the digest of each full page of tokens to dst,
// chaining from prior (nil: none). It allocates nothing when dst has room.
func AppendUint32[D ~[Size]byte](dst []D, prior *D, tokens []uint32, s Spec) []D {
	P := s.PageSize
	return appendPages(dst, prior, s, len(tokens), func(sc *scratch, i int) ([]byte, bool) {
		if s.Bigram {
			page := tokens[i*P : i*P+P+1]
			b := sc.grow(8 * P)
			for j := 0; j < P; j++ {
				binary.LittleEndian.PutUint32(b[8*j:], page[j])
				binary.LittleEndian.PutUint32(b[8*j+4:], page[j+1])
			}
			return b, false
		}
		page := tokens[i*P : i*P+P]
		if littleEndian {
			return unsafe.Slice((*byte)(unsafe.Pointer(&page[0])), 4*P), false
		}
		b := sc.grow(4 * P)
		for j, t := range page {
			binary.LittleEndian.PutUint32(b[4*j:], t)
		}
		return b, false
	})
}

// AppendInt64 is AppendUint32 for ids given as int64 (SGLang's array("q")
// and Python ints). Every token is checked, the partial page's too, as
// SGLang's helper checks every id it is given: bad is the index of the
// first id below 0 or above s.MaxToken (dst is then returned unchanged),
// else -1.
func AppendInt64[D ~[Size]byte](dst []D, prior *D, tokens []int64, s Spec) (out []D, bad int) {
	limit := s.MaxToken()
	for i, t := range tokens {
		if t < 0 || uint64(t) > limit {
			return dst, i
		}
	}
	P := s.PageSize
	return appendPages(dst, prior, s, len(tokens), func(sc *scratch, i int) ([]byte, bool) {
		var page []int64
		if s.Bigram {
			page = tokens[i*P : i*P+P+1]
		} else {
			page = tokens[i*P : i*P+P]
		}
		wide := false
		if s.Wide {
			for _, t := range page {
				if t > math.MaxUint32 {
					wide = true
					break
				}
			}
		}
		var b []byte
		switch {
		case wide && s.Bigram:
			b = sc.grow(16 * P)
			for j := 0; j < P; j++ {
				binary.LittleEndian.PutUint64(b[16*j:], uint64(page[j]))
				binary.LittleEndian.PutUint64(b[16*j+8:], uint64(page[j+1]))
			}
		case wide:
			b = sc.grow(8 * P)
			for j, t := range page {
				binary.LittleEndian.PutUint64(b[8*j:], uint64(t))
			}
		case s.Bigram:
			b = sc.grow(8 * P)
			for j := 0; j < P; j++ {
				binary.LittleEndian.PutUint32(b[8*j:], uint32(page[j]))
				binary.LittleEndian.PutUint32(b[8*j+4:], uint32(page[j+1]))
			}
		default:
			b = sc.grow(4 * P)
			for j, t := range page {
				binary.LittleEndian.PutUint32(b[4*j:], uint32(t))
			}
		}
		return b, wide
	}), -1
}

// appendPages is the chain both entry points share: for each full page of
// the n tokens, words gives the page's hash input after the prior (and
// whether it is a wide page), and the page's digest is appended to dst.
func appendPages[D ~[Size]byte](dst []D, prior *D, s Spec, n int, words func(sc *scratch, i int) ([]byte, bool)) []D {
	pages := s.Pages(n)
	if pages == 0 {
		return dst
	}
	sc := pool.Get().(*scratch)
	defer pool.Put(sc)
	chained := prior != nil
	if chained {
		sc.sum = [Size]byte(*prior)
	}
	for i := 0; i < pages; i++ {
		b, wide := words(sc, i)
		sc.next(chained, wide, b, s.Memo)
		chained = true
		dst = append(dst, D(sc.sum))
	}
	return dst
}

// next replaces sc.sum (the previous page's digest, when chained) with the
// digest of the page whose words are b: SHA-256 of the previous digest, the
// wide tag for a wide page, and b; or, with a memo, the digest remembered
// for the same input.
func (sc *scratch) next(chained, wide bool, b []byte, m *Memo) {
	var key uint64
	if m != nil {
		key = m.key(chained, wide, &sc.sum, b)
		if m.get(key, chained, wide, &sc.sum, b) {
			return
		}
		sc.prev = sc.sum
	}
	sc.h.Reset()
	if chained {
		sc.h.Write(sc.sum[:])
	}
	if wide {
		sc.h.Write(wideTag[:])
	}
	sc.h.Write(b)
	sc.h.Sum(sc.sum[:0])
	if m != nil {
		m.put(key, chained, wide, &sc.prev, b, &sc.sum)
	}
}

// wideTag precedes a wide page's words: its odd length keeps a wide page's
// input from ever equalling a uint32 page's.
var wideTag = [1]byte{0xff}

// grow returns sc.buf with length n, reallocated only when it is too small.
func (sc *scratch) grow(n int) []byte {
	if cap(sc.buf) < n {
		sc.buf = make([]byte, n)
	}
	return sc.buf[:n]
}
