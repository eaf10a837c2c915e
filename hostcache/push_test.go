package hostcache_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hc "github.com/mooncake-go/mooncake-go/hostcache"
	ht "github.com/mooncake-go/mooncake-go/hostcache/hostcachetest"
)

// remoteOf lists a pool's registered buffers as a peer would see them.
func remoteOf(p hc.Pool) []hc.RemoteBuffer {
	var out []hc.RemoteBuffer
	for _, b := range hc.IterHostPoolBuffers(p) {
		out = append(out, hc.RemoteBuffer{Addr: uint64(b.Addr), Size: b.Size})
	}
	return out
}

// apply runs copies between two pools of this process.
func apply(t *testing.T, from, to hc.Pool, copies []hc.Copy) {
	t.Helper()
	at := func(p hc.Pool, addr uintptr, n uint64) []byte {
		for _, b := range hc.IterHostPoolBuffers(p) {
			if b.Contains(addr, n) {
				off := uint64(addr - b.Addr)
				return b.Mem[off : off+n]
			}
		}
		t.Fatalf("copy [%#x, +%d) outside %s", addr, n, p)
		return nil
	}
	for _, c := range copies {
		copy(at(to, uintptr(c.Remote), c.Length), at(from, c.Local, c.Length))
	}
}

func TestPushMovesPagesExactly(t *testing.T) {
	cases := []struct {
		name string
		make func(hc.Allocator) (*hc.HostPool, error)
	}{
		{"MLA layer_first", func(a hc.Allocator) (*hc.HostPool, error) {
			return hc.NewMLAPool(hc.MLAConfig{Layers: 5, LatentDim: 24, DType: hc.BF16, PageSize: 4, Tokens: 64, Layout: hc.LayerFirst, Allocator: a})
		}},
		{"MLA page_first", func(a hc.Allocator) (*hc.HostPool, error) {
			return hc.NewMLAPool(hc.MLAConfig{Layers: 5, LatentDim: 24, DType: hc.BF16, PageSize: 4, Tokens: 64, Layout: hc.PageFirst, Allocator: a})
		}},
		{"MHA page_first", func(a hc.Allocator) (*hc.HostPool, error) {
			return hc.NewMHAPool(hc.MHAConfig{Layers: 3, Heads: 2, HeadDim: 8, DType: hc.BF16, PageSize: 4, Tokens: 64, Layout: hc.PageFirst, Allocator: a})
		}},
		{"MHA layer_first", func(a hc.Allocator) (*hc.HostPool, error) {
			return hc.NewMHAPool(hc.MHAConfig{Layers: 3, Heads: 2, HeadDim: 8, DType: hc.BF16, PageSize: 4, Tokens: 64, Layout: hc.LayerFirst, Allocator: a})
		}},
		{"MHA page_head", func(a hc.Allocator) (*hc.HostPool, error) {
			return hc.NewMHAPool(hc.MHAConfig{Layers: 3, Heads: 2, HeadDim: 8, DType: hc.BF16, PageSize: 4, Tokens: 64, Layout: hc.PageHead, Allocator: a})
		}},
	}
	pageLists := map[string][2][]int{
		"consecutive": {{1, 2, 3, 4, 5}, {7, 8, 9, 10, 11}},
		"scattered":   {{9, 2, 3, 0, 14}, {1, 5, 6, 12, 3}},
		"one page":    {{4}, {4}},
	}
	for _, c := range cases {
		for name, pl := range pageLists {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				alloc := ht.NewAllocator(t)
				local, err := c.make(alloc)
				require.NoError(t, err)
				defer local.Close()
				remote, err := c.make(alloc)
				require.NoError(t, err)
				defer remote.Close()
				ht.FillPattern(local, 1)
				ht.FillPattern(remote, 2)
				peer, err := hc.NewPeer(local, remote.Fingerprint(), remoteOf(remote))
				require.NoError(t, err)
				copies, err := peer.AppendPush(nil, ht.TokenIndices(pl[0], 4), ht.TokenIndices(pl[1], 4))
				require.NoError(t, err)
				apply(t, local, remote, copies)
				for i := range pl[0] {
					want, err := ht.PageBytes(local, pl[0][i])
					require.NoError(t, err)
					got, err := ht.PageBytes(remote, pl[1][i])
					require.NoError(t, err)
					require.True(t, bytes.Equal(want, got), "page %d -> %d", pl[0][i], pl[1][i])
				}
				// Nothing else of the remote pool changed.
				untouched := map[int]bool{}
				for _, r := range pl[1] {
					untouched[r] = true
				}
				fresh, err := c.make(alloc)
				require.NoError(t, err)
				defer fresh.Close()
				ht.FillPattern(fresh, 2)
				for row := 0; row < remote.PageNum(); row++ {
					if untouched[row] {
						continue
					}
					a, _ := ht.PageBytes(remote, row)
					b, _ := ht.PageBytes(fresh, row)
					require.True(t, bytes.Equal(a, b), "page %d was written", row)
				}
			})
		}
	}
}

// TestPushCoalesces: consecutive pages on both sides become one copy per
// layer; SGLang's DeepSeek-V3 batch of 128 layer-first pages is 61 copies.
func TestPushCoalesces(t *testing.T) {
	local, err := hc.NewMLAPool(hc.MLAConfig{Layers: 61, LatentDim: 576, DType: hc.BF16, PageSize: 1, Tokens: 256, Layout: hc.LayerFirst, Allocator: &ht.VirtualAllocator{}})
	require.NoError(t, err)
	remote, err := hc.NewMLAPool(hc.MLAConfig{Layers: 61, LatentDim: 576, DType: hc.BF16, PageSize: 1, Tokens: 256, Layout: hc.LayerFirst, Allocator: &ht.VirtualAllocator{Base: 1 << 40}})
	require.NoError(t, err)
	peer, err := hc.NewPeer(local, remote.Fingerprint(), remoteOf(remote))
	require.NoError(t, err)
	rows := make([]int, 128)
	for i := range rows {
		rows[i] = i
	}
	shifted := make([]int, 128)
	for i := range shifted {
		shifted[i] = i + 100
	}
	copies, err := peer.AppendPush(nil, ht.TokenIndices(rows, 1), ht.TokenIndices(shifted, 1))
	require.NoError(t, err)
	assert.Len(t, copies, 61)
	var total uint64
	for _, c := range copies {
		total += c.Length
		assert.EqualValues(t, 128*1152, c.Length)
	}
	assert.EqualValues(t, 128*61*1152, total)
	// Two runs of pages: two copies per layer.
	rows[64], shifted[64] = 200, 20
	copies, err = peer.AppendPush(copies[:0], ht.TokenIndices(rows, 1), ht.TokenIndices(shifted, 1))
	require.NoError(t, err)
	assert.Len(t, copies, 61*3)
	per, err := peer.AppendPushPerBuffer(nil, ht.TokenIndices(rows, 1), ht.TokenIndices(shifted, 1))
	require.NoError(t, err)
	assert.Len(t, per, 128*61, "one copy per page buffer")
	li, ri := ht.TokenIndices(rows, 1), ht.TokenIndices(shifted, 1)
	assert.Zero(t, testing.AllocsPerRun(10, func() {
		copies, _ = peer.AppendPush(copies[:0], li, ri)
	}), "a push plan into a reused slice allocates nothing")
}

func TestPushRefusesMismatches(t *testing.T) {
	mk := func(layout hc.Layout, layers int) *hc.HostPool {
		p, err := hc.NewMLAPool(hc.MLAConfig{Layers: layers, LatentDim: 24, DType: hc.BF16, PageSize: 4, Tokens: 64, Layout: layout, Allocator: &ht.VirtualAllocator{}})
		require.NoError(t, err)
		return p
	}
	local := mk(hc.LayerFirst, 5)
	for name, c := range map[string]struct {
		fp  string
		buf []hc.RemoteBuffer
	}{
		"other layout":   {mk(hc.PageFirst, 5).Fingerprint(), remoteOf(mk(hc.PageFirst, 5))},
		"other geometry": {mk(hc.LayerFirst, 6).Fingerprint(), remoteOf(mk(hc.LayerFirst, 6))},
		"wrong sizes":    {local.Fingerprint(), []hc.RemoteBuffer{{Addr: 1 << 30, Size: 100}}},
		"no buffers":     {local.Fingerprint(), nil},
		"null buffer":    {local.Fingerprint(), []hc.RemoteBuffer{{Addr: 0, Size: remoteOf(local)[0].Size}}},
	} {
		_, err := hc.NewPeer(local, c.fp, c.buf)
		assert.ErrorIs(t, err, hc.ErrPeerMismatch, name)
	}
	_, err := hc.NewPeer(nil, "", nil)
	assert.ErrorIs(t, err, hc.ErrInvalidConfig)
	var typedNil *hc.HostPool
	_, err = hc.NewPeer(typedNil, "", nil)
	assert.ErrorIs(t, err, hc.ErrInvalidConfig)
	peer, err := hc.NewPeer(local, local.Fingerprint(), remoteOf(mk(hc.LayerFirst, 5)))
	require.NoError(t, err)
	for name, idx := range map[string][2][]int64{
		"counts differ":  {ht.TokenIndices([]int{1, 2}, 4), ht.TokenIndices([]int{1}, 4)},
		"not whole page": {{0, 1, 2}, {0, 1, 2}},
		"misaligned":     {{1, 2, 3, 4}, {0, 1, 2, 3}},
		"outside":        {ht.TokenIndices([]int{1000}, 4), ht.TokenIndices([]int{1}, 4)},
		"empty":          {nil, nil},
	} {
		_, err := peer.AppendPush(nil, idx[0], idx[1])
		assert.ErrorIs(t, err, hc.ErrInvalidIndices, name)
	}
}

func TestMatchPoolBuffers(t *testing.T) {
	p, err := hc.NewMLAPool(hc.MLAConfig{Layers: 2, LatentDim: 8, DType: hc.BF16, PageSize: 4, Tokens: 16, Layout: hc.LayerFirst, Allocator: &ht.VirtualAllocator{}})
	require.NoError(t, err)
	mine := remoteOf(p)
	seg := append([]hc.RemoteBuffer{{Addr: 0x100, Size: 16 << 20}}, mine...)
	got, err := hc.MatchPoolBuffers(p, seg)
	require.NoError(t, err)
	assert.Equal(t, mine, got)
	_, err = hc.MatchPoolBuffers(p, seg[:1])
	assert.ErrorIs(t, err, hc.ErrPeerMismatch)
}

// BenchmarkPushPlan: the plan of a push of 128 layer-first DeepSeek-V3
// pages (61 layers of 1,152 B each).
func BenchmarkPushPlan(b *testing.B) {
	mk := func(base uintptr) *hc.HostPool {
		p, err := hc.NewMLAPool(hc.MLAConfig{Layers: 61, LatentDim: 576, DType: hc.BF16, PageSize: 1, Tokens: 1024, Layout: hc.LayerFirst, Allocator: &ht.VirtualAllocator{Base: base}})
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	local, remote := mk(0x1000), mk(1<<40)
	peer, err := hc.NewPeer(local, remote.Fingerprint(), remoteOf(remote))
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		off  int
	}{{"consecutive", 1}, {"scattered", 2}} {
		b.Run(tc.name, func(b *testing.B) {
			rows, dst := make([]int, 128), make([]int, 128)
			for i := range rows {
				rows[i], dst[i] = i*tc.off, 500+i*tc.off
			}
			li, ri := ht.TokenIndices(rows, 1), ht.TokenIndices(dst, 1)
			copies, err := peer.AppendPush(nil, li, ri)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				copies, _ = peer.AppendPush(copies[:0], li, ri)
			}
			b.ReportMetric(float64(len(copies)), "copies/op")
		})
	}
}

// TestPushGenericPath: a pool group goes through the page meta (the path
// for pools without a single address plan) and moves the same bytes.
func TestPushGenericPath(t *testing.T) {
	alloc := ht.NewAllocator(t)
	mk := func() *hc.PoolGroup {
		a, err := hc.NewMLAPool(hc.MLAConfig{Layers: 3, LatentDim: 8, DType: hc.BF16, PageSize: 4, Tokens: 64, Layout: hc.LayerFirst, Allocator: alloc})
		require.NoError(t, err)
		g, err := hc.NewPoolGroup(a)
		require.NoError(t, err)
		return g
	}
	local, remote := mk(), mk()
	defer local.Close()
	defer remote.Close()
	ht.FillPattern(local.Anchor(), 5)
	peer, err := hc.NewPeer(local, remote.Fingerprint(), remoteOf(remote))
	require.NoError(t, err)
	copies, err := peer.AppendPush(nil, ht.TokenIndices([]int{1, 2, 3}, 4), ht.TokenIndices([]int{4, 5, 6}, 4))
	require.NoError(t, err)
	assert.Len(t, copies, 3, "one copy per layer for three consecutive pages")
	apply(t, local, remote, copies)
	for i, row := range []int{1, 2, 3} {
		want, _ := ht.PageBytes(local.Anchor(), row)
		got, _ := ht.PageBytes(remote.Anchor(), row+3)
		require.True(t, bytes.Equal(want, got), "page %d", i)
	}
}

// FuzzPushPaths: for any page lists, the address-plan path and the generic
// page-meta path write the same bytes.
func FuzzPushPaths(f *testing.F) {
	f.Add([]byte{1, 2, 3}, []byte{4, 5, 6}, false)
	f.Add([]byte{9, 0, 3}, []byte{1, 1, 2}, true)
	f.Fuzz(func(t *testing.T, lrows, rrows []byte, mha bool) {
		n := min(len(lrows), len(rrows), 8)
		if n == 0 {
			return
		}
		mk := func(a hc.Allocator) *hc.HostPool {
			var p *hc.HostPool
			var err error
			if mha {
				p, err = hc.NewMHAPool(hc.MHAConfig{Layers: 2, Heads: 2, HeadDim: 4, DType: hc.BF16, PageSize: 2, Tokens: 32, Layout: hc.PageHead, Allocator: a})
			} else {
				p, err = hc.NewMLAPool(hc.MLAConfig{Layers: 3, LatentDim: 8, DType: hc.BF16, PageSize: 2, Tokens: 32, Layout: hc.LayerFirst, Allocator: a})
			}
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		alloc := &hc.MmapAllocator{}
		local, viaPlan, viaMeta := mk(alloc), mk(alloc), mk(alloc)
		defer local.Close()
		defer viaPlan.Close()
		defer viaMeta.Close()
		ht.FillPattern(local, 3)
		rows := func(b []byte) []int {
			out := make([]int, n)
			for i := range out {
				out[i] = int(b[i]) % local.PageNum()
			}
			return out
		}
		li, ri := ht.TokenIndices(rows(lrows), 2), ht.TokenIndices(rows(rrows), 2)
		g, err := hc.NewPoolGroup(local)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			from hc.Pool
			to   *hc.HostPool
		}{{local, viaPlan}, {g, viaMeta}} {
			peer, err := hc.NewPeer(c.from, c.to.Fingerprint(), remoteOf(c.to))
			if err != nil {
				t.Fatal(err)
			}
			copies, err := peer.AppendPush(nil, li, ri)
			if err != nil {
				t.Fatal(err)
			}
			apply(t, c.from, c.to, copies)
		}
		for row := 0; row < local.PageNum(); row++ {
			a, _ := ht.PageBytes(viaPlan, row)
			b, _ := ht.PageBytes(viaMeta, row)
			if !bytes.Equal(a, b) {
				t.Fatalf("page %d differs between the two paths", row)
			}
		}
	})
}
