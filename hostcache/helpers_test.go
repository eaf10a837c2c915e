package hostcache_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	hc "github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/hostcache/hostcachetest"
)

// poolSpec is a JSON description of a pool (golden vectors, fuzzing).
type poolSpec struct {
	Kind           string  `json:"kind"`
	Layout         string  `json:"layout"`
	Layers         int     `json:"layers"`
	Heads          int     `json:"heads"`
	HeadDim        int     `json:"head_dim"`
	VHeadDim       int     `json:"v_head_dim"`
	LatentDim      int     `json:"latent_dim"`
	DType          string  `json:"dtype"`
	PageSize       int     `json:"page_size"`
	Tokens         int     `json:"tokens"`
	PageNum        int     `json:"page_num"`
	KVLoraRank     int     `json:"kv_lora_rank"`
	RopeDim        int     `json:"rope_dim"`
	KDType         string  `json:"k_dtype"`
	FP8DSA         bool    `json:"fp8_dsa"`
	IndexHeadDim   int     `json:"index_head_dim"`
	IndexDType     string  `json:"index_dtype"`
	IndexLayers    int     `json:"index_layers"`
	IndexScale     bool    `json:"index_scale"`
	QuantBlockSize int     `json:"quant_block_size"`
	TemporalShape  []int   `json:"temporal_shape"`
	TemporalDType  string  `json:"temporal_dtype"`
	ConvShapes     [][]int `json:"conv_shapes"`
	ConvDType      string  `json:"conv_dtype"`
	ItemBytes      int     `json:"item_bytes"`
	NumPages       int     `json:"num_pages"`
}

func dt(s string) hc.DType {
	if s == "" {
		return hc.DTypeInvalid
	}
	d, err := hc.ParseDType(s)
	if err != nil {
		return hc.DTypeInvalid
	}
	return d
}

// build constructs the pool; anchor is needed for dsa_indexer.
func (s poolSpec) build(a hc.Allocator, anchor hc.Pool) (*hc.HostPool, error) {
	layout, _ := hc.ParseLayout(s.Layout)
	mha := hc.MHAConfig{Layers: s.Layers, Heads: s.Heads, HeadDim: s.HeadDim, VHeadDim: s.VHeadDim, DType: dt(s.DType),
		PageSize: s.PageSize, Tokens: s.Tokens, PageNum: s.PageNum, Layout: layout, Allocator: a}
	switch s.Kind {
	case "mha":
		return hc.NewMHAPool(mha)
	case "asymmetric_mha":
		return hc.NewAsymmetricMHAPool(mha)
	case "k_only_mha":
		return hc.NewKOnlyMHAPool(mha)
	case "mla":
		return hc.NewMLAPool(hc.MLAConfig{Layers: s.Layers, LatentDim: s.LatentDim, DType: dt(s.DType), PageSize: s.PageSize,
			Tokens: s.Tokens, PageNum: s.PageNum, Layout: layout, KVLoraRank: s.KVLoraRank, KDType: dt(s.KDType), RopeDim: s.RopeDim,
			FP8DSA: s.FP8DSA, IndexHeadDim: s.IndexHeadDim, IndexDType: dt(s.IndexDType), IndexLayers: s.IndexLayers,
			IndexScale: s.IndexScale, Allocator: a})
	case "dsa_indexer":
		if anchor == nil {
			return nil, fmt.Errorf("dsa_indexer needs an anchor")
		}
		return hc.NewDSAIndexerPool(anchor, hc.DSAIndexerConfig{Layers: s.Layers, IndexHeadDim: s.IndexHeadDim, QuantBlockSize: s.QuantBlockSize, Allocator: a})
	case "mamba":
		return hc.NewMambaPool(hc.MambaConfig{Layers: s.Layers, TemporalShape: s.TemporalShape, TemporalDType: dt(s.TemporalDType),
			ConvShapes: s.ConvShapes, ConvDType: dt(s.ConvDType), Tokens: s.Tokens, PageNum: s.PageNum, Layout: layout, Allocator: a})
	case "deepseek_v4_paged", "deepseek_v4_state":
		cfg := hc.V4Config{Layers: s.Layers, ItemBytes: s.ItemBytes, NumPages: s.NumPages, PageSize: s.PageSize, Layout: layout, Allocator: a}
		if s.Kind == "deepseek_v4_state" {
			return hc.NewV4StatePool(cfg)
		}
		return hc.NewV4PagedPool(cfg)
	case "logical":
		return hc.NewLogicalPool(hc.LogicalConfig{PageSize: s.PageSize, Tokens: s.Tokens, PageNum: s.PageNum, Layout: layout})
	}
	return nil, fmt.Errorf("unknown kind %q", s.Kind)
}

func readJSON(t testing.TB, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "hostcache", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// virtual returns a layout-only allocator starting at 0x1000.
func virtual() hc.Allocator { return &hostcachetest.VirtualAllocator{Base: 0x1000} }

// pages expands page-start token indices to full pages.
func pages(starts []int64, p int) []int64 {
	var out []int64
	for _, s := range starts {
		for i := 0; i < p; i++ {
			out = append(out, s+int64(i))
		}
	}
	return out
}

func bufferByName(p *hc.HostPool, name string) (hc.Buffer, bool) {
	for _, b := range p.Buffers() {
		if b.Name == name {
			return b, true
		}
	}
	return hc.Buffer{}, false
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
