package prefix_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/hostcache/prefix"
	"github.com/mooncake-go/mooncake-go/mooncake/kvevents"
)

// lagHandler applies batches to the index and, once HandleBatch returned
// (the events are visible to lookups), records how long each event took
// from its Publish call.
type lagHandler struct {
	x      *prefix.Index
	sent   []atomic.Int64 // by event id - 1: unix ns of the Publish call
	lags   []time.Duration
	events atomic.Int64
	gaps   atomic.Int64
}

func (h *lagHandler) HandleBatch(b *kvevents.Batch) {
	h.x.HandleBatch(b)
	now := time.Now().UnixNano()
	for i := range b.Events {
		if id := int(b.Events[i].ID); id >= 1 && id <= len(h.sent) {
			h.lags = append(h.lags, time.Duration(now-h.sent[id-1].Load()))
		}
	}
	h.events.Add(int64(len(b.Events)))
}

func (h *lagHandler) HandleGap(g kvevents.Gap) {
	h.gaps.Add(1)
	h.x.HandleGap(g)
}

// BenchmarkIndexEventLag: b.N stored events published at 10k events/s (10
// every millisecond, as a master serving puts one by one) through a
// kvevents.Publisher and Subscriber on loopback into an index; reports the
// lag from Publish to visible in the index (p50, p99, max). Run with
// -benchtime 50000x (five seconds).
func BenchmarkIndexEventLag(b *testing.B) {
	f := newFixture(b, 16)
	x := newIndex(b, prefix.IndexConfig{Scheme: f.scheme, Hasher: f.hasher})
	pub, err := kvevents.NewPublisher("tcp://127.0.0.1:0", "lag", kvevents.PublisherOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer pub.Close()
	h := &lagHandler{x: x, sent: make([]atomic.Int64, b.N)}
	h.lags = make([]time.Duration, 0, b.N)
	sub, err := kvevents.Subscribe(context.Background(), kvevents.SubscriberConfig{Locator: kvevents.Static(pub.Endpoint()), Handler: h})
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Close()
	for pub.Subscribers() == 0 || h.gaps.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	rng := rand.New(rand.NewPCG(31, 32))
	keys := make([]string, b.N)
	for i := range keys {
		var d prefix.Digest
		for j := range d {
			d[j] = byte(rng.Uint32())
		}
		keys[i] = f.keys(d)[i%2]
	}
	const perTick = 10
	ev := make([]kvevents.Event, 1)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if i%perTick == 0 {
			if d := time.Until(start.Add(time.Duration(i/perTick) * time.Millisecond)); d > 0 {
				time.Sleep(d)
			}
		}
		ev[0] = kvevents.Event{Kind: kvevents.Stored, Key: keys[i], Medium: "cpu"}
		h.sent[i].Store(time.Now().UnixNano())
		if err := pub.Publish(ev); err != nil {
			b.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for h.events.Load() < int64(b.N) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	if got := h.events.Load(); got != int64(b.N) || h.gaps.Load() != 1 {
		b.Fatalf("%d of %d events arrived, %d gaps (want only the start's)", got, b.N, h.gaps.Load())
	}
	lags := slices.Clone(h.lags)
	slices.Sort(lags)
	q := func(p float64) float64 {
		return float64(lags[min(len(lags)-1, int(p*float64(len(lags))))].Microseconds())
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
	b.ReportMetric(q(0.5), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
	b.ReportMetric(q(0.999), "p999-µs")
	b.ReportMetric(float64(lags[len(lags)-1].Microseconds()), "max-µs")
	if s := x.Stats(); s.Events != uint64(b.N) {
		b.Fatalf("index applied %d events of %d", s.Events, b.N)
	}
}
