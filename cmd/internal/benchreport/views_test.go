package benchreport

import (
	"math"
	"strings"
	"testing"

	"github.com/mooncake-go/mooncake-go/cmd/internal/benchplan"
)

// TestViews: the three leading views take the right cases, ratios and
// targets, and show the A/A ratio of the same case beside each.
func TestViews(t *testing.T) {
	p := benchplan.QuickParams()
	p.Callers = []int{4, 16}
	p.Batches = []int{1, 1024}
	plan, err := p.Plan()
	if err != nil {
		t.Fatal(err)
	}
	// Go: 1.5x Python's keys/s, 0.9x its CPU per key, p50 1.02x C's;
	// Python: p50 1.3x C's.
	run := func(client string, ops, cpu, p50 float64) benchplan.Run {
		r := fakeRun(client, 1, plan)
		for i := range r.Results {
			r.Results[i].OpsPerSec *= ops
			r.Results[i].CPUUsPerOp = cpu
			r.Results[i].P50Us = p50
		}
		return r
	}
	goRuns := []benchplan.Run{run("go", 1.5, 9, 102), run("go", 1.5, 9, 102)}
	pyRuns := []benchplan.Run{run("python", 1, 10, 130), run("python", 1, 10, 130)}
	var cRuns []benchplan.Run
	for range goRuns {
		c := run("c", 1, 8, 100)
		var keep []benchplan.Result
		for _, res := range c.Results {
			if res.Batch == 1 && (res.Scenario == benchplan.WritePerf || res.Scenario == benchplan.ReadPerf) ||
				res.Scenario == benchplan.MultiGet {
				keep = append(keep, res)
			}
		}
		c.Results = keep
		cRuns = append(cRuns, c)
	}
	rows, byName := floorRows(t, goRuns, pyRuns, cRuns)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for _, tc := range []struct {
		name                              string
		cpu, goOverC, pyOverC, floor, cal float64
	}{
		{"read_perf/zcopy/4KiB/x1", 0.9, 1.02, 1.3, 1.03, 1.0},
		{"write_perf/plain/4KiB/x1/c16", 0.9, 1.02, 1.3, 0, 1.2},
		{"write_perf/plain/4KiB/x1/c4", 0.9, 1.02, 1.3, 0, 1.0},
		{"multi_get/8x61x1152B", 0.9, 1.02, 1.3, 1.03, 0},
		{"hicache_set/mla_layer_first_p1/8pages/c16", 0.9, 0, 0, 0, 1.0},
	} {
		r, ok := byName[tc.name]
		if !ok {
			t.Errorf("no row %s", tc.name)
			continue
		}
		if !near(r.CPURatio, tc.cpu) || !near(r.GoOverC, tc.goOverC) || !near(r.PythonOverC, tc.pyOverC) ||
			r.FloorTarget != tc.floor || r.CallersTarget != tc.cal {
			t.Errorf("%s: cpu %.3f go/c %.3f py/c %.3f floor target %v callers target %v, want %+v", tc.name, r.CPURatio, r.GoOverC,
				r.PythonOverC, r.FloorTarget, r.CallersTarget, tc)
		}
	}
	// The every-case table holds a concurrency case to the concurrency
	// targets (1,024 x 4 KiB batches have 1.1 with one caller).
	if r := byName["read_perf/zcopy/4KiB/x1024/c16"]; r.Target != 1.0 || byName["read_perf/zcopy/4KiB/x1024"].Target != 1.1 {
		t.Errorf("targets: %v with 16 callers, %v with one", r.Target, byName["read_perf/zcopy/4KiB/x1024"].Target)
	}
	noise := map[string]Row{"read_perf/zcopy/4KiB/x1": {Ratio: 1.04, CPURatio: 0.97, P50Ratio: 1.01}}
	md := Markdown(rows, Meta{Noise: noise})
	for _, want := range []string{
		"### 1. Many concurrent callers", "### 2. Client CPU per operation", "### 3. The C floor", "### Every case",
		"| `write_perf/plain/4KiB/x1` | 16 | off | ", "| 1.50× | – | 1.50× | 1.00× | – | 102 / 20.0 | 130 / 20.0 | 0.90× | ≥ 1.20× | yes |",
		"| `hicache_set/mla_layer_first_p1/8pages` | 16 | ", "| – | 1.50× | – | – | – |",
		"| `read_perf/zcopy/4KiB/x1` | 9.00 | 10.0 | 0.90× | 0.97× | ≤ 0.80× | **no** |",
		"| `read_perf/zcopy/4KiB/x1` | 100 | 102 | 130 | 1.02× | 1.30× | 1.01× | 8.00 | ≤ 1.03× | yes |",
		"CPU per key 0.90× > 0.80× of Python's",
		"mean distance of A/B from 1 1.0%",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| `write_perf/plain/4KiB/x1/c16` | 100 |") {
		t.Errorf("the C floor view has a concurrency case (view 1 has those)")
	}
	if strings.Index(md, "### 1.") > strings.Index(md, "### Every case") {
		t.Errorf("the views do not lead")
	}
	if err := AddFloor(rows, goRuns, pyRuns, cRuns[:1]); err == nil {
		t.Errorf("AddFloor accepted fewer C runs than Go runs")
	}
}

// TestCombiningView: a combining twin is paired with the other clients'
// runs of its off case, held against combining's targets (keys/s by caller
// count, p99 and CPU at 16 callers, the A/A noise of the off row alone),
// and its batches are shown.
func TestCombiningView(t *testing.T) {
	p := benchplan.QuickParams()
	p.Scenarios = []string{benchplan.WritePerf, benchplan.ReadPerf, benchplan.HiCacheSet}
	p.APIs, p.Batches, p.Callers = []string{benchplan.APIZcopy}, []int{1}, []int{4, 16}
	plan, err := p.Plan()
	if err != nil {
		t.Fatal(err)
	}
	// Every case runs at 1000 keys/s, p99 100 µs, 10 CPU-µs per key in
	// Python and the C floor; Go's off rows run at 1000, 100 and 9 (one at
	// 1100 keys/s), its twins as below.
	type twin struct {
		ops, p99, cpu float64
		single        uint64
		combined      uint64
		sizes         []uint64
	}
	twins := map[string]twin{
		"write_perf/zcopy/4KiB/x1/combining":     {ops: 900, p99: 100, cpu: 9, single: 500},
		"read_perf/zcopy/4KiB/x1/combining":      {ops: 1070, p99: 100, cpu: 9, single: 500},
		"write_perf/zcopy/4KiB/x1/c4/combining":  {ops: 1300, p99: 90, cpu: 9, single: 700, combined: 350, sizes: []uint64{100, 25, 0, 0, 0, 0, 0}},
		"write_perf/zcopy/4KiB/x1/c16/combining": {ops: 2500, p99: 80, cpu: 7, single: 1000, combined: 900, sizes: []uint64{10, 20, 30, 40, 0, 0, 0}},
		"read_perf/zcopy/4KiB/x1/c16/combining":  {ops: 1900, p99: 150, cpu: 9, single: 1000, combined: 900, sizes: []uint64{0, 0, 50, 50, 0, 0, 0}},
	}
	run := func(client string) benchplan.Run {
		r := fakeRun(client, 1, plan)
		for i := range r.Results {
			res := &r.Results[i]
			res.OpsPerSec, res.P99Us, res.CPUUsPerOp = 1000, 100, 10
			if client == "go" {
				res.CPUUsPerOp = 9
				if res.Name == "read_perf/zcopy/4KiB/x1" {
					res.OpsPerSec = 1100
				}
			}
			if tw, ok := twins[res.Name]; ok {
				res.OpsPerSec, res.P99Us, res.CPUUsPerOp, res.SingleCalls, res.CombinedCalls = tw.ops, tw.p99, tw.cpu, tw.single, tw.combined
				res.CombinedBatchSizes = tw.sizes
				for _, n := range tw.sizes {
					res.CombinedBatches += n
				}
			}
		}
		return r
	}
	goRuns := []benchplan.Run{run("go"), run("go")}
	pyRuns := []benchplan.Run{run("python"), run("python")}
	var cRuns []benchplan.Run
	for range goRuns {
		c := run("c")
		c.Results = filter2(c.Results, func(res benchplan.Result) bool { return res.Batch == 1 && res.Scenario != benchplan.HiCacheSet })
		cRuns = append(cRuns, c)
	}
	rows, byName := floorRows(t, goRuns, pyRuns, cRuns)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for _, tc := range []struct {
		name                   string
		ratio, onOff, target   float64
		p99, cpu, share, batch float64
		alone                  bool
	}{
		{"write_perf/zcopy/4KiB/x1/combining", 0.9, 0.9, 1.0, 0, 0, 0, 0, true},
		{"write_perf/zcopy/4KiB/x1/c4/combining", 1.3, 1.3, 1.2, 0, 0, 0.5, 350.0 / 125, false},
		{"write_perf/zcopy/4KiB/x1/c16/combining", 2.5, 2.5, 2.0, 1, 0.8, 0.9, 9, false},
		{"read_perf/zcopy/4KiB/x1/c16/combining", 1.9, 1.9, 2.0, 1, 0.8, 0.9, 9, false},
		{"hicache_set/mla_layer_first_p1/8pages/c16/combining", 1, 1, 1.0, 0, 0, 0, 0, false},
	} {
		r, ok := byName[tc.name]
		if !ok {
			t.Errorf("no row %s", tc.name)
			continue
		}
		if !r.Combining || r.OffCase != strings.TrimSuffix(tc.name, benchplan.CombiningSuffix) || !near(r.Ratio, tc.ratio) ||
			!near(r.OnOff, tc.onOff) || r.CallersTarget != tc.target || r.Target != tc.target || r.P99Target != tc.p99 ||
			r.CallersCPUTarget != tc.cpu || !near(r.CombinedShare, tc.share) || !near(r.CombinedMeanBatch, tc.batch) || r.AloneTarget != tc.alone {
			t.Errorf("%s: %+v, want %+v", tc.name, r, tc)
		}
	}
	// The twin's C columns are the floor's run of its off case.
	if r := byName["write_perf/zcopy/4KiB/x1/c16/combining"]; r.COpsPerSec != 1000 || !near(r.GoOverCOps, 2.5) || r.PythonP99Us != 100 {
		t.Errorf("twin against the floor: %+v", r)
	}
	if r := byName["write_perf/zcopy/4KiB/x1/combining"]; r.FloorTarget != 0 || r.CP50Us == 0 {
		t.Errorf("a twin alone has C's p50 but no floor target (view 1 has it): %+v", r)
	}
	noise := map[string]Row{"write_perf/zcopy/4KiB/x1": {Ratio: 1.05}}
	md := Markdown(rows, Meta{Noise: noise})
	view1 := md[strings.Index(md, "### 1."):strings.Index(md, "### 2.")]
	for _, want := range []string{
		"| `write_perf/zcopy/4KiB/x1` | 1 | off | 1.00k | 1.00k | 1.00k | 1.00× | 1.05× | 1.00× | 1.00× | – |",
		"| `write_perf/zcopy/4KiB/x1` | 1 | on | 900 | 1.00k | 1.00k | 0.90× | – | 0.90× | 1.00× | 0.90× |",
		"| ≥ 1.00×; on/off ≥ 0.95× (A/A) | **no** |",
		"| `read_perf/zcopy/4KiB/x1` | 1 | on | 1.07k | ", "| 0.97× | 10.0 / 100 | 10.0 / 100 | 0.90× | ≥ 1.00×; on/off ≥ 0.95× (A/A) | yes |",
		"| `write_perf/zcopy/4KiB/x1` | 4 | on | 1.30k | ", "| ≥ 1.20× | yes |",
		"| `write_perf/zcopy/4KiB/x1` | 16 | on | 2.50k | ", "| 10.0 / 80.0 | 10.0 / 100 | 0.70× | ≥ 2.00×; p99 ≤ Python's; CPU ≤ 0.80× | yes |",
		"| `read_perf/zcopy/4KiB/x1` | 16 | on | 1.90k | ", "| 10.0 / 150 | 10.0 / 100 | 0.90× | ≥ 2.00×; p99 ≤ Python's; CPU ≤ 0.80× | **no** |",
		"| `hicache_set/mla_layer_first_p1/8pages` | 16 | on | 1.00k | ",
		// The batches: calls combined, mean batch, crossings by size.
		"| case | callers | single calls | combined | mean batch | 2 | 3–4 | 5–8 | 9–16 | 17–32 | 33–64 | 65+ |",
		"| `write_perf/zcopy/4KiB/x1` | 1 | 1.00k | 0% | – | – | – | – | – | – | – | – |",
		"| `write_perf/zcopy/4KiB/x1` | 16 | 2.00k | 90% | 9.0 | 10% | 20% | 30% | 40% | 0% | 0% | 0% |",
		"| `write_perf/zcopy/4KiB/x1` | 4 | 1.40k | 50% | 2.8 | 80% | 20% | 0% |",
	} {
		if !strings.Contains(view1, want) {
			t.Errorf("view 1 lacks %q:\n%s", want, view1)
		}
	}
	for _, want := range []string{
		"`write_perf/zcopy/4KiB/x1` (1 caller, combining on): on/off 0.90× < 0.95×, beyond the A/A noise",
		"`read_perf/zcopy/4KiB/x1` (16 callers, combining on): 1.90× < 2.00×",
		"`read_perf/zcopy/4KiB/x1` (16 callers, combining on): p99 150 µs > Python's 100 µs",
		"`read_perf/zcopy/4KiB/x1/c16/combining`: CPU per key 0.90× > 0.80× of Python's",
		"| `read_perf/zcopy/4KiB/x1/c16/combining` | 9.00 | 10.0 | 0.90× |", // view 2 has the twins
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// The twin's CPU miss makes view 1's met "no" and is listed once, by view 2.
	if n := strings.Count(md, "CPU per key 0.90× > 0.80×"); n != len(filter(rows, func(r Row) bool { return r.CPURatio > 0.8 })) ||
		strings.Contains(md, "combining on): CPU") {
		t.Errorf("CPU misses listed %d times for %d rows", n, len(filter(rows, func(r Row) bool { return r.CPURatio > 0.8 })))
	}
	if strings.Contains(view1, "hicache_set/mla_layer_first_p1/8pages` | 16 | 0") || strings.Contains(md, "| `write_perf/zcopy/4KiB/x1/combining` | 100 |") {
		t.Errorf("a batch twin in the batches table, or a twin in the C floor view:\n%s", md)
	}
	// Without an A/A summary the twin alone is not judged, and says so.
	if md := Markdown(rows, Meta{}); !strings.Contains(md, "≥ 1.00×; on/off within A/A (no A/A summary) | yes, A/A not judged |") {
		t.Errorf("no A/A: %s", md)
	}
	// An A/A check runs the twins on both sides and pairs them by name.
	aa, err := Compare(goRuns, []benchplan.Run{run("go"), run("go")})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range aa {
		if r.Ratio != 1 || (r.Combining && r.OffCase == "") {
			t.Errorf("A/A %s: %+v", r.Scenario, r)
		}
	}
	// A twin whose off case Python did not run has nothing to pair with.
	py := run("python")
	py.Results = filter2(py.Results, func(res benchplan.Result) bool { return res.Name != "write_perf/zcopy/4KiB/x1/c16" })
	if _, err := Compare(goRuns[:1], []benchplan.Run{py}); err == nil || !strings.Contains(err.Error(), "write_perf/zcopy/4KiB/x1/c16 is in the Go runs but not") {
		t.Errorf("twin without its off case: %v", err)
	}
}

func filter2(rs []benchplan.Result, keep func(benchplan.Result) bool) []benchplan.Result {
	var out []benchplan.Result
	for _, r := range rs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// floorRows compares the runs, adds the C floor and returns the rows, and
// them by name.
func floorRows(t *testing.T, goRuns, pyRuns, cRuns []benchplan.Run) ([]Row, map[string]Row) {
	t.Helper()
	rows, err := Compare(goRuns, pyRuns)
	if err != nil {
		t.Fatal(err)
	}
	if err := AddFloor(rows, goRuns, pyRuns, cRuns); err != nil {
		t.Fatal(err)
	}
	byName := map[string]Row{}
	for _, r := range rows {
		byName[r.Scenario] = r
	}
	return rows, byName
}
