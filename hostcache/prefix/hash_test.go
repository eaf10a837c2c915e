package prefix

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mooncake-go/mooncake-go/hostcache"
)

// golden is testdata/prefix/hashes.json (written by gen_hashes.py beside it).
type golden struct {
	Cases []struct {
		Name     string
		Mode     string
		Wide     bool
		PageSize int `json:"page_size"`
		Prior    string
		Tokens   []int64
		Hashes   []string
		Refused  *int `json:"refused_index"`
	}
	Priors []struct {
		Input, Verdict, Hex string
	}
}

func readGolden(t testing.TB) golden {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "prefix", "hashes.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) == 0 || len(g.Priors) == 0 {
		t.Fatal("no golden cases")
	}
	return g
}

func mustHasher(t testing.TB, cfg HashConfig) *Hasher {
	t.Helper()
	h, err := NewHasher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func hexes(ds []Digest) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.String()
	}
	return out
}

func TestGoldenHashes(t *testing.T) {
	g := readGolden(t)
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			mode := Plain
			if c.Mode == "bigram" {
				mode = Bigram
			}
			h := mustHasher(t, HashConfig{PageSize: c.PageSize, Mode: mode, WideTokens: c.Wide})
			prior, err := ParsePrior(c.Prior)
			if err != nil {
				t.Fatal(err)
			}
			got, err := h.AppendPagesInt64(nil, prior, c.Tokens)
			if c.Refused != nil {
				var te *TokenError
				if !errors.As(err, &te) || !errors.Is(err, ErrTokenRange) || te.Index != *c.Refused || te.Value != c.Tokens[*c.Refused] {
					t.Fatalf("AppendPagesInt64: got %v, want a TokenError at %d", err, *c.Refused)
				}
				if got != nil {
					t.Fatalf("refused, yet returned %d digests", len(got))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := c.Hashes
			if want == nil {
				want = []string{}
			}
			if g := hexes(got); !equalStrings(g, want) {
				t.Fatalf("int64 path:\n got %v\nwant %v", g, want)
			}
			if h.Pages(len(c.Tokens)) != len(want) {
				t.Fatalf("Pages(%d) = %d, want %d", len(c.Tokens), h.Pages(len(c.Tokens)), len(want))
			}
			// The uint32 path, where every id fits.
			u := make([]uint32, 0, len(c.Tokens))
			for _, x := range c.Tokens {
				if x > math.MaxUint32 {
					return
				}
				u = append(u, uint32(x))
			}
			got32, err := h.AppendPages(nil, prior, u)
			if err != nil {
				t.Fatal(err)
			}
			if g := hexes(got32); !equalStrings(g, want) {
				t.Fatalf("uint32 path:\n got %v\nwant %v", g, want)
			}
			// hostcache.PageHashes is the same plain hashing.
			if mode == Plain {
				hs, err := hostcache.PageHashes(c.Prior, u, c.PageSize)
				if err != nil {
					t.Fatal(err)
				}
				if !equalStrings(hs, want) {
					t.Fatalf("hostcache.PageHashes:\n got %v\nwant %v", hs, want)
				}
			}
		})
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestGoldenPriors(t *testing.T) {
	g := readGolden(t)
	for _, p := range g.Priors {
		d, err := ParsePrior(p.Input)
		switch p.Verdict {
		case "none":
			if d != nil || err != nil {
				t.Errorf("%q: got %v, %v; want no prior", p.Input, d, err)
			}
		case "ok":
			if err != nil || d == nil || d.String() != p.Hex {
				t.Errorf("%q: got %v, %v; want %s", p.Input, d, err, p.Hex)
			}
		case "refused":
			if d != nil || !errors.Is(err, ErrInvalidDigest) {
				t.Errorf("%q: got %v, %v; want ErrInvalidDigest", p.Input, d, err)
			}
		default:
			t.Fatalf("verdict %q", p.Verdict)
		}
		// hostcache.PageHashes refuses what SGLang refuses too (it takes
		// no whitespace, which no hash SGLang passes on has).
		if strings.ContainsAny(p.Input, " ") {
			continue
		}
		if _, err := hostcache.PageHashes(p.Input, []uint32{1, 2}, 1); (err != nil) != (p.Verdict == "refused") {
			t.Errorf("hostcache.PageHashes(%q): %v", p.Input, err)
		}
	}
}

// TestGoldenHashesMemo: a hasher with a memo gives the golden digests too,
// the first time (misses) and the second (hits).
func TestGoldenHashesMemo(t *testing.T) {
	for _, c := range readGolden(t).Cases {
		if c.Refused != nil {
			continue
		}
		mode := Plain
		if c.Mode == "bigram" {
			mode = Bigram
		}
		h := mustHasher(t, HashConfig{PageSize: c.PageSize, Mode: mode, WideTokens: c.Wide, MemoPages: 4096})
		prior, err := ParsePrior(c.Prior)
		if err != nil {
			t.Fatal(err)
		}
		want := c.Hashes
		if want == nil {
			want = []string{}
		}
		for round := range 2 {
			got, err := h.AppendPagesInt64(nil, prior, c.Tokens)
			if err != nil {
				t.Fatal(err)
			}
			if g := hexes(got); !equalStrings(g, want) {
				t.Fatalf("%s, round %d:\n got %v\nwant %v", c.Name, round, g, want)
			}
		}
		// Two pages may share a slot, so a page of the second round can
		// miss again; most must hit.
		if st := h.MemoStats(); st.Hits+st.Misses != uint64(2*len(want)) || st.Misses < uint64(len(want)) || len(want) > 0 && st.Hits == 0 {
			t.Fatalf("%s: %+v for %d pages hashed twice", c.Name, st, len(want))
		}
	}
}

func TestNewHasherRefuses(t *testing.T) {
	for _, cfg := range []HashConfig{{PageSize: 0}, {PageSize: -1}, {PageSize: 4, Mode: 7}, {PageSize: 4, MemoPages: -1}} {
		if _, err := NewHasher(cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
	h := mustHasher(t, HashConfig{PageSize: 3, Mode: Bigram, WideTokens: true})
	if h.Config() != (HashConfig{PageSize: 3, Mode: Bigram, WideTokens: true}) {
		t.Errorf("Config() = %+v", h.Config())
	}
}

// TestRefusalKeepsDst: a refused request leaves dst as it was.
func TestRefusalKeepsDst(t *testing.T) {
	h := mustHasher(t, HashConfig{PageSize: 1})
	dst := []Digest{{1}}
	out, err := h.AppendPagesInt64(dst, nil, []int64{1, 2, -3})
	if !errors.Is(err, ErrTokenRange) || len(out) != 1 || out[0] != (Digest{1}) {
		t.Fatalf("got %v, %v", out, err)
	}
	if !strings.Contains(err.Error(), "token 2 is -3") {
		t.Errorf("message %q", err)
	}
}

// reference hashes pages the slow, obvious way (one byte slice per page),
// independently of internal/pagehash.
func reference(cfg HashConfig, prior *Digest, tokens []int64) []Digest {
	var units [][]int64
	if cfg.Mode == Bigram {
		for i := 0; i+1 < len(tokens); i++ {
			units = append(units, []int64{tokens[i], tokens[i+1]})
		}
	} else {
		for _, t := range tokens {
			units = append(units, []int64{t})
		}
	}
	var out []Digest
	var prev []byte
	if prior != nil {
		prev = prior[:]
	}
	for p := 0; p+cfg.PageSize <= len(units); p += cfg.PageSize {
		var flat []int64
		for _, u := range units[p : p+cfg.PageSize] {
			flat = append(flat, u...)
		}
		wide := false
		for _, x := range flat {
			wide = wide || x > math.MaxUint32
		}
		b := append([]byte(nil), prev...)
		if wide {
			b = append(b, 0xff)
			for _, x := range flat {
				b = binary.LittleEndian.AppendUint64(b, uint64(x))
			}
		} else {
			for _, x := range flat {
				b = binary.LittleEndian.AppendUint32(b, uint32(x))
			}
		}
		d := Digest(sha256.Sum256(b))
		out = append(out, d)
		prev = d[:]
	}
	return out
}

// TestIncremental: hashing a prompt in two calls, the second chained from
// the first's last hash, gives the hashes of one call (what a router does
// when it extends a prefix it found).
func TestIncremental(t *testing.T) {
	toks := make([]uint32, 1000)
	for i := range toks {
		toks[i] = uint32(i*7919) ^ 0x5bd1e995
	}
	for _, mode := range []Mode{Plain, Bigram} {
		h := mustHasher(t, HashConfig{PageSize: 16, Mode: mode})
		all, _ := h.AppendPages(nil, nil, toks)
		for cut := 1; cut < len(all); cut += 7 {
			// The rest starts where page cut does: at token cut*P (in
			// bigram mode the rest keeps the shared token).
			head, _ := h.AppendPages(nil, nil, toks[:cut*16+int(mode)])
			rest, _ := h.AppendPages(head[:0:0], &head[len(head)-1], toks[cut*16:])
			got := append(head, rest...)
			if len(got) != len(all) {
				t.Fatalf("%v cut %d: %d pages, want %d", mode, cut, len(got), len(all))
			}
			for i := range all {
				if got[i] != all[i] {
					t.Fatalf("%v cut %d: page %d differs", mode, cut, i)
				}
			}
		}
	}
}

func TestAppendPagesAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are counted without -race (it makes sync.Pool drop items); go test without -race checks them")
	}
	toks := make([]uint32, 64*64)
	toks64 := make([]int64, len(toks))
	for i := range toks {
		toks[i] = uint32(i)
		toks64[i] = int64(i)
	}
	for _, mode := range []Mode{Plain, Bigram} {
		h := mustHasher(t, HashConfig{PageSize: 64, Mode: mode, WideTokens: true})
		dst := make([]Digest, 0, 64)
		prior := Digest{9}
		if n := testing.AllocsPerRun(100, func() { dst, _ = h.AppendPages(dst[:0], &prior, toks) }); n != 0 {
			t.Errorf("%v AppendPages: %v allocations per call", mode, n)
		}
		if n := testing.AllocsPerRun(100, func() { dst, _ = h.AppendPagesInt64(dst[:0], &prior, toks64) }); n != 0 {
			t.Errorf("%v AppendPagesInt64: %v allocations per call", mode, n)
		}
	}
}

func BenchmarkAppendPages64(b *testing.B) {
	for _, mode := range []Mode{Plain, Bigram} {
		b.Run(mode.String(), func(b *testing.B) {
			h := mustHasher(b, HashConfig{PageSize: 64, Mode: mode})
			toks := make([]uint32, 64*64+1)
			for i := range toks {
				toks[i] = uint32(i)
			}
			dst := make([]Digest, 0, 64)
			b.SetBytes(int64(4 * 64 * 64))
			b.ReportAllocs()
			for b.Loop() {
				dst, _ = h.AppendPages(dst[:0], nil, toks)
			}
		})
	}
}
