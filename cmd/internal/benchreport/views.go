package benchreport

import (
	"fmt"
	"math"
	"strings"
)

// The three views the report leads with: many concurrent callers, client
// CPU per operation, and the C floor. Each row shows, beside its ratio, the
// same case's ratio in the A/A check (Go against itself, noise), when the
// A/A summary was given.

// views renders the three views and returns the targets they missed.
func views(rows []Row, noise map[string]Row) (string, []string) {
	var b strings.Builder
	var missed []string
	aa := func(name string, pick func(Row) float64) string {
		n, ok := noise[name]
		if !ok || pick(n) <= 0 {
			return "–"
		}
		return fmtRatio(pick(n))
	}
	spread := func(names []string, pick func(Row) float64) {
		var logSum, worst float64
		k := 0
		for _, name := range names {
			if n, ok := noise[name]; ok && pick(n) > 0 {
				d := math.Abs(math.Log(pick(n)))
				logSum += d
				worst = max(worst, d)
				k++
			}
		}
		if k == 0 {
			b.WriteString("A/A noise floor: no A/A summary given (make bench-aa writes docs/benchmarks-aa.json; run it before bench-compare).\n\n")
			return
		}
		fmt.Fprintf(&b, "A/A noise floor of this view (Go against itself, same cases): mean distance of A/B from 1 %.1f%%, largest %.1f%% (%d cases).\n\n",
			(math.Exp(logSum/float64(k))-1)*100, (math.Exp(worst)-1)*100, k)
	}
	met := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "**no**"
	}

	// 1. Concurrency, grouped by the single-caller case.
	var order []string
	group := map[string][]Row{}
	for _, r := range rows {
		if r.CallersTarget == 0 { // not a concurrency case (the summary has no Case)
			continue
		}
		base := r.Scenario
		if r.Callers > 1 {
			base = strings.TrimSuffix(base, fmt.Sprintf("/c%d", r.Callers))
		}
		if _, ok := group[base]; !ok {
			order = append(order, base)
		}
		group[base] = append(group[base], r)
	}
	if len(order) > 0 {
		b.WriteString("### 1. Many concurrent callers\n\n")
		b.WriteString("Callers are goroutines (Go) and threads (Python, and the C floor for the single calls) of one client process, each with its own buffers and keys, started and " +
			"stopped together; keys/s is over the measured window, p50/p99 per request. Go/C is of keys/s, paired run by run.\n\n")
		b.WriteString("| case | callers | Go keys/s | Python keys/s | C keys/s | Go/Python | A/A | Go/C | Python/C | Go p50 / p99 µs | Python p50 / p99 µs | target | met |\n")
		b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|:-:|\n")
		var names []string
		for _, base := range order {
			for _, r := range group[base] {
				names = append(names, r.Scenario)
				ok := r.Ratio >= r.CallersTarget
				if !ok {
					missed = append(missed, fmt.Sprintf("`%s` (%d callers): %s < %s", base, max(r.Callers, 1), fmtRatio(r.Ratio), fmtRatio(r.CallersTarget)))
				}
				cOps, goC, pyC := "–", "–", "–"
				if r.COpsPerSec > 0 {
					cOps, goC, pyC = Num(r.COpsPerSec), fmtRatio(r.GoOverCOps), fmtRatio(r.PythonOverCOps)
				}
				fmt.Fprintf(&b, "| `%s` | %d | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s / %s | ≥ %s | %s |\n", base, max(r.Callers, 1),
					Num(r.GoOpsPerSec), Num(r.PythonOpsPerS), cOps, fmtRatio(r.Ratio), aa(r.Scenario, func(n Row) float64 { return n.Ratio }),
					goC, pyC, Num(r.GoP50Us), Num(r.GoP99Us), Num(r.PythonP50Us), Num(r.PythonP99Us), fmtRatio(r.CallersTarget), met(ok))
			}
		}
		b.WriteString("\n")
		spread(names, func(n Row) float64 { return n.Ratio })
	}

	// 2. CPU per operation, every case.
	cpuRows := filter(rows, func(r Row) bool { return r.GoCPUUsPerOp > 0 && r.PythonCPUUsPerOp > 0 })
	if len(cpuRows) > 0 {
		b.WriteString("### 2. Client CPU per operation\n\n")
		b.WriteString("Each client's process CPU time (user + system, all threads: upstream's C++ client runs inside both) over the measured " +
			"window, per key moved; medians over the runs, and the Go/Python ratio paired run by run.\n\n")
		b.WriteString("| case | Go CPU µs/key | Python CPU µs/key | Go/Python | A/A | target | met |\n|---|--:|--:|--:|--:|--:|:-:|\n")
		var names []string
		for _, r := range cpuRows {
			names = append(names, r.Scenario)
			ok := r.CPURatio <= r.CPUTarget
			if !ok {
				missed = append(missed, fmt.Sprintf("`%s`: CPU per key %s > %s of Python's", r.Scenario, fmtRatio(r.CPURatio), fmtRatio(r.CPUTarget)))
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | ≤ %s | %s |\n", r.Scenario, Num(r.GoCPUUsPerOp), Num(r.PythonCPUUsPerOp),
				fmtRatio(r.CPURatio), aa(r.Scenario, func(n Row) float64 { return n.CPURatio }), fmtRatio(r.CPUTarget), met(ok))
		}
		b.WriteString("\n")
		spread(names, func(n Row) float64 { return n.CPURatio })
	}

	// 3. The C floor, one caller (view 1 has it with several).
	floor := filter(rows, func(r Row) bool { return r.CP50Us > 0 && r.Callers <= 1 })
	if len(floor) > 0 {
		b.WriteString("### 3. The C floor\n\n")
		b.WriteString("`mcbench_c` (cgo/bench/mcbench_c.cc) makes the same calls through the binding's C ABI (`mcgo/store.h`, " +
			"`libmcgo_native.so`) in a plain loop, in the same drive, right after Go and Python on a case, or right before them in every other sample. Ratios are of p50 latencies, paired run by run.\n\n")
		b.WriteString("| case | C p50 µs | Go p50 µs | Python p50 µs | Go/C | Python/C | A/A p50 | C CPU µs/key | target | met |\n")
		b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|:-:|\n")
		var names []string
		for _, r := range floor {
			names = append(names, r.Scenario)
			target, ok := "–", ""
			if r.FloorTarget > 0 {
				target = "≤ " + fmtRatio(r.FloorTarget)
				ok = met(r.GoOverC <= r.FloorTarget)
				if r.GoOverC > r.FloorTarget {
					missed = append(missed, fmt.Sprintf("`%s`: Go p50 %s of the C floor > %s", r.Scenario, fmtRatio(r.GoOverC), fmtRatio(r.FloorTarget)))
				}
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Scenario, Num(r.CP50Us), Num(r.GoP50Us), Num(r.PythonP50Us),
				fmtRatio(r.GoOverC), fmtRatio(r.PythonOverC), aa(r.Scenario, func(n Row) float64 { return n.P50Ratio }), Num(r.CCPUUsPerOp), target, ok)
		}
		b.WriteString("\n")
		spread(names, func(n Row) float64 { return n.P50Ratio })
	}
	return b.String(), missed
}

// filter returns the rows that keep accepts, in order.
func filter(rows []Row, keep func(Row) bool) []Row {
	var out []Row
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}
