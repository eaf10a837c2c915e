package mooncaketest

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"
	"unsafe"

	"github.com/mooncake-go/mooncake-go/internal/testcluster"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// RealClient is a real client that dummy clients connect to.
type RealClient struct {
	// Addr is what DummyConfig.ServerAddress names.
	Addr string
	stop func()
}

// Stop ends the real client (idempotent; the test's end stops it too).
func (r *RealClient) Stop() { r.stop() }

// StartRealClient starts a real client on the cluster for dummy clients:
// upstream's standalone mooncake_client (found as the master is, see
// testcluster.FindRealClient) in a native build; a store of this process,
// named by its hostname, with the embedded engine.
func (c *Cluster) StartRealClient(t testing.TB) *RealClient {
	t.Helper()
	if !c.Native {
		st := c.Open(t)
		host, err := st.Hostname()
		require.NoError(t, err)
		return &RealClient{Addr: host, stop: func() { _ = st.Close() }}
	}
	rc, err := testcluster.StartRealClient(testcluster.RealClientOptions{
		Master: c.base.MasterServerAddress, Metadata: c.base.MetadataServer,
		Segment: "128mb", Local: "32mb", Quiet: true,
	})
	require.NoError(t, err)
	var once bool
	stop := func() {
		if once {
			return
		}
		once = true
		seg := rc.Segment()
		rc.Stop()
		// Its segment outlives it at the master until the client expires;
		// later tests on the shared cluster would have puts placed there.
		if admin := os.Getenv("MCGO_TEST_MASTER_ADMIN"); admin != "" {
			if seg == "" {
				t.Errorf("real client %s: its log (%s) does not name its segment", rc.Addr(), rc.LogPath)
			} else if err := testcluster.WaitSegmentGone(admin, seg, 30*time.Second); err != nil {
				t.Errorf("real client %s stopped: %v", rc.Addr(), err)
			}
		}
	}
	t.Cleanup(stop)
	return &RealClient{Addr: rc.Addr(), stop: stop}
}

// OpenDummy opens a dummy client of r and closes it when the test ends.
func (c *Cluster) OpenDummy(t testing.TB, r *RealClient, mods ...func(*mooncake.DummyConfig)) *mooncake.Store {
	t.Helper()
	cfg := mooncake.DummyConfig{ServerAddress: r.Addr, LocalBufferSize: 32 << 20}
	for _, m := range mods {
		m(&cfg)
	}
	d, err := mooncake.OpenDummy(cfg)
	require.NoError(t, err, "open dummy of %s", r.Addr)
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// testDummy pins the dummy client (setup_dummy, alloc_from_mem_pool): its
// calls go to its real client, zero-copy through pool memory only, what it
// puts is the cluster's and outlives it, and what DummyClient lacks is
// refused.
func testDummy(t *testing.T, c *Cluster) {
	real := c.StartRealClient(t)
	d := c.OpenDummy(t, real, func(cfg *mooncake.DummyConfig) { cfg.MemPoolSize = 4 << 20 })
	peer := c.Open(t)
	require.NoError(t, d.HealthCheck())
	host, err := d.Hostname()
	require.NoError(t, err)
	assert.Empty(t, host, "a dummy has no hostname")
	dc, ok := d.DummyConfig()
	require.True(t, ok)
	assert.Equal(t, real.Addr, dc.ServerAddress)
	_, ok = peer.DummyConfig()
	assert.False(t, ok)

	// Pool memory: registered whole, or not at all.
	const n, size = 8, 64 << 10
	src, err := d.AllocFromMemPool(n * size)
	require.NoError(t, err)
	dst, err := d.AllocFromMemPool(n * size)
	require.NoError(t, err)
	_, err = d.AllocFromMemPool(4<<20 - 2*n*size + 1)
	isCode(t, err, mooncake.ErrInvalidParams, "beyond MemPoolSize")
	assert.ErrorIs(t, err, mooncake.ErrInvalidSize)
	isCode(t, d.RegisterBuffer(addrOf(src), n*size-1), mooncake.ErrInvalidParams, "part of an allocation")
	other := Memory(t, nil, size)
	isCode(t, d.RegisterBuffer(other.Addr(), size), mooncake.ErrInvalidParams, "memory not from the pool")
	isCode(t, d.UnregisterBuffer(addrOf(src)), mooncake.ErrInvalidParams, "not registered yet")
	require.NoError(t, d.RegisterBuffer(addrOf(src), n*size))
	require.NoError(t, d.RegisterBuffer(addrOf(dst), n*size))
	_, err = peer.AllocFromMemPool(size)
	isCode(t, err, mooncake.ErrNotSupported, "a real client has no pool")

	// Zero-copy through the pool, and the bytes are the cluster's.
	keys := Keys(t, "zc", n)
	addrs, sizes := make([]uintptr, n), make([]uint64, n)
	for i := range keys {
		Fill(src[i*size:(i+1)*size], uint64(i))
		addrs[i], sizes[i] = addrOf(src[i*size:]), size
	}
	res, err := d.Raw().BatchPutFrom(keys, addrs, sizes, nil)
	checkFailed(t, mooncake.OpBatchPutFrom, keys, res, err, nil)
	for i := range addrs {
		addrs[i] = addrOf(dst[i*size:])
	}
	res, err = d.Raw().BatchGetInto(keys, addrs, sizes, nil)
	checkFailed(t, mooncake.OpBatchGetInto, keys, res, err, nil)
	assert.True(t, bytes.Equal(src, dst), "zero-copy round trip through the real client")
	got, err := peer.Get(keys[3])
	require.NoError(t, err)
	assert.True(t, bytes.Equal(src[3*size:4*size], got), "another client reads what the dummy put")

	// Copying calls, and the rest of the key calls, go to the real client too.
	k := Key(t, "copy")
	val := bytes.Repeat([]byte("dummy"), 3000)
	require.NoError(t, d.Put(k, val))
	got, err = d.Get(k)
	require.NoError(t, err)
	assert.Equal(t, val, got)
	fromPeer := Key(t, "from-peer")
	require.NoError(t, peer.Put(fromPeer, val[:1000]))
	got, err = d.Get(fromPeer)
	require.NoError(t, err)
	assert.Equal(t, val[:1000], got, "the dummy reads another client's key")
	sz, err := d.GetSize(k)
	require.NoError(t, err)
	assert.Equal(t, int64(len(val)), sz)
	exists, err := d.IsExist(k)
	require.NoError(t, err)
	assert.True(t, exists)
	unread := Key(t, "unread")
	require.NoError(t, peer.Put(unread, val[:100]))
	require.NoError(t, d.Remove(unread, false)) // a read would hold a lease
	_, err = peer.Get(unread)
	isCode(t, err, mooncake.ErrObjectNotFound, "removed through the dummy")

	// What upstream's DummyClient lacks, or its real client does not serve.
	_, err = d.GetReplicaDesc(k)
	isCode(t, err, mooncake.ErrNotSupported, "get_replica_desc")
	_, _, err = d.AllocateAndMountSegment(mooncake.SegmentSlabSize, mooncake.MountOptions{})
	isCode(t, err, mooncake.ErrNotSupported, "allocate_and_mount_segment")
	isCode(t, d.UnmountSegments([]mooncake.SegmentID{{First: 1, Second: 2}}, 0), mooncake.ErrNotSupported, "unmount_segment")
	res, err = d.BatchReplicaClear(hostmem.PackKeys(keys[:1]...), "", nil)
	checkRefused(t, mooncake.OpBatchReplicaClear, res, err, mooncake.ErrNotSupported, "batch_replica_clear")
	_, res, err = d.StartGetSession(hostmem.PackKeys(keys[:1]...), nil)
	checkRefused(t, mooncake.OpBatchGetSessionStart, res, err, mooncake.ErrNotSupported, "batch_get_session_start")
	_, res, err = d.StartPutSession(hostmem.PackKeys(Key(t, "sess")), []uint64{size}, nil)
	checkRefused(t, mooncake.OpBatchPutSessionStart, res, err, mooncake.ErrNotSupported, "batch_put_session_start")
	_, err = d.OffloadRPCReadCount()
	isCode(t, err, mooncake.ErrNotSupported, "get_offload_rpc_read_count")
	isCode(t, d.UnmountLocalDiskSegment(0), mooncake.ErrNotSupported, "unmount_local_disk_segment")

	// The dummy's objects are its real client's: they outlive the dummy.
	want := bytes.Clone(src[5*size : 6*size]) // Close frees the pool memory
	require.NoError(t, d.Close())
	got, err = peer.Get(keys[5])
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, got), "the dummy's object after its Close")
	_, err = d.Get(k)
	assert.ErrorIs(t, err, mooncake.ErrClosed)

	// A dummy whose real client goes stops answering, with an error.
	d2 := c.OpenDummy(t, real)
	require.NoError(t, d2.HealthCheck())
	real.Stop()
	stopped := time.Now()
	deadline := stopped.Add(15 * time.Second)
	for d2.HealthCheck() == nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	isCode(t, d2.HealthCheck(), mooncake.ErrRPCFail, "health check once the real client is gone")
	t.Logf("real client stopped: the dummy's health check failed after %v", time.Since(stopped).Round(time.Millisecond))
	// The calls fail as the health check does (the embedded engine said
	// INVALID_PARAMS, the code of a store never set up).
	_, err = d2.Get(k)
	isCode(t, err, mooncake.ErrRPCFail, "a get once the real client is gone")
	isCode(t, d2.Put(Key(t, "after"), []byte("x")), mooncake.ErrRPCFail, "a put once the real client is gone")
}

// testDummyOpen pins OpenDummy's refusals: a malformed address, and an
// address no real client serves.
func testDummyOpen(t *testing.T, c *Cluster) {
	for _, addr := range []string{"", "127.0.0.1", ":50052", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:x"} {
		_, err := mooncake.OpenDummy(mooncake.DummyConfig{ServerAddress: addr})
		isCode(t, err, mooncake.ErrInvalidParams, fmt.Sprintf("address %q", addr))
	}
	ports, err := testcluster.FreePorts(1)
	require.NoError(t, err)
	start := time.Now()
	_, err = mooncake.OpenDummy(mooncake.DummyConfig{ServerAddress: fmt.Sprintf("127.0.0.1:%d", ports[0])})
	isCode(t, err, mooncake.ErrRPCFail, "nothing serves there")
	assert.Less(t, time.Since(start), 10*time.Second)
}
