package prefix

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// fakeExister answers from a set of keys; codes overrides a key's result;
// it counts calls and keys, and allocates nothing once its results grew.
type fakeExister struct {
	present map[string]bool
	codes   map[string]int64
	calls   int
	keys    int
	fail    error // whole-call failure
	short   bool  // answer one result too few
	err     error // returned with results when a code is negative
}

func (f *fakeExister) BatchIsExist(keys *hostmem.Keys, results []int64) ([]int64, error) {
	f.calls++
	f.keys += keys.Len()
	if f.fail != nil {
		return nil, f.fail
	}
	n := keys.Len()
	if f.short {
		n--
	}
	if cap(results) < n {
		results = make([]int64, n)
	}
	results = results[:n]
	var err error
	for i := range results {
		b := keys.Bytes(i)
		results[i] = 0
		if f.present[string(b)] {
			results[i] = 1
		}
		if c, ok := f.codes[string(b)]; ok {
			results[i] = c
			if c < 0 {
				err = f.err
			}
		}
	}
	return results, err
}

func (f *fakeExister) store(s *Scheme, pages []Digest, skip func(page, comp int) bool) {
	if f.present == nil {
		f.present = map[string]bool{}
	}
	for p, d := range pages {
		for c := 0; c < s.ComponentsPerPage(); c++ {
			if skip == nil || !skip(p, c) {
				f.present[s.Key(d, c)] = true
			}
		}
	}
}

func setup(t testing.TB, mode Mode) (*Hasher, *Scheme) {
	h := mustHasher(t, HashConfig{PageSize: 4, Mode: mode})
	s, err := NewScheme(SchemeConfig{Keys: hostcache.KeyConfig{TPSize: 2, ModelName: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	return h, s
}

func seq(n int, seed uint32) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = seed*1000003 + uint32(i)
	}
	return out
}

func TestLookupCounts(t *testing.T) {
	h, s := setup(t, Plain)
	toks := seq(4*10+3, 1) // 10 full pages
	pages, _ := h.AppendPages(nil, nil, toks)
	ctx := context.Background()
	cases := []struct {
		name   string
		stored int                       // leading pages stored
		skip   func(page, comp int) bool // components not stored
		want   int
	}{
		{"nothing stored", 0, nil, 0},
		{"all stored", 10, nil, 10},
		{"a prefix stored", 6, nil, 6},
		{"a page lacks one component (rank 1's V)", 10, func(p, c int) bool { return p == 3 && c == 3 }, 3},
		{"a hole: counting stops at the first missing page", 10, func(p, c int) bool { return p == 2 }, 2},
		{"first page lacks its K", 10, func(p, c int) bool { return p == 0 && c == 0 }, 0},
	}
	for _, c := range cases {
		f := &fakeExister{}
		f.store(s, pages[:c.stored], c.skip)
		l := NewLookup(h, s, f)
		r, err := l.Lookup(ctx, nil, toks)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := Result{Pages: c.want, Hashed: 10}
		if c.want > 0 {
			want.LastHash, want.HasLast = pages[c.want-1], true
		}
		if r != want {
			t.Errorf("%s: %+v, want %+v", c.name, r, want)
		}
		if f.calls != 1 || f.keys != 10*s.ComponentsPerPage() {
			t.Errorf("%s: %d calls, %d keys; want one call of %d keys", c.name, f.calls, f.keys, 10*s.ComponentsPerPage())
		}
	}
}

func TestLookupNoPagesNoCall(t *testing.T) {
	h, s := setup(t, Bigram)
	f := &fakeExister{}
	l := NewLookup(h, s, f)
	for _, toks := range [][]uint32{nil, seq(4, 1)} { // 4 tokens: 3 bigrams, no full page
		r, err := l.Lookup(context.Background(), nil, toks)
		if err != nil || r != (Result{}) || f.calls != 0 {
			t.Errorf("%d tokens: %+v %v, %d calls", len(toks), r, err, f.calls)
		}
	}
}

// TestLookupIncremental: a router that found a prefix extends it with the
// rest of the prompt and the last hash.
func TestLookupIncremental(t *testing.T) {
	for _, mode := range []Mode{Plain, Bigram} {
		h, s := setup(t, mode)
		toks := seq(4*12+1, 2)
		pages, _ := h.AppendPages(nil, nil, toks)
		f := &fakeExister{}
		f.store(s, pages[:9], nil)
		l := NewLookup(h, s, f)
		first, err := l.Lookup(context.Background(), nil, toks[:4*5+int(mode)])
		if err != nil || first.Pages != 5 {
			t.Fatalf("%v: %+v %v", mode, first, err)
		}
		rest, err := l.Lookup(context.Background(), &first.LastHash, toks[4*5:])
		if err != nil || rest.Pages != 4 || rest.Hashed != 7 || rest.LastHash != pages[8] {
			t.Fatalf("%v: rest %+v %v", mode, rest, err)
		}
	}
}

func TestLookupErrors(t *testing.T) {
	h, s := setup(t, Plain)
	toks := seq(4*5, 3)
	pages, _ := h.AppendPages(nil, nil, toks)
	boom := errors.New("boom")

	// A whole-call failure.
	l := NewLookup(h, s, &fakeExister{fail: boom})
	r, err := l.Lookup(context.Background(), nil, toks)
	var le *LookupError
	if !errors.As(err, &le) || !errors.Is(err, boom) || !errors.Is(err, ErrLookup) || le.Index != -1 || r.Pages != 0 || r.Hashed != 5 {
		t.Errorf("whole call: %+v %v", r, err)
	}

	// The wrong number of results.
	f := &fakeExister{short: true}
	f.store(s, pages, nil)
	if _, err := NewLookup(h, s, f).Lookup(context.Background(), nil, toks); !errors.Is(err, ErrLookup) {
		t.Errorf("short results: %v", err)
	}

	// A failed check where the prefix ends: the result and the error.
	f = &fakeExister{err: boom, codes: map[string]int64{s.Key(pages[2], 1): -704}}
	f.store(s, pages, nil)
	r, err = NewLookup(h, s, f).Lookup(context.Background(), nil, toks)
	if !errors.As(err, &le) || le.Index != 2*4+1 || le.Code != -704 || !errors.Is(err, boom) || r.Pages != 2 || r.LastHash != pages[1] {
		t.Errorf("failed key: %+v %v", r, err)
	}

	// A failed check beyond the prefix's end is not the answer's concern.
	f = &fakeExister{err: boom, codes: map[string]int64{s.Key(pages[4], 0): -704}}
	f.store(s, pages[:2], nil)
	r, err = NewLookup(h, s, f).Lookup(context.Background(), nil, toks)
	if err != nil || r.Pages != 2 {
		t.Errorf("failure past the end: %+v %v", r, err)
	}

	// A result other than 0 or 1 ends the prefix, as in SGLang (!= 1).
	f = &fakeExister{codes: map[string]int64{s.Key(pages[1], 0): 2}}
	f.store(s, pages, nil)
	if r, err := NewLookup(h, s, f).Lookup(context.Background(), nil, toks); err != nil || r.Pages != 1 {
		t.Errorf("result 2: %+v %v", r, err)
	}

	// A cancelled context makes no call.
	f = &fakeExister{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewLookup(h, s, f).Lookup(ctx, nil, toks); !errors.Is(err, context.Canceled) || f.calls != 0 {
		t.Errorf("cancelled: %v, %d calls", err, f.calls)
	}

	// Out-of-range ids are refused before any call.
	if _, err := NewLookup(h, s, f).LookupInt64(context.Background(), nil, []int64{1, 2, 3, 1 << 40}); !errors.Is(err, ErrTokenRange) || f.calls != 0 {
		t.Errorf("token range: %v, %d calls", err, f.calls)
	}
}

// TestLookupMatchesBruteForce: random prompts that share prefixes, a store
// holding random pages of them (some partially); Lookup equals a
// page-by-page existence check.
func TestLookupMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, mode := range []Mode{Plain, Bigram} {
		h, s := setup(t, mode)
		base := seq(4*40+1, 9)
		f := &fakeExister{present: map[string]bool{}}
		var prompts [][]uint32
		for i := 0; i < 50; i++ {
			p := append([]uint32(nil), base[:rng.IntN(len(base))]...)
			for j := rng.IntN(30); j > 0; j-- {
				p = append(p, rng.Uint32())
			}
			prompts = append(prompts, p)
			pages, _ := h.AppendPages(nil, nil, p)
			n := rng.IntN(len(pages) + 1)
			f.store(s, pages[:n], func(int, int) bool { return rng.IntN(20) == 0 })
		}
		l := NewLookup(h, s, f)
		for _, p := range prompts {
			r, err := l.Lookup(context.Background(), nil, p)
			if err != nil {
				t.Fatal(err)
			}
			pages, _ := h.AppendPages(nil, nil, p)
			want := 0
			for _, d := range pages {
				all := true
				for c := 0; c < s.ComponentsPerPage(); c++ {
					all = all && f.present[s.Key(d, c)]
				}
				if !all {
					break
				}
				want++
			}
			if r.Pages != want || r.Hashed != len(pages) {
				t.Fatalf("%v: %d pages stored of %d, brute force %d", mode, r.Pages, r.Hashed, want)
			}
		}
	}
}

func TestLookupAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are counted without -race (it makes sync.Pool drop items); go test without -race checks them")
	}
	h, s := setup(t, Plain)
	toks := seq(64*4, 5)
	pages, _ := h.AppendPages(nil, nil, toks)
	f := &fakeExister{}
	f.store(s, pages, nil)
	l := NewLookup(h, s, f)
	ctx := context.Background()
	prior := Digest{3}
	if _, err := l.Lookup(ctx, nil, toks); err != nil {
		t.Fatal(err)
	}
	// Nothing is allocated, so no GC empties the scratch pool meanwhile.
	if n := testing.AllocsPerRun(200, func() { _, _ = l.Lookup(ctx, &prior, toks) }); n != 0 {
		t.Errorf("Lookup of 64 pages: %v allocations per call", n)
	}
}

func BenchmarkLookup64(b *testing.B) {
	h := mustHasher(b, HashConfig{PageSize: 64})
	s, err := NewScheme(SchemeConfig{Keys: hostcache.KeyConfig{ModelName: "m"}})
	if err != nil {
		b.Fatal(err)
	}
	toks := seq(64*64, 7)
	pages, _ := h.AppendPages(nil, nil, toks)
	f := &fakeExister{}
	f.store(s, pages, nil)
	l := NewLookup(h, s, f)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if r, err := l.Lookup(ctx, nil, toks); err != nil || r.Pages != 64 {
			b.Fatal(r, err)
		}
	}
}

// gatedExister holds its first call until released, so that the requests
// made meanwhile queue behind it.
type gatedExister struct {
	*fakeExister
	mu      sync.Mutex
	gate    chan struct{}
	entered chan struct{}
	sizes   []int
}

func (g *gatedExister) BatchIsExist(keys *hostmem.Keys, results []int64) ([]int64, error) {
	g.mu.Lock()
	gate := g.gate
	g.gate = nil
	g.sizes = append(g.sizes, keys.Len())
	g.mu.Unlock()
	if gate != nil {
		close(g.entered)
		<-gate
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.fakeExister.BatchIsExist(keys, results)
}

func (l *Lookup) queued() int { return l.queue.Queued() }

// TestLookupCombines: requests made while a call is in flight cross
// together in the next call, each with its own answer.
func TestLookupCombines(t *testing.T) {
	h, s := setup(t, Plain)
	const n = 12
	f := &fakeExister{present: map[string]bool{}}
	prompts := make([][]uint32, n)
	want := make([]int, n)
	for i := range prompts {
		prompts[i] = seq(4*6, uint32(100+i))
		pages, _ := h.AppendPages(nil, nil, prompts[i])
		want[i] = i % 7
		f.store(s, pages[:want[i]], nil)
		if i == 5 { // one request's page fails to be checked
			f.codes = map[string]int64{s.Key(pages[want[i]], 1): -900}
			f.err = errors.New("check failed")
		}
	}
	gate := make(chan struct{})
	g := &gatedExister{fakeExister: f, gate: gate, entered: make(chan struct{})}
	l := NewLookup(h, s, g)
	first := make(chan error, 1)
	go func() {
		_, err := l.Lookup(context.Background(), nil, seq(4, 999))
		first <- err
	}()
	<-g.entered
	var wg sync.WaitGroup
	results := make([]Result, n)
	errs := make([]error, n)
	for i := range prompts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = l.Lookup(context.Background(), nil, prompts[i])
		}()
	}
	for l.queued() < n {
		time.Sleep(time.Millisecond)
	}
	close(gate)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for i := range prompts {
		if results[i].Pages != want[i] || results[i].Hashed != 6 {
			t.Errorf("request %d: %+v, want %d pages", i, results[i], want[i])
		}
		var le *LookupError
		if i == 5 {
			if !errors.As(errs[i], &le) || le.Code != -900 || le.Index != want[i]*4+1 {
				t.Errorf("request 5: %v", errs[i])
			}
		} else if errs[i] != nil {
			t.Errorf("request %d: %v", i, errs[i])
		}
	}
	// The gated call, then at most one call for the queued twelve (one
	// leader takes them all: 12 x 24 keys fit MaxCombinedKeys).
	if len(g.sizes) != 2 || g.sizes[1] != n*6*4 {
		t.Errorf("calls of %v keys, want [4 %d]", g.sizes, n*6*4)
	}
	if st := l.Stats(); st.Lookups != n+1 || st.Calls != 2 || st.Combined != n {
		t.Errorf("stats %+v", st)
	}
}

// TestLookupLeavesOnContext: a request queued behind a call in flight
// returns its context's error when the context ends, and is not carried
// by the next call; the other queued requests are.
func TestLookupLeavesOnContext(t *testing.T) {
	h, s := setup(t, Plain)
	gate := make(chan struct{})
	g := &gatedExister{fakeExister: &fakeExister{present: map[string]bool{}}, gate: gate, entered: make(chan struct{})}
	l := NewLookup(h, s, g)
	go func() { _, _ = l.Lookup(context.Background(), nil, seq(4, 1)) }()
	<-g.entered
	ctx, cancel := context.WithCancel(context.Background())
	leaving := make(chan error, 1)
	go func() { _, err := l.Lookup(ctx, nil, seq(8, 2)); leaving <- err }()
	staying := make(chan error, 1)
	go func() { _, err := l.Lookup(context.Background(), nil, seq(12, 3)); staying <- err }()
	for l.queued() < 2 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case err := <-leaving:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the request whose context ended: %v", err)
		}
	case <-time.After(10 * time.Second):
		close(gate)
		t.Fatal("a queued request did not leave when its context ended")
	}
	close(gate)
	if err := <-staying; err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	// Keys per call: the gated request's 4, then the staying one's 12 alone
	// (with the request that left, 20).
	if len(g.sizes) != 2 || g.sizes[1] != 12 {
		t.Errorf("calls of %v keys, want [4 12]: the request that left is not carried", g.sizes)
	}
}

// TestLookupCombinedFailure: a combined call that fails as a whole fails
// every request it carried.
func TestLookupCombinedFailure(t *testing.T) {
	h, s := setup(t, Plain)
	boom := errors.New("boom")
	gate := make(chan struct{})
	g := &gatedExister{fakeExister: &fakeExister{}, gate: gate, entered: make(chan struct{})}
	l := NewLookup(h, s, g)
	go func() { _, _ = l.Lookup(context.Background(), nil, seq(4, 1)) }()
	<-g.entered
	g.mu.Lock()
	g.fail = boom
	g.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, 5)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = l.Lookup(context.Background(), nil, seq(8, uint32(i)))
		}()
	}
	for l.queued() < len(errs) {
		time.Sleep(time.Millisecond)
	}
	close(gate)
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, boom) || !errors.Is(err, ErrLookup) {
			t.Errorf("request %d: %v", i, err)
		}
	}
}

// TestLookupConcurrent: many callers at once (under -race) all get the
// brute-force answer.
func TestLookupConcurrent(t *testing.T) {
	h, s := setup(t, Bigram)
	f := &fakeExister{present: map[string]bool{}}
	var prompts [][]uint32
	var want []int
	for i := 0; i < 40; i++ {
		p := seq(4*5+1, uint32(i))
		pages, _ := h.AppendPages(nil, nil, p)
		f.store(s, pages[:i%6], nil)
		prompts = append(prompts, p)
		want = append(want, i%6)
	}
	var mu sync.Mutex
	l := NewLookup(h, s, existerFunc(func(k *hostmem.Keys, r []int64) ([]int64, error) {
		mu.Lock()
		defer mu.Unlock()
		return f.BatchIsExist(k, r)
	}))
	var wg sync.WaitGroup
	for c := 0; c < 8; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 200; k++ {
				i := (c*31 + k) % len(prompts)
				r, err := l.Lookup(context.Background(), nil, prompts[i])
				if err != nil || r.Pages != want[i] {
					t.Errorf("prompt %d: %+v %v", i, r, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if st := l.Stats(); st.Lookups != 1600 || st.Calls > st.Lookups {
		t.Errorf("stats %+v", st)
	}
}

type existerFunc func(*hostmem.Keys, []int64) ([]int64, error)

func (f existerFunc) BatchIsExist(k *hostmem.Keys, r []int64) ([]int64, error) { return f(k, r) }
