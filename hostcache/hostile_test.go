package hostcache_test

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hc "github.com/mooncake-go/mooncake-go/hostcache"
	ht "github.com/mooncake-go/mooncake-go/hostcache/hostcachetest"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// Inputs a hostile or careless caller gives: nil and typed-nil values,
// sizes at the edges of int, absurd geometry. Each gets a typed error or a
// documented value, never a panic or a wrapped number.
func TestHostileInputs(t *testing.T) {
	var typedNilPool *hc.HostPool
	var typedNilGroup *hc.PoolGroup
	var typedNilStore *ht.FakeStore
	for _, tc := range []struct {
		name string
		call func() error
		want error
	}{
		{"NewBackend(typed nil store)", func() error { _, err := hc.NewBackend(typedNilStore, hc.Options{}); return err }, hc.ErrInvalidConfig},
		{"NewBackend(nil)", func() error { _, err := hc.NewBackend(nil, hc.Options{}); return err }, hc.ErrInvalidConfig},
		{"RegisterPool(typed nil)", func() error { return newBackend(t).RegisterPool(typedNilPool) }, hc.ErrInvalidConfig},
		{"RegisterPool(typed nil group)", func() error { return newBackend(t).RegisterPool(typedNilGroup) }, hc.ErrInvalidConfig},
		{"RegisterPoolV2(typed nil)", func() error { return newBackend(t).RegisterPoolV2(hc.PoolName("indexer"), typedNilPool) }, hc.ErrInvalidConfig},
		{"RegisterPoolGroup(nil)", func() error { return newBackend(t).RegisterPoolGroup(nil) }, hc.ErrInvalidConfig},
		{"NewPoolGroup(typed nil anchor)", func() error { _, err := hc.NewPoolGroup(typedNilPool); return err }, hc.ErrInvalidConfig},
		{"NewPoolGroup(typed nil entry)", func() error {
			_, err := hc.NewPoolGroup(mla(t, 4, 1), hc.PoolEntry{Name: "indexer", Pool: typedNilPool})
			return err
		}, hc.ErrInvalidConfig},
		{"PageBufferMeta(nil)", func() error { _, _, err := hc.PageBufferMeta(nil, []int64{0}); return err }, hc.ErrInvalidConfig},
		{"PageBufferMeta(typed nil)", func() error { _, _, err := hc.PageBufferMeta(typedNilPool, []int64{0}); return err }, hc.ErrInvalidConfig},
		{"2^31 layers", func() error {
			_, err := hc.NewMLAPool(hc.MLAConfig{Layers: 1 << 31, LatentDim: 576, DType: hc.BF16, PageSize: 1, Tokens: 2,
				Layout: hc.LayerFirst, Allocator: &ht.VirtualAllocator{}})
			return err
		}, hc.ErrInvalidConfig},
		{"MaxLayers+1 (MHA)", func() error {
			_, err := hc.NewMHAPool(hc.MHAConfig{Layers: hc.MaxLayers + 1, Heads: 8, HeadDim: 128, DType: hc.BF16, PageSize: 1, Tokens: 2,
				Layout: hc.LayerFirst, Allocator: &ht.VirtualAllocator{}})
			return err
		}, hc.ErrInvalidConfig},
		{"ParseLayout", func() error { _, err := hc.ParseLayout("sideways"); return err }, hc.ErrInvalidConfig},
		{"ParseDType", func() error { _, err := hc.ParseDType("fp3"); return err }, hc.ErrInvalidConfig},
		{"RegisterPool on a store that refuses", func() error {
			st := ht.NewFakeStore()
			b, err := hc.NewBackend(st, hc.Options{RankReplicated: true})
			require.NoError(t, err)
			require.NoError(t, st.Close())
			return b.RegisterPool(mla(t, 4, 1))
		}, hc.ErrRegister},
		{"Buffers with no offsets", func() error { return hostmem.Buffers{Offsets: []uint64{}}.Validate(1) }, hostmem.ErrShape},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = tc.call() })
			require.Error(t, err)
			assert.True(t, errors.Is(err, tc.want), "%v is not %v", err, tc.want)
		})
	}
	// A refused registration names its cause as well as ErrRegister.
	st := ht.NewFakeStore()
	b, err := hc.NewBackend(st, hc.Options{RankReplicated: true})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	err = b.RegisterPool(mla(t, 4, 1))
	assert.ErrorIs(t, err, hc.ErrRegister)
	assert.ErrorIs(t, err, ht.ErrClosed)
	var re *hc.RegisterError
	require.ErrorAs(t, err, &re)
	assert.NotZero(t, re.Addr)

	assert.Empty(t, hc.IterHostPoolBuffers(typedNilPool))
	assert.Empty(t, hc.IterHostPoolBuffers(typedNilGroup))

	// Sizing saturates or gives 0; it never wraps negative.
	assert.Equal(t, math.MaxInt, hc.PageCount(math.MaxInt, 1))
	assert.Equal(t, math.MaxInt/2+1, hc.PageCount(math.MaxInt, 2))
	assert.Equal(t, 0, hc.RequestedTokensFromHostSize(math.Inf(1), 1))
	assert.Equal(t, 0, hc.RequestedTokensFromHostSize(math.NaN(), 1))
	assert.Equal(t, math.MaxInt, hc.RequestedTokensFromHostSize(math.MaxFloat64, 1))

	// No suffixes: one key per page, not none.
	s, err := hc.NewKeyScheme(hc.KeyConfig{})
	require.NoError(t, err)
	var k hostmem.Keys
	s.Build(&k, []string{"a", "b"}, nil)
	assert.Equal(t, []string{"a", "b"}, k.Strings())
}

func newBackend(t *testing.T) *hc.Backend {
	b, err := hc.NewBackend(ht.NewFakeStore(), hc.Options{})
	require.NoError(t, err)
	return b
}

func mla(t *testing.T, pages, pageSize int) *hc.HostPool {
	p, err := hc.NewMLAPool(hc.MLAConfig{Layers: 2, LatentDim: 8, DType: hc.BF16, PageSize: pageSize, Tokens: pages * pageSize,
		Layout: hc.LayerFirst, Allocator: &ht.VirtualAllocator{}})
	require.NoError(t, err)
	return p
}
