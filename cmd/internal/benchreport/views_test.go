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
		"| `write_perf/plain/4KiB/x1` | 16 | ", "| 1.50× | – | 1.50× | 1.00× | 102 / 20.0 | 130 / 20.0 | ≥ 1.20× | yes |",
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
