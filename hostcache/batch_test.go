package hostcache_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hc "github.com/mooncake-go/mooncake-go/hostcache"
	ht "github.com/mooncake-go/mooncake-go/hostcache/hostcachetest"
)

// TestBatchKeyReuse checks the Batch key arena: preparing the same page
// list again reuses the keys, changing a few pages rewrites only those, and
// anything else rebuilds — the keys always equal a fresh build.
func TestBatchKeyReuse(t *testing.T) {
	pool, err := hc.NewMHAPool(hc.MHAConfig{Layers: 1, Heads: 1, HeadDim: 2, DType: hc.BF16, PageSize: 2, Tokens: 64, Layout: hc.PageFirst, Allocator: &ht.VirtualAllocator{}})
	require.NoError(t, err)
	tag := "t"
	be, err := hc.NewBackend(ht.NewFakeStore(), hc.Options{ExtraBackendTag: &tag})
	require.NoError(t, err)
	require.NoError(t, be.RegisterPool(pool))
	scheme := be.KeyScheme()
	rowsOf := func(n int) []int64 {
		r := make([]int, n)
		for i := range r {
			r[i] = i
		}
		return ht.TokenIndices(r, 2)
	}
	base := ht.TestKeys("reuse", 16, 2)
	variants := map[string][]string{
		"same":           base,
		"one changed":    append(append(append([]string{}, base[:5]...), ht.TestKeys("x", 1, 2)...), base[6:]...),
		"all changed":    ht.TestKeys("other", 16, 2),
		"shorter key":    append([]string{"short"}, base[1:]...),
		"fewer pages":    base[:8],
		"more pages":     append(append([]string{}, base...), "extra"),
		"back to base":   base,
		"empty page key": append([]string{""}, base[1:]...),
	}
	order := []string{"same", "same", "one changed", "same", "all changed", "back to base", "shorter key", "back to base", "fewer pages", "more pages", "empty page key", "same"}
	var bt hc.Batch
	for _, name := range order {
		keys := variants[name]
		require.NoError(t, be.PrepareV1(&bt, keys, rowsOf(len(keys))), name)
		want := scheme.V1Keys(keys)
		require.Equal(t, want, bt.Keys(), name)
		for _, k := range bt.Keys() {
			require.True(t, strings.HasPrefix(k, "t_"), name)
		}
	}
	// A v2-style multi-segment batch after a cached v1 build still builds
	// every key correctly, and the next v1 build is still right.
	require.NoError(t, be.PrepareV1(&bt, base, rowsOf(16)))
	var other hostmem.Keys
	scheme.Build(&other, base, scheme.V1Suffixes())
	assert.Equal(t, other.Strings(), bt.Keys())
}

func TestKeysBuildReuse(t *testing.T) {
	s, err := hc.NewKeyScheme(hc.KeyConfig{RankReplicated: true})
	require.NoError(t, err)
	var k hostmem.Keys
	s.Build(&k, []string{"a", "bb"}, s.V1Suffixes())
	assert.Equal(t, []string{"a__k", "bb__k"}, k.Strings())
	first := k.String(0)
	s.Build(&k, []string{"c", "dd", "eee"}, s.V1Suffixes())
	assert.Equal(t, []string{"c__k", "dd__k", "eee__k"}, k.Strings())
	assert.Equal(t, "a__k", first, "a key taken as a string is a copy")
	s.Build(&k, nil, s.V1Suffixes())
	assert.Empty(t, k.Strings())
}

// TestHeldKeysDoNotChange: every string a caller or a Store sees is its own
// (strings are immutable), even though the backend rewrites its packed keys
// in place for the next batch: here a Store keeps the keys of the first
// call, and the next calls (same page list with one page changed, the
// in-place refresh path; then a new list) must not change them.
func TestHeldKeysDoNotChange(t *testing.T) {
	store := ht.NewFakeStore()
	var held [][]string
	store.Intercept = func(op ht.Op, keys []string, res []int64) ([]int64, error) {
		if op == ht.OpExist {
			held = append(held, keys)
		}
		return res, nil
	}
	alloc := ht.NewAllocator(t)
	pool, err := hc.NewMLAPool(hc.MLAConfig{Layers: 2, LatentDim: 8, DType: hc.BF16, PageSize: 4, Tokens: 16 * 4, Layout: hc.PageFirst, Allocator: alloc})
	require.NoError(t, err)
	be, err := hc.NewBackend(store, hc.Options{RankReplicated: true})
	require.NoError(t, err)
	require.NoError(t, be.RegisterPool(pool))
	defer func() {
		require.NoError(t, be.Close())
		require.NoError(t, pool.Close())
	}()
	keys := ht.TestKeys("held", 16, 4)
	_, err = be.BatchExists(keys)
	require.NoError(t, err)
	want := append([]string(nil), held[0]...)
	scheme := be.KeyScheme()
	first := scheme.V1Keys(keys)
	changed := append([]string(nil), keys...)
	changed[3] = strings.Repeat("f", len(keys[3])) // same length: rewritten in place
	_, err = be.BatchExists(changed)
	require.NoError(t, err)
	_, err = be.BatchExists(ht.TestKeys("other", 16, 4))
	require.NoError(t, err)
	require.Len(t, held, 3)
	assert.Equal(t, want, held[0], "the Store's strings of the first call")
	assert.Equal(t, first, scheme.V1Keys(keys))
	assert.Equal(t, scheme.V1Keys(changed), held[1], "the refresh path built the right keys")
	var bt hc.Batch
	require.NoError(t, be.PrepareV1(&bt, keys, ht.TokenIndices([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 4)))
	got := bt.Keys()
	require.NoError(t, be.PrepareV1(&bt, changed, ht.TokenIndices([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 4)))
	assert.Equal(t, first, got, "keys copied out of a batch stay as they were")
	assert.Equal(t, scheme.V1Keys(changed), bt.Keys())
}

// TestPrepareDoesNotAllocate guards the hot path: once a Batch has grown,
// preparing a batch (meta + keys + packing) allocates nothing, whether the
// page list repeats or changes.
func TestPrepareDoesNotAllocate(t *testing.T) {
	mla, err := hc.NewMLAPool(hc.MLAConfig{Layers: 61, LatentDim: 576, DType: hc.BF16, PageSize: 64, Tokens: 128 * 64, Layout: hc.LayerFirst, Allocator: &ht.VirtualAllocator{}})
	require.NoError(t, err)
	mha, err := hc.NewMHAPool(hc.MHAConfig{Layers: 32, Heads: 8, HeadDim: 128, DType: hc.BF16, PageSize: 64, Tokens: 128 * 64, Layout: hc.PageFirst, Allocator: &ht.VirtualAllocator{}})
	require.NoError(t, err)
	for _, c := range []struct {
		pool hc.Pool
		opts hc.Options
	}{{mla, hc.Options{RankReplicated: true}}, {mha, hc.Options{}}} {
		be, err := hc.NewBackend(ht.NewFakeStore(), c.opts)
		require.NoError(t, err)
		require.NoError(t, be.RegisterPool(c.pool))
		rowsList := make([]int, 128)
		for i := range rowsList {
			rowsList[i] = (i * 37) % 128
		}
		idx := ht.TokenIndices(rowsList, 64)
		ka, kb := ht.TestKeys("a", 128, 64), ht.TestKeys("b", 128, 64)
		var bt hc.Batch
		require.NoError(t, be.PrepareV1(&bt, ka, idx))
		require.NoError(t, be.PrepareV1(&bt, kb, idx))
		i := 0
		allocs := testing.AllocsPerRun(50, func() {
			k := ka
			if i&1 == 1 {
				k = kb
			}
			i++
			if err := be.PrepareV1(&bt, k, idx); err != nil {
				t.Fatal(err)
			}
		})
		assert.Zero(t, allocs, "%s", c.pool)
		allocs = testing.AllocsPerRun(50, func() {
			if err := be.PrepareV1(&bt, ka, idx); err != nil {
				t.Fatal(err)
			}
		})
		assert.Zero(t, allocs, "%s", c.pool)
	}
}

// TestBackendIOSteadyStateAllocs: whole BatchSetV1/BatchGetV1/BatchExists
// calls on the fake store allocate nothing at steady state, even across
// garbage collections (the backend keeps its scratch in GC-proof slots).
func TestBackendIOSteadyStateAllocs(t *testing.T) {
	store := ht.NewFakeStore()
	alloc := ht.NewAllocator(t)
	pool, err := hc.NewMLAPool(hc.MLAConfig{Layers: 8, LatentDim: 64, DType: hc.BF16, PageSize: 16, Tokens: 32 * 16, Layout: hc.LayerFirst, Allocator: alloc})
	require.NoError(t, err)
	defer pool.Close()
	be, err := hc.NewBackend(store, hc.Options{RankReplicated: true})
	require.NoError(t, err)
	defer be.Close()
	require.NoError(t, be.RegisterPool(pool))
	rowsList := make([]int, 32)
	for i := range rowsList {
		rowsList[i] = i
	}
	keys, idx := ht.TestKeys("steady", 32, 16), ht.TokenIndices(rowsList, 16)
	res, err := be.BatchSetV1(keys, idx, nil)
	require.NoError(t, err)
	run := func() {
		var err error
		if res, err = be.BatchSetV1(keys, idx, res); err != nil {
			t.Fatal(err)
		}
		if res, err = be.BatchGetV1(keys, idx, res); err != nil || !res[31] {
			t.Fatal(res, err)
		}
		if n, err := be.BatchExists(keys); err != nil || n != 32 {
			t.Fatal(n, err)
		}
	}
	run()
	assert.Zero(t, testing.AllocsPerRun(20, run))
	assert.Zero(t, testing.AllocsPerRun(5, func() { runtime.GC(); run() }), "after a GC")
}

// TestKeyBuildPaths compares every key-building path (word stores for
// 64-character hashes with one or two short suffixes, byte copies otherwise,
// the Batch reuse path) with plain string concatenation.
func TestKeyBuildPaths(t *testing.T) {
	hash := ht.TestKeys("paths", 6, 1)
	pageSets := [][]string{
		hash,
		{hash[0], "short", hash[1], "", hash[2] + "x", hash[3]},
		{strings.Repeat("z", 63), strings.Repeat("y", 65)},
	}
	suffixSets := [][]string{{"__k"}, {"_0_k", "_0_v"}, {"_12_1_k", "_12_1_v"}, {"_a", "_b", "_c"}, {"_long_suffix_here"},
		{"_0_k", "_0_v", "_1_k", "_1_v", "_2_k", "_2_v", "_3_k", "_3_v", "_4_k", "_4_v"}}
	tags := []*string{nil, new(string), func() *string { s := "tag"; return &s }(), func() *string { s := strings.Repeat("p", 70); return &s }()}
	for _, tag := range tags {
		s, err := hc.NewKeyScheme(hc.KeyConfig{ExtraBackendTag: tag})
		require.NoError(t, err)
		var k hostmem.Keys
		for _, pages := range pageSets {
			for _, sfx := range suffixSets {
				var want []string
				for _, p := range pages {
					for _, x := range sfx {
						want = append(want, s.Prefix()+p+x)
					}
				}
				s.Build(&k, pages, sfx)
				require.Equal(t, want, k.Strings())
			}
		}
	}
}
