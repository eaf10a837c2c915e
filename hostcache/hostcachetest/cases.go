package hostcachetest

import (
	hc "github.com/mooncake-go/mooncake-go/hostcache"
)

// Small geometries: every pool kind × layout the backend can store, plus
// the refused and cross-layout cases.
const (
	tP      = 4  // anchor page size
	tTokens = 24 // ⇒ page_num 7
)

func mhaPool(layout hc.Layout) func(hc.Allocator) (hc.Pool, error) {
	return func(a hc.Allocator) (hc.Pool, error) {
		return hc.NewMHAPool(hc.MHAConfig{Layers: 2, Heads: 2, HeadDim: 8, DType: hc.BF16, PageSize: tP, Tokens: tTokens, Layout: layout, Allocator: a})
	}
}

func asymPool(layout hc.Layout) func(hc.Allocator) (hc.Pool, error) {
	return func(a hc.Allocator) (hc.Pool, error) {
		return hc.NewAsymmetricMHAPool(hc.MHAConfig{Layers: 2, Heads: 2, HeadDim: 8, VHeadDim: 4, DType: hc.FP16, PageSize: tP, Tokens: tTokens, Layout: layout, Allocator: a})
	}
}

func mlaPool(layout hc.Layout) func(hc.Allocator) (hc.Pool, error) {
	return func(a hc.Allocator) (hc.Pool, error) {
		return hc.NewMLAPool(hc.MLAConfig{Layers: 3, LatentDim: 24, DType: hc.BF16, PageSize: tP, Tokens: tTokens, Layout: layout, Allocator: a})
	}
}

func mlaKVSplit(fp8 bool) func(hc.Allocator) (hc.Pool, error) {
	return func(a hc.Allocator) (hc.Pool, error) {
		cfg := hc.MLAConfig{Layers: 3, DType: hc.BF16, PageSize: tP, Tokens: tTokens, Layout: hc.PageFirstKVSplit,
			KVLoraRank: 16, RopeDim: 8, IndexHeadDim: 8, IndexDType: hc.FP8, IndexLayers: 2, IndexScale: true, Allocator: a}
		if fp8 {
			cfg.FP8DSA, cfg.KDType = true, hc.Uint8
		}
		return hc.NewMLAPool(cfg)
	}
}

func sides(fns ...func(hc.Allocator, hc.Pool) (hc.PoolEntry, error)) func(hc.Allocator, hc.Pool) ([]hc.PoolEntry, error) {
	return func(a hc.Allocator, anchor hc.Pool) ([]hc.PoolEntry, error) {
		var out []hc.PoolEntry
		for _, f := range fns {
			e, err := f(a, anchor)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	}
}

func dsaSide(name hc.PoolName) func(hc.Allocator, hc.Pool) (hc.PoolEntry, error) {
	return func(a hc.Allocator, anchor hc.Pool) (hc.PoolEntry, error) {
		p, err := hc.NewDSAIndexerPool(anchor, hc.DSAIndexerConfig{Layers: 2, IndexHeadDim: 16, QuantBlockSize: 16, Allocator: a})
		return hc.PoolEntry{Name: name, Pool: p}, err
	}
}

func kOnlySide(a hc.Allocator, anchor hc.Pool) (hc.PoolEntry, error) {
	p, err := hc.NewKOnlyMHAPool(hc.MHAConfig{Layers: 2, Heads: 1, HeadDim: 16, DType: hc.BF16, PageSize: anchor.PageSize(), PageNum: anchor.PageNum(), Layout: anchor.Layout(), Allocator: a})
	return hc.PoolEntry{Name: hc.PoolIndexer, Pool: p}, err
}

func mambaSide(layout hc.Layout, temporal []int) func(hc.Allocator, hc.Pool) (hc.PoolEntry, error) {
	return func(a hc.Allocator, _ hc.Pool) (hc.PoolEntry, error) {
		p, err := hc.NewMambaPool(hc.MambaConfig{Layers: 2, TemporalShape: temporal, TemporalDType: hc.FP32,
			ConvShapes: [][]int{{3, 4}, {5}}, ConvDType: hc.BF16, Tokens: 8, Layout: layout, Allocator: a})
		return hc.PoolEntry{Name: hc.PoolMamba, Pool: p}, err
	}
}

func mhaSide(name hc.PoolName, layout hc.Layout) func(hc.Allocator, hc.Pool) (hc.PoolEntry, error) {
	return func(a hc.Allocator, anchor hc.Pool) (hc.PoolEntry, error) {
		p, err := hc.NewMHAPool(hc.MHAConfig{Layers: 1, Heads: 2, HeadDim: 8, DType: hc.BF16, PageSize: anchor.PageSize(), PageNum: anchor.PageNum(), Layout: layout, Allocator: a})
		return hc.PoolEntry{Name: name, Pool: p}, err
	}
}

func mlaSide(name hc.PoolName, layout hc.Layout) func(hc.Allocator, hc.Pool) (hc.PoolEntry, error) {
	return func(a hc.Allocator, anchor hc.Pool) (hc.PoolEntry, error) {
		p, err := hc.NewMLAPool(hc.MLAConfig{Layers: 1, LatentDim: 24, DType: hc.BF16, PageSize: anchor.PageSize(), PageNum: anchor.PageNum(), Layout: layout, Allocator: a})
		return hc.PoolEntry{Name: name, Pool: p}, err
	}
}

func v4Side(name hc.PoolName, state bool, layers, item, pageSize int, layout hc.Layout) func(hc.Allocator, hc.Pool) (hc.PoolEntry, error) {
	return func(a hc.Allocator, _ hc.Pool) (hc.PoolEntry, error) {
		cfg := hc.V4Config{Name: name, Layers: layers, ItemBytes: item, NumPages: 8, PageSize: pageSize, Layout: layout, Allocator: a}
		var p *hc.HostPool
		var err error
		if state {
			p, err = hc.NewV4StatePool(cfg)
		} else {
			p, err = hc.NewV4PagedPool(cfg)
		}
		return hc.PoolEntry{Name: name, Pool: p}, err
	}
}

func logicalAnchor(layout hc.Layout) func(hc.Allocator) (hc.Pool, error) {
	return func(hc.Allocator) (hc.Pool, error) {
		return hc.NewLogicalPool(hc.LogicalConfig{PageSize: tP, Tokens: tTokens, Layout: layout})
	}
}

// Cases returns the end-to-end scenarios RunEndToEnd runs.
func Cases() []Case {
	mla := hc.Options{RankReplicated: true}
	var cs []Case
	for _, l := range []hc.Layout{hc.PageFirst, hc.PageFirstDirect, hc.PageHead} {
		cs = append(cs, Case{Name: "mha/" + l.String(), Anchor: mhaPool(l)})
	}
	cs = append(cs,
		Case{Name: "mha/layer_first_refused", Anchor: mhaPool(hc.LayerFirst), WantErr: hc.ErrUnsupportedLayout},
		Case{Name: "mha/page_head_split_heads", Opts: hc.Options{TPSize: 1, TPLCMSize: 2}, Anchor: mhaPool(hc.PageHead)},
		Case{Name: "mha/page_first_pp", Opts: hc.Options{TPRank: 1, TPSize: 2, PPRank: 1, PPSize: 2, ModelName: "org/model"}, Anchor: mhaPool(hc.PageFirst)},
	)
	for _, l := range []hc.Layout{hc.PageFirst, hc.PageFirstDirect} {
		cs = append(cs, Case{Name: "asymmetric_mha/" + l.String(), Anchor: asymPool(l)})
	}
	for _, l := range []hc.Layout{hc.LayerFirst, hc.PageFirst, hc.PageFirstDirect} {
		cs = append(cs, Case{Name: "mla/" + l.String(), Opts: mla, Anchor: mlaPool(l)})
	}
	cs = append(cs,
		Case{Name: "mla/page_first_kv_split", Opts: mla, Anchor: mlaKVSplit(false)},
		Case{Name: "mla/page_first_kv_split_fp8_dsa", Opts: mla, Anchor: mlaKVSplit(true)},
		Case{Name: "mla/layer_first_pp", Opts: hc.Options{RankReplicated: true, PPRank: 1, PPSize: 2}, Anchor: mlaPool(hc.LayerFirst)},
		// Byte-order compatible layouts read each other: a layer_first page is
		// the concatenation [L][P][C] that page_first_direct stores.
		Case{Name: "mla/layer_first_to_page_first_direct", Opts: mla, Anchor: mlaPool(hc.LayerFirst), ReadAnchor: mlaPool(hc.PageFirstDirect)},
		Case{Name: "mla/page_first_direct_to_layer_first_fingerprint", Opts: hc.Options{RankReplicated: true, LayoutFingerprint: true},
			Anchor: mlaPool(hc.PageFirstDirect), ReadAnchor: mlaPool(hc.LayerFirst)},
		// Same size, different byte order: the fingerprint keeps them apart.
		Case{Name: "mla/page_first_vs_layer_first_fingerprint", Opts: hc.Options{RankReplicated: true, LayoutFingerprint: true},
			Anchor: mlaPool(hc.PageFirst), ReadAnchor: mlaPool(hc.LayerFirst), ReadMisses: true},
	)
	for _, l := range []hc.Layout{hc.PageFirst, hc.PageFirstDirect} {
		cs = append(cs,
			Case{Name: "mla+dsa_indexer/" + l.String(), Opts: mla, Anchor: mlaPool(l), Sides: sides(dsaSide(hc.PoolIndexer))},
			Case{Name: "mha+k_only_indexer/" + l.String(), Anchor: mhaPool(l), Sides: sides(kOnlySide)},
			Case{Name: "mha+mamba/" + l.String(), Anchor: mhaPool(l), Sides: sides(mambaSide(l, []int{2, 4}))},
		)
	}
	cs = append(cs,
		Case{Name: "mha+mamba_conv_only/page_first", Anchor: mhaPool(hc.PageFirst), Sides: sides(mambaSide(hc.PageFirst, []int{0}))},
		Case{Name: "mha+swa+draft/page_first", Anchor: mhaPool(hc.PageFirst), Sides: sides(mhaSide(hc.PoolSWA, hc.PageFirst), mhaSide(hc.PoolDraft, hc.PageFirst))},
		Case{Name: "mla+draft+swa/layer_first", Opts: mla, Anchor: mlaPool(hc.LayerFirst),
			Sides: sides(mlaSide(hc.PoolDraft, hc.LayerFirst), v4Side(hc.PoolSWA, false, 2, 40, tP, hc.LayerFirst))},
		Case{Name: "group/mla+dsa_indexer/page_first_direct", Opts: mla, Anchor: mlaPool(hc.PageFirstDirect), Sides: sides(dsaSide(hc.PoolIndexer)), Group: true},
	)
	for _, l := range []hc.Layout{hc.LayerFirst, hc.PageFirst, hc.PageFirstDirect} {
		cs = append(cs, Case{Name: "deepseek_v4/" + l.String(), Opts: mla, Anchor: logicalAnchor(l), Group: l == hc.PageFirst,
			Sides: sides(
				v4Side(hc.PoolDeepSeekV4C4, false, 2, 100, tP, l),
				v4Side(hc.PoolDeepSeekV4C4Indexer, false, 2, 36, tP, l),
				v4Side(hc.PoolDeepSeekV4C128, false, 3, 20, tP, l),
				v4Side(hc.PoolDeepSeekV4C4State, true, 2, 48, 2, l),
				v4Side(hc.PoolSWA, false, 2, 64, 2, l),
			)})
	}
	return cs
}
