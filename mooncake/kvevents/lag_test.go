//go:build cgo

package kvevents_test

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/mooncake/kvevents"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

var (
	lagRate    = flag.Int("kvevents.rate", 10000, "BenchmarkEventLag: puts (so events) per second")
	lagWorkers = flag.Int("kvevents.workers", 16, "BenchmarkEventLag: goroutines putting")
)

// lagHandler records, per event of the benchmark's keys, when it arrived
// and the batch's timestamp.
type lagHandler struct {
	prefix  string
	recv    []atomic.Int64 // unix ns the event arrived, by key index
	stamp   []atomic.Int64 // the batch timestamp (ms precision), unix ns
	got     atomic.Int64
	gaps    atomic.Int64
	inner   *collector
	started chan struct{}
}

func (h *lagHandler) HandleBatch(b *kvevents.Batch) {
	now := time.Now().UnixNano()
	for i := range b.Events {
		k := b.Events[i].Key
		if !strings.HasPrefix(k, h.prefix) {
			continue
		}
		n, err := strconv.Atoi(k[len(h.prefix):])
		if err != nil || n >= len(h.recv) {
			continue
		}
		h.recv[n].Store(now)
		h.stamp[n].Store(b.Time.UnixNano())
		h.got.Add(1)
	}
	h.inner.HandleBatch(b)
}

func (h *lagHandler) HandleGap(g kvevents.Gap) {
	if g.Reason != kvevents.Started {
		h.gaps.Add(1)
	}
	h.inner.HandleGap(g)
}

// BenchmarkEventLag puts b.N keys at -kvevents.rate per second from
// -kvevents.workers goroutines and measures each key's Stored event:
// after the master's batch timestamp (what SubscriberStats.LastLag
// reports; the timestamp has millisecond precision, so up to 1 ms is the
// truncation), and after the put started and returned (end to end; an
// event may arrive before its put returns, since the master publishes at
// PutEnd, before its reply). Run it with -benchtime=<events>x; docs/kv-events.md
// has the runs against a real master.
func BenchmarkEventLag(b *testing.B) {
	c := mooncaketest.NewCluster(b)
	ep := c.KVEvents(b)
	st := c.Open(b)
	h := &lagHandler{prefix: mooncaketest.Key(b, "lag") + "/", inner: newCollector()}
	n := b.N
	h.recv, h.stamp = make([]atomic.Int64, n), make([]atomic.Int64, n)
	col, sub, _ := live(b, st, ep) // a probe subscription, to know the publisher delivers
	_ = col
	_ = sub.Close()
	s, err := kvevents.Subscribe(b.Context(), kvevents.SubscriberConfig{Locator: kvevents.Static(ep), Handler: h})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	// Our own probe, now that this subscription is the one measuring.
	for i := 0; h.inner.events == nil; i++ {
		_ = st.Upsert(mooncaketest.Key(b, fmt.Sprint("probe2-", i)), []byte("p"))
		time.Sleep(20 * time.Millisecond)
		h.inner.mu.Lock()
		seen := len(h.inner.events) > 0
		h.inner.mu.Unlock()
		if seen {
			break
		}
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = h.prefix + strconv.Itoa(i)
	}
	start, done := make([]int64, n), make([]int64, n)
	interval := time.Second / time.Duration(*lagRate)
	var next atomic.Int64
	var wg sync.WaitGroup
	var putErrs atomic.Int64
	value := []byte("v")
	b.ResetTimer()
	t0 := time.Now()
	for w := 0; w < *lagWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if d := time.Until(t0.Add(time.Duration(i) * interval)); d > 0 {
					time.Sleep(d)
				}
				start[i] = time.Now().UnixNano()
				if err := st.Put(keys[i], value); err != nil {
					putErrs.Add(1)
				}
				done[i] = time.Now().UnixNano()
			}
		}()
	}
	wg.Wait()
	took := time.Since(t0)
	deadline := time.Now().Add(10 * time.Second)
	for h.got.Load() < int64(n)-putErrs.Load() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	b.StopTimer()
	var fromStamp, fromStart, fromDone []float64
	missing := 0
	for i := 0; i < n; i++ {
		r := h.recv[i].Load()
		if r == 0 {
			missing++
			continue
		}
		fromStamp = append(fromStamp, float64(r-h.stamp[i].Load())/1e6)
		fromStart = append(fromStart, float64(r-start[i])/1e6)
		fromDone = append(fromDone, float64(r-done[i])/1e6)
	}
	pct := func(v []float64, p float64) float64 {
		if len(v) == 0 {
			return 0
		}
		slices.Sort(v)
		return v[min(len(v)-1, int(p*float64(len(v))))]
	}
	b.ReportMetric(float64(n)/took.Seconds(), "events/s")
	b.ReportMetric(pct(fromStamp, 0.50), "p50-ms")
	b.ReportMetric(pct(fromStamp, 0.99), "p99-ms")
	b.ReportMetric(pct(fromStamp, 1), "max-ms")
	b.ReportMetric(pct(fromStart, 0.50), "e2e-p50-ms")
	b.ReportMetric(pct(fromStart, 0.99), "e2e-p99-ms")
	b.ReportMetric(pct(fromDone, 0.99), "after-return-p99-ms")
	b.ReportMetric(float64(missing), "missing")
	b.ReportMetric(float64(h.gaps.Load()), "gaps")
	b.ReportMetric(float64(putErrs.Load()), "put-errors")
}
