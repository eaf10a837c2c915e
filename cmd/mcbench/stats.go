package main

import (
	"math"
	"slices"
	"time"
)

// recorder collects one measured phase: every request's latency (the time
// spent in the client call, plus result checks), keys and bytes. The
// throughput is computed over the time inside requests ("busy" time), so
// key generation and dataset cleanup, which both clients do outside the
// clock in the same way, do not count.
type recorder struct {
	lat      []int64 // ns per request
	busy     int64   // ns
	requests int
	keys     int
	bytes    int64
	errors   int
	start    time.Time
	outside  int64 // ns of request time spent outside the store's calls (HiCache cases)
	cpu      int64 // ns of process CPU time over the measured window
	// window, when set (several callers), is the measured wall time, over
	// which throughput is computed instead of the sum of latencies.
	window int64
	// comb, for a combining twin, is the store's combining counters over
	// the measured window.
	comb *combCounters
	// placed and offSegment are placement's sample: keys looked up, and
	// those with a replica outside this client's own segment.
	placed, offSegment int
	// loopback is the host's loopback bytes over the measured window of a
	// time-based case (loopbackBytes; -1 unknown, 0 not measured).
	loopback int64
}

func newRecorder(hint int) *recorder {
	if hint > 1<<22 {
		hint = 1 << 22
	}
	return &recorder{lat: make([]int64, 0, hint), start: time.Now()}
}

func (r *recorder) add(d time.Duration, keys int, bytes int64) {
	r.lat = append(r.lat, int64(d))
	r.busy += int64(d)
	r.requests++
	r.keys += keys
	r.bytes += bytes
}

func (r *recorder) result(c Case) Result {
	res := Result{Case: c, Requests: r.requests, Keys: r.keys, Bytes: r.bytes, Errors: r.errors,
		WallSec: time.Since(r.start).Seconds(), BusySec: float64(r.busy) / 1e9, CPUSec: float64(r.cpu) / 1e9}
	if r.window > 0 {
		res.BusySec = float64(r.window) / 1e9
	}
	if r.keys > 0 {
		res.CPUUsPerOp = float64(r.cpu) / 1e3 / float64(r.keys)
	}
	res.PlacedKeys, res.OffSegmentKeys = r.placed, r.offSegment
	if r.loopback > 0 && r.keys > 0 {
		res.LoopbackBytesPerKey = float64(r.loopback) / float64(r.keys)
	}
	if k := r.comb; k != nil {
		res.SingleCalls, res.CombinedCalls, res.CombinedBatches, res.CombinedBatchSizes = k.calls, k.combined, k.batches, k.sizes
	}
	if res.BusySec > 0 {
		res.OpsPerSec = float64(r.keys) / res.BusySec
		res.ReqPerSec = float64(r.requests) / res.BusySec
		res.GBps = float64(r.bytes) / res.BusySec / 1e9
	}
	if n := len(r.lat); n > 0 {
		slices.Sort(r.lat)
		res.MeanUs = float64(r.busy) / float64(n) / 1e3
		res.P50Us = percentile(r.lat, 0.50) / 1e3
		res.P99Us = percentile(r.lat, 0.99) / 1e3
		res.P999Us = percentile(r.lat, 0.999) / 1e3
		if r.outside > 0 {
			res.OutsideUs = float64(r.outside) / float64(n) / 1e3
		}
	}
	return res
}

// merge adds the requests of o (another caller's recorder of the same case).
func (r *recorder) merge(o *recorder) {
	r.lat = append(r.lat, o.lat...)
	r.busy += o.busy
	r.requests += o.requests
	r.keys += o.keys
	r.bytes += o.bytes
	r.errors += o.errors
	r.outside += o.outside
	r.placed += o.placed
	r.offSegment += o.offSegment
}

// percentile interpolates linearly between the closest ranks of sorted
// (the definition scripts/bench_python.py uses too).
func percentile(sorted []int64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := float64(n-1) * p
	lo, hi := int(math.Floor(rank)), int(math.Ceil(rank))
	return float64(sorted[lo]) + (float64(sorted[hi])-float64(sorted[lo]))*(rank-float64(lo))
}
