package mooncaketest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/mooncake-go/mooncake-go/internal/fill"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
)

// RunConformance runs the conformance suite: every operation and error case
// of the Store API, concurrency, and bad input. newCluster is called once
// per subtest (pass NewCluster).
func RunConformance(t *testing.T, newCluster func(testing.TB) *Cluster) {
	for _, tc := range conformanceTests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newCluster(t)) })
	}
}

var conformanceTests = []struct {
	name string
	fn   func(t *testing.T, c *Cluster)
}{
	{"Lifecycle", testLifecycle},
	{"BackendInfo", testBackendInfo},
	{"OpenRejectsBadConfig", testOpenRejectsBadConfig},
	{"AddressForms", testAddressForms},
	{"ClosedStore", testClosedStore},
	{"PutGetCopy", testPutGetCopy},
	{"AppendGet", testAppendGet},
	{"WriteOnceAndUpsert", testWriteOnceAndUpsert},
	{"FailedUpsertErasesKey", testFailedUpsertErasesKey},
	{"MissingKey", testMissingKey},
	{"BadKeysAndValues", testBadKeysAndValues},
	{"Registration", testRegistration},
	{"PutFromGetInto", testPutFromGetInto},
	{"BatchSingle", testBatchSingle},
	{"BatchArgumentErrors", testBatchArgumentErrors},
	{"MultiBuffer", testMultiBuffer},
	{"MultiBufferSizes", testMultiBufferSizes},
	{"MultiBufferCSRErrors", testMultiBufferCSRErrors},
	{"MultiBufferUpsert", testMultiBufferUpsert},
	{"UnregisteredMemory", testUnregisteredMemory},
	{"LeaseAndRemove", testLeaseAndRemove},
	{"BatchRemove", testBatchRemove},
	{"ReplicaDesc", testReplicaDesc},
	{"ReplicaClear", testReplicaClear},
	{"Segments", testSegments},
	{"Sessions", testSessions},
	{"Tasks", testTasks},
	{"GetIntoRanges", testGetIntoRanges},
	{"GroupIDs", testGroupIDs},
	{"PartsAndCopyingBatches", testPartsAndCopyingBatches},
	{"Stats", testStats},
	{"LogOptions", testLogOptions},
	{"SetupOptions", testSetupOptions},
	{"ReplicateOptions", testReplicateOptions},
	{"RemoveByRegex", testRemoveByRegex},
	{"KeyLength", testKeyLength},
	{"SharedCluster", testSharedCluster},
	{"ReplicateConfig", testReplicateConfig},
	{"Capacity", testCapacity},
	{"SmallSegmentRefused", testSmallSegmentRefused},
	{"ExistsGrantsLease", testExistsGrantsLease},
	{"EmptyKey", testEmptyKey},
	{"LocalBufferLimit", testLocalBufferLimit},
	{"DuplicateKeysInBatch", testDuplicateKeysInBatch},
	{"SameNodeRules", testSameNodeRules},
	{"ZeroSizeBuffersInList", testZeroSizeBuffersInList},
	{"RegexIsPartialMatch", testRegexIsPartialMatch},
	{"Concurrency", testConcurrency},
	{"CloseDuringCalls", testCloseDuringCalls},
	{"TypedCalls", testTypedCalls},
	{"RegisteredMemoryIsNotFreed", testRegisteredMemoryIsNotFreed},
	{"StoreOnEngine", testStoreOnEngine},
	{"Dummy", testDummy},
	{"DummyOpen", testDummyOpen},
	{"BatchErrorContract", testBatchErrorContract},
	{"BatchNoErrorNoAlloc", testBatchNoErrorNoAlloc},
	{"UnregisterBufferEndsMemoryRegistration", testUnregisterBufferEndsMemoryRegistration},
	{"RawAndTypedTwins", testRawAndTypedTwins},
}

func isCode(t testing.TB, err error, code mooncake.ErrorCode, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	assert.Truef(t, errors.Is(err, code), "want %v, got %v %s", code, err, fmt.Sprint(msgAndArgs...))
}

func testLifecycle(t *testing.T, c *Cluster) {
	st := c.Open(t)
	require.NoError(t, st.HealthCheck())
	host, err := st.Hostname()
	require.NoError(t, err)
	assert.NotEmpty(t, host)
	assert.Equal(t, c.Config().MasterServerAddress, st.Config().MasterServerAddress)
	require.NoError(t, st.Close())
	require.NoError(t, st.Close(), "Close is idempotent")
}

// testBackendInfo: Backend names the engine the suite runs on, and the
// native library says which upstream commit it was built against (a full
// commit id); the embedded engine has none.
func testBackendInfo(t *testing.T, c *Cluster) {
	b := mooncake.Backend()
	if c.Native {
		assert.Equal(t, "native", b.Name)
		assert.Truef(t, regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(b.UpstreamCommit), "the upstream commit of the native library: %q", b.UpstreamCommit)
	} else {
		assert.Equal(t, "embedded", b.Name)
		assert.Empty(t, b.UpstreamCommit)
	}
}

func testOpenRejectsBadConfig(t *testing.T, c *Cluster) {
	for _, tc := range []struct {
		name string
		mod  func(*mooncake.Config)
	}{
		{"protocol", func(cfg *mooncake.Config) { cfg.Protocol = "carrier-pigeon" }},
		{"no master", func(cfg *mooncake.Config) { cfg.MasterServerAddress = "" }},
		{"no hostname", func(cfg *mooncake.Config) { cfg.LocalHostname = "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := mooncake.Open(c.Config(tc.mod))
			if st != nil {
				_ = st.Close()
			}
			isCode(t, err, mooncake.ErrInvalidParams)
			var me *mooncake.Error
			require.ErrorAs(t, err, &me)
			assert.Equal(t, mooncake.OpOpen, me.Op)
		})
	}
}

// deadAddress is 127.0.0.1 and a port nothing listens on.
func deadAddress(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// testAddressForms: the master and metadata forms of an HA cluster are
// checked alike on both engines. A form the backend was built without is
// refused with ErrNotSupported (upstream would abort the process, or fail
// late); one it has goes ahead: the embedded engine's masters and metadata
// are names, so the store opens; the native backend finds nothing at the
// address and fails with ErrRPCFail within the connect timeout.
func testAddressForms(t *testing.T, c *Cluster) {
	caps := mooncake.Backend().Capabilities
	dead := deadAddress(t)
	for _, tc := range []struct {
		name string
		has  bool
		mod  func(*mooncake.Config)
	}{
		{"master etcd", caps.MasterEtcd, func(cfg *mooncake.Config) { cfg.MasterServerAddress = "etcd://" + dead }},
		{"master redis", caps.MasterRedis, func(cfg *mooncake.Config) { cfg.MasterServerAddress = "redis://" + dead }},
		{"metadata etcd", caps.MetadataEtcd, func(cfg *mooncake.Config) { cfg.MetadataServer = "etcd://" + dead }},
		{"metadata etcd endpoints", caps.MetadataEtcd, func(cfg *mooncake.Config) { cfg.MetadataServer = dead + ";" + dead }},
		{"metadata redis", caps.MetadataRedis, func(cfg *mooncake.Config) { cfg.MetadataServer = "redis://" + dead }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := c.Config(tc.mod)
			cfg.ConnectTimeout = 2 * time.Second
			st, err := mooncake.Open(cfg)
			if st != nil {
				defer st.Close()
			}
			switch {
			case !tc.has:
				isCode(t, err, mooncake.ErrNotSupported)
				assert.Truef(t, err != nil && strings.Contains(err.Error(), "built without"), "%v: want it to name the missing build option", err)
			case c.Native:
				isCode(t, err, mooncake.ErrRPCFail)
				assert.Truef(t, err != nil && strings.Contains(err.Error(), dead), "%v: want it to name %s", err, dead)
			default:
				assert.NoError(t, err)
			}
		})
	}
	for _, tc := range []struct{ name, master, metadata string }{
		{"no etcd endpoint", "etcd://", ""},
		{"etcd endpoint without a port", "etcd://127.0.0.1", ""},
		{"redis port 0", "redis://127.0.0.1:0", ""},
		{"redis password in the address", "redis://u:p@127.0.0.1:6379", ""},
		{"unknown HA backend", "zk://127.0.0.1:2181", ""},
		{"unknown metadata protocol", "", "ftp://127.0.0.1/metadata"},
		{"metadata without a host", "", "http://"},
		{"metadata etcd without endpoints", "", "etcd://;"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := mooncake.Open(c.Config(func(cfg *mooncake.Config) {
				if tc.master != "" {
					cfg.MasterServerAddress = tc.master
				}
				if tc.metadata != "" {
					cfg.MetadataServer = tc.metadata
				}
			}))
			if st != nil {
				_ = st.Close()
			}
			isCode(t, err, mooncake.ErrInvalidParams)
			assert.ErrorIs(t, err, mooncake.ErrInvalidConfig)
		})
	}
}

func testClosedStore(t *testing.T, c *Cluster) {
	st := c.Open(t)
	mem := Memory(t, nil, 1<<16)
	view := st.WithReplicateConfig(mooncake.ReplicateConfig{ReplicaNum: 1})
	require.NoError(t, view.Close(), "closing a view closes the client")
	k := Key(t, "k")
	keys := []string{k}
	addrs := []uintptr{mem.Addr()}
	sizes := []uint64{16}
	span, err := mem.Span(0, 16)
	require.NoError(t, err)
	bufs := hostmem.Buffers{Addrs: addrs, Sizes: sizes}
	calls := map[string]func() error{
		"HealthCheck": st.HealthCheck,
		"Hostname":    func() error { _, err := st.Hostname(); return err },
		"Put":         func() error { return st.Put(k, []byte("x")) },
		"Upsert":      func() error { return st.Upsert(k, []byte("x")) },
		"Get":         func() error { _, err := st.Get(k); return err },
		"AppendGet":   func() error { _, err := st.AppendGet(nil, k); return err },
		"GetSize":     func() error { _, err := st.GetSize(k); return err },
		"PutFrom":     func() error { return st.Raw().PutFrom(k, mem.Addr(), 16) },
		"UpsertFrom":  func() error { return st.Raw().UpsertFrom(k, mem.Addr(), 16) },
		"GetInto":     func() error { _, err := st.Raw().GetInto(k, mem.Addr(), 16); return err },
		"IsExist":     func() error { _, err := st.IsExist(k); return err },
		"Remove":      func() error { return st.Remove(k, true) },
		"RemoveRegex": func() error { _, err := st.RemoveByRegex("^x", true); return err },
		"RemoveAll":   func() error { _, err := st.RemoveAll(true); return err },
		"BatchRemove": func() error { _, err := st.BatchRemove(hostmem.PackKeys(k), true, nil); return err },
		"Register":    func() error { return st.RegisterBuffer(mem.Addr(), 4096) },
		"Unregister":  func() error { return st.UnregisterBuffer(mem.Addr()) },
		"BatchPutFrom": func() error {
			_, err := st.Raw().BatchPutFrom(keys, addrs, sizes, nil)
			return err
		},
		"BatchUpsertFrom": func() error {
			_, err := st.Raw().BatchUpsertFrom(keys, addrs, sizes, nil)
			return err
		},
		"BatchGetInto": func() error {
			_, err := st.Raw().BatchGetInto(keys, addrs, sizes, nil)
			return err
		},
		"BatchPutMulti": func() error {
			_, err := st.Raw().BatchPutFromMultiBuffers(keys, addrs, sizes, []uint64{0, 1}, nil)
			return err
		},
		"BatchUpsertMulti": func() error {
			_, err := st.Raw().BatchUpsertFromMultiBuffers(keys, addrs, sizes, []uint64{0, 1}, nil)
			return err
		},
		"BatchGetMulti": func() error {
			_, err := st.Raw().BatchGetIntoMultiBuffers(keys, addrs, sizes, []uint64{0, 1}, nil)
			return err
		},
		"BatchIsExist":    func() error { _, err := st.BatchIsExist(hostmem.PackKeys(keys...), nil); return err },
		"TypedPutFrom":    func() error { return st.PutFrom(k, span) },
		"TypedUpsertFrom": func() error { return st.UpsertFrom(k, span) },
		"TypedGetInto":    func() error { _, err := st.GetInto(k, span); return err },
		"TypedBatchPutFrom": func() error {
			_, err := st.BatchPutFrom(hostmem.PackKeys(keys...), bufs, nil)
			return err
		},
		"TypedBatchUpsertFrom": func() error {
			_, err := st.BatchUpsertFrom(hostmem.PackKeys(keys...), bufs, nil)
			return err
		},
		"TypedBatchGetInto": func() error {
			_, err := st.BatchGetInto(hostmem.PackKeys(keys...), bufs, nil)
			return err
		},
		"BatchGetReplicaDesc": func() error {
			_, _, err := st.BatchGetReplicaDesc(hostmem.PackKeys(keys...), nil)
			return err
		},
		"BatchReplicaClear": func() error { _, err := st.BatchReplicaClear(hostmem.PackKeys(keys...), "", nil); return err },
		"PutBatch":          func() error { return st.PutBatch(hostmem.PackKeys(keys...), [][]byte{[]byte("x")}) },
		"StartGetSession": func() error {
			_, _, err := st.StartGetSession(hostmem.PackKeys(keys...), nil)
			return err
		},
		"StartPutSession": func() error {
			_, _, err := st.StartPutSession(hostmem.PackKeys(keys...), sizes, nil)
			return err
		},
	}
	for name, call := range calls {
		err := call()
		require.Errorf(t, err, "%s after Close", name)
		assert.Truef(t, errors.Is(err, mooncake.ErrClosed), "%s after Close: %v", name, err)
	}
}

func testPutGetCopy(t *testing.T, c *Cluster) {
	st := c.Open(t)
	for _, size := range []int{1, 7, 4096, 1 << 20} {
		k := Key(t, fmt.Sprint(size))
		v := make([]byte, size)
		Fill(v, uint64(size))
		require.NoError(t, st.Put(k, v))
		got, err := st.Get(k)
		require.NoError(t, err)
		require.True(t, bytes.Equal(v, got), "size %d round trip", size)
		n, err := st.GetSize(k)
		require.NoError(t, err)
		assert.EqualValues(t, size, n)
		ok, err := st.IsExist(k)
		require.NoError(t, err)
		assert.True(t, ok)
	}
}

func testAppendGet(t *testing.T, c *Cluster) {
	st := c.Open(t)
	small, large := Key(t, "small"), Key(t, "large")
	require.NoError(t, st.Put(small, []byte("hello")))
	big := make([]byte, 100_000)
	Fill(big, 9)
	require.NoError(t, st.Put(large, big))

	// Appends after what dst holds.
	got, err := st.AppendGet([]byte("say "), small)
	require.NoError(t, err)
	assert.Equal(t, "say hello", string(got))

	// Reuses capacity: no new backing array when the object fits.
	buf := make([]byte, 0, 200_000)
	got, err = st.AppendGet(buf, large)
	require.NoError(t, err)
	require.True(t, bytes.Equal(big, got))
	assert.Same(t, unsafe.SliceData(buf[:1]), unsafe.SliceData(got), "the object fits: dst's array is reused")
	got, err = st.AppendGet(got[:0], small)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(got))

	// Grows when it does not fit, keeping the prefix.
	got, err = st.AppendGet([]byte{1, 2, 3}, large)
	require.NoError(t, err)
	require.Len(t, got, 3+len(big))
	assert.Equal(t, []byte{1, 2, 3}, got[:3])
	require.True(t, bytes.Equal(big, got[3:]))

	// Errors leave dst as it was.
	prefix := []byte("keep")
	got, err = st.AppendGet(prefix, Key(t, "absent"))
	isCode(t, err, mooncake.ErrObjectNotFound)
	assert.Equal(t, "keep", string(got))

	allocs := testing.AllocsPerRun(20, func() {
		buf, err = st.AppendGet(buf[:0], large)
		if err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs, "reading into a large enough buffer allocates nothing")
}

func testWriteOnceAndUpsert(t *testing.T, c *Cluster) {
	st := c.Open(t)
	k := Key(t, "k")
	require.NoError(t, st.Put(k, []byte("first")))
	require.NoError(t, st.Put(k, []byte("second, longer")), "a put on an existing key reports success")
	got, err := st.Get(k)
	require.NoError(t, err)
	assert.Equal(t, "first", string(got), "write-once keeps the first value")

	require.NoError(t, st.Upsert(k, []byte("replaced, and longer")))
	got, err = st.Get(k)
	require.NoError(t, err)
	assert.Equal(t, "replaced, and longer", string(got))
	n, err := st.GetSize(k)
	require.NoError(t, err)
	assert.EqualValues(t, len("replaced, and longer"), n)

	k2 := Key(t, "fresh")
	require.NoError(t, st.Upsert(k2, []byte("new")), "upsert creates a missing key")
	got, err = st.Get(k2)
	require.NoError(t, err)
	assert.Equal(t, "new", string(got))
}

// testFailedUpsertErasesKey pins an upstream behaviour a model of the
// store must know: an upsert that changes an object's size erases the old
// object before it allocates the new size (UpsertStart, "case C"), so one
// that finds no space fails with NO_AVAILABLE_HANDLE and leaves the key
// absent, not at its old value (docs/soak.md).
func testFailedUpsertErasesKey(t *testing.T, c *Cluster) {
	st := c.Open(t)
	const huge = 1 << 30 // more than any test cluster holds; never touched
	mem := Memory(t, st, huge)
	k := Key(t, "k")
	small, err := mem.Span(0, 4096)
	require.NoError(t, err)
	require.NoError(t, st.PutFrom(k, small))
	all, err := mem.Span(0, huge)
	require.NoError(t, err)
	isCode(t, st.UpsertFrom(k, all), mooncake.ErrNoAvailableHandle, "an upsert larger than the cluster")
	ok, err := st.IsExist(k)
	require.NoError(t, err)
	assert.False(t, ok, "the key after its failed size-changing upsert")
}

func testMissingKey(t *testing.T, c *Cluster) {
	st := c.Open(t)
	mem := Memory(t, st, 1<<16)
	k := Key(t, "absent")
	_, err := st.Get(k)
	isCode(t, err, mooncake.ErrObjectNotFound)
	var me *mooncake.Error
	require.ErrorAs(t, err, &me)
	assert.Equal(t, k, me.Key)
	assert.Equal(t, mooncake.OpGet, me.Op)
	assert.Contains(t, err.Error(), k)

	_, err = st.GetSize(k)
	isCode(t, err, mooncake.ErrObjectNotFound)
	_, err = st.Raw().GetInto(k, mem.Addr(), 4096)
	isCode(t, err, mooncake.ErrObjectNotFound)
	ok, err := st.IsExist(k)
	require.NoError(t, err)
	assert.False(t, ok)
	isCode(t, st.Remove(k, false), mooncake.ErrObjectNotFound)
}

func testBadKeysAndValues(t *testing.T, c *Cluster) {
	st := c.Open(t)
	mem := Memory(t, st, 1<<16)
	isCode(t, st.Put(Key(t, "empty-value"), nil), mooncake.ErrInvalidParams, "empty value")
	isCode(t, st.Raw().PutFrom(Key(t, "zero-size"), mem.Addr(), 0), mooncake.ErrInvalidParams, "zero size")
	ok, err := st.IsExist(Key(t, "empty-value"))
	require.NoError(t, err)
	assert.False(t, ok, "a refused put stores nothing")

	// An empty key is refused, never stored.
	require.Error(t, st.Put("", []byte("x")))
	require.Error(t, st.Raw().PutFrom("", mem.Addr(), 8))
	keys := []string{"", Key(t, "ok")}
	res, err := st.Raw().BatchPutFrom(keys, []uintptr{mem.Addr(), mem.Addr()}, []uint64{8, 8}, nil)
	checkFailed(t, mooncake.OpBatchPutFrom, keys, res, err, []int{0}, "empty key in a batch")
}

func testRegistration(t *testing.T, c *Cluster) {
	st := c.Open(t)
	mem := Memory(t, nil, 1<<20)
	a := mem.Addr()
	require.NoError(t, st.RegisterBuffer(a, 1<<19))
	isCode(t, st.RegisterBuffer(a, 1<<19), mooncake.ErrInvalidParams, "same region twice")
	isCode(t, st.RegisterBuffer(a+4096, 4096), mooncake.ErrInvalidParams, "inside a registered region")
	isCode(t, st.RegisterBuffer(a+(1<<19)-4096, 8192), mooncake.ErrInvalidParams, "straddling the end")
	isCode(t, st.RegisterBuffer(0, 4096), mooncake.ErrInvalidParams, "null address")
	isCode(t, st.RegisterBuffer(a+(1<<19), 0), mooncake.ErrInvalidParams, "zero length")
	if runtime.GOOS == "linux" {
		// Upstream would register it, and its transport read or write
		// wherever it ends.
		err := st.RegisterBuffer(a, 1<<63)
		isCode(t, err, mooncake.ErrInvalidParams, "2^63 bytes over a 1 MiB mapping")
		assert.ErrorIs(t, err, hostmem.ErrRange, "2^63 bytes over a 1 MiB mapping")
	}
	require.NoError(t, st.RegisterBuffer(a+(1<<19), 1<<19), "adjacent region")
	isCode(t, st.UnregisterBuffer(a+4096), mooncake.ErrInvalidParams, "not a region start")
	require.NoError(t, st.UnregisterBuffer(a))
	isCode(t, st.UnregisterBuffer(a), mooncake.ErrInvalidParams, "already unregistered")
	require.NoError(t, st.RegisterBuffer(a, 1<<19), "register again after unregister")
	require.NoError(t, st.UnregisterBuffer(a))
	require.NoError(t, st.UnregisterBuffer(a+(1<<19)))
	var nilMem *hostmem.Memory
	isCode(t, st.RegisterMemory(nilMem), mooncake.ErrInvalidParams)
}

func testPutFromGetInto(t *testing.T, c *Cluster) {
	st := c.Open(t)
	mem := Memory(t, st, 4<<20)
	b := mem.Bytes()
	src, dst := b[:1<<20], b[2<<20:]
	Fill(src, 1)
	k := Key(t, "k")
	require.NoError(t, st.Raw().PutFrom(k, mem.Addr(), 1<<20))
	n, err := st.Raw().GetInto(k, mem.Addr()+2<<20, 2<<20)
	require.NoError(t, err, "a larger destination is fine")
	assert.EqualValues(t, 1<<20, n)
	require.True(t, bytes.Equal(src, dst[:1<<20]))

	_, err = st.Raw().GetInto(k, mem.Addr()+2<<20, 1<<20-1)
	isCode(t, err, mooncake.ErrInvalidParams, "destination smaller than the object")

	Fill(src, 2)
	require.NoError(t, st.Raw().PutFrom(k, mem.Addr(), 1<<20), "write-once")
	_, err = st.Raw().GetInto(k, mem.Addr()+2<<20, 1<<20)
	require.NoError(t, err)
	assert.False(t, bytes.Equal(src, dst[:1<<20]), "the first value is kept")

	require.NoError(t, st.Raw().UpsertFrom(k, mem.Addr(), 4096))
	n, err = st.Raw().GetInto(k, mem.Addr()+2<<20, 1<<20)
	require.NoError(t, err)
	assert.EqualValues(t, 4096, n)
	require.True(t, bytes.Equal(src[:4096], dst[:4096]))

	// The copying and zero-copy APIs see the same objects.
	got, err := st.Get(k)
	require.NoError(t, err)
	require.True(t, bytes.Equal(src[:4096], got))
	k2 := Key(t, "copy-put")
	require.NoError(t, st.Put(k2, []byte("hello")))
	n, err = st.Raw().GetInto(k2, mem.Addr()+2<<20, 4096)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(dst[:n]))
}

func testBatchSingle(t *testing.T, c *Cluster) {
	st := c.Open(t)
	const n, size = 128, 4096
	mem := Memory(t, st, 2*n*size)
	b := mem.Bytes()
	Fill(b[:n*size], 3)
	keys := Keys(t, "k", n)
	addrs := make([]uintptr, n)
	dsts := make([]uintptr, n)
	sizes := make([]uint64, n)
	for i := range keys {
		addrs[i] = mem.Addr() + uintptr(i*size)
		dsts[i] = mem.Addr() + uintptr((n+i)*size)
		sizes[i] = size
	}
	// Put only the even keys first.
	var evenK []string
	var evenA []uintptr
	var evenS []uint64
	for i := 0; i < n; i += 2 {
		evenK, evenA, evenS = append(evenK, keys[i]), append(evenA, addrs[i]), append(evenS, sizes[i])
	}
	res, err := st.Raw().BatchPutFrom(evenK, evenA, evenS, nil)
	checkFailed(t, mooncake.OpBatchPutFrom, evenK, res, err, nil)

	scratch := make([]int64, 0, n)
	ex, err := st.BatchIsExist(hostmem.PackKeys(keys...), scratch)
	require.NoError(t, err)
	require.Len(t, ex, n)
	assert.Equal(t, unsafe.SliceData(scratch[:1]), unsafe.SliceData(ex), "results reuse the caller's slice")
	for i, e := range ex {
		assert.EqualValuesf(t, 1-i%2, e, "exists[%d]", i)
	}

	res, err = st.Raw().BatchGetInto(keys, dsts, sizes, nil)
	var odd []int
	for i := 1; i < n; i += 2 {
		odd = append(odd, i)
	}
	be := checkFailed(t, mooncake.OpBatchGetInto, keys, res, err, odd, "the odd keys are missing")
	assert.True(t, errors.Is(err, mooncake.ErrObjectNotFound))
	assert.False(t, errors.Is(err, mooncake.ErrInvalidParams), "no key failed with another code")
	require.Len(t, be.Failed, n/2)
	for i, r := range res {
		if i%2 == 0 {
			require.EqualValuesf(t, size, r, "get %d", i)
			require.True(t, bytes.Equal(b[i*size:(i+1)*size], b[(n+i)*size:(n+i+1)*size]), "bytes of key %d", i)
		} else {
			require.EqualValuesf(t, mooncake.ErrObjectNotFound, r, "get %d", i)
			f := be.Failed[i/2]
			require.Equal(t, keys[i], f.Key, "the error names key %d", i)
			require.True(t, errors.Is(f, mooncake.ErrObjectNotFound), "key %d: %v", i, f)
		}
	}

	// Put all: existing keys report 0 (write-once), the rest are stored.
	res, err = st.Raw().BatchPutFrom(keys, addrs, sizes, res)
	checkFailed(t, mooncake.OpBatchPutFrom, keys, res, err, nil)

	// Upsert half with new bytes, then read back.
	Fill(b[:n*size], 4)
	res, err = st.Raw().BatchUpsertFrom(keys[:n/2], addrs[:n/2], sizes[:n/2], res)
	checkFailed(t, mooncake.OpBatchUpsertFrom, keys[:n/2], res, err, nil)
	res, err = st.Raw().BatchGetInto(keys[:n/2], dsts[:n/2], sizes[:n/2], res)
	checkFailed(t, mooncake.OpBatchGetInto, keys[:n/2], res, err, nil)
	require.True(t, bytes.Equal(b[:n/2*size], b[n*size:(n+n/2)*size]))

	// Zero-size entry fails for that key only.
	zk := []string{Key(t, "z0"), Key(t, "z1")}
	res, err = st.Raw().BatchPutFrom(zk, addrs[:2], []uint64{0, size}, nil)
	checkFailed(t, mooncake.OpBatchPutFrom, zk, res, err, []int{0})
	assert.EqualValues(t, mooncake.ErrInvalidParams, res[0])
	assert.EqualValues(t, 0, res[1])

	// Destination smaller than the object.
	res, err = st.Raw().BatchGetInto(keys[:1], dsts[:1], []uint64{size - 1}, nil)
	checkFailed(t, mooncake.OpBatchGetInto, keys[:1], res, err, []int{0})
	assert.EqualValues(t, mooncake.ErrInvalidParams, res[0])
}

func testBatchArgumentErrors(t *testing.T, c *Cluster) {
	st := c.Open(t)
	mem := Memory(t, st, 1<<16)
	a := mem.Addr()
	k := Keys(t, "k", 2)
	cases := []struct {
		name  string
		keys  []string
		addrs []uintptr
		sizes []uint64
	}{
		{"fewer addresses", k, []uintptr{a}, []uint64{8, 8}},
		{"fewer sizes", k, []uintptr{a, a + 8}, []uint64{8}},
		{"nil keys", nil, []uintptr{a}, []uint64{8}},
		{"nil addresses", k, nil, []uint64{8, 8}},
	}
	raw := st.Raw()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for op, call := range map[mooncake.Op]func([]string, []uintptr, []uint64, []int64) ([]int64, error){
				mooncake.OpBatchPutFrom:    raw.BatchPutFrom,
				mooncake.OpBatchUpsertFrom: raw.BatchUpsertFrom,
				mooncake.OpBatchGetInto:    raw.BatchGetInto,
			} {
				res, err := call(tc.keys, tc.addrs, tc.sizes, nil)
				checkRefused(t, op, res, err, mooncake.ErrInvalidParams, op)
			}
			// The typed twins refuse the same shapes.
			for op, call := range map[mooncake.Op]func(*hostmem.Keys, hostmem.Buffers, []int64) ([]int64, error){
				mooncake.OpBatchPutFrom:    st.BatchPutFrom,
				mooncake.OpBatchUpsertFrom: st.BatchUpsertFrom,
				mooncake.OpBatchGetInto:    st.BatchGetInto,
			} {
				res, err := call(hostmem.PackKeys(tc.keys...), hostmem.Buffers{Addrs: tc.addrs, Sizes: tc.sizes}, nil)
				checkRefused(t, op, res, err, mooncake.ErrInvalidParams, "typed", op)
				assert.ErrorIs(t, err, hostmem.ErrShape, "typed", op)
			}
		})
	}
	// Empty batches are no-ops.
	res, err := st.Raw().BatchPutFrom(nil, nil, nil, nil)
	require.NoError(t, err)
	assert.Empty(t, res)
	res, err = st.BatchIsExist(nil, nil)
	require.NoError(t, err)
	assert.Empty(t, res)
	res, err = st.Raw().BatchGetIntoMultiBuffers(nil, nil, nil, nil, nil)
	require.NoError(t, err)
	assert.Empty(t, res)
	res, err = st.Raw().BatchGetIntoMultiBuffers(nil, nil, nil, []uint64{0}, nil)
	require.NoError(t, err)
	assert.Empty(t, res)
}

// layerFirst describes a tiny layer-first pool: for page p and layer l the
// buffer is at base + (l*pages + p)*bufSize.
type layerFirst struct {
	base           uintptr
	layers, pages  int
	bufSize        int
	addrs          []uintptr
	sizes, offsets []uint64
}

func newLayerFirst(base uintptr, layers, pages, bufSize int, pageIdx []int) *layerFirst {
	lf := &layerFirst{base: base, layers: layers, pages: pages, bufSize: bufSize}
	lf.offsets = append(lf.offsets, 0)
	for _, p := range pageIdx {
		for l := 0; l < layers; l++ {
			lf.addrs = append(lf.addrs, base+uintptr((l*pages+p)*bufSize))
			lf.sizes = append(lf.sizes, uint64(bufSize))
		}
		lf.offsets = append(lf.offsets, uint64(len(lf.addrs)))
	}
	return lf
}

func (lf *layerFirst) page(mem []byte, p int) []byte {
	var out []byte
	for l := 0; l < lf.layers; l++ {
		off := (l*lf.pages + p) * lf.bufSize
		out = append(out, mem[off:off+lf.bufSize]...)
	}
	return out
}

func testMultiBuffer(t *testing.T, c *Cluster) {
	st := c.Open(t)
	const layers, pages, bufSize = 61, 16, 1152
	poolBytes := layers * pages * bufSize
	memA := Memory(t, st, poolBytes)
	memB := Memory(t, st, poolBytes)
	Fill(memA.Bytes(), 5)
	idx := make([]int, pages)
	for i := range idx {
		idx[i] = i
	}
	keys := Keys(t, "page", pages)
	a := newLayerFirst(memA.Addr(), layers, pages, bufSize, idx)
	res, err := st.Raw().BatchPutFromMultiBuffers(keys, a.addrs, a.sizes, a.offsets, nil)
	checkFailed(t, mooncake.OpBatchPutFromMultiBuffers, keys, res, err, nil)
	for _, k := range keys {
		n, err := st.GetSize(k)
		require.NoError(t, err)
		require.EqualValues(t, layers*bufSize, n, "object = concatenation of the page's buffers")
	}

	// Read into pool B with the pages reversed.
	rev := make([]int, pages)
	for i := range rev {
		rev[i] = pages - 1 - i
	}
	b := newLayerFirst(memB.Addr(), layers, pages, bufSize, rev)
	res, err = st.Raw().BatchGetIntoMultiBuffers(keys, b.addrs, b.sizes, b.offsets, res)
	checkFailed(t, mooncake.OpBatchGetIntoMultiBuffers, keys, res, err, nil)
	for i, r := range res {
		require.EqualValues(t, layers*bufSize, r, "key %d", i)
		require.True(t, bytes.Equal(a.page(memA.Bytes(), i), b.page(memB.Bytes(), pages-1-i)), "page %d", i)
	}

	// A multi-buffer object reads back whole through the single-buffer and
	// copying calls, and vice versa.
	whole, err := st.Get(keys[3])
	require.NoError(t, err)
	require.True(t, bytes.Equal(a.page(memA.Bytes(), 3), whole))
	k1 := Key(t, "single")
	require.NoError(t, st.Put(k1, whole))
	one := newLayerFirst(memB.Addr(), layers, pages, bufSize, []int{0})
	res, err = st.Raw().BatchGetIntoMultiBuffers([]string{k1}, one.addrs, one.sizes, one.offsets, res)
	checkFailed(t, mooncake.OpBatchGetIntoMultiBuffers, []string{k1}, res, err, nil)
	require.EqualValues(t, layers*bufSize, res[0])
	require.True(t, bytes.Equal(whole, one.page(memB.Bytes(), 0)))

	// Missing keys fail individually.
	mixed := []string{keys[0], Key(t, "absent")}
	two := newLayerFirst(memB.Addr(), layers, pages, bufSize, []int{0, 1})
	res, err = st.Raw().BatchGetIntoMultiBuffers(mixed, two.addrs, two.sizes, two.offsets, res)
	checkFailed(t, mooncake.OpBatchGetIntoMultiBuffers, mixed, res, err, []int{1})
	assert.ErrorIs(t, err, mooncake.ErrObjectNotFound)
	assert.EqualValues(t, layers*bufSize, res[0])
	assert.EqualValues(t, mooncake.ErrObjectNotFound, res[1])
}

func testMultiBufferSizes(t *testing.T, c *Cluster) {
	st := c.Open(t)
	mem := Memory(t, st, 1<<20)
	base := mem.Addr()
	Fill(mem.Bytes(), 6)
	k := Key(t, "k")
	res, err := st.Raw().BatchPutFromMultiBuffers([]string{k}, []uintptr{base, base + 4096}, []uint64{100, 200}, []uint64{0, 2}, nil)
	checkFailed(t, mooncake.OpBatchPutFromMultiBuffers, []string{k}, res, err, nil)
	require.EqualValues(t, 0, res[0])

	dst := base + 1<<19
	for _, tc := range []struct {
		name  string
		sizes []uint64
		want  int64
	}{
		{"exact, other split", []uint64{150, 150}, 300},
		{"smaller", []uint64{150, 149}, int64(mooncake.ErrInvalidParams)},
		{"larger", []uint64{150, 151}, int64(mooncake.ErrTransferFail)},
	} {
		res, err := st.Raw().BatchGetIntoMultiBuffers([]string{k}, []uintptr{dst, dst + 4096}, tc.sizes, []uint64{0, 2}, nil)
		var failed []int
		if tc.want < 0 {
			failed = []int{0}
		}
		checkFailed(t, mooncake.OpBatchGetIntoMultiBuffers, []string{k}, res, err, failed, tc.name)
		assert.Equal(t, tc.want, res[0], tc.name)
	}
	// Zero buffers for a key: total size 0 is refused for that key.
	nk := []string{Key(t, "none"), Key(t, "one")}
	res, err = st.Raw().BatchPutFromMultiBuffers(nk, []uintptr{base}, []uint64{64}, []uint64{0, 0, 1}, nil)
	checkFailed(t, mooncake.OpBatchPutFromMultiBuffers, nk, res, err, []int{0})
	assert.EqualValues(t, mooncake.ErrInvalidParams, res[0])
	assert.EqualValues(t, 0, res[1])
}

func testMultiBufferCSRErrors(t *testing.T, c *Cluster) {
	st := c.Open(t)
	mem := Memory(t, st, 1<<16)
	a := mem.Addr()
	k := Keys(t, "k", 2)
	addrs := []uintptr{a, a + 64, a + 128}
	sizes := []uint64{64, 64, 64}
	for _, tc := range []struct {
		name    string
		keys    []string
		addrs   []uintptr
		sizes   []uint64
		offsets []uint64
	}{
		{"missing offsets", k, addrs, sizes, nil},
		{"short offsets", k, addrs, sizes, []uint64{0, 3}},
		{"first offset not 0", k, addrs, sizes, []uint64{1, 2, 3}},
		{"decreasing", k, addrs, sizes, []uint64{0, 3, 2}},
		{"last offset short", k, addrs, sizes, []uint64{0, 1, 2}},
		{"last offset past end", k, addrs, sizes, []uint64{0, 1, 4}},
		{"sizes shorter", k, addrs, sizes[:2], []uint64{0, 1, 3}},
		{"no keys, some buffers", nil, addrs, sizes, []uint64{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := st.Raw()
			for op, call := range map[mooncake.Op]func([]string, []uintptr, []uint64, []uint64, []int64) ([]int64, error){
				mooncake.OpBatchPutFromMultiBuffers:    raw.BatchPutFromMultiBuffers,
				mooncake.OpBatchUpsertFromMultiBuffers: raw.BatchUpsertFromMultiBuffers,
				mooncake.OpBatchGetIntoMultiBuffers:    raw.BatchGetIntoMultiBuffers,
			} {
				res, err := call(tc.keys, tc.addrs, tc.sizes, tc.offsets, nil)
				checkRefused(t, op, res, err, mooncake.ErrInvalidParams, op)
			}
			if tc.offsets == nil {
				return // the typed calls read nil offsets as one buffer per key
			}
			for op, call := range map[mooncake.Op]func(*hostmem.Keys, hostmem.Buffers, []int64) ([]int64, error){
				mooncake.OpBatchPutFromMultiBuffers:    st.BatchPutFrom,
				mooncake.OpBatchUpsertFromMultiBuffers: st.BatchUpsertFrom,
				mooncake.OpBatchGetIntoMultiBuffers:    st.BatchGetInto,
			} {
				res, err := call(hostmem.PackKeys(tc.keys...), hostmem.Buffers{Addrs: tc.addrs, Sizes: tc.sizes, Offsets: tc.offsets}, nil)
				checkRefused(t, op, res, err, mooncake.ErrInvalidParams, "typed", op)
			}
		})
	}
	ex, err := st.BatchIsExist(hostmem.PackKeys(k...), nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 0}, ex, "refused calls store nothing")
}

func testMultiBufferUpsert(t *testing.T, c *Cluster) {
	st := c.Open(t)
	mem := Memory(t, st, 1<<20)
	base := mem.Addr()
	b := mem.Bytes()
	Fill(b[:8192], 7)
	keys := Keys(t, "k", 2)
	offs := []uint64{0, 2, 4}
	addrs := []uintptr{base, base + 1024, base + 2048, base + 3072}
	sizes := []uint64{1024, 1024, 1024, 1024}
	res, err := st.Raw().BatchPutFromMultiBuffers(keys, addrs, sizes, offs, nil)
	require.NoError(t, err)
	require.Equal(t, []int64{0, 0}, res)
	// Write-once: new bytes through a put are ignored ...
	Fill(b[:4096], 8)
	want := append([]byte(nil), b[:4096]...)
	res, err = st.Raw().BatchPutFromMultiBuffers(keys, addrs, sizes, offs, res)
	require.NoError(t, err)
	require.Equal(t, []int64{0, 0}, res)
	got, err := st.Get(keys[0])
	require.NoError(t, err)
	require.False(t, bytes.Equal(want[:2048], got))
	// ... and replace through an upsert, with a new size (where the backend
	// has it: not over upstream v0.3.12.post1, which refuses the call and
	// keeps the objects).
	if !mooncake.Backend().Capabilities.MultiBufferUpsert {
		require.True(t, c.Native, "the embedded engine has the multi-buffer upsert")
		res, err = st.Raw().BatchUpsertFromMultiBuffers(keys, addrs[:3], sizes[:3], []uint64{0, 1, 3}, res)
		checkRefused(t, mooncake.OpBatchUpsertFromMultiBuffers, res, err, mooncake.ErrNotSupported)
		res, err = st.BatchUpsertFrom(hostmem.PackKeys(keys...), hostmem.Buffers{Addrs: addrs[:3], Sizes: sizes[:3], Offsets: []uint64{0, 1, 3}}, nil)
		checkRefused(t, mooncake.OpBatchUpsertFromMultiBuffers, res, err, mooncake.ErrNotSupported, "typed")
		again, err := st.Get(keys[0])
		require.NoError(t, err)
		require.True(t, bytes.Equal(got, again), "the refused upsert changed nothing")
		return
	}
	res, err = st.Raw().BatchUpsertFromMultiBuffers(keys, addrs[:3], sizes[:3], []uint64{0, 1, 3}, res)
	require.NoError(t, err)
	require.Equal(t, []int64{0, 0}, res)
	got, err = st.Get(keys[0])
	require.NoError(t, err)
	require.True(t, bytes.Equal(want[:1024], got))
	got, err = st.Get(keys[1])
	require.NoError(t, err)
	require.True(t, bytes.Equal(want[1024:3072], got))
}

func testUnregisteredMemory(t *testing.T, c *Cluster) {
	st := c.Open(t)
	reg := Memory(t, st, 1<<16)
	unreg := Memory(t, nil, 1<<16)
	Fill(unreg.Bytes(), 9)
	k := Key(t, "k")
	err := st.Raw().PutFrom(k, unreg.Addr(), 4096)
	straddle := reg.Addr() + (1 << 16) - 2048 // half in, half out of the region
	if c.ChecksRegistration {
		isCode(t, err, mooncake.ErrTransferFail, "put from unregistered memory")
		res, err := st.Raw().BatchPutFromMultiBuffers([]string{k}, []uintptr{reg.Addr(), straddle}, []uint64{64, 4096}, []uint64{0, 2}, nil)
		checkFailed(t, mooncake.OpBatchPutFromMultiBuffers, []string{k}, res, err, []int{0})
		assert.EqualValues(t, mooncake.ErrTransferFail, res[0], "a buffer straddling a region's end")
		ok, err := st.IsExist(k)
		require.NoError(t, err)
		assert.False(t, ok)
		require.NoError(t, st.Raw().PutFrom(k, reg.Addr(), 4096))
		_, err = st.Raw().GetInto(k, unreg.Addr(), 4096)
		isCode(t, err, mooncake.ErrTransferFail, "get into unregistered memory")
		return
	}
	// Mooncake's TCP transport does not check local registration: the same
	// calls succeed. Pinned here so that a change is noticed.
	require.NoError(t, err, "TCP: put from unregistered memory succeeds")
	n, err := st.Raw().GetInto(k, reg.Addr(), 4096)
	require.NoError(t, err)
	require.EqualValues(t, 4096, n)
	require.True(t, bytes.Equal(unreg.Bytes()[:4096], reg.Bytes()[:4096]))
}

func testLeaseAndRemove(t *testing.T, c *Cluster) {
	st := c.Open(t)
	k := Key(t, "leased")
	require.NoError(t, st.Put(k, []byte("v")))
	k2 := Key(t, "unread")
	require.NoError(t, st.Put(k2, []byte("v")))
	require.NoError(t, st.Remove(k2, false), "an object nobody read has no lease")
	_, err := st.Get(k)
	require.NoError(t, err)
	isCode(t, st.Remove(k, false), mooncake.ErrObjectHasLease, "remove right after a get")
	ok, err := st.IsExist(k)
	require.NoError(t, err)
	assert.True(t, ok)
	require.NoError(t, st.Remove(k, true), "force removes a leased object")
	ok, err = st.IsExist(k)
	require.NoError(t, err)
	assert.False(t, ok)
	isCode(t, st.Remove(k, true), mooncake.ErrObjectNotFound)
}

// put_parts/upsert_parts and put_batch/upsert_batch: copying calls of any
// memory, staged in the local buffer, one code per call.
func testPartsAndCopyingBatches(t *testing.T, c *Cluster) {
	st := c.Open(t, func(cfg *mooncake.Config) { cfg.LocalBufferSize = 1 << 20 })
	get := func(k string) string {
		t.Helper()
		v, err := st.Get(k)
		require.NoError(t, err, k)
		return string(v)
	}
	k := Key(t, "parts")
	require.NoError(t, st.PutParts(k, []byte("ab"), nil, []byte("cde")))
	assert.Equal(t, "abcde", get(k))
	require.NoError(t, st.PutParts(k, []byte("x")), "write-once, as Put")
	assert.Equal(t, "abcde", get(k))
	require.NoError(t, st.UpsertParts(k, []byte("z"), []byte("z")))
	assert.Equal(t, "zz", get(k))
	isCode(t, st.PutParts(Key(t, "none")), mooncake.ErrInvalidParams, "no parts")
	isCode(t, st.PutParts(Key(t, "empty"), nil, []byte{}), mooncake.ErrInvalidParams, "0 bytes")
	big := make([]byte, 600<<10)
	isCode(t, st.PutParts(Key(t, "big"), big, big), mooncake.ErrInvalidParams, "more than the local buffer")

	keys := Keys(t, "batch", 3)
	require.NoError(t, st.PutBatch(hostmem.PackKeys(keys...), [][]byte{[]byte("v0"), []byte("v1"), []byte("v2")}))
	for i, k := range keys {
		assert.Equal(t, fmt.Sprintf("v%d", i), get(k))
	}
	require.NoError(t, st.UpsertBatch(hostmem.PackKeys(keys[:2]...), [][]byte{[]byte("u0"), []byte("u1")}))
	assert.Equal(t, "u0", get(keys[0]))
	assert.Equal(t, "u1", get(keys[1]))
	assert.Equal(t, "v2", get(keys[2]))

	fresh := Keys(t, "fresh", 2)
	for name, call := range map[string]func() error{
		"an empty value": func() error { return st.PutBatch(hostmem.PackKeys(fresh...), [][]byte{[]byte("a"), nil}) },
		"a key twice": func() error {
			return st.PutBatch(hostmem.PackKeys(fresh[0], fresh[0]), [][]byte{[]byte("a"), []byte("b")})
		},
		"too many bytes": func() error { return st.PutBatch(hostmem.PackKeys(fresh...), [][]byte{big, big}) },
		"lengths differ": func() error { return st.PutBatch(hostmem.PackKeys(fresh...), [][]byte{[]byte("a")}) },
		"same-node placing": func() error {
			return st.WithReplicateConfig(mooncake.ReplicateConfig{PreferAllocInSameNode: true}).PutBatch(hostmem.PackKeys(fresh...), [][]byte{[]byte("a"), []byte("b")})
		},
	} {
		isCode(t, call(), mooncake.ErrInvalidParams, name)
		res, err := st.BatchIsExist(hostmem.PackKeys(fresh...), nil)
		require.NoError(t, err)
		assert.Equal(t, []int64{0, 0}, res, "%s: nothing stored", name)
	}
	require.NoError(t, st.PutBatch(nil, nil), "an empty batch")
	// The empty value and the length mismatch are refused before the engine.
	pb := st.Stats().Op(mooncake.OpPutBatch)
	assert.Equal(t, [3]uint64{4, 3, 9}, [3]uint64{pb.Calls, pb.FailedCalls, pb.Keys}, "put_batch calls, failed, keys")
}

// get_replica_desc / batch_get_replica_desc: where each replica lives.
func testReplicaDesc(t *testing.T, c *Cluster) {
	a, b := c.Open(t), c.Open(t)
	ha, err := a.Hostname()
	require.NoError(t, err)
	hb, err := b.Hostname()
	require.NoError(t, err)
	k := Key(t, "one")
	require.NoError(t, a.WithReplicateConfig(mooncake.ReplicateConfig{PreferredSegments: []string{hb}}).Put(k, make([]byte, 1000)))
	reps, err := a.GetReplicaDesc(k)
	require.NoError(t, err)
	require.Equal(t, 1, len(reps), "%+v", reps)
	r := reps[0]
	assert.Equal(t, mooncake.ReplicaMemory, r.Kind)
	assert.Equal(t, mooncake.ReplicaComplete, r.Status)
	assert.EqualValues(t, 1000, r.Size)
	assert.True(t, strings.Contains(r.Location, hb) || strings.Contains(hb, r.Location), "replica on %q, placed on %q", r.Location, hb)
	if c.Native {
		assert.True(t, r.Address != 0, "a memory replica has an address")
	}

	two := Key(t, "two")
	require.NoError(t, a.WithReplicateConfig(mooncake.ReplicateConfig{ReplicaNum: 2, PreferredSegments: []string{ha, hb}}).Put(two, []byte("xy")))
	descKeys := []string{k, Key(t, "missing"), two}
	reps2, res, err := b.BatchGetReplicaDesc(hostmem.PackKeys(descKeys...), nil)
	checkFailed(t, mooncake.OpBatchGetReplicaDesc, descKeys, res, err, []int{1})
	assert.ErrorIs(t, err, mooncake.ErrObjectNotFound)
	assert.Equal(t, []int64{1, int64(mooncake.ErrObjectNotFound), 2}, res)
	require.Equal(t, 3, len(reps2))
	assert.Empty(t, reps2[1])
	require.Equal(t, 2, len(reps2[2]))
	assert.NotEqual(t, reps2[2][0].Location, reps2[2][1].Location, "two replicas on two segments")
	_, err = a.GetReplicaDesc(Key(t, "missing"))
	isCode(t, err, mooncake.ErrObjectNotFound)
	isCode(t, a.Remove(k, false), mooncake.ErrObjectHasLease, "the lookup granted a lease")
	assert.Equal(t, "memory", mooncake.ReplicaMemory.String())
	assert.Equal(t, "complete", mooncake.ReplicaComplete.String())
}

// batch_replica_clear: only the writer's objects, only without a live
// lease; on one segment, or all of them.
func testReplicaClear(t *testing.T, c *Cluster) {
	a, b := c.Open(t), c.Open(t)
	ha, err := a.Hostname()
	require.NoError(t, err)
	hb, err := b.Hostname()
	require.NoError(t, err)
	one, two, read := Key(t, "one"), Key(t, "two"), Key(t, "read")
	onA := a.WithReplicateConfig(mooncake.ReplicateConfig{PreferredSegments: []string{ha}})
	require.NoError(t, onA.Put(one, []byte("1")))
	require.NoError(t, onA.Put(read, []byte("r")))
	require.NoError(t, a.WithReplicateConfig(mooncake.ReplicateConfig{ReplicaNum: 2, PreferredSegments: []string{ha, hb}}).Put(two, []byte("22")))
	_, err = a.Get(read) // a lease
	require.NoError(t, err)

	res, err := b.BatchReplicaClear(hostmem.PackKeys(one, two), "", nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 0}, res, "another client's objects are skipped")
	res, err = a.BatchReplicaClear(hostmem.PackKeys(one, Key(t, "missing"), read), "", res)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 0, 0}, res, "cleared, missing, leased")
	ok, err := b.IsExist(one)
	require.NoError(t, err)
	assert.False(t, ok, "all replicas cleared: the object is gone")

	res, err = a.BatchReplicaClear(hostmem.PackKeys(two), hb, res)
	require.NoError(t, err)
	assert.Equal(t, []int64{1}, res, "the replica on b's segment")
	res, err = a.BatchReplicaClear(hostmem.PackKeys(two), hb, res)
	require.NoError(t, err)
	assert.Equal(t, []int64{0}, res, "no replica left there")
	reps, err := a.GetReplicaDesc(two)
	require.NoError(t, err)
	require.Equal(t, 1, len(reps))
	v, err := b.Get(two)
	require.NoError(t, err)
	assert.Equal(t, "22", string(v), "the other replica still serves")
	res, err = a.BatchReplicaClear(hostmem.PackKeys(two), ha, res)
	require.NoError(t, err)
	assert.Equal(t, []int64{0}, res, "the lookups granted a lease")
}

// batch_remove: one result per key, each as remove would give it; not
// atomic (the removable keys go even when others fail).
func testBatchRemove(t *testing.T, c *Cluster) {
	st := c.Open(t)
	keys := Keys(t, "k", 4) // 0, 1 (read: leased), 2 (never stored), 3
	for _, i := range []int{0, 1, 3} {
		require.NoError(t, st.Put(keys[i], []byte("v")))
	}
	_, err := st.Get(keys[1])
	require.NoError(t, err)
	res, err := st.BatchRemove(hostmem.PackKeys(keys...), false, make([]int64, 0, 4))
	assert.Equal(t, []int64{0, int64(mooncake.ErrObjectHasLease), int64(mooncake.ErrObjectNotFound), 0}, res)
	checkFailed(t, mooncake.OpBatchRemove, keys, res, err, []int{1, 2})
	isCode(t, err, mooncake.ErrObjectHasLease)
	isCode(t, err, mooncake.ErrObjectNotFound)

	res, err = st.BatchRemove(hostmem.PackKeys(keys[:2]...), true, res)
	assert.Equal(t, []int64{int64(mooncake.ErrObjectNotFound), 0}, res, "force removes the leased key")
	checkFailed(t, mooncake.OpBatchRemove, keys[:2], res, err, []int{0})
	res, err = st.BatchIsExist(hostmem.PackKeys(keys...), nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 0, 0, 0}, res)

	res, err = st.BatchRemove(nil, true, nil)
	require.NoError(t, err)
	assert.Empty(t, res)
}

// Stats counts every call that reached the engine: calls, keys, bytes,
// failures by code, latencies.
func testStats(t *testing.T, c *Cluster) {
	st := c.Open(t)
	assert.Empty(t, st.Stats().Ops, "a new client has counted nothing")
	k := Key(t, "k")
	require.NoError(t, st.Put(k, make([]byte, 100)))
	_, err := st.Get(k)
	require.NoError(t, err)
	_, err = st.Get(Key(t, "missing"))
	isCode(t, err, mooncake.ErrObjectNotFound)

	mem := Memory(t, st, 4*4096)
	keys := Keys(t, "b", 4)
	addrs := []uintptr{mem.Addr(), mem.Addr() + 4096, mem.Addr() + 8192, mem.Addr() + 12288}
	sizes := []uint64{4096, 4096, 4096, 4096}
	res, err := st.Raw().BatchPutFrom(keys[:3], addrs[:3], sizes[:3], nil)
	checkFailed(t, mooncake.OpBatchPutFrom, keys[:3], res, err, nil)
	res, err = st.Raw().BatchGetInto(keys, addrs, sizes, res) // the fourth is missing
	checkFailed(t, mooncake.OpBatchGetInto, keys, res, err, []int{3})

	s := st.Stats()
	put, get, bput, bget := s.Op(mooncake.OpPut), s.Op(mooncake.OpGet), s.Op(mooncake.OpBatchPutFrom), s.Op(mooncake.OpBatchGetInto)
	assert.Equal(t, [3]uint64{1, 1, 100}, [3]uint64{put.Calls, put.Keys, put.Bytes}, "put")
	assert.Equal(t, [5]uint64{2, 2, 100, 1, 1}, [5]uint64{get.Calls, get.Keys, get.Bytes, get.FailedCalls, get.FailedKeys}, "get")
	assert.Equal(t, map[mooncake.ErrorCode]uint64{mooncake.ErrObjectNotFound: 1}, get.Errors)
	assert.Equal(t, [3]uint64{1, 3, 3 * 4096}, [3]uint64{bput.Calls, bput.Keys, bput.Bytes}, "batch put")
	assert.Equal(t, [5]uint64{1, 4, 3 * 4096, 1, 1}, [5]uint64{bget.Calls, bget.Keys, bget.Bytes, bget.FailedCalls, bget.FailedKeys}, "batch get")
	assert.Equal(t, map[mooncake.ErrorCode]uint64{mooncake.ErrObjectNotFound: 1}, bget.Errors)
	for _, o := range s.Ops {
		assert.Equal(t, o.Calls, o.Latency.Count, "%s: one latency per call", o.Op)
		assert.True(t, o.Latency.Sum > 0, "%s: latencies summed", o.Op)
		assert.True(t, o.Latency.Quantile(0.99) >= o.Latency.Quantile(0.5), "%s: p99 >= p50", o.Op)
	}
	assert.Zero(t, s.Op(mooncake.OpRemoveAll).Calls, "an operation never called")

	// Ranged reads count bytes moved; a "key" of get_into_ranges is a range.
	reqs := []mooncake.KeyRanges{{Key: keys[0], Ranges: []mooncake.Range{
		{Addr: mem.Addr(), Offset: 0, Size: 10}, {Addr: mem.Addr() + 100, Offset: 4000, Size: 96}}}}
	res, err = st.GetIntoRanges(reqs, nil)
	checkFailed(t, mooncake.OpGetIntoRanges, rangeKeys(reqs), res, err, nil)
	gr := st.Stats().Op(mooncake.OpGetIntoRanges)
	assert.Equal(t, [3]uint64{1, 2, 106}, [3]uint64{gr.Calls, gr.Keys, gr.Bytes}, "get_into_ranges")

	// Views share the connection's counters; a closed store keeps them.
	v := st.WithReplicateConfig(mooncake.ReplicateConfig{})
	require.NoError(t, v.Put(Key(t, "v"), []byte("x")))
	assert.EqualValues(t, 2, st.Stats().Op(mooncake.OpPut).Calls)
	require.NoError(t, st.Close())
	assert.EqualValues(t, 2, st.Stats().Op(mooncake.OpPut).Calls)
	var zero mooncake.Store
	assert.Empty(t, zero.Stats().Ops)
}

// Config.LogLevel and LogDir reach upstream's glog (process-wide; the
// embedded engine writes no log but refuses the same input). A valid
// directory is tested in a process of its own (mooncake's TestLogDir).
func testLogOptions(t *testing.T, c *Cluster) {
	st := c.Open(t, func(cfg *mooncake.Config) { cfg.LogLevel = "warning" })
	require.NoError(t, st.HealthCheck())
	c.Open(t, func(cfg *mooncake.Config) { cfg.LogLevel = "info" })
	_, err := mooncake.Open(c.Config(func(cfg *mooncake.Config) { cfg.LogDir = "/nonexistent/mcgo-logs" }))
	isCode(t, err, mooncake.ErrInvalidParams, "a log directory that does not exist")
}

// Upstream's further setup options: honoured by the native backend,
// accepted by the embedded engine, which says so (Backend().Capabilities).
// The calls and options upstream versions differ in: the embedded engine
// has them all; what the native backend has depends on its upstream, and
// the cases of those calls check that each works, or fails with
// ErrNotSupported, as the capability says.
func testSetupOptions(t *testing.T, c *Cluster) {
	caps := mooncake.Backend().Capabilities
	t.Logf("%s backend, capabilities %+v", mooncake.Backend().Name, caps)
	if c.Native {
		setup := mooncake.Capabilities{Tenants: true, SSDOffload: true, ClientHTTPServer: true, NoFReplicas: true}
		assert.Equal(t, setup, mooncake.Capabilities{Tenants: caps.Tenants, SSDOffload: caps.SSDOffload,
			ClientHTTPServer: caps.ClientHTTPServer, NoFReplicas: caps.NoFReplicas}, "every setup option")
	} else {
		assert.Equal(t, mooncake.Capabilities{Sessions: true, MultiBufferUpsert: true, SoftPinActions: true, UnmountLocalDisk: true,
			MasterEtcd: true, MasterRedis: true, MasterK8s: true, MetadataHTTP: true, MetadataEtcd: true, MetadataRedis: true}, caps)
	}
	tenant := func(name string) func(*mooncake.Config) {
		return func(cfg *mooncake.Config) { cfg.TenantID = name }
	}
	a := c.Open(t, tenant("mcgo-tenant-a"))
	b := c.Open(t, tenant("mcgo-tenant-b"))
	k := Key(t, "k")
	require.NoError(t, a.Put(k, []byte("A")))
	// Upstream's master resolves every tenant to "default" unless it runs
	// with --enable_multi_tenants (and a quota table that knows the
	// tenant); the test clusters do not: one namespace, on both engines.
	v, err := b.Get(k)
	require.NoError(t, err, "one namespace for every tenant")
	assert.Equal(t, "A", string(v))
	_, err = mooncake.Open(c.Config(func(cfg *mooncake.Config) { cfg.ClientHTTPPort = 70000 }))
	isCode(t, err, mooncake.ErrInvalidParams, "a port out of range")
	assert.ErrorIs(t, err, mooncake.ErrInvalidConfig)

	if caps.ClientHTTPServer {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		c.Open(t, func(cfg *mooncake.Config) { cfg.EnableClientHTTPServer, cfg.ClientHTTPPort = true, port })
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 5*time.Second)
		require.NoError(t, err, "the client's HTTP server listens")
		conn.Close()
	}
}

// The rest of upstream's ReplicateConfig: soft-pin actions and TTL (the old
// WithSoftPin still works), NoF and DFS replicas.
// Without Capabilities.SoftPinActions (upstream v0.3.12.post1, which has
// only the bool with_soft_pin), SoftPinDisable and SoftPinTTL fail with
// ErrNotSupported, and the rest works; without DFSReplicas, so does a DFS
// replica count.
func testReplicateOptions(t *testing.T, c *Cluster) {
	st := c.Open(t)
	caps := mooncake.Backend().Capabilities
	for name, rc := range map[string]mooncake.ReplicateConfig{
		"enable, 1 min": {SoftPinAction: mooncake.SoftPinEnable, SoftPinTTL: time.Minute},
		"disable":       {SoftPinAction: mooncake.SoftPinDisable},
		"with_soft_pin": {WithSoftPin: true},
		"enable":        {SoftPinAction: mooncake.SoftPinEnable},
		"preserve":      {},
	} {
		k := Key(t, name)
		v := st.WithReplicateConfig(rc)
		if !caps.SoftPinActions && (rc.SoftPinAction == mooncake.SoftPinDisable || rc.SoftPinTTL != 0) {
			require.True(t, c.Native, "the embedded engine has the soft-pin actions")
			isCode(t, v.Put(k, []byte("v")), mooncake.ErrNotSupported, name)
			isCode(t, v.Upsert(k, []byte("w")), mooncake.ErrNotSupported, name)
			bk := []string{k}
			mem := Memory(t, st, 4096)
			res, err := v.Raw().BatchPutFrom(bk, []uintptr{mem.Addr()}, []uint64{4096}, nil)
			checkRefused(t, mooncake.OpBatchPutFrom, res, err, mooncake.ErrNotSupported, name)
			ok, err := st.IsExist(k)
			require.NoError(t, err)
			assert.False(t, ok, "%s: nothing stored", name)
			continue
		}
		require.NoError(t, v.Put(k, []byte("v")), name)
		require.NoError(t, v.Upsert(k, []byte("w")), name)
		got, err := st.Get(k)
		require.NoError(t, err, name)
		assert.Equal(t, "w", string(got), name)
		assert.Equal(t, rc, v.ReplicateConfig(), name)
	}
	for name, rc := range map[string]mooncake.ReplicateConfig{
		"unknown action": {SoftPinAction: 7},
		"ttl under 1 ms": {SoftPinTTL: time.Microsecond},
		"negative nof":   {NoFReplicaNum: -1},
		"empty nof name": {PreferredNoFSegments: []string{""}},
	} {
		isCode(t, st.WithReplicateConfig(rc).Put(Key(t, "bad"), []byte("v")), mooncake.ErrInvalidParams, name)
	}
	// The test clusters have no NoF or DFS storage: upstream refuses such
	// replicas with INVALID_PARAMS, and so does the embedded engine, which
	// never has any.
	mem := Memory(t, st, 4096)
	for _, tc := range []struct {
		name string
		rc   mooncake.ReplicateConfig
		code mooncake.ErrorCode
	}{
		{"nof", mooncake.ReplicateConfig{NoFReplicaNum: 1}, mooncake.ErrInvalidParams},
		{"dfs", mooncake.ReplicateConfig{DFSReplicaNum: 1}, mooncake.ErrDFSServiceUnavailable},
	} {
		v := st.WithReplicateConfig(tc.rc)
		bk := []string{Key(t, tc.name+"-batch")}
		if tc.rc.DFSReplicaNum != 0 && c.Native && !caps.DFSReplicas {
			// An upstream without DFS replicas (v0.3.12.post1): every
			// write asking for one is refused as a whole.
			isCode(t, v.Put(Key(t, tc.name), []byte("v")), mooncake.ErrNotSupported, tc.name)
			res, err := v.Raw().BatchPutFrom(bk, []uintptr{mem.Addr()}, []uint64{4096}, nil)
			checkRefused(t, mooncake.OpBatchPutFrom, res, err, mooncake.ErrNotSupported, tc.name)
			continue
		}
		isCode(t, v.Put(Key(t, tc.name), []byte("v")), tc.code, tc.name)
		res, err := v.Raw().BatchPutFrom(bk, []uintptr{mem.Addr()}, []uint64{4096}, nil)
		checkFailed(t, mooncake.OpBatchPutFrom, bk, res, err, []int{0}, tc.name)
		assert.Equal(t, []int64{int64(tc.code)}, res, "%s: a code per key", tc.name)
	}
}

func testRemoveByRegex(t *testing.T, c *Cluster) {
	st := c.Open(t)
	keys := Keys(t, "a", 5)
	keys = append(keys, Keys(t, "b", 3)...)
	for _, k := range keys {
		require.NoError(t, st.Put(k, []byte(k)))
	}
	n, err := st.RemoveByRegex(KeyRegexPrefix(t)+"a-", false)
	require.NoError(t, err)
	assert.EqualValues(t, 5, n)
	ex, err := st.BatchIsExist(hostmem.PackKeys(keys...), nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 0, 0, 0, 0, 1, 1, 1}, ex)
	_, err = st.RemoveByRegex("(unclosed", false)
	isCode(t, err, mooncake.ErrInvalidParams, "bad pattern")
	_, err = st.RemoveByRegex("", false)
	isCode(t, err, mooncake.ErrInvalidParams, "empty pattern")
	// Patterns that crash or hang upstream's master never leave the process.
	for _, p := range []string{"(a*)*b", "(x|y)+", "a*b*c*d", `(a)\1`, "(?=a)", `\bk`, "a{1000}"} {
		_, err = st.RemoveByRegex(p, true)
		isCode(t, err, mooncake.ErrInvalidParams, "unsafe pattern "+p)
		assert.ErrorIs(t, err, mooncake.ErrPatternRefused, p)
	}
	// The subset keeps the ECMAScript meaning: classes, \d, groups, anchors.
	n, err = st.RemoveByRegex(KeyRegexPrefix(t)+`(?:x|b)-\d$`, true) // BatchIsExist leased them
	require.NoError(t, err)
	assert.EqualValues(t, 3, n)
	for _, k := range keys[5:] {
		require.NoError(t, st.Put(k, []byte(k)))
	}
	if c.Isolated {
		n, err = st.RemoveAll(true)
		require.NoError(t, err)
		assert.EqualValues(t, 3, n)
	} else {
		n, err = st.RemoveByRegex(KeyRegexPrefix(t), true)
		require.NoError(t, err)
		assert.EqualValues(t, 3, n)
	}
	ex, err = st.BatchIsExist(hostmem.PackKeys(keys...), ex)
	require.NoError(t, err)
	assert.Equal(t, make([]int64, len(keys)), ex)
}

// testKeyLength: keys up to mooncake.MaxKeyLen work; a longer one is refused
// before it reaches the master, by every call, naming the key.
func testKeyLength(t *testing.T, c *Cluster) {
	st := c.Open(t)
	prefix := Key(t, "")
	longest := prefix + strings.Repeat("k", mooncake.MaxKeyLen-len(prefix))
	require.NoError(t, st.Put(longest, []byte("v")))
	ok, err := st.IsExist(longest)
	require.NoError(t, err)
	assert.True(t, ok)
	require.NoError(t, st.Remove(longest, true))

	tooLong := longest + "k"
	for name, err := range map[string]error{
		"Put":    st.Put(tooLong, []byte("v")),
		"Remove": st.Remove(tooLong, true),
	} {
		isCode(t, err, mooncake.ErrInvalidParams, name)
		assert.ErrorIs(t, err, mooncake.ErrKeyTooLong, name)
	}
	_, err = st.Get(tooLong)
	assert.ErrorIs(t, err, mooncake.ErrKeyTooLong, "Get")
	res, err := st.BatchRemove(hostmem.PackKeys(Key(t, "fine"), tooLong), true, nil)
	assert.ErrorIs(t, err, mooncake.ErrKeyTooLong, "BatchRemove")
	checkRefused(t, mooncake.OpBatchRemove, res, err, mooncake.ErrInvalidParams, "BatchRemove")
	res, err = st.BatchIsExist(hostmem.PackKeys(Key(t, "fine"), tooLong), nil)
	assert.ErrorIs(t, err, mooncake.ErrKeyTooLong, "BatchIsExist")
	checkRefused(t, mooncake.OpBatchIsExist, res, err, mooncake.ErrInvalidParams, "BatchIsExist")
	var me *mooncake.Error
	if assert.ErrorAs(t, err, &me) {
		assert.Equal(t, tooLong, me.Key, "the error names the key")
	}
}

func testSharedCluster(t *testing.T, c *Cluster) {
	a := c.Open(t)
	b := c.Open(t)
	ha, err := a.Hostname()
	require.NoError(t, err)
	hb, err := b.Hostname()
	require.NoError(t, err)
	assert.NotEqual(t, ha, hb, "each client has its own segment name")
	k := Key(t, "k")
	require.NoError(t, a.Put(k, []byte("from a")))
	got, err := b.Get(k)
	require.NoError(t, err)
	assert.Equal(t, "from a", string(got))
}

func testReplicateConfig(t *testing.T, c *Cluster) {
	a := c.Open(t)
	b := c.Open(t)
	ha, err := a.Hostname()
	require.NoError(t, err)
	hb, err := b.Hostname()
	require.NoError(t, err)
	onA := b.WithReplicateConfig(mooncake.ReplicateConfig{PreferredSegments: []string{ha}})
	onB := b.WithReplicateConfig(mooncake.ReplicateConfig{PreferredSegments: []string{hb}})
	assert.Equal(t, []string{ha}, onA.ReplicateConfig().PreferredSegments)
	kA, kB := Key(t, "on-a"), Key(t, "on-b")
	require.NoError(t, onA.Put(kA, []byte("a")))
	require.NoError(t, onB.Put(kB, []byte("b")))
	// Closing a unmounts its segment: the object placed there goes with it.
	require.NoError(t, a.Close())
	ok, err := b.IsExist(kA)
	require.NoError(t, err)
	assert.False(t, ok, "object on the closed client's segment is gone")
	ok, err = b.IsExist(kB)
	require.NoError(t, err)
	assert.True(t, ok)

	sameNode := b.WithReplicateConfig(mooncake.ReplicateConfig{PreferAllocInSameNode: true, ReplicaNum: 2})
	isCode(t, sameNode.Put(Key(t, "same-node-2"), []byte("x")), mooncake.ErrInvalidParams, "same-node allocation with 2 replicas")
	bad := b.WithReplicateConfig(mooncake.ReplicateConfig{PreferredSegments: []string{""}})
	isCode(t, bad.Put(Key(t, "bad"), []byte("x")), mooncake.ErrInvalidParams, "empty segment name")
	neg := b.WithReplicateConfig(mooncake.ReplicateConfig{ReplicaNum: -1})
	res, err := neg.Raw().BatchPutFrom([]string{Key(t, "neg")}, []uintptr{0}, []uint64{1}, nil)
	checkRefused(t, mooncake.OpBatchPutFrom, res, err, mooncake.ErrInvalidParams, "negative replica count")
	two := b.WithReplicateConfig(mooncake.ReplicateConfig{ReplicaNum: 2, WithSoftPin: true, WithHardPin: true})
	require.NoError(t, two.Put(Key(t, "two"), []byte("x")), "more replicas than segments is best effort")
}

func testCapacity(t *testing.T, c *Cluster) {
	if !c.Isolated {
		t.Skip("needs a cluster of its own (MCGO_TEST_ISOLATED=1 for a live one): other clients' segments would take the objects")
	}
	// 16 MiB is the smallest segment upstream mounts (its slab size).
	st := c.Open(t, func(cfg *mooncake.Config) { cfg.GlobalSegmentSize = 16 << 20 })
	mem := Memory(t, st, 32<<20)
	isCode(t, st.Raw().PutFrom(Key(t, "too-big"), mem.Addr(), 32<<20), mooncake.ErrNoAvailableHandle, "an object larger than every segment")
	var last error
	for i := 0; i < 8 && last == nil; i++ {
		last = st.Raw().PutFrom(Key(t, fmt.Sprint(i)), mem.Addr(), 4<<20)
	}
	isCode(t, last, mooncake.ErrNoAvailableHandle, "filling the segment")
	n, err := st.RemoveAll(true)
	require.NoError(t, err)
	if !c.Native {
		// The real master also evicts in the background once a put fails,
		// so only the embedded engine (no eviction) gives an exact count.
		assert.Positive(t, n)
	}
	require.NoError(t, st.Raw().PutFrom(Key(t, "after"), mem.Addr(), 4<<20), "space is reusable after removal")
}

func testSmallSegmentRefused(t *testing.T, c *Cluster) {
	for _, size := range []mooncake.Size{1, 1 << 20, 16<<20 - 1} {
		st, err := mooncake.Open(c.Config(func(cfg *mooncake.Config) { cfg.GlobalSegmentSize = size }))
		if st != nil {
			_ = st.Close()
		}
		isCode(t, err, mooncake.ErrInvalidParams, "segment of", size, "bytes")
	}
	// 0 mounts nothing: a pure client, whose puts land in others' segments.
	owner := c.Open(t)
	pure := c.Open(t, func(cfg *mooncake.Config) { cfg.GlobalSegmentSize = 0 })
	k := Key(t, "from-pure-client")
	require.NoError(t, pure.Put(k, []byte("x")))
	got, err := owner.Get(k)
	require.NoError(t, err)
	assert.Equal(t, "x", string(got))
}

// Upstream's master grants the read lease on every lookup that finds an
// object: existence and size queries too, not only gets.
func testExistsGrantsLease(t *testing.T, c *Cluster) {
	st := c.Open(t)
	for name, lookup := range map[string]func(string) error{
		"IsExist": func(k string) error { _, err := st.IsExist(k); return err },
		"GetSize": func(k string) error { _, err := st.GetSize(k); return err },
		"BatchIsExist": func(k string) error {
			_, err := st.BatchIsExist(hostmem.PackKeys(k), nil)
			return err
		},
	} {
		k := Key(t, name)
		require.NoError(t, st.Put(k, []byte("v")))
		require.NoError(t, lookup(k))
		isCode(t, st.Remove(k, false), mooncake.ErrObjectHasLease, name, " grants a lease")
		require.NoError(t, st.Remove(k, true))
	}
}

func testEmptyKey(t *testing.T, c *Cluster) {
	st := c.Open(t)
	mem := Memory(t, st, 1<<16)
	isCode(t, st.Put("", []byte("x")), mooncake.ErrInvalidParams, "copying put")
	isCode(t, st.Raw().PutFrom("", mem.Addr(), 8), mooncake.ErrInvalidParams, "zero-copy put")
	keys := []string{"", Key(t, "ok")}
	res, err := st.Raw().BatchPutFrom(keys, []uintptr{mem.Addr(), mem.Addr()}, []uint64{8, 8}, nil)
	checkFailed(t, mooncake.OpBatchPutFrom, keys, res, err, []int{0})
	assert.Equal(t, []int64{int64(mooncake.ErrInvalidParams), 0}, res, "only the empty key fails")
	// Reads treat it as missing.
	_, err = st.Get("")
	isCode(t, err, mooncake.ErrObjectNotFound)
	ok, err := st.IsExist("")
	require.NoError(t, err)
	assert.False(t, ok)
	ex, err := st.BatchIsExist(hostmem.PackKeys(""), nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{0}, ex)
}

// The copying calls stage objects in the client's local buffer.
func testLocalBufferLimit(t *testing.T, c *Cluster) {
	st := c.Open(t, func(cfg *mooncake.Config) { cfg.LocalBufferSize = 1 << 20 })
	mem := Memory(t, st, 4<<20)
	big := make([]byte, 2<<20)
	isCode(t, st.Put(Key(t, "big"), big), mooncake.ErrInvalidParams, "copying put larger than the local buffer")
	k := Key(t, "zero-copy")
	require.NoError(t, st.Raw().PutFrom(k, mem.Addr(), 2<<20), "zero-copy puts are not limited by it")
	_, err := st.Get(k)
	isCode(t, err, mooncake.ErrInvalidParams, "copying get of an object larger than the local buffer")
	n, err := st.Raw().GetInto(k, mem.Addr()+2<<20, 2<<20)
	require.NoError(t, err)
	assert.EqualValues(t, 2<<20, n)
}

// Duplicate keys in one batch put: every occurrence reports 0; the stored
// value is that of the key's last buffer (upstream keeps slices in a per-key
// map).
func testDuplicateKeysInBatch(t *testing.T, c *Cluster) {
	st := c.Open(t)
	mem := Memory(t, st, 1<<16)
	b := mem.Bytes()
	copy(b[0:], "first!")
	copy(b[4096:], "second")
	k := Key(t, "dup")
	res, err := st.Raw().BatchPutFrom([]string{k, k}, []uintptr{mem.Addr(), mem.Addr() + 4096}, []uint64{6, 6}, nil)
	checkFailed(t, mooncake.OpBatchPutFrom, []string{k, k}, res, err, nil)
	assert.Equal(t, []int64{0, 0}, res)
	got, err := st.Get(k)
	require.NoError(t, err)
	assert.Equal(t, "second", string(got))
}

func testSameNodeRules(t *testing.T, c *Cluster) {
	st := c.Open(t)
	mem := Memory(t, st, 1<<16)
	same := st.WithReplicateConfig(mooncake.ReplicateConfig{PreferAllocInSameNode: true})
	isCode(t, same.Put(Key(t, "copy"), []byte("x")), mooncake.ErrInvalidParams, "copying put")
	isCode(t, same.Raw().PutFrom(Key(t, "zc"), mem.Addr(), 64), mooncake.ErrInvalidParams, "put_from")
	res, err := same.Raw().BatchPutFrom([]string{Key(t, "b")}, []uintptr{mem.Addr()}, []uint64{64}, nil)
	checkRefused(t, mooncake.OpBatchPutFrom, res, err, mooncake.ErrInvalidParams, "batch_put_from refuses the call")
	two := st.WithReplicateConfig(mooncake.ReplicateConfig{PreferAllocInSameNode: true, ReplicaNum: 2})
	res, err = two.Raw().BatchPutFromMultiBuffers([]string{Key(t, "m2")}, []uintptr{mem.Addr()}, []uint64{64}, []uint64{0, 1}, nil)
	checkRefused(t, mooncake.OpBatchPutFromMultiBuffers, res, err, mooncake.ErrInvalidParams, "multi-buffer put with two replicas on the same node")
	keys := Keys(t, "multi", 2)
	res, err = same.Raw().BatchPutFromMultiBuffers(keys, []uintptr{mem.Addr(), mem.Addr() + 64}, []uint64{64, 64}, []uint64{0, 1, 2}, nil)
	checkFailed(t, mooncake.OpBatchPutFromMultiBuffers, keys, res, err, nil)
	assert.Equal(t, []int64{0, 0}, res, "multi-buffer puts accept it with one replica")
	res, err = same.Raw().BatchGetIntoMultiBuffers(keys, []uintptr{mem.Addr() + 4096, mem.Addr() + 8192}, []uint64{64, 64}, []uint64{0, 1, 2}, nil)
	checkFailed(t, mooncake.OpBatchGetIntoMultiBuffers, keys, res, err, nil)
	assert.Equal(t, []int64{64, 64}, res)
}

func testZeroSizeBuffersInList(t *testing.T, c *Cluster) {
	st := c.Open(t)
	mem := Memory(t, st, 1<<16)
	b := mem.Bytes()
	copy(b, "abcdef")
	k := Key(t, "k")
	res, err := st.Raw().BatchPutFromMultiBuffers([]string{k}, []uintptr{mem.Addr(), mem.Addr() + 3, mem.Addr() + 3}, []uint64{3, 0, 3}, []uint64{0, 3}, nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{0}, res)
	got, err := st.Get(k)
	require.NoError(t, err)
	assert.Equal(t, "abcdef", string(got))
	dst := mem.Addr() + 4096
	res, err = st.Raw().BatchGetIntoMultiBuffers([]string{k}, []uintptr{dst, dst + 10, dst + 2}, []uint64{2, 0, 4}, []uint64{0, 3}, nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{6}, res)
	assert.Equal(t, "ab", string(b[4096:4098]))
	assert.Equal(t, "cdef", string(b[4098:4102]))
}

func testRegexIsPartialMatch(t *testing.T, c *Cluster) {
	st := c.Open(t)
	keys := Keys(t, "item", 3)
	for _, k := range keys {
		require.NoError(t, st.Put(k, []byte("v")))
	}
	// No anchors: the pattern matches anywhere in the key.
	n, err := st.RemoveByRegex(regexp.QuoteMeta(runID)+".*item-1$", false)
	require.NoError(t, err)
	assert.EqualValues(t, 1, n)
	ex, err := st.BatchIsExist(hostmem.PackKeys(keys...), nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 0, 1}, ex)
}

func testConcurrency(t *testing.T, c *Cluster) {
	st := c.Open(t)
	const workers, rounds, batch, size = 8, 20, 16, 2048
	mem := Memory(t, st, workers*2*batch*size)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			base := mem.Addr() + uintptr(w*2*batch*size)
			b := mem.Bytes()[w*2*batch*size : (w+1)*2*batch*size]
			addrs := make([]uintptr, batch)
			dsts := make([]uintptr, batch)
			sizes := make([]uint64, batch)
			res := make([]int64, batch)
			for i := range addrs {
				addrs[i] = base + uintptr(i*size)
				dsts[i] = base + uintptr((batch+i)*size)
				sizes[i] = size
			}
			for r := 0; r < rounds; r++ {
				keys := Keys(t, fmt.Sprintf("w%d-r%d", w, r), batch)
				Fill(b[:batch*size], uint64(w*1000+r))
				var err error
				// Every key must succeed: a *BatchError says which did not.
				if res, err = st.Raw().BatchPutFrom(keys, addrs, sizes, res); err != nil {
					errs <- err
					return
				}
				if res, err = st.Raw().BatchGetInto(keys, dsts, sizes, res); err != nil {
					errs <- err
					return
				}
				for i, n := range res {
					if n != size {
						errs <- fmt.Errorf("worker %d round %d: key %d read %d bytes, want %d, and no error", w, r, i, n, size)
						return
					}
				}
				if !bytes.Equal(b[:batch*size], b[batch*size:]) {
					errs <- fmt.Errorf("worker %d round %d: bytes differ", w, r)
					return
				}
				if _, err = st.RemoveByRegex("^"+regexp.QuoteMeta(keys[0][:len(keys[0])-1]), true); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func testCloseDuringCalls(t *testing.T, c *Cluster) {
	st := c.Open(t)
	mem := Memory(t, nil, 1<<20)
	require.NoError(t, st.RegisterMemory(mem))
	const workers = 8
	var wg sync.WaitGroup
	start := make(chan struct{})
	bad := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			keys := Keys(t, fmt.Sprintf("w%d", w), 8)
			addrs := make([]uintptr, 8)
			sizes := make([]uint64, 8)
			for i := range addrs {
				addrs[i] = mem.Addr() + uintptr((w*8+i)*1024)
				sizes[i] = 1024
			}
			res := make([]int64, 8)
			<-start
			for i := 0; ; i++ {
				var err error
				switch i % 3 {
				case 0:
					res, err = st.Raw().BatchPutFrom(keys, addrs, sizes, res)
				case 1:
					res, err = st.Raw().BatchGetInto(keys, addrs, sizes, res)
				default:
					_, err = st.Get(keys[0])
				}
				if err != nil {
					if errors.Is(err, mooncake.ErrClosed) {
						return
					}
					if !errors.Is(err, mooncake.ErrObjectNotFound) {
						bad <- err
						return
					}
				}
				if i > 100000 {
					bad <- errors.New("store never reported closed")
					return
				}
			}
		}(w)
	}
	close(start)
	require.NoError(t, st.Close())
	wg.Wait()
	close(bad)
	for err := range bad {
		t.Error(err)
	}
	require.NoError(t, st.Close())
}

// testTypedCalls: spans and packed keys move the same bytes as the uintptr
// calls, and malformed packed lists are refused before the crossing.
func testTypedCalls(t *testing.T, c *Cluster) {
	st := c.Open(t)
	mem := Memory(t, st, 1<<20)
	src, err := mem.Span(0, 4096)
	require.NoError(t, err)
	fill.Fill(src.Bytes(), 7)
	k := Key(t, "span")
	require.NoError(t, st.PutFrom(k, src))
	dst, err := mem.Span(1<<19, 4096)
	require.NoError(t, err)
	n, err := st.GetInto(k, dst)
	require.NoError(t, err)
	assert.EqualValues(t, 4096, n)
	assert.Equal(t, src.Bytes(), dst.Bytes())
	fill.Fill(src.Bytes(), 8)
	require.NoError(t, st.UpsertFrom(k, src))
	_, err = st.GetInto(k, dst)
	require.NoError(t, err)
	assert.Equal(t, src.Bytes(), dst.Bytes())
	isCode(t, st.PutFrom(Key(t, "zero span"), hostmem.Span{}), mooncake.ErrInvalidParams, "the zero Span")

	// Packed keys, one buffer per key and a list per key.
	keys := hostmem.PackKeys(Key(t, "p0"), Key(t, "p1"), Key(t, "p2"))
	base := mem.Addr()
	single := hostmem.Buffers{Addrs: []uintptr{base, base + 1024, base + 2048}, Sizes: []uint64{1024, 1024, 1024}}
	res, err := st.BatchPutFrom(keys, single, make([]int64, 0, 3))
	checkFailed(t, mooncake.OpBatchPutFrom, keys.Strings(), res, err, nil)
	ex, err := st.BatchIsExist(keys, nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 1, 1}, ex)
	out := hostmem.Buffers{Addrs: []uintptr{base + 1<<19, base + 1<<19 + 1024, base + 1<<19 + 2048}, Sizes: []uint64{1024, 1024, 1024}}
	res, err = st.BatchGetInto(keys, out, res)
	require.NoError(t, err)
	assert.Equal(t, []int64{1024, 1024, 1024}, res)
	assert.Equal(t, mem.Bytes()[:3072], mem.Bytes()[1<<19:1<<19+3072])

	mk := hostmem.PackKeys(Key(t, "m0"), Key(t, "m1"))
	multi := hostmem.Buffers{Addrs: []uintptr{base, base + 100, base + 300}, Sizes: []uint64{100, 200, 50}, Offsets: []uint64{0, 2, 3}}
	res, err = st.BatchPutFrom(mk, multi, nil)
	checkFailed(t, mooncake.OpBatchPutFromMultiBuffers, mk.Strings(), res, err, nil)
	mout := hostmem.Buffers{Addrs: []uintptr{base + 1<<19, base + 1<<19 + 100, base + 1<<19 + 300}, Sizes: multi.Sizes, Offsets: multi.Offsets}
	res, err = st.BatchGetInto(mk, mout, nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{300, 50}, res)
	res, err = st.BatchUpsertFrom(mk, multi, nil)
	if mooncake.Backend().Capabilities.MultiBufferUpsert {
		require.NoError(t, err)
		assert.Equal(t, []int64{0, 0}, res)
	} else {
		checkRefused(t, mooncake.OpBatchUpsertFromMultiBuffers, res, err, mooncake.ErrNotSupported, "upstream without the multi-buffer upsert")
	}

	// Malformed lists never reach C.
	bad := &hostmem.Keys{Buf: []byte("ab"), Offsets: []uint64{0, 3}}
	res, err = st.BatchIsExist(bad, nil)
	checkRefused(t, mooncake.OpBatchIsExist, res, err, mooncake.ErrInvalidParams, "keys past their buffer")
	assert.True(t, errors.Is(err, hostmem.ErrShape))
	res, err = st.BatchGetInto(bad, hostmem.Buffers{Addrs: single.Addrs[:1], Sizes: single.Sizes[:1]}, nil)
	checkRefused(t, mooncake.OpBatchGetInto, res, err, mooncake.ErrInvalidParams, "keys past their buffer")
	assert.True(t, errors.Is(err, hostmem.ErrShape))
	res, err = st.BatchPutFrom(keys, hostmem.Buffers{Addrs: single.Addrs[:2], Sizes: single.Sizes[:2]}, nil)
	checkRefused(t, mooncake.OpBatchPutFrom, res, err, mooncake.ErrInvalidParams, "two buffers for three keys")
	res, err = st.BatchGetInto(mk, hostmem.Buffers{Addrs: multi.Addrs, Sizes: multi.Sizes, Offsets: []uint64{0, 3, 2}}, nil)
	checkRefused(t, mooncake.OpBatchGetIntoMultiBuffers, res, err, mooncake.ErrInvalidParams, "decreasing offsets")
	res, err = st.BatchPutFrom(nil, hostmem.Buffers{}, nil)
	require.NoError(t, err, "no keys")
	assert.Empty(t, res)
	// Keys that are all empty still cross (and fail per key, as upstream).
	empty := hostmem.PackKeys("", "")
	ex, err = st.BatchIsExist(empty, nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 0}, ex)
}

// testRegisteredMemoryIsNotFreed: memory registered through RegisterMemory
// cannot be unmapped under the store; UnregisterMemory or Close lets go.
func testRegisteredMemoryIsNotFreed(t *testing.T, c *Cluster) {
	st := c.Open(t)
	mem, err := hostmem.Alloc(1<<20, hostmem.Options{})
	require.NoError(t, err)
	require.NoError(t, st.RegisterMemory(mem))
	isCode(t, st.RegisterMemory(mem), mooncake.ErrInvalidParams, "registered twice")
	assert.Equal(t, 1, mem.Registrations(), "a refused registration is not counted")
	assert.True(t, errors.Is(mem.Free(), hostmem.ErrRegistered))
	require.NoError(t, st.PutFrom(Key(t, "still mapped"), mem.All()), "the memory is still usable")
	require.NoError(t, st.UnregisterMemory(mem))
	isCode(t, st.UnregisterMemory(mem), mooncake.ErrInvalidParams, "unregistered twice")
	require.NoError(t, st.RegisterMemory(mem))
	require.NoError(t, st.Close())
	assert.Equal(t, 0, mem.Registrations(), "Close ends the registrations")
	require.NoError(t, mem.Free())
	isCode(t, c.Open(t).RegisterMemory(mem), mooncake.ErrInvalidParams, "freed memory")
}

var enginePort atomic.Int64

// testStoreOnEngine: a store opened on a transfer engine moves its bytes
// with it and shares its registrations; the engine outlives the store.
func testStoreOnEngine(t *testing.T, c *Cluster) {
	base := c.Config()
	name := "127.0.0.1"
	if base.MetadataServer != "P2PHANDSHAKE" {
		name = fmt.Sprintf("127.0.0.1:%d", 21000+enginePort.Add(1)+int64(os.Getpid()%500)*10)
	}
	e, err := transfer.Open(transfer.Config{MetadataServer: base.MetadataServer, LocalServerName: name, Protocol: base.Protocol})
	require.NoError(t, err, "open engine")
	defer func() { require.NoError(t, e.Close(), "close the engine after the store") }()

	cfg := base
	cfg.LocalHostname = "127.0.0.2:1" // not the engine's
	_, err = mooncake.OpenOnEngine(cfg, e)
	isCode(t, err, mooncake.ErrInvalidParams, "a hostname that is not the engine's")

	cfg.LocalHostname, cfg.MetadataServer = "", ""
	st, err := mooncake.OpenOnEngine(cfg, e)
	require.NoError(t, err, "open on the engine")
	host, err := st.Hostname()
	require.NoError(t, err)
	assert.Equal(t, e.SegmentName(), host, "the store's segment is the engine's")
	assert.True(t, errors.Is(e.Close(), transfer.ErrBatchBusy), "closing the engine under the store")

	// Memory registered with the engine serves the store's zero-copy calls.
	mem, err := hostmem.Alloc(1<<20, hostmem.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, mem.Free()) }()
	require.NoError(t, e.RegisterMemory(mem), "register with the engine")
	fill.Fill(mem.Bytes()[:4096], 11)
	k := Key(t, "on-engine")
	require.NoError(t, st.Raw().PutFrom(k, mem.Addr(), 4096))
	n, err := st.Raw().GetInto(k, mem.Addr()+8192, 4096)
	require.NoError(t, err)
	assert.EqualValues(t, 4096, n)
	assert.Equal(t, mem.Bytes()[:4096], mem.Bytes()[8192:8192+4096])
	// ... and memory registered through the store is the engine's.
	isCode(t, st.RegisterBuffer(mem.Addr(), 4096), mooncake.ErrInvalidParams, "registered twice, through the engine and the store")
	require.NoError(t, e.UnregisterMemory(mem))
	require.NoError(t, st.Close())
	require.NoError(t, e.Close(), "the engine closes once the store is gone")
}
