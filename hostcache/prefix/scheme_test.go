package prefix

import (
	"errors"
	"strings"
	"testing"

	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

func strp(s string) *string { return &s }

var v4Pools = []PoolSpec{
	{Name: hostcache.PoolDeepSeekV4C4, Shape: hostcache.PoolShape{Kind: hostcache.KindV4Paged}},
	{Name: hostcache.PoolDeepSeekV4C4Indexer, Shape: hostcache.PoolShape{Kind: hostcache.KindV4Paged}},
	{Name: hostcache.PoolDeepSeekV4C128, Shape: hostcache.PoolShape{Kind: hostcache.KindV4Paged}},
	{Name: hostcache.PoolDeepSeekV4C4State, Shape: hostcache.PoolShape{Kind: hostcache.KindV4State}},
}

func TestSchemeComponents(t *testing.T) {
	cases := []struct {
		name   string
		cfg    SchemeConfig
		prefix string
		want   []string
	}{
		{"MHA, one GPU", SchemeConfig{}, "", []string{"_0_k", "_0_v"}},
		{"MHA TP2 PP2, all ranks (pp-major)", SchemeConfig{Keys: hostcache.KeyConfig{TPSize: 2, PPSize: 2}}, "",
			[]string{"_0_0_k", "_0_0_v", "_1_0_k", "_1_0_v", "_0_1_k", "_0_1_v", "_1_1_k", "_1_1_v"}},
		{"MHA TP2, rank 1 only", SchemeConfig{Keys: hostcache.KeyConfig{TPRank: 1, TPSize: 2}, Ranks: OneRank}, "",
			[]string{"_1_k", "_1_v"}},
		{"MLA TP4: every rank shares one key", SchemeConfig{Keys: hostcache.KeyConfig{TPSize: 4, RankReplicated: true}}, "",
			[]string{"__k"}},
		{"MLA TP2 PP2", SchemeConfig{Keys: hostcache.KeyConfig{TPSize: 2, PPSize: 2, RankReplicated: true}}, "",
			[]string{"_0_k", "_1_k"}},
		{"split heads TP2 x 2, tagged", SchemeConfig{Keys: hostcache.KeyConfig{TPSize: 2, SplitFactor: 2, ExtraBackendTag: strp("tag")}}, "tag_",
			[]string{"_0_k", "_0_v", "_1_k", "_1_v", "_2_k", "_2_v", "_3_k", "_3_v"}},
		{"model name prefix", SchemeConfig{Keys: hostcache.KeyConfig{ModelName: "meta-llama/Llama-3-8B"}}, "meta-llama-Llama-3-8B_",
			[]string{"_0_k", "_0_v"}},
		{"DeepSeek V4: logical anchor, side pools", SchemeConfig{
			Keys:      hostcache.KeyConfig{TPSize: 8, RankReplicated: true, ExtraBackendTag: strp("tag"), ModelName: "deepseek-ai/DeepSeek-V4"},
			LogicalKV: true, Pools: v4Pools}, "tag_deepseek-ai-DeepSeek-V4_",
			[]string{"__deepseek_v4_c4", "__deepseek_v4_c4_indexer", "__deepseek_v4_c128", "__deepseek_v4_c4_state"}},
		{"MHA + Mamba TP2", SchemeConfig{Keys: hostcache.KeyConfig{TPSize: 2},
			Pools: []PoolSpec{{Name: hostcache.PoolMamba, Shape: hostcache.PoolShape{Kind: hostcache.KindMamba, MambaTemporal: true, MambaConv: 2}}}}, "",
			[]string{"_0_k", "_0_v", "_0_temporal", "_0_conv_0", "_0_conv_1", "_1_k", "_1_v", "_1_temporal", "_1_conv_0", "_1_conv_1"}},
		{"MLA + indexer and kv pools (shared keys count once)", SchemeConfig{Keys: hostcache.KeyConfig{TPSize: 2, RankReplicated: true},
			Pools: []PoolSpec{{Name: hostcache.PoolIndexer, Shape: hostcache.PoolShape{Kind: hostcache.KindDSAIndexer}}, {Name: hostcache.PoolKV}}}, "",
			[]string{"__k", "__indexer"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := NewScheme(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Components(); !equalStrings(got, c.want) || s.ComponentsPerPage() != len(c.want) {
				t.Fatalf("components %q, want %q", got, c.want)
			}
			if s.Prefix() != c.prefix {
				t.Fatalf("prefix %q, want %q", s.Prefix(), c.prefix)
			}
			d := Digest{0xde, 0xad, 0xbe, 0xef}
			var k hostmem.Keys
			s.AppendKeys(&k, d)
			if k.Len() != len(c.want) {
				t.Fatalf("%d keys", k.Len())
			}
			for i := range c.want {
				want := c.prefix + d.String() + c.want[i]
				if k.String(i) != want || s.Key(d, i) != want || s.KeyLen(i) != len(want) {
					t.Fatalf("key %d: %q / %q, want %q", i, k.String(i), s.Key(d, i), want)
				}
				pd, pc, ok := s.ParseKey(k.Bytes(i))
				if !ok || pd != d || pc != i {
					t.Fatalf("ParseKey(%q) = %v %d %v", k.String(i), pd, pc, ok)
				}
			}
		})
	}
}

// TestSchemeMatchesKeyScheme: the one-rank scheme's keys are
// hostcache.KeyScheme's v1 keys (the backend's own), for the golden configs.
func TestSchemeMatchesKeyScheme(t *testing.T) {
	d := Digest{1, 2, 3}
	for _, kc := range []hostcache.KeyConfig{
		{}, {TPRank: 3, TPSize: 4}, {TPRank: 1, TPSize: 2, PPRank: 1, PPSize: 3}, {RankReplicated: true, PPRank: 1, PPSize: 2},
		{TPRank: 1, TPSize: 2, SplitFactor: 3, ModelName: "a/b", Fingerprint: "fp"},
	} {
		s, err := NewScheme(SchemeConfig{Keys: kc, Ranks: OneRank})
		if err != nil {
			t.Fatal(err)
		}
		ks, err := hostcache.NewKeyScheme(kc)
		if err != nil {
			t.Fatal(err)
		}
		want := ks.V1Keys([]string{d.String()})
		var k hostmem.Keys
		s.AppendKeys(&k, d)
		if got := k.Strings(); !equalStrings(got, want) {
			t.Errorf("%+v: %q, KeyScheme %q", kc, got, want)
		}
	}
}

func TestNewSchemeRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  SchemeConfig
		want error
	}{
		{"logical anchor without pools", SchemeConfig{LogicalKV: true}, ErrInvalidConfig},
		{"unknown ranks", SchemeConfig{Ranks: 9}, ErrInvalidConfig},
		{"rank out of range", SchemeConfig{Keys: hostcache.KeyConfig{TPRank: 2, TPSize: 2}, Ranks: OneRank}, hostcache.ErrInvalidConfig},
		{"negative size", SchemeConfig{Keys: hostcache.KeyConfig{TPSize: -1}}, ErrInvalidConfig},
		{"too many ranks", SchemeConfig{Keys: hostcache.KeyConfig{TPSize: 128, PPSize: 64}}, ErrInvalidConfig},
		{"mamba with split heads", SchemeConfig{Keys: hostcache.KeyConfig{TPSize: 2, SplitFactor: 2},
			Pools: []PoolSpec{{Name: hostcache.PoolMamba, Shape: hostcache.PoolShape{Kind: hostcache.KindMamba, MambaConv: 1}}}}, hostcache.ErrUnsupportedPool},
		{"unknown pool", SchemeConfig{Pools: []PoolSpec{{Name: "nope"}}}, hostcache.ErrUnsupportedPool},
	} {
		_, err := NewScheme(c.cfg)
		if !errors.Is(err, c.want) || !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

func TestParseKeyRefuses(t *testing.T) {
	s, err := NewScheme(SchemeConfig{Keys: hostcache.KeyConfig{TPSize: 2, ModelName: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	h := Digest{0xab}.String()
	for _, key := range []string{
		"",
		"m_" + h,                           // no suffix
		"m_" + h + "_2_k",                  // another rank
		"m_" + h + "_0_k_",                 // longer suffix
		"n_" + h + "_0_k",                  // another model
		h + "_0_k",                         // untagged
		"m_" + strings.ToUpper(h) + "_0_k", // SGLang writes lower case
		"m_" + h[:63] + "_0_k",             // short hash
		"m_" + h[:62] + "zz_0_k",           // not hex
		"m_" + h + "_0_k" + strings.Repeat("x", 100),
	} {
		if d, c, ok := s.ParseKeyString(key); ok || d != (Digest{}) || c != 0 {
			t.Errorf("ParseKey(%q) = %v %d %v", key, d, c, ok)
		}
	}
	if _, c, ok := s.ParseKeyString("m_" + h + "_1_v"); !ok || c != 3 {
		t.Errorf("rank 1's v: %d %v", c, ok)
	}
}

func TestAppendKeysAllocs(t *testing.T) {
	s, err := NewScheme(SchemeConfig{Keys: hostcache.KeyConfig{TPSize: 4, ModelName: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	pages := make([]Digest, 64)
	var k hostmem.Keys
	s.AppendPageKeys(&k, pages)
	if n := testing.AllocsPerRun(100, func() { k.Reset(); s.AppendPageKeys(&k, pages) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
	key := []byte(s.Key(Digest{1}, 5))
	if n := testing.AllocsPerRun(100, func() { s.ParseKey(key) }); n != 0 {
		t.Errorf("ParseKey: %v allocations", n)
	}
}

func BenchmarkParseKey(b *testing.B) {
	s, err := NewScheme(SchemeConfig{Keys: hostcache.KeyConfig{TPSize: 8, ModelName: "org/model"}})
	if err != nil {
		b.Fatal(err)
	}
	key := []byte(s.Key(Digest{1, 2}, 9))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok := s.ParseKey(key); !ok {
			b.Fatal("not parsed")
		}
	}
}

func TestDigest(t *testing.T) {
	d, err := ParseDigest("8000000000000000" + strings.Repeat("0", 48))
	if err != nil {
		t.Fatal(err)
	}
	// SGLang's hash_str_to_int64 cases.
	for _, c := range []struct {
		hex  string
		want int64
	}{
		{strings.Repeat("0", 64), 0},
		{"0000000000000001" + strings.Repeat("0", 48), 1},
		{"7fffffffffffffff" + strings.Repeat("0", 48), 1<<63 - 1},
		{"8000000000000000" + strings.Repeat("0", 48), -1 << 63},
		{strings.Repeat("f", 16) + strings.Repeat("0", 48), -1},
		{strings.Repeat("a", 16) + strings.Repeat("f", 48), int64(-0x5555555555555556)},
	} {
		d, err := ParseDigest(c.hex)
		if err != nil || d.Int64() != c.want || d.String() != c.hex {
			t.Errorf("%s: %v %d %v", c.hex, d, d.Int64(), err)
		}
	}
	if got := string(d.AppendHex([]byte("x"))); got != "x"+d.String() {
		t.Errorf("AppendHex %q", got)
	}
	for _, bad := range []string{"", "00", strings.Repeat("0", 63), strings.Repeat("0", 65), strings.Repeat("g", 64), " " + strings.Repeat("0", 63)} {
		if _, err := ParseDigest(bad); !errors.Is(err, ErrInvalidDigest) {
			t.Errorf("ParseDigest(%q): %v", bad, err)
		}
	}
	if u, err := ParseDigest(strings.ToUpper(d.String())); err != nil || u != d {
		t.Errorf("upper case: %v %v", u, err)
	}
}
