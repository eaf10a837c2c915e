package hostcache_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hc "github.com/mooncake-go/mooncake-go/hostcache"
	ht "github.com/mooncake-go/mooncake-go/hostcache/hostcachetest"
	"github.com/mooncake-go/mooncake-go/internal/codes"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

type fixture struct {
	t     *testing.T
	store *ht.FakeStore
	alloc *ht.Allocator
	be    *hc.Backend
	pools []*hc.HostPool
}

func newFixture(t *testing.T, opts hc.Options) *fixture {
	t.Helper()
	f := &fixture{t: t, store: ht.NewFakeStore(), alloc: ht.NewAllocator(t)}
	be, err := hc.NewBackend(f.store, opts)
	require.NoError(t, err)
	f.be = be
	// The backend goes first: a pool refuses to close while the backend
	// has its buffers registered.
	t.Cleanup(func() {
		require.NoError(t, be.Close())
		for _, p := range f.pools {
			require.NoError(t, p.Close())
		}
	})
	return f
}

// pool keeps p for the fixture's cleanup, which closes it after the backend.
func (f *fixture) pool(p *hc.HostPool, err error) *hc.HostPool {
	f.t.Helper()
	require.NoError(f.t, err)
	f.pools = append(f.pools, p)
	ht.FillPattern(p, uint64(len(f.t.Name())))
	return p
}

func (f *fixture) mha(layout hc.Layout) *hc.HostPool {
	return f.pool(hc.NewMHAPool(hc.MHAConfig{Layers: 2, Heads: 2, HeadDim: 4, DType: hc.BF16, PageSize: 4, Tokens: 32, Layout: layout, Allocator: f.alloc}))
}

func (f *fixture) mla(layout hc.Layout) *hc.HostPool {
	return f.pool(hc.NewMLAPool(hc.MLAConfig{Layers: 3, LatentDim: 8, DType: hc.BF16, PageSize: 4, Tokens: 32, Layout: layout, Allocator: f.alloc}))
}

func keysN(n int) []string { return ht.TestKeys("backend", n, 4) }

func rows(r ...int) []int64 { return ht.TokenIndices(r, 4) }

func calls(s *ht.FakeStore, op ht.Op) int { c, _ := s.Calls(op); return c }

func keysOf(s *ht.FakeStore, op ht.Op) int { _, k := s.Calls(op); return k }

func TestSetV1PutsOnlyMissing(t *testing.T) {
	f := newFixture(t, hc.Options{})
	require.NoError(t, f.be.RegisterPool(f.mha(hc.PageFirst)))
	keys := keysN(4)
	res, err := f.be.BatchSetV1(keys[:2], rows(0, 1), nil)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true}, res)
	f.store.ResetStats()

	res, err = f.be.BatchSetV1(keys, rows(0, 1, 2, 3), res)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true, true, true}, res)
	assert.Equal(t, 1, calls(f.store, ht.OpExist))
	assert.Equal(t, 8, keysOf(f.store, ht.OpExist), "exists asks for K and V of every page")
	assert.Equal(t, 1, calls(f.store, ht.OpPut))
	assert.Equal(t, 4, keysOf(f.store, ht.OpPut), "only the 2 missing pages (K+V) are put")

	// Everything exists now: no put at all.
	f.store.ResetStats()
	res, err = f.be.BatchSetV1(keys, rows(0, 1, 2, 3), res)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true, true, true}, res)
	assert.Equal(t, 0, calls(f.store, ht.OpPut))

	n, err := f.be.BatchExists(keys)
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	assert.Len(t, f.store.Keys(), 8)
	assert.Contains(t, f.store.Keys(), keys[0]+"_0_k")
}

func TestMultiBufferDispatch(t *testing.T) {
	for _, tc := range []struct {
		layout hc.Layout
		multi  bool
	}{{hc.LayerFirst, true}, {hc.PageFirst, false}, {hc.PageFirstDirect, false}} {
		t.Run(tc.layout.String(), func(t *testing.T) {
			f := newFixture(t, hc.Options{RankReplicated: true})
			p := f.mla(tc.layout)
			require.NoError(t, f.be.RegisterPool(p))
			keys := keysN(3)
			res, err := f.be.BatchSetV1(keys, rows(2, 0, 5), nil)
			require.NoError(t, err)
			assert.Equal(t, []bool{true, true, true}, res)
			res, err = f.be.BatchGetV1(keys, rows(1, 3, 4), nil)
			require.NoError(t, err)
			assert.Equal(t, []bool{true, true, true}, res)
			putOp, getOp := ht.OpPut, ht.OpGet
			if tc.multi {
				putOp, getOp = ht.OpPutMulti, ht.OpGetMulti
			}
			assert.Equal(t, 1, calls(f.store, putOp))
			assert.Equal(t, 1, calls(f.store, getOp))
			obj, ok := f.store.Object(keys[0] + "__k")
			require.True(t, ok)
			assert.Len(t, obj, int(p.PageBytes()), "one object of L*P*C*is bytes per page")
			page, err := ht.PageBytes(p, 2)
			require.NoError(t, err)
			assert.Equal(t, page, obj, "object = concatenation of the page's buffers")

			var bt hc.Batch
			require.NoError(t, f.be.PrepareV1(&bt, keys, rows(0, 1, 2)))
			assert.Equal(t, tc.multi, bt.Multi())
			assert.Equal(t, tc.multi, hc.UsesMultiBuffer(bt.Buffers()))
			require.NoError(t, bt.Buffers().Validate(bt.NumKeys()))
		})
	}
}

func TestStoreFailures(t *testing.T) {
	keys := keysN(3)
	setup := func(t *testing.T) *fixture {
		f := newFixture(t, hc.Options{})
		require.NoError(t, f.be.RegisterPool(f.mha(hc.PageFirst)))
		return f
	}
	// A key that fails comes back as its store reports it: its results
	// entry, with an error beside the full results (the *BatchError of
	// *mooncake.Store). That fails the key's page, not the call; so does
	// a store that reports the entry alone.
	for name, keyErr := range map[string]error{
		"with the store's error": fmt.Errorf("1 of 6 keys failed: %w", &ht.CodeError{Op: ht.OpPut, Code: codes.StoreNoAvailableHandle}),
		"without an error":       nil,
	} {
		t.Run("put error code fails only that page, "+name, func(t *testing.T) {
			f := setup(t)
			f.store.Intercept = func(op ht.Op, k []string, r []int64) ([]int64, error) {
				if op == ht.OpPut {
					r[3] = codes.StoreNoAvailableHandle // V of page 1
					return r, keyErr
				}
				return r, nil
			}
			res, err := f.be.BatchSetV1(keys, rows(0, 1, 2), nil)
			require.NoError(t, err)
			assert.Equal(t, []bool{true, false, true}, res)
		})
	}
	for _, op := range []ht.Op{ht.OpExist, ht.OpPut, ht.OpGet} {
		t.Run("short result from "+string(op), func(t *testing.T) {
			f := setup(t)
			_, err := f.be.BatchSetV1(keys, rows(0, 1, 2), nil)
			if op == ht.OpGet {
				require.NoError(t, err)
			}
			f.store.Intercept = func(o ht.Op, k []string, r []int64) ([]int64, error) {
				if o == op {
					return r[:0], nil // e.g. an uninitialised client returning []
				}
				return r, nil
			}
			var res []bool
			if op == ht.OpGet {
				res, err = f.be.BatchGetV1(keys, rows(0, 1, 2), nil)
			} else {
				res, err = f.be.BatchSetV1(keysN(6)[3:], rows(3, 4, 5), nil)
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, hc.ErrResultCount)
			var rc *hc.ResultCountError
			require.ErrorAs(t, err, &rc)
			assert.Equal(t, string(op), rc.Op)
			assert.Equal(t, 0, rc.Got)
			assert.Equal(t, []bool{false, false, false}, res)
		})
	}
	t.Run("whole call fails", func(t *testing.T) {
		f := setup(t)
		boom := errors.New("boom")
		f.store.Intercept = func(ht.Op, []string, []int64) ([]int64, error) { return nil, boom }
		res, err := f.be.BatchGetV1(keys, rows(0, 1, 2), nil)
		assert.ErrorIs(t, err, hc.ErrStore)
		assert.ErrorIs(t, err, boom)
		assert.Equal(t, []bool{false, false, false}, res)
		_, err = f.be.BatchExists(keys)
		assert.ErrorIs(t, err, boom)
	})
	t.Run("whole call fails with results beside", func(t *testing.T) {
		// A store that fails a call as a whole returns no results; one
		// that returns results reports per key, whatever its error says.
		f := setup(t)
		_, err := f.be.BatchSetV1(keys, rows(0, 1, 2), nil)
		require.NoError(t, err)
		boom := errors.New("boom")
		f.store.Intercept = func(o ht.Op, k []string, r []int64) ([]int64, error) {
			if o == ht.OpGet {
				return r, boom
			}
			return r, nil
		}
		res, err := f.be.BatchGetV1(keys, rows(3, 4, 5), nil)
		require.NoError(t, err, "every key's entry is a success")
		assert.Equal(t, []bool{true, true, true}, res)
	})
	t.Run("get of a missing page and of a short object", func(t *testing.T) {
		f := setup(t)
		_, err := f.be.BatchSetV1(keys[:2], rows(0, 1), nil)
		require.NoError(t, err)
		res, err := f.be.BatchGetV1(keys, rows(3, 4, 5), nil)
		require.NoError(t, err)
		assert.Equal(t, []bool{true, true, false}, res)
		f.store.Intercept = func(o ht.Op, k []string, r []int64) ([]int64, error) {
			if o == ht.OpGet {
				r[0] = 8 // fewer bytes than the page holds
			}
			return r, nil
		}
		res, err = f.be.BatchGetV1(keys[:2], rows(3, 4), nil)
		require.NoError(t, err)
		assert.Equal(t, []bool{false, true}, res)
	})
}

// TestFakeStoreKeyErrors: the fake keeps *mooncake.Store's batch contract:
// keys that fail come back in full results with an error that names the
// first of them and its code; nothing failed, no error; a call refused as
// a whole has no results.
func TestFakeStoreKeyErrors(t *testing.T) {
	s := ht.NewFakeStore()
	mem, err := hostmem.Alloc(1<<16, hostmem.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, mem.Free()) }()
	base := mem.Addr()
	require.NoError(t, s.RegisterBuffer(base, 1<<16))
	one := func(n int) hostmem.Buffers {
		var b hostmem.Buffers
		for i := 0; i < n; i++ {
			b.Addrs = append(b.Addrs, base+uintptr(i*4096))
			b.Sizes = append(b.Sizes, 4096)
		}
		return b
	}
	res, err := s.BatchPutFrom(hostmem.PackKeys("a", "b"), one(2), nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 0}, res)

	res, err = s.BatchGetInto(hostmem.PackKeys("a", "missing", "b", "gone"), one(4), nil)
	assert.Equal(t, []int64{4096, codes.StoreObjectNotFound, 4096, codes.StoreObjectNotFound}, res, "full results beside the error")
	require.Error(t, err, "keys failed")
	assert.Contains(t, err.Error(), `2 of 4 keys failed; "missing"`)
	var ce *ht.CodeError
	require.ErrorAs(t, err, &ce)
	assert.EqualValues(t, codes.StoreObjectNotFound, ce.Code)
	assert.Equal(t, ht.OpGet, ce.Op)

	res, err = s.BatchIsExist(hostmem.PackKeys("a", "missing"), nil)
	require.NoError(t, err, "absent is an answer, not a failure")
	assert.Equal(t, []int64{1, 0}, res)

	bad := one(1)
	bad.Sizes[0] = 0
	res, err = s.BatchPutFrom(hostmem.PackKeys("c"), bad, nil)
	assert.Equal(t, []int64{codes.StoreInvalidParams}, res)
	require.ErrorAs(t, err, &ce)
	assert.EqualValues(t, codes.StoreInvalidParams, ce.Code)

	res, err = s.BatchGetInto(hostmem.PackKeys("a", "b"), one(1), nil)
	assert.Nil(t, res, "a malformed call is refused as a whole")
	assert.ErrorIs(t, err, hostmem.ErrShape)
	require.NoError(t, s.UnregisterBuffer(base))
	require.NoError(t, s.Close())
	res, err = s.BatchGetInto(hostmem.PackKeys("a"), one(1), nil)
	assert.Nil(t, res)
	assert.ErrorIs(t, err, ht.ErrClosed)
}

func TestBadIndicesNeverReachTheStore(t *testing.T) {
	f := newFixture(t, hc.Options{})
	p := f.mha(hc.PageFirst)
	require.NoError(t, f.be.RegisterPool(p))
	keys := keysN(2)
	for name, idx := range map[string][]int64{
		"too few":        rows(0),
		"not whole page": rows(0, 1)[:7],
		"misaligned":     {1, 2, 3, 4, 5, 6, 7, 8},
		"negative":       append([]int64{-4, 0, 0, 0}, rows(1)...),
		"out of range":   rows(0, p.PageNum()),
	} {
		t.Run(name, func(t *testing.T) {
			f.store.ResetStats()
			_, err := f.be.BatchSetV1(keys, idx, nil)
			assert.ErrorIs(t, err, hc.ErrInvalidIndices)
			_, err = f.be.BatchGetV1(keys, idx, nil)
			assert.ErrorIs(t, err, hc.ErrInvalidIndices)
			assert.Equal(t, 0, calls(f.store, ht.OpExist)+calls(f.store, ht.OpPut)+calls(f.store, ht.OpGet))
		})
	}
	_, err := f.be.BatchGetV1(nil, nil, nil)
	assert.ErrorIs(t, err, hc.ErrInvalidIndices)
	// Meta on error appends nothing.
	a := []uintptr{7}
	s := []uint64{9}
	a2, s2, err := p.AppendPageBufferMeta(a, s, rows(0, p.PageNum()))
	assert.Error(t, err)
	assert.Equal(t, []uintptr{7}, a2)
	assert.Equal(t, []uint64{9}, s2)
}

func TestMHALayerFirstRefused(t *testing.T) {
	f := newFixture(t, hc.Options{})
	require.NoError(t, f.be.RegisterPool(f.mha(hc.LayerFirst)), "registration accepts layer_first (SGLang PR)")
	_, err := f.be.BatchSetV1(keysN(1), rows(0), nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, hc.ErrUnsupportedLayout)
	assert.Contains(t, err.Error(), "MHA")
	assert.Equal(t, 0, calls(f.store, ht.OpExist))

	// A layer_first MHA side pool cannot be stored either: refused at registration.
	g := newFixture(t, hc.Options{})
	require.NoError(t, g.be.RegisterPool(g.mha(hc.PageFirst)))
	err = g.be.RegisterPoolV2(hc.PoolSWA, g.mha(hc.LayerFirst))
	assert.ErrorIs(t, err, hc.ErrUnsupportedLayout)
}

func TestRegistration(t *testing.T) {
	t.Run("buffers, dedupe and close", func(t *testing.T) {
		f := newFixture(t, hc.Options{})
		p := f.mha(hc.PageFirst)
		require.NoError(t, f.be.RegisterPool(p))
		assert.Equal(t, 2, f.store.Registered(), "MHA registers the K and V halves")
		// The same pool as draft: covered by existing registrations.
		require.NoError(t, f.be.RegisterPoolV2(hc.PoolDraft, p))
		assert.Equal(t, 2, f.store.Registered())
		require.NoError(t, f.be.RegisterPoolV2(hc.PoolKV, p), "kv is a no-op")
		err := f.be.RegisterPoolV2(hc.PoolDraft, p)
		assert.ErrorIs(t, err, hc.ErrInvalidConfig, "already registered")
		assert.Error(t, f.be.RegisterPool(p), "one anchor per backend")
		require.NoError(t, f.be.Close())
		assert.Equal(t, 0, f.store.Registered())
		require.NoError(t, f.be.Close(), "Close is idempotent")
		_, err = f.be.BatchExists(keysN(1))
		assert.ErrorIs(t, err, hc.ErrClosed)
	})
	t.Run("overlap refused and rolled back", func(t *testing.T) {
		f := newFixture(t, hc.Options{})
		// Two pools carved from one mapping so that they overlap.
		shared := &sliceAllocator{t: t, size: 1 << 20}
		a := f.pool(hc.NewMHAPool(hc.MHAConfig{Layers: 1, Heads: 1, HeadDim: 8, DType: hc.BF16, PageSize: 4, Tokens: 8, Layout: hc.PageFirst, Allocator: shared}))
		shared.next -= 64 // the next allocation overlaps the end of a
		side := f.pool(hc.NewMambaPool(hc.MambaConfig{Layers: 1, TemporalShape: []int{4}, TemporalDType: hc.FP32, ConvShapes: [][]int{{4}}, ConvDType: hc.BF16, Tokens: 4, Layout: hc.PageFirst, Allocator: shared}))
		require.NoError(t, f.be.RegisterPool(a))
		before := f.store.Registered()
		err := f.be.RegisterPoolV2(hc.PoolMamba, side)
		require.Error(t, err)
		assert.ErrorIs(t, err, hc.ErrOverlap)
		var re *hc.RegisterError
		require.ErrorAs(t, err, &re)
		assert.Equal(t, before, f.store.Registered(), "rolled back")
		_, err = f.be.BatchSetV2([]hc.PoolTransfer{{Name: hc.PoolMamba, Keys: keysN(1), HostIndices: []int64{0}}})
		assert.ErrorIs(t, err, hc.ErrUnregisteredPool)
	})
	t.Run("store refusal is reported and rolled back", func(t *testing.T) {
		f := newFixture(t, hc.Options{})
		p := f.mha(hc.PageFirst)
		v := p.Buffers()[2] // V half, registered second
		require.NoError(t, f.store.RegisterBuffer(v.Addr, v.Size))
		err := f.be.RegisterPool(p)
		var re *hc.RegisterError
		require.ErrorAs(t, err, &re)
		var ce *ht.CodeError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, int64(codes.StoreInvalidParams), ce.Code)
		assert.Equal(t, 1, f.store.Registered(), "the K half registered by this call was rolled back")
		require.NoError(t, f.store.UnregisterBuffer(v.Addr))
	})
	t.Run("order and kind checks", func(t *testing.T) {
		f := newFixture(t, hc.Options{})
		err := f.be.RegisterPoolV2(hc.PoolMamba, f.mha(hc.PageFirst))
		assert.ErrorIs(t, err, hc.ErrNotRegistered)
		assert.ErrorIs(t, f.be.RegisterPool(f.mla(hc.PageFirst)), hc.ErrInvalidConfig, "MLA needs RankReplicated")
		g := newFixture(t, hc.Options{RankReplicated: true})
		assert.ErrorIs(t, g.be.RegisterPool(g.mha(hc.PageFirst)), hc.ErrInvalidConfig, "MHA is not rank-replicated")
		require.NoError(t, g.be.RegisterPool(g.mla(hc.PageFirst)))
		assert.ErrorIs(t, g.be.RegisterPoolV2("unknown", g.mla(hc.PageFirst)), hc.ErrUnsupportedPool)
		_, err = g.be.BatchGetV2([]hc.PoolTransfer{{Name: hc.PoolIndexer, Keys: keysN(1), HostIndices: rows(0)}})
		assert.ErrorIs(t, err, hc.ErrUnregisteredPool)
	})
	t.Run("dummy pool registers nothing", func(t *testing.T) {
		f := newFixture(t, hc.Options{RankReplicated: true})
		p, err := hc.NewMLAPool(hc.MLAConfig{Layers: 2, LatentDim: 8, DType: hc.BF16, PageSize: 4, Tokens: 8, Layout: hc.LayerFirst, Dummy: true})
		require.NoError(t, err)
		require.NoError(t, f.be.RegisterPool(p))
		assert.Equal(t, 0, f.store.Registered())
		assert.Empty(t, hc.IterHostPoolBuffers(p))
		res, err := f.be.BatchGetV1(keysN(2), rows(0, 1), nil)
		require.NoError(t, err)
		assert.Equal(t, []bool{true, true}, res, "no kv_buffer: the anchor is treated as logical")
	})
}

// sliceAllocator carves regions out of one mapping at chosen offsets.
type sliceAllocator struct {
	t    *testing.T
	size uint64
	mem  hc.Region
	next uint64
}

func (a *sliceAllocator) Alloc(size uint64) (hc.Region, error) {
	if a.mem.Mem == nil {
		r, err := (&hc.MmapAllocator{}).Alloc(a.size)
		if err != nil {
			return r, err
		}
		a.mem = r
		a.t.Cleanup(func() { _ = (&hc.MmapAllocator{}).Free(a.mem) })
	}
	if a.next+size > a.size {
		return hc.Region{}, fmt.Errorf("out of space")
	}
	r := hc.RegionOf(a.mem.Mem[a.next : a.next+size])
	a.next += size
	return r, nil
}

func (a *sliceAllocator) Free(hc.Region) error { return nil }

func TestV2Aggregated(t *testing.T) {
	f := newFixture(t, hc.Options{RankReplicated: true})
	anchor := f.mla(hc.PageFirstDirect)
	require.NoError(t, f.be.RegisterPool(anchor))
	swa := f.pool(hc.NewV4PagedPool(hc.V4Config{Layers: 3, ItemBytes: 40, NumPages: 8, PageSize: 4, Layout: hc.LayerFirst, Allocator: f.alloc}))
	idx := f.pool(hc.NewDSAIndexerPool(anchor, hc.DSAIndexerConfig{Layers: 2, IndexHeadDim: 16, QuantBlockSize: 16, Allocator: f.alloc}))
	require.NoError(t, f.be.RegisterPoolV2(hc.PoolSWA, swa))
	require.NoError(t, f.be.RegisterPoolV2(hc.PoolIndexer, idx))
	assert.Equal(t, 1+3+1, f.store.Registered(), "kv + one region per SWA layer + indexer")
	keys := keysN(3)
	ts := []hc.PoolTransfer{
		{Name: hc.PoolSWA, Keys: keys, HostIndices: rows(0, 1, 2)},
		{Name: hc.PoolIndexer, Keys: keys, HostIndices: rows(3, 4, 5)},
	}
	var bt hc.Batch
	require.NoError(t, f.be.PrepareV2(&bt, ts, true))
	assert.True(t, bt.Multi(), "the layer_first SWA pages are packed")
	assert.Equal(t, []uint64{0, 3, 6, 9, 10, 11, 12}, bt.Buffers().Offsets, "3 SWA groups of 3 layers, then 3 single indexer buffers")
	assert.Equal(t, keys[0]+"__swa", bt.Keys()[0])
	assert.Equal(t, keys[0]+"__indexer", bt.Keys()[3])

	res, err := f.be.BatchSetV2(ts)
	require.NoError(t, err)
	assert.Equal(t, map[hc.PoolName][]bool{hc.PoolSWA: {true, true, true}, hc.PoolIndexer: {true, true, true}}, res)
	assert.Equal(t, 1, calls(f.store, ht.OpExist))
	assert.Equal(t, 1, calls(f.store, ht.OpPutMulti), "one put for every pool")
	res, err = f.be.BatchGetV2([]hc.PoolTransfer{
		{Name: hc.PoolSWA, Keys: keys, HostIndices: rows(5, 6, 7)},
		{Name: hc.PoolIndexer, Keys: keys, HostIndices: rows(0, 1, 2)},
	})
	require.NoError(t, err)
	assert.Equal(t, map[hc.PoolName][]bool{hc.PoolSWA: {true, true, true}, hc.PoolIndexer: {true, true, true}}, res)
	for i, r := range []int{0, 1, 2} {
		a, _ := ht.PageBytes(swa, r)
		b, _ := ht.PageBytes(swa, 5+i)
		assert.Equal(t, a, b)
	}
	_, err = f.be.BatchSetV2([]hc.PoolTransfer{{Name: hc.PoolSWA, Keys: keys, HostIndices: rows(0)}})
	assert.ErrorIs(t, err, hc.ErrInvalidIndices)
}

func TestSkipBackup(t *testing.T) {
	f := newFixture(t, hc.Options{TPRank: 1, TPSize: 2, RankReplicated: true})
	anchor := f.mla(hc.PageFirst)
	require.NoError(t, f.be.RegisterPool(anchor))
	mamba := f.pool(hc.NewMambaPool(hc.MambaConfig{Layers: 1, TemporalShape: []int{4}, TemporalDType: hc.FP32, ConvShapes: [][]int{{4}}, ConvDType: hc.BF16, Tokens: 8, Layout: hc.PageFirst, Allocator: f.alloc}))
	idx := f.pool(hc.NewDSAIndexerPool(anchor, hc.DSAIndexerConfig{Layers: 1, IndexHeadDim: 16, QuantBlockSize: 16, Allocator: f.alloc}))
	require.NoError(t, f.be.RegisterPoolV2(hc.PoolMamba, mamba))
	require.NoError(t, f.be.RegisterPoolV2(hc.PoolIndexer, idx))
	keys := keysN(2)
	res, err := f.be.BatchSetV1(keys, rows(0, 1), nil)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true}, res)
	assert.Equal(t, 0, calls(f.store, ht.OpExist), "rank 1 does not write rank-replicated KV")
	r2, err := f.be.BatchSetV2([]hc.PoolTransfer{
		{Name: hc.PoolIndexer, Keys: keys, HostIndices: rows(0, 1)},
		{Name: hc.PoolMamba, Keys: keys, HostIndices: []int64{0, 1}},
	})
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true}, r2[hc.PoolIndexer])
	assert.Equal(t, []bool{true, true}, r2[hc.PoolMamba])
	assert.Contains(t, f.store.Keys(), keys[0]+"_1_temporal", "mamba keys carry the TP rank")
	assert.Len(t, f.store.Keys(), 4, "only the rank-local mamba objects were written")
}

func TestBatchExistsV2Policies(t *testing.T) {
	f := newFixture(t, hc.Options{RankReplicated: true})
	anchor := f.pool(hc.NewLogicalPool(hc.LogicalConfig{PageSize: 4, Tokens: 32, Layout: hc.PageFirst}))
	require.NoError(t, f.be.RegisterPool(anchor))
	mk := func() *hc.HostPool {
		return f.pool(hc.NewV4PagedPool(hc.V4Config{Layers: 1, ItemBytes: 16, NumPages: 8, PageSize: 4, Layout: hc.PageFirst, Allocator: f.alloc}))
	}
	a, b := mk(), mk()
	require.NoError(t, f.be.RegisterPoolV2(hc.PoolDeepSeekV4C4, a))
	require.NoError(t, f.be.RegisterPoolV2(hc.PoolDeepSeekV4C4State, b))
	keys := keysN(5)
	write := func(name hc.PoolName, pagesPresent ...int) {
		var ks []string
		var rs []int
		for _, p := range pagesPresent {
			ks = append(ks, keys[p])
			rs = append(rs, p)
		}
		res, err := f.be.BatchSetV2([]hc.PoolTransfer{{Name: name, Keys: ks, HostIndices: rows(rs...)}})
		require.NoError(t, err)
		for _, ok := range res[name] {
			require.True(t, ok)
		}
	}
	write(hc.PoolDeepSeekV4C4, 0, 1, 2, 4)      // exists [T,T,T,F,T]
	write(hc.PoolDeepSeekV4C4State, 0, 1, 3, 4) // exists [T,T,F,T,T]
	tr := func(name hc.PoolName, policy hc.HitPolicy, window int) hc.PoolTransfer {
		return hc.PoolTransfer{Name: name, Keys: make([]string, window), HitPolicy: policy}
	}
	cases := []struct {
		name string
		ts   []hc.PoolTransfer
		want hc.PoolTransferResult
	}{
		{"no transfers: logical anchor gives every page", nil,
			hc.PoolTransferResult{Pages: 5, Hits: map[hc.PoolName]int{hc.PoolKV: 5}, Restorable: []int{1, 2, 3, 4, 5}}},
		{"all pages stops at the first hole", []hc.PoolTransfer{tr(hc.PoolDeepSeekV4C4, hc.AllPages, 1)},
			hc.PoolTransferResult{Pages: 3, Hits: map[hc.PoolName]int{hc.PoolKV: 5, hc.PoolDeepSeekV4C4: 3}, Restorable: []int{1, 2, 3}}},
		{"trailing window 1 skips holes", []hc.PoolTransfer{tr(hc.PoolDeepSeekV4C4State, hc.TrailingPages, 1)},
			hc.PoolTransferResult{Pages: 5, Hits: map[hc.PoolName]int{hc.PoolKV: 5, hc.PoolDeepSeekV4C4State: 5}, Restorable: []int{1, 2, 4, 5}}},
		{"trailing window 2", []hc.PoolTransfer{tr(hc.PoolDeepSeekV4C4State, hc.TrailingPages, 2)},
			hc.PoolTransferResult{Pages: 5, Hits: map[hc.PoolName]int{hc.PoolKV: 5, hc.PoolDeepSeekV4C4State: 5}, Restorable: []int{1, 2, 5}}},
		{"two trailing pools intersect their stop points", []hc.PoolTransfer{tr(hc.PoolDeepSeekV4C4, hc.TrailingPages, 2), tr(hc.PoolDeepSeekV4C4State, hc.TrailingPages, 1)},
			// c4 (window 2) allows {1,2,3}; state (window 1) allows {1,2,4,5}. A plain
			// minimum of the boundaries (3) would restore page 3 whose state is missing.
			hc.PoolTransferResult{Pages: 2, Hits: map[hc.PoolName]int{hc.PoolKV: 5, hc.PoolDeepSeekV4C4: 3, hc.PoolDeepSeekV4C4State: 5}, Restorable: []int{1, 2}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := f.be.BatchExistsV2(keys, c.ts)
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
	_, err := f.be.BatchExistsV2(keys, []hc.PoolTransfer{{Name: hc.PoolDeepSeekV4C4, HitPolicy: 9}})
	assert.ErrorIs(t, err, hc.ErrInvalidConfig)
	got, err := f.be.BatchExistsV2(append([]string{"missing"}, keys...), []hc.PoolTransfer{tr(hc.PoolDeepSeekV4C4, hc.AllPages, 1)})
	require.NoError(t, err)
	assert.Equal(t, 0, got.Pages)
	assert.Equal(t, map[hc.PoolName]int{hc.PoolKV: 6}, got.Hits, "a pool whose boundary is 0 is not reported")
}

func TestSplitHeadsBackend(t *testing.T) {
	f := newFixture(t, hc.Options{TPRank: 1, TPSize: 2, TPLCMSize: 4})
	p := f.mha(hc.PageHead)
	require.NoError(t, f.be.RegisterPool(p))
	assert.Equal(t, 2, f.be.SplitFactor())
	keys := keysN(2)
	var bt hc.Batch
	require.NoError(t, f.be.PrepareV1(&bt, keys, rows(0, 1)))
	assert.Equal(t, []string{keys[0] + "_2_k", keys[0] + "_2_v", keys[0] + "_3_k", keys[0] + "_3_v"}, bt.Keys()[:4])
	assert.Equal(t, 4, bt.KeysPerPage())
	res, err := f.be.BatchSetV1(keys, rows(0, 1), nil)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true}, res)
	n, err := f.be.BatchExists(keys)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	_, err = hc.NewBackend(f.store, hc.Options{TPSize: 2, TPLCMSize: 3})
	assert.ErrorIs(t, err, hc.ErrInvalidConfig)
}

func TestConcurrentIO(t *testing.T) {
	f := newFixture(t, hc.Options{RankReplicated: true})
	p := f.mla(hc.LayerFirst)
	require.NoError(t, f.be.RegisterPool(p))
	keys := keysN(8)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				k := keys[2*g : 2*g+2]
				r := rows(2*g, 2*g+1)
				if res, err := f.be.BatchSetV1(k, r, nil); err != nil || !res[0] || !res[1] {
					t.Errorf("set: %v %v", res, err)
					return
				}
				if res, err := f.be.BatchGetV1(k, r, nil); err != nil || !res[0] || !res[1] {
					t.Errorf("get: %v %v", res, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
}

func TestClear(t *testing.T) {
	f := newFixture(t, hc.Options{})
	require.NoError(t, f.be.RegisterPool(f.mha(hc.PageFirst)))
	_, err := f.be.BatchSetV1(keysN(1), rows(0), nil)
	require.NoError(t, err)
	require.NoError(t, f.be.Clear())
	assert.Empty(t, f.store.Keys())
}

func TestPoolGroupDelegates(t *testing.T) {
	f := newFixture(t, hc.Options{RankReplicated: true})
	anchor := f.mla(hc.PageFirst)
	idx := f.pool(hc.NewDSAIndexerPool(anchor, hc.DSAIndexerConfig{Layers: 1, IndexHeadDim: 16, QuantBlockSize: 16, Allocator: f.alloc}))
	g, err := hc.NewPoolGroup(anchor, hc.PoolEntry{Name: hc.PoolIndexer, Pool: idx})
	require.NoError(t, err)
	assert.Equal(t, hc.KindGroup, g.Kind())
	assert.Equal(t, anchor.PageNum(), g.PageNum())
	_, ok := g.HybridPoolBuffers()
	assert.False(t, ok)
	assert.Equal(t, hc.IterHostPoolBuffers(anchor), hc.IterHostPoolBuffers(g))
	a1, s1, err := hc.PageBufferMeta(g, rows(1))
	require.NoError(t, err)
	a2, s2, _ := hc.PageBufferMeta(anchor, rows(1))
	assert.Equal(t, a1, a2)
	assert.Equal(t, s1, s2)
	require.NoError(t, f.be.RegisterPoolGroup(g))
	assert.Equal(t, 2, f.store.Registered())
	_, err = hc.NewPoolGroup(anchor, hc.PoolEntry{Name: hc.PoolKV, Pool: idx})
	assert.ErrorIs(t, err, hc.ErrInvalidConfig)
	_, err = hc.NewPoolGroup(g)
	assert.ErrorIs(t, err, hc.ErrInvalidConfig)
}

// TestPoolCloseRefusedWhileRegistered: the store may still transfer into a
// registered pool, so its memory outlives the registration.
func TestPoolCloseRefusedWhileRegistered(t *testing.T) {
	st := ht.NewFakeStore()
	be, err := hc.NewBackend(st, hc.Options{RankReplicated: true})
	require.NoError(t, err)
	pool, err := hc.NewMLAPool(hc.MLAConfig{Layers: 3, LatentDim: 8, DType: hc.BF16, PageSize: 4, Tokens: 32, Layout: hc.LayerFirst})
	require.NoError(t, err)
	require.NoError(t, be.RegisterPool(pool))
	err = pool.Close()
	require.ErrorIs(t, err, hostmem.ErrRegistered)
	// Refused whole: the pool still works.
	res, err := be.BatchSetV1(keysN(2), rows(0, 1), nil)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true}, res)
	require.NoError(t, be.Close())
	require.NoError(t, pool.Close())
	require.NoError(t, pool.Close(), "idempotent")
}
