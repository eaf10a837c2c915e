package prefix

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

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
