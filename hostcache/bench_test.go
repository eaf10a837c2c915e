package hostcache_test

import (
	"fmt"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"

	hc "github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/hostcache/hostcachetest"
)

const benchPages = 128 // STORAGE_BATCH_SIZE

// benchBackend builds a backend over a layout-only pool (virtual addresses:
// preparing a batch never touches pool memory) and a fake store.
func benchBackend(b *testing.B, pool hc.Pool, opts hc.Options) *hc.Backend {
	b.Helper()
	be, err := hc.NewBackend(hostcachetest.NewFakeStore(), opts)
	if err != nil {
		b.Fatal(err)
	}
	if err := be.RegisterPool(pool); err != nil {
		b.Fatal(err)
	}
	return be
}

func benchInputs(pages, pageSize int) ([]string, []int64) {
	keys := hostcachetest.TestKeys("bench", pages, pageSize)
	rows := make([]int, pages)
	for i := range rows {
		rows[i] = (i * 37) % pages // scattered pages
	}
	return keys, hostcachetest.TokenIndices(rows, pageSize)
}

// BenchmarkBatchMeta measures page meta + keys + packing (Backend.PrepareV1)
// for one 128-page batch: the work SGLang's _batch_preprocess does in Python.
func BenchmarkBatchMeta(b *testing.B) {
	mla, err := hc.NewMLAPool(hc.MLAConfig{Layers: 61, LatentDim: 576, DType: hc.BF16, PageSize: 64,
		Tokens: benchPages * 64, Layout: hc.LayerFirst, Allocator: &hostcachetest.VirtualAllocator{}})
	if err != nil {
		b.Fatal(err)
	}
	mha, err := hc.NewMHAPool(hc.MHAConfig{Layers: 32, Heads: 8, HeadDim: 128, DType: hc.BF16, PageSize: 64,
		Tokens: benchPages * 64, Layout: hc.PageFirst, Allocator: &hostcachetest.VirtualAllocator{}})
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		pool hc.Pool
		opts hc.Options
	}{
		{"MLA_layer_first_61L_128p", mla, hc.Options{RankReplicated: true}},
		{"MHA_page_first_32L_128p", mha, hc.Options{}},
	}
	tag := "my-tag"
	tagged := []struct {
		name string
		pool hc.Pool
		opts hc.Options
	}{
		{"MLA_layer_first_61L_128p_prefixed", mla, hc.Options{RankReplicated: true, ExtraBackendTag: &tag, ModelName: "deepseek-ai/DeepSeek-V3"}},
		{"MHA_page_first_32L_128p_prefixed", mha, hc.Options{ExtraBackendTag: &tag, ModelName: "meta-llama/Meta-Llama-3-8B"}},
	}
	if !testing.Short() {
		cases = append(cases, tagged...)
	}
	for _, c := range cases {
		// Steady state: the same 128-page batch is prepared again, as when
		// BatchExists is followed by BatchGetV1 on the same pages. Keys are
		// then reused from the Batch's arena (only changed pages are
		// rewritten); the page meta and packing are recomputed.
		b.Run(c.name, func(b *testing.B) {
			be := benchBackend(b, c.pool, c.opts)
			keys, idx := benchInputs(benchPages, c.pool.PageSize())
			var bt hc.Batch
			if err := be.PrepareV1(&bt, keys, idx); err != nil { // grow scratch once
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := be.PrepareV1(&bt, keys, idx); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(len(bt.Buffers().Addrs)), "buffers/op")
			b.ReportMetric(float64(bt.NumKeys()), "keys/op")
		})
		// Every iteration a different page list (two batches alternate), so
		// every key is built from scratch.
		b.Run(c.name+"_new_keys", func(b *testing.B) {
			be := benchBackend(b, c.pool, c.opts)
			keysA, idx := benchInputs(benchPages, c.pool.PageSize())
			keysB := hostcachetest.TestKeys("bench-other", benchPages, c.pool.PageSize())
			var bt hc.Batch
			for _, k := range [][]string{keysA, keysB} {
				if err := be.PrepareV1(&bt, k, idx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := keysA
				if i&1 == 1 {
					k = keysB
				}
				if err := be.PrepareV1(&bt, k, idx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPageBufferMeta measures only the address arithmetic.
func BenchmarkPageBufferMeta(b *testing.B) {
	for _, l := range []hc.Layout{hc.LayerFirst, hc.PageFirst} {
		mla, err := hc.NewMLAPool(hc.MLAConfig{Layers: 61, LatentDim: 576, DType: hc.BF16, PageSize: 64,
			Tokens: benchPages * 64, Layout: l, Allocator: &hostcachetest.VirtualAllocator{}})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("MLA_%s_61L_128p", l), func(b *testing.B) {
			_, idx := benchInputs(benchPages, 64)
			addrs, sizes, _ := mla.AppendPageBufferMeta(nil, nil, idx)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				addrs, sizes, _ = mla.AppendPageBufferMeta(addrs[:0], sizes[:0], idx)
			}
		})
	}
}

func BenchmarkPageBufferMetaMHA(b *testing.B) {
	mha, err := hc.NewMHAPool(hc.MHAConfig{Layers: 32, Heads: 8, HeadDim: 128, DType: hc.BF16, PageSize: 64,
		Tokens: benchPages * 64, Layout: hc.PageFirst, Allocator: &hostcachetest.VirtualAllocator{}})
	if err != nil {
		b.Fatal(err)
	}
	_, idx := benchInputs(benchPages, 64)
	addrs, sizes, _ := mha.AppendPageBufferMeta(nil, nil, idx)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		addrs, sizes, _ = mha.AppendPageBufferMeta(addrs[:0], sizes[:0], idx)
	}
}

func BenchmarkKeysMHA(b *testing.B) {
	s, _ := hc.NewKeyScheme(hc.KeyConfig{})
	keys, _ := benchInputs(benchPages, 64)
	var k hostmem.Keys
	s.Build(&k, keys, s.V1Suffixes())
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s.Build(&k, keys, s.V1Suffixes())
	}
}
