package main

import (
	"fmt"
	"strconv"
	"strings"
)

// The plan is the list of cases one run measures. scripts/bench_python.py
// builds the same plan from the same parameters (its --list output is
// compared with ours in a test), and `mcbench compare` refuses to put
// two cases side by side unless their shapes match exactly.

// Scenario names. The first five are upstream's store_kv_bench scenarios
// (mooncake-store/benchmarks/store_kv_bench.py); the rest are the HiCache
// workloads this project exists for.
const (
	scVerifyWrite = "verify_write" // write N objects, read every one back and check its bytes
	scFill        = "fill"         // write N objects (count-based)
	scWritePerf   = "write_perf"   // write fresh objects for -duration
	scReadPerf    = "read_perf"    // prepare a dataset, read it sequentially for -duration
	scMixedRW     = "mixed_rw"     // prepare a dataset; 70% batch reads of it, 30% writes of fresh objects
	scHiSet       = "hicache_set"  // Backend.BatchSetV1 / SGLang batch_set_v1 of fresh pages
	scHiGet       = "hicache_get"  // Backend.BatchGetV1 / SGLang batch_get_v1 of stored pages
	scHiExists    = "hicache_exists"
	scMultiPut    = "multi_put" // batch_put_from_multi_buffers with prebuilt lists
	scMultiGet    = "multi_get" // batch_get_into_multi_buffers with prebuilt lists
	scMemcpy      = "memcpy"    // plain copies of the same bytes (the bandwidth reference)
)

var kvScenarios = []string{scVerifyWrite, scFill, scWritePerf, scReadPerf, scMixedRW}
var hiScenarios = []string{scHiSet, scHiGet, scHiExists}
var allScenarios = append(append(append([]string{}, kvScenarios...), hiScenarios...), scMultiPut, scMultiGet, scMemcpy)

// APIs.
const (
	apiPlain   = "plain"   // copying: put/get (batch 1), put_batch/get_batch
	apiZcopy   = "zcopy"   // zero-copy: put_from/get_into (batch 1), batch_put_from/batch_get_into
	apiMulti   = "multi"   // batch_put_from_multi_buffers / batch_get_into_multi_buffers
	apiHiCache = "hicache" // the HiCache storage backend (hostcache / SGLang's MooncakeStore)
	apiMemcpy  = "memcpy"
)

// HiCache pool shapes (DeepSeek-V3 MLA layer_first and Llama-3-8B MHA page_first, as SGLang sizes them).
const (
	poolMLA = "mla_layer_first" // DeepSeek-V3: L=61, C=576, bf16; one object per page, 61 buffers
	poolMHA = "mha_page_first"  // Llama-3-8B per rank: L=32, H=8, D=128, bf16; K and V objects per page
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
	Timed     bool   `json:"timed"`               // runs for -duration (else for Objects)
}

// KeysPerRequest is the number of store keys one request moves.
func (c Case) KeysPerRequest() int {
	if c.Pool == poolMHA {
		return 2 * c.Batch
	}
	return c.Batch
}

// Params are the knobs the plan depends on. Both clients take them with
// the same names.
type Params struct {
	Scenarios     []string
	APIs          []string
	Sizes         []int
	Batches       []int
	MaxBatchBytes int
	DatasetBytes  int
	MaxObjects    int
	MLAPageSizes  []int
	MHAPageSizes  []int
	HiCachePages  int
	MultiShapes   []Shape
}

// Shape is keys × buffers × bytes.
type Shape struct{ Keys, Buffers, Size int }

func (s Shape) String() string { return fmt.Sprintf("%dx%dx%s", s.Keys, s.Buffers, sizeName(s.Size)) }

// Default parameters (the compare runs use these).
func defaultParams() Params {
	return Params{
		Scenarios:     allScenarios,
		APIs:          []string{apiPlain, apiZcopy},
		Sizes:         []int{4 << 10, 64 << 10, 1 << 20},
		Batches:       []int{1, 32, 1024},
		MaxBatchBytes: 128 << 20,
		DatasetBytes:  256 << 20,
		MaxObjects:    16384,
		MLAPageSizes:  []int{1, 64},
		MHAPageSizes:  []int{1, 64},
		HiCachePages:  128,
		MultiShapes:   []Shape{{128, 61, 1152}, {16, 61, 73728}},
	}
}

// quickParams is a tiny plan for tests and smoke runs.
func quickParams() Params {
	return Params{
		Scenarios:     allScenarios,
		APIs:          []string{apiPlain, apiZcopy},
		Sizes:         []int{4 << 10},
		Batches:       []int{1, 8},
		MaxBatchBytes: 4 << 20,
		DatasetBytes:  1 << 20,
		MaxObjects:    256,
		MLAPageSizes:  []int{1},
		MHAPageSizes:  []int{1},
		HiCachePages:  8,
		MultiShapes:   []Shape{{8, 61, 1152}},
	}
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// countObjects is the number of objects of a count-based case or dataset:
// DatasetBytes worth, at most MaxObjects, at least two batches, a whole
// number of batches.
func (p Params) countObjects(size, batch int) int {
	n := p.DatasetBytes / size
	if n > p.MaxObjects {
		n = p.MaxObjects
	}
	if n < 2*batch {
		n = 2 * batch
	}
	return (n + batch - 1) / batch * batch
}

// hiPages is the pages per HiCache request: HiCachePages (SGLang's
// STORAGE_BATCH_SIZE, 128), halved until a batch fits in MaxBatchBytes.
func (p Params) hiPages(pageBytes int) int {
	n := p.HiCachePages
	for n > 1 && n*pageBytes > p.MaxBatchBytes {
		n /= 2
	}
	return n
}

const (
	mlaLayers, mlaLatent                 = 61, 576 // DeepSeek-V3 MLA, bf16: 1152 B per token per layer
	mhaLayers, mhaHeads, mhaHeadDim, bf2 = 32, 8, 128, 2
)

// Plan expands the parameters into cases, in run order.
func (p Params) Plan() ([]Case, error) {
	for _, s := range p.Scenarios {
		if !has(allScenarios, s) {
			return nil, fmt.Errorf("unknown scenario %q (known: %s)", s, strings.Join(allScenarios, ","))
		}
	}
	for _, a := range p.APIs {
		if a != apiPlain && a != apiZcopy {
			return nil, fmt.Errorf("unknown api %q (plain, zcopy)", a)
		}
	}
	if p.MaxBatchBytes <= 0 || p.DatasetBytes <= 0 || p.MaxObjects <= 0 || p.HiCachePages <= 0 {
		return nil, fmt.Errorf("batch, dataset and object limits must be positive")
	}
	var out []Case
	add := func(c Case) { out = append(out, c) }
	for _, sc := range kvScenarios {
		if !has(p.Scenarios, sc) {
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
						Objects: p.countObjects(size, b), Timed: sc == scWritePerf || sc == scReadPerf || sc == scMixedRW}
					if sc == scVerifyWrite {
						for _, ph := range []string{"write", "read"} {
							c := base
							c.Phase = ph
							c.Name = fmt.Sprintf("%s.%s/%s/%s/x%d", sc, ph, api, sizeName(size), b)
							add(c)
						}
						continue
					}
					base.Name = fmt.Sprintf("%s/%s/%s/x%d", sc, api, sizeName(size), b)
					add(base)
				}
			}
		}
	}
	type pool struct {
		name  string
		pages []int
	}
	for _, sc := range hiScenarios {
		if !has(p.Scenarios, sc) {
			continue
		}
		for _, pl := range []pool{{poolMLA, p.MLAPageSizes}, {poolMHA, p.MHAPageSizes}} {
			for _, P := range pl.pages {
				if P <= 0 {
					return nil, fmt.Errorf("page sizes must be positive")
				}
				c := Case{Scenario: sc, API: apiHiCache, Pool: pl.name, PageSize: P, Timed: true}
				var pageBytes int
				if pl.name == poolMLA {
					c.Buffers, c.BufSize = mlaLayers, P*mlaLatent*bf2
					c.ValueSize = c.Buffers * c.BufSize
					pageBytes = c.ValueSize
				} else {
					c.Buffers, c.BufSize = 1, mhaLayers*P*mhaHeads*mhaHeadDim*bf2
					c.ValueSize = c.BufSize
					pageBytes = 2 * c.ValueSize
				}
				c.Batch = p.hiPages(pageBytes)
				c.Objects = p.countObjects(pageBytes, c.Batch)
				c.Name = fmt.Sprintf("%s/%s_p%d/%dpages", sc, pl.name, P, c.Batch)
				add(c)
			}
		}
	}
	for _, sc := range []string{scMultiPut, scMultiGet, scMemcpy} {
		if !has(p.Scenarios, sc) {
			continue
		}
		for _, s := range p.MultiShapes {
			if s.Keys <= 0 || s.Buffers <= 0 || s.Size <= 0 {
				return nil, fmt.Errorf("multi shapes must be positive")
			}
			api := apiMulti
			if sc == scMemcpy {
				api = apiMemcpy
			}
			c := Case{Name: fmt.Sprintf("%s/%s", sc, s), Scenario: sc, API: api, ValueSize: s.Buffers * s.Size,
				Batch: s.Keys, Buffers: s.Buffers, BufSize: s.Size, Timed: true}
			c.Objects = p.countObjects(c.ValueSize, c.Batch)
			add(c)
		}
	}
	return out, nil
}

// sizeName formats a byte count the way case names do: 4KiB, 1MiB, 1152B.
func sizeName(n int) string {
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

// parseSize reads 4096, 4k, 4KiB, 64kb, 1m, 1MiB, 2g.
func parseSize(s string) (int, error) {
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
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}

func parseList[T any](s string, parse func(string) (T, error)) ([]T, error) {
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

func parseInt(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad count %q", s)
	}
	return n, nil
}

func parseString(s string) (string, error) { return s, nil }

// parseShape reads KEYSxBUFFERSxSIZE, e.g. 128x61x1152.
func parseShape(s string) (Shape, error) {
	f := strings.Split(strings.ToLower(s), "x")
	if len(f) != 3 {
		return Shape{}, fmt.Errorf("bad shape %q (want KEYSxBUFFERSxSIZE)", s)
	}
	k, err1 := parseInt(f[0])
	b, err2 := parseInt(f[1])
	z, err3 := parseSize(f[2])
	if err1 != nil || err2 != nil || err3 != nil || z <= 0 {
		return Shape{}, fmt.Errorf("bad shape %q (want KEYSxBUFFERSxSIZE)", s)
	}
	return Shape{k, b, z}, nil
}
