package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mooncake-go/mooncake-go/cmd/internal/benchplan"
	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/hostcache/prefix"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// clusterArgs returns the flags that select the test cluster: none for the
// embedded engine, the live cluster of make test-native for a native build.
func clusterArgs(t *testing.T) []string {
	t.Setenv(mooncake.EnvMaster, "")
	t.Setenv(mooncake.EnvConfigPath, "")
	if mooncake.Backend().Name == "embedded" {
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
// runJSON runs mcbench with args, which write the results to out, and
// reads them back; without cgo the test is skipped.
func runJSON(t *testing.T, args []string, out string) (doc Run, stdout, stderr *bytes.Buffer) {
	t.Helper()
	stdout, stderr = new(bytes.Buffer), new(bytes.Buffer)
	err := run(args, stdout, stderr)
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
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc, stdout, stderr
}

func TestQuickRun(t *testing.T) {
	args := clusterArgs(t)
	out := filepath.Join(t.TempDir(), "go.json")
	// A 1 MiB-per-key shape exercises the paired memcpy reference.
	planArgs := []string{"-quick", "-multi-shapes", "8x61x1152,2x2x1MiB"}
	args = append(append(args, planArgs...), "-duration", "15ms", "-warmup", "2ms", "-json", out, "-progress")
	doc, stdout, stderr := runJSON(t, args, out)
	p := benchplan.QuickParams()
	p.MultiShapes = []Shape{{Keys: 8, Buffers: 61, Size: 1152}, {Keys: 2, Buffers: 2, Size: 1 << 20}}
	plan, err := p.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Results) != len(plan) {
		t.Fatalf("%d results for %d cases", len(doc.Results), len(plan))
	}
	concurrent, twins := 0, 0
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
		if r.Timed && (r.CPUSec <= 0 || r.CPUUsPerOp <= 0) {
			t.Errorf("%s: no CPU time measured (%v s, %v µs/key)", r.Name, r.CPUSec, r.CPUUsPerOp)
		}
		if n := r.NumCallers(); n > 1 {
			concurrent++
			// Every caller makes at least one request in the window.
			if r.Requests < n || r.BusySec <= 0 || r.BusySec > r.WallSec {
				t.Errorf("%s: %d requests from %d callers, window %v s of %v s", r.Name, r.Requests, n, r.BusySec, r.WallSec)
			}
		}
		if wantRef := r.ValueSize >= largeObject && r.Scenario != scMemcpy; wantRef != (r.MemcpyGBps > 0) {
			t.Errorf("%s: memcpy reference %v GB/s", r.Name, r.MemcpyGBps)
		}
		// A twin counts its store's single-key calls over the measured
		// window: one per request of a single-key case, none for batches.
		var batches uint64
		for _, n := range r.CombinedBatchSizes {
			batches += n
		}
		single := r.Batch == 1 && r.Scenario != scHiSet && r.Scenario != scHiGet
		if r.Combining {
			twins++
			if (single && r.SingleCalls != uint64(r.Requests)) || (!single && r.SingleCalls != 0) || r.CombinedCalls > r.SingleCalls ||
				batches != r.CombinedBatches || r.CombinedBatches > r.CombinedCalls/2 || len(r.CombinedBatchSizes) == 0 {
				t.Errorf("%s: %d requests, combining counters %d calls, %d combined, %d batches %v", r.Name, r.Requests, r.SingleCalls,
					r.CombinedCalls, r.CombinedBatches, r.CombinedBatchSizes)
			}
		} else if r.SingleCalls != 0 || r.CombinedBatchSizes != nil {
			t.Errorf("%s: combining counters without combining", r.Name)
		}
	}
	if concurrent == 0 || twins == 0 {
		t.Errorf("the quick plan ran %d cases with several callers and %d combining twins", concurrent, twins)
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
	f, err := benchplan.ReadFile(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	if len(f.Cases) != 2 || f.Cases[0].Name != "multi_get/128x61x1152B" || f.Cases[1].Name != "multi_get/16x61x72KiB" {
		t.Fatalf("plan:\n%s", out.String())
	}
	if !reflect.DeepEqual(f.Params, benchplan.DefaultParams()) {
		t.Errorf("params %+v", f.Params)
	}
	want := benchplan.Settings{DurationS: 1, WarmupS: 0.2, GenBytes: 512 << 20, RWMixRead: 70, Seed: 1, Segment: 2 << 30,
		LocalBuffer: 256 << 20, Populate: true, THP: true, MemcpyRef: true, Prefault: "auto"}
	if f.Settings != want {
		t.Errorf("settings %+v, want %+v", f.Settings, want)
	}
	for _, bad := range [][]string{{"-sizes", "4q"}, {"-scenarios", "nope"}, {"-multi-shapes", "1x2"}, {"-rwmixread", "101"},
		{"-master", "x"}, {"-duration", "0s"}, {"-segment", "lots"}, {"-local-buffer", "1.5mb"}, {"-gen-bytes", "0"}, {"-prefault", "maybe"}, {"extra"}} {
		if err := run(append([]string{"-list"}, bad...), &out, &out); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestPlanFile: a plan file gives the same plan and settings as the flags
// that wrote it, and refuses plan flags beside it.
func TestPlanFile(t *testing.T) {
	t.Setenv(mooncake.EnvMaster, "")
	t.Setenv(mooncake.EnvConfigPath, "")
	flags := []string{"-quick", "-sizes", "4KiB,1MiB", "-batches", "1,16", "-only", "hicache|multi|fill", "-duration", "15ms",
		"-warmup", "3ms", "-thp=false", "-prefault", "off", "-rwmixread", "50", "-seed", "7", "-gen-bytes", "8MiB", "-segment", "96mb"}
	var list bytes.Buffer
	if err := run(append([]string{"-list"}, flags...), &list, &list); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "plan.jsonl")
	if err := os.WriteFile(path, list.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	direct, err := parseFlags(flags, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := parseFlags([]string{"-plan", path, "-hostname", "10.0.0.1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(direct.planFile(), fromFile.planFile()) {
		t.Errorf("plan from the file differs:\n%+v\n%+v", direct.planFile(), fromFile.planFile())
	}
	if !reflect.DeepEqual(direct.paramsJSON(), fromFile.paramsJSON()) {
		t.Errorf("run header params differ:\n%v\n%v", direct.paramsJSON(), fromFile.paramsJSON())
	}
	if fromFile.cfg.GlobalSegmentSize != 96<<20 || fromFile.cfg.LocalBufferSize != 32<<20 || fromFile.cfg.LocalHostname != "10.0.0.1" {
		t.Errorf("config %+v", fromFile.cfg)
	}
	var again bytes.Buffer
	if err := run([]string{"-list", "-plan", path}, &again, &again); err != nil || again.String() != list.String() {
		t.Errorf("-list -plan does not reproduce the file (%v):\n%s", err, again.String())
	}
	for _, bad := range [][]string{{"-duration", "1s"}, {"-quick"}, {"-only", "x"}, {"-segment", "1gb"}, {"-thp=true"}} {
		if _, err := parseFlags(append([]string{"-plan", path}, bad...), io.Discard); err == nil {
			t.Errorf("-plan with %q: no error", bad)
		}
	}
	if _, err := parseFlags([]string{"-plan", filepath.Join(t.TempDir(), "none")}, io.Discard); err == nil {
		t.Error("-plan of a missing file: no error")
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
	// As mcbench drive starts its clients: the plan from a file.
	var list bytes.Buffer
	if err := run([]string{"-list", "-quick", "-duration", "10ms", "-warmup", "1ms"}, &list, &list); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(t.TempDir(), "plan.jsonl")
	if err := os.WriteFile(plan, list.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(append(args, "-serve", "-own-segment", "-plan", plan), &out, &errb)
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
	var r1, r2, r3 benchplan.ServeReply
	for i, r := range []*benchplan.ServeReply{&r1, &r2, &r3} {
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

// TestPythonReadsThePlan: scripts/bench_python.py takes the plan of
// mcbench -list as it is, and says so plainly when it cannot run it
// (python3 only; the mooncake module is not needed for that).
func TestPythonReadsThePlan(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	t.Setenv(mooncake.EnvMaster, "")
	t.Setenv(mooncake.EnvConfigPath, "")
	script := filepath.Join("..", "..", "scripts", "bench_python.py")
	dir := t.TempDir()
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
	for i, args := range [][]string{nil, {"-quick"}, {"-quick", "-sizes", "4KiB,1MiB", "-batches", "1,16", "-thp=false"},
		{"-only", "hicache|multi", "-mla-page-sizes", "1,16,64", "-hicache-pages", "64", "-duration", "2s"},
		{"-max-batch-bytes", "8MiB", "-dataset-bytes", "16MiB", "-max-objects", "100", "-multi-shapes", "4x3x100", "-prefault", "off"},
		{"-scenarios", "prefix_lookup", "-callers", "16", "-prefix-pages", "32", "-prefix-page-size", "16"}} {
		var gout bytes.Buffer
		if err := run(append([]string{"-list"}, args...), &gout, &gout); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		plan := filepath.Join(dir, fmt.Sprintf("plan-%d.jsonl", i))
		if err := os.WriteFile(plan, gout.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		pout, err := exec.Command(py, script, "--plan", plan, "--list").Output()
		if err != nil {
			t.Fatalf("bench_python.py --plan (mcbench -list %q) --list: %v", args, err)
		}
		if g, p := decode(gout.String()), decode(string(pout)); !reflect.DeepEqual(g, p) {
			t.Errorf("%q: Python read the plan as\n%s\nwant\n%s", args, pout, gout.String())
		}
	}

	good := filepath.Join(dir, "plan-1.jsonl")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	header, cases, _ := strings.Cut(string(data), "\n")
	for name, tc := range map[string]struct {
		plan string // file content; "" runs the good plan
		args []string
		want string // in stderr
	}{
		"not a plan":    {plan: "{\"schema\":\"mcbench/1\"}\n", want: "not a plan file"},
		"unknown field": {plan: header + "\n" + strings.Replace(cases, `"timed"`, `"colour":1,"timed"`, 1), want: "unknown case fields"},
		"missing field": {plan: header + "\n" + strings.Replace(cases, `"objects":`, `"objekts":`, 1), want: "'objects'"},
		"no setting":    {plan: strings.Replace(header, `"thp"`, `"THP"`, 1) + "\n" + cases, want: "'thp'"},
		"plan flag":     {args: []string{"--duration", "1s"}, want: "unrecognized arguments"},
		"no cluster":    {want: "--master and --metadata"},
	} {
		path := good
		if tc.plan != "" {
			path = filepath.Join(dir, "bad.jsonl")
			if err := os.WriteFile(path, []byte(tc.plan), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(py, append([]string{script, "--plan", path}, tc.args...)...)
		cmd.Env = append(os.Environ(), "MOONCAKE_MASTER=", "MOONCAKE_TE_META_DATA_SERVER=")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s: %v, output lacks %q:\n%s", name, err, tc.want, out)
		}
	}

	// Without upstream's package it stops before touching any cluster.
	if exec.Command(py, "-c", "import mooncake.store").Run() == nil {
		t.Log("mooncake.store is importable here: the missing-package message is not checked")
		return
	}
	out, err := exec.Command(py, script, "--plan", good, "--master", "127.0.0.1:1", "--metadata", "http://127.0.0.1:1/metadata").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "cannot import mooncake.store") {
		t.Errorf("without mooncake: %v\n%s", err, out)
	}
}

// TestPrefixLookupRun runs prefix_lookup (named, as it is not in the
// default plan) with one caller and with four sharing one prefix.Lookup:
// every lookup finds every page of its prompt.
func TestPrefixLookupRun(t *testing.T) {
	args := clusterArgs(t)
	out := filepath.Join(t.TempDir(), "go.json")
	args = append(args, "-quick", "-scenarios", "prefix_lookup", "-duration", "30ms", "-warmup", "2ms", "-json", out)
	doc, _, stderr := runJSON(t, args, out)
	if len(doc.Results) != 2 {
		t.Fatalf("%d results, want prefix_lookup alone and with 4 callers", len(doc.Results))
	}
	for _, r := range doc.Results {
		if r.Scenario != benchplan.PrefixLookup || r.Batch != 8 || r.PageSize != 16 || r.KeysPerRequest() != 16 {
			t.Errorf("case %+v", r.Case)
		}
		if r.Requests == 0 || r.Errors != 0 || r.Keys != r.Requests*16 {
			t.Errorf("%s: %d requests, %d keys, %d errors", r.Name, r.Requests, r.Keys, r.Errors)
		}
	}
	if !strings.Contains(stderr.String(), "lookups in") {
		t.Errorf("no combining report on stderr: %s", stderr.String())
	}
}

// TestPythonPrefixKeys: the Python counterpart of prefix_lookup checks the
// keys prefix.Lookup checks (SGLang's page hashes, the MHA keys of rank 0).
func TestPythonPrefixKeys(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	const prog = `
import importlib.util, sys
from array import array
spec = importlib.util.spec_from_file_location("bp", sys.argv[1])
bp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bp)
class St:
    def batch_is_exist(self, keys):
        self.keys = keys
        return [1] * (len(keys) - 1) + [0]
st = St()
n = bp.prefix_lookup(st, "tag", array("I", range(1, 40)), 4)
print(n)
print("\n".join(st.keys))
`
	out, err := exec.Command(py, "-c", prog, filepath.Join("..", "..", "scripts", "bench_python.py")).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	h, _ := prefix.NewHasher(prefix.HashConfig{PageSize: 4})
	tag := "tag"
	s, _ := prefix.NewScheme(prefix.SchemeConfig{Keys: hostcache.KeyConfig{ExtraBackendTag: &tag}})
	toks := make([]uint32, 39)
	for i := range toks {
		toks[i] = uint32(i + 1)
	}
	pages, _ := h.AppendPages(nil, nil, toks)
	var keys hostmem.Keys
	s.AppendPageKeys(&keys, pages)
	if want := keys.Strings(); !reflect.DeepEqual(lines[1:], want) {
		t.Errorf("Python's keys\n%q\nwant\n%q", lines[1:], want)
	}
	// The last key (page 8's V) is missing: 8 full pages before it.
	if lines[0] != "8" {
		t.Errorf("Python counted %s pages, want 8", lines[0])
	}
}

// TestServeTwins: with -twins apart a client answers the combining twins
// with no results and runs the rest; with -twins only it runs the twins
// alone, on a store with combining on.
func TestServeTwins(t *testing.T) {
	args := clusterArgs(t)
	var list bytes.Buffer
	if err := run([]string{"-list", "-quick", "-duration", "10ms", "-warmup", "1ms", "-scenarios", "write_perf"}, &list, &list); err != nil {
		t.Fatal(err)
	}
	planPath := filepath.Join(t.TempDir(), "plan.jsonl")
	if err := os.WriteFile(planPath, list.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var twin string
	for _, line := range strings.Split(list.String(), "\n")[1:] {
		var c Case
		if json.Unmarshal([]byte(line), &c) == nil && c.Combining {
			twin = c.Name
			break
		}
	}
	if twin == "" {
		t.Fatalf("the quick plan has no twin:\n%s", list.String())
	}
	off := strings.TrimSuffix(twin, benchplan.CombiningSuffix)
	for _, tc := range []struct {
		twins             string
		offRuns, twinRuns bool
	}{{twinsApart, true, false}, {twinsOnly, false, true}} {
		t.Run(tc.twins, func(t *testing.T) {
			old := stdin
			stdin = strings.NewReader(off + "\n" + twin + "\nquit\n")
			defer func() { stdin = old }()
			var out, errb bytes.Buffer
			if err := run(append(args, "-serve", "-own-segment", "-plan", planPath, "-twins", tc.twins), &out, &errb); err != nil {
				t.Fatalf("serve: %v\n%s", err, errb.String())
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(lines) != 3 {
				t.Fatalf("want a header and 2 replies, got:\n%s", out.String())
			}
			for i, want := range []bool{tc.offRuns, tc.twinRuns} {
				var rep benchplan.ServeReply
				if err := json.Unmarshal([]byte(lines[i+1]), &rep); err != nil || rep.Error != "" {
					t.Fatalf("reply %d: %s (%v)", i+1, lines[i+1], err)
				}
				if got := len(rep.Results) > 0; got != want {
					t.Errorf("reply %d: results %v, want results: %v", i+1, rep.Results, want)
				}
			}
		})
	}
	// Only the twins' process opens its store with combining on.
	for mode, want := range map[string]mooncake.CombiningMode{twinsHere: mooncake.CombiningOff, twinsApart: mooncake.CombiningOff,
		twinsOnly: mooncake.CombiningOn} {
		o, err := parseFlags(append(args, "-plan", planPath, "-twins", mode), io.Discard)
		if err != nil || o.cfg.Combining != want {
			t.Errorf("-twins %s: combining %v (%v), want %v", mode, o.cfg.Combining, err, want)
		}
	}
	if _, err := parseFlags(append(args, "-plan", planPath, "-twins", "elsewhere"), io.Discard); err == nil || !strings.Contains(err.Error(), "-twins") {
		t.Errorf("-twins elsewhere: %v", err)
	}
}
