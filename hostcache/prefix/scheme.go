package prefix

import (
	"fmt"
	"slices"

	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// Ranks says whose keys make a page.
type Ranks uint8

const (
	// AllRanks: a page is stored when every rank of the deployment stored
	// its part (every TP × PP rank, each split-heads group): SGLang counts a
	// hit on each rank and takes the minimum over ranks (an all-reduce MIN),
	// so a router that sees all ranks' keys gets the same answer. Keys that
	// every rank shares (MLA, the indexer and DeepSeek V4 pools) count once.
	AllRanks Ranks = iota
	// OneRank: the keys of SchemeConfig.Keys.TPRank and PPRank only (what
	// that rank's batch_exists checks).
	OneRank
)

func (r Ranks) String() string {
	switch r {
	case AllRanks:
		return "all ranks"
	case OneRank:
		return "one rank"
	}
	return fmt.Sprintf("ranks(%d)", uint8(r))
}

// PoolSpec is a side pool stored with every page (SGLang's v2 pools:
// Mamba states, SWA, the indexer, DeepSeek V4's compressed pools, the
// draft model's), described by its name and shape.
type PoolSpec struct {
	Name  hostcache.PoolName
	Shape hostcache.PoolShape
}

// SchemeConfig describes the Mooncake keys of one page of a deployment.
type SchemeConfig struct {
	// Keys are the key rules SGLang's Mooncake backend follows
	// (hostcache.KeyConfig: the extra backend tag, model name and
	// fingerprint prefix, TP and PP sizes, MLA / rank-replicated KV, split
	// heads). With AllRanks, TPRank and PPRank are not used.
	Keys  hostcache.KeyConfig
	Ranks Ranks
	// LogicalKV: the KV anchor pool has no buffer (DeepSeek V4's logical
	// anchor), so a page has no v1 key and lives in Pools only.
	LogicalKV bool
	// Pools are the side pools whose keys a page also needs (SGLang's
	// batch_exists_v2 with the all_pages hit policy).
	Pools []PoolSpec
}

// Scheme is the set of component keys that make up one page: a page is
// present only if all of them are. It is immutable and safe for concurrent
// use.
type Scheme struct {
	prefix     string
	components []string       // suffix of each component key, in key order
	index      map[string]int // suffix -> component
	maxSuffix  int
}

// NewScheme builds the component keys with hostcache.KeyScheme's rules
// (NewKeyScheme, V1Suffixes, V2SuffixesOf) for every rank cfg names.
func NewScheme(cfg SchemeConfig) (*Scheme, error) {
	kc := cfg.Keys
	if kc.TPSize == 0 {
		kc.TPSize = 1
	}
	if kc.PPSize == 0 {
		kc.PPSize = 1
	}
	type rank struct{ tp, pp int }
	var ranks []rank
	switch cfg.Ranks {
	case AllRanks:
		if kc.TPSize < 1 || kc.PPSize < 1 || kc.TPSize > hostcache.MaxRanks || kc.PPSize > hostcache.MaxRanks {
			return nil, &ConfigError{What: "scheme", Field: "tp/pp size", Reason: fmt.Sprintf("%d x %d", kc.TPSize, kc.PPSize)}
		}
		if n := kc.TPSize * kc.PPSize * max(kc.SplitFactor, 1); n > maxComponentRanks {
			return nil, &ConfigError{What: "scheme", Field: "ranks", Reason: fmt.Sprintf("%d rank groups, more than the %d a page's keys are checked for in one call", n, maxComponentRanks)}
		}
		for pp := 0; pp < kc.PPSize; pp++ {
			for tp := 0; tp < kc.TPSize; tp++ {
				ranks = append(ranks, rank{tp, pp})
			}
		}
	case OneRank:
		ranks = []rank{{kc.TPRank, kc.PPRank}}
	default:
		return nil, &ConfigError{What: "scheme", Field: "ranks", Reason: cfg.Ranks.String()}
	}
	if cfg.LogicalKV && len(cfg.Pools) == 0 {
		return nil, &ConfigError{What: "scheme", Field: "pools", Reason: "a logical KV anchor stores pages in side pools only, and none is given"}
	}
	s := &Scheme{index: map[string]int{}}
	for _, r := range ranks {
		c := kc
		c.TPRank, c.PPRank = r.tp, r.pp
		ks, err := hostcache.NewKeyScheme(c)
		if err != nil {
			return nil, &ConfigError{What: "scheme", Field: "keys", Reason: fmt.Sprintf("rank tp=%d pp=%d", r.tp, r.pp), Err: err}
		}
		s.prefix = ks.Prefix()
		if !cfg.LogicalKV {
			s.add(ks.V1Suffixes())
		}
		for _, p := range cfg.Pools {
			sfx, err := ks.V2SuffixesOf(p.Name, p.Shape)
			if err != nil {
				return nil, &ConfigError{What: "scheme", Field: "pool " + string(p.Name), Reason: fmt.Sprintf("rank tp=%d pp=%d", r.tp, r.pp), Err: err}
			}
			s.add(sfx)
		}
	}
	return s, nil
}

// maxComponentRanks bounds the rank groups of an AllRanks scheme: far above
// a deployment (TP 64 x PP 16 = 1024), low enough that a page's keys stay
// one reasonable batch.
const maxComponentRanks = 4096

// add appends the suffixes not yet present, in order.
func (s *Scheme) add(suffixes []string) {
	for _, x := range suffixes {
		if _, dup := s.index[x]; dup {
			continue
		}
		s.index[x] = len(s.components)
		s.components = append(s.components, x)
		s.maxSuffix = max(s.maxSuffix, len(x))
	}
}

// ComponentsPerPage returns the number of keys of one page.
func (s *Scheme) ComponentsPerPage() int { return len(s.components) }

// Prefix returns the prefix every key starts with ("" when keys are not
// tagged).
func (s *Scheme) Prefix() string { return s.prefix }

// Components returns the suffix of each component key in key order (a new
// slice): component i of page d is Prefix() + d.String() + Components()[i].
func (s *Scheme) Components() []string { return slices.Clone(s.components) }

// KeyLen returns the length of component i's key.
func (s *Scheme) KeyLen(i int) int { return len(s.prefix) + 2*len(Digest{}) + len(s.components[i]) }

// AppendKeys appends the component keys of page d to k, in component order.
// It allocates nothing once k's buffers have grown.
func (s *Scheme) AppendKeys(k *hostmem.Keys, d Digest) {
	if len(k.Offsets) == 0 {
		k.Offsets = append(k.Offsets, 0)
	}
	for _, sfx := range s.components {
		k.Buf = append(k.Buf, s.prefix...)
		k.Buf = d.AppendHex(k.Buf)
		k.Buf = append(k.Buf, sfx...)
		k.Offsets = append(k.Offsets, uint64(len(k.Buf)))
	}
}

// AppendPageKeys appends the component keys of each page, page-major (the
// order in which Lookup checks them).
func (s *Scheme) AppendPageKeys(k *hostmem.Keys, pages []Digest) {
	for _, d := range pages {
		s.AppendKeys(k, d)
	}
}

// Key returns component i's key of page d (allocates; see AppendKeys).
func (s *Scheme) Key(d Digest, i int) string {
	b := make([]byte, 0, s.KeyLen(i))
	b = append(b, s.prefix...)
	b = d.AppendHex(b)
	return string(append(b, s.components[i]...))
}

// ParseKey maps a stored object key back to its page digest and component
// index. ok is false for a key that is not one of this scheme's: another
// prefix (model, tag), a suffix of another rank or pool, or not SGLang's
// shape (the hash must be 64 lower-case hex digits, as SGLang writes it).
// It allocates nothing.
func (s *Scheme) ParseKey(key []byte) (d Digest, component int, ok bool) {
	const hexLen = 2 * len(Digest{})
	p := len(s.prefix)
	if len(key) < p+hexLen || string(key[:p]) != s.prefix {
		return Digest{}, 0, false
	}
	rest := key[p+hexLen:]
	if len(rest) > s.maxSuffix {
		return Digest{}, 0, false
	}
	c, found := s.index[string(rest)]
	if !found {
		return Digest{}, 0, false
	}
	h := key[p : p+hexLen]
	for i := range d {
		hi, ok1 := lowerHex(h[2*i])
		lo, ok2 := lowerHex(h[2*i+1])
		if !ok1 || !ok2 {
			return Digest{}, 0, false
		}
		d[i] = hi<<4 | lo
	}
	return d, c, true
}

// ParseKeyString is ParseKey for a string key.
func (s *Scheme) ParseKeyString(key string) (Digest, int, bool) {
	return s.ParseKey([]byte(key))
}

func lowerHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
