package hostcache_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"

	"github.com/stretchr/testify/require"

	hc "github.com/mooncake-go/mooncake-go/hostcache"
	ht "github.com/mooncake-go/mooncake-go/hostcache/hostcachetest"
)

var propKinds = []string{"mha", "asymmetric_mha", "k_only_mha", "mla", "mla_kv_split", "dsa_indexer", "mamba", "deepseek_v4_paged", "deepseek_v4_state"}

// randomSpec returns a random small pool description (the layout may be
// unsupported for the kind; constructors must then fail cleanly).
func randomSpec(r *rand.Rand) (poolSpec, *poolSpec) {
	dts := []string{"bf16", "fp16", "fp8", "fp32", "uint8"}
	pick := func(xs ...int) int { return xs[r.IntN(len(xs))] }
	layout := hc.AllLayouts()[r.IntN(len(hc.AllLayouts()))].String()
	s := poolSpec{Layout: layout, Layers: 1 + r.IntN(5), DType: dts[r.IntN(len(dts))], PageSize: pick(1, 2, 3, 4, 5, 8, 16), Tokens: r.IntN(40)}
	kind := propKinds[r.IntN(len(propKinds))]
	s.Kind = kind
	var anchor *poolSpec
	switch kind {
	case "mha", "k_only_mha":
		s.Heads, s.HeadDim = 1+r.IntN(4), pick(1, 2, 4, 8)
		if s.Layout == "page_head" && r.IntN(2) == 0 {
			s.Heads = pick(2, 4, 6)
		}
	case "asymmetric_mha":
		s.Heads, s.HeadDim, s.VHeadDim = 1+r.IntN(3), pick(2, 4, 8), pick(1, 2, 4)
	case "mla":
		s.LatentDim = pick(1, 8, 24, 576)
	case "mla_kv_split":
		s.Kind, s.Layout = "mla", "page_first_kv_split"
		s.KVLoraRank, s.RopeDim = pick(1, 4, 16), pick(1, 2, 8)
		if r.IntN(2) == 0 {
			s.IndexHeadDim, s.IndexDType, s.IndexLayers, s.IndexScale = pick(4, 8), dts[r.IntN(len(dts))], 1+r.IntN(3), r.IntN(2) == 0
		}
		s.FP8DSA = r.IntN(3) == 0
	case "dsa_indexer":
		s.IndexHeadDim, s.QuantBlockSize = pick(8, 16, 128), pick(8, 16, 128)
		anchor = &poolSpec{Kind: "logical", Layout: layout, PageSize: s.PageSize, Tokens: s.Tokens}
	case "mamba":
		s.PageSize = 1
		s.TemporalShape = [][]int{{0}, {2}, {2, 3}}[r.IntN(3)]
		s.TemporalDType = "fp32"
		s.ConvShapes = [][]int{{1 + r.IntN(4)}}
		if r.IntN(2) == 0 {
			s.ConvShapes = append(s.ConvShapes, []int{2, 1 + r.IntN(3)})
		}
		s.ConvDType = "bf16"
	case "deepseek_v4_paged", "deepseek_v4_state":
		s.ItemBytes, s.NumPages = 1+r.IntN(200), 1+r.IntN(10)
	}
	return s, anchor
}

func buildSpec(s poolSpec, anchor *poolSpec, a hc.Allocator) (*hc.HostPool, error) {
	var ap hc.Pool
	if anchor != nil {
		p, err := anchor.build(a, nil)
		if err != nil {
			return nil, err
		}
		ap = p
	}
	return s.build(a, ap)
}

type interval struct {
	lo, hi uintptr
	page   int
}

// checkMeta verifies the layout invariants for the pages starting at the
// given rows: every entry lies inside one registered buffer, pages have
// EntriesPerPage entries summing to PageBytes, and no two entries overlap.
func checkMeta(t testing.TB, p hc.Pool, rowList []int, addrs []uintptr, sizes []uint64) {
	t.Helper()
	per, err := p.EntriesPerPage()
	if err != nil {
		t.Fatalf("%s: meta succeeded but EntriesPerPage fails: %v", p, err)
	}
	if len(addrs) != len(rowList)*per || len(sizes) != len(addrs) {
		t.Fatalf("%s: %d entries for %d pages of %d", p, len(addrs), len(rowList), per)
	}
	regs := hc.IterHostPoolBuffers(p)
	var ivs []interval
	for pg := range rowList {
		var sum uint64
		for e := pg * per; e < (pg+1)*per; e++ {
			a, s := addrs[e], sizes[e]
			if s == 0 {
				t.Fatalf("%s: entry %d has size 0", p, e)
			}
			sum += s
			inside := false
			for _, b := range regs {
				if b.Contains(a, s) {
					inside = true
					break
				}
			}
			if !inside {
				t.Fatalf("%s: entry %d [%#x,+%d) of row %d is outside every registered buffer", p, e, a, s, rowList[pg])
			}
			ivs = append(ivs, interval{a, a + uintptr(s), pg})
		}
		if sum != p.PageBytes() {
			t.Fatalf("%s: page bytes %d, PageBytes() %d", p, sum, p.PageBytes())
		}
	}
	sort.Slice(ivs, func(i, j int) bool { return ivs[i].lo < ivs[j].lo })
	for i := 1; i < len(ivs); i++ {
		if ivs[i].lo < ivs[i-1].hi {
			t.Fatalf("%s: entries of pages %d and %d overlap: [%#x,%#x) and [%#x,%#x)", p, ivs[i-1].page, ivs[i].page, ivs[i-1].lo, ivs[i-1].hi, ivs[i].lo, ivs[i].hi)
		}
	}
}

func TestPropertyLayouts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	built := map[string]int{}
	for iter := 0; iter < 3000; iter++ {
		s, anchor := randomSpec(r)
		p, err := buildSpec(s, anchor, &ht.VirtualAllocator{})
		if err != nil {
			var le *hc.LayoutError
			var ce *hc.ConfigError
			if !errors.As(err, &le) && !errors.As(err, &ce) {
				t.Fatalf("%+v: untyped error %v", s, err)
			}
			continue
		}
		per, err := p.EntriesPerPage()
		if err != nil {
			require.ErrorIs(t, err, hc.ErrUnsupportedLayout)
			continue
		}
		built[s.Kind+"/"+s.Layout]++
		// Random distinct rows in random order.
		n := 1 + r.IntN(p.PageNum())
		rowList := r.Perm(p.PageNum())[:n]
		idx := ht.TokenIndices(rowList, p.PageSize())
		addrs, sizes, err := hc.PageBufferMeta(p, idx)
		require.NoError(t, err)
		checkMeta(t, p, rowList, addrs, sizes)

		// Pack then flatten is the identity, with one key per page.
		keys := make([]string, n)
		off, err := hc.PackMultiBufferMeta(keys, addrs, sizes, nil)
		require.NoError(t, err)
		m := hostmem.Buffers{Addrs: addrs, Sizes: sizes, Offsets: off}
		require.NoError(t, m.Validate(n))
		require.Equal(t, per > 1, hc.UsesMultiBuffer(m))
		fa, fs := m.Flatten()
		require.Equal(t, addrs, fa)
		require.Equal(t, sizes, fs)
		na, ns := m.Nested()
		require.Len(t, na, n)
		for i := range na {
			require.Equal(t, p.PageBytes(), m.ObjectSize(i))
			require.Len(t, ns[i], per)
		}

		// Split heads, where available.
		if s.Kind == "mha" && s.Layout == "page_head" {
			for _, F := range []int{1, 2, 3} {
				sa, ss, err := p.SplitHeadsPageBufferMeta(nil, nil, idx, F)
				if s.Heads%F != 0 {
					require.ErrorIs(t, err, hc.ErrInvalidConfig)
					continue
				}
				require.NoError(t, err)
				require.Len(t, sa, 2*F*n)
				var total uint64
				for _, x := range ss {
					total += x
				}
				require.Equal(t, p.PageBytes()*uint64(n), total)
				// The split entries cover exactly the bytes of the unsplit ones.
				require.Equal(t, coverage(addrs, sizes), coverage(sa, ss))
			}
		}
	}
	for _, k := range []string{"mha/layer_first", "mha/page_head", "mla/layer_first", "mla/page_first_kv_split", "dsa_indexer/page_first", "mamba/page_first_direct", "deepseek_v4_paged/layer_first", "deepseek_v4_state/page_first", "asymmetric_mha/page_first", "k_only_mha/page_first_direct"} {
		require.Greater(t, built[k], 5, "too few %s pools generated", k)
	}
}

// coverage merges [a, a+s) intervals into a sorted canonical list.
func coverage(addrs []uintptr, sizes []uint64) [][2]uintptr {
	var iv [][2]uintptr
	for i, a := range addrs {
		iv = append(iv, [2]uintptr{a, a + uintptr(sizes[i])})
	}
	slices.SortFunc(iv, func(x, y [2]uintptr) int { return int(int64(x[0]) - int64(y[0])) })
	var out [][2]uintptr
	for _, x := range iv {
		if len(out) > 0 && out[len(out)-1][1] == x[0] {
			out[len(out)-1][1] = x[1]
			continue
		}
		out = append(out, x)
	}
	return out
}

// TestPropertyPagesTile checks that, for the contiguous page layouts, the
// pages of all rows tile the buffer exactly (no byte is shared or lost).
func TestPropertyPagesTile(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 500; iter++ {
		s, anchor := randomSpec(r)
		if s.Layout != "page_first_direct" || s.Kind == "dsa_indexer" || s.Kind == "mamba" {
			continue
		}
		p, err := buildSpec(s, anchor, &ht.VirtualAllocator{})
		if err != nil {
			continue
		}
		all := make([]int, p.PageNum())
		for i := range all {
			all[i] = i
		}
		addrs, sizes, err := hc.PageBufferMeta(p, ht.TokenIndices(all, p.PageSize()))
		require.NoError(t, err)
		var want [][2]uintptr
		for _, b := range hc.IterHostPoolBuffers(p) {
			want = append(want, [2]uintptr{b.Addr, b.End()})
		}
		got := coverage(addrs, sizes)
		require.Equal(t, coverage(bufAddrs(want)), got, "%s", p)
	}
}

func bufAddrs(iv [][2]uintptr) ([]uintptr, []uint64) {
	var a []uintptr
	var s []uint64
	for _, x := range iv {
		a = append(a, x[0])
		s = append(s, uint64(x[1]-x[0]))
	}
	return a, s
}

// TestPropertyRoundTrip writes random pages of random pools through the
// backend into the fake store and reads them back into a fresh pool: every
// byte of every page must come back, and pages not read stay untouched.
func TestPropertyRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	store := ht.NewFakeStore()
	done := 0
	for iter := 0; done < 150 && iter < 3000; iter++ {
		s, anchorSpec := randomSpec(r)
		if anchorSpec != nil || s.Kind == "k_only_mha" {
			continue // side pools are covered by the end-to-end cases
		}
		opts := hc.Options{RankReplicated: s.Kind == "mla" || s.Kind == "deepseek_v4_paged" || s.Kind == "deepseek_v4_state"}
		tag := fmt.Sprintf("prop%d", iter)
		opts.ExtraBackendTag = &tag
		alloc := ht.NewAllocator(t)
		a, err := s.build(alloc, nil)
		if err != nil {
			continue
		}
		if _, err := a.EntriesPerPage(); err != nil || (s.Kind == "mha" && s.Layout == "layer_first") {
			require.NoError(t, a.Close())
			continue
		}
		alloc.Fill = 0xEE
		b, err := s.build(alloc, nil)
		require.NoError(t, err)
		ht.FillPattern(a, uint64(iter+1))
		name := hc.PoolKV
		if s.Kind == "mamba" || s.Kind == "deepseek_v4_state" || s.Kind == "deepseek_v4_paged" {
			name = map[string]hc.PoolName{"mamba": hc.PoolMamba, "deepseek_v4_state": hc.PoolDeepSeekV4C4State, "deepseek_v4_paged": hc.PoolDeepSeekV4C4}[s.Kind]
			if s.Kind == "mamba" {
				opts.RankReplicated = false
			}
		}
		roundTrip(t, store, opts, name, a, b, r)
		require.NoError(t, a.Close())
		require.NoError(t, b.Close())
		done++
	}
	require.Equal(t, 150, done)
	require.Equal(t, 0, store.Registered())
}

func roundTrip(t *testing.T, store *ht.FakeStore, opts hc.Options, name hc.PoolName, a, b *hc.HostPool, r *rand.Rand) {
	t.Helper()
	be := func(p *hc.HostPool) *hc.Backend {
		x, err := hc.NewBackend(store, opts)
		require.NoError(t, err)
		if name == hc.PoolKV {
			require.NoError(t, x.RegisterPool(p))
			return x
		}
		anchor, err := hc.NewLogicalPool(hc.LogicalConfig{PageSize: 1, Tokens: 1, Layout: p.Layout()})
		require.NoError(t, err)
		require.NoError(t, x.RegisterPool(anchor))
		require.NoError(t, x.RegisterPoolV2(name, p))
		return x
	}
	wa, wb := be(a), be(b)
	defer func() { require.NoError(t, wa.Close()); require.NoError(t, wb.Close()) }()
	n := 1 + r.IntN(a.PageNum())
	ra := r.Perm(a.PageNum())[:n]
	rb := r.Perm(b.PageNum())[:n]
	keys := ht.TestKeys(fmt.Sprint(r.Uint64()), n, a.PageSize())
	var got []bool
	var err error
	if name == hc.PoolKV {
		got, err = wa.BatchSetV1(keys, ht.TokenIndices(ra, a.PageSize()), nil)
		require.NoError(t, err, "%s", a)
		require.NotContains(t, got, false)
		got, err = wb.BatchGetV1(keys, ht.TokenIndices(rb, b.PageSize()), nil)
	} else {
		var m map[hc.PoolName][]bool
		m, err = wa.BatchSetV2([]hc.PoolTransfer{{Name: name, Keys: keys, HostIndices: ht.TokenIndices(ra, a.PageSize())}})
		require.NoError(t, err, "%s", a)
		require.NotContains(t, m[name], false)
		m, err = wb.BatchGetV2([]hc.PoolTransfer{{Name: name, Keys: keys, HostIndices: ht.TokenIndices(rb, b.PageSize())}})
		got = m[name]
	}
	require.NoError(t, err, "%s", a)
	require.NotContains(t, got, false, "%s", a)
	read := map[int]bool{}
	for i := range ra {
		pa, err := ht.PageBytes(a, ra[i])
		require.NoError(t, err)
		pb, err := ht.PageBytes(b, rb[i])
		require.NoError(t, err)
		require.Equal(t, pa, pb, "%s: row %d -> %d", a, ra[i], rb[i])
		read[rb[i]] = true
	}
	for row := 0; row < b.PageNum(); row++ {
		if read[row] {
			continue
		}
		pb, err := ht.PageBytes(b, row)
		require.NoError(t, err)
		for _, x := range pb {
			if x != 0xEE {
				t.Fatalf("%s: row %d was not read but changed", b, row)
			}
		}
	}
}
