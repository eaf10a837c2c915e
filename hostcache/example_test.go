package hostcache_test

import (
	"bytes"
	"fmt"

	hc "github.com/mooncake-go/mooncake-go/hostcache"
	ht "github.com/mooncake-go/mooncake-go/hostcache/hostcachetest"
)

// A layer-first MLA pool stores each page as one multi-buffer object (one
// buffer per layer) and reads it back into another pool byte for byte.
func Example() {
	store := ht.NewFakeStore() // a *mooncake.Store in production

	newPool := func() *hc.HostPool {
		p, err := hc.NewMLAPool(hc.MLAConfig{Layers: 4, LatentDim: 576, DType: hc.BF16, PageSize: 64, Tokens: 1024, Layout: hc.LayerFirst})
		if err != nil {
			panic(err)
		}
		return p
	}
	writer, reader := newPool(), newPool()
	defer writer.Close()
	defer reader.Close()
	ht.FillPattern(writer, 42)

	backend := func(p *hc.HostPool) *hc.Backend {
		b, err := hc.NewBackend(store, hc.Options{RankReplicated: true, ModelName: "deepseek-ai/DeepSeek-V3"})
		if err != nil {
			panic(err)
		}
		if err := b.RegisterPool(p); err != nil {
			panic(err)
		}
		return b
	}
	bw, br := backend(writer), backend(reader)
	defer bw.Close()
	defer br.Close()

	tokens := make([]uint32, 3*64)
	for i := range tokens {
		tokens[i] = uint32(i)
	}
	pages, _ := hc.PageHashes("", tokens, 64)

	ok, err := bw.BatchSetV1(pages, ht.TokenIndices([]int{3, 7, 1}, 64), nil)
	fmt.Println("set:", ok, err)
	n, _ := br.BatchExists(pages)
	fmt.Println("exists:", n)
	ok, err = br.BatchGetV1(pages, ht.TokenIndices([]int{0, 1, 2}, 64), nil)
	fmt.Println("get:", ok, err)

	a, _ := ht.PageBytes(writer, 7)
	b, _ := ht.PageBytes(reader, 1)
	fmt.Println("page bytes equal:", bytes.Equal(a, b), len(a))
	key := "deepseek-ai-DeepSeek-V3_" + pages[0] + "__k"
	obj, found := store.Object(key)
	fmt.Println("object", key[:32]+"…__k", found, len(obj))
	// Output:
	// set: [true true true] <nil>
	// exists: 3
	// get: [true true true] <nil>
	// page bytes equal: true 294912
	// object deepseek-ai-DeepSeek-V3_fea7b327…__k true 294912
}

// The spec's worked example C: a layer-first MLA page is one buffer per layer.
func ExampleHostPool_AppendPageBufferMeta() {
	pool, _ := hc.NewMLAPool(hc.MLAConfig{Layers: 3, LatentDim: 576, DType: hc.BF16, PageSize: 64, Tokens: 128,
		Layout: hc.LayerFirst, Allocator: &ht.VirtualAllocator{Base: 0x1000}})
	addrs, sizes, _ := pool.AppendPageBufferMeta(nil, nil, ht.TokenIndices([]int{1}, 64))
	for i := range addrs {
		fmt.Printf("base+%d %d\n", addrs[i]-0x1000, sizes[i])
	}
	// Output:
	// base+73728 73728
	// base+294912 73728
	// base+516096 73728
}

// Packing groups a flat page-major list under one key per page, in CSR form.
func ExamplePackMultiBufferMeta() {
	keys := []string{"h1__deepseek_v4_c4", "h2__deepseek_v4_c4"}
	ptrs := []uintptr{0x10c8, 0x20c8, 0x112c, 0x212c} // [layer0, layer1] of page 2, then of page 3
	sizes := []uint64{100, 100, 100, 100}
	offsets, err := hc.PackMultiBufferMeta(keys, ptrs, sizes, nil)
	fmt.Println(offsets, err)
	_, err = hc.PackMultiBufferMeta([]string{"page"}, []uintptr{1}, nil, nil)
	fmt.Println(err)
	// Output:
	// [0 2 4] <nil>
	// hostcache: pack multi-buffer meta (1 keys, 1 pointers, 0 sizes): pointer and size counts differ
}

func ExampleKeyScheme() {
	tag := "tag"
	mha, _ := hc.NewKeyScheme(hc.KeyConfig{TPRank: 3, TPSize: 4})
	mla, _ := hc.NewKeyScheme(hc.KeyConfig{RankReplicated: true, ExtraBackendTag: &tag, ModelName: "my/model"})
	pp, _ := hc.NewKeyScheme(hc.KeyConfig{RankReplicated: true, PPRank: 1, PPSize: 2})
	fmt.Println(mha.V1Keys([]string{"h"}))
	fmt.Println(mla.V1Keys([]string{"h"}))
	fmt.Println(pp.V1Keys([]string{"h"}))
	// Output:
	// [h_3_k h_3_v]
	// [tag_my-model_h__k]
	// [h_1_k]
}

func ExampleLoadStoreConfig() {
	env := map[string]string{"MOONCAKE_MASTER": "10.0.0.1:50051", "MOONCAKE_GLOBAL_SEGMENT_SIZE": "16gb", "MOONCAKE_PROTOCOL": "tcp"}
	cfg, err := hc.LoadStoreConfig(nil, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	fmt.Println(cfg.Source, cfg.MasterServerAddress, cfg.GlobalSegmentSize, cfg.Protocol, cfg.PerRankSegmentSize(8, 1), err)
	_, err = hc.ParseGlobalSegmentSize("4.5gb")
	fmt.Println(err != nil)
	// Output:
	// env 10.0.0.1:50051 17179869184 tcp 2147483648 <nil>
	// true
}
