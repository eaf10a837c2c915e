package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake"
)

// clusterArgs returns the flags that select the test cluster: none for the
// embedded engine, the live cluster of make test-native for a native build.
func clusterArgs(t *testing.T) []string {
	t.Setenv(mooncake.EnvMaster, "")
	t.Setenv(mooncake.EnvConfigPath, "")
	if mooncake.Backend() == "embedded" {
		return nil
	}
	master, meta := os.Getenv("MCGO_TEST_MASTER"), os.Getenv("MCGO_TEST_METADATA")
	if master == "" || meta == "" {
		t.Skip("native engine: set MCGO_TEST_MASTER and MCGO_TEST_METADATA")
	}
	return []string{"-master", master, "-metadata", meta}
}

// TestQuickRun runs the whole plan with tiny sizes, so the command cannot
// rot: every scenario, both APIs, single and batch, HiCache, multi-buffer.
func TestQuickRun(t *testing.T) {
	args := clusterArgs(t)
	out := filepath.Join(t.TempDir(), "go.json")
	// A 1 MiB-per-key shape exercises the paired memcpy reference.
	planArgs := []string{"-quick", "-multi-shapes", "8x61x1152,2x2x1MiB"}
	args = append(append(args, planArgs...), "-duration", "15ms", "-warmup", "2ms", "-json", out, "-progress")
	var stdout, stderr bytes.Buffer
	err := run(args, &stdout, &stderr)
	if errors.Is(err, mooncake.ErrNoCgo) || (err != nil && strings.Contains(err.Error(), "cgo")) {
		t.Skip("needs cgo:", err)
	}
	if err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc Run
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	p := quickParams()
	p.MultiShapes = []Shape{{8, 61, 1152}, {2, 2, 1 << 20}}
	plan, err := p.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Results) != len(plan) {
		t.Fatalf("%d results for %d cases", len(doc.Results), len(plan))
	}
	for i, r := range doc.Results {
		if r.Case != plan[i] {
			t.Errorf("result %d is case %+v, want %+v", i, r.Case, plan[i])
		}
		if r.Requests == 0 || r.Keys == 0 || r.OpsPerSec <= 0 || r.P50Us <= 0 || r.P99Us < r.P50Us || r.P999Us < r.P99Us {
			t.Errorf("%s: implausible result %+v", r.Name, r)
		}
		if r.Errors != 0 {
			t.Errorf("%s: %d errors", r.Name, r.Errors)
		}
		if r.Scenario != scHiExists && r.GBps <= 0 {
			t.Errorf("%s: no bytes moved", r.Name)
		}
		if wantRef := r.ValueSize >= largeObject && r.Scenario != scMemcpy; wantRef != (r.MemcpyGBps > 0) {
			t.Errorf("%s: memcpy reference %v GB/s", r.Name, r.MemcpyGBps)
		}
	}
	if doc.Schema != schema || doc.Client != "go" || doc.Engine == "" {
		t.Errorf("header %+v", doc)
	}
	if !strings.Contains(stdout.String(), "hicache_set/mla_layer_first_p1/8pages") {
		t.Errorf("table lacks the HiCache rows:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "\r") {
		t.Errorf("-progress drew nothing on stderr")
	}
}

func TestListAndFlags(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-list", "-only", "^multi_get"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"multi_get/128x61x1152B"`) || !strings.Contains(lines[1], `"multi_get/16x61x72KiB"`) {
		t.Fatalf("plan:\n%s", out.String())
	}
	for _, bad := range [][]string{{"-sizes", "4q"}, {"-scenarios", "nope"}, {"-multi-shapes", "1x2"}, {"-rwmixread", "101"},
		{"-master", "x"}, {"-duration", "0s"}, {"extra"}} {
		if err := run(append([]string{"-list"}, bad...), &out, &out); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestDefaultPlan(t *testing.T) {
	plan, err := defaultParams().Plan()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]Case{}
	for _, c := range plan {
		if _, dup := names[c.Name]; dup {
			t.Errorf("duplicate case %s", c.Name)
		}
		names[c.Name] = c
	}
	// The shapes the targets talk about are in the default plan.
	for name, want := range map[string]Case{
		"multi_put/128x61x1152B":                  {Batch: 128, Buffers: 61, BufSize: 1152},
		"multi_get/16x61x72KiB":                   {Batch: 16, Buffers: 61, BufSize: 73728},
		"memcpy/16x61x72KiB":                      {Batch: 16, Buffers: 61, BufSize: 73728},
		"hicache_set/mla_layer_first_p1/128pages": {Batch: 128, Buffers: 61, BufSize: 1152},
		"hicache_get/mla_layer_first_p64/16pages": {Batch: 16, Buffers: 61, BufSize: 73728},
		"hicache_get/mha_page_first_p64/16pages":  {Batch: 16, Buffers: 1, BufSize: 4 << 20},
		"write_perf/zcopy/4KiB/x1024":             {Batch: 1024, Buffers: 1, BufSize: 4096},
		"read_perf/plain/1MiB/x32":                {Batch: 32, Buffers: 1, BufSize: 1 << 20},
	} {
		c, ok := names[name]
		if !ok {
			t.Errorf("default plan lacks %s", name)
			continue
		}
		if c.Batch != want.Batch || c.Buffers != want.Buffers || c.BufSize != want.BufSize {
			t.Errorf("%s: %+v", name, c)
		}
	}
	if _, ok := names["read_perf/zcopy/1MiB/x1024"]; ok {
		t.Errorf("1 GiB batches should be skipped by -max-batch-bytes")
	}
	if got := sizeName(73728); got != "72KiB" {
		t.Errorf("sizeName(73728) = %s", got)
	}
	for in, want := range map[string]int{"4096": 4096, "4k": 4096, "64KiB": 64 << 10, "1MiB": 1 << 20, "2gb": 2 << 30, "1152B": 1152} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v", in, got, err)
		}
	}
}

// TestPlanMatchesPython checks that scripts/bench_python.py builds the same
// plan from the same flags (python3 only; the mooncake module is not needed).
func TestPlanMatchesPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	for _, args := range [][]string{nil, {"-quick"}, {"-quick", "-sizes", "4KiB,1MiB", "-batches", "1,16"},
		{"-only", "hicache|multi", "-mla-page-sizes", "1,16,64", "-hicache-pages", "64"},
		{"-max-batch-bytes", "8MiB", "-dataset-bytes", "16MiB", "-max-objects", "100", "-multi-shapes", "4x3x100"}} {
		var gout bytes.Buffer
		if err := run(append([]string{"-list"}, args...), &gout, &gout); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		cmd := exec.Command(py, append([]string{"../../scripts/bench_python.py", "--list"}, args...)...)
		pout, err := cmd.Output()
		if err != nil {
			t.Fatalf("bench_python.py --list %q: %v", args, err)
		}
		decode := func(s string) []map[string]any {
			var out []map[string]any
			for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatalf("%q: %v", line, err)
				}
				out = append(out, m)
			}
			return out
		}
		g, p := decode(gout.String()), decode(string(pout))
		if !reflect.DeepEqual(g, p) {
			t.Errorf("%q: plans differ: Go %d cases, Python %d", args, len(g), len(p))
			for i := 0; i < min(len(g), len(p)); i++ {
				if !reflect.DeepEqual(g[i], p[i]) {
					t.Errorf("first difference:\n go %v\n py %v", g[i], p[i])
					break
				}
			}
		}
	}
}

func TestPercentile(t *testing.T) {
	s := []int64{10, 20, 30, 40}
	for p, want := range map[float64]float64{0: 10, 0.5: 25, 1: 40, 0.99: 39.7} {
		if got := percentile(s, p); got < want-1e-9 || got > want+1e-9 {
			t.Errorf("percentile(%v) = %v, want %v", p, got, want)
		}
	}
	if percentile(nil, 0.5) != 0 || percentile([]int64{7}, 0.999) != 7 {
		t.Error("edge cases")
	}
}

func fakeRun(client string, scale float64, plan []Case) Run {
	r := Run{Schema: schema, Client: client, Engine: "test", Version: "v", Started: "2026-01-01T00:00:00Z",
		Host: map[string]any{"cpu": "CPU", "cpus": 2.0, "mem_bytes": float64(1 << 34)}}
	for i, c := range plan {
		ops := 1000 * float64(i+1) * scale
		r.Results = append(r.Results, Result{Case: c, OpsPerSec: ops, GBps: ops * float64(c.ValueSize) / 1e9,
			P50Us: 10, P99Us: 20 / scale, P999Us: 30})
	}
	return r
}

func TestCompare(t *testing.T) {
	p := quickParams()
	p.MultiShapes = []Shape{{128, 61, 1152}, {16, 61, 73728}}
	plan, err := p.Plan()
	if err != nil {
		t.Fatal(err)
	}
	goRuns := []Run{fakeRun("go", 1.2, plan), fakeRun("go", 1.4, plan), fakeRun("go", 1.0, plan)}
	pyRuns := []Run{fakeRun("python", 1, plan), fakeRun("python", 1, plan), fakeRun("python", 1, plan)}
	rows, err := compareRuns(goRuns, pyRuns)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(plan) {
		t.Fatalf("%d rows for %d cases", len(rows), len(plan))
	}
	var sawSmall, sawLarge, sawRef bool
	for _, r := range rows {
		// Paired ratios 1.2, 1.4, 1.0: geometric mean 1.68^(1/3); medians 1.2.
		if math.Abs(r.Ratio-math.Cbrt(1.2*1.4)) > 1e-9 || math.Abs(r.RatioOfMedians-1.2) > 1e-9 || r.RatioMin < 0.999 || r.RatioMax < 1.399 || r.Rounds != 3 {
			t.Errorf("%s: ratio %v [%v, %v] rounds %d", r.Scenario, r.Ratio, r.RatioMin, r.RatioMax, r.Rounds)
		}
		switch r.Scenario {
		case "multi_put/128x61x1152B":
			sawSmall = r.Target == 1.3 && !*r.Met // 1.19 < 1.3
		case "multi_get/16x61x72KiB":
			sawLarge = r.Target == 1.0 && *r.Met && r.MemcpyMet != nil && r.MemcpyFraction > 0
		case "memcpy/16x61x72KiB":
			sawRef = r.Target == 0 && r.Met == nil
		}
	}
	if !sawSmall || !sawLarge || !sawRef {
		t.Errorf("targets: small %v large %v reference %v", sawSmall, sawLarge, sawRef)
	}
	m := reportMeta(goRuns, pyRuns, "make bench-compare")
	table := markdownTable(rows, m)
	for _, want := range []string{"| `multi_put/128x61x1152B` |", "**no**", "Targets missed", "`make bench-compare`"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	img := renderChart(rows, m)
	if b := img.Bounds(); b.Dx() < 800 || b.Dy() < 16*len(rows) {
		t.Errorf("chart is %v", b)
	}

	// Files, markers, mismatches.
	dir := t.TempDir()
	write := func(name string, r Run) string {
		data, _ := json.Marshal(r)
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("go-1.json", goRuns[0])
	write("go-2.json", goRuns[1])
	write("py-1.json", pyRuns[0])
	md := filepath.Join(dir, "b.md")
	os.WriteFile(md, []byte("# title\n\n"+mdBegin+"\nold\n"+mdEnd+"\n\nprose\n"), 0o644)
	var out bytes.Buffer
	err = runCompare([]string{"-go", filepath.Join(dir, "go-*.json"), "-python", filepath.Join(dir, "py-*.json"),
		"-out", filepath.Join(dir, "rows.json"), "-png", filepath.Join(dir, "c.png"), "-md", md}, &out)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(md)
	if !strings.Contains(string(got), "prose") || strings.Contains(string(got), "\nold\n") || !strings.Contains(string(got), "multi_get") {
		t.Errorf("markdown section not replaced:\n%s", got)
	}
	var jrows []map[string]any
	data, _ := os.ReadFile(filepath.Join(dir, "rows.json"))
	if err := json.Unmarshal(data, &jrows); err != nil || len(jrows) != len(plan) {
		t.Fatalf("rows.json: %v (%d rows)", err, len(jrows))
	}
	for _, k := range []string{"scenario", "go_ops_per_s", "python_ops_per_s", "go_gbps", "python_gbps", "go_p99_us", "python_p99_us"} {
		if _, ok := jrows[0][k]; !ok {
			t.Errorf("rows.json lacks %s", k)
		}
	}
	other := pyRuns[0]
	other.Results = append([]Result{}, other.Results...)
	other.Results[0].ValueSize++
	write("py-bad.json", other)
	if err := runCompare([]string{"-go", filepath.Join(dir, "go-1.json"), "-python", filepath.Join(dir, "py-bad.json")}, &out); err == nil {
		t.Error("compare accepted runs of different plans")
	}
	if err := runCompare([]string{"-go", filepath.Join(dir, "py-1.json"), "-python", filepath.Join(dir, "py-1.json")}, &out); err == nil {
		t.Error("compare accepted a Python run as a Go run")
	}

	// A/A: Go runs on both sides; go-2 runs at 1.4/1.2 of go-1's rate.
	out.Reset()
	if err := runCompare([]string{"-aa", "-go", filepath.Join(dir, "go-2.json"), "-python", filepath.Join(dir, "go-1.json")}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| A/B |", "| `multi_put/128x61x1152B` |", "1.17×", "Mean distance of A/B from 1 over"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("A/A table lacks %q:\n%s", want, out.String())
		}
	}
	if err := runCompare([]string{"-aa", "-go", filepath.Join(dir, "go-1.json"), "-python", filepath.Join(dir, "py-1.json")}, &out); err == nil {
		t.Error("-aa accepted a Python run")
	}
	if err := runCompare([]string{"-aa", "-go", filepath.Join(dir, "go-1.json"), "-python", filepath.Join(dir, "go-2.json"), "-out", filepath.Join(dir, "x.json")}, &out); err == nil {
		t.Error("-aa accepted -out")
	}
}

// TestServe drives the serve protocol of mcbench drive on the embedded
// engine: a header line, one reply per case name, an error for an unknown
// name, then quit.
func TestServe(t *testing.T) {
	args := clusterArgs(t)
	in := strings.NewReader("multi_get/8x61x1152B\nno-such-case\nverify_write.write/zcopy/4KiB/x8\nquit\nfill/plain/4KiB/x1\n")
	old := stdin
	stdin = in
	defer func() { stdin = old }()
	var out, errb bytes.Buffer
	err := run(append(args, "-quick", "-serve", "-own-segment", "-duration", "10ms", "-warmup", "1ms"), &out, &errb)
	if err != nil {
		t.Fatalf("serve: %v\n%s", err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("want a header and 3 replies, got %d lines:\n%s", len(lines), out.String())
	}
	var head Run
	if err := json.Unmarshal([]byte(lines[0]), &head); err != nil || head.Schema != schema || head.Client != "go" {
		t.Fatalf("header %q: %v", lines[0], err)
	}
	var r1, r2, r3 serveReply
	for i, r := range []*serveReply{&r1, &r2, &r3} {
		if err := json.Unmarshal([]byte(lines[i+1]), r); err != nil {
			t.Fatal(err)
		}
	}
	if r1.Error != "" || len(r1.Results) != 1 || r1.Results[0].Name != "multi_get/8x61x1152B" || r1.Results[0].OpsPerSec <= 0 {
		t.Errorf("reply 1: %+v", r1)
	}
	if r2.Error == "" {
		t.Errorf("unknown case: no error")
	}
	if r3.Error != "" || len(r3.Results) != 2 || r3.Results[1].Phase != "read" || r3.Results[1].Errors != 0 {
		t.Errorf("reply 3: %+v", r3)
	}
}

// TestRatioCancelsStartOrder: a slowdown of whichever client started first,
// with alternating start order, leaves the geometric mean of paired ratios
// unbiased.
func TestRatioCancelsStartOrder(t *testing.T) {
	plan, err := quickParams().Plan()
	if err != nil {
		t.Fatal(err)
	}
	plan = plan[:1]
	g1, g2 := fakeRun("go", 0.5, plan), fakeRun("go", 1, plan)         // Go first in round 1: half speed
	p1, p2 := fakeRun("python", 1, plan), fakeRun("python", 0.5, plan) // Python first in round 2
	rows, err := compareRuns([]Run{g1, g2}, []Run{p1, p2})
	if err != nil {
		t.Fatal(err)
	}
	if r := rows[0]; math.Abs(r.Ratio-1) > 1e-9 || r.RatioMin != 0.5 || r.RatioMax != 2 {
		t.Errorf("ratio %v [%v, %v], want 1 [0.5, 2]", r.Ratio, r.RatioMin, r.RatioMax)
	}
}
