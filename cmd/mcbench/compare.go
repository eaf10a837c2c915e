package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// mcbench compare: the side-by-side report of `make bench-compare`.
//
// It reads the JSON of several Go runs and several Python runs of the same
// plan (rounds, run alternately against one cluster), takes per case the
// median over the rounds of keys/s, GB/s and the latency percentiles, and
// writes the Go/Python ratio per case, the targets of issue 5 and whether
// they are met: a table on stdout, docs/benchmarks.json (-out), a PNG
// chart (-png) and the table section of docs/benchmarks.md (-md, between
// the mcbench markers).

// Row is one line of docs/benchmarks.json.
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
	// apart in the same round). A slowdown that hits whichever client started
	// first cancels out of it when rounds alternate the start order.
	Ratio          float64 `json:"ratio"`
	RatioOfMedians float64 `json:"ratio_of_medians"` // go_ops_per_s / python_ops_per_s
	RatioMin       float64 `json:"ratio_min"`        // the smallest and largest paired per-run ratio
	RatioMax       float64 `json:"ratio_max"`
	Target         float64 `json:"target,omitempty"` // required ratio (0: reference row, no target)
	Met            *bool   `json:"met,omitempty"`
	MemcpyFraction float64 `json:"go_memcpy_fraction,omitempty"` // large pages: go_gbps / a memcpy of the same bytes (median of per-round ratios)
	MemcpyTarget   float64 `json:"memcpy_target,omitempty"`
	MemcpyMet      *bool   `json:"memcpy_met,omitempty"`
	Rounds         int     `json:"rounds"`
	// HiCache cases: mean time per request outside the store client's
	// calls (median over rounds) and the mean request time.
	GoOutsideUs     float64 `json:"go_outside_us,omitempty"`
	PythonOutsideUs float64 `json:"python_outside_us,omitempty"`
	GoMeanUs        float64 `json:"go_mean_us"`
	PythonMeanUs    float64 `json:"python_mean_us"`
	Case            Case    `json:"case"`
}

type compareOpts struct {
	goFiles, pyFiles []string
	out, png, md     string
	command          string
	aa               bool
}

func runCompare(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("mcbench compare", flag.ContinueOnError)
	var gofl, pyfl string
	o := compareOpts{}
	fs.StringVar(&gofl, "go", "", "Go run JSON files (comma-separated, globs allowed), one per round")
	fs.StringVar(&pyfl, "python", "", "Python run JSON files (comma-separated, globs allowed), one per round")
	fs.StringVar(&o.out, "out", "", "write the rows as JSON here (docs/benchmarks.json)")
	fs.StringVar(&o.png, "png", "", "write the chart here (docs/benchmarks.png)")
	fs.StringVar(&o.md, "md", "", "replace the table section of this Markdown file (between <!-- mcbench:begin --> and <!-- mcbench:end -->)")
	fs.StringVar(&o.command, "command", "", "the command that produced the runs, quoted in the report")
	fs.BoolVar(&o.aa, "aa", false, "A/A check: the -python files are Go runs too (mcbench drive -python <this binary>); "+
		"prints each case's paired ratio between two identical clients, the noise floor of a Go/Python ratio on this machine")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: mcbench compare -go 'out/go-*.json' -python 'out/py-*.json' [-out F] [-png F] [-md F]\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if o.goFiles, err = expand(gofl); err != nil {
		return err
	}
	if o.pyFiles, err = expand(pyfl); err != nil {
		return err
	}
	if len(o.goFiles) == 0 || len(o.pyFiles) == 0 {
		return errors.New("compare needs -go and -python run files")
	}
	goRuns, err := loadRuns(o.goFiles, "go")
	if err != nil {
		return err
	}
	second := "python"
	if o.aa {
		second = "go"
	}
	pyRuns, err := loadRuns(o.pyFiles, second)
	if err != nil {
		return err
	}
	rows, err := compareRuns(goRuns, pyRuns)
	if err != nil {
		return err
	}
	if o.aa {
		if o.out != "" || o.png != "" || o.md != "" {
			return errors.New("-aa prints its table only (no -out, -png or -md)")
		}
		fmt.Fprint(stdout, aaTable(rows))
		return nil
	}
	meta := reportMeta(goRuns, pyRuns, o.command)
	table := markdownTable(rows, meta)
	fmt.Fprint(stdout, table)
	if o.out != "" {
		data, err := json.MarshalIndent(rows, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.out, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	if o.png != "" {
		if err := writeChart(o.png, rows, meta); err != nil {
			return err
		}
	}
	if o.md != "" {
		if err := replaceSection(o.md, table); err != nil {
			return err
		}
	}
	return nil
}

func expand(list string) ([]string, error) {
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

func loadRuns(files []string, client string) ([]Run, error) {
	var runs []Run
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var r Run
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if r.Schema != schema {
			return nil, fmt.Errorf("%s: schema %q, want %q", f, r.Schema, schema)
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

// Targets (issue 5), as Go/Python keys/s ratios.
const (
	targetMultiSmall = 1.3 // 128 keys × 61 buffers × 1152 B
	targetZcopy4K    = 1.1 // 1024 × 4 KiB zero-copy batches
	targetOther      = 1.0
	targetMemcpy     = 0.9 // large pages: Go GB/s / Go memcpy GB/s
)

// targetFor returns the ratio target of a case (0 for reference rows) and
// the memcpy shape a large-page case is held against ("" if none).
func targetFor(c Case) (float64, string) {
	if c.Scenario == scMemcpy {
		return 0, ""
	}
	if c.Buffers == 61 && c.BufSize == 1152 && c.Batch == 128 && c.Scenario != scHiExists {
		return targetMultiSmall, "" // exists moves no buffers: the 1.0 target
	}
	if c.API == apiZcopy && c.ValueSize == 4096 && c.Batch == 1024 {
		return targetZcopy4K, ""
	}
	if c.Buffers == 61 && c.BufSize == 73728 && c.Batch == 16 && c.Scenario != scHiExists {
		return targetOther, fmt.Sprintf("%s/%s", scMemcpy, Shape{c.Batch, c.Buffers, c.BufSize})
	}
	return targetOther, ""
}

func compareRuns(goRuns, pyRuns []Run) ([]Row, error) {
	type series struct {
		c            Case
		ops, gbps    []float64
		p50, p99, p9 []float64
		memcpyFrac   []float64 // per round: gbps / the case's own memcpy reference
		outside      []float64
		mean         []float64
	}
	collect := func(runs []Run) (map[string]*series, []string, error) {
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
				if res.OutsideUs > 0 {
					s.outside = append(s.outside, res.OutsideUs)
				}
				if res.MemcpyGBps > 0 {
					s.memcpyFrac = append(s.memcpyFrac, res.GBps/res.MemcpyGBps)
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
		if p == nil {
			return nil, fmt.Errorf("case %s is in the Go runs but not in the Python runs", name)
		}
		if g.c != p.c {
			return nil, fmt.Errorf("case %s: the Go and Python runs used different parameters (%+v vs %+v)", name, g.c, p.c)
		}
		r := Row{Scenario: name, Case: g.c, Rounds: min(len(g.ops), len(p.ops)),
			GoOpsPerSec: median(g.ops), PythonOpsPerS: median(p.ops), GoGBps: median(g.gbps), PythonGBps: median(p.gbps),
			GoP50Us: median(g.p50), PythonP50Us: median(p.p50), GoP99Us: median(g.p99), PythonP99Us: median(p.p99),
			GoP999Us: median(g.p9), PythonP999Us: median(p.p9),
			GoOutsideUs: median(g.outside), PythonOutsideUs: median(p.outside), GoMeanUs: median(g.mean), PythonMeanUs: median(p.mean)}
		if r.PythonOpsPerS > 0 {
			r.RatioOfMedians = r.GoOpsPerSec / r.PythonOpsPerS
		}
		var logSum float64
		var paired int
		for i := 0; i < r.Rounds; i++ {
			if p.ops[i] <= 0 || g.ops[i] <= 0 {
				continue
			}
			q := g.ops[i] / p.ops[i]
			logSum += math.Log(q)
			paired++
			if r.RatioMin == 0 || q < r.RatioMin {
				r.RatioMin = q
			}
			r.RatioMax = max(r.RatioMax, q)
		}
		if paired > 0 {
			r.Ratio = math.Exp(logSum / float64(paired))
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
		if r.Case.Scenario == scMemcpy {
			memcpy[r.Scenario] = r.GoGBps
		}
	}
	for i := range rows {
		r := &rows[i]
		t, ref := targetFor(r.Case)
		if t > 0 {
			r.Target = t
			met := r.Ratio >= t
			r.Met = &met
		}
		// The memcpy fraction: against the case's own reference, timed
		// between its requests (paired, round by round); else against the
		// memcpy case of the same shape.
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

type meta struct {
	rounds         int
	goEng, pyEng   string
	goVer, pyVer   string
	host           map[string]any
	started, ended string
	command        string
	params         map[string]any
}

func reportMeta(goRuns, pyRuns []Run, command string) meta {
	m := meta{rounds: min(len(goRuns), len(pyRuns)), command: command}
	m.goEng, m.goVer, m.host, m.params = goRuns[0].Engine, goRuns[0].Version, goRuns[0].Host, goRuns[0].Params
	m.pyEng, m.pyVer = pyRuns[0].Engine, pyRuns[0].Version
	all := append(append([]Run{}, goRuns...), pyRuns...)
	for _, r := range all {
		if m.started == "" || r.Started < m.started {
			m.started = r.Started
		}
		if r.Started > m.ended {
			m.ended = r.Started
		}
	}
	return m
}

func fmtRatio(v float64) string { return fmt.Sprintf("%.2f×", v) }

func markdownTable(rows []Row, m meta) string {
	var b strings.Builder
	how := fmt.Sprintf("%d runs of every case per client, alternating Go, Python, Go, Python, …", m.rounds)
	if d, ok := m.params["drive"].(map[string]any); ok {
		how = fmt.Sprintf("%d runs of every case per client: %v rounds of fresh Go and Python client processes (the one started first alternates), "+
			"%v passes per round alternating Go, Python, Go, Python, …", m.rounds, d["rounds"], d["repeat"])
	}
	fmt.Fprintf(&b, "Measured %s with %s. Keys/s, GB/s and latencies are medians over the runs. Go/Python is the geometric mean of the paired per-run ratios "+
		"(Go's run i against Python's run i, measured seconds apart); \"runs range\" is their smallest and largest.\n\n",
		m.started, how)
	fmt.Fprintf(&b, "- Go: %s engine, %s\n- Python: %s\n", m.goEng, m.goVer, m.pyVer)
	if cpu, ok := m.host["cpu"].(string); ok {
		fmt.Fprintf(&b, "- Machine: %s, %v CPUs, %.0f GiB RAM, %v/%v\n", cpu, m.host["cpus"], toF(m.host["mem_bytes"])/(1<<30), m.host["os"], m.host["arch"])
	}
	if m.params != nil {
		fmt.Fprintf(&b, "- Cluster: %v, protocol %v, segment %.0f MiB per client, local buffer %.0f MiB; %.1f s measured per time-based case after %.1f s warm-up\n",
			m.params["master"], m.params["protocol"], toF(m.params["segment"])/(1<<20), toF(m.params["local_buffer"])/(1<<20),
			toF(m.params["duration_s"]), toF(m.params["warmup_s"]))
		if thp, ok := m.params["thp"].(bool); ok {
			fmt.Fprintf(&b, "- Memory: transparent huge pages for registered memory and the memcpy reference: %v; GLIBC_TUNABLES=%q (upstream's segment)\n",
				thp, m.params["glibc_tunables"])
		}
		if impl, ok := m.params["memcpy_ref"].(string); ok {
			fmt.Fprintf(&b, "- The memcpy reference of large-page cases: %s (Go side)\n", impl)
		}
	}
	if m.command != "" {
		fmt.Fprintf(&b, "- Command: `%s`\n", m.command)
	}
	b.WriteString("\n| case | Go keys/s | Python keys/s | Go/Python | runs range | Go GB/s | Python GB/s | Go p99 µs | Python p99 µs | target | met |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|:-:|\n")
	var missed []string
	for _, r := range rows {
		target, met := "reference", ""
		if r.Target > 0 {
			target = "≥ " + fmtRatio(r.Target)
			met = "yes"
			if !*r.Met {
				met = "**no**"
				missed = append(missed, fmt.Sprintf("`%s`: %s < %s", r.Scenario, fmtRatio(r.Ratio), fmtRatio(r.Target)))
			}
		}
		if r.MemcpyMet != nil {
			target += fmt.Sprintf("; ≥ %.0f%% memcpy (%.0f%%)", r.MemcpyTarget*100, r.MemcpyFraction*100)
			if !*r.MemcpyMet {
				met = "**no**"
				missed = append(missed, fmt.Sprintf("`%s`: %.0f%% of memcpy < %.0f%%", r.Scenario, r.MemcpyFraction*100, r.MemcpyTarget*100))
			}
		} else if r.MemcpyFraction > 0 {
			target += fmt.Sprintf(" (memcpy %.0f%%)", r.MemcpyFraction*100)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s–%s | %.3f | %.3f | %s | %s | %s | %s |\n", r.Scenario, num(r.GoOpsPerSec),
			num(r.PythonOpsPerS), fmtRatio(r.Ratio), fmtRatio(r.RatioMin), fmtRatio(r.RatioMax), r.GoGBps, r.PythonGBps,
			num(r.GoP99Us), num(r.PythonP99Us), target, met)
	}
	b.WriteString("\n")
	var hi []Row
	for _, r := range rows {
		if r.GoOutsideUs > 0 && r.PythonOutsideUs > 0 {
			hi = append(hi, r)
		}
	}
	if len(hi) > 0 {
		b.WriteString("HiCache requests: mean time per request, and the part of it spent outside the store client's calls " +
			"(page meta, keys, lists, result checks; Python's list conversion inside the pybind call is not in it):\n\n")
		b.WriteString("| case | Go µs/request | Go outside | Python µs/request | Python outside |\n|---|--:|--:|--:|--:|\n")
		for _, r := range hi {
			fmt.Fprintf(&b, "| `%s` | %s | %s µs (%.1f%%) | %s | %s µs (%.1f%%) |\n", r.Scenario, num(r.GoMeanUs), num(r.GoOutsideUs),
				100*r.GoOutsideUs/r.GoMeanUs, num(r.PythonMeanUs), num(r.PythonOutsideUs), 100*r.PythonOutsideUs/r.PythonMeanUs)
		}
		b.WriteString("\n")
	}
	if len(missed) == 0 {
		b.WriteString("Every target is met.\n")
	} else {
		fmt.Fprintf(&b, "Targets missed (%d):\n\n", len(missed))
		for _, s := range missed {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	return b.String()
}

func toF(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case json.Number:
		f, _ := x.Float64()
		return f
	}
	return 0
}

const (
	mdBegin = "<!-- mcbench:begin -->"
	mdEnd   = "<!-- mcbench:end -->"
)

// replaceSection puts text between the markers of the Markdown file.
func replaceSection(path, text string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(data)
	i, j := strings.Index(s, mdBegin), strings.Index(s, mdEnd)
	if i < 0 || j < i {
		return fmt.Errorf("%s: no %s ... %s section", path, mdBegin, mdEnd)
	}
	out := s[:i+len(mdBegin)] + "\n<!-- generated by mcbench compare on " + time.Now().UTC().Format(time.RFC3339) +
		"; do not edit by hand -->\n\n" + text + "\n" + s[j:]
	return os.WriteFile(path, []byte(out), 0o644)
}

// aaTable is the A/A check's table: client A and client B are the same Go
// binary, so every ratio away from 1 is the machine's noise (and the
// placement of each client's memory), not a difference between clients.
func aaTable(rows []Row) string {
	var b strings.Builder
	b.WriteString("| case | A keys/s | B keys/s | A/B | runs range |\n|---|---:|---:|---:|---|\n")
	var logSum float64
	var n int
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s–%s |\n", r.Scenario, num(r.GoOpsPerSec), num(r.PythonOpsPerS),
			fmtRatio(r.Ratio), fmtRatio(r.RatioMin), fmtRatio(r.RatioMax))
		if r.Ratio > 0 {
			logSum += math.Abs(math.Log(r.Ratio))
			n++
		}
	}
	if n > 0 {
		fmt.Fprintf(&b, "\nMean distance of A/B from 1 over %d cases: %.1f%%.\n", n, (math.Exp(logSum/float64(n))-1)*100)
	}
	return b.String()
}
