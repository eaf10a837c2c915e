package mooncake

import (
	"testing"
	"time"
)

func TestLatencyBuckets(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int
	}{
		{0, 0}, {999 * time.Nanosecond, 0}, {time.Microsecond, 1}, {1999 * time.Nanosecond, 1},
		{2 * time.Microsecond, 2}, {time.Millisecond, 10}, {time.Hour, histBuckets - 1},
	} {
		if got := bucket(tc.d); got != tc.want {
			t.Errorf("bucket(%v) = %d, want %d", tc.d, got, tc.want)
		}
		// The bucket's bound is at least the latency (the last one has none).
		if b := bucket(tc.d); b < len(latencyBounds) && latencyBounds[b] < tc.d {
			t.Errorf("%v falls in a bucket bounded by %v", tc.d, latencyBounds[b])
		}
	}
	h := Histogram{Bounds: latencyBounds, Counts: make([]uint64, histBuckets)}
	if h.Quantile(0.5) != 0 || h.Mean() != 0 {
		t.Error("an empty histogram has no quantile or mean")
	}
	h.Counts[bucket(3*time.Microsecond)] = 90 // <= 4 µs
	h.Counts[bucket(time.Millisecond)] = 10   // <= 1.024 ms
	h.Count, h.Sum = 100, 90*3*time.Microsecond+10*time.Millisecond
	for q, want := range map[float64]time.Duration{0.5: 4 * time.Microsecond, 0.9: 4 * time.Microsecond, 0.95: 1024 * time.Microsecond, 1: 1024 * time.Microsecond} {
		if got := h.Quantile(q); got != want {
			t.Errorf("Quantile(%v) = %v, want %v", q, got, want)
		}
	}
	h.Counts[histBuckets-1] = 1
	h.Count++
	if got := h.Quantile(1); got != 2*latencyBounds[len(latencyBounds)-1] {
		t.Errorf("Quantile(1) past every bound = %v", got)
	}
	if got := (Histogram{Counts: []uint64{0, 1}, Count: 1}).Quantile(1); got != 0 {
		t.Errorf("a histogram without bounds: Quantile(1) = %v, want 0", got)
	}
	// Every Histogram has its own copy of the bounds.
	st := newStatsTable()
	st.single(OpGet, now(), 1, 1)
	s := st.snapshot()
	b := s.Op(OpGet).Latency.Bounds
	b[0] = time.Hour
	if latencyBounds[0] != time.Microsecond || s.Op(OpPut).Latency.Bounds[0] != time.Microsecond {
		t.Error("changing one histogram's bounds changed the package's")
	}
	for i, op := range statOps {
		if statSlot(op) != i {
			t.Errorf("statSlot(%s) = %d, want %d (statOps and the switch differ)", op, statSlot(op), i)
		}
	}
	if statSlot(OpOpen) != -1 {
		t.Error("setup is not counted")
	}
}

// The cost of counting one call (two clock reads, a map lookup, a few
// atomic adds): what every call pays for Stats.
func BenchmarkStatsSingle(b *testing.B) {
	t := newStatsTable()
	for i := 0; i < b.N; i++ {
		t.single(OpGet, now(), 100, 100)
	}
}
