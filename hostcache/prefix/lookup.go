package prefix

import (
	"context"
	"sync"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// Exister is what a direct lookup needs; *mooncake.Store satisfies it as it
// is. results is an optional destination; the answer has one entry per key:
// 1 present, 0 absent, < 0 the code of a failed check (with an error that
// describes it); nil results with an error when the call failed as a whole.
type Exister interface {
	BatchIsExist(keys *hostmem.Keys, results []int64) ([]int64, error)
}

// Result is how much of a prompt is stored.
type Result struct {
	// Pages is the number of leading pages fully stored.
	Pages int
	// LastHash is the hash of page Pages-1, the prior to extend the prefix
	// from (zero, and HasLast false, when Pages is 0).
	LastHash Digest
	HasLast  bool
	// Hashed is the number of full pages the prompt has.
	Hashed int
}

// Lookup answers how many leading pages of a prompt are stored, with
// SGLang's batch_exists semantics: a page counts only if every component
// key of it exists, and counting stops at the first page that does not.
// Each request is one BatchIsExist call, and hashing and key building reuse
// pooled buffers, so a lookup allocates nothing per page once warm. It is
// safe for concurrent use.
type Lookup struct {
	h       *Hasher
	s       *Scheme
	e       Exister
	scratch sync.Pool
}

type lookupScratch struct {
	pages []Digest
	keys  hostmem.Keys
	res   []int64
}

// NewLookup returns a lookup that hashes with h, expands pages with s and
// checks them with e.
func NewLookup(h *Hasher, s *Scheme, e Exister) *Lookup {
	return &Lookup{h: h, s: s, e: e, scratch: sync.Pool{New: func() any { return new(lookupScratch) }}}
}

// Lookup hashes the full pages of tokens, chaining from prior (nil: the
// prompt starts at the root; a previous Result.LastHash: tokens continue a
// prefix already found), and counts the leading stored pages.
//
// A check that failed for a key (a negative result) ends the prefix as a
// missing key does, as in SGLang; when it is the key at which counting
// stopped, the *LookupError is returned with the Result, so the caller can
// tell an absent page from an unanswered one. A call that failed as a whole
// returns Pages 0 and the error.
func (l *Lookup) Lookup(ctx context.Context, prior *Digest, tokens []uint32) (Result, error) {
	sc := l.scratch.Get().(*lookupScratch)
	defer l.scratch.Put(sc)
	sc.pages, _ = l.h.AppendPages(sc.pages[:0], prior, tokens)
	return l.check(ctx, sc)
}

// LookupInt64 is Lookup for ids as int64, refused as AppendPagesInt64
// refuses them (ErrTokenRange) before anything is checked.
func (l *Lookup) LookupInt64(ctx context.Context, prior *Digest, tokens []int64) (Result, error) {
	sc := l.scratch.Get().(*lookupScratch)
	defer l.scratch.Put(sc)
	var err error
	if sc.pages, err = l.h.AppendPagesInt64(sc.pages[:0], prior, tokens); err != nil {
		return Result{}, err
	}
	return l.check(ctx, sc)
}

// LookupPages counts the leading stored pages of hashes already computed.
func (l *Lookup) LookupPages(ctx context.Context, pages []Digest) (Result, error) {
	sc := l.scratch.Get().(*lookupScratch)
	defer l.scratch.Put(sc)
	sc.pages = append(sc.pages[:0], pages...)
	return l.check(ctx, sc)
}

func (l *Lookup) check(ctx context.Context, sc *lookupScratch) (Result, error) {
	r := Result{Hashed: len(sc.pages)}
	if len(sc.pages) == 0 {
		return r, nil
	}
	if err := ctx.Err(); err != nil {
		return r, err
	}
	sc.keys.Reset()
	l.s.AppendPageKeys(&sc.keys, sc.pages)
	n := sc.keys.Len()
	res, err := l.e.BatchIsExist(&sc.keys, sc.res[:0])
	if res == nil {
		if err == nil {
			err = errNoResults
		}
		return r, &LookupError{Keys: n, Index: -1, Err: err}
	}
	if cap(res) > cap(sc.res) {
		sc.res = res[:0]
	}
	if len(res) != n {
		return r, &LookupError{Keys: n, Index: -1, Err: &resultCountError{got: len(res), want: n}}
	}
	m := l.s.ComponentsPerPage()
	for p := range sc.pages {
		for j := p * m; j < p*m+m; j++ {
			if res[j] == 1 {
				continue
			}
			r.setPages(sc.pages, p)
			// The prefix ends at page p; say why when a check of it failed.
			for k := p * m; k < p*m+m; k++ {
				if res[k] < 0 {
					return r, &LookupError{Keys: n, Index: k, Code: res[k], Err: err}
				}
			}
			return r, nil
		}
	}
	r.setPages(sc.pages, len(sc.pages))
	return r, nil
}

func (r *Result) setPages(pages []Digest, n int) {
	r.Pages = n
	if n > 0 {
		r.LastHash, r.HasLast = pages[n-1], true
	}
}
