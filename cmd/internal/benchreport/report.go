package benchreport

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/mooncake-go/mooncake-go/cmd/internal/benchplan"
)

// Meta is what the report says about the runs besides the numbers.
type Meta struct {
	Started       string   `json:"started"` // the first run's start, UTC
	Ended         string   `json:"ended"`   // the last run's start
	Runs          int      `json:"runs"`    // runs of every case per client
	DriveRounds   int      `json:"drive_rounds,omitempty"`
	DriveRepeat   int      `json:"drive_repeat,omitempty"`
	GoEngine      string   `json:"go_engine"`
	GoVersion     string   `json:"go_version"`
	PythonEngine  string   `json:"python_engine"`
	PythonVersion string   `json:"python_version"`
	Host          Host     `json:"host"`
	Cluster       *Cluster `json:"cluster,omitempty"`
	Command       string   `json:"command,omitempty"`
	// Noise is the A/A check's rows by case name (docs/benchmarks-aa.json),
	// shown beside the three views' ratios; not part of the summary.
	Noise map[string]Row `json:"-"`
}

// Host is the machine of the Go runs.
type Host struct {
	CPU      string `json:"cpu,omitempty"`
	CPUs     int    `json:"cpus,omitempty"`
	MemBytes int64  `json:"mem_bytes,omitempty"`
	OS       string `json:"os,omitempty"`
	Arch     string `json:"arch,omitempty"`
}

// Cluster is the setting of the Go runs.
type Cluster struct {
	Master        string  `json:"master"`
	Protocol      string  `json:"protocol"`
	Segment       float64 `json:"segment"`
	LocalBuffer   float64 `json:"local_buffer"`
	DurationS     float64 `json:"duration_s"`
	WarmupS       float64 `json:"warmup_s"`
	THP           *bool   `json:"thp,omitempty"`
	GlibcTunables string  `json:"glibc_tunables"`
	MemcpyRef     string  `json:"memcpy_ref,omitempty"`
}

// MetaFromRuns describes the runs; command is the command line that made
// them, quoted in the report.
func MetaFromRuns(goRuns, pyRuns []benchplan.Run, command string) Meta {
	m := Meta{Runs: min(len(goRuns), len(pyRuns)), Command: command}
	if len(goRuns) == 0 || len(pyRuns) == 0 {
		return m
	}
	g := goRuns[0]
	m.GoEngine, m.GoVersion = g.Engine, g.Version
	m.PythonEngine, m.PythonVersion = pyRuns[0].Engine, pyRuns[0].Version
	str := func(v any) string { s, _ := v.(string); return s }
	m.Host = Host{CPU: str(g.Host["cpu"]), CPUs: int(toF(g.Host["cpus"])), MemBytes: int64(toF(g.Host["mem_bytes"])),
		OS: str(g.Host["os"]), Arch: str(g.Host["arch"])}
	if p := g.Params; p != nil {
		c := &Cluster{Master: fmt.Sprint(p["master"]), Protocol: fmt.Sprint(p["protocol"]), Segment: toF(p["segment"]),
			LocalBuffer: toF(p["local_buffer"]), DurationS: toF(p["duration_s"]), WarmupS: toF(p["warmup_s"]),
			GlibcTunables: str(p["glibc_tunables"]), MemcpyRef: str(p["memcpy_ref"])}
		if thp, ok := p["thp"].(bool); ok {
			c.THP = &thp
		}
		m.Cluster = c
		if d, ok := p["drive"].(map[string]any); ok {
			m.DriveRounds, m.DriveRepeat = int(toF(d["rounds"])), int(toF(d["repeat"]))
		}
	}
	for _, r := range append(append([]benchplan.Run{}, goRuns...), pyRuns...) {
		if m.Started == "" || r.Started < m.Started {
			m.Started = r.Started
		}
		if r.Started > m.Ended {
			m.Ended = r.Started
		}
	}
	return m
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

// Num formats with three significant digits and a k/M suffix.
func Num(v float64) string {
	switch {
	case v >= 10e6:
		return fmt.Sprintf("%.0fM", v/1e6)
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 10e3:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v >= 1e3:
		return fmt.Sprintf("%.2fk", v/1e3)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func fmtRatio(v float64) string { return fmt.Sprintf("%.2f×", v) }

// Markdown is the report's table section: how the runs were made, one row
// per case, the HiCache breakdown, and the targets missed.
func Markdown(rows []Row, m Meta) string {
	var b strings.Builder
	how := fmt.Sprintf("%d runs of every case per client, alternating Go, Python, Go, Python, …", m.Runs)
	if m.DriveRounds > 0 {
		how = fmt.Sprintf("%d runs of every case per client: %d rounds of fresh Go and Python client processes (the one started first alternates), "+
			"%d passes per round alternating Go, Python, Go, Python, …", m.Runs, m.DriveRounds, m.DriveRepeat)
	}
	fmt.Fprintf(&b, "Measured %s with %s. Keys/s, GB/s and latencies are medians over the runs. Go/Python is the geometric mean of the paired per-run ratios "+
		"(Go's run i against Python's run i, measured seconds apart); \"runs range\" is their smallest and largest.\n\n",
		m.Started, how)
	fmt.Fprintf(&b, "- Go: %s engine, %s\n- Python: %s\n", m.GoEngine, m.GoVersion, m.PythonVersion)
	if h := m.Host; h.CPU != "" {
		fmt.Fprintf(&b, "- Machine: %s, %d CPUs, %.0f GiB RAM, %s/%s\n", h.CPU, h.CPUs, float64(h.MemBytes)/(1<<30), h.OS, h.Arch)
	}
	if c := m.Cluster; c != nil {
		fmt.Fprintf(&b, "- Cluster: %s, protocol %s, segment %.0f MiB per client, local buffer %.0f MiB; %.1f s measured per time-based case after %.1f s warm-up\n",
			c.Master, c.Protocol, c.Segment/(1<<20), c.LocalBuffer/(1<<20), c.DurationS, c.WarmupS)
		if c.THP != nil {
			fmt.Fprintf(&b, "- Memory: transparent huge pages for registered memory and the memcpy reference: %v; GLIBC_TUNABLES=%q (upstream's segment)\n",
				*c.THP, c.GlibcTunables)
		}
		if c.MemcpyRef != "" {
			fmt.Fprintf(&b, "- The memcpy reference of large-page cases: %s (Go side)\n", c.MemcpyRef)
		}
	}
	if m.Command != "" {
		fmt.Fprintf(&b, "- Command: `%s`\n", m.Command)
	}
	b.WriteString("\n")
	v, missed := views(rows, m.Noise)
	b.WriteString(v)
	if v != "" {
		b.WriteString("### Every case\n")
	}
	b.WriteString("\n| case | Go keys/s | Python keys/s | Go/Python | runs range | Go GB/s | Python GB/s | Go p99 µs | Python p99 µs | target | met |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|:-:|\n")
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
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s–%s | %.3f | %.3f | %s | %s | %s | %s |\n", r.Scenario, Num(r.GoOpsPerSec),
			Num(r.PythonOpsPerS), fmtRatio(r.Ratio), fmtRatio(r.RatioMin), fmtRatio(r.RatioMax), r.GoGBps, r.PythonGBps,
			Num(r.GoP99Us), Num(r.PythonP99Us), target, met)
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
			fmt.Fprintf(&b, "| `%s` | %s | %s µs (%.1f%%) | %s | %s µs (%.1f%%) |\n", r.Scenario, Num(r.GoMeanUs), Num(r.GoOutsideUs),
				100*r.GoOutsideUs/r.GoMeanUs, Num(r.PythonMeanUs), Num(r.PythonOutsideUs), 100*r.PythonOutsideUs/r.PythonMeanUs)
		}
		b.WriteString("\n")
	}
	b.WriteString(placement(rows))
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

// TCPShare is the loopback bytes per byte moved from which a case's
// objects went over TCP rather than by memcpy.
const TCPShare = 0.5

// LoopbackShare is res's loopback bytes per byte moved (0: not measured).
func LoopbackShare(res benchplan.Result) float64 {
	if res.LoopbackBytesPerKey <= 0 || res.Bytes <= 0 {
		return 0
	}
	return res.LoopbackBytesPerKey * float64(res.Keys) / float64(res.Bytes)
}

// PlacementNote is what a drive prints beside a Go result whose objects
// were not all in the client's own segment or moved over TCP ("" if none).
func PlacementNote(res benchplan.Result) string {
	var n []string
	if res.OffSegmentKeys > 0 {
		n = append(n, fmt.Sprintf("%d of %d objects outside its segment", res.OffSegmentKeys, res.PlacedKeys))
	}
	if sh := LoopbackShare(res); sh >= TCPShare {
		n = append(n, fmt.Sprintf("loopback %.2f B per B moved", sh))
	}
	if len(n) == 0 {
		return ""
	}
	return "  [go: " + strings.Join(n, ", ") + "]"
}

// placement is the report's lines on where the Go client's objects were:
// every client puts its objects in its own segment, so that a case
// measures memcpy transfers. An object upstream placed elsewhere (the
// segment could not hold it) moves over TCP, and so does every batch write
// with one such object in it; the cases where either showed are named.
func placement(rows []Row) string {
	var placed, off int
	var where, tcp []string
	for _, r := range rows {
		placed += r.GoPlacedKeys
		off += r.GoOffSegmentKeys
		if r.GoOffSegmentKeys > 0 {
			where = append(where, fmt.Sprintf("`%s` %d of %d", r.Scenario, r.GoOffSegmentKeys, r.GoPlacedKeys))
		}
		if r.GoLoopbackShare >= TCPShare {
			tcp = append(tcp, fmt.Sprintf("`%s` %.2f", r.Scenario, r.GoLoopbackShare))
		}
	}
	var b strings.Builder
	switch {
	case placed == 0:
	case off == 0:
		fmt.Fprintf(&b, "Placement: of %d objects looked up after the Go client's write and read cases, every one was in the client's own segment.\n\n", placed)
	default:
		fmt.Fprintf(&b, "Placement: of %d objects looked up after the Go client's write and read cases, %d were outside the client's own segment "+
			"(moved over the network, not by memcpy): %s.\n\n", placed, off, strings.Join(where, ", "))
	}
	if len(tcp) > 0 {
		fmt.Fprintf(&b, "Loopback traffic of %.1f bytes or more per byte moved during the Go client's window (objects over TCP, not memcpy): %s.\n\n",
			TCPShare, strings.Join(tcp, ", "))
	}
	return b.String()
}

// AATable is the A/A check's table: client A and client B are the same Go
// binary, so every ratio away from 1 is the machine's noise (and the
// placement of each client's memory), not a difference between clients.
func AATable(rows []Row) string {
	var b strings.Builder
	b.WriteString("| case | A keys/s | B keys/s | A/B | runs range | A/B CPU per key | A/B p50 |\n|---|---:|---:|---:|---|---:|---:|\n")
	var logSum float64
	var n int
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s–%s | %s | %s |\n", r.Scenario, Num(r.GoOpsPerSec), Num(r.PythonOpsPerS),
			fmtRatio(r.Ratio), fmtRatio(r.RatioMin), fmtRatio(r.RatioMax), fmtRatio(r.CPURatio), fmtRatio(r.P50Ratio))
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

// The markers of the generated section in a Markdown file.
const (
	MarkBegin = "<!-- mcbench:begin -->"
	MarkEnd   = "<!-- mcbench:end -->"
)

// ReplaceSection puts text between the markers of the Markdown file. The
// section carries no time of its own, so the same runs give the same file.
func ReplaceSection(path, text string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(data)
	i, j := strings.Index(s, MarkBegin), strings.Index(s, MarkEnd)
	if i < 0 || j < i {
		return fmt.Errorf("%s: no %s ... %s section", path, MarkBegin, MarkEnd)
	}
	out := s[:i+len(MarkBegin)] + "\n<!-- generated by mcbench compare; do not edit by hand -->\n\n" + text + "\n" + s[j:]
	return os.WriteFile(path, []byte(out), 0o644)
}
