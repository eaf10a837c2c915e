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

	// 1. Concurrency, grouped by the single-caller case, each row followed
	// by its combining twin.
	var order []string
	group := map[string][]Row{}
	for _, r := range rows {
		if r.CallersTarget == 0 { // not a concurrency case (the summary has no Case)
			continue
		}
		base := r.Scenario
		if r.Combining {
			base = r.OffCase
		}
		if r.Callers > 1 {
			base = strings.TrimSuffix(base, fmt.Sprintf("/c%d", r.Callers))
		}
		if _, ok := group[base]; !ok {
			order = append(order, base)
		}
		group[base] = append(group[base], r)
	}
	if len(order) > 0 {
		var names []string
		for _, base := range order {
			for _, r := range group[base] {
				names = append(names, r.Scenario)
			}
		}
		// How far an A/A ratio of this view strays from 1, on average: the
		// least noise a twin alone is allowed against its off row.
		viewNoise := meanNoise(names, noise)
		b.WriteString("### 1. Many concurrent callers\n\n")
		b.WriteString("Callers are goroutines (Go) and threads (Python, and the C floor for the single calls) of one client process, each with its own buffers and keys, started and " +
			"stopped together; keys/s is over the measured window, p50/p99 per request. Go/C is of keys/s, paired run by run. " +
			"Each case runs with combining off, then on: the Go client with `Config.Combining` on (docs/combining.md), on a second store of its own. " +
			"Python's client and the C floor have no combining, so an on row's Python and C columns are their runs of the off row; " +
			"on/off is Go's keys/s with combining over without, paired run by run. CPU is Go's CPU per key over Python's (view 2).\n\n")
		b.WriteString("| case | callers | combining | Go keys/s | Python keys/s | C keys/s | Go/Python | A/A | Go/C | Python/C | on/off | Go p50 / p99 µs | Python p50 / p99 µs | CPU Go/Python | target | met |\n")
		b.WriteString("|---|--:|:-:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|:-:|\n")
		var twins []Row
		for _, base := range order {
			for _, r := range group[base] {
				callers := max(r.Callers, 1)
				cOps, goC, pyC := "–", "–", "–"
				if r.COpsPerSec > 0 {
					cOps, goC, pyC = Num(r.COpsPerSec), fmtRatio(r.GoOverCOps), fmtRatio(r.PythonOverCOps)
				}
				mode, onOff := "off", "–"
				if r.Combining {
					mode = "on"
					twins = append(twins, r)
					if r.OnOff > 0 {
						onOff = fmtRatio(r.OnOff)
					}
				}
				target, verdict, misses := callersVerdict(r, noise, viewNoise)
				for _, m := range misses {
					missed = append(missed, fmt.Sprintf("`%s` (%s, combining %s): %s", base, callersName(callers), mode, m))
				}
				fmt.Fprintf(&b, "| `%s` | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s / %s | %s | %s | %s |\n", base, callers, mode,
					Num(r.GoOpsPerSec), Num(r.PythonOpsPerS), cOps, fmtRatio(r.Ratio), aa(r.Scenario, func(n Row) float64 { return n.Ratio }),
					goC, pyC, onOff, Num(r.GoP50Us), Num(r.GoP99Us), Num(r.PythonP50Us), Num(r.PythonP99Us), fmtRatio(r.CPURatio), target, verdict)
			}
		}
		b.WriteString("\n")
		spread(names, func(n Row) float64 { return n.Ratio })
		b.WriteString(combiningTable(twins))
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
	floor := filter(rows, func(r Row) bool { return r.CP50Us > 0 && r.Callers <= 1 && !r.Combining })
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

// callersVerdict holds a row of view 1 against its targets: the text of the
// target cell and of the met cell, and what it missed (but the CPU target,
// which view 2 lists). An off row has its
// keys/s target; a combining twin also its p99 and CPU targets, and with
// one caller must stay within the A/A noise of its off row: on/off at
// least e^-d, where d is the largest of the off row's and the twin's own
// A/A distance from 1 (|ln A/B|) and the view's mean one (viewNoise).
// Without an A/A summary that last target is not judged, and says so.
func callersVerdict(r Row, noise map[string]Row, viewNoise float64) (target, met string, misses []string) {
	parts := []string{"≥ " + fmtRatio(r.CallersTarget)}
	if r.Ratio < r.CallersTarget {
		misses = append(misses, fmt.Sprintf("%s < %s", fmtRatio(r.Ratio), fmtRatio(r.CallersTarget)))
	}
	if r.P99Target > 0 {
		parts = append(parts, "p99 ≤ Python's")
		if r.PythonP99Us <= 0 || r.GoP99Us > r.P99Target*r.PythonP99Us {
			misses = append(misses, fmt.Sprintf("p99 %s µs > Python's %s µs", Num(r.GoP99Us), Num(r.PythonP99Us)))
		}
	}
	cpuMissed := false
	if r.CallersCPUTarget > 0 {
		// A miss is listed once, by view 2, which holds every case to it.
		parts = append(parts, "CPU ≤ "+fmtRatio(r.CallersCPUTarget))
		cpuMissed = r.CPURatio <= 0 || r.CPURatio > r.CallersCPUTarget
	}
	judged := true
	if r.AloneTarget {
		d, ok := viewNoise, viewNoise > 0
		for _, name := range []string{r.OffCase, r.Scenario} {
			if n, found := noise[name]; found && n.Ratio > 0 {
				d, ok = max(d, math.Abs(math.Log(n.Ratio))), true
			}
		}
		if !ok {
			parts = append(parts, "on/off within A/A (no A/A summary)")
			judged = false
		} else {
			bound := math.Exp(-d)
			parts = append(parts, "on/off ≥ "+fmtRatio(bound)+" (A/A)")
			if r.OnOff <= 0 || r.OnOff < bound {
				misses = append(misses, fmt.Sprintf("on/off %s < %s, beyond the A/A noise", fmtRatio(r.OnOff), fmtRatio(bound)))
			}
		}
	}
	switch {
	case len(misses) > 0 || cpuMissed:
		met = "**no**"
	case !judged:
		met = "yes, A/A not judged"
	default:
		met = "yes"
	}
	return strings.Join(parts, "; "), met, misses
}

// combiningTable is view 1's account of the twins' batches: per twin whose
// case makes single-key calls, over all its runs, the share of those calls
// that crossed into C in one batch with other callers' calls, the mean
// calls per batch crossing, and the crossings by number of calls.
func combiningTable(twins []Row) string {
	twins = filter(twins, func(r Row) bool { return r.GoSingleCalls > 0 })
	if len(twins) == 0 {
		return ""
	}
	buckets := 0
	for _, r := range twins {
		buckets = max(buckets, len(r.CombinedBatchSizes))
	}
	var b strings.Builder
	b.WriteString("Combining in the Go client (`Stats`: `Combined`, `CombinedBatches`, `CombinedBatchSizes` over the measured windows of all runs): " +
		"the share of the single-key calls that crossed into C in one batch with other callers' calls, the mean calls per batch crossing, " +
		"and the batch crossings by number of calls, in percent. Batch calls (1,024-key batches, HiCache requests) do not combine and are not listed.\n\n")
	b.WriteString("| case | callers | single calls | combined | mean batch |")
	for i := range buckets {
		b.WriteString(" " + bucketName(i, buckets) + " |")
	}
	b.WriteString("\n|---|--:|--:|--:|--:|" + strings.Repeat("--:|", buckets) + "\n")
	for _, r := range twins {
		base := r.OffCase
		if r.Callers > 1 {
			base = strings.TrimSuffix(base, fmt.Sprintf("/c%d", r.Callers))
		}
		mean := "–"
		if r.CombinedMeanBatch > 0 {
			mean = fmt.Sprintf("%.1f", r.CombinedMeanBatch)
		}
		fmt.Fprintf(&b, "| `%s` | %d | %s | %.0f%% | %s |", base, max(r.Callers, 1), Num(float64(r.GoSingleCalls)), 100*r.CombinedShare, mean)
		var total uint64
		for _, n := range r.CombinedBatchSizes {
			total += n
		}
		for i := range buckets {
			if total == 0 || i >= len(r.CombinedBatchSizes) {
				b.WriteString(" – |")
				continue
			}
			fmt.Fprintf(&b, " %.0f%% |", 100*float64(r.CombinedBatchSizes[i])/float64(total))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	return b.String()
}

// bucketName names bucket i of n of mooncake's batch-size histogram:
// 2^i+1 to 2^(i+1) calls, the last bucket also every larger batch.
func bucketName(i, n int) string {
	lo, hi := 1<<i+1, 1<<(i+1)
	switch {
	case i == n-1:
		return fmt.Sprintf("%d+", lo)
	case lo == hi:
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// meanNoise is the mean distance from 1 (|ln A/B|) of the A/A keys/s ratios
// of the named cases that have one; 0 if none has.
func meanNoise(names []string, noise map[string]Row) float64 {
	var sum float64
	k := 0
	for _, name := range names {
		if n, ok := noise[name]; ok && n.Ratio > 0 {
			sum += math.Abs(math.Log(n.Ratio))
			k++
		}
	}
	if k == 0 {
		return 0
	}
	return sum / float64(k)
}

// callersName is "1 caller", "4 callers".
func callersName(n int) string {
	if n == 1 {
		return "1 caller"
	}
	return fmt.Sprintf("%d callers", n)
}
