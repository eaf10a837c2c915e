package hostcache

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// KeyConfig selects SGLang's Mooncake key scheme (mooncake_store.py: _get_mha_suffix / _get_mla_suffix and the key builders).
type KeyConfig struct {
	TPRank, TPSize int
	PPRank, PPSize int
	// RankReplicated is SGLang's is_mla_model: MLA / DeepSeek V4 KV that is
	// identical on every TP rank; keys then carry no TP rank.
	RankReplicated bool
	// SplitFactor > 1 enables split heads (tp_lcm_size / tp_size): each page
	// is stored as F head groups with the TP ranks tp*F ... tp*F+F-1.
	SplitFactor int
	// ExtraBackendTag, when non-nil, is the first prefix part (SGLang
	// extra_config["extra_backend_tag"]; an empty tag still adds "_").
	ExtraBackendTag *string
	// ModelName, when non-empty, is the next prefix part with "/" replaced
	// by "-" (newest SGLang).
	ModelName string
	// Fingerprint, when non-empty, is the last prefix part (opt-in layout
	// fingerprint; off by default for compatibility with SGLang).
	Fingerprint string
}

// MaxRanks bounds a key scheme's TP and PP sizes: far above any
// deployment, low enough that split-head ranks never overflow.
const MaxRanks = 1 << 20

// KeyScheme builds SGLang-compatible Mooncake keys. It is immutable and safe
// for concurrent use.
type KeyScheme struct {
	tagPrefix string // prefix including the trailing "_", or ""
	tagged    bool
	mha       string
	mla       string
	split     []string // split-heads mha suffixes (nil without split heads)
	rankRep   bool
	v1        []string // v1 suffixes per page
}

// NewKeyScheme validates cfg and returns the scheme.
func NewKeyScheme(cfg KeyConfig) (*KeyScheme, error) {
	const what = "key scheme"
	if cfg.TPSize == 0 {
		cfg.TPSize = 1
	}
	if cfg.PPSize == 0 {
		cfg.PPSize = 1
	}
	if cfg.TPRank < 0 || cfg.TPSize < 1 || cfg.TPRank >= cfg.TPSize {
		return nil, &ConfigError{What: what, Field: "tp rank", Reason: fmt.Sprintf("rank %d of %d", cfg.TPRank, cfg.TPSize)}
	}
	if cfg.PPRank < 0 || cfg.PPSize < 1 || cfg.PPRank >= cfg.PPSize {
		return nil, &ConfigError{What: what, Field: "pp rank", Reason: fmt.Sprintf("rank %d of %d", cfg.PPRank, cfg.PPSize)}
	}
	if cfg.TPSize > MaxRanks || cfg.PPSize > MaxRanks {
		return nil, &ConfigError{What: what, Field: "tp/pp size", Reason: fmt.Sprintf("%d x %d: at most %d each", cfg.TPSize, cfg.PPSize, MaxRanks)}
	}
	if cfg.SplitFactor < 0 || cfg.SplitFactor > 1<<16 {
		return nil, &ConfigError{What: what, Field: "split factor", Reason: strconv.Itoa(cfg.SplitFactor)}
	}
	if f := cfg.SplitFactor; f > 1 && cfg.TPRank > (math.MaxInt32-f)/f {
		// The split ranks tp*F .. tp*F+F-1 must be numbers, not wrapped ones.
		return nil, &ConfigError{What: what, Field: "split factor", Reason: fmt.Sprintf("rank %d x split %d overflows", cfg.TPRank, f)}
	}
	s := &KeyScheme{rankRep: cfg.RankReplicated}
	var parts []string
	if cfg.ExtraBackendTag != nil {
		parts = append(parts, *cfg.ExtraBackendTag)
	}
	if cfg.ModelName != "" {
		parts = append(parts, strings.ReplaceAll(cfg.ModelName, "/", "-"))
	}
	if cfg.Fingerprint != "" {
		parts = append(parts, cfg.Fingerprint)
	}
	if len(parts) > 0 {
		s.tagged = true
		s.tagPrefix = strings.Join(parts, "_") + "_"
	}
	tp, pp := strconv.Itoa(cfg.TPRank), strconv.Itoa(cfg.PPRank)
	if cfg.PPSize > 1 {
		s.mha, s.mla = tp+"_"+pp, pp
	} else {
		s.mha, s.mla = tp, ""
	}
	if cfg.SplitFactor > 1 && !cfg.RankReplicated {
		for i := 0; i < cfg.SplitFactor; i++ {
			r := strconv.Itoa(cfg.TPRank*cfg.SplitFactor + i)
			if cfg.PPSize > 1 {
				r += "_" + pp
			}
			s.split = append(s.split, r)
		}
	}
	switch {
	case cfg.RankReplicated:
		s.v1 = []string{"_" + s.mla + "_k"}
	case s.split != nil:
		for _, r := range s.split {
			s.v1 = append(s.v1, "_"+r+"_k", "_"+r+"_v")
		}
	default:
		s.v1 = []string{"_" + s.mha + "_k", "_" + s.mha + "_v"}
	}
	return s, nil
}

// Prefix returns the tagging prefix including its trailing "_" ("" when
// keys are not tagged).
func (s *KeyScheme) Prefix() string { return s.tagPrefix }

// MHASuffix and MLASuffix return SGLang's mha_suffix and mla_suffix.
func (s *KeyScheme) MHASuffix() string { return s.mha }

// MLASuffix returns mla_suffix ("" without pipeline parallelism).
func (s *KeyScheme) MLASuffix() string { return s.mla }

// SplitHeads reports whether split heads are active.
func (s *KeyScheme) SplitHeads() bool { return s.split != nil }

// Tag returns the tagged form of a page key (allocates).
func (s *KeyScheme) Tag(key string) string { return s.tagPrefix + key }

// V1Suffixes returns the per-page v1 suffixes in storage order:
// ["_{mla}_k"] (rank-replicated), ["_{mha}_k", "_{mha}_v"] (MHA), or the
// split-heads pairs. The slice must not be modified.
func (s *KeyScheme) V1Suffixes() []string { return s.v1 }

// V1Keys returns the v1 keys of pageKeys (allocates; see Build for reuse).
func (s *KeyScheme) V1Keys(pageKeys []string) []string {
	var k hostmem.Keys
	s.Build(&k, pageKeys, s.v1)
	return k.Strings()
}

// V2Suffixes returns the component suffixes of side pool name (SGLang
// _get_hybrid_page_component_keys) in the component order of the pool's page
// meta. pool is the registered side pool.
//
// As in SGLang, "indexer", "draft_indexer" and the DeepSeek V4 pools are
// keyed with mla_suffix only: their keys carry no TP rank even when the pool
// is sharded by rank (a K-only MHA index pool), so such a pool must hold the
// same bytes on every rank that shares the cluster. Pools keyed with
// mha_suffix ("mamba", MHA "swa"/"draft") are refused with split heads.
func (s *KeyScheme) V2Suffixes(name PoolName, pool Pool) ([]string, error) {
	out, _, err := s.v2Suffixes(name, pool)
	return out, err
}

// PoolShape is what a side pool's v2 key suffixes depend on besides its
// name: a router that expands keys without host pools describes the pools
// with it (ShapeOf gives a registered pool's).
type PoolShape struct {
	Kind Kind
	// HasV: the pool has a v_buffer (the MHA kinds).
	HasV bool
	// MambaTemporal and MambaConv: a Mamba pool's temporal component and
	// number of conv states.
	MambaTemporal bool
	MambaConv     int
}

// ShapeOf returns the shape of pool.
func ShapeOf(pool Pool) PoolShape {
	h := pool.host()
	return PoolShape{Kind: pool.Kind(), HasV: h.hasV, MambaTemporal: h.mambaT, MambaConv: h.mambaNC}
}

// V2SuffixesOf is V2Suffixes for a pool described by its shape.
func (s *KeyScheme) V2SuffixesOf(name PoolName, shape PoolShape) ([]string, error) {
	out, _, err := s.v2SuffixesOf(name, shape)
	return out, err
}

// v2Suffixes also reports whether the keys carry the TP rank (mha_suffix).
func (s *KeyScheme) v2Suffixes(name PoolName, pool Pool) ([]string, bool, error) {
	if pool == nil {
		return nil, false, &PoolError{Name: name, Reason: "not registered", Err: ErrUnregisteredPool}
	}
	return s.v2SuffixesOf(name, ShapeOf(pool))
}

func (s *KeyScheme) v2SuffixesOf(name PoolName, h PoolShape) ([]string, bool, error) {
	unsupported := func(reason string) error {
		return &PoolError{Name: name, Reason: reason, Err: ErrUnsupportedPool}
	}
	mla := "_" + s.mla + "_"
	mha := "_" + s.mha + "_"
	needMHA := false
	var out []string
	switch name {
	case PoolKV:
		out = []string{mla + "k"}
	case PoolMamba:
		if h.Kind != KindMamba {
			return nil, false, unsupported(fmt.Sprintf("the mamba pool must be a Mamba state pool, got %s", h.Kind))
		}
		needMHA = true
		if h.MambaTemporal {
			out = append(out, mha+"temporal")
		}
		for i := 0; i < h.MambaConv; i++ {
			out = append(out, mha+"conv_"+strconv.Itoa(i))
		}
	case PoolDraft:
		if h.Kind == KindMLA {
			out = []string{mla + "draft_k"}
		} else {
			needMHA = true
			out = []string{mha + "draft_k", mha + "draft_v"}
		}
	case PoolDraftSWA:
		switch h.Kind {
		case KindV4Paged, KindMLA:
			out = []string{mla + "draft_swa"}
		case KindMHA, KindAsymmetricMHA:
			needMHA = true
			out = []string{mha + "draft_swa_k", mha + "draft_swa_v"}
		}
	case PoolIndexer, PoolDraftIndexer, PoolDeepSeekV4C4, PoolDeepSeekV4C4Indexer, PoolDeepSeekV4C4IndexerScale,
		PoolDeepSeekV4C128, PoolDeepSeekV4C4State, PoolDeepSeekV4C4IndexerState, PoolDeepSeekV4C128State:
		out = []string{mla + string(name)}
	case PoolSWA:
		switch {
		case !s.rankRep && h.HasV:
			needMHA = true
			out = []string{mha + "swa_k", mha + "swa_v"}
		case s.rankRep:
			out = []string{mla + "swa"}
		}
	}
	if len(out) == 0 {
		return nil, false, unsupported(fmt.Sprintf("no key scheme for pool %q with a %s host pool", string(name), h.Kind))
	}
	if needMHA && s.split != nil {
		return nil, false, unsupported("v2 pools keyed by TP rank are not supported with split heads")
	}
	return out, needMHA, nil
}

// Build sets k to the packed keys prefix+pageKey+suffix for every page key
// (page-major, suffix-minor). It reuses k's buffers, so building keys of the
// same shape again does not allocate. The result is bytes, not strings:
// the next Build rewrites them in place (copy a key with k.String to keep
// it). No suffixes means one key per page, without a suffix (not no keys).
func (s *KeyScheme) Build(k *hostmem.Keys, pageKeys []string, suffixes []string) {
	k.Reset()
	if len(suffixes) == 0 {
		suffixes = noSuffix
	}
	appendKeys(k, s.tagPrefix, pageKeys, suffixes)
}

var noSuffix = []string{""}

// keysLen returns the total byte length of the keys prefix+pageKey+suffix.
func keysLen(prefix string, pageKeys []string, suffixes []string) int {
	m := len(suffixes)
	if m == 0 || len(pageKeys) == 0 {
		return 0
	}
	sfx := 0
	for _, x := range suffixes {
		sfx += len(x)
	}
	total := len(pageKeys) * (len(prefix)*m + sfx)
	for _, pk := range pageKeys {
		total += len(pk) * m
	}
	return total
}

// keySlack is the spare room appendKeys may scribble into past the keys (it
// stores short suffixes as one 8-byte word).
const keySlack = 8

// appendKeys appends prefix+pageKey+suffix for every page key and suffix to
// k, whose Offsets must hold at least the leading 0.
//
// Suffixes of at most 8 bytes ("_0_k") are stored as one 8-byte word whose
// spare bytes are overwritten by the next key (or land in the slack), and
// 64-character page hashes (SGLang's) are loaded once into eight words and
// stored once per key: the hot case of one or two suffixes per page.
func appendKeys(k *hostmem.Keys, prefix string, pageKeys []string, suffixes []string) {
	total := keysLen(prefix, pageKeys, suffixes)
	m := len(suffixes)
	n := len(pageKeys) * m
	if n == 0 {
		return
	}
	base := len(k.Buf)
	a := slices.Grow(k.Buf, total+keySlack)
	a = a[:cap(a)]
	offs := slices.Grow(k.Offsets, n)
	le := binary.LittleEndian
	var words [8]uint64
	short := m <= len(words)
	for j, x := range suffixes {
		if !short || len(x) > 8 {
			short = false
			break
		}
		var w [8]byte
		copy(w[:], x)
		words[j] = le.Uint64(w[:])
	}
	words2 := short && (m == 1 || m == 2)
	lp := len(prefix)
	var l0, l1 int
	w0, w1 := words[0], words[1]
	if words2 {
		l0 = len(suffixes[0])
		l1 = len(suffixes[m-1])
	}
	off := base
	ko := len(offs)
	offs = offs[:ko+n]
	o := offs[ko:]
	kk := 0
	for _, pk := range pageKeys {
		if words2 && len(pk) == 64 {
			src := unsafe.Slice(unsafe.StringData(pk), 64)
			x0, x1, x2, x3 := le.Uint64(src[0:]), le.Uint64(src[8:]), le.Uint64(src[16:]), le.Uint64(src[24:])
			x4, x5, x6, x7 := le.Uint64(src[32:]), le.Uint64(src[40:]), le.Uint64(src[48:]), le.Uint64(src[56:])
			if lp > 0 {
				off += copy(a[off:], prefix)
			}
			d := a[off : off+72]
			le.PutUint64(d[0:], x0)
			le.PutUint64(d[8:], x1)
			le.PutUint64(d[16:], x2)
			le.PutUint64(d[24:], x3)
			le.PutUint64(d[32:], x4)
			le.PutUint64(d[40:], x5)
			le.PutUint64(d[48:], x6)
			le.PutUint64(d[56:], x7)
			le.PutUint64(d[64:], w0)
			off += 64 + l0
			o[kk] = uint64(off)
			kk++
			if m == 2 {
				if lp > 0 {
					off += copy(a[off:], prefix)
				}
				d = a[off : off+72]
				le.PutUint64(d[0:], x0)
				le.PutUint64(d[8:], x1)
				le.PutUint64(d[16:], x2)
				le.PutUint64(d[24:], x3)
				le.PutUint64(d[32:], x4)
				le.PutUint64(d[40:], x5)
				le.PutUint64(d[48:], x6)
				le.PutUint64(d[56:], x7)
				le.PutUint64(d[64:], w1)
				off += 64 + l1
				o[kk] = uint64(off)
				kk++
			}
			continue
		}
		for j, x := range suffixes {
			if lp > 0 {
				off += copy(a[off:], prefix)
			}
			off += copy(a[off:], pk)
			if short {
				le.PutUint64(a[off:off+8], words[j])
				off += len(x)
			} else {
				off += copy(a[off:], x)
			}
			o[kk] = uint64(off)
			kk++
		}
	}
	k.Buf, k.Offsets = a[:off], offs
}
