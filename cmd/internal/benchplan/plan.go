// Package benchplan is what the benchmark clients and the report agree on:
// the plan (the list of cases one run measures, built from Params), the
// plan file that `mcbench -list` writes and scripts/bench_python.py reads,
// and the JSON of a run's results.
//
// The Go client (cmd/mcbench) builds the plan; the Python client takes it
// from the plan file, so both measure the same cases by construction, and
// the report (cmd/internal/benchreport) refuses to put two cases side by side
// unless their parameters match exactly.
package benchplan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Scenario names. The first five are upstream's store_kv_bench scenarios
// (mooncake-store/benchmarks/store_kv_bench.py); the rest are the HiCache
// workloads this project exists for.
const (
	VerifyWrite   = "verify_write"   // write N objects, read every one back and check its bytes
	Fill          = "fill"           // write N objects (count-based)
	WritePerf     = "write_perf"     // write fresh objects for the measured duration
	ReadPerf      = "read_perf"      // prepare a dataset, read it sequentially for the measured duration
	MixedRW       = "mixed_rw"       // prepare a dataset; batch reads of it mixed with writes of fresh objects
	HiCacheSet    = "hicache_set"    // Backend.BatchSetV1 / SGLang batch_set_v1 of fresh pages
	HiCacheGet    = "hicache_get"    // Backend.BatchGetV1 / SGLang batch_get_v1 of stored pages
	HiCacheExists = "hicache_exists" // Backend.BatchExists / SGLang batch_exists of stored pages
	MultiPut      = "multi_put"      // batch_put_from_multi_buffers with prebuilt lists
	MultiGet      = "multi_get"      // batch_get_into_multi_buffers with prebuilt lists
	Memcpy        = "memcpy"         // plain copies of the same bytes (the bandwidth reference)
	// PrefixLookup is a router's direct lookup of a stored prompt:
	// SGLang's page hashes of its token ids, their keys, one batch
	// existence check, the leading stored pages counted (hostcache/prefix;
	// in Python, hashlib and batch_is_exist).
	PrefixLookup = "prefix_lookup"
)

// KVScenarios are store_kv_bench's scenarios, HiCacheScenarios the HiCache
// backend's, AllScenarios every scenario in run order.
var (
	KVScenarios      = []string{VerifyWrite, Fill, WritePerf, ReadPerf, MixedRW}
	HiCacheScenarios = []string{HiCacheSet, HiCacheGet, HiCacheExists}
	AllScenarios     = slices.Concat(KVScenarios, HiCacheScenarios, []string{MultiPut, MultiGet, Memcpy})
	// PrefixScenarios run only when named (-scenarios): the default plan
	// is the one the committed reports measured.
	PrefixScenarios = []string{PrefixLookup}
	// KnownScenarios are every scenario a plan may name.
	KnownScenarios = slices.Concat(AllScenarios, PrefixScenarios)
)

// APIs.
const (
	APIPlain   = "plain"   // copying: put/get (batch 1), put_batch/get_batch
	APIZcopy   = "zcopy"   // zero-copy: put_from/get_into (batch 1), batch_put_from/batch_get_into
	APIMulti   = "multi"   // batch_put_from_multi_buffers / batch_get_into_multi_buffers
	APIHiCache = "hicache" // the HiCache storage backend (hostcache / SGLang's MooncakeStore)
	APIMemcpy  = "memcpy"
	APIPrefix  = "prefix" // hostcache/prefix.Lookup / hashlib + batch_is_exist
)

// HiCache pool shapes.
const (
	PoolMLA = "mla_layer_first" // DeepSeek-V3: L=61, C=576, bf16; one object per page, 61 buffers
	PoolMHA = "mha_page_first"  // Llama-3-8B per rank: L=32, H=8, D=128, bf16; K and V objects per page
)

// The geometry of the two pools.
const (
	MLALayers, MLALatent            = 61, 576 // DeepSeek-V3 MLA, bf16: 1152 B per token per layer
	MHALayers, MHAHeads, MHAHeadDim = 32, 8, 128
	BF16Bytes                       = 2
)

// Case is one measured workload.
type Case struct {
	Name      string `json:"name"`
	Scenario  string `json:"scenario"`
	Phase     string `json:"phase,omitempty"` // verify_write: "write" or "read"
	API       string `json:"api"`
	Pool      string `json:"pool,omitempty"`
	ValueSize int    `json:"value_size"`          // bytes per object (key)
	Batch     int    `json:"batch"`               // keys per request (pages for hicache)
	Buffers   int    `json:"buffers"`             // buffers per key
	BufSize   int    `json:"buffer_size"`         // bytes per buffer
	PageSize  int    `json:"page_size,omitempty"` // tokens per page (hicache)
	Objects   int    `json:"objects"`             // count-based cases: objects written; read cases: dataset size
	Timed     bool   `json:"timed"`               // runs for the measured duration (else for Objects)
	// Callers is the number of concurrent callers (goroutines, Python
	// threads) of a timed case, each with its own buffers and keys; 0 and 1
	// both mean one. Objects is then each caller's dataset.
	Callers int `json:"callers,omitempty"`
}

// NumCallers is c.Callers, at least 1.
func (c Case) NumCallers() int { return max(c.Callers, 1) }

// KeysPerRequest is the number of store keys one request moves.
func (c Case) KeysPerRequest() int {
	if c.Pool == PoolMHA {
		return 2 * c.Batch
	}
	return c.Batch
}

// Params are the knobs the plan depends on. The JSON names are those of
// the mcbench flags, with underscores.
type Params struct {
	Scenarios     []string `json:"scenarios"`
	APIs          []string `json:"apis"`
	Sizes         []int    `json:"sizes"`
	Batches       []int    `json:"batches"`
	MaxBatchBytes int      `json:"max_batch_bytes"`
	DatasetBytes  int      `json:"dataset_bytes"`
	MaxObjects    int      `json:"max_objects"`
	MLAPageSizes  []int    `json:"mla_page_sizes"`
	MHAPageSizes  []int    `json:"mha_page_sizes"`
	HiCachePages  int      `json:"hicache_pages"`
	MultiShapes   []Shape  `json:"multi_shapes"`
	// Callers are the caller counts above one at which the concurrency
	// cases (ConcurrencyCase) run again.
	Callers []int `json:"callers,omitempty"`
	// PrefixPages and PrefixPageSize shape prefix_lookup: pages per prompt
	// and tokens per page.
	PrefixPages    int `json:"prefix_pages,omitempty"`
	PrefixPageSize int `json:"prefix_page_size,omitempty"`
}

// Shape is keys × buffers × bytes. Its JSON keeps the Go field names, which
// run files have always used.
type Shape struct{ Keys, Buffers, Size int }

func (s Shape) String() string { return fmt.Sprintf("%dx%dx%s", s.Keys, s.Buffers, SizeName(s.Size)) }

// DefaultParams are the parameters of the compare runs.
func DefaultParams() Params {
	return Params{
		Scenarios:      slices.Clone(AllScenarios),
		APIs:           []string{APIPlain, APIZcopy},
		Sizes:          []int{4 << 10, 64 << 10, 1 << 20},
		Batches:        []int{1, 32, 1024},
		MaxBatchBytes:  128 << 20,
		DatasetBytes:   256 << 20,
		MaxObjects:     16384,
		MLAPageSizes:   []int{1, 64},
		MHAPageSizes:   []int{1, 64},
		HiCachePages:   128,
		MultiShapes:    []Shape{{128, 61, 1152}, {16, 61, 73728}},
		Callers:        []int{4, 16, 64},
		PrefixPages:    64,
		PrefixPageSize: 64,
	}
}

// QuickParams is a tiny plan for tests and smoke runs.
func QuickParams() Params {
	return Params{
		Scenarios:      slices.Clone(AllScenarios),
		APIs:           []string{APIPlain, APIZcopy},
		Sizes:          []int{4 << 10},
		Batches:        []int{1, 8},
		MaxBatchBytes:  4 << 20,
		DatasetBytes:   1 << 20,
		MaxObjects:     256,
		MLAPageSizes:   []int{1},
		MHAPageSizes:   []int{1},
		HiCachePages:   8,
		MultiShapes:    []Shape{{8, 61, 1152}},
		Callers:        []int{4},
		PrefixPages:    8,
		PrefixPageSize: 16,
	}
}

// ConcurrencyCase reports whether c is one of the cases that the plan runs
// again with several callers: single 4 KiB puts and gets (both APIs),
// 1,024 x 4 KiB zero-copy batches, and HiCache MLA requests of one-token
// pages, the calls a serving process makes from many requests at once.
func ConcurrencyCase(c Case) bool {
	switch c.Scenario {
	case WritePerf, ReadPerf:
		return c.ValueSize == 4<<10 && (c.Batch == 1 || (c.API == APIZcopy && c.Batch == 1024))
	case HiCacheSet, HiCacheGet:
		return c.Pool == PoolMLA && c.PageSize == 1
	case PrefixLookup:
		return true
	}
	return false
}

// withCallers is c run by n concurrent callers: each caller's dataset is
// its share of c's (at least two requests), so that all of them together
// fit in the segment as c's does.
func withCallers(c Case, n int) Case {
	c.Callers = n
	c.Name = fmt.Sprintf("%s/c%d", c.Name, n)
	per := max((c.Objects+n-1)/n, 2*c.Batch)
	c.Objects = (per + c.Batch - 1) / c.Batch * c.Batch
	return c
}

// countObjects is the number of objects of a count-based case or dataset:
// DatasetBytes worth, at most MaxObjects, at least two batches, a whole
// number of batches.
func (p Params) countObjects(size, batch int) int {
	n := min(p.DatasetBytes/size, p.MaxObjects)
	n = max(n, 2*batch)
	return (n + batch - 1) / batch * batch
}

// hiPages is the pages per HiCache request: HiCachePages (SGLang's
// STORAGE_BATCH_SIZE), halved until a batch fits in MaxBatchBytes.
func (p Params) hiPages(pageBytes int) int {
	n := p.HiCachePages
	for n > 1 && n*pageBytes > p.MaxBatchBytes {
		n /= 2
	}
	return n
}

// Plan expands the parameters into cases, in run order.
func (p Params) Plan() ([]Case, error) {
	for _, s := range p.Scenarios {
		if !slices.Contains(KnownScenarios, s) {
			return nil, fmt.Errorf("unknown scenario %q (known: %s)", s, strings.Join(KnownScenarios, ","))
		}
	}
	for _, a := range p.APIs {
		if a != APIPlain && a != APIZcopy {
			return nil, fmt.Errorf("unknown api %q (plain, zcopy)", a)
		}
	}
	if p.MaxBatchBytes <= 0 || p.DatasetBytes <= 0 || p.MaxObjects <= 0 || p.HiCachePages <= 0 {
		return nil, fmt.Errorf("batch, dataset and object limits must be positive")
	}
	var out []Case
	for _, sc := range KVScenarios {
		if !slices.Contains(p.Scenarios, sc) {
			continue
		}
		for _, api := range p.APIs {
			for _, size := range p.Sizes {
				for _, b := range p.Batches {
					if size <= 0 || b <= 0 {
						return nil, fmt.Errorf("sizes and batches must be positive")
					}
					if size*b > p.MaxBatchBytes {
						continue
					}
					base := Case{Scenario: sc, API: api, ValueSize: size, Batch: b, Buffers: 1, BufSize: size,
						Objects: p.countObjects(size, b), Timed: sc == WritePerf || sc == ReadPerf || sc == MixedRW}
					if sc == VerifyWrite {
						for _, ph := range []string{"write", "read"} {
							c := base
							c.Phase = ph
							c.Name = fmt.Sprintf("%s.%s/%s/%s/x%d", sc, ph, api, SizeName(size), b)
							out = append(out, c)
						}
						continue
					}
					base.Name = fmt.Sprintf("%s/%s/%s/x%d", sc, api, SizeName(size), b)
					out = append(out, base)
				}
			}
		}
	}
	type pool struct {
		name  string
		pages []int
	}
	for _, sc := range HiCacheScenarios {
		if !slices.Contains(p.Scenarios, sc) {
			continue
		}
		for _, pl := range []pool{{PoolMLA, p.MLAPageSizes}, {PoolMHA, p.MHAPageSizes}} {
			for _, P := range pl.pages {
				if P <= 0 {
					return nil, fmt.Errorf("page sizes must be positive")
				}
				c := Case{Scenario: sc, API: APIHiCache, Pool: pl.name, PageSize: P, Timed: true}
				var pageBytes int
				if pl.name == PoolMLA {
					c.Buffers, c.BufSize = MLALayers, P*MLALatent*BF16Bytes
					c.ValueSize = c.Buffers * c.BufSize
					pageBytes = c.ValueSize
				} else {
					c.Buffers, c.BufSize = 1, MHALayers*P*MHAHeads*MHAHeadDim*BF16Bytes
					c.ValueSize = c.BufSize
					pageBytes = 2 * c.ValueSize
				}
				c.Batch = p.hiPages(pageBytes)
				c.Objects = p.countObjects(pageBytes, c.Batch)
				c.Name = fmt.Sprintf("%s/%s_p%d/%dpages", sc, pl.name, P, c.Batch)
				out = append(out, c)
			}
		}
	}
	for _, sc := range []string{MultiPut, MultiGet, Memcpy} {
		if !slices.Contains(p.Scenarios, sc) {
			continue
		}
		for _, s := range p.MultiShapes {
			if s.Keys <= 0 || s.Buffers <= 0 || s.Size <= 0 {
				return nil, fmt.Errorf("multi shapes must be positive")
			}
			api := APIMulti
			if sc == Memcpy {
				api = APIMemcpy
			}
			c := Case{Name: fmt.Sprintf("%s/%s", sc, s), Scenario: sc, API: api, ValueSize: s.Buffers * s.Size,
				Batch: s.Keys, Buffers: s.Buffers, BufSize: s.Size, Timed: true}
			c.Objects = p.countObjects(c.ValueSize, c.Batch)
			out = append(out, c)
		}
	}
	if slices.Contains(p.Scenarios, PrefixLookup) {
		if p.PrefixPages <= 0 || p.PrefixPageSize <= 0 {
			return nil, fmt.Errorf("prefix pages and page size must be positive")
		}
		// The dataset: 16 stored prompts (MHA, one TP rank: a K and a V
		// object of PrefixValueBytes per page); each lookup finds every
		// page of one of them.
		b := p.PrefixPages
		out = append(out, Case{Name: fmt.Sprintf("%s/%s_p%d/%dpages", PrefixLookup, PoolMHA, p.PrefixPageSize, b),
			Scenario: PrefixLookup, API: APIPrefix, Pool: PoolMHA, PageSize: p.PrefixPageSize, Batch: b,
			ValueSize: PrefixValueBytes, Buffers: 1, BufSize: PrefixValueBytes, Objects: 16 * b, Timed: true})
	}
	// The concurrency sweep comes last, caller count by caller count, so
	// that the single-caller cases keep their names and order.
	var swept []Case
	for _, n := range p.Callers {
		if n <= 1 {
			return nil, fmt.Errorf("caller counts must be above 1 (one caller is every case's own run)")
		}
		for _, c := range out {
			if ConcurrencyCase(c) {
				swept = append(swept, withCallers(c, n))
			}
		}
	}
	return append(out, swept...), nil
}

// PrefixValueBytes is the size of each object of a prefix_lookup dataset:
// the lookup only asks whether keys exist.
const PrefixValueBytes = 64

// SizeName formats a byte count the way case names do: 4KiB, 1MiB, 1152B.
func SizeName(n int) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// ParseSize reads 4096, 4k, 4KiB, 64kb, 1m, 1MiB, 2g.
func ParseSize(s string) (int, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1
	for _, u := range []struct {
		suf string
		m   int
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30},
		{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1}} {
		if strings.HasSuffix(t, u.suf) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suf)), u.m
			break
		}
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 0 || n > maxBenchBytes/mult {
		return 0, fmt.Errorf("bad size %q (at most %s)", s, SizeName(maxBenchBytes))
	}
	return n * mult, nil
}

// maxBenchBytes bounds every size and shape of a plan: far above what a
// benchmark moves, low enough that no product of a shape overflows.
const maxBenchBytes = 1 << 40

// ParseList reads a comma-separated list, skipping empty fields.
func ParseList[T any](s string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := parse(f)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// ParseCount reads a positive integer.
func ParseCount(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad count %q", s)
	}
	return n, nil
}

// ParseString is the identity, for ParseList.
func ParseString(s string) (string, error) { return s, nil }

// ParseShape reads KEYSxBUFFERSxSIZE, e.g. 128x61x1152.
func ParseShape(s string) (Shape, error) {
	f := strings.Split(strings.ToLower(s), "x")
	if len(f) != 3 {
		return Shape{}, fmt.Errorf("bad shape %q (want KEYSxBUFFERSxSIZE)", s)
	}
	k, err1 := ParseCount(f[0])
	b, err2 := ParseCount(f[1])
	z, err3 := ParseSize(f[2])
	if err1 != nil || err2 != nil || err3 != nil || z <= 0 {
		return Shape{}, fmt.Errorf("bad shape %q (want KEYSxBUFFERSxSIZE)", s)
	}
	// A batch's bytes (keys x buffers x size) must be a size, not wrap.
	if k > maxBenchBytes/b || k*b > maxBenchBytes/z {
		return Shape{}, fmt.Errorf("shape %q: %s x %s x %d bytes is more than %s", s, f[0], f[1], z, SizeName(maxBenchBytes))
	}
	return Shape{k, b, z}, nil
}
