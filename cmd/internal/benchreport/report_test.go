package benchreport

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/cmd/internal/benchplan"
)

func testPlan(t *testing.T) []benchplan.Case {
	t.Helper()
	p := benchplan.QuickParams()
	p.MultiShapes = []benchplan.Shape{{Keys: 128, Buffers: 61, Size: 1152}, {Keys: 16, Buffers: 61, Size: 73728}}
	plan, err := p.Plan()
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// fakeRun is a run in which case i did 1000*(i+1)*scale keys/s. Like the
// real clients, only Go's runs have the combining twins.
func fakeRun(client string, scale float64, plan []benchplan.Case) benchplan.Run {
	r := benchplan.Run{Schema: benchplan.Schema, Client: client, Engine: "test", Version: "v", Started: "2026-01-01T00:00:00Z",
		Host: map[string]any{"cpu": "CPU", "cpus": 2.0, "mem_bytes": float64(1 << 34), "os": "linux", "arch": "amd64"},
		Params: map[string]any{"master": "127.0.0.1:1", "protocol": "tcp", "segment": float64(2 << 30), "local_buffer": float64(256 << 20),
			"duration_s": 1.0, "warmup_s": 0.2, "thp": true, "glibc_tunables": "", "memcpy_ref": "libc memcpy",
			"drive": map[string]any{"rounds": 2.0, "repeat": 2.0}}}
	for i, c := range plan {
		if c.Combining && client != "go" {
			continue
		}
		ops := 1000 * float64(i+1) * scale
		res := benchplan.Result{Case: c, OpsPerSec: ops, GBps: ops * float64(c.ValueSize) / 1e9, P50Us: 10, P99Us: 20 / scale, P999Us: 30, MeanUs: 12}
		if c.API == benchplan.APIHiCache {
			res.OutsideUs = 3 / scale
		}
		r.Results = append(r.Results, res)
	}
	return r
}

func TestCompare(t *testing.T) {
	plan := testPlan(t)
	goRuns := []benchplan.Run{fakeRun("go", 1.2, plan), fakeRun("go", 1.4, plan), fakeRun("go", 1.0, plan)}
	pyRuns := []benchplan.Run{fakeRun("python", 1, plan), fakeRun("python", 1, plan), fakeRun("python", 1, plan)}
	rows, err := Compare(goRuns, pyRuns)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(plan) {
		t.Fatalf("%d rows for %d cases", len(rows), len(plan))
	}
	byName := map[string]Row{}
	for _, r := range rows {
		byName[r.Scenario] = r
		if r.Combining {
			continue // against another case's Python runs: TestCombiningView
		}
		// Paired ratios 1.2, 1.4, 1.0: geometric mean 1.68^(1/3); medians 1.2.
		if math.Abs(r.Ratio-math.Cbrt(1.2*1.4)) > 1e-9 || math.Abs(r.RatioOfMedians-1.2) > 1e-9 ||
			math.Abs(r.RatioMin-1) > 1e-9 || math.Abs(r.RatioMax-1.4) > 1e-9 || r.Rounds != 3 {
			t.Errorf("%s: ratio %v [%v, %v] rounds %d", r.Scenario, r.Ratio, r.RatioMin, r.RatioMax, r.Rounds)
		}
	}
	yes, no := true, false
	for _, tc := range []struct {
		name      string
		target    float64
		met       *bool
		memcpyMet *bool
	}{
		{"multi_put/128x61x1152B", 1.3, &no, nil},                 // 1.19 < 1.3
		{"hicache_set/mla_layer_first_p1/8pages", 1.0, &yes, nil}, // 8 pages: not the 128-page shape
		{"hicache_exists/mla_layer_first_p1/8pages", 1.0, &yes, nil},
		{"write_perf/zcopy/4KiB/x8", 1.0, &yes, nil},
		{"multi_get/16x61x72KiB", 1.0, &yes, &yes}, // held against the memcpy row of its shape
		{"memcpy/16x61x72KiB", 0, nil, nil},        // reference row
	} {
		r, ok := byName[tc.name]
		if !ok {
			t.Errorf("no row %s", tc.name)
			continue
		}
		if r.Target != tc.target || !reflect.DeepEqual(r.Met, tc.met) || !reflect.DeepEqual(r.MemcpyMet, tc.memcpyMet) {
			t.Errorf("%s: target %v met %v memcpy met %v (fraction %v)", tc.name, r.Target, ptr(r.Met), ptr(r.MemcpyMet), r.MemcpyFraction)
		}
	}
	if mg, mc := byName["multi_get/16x61x72KiB"], byName["memcpy/16x61x72KiB"]; math.Abs(mg.MemcpyFraction-mg.GoGBps/mc.GoGBps) > 1e-12 {
		t.Errorf("memcpy fraction %v, want %v", mg.MemcpyFraction, mg.GoGBps/mc.GoGBps)
	}
	hs := byName["hicache_set/mla_layer_first_p1/8pages"]
	if hs.GoOutsideUs != 3/1.2 || hs.PythonOutsideUs != 3 || hs.GoMeanUs != 12 {
		t.Errorf("HiCache outside time: %+v", hs)
	}
	// A case's own memcpy reference wins over the memcpy row of its shape.
	withRef := []benchplan.Run{fakeRun("go", 1, plan)}
	for i := range withRef[0].Results {
		withRef[0].Results[i].MemcpyGBps = withRef[0].Results[i].GBps / 0.85
	}
	rows, err = Compare(withRef, pyRuns[:1])
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Scenario == "multi_get/16x61x72KiB" && (math.Abs(r.MemcpyFraction-0.85) > 1e-9 || *r.MemcpyMet) {
			t.Errorf("own reference: fraction %v", r.MemcpyFraction)
		}
	}
	if md := Markdown(rows, Meta{}); !strings.Contains(md, "- `multi_get/16x61x72KiB`: 85% of memcpy < 90%") {
		t.Errorf("the missed memcpy target is not listed:\n%s", md)
	}
}

func ptr(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

// TestRatioCancelsStartOrder: a slowdown of whichever client started first,
// with alternating start order, leaves the geometric mean of paired ratios
// unbiased, where the ratio of medians is not.
func TestRatioCancelsStartOrder(t *testing.T) {
	plan := testPlan(t)[:1]
	g1, g2 := fakeRun("go", 0.5, plan), fakeRun("go", 1, plan)         // Go first in round 1: half speed
	p1, p2 := fakeRun("python", 1, plan), fakeRun("python", 0.5, plan) // Python first in round 2
	g3, p3 := fakeRun("go", 0.5, plan), fakeRun("python", 1, plan)     // Go first again
	rows, err := Compare([]benchplan.Run{g1, g2}, []benchplan.Run{p1, p2})
	if err != nil {
		t.Fatal(err)
	}
	if r := rows[0]; math.Abs(r.Ratio-1) > 1e-9 || r.RatioMin != 0.5 || r.RatioMax != 2 {
		t.Errorf("ratio %v [%v, %v], want 1 [0.5, 2]", r.Ratio, r.RatioMin, r.RatioMax)
	}
	rows, err = Compare([]benchplan.Run{g1, g2, g3}, []benchplan.Run{p1, p2, p3})
	if err != nil {
		t.Fatal(err)
	}
	if r := rows[0]; math.Abs(r.Ratio-math.Cbrt(0.5)) > 1e-9 || math.Abs(r.RatioOfMedians-0.5) > 1e-9 {
		t.Errorf("odd rounds: ratio %v, of medians %v", r.Ratio, r.RatioOfMedians)
	}
}

func TestCompareRefuses(t *testing.T) {
	plan := testPlan(t)
	g, p := fakeRun("go", 1, plan), fakeRun("python", 1, plan)
	for _, tc := range []struct {
		name     string
		goRuns   []benchplan.Run
		pyRuns   []benchplan.Run
		modified func(*benchplan.Run)
	}{
		{name: "no runs", goRuns: nil, pyRuns: []benchplan.Run{p}},
		{name: "other parameters", goRuns: []benchplan.Run{g}, pyRuns: []benchplan.Run{p},
			modified: func(r *benchplan.Run) { r.Results[0].ValueSize++ }},
		{name: "case missing on one side", goRuns: []benchplan.Run{g}, pyRuns: []benchplan.Run{p},
			modified: func(r *benchplan.Run) { r.Results = r.Results[1:] }},
		{name: "case only on one side", goRuns: []benchplan.Run{g}, pyRuns: []benchplan.Run{p},
			modified: func(r *benchplan.Run) {
				r.Results = append(r.Results, benchplan.Result{Case: benchplan.Case{Name: "extra"}})
			}},
		{name: "case missing in a later run", goRuns: []benchplan.Run{g}, pyRuns: []benchplan.Run{p, p},
			modified: func(r *benchplan.Run) { r.Results = r.Results[:len(r.Results)-1] }},
	} {
		py := append([]benchplan.Run{}, tc.pyRuns...)
		if tc.modified != nil {
			last := py[len(py)-1]
			last.Results = append([]benchplan.Result{}, last.Results...)
			tc.modified(&last)
			py[len(py)-1] = last
		}
		if _, err := Compare(tc.goRuns, py); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func writeRun(t *testing.T, dir, name string, r benchplan.Run) string {
	t.Helper()
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRun(t *testing.T) {
	plan := testPlan(t)
	dir := t.TempDir()
	writeRun(t, dir, "go-1.json", fakeRun("go", 1.2, plan))
	writeRun(t, dir, "go-2.json", fakeRun("go", 1.4, plan))
	writeRun(t, dir, "py-1.json", fakeRun("python", 1, plan))
	writeRun(t, dir, "py-2.json", fakeRun("python", 1, plan))
	goFiles, err := Expand(filepath.Join(dir, "go-*.json"))
	if err != nil || len(goFiles) != 2 {
		t.Fatalf("Expand: %v %v", goFiles, err)
	}
	pyFiles, _ := Expand(filepath.Join(dir, "py-1.json") + ", " + filepath.Join(dir, "py-2.json"))
	md := filepath.Join(dir, "b.md")
	doc := "# title\n\n" + MarkBegin + "\nold\n" + MarkEnd + "\n\nprose\n"
	if err := os.WriteFile(md, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Options{GoFiles: goFiles, PythonFiles: pyFiles, Out: filepath.Join(dir, "b.json"), Chart: filepath.Join(dir, "b.svg"),
		Markdown: md, Command: "make bench-compare"}
	var out bytes.Buffer
	if err := Run(o, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| `multi_put/128x61x1152B` |", "**no**", "Targets missed", "- Command: `make bench-compare`",
		"2 rounds of fresh Go and Python client processes", "- Machine: CPU, 2 CPUs, 16 GiB RAM, linux/amd64",
		"segment 2048 MiB per client", "HiCache requests"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q", want)
		}
	}
	got, _ := os.ReadFile(md)
	if want := "# title\n\n" + MarkBegin + "\n<!-- generated by mcbench compare; do not edit by hand -->\n\n" + out.String() + "\n" + MarkEnd + "\n\nprose\n"; string(got) != want {
		t.Errorf("markdown:\n%s", got)
	}
	summary, _ := os.ReadFile(o.Out)
	if n := strings.Count(string(summary), "\n"); n != len(plan)+4 {
		t.Errorf("summary has %d lines for %d rows", n, len(plan))
	}

	// The same runs give the same files; the summary gives the same table.
	if err := os.WriteFile(md, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	o2 := o
	o2.Out, o2.Chart = filepath.Join(dir, "again.json"), filepath.Join(dir, "again.svg")
	var out2 bytes.Buffer
	if err := Run(o2, &out2); err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]string{{o.Out, o2.Out}, {o.Chart, o2.Chart}} {
		a, _ := os.ReadFile(pair[0])
		b, _ := os.ReadFile(pair[1])
		if !bytes.Equal(a, b) {
			t.Errorf("%s and %s differ", pair[0], pair[1])
		}
	}
	got2, _ := os.ReadFile(md)
	if !bytes.Equal(got, got2) {
		t.Error("the Markdown file differs between two reports of the same runs")
	}
	var fromSummary bytes.Buffer
	if err := Run(Options{Summary: o.Out, Chart: filepath.Join(dir, "s.png")}, &fromSummary); err != nil {
		t.Fatal(err)
	}
	if fromSummary.String() != out.String() {
		t.Errorf("table from the summary differs:\n%s\nwant\n%s", fromSummary.String(), out.String())
	}

	// A/A: Go runs on both sides; go-2 runs at 1.4/1.2 of go-1's rate.
	var aa bytes.Buffer
	if err := Run(Options{GoFiles: goFiles[1:], PythonFiles: goFiles[:1], AA: true}, &aa); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| A/B |", "| `multi_put/128x61x1152B` |", "1.17×", "Mean distance of A/B from 1 over 54 cases: 16.7%."} {
		if !strings.Contains(aa.String(), want) {
			t.Errorf("A/A table lacks %q:\n%s", want, aa.String())
		}
	}

	for name, bad := range map[string]Options{
		"no files":              {},
		"Python run as Go run":  {GoFiles: pyFiles, PythonFiles: pyFiles},
		"A/A with a Python run": {GoFiles: goFiles[:1], PythonFiles: pyFiles[:1], AA: true},
		"A/A with -md":          {GoFiles: goFiles[:1], PythonFiles: goFiles[1:], AA: true, Markdown: md},
		"summary and runs":      {Summary: o.Out, GoFiles: goFiles},
		"missing summary":       {Summary: filepath.Join(dir, "none.json")},
		"runs as summary":       {Summary: goFiles[0]},
		"chart format":          {GoFiles: goFiles, PythonFiles: pyFiles, Chart: filepath.Join(dir, "c.gif")},
		"no markers":            {GoFiles: goFiles, PythonFiles: pyFiles, Markdown: o.Out},
	} {
		if err := Run(bad, io.Discard); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Expand(filepath.Join(dir, "nothing-*.json")); err == nil {
		t.Error("Expand of a pattern that matches nothing: no error")
	}
	if _, err := LoadRuns([]string{o.Out}, "go"); err == nil {
		t.Error("LoadRuns accepted a summary")
	}
}

func TestChart(t *testing.T) {
	plan := testPlan(t)
	rows, err := Compare([]benchplan.Run{fakeRun("go", 1.2, plan)}, []benchplan.Run{fakeRun("python", 1, plan)})
	if err != nil {
		t.Fatal(err)
	}
	m := MetaFromRuns([]benchplan.Run{fakeRun("go", 1.2, plan)}, []benchplan.Run{fakeRun("python", 1, plan)}, "")
	var svg bytes.Buffer
	w, err := Chart(rows, m, "svg")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteTo(&svg); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(svg.Bytes()))
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		if cd, ok := tok.(xml.CharData); ok {
			text.Write(cd)
		}
	}
	for _, want := range []string{"mooncake-go vs upstream's Python client", "Go/Python keys/s (log scale)", "keys/s per client (log scale)",
		"multi_put/128x61x1152B", "1.20×", "target missed", "Python"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the SVG's text lacks %q", want)
		}
	}
	if !strings.Contains(svg.String(), "Arial") {
		t.Error("the SVG names no fallback font")
	}
	w, err = Chart(rows, m, "png")
	if err != nil {
		t.Fatal(err)
	}
	var pngData bytes.Buffer
	if _, err := w.WriteTo(&pngData); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&pngData)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() < 800 || b.Dy() < 12*len(rows) {
		t.Errorf("chart is %v", b)
	}
	if _, err := Chart(nil, m, "svg"); err == nil {
		t.Error("a chart of no rows")
	}
}

func TestNum(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{0, "0.00"}, {9.994, "9.99"}, {12.34, "12.3"}, {345.6, "346"}, {4433.6, "4.43k"}, {62000, "62k"}, {1.5e6, "1.50M"}, {2.5e7, "25M"}} {
		if got := Num(tc.v); got != tc.want {
			t.Errorf("Num(%v) = %s, want %s", tc.v, got, tc.want)
		}
	}
}

func TestCompareTE(t *testing.T) {
	runs := []TERun{
		{Client: "go", Op: "read", Block: 4096, Batch: 128, Threads: 1, Round: 0, MBps: 100, LatencyUS: [2]int{10, 20}},
		{Client: "upstream", Op: "read", Block: 4096, Batch: 128, Threads: 1, Round: 0, MBps: 50, LatencyUS: [2]int{20, 40}},
		{Client: "go", Op: "read", Block: 4096, Batch: 128, Threads: 1, Round: 1, MBps: 100, LatencyUS: [2]int{10, 20}},
		{Client: "upstream", Op: "read", Block: 4096, Batch: 128, Threads: 1, Round: 1, MBps: 200, LatencyUS: [2]int{20, 40}},
		// unpaired: no row
		{Client: "go", Op: "write", Block: 1 << 20, Batch: 128, Threads: 1, Round: 0, MBps: 100},
		// a failed-looking run (0 MB/s) is not paired
		{Client: "go", Op: "read", Block: 1 << 20, Batch: 8, Threads: 2, Round: 0, MBps: 0},
		{Client: "upstream", Op: "read", Block: 1 << 20, Batch: 8, Threads: 2, Round: 0, MBps: 10},
	}
	rows := CompareTE(runs, "go", "upstream")
	if len(rows) != 1 {
		t.Fatalf("rows %+v", rows)
	}
	r := rows[0]
	// ratios 2 and 0.5: geometric mean 1
	if math.Abs(r.Ratio-1) > 1e-9 || r.Lo != 0.5 || r.Hi != 2 || r.Rounds != 2 || r.A != 100 || r.B != 125 || r.P50A != 10 || r.P99B != 40 {
		t.Errorf("row %+v", r)
	}
	md := TEMarkdown(rows, []TERow{{Op: "read", Block: 4096, Batch: 128, Threads: 1, Lo: 0.9, Hi: 1.1}}, "cmd", time.Unix(0, 0), false)
	for _, want := range []string{"| `read 4 KiB x128 t1` | 100.0 | 125.0 | 1.00× | 0.50×–2.00× | 0.90×–1.10× | 10 | 20 | ≥ 0.90×: met |", "Targets met in 1 of 1"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if TETarget(64<<10) != 0.97 || TETarget(4096) != 0.90 {
		t.Error("targets")
	}
	svg := filepath.Join(t.TempDir(), "te.svg")
	if err := WriteTEChart(svg, rows, "t"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(svg); err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("chart: %v", err)
	}
}

// TestPlacement: the report sums the Go client's placement samples over
// the runs and names the cases with objects outside the client's segment.
func TestPlacement(t *testing.T) {
	plan := testPlan(t)
	runs := func(off int) []benchplan.Run {
		var rs []benchplan.Run
		for range 2 {
			r := fakeRun("go", 1, plan)
			r.Results[0].PlacedKeys, r.Results[0].OffSegmentKeys = 100, off
			r.Results[1].PlacedKeys = 50
			rs = append(rs, r)
		}
		return rs
	}
	pyRuns := []benchplan.Run{fakeRun("python", 1, plan), fakeRun("python", 1, plan)}
	for _, tc := range []struct {
		off  int
		want string
	}{
		{0, "Placement: of 300 objects looked up after the Go client's write and read cases, every one was in the client's own segment."},
		{7, fmt.Sprintf("Placement: of 300 objects looked up after the Go client's write and read cases, 14 were outside the client's own segment "+
			"(moved over the network, not by memcpy): `%s` 14 of 200.", plan[0].Name)},
	} {
		rows, err := Compare(runs(tc.off), pyRuns)
		if err != nil {
			t.Fatal(err)
		}
		if md := Markdown(rows, Meta{}); !strings.Contains(md, tc.want) {
			t.Errorf("off %d: the report lacks %q:\n%s", tc.off, tc.want, md)
		}
	}
	if md := Markdown(mustCompare(t, []benchplan.Run{fakeRun("go", 1, plan)}, pyRuns[:1]), Meta{}); strings.Contains(md, "Placement") {
		t.Errorf("a report without samples has a placement line")
	}
	// Loopback traffic: a case at 0.9 bytes per byte moved is named, one
	// at 0.05 (RPC) is not.
	tcp := []benchplan.Run{fakeRun("go", 1, plan)}
	for i, share := range map[int]float64{0: 0.9, 1: 0.05} {
		r := &tcp[0].Results[i]
		r.Keys, r.Bytes = 100, 100*4096
		r.LoopbackBytesPerKey = share * 4096
	}
	md := Markdown(mustCompare(t, tcp, pyRuns[:1]), Meta{})
	if want := fmt.Sprintf("(objects over TCP, not memcpy): `%s` 0.90.", plan[0].Name); !strings.Contains(md, want) {
		t.Errorf("the report lacks %q:\n%s", want, md)
	}
	if strings.Contains(md, "`"+plan[1].Name+"` 0.05") {
		t.Errorf("a case with RPC traffic only is named")
	}
}

func mustCompare(t *testing.T, goRuns, pyRuns []benchplan.Run) []Row {
	t.Helper()
	rows, err := Compare(goRuns, pyRuns)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestPlacementNote(t *testing.T) {
	for _, tc := range []struct {
		res  benchplan.Result
		want string
	}{
		{benchplan.Result{Keys: 10, Bytes: 40960, PlacedKeys: 10}, ""},
		{benchplan.Result{Keys: 10, Bytes: 40960, PlacedKeys: 10, LoopbackBytesPerKey: 300}, ""},
		{benchplan.Result{Keys: 10, Bytes: 40960, PlacedKeys: 10, OffSegmentKeys: 2}, "  [go: 2 of 10 objects outside its segment]"},
		{benchplan.Result{Keys: 10, Bytes: 40960, PlacedKeys: 10, OffSegmentKeys: 1, LoopbackBytesPerKey: 4400},
			"  [go: 1 of 10 objects outside its segment, loopback 1.07 B per B moved]"},
		{benchplan.Result{Keys: 10, LoopbackBytesPerKey: 4400}, ""}, // nothing moved (exists): no share
	} {
		if got := PlacementNote(tc.res); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.res, got, tc.want)
		}
	}
}
