package hostcache_test

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"

	hc "github.com/mooncake-go/mooncake-go/hostcache"
	ht "github.com/mooncake-go/mooncake-go/hostcache/hostcachetest"
)

// fuzzSpec decodes a pool description from fuzz bytes. Dimensions can be
// large (up to 2^20) since pools are built on virtual addresses.
func fuzzSpec(data []byte) (poolSpec, []byte) {
	rd := func(n int) int {
		if len(data) == 0 {
			return 0
		}
		var v uint32
		for i := 0; i < n && len(data) > 0; i++ {
			v = v<<8 | uint32(data[0])
			data = data[1:]
		}
		return int(v)
	}
	dts := []string{"", "bf16", "fp16", "fp8", "fp32", "uint8", "int8"}
	kinds := []string{"mha", "asymmetric_mha", "k_only_mha", "mla", "dsa_indexer", "mamba", "deepseek_v4_paged", "deepseek_v4_state", "logical"}
	layouts := []string{"", "layer_first", "page_first", "page_first_direct", "page_head", "page_first_kv_split", "bogus"}
	s := poolSpec{
		Kind:   kinds[rd(1)%len(kinds)],
		Layout: layouts[rd(1)%len(layouts)],
		DType:  dts[rd(1)%len(dts)],
	}
	s.Layers = rd(2) - 2
	s.Heads = rd(1) - 1
	s.HeadDim = rd(2) - 1
	s.VHeadDim = rd(1)
	s.LatentDim = rd(2)
	s.PageSize = rd(1) - 1
	s.Tokens = rd(3) - 1
	s.PageNum = rd(1) - 2
	s.KVLoraRank = rd(1)
	s.RopeDim = rd(1)
	s.KDType = dts[rd(1)%len(dts)]
	s.FP8DSA = rd(1)%2 == 1
	s.IndexHeadDim = rd(1) - 1
	s.IndexDType = dts[rd(1)%len(dts)]
	s.IndexLayers = rd(1) - 1
	s.IndexScale = rd(1)%2 == 1
	s.QuantBlockSize = rd(1) - 1
	s.TemporalShape = []int{rd(1) - 1}
	s.TemporalDType = dts[rd(1)%len(dts)]
	s.ConvShapes = [][]int{{rd(1) - 1}}
	s.ConvDType = dts[rd(1)%len(dts)]
	s.ItemBytes = rd(2) - 1
	s.NumPages = rd(2) - 1
	return s, data
}

func FuzzPageBufferMeta(f *testing.F) {
	seed := func(kind, layout, dtype byte, rest ...byte) []byte {
		return append([]byte{kind, layout, dtype}, rest...)
	}
	f.Add(seed(0, 2, 1, 0, 4, 3, 0, 9, 0, 0, 1, 5, 0, 0, 9, 3), []byte{0, 0, 0, 4})                   // mha page_first
	f.Add(seed(3, 1, 1, 0, 63, 2, 0, 1, 2, 64, 65, 0, 1, 0, 1), []byte{0, 0, 0, 64, 0, 0, 0, 0})      // mla layer_first
	f.Add(seed(3, 5, 1, 0, 4, 1, 0, 1, 0, 0, 0, 3, 0, 0, 9, 1, 5, 3, 1, 0, 9, 2, 2, 1), []byte{0, 2}) // mla kv split
	f.Add(seed(6, 1, 5, 0, 4, 0, 0, 0, 0, 0, 0, 65, 0, 0, 10), []byte{0, 0, 0, 64})                   // v4 layer_first
	f.Add(seed(5, 2, 4, 0, 3), []byte{1})                                                             // mamba
	f.Add(seed(0, 4, 1, 0, 4, 4, 0, 9), []byte{0, 0, 0, 2, 2})                                        // mha page_head, split
	f.Fuzz(func(t *testing.T, spec []byte, idxBytes []byte) {
		s, _ := fuzzSpec(spec)
		var anchor *poolSpec
		if s.Kind == "dsa_indexer" {
			anchor = &poolSpec{Kind: "logical", Layout: s.Layout, PageSize: s.PageSize, Tokens: s.Tokens}
		}
		p, err := buildSpec(s, anchor, &ht.VirtualAllocator{})
		if err != nil {
			var le *hc.LayoutError
			var ce *hc.ConfigError
			if !errors.As(err, &le) && !errors.As(err, &ce) && !strings.Contains(err.Error(), "virtual address space") {
				t.Fatalf("untyped construction error: %v", err)
			}
			return
		}
		// Indices: page rows from the bytes (possibly out of range, negative
		// or misaligned); the first byte picks the mode.
		var rowsList []int
		var idx []int64
		mode := byte(0)
		if len(idxBytes) > 0 {
			mode, idxBytes = idxBytes[0], idxBytes[1:]
		}
		for len(idxBytes) >= 2 {
			v := int(binary.BigEndian.Uint16(idxBytes))
			idxBytes = idxBytes[2:]
			rowsList = append(rowsList, v)
		}
		switch mode % 3 {
		case 0: // valid page starts (maybe out of range)
			idx = ht.TokenIndices(rowsList, p.PageSize())
		case 1: // raw token indices
			for _, v := range rowsList {
				idx = append(idx, int64(v)-3)
			}
		case 2: // split heads
			idx = ht.TokenIndices(rowsList, p.PageSize())
			_, _, err := p.SplitHeadsPageBufferMeta(nil, nil, idx, int(mode%5))
			_ = err
			return
		}
		addrs, sizes, err := hc.PageBufferMeta(p, idx)
		if err != nil {
			if !errors.Is(err, hc.ErrInvalidIndices) && !errors.Is(err, hc.ErrUnsupportedLayout) && !errors.Is(err, hc.ErrNoBuffer) {
				t.Fatalf("untyped meta error: %v", err)
			}
			return
		}
		if mode%3 != 0 {
			return
		}
		distinct := map[int]bool{}
		for _, r := range rowsList {
			distinct[r] = true
		}
		if len(distinct) == len(rowsList) && len(rowsList) <= 64 {
			checkMeta(t, p, rowsList, addrs, sizes)
		}
	})
}

func FuzzPackMultiBufferMeta(f *testing.F) {
	f.Add(uint16(0), uint16(0), uint16(0))
	f.Add(uint16(2), uint16(4), uint16(4))
	f.Add(uint16(2), uint16(5), uint16(5))
	f.Add(uint16(1), uint16(1), uint16(0))
	f.Add(uint16(3), uint16(2), uint16(2))
	f.Add(uint16(128), uint16(7808), uint16(7808))
	f.Fuzz(func(t *testing.T, nk, np, ns uint16) {
		keys := make([]string, nk)
		ptrs := make([]uintptr, np)
		for i := range ptrs {
			ptrs[i] = uintptr(i + 1)
		}
		sizes := make([]uint64, ns)
		for i := range sizes {
			sizes[i] = uint64(i + 1)
		}
		off, err := hc.PackMultiBufferMeta(keys, ptrs, sizes, nil)
		k, p, s := int(nk), int(np), int(ns)
		valid := p == s && ((k == 0 && p == 0) || (k > 0 && p >= k && p%k == 0))
		if !valid {
			if err == nil || !errors.Is(err, hc.ErrPack) {
				t.Fatalf("(%d,%d,%d): want ErrPack, got %v", k, p, s, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("(%d,%d,%d): %v", k, p, s, err)
		}
		if (p > k) != (off != nil) {
			t.Fatalf("(%d,%d,%d): offsets %v", k, p, s, off)
		}
		m := hostmem.Buffers{Addrs: ptrs, Sizes: sizes, Offsets: off}
		if err := m.Validate(k); err != nil {
			t.Fatal(err)
		}
		fa, fs := m.Flatten()
		if len(fa) != p || len(fs) != s {
			t.Fatalf("flatten lost entries")
		}
		for i := range fa {
			if fa[i] != ptrs[i] || fs[i] != sizes[i] {
				t.Fatalf("flatten is not the identity at %d", i)
			}
		}
	})
}

// refKeys is a straightforward reimplementation of SGLang's v1 key scheme.
func refKeys(cfg hc.KeyConfig, pageKey string) []string {
	var parts []string
	if cfg.ExtraBackendTag != nil {
		parts = append(parts, *cfg.ExtraBackendTag)
	}
	if cfg.ModelName != "" {
		parts = append(parts, strings.ReplaceAll(cfg.ModelName, "/", "-"))
	}
	if cfg.Fingerprint != "" {
		parts = append(parts, cfg.Fingerprint)
	}
	k := pageKey
	if len(parts) > 0 {
		k = strings.Join(parts, "_") + "_" + pageKey
	}
	pp := cfg.PPSize > 1
	if cfg.RankReplicated {
		if pp {
			return []string{fmt.Sprintf("%s_%d_k", k, cfg.PPRank)}
		}
		return []string{k + "__k"}
	}
	var sfx []string
	if cfg.SplitFactor > 1 {
		for i := 0; i < cfg.SplitFactor; i++ {
			r := strconv.Itoa(cfg.TPRank*cfg.SplitFactor + i)
			if pp {
				r += "_" + strconv.Itoa(cfg.PPRank)
			}
			sfx = append(sfx, r)
		}
	} else if pp {
		sfx = []string{fmt.Sprintf("%d_%d", cfg.TPRank, cfg.PPRank)}
	} else {
		sfx = []string{strconv.Itoa(cfg.TPRank)}
	}
	var out []string
	for _, s := range sfx {
		out = append(out, k+"_"+s+"_k", k+"_"+s+"_v")
	}
	return out
}

func FuzzKeys(f *testing.F) {
	f.Add(uint8(0), uint8(1), uint8(0), uint8(1), false, uint8(0), false, "", "", "", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "x")
	f.Add(uint8(1), uint8(2), uint8(1), uint8(2), true, uint8(0), true, "tag", "org/model", "", "h", "y")
	f.Add(uint8(1), uint8(2), uint8(0), uint8(3), false, uint8(3), true, "", "", "fp", "", "")
	f.Add(uint8(5), uint8(2), uint8(0), uint8(1), false, uint8(0), false, "", "", "", "h", "")
	f.Add(uint8(1), uint8(4), uint8(0), uint8(1), false, uint8(0), true, "t", "m/n", "", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210")
	f.Fuzz(func(t *testing.T, tp, tpSize, pp, ppSize uint8, rr bool, split uint8, hasTag bool, tag, model, fp, key1, key2 string) {
		cfg := hc.KeyConfig{TPRank: int(tp), TPSize: int(tpSize), PPRank: int(pp), PPSize: int(ppSize), RankReplicated: rr,
			SplitFactor: int(split % 9), ModelName: model, Fingerprint: fp}
		if hasTag {
			cfg.ExtraBackendTag = &tag
		}
		s, err := hc.NewKeyScheme(cfg)
		if err != nil {
			if !errors.Is(err, hc.ErrInvalidConfig) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if cfg.TPSize == 0 {
			cfg.TPSize = 1
		}
		if cfg.PPSize == 0 {
			cfg.PPSize = 1
		}
		got := s.V1Keys([]string{key1, key2})
		want := append(refKeys(cfg, key1), refKeys(cfg, key2)...)
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) {
			t.Fatalf("keys %q, want %q", got, want)
		}
		// Reusing a Keys buffer for a different batch gives the same result.
		var k hostmem.Keys
		s.Build(&k, []string{key2, key1, key2}, s.V1Suffixes())
		s.Build(&k, []string{key1, key2}, s.V1Suffixes())
		if strings.Join(k.Strings(), "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("reused Keys %q, want %q", k.Strings(), want)
		}
	})
}

func FuzzParseGlobalSegmentSize(f *testing.F) {
	for _, s := range []string{"4gb", " 16GB ", "1_000", "4g", "4.5gb", "gb", "-1", "+7", "0x10", "99999999999999999999gb", "١٢gb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := hc.ParseGlobalSegmentSize(s)
		if err != nil {
			if !errors.Is(err, hc.ErrInvalidConfig) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		low := strings.ToLower(strings.TrimSpace(s))
		if strings.HasSuffix(low, "gb") {
			if n%(1<<30) != 0 {
				t.Fatalf("%q: %d is not whole GiB", s, n)
			}
			return
		}
		v, perr := strconv.ParseInt(strings.ReplaceAll(low, "_", ""), 10, 64)
		if perr != nil || uint64(v) != n {
			t.Fatalf("%q parsed as %d", s, n)
		}
	})
}

func FuzzLoadStoreConfig(f *testing.F) {
	f.Add(`{"master_server_address":"m:1","global_segment_size":"2gb"}`, "MOONCAKE_MASTER=x")
	f.Add(`{"client_server_address":null}`, "MOONCAKE_CLIENT=c\nMOONCAKE_GLOBAL_SEGMENT_SIZE=4g")
	f.Add(`{"master_server_address":"m","check_server":"yes","master_metrics_port":"70000"}`, "")
	f.Add(`[1,2]`, "MOONCAKE_MASTER=m\nMOONCAKE_CHECK_SERVER=n\nMOONCAKE_TENANT_ID= ")
	f.Add(`{"master_server_address":1e400}`, "")
	f.Fuzz(func(t *testing.T, extraJSON, envBlob string) {
		env := map[string]string{}
		for _, line := range strings.Split(envBlob, "\n") {
			if k, v, ok := strings.Cut(line, "="); ok && k != hc.EnvSGLangConfigPath {
				env[k] = v
			}
		}
		extra, err := hc.ParseExtraConfig(extraJSON)
		if err != nil {
			if !errors.Is(err, hc.ErrInvalidConfig) {
				t.Fatalf("untyped error %v", err)
			}
			extra = nil
		}
		cfg, err := hc.LoadStoreConfig(extra, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		if err != nil {
			if !errors.Is(err, hc.ErrInvalidConfig) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if cfg.TenantID == "" || strings.TrimSpace(cfg.TenantID) != cfg.TenantID {
			t.Fatalf("tenant %q not normalised", cfg.TenantID)
		}
		if cfg.LocalBufferSize == 0 {
			t.Fatalf("zero local buffer size")
		}
		_ = cfg.ResolveDeviceName(0)
		_, _ = hc.OptionsFromExtraConfig(extra, hc.Options{})
		if _, err := json.Marshal(cfg); err != nil {
			t.Fatal(err)
		}
	})
}

var fuzzBatch hc.Batch

// FuzzPrepareV1 drives the whole hot path (meta + keys + packing) with
// arbitrary keys and indices on a small layer-first MLA pool.
func FuzzPrepareV1(f *testing.F) {
	f.Add("a\x00b", []byte{0, 0, 0, 1}, true)
	f.Add("", []byte{}, false)
	f.Add("x\x00y\x00z", []byte{0, 0, 0, 0, 0, 5}, false)
	mla, err := hc.NewMLAPool(hc.MLAConfig{Layers: 3, LatentDim: 8, DType: hc.BF16, PageSize: 4, Tokens: 16, Layout: hc.LayerFirst, Allocator: &ht.VirtualAllocator{}})
	if err != nil {
		f.Fatal(err)
	}
	mha, err := hc.NewMHAPool(hc.MHAConfig{Layers: 2, Heads: 2, HeadDim: 4, DType: hc.BF16, PageSize: 4, Tokens: 16, Layout: hc.PageFirst, Allocator: &ht.VirtualAllocator{}})
	if err != nil {
		f.Fatal(err)
	}
	beMLA, _ := hc.NewBackend(ht.NewFakeStore(), hc.Options{RankReplicated: true})
	beMHA, _ := hc.NewBackend(ht.NewFakeStore(), hc.Options{})
	if err := beMLA.RegisterPool(mla); err != nil {
		f.Fatal(err)
	}
	if err := beMHA.RegisterPool(mha); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, keyBlob string, rowBytes []byte, useMLA bool) {
		keys := strings.Split(keyBlob, "\x00")
		if keyBlob == "" {
			keys = nil
		}
		var rowsList []int
		for i := 0; i+1 < len(rowBytes); i += 2 {
			rowsList = append(rowsList, int(binary.BigEndian.Uint16(rowBytes[i:]))%8)
		}
		be, p := beMHA, hc.Pool(mha)
		if useMLA {
			be, p = beMLA, mla
		}
		// One Batch for every input exercises the key reuse paths.
		bt := &fuzzBatch
		err := be.PrepareV1(bt, keys, ht.TokenIndices(rowsList, 4))
		if err != nil {
			if !errors.Is(err, hc.ErrInvalidIndices) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		per, _ := p.EntriesPerPage()
		if len(bt.Buffers().Addrs) != len(keys)*per || bt.Buffers().Validate(bt.NumKeys()) != nil {
			t.Fatalf("inconsistent batch: %d keys, %d addrs", bt.NumKeys(), len(bt.Buffers().Addrs))
		}
		for i, k := range keys {
			want := refKeys(hc.KeyConfig{RankReplicated: useMLA, TPSize: 1, PPSize: 1}, k)
			for j, w := range want {
				if bt.Keys()[i*len(want)+j] != w {
					t.Fatalf("key %q, want %q", bt.Keys()[i*len(want)+j], w)
				}
			}
		}
	})
}
