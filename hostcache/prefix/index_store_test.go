//go:build cgo

package prefix_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/hostcache/prefix"
	"github.com/mooncake-go/mooncake-go/mooncake/kvevents"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

// BenchmarkIndexResync: how long a resync pass of an index holding 20k
// stored pages (two keys each) takes against a store: the window after a
// gap in which a held page may be stale. Reports pages/s of the pass.
func BenchmarkIndexResync(b *testing.B) {
	const pages = 20_000
	cl := mooncaketest.NewCluster(b)
	writer := cl.Open(b)
	reader := cl.Open(b, queryOnly)
	f := newFixture(b, 16)
	var ds []prefix.Digest
	for i := 0; i < pages; i++ {
		d := prefix.Digest{0xbe, byte(i), byte(i >> 8), byte(i >> 16)}
		copy(d[4:], b.Name())
		ds = append(ds, d)
	}
	val := []byte("v")
	for _, d := range ds {
		for _, key := range f.keys(d) {
			if err := writer.Put(key, val); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Cleanup(func() {
		for _, d := range ds {
			for _, key := range f.keys(d) {
				_ = writer.Remove(key, true)
			}
		}
	})
	for _, batch := range []int{256, 1024} {
		b.Run(fmt.Sprintf("batch%d", batch), func(b *testing.B) {
			x := newIndex(b, prefix.IndexConfig{Scheme: f.scheme, Resync: reader, ResyncBatch: batch, LearnFor: -1})
			for i := 0; i < len(ds); i += 32 {
				x.HandleBatch(f.batch(kvevents.Stored, f.pageKeys(ds[i:min(i+32, len(ds))]...)...))
			}
			var total time.Duration
			for b.Loop() {
				t0 := time.Now()
				x.HandleGap(kvevents.Gap{Reason: kvevents.Reconnected})
				waitFor(b, "the resync", resynced(x))
				total += time.Since(t0)
			}
			if s := x.Stats(); s.Complete != pages || s.ResyncDropped != 0 {
				b.Fatalf("%+v", s)
			}
			b.ReportMetric(float64(pages)*float64(b.N)/total.Seconds(), "pages/s")
		})
	}
}
