package mooncaketest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// The v0.1.0 contract of batch calls, registration and the two levels of
// the zero-copy API, on whichever engine the suite runs.

// batchCase is one batch call of testBatchErrorContract: it is given keys
// of which those at failAt must fail with code (they are missing, or
// their buffers are empty) and the others succeed with ok.
type batchCase struct {
	name string
	op   mooncake.Op
	code mooncake.ErrorCode
	// stored: the keys that should succeed exist before the call (reads,
	// removes, lookups); otherwise every key is fresh (writes).
	stored bool
	ok     int64 // the result of a key that succeeded
	call   func(t *testing.T, st *mooncake.Store, z *zone, keys []string, fail []bool) ([]int64, error)
	// needs, when set, says whether the backend has the call
	// (Capabilities); without it the call is refused as a whole with
	// ErrNotSupported.
	needs func(mooncake.Capabilities) bool
}

func hasMultiBufferUpsert(c mooncake.Capabilities) bool { return c.MultiBufferUpsert }
func hasSessions(c mooncake.Capabilities) bool          { return c.Sessions }

// zone is registered memory for a test: src holds a pattern, dst receives.
type zone struct {
	mem      *hostmem.Memory
	src, dst uintptr
}

const contractSize = 4096

func newZone(t *testing.T, st *mooncake.Store) *zone {
	mem := Memory(t, st, 1<<20)
	Fill(mem.Bytes()[:1<<19], 21)
	return &zone{mem: mem, src: mem.Addr(), dst: mem.Addr() + 1<<19}
}

// single is one buffer per key at base; a failing key's buffer is empty
// when empty is set.
func (z *zone) single(base uintptr, fail []bool, empty bool) hostmem.Buffers {
	var b hostmem.Buffers
	for i := range fail {
		size := uint64(contractSize)
		if empty && fail[i] {
			size = 0
		}
		b.Addrs = append(b.Addrs, base+uintptr(i*contractSize))
		b.Sizes = append(b.Sizes, size)
	}
	return b
}

// multi is two half buffers per key at base (in reverse order, so that
// the object is scattered); a failing key has no buffer when empty is set.
func (z *zone) multi(base uintptr, fail []bool, empty bool) hostmem.Buffers {
	b := hostmem.Buffers{Offsets: []uint64{0}}
	for i := range fail {
		if !(empty && fail[i]) {
			at := base + uintptr(i*contractSize)
			b.Addrs = append(b.Addrs, at+contractSize/2, at)
			b.Sizes = append(b.Sizes, contractSize/2, contractSize/2)
		}
		b.Offsets = append(b.Offsets, uint64(len(b.Addrs)))
	}
	return b
}

var batchCases = []batchCase{
	{"BatchPutFrom", mooncake.OpBatchPutFrom, mooncake.ErrInvalidParams, false, 0,
		func(t *testing.T, st *mooncake.Store, z *zone, keys []string, fail []bool) ([]int64, error) {
			return st.BatchPutFrom(hostmem.PackKeys(keys...), z.single(z.src, fail, true), nil)
		}, nil},
	{"BatchPutFrom multi", mooncake.OpBatchPutFromMultiBuffers, mooncake.ErrInvalidParams, false, 0,
		func(t *testing.T, st *mooncake.Store, z *zone, keys []string, fail []bool) ([]int64, error) {
			return st.BatchPutFrom(hostmem.PackKeys(keys...), z.multi(z.src, fail, true), nil)
		}, nil},
	{"BatchUpsertFrom", mooncake.OpBatchUpsertFrom, mooncake.ErrInvalidParams, false, 0,
		func(t *testing.T, st *mooncake.Store, z *zone, keys []string, fail []bool) ([]int64, error) {
			return st.BatchUpsertFrom(hostmem.PackKeys(keys...), z.single(z.src, fail, true), nil)
		}, nil},
	{"BatchUpsertFrom multi", mooncake.OpBatchUpsertFromMultiBuffers, mooncake.ErrInvalidParams, false, 0,
		func(t *testing.T, st *mooncake.Store, z *zone, keys []string, fail []bool) ([]int64, error) {
			return st.BatchUpsertFrom(hostmem.PackKeys(keys...), z.multi(z.src, fail, true), nil)
		}, hasMultiBufferUpsert},
	{"BatchGetInto", mooncake.OpBatchGetInto, mooncake.ErrObjectNotFound, true, contractSize,
		func(t *testing.T, st *mooncake.Store, z *zone, keys []string, fail []bool) ([]int64, error) {
			return st.BatchGetInto(hostmem.PackKeys(keys...), z.single(z.dst, fail, false), nil)
		}, nil},
	{"BatchGetInto multi", mooncake.OpBatchGetIntoMultiBuffers, mooncake.ErrObjectNotFound, true, contractSize,
		func(t *testing.T, st *mooncake.Store, z *zone, keys []string, fail []bool) ([]int64, error) {
			return st.BatchGetInto(hostmem.PackKeys(keys...), z.multi(z.dst, fail, false), nil)
		}, nil},
	{"Raw.BatchPutFrom", mooncake.OpBatchPutFrom, mooncake.ErrInvalidParams, false, 0,
		func(t *testing.T, st *mooncake.Store, z *zone, keys []string, fail []bool) ([]int64, error) {
			b := z.single(z.src, fail, true)
			return st.Raw().BatchPutFrom(keys, b.Addrs, b.Sizes, nil)
		}, nil},
	{"Raw.BatchUpsertFromMultiBuffers", mooncake.OpBatchUpsertFromMultiBuffers, mooncake.ErrInvalidParams, false, 0,
		func(t *testing.T, st *mooncake.Store, z *zone, keys []string, fail []bool) ([]int64, error) {
			b := z.multi(z.src, fail, true)
			return st.Raw().BatchUpsertFromMultiBuffers(keys, b.Addrs, b.Sizes, b.Offsets, nil)
		}, hasMultiBufferUpsert},
	{"Raw.BatchGetInto", mooncake.OpBatchGetInto, mooncake.ErrObjectNotFound, true, contractSize,
		func(t *testing.T, st *mooncake.Store, z *zone, keys []string, fail []bool) ([]int64, error) {
			b := z.single(z.dst, fail, false)
			return st.Raw().BatchGetInto(keys, b.Addrs, b.Sizes, nil)
		}, nil},
	{"Raw.BatchGetIntoMultiBuffers", mooncake.OpBatchGetIntoMultiBuffers, mooncake.ErrObjectNotFound, true, contractSize,
		func(t *testing.T, st *mooncake.Store, z *zone, keys []string, fail []bool) ([]int64, error) {
			b := z.multi(z.dst, fail, false)
			return st.Raw().BatchGetIntoMultiBuffers(keys, b.Addrs, b.Sizes, b.Offsets, nil)
		}, nil},
	{"BatchRemove", mooncake.OpBatchRemove, mooncake.ErrObjectNotFound, true, 0,
		func(t *testing.T, st *mooncake.Store, z *zone, keys []string, fail []bool) ([]int64, error) {
			return st.BatchRemove(hostmem.PackKeys(keys...), false, nil)
		}, nil},
	{"BatchGetReplicaDesc", mooncake.OpBatchGetReplicaDesc, mooncake.ErrObjectNotFound, true, 1,
		func(t *testing.T, st *mooncake.Store, z *zone, keys []string, fail []bool) ([]int64, error) {
			reps, res, err := st.BatchGetReplicaDesc(hostmem.PackKeys(keys...), nil)
			require.Len(t, reps, len(keys), "a replica list per key beside the error")
			for i := range keys {
				if fail[i] {
					assert.Empty(t, reps[i], "no replicas for failed key %d", i)
				} else {
					assert.Len(t, reps[i], 1, "key %d", i)
				}
			}
			return res, err
		}, nil},
	{"GetIntoRanges", mooncake.OpGetIntoRanges, mooncake.ErrObjectNotFound, true, 100,
		func(t *testing.T, st *mooncake.Store, z *zone, keys []string, fail []bool) ([]int64, error) {
			reqs := make([]mooncake.KeyRanges, len(keys))
			for i, k := range keys {
				reqs[i] = mooncake.KeyRanges{Key: k, Ranges: []mooncake.Range{{Addr: z.dst + uintptr(i*contractSize), Offset: 10, Size: 100}}}
			}
			return st.GetIntoRanges(reqs, nil)
		}, nil},
	{"StartGetSession", mooncake.OpBatchGetSessionStart, mooncake.ErrObjectNotFound, true, 0,
		func(t *testing.T, st *mooncake.Store, z *zone, keys []string, fail []bool) ([]int64, error) {
			gs, res, err := st.StartGetSession(hostmem.PackKeys(keys...), nil)
			if err != nil && res == nil {
				assert.Nil(t, gs, "no session when the call is refused as a whole")
				return res, err
			}
			require.NotNil(t, gs, "the session comes back beside the *BatchError")
			reqs := make([]mooncake.KeyRanges, len(keys))
			for i, k := range keys {
				reqs[i] = mooncake.KeyRanges{Key: k, Ranges: []mooncake.Range{{Addr: z.dst + uintptr(i*contractSize), Offset: 0, Size: contractSize}}}
			}
			read, rerr := gs.ReadRanges(reqs, nil)
			// The keys that did not start are not in the session: their
			// reads fail the same way, now as ReadRanges' *BatchError.
			for i := range keys {
				want := int64(contractSize)
				if fail[i] {
					want = int64(mooncake.ErrInvalidParams)
				}
				assert.Equal(t, want, read[i], "read key %d", i)
			}
			checkFailed(t, mooncake.OpBatchGetIntoMultiBufferRanges, keys, read, rerr, failedAt(fail), "reading the session")
			require.NoError(t, gs.End())
			return res, err
		}, hasSessions},
	{"StartPutSession", mooncake.OpBatchPutSessionStart, mooncake.ErrInvalidParams, false, 0,
		func(t *testing.T, st *mooncake.Store, z *zone, keys []string, fail []bool) ([]int64, error) {
			sizes := make([]uint64, len(keys))
			for i := range sizes {
				if !fail[i] {
					sizes[i] = contractSize
				}
			}
			ps, res, err := st.StartPutSession(hostmem.PackKeys(keys...), sizes, nil)
			if err != nil && res == nil {
				assert.Nil(t, ps, "no session when the call is refused as a whole")
				return res, err
			}
			require.NotNil(t, ps, "the session comes back beside the *BatchError")
			// Revoke reports 0 for a key that never started; End would
			// report its start's code again.
			rev, rerr := ps.Revoke(nil)
			checkFailed(t, mooncake.OpBatchPutSessionRevoke, keys, rev, rerr, nil, "revoking the session")
			return res, err
		}, hasSessions},
}

func failedAt(fail []bool) []int {
	var out []int
	for i, f := range fail {
		if f {
			out = append(out, i)
		}
	}
	return out
}

// testBatchErrorContract: a batch call some of whose keys fail returns
// every key's result and a *BatchError of the call's Op naming exactly
// those keys; errors.Is sees through it, errors.As finds the *BatchError
// (and no *Error, which means a call failed as a whole). A call in which no
// key fails returns no error.
func testBatchErrorContract(t *testing.T, c *Cluster) {
	st := c.Open(t)
	z := newZone(t, st)
	caps := mooncake.Backend().Capabilities
	for _, bc := range batchCases {
		t.Run(bc.name, func(t *testing.T) {
			if bc.needs != nil && !bc.needs(caps) {
				// The backend lacks the call: refused as a whole, whatever
				// the keys.
				require.True(t, c.Native, "the embedded engine has every call")
				keys := Keys(t, "k", 2)
				if bc.stored {
					for _, k := range keys {
						require.NoError(t, st.Put(k, z.mem.Bytes()[:contractSize]))
					}
				}
				res, err := bc.call(t, st, z, keys, []bool{false, true})
				checkRefused(t, bc.op, res, err, mooncake.ErrNotSupported, "without the call")
				return
			}
			for _, fail := range [][]bool{
				{false, true, false, true},
				{true},
				{false, false},
			} {
				keys := Keys(t, fmt.Sprintf("k%d", len(fail)), len(fail))
				if bc.stored {
					for i, k := range keys {
						if !fail[i] {
							require.NoError(t, st.Put(k, z.mem.Bytes()[:contractSize]))
						}
					}
				}
				res, err := bc.call(t, st, z, keys, fail)
				for i, r := range res {
					if !fail[i] {
						assert.Equal(t, bc.ok, r, "key %d succeeded", i)
					}
				}
				want := failedAt(fail)
				be := checkFailed(t, bc.op, keys, res, err, want)
				if len(want) == 0 {
					continue
				}
				require.NotNil(t, be)
				for _, f := range be.Failed {
					assert.Equal(t, bc.code, f.Code, f.Key)
				}
				assert.ErrorIs(t, err, bc.code)
				assert.False(t, errors.Is(err, mooncake.ErrClosed) || errors.Is(err, mooncake.ErrTransferFail), "no other code matches: %v", err)
				var me *mooncake.Error
				assert.False(t, errors.As(err, &me), "a *BatchError is no *Error (a call failed as a whole)")
				assert.Equal(t, keys[want[0]], be.Failed[0].Key, "the first failed key comes first")
				assert.Equal(t, bc.op, be.Failed[0].Op)
				wrapped := fmt.Errorf("caller: %w", err)
				assert.ErrorIs(t, wrapped, bc.code, "through the caller's wrapping")
				assert.True(t, errors.As(wrapped, &be), "a *BatchError through the caller's wrapping")
				assert.Contains(t, err.Error(), fmt.Sprintf("%d of %d failed", len(want), len(keys)))
				assert.Contains(t, err.Error(), string(bc.op))
			}
		})
	}
}

// testBatchNoErrorNoAlloc: a warm batch read in which every key succeeds
// returns nil and allocates nothing, with packed keys; the Raw level's
// reused key scratch keeps it at none too.
func testBatchNoErrorNoAlloc(t *testing.T, c *Cluster) {
	st := c.Open(t)
	z := newZone(t, st)
	const n = 16
	names := Keys(t, "k", n)
	fail := make([]bool, n)
	put, err := st.BatchPutFrom(hostmem.PackKeys(names...), z.single(z.src, fail, false), nil)
	checkFailed(t, mooncake.OpBatchPutFrom, names, put, err, nil)
	keys := hostmem.PackKeys(names...)
	single, multi := z.single(z.dst, fail, false), z.multi(z.dst, fail, false)
	res := make([]int64, 0, n)
	raw := st.Raw()
	for _, tc := range []struct {
		name string
		call func() ([]int64, error)
	}{
		{"BatchGetInto", func() ([]int64, error) { return st.BatchGetInto(keys, single, res) }},
		{"BatchGetInto multi", func() ([]int64, error) { return st.BatchGetInto(keys, multi, res) }},
		{"BatchIsExist", func() ([]int64, error) { return st.BatchIsExist(keys, res) }},
		{"Raw.BatchGetInto", func() ([]int64, error) { return raw.BatchGetInto(names, single.Addrs, single.Sizes, res) }},
	} {
		got, err := tc.call() // warm
		require.NoError(t, err, tc.name)
		require.Len(t, got, n, tc.name)
		var calls, bad int
		allocs := testing.AllocsPerRun(50, func() {
			got, err := tc.call()
			calls++
			if err != nil || len(got) != n || got[n-1] <= 0 {
				bad++
			}
		})
		assert.Equal(t, 0, bad, "%s: %d of %d calls failed", tc.name, bad, calls)
		assert.Zero(t, allocs, "%s: a batch in which nothing fails allocates nothing", tc.name)
	}
	assert.True(t, bytes.Equal(z.mem.Bytes()[:n*contractSize], z.mem.Bytes()[1<<19:1<<19+n*contractSize]), "the reads moved the bytes")
}

// testUnregisterBufferEndsMemoryRegistration: UnregisterBuffer of the
// start of memory registered with RegisterMemory ends that registration
// (one count for both calls), so the memory can be freed; anywhere else it
// ends nothing.
func testUnregisterBufferEndsMemoryRegistration(t *testing.T, c *Cluster) {
	for _, tc := range []struct {
		name string
		// then runs after RegisterMemory(m) and UnregisterBuffer(m.Addr()).
		then func(t *testing.T, st *mooncake.Store, m *hostmem.Memory)
	}{
		{"then close", func(t *testing.T, st *mooncake.Store, m *hostmem.Memory) {}},
		{"then UnregisterMemory is refused", func(t *testing.T, st *mooncake.Store, m *hostmem.Memory) {
			isCode(t, st.UnregisterMemory(m), mooncake.ErrInvalidParams, "ended already")
			isCode(t, st.UnregisterBuffer(m.Addr()), mooncake.ErrInvalidParams, "ended already")
			assert.Equal(t, 0, m.Registrations(), "a refused unregistration counts nothing")
		}},
		{"then register again", func(t *testing.T, st *mooncake.Store, m *hostmem.Memory) {
			require.NoError(t, st.RegisterMemory(m))
			assert.Equal(t, 1, m.Registrations())
			isCode(t, st.UnregisterBuffer(m.Addr()+4096), mooncake.ErrInvalidParams, "not the start of a region")
			assert.Equal(t, 1, m.Registrations(), "unregistering inside the memory ends nothing")
			require.NoError(t, st.PutFrom(Key(t, "registered again"), m.All()), "registered again: usable")
			assert.ErrorIs(t, m.Free(), hostmem.ErrRegistered)
			require.NoError(t, st.UnregisterBuffer(m.Addr()))
		}},
		{"then free before close", func(t *testing.T, st *mooncake.Store, m *hostmem.Memory) {
			require.NoError(t, m.Free(), "nothing registered")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := c.Open(t)
			m, err := hostmem.Alloc(1<<20, hostmem.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { _ = m.Free() })
			require.NoError(t, st.RegisterMemory(m))
			require.NoError(t, st.PutFrom(Key(t, "registered"), m.All()))
			assert.ErrorIs(t, m.Free(), hostmem.ErrRegistered, "registered")
			require.NoError(t, st.UnregisterBuffer(m.Addr()))
			assert.Equal(t, 0, m.Registrations(), "UnregisterBuffer ended RegisterMemory's registration")
			tc.then(t, st, m)
			require.NoError(t, st.Close())
			assert.Equal(t, 0, m.Registrations(), "after Close")
			require.NoError(t, m.Free(), "the memory frees once the store is closed")
		})
	}
	// Memory registered through RegisterBuffer is the caller's to count:
	// its unregistration touches no hostmem count.
	st := c.Open(t)
	m := Memory(t, nil, 1<<20)
	require.NoError(t, st.RegisterBuffer(m.Addr(), m.Size()))
	assert.Equal(t, 0, m.Registrations())
	require.NoError(t, st.UnregisterBuffer(m.Addr()))
	assert.Equal(t, 0, m.Registrations())
}

// twin is one level of the zero-copy API: Raw (uintptr, []string) or the
// typed calls (Span, *hostmem.Keys); both take buffers as offsets into the
// same registered memory.
type twin struct {
	name   string
	prefix string
	dst    uint64 // where this side's reads land
	put    func(op mooncake.Op, key string, off, n uint64) error
	get    func(key string, off, n uint64) (int64, error)
	batch  func(op mooncake.Op, keys []string, b hostmem.Buffers, res []int64) ([]int64, error)
}

// twinStep is a call made on both levels with the same arguments (keys by
// index, buffers relative to src for writes and to the side's dst for
// reads).
type twinStep struct {
	name    string
	op      mooncake.Op
	keys    []int // indices into the side's keys
	off, n  uint64
	bufs    hostmem.Buffers
	failed  []int              // batch: the keys that must fail
	code    mooncake.ErrorCode // single call or refusal: the error's code (0: none)
	refused bool               // batch refused as a whole
}

// testRawAndTypedTwins: every Raw call and its typed twin give the same
// results, errors and bytes, call for call, over the same steps.
func testRawAndTypedTwins(t *testing.T, c *Cluster) {
	st := c.Open(t)
	mem := Memory(t, st, 1<<20)
	Fill(mem.Bytes()[:1<<18], 31)
	base := mem.Addr()
	span := func(off, n uint64) hostmem.Span {
		sp, err := mem.Span(off, n)
		require.NoError(t, err)
		return sp
	}
	abs := func(b hostmem.Buffers, at uint64) hostmem.Buffers {
		out := hostmem.Buffers{Sizes: b.Sizes, Offsets: b.Offsets}
		for _, a := range b.Addrs {
			out.Addrs = append(out.Addrs, base+uintptr(at)+a)
		}
		return out
	}
	raw := st.Raw()
	twins := []twin{
		{name: "raw", prefix: "raw", dst: 1 << 18,
			put: func(op mooncake.Op, key string, off, n uint64) error {
				if op == mooncake.OpUpsertFrom {
					return raw.UpsertFrom(key, base+uintptr(off), n)
				}
				return raw.PutFrom(key, base+uintptr(off), n)
			},
			get: func(key string, off, n uint64) (int64, error) { return raw.GetInto(key, base+uintptr(off), n) },
			batch: func(op mooncake.Op, keys []string, b hostmem.Buffers, res []int64) ([]int64, error) {
				switch op {
				case mooncake.OpBatchPutFrom:
					return raw.BatchPutFrom(keys, b.Addrs, b.Sizes, res)
				case mooncake.OpBatchUpsertFrom:
					return raw.BatchUpsertFrom(keys, b.Addrs, b.Sizes, res)
				case mooncake.OpBatchGetInto:
					return raw.BatchGetInto(keys, b.Addrs, b.Sizes, res)
				case mooncake.OpBatchPutFromMultiBuffers:
					return raw.BatchPutFromMultiBuffers(keys, b.Addrs, b.Sizes, b.Offsets, res)
				case mooncake.OpBatchUpsertFromMultiBuffers:
					return raw.BatchUpsertFromMultiBuffers(keys, b.Addrs, b.Sizes, b.Offsets, res)
				}
				return raw.BatchGetIntoMultiBuffers(keys, b.Addrs, b.Sizes, b.Offsets, res)
			}},
		{name: "typed", prefix: "typed", dst: 1 << 19,
			put: func(op mooncake.Op, key string, off, n uint64) error {
				if op == mooncake.OpUpsertFrom {
					return st.UpsertFrom(key, span(off, n))
				}
				return st.PutFrom(key, span(off, n))
			},
			get: func(key string, off, n uint64) (int64, error) { return st.GetInto(key, span(off, n)) },
			batch: func(op mooncake.Op, keys []string, b hostmem.Buffers, res []int64) ([]int64, error) {
				k := hostmem.PackKeys(keys...)
				switch op {
				case mooncake.OpBatchPutFrom, mooncake.OpBatchPutFromMultiBuffers:
					return st.BatchPutFrom(k, b, res)
				case mooncake.OpBatchUpsertFrom, mooncake.OpBatchUpsertFromMultiBuffers:
					return st.BatchUpsertFrom(k, b, res)
				}
				return st.BatchGetInto(k, b, res)
			}},
	}
	one := func(sizes ...uint64) hostmem.Buffers {
		var b hostmem.Buffers
		for i, s := range sizes {
			b.Addrs = append(b.Addrs, uintptr(i*8192))
			b.Sizes = append(b.Sizes, s)
		}
		return b
	}
	halves := func(groups ...int) hostmem.Buffers { // groups[i] buffers of 1024 bytes for key i
		b := hostmem.Buffers{Offsets: []uint64{0}}
		for i, g := range groups {
			for j := 0; j < g; j++ {
				b.Addrs = append(b.Addrs, uintptr(i*8192+(g-1-j)*1024))
				b.Sizes = append(b.Sizes, 1024)
			}
			b.Offsets = append(b.Offsets, uint64(len(b.Addrs)))
		}
		return b
	}
	ps := mooncake.OpBatchPutFrom
	steps := []twinStep{
		{name: "put", op: mooncake.OpPutFrom, keys: []int{0}, off: 0, n: 4096},
		{name: "put of nothing", op: mooncake.OpPutFrom, keys: []int{1}, off: 0, n: 0, code: mooncake.ErrInvalidParams},
		{name: "put again (write-once)", op: mooncake.OpPutFrom, keys: []int{0}, off: 8192, n: 100},
		{name: "get", op: mooncake.OpGetInto, keys: []int{0}, off: 0, n: 8192},
		{name: "get into too little", op: mooncake.OpGetInto, keys: []int{0}, off: 0, n: 4095, code: mooncake.ErrInvalidParams},
		{name: "get of a missing key", op: mooncake.OpGetInto, keys: []int{1}, off: 0, n: 4096, code: mooncake.ErrObjectNotFound},
		{name: "upsert", op: mooncake.OpUpsertFrom, keys: []int{0}, off: 16384, n: 2048},
		{name: "get the upserted", op: mooncake.OpGetInto, keys: []int{0}, off: 100, n: 4096},
		{name: "batch put", op: ps, keys: []int{2, 3, 4}, bufs: one(4096, 0, 3000), failed: []int{1}},
		{name: "batch get", op: mooncake.OpBatchGetInto, keys: []int{2, 3, 4, 0}, bufs: one(4096, 4096, 4096, 4096), failed: []int{1}},
		{name: "batch get into too little", op: mooncake.OpBatchGetInto, keys: []int{2, 4}, bufs: one(4096, 2999), failed: []int{1}},
		{name: "batch upsert", op: mooncake.OpBatchUpsertFrom, keys: []int{2, 5}, bufs: one(1000, 0), failed: []int{1}},
		{name: "batch get the upserted", op: mooncake.OpBatchGetInto, keys: []int{2}, bufs: one(1000)},
		{name: "multi put", op: mooncake.OpBatchPutFromMultiBuffers, keys: []int{6, 7, 8}, bufs: halves(3, 0, 2), failed: []int{1}},
		{name: "multi get", op: mooncake.OpBatchGetIntoMultiBuffers, keys: []int{6, 7, 8}, bufs: halves(3, 2, 2), failed: []int{1}},
		{name: "multi get, sizes off", op: mooncake.OpBatchGetIntoMultiBuffers, keys: []int{6, 8}, bufs: halves(2, 3), failed: []int{0, 1}},
		{name: "multi upsert", op: mooncake.OpBatchUpsertFromMultiBuffers, keys: []int{6}, bufs: halves(1)},
		{name: "multi get the upserted", op: mooncake.OpBatchGetIntoMultiBuffers, keys: []int{6}, bufs: halves(1)},
		{name: "a buffer short", op: ps, keys: []int{9, 10}, bufs: one(4096), refused: true, code: mooncake.ErrInvalidParams},
		{name: "sizes short", op: mooncake.OpBatchGetInto, keys: []int{2}, bufs: hostmem.Buffers{Addrs: []uintptr{0}}, refused: true, code: mooncake.ErrInvalidParams},
		{name: "offsets decrease", op: mooncake.OpBatchGetIntoMultiBuffers, keys: []int{6, 8}, bufs: hostmem.Buffers{Addrs: []uintptr{0, 1024}, Sizes: []uint64{1024, 1024}, Offsets: []uint64{0, 2, 1}}, refused: true, code: mooncake.ErrInvalidParams},
		{name: "no keys", op: ps, bufs: hostmem.Buffers{}},
	}
	if !mooncake.Backend().Capabilities.MultiBufferUpsert {
		// Without the multi-buffer upsert both levels are refused, and the
		// object stays what the multi put wrote.
		for i, s := range steps {
			switch s.name {
			case "multi upsert":
				steps[i] = twinStep{name: "multi upsert, not supported", op: s.op, keys: s.keys, bufs: s.bufs, refused: true, code: mooncake.ErrNotSupported}
			case "multi get the upserted":
				steps[i] = twinStep{name: "multi get, not upserted", op: s.op, keys: s.keys, bufs: halves(3)}
			}
		}
	}
	keysOf := func(tw twin) []string { return Keys(t, tw.prefix, 11) }
	for _, s := range steps {
		var outcomes []string
		for _, tw := range twins {
			all := keysOf(tw)
			var keys []string
			for _, i := range s.keys {
				keys = append(keys, all[i])
			}
			reads := s.op == mooncake.OpGetInto || s.op == mooncake.OpBatchGetInto || s.op == mooncake.OpBatchGetIntoMultiBuffers
			at := uint64(0)
			if reads {
				at = tw.dst
				clear(mem.Bytes()[tw.dst : tw.dst+1<<18])
			}
			var res []int64
			var n int64
			var err error
			switch s.op {
			case mooncake.OpPutFrom, mooncake.OpUpsertFrom:
				err = tw.put(s.op, keys[0], s.off, s.n)
			case mooncake.OpGetInto:
				n, err = tw.get(keys[0], at+s.off, s.n)
			default:
				res, err = tw.batch(s.op, keys, abs(s.bufs, at), nil)
			}
			what := s.name + " (" + tw.name + ")"
			switch {
			case s.refused:
				checkRefused(t, s.op, res, err, s.code, what)
			case s.op == mooncake.OpPutFrom || s.op == mooncake.OpUpsertFrom || s.op == mooncake.OpGetInto:
				if s.code == 0 {
					require.NoError(t, err, what)
					break
				}
				isCode(t, err, s.code, what)
				var me *mooncake.Error
				if require.ErrorAs(t, err, &me, what) {
					assert.Equal(t, s.op, me.Op, what)
					assert.Equal(t, keys[0], me.Key, what)
				}
			default:
				checkFailed(t, s.op, keys, res, err, s.failed, what)
			}
			outcomes = append(outcomes, describe(keys, res, n, err)+" bytes "+fmt.Sprintf("%x", digest(mem.Bytes()[at:at+1<<18])))
		}
		assert.Equal(t, outcomes[0], outcomes[1], "%s: Raw and typed differ", s.name)
	}
	// The two sides stored the same objects.
	rawKeys, typedKeys := keysOf(twins[0]), keysOf(twins[1])
	for i := range rawKeys {
		a, aerr := st.Get(rawKeys[i])
		b, berr := st.Get(typedKeys[i])
		assert.Equal(t, a, b, "object %d", i)
		assert.Equal(t, fmt.Sprint(aerr == nil), fmt.Sprint(berr == nil), "object %d: %v, %v", i, aerr, berr)
	}
}

// describe renders a call's outcome with keys by index, so that the same
// outcome on two sets of keys reads the same.
func describe(keys []string, res []int64, n int64, err error) string {
	idx := func(k string) string {
		for i, x := range keys {
			if x == k {
				return fmt.Sprint(i)
			}
		}
		if k == "" {
			return "-"
		}
		return "?" + k
	}
	var b strings.Builder
	fmt.Fprintf(&b, "res %v n %d: ", res, n)
	var be *mooncake.BatchError
	var me *mooncake.Error
	switch {
	case err == nil:
		b.WriteString("ok")
	case errors.As(err, &be):
		fmt.Fprintf(&b, "batch %s %d", be.Op, be.Total)
		for _, f := range be.Failed {
			fmt.Fprintf(&b, " [%s %s %v]", f.Op, idx(f.Key), f.Code)
		}
	case errors.As(err, &me):
		fmt.Fprintf(&b, "error %s %s %v shape=%v", me.Op, idx(me.Key), me.Code, errors.Is(err, hostmem.ErrShape))
	default:
		fmt.Fprintf(&b, "other %v", err)
	}
	return b.String()
}

// digest is a cheap fingerprint of b.
func digest(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, x := range b {
		h = (h ^ uint64(x)) * 1099511628211
	}
	return h
}
