package hostcache_test

import (
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hc "github.com/mooncake-go/mooncake-go/hostcache"
	ht "github.com/mooncake-go/mooncake-go/hostcache/hostcachetest"
)

func TestSizing(t *testing.T) {
	assert.Equal(t, 3, hc.PageCount(8, 4), "one page more than needed even when divisible")
	assert.Equal(t, 3, hc.PageCount(11, 4))
	assert.Equal(t, 1, hc.PageCount(0, 64))
	assert.Equal(t, 0, hc.PageCount(-1, 64))
	// --hicache-size is decimal GB.
	assert.Equal(t, 1_000_000_000/1152/61, hc.RequestedTokensFromHostSize(1, 1152*61))
	assert.Equal(t, 3, hc.RequestedTokensFromHostSize(0.3e-8, 1))
	assert.Equal(t, 0, hc.RequestedTokensFromHostSize(0, 10))
	assert.Equal(t, 2000, hc.RequestedTokensFromRatio(1000, 2))
	assert.Equal(t, 1500, hc.RequestedTokensFromRatio(1000, 1.5))
	assert.NoError(t, hc.CheckHostBudget(1<<30, 12<<30))
	assert.ErrorIs(t, hc.CheckHostBudget(3<<30, 12<<30), hc.ErrInvalidConfig)
	assert.ErrorIs(t, hc.CheckHostBudget(1, 1<<30), hc.ErrInvalidConfig)

	p, err := hc.NewMLAPool(hc.MLAConfig{Layers: 61, LatentDim: 576, DType: hc.BF16, PageSize: 64, Tokens: 100, Layout: hc.PageFirst, Allocator: &ht.VirtualAllocator{}})
	assert.NoError(t, err)
	assert.Equal(t, 2, p.PageNum())
	assert.Equal(t, 128, p.Size())
	assert.Equal(t, uint64(61*1152), p.SizePerToken())

	be, _ := hc.NewBackend(ht.NewFakeStore(), hc.Options{RankReplicated: true})
	assert.Zero(t, be.GBPerPage())
	assert.NoError(t, be.RegisterPool(p))
	assert.InDelta(t, float64(61*1152*64)/(1<<30), be.GBPerPage(), 1e-12)
}

func TestConfigHelpers(t *testing.T) {
	cfg := hc.StoreConfig{MasterServerAddress: "10.1.2.3:50051", MasterMetricsPort: 9003, DeviceName: "mlx5_0", GlobalSegmentSize: 16 << 30}
	assert.Equal(t, "http://10.1.2.3:9003/get_all_segments", cfg.SegmentsURL())
	assert.Equal(t, "mlx5_0", cfg.ResolveDeviceName(5))
	assert.Equal(t, uint64(1<<30), cfg.PerRankSegmentSize(8, 2))
	cfg.DeviceName = `{"0": "a", "1": "b"`
	assert.Equal(t, "", cfg.ResolveDeviceName(0), "malformed JSON map")
	opts, err := hc.OptionsFromExtraConfig(map[string]any{"extra_backend_tag": "t", "tp_lcm_size": 4}, hc.Options{})
	assert.NoError(t, err)
	assert.Equal(t, "t", *opts.ExtraBackendTag)
	assert.Equal(t, 4, opts.TPLCMSize)
	_, err = hc.OptionsFromExtraConfig(map[string]any{"tp_lcm_size": "x"}, hc.Options{})
	assert.ErrorIs(t, err, hc.ErrInvalidConfig)
	_, err = hc.ParseExtraConfig("@/nonexistent.yaml")
	assert.ErrorIs(t, err, hc.ErrInvalidConfig)
	m, err := hc.ParseExtraConfig(`{"master_server_address": "m", "extra_backend_tag": null}`)
	assert.NoError(t, err)
	opts, _ = hc.OptionsFromExtraConfig(m, hc.Options{})
	assert.Nil(t, opts.ExtraBackendTag, "a null tag is no tag")
}

func TestAllocators(t *testing.T) {
	for _, a := range []*hc.MmapAllocator{
		{},
		{Options: hostmem.Options{Populate: true}},
		{Options: hostmem.Options{TransparentHugePages: true}},
		{Options: hostmem.Options{TransparentHugePages: true, Populate: true}},
	} {
		for _, size := range []uint64{10000, 5<<20 + 3} {
			r, err := a.Alloc(size)
			require.NoError(t, err, "%+v", a)
			assert.Equal(t, size, r.Size)
			assert.Len(t, r.Bytes(), int(size))
			assert.Zero(t, r.Addr%4096, "page aligned")
			assert.Zero(t, r.Mem[0]|r.Mem[size-1], "zeroed")
			r.Mem[size-1] = 1
			assert.NoError(t, a.Free(r))
		}
		z, err := a.Alloc(0)
		assert.NoError(t, err)
		assert.NoError(t, a.Free(z))
	}

	ta := ht.NewAllocator(t)
	ta.FailAfter = 2
	_, err := hc.NewAsymmetricMHAPool(hc.MHAConfig{Layers: 1, Heads: 1, HeadDim: 4, VHeadDim: 2, DType: hc.BF16, PageSize: 2, Tokens: 2, Layout: hc.PageFirst, Allocator: ta})
	assert.ErrorIs(t, err, ht.ErrInjected)
	assert.Zero(t, ta.Leaks(), "the K tensor allocated before the failure was freed")
}

// size_per_token as SGLang computes it where it is not the allocation, and
// the allocation beside it (AllocatedBytesPerToken).
func TestSizePerTokenAsSGLang(t *testing.T) {
	va := &ht.VirtualAllocator{}
	kvSplit := func(latent, kw int, fp8 bool, dt hc.DType, di int, scale bool) hc.MLAConfig {
		return hc.MLAConfig{Layers: 61, LatentDim: latent, DType: dt, PageSize: 64, Tokens: 128, Layout: hc.PageFirstKVSplit,
			KVLoraRank: kw, RopeDim: 64, FP8DSA: fp8, IndexHeadDim: di, IndexScale: scale, Allocator: va}
	}
	for _, tc := range []struct {
		name        string
		mk          func() (*hc.HostPool, error)
		size, alloc uint64
	}{
		// DeepSeekV4PagedHostPool / StateHostPool: size_per_token =
		// get_ksize_per_token() = item_bytes (state_page_bytes).
		{"v4 paged", func() (*hc.HostPool, error) {
			return hc.NewV4PagedPool(hc.V4Config{Layers: 2, ItemBytes: 37440, NumPages: 4, PageSize: 64, Layout: hc.LayerFirst, Allocator: va})
		}, 37440, 2 * 37440 / 64},
		{"v4 state", func() (*hc.HostPool, error) {
			return hc.NewV4StatePool(hc.V4Config{Layers: 3, ItemBytes: 8192, NumPages: 4, PageSize: 128, Layout: hc.PageFirst, Allocator: va})
		}, 8192, 3 * 8192 / 128},
		// FP8 DSA kv_split: (kv_lora_rank + qk_rope_head_dim) * 1 B * L +
		// Di * L_idx + 4 * L_idx; K is allocated at the packed 656, V too.
		{"kv_split fp8 dsa", func() (*hc.HostPool, error) { return hc.NewMLAPool(kvSplit(576, 656, true, hc.Uint8, 128, true)) },
			576*61 + 128*61 + 4*61, 656*61 + 64*61 + 128*61 + 4*61},
		{"kv_split fp8 dsa, kv_cache_dim overridden", func() (*hc.HostPool, error) {
			return hc.NewMLAPool(kvSplit(656, 656, true, hc.Uint8, 128, true))
		}, 656*61 + 128*61 + 4*61, 656*61 + 64*61 + 128*61 + 4*61},
		{"kv_split bf16", func() (*hc.HostPool, error) { return hc.NewMLAPool(kvSplit(0, 512, false, hc.BF16, 0, false)) },
			(512 + 64) * 2 * 61, (512 + 64) * 2 * 61},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.mk()
			require.NoError(t, err)
			assert.Equal(t, tc.size, p.SizePerToken())
			assert.Equal(t, tc.size, p.KSizePerToken())
			assert.Equal(t, tc.alloc, p.AllocatedBytesPerToken())
		})
	}
	p, err := hc.NewMLAPool(hc.MLAConfig{Layers: 61, LatentDim: 576, DType: hc.BF16, PageSize: 64, Tokens: 100, Layout: hc.PageFirst, Allocator: va})
	require.NoError(t, err)
	assert.Equal(t, p.SizePerToken(), p.AllocatedBytesPerToken(), "where SGLang's number is the allocation")
}
