//go:build cgo

package hostcache_test

import (
	"testing"

	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/hostcache/hostcachetest"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

// *mooncake.Store is the Store the backend is written against.
var _ hostcache.Store = (*mooncake.Store)(nil)

// TestEndToEndMooncake runs the end-to-end suite through the real binding:
// the embedded engine in `go test` / `make test`, or a live cluster in a
// native build (see mooncaketest.NewCluster).
func TestEndToEndMooncake(t *testing.T) {
	st := mooncaketest.Open(t)
	hostcachetest.RunEndToEnd(t, st)
}

// BenchmarkBackendMooncake measures whole BatchGetV1 calls (meta, keys,
// packing, one cgo crossing, the engine's copies) through the real binding.
func BenchmarkBackendMooncake(b *testing.B) {
	cases := []struct {
		name  string
		pages int
		pool  func() (*hostcache.HostPool, error)
		opts  hostcache.Options
	}{
		{"MLA_layer_first_61L_8p", 8, func() (*hostcache.HostPool, error) {
			return hostcache.NewMLAPool(hostcache.MLAConfig{Layers: 61, LatentDim: 576, DType: hostcache.BF16, PageSize: 64, Tokens: 8 * 64, Layout: hostcache.LayerFirst})
		}, hostcache.Options{RankReplicated: true}},
		{"MHA_page_first_32L_4p", 4, func() (*hostcache.HostPool, error) {
			return hostcache.NewMHAPool(hostcache.MHAConfig{Layers: 32, Heads: 8, HeadDim: 128, DType: hostcache.BF16, PageSize: 64, Tokens: 4 * 64, Layout: hostcache.PageFirst})
		}, hostcache.Options{}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			st := mooncaketest.Open(b)
			pool, err := c.pool()
			if err != nil {
				b.Fatal(err)
			}
			defer pool.Close()
			tag := b.Name()
			opts := c.opts
			opts.ExtraBackendTag = &tag
			be, err := hostcache.NewBackend(st, opts)
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close()
			if err := be.RegisterPool(pool); err != nil {
				b.Fatal(err)
			}
			rows := make([]int, c.pages)
			for i := range rows {
				rows[i] = i
			}
			keys := hostcachetest.TestKeys(tag, c.pages, 64)
			idx := hostcachetest.TokenIndices(rows, 64)
			res, err := be.BatchSetV1(keys, idx, nil)
			if err != nil || len(res) != c.pages || !res[0] {
				b.Fatalf("set: %v %v", res, err)
			}
			b.SetBytes(int64(pool.PageBytes()) * int64(c.pages))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err = be.BatchGetV1(keys, idx, res)
				if err != nil || !res[c.pages-1] {
					b.Fatalf("get: %v %v", res, err)
				}
			}
		})
	}
}
