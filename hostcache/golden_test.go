package hostcache_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hc "github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/hostcache/hostcachetest"
)

type layoutCase struct {
	Name           string           `json:"name"`
	Spec           string           `json:"spec"`
	Anchor         *poolSpec        `json:"anchor"`
	Pool           poolSpec         `json:"pool"`
	PageNum        int              `json:"page_num"`
	Size           int              `json:"size"`
	Shapes         map[string][]int `json:"shapes"`
	Indices        []int64          `json:"indices"`
	IndicesPages   []int64          `json:"indices_pages"`
	SplitFactor    int              `json:"split_factor"`
	Entries        [][3]any         `json:"entries"`
	Addrs          []string         `json:"addrs"`
	VOff           uint64           `json:"v_off"`
	PageBytes      uint64           `json:"page_bytes"`
	SizePerToken   uint64           `json:"size_per_token"`
	PackedObject   uint64           `json:"packed_object"`
	EntriesPerPage int              `json:"entries_per_page"`
	EntrySize      uint64           `json:"entry_size"`
	Registered     []string         `json:"registered"`
}

func TestGoldenLayouts(t *testing.T) {
	var file struct{ Cases []layoutCase }
	readJSON(t, "layouts.json", &file)
	require.NotEmpty(t, file.Cases)
	for _, c := range file.Cases {
		t.Run(c.Name, func(t *testing.T) {
			alloc := virtual()
			var anchor hc.Pool
			if c.Anchor != nil {
				a, err := c.Anchor.build(alloc, nil)
				require.NoError(t, err)
				anchor = a
			}
			p, err := c.Pool.build(alloc, anchor)
			require.NoError(t, err)
			if c.PageNum != 0 {
				assert.Equal(t, c.PageNum, p.PageNum(), "page_num")
			}
			if c.Size != 0 {
				assert.Equal(t, c.Size, p.Size(), "S")
			}
			for name, shape := range c.Shapes {
				b, ok := bufferByName(p, name)
				require.True(t, ok, "buffer %s", name)
				assert.Equal(t, shape, b.Shape, "shape of %s", name)
				n := uint64(1)
				for _, d := range shape {
					n *= uint64(d)
				}
				assert.Equal(t, n*b.DType.Size(), b.Size, "bytes of %s = prod(shape) * itemsize", name)
			}
			if c.PageBytes != 0 {
				assert.Equal(t, c.PageBytes, p.PageBytes(), "page bytes")
			}
			if c.SizePerToken != 0 {
				assert.Equal(t, c.SizePerToken, p.SizePerToken())
			}
			if c.EntriesPerPage != 0 {
				n, err := p.EntriesPerPage()
				require.NoError(t, err)
				assert.Equal(t, c.EntriesPerPage, n)
				addrs, sizes, err := hc.PageBufferMeta(p, pages([]int64{0}, p.PageSize()))
				require.NoError(t, err)
				assert.Len(t, addrs, n)
				for _, s := range sizes {
					assert.Equal(t, c.EntrySize, s)
				}
			}
			if c.VOff != 0 {
				kv, _ := bufferByName(p, "kv")
				v, _ := bufferByName(p, "v")
				assert.Equal(t, c.VOff, uint64(v.Addr-kv.Addr), "V_OFF")
			}
			if c.Registered != nil {
				var names []string
				for _, b := range hc.IterHostPoolBuffers(p) {
					names = append(names, b.Name)
				}
				assert.Equal(t, c.Registered, names, "registered buffers")
			}
			idx := c.Indices
			if c.IndicesPages != nil {
				idx = pages(c.IndicesPages, p.PageSize())
			}
			if idx == nil {
				return
			}
			var addrs []uintptr
			var sizes []uint64
			if c.SplitFactor > 0 {
				addrs, sizes, err = p.SplitHeadsPageBufferMeta(nil, nil, idx, c.SplitFactor)
			} else {
				addrs, sizes, err = hc.PageBufferMeta(p, idx)
			}
			require.NoError(t, err)
			require.Len(t, addrs, len(c.Entries))
			require.Len(t, sizes, len(c.Entries))
			for i, e := range c.Entries {
				b, ok := bufferByName(p, e[0].(string))
				require.True(t, ok, "buffer %v", e[0])
				off, size := uint64(e[1].(float64)), uint64(e[2].(float64))
				assert.Equal(t, b.Addr+uintptr(off), addrs[i], "entry %d address (%s+%d)", i, b.Name, off)
				assert.Equal(t, size, sizes[i], "entry %d size", i)
			}
			for i, a := range c.Addrs {
				want, err := strconv.ParseUint(strings.TrimPrefix(a, "0x"), 16, 64)
				require.NoError(t, err)
				assert.Equal(t, uintptr(want), addrs[i], "spec address %d", i)
			}
			if c.PackedObject != 0 {
				keys := []string{"page"}
				off, err := hc.PackMultiBufferMeta(keys, addrs, sizes, nil)
				require.NoError(t, err)
				m := hostmem.Buffers{Addrs: addrs, Sizes: sizes, Offsets: off}
				assert.True(t, hc.UsesMultiBuffer(m))
				assert.Equal(t, 1, m.Len())
				assert.Equal(t, c.PackedObject, m.ObjectSize(0))
			}
		})
	}
}

func TestGoldenSupportMatrix(t *testing.T) {
	var file struct {
		Matrix map[string]map[string]string
		Split  map[string][]string
	}
	readJSON(t, "support.json", &file)
	specs := map[string]poolSpec{
		"mha":               {Kind: "mha", Layers: 2, Heads: 2, HeadDim: 4, DType: "bf16", PageSize: 2, Tokens: 4},
		"asymmetric_mha":    {Kind: "asymmetric_mha", Layers: 2, Heads: 2, HeadDim: 4, VHeadDim: 2, DType: "bf16", PageSize: 2, Tokens: 4},
		"k_only_mha":        {Kind: "k_only_mha", Layers: 2, Heads: 2, HeadDim: 4, DType: "bf16", PageSize: 2, Tokens: 4},
		"mla":               {Kind: "mla", Layers: 2, LatentDim: 8, KVLoraRank: 4, RopeDim: 2, DType: "bf16", PageSize: 2, Tokens: 4},
		"dsa_indexer":       {Kind: "dsa_indexer", Layers: 2, IndexHeadDim: 8, QuantBlockSize: 8},
		"mamba":             {Kind: "mamba", Layers: 2, TemporalShape: []int{2}, TemporalDType: "fp32", ConvShapes: [][]int{{3}}, ConvDType: "bf16", Tokens: 4},
		"deepseek_v4_paged": {Kind: "deepseek_v4_paged", Layers: 2, ItemBytes: 10, NumPages: 3, PageSize: 2},
		"deepseek_v4_state": {Kind: "deepseek_v4_state", Layers: 2, ItemBytes: 10, NumPages: 3, PageSize: 2},
		"logical":           {Kind: "logical", PageSize: 2, Tokens: 4},
	}
	require.Len(t, file.Matrix, len(specs))
	for kind, row := range file.Matrix {
		for _, layout := range hc.AllLayouts() {
			want := row[layout.String()]
			t.Run(kind+"/"+layout.String(), func(t *testing.T) {
				s := specs[kind]
				s.Layout = layout.String()
				var anchor hc.Pool
				if kind == "dsa_indexer" {
					a, err := hc.NewLogicalPool(hc.LogicalConfig{PageSize: 2, Tokens: 4, Layout: layout})
					require.NoError(t, err)
					anchor = a
				}
				p, err := s.build(virtual(), anchor)
				if want == "no" {
					require.Error(t, err)
					assert.True(t, errors.Is(err, hc.ErrUnsupportedLayout), "construct error %v should be ErrUnsupportedLayout", err)
					var le *hc.LayoutError
					require.ErrorAs(t, err, &le)
					assert.Equal(t, layout, le.Layout)
					assert.Contains(t, err.Error(), layout.String())
					return
				}
				require.NoError(t, err)
				_, _, err = hc.PageBufferMeta(p, []int64{0, 1})
				switch want {
				case "meta":
					assert.NoError(t, err)
				case "construct":
					require.Error(t, err)
					if kind == "logical" {
						assert.ErrorIs(t, err, hc.ErrNoBuffer)
					} else {
						assert.ErrorIs(t, err, hc.ErrUnsupportedLayout)
					}
				default:
					t.Fatalf("bad matrix value %q", want)
				}
				_, _, err = p.SplitHeadsPageBufferMeta(nil, nil, []int64{0, 1}, 2)
				if slices.Contains(file.Split[kind], layout.String()) {
					assert.NoError(t, err)
				} else {
					assert.Error(t, err)
				}
			})
		}
	}
}

type keyCase struct {
	Name   string `json:"name"`
	Config struct {
		TPRank         int     `json:"tp_rank"`
		TPSize         int     `json:"tp_size"`
		PPRank         int     `json:"pp_rank"`
		PPSize         int     `json:"pp_size"`
		RankReplicated bool    `json:"rank_replicated"`
		SplitFactor    int     `json:"split_factor"`
		Tag            *string `json:"tag"`
		ModelName      string  `json:"model_name"`
		Fingerprint    string  `json:"fingerprint"`
	} `json:"config"`
	PageKeys []string `json:"page_keys"`
	V1       []string `json:"v1"`
	V2       map[string]struct {
		Pool  string   `json:"pool"`
		Keys  []string `json:"keys"`
		Error string   `json:"error"`
	} `json:"v2"`
}

func sidePoolOfKind(t *testing.T, kind string) hc.Pool {
	t.Helper()
	var p hc.Pool
	var err error
	a := virtual()
	switch kind {
	case "mha":
		p, err = hc.NewMHAPool(hc.MHAConfig{Layers: 1, Heads: 1, HeadDim: 2, DType: hc.BF16, PageSize: 2, Tokens: 2, Layout: hc.PageFirst, Allocator: a})
	case "mla":
		p, err = hc.NewMLAPool(hc.MLAConfig{Layers: 1, LatentDim: 2, DType: hc.BF16, PageSize: 2, Tokens: 2, Layout: hc.PageFirst, Allocator: a})
	case "mamba":
		p, err = hc.NewMambaPool(hc.MambaConfig{Layers: 1, TemporalShape: []int{2}, TemporalDType: hc.FP32, ConvShapes: [][]int{{2}, {3}}, ConvDType: hc.BF16, Tokens: 2, Layout: hc.PageFirst, Allocator: a})
	case "mamba_conv_only":
		p, err = hc.NewMambaPool(hc.MambaConfig{Layers: 1, TemporalShape: []int{0}, TemporalDType: hc.FP32, ConvShapes: [][]int{{2}, {3}}, ConvDType: hc.BF16, Tokens: 2, Layout: hc.PageFirst, Allocator: a})
	case "v4_paged":
		p, err = hc.NewV4PagedPool(hc.V4Config{Layers: 2, ItemBytes: 8, NumPages: 2, PageSize: 2, Layout: hc.LayerFirst, Allocator: a})
	default:
		t.Fatalf("unknown side pool kind %q", kind)
	}
	require.NoError(t, err)
	return p
}

func TestGoldenKeys(t *testing.T) {
	var file struct {
		Cases        []keyCase
		Fingerprints []struct {
			Pool        poolSpec
			Fingerprint string
		}
	}
	readJSON(t, "keys.json", &file)
	for _, c := range file.Cases {
		t.Run(c.Name, func(t *testing.T) {
			cfg := c.Config
			s, err := hc.NewKeyScheme(hc.KeyConfig{TPRank: cfg.TPRank, TPSize: cfg.TPSize, PPRank: cfg.PPRank, PPSize: cfg.PPSize,
				RankReplicated: cfg.RankReplicated, SplitFactor: cfg.SplitFactor, ExtraBackendTag: cfg.Tag, ModelName: cfg.ModelName, Fingerprint: cfg.Fingerprint})
			require.NoError(t, err)
			assert.Equal(t, c.V1, s.V1Keys(c.PageKeys))
			for name, v := range c.V2 {
				suffixes, err := s.V2Suffixes(hc.PoolName(name), sidePoolOfKind(t, v.Pool))
				if v.Error != "" {
					require.Error(t, err, "pool %s", name)
					assert.ErrorIs(t, err, hc.ErrUnsupportedPool)
					continue
				}
				require.NoError(t, err, "pool %s", name)
				var k hostmem.Keys
				s.Build(&k, c.PageKeys, suffixes)
				assert.Equal(t, v.Keys, k.Strings(), "pool %s", name)
			}
		})
	}
	for _, f := range file.Fingerprints {
		p, err := f.Pool.build(virtual(), nil)
		require.NoError(t, err)
		assert.Equal(t, f.Fingerprint, p.Fingerprint(), "%s %s", f.Pool.Kind, f.Pool.Layout)
	}
}

func TestGoldenPack(t *testing.T) {
	var file struct {
		Cases []struct {
			Keys, Ptrs, Sizes int
			Offsets           []uint64
			Error             string
		}
	}
	readJSON(t, "pack.json", &file)
	for _, c := range file.Cases {
		t.Run(fmt.Sprintf("%dk_%dp_%ds", c.Keys, c.Ptrs, c.Sizes), func(t *testing.T) {
			keys := make([]string, c.Keys)
			ptrs := make([]uintptr, c.Ptrs)
			for i := range ptrs {
				ptrs[i] = uintptr(0x1000 + i*16)
			}
			sizes := make([]uint64, c.Sizes)
			off, err := hc.PackMultiBufferMeta(keys, ptrs, sizes, nil)
			if c.Error != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, hc.ErrPack)
				assert.Contains(t, err.Error(), c.Error)
				var pe *hc.PackError
				require.ErrorAs(t, err, &pe)
				assert.Equal(t, [3]int{c.Keys, c.Ptrs, c.Sizes}, [3]int{pe.Keys, pe.Ptrs, pe.Sizes})
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.Offsets, off)
			m := hostmem.Buffers{Addrs: ptrs, Sizes: sizes, Offsets: off}
			require.NoError(t, m.Validate(c.Keys))
			fa, fs := m.Flatten()
			if len(ptrs) > 0 {
				assert.Equal(t, ptrs, fa)
				assert.Equal(t, sizes, fs)
			}
		})
	}
}

func TestGoldenConfigs(t *testing.T) {
	var file struct {
		Cases []struct {
			Name          string
			Extra         map[string]any
			Env           map[string]string
			File          map[string]any
			Want          map[string]any
			Error         string
			DeviceForRank map[string]string `json:"device_for_rank"`
		}
		Sizes []struct {
			In    string
			Want  uint64
			Error bool
		}
	}
	readJSON(t, "configs.json", &file)
	for _, c := range file.Cases {
		t.Run(c.Name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range c.Env {
				env[k] = v
			}
			if c.File != nil {
				path := filepath.Join(t.TempDir(), "mooncake.json")
				data, err := jsonMarshal(c.File)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(path, data, 0o600))
				env[hc.EnvSGLangConfigPath] = path
			}
			var extra map[string]any
			if c.Extra != nil {
				data, err := jsonMarshal(c.Extra)
				require.NoError(t, err)
				extra, err = hc.ParseExtraConfig(string(data))
				require.NoError(t, err)
			}
			cfg, err := hc.LoadStoreConfig(extra, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
			if c.Error != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, hc.ErrInvalidConfig)
				assert.Contains(t, err.Error(), c.Error)
				return
			}
			require.NoError(t, err)
			rv := reflect.ValueOf(cfg)
			for field, want := range c.Want {
				f := rv.FieldByName(field)
				require.True(t, f.IsValid(), "field %s", field)
				if w, ok := want.(float64); ok && w == math.Trunc(w) {
					want = strconv.FormatInt(int64(w), 10)
				}
				assert.Equal(t, fmt.Sprint(want), fmt.Sprint(f.Interface()), "field %s", field)
			}
			for rank, dev := range c.DeviceForRank {
				r, _ := strconv.Atoi(rank)
				assert.Equal(t, dev, cfg.ResolveDeviceName(r), "device for rank %d", r)
			}
		})
	}
	for _, s := range file.Sizes {
		got, err := hc.ParseGlobalSegmentSize(s.In)
		if s.Error {
			assert.Error(t, err, "%q", s.In)
			continue
		}
		if assert.NoError(t, err, "%q", s.In) {
			assert.Equal(t, s.Want, got, "%q", s.In)
		}
	}
}

func TestGoldenPageHashes(t *testing.T) {
	var file struct {
		Cases []struct {
			Name     string
			Tokens   []uint32
			PageSize int `json:"page_size"`
			Prior    string
			Hashes   []string
		}
	}
	readJSON(t, "hashes.json", &file)
	require.NotEmpty(t, file.Cases)
	for _, c := range file.Cases {
		got, err := hc.PageHashes(c.Prior, c.Tokens, c.PageSize)
		require.NoError(t, err, c.Name)
		assert.Equal(t, c.Hashes, got, c.Name)
	}
	_, err := hc.PageHashes("zz", []uint32{1}, 1)
	assert.ErrorIs(t, err, hc.ErrInvalidConfig)
}

var _ = hostcachetest.NewFakeStore
