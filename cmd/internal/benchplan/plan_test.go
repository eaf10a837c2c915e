package benchplan

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestDefaultPlan(t *testing.T) {
	plan, err := DefaultParams().Plan()
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
	// The committed report's 138 cases, and a combining twin of each of
	// the 8 concurrency cases at 1, 4, 16 and 64 callers.
	if len(plan) != 138+32 {
		t.Errorf("default plan has %d cases, want 138 and 32 twins", len(plan))
	}
	p := DefaultParams()
	p.Combining = false
	off, err := p.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if len(off) != 138 {
		t.Errorf("default plan without combining has %d cases, the committed report 138", len(off))
	}
}

// TestCombiningTwins: every concurrency case, with one caller and with
// several, is followed by its twin, which differs only in Combining and
// its name; no other case has one.
func TestCombiningTwins(t *testing.T) {
	plan, err := DefaultParams().Plan()
	if err != nil {
		t.Fatal(err)
	}
	twins := 0
	for i, c := range plan {
		if c.Combining {
			twins++
			if i == 0 || plan[i-1] != c.Off() || plan[i-1].Combining || c.Name != plan[i-1].Name+CombiningSuffix {
				t.Errorf("twin %s does not follow its case", c.Name)
			}
			if c.Off().Twin() != c {
				t.Errorf("%s: Off and Twin do not invert", c.Name)
			}
			continue
		}
		if c.Off() != c {
			t.Errorf("%s: Off of a case without combining changed it", c.Name)
		}
		hasTwin := i+1 < len(plan) && plan[i+1].Combining
		if hasTwin != ConcurrencyCase(c) {
			t.Errorf("%s: twin %v, concurrency case %v", c.Name, hasTwin, ConcurrencyCase(c))
		}
	}
	if twins != 32 {
		t.Errorf("%d twins, want 32", twins)
	}
	for _, name := range []string{"write_perf/plain/4KiB/x1/combining", "read_perf/zcopy/4KiB/x1/c64/combining",
		"hicache_set/mla_layer_first_p1/128pages/c64/combining", "read_perf/zcopy/4KiB/x1024/combining"} {
		if !slices.ContainsFunc(plan, func(c Case) bool { return c.Name == name && c.Combining }) {
			t.Errorf("no twin %s", name)
		}
	}
}

// TestConcurrencySweep: the concurrency cases run again at every caller
// count, after the single-caller ones, each caller with its share of the
// dataset; no other case does.
func TestConcurrencySweep(t *testing.T) {
	plan, err := DefaultParams().Plan()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Case{}
	for _, c := range plan {
		byName[c.Name] = c
	}
	for _, tc := range []struct {
		name    string
		callers int
		objects int
	}{
		{"write_perf/plain/4KiB/x1", 0, 16384},
		{"write_perf/plain/4KiB/x1/c4", 4, 4096},
		{"read_perf/zcopy/4KiB/x1/c64", 64, 256},
		{"read_perf/zcopy/4KiB/x1024/c16", 16, 2048},
		{"write_perf/zcopy/4KiB/x1024/c64", 64, 2048},
		{"hicache_get/mla_layer_first_p1/128pages/c16", 16, 256},
	} {
		c, ok := byName[tc.name]
		if !ok {
			t.Errorf("no case %s", tc.name)
			continue
		}
		if c.Callers != tc.callers || c.Objects != tc.objects || !c.Timed {
			t.Errorf("%s: callers %d objects %d timed %v, want %d, %d, true", tc.name, c.Callers, c.Objects, c.Timed, tc.callers, tc.objects)
		}
	}
	for _, name := range []string{"write_perf/plain/4KiB/x32/c4", "read_perf/plain/4KiB/x1024/c4", "hicache_get/mha_page_first_p1/128pages/c4",
		"multi_get/128x61x1152B/c4", "read_perf/zcopy/64KiB/x1/c4"} {
		if _, ok := byName[name]; ok {
			t.Errorf("%s is not a concurrency case", name)
		}
	}
	p := DefaultParams()
	p.Combining = false
	if off, _ := p.Plan(); off[114].Name != "write_perf/plain/4KiB/x1/c4" {
		t.Errorf("the sweep starts with %s", off[114].Name)
	}
	p = DefaultParams()
	p.Callers = []int{1}
	if _, err := p.Plan(); err == nil {
		t.Errorf("caller count 1 accepted")
	}
}

func TestPlanRejects(t *testing.T) {
	for name, mod := range map[string]func(*Params){
		"scenario":   func(p *Params) { p.Scenarios = []string{"nope"} },
		"api":        func(p *Params) { p.APIs = []string{"multi"} },
		"size":       func(p *Params) { p.Sizes = []int{0} },
		"batch":      func(p *Params) { p.Batches = []int{-1} },
		"limits":     func(p *Params) { p.MaxObjects = 0 },
		"page size":  func(p *Params) { p.MLAPageSizes = []int{0} },
		"multishape": func(p *Params) { p.MultiShapes = []Shape{{1, 0, 1}} },
	} {
		p := QuickParams()
		mod(&p)
		if _, err := p.Plan(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"4096", 4096, true}, {"4k", 4096, true}, {"64KiB", 64 << 10, true}, {"1MiB", 1 << 20, true},
		{"2gb", 2 << 30, true}, {"1152B", 1152, true}, {"4q", 0, false}, {"-1", 0, false}, {"", 0, false},
	} {
		got, err := ParseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v", tc.in, got, err)
		}
	}
	for _, tc := range []struct {
		in   string
		want Shape
		ok   bool
	}{
		{"128x61x1152", Shape{128, 61, 1152}, true}, {"16X61X72KiB", Shape{16, 61, 73728}, true},
		{"1x2", Shape{}, false}, {"0x1x1", Shape{}, false}, {"1x1x0", Shape{}, false},
		// A product past 64 bits used to wrap to "size 0".
		{"4294967296x4294967296x1", Shape{}, false}, {"1048576x1048576x1048576", Shape{}, false},
		{"1x1x2000000gib", Shape{}, false},
	} {
		got, err := ParseShape(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseShape(%q) = %v, %v", tc.in, got, err)
		}
	}
	if got, err := ParseList(" 1, ,8", ParseCount); err != nil || !reflect.DeepEqual(got, []int{1, 8}) {
		t.Errorf("ParseList = %v, %v", got, err)
	}
	if _, err := ParseList("1,x", ParseCount); err == nil {
		t.Error("ParseList accepted x")
	}
	for n, want := range map[int]string{73728: "72KiB", 1152: "1152B", 1 << 20: "1MiB", 2 << 30: "2GiB", 0: "0B"} {
		if got := SizeName(n); got != want {
			t.Errorf("SizeName(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestPlanFile(t *testing.T) {
	plan, err := QuickParams().Plan()
	if err != nil {
		t.Fatal(err)
	}
	f := File{Params: QuickParams(), Cases: plan, Settings: Settings{DurationS: 0.1, WarmupS: 0.02, GenBytes: 64 << 20,
		RWMixRead: 70, Seed: 1, Segment: 256 << 20, LocalBuffer: 32 << 20, Populate: true, THP: true, MemcpyRef: true, Prefault: "auto"}}
	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(b.String(), "\n"); lines != len(plan)+1 {
		t.Errorf("%d lines for %d cases and a header", lines, len(plan))
	}
	got, err := ReadFile(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, f) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, f)
	}

	header := `{"schema":"mcbench-plan/1","params":{},"settings":{}}` + "\n"
	for name, in := range map[string]string{
		"empty":          "",
		"schema":         `{"schema":"mcbench/1","params":{},"settings":{}}` + "\n",
		"unknown header": `{"schema":"mcbench-plan/1","params":{},"settings":{"fast":true}}` + "\n",
		"unknown field":  header + `{"name":"a","colour":"red"}` + "\n",
		"no name":        header + `{"scenario":"fill"}` + "\n",
		"repeated name":  header + `{"name":"a"}` + "\n" + `{"name":"a"}` + "\n",
		"not json":       header + "fill/plain\n",
	} {
		if _, err := ReadFile(strings.NewReader(in)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
