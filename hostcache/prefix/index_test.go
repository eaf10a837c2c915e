package prefix_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/hostcache/prefix"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/kvevents"
)

// fakeStore is the store's truth for the index tests: a set of keys, and
// an Exister over it whose calls can be made to fail or to run a hook
// after they answered (events arriving while the answer travels back).
type fakeStore struct {
	mu    sync.Mutex
	keys  map[string]bool
	calls atomic.Int64
	fail  atomic.Int64 // fail this many calls as a whole
	// perKeyFail names keys whose check fails (negative result).
	perKeyFail map[string]bool
	after      func() // run once after the next call answered
}

func newFakeStore() *fakeStore {
	return &fakeStore{keys: map[string]bool{}, perKeyFail: map[string]bool{}}
}

func (f *fakeStore) BatchIsExist(keys *hostmem.Keys, results []int64) ([]int64, error) {
	f.calls.Add(1)
	if f.fail.Load() > 0 {
		f.fail.Add(-1)
		return nil, errors.New("fake: refused")
	}
	results = results[:0]
	f.mu.Lock()
	var err error
	for i := 0; i < keys.Len(); i++ {
		k := keys.Bytes(i)
		switch {
		case f.perKeyFail[string(k)]:
			results = append(results, -704)
			err = errors.New("fake: a key failed")
		case f.keys[string(k)]:
			results = append(results, 1)
		default:
			results = append(results, 0)
		}
	}
	hook := f.after
	f.after = nil
	f.mu.Unlock()
	if hook != nil {
		hook()
	}
	return results, err
}

func (f *fakeStore) set(key string, present bool) {
	f.mu.Lock()
	if present {
		f.keys[key] = true
	} else {
		delete(f.keys, key)
	}
	f.mu.Unlock()
}

func (f *fakeStore) has(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.keys[key]
}

// fixture is a scheme, a hasher and helpers to make keys and events.
type fixture struct {
	t        testing.TB
	scheme   *prefix.Scheme
	hasher   *prefix.Hasher
	pageSize int
	seq      uint64
	id       uint64
}

func newFixture(t testing.TB, pageSize int) *fixture {
	t.Helper()
	return &fixture{t: t, scheme: testScheme(t), hasher: testHasher(t, pageSize), pageSize: pageSize}
}

// keys returns the component keys of page d, in component order.
func (f *fixture) keys(d prefix.Digest) []string {
	var k hostmem.Keys
	f.scheme.AppendKeys(&k, d)
	return k.Strings()
}

func (f *fixture) digests(tokens []uint32) []prefix.Digest {
	ds, err := f.hasher.AppendPages(nil, nil, tokens)
	if err != nil {
		f.t.Fatal(err)
	}
	return ds
}

// batch makes a batch of events, one per key.
func (f *fixture) batch(kind kvevents.Kind, keys ...string) *kvevents.Batch {
	f.seq++
	b := &kvevents.Batch{Seq: f.seq, Time: time.Now()}
	for _, k := range keys {
		f.id++
		b.Events = append(b.Events, kvevents.Event{Kind: kind, ID: f.id, Key: k, Medium: "cpu"})
	}
	return b
}

// events makes a batch of mixed events in the order given.
func (f *fixture) events(evs []kvevents.Event) *kvevents.Batch {
	f.seq++
	b := &kvevents.Batch{Seq: f.seq, Time: time.Now(), Events: evs}
	for i := range b.Events {
		f.id++
		b.Events[i].ID = f.id
	}
	return b
}

// pageKeys are the keys of every component of the pages.
func (f *fixture) pageKeys(ds ...prefix.Digest) []string {
	var out []string
	for _, d := range ds {
		out = append(out, f.keys(d)...)
	}
	return out
}

func newIndex(t testing.TB, cfg prefix.IndexConfig) *prefix.Index {
	t.Helper()
	x, err := prefix.NewIndex(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

// prompt returns n pages of tokens: the first shared pages of base, then
// tokens of its own drawn from rng.
func prompt(rng *rand.Rand, base []uint32, shared, n, pageSize int) []uint32 {
	out := append([]uint32(nil), base[:shared*pageSize]...)
	for len(out) < n*pageSize {
		out = append(out, rng.Uint32N(150000))
	}
	return out
}

// waitFor polls cond until it holds (the checker runs in its own
// goroutine); a minute without it is a failure.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func resynced(x *prefix.Index) func() bool {
	return func() bool { return !x.Stats().Resyncing }
}

func TestIndexConfig(t *testing.T) {
	f := newFixture(t, 4)
	for _, tc := range []struct {
		name string
		cfg  prefix.IndexConfig
	}{
		{"no scheme", prefix.IndexConfig{}},
		{"negative max pages", prefix.IndexConfig{Scheme: f.scheme, MaxPages: -1}},
		{"negative batch", prefix.IndexConfig{Scheme: f.scheme, ResyncBatch: -1}},
		{"negative ttl", prefix.IndexConfig{Scheme: f.scheme, LearnTTL: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := prefix.NewIndex(tc.cfg)
			var ce *prefix.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *ConfigError", err)
			}
		})
	}
	x := newIndex(t, prefix.IndexConfig{Scheme: f.scheme})
	if _, err := x.Lookup(nil, make([]uint32, 8)); !errors.Is(err, prefix.ErrNoHasher) {
		t.Fatalf("Lookup without a hasher: %v", err)
	}
}

// TestIndexEvents: a page counts once all its components are stored, and
// stops counting when one is removed; counting stops at the first page
// that does not count; keys of other schemes are ignored.
func TestIndexEvents(t *testing.T) {
	f := newFixture(t, 4)
	x := newIndex(t, prefix.IndexConfig{Scheme: f.scheme, Hasher: f.hasher})
	rng := rand.New(rand.NewPCG(1, 2))
	toks := prompt(rng, nil, 0, 5, f.pageSize)
	toks = append(toks, 7, 7) // a partial page: never hashed
	ds := f.digests(toks)
	if len(ds) != 5 {
		t.Fatalf("%d pages, want 5", len(ds))
	}
	comps := f.keys(ds[0])
	if len(comps) < 2 {
		t.Fatalf("the test scheme needs 2+ components, has %d", len(comps))
	}
	check := func(step string, want int) {
		t.Helper()
		r, err := x.Lookup(nil, toks)
		if err != nil {
			t.Fatal(err)
		}
		if r.Pages != want || r.Hashed != 5 || r.HasLast != (want > 0) || (want > 0 && r.LastHash != ds[want-1]) {
			t.Fatalf("%s: %+v, want %d of 5 pages", step, r, want)
		}
		if d := x.LookupDigests(ds); d != r {
			t.Fatalf("%s: LookupDigests %+v != Lookup %+v", step, d, r)
		}
	}
	check("empty", 0)
	x.HandleBatch(f.batch(kvevents.Stored, f.pageKeys(ds[0], ds[1])...))
	check("pages 0-1", 2)
	x.HandleBatch(f.batch(kvevents.Stored, f.keys(ds[2])[0]))
	check("page 2 partial", 2)
	x.HandleBatch(f.batch(kvevents.Stored, f.keys(ds[2])[1:]...))
	check("page 2 whole", 3)
	x.HandleBatch(f.batch(kvevents.Stored, f.pageKeys(ds[4])...))
	check("page 4 but not 3", 3)
	x.HandleBatch(f.batch(kvevents.Stored, f.pageKeys(ds[3])...))
	check("all", 5)
	x.HandleBatch(f.batch(kvevents.Stored, f.keys(ds[3])[1])) // again: idempotent
	check("stored twice", 5)
	x.HandleBatch(f.batch(kvevents.Removed, f.keys(ds[1])[1]))
	check("a component of page 1 removed", 1)
	x.HandleBatch(f.batch(kvevents.Stored, "not-a-page-key", "", ds[1].String()+"_99_k"))
	check("foreign keys", 1)
	x.HandleBatch(f.batch(kvevents.Removed, f.pageKeys(ds[0])...))
	check("page 0 removed", 0)
	st := x.Stats()
	if st.Ignored != 2 || st.Unkeyed != 1 || st.Pages != 4 || st.Complete != 3 {
		t.Fatalf("stats %+v: want 2 ignored, 1 unkeyed, 4 pages held (1 partial)", st)
	}
	if st.LastBatch != f.seq {
		t.Fatalf("LastBatch %d, want %d", st.LastBatch, f.seq)
	}
	// A prior carries the chain on: the pages after ds[1] from ds[1].
	r, err := x.Lookup(&ds[1], toks[2*f.pageSize:])
	if err != nil || r.Pages != 3 || r.Hashed != 3 || r.LastHash != ds[4] {
		t.Fatalf("pages 2-4 with page 1's hash as prior: %+v %v, want 3 (page 1 itself is not needed)", r, err)
	}
}

// TestIndexEviction pins the CLOCK policy: a page looked up (or stored)
// since the hand last passed survives the next eviction.
func TestIndexEviction(t *testing.T) {
	f := newFixture(t, 2)
	x := newIndex(t, prefix.IndexConfig{Scheme: f.scheme, Hasher: f.hasher, MaxPages: 4})
	rng := rand.New(rand.NewPCG(3, 4))
	ds := f.digests(prompt(rng, nil, 0, 6, f.pageSize))
	for _, d := range ds[:4] {
		x.HandleBatch(f.batch(kvevents.Stored, f.pageKeys(d)...))
	}
	// The fifth: the hand clears the four reference bits and evicts page 0.
	x.HandleBatch(f.batch(kvevents.Stored, f.pageKeys(ds[4])...))
	if x.Contains(ds[0]) || !x.Contains(ds[1]) {
		t.Fatal("the fifth page should have evicted page 0")
	}
	// Page 1 is looked up: the sixth evicts page 2, not page 1.
	if r := x.LookupDigests(ds[1:2]); r.Pages != 1 {
		t.Fatalf("lookup of page 1: %+v", r)
	}
	x.HandleBatch(f.batch(kvevents.Stored, f.pageKeys(ds[5])...))
	var got []bool
	for _, d := range ds {
		got = append(got, x.Contains(d))
	}
	if want := []bool{false, true, false, true, true, true}; !slices.Equal(got, want) {
		t.Fatalf("held %v, want %v", got, want)
	}
	if st := x.Stats(); st.Evictions != 2 || st.Pages != 4 {
		t.Fatalf("stats %+v", st)
	}
}

// TestIndexGapWithoutResync: with no exister a gap empties the index.
func TestIndexGapWithoutResync(t *testing.T) {
	f := newFixture(t, 2)
	x := newIndex(t, prefix.IndexConfig{Scheme: f.scheme, Hasher: f.hasher})
	ds := f.digests(prompt(rand.New(rand.NewPCG(5, 6)), nil, 0, 3, f.pageSize))
	x.HandleBatch(f.batch(kvevents.Stored, f.pageKeys(ds...)...))
	if r := x.LookupDigests(ds); r.Pages != 3 {
		t.Fatalf("%+v", r)
	}
	x.HandleGap(kvevents.Gap{Reason: kvevents.Reconnected})
	if r := x.LookupDigests(ds); r.Pages != 0 {
		t.Fatalf("after a gap without resync: %+v, want empty", r)
	}
	x.HandleBatch(f.batch(kvevents.Stored, f.pageKeys(ds[0])...))
	if st := x.Stats(); st.Clears != 1 || st.Pages != 1 || st.Complete != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestIndexResync: after a gap every held page is checked in the store;
// events that arrive while a check is answered win over its answer.
func TestIndexResync(t *testing.T) {
	f := newFixture(t, 2)
	st := newFakeStore()
	x := newIndex(t, prefix.IndexConfig{Scheme: f.scheme, Hasher: f.hasher, Resync: st, ResyncBatch: 2,
		LearnFor: -1, Confirm: -1, RetryMin: time.Millisecond, RetryMax: time.Millisecond})
	ds := f.digests(prompt(rand.New(rand.NewPCG(7, 8)), nil, 0, 6, f.pageSize))
	store := func(present bool, keys ...string) {
		for _, k := range keys {
			st.set(k, present)
		}
	}
	// Pages 0-5 stored, with events.
	store(true, f.pageKeys(ds...)...)
	x.HandleBatch(f.batch(kvevents.Stored, f.pageKeys(ds...)...))
	// During a gap: page 1 loses a component, page 4 goes, page 5 goes and
	// an unrelated page is stored. None of it is seen.
	store(false, f.keys(ds[1])[1])
	store(false, f.pageKeys(ds[4], ds[5])...)
	if r := x.LookupDigests(ds); r.Pages != 6 {
		t.Fatalf("before the gap: %+v", r)
	}
	st.fail.Store(2) // the first two calls fail: retried
	x.HandleGap(kvevents.Gap{Reason: kvevents.Reconnected})
	waitFor(t, "the resync", resynced(x))
	if r := x.LookupDigests(ds); r.Pages != 1 {
		t.Fatalf("after the resync: %+v, want 1 (page 1 lost a component)", r)
	}
	s := x.Stats()
	if s.Resyncs != 1 || s.ResyncErrors != 2 || s.ResyncPages != 6 || s.ResyncDropped != 2 || s.ResyncFixed != 3 || s.Pages != 4 {
		t.Fatalf("stats %+v: want 1 pass, 2 errors, 6 pages checked, 2 dropped, 3 fixed, 4 held", s)
	}

	// Changes made after the store answered, whose events arrive before the
	// answer is applied (pages 0 and 1 are the first call's batch): page 0
	// loses its first component, page 1 gets its second back. The events
	// are newer than the answer and win.
	st.mu.Lock()
	st.after = func() {
		store(false, f.keys(ds[0])[0])
		x.HandleBatch(f.batch(kvevents.Removed, f.keys(ds[0])[0]))
		store(true, f.keys(ds[1])[1])
		x.HandleBatch(f.batch(kvevents.Stored, f.keys(ds[1])[1]))
	}
	st.mu.Unlock()
	x.HandleGap(kvevents.Gap{Reason: kvevents.SequenceGap, After: 10, Before: 12})
	waitFor(t, "the second resync", resynced(x))
	for i, d := range ds {
		want := true
		for _, k := range f.keys(d) {
			want = want && st.has(k)
		}
		if got := x.Contains(d); got != want {
			t.Errorf("page %d: index %v, store %v", i, got, want)
		}
	}
	if x.Contains(ds[0]) || !x.Contains(ds[1]) {
		t.Fatal("the events during the check did not win")
	}

	// A key whose check fails keeps what the index knew.
	st.mu.Lock()
	st.perKeyFail[f.keys(ds[2])[0]] = true
	st.mu.Unlock()
	store(false, f.keys(ds[2])[0])
	x.HandleGap(kvevents.Gap{Reason: kvevents.Reconnected})
	waitFor(t, "the third resync", resynced(x))
	if !x.Contains(ds[2]) {
		t.Fatal("a component whose check failed was dropped")
	}
}

// TestIndexResyncConfirm: what a resync finds absent does not count, and is
// checked again Confirm later: forgotten if still absent, counted again if
// the store has it back (a new HA leader's first answers).
func TestIndexResyncConfirm(t *testing.T) {
	f := newFixture(t, 2)
	st := newFakeStore()
	x := newIndex(t, prefix.IndexConfig{Scheme: f.scheme, Hasher: f.hasher, Resync: st, LearnFor: -1, Confirm: 50 * time.Millisecond})
	ds := f.digests(prompt(rand.New(rand.NewPCG(19, 20)), nil, 0, 4, f.pageSize))
	keys := f.pageKeys(ds...)
	for _, k := range keys {
		st.set(k, true)
	}
	x.HandleBatch(f.batch(kvevents.Stored, keys...))
	// The store answers "absent" for pages 1-3 at the resync; pages 1 and 2
	// are back by the confirmation, page 3 is gone for good.
	for _, k := range f.pageKeys(ds[1:]...) {
		st.set(k, false)
	}
	st.mu.Lock()
	st.after = func() {
		for _, k := range f.pageKeys(ds[1:3]...) {
			st.set(k, true)
		}
	}
	st.mu.Unlock()
	x.HandleGap(kvevents.Gap{Reason: kvevents.Resubscribed})
	waitFor(t, "the resync", resynced(x))
	if r := x.LookupDigests(ds); r.Pages != 1 {
		t.Fatalf("before the confirmation: %+v, want 1 (pages found absent do not count)", r)
	}
	waitFor(t, "the confirmation", func() bool { s := x.Stats(); return s.ResyncRestored+s.ResyncDropped == 3 })
	if r := x.LookupDigests(ds); r.Pages != 3 || x.Contains(ds[3]) {
		t.Fatalf("after the confirmation: %+v, want 3", r)
	}
	if s := x.Stats(); s.ResyncRestored != 2 || s.ResyncDropped != 1 || s.Pages != 3 {
		t.Fatalf("stats %+v: want 2 restored, 1 dropped, 3 held", s)
	}
}

// TestIndexLearn: pages stored during a gap are found when looked up.
func TestIndexLearn(t *testing.T) {
	f := newFixture(t, 2)
	st := newFakeStore()
	now := time.Unix(1000, 0)
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	x := newIndex(t, prefix.IndexConfig{Scheme: f.scheme, Hasher: f.hasher, Resync: st, LearnFor: time.Minute,
		LearnTTL: time.Hour, Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	rng := rand.New(rand.NewPCG(9, 10))
	toks := prompt(rng, nil, 0, 8, f.pageSize)
	ds := f.digests(toks)
	for _, k := range f.pageKeys(ds[:6]...) {
		st.set(k, true)
	}
	// No gap yet: misses are not checked.
	if r, _ := x.Lookup(nil, toks); r.Pages != 0 || x.Stats().Learning {
		t.Fatalf("before any gap: %+v learning=%v", r, x.Stats().Learning)
	}
	x.HandleGap(kvevents.Gap{Reason: kvevents.Started})
	waitFor(t, "the resync", resynced(x))
	if r, _ := x.Lookup(nil, toks); r.Pages != 0 {
		t.Fatalf("first lookup after the gap: %+v", r)
	}
	prefix.Quiesce(x)
	if r, _ := x.Lookup(nil, toks); r.Pages != 6 || x.Stats().Learned != 6 {
		t.Fatalf("after learning: %+v, %+v, want 6 pages", r, x.Stats())
	}
	// That lookup missed page 6 (absent): one more check. Within LearnTTL
	// the same first missing page is not checked again.
	prefix.Quiesce(x)
	calls := st.calls.Load()
	for i := 0; i < 10; i++ {
		x.Lookup(nil, toks)
	}
	prefix.Quiesce(x)
	if s := x.Stats(); s.LearnChecks != 2 || st.calls.Load() != calls {
		t.Fatalf("repeated misses made checks: %+v (calls %d -> %d)", s, calls, st.calls.Load())
	}
	// A removal made after a learning check answered, whose event arrives
	// before the answer is applied, wins.
	other := f.digests(prompt(rng, toks, 6, 10, f.pageSize))
	for _, k := range f.pageKeys(other[6:]...) {
		st.set(k, true)
	}
	st.mu.Lock()
	st.after = func() {
		st.set(f.keys(other[7])[1], false)
		x.HandleBatch(f.batch(kvevents.Removed, f.keys(other[7])[1]))
	}
	st.mu.Unlock()
	x.LookupDigests(other)
	prefix.Quiesce(x)
	if s := x.Stats(); s.LearnChecks != 3 || s.Learned != 9 {
		t.Fatalf("stats %+v: want 3 checks, 9 pages learned", s)
	}
	if r := x.LookupDigests(other); r.Pages != 7 || !x.Contains(other[9]) || x.Contains(other[7]) {
		t.Fatalf("after a removal during learning: %+v", r)
	}
	// Learning ends LearnFor after the gap.
	clock.Add(int64(2 * time.Minute))
	if x.Stats().Learning {
		t.Fatal("still learning after LearnFor")
	}
}

// TestIndexModel drives the index with random stores and removals of
// components of pages of prompts sharing prefixes, in the store's order.
// Without lost batches or evictions the index equals the store after every
// batch. With some batches lost (each followed by a gap, as the subscriber
// reports it) or with evictions, no page ever counts unless the store has
// it whole, after every batch and after every resync.
func TestIndexModel(t *testing.T) {
	for _, tc := range []struct {
		maxPages int
		lossy    bool
	}{{0, false}, {0, true}, {40, true}} {
		t.Run(fmt.Sprintf("max%d_lossy%v", tc.maxPages, tc.lossy), func(t *testing.T) {
			f := newFixture(t, 2)
			st := newFakeStore()
			x := newIndex(t, prefix.IndexConfig{Scheme: f.scheme, Hasher: f.hasher, Resync: st, ResyncBatch: 7,
				MaxPages: tc.maxPages, LearnFor: -1})
			rng := rand.New(rand.NewPCG(11, uint64(tc.maxPages)))
			base := prompt(rng, nil, 0, 12, f.pageSize)
			var prompts [][]uint32
			var all []prefix.Digest
			for i := 0; i < 8; i++ {
				p := prompt(rng, base, rng.IntN(12), 12, f.pageSize)
				prompts = append(prompts, p)
				all = append(all, f.digests(p)...)
			}
			complete := func(d prefix.Digest) bool {
				for _, k := range f.keys(d) {
					if !st.has(k) {
						return false
					}
				}
				return true
			}
			compare := func(round int, exact bool) {
				t.Helper()
				for i, d := range all {
					got, want := x.Contains(d), complete(d)
					if got && !want || exact && got != want {
						t.Fatalf("round %d: page %d: index %v, store %v", round, i, got, want)
					}
				}
				for i, p := range prompts {
					r, _ := x.Lookup(nil, p)
					n := 0
					for _, d := range f.digests(p) {
						if !complete(d) {
							break
						}
						n++
					}
					if r.Pages > n || exact && r.Pages != n {
						t.Fatalf("round %d: prompt %d: %d pages, the store has %d", round, i, r.Pages, n)
					}
				}
			}
			for round := 0; round < 300; round++ {
				var evs []kvevents.Event
				for n := rng.IntN(20); n > 0; n-- {
					ks := f.keys(all[rng.IntN(len(all))])
					if rng.IntN(3) == 0 {
						k := ks[rng.IntN(len(ks))]
						st.set(k, false)
						evs = append(evs, kvevents.Event{Kind: kvevents.Removed, Key: k})
						continue
					}
					for _, k := range ks {
						st.set(k, true)
						evs = append(evs, kvevents.Event{Kind: kvevents.Stored, Key: k})
					}
				}
				if tc.lossy && rng.IntN(10) == 0 {
					x.HandleGap(kvevents.Gap{Reason: kvevents.SequenceGap})
					waitFor(t, "a resync", resynced(x))
				} else {
					x.HandleBatch(f.events(evs))
				}
				compare(round, !tc.lossy && tc.maxPages == 0)
			}
			s := x.Stats()
			if tc.lossy && s.Resyncs == 0 || tc.maxPages > 0 && (s.Evictions == 0 || s.Pages > tc.maxPages) {
				t.Fatalf("stats %+v: the test did not exercise what it should", s)
			}
		})
	}
}

// TestIndexConcurrent: lookups from many goroutines while events, gaps and
// resyncs run (for -race), then the index equals the store.
func TestIndexConcurrent(t *testing.T) {
	f := newFixture(t, 2)
	st := newFakeStore()
	x := newIndex(t, prefix.IndexConfig{Scheme: f.scheme, Hasher: f.hasher, Resync: st, ResyncBatch: 5, MaxPages: 200})
	rng := rand.New(rand.NewPCG(13, 14))
	base := prompt(rng, nil, 0, 16, f.pageSize)
	var prompts [][]uint32
	var all []prefix.Digest
	for i := 0; i < 20; i++ {
		p := prompt(rng, base, rng.IntN(16), 16, f.pageSize)
		prompts = append(prompts, p)
		all = append(all, f.digests(p)...)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := x.Lookup(nil, prompts[(i+g)%len(prompts)]); err != nil {
					t.Error(err)
					return
				}
				_ = x.Stats()
			}
		}(g)
	}
	for round := 0; round < 400; round++ {
		d := all[rng.IntN(len(all))]
		ks := f.keys(d)
		kind := kvevents.Stored
		if rng.IntN(3) == 0 {
			kind = kvevents.Removed
		}
		for _, k := range ks {
			st.set(k, kind == kvevents.Stored)
		}
		if rng.IntN(20) == 0 {
			x.HandleGap(kvevents.Gap{Reason: kvevents.SequenceGap})
			continue
		}
		x.HandleBatch(f.batch(kind, ks...))
	}
	x.HandleGap(kvevents.Gap{Reason: kvevents.Reconnected})
	waitFor(t, "the last resync", resynced(x))
	close(stop)
	wg.Wait()
	for i, d := range all {
		whole := true
		for _, k := range f.keys(d) {
			whole = whole && st.has(k)
		}
		if x.Contains(d) && !whole {
			t.Fatalf("page %d counts but the store lacks it", i)
		}
	}
}

// TestIndexLookupAllocs: a lookup allocates nothing in steady state, with
// learning on or off.
func TestIndexLookupAllocs(t *testing.T) {
	f := newFixture(t, 16)
	rng := rand.New(rand.NewPCG(15, 16))
	toks := prompt(rng, nil, 0, 64, f.pageSize)
	ds := f.digests(toks)
	for _, learn := range []bool{false, true} {
		cfg := prefix.IndexConfig{Scheme: f.scheme, Hasher: f.hasher}
		if learn {
			st := newFakeStore()
			for _, k := range f.pageKeys(ds[:40]...) {
				st.set(k, true)
			}
			cfg.Resync, cfg.LearnTTL = st, time.Hour
		}
		x := newIndex(t, cfg)
		x.HandleBatch(f.batch(kvevents.Stored, f.pageKeys(ds[:40]...)...))
		if learn {
			x.HandleGap(kvevents.Gap{Reason: kvevents.Started})
			waitFor(t, "the resync", resynced(x))
		}
		x.Lookup(nil, toks)
		prefix.Quiesce(x) // the learning check of the first miss is done
		allocs := testing.AllocsPerRun(200, func() {
			if r, err := x.Lookup(nil, toks); err != nil || r.Pages != 40 {
				t.Fatalf("%+v %v", r, err)
			}
		})
		if allocs != 0 && !raceEnabled {
			t.Errorf("learning %v: %v allocations per lookup", learn, allocs)
		}
	}
}

// TestIndexWideScheme: a page of more than 64 components (every rank of
// TP 40, K and V: 80 keys) counts only when all are stored, through events
// and through a resync.
func TestIndexWideScheme(t *testing.T) {
	f := newFixture(t, 2)
	f.scheme = schemeOf(t, prefix.SchemeConfig{Keys: hostcache.KeyConfig{TPSize: 40}, Ranks: prefix.AllRanks})
	if n := f.scheme.ComponentsPerPage(); n != 80 {
		t.Fatalf("%d components, want 80", n)
	}
	st := newFakeStore()
	x := newIndex(t, prefix.IndexConfig{Scheme: f.scheme, Hasher: f.hasher, Resync: st, LearnFor: -1})
	ds := f.digests(prompt(rand.New(rand.NewPCG(17, 18)), nil, 0, 2, f.pageSize))
	keys := f.pageKeys(ds...)
	for _, k := range keys {
		st.set(k, true)
	}
	x.HandleBatch(f.batch(kvevents.Stored, keys[:79]...))
	x.HandleBatch(f.batch(kvevents.Stored, keys[80:]...))
	if r := x.LookupDigests(ds); r.Pages != 0 || !x.Contains(ds[1]) {
		t.Fatalf("79 of 80 components: %+v", r)
	}
	x.HandleBatch(f.batch(kvevents.Stored, keys[79]))
	if r := x.LookupDigests(ds); r.Pages != 2 {
		t.Fatalf("all components: %+v", r)
	}
	x.HandleBatch(f.batch(kvevents.Removed, keys[70]))
	if r := x.LookupDigests(ds); r.Pages != 0 {
		t.Fatalf("component 70 removed: %+v", r)
	}
	// Lost: component 70 comes back, component 150 (page 1's 71st) goes.
	st.set(keys[150], false)
	x.HandleGap(kvevents.Gap{Reason: kvevents.Reconnected})
	waitFor(t, "the resync", resynced(x))
	if r := x.LookupDigests(ds); r.Pages != 1 || x.Contains(ds[1]) {
		t.Fatalf("after the resync: %+v", r)
	}
}

// TestIndexRefresh: removals the master does not publish (BatchRemove, a
// segment gone with its client, any removal with --enable_oplog) are
// found by the periodic refresh, which does not mark the index as
// resyncing.
func TestIndexRefresh(t *testing.T) {
	f := newFixture(t, 2)
	st := newFakeStore()
	x := newIndex(t, prefix.IndexConfig{Scheme: f.scheme, Hasher: f.hasher, Resync: st, LearnFor: -1, Confirm: -1,
		Refresh: 20 * time.Millisecond})
	ds := f.digests(prompt(rand.New(rand.NewPCG(21, 22)), nil, 0, 3, f.pageSize))
	keys := f.pageKeys(ds...)
	for _, k := range keys {
		st.set(k, true)
	}
	x.HandleBatch(f.batch(kvevents.Stored, keys...))
	st.set(f.keys(ds[1])[0], false) // removed, and no event says so
	waitFor(t, "a refresh", func() bool { return x.LookupDigests(ds).Pages == 1 })
	if s := x.Stats(); s.Refreshes == 0 || s.Resyncs != 0 || s.Resyncing {
		t.Fatalf("stats %+v: want refreshes, no resync", s)
	}
}

// TestIndexLookupLazyEqualsEager: Lookup, which hashes a few pages at a
// time and stops at the first page the index lacks, answers as hashing
// every page and counting (LookupDigests) does, in both modes, for both
// id types, with and without a prior, whatever the prompt's length.
func TestIndexLookupLazyEqualsEager(t *testing.T) {
	for _, mode := range []prefix.Mode{prefix.Plain, prefix.Bigram} {
		for _, pageSize := range []int{1, 3} {
			f := newFixture(t, pageSize)
			h, err := prefix.NewHasher(prefix.HashConfig{PageSize: pageSize, Mode: mode, MemoPages: 64})
			if err != nil {
				t.Fatal(err)
			}
			x := newIndex(t, prefix.IndexConfig{Scheme: f.scheme, Hasher: h, MaxPages: 1 << 16})
			rng := rand.New(rand.NewPCG(uint64(pageSize), uint64(mode)))
			base := prompt(rng, nil, 0, 40, pageSize)
			var prior prefix.Digest
			for i := range 200 {
				toks := prompt(rng, base, rng.IntN(41), 40, pageSize)[:rng.IntN(40*pageSize+1)]
				pr := &prior
				if i%2 == 0 {
					pr = nil
				}
				ds, _ := h.AppendPages(nil, pr, toks)
				// Store a random leading run of the pages, and some after a hole.
				k := rng.IntN(len(ds) + 1)
				x.HandleBatch(f.batch(kvevents.Stored, f.pageKeys(ds[:k]...)...))
				if k+1 < len(ds) {
					x.HandleBatch(f.batch(kvevents.Stored, f.pageKeys(ds[k+1:]...)...))
				}
				want := x.LookupDigests(ds)
				got, err := x.Lookup(pr, toks)
				if err != nil || got != want {
					t.Fatalf("%v page %d, prompt %d (%d tokens): Lookup %+v %v, want %+v", mode, pageSize, i, len(toks), got, err, want)
				}
				wide := make([]int64, len(toks))
				for j, v := range toks {
					wide[j] = int64(v)
				}
				if got, err := x.LookupInt64(pr, wide); err != nil || got != want {
					t.Fatalf("%v page %d, prompt %d: LookupInt64 %+v %v, want %+v", mode, pageSize, i, got, err, want)
				}
				if want.HasLast {
					prior = want.LastHash
				}
			}
		}
	}
}

// TestIndexLookupInt64RefusesUnhashedIDs: an id out of range is refused
// even where the lookup would not hash it (after the first missing page).
func TestIndexLookupInt64RefusesUnhashedIDs(t *testing.T) {
	f := newFixture(t, 2)
	x := newIndex(t, prefix.IndexConfig{Scheme: f.scheme, Hasher: f.hasher})
	toks := make([]int64, 100)
	toks[99] = -1
	if _, err := x.LookupInt64(nil, toks); !errors.Is(err, prefix.ErrTokenRange) {
		t.Fatalf("got %v, want ErrTokenRange", err)
	}
}
