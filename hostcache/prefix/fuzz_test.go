package prefix

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/mooncake-go/mooncake-go/hostcache"
)

// FuzzHash compares the hashing with reference (the slow, obvious way) in
// every mode, and checks the refusals.
func FuzzHash(f *testing.F) {
	f.Add(uint8(2), uint8(0), []byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0}, []byte{})
	f.Add(uint8(1), uint8(1), []byte{10, 0, 0, 0, 0, 0, 0, 0, 11, 0, 0, 0, 0, 0, 0, 0}, make([]byte, 32))
	f.Add(uint8(3), uint8(3), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 1, 0, 0, 0, 1, 0, 0, 0}, []byte{7})
	f.Fuzz(func(t *testing.T, ps, flags uint8, raw, priorRaw []byte) {
		cfg := HashConfig{PageSize: int(ps%8) + 1, Mode: Mode(flags & 1), WideTokens: flags&2 != 0}
		h, err := NewHasher(cfg)
		if err != nil {
			t.Fatal(err)
		}
		// Ids: 8 bytes each, signed; narrow most of them so that pages
		// are mostly valid.
		toks := make([]int64, len(raw)/8)
		for i := range toks {
			v := int64(binary.LittleEndian.Uint64(raw[8*i:]))
			if flags&4 == 0 {
				v = int64(uint32(v))
			}
			toks[i] = v
		}
		var prior *Digest
		if len(priorRaw) >= 32 {
			prior = (*Digest)(priorRaw[:32])
		}
		got, err := h.AppendPagesInt64(nil, prior, toks)
		limit := uint64(math.MaxUint32)
		if cfg.WideTokens {
			limit = math.MaxInt64
		}
		bad := -1
		for i, v := range toks {
			if v < 0 || uint64(v) > limit {
				bad = i
				break
			}
		}
		if bad >= 0 {
			var te *TokenError
			if !errors.As(err, &te) || te.Index != bad {
				t.Fatalf("want a refusal at %d, got %v", bad, err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		want := reference(cfg, prior, toks)
		if len(got) != len(want) || len(got) != h.Pages(len(toks)) {
			t.Fatalf("%d pages, reference %d, Pages %d", len(got), len(want), h.Pages(len(toks)))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("page %d differs", i)
			}
		}
	})
}

// FuzzParseKey: a key ParseKey accepts is exactly the key Key builds back,
// and every built key parses.
func FuzzParseKey(f *testing.F) {
	tag := "tag"
	s, err := NewScheme(SchemeConfig{Keys: hostcache.KeyConfig{TPSize: 2, PPSize: 2, ExtraBackendTag: &tag, ModelName: "org/m"}})
	if err != nil {
		f.Fatal(err)
	}
	d := Digest{0xab, 0xcd}
	for i := 0; i < s.ComponentsPerPage(); i++ {
		f.Add([]byte(s.Key(d, i)))
	}
	f.Add([]byte("tag_org-m_" + d.String() + "_0_k"))
	f.Add([]byte("tag_org-m_" + d.String()[:63] + "G_0_0_k"))
	f.Add([]byte("x"))
	f.Fuzz(func(t *testing.T, key []byte) {
		d, c, ok := s.ParseKey(key)
		if !ok {
			if d != (Digest{}) || c != 0 {
				t.Fatalf("refused, yet %v %d", d, c)
			}
			return
		}
		if back := s.Key(d, c); back != string(key) {
			t.Fatalf("ParseKey(%q) = %v, %d; Key gives %q", key, d, c, back)
		}
	})
}

// FuzzParsePrior: a prior either parses to 32 bytes whose hex, spaced or
// not, parses back, or is refused with ErrInvalidDigest.
func FuzzParsePrior(f *testing.F) {
	f.Add("")
	f.Add(Digest{1, 2, 3}.String())
	f.Add(" 0a 0B")
	f.Add("0")
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParsePrior(s)
		switch {
		case err != nil:
			if d != nil || !errors.Is(err, ErrInvalidDigest) {
				t.Fatalf("%q: %v %v", s, d, err)
			}
		case s == "":
			if d != nil {
				t.Fatal("empty prior parsed")
			}
		default:
			if d == nil {
				t.Fatal("nil digest, nil error")
			}
			again, err := ParseDigest(d.String())
			if err != nil || again != *d {
				t.Fatalf("%q: %v round trip: %v %v", s, d, again, err)
			}
		}
		if pd, err := ParseDigest(s); err == nil {
			if pp, err := ParsePrior(s); err != nil || *pp != pd {
				t.Fatalf("%q: ParseDigest accepts, ParsePrior %v %v", s, pp, err)
			}
		}
	})
}
