package prefix

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/mooncake-go/mooncake-go/internal/combine"
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
// Each request's keys cross in one BatchIsExist call, and hashing and key
// building reuse pooled buffers, so a lookup allocates nothing per page once
// warm. It is safe for concurrent use.
//
// Concurrent requests combine: a request that finds another's call in
// flight queues, and when that call returns, the queued requests (up to
// MaxCombinedKeys keys) cross together in one call, each getting the answer
// its own call would have given. A request alone makes its own call at
// once; none waits for more than the call in flight and then its own. So
// a request never causes more than one call, and under load one call
// serves many (a router's concurrent lookups cost the store, and the Go
// runtime's crossings, one call per batch instead of one per request).
type Lookup struct {
	h       *Hasher
	s       *Scheme
	e       Exister
	scratch sync.Pool

	queue combine.Queue[*lookupScratch]

	// The leader's combined batch (touched only by whoever holds queue).
	batch    hostmem.Keys
	batchRes []int64
	group    []*lookupScratch

	lookups, calls, combined atomic.Uint64
}

// MaxCombinedKeys bounds the keys of one combined call (a request with
// more keys still crosses, alone).
const MaxCombinedKeys = 8192

type lookupScratch struct {
	combine.Waiter
	pages []Digest
	keys  hostmem.Keys
	res   []int64 // this request's results
	err   error   // the call's error (nil results: the call failed)
}

// LookupStats counts a Lookup's work since it was made.
type LookupStats struct {
	Lookups  uint64 // requests that checked at least one page
	Calls    uint64 // BatchIsExist calls made
	Combined uint64 // requests answered by a call made with others
}

// NewLookup returns a lookup that hashes with h, expands pages with s and
// checks them with e.
func NewLookup(h *Hasher, s *Scheme, e Exister) *Lookup {
	return &Lookup{h: h, s: s, e: e, scratch: sync.Pool{New: func() any { return new(lookupScratch) }}}
}

// Stats returns the counts so far.
func (l *Lookup) Stats() LookupStats {
	return LookupStats{Lookups: l.lookups.Load(), Calls: l.calls.Load(), Combined: l.combined.Load()}
}

// Lookup hashes the full pages of tokens, chaining from prior (nil: the
// prompt starts at the root; a previous Result.LastHash: tokens continue a
// prefix already found), and counts the leading stored pages.
//
// A check that failed for a key (a negative result) ends the prefix as a
// missing key does, as in SGLang; when it is the key at which counting
// stopped, the *LookupError is returned with the Result, so the caller can
// tell an absent page from an unanswered one. A call that failed as a whole
// returns Pages 0 and the error. The context is checked before the call,
// and a request queued behind another's call leaves the queue when the
// context ends (returning its error, with nothing checked); one taken into
// a call waits for its answer.
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
	l.lookups.Add(1)
	if l.queue.TryAcquire() {
		l.lead(sc)
	} else {
		switch l.queue.Join(sc, ctx.Done()) {
		case combine.Alone, combine.Lead:
			l.lead(sc)
		case combine.Left: // nothing was sent for it
			return r, ctx.Err()
		}
	}
	return l.count(sc, r)
}

// lead makes one call for own and the queued requests that fit (it holds
// the queue), answers them, and hands the queue on.
func (l *Lookup) lead(own *lookupScratch) {
	n := own.keys.Len()
	group := l.queue.Take(append(l.group[:0], own), func(g *lookupScratch) bool {
		if n+g.keys.Len() > MaxCombinedKeys {
			return false
		}
		n += g.keys.Len()
		return true
	})

	l.calls.Add(1)
	if len(group) == 1 {
		res, err := l.e.BatchIsExist(&own.keys, own.res[:0])
		own.res, own.err = res, err
		if res == nil && err == nil {
			own.err = errNoResults
		}
	} else {
		l.combined.Add(uint64(len(group)))
		l.batch.Reset()
		for _, g := range group {
			for j := 0; j < g.keys.Len(); j++ {
				l.batch.Buf = append(l.batch.Buf, g.keys.Bytes(j)...)
				l.batch.Offsets = append(l.batch.Offsets, uint64(len(l.batch.Buf)))
			}
		}
		res, err := l.e.BatchIsExist(&l.batch, l.batchRes[:0])
		if cap(res) > cap(l.batchRes) {
			l.batchRes = res[:0]
		}
		off := 0
		for _, g := range group {
			k := g.keys.Len()
			switch {
			case res == nil:
				g.res, g.err = nil, err
				if err == nil {
					g.err = errNoResults
				}
			case len(res) != n:
				g.res, g.err = g.res[:0], err
			default:
				g.res, g.err = append(g.res[:0], res[off:off+k]...), err
			}
			off += k
		}
		if len(res) != n && res != nil {
			for _, g := range group {
				g.err = &resultCountError{got: len(res), want: n}
			}
		}
	}
	// Woken before the queue is handed on: group is the holder's scratch.
	for _, g := range group[1:] {
		combine.Wake(g)
	}
	clear(group) // keep no request reachable from l
	l.group = group[:0]
	l.queue.Release()
}

// count reads a request's answer: the leading pages all of whose keys are 1.
func (l *Lookup) count(sc *lookupScratch, r Result) (Result, error) {
	n := sc.keys.Len()
	res := sc.res
	if res == nil {
		return r, &LookupError{Keys: n, Index: -1, Err: sc.err}
	}
	if len(res) != n {
		err := sc.err
		if _, ok := err.(*resultCountError); !ok {
			err = &resultCountError{got: len(res), want: n}
		}
		return r, &LookupError{Keys: n, Index: -1, Err: err}
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
					return r, &LookupError{Keys: n, Index: k, Code: res[k], Err: sc.err}
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
