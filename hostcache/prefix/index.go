package prefix

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/kvevents"
)

// Defaults of IndexConfig.
const (
	DefaultMaxPages    = 1 << 20
	DefaultResyncBatch = 256
	DefaultLearnFor    = 10 * time.Minute
	DefaultLearnPages  = 64
	DefaultLearnTTL    = time.Second
	DefaultConfirm     = 3 * time.Second
	DefaultRefresh     = time.Minute
)

// IndexConfig configures an Index.
type IndexConfig struct {
	// Scheme maps an event's object key to its page and a page to its
	// keys (required).
	Scheme *Scheme
	// Hasher hashes token ids for Lookup; LookupDigests needs none.
	Hasher *Hasher
	// MaxPages bounds the pages held, complete or not (0: DefaultMaxPages).
	// When full, a new page evicts one by CLOCK (second chance): a page
	// counted by a lookup or stored since the hand last passed survives one
	// more sweep. Eviction only ever forgets a page, so it turns answers
	// into false negatives, never false positives.
	MaxPages int
	// Resync checks existence in the store: every held page after a gap,
	// and the pages lookups miss while learning (see LearnFor). Nil: a gap
	// empties the index instead (it then answers only from events seen
	// since, which is safe but forgets everything at each reconnect).
	Resync Exister
	// ResyncBatch is the number of pages per existence call (0:
	// DefaultResyncBatch); each page is ComponentsPerPage keys. The index
	// is write-locked only to pick a batch and to apply its result.
	ResyncBatch int
	// LearnFor is how long after a gap a lookup's first missing page (and
	// up to LearnPages after it) is checked in the store in the background,
	// so that pages stored while events were lost are found when asked for
	// (0: DefaultLearnFor; negative: never). Once the index has evicted a
	// page, learning stays on for good: a miss may then be an eviction.
	LearnFor time.Duration
	// LearnPages bounds the pages one learning check carries (0:
	// DefaultLearnPages).
	LearnPages int
	// LearnTTL: a first missing page is not checked again within this
	// time (0: DefaultLearnTTL), so a prompt nobody cached costs one check
	// per LearnTTL, not one per lookup.
	LearnTTL time.Duration
	// Confirm is how long after a resync found components of a page absent
	// they are checked again before the page is forgotten (0:
	// DefaultConfirm; negative: forget at once). Meanwhile the page does
	// not count. A master that has just become the leader answers
	// "absent", without an error, for objects whose segments its clients
	// have not mounted on it yet (observed for about a second against
	// upstream's HA group: docs/prefix.md, "HA"); the resync that follows a
	// failover runs in that second.
	Confirm time.Duration
	// Refresh is the interval of the passes that check every held page
	// with no gap to prompt them (0: DefaultRefresh; negative: none).
	// Upstream's master publishes no removal for BatchRemove,
	// RemoveByRegex, RemoveAll, a segment that goes away with its client,
	// and, with --enable_oplog (etcd HA groups), for any removal or
	// eviction (docs/kv-events.md): without a refresh, the index would
	// count those pages for good. A refresh does not mark the index as
	// resynchronising.
	Refresh time.Duration
	// RetryMin and RetryMax bound the back-off after a failed existence
	// call of a resync (0: 50 ms and 5 s).
	RetryMin, RetryMax time.Duration
	// Now is the clock (nil: time.Now); tests set it.
	Now func() time.Time
}

// IndexStats is a snapshot of an Index's counters.
type IndexStats struct {
	Pages    int // pages held, complete or not
	Complete int // pages with every component present: what lookups count
	// Events applied; Ignored: keys that are not this scheme's (another
	// model, rank or layout); Unkeyed: events without an object key (a
	// publisher with emit_object_key off).
	Events, Ignored, Unkeyed uint64
	Evictions                uint64 // pages forgotten to stay within MaxPages
	Gaps                     uint64 // gaps reported by the subscriber
	Clears                   uint64 // gaps that emptied the index (no Resync)
	// Resyncs is the number of resync passes finished; Resyncing is true
	// while one is due or running (answers may be stale until it ends).
	// Refreshes: passes made every Refresh (their pages are counted in
	// ResyncPages, ResyncDropped, ResyncFixed too).
	Resyncs, Refreshes uint64
	Resyncing          bool
	// ResyncPages: pages checked by passes; ResyncDropped: of those, found
	// absent and forgotten (after Confirm); ResyncFixed: of those, whose
	// components differed from the store's; ResyncErrors: failed existence
	// calls. ResyncRestored: pages a pass found short of components that
	// the confirming check found again.
	ResyncPages, ResyncDropped, ResyncFixed, ResyncErrors, ResyncRestored uint64
	// Learning is true while lookups' misses are checked; LearnChecks:
	// existence calls made for them; Learned: complete pages found;
	// LearnDropped: misses not queued (the queue was full).
	Learning                           bool
	LearnChecks, Learned, LearnDropped uint64
	LastBatch                          uint64        // the last batch's sequence
	LastLag                            time.Duration // now minus the last batch's timestamp, when applied
}

// ErrNoHasher: Index.Lookup needs IndexConfig.Hasher.
var ErrNoHasher = errors.New("prefix: index has no hasher (IndexConfig.Hasher)")

// slot is one page the index holds. Its components are bits of
// Index.bits (which are present) and Index.touched (which an event changed
// since the page's last check began: a check's answer for them is older
// than the event), words bits per slot.
type slot struct {
	d      Digest
	have   int32         // components present: the page counts when have == comps
	ref    atomic.Uint32 // CLOCK's reference bit: set by stores and by lookups that count the page
	gen    uint32        // changes whenever the slot is freed, so a check's answer never lands on a reused slot
	checks uint16        // existence checks in flight for the page
	used   bool
}

// Index is an in-memory set of the pages present in a Mooncake store, fed
// by the master's KV events (it is a kvevents.Handler), answering the same
// prefix lookup as Lookup without a call to the store.
//
// Concurrency: any number of goroutines may call Lookup, LookupDigests and
// Stats while one goroutine (the subscriber's) calls HandleBatch and
// HandleGap. Lookups take a read lock per lookup; an event batch takes the
// write lock for its events only.
//
// What an answer guarantees is in docs/prefix.md ("Event-fed index"): in
// short, every page counted was stored whole when the index last heard of
// it; one removed without an event (the master publishes none for some
// operations) counts until the next Refresh; after a gap, pages held may
// be stale until the resync pass has checked them (Stats().Resyncing), and
// pages stored during the gap are found when looked up (learning) or
// stored again.
type Index struct {
	scheme      *Scheme
	hasher      *Hasher
	comps       int32
	words       int // uint64 words of a page's component bits
	max         int
	exister     Exister
	batch       int
	learnFor    time.Duration
	learnPages  int
	learnTTL    time.Duration
	confirm     time.Duration
	refresh     time.Duration
	retryMin    time.Duration
	retryMax    time.Duration
	now         func() time.Time
	scratch     sync.Pool // *[]Digest of Lookup
	learnReqs   sync.Pool // *learnReq
	recent      [recentSlots]atomic.Uint64
	learnUntil  atomic.Int64 // unix ns; learning is on before it
	learnAlways atomic.Bool  // set at the first eviction
	resyncWant  atomic.Uint64
	resyncDone  atomic.Uint64
	wake        chan struct{}
	learnq      chan *learnReq
	stop        chan struct{}
	done        chan struct{}
	closeOnce   sync.Once

	mu       sync.RWMutex
	pages    map[Digest]int32
	slots    []slot
	bits     []uint64 // words per slot: components present
	touched  []uint64 // words per slot: components changed by events since the check began
	free     []int32
	hand     int
	complete int

	// Counters written by the event goroutine or the checker, read by
	// Stats at any time.
	events, ignored, unkeyed, evictions, gaps, clears        atomic.Uint64
	resyncs, resyncPages, resyncDropped, resyncFixed, resErr atomic.Uint64
	resyncRestored, refreshes                                atomic.Uint64
	learnChecks, learned, learnDropped, lastBatch            atomic.Uint64
	lastLag                                                  atomic.Int64
}

// recentSlots is the size of the lossy filter of first missing pages
// queued for learning in the last LearnTTL.
const recentSlots = 4096

type learnReq struct {
	n    int
	ds   []Digest
	done chan struct{} // a barrier: closed when the checker reaches it
}

// NewIndex returns an empty index. With a Resync exister it starts the
// goroutine that makes existence checks; Close stops it.
func NewIndex(cfg IndexConfig) (*Index, error) {
	const what = "prefix index"
	if cfg.Scheme == nil {
		return nil, &ConfigError{What: what, Field: "Scheme", Reason: "required"}
	}
	comps := cfg.Scheme.ComponentsPerPage()
	if comps < 1 || comps > 1<<20 {
		return nil, &ConfigError{What: what, Field: "Scheme", Reason: fmt.Sprintf("%d components per page", comps)}
	}
	if cfg.MaxPages < 0 || cfg.MaxPages > 1<<31-1 {
		return nil, &ConfigError{What: what, Field: "MaxPages", Reason: fmt.Sprintf("%d: want 0 (default) or 1..2^31-1", cfg.MaxPages)}
	}
	if cfg.ResyncBatch < 0 || cfg.LearnPages < 0 || cfg.LearnTTL < 0 || cfg.RetryMin < 0 || cfg.RetryMax < 0 {
		return nil, &ConfigError{What: what, Field: "ResyncBatch/LearnPages/LearnTTL/RetryMin/RetryMax", Reason: "negative"}
	}
	x := &Index{
		scheme: cfg.Scheme, hasher: cfg.Hasher, comps: int32(comps), words: (comps + 63) / 64,
		max: orDefault(cfg.MaxPages, DefaultMaxPages), exister: cfg.Resync,
		batch: orDefault(cfg.ResyncBatch, DefaultResyncBatch), learnFor: cfg.LearnFor,
		learnPages: orDefault(cfg.LearnPages, DefaultLearnPages), learnTTL: cfg.LearnTTL, confirm: cfg.Confirm, refresh: cfg.Refresh,
		retryMin: cfg.RetryMin, retryMax: cfg.RetryMax, now: cfg.Now,
		pages: make(map[Digest]int32),
	}
	if x.learnFor == 0 {
		x.learnFor = DefaultLearnFor
	}
	if x.learnTTL == 0 {
		x.learnTTL = DefaultLearnTTL
	}
	if x.confirm == 0 {
		x.confirm = DefaultConfirm
	}
	if x.refresh == 0 {
		x.refresh = DefaultRefresh
	}
	if x.retryMin == 0 {
		x.retryMin = 50 * time.Millisecond
	}
	if x.retryMax == 0 {
		x.retryMax = 5 * time.Second
	}
	if x.retryMax < x.retryMin {
		x.retryMax = x.retryMin
	}
	if x.now == nil {
		x.now = time.Now
	}
	x.scratch.New = func() any { s := make([]Digest, 0, 64); return &s }
	x.learnReqs.New = func() any { return &learnReq{ds: make([]Digest, x.learnPages)} }
	if x.exister != nil {
		x.wake = make(chan struct{}, 1)
		x.learnq = make(chan *learnReq, 64)
		x.stop = make(chan struct{})
		x.done = make(chan struct{})
		go x.checker()
	}
	return x, nil
}

func orDefault(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

// Close stops the checker goroutine (a no-op without Resync). The index
// still answers lookups and takes events afterwards; gaps then only mark
// it as resyncing.
func (x *Index) Close() error {
	if x.stop == nil {
		return nil
	}
	x.closeOnce.Do(func() { close(x.stop) })
	<-x.done
	return nil
}

// Lookup hashes tokens' full pages (chained from prior, nil for none) and
// counts the leading pages the index holds complete, as the direct
// Lookup counts them in the store. It hashes lazily, a few pages at a
// time, and stops at the first page the index lacks (plus, while
// learning, the pages a learning check carries): a prompt that shares
// nothing with the cache costs one batch of hashes, not all of them.
// Result.Hashed is still the prompt's full page count. It allocates
// nothing in steady state.
func (x *Index) Lookup(prior *Digest, tokens []uint32) (Result, error) {
	if x.hasher == nil {
		return Result{}, ErrNoHasher
	}
	return lookupLazy(x, prior, tokens, (*Hasher).AppendPages), nil
}

// LookupInt64 is Lookup for ids as int64 (JSON numbers, SGLang's arrays),
// refused as Hasher.AppendPagesInt64 refuses them (ErrTokenRange): every
// id is checked, including those of pages the lookup does not hash.
func (x *Index) LookupInt64(prior *Digest, tokens []int64) (Result, error) {
	if x.hasher == nil {
		return Result{}, ErrNoHasher
	}
	if err := x.hasher.CheckInt64(tokens); err != nil {
		return Result{}, err
	}
	return lookupLazy(x, prior, tokens, (*Hasher).AppendPagesInt64), nil
}

// lazyPages is how many pages Lookup hashes before it first checks them
// (then twice as many each time all were there).
const lazyPages = 8

// lookupLazy hashes tokens' pages lazyPages at a time with appendPages
// and counts the leading ones the index holds complete, stopping at the
// first it lacks.
func lookupLazy[T uint32 | int64](x *Index, prior *Digest, tokens []T, appendPages func(*Hasher, []Digest, *Digest, []T) ([]Digest, error)) Result {
	sp := x.scratch.Get().(*[]Digest)
	ds := (*sp)[:0]
	spec := x.hasher.spec
	total := spec.Pages(len(tokens))
	extra := 0 // the token a bigram page reads past its end
	if spec.Bigram {
		extra = 1
	}
	// hash makes sure ds holds the first n pages' digests.
	hash := func(n int) {
		for len(ds) < n {
			lo := len(ds)
			hi := n
			pr := prior
			if lo > 0 {
				pr = &ds[lo-1]
			}
			ds, _ = appendPages(x.hasher, ds, pr, tokens[lo*spec.PageSize:hi*spec.PageSize+extra])
		}
	}
	n, step := 0, lazyPages
	for n < total {
		hash(min(total, n+step))
		n += x.countPresent(ds[n:])
		if n < len(ds) {
			break
		}
		step *= 2 // all there so far: the rest likely is too
	}
	r := Result{Pages: n, Hashed: total}
	if n > 0 {
		r.LastHash, r.HasLast = ds[n-1], true
	}
	if n < total && x.exister != nil && x.learning() {
		hash(min(total, n+x.learnPages))
		x.queueLearn(ds[n:])
	}
	*sp = ds[:0]
	x.scratch.Put(sp)
	return r
}

// LookupDigests counts the leading pages of ds (a prompt's page hashes, in
// order) that the index holds complete: for a router that hashes itself.
func (x *Index) LookupDigests(ds []Digest) Result {
	n := x.countPresent(ds)
	r := Result{Pages: n, Hashed: len(ds)}
	if n > 0 {
		r.LastHash, r.HasLast = ds[n-1], true
	}
	if n < len(ds) && x.exister != nil && x.learning() {
		x.queueLearn(ds[n:])
	}
	return r
}

// countPresent counts the leading pages of ds the index holds complete,
// marking them used.
func (x *Index) countPresent(ds []Digest) int {
	n := 0
	x.mu.RLock()
	for _, d := range ds {
		i, ok := x.pages[d]
		if !ok {
			break
		}
		s := &x.slots[i]
		if s.have != x.comps {
			break
		}
		if s.ref.Load() == 0 {
			s.ref.Store(1)
		}
		n++
	}
	x.mu.RUnlock()
	return n
}

// Contains reports whether the index holds page d complete.
func (x *Index) Contains(d Digest) bool {
	x.mu.RLock()
	i, ok := x.pages[d]
	c := ok && x.slots[i].have == x.comps
	x.mu.RUnlock()
	return c
}

// Pages appends the digests of the complete pages the index holds to dst
// (in no particular order): for tests and for comparing with the store.
func (x *Index) Pages(dst []Digest) []Digest {
	x.mu.RLock()
	defer x.mu.RUnlock()
	for i := range x.slots {
		if s := &x.slots[i]; s.used && s.have == x.comps {
			dst = append(dst, s.d)
		}
	}
	return dst
}

// HandleBatch applies a batch of events: a stored event sets its
// component's bit on the page, a removed one clears it. Keys that are not
// this scheme's are ignored (counted in Stats). Implements kvevents.Handler.
func (x *Index) HandleBatch(b *kvevents.Batch) {
	var ev, ign, unk uint64
	x.mu.Lock()
	for i := range b.Events {
		e := &b.Events[i]
		if e.Key == "" {
			unk++
			continue
		}
		d, c, ok := x.scheme.ParseKey(unsafe.Slice(unsafe.StringData(e.Key), len(e.Key)))
		if !ok || c < 0 || c >= int(x.comps) {
			ign++
			continue
		}
		switch e.Kind {
		case kvevents.Stored:
			idx, ok := x.pages[d]
			if !ok {
				idx = x.insert(d)
			}
			x.setBit(idx, c, true)
			x.touch(idx, c)
			x.slots[idx].ref.Store(1)
		case kvevents.Removed:
			idx, ok := x.pages[d]
			if !ok {
				break
			}
			x.setBit(idx, c, false)
			x.touch(idx, c)
			if s := &x.slots[idx]; s.have == 0 && s.checks == 0 {
				x.release(idx)
			}
		default:
			ign++
			continue
		}
		ev++
	}
	x.mu.Unlock()
	x.events.Add(ev)
	x.ignored.Add(ign)
	x.unkeyed.Add(unk)
	x.lastBatch.Store(b.Seq)
	if !b.Time.IsZero() {
		x.lastLag.Store(int64(x.now().Sub(b.Time)))
	}
}

// HandleGap schedules a resync: every page held is checked in the store in
// batches by the checker goroutine, and learning turns on for LearnFor.
// Without Resync the index is emptied. Implements kvevents.Handler.
func (x *Index) HandleGap(kvevents.Gap) {
	x.gaps.Add(1)
	if x.exister == nil {
		x.mu.Lock()
		x.pages = make(map[Digest]int32)
		x.slots, x.bits, x.touched, x.free, x.hand, x.complete = nil, nil, nil, nil, 0, 0
		x.mu.Unlock()
		x.clears.Add(1)
		return
	}
	if x.learnFor > 0 {
		x.learnUntil.Store(x.now().Add(x.learnFor).UnixNano())
	}
	x.resyncWant.Add(1)
	select {
	case x.wake <- struct{}{}:
	default:
	}
}

// Stats returns the index's counters.
func (x *Index) Stats() IndexStats {
	x.mu.RLock()
	pages, complete := len(x.pages), x.complete
	x.mu.RUnlock()
	return IndexStats{
		Pages: pages, Complete: complete,
		Events: x.events.Load(), Ignored: x.ignored.Load(), Unkeyed: x.unkeyed.Load(),
		Evictions: x.evictions.Load(), Gaps: x.gaps.Load(), Clears: x.clears.Load(),
		Resyncs: x.resyncs.Load(), Refreshes: x.refreshes.Load(), Resyncing: x.resyncDone.Load() != x.resyncWant.Load(),
		ResyncPages: x.resyncPages.Load(), ResyncDropped: x.resyncDropped.Load(),
		ResyncFixed: x.resyncFixed.Load(), ResyncErrors: x.resErr.Load(), ResyncRestored: x.resyncRestored.Load(),
		Learning: x.exister != nil && x.learning(), LearnChecks: x.learnChecks.Load(),
		Learned: x.learned.Load(), LearnDropped: x.learnDropped.Load(),
		LastBatch: x.lastBatch.Load(), LastLag: time.Duration(x.lastLag.Load()),
	}
}

// setBit sets or clears component c of slot idx, keeping the slot's count
// and the index's count of complete pages. Called with the write lock held.
func (x *Index) setBit(idx int32, c int, present bool) {
	w, bit := &x.bits[int(idx)*x.words+c/64], uint64(1)<<(c%64)
	if (*w&bit != 0) == present {
		return
	}
	s := &x.slots[idx]
	if s.have == x.comps {
		x.complete--
	}
	if present {
		*w |= bit
		s.have++
	} else {
		*w &^= bit
		s.have--
	}
	if s.have == x.comps {
		x.complete++
	}
}

func (x *Index) hasBit(idx int32, c int) bool {
	return x.bits[int(idx)*x.words+c/64]&(1<<(c%64)) != 0
}

func (x *Index) touch(idx int32, c int) {
	x.touched[int(idx)*x.words+c/64] |= 1 << (c % 64)
}

func (x *Index) wasTouched(idx int32, c int) bool {
	return x.touched[int(idx)*x.words+c/64]&(1<<(c%64)) != 0
}

// clearWords zeroes slot idx's words of ws.
func (x *Index) clearWords(ws []uint64, idx int32) {
	clear(ws[int(idx)*x.words : int(idx+1)*x.words])
}

// insert makes a slot for d (mask 0), evicting one when full. Called with
// the write lock held.
func (x *Index) insert(d Digest) int32 {
	if len(x.pages) >= x.max {
		x.evict()
	}
	var idx int32
	if n := len(x.free); n > 0 {
		idx = x.free[n-1]
		x.free = x.free[:n-1]
	} else {
		x.slots = append(x.slots, slot{})
		x.bits = append(x.bits, make([]uint64, x.words)...)
		x.touched = append(x.touched, make([]uint64, x.words)...)
		idx = int32(len(x.slots) - 1)
	}
	s := &x.slots[idx]
	s.d, s.have, s.checks, s.used = d, 0, 0, true
	x.clearWords(x.bits, idx)
	x.clearWords(x.touched, idx)
	x.pages[d] = idx
	return idx
}

// evict frees one slot by CLOCK: the hand clears reference bits until it
// finds a page without one. Two sweeps at most, since the first clears
// every bit.
func (x *Index) evict() {
	for {
		if x.hand >= len(x.slots) {
			x.hand = 0
		}
		i := x.hand
		x.hand++
		s := &x.slots[i]
		if !s.used {
			continue
		}
		if s.ref.Load() != 0 {
			s.ref.Store(0)
			continue
		}
		x.release(int32(i))
		x.evictions.Add(1)
		x.learnAlways.Store(true)
		return
	}
}

// release frees slot idx. Called with the write lock held.
func (x *Index) release(idx int32) {
	s := &x.slots[idx]
	delete(x.pages, s.d)
	if s.have == x.comps {
		x.complete--
	}
	s.have, s.checks, s.used = 0, 0, false
	x.clearWords(x.bits, idx)
	s.ref.Store(0)
	s.gen++
	x.free = append(x.free, idx)
}

func (x *Index) learning() bool {
	return x.learnAlways.Load() || x.now().UnixNano() < x.learnUntil.Load()
}

// queueLearn hands the first missing page and up to LearnPages-1 after it
// to the checker, unless the first was queued within LearnTTL or the queue
// is full. No allocation: requests come from a pool.
func (x *Index) queueLearn(ds []Digest) {
	first := binary.LittleEndian.Uint64(ds[0][:8])
	r := &x.recent[first%recentSlots]
	if r.Load() == first {
		return
	}
	r.Store(first)
	q := x.learnReqs.Get().(*learnReq)
	q.n = copy(q.ds, ds)
	select {
	case x.learnq <- q:
	default:
		x.learnReqs.Put(q)
		x.learnDropped.Add(1)
	}
}

// check is one page of an existence call in flight.
type check struct {
	idx int32
	gen uint32
}

// checker makes the existence calls: resync passes and learning, one call
// at a time, learning requests served between the batches of a pass.
func (x *Index) checker() {
	defer close(x.done)
	w := &checkWork{}
	ttl := time.NewTicker(x.learnTTL)
	defer ttl.Stop()
	confirmT := time.NewTimer(time.Hour)
	confirmT.Stop()
	defer confirmT.Stop()
	var refresh <-chan time.Time
	if x.refresh > 0 {
		t := time.NewTicker(x.refresh)
		defer t.Stop()
		refresh = t.C
	}
	for {
		if len(w.confirm) > 0 {
			confirmT.Reset(max(time.Until(w.confirm[0].due), 0))
		}
		select {
		case <-x.stop:
			return
		case <-ttl.C:
			for i := range x.recent {
				x.recent[i].Store(0)
			}
		case q := <-x.learnq:
			x.learn(w, q)
		case <-x.wake:
			if !x.resyncPass(w, false) {
				return
			}
		case <-refresh:
			if !x.resyncPass(w, true) {
				return
			}
		case <-confirmT.C:
			x.confirmDue(w)
		}
		confirmT.Stop()
	}
}

// confirmation is a page a resync found short of components, to be
// checked again at due.
type confirmation struct {
	check
	due time.Time
}

// confirmDue checks again the pages whose confirmation is due, ResyncBatch
// at a time: what is still absent is final.
func (x *Index) confirmDue(w *checkWork) {
	now := time.Now()
	n := 0
	for n < len(w.confirm) && n < x.batch && !w.confirm[n].due.After(now) {
		n++
	}
	if n == 0 {
		return
	}
	w.checks, w.ds = w.checks[:0], w.ds[:0]
	x.mu.Lock()
	for _, c := range w.confirm[:n] {
		if s := &x.slots[c.idx]; s.used && s.gen == c.gen {
			x.mark(w, c.idx, s)
		}
	}
	x.mu.Unlock()
	due := w.confirm[:n:n]
	w.confirm = w.confirm[n:]
	if len(w.checks) == 0 {
		return
	}
	if !x.exist(w) {
		x.resErr.Add(1)
		x.unpick(w, false)
		for _, c := range due {
			w.confirm = append(w.confirm, confirmation{check: c.check, due: now.Add(x.confirm)})
		}
		return
	}
	x.applyChecks(w, checkConfirm)
}

// checkWork is the checker's reusable scratch.
type checkWork struct {
	checks  []check
	ds      []Digest
	keys    hostmem.Keys
	res     []int64
	confirm []confirmation // in due order
}

// checkKind is why an existence call was made.
type checkKind uint8

const (
	checkResync  checkKind = iota // a pass after a gap
	checkLearn                    // a lookup's miss
	checkConfirm                  // a resync's absent components, again
)

// resyncPass checks every page held, ResyncBatch pages per call, starting
// over when another gap comes during the pass (a refresh gives way to the
// gap's pass instead). False when stopped.
func (x *Index) resyncPass(w *checkWork, refresh bool) bool {
	want := x.resyncWant.Load()
	backoff := x.retryMin
	for pos := 0; ; {
		if w2 := x.resyncWant.Load(); w2 != want {
			if refresh {
				break // the gap's pass comes next (wake is set)
			}
			want, pos = w2, 0
		}
		next := x.pick(w, pos)
		if len(w.checks) == 0 {
			break
		}
		if !x.exist(w) {
			x.resErr.Add(1)
			x.unpick(w, false)
			select {
			case <-x.stop:
				return false
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, x.retryMax)
			continue
		}
		backoff = x.retryMin
		x.applyChecks(w, checkResync)
		pos = next
		// Serve learning between batches, so a long pass does not starve it.
		select {
		case <-x.stop:
			return false
		case q := <-x.learnq:
			x.learn(w, q)
		default:
		}
	}
	if refresh {
		x.refreshes.Add(1)
		return true
	}
	x.resyncDone.Store(want)
	x.resyncs.Add(1)
	if x.resyncWant.Load() != want {
		select {
		case x.wake <- struct{}{}:
		default:
		}
	}
	return true
}

// pick takes up to ResyncBatch held pages from slot pos on, marks them as
// being checked and returns the slot to continue from.
func (x *Index) pick(w *checkWork, pos int) int {
	w.checks, w.ds = w.checks[:0], w.ds[:0]
	x.mu.Lock()
	for ; pos < len(x.slots) && len(w.checks) < x.batch; pos++ {
		s := &x.slots[pos]
		if !s.used {
			continue
		}
		x.mark(w, int32(pos), s)
	}
	x.mu.Unlock()
	return pos
}

func (x *Index) mark(w *checkWork, idx int32, s *slot) {
	x.clearWords(x.touched, idx)
	s.checks++
	w.checks = append(w.checks, check{idx: idx, gen: s.gen})
	w.ds = append(w.ds, s.d)
}

// unpick undoes the marks of a failed call. A page with no component left
// is forgotten only when forget says so (a learning check's pending slot):
// a held page waiting for a resync or a confirmation stays.
func (x *Index) unpick(w *checkWork, forget bool) {
	x.mu.Lock()
	for _, c := range w.checks {
		if s := &x.slots[c.idx]; s.used && s.gen == c.gen {
			s.checks--
			if forget && s.have == 0 && s.checks == 0 {
				x.release(c.idx)
			}
		}
	}
	x.mu.Unlock()
}

// exist makes the existence call for w.ds; false when it failed as a whole.
func (x *Index) exist(w *checkWork) bool {
	w.keys.Reset()
	for _, d := range w.ds {
		x.scheme.AppendKeys(&w.keys, d)
	}
	res, err := x.exister.BatchIsExist(&w.keys, w.res[:0])
	if res == nil && err != nil || len(res) != len(w.ds)*int(x.comps) {
		return false
	}
	w.res = res
	return true
}

// applyChecks merges the answers of an existence call into the slots: for
// each component, the store's answer, unless an event changed it since the
// check began (the event is newer) or the check failed for that key (the
// old state stays). A page left with no component is forgotten, except
// after a resync with Confirm set: a page the store answered short of
// components is checked again Confirm later, and forgotten only if still
// absent then.
func (x *Index) applyChecks(w *checkWork, kind checkKind) {
	var dropped, fixed, learned, restored uint64
	due := time.Now().Add(x.confirm)
	x.mu.Lock()
	for j, c := range w.checks {
		s := &x.slots[c.idx]
		if !s.used || s.gen != c.gen {
			continue // evicted, or removed by events, during the call
		}
		was, changed, lowered := s.have, false, false
		for k, r := range w.res[j*int(x.comps) : (j+1)*int(x.comps)] {
			if r < 0 || x.wasTouched(c.idx, k) || (r == 1) == x.hasBit(c.idx, k) {
				continue
			}
			x.setBit(c.idx, k, r == 1)
			changed, lowered = true, lowered || r == 0
		}
		if changed {
			fixed++
		}
		if kind == checkLearn && s.have == x.comps && was != x.comps {
			learned++
		}
		if kind == checkConfirm && s.have > was {
			restored++
		}
		s.checks--
		if kind == checkResync && lowered && x.confirm > 0 {
			w.confirm = append(w.confirm, confirmation{check: c, due: due})
			continue
		}
		if s.have == 0 && s.checks == 0 {
			x.release(c.idx)
			dropped++
		}
	}
	x.mu.Unlock()
	switch kind {
	case checkLearn:
		x.learned.Add(learned)
	case checkResync:
		x.resyncPages.Add(uint64(len(w.checks)))
		x.resyncDropped.Add(dropped)
		x.resyncFixed.Add(fixed)
	case checkConfirm:
		x.resyncDropped.Add(dropped)
		x.resyncRestored.Add(restored)
	}
}

// barrier returns once the checker has handled every learning request
// queued before it (tests use it to wait for learning).
func (x *Index) barrier() {
	if x.learnq == nil {
		return
	}
	q := &learnReq{done: make(chan struct{})}
	select {
	case x.learnq <- q:
		select {
		case <-q.done:
		case <-x.done:
		}
	case <-x.done:
	}
}

// learn checks the pages of one learning request: pages not held get a
// slot with no component while the call is in flight, so that events
// arriving meanwhile are merged as in a resync.
func (x *Index) learn(w *checkWork, q *learnReq) {
	if q.done != nil {
		close(q.done)
		return
	}
	w.checks, w.ds = w.checks[:0], w.ds[:0]
	x.mu.Lock()
	for _, d := range q.ds[:q.n] {
		idx, ok := x.pages[d]
		if ok && x.slots[idx].have == x.comps {
			continue
		}
		if !ok {
			idx = x.insert(d)
		}
		x.mark(w, idx, &x.slots[idx])
	}
	x.mu.Unlock()
	x.learnReqs.Put(q)
	if len(w.checks) == 0 {
		return
	}
	x.learnChecks.Add(1)
	if !x.exist(w) {
		x.unpick(w, true)
		return
	}
	x.applyChecks(w, checkLearn)
}
