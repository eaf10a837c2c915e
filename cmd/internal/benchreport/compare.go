// Package benchreport compares the runs of two benchmark clients (the Go
// binding and upstream's Python client, or the Go client twice for an A/A
// check) and writes the report: the Markdown table of docs/benchmarks.md,
// the summary docs/benchmarks.json, and the chart.
//
// Per case it takes the median over the runs of keys/s, GB/s and the
// latency percentiles, and the Go/Python ratio as the geometric mean of the
// paired per-run ratios, and holds the ratio against the case's target.
package benchreport

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/mooncake-go/mooncake-go/cmd/internal/benchplan"
)

// Row is the comparison of one case.
type Row struct {
	Scenario      string  `json:"scenario"` // the case name
	GoOpsPerSec   float64 `json:"go_ops_per_s"`
	PythonOpsPerS float64 `json:"python_ops_per_s"`
	GoGBps        float64 `json:"go_gbps"`
	PythonGBps    float64 `json:"python_gbps"`
	GoP99Us       float64 `json:"go_p99_us"`
	PythonP99Us   float64 `json:"python_p99_us"`
	GoP50Us       float64 `json:"go_p50_us"`
	PythonP50Us   float64 `json:"python_p50_us"`
	GoP999Us      float64 `json:"go_p999_us"`
	PythonP999Us  float64 `json:"python_p999_us"`
	// Ratio is the Go/Python keys/s ratio: the geometric mean of the paired
	// per-run ratios (run i of Go against run i of Python, measured seconds
	// apart in the same round), so that a slowdown of whichever client
	// started first cancels out when rounds alternate the start order.
	Ratio          float64 `json:"ratio"`
	RatioOfMedians float64 `json:"ratio_of_medians"` // go_ops_per_s / python_ops_per_s
	RatioMin       float64 `json:"ratio_min"`        // the smallest and largest paired per-run ratio
	RatioMax       float64 `json:"ratio_max"`
	Target         float64 `json:"target,omitempty"` // required ratio (0: reference row, no target)
	Met            *bool   `json:"met,omitempty"`
	MemcpyFraction float64 `json:"go_memcpy_fraction,omitempty"` // large pages: go_gbps / a memcpy of the same bytes (median of per-run ratios)
	MemcpyTarget   float64 `json:"memcpy_target,omitempty"`
	MemcpyMet      *bool   `json:"memcpy_met,omitempty"`
	Rounds         int     `json:"rounds"` // runs per client
	// HiCache cases: mean time per request outside the store client's
	// calls (median over runs) and the mean request time.
	GoOutsideUs     float64 `json:"go_outside_us,omitempty"`
	PythonOutsideUs float64 `json:"python_outside_us,omitempty"`
	GoMeanUs        float64 `json:"go_mean_us"`
	PythonMeanUs    float64 `json:"python_mean_us"`
	// Callers is the case's concurrent callers (0: one).
	Callers int `json:"callers,omitempty"`
	// Client CPU time per key (process user + system over the measured
	// window, medians) and the Go/Python ratio of it (geometric mean of the
	// paired per-run ratios, like Ratio).
	GoCPUUsPerOp     float64 `json:"go_cpu_us_per_op,omitempty"`
	PythonCPUUsPerOp float64 `json:"python_cpu_us_per_op,omitempty"`
	CPURatio         float64 `json:"cpu_ratio,omitempty"`
	// P50Ratio is Go p50 / Python p50 (paired, geometric mean): in an A/A
	// check, the noise floor of the C floor's latency ratios.
	P50Ratio float64 `json:"p50_ratio,omitempty"`
	// The C floor (cgo/bench/mcbench_c): the same calls through the C ABI
	// in a plain loop, for the cases it runs; GoOverC and PythonOverC are
	// p50 ratios (paired per run, geometric mean).
	CP50Us      float64 `json:"c_p50_us,omitempty"`
	COpsPerSec  float64 `json:"c_ops_per_s,omitempty"`
	CCPUUsPerOp float64 `json:"c_cpu_us_per_op,omitempty"`
	GoOverC     float64 `json:"go_over_c_p50,omitempty"`
	PythonOverC float64 `json:"python_over_c_p50,omitempty"`
	// GoOverCOps and PythonOverCOps are keys/s ratios (paired, geometric
	// mean): the concurrency view's comparison with the floor.
	GoOverCOps     float64 `json:"go_over_c_ops,omitempty"`
	PythonOverCOps float64 `json:"python_over_c_ops,omitempty"`
	FloorTarget    float64 `json:"floor_target,omitempty"` // the largest Go/C p50 ratio allowed (0: none)
	CPUTarget      float64 `json:"cpu_target,omitempty"`   // the largest Go/Python CPU ratio allowed
	CallersTarget  float64 `json:"callers_target,omitempty"`
	// A combining twin (benchplan.Case.Combining): the Go client with
	// Config.Combining on. Its Python and C columns are those clients'
	// runs of OffCase, the same case without combining (neither client has
	// a combining mode), unless the second client ran the twin too (an A/A
	// check). OnOff is its Go keys/s over the off row's (paired run by
	// run). Over all runs: its single-key calls, the share that crossed
	// in a batch with others, the mean calls per batch crossing, and the
	// crossings by size (CombinedBatchSizes[i]: 2^i+1 to 2^(i+1) calls).
	Combining          bool     `json:"combining,omitempty"`
	OffCase            string   `json:"off_case,omitempty"`
	OnOff              float64  `json:"on_off,omitempty"`
	GoSingleCalls      uint64   `json:"go_single_calls,omitempty"`
	CombinedShare      float64  `json:"combined_share,omitempty"`
	CombinedMeanBatch  float64  `json:"combined_mean_batch,omitempty"`
	CombinedBatchSizes []uint64 `json:"combined_batch_sizes,omitempty"`
	// The combining targets beside CallersTarget (view 1): the largest Go
	// p99 / Python p99 and Go/Python CPU per key allowed (0: none), and
	// whether the twin must stay within the A/A noise of its off row
	// (one caller: no loss when alone).
	P99Target        float64 `json:"p99_target,omitempty"`
	CallersCPUTarget float64 `json:"callers_cpu_target,omitempty"`
	AloneTarget      bool    `json:"alone_target,omitempty"`
	// The Go client's placement samples over all runs (-own-segment): the
	// objects looked up, and those with a replica outside the client's own
	// segment (moved over the network rather than by memcpy).
	GoPlacedKeys     int `json:"go_placed_keys,omitempty"`
	GoOffSegmentKeys int `json:"go_off_segment_keys,omitempty"`
	// GoLoopbackShare is the host's loopback bytes over the Go client's
	// measured window per byte the case moved (median over runs): a few
	// percent of RPC when objects move by memcpy, 1 or more over TCP.
	GoLoopbackShare float64 `json:"go_loopback_share,omitempty"`
	// Case is what was measured; the summary leaves it out, since the name
	// says it and the table does not need it.
	Case benchplan.Case `json:"-"`
}

// Expand turns a comma-separated list of files and globs into the sorted
// list of files; a pattern that matches nothing is an error.
func Expand(list string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		m, err := filepath.Glob(f)
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("no file matches %q", f)
		}
		out = append(out, m...)
	}
	sort.Strings(out)
	return out, nil
}

// LoadRuns reads run files and checks that each is a run of client.
func LoadRuns(files []string, client string) ([]benchplan.Run, error) {
	var runs []benchplan.Run
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var r benchplan.Run
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if r.Schema != benchplan.Schema {
			return nil, fmt.Errorf("%s: schema %q, want %q", f, r.Schema, benchplan.Schema)
		}
		if r.Client != client {
			return nil, fmt.Errorf("%s: a %q run given as %s", f, r.Client, client)
		}
		runs = append(runs, r)
	}
	return runs, nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// The targets, as Go/Python keys/s ratios (docs/benchmarks.md says where
// they come from).
const (
	targetMultiSmall = 1.3 // 128 keys × 61 buffers × 1152 B
	targetZcopy4K    = 1.1 // 1024 × 4 KiB zero-copy batches
	targetOther      = 1.0
	targetMemcpy     = 0.9 // large pages: Go GB/s / Go memcpy GB/s
)

// targetFor returns the ratio target of a case (0 for reference rows) and
// the memcpy case a large-page case is held against ("" if none).
func targetFor(c benchplan.Case) (float64, string) {
	if c.Scenario == benchplan.Memcpy {
		return 0, ""
	}
	if c.Combining || c.NumCallers() > 1 { // the concurrency view's targets, not the single caller's
		return callersTarget(c), ""
	}
	if c.Buffers == 61 && c.BufSize == 1152 && c.Batch == 128 && c.Scenario != benchplan.HiCacheExists {
		return targetMultiSmall, "" // exists moves no buffers: the 1.0 target
	}
	if c.API == benchplan.APIZcopy && c.ValueSize == 4096 && c.Batch == 1024 {
		return targetZcopy4K, ""
	}
	if c.Buffers == 61 && c.BufSize == 73728 && c.Batch == 16 && c.Scenario != benchplan.HiCacheExists {
		return targetOther, fmt.Sprintf("%s/%s", benchplan.Memcpy, benchplan.Shape{Keys: c.Batch, Buffers: c.Buffers, Size: c.BufSize})
	}
	return targetOther, ""
}

// The targets of the three leading views (docs/benchmarks.md).
const (
	targetCPU       = 0.8  // Go CPU per key / Python's, every case
	targetCallers16 = 1.2  // Go/Python keys/s, single 4 KiB puts and gets at 16 callers
	targetFloor     = 1.03 // Go p50 / C p50: single 4 KiB put and get, raw multi-buffer get
)

// The targets of combining (issue 24), held against the twins: single
// 4 KiB calls at 16 and 64 callers at least 2x Python's keys/s, with a p99
// no higher than Python's and at most 0.8x its CPU per key; at 4 callers
// 1.2x; with one caller, no loss beyond the A/A noise against the same case
// without combining; every other twin at least 1.0x.
const (
	targetCombiningMany = 2.0 // 16 and 64 callers
	targetCombiningFew  = 1.2 // 4 callers
	targetCombiningP99  = 1.0 // Go p99 / Python p99
)

// single4K reports whether c is a single 4 KiB put or get.
func single4K(c benchplan.Case) bool {
	return c.Batch == 1 && c.ValueSize == 4096 && (c.Scenario == benchplan.WritePerf || c.Scenario == benchplan.ReadPerf)
}

// callersTarget is a concurrency case's Go/Python keys/s target (0: not a
// concurrency case); a combining twin's is combining's.
func callersTarget(c benchplan.Case) float64 {
	if !benchplan.ConcurrencyCase(c) {
		return 0
	}
	switch {
	case c.Combining && single4K(c) && (c.Callers == 16 || c.Callers == 64):
		return targetCombiningMany
	case c.Combining && single4K(c) && c.Callers == 4:
		return targetCombiningFew
	case !c.Combining && single4K(c) && c.Callers == 16:
		return targetCallers16
	}
	return targetOther
}

// combiningTargets sets a twin's targets beside its keys/s target.
func combiningTargets(r *Row) {
	c := r.Case
	if !c.Combining || !benchplan.ConcurrencyCase(c) {
		return
	}
	if single4K(c) && (c.Callers == 16 || c.Callers == 64) {
		r.P99Target, r.CallersCPUTarget = targetCombiningP99, targetCPU
	}
	r.AloneTarget = c.NumCallers() == 1
}

// floorTarget is a case's Go/C p50 target (0: none).
func floorTarget(c benchplan.Case) float64 {
	switch {
	case c.NumCallers() > 1 || c.Combining: // view 1 has these
		return 0
	case c.Batch == 1 && c.ValueSize == 4096 && (c.Scenario == benchplan.WritePerf || c.Scenario == benchplan.ReadPerf):
		return targetFloor
	case c.Scenario == benchplan.MultiGet:
		return targetFloor
	}
	return 0
}

// paired is the geometric mean, smallest and largest of a[i]/b[i] over the
// runs where both are positive.
func paired(a, b []float64) (gm, lo, hi float64) {
	var logSum float64
	n := 0
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] <= 0 || b[i] <= 0 {
			continue
		}
		q := a[i] / b[i]
		logSum += math.Log(q)
		if n == 0 || q < lo {
			lo = q
		}
		hi = max(hi, q)
		n++
	}
	if n == 0 {
		return 0, 0, 0
	}
	return math.Exp(logSum / float64(n)), lo, hi
}

// AddFloor adds the C floor's runs to rows: for each case the C client
// ran, its p50, keys/s and CPU per key, and the Go/C and Python/C p50 and
// keys/s ratios, run i of each client against run i of the C client (measured
// seconds apart in the same round).
func AddFloor(rows []Row, goRuns, pyRuns, cRuns []benchplan.Run) error {
	if len(cRuns) != len(goRuns) || len(cRuns) != len(pyRuns) {
		return fmt.Errorf("%d C runs for %d Go and %d Python runs", len(cRuns), len(goRuns), len(pyRuns))
	}
	byName := func(runs []benchplan.Run, name string, pick func(benchplan.Result) float64) ([]float64, bool) {
		var v []float64
		for _, r := range runs {
			for _, res := range r.Results {
				if res.Name == name {
					v = append(v, pick(res))
				}
			}
		}
		return v, len(v) == len(runs)
	}
	p50 := func(r benchplan.Result) float64 { return r.P50Us }
	for i := range rows {
		r := &rows[i]
		// A combining twin is held against the floor's run (and the
		// second client's, unless it ran the twin) of its off case.
		cName, want := r.Scenario, r.Case
		if _, ok := byName(cRuns, cName, p50); !ok && r.Combining {
			cName, want = r.OffCase, r.Case.Off()
		}
		c, ok := byName(cRuns, cName, p50)
		if !ok {
			continue
		}
		for _, run := range cRuns {
			for _, res := range run.Results {
				if res.Name == cName && res.Case != want {
					return fmt.Errorf("case %s: the C runs used different parameters", cName)
				}
			}
		}
		pName := r.Scenario
		if _, ok := byName(pyRuns, pName, p50); !ok && r.Combining {
			pName = r.OffCase
		}
		g, _ := byName(goRuns, r.Scenario, p50)
		p, _ := byName(pyRuns, pName, p50)
		ops, _ := byName(cRuns, cName, func(r benchplan.Result) float64 { return r.OpsPerSec })
		cpu, _ := byName(cRuns, cName, func(r benchplan.Result) float64 { return r.CPUUsPerOp })
		r.CP50Us, r.COpsPerSec, r.CCPUUsPerOp = median(c), median(ops), median(cpu)
		r.GoOverC, _, _ = paired(g, c)
		r.PythonOverC, _, _ = paired(p, c)
		gOps, _ := byName(goRuns, r.Scenario, func(r benchplan.Result) float64 { return r.OpsPerSec })
		pOps, _ := byName(pyRuns, pName, func(r benchplan.Result) float64 { return r.OpsPerSec })
		r.GoOverCOps, _, _ = paired(gOps, ops)
		r.PythonOverCOps, _, _ = paired(pOps, ops)
		r.FloorTarget = floorTarget(r.Case)
	}
	return nil
}

// Compare puts the runs side by side, case by case, in the order of the Go
// runs. Both sides must have run the same cases with the same parameters.
func Compare(goRuns, pyRuns []benchplan.Run) ([]Row, error) {
	type series struct {
		c            benchplan.Case
		ops, gbps    []float64
		p50, p99, p9 []float64
		memcpyFrac   []float64 // per run: gbps / the case's own memcpy reference
		outside      []float64
		mean         []float64
		cpu          []float64
		// combining counters, summed over the runs
		single, combined, batches uint64
		sizes                     []uint64
		placed, offSegment        int
		loShare                   []float64
	}
	collect := func(runs []benchplan.Run) (map[string]*series, []string, error) {
		m := map[string]*series{}
		var order []string
		for ri, r := range runs {
			for _, res := range r.Results {
				s := m[res.Name]
				if s == nil {
					if ri > 0 {
						return nil, nil, fmt.Errorf("case %s is not in every %s run", res.Name, r.Client)
					}
					s = &series{c: res.Case}
					m[res.Name] = s
					order = append(order, res.Name)
				} else if s.c != res.Case {
					return nil, nil, fmt.Errorf("case %s has different parameters in different %s runs", res.Name, r.Client)
				}
				s.ops = append(s.ops, res.OpsPerSec)
				s.gbps = append(s.gbps, res.GBps)
				s.p50 = append(s.p50, res.P50Us)
				s.p99 = append(s.p99, res.P99Us)
				s.p9 = append(s.p9, res.P999Us)
				s.mean = append(s.mean, res.MeanUs)
				s.cpu = append(s.cpu, res.CPUUsPerOp)
				if res.OutsideUs > 0 {
					s.outside = append(s.outside, res.OutsideUs)
				}
				if res.MemcpyGBps > 0 {
					s.memcpyFrac = append(s.memcpyFrac, res.GBps/res.MemcpyGBps)
				}
				if sh := LoopbackShare(res); sh > 0 {
					s.loShare = append(s.loShare, sh)
				}
				s.placed += res.PlacedKeys
				s.offSegment += res.OffSegmentKeys
				s.single += res.SingleCalls
				s.combined += res.CombinedCalls
				s.batches += res.CombinedBatches
				if len(s.sizes) < len(res.CombinedBatchSizes) {
					s.sizes = append(s.sizes, make([]uint64, len(res.CombinedBatchSizes)-len(s.sizes))...)
				}
				for i, n := range res.CombinedBatchSizes {
					s.sizes[i] += n
				}
			}
		}
		for name, s := range m {
			if len(s.ops) != len(runs) {
				return nil, nil, fmt.Errorf("case %s is not in every %s run", name, runs[0].Client)
			}
		}
		return m, order, nil
	}
	if len(goRuns) == 0 || len(pyRuns) == 0 {
		return nil, fmt.Errorf("no runs to compare")
	}
	gm, order, err := collect(goRuns)
	if err != nil {
		return nil, err
	}
	pm, _, err := collect(pyRuns)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, name := range order {
		g, p := gm[name], pm[name]
		want := g.c
		if p == nil && g.c.Combining {
			// Python has no combining: the twin against its off case.
			want = g.c.Off()
			p = pm[want.Name]
		}
		if p == nil {
			return nil, fmt.Errorf("case %s is in the Go runs but not in the Python runs", want.Name)
		}
		if want != p.c {
			return nil, fmt.Errorf("case %s: the Go and Python runs used different parameters (%+v vs %+v)", name, want, p.c)
		}
		r := Row{Scenario: name, Case: g.c, Rounds: min(len(g.ops), len(p.ops)),
			GoOpsPerSec: median(g.ops), PythonOpsPerS: median(p.ops), GoGBps: median(g.gbps), PythonGBps: median(p.gbps),
			GoP50Us: median(g.p50), PythonP50Us: median(p.p50), GoP99Us: median(g.p99), PythonP99Us: median(p.p99),
			GoP999Us: median(g.p9), PythonP999Us: median(p.p9),
			GoOutsideUs: median(g.outside), PythonOutsideUs: median(p.outside), GoMeanUs: median(g.mean), PythonMeanUs: median(p.mean),
			Callers: g.c.Callers, GoCPUUsPerOp: median(g.cpu), PythonCPUUsPerOp: median(p.cpu),
			GoPlacedKeys: g.placed, GoOffSegmentKeys: g.offSegment, GoLoopbackShare: median(g.loShare)}
		r.CPURatio, _, _ = paired(g.cpu, p.cpu)
		r.P50Ratio, _, _ = paired(g.p50, p.p50)
		if r.PythonOpsPerS > 0 {
			r.RatioOfMedians = r.GoOpsPerSec / r.PythonOpsPerS
		}
		var logSum float64
		var npaired int
		for i := 0; i < r.Rounds; i++ {
			if p.ops[i] <= 0 || g.ops[i] <= 0 {
				continue
			}
			q := g.ops[i] / p.ops[i]
			logSum += math.Log(q)
			npaired++
			if r.RatioMin == 0 || q < r.RatioMin {
				r.RatioMin = q
			}
			r.RatioMax = max(r.RatioMax, q)
		}
		if npaired > 0 {
			r.Ratio = math.Exp(logSum / float64(npaired))
		}
		if g.c.Combining {
			r.Combining, r.OffCase = true, g.c.Off().Name
			if off := gm[r.OffCase]; off != nil {
				r.OnOff, _, _ = paired(g.ops, off.ops)
			}
			r.GoSingleCalls = g.single
			if g.single > 0 {
				r.CombinedShare = float64(g.combined) / float64(g.single)
			}
			if g.batches > 0 {
				r.CombinedMeanBatch = float64(g.combined) / float64(g.batches)
			}
			r.CombinedBatchSizes = g.sizes
		}
		rows = append(rows, r)
	}
	for name := range pm {
		if gm[name] == nil {
			return nil, fmt.Errorf("case %s is in the Python runs but not in the Go runs", name)
		}
	}
	memcpy := map[string]float64{}
	for _, r := range rows {
		if r.Case.Scenario == benchplan.Memcpy {
			memcpy[r.Scenario] = r.GoGBps
		}
	}
	for i := range rows {
		r := &rows[i]
		r.CPUTarget = targetCPU
		r.CallersTarget = callersTarget(r.Case)
		combiningTargets(r)
		t, ref := targetFor(r.Case)
		if t > 0 {
			r.Target = t
			met := r.Ratio >= t
			r.Met = &met
		}
		// The memcpy fraction: against the case's own reference, timed
		// after its requests (paired, run by run); else against the memcpy
		// case of the same shape.
		if f := gm[r.Scenario].memcpyFrac; len(f) > 0 {
			r.MemcpyFraction = median(f)
		} else if ref != "" && memcpy[ref] > 0 {
			r.MemcpyFraction = r.GoGBps / memcpy[ref]
		}
		if ref != "" && r.MemcpyFraction > 0 {
			r.MemcpyTarget = targetMemcpy
			met := r.MemcpyFraction >= targetMemcpy
			r.MemcpyMet = &met
		}
	}
	return rows, nil
}
