//go:build cgo

package mooncake_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

func combiningOn(c *mooncake.Config)  { c.Combining = mooncake.CombiningOn }
func combiningOff(c *mooncake.Config) { c.Combining = mooncake.CombiningOff }

// combSide is one client of a comparison: a store, a second view of it
// (another policy object, equal in content), registered memory and memory
// that is not registered. Its keys have a prefix of their own, so that two
// sides can share a live cluster.
type combSide struct {
	prefix    string
	st, view  *mooncake.Store
	mem, free *hostmem.Memory
}

const combMem = 1 << 20

func newCombSide(t *testing.T, combining bool) *combSide {
	t.Helper()
	mods := []func(*mooncake.Config){combiningOff}
	if combining {
		mods = []func(*mooncake.Config){combiningOn}
	}
	st := mooncaketest.NewCluster(t).Open(t, mods...)
	s := &combSide{prefix: mooncaketest.Key(t, fmt.Sprintf("%v-", combining)),
		st: st, view: st.WithReplicateConfig(mooncake.ReplicateConfig{ReplicaNum: 1}),
		mem: mooncaketest.Memory(t, st, combMem), free: mooncaketest.Memory(t, nil, combMem)}
	mooncaketest.Fill(s.mem.Bytes()[:combMem/2], 7) // the sources of puts
	return s
}

// combOp is one single-key call of a comparison.
type combOp struct {
	key       string // a name for mooncaketest.Key; "" the empty key, "LONG" one longer than MaxKeyLen
	free      bool   // the buffer is in unregistered memory
	off, size int
	other     bool // through the second view
	noCombine bool // a call that never queues (it goes alone)
	force     bool // a forced remove
}

// key is the side's key of a name of combOp.key.
func (s *combSide) key(name string) string {
	switch name {
	case "":
		return ""
	case "LONG":
		return strings.Repeat("k", mooncake.MaxKeyLen+1)
	}
	return s.prefix + name
}

// norm is err with the side's key prefix taken off the key it names, so
// that the errors of two sides compare equal.
func (s *combSide) norm(err error) error {
	var me *mooncake.Error
	if !errors.As(err, &me) {
		return err
	}
	c := *me
	c.Key = strings.TrimPrefix(c.Key, s.prefix)
	return &c
}

// do makes the call on side s and returns its result (size, 1/0, or 0 for
// puts) and error.
func (s *combSide) do(op mooncake.Op, o combOp) (int64, error) {
	m := s.mem
	if o.free {
		m = s.free
	}
	addr := m.Addr() + uintptr(o.off)
	st := s.st
	if o.other {
		st = s.view
	}
	k := s.key(o.key)
	switch op {
	case mooncake.OpGetInto:
		return st.Raw().GetInto(k, addr, uint64(o.size))
	case mooncake.OpPutFrom:
		return 0, st.Raw().PutFrom(k, addr, uint64(o.size))
	case mooncake.OpUpsertFrom:
		return 0, st.Raw().UpsertFrom(k, addr, uint64(o.size))
	case mooncake.OpPut: // copying: from any memory
		return 0, st.Put(k, m.Bytes()[o.off:o.off+o.size])
	case mooncake.OpUpsert:
		return 0, st.Upsert(k, m.Bytes()[o.off:o.off+o.size])
	case mooncake.OpGet: // the object lands at off, for the bytes check
		v, err := st.Get(k)
		copy(m.Bytes()[o.off:], v)
		return int64(len(v)), err
	case mooncake.OpRemove:
		return 0, st.Remove(k, o.force)
	}
	ok, err := st.IsExist(k)
	if ok {
		return 1, err
	}
	return 0, err
}

// TestCombiningEqualsSingle: calls queued behind a crossing and carried in
// one batch give each caller exactly what its single call gives on a
// client without combining (value, error with its code, key and op), leave
// the same objects, bytes and leases, and a key queued twice (where
// upstream's batch differs from two single calls) crosses again.
func TestCombiningEqualsSingle(t *testing.T) {
	present := []string{"a", "b", "c", "big"}
	for _, tc := range []struct {
		name string
		op   mooncake.Op
		ops  []combOp
		// batches are the sizes of the combined crossings, in order.
		batches []int
	}{
		{"get_into", mooncake.OpGetInto, []combOp{
			{key: "a", off: combMem / 2, size: 4096},
			{key: "missing", off: combMem/2 + 4096, size: 4096},
			{key: "b", off: combMem/2 + 8192, size: 16}, // smaller than the object
			{key: "", off: combMem/2 + 12288, size: 4096},
			{key: "c", free: true, off: 0, size: 4096}, // unregistered destination
			{key: "a", off: combMem/2 + 16384, size: 8192},
			{key: "b", off: combMem/2 + 32768, size: 4096},
		}, []int{5, 2}},
		{"put_from", mooncake.OpPutFrom, []combOp{
			{key: "x", off: 0, size: 1000},
			{key: "a", off: 1000, size: 500}, // exists: kept
			{key: "", off: 2000, size: 10},
			{key: "y", off: 3000, size: 3000},
			{key: "z", free: true, off: 0, size: 100}, // unregistered source
			{key: "x", off: 7000, size: 300},          // again: write-once keeps the first
			{key: "w", off: 9000, size: 64, other: true},
			{key: "v", off: 9100, size: 64, other: true},
		}, []int{5, 2}},
		{"upsert_from", mooncake.OpUpsertFrom, []combOp{
			{key: "a", off: 0, size: 700},
			{key: "n", off: 1000, size: 100},
			{key: "a", off: 2000, size: 900}, // again: the later value wins
			{key: "", off: 3000, size: 10},
		}, []int{3}},
		{"get", mooncake.OpGet, []combOp{
			{key: "a", off: combMem / 2},
			{key: "missing", off: combMem/2 + 4096},
			{key: ""},
			{key: "big", off: combMem/2 + 196608}, // larger than its staging slot: retried alone
			{key: "b", off: combMem/2 + 16384},
			{key: "a", off: combMem/2 + 24576}, // again: another crossing
			{key: "c", off: combMem/2 + 32768},
		}, []int{6}},
		{"put", mooncake.OpPut, []combOp{
			{key: "x", off: 0, size: 1000},
			{key: "a", off: 1000, size: 500}, // exists: kept
			{key: "", off: 2000, size: 10},
			{key: "y", off: 3000, size: 3000},
			{key: "e", off: 3000, size: 0, noCombine: true}, // empty: refused alone
			{key: "x", off: 7000, size: 300},                // again: write-once keeps the first
			{key: "w", off: 9000, size: 64, other: true},
			{key: "v", off: 9100, size: 64, other: true},
		}, []int{4, 2}},
		{"upsert", mooncake.OpUpsert, []combOp{
			{key: "a", off: 0, size: 700},
			{key: "n", off: 1000, size: 100},
			{key: "a", off: 2000, size: 900}, // again: the later value wins
			{key: "", off: 3000, size: 10},
		}, []int{3}},
		{"remove", mooncake.OpRemove, []combOp{
			{key: "a"}, {key: "missing"}, {key: ""},
			{key: "c", force: true, noCombine: true}, // forced: its own queue, idle
			{key: "b"}, {key: "a"},                   // again: another crossing, and gone by then
		}, []int{4}},
		{"is_exist", mooncake.OpIsExist, []combOp{
			{key: "a"}, {key: "missing"}, {key: ""}, {key: "a"}, {key: "b"},
		}, []int{5}},
		{"alone", mooncake.OpGetInto, []combOp{
			{key: "LONG", off: combMem / 2, size: 4096, noCombine: true},
			{key: "a", off: combMem / 2, size: 0, noCombine: true},
			{key: "b", off: combMem / 2, size: 4096},
			{key: "c", off: combMem/2 + 4096, size: 4096},
		}, []int{2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			on, off := newCombSide(t, true), newCombSide(t, false)
			for i, side := range []*combSide{on, off} {
				for j, k := range present {
					size := uint64(2000 + j*1000)
					if k == "big" {
						size = combMem / 4 // above the first staging slots of gets
					}
					require.NoError(t, side.st.Raw().PutFrom(side.key(k), side.mem.Addr()+uintptr(j*5000), size), "side %d", i)
				}
			}
			// Alone, one after the other.
			want := make([]int64, len(tc.ops))
			wantErr := make([]error, len(tc.ops))
			for i, o := range tc.ops {
				want[i], wantErr[i] = off.do(tc.op, o)
				wantErr[i] = off.norm(wantErr[i])
			}
			// Queued behind a pretend crossing, in order, then released.
			got := make([]int64, len(tc.ops))
			gotErr := make([]error, len(tc.ops))
			queued, release := mooncake.HoldCombining(on.st, tc.op)
			var wg sync.WaitGroup
			n := 0
			for i, o := range tc.ops {
				done := make(chan struct{})
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer close(done)
					got[i], gotErr[i] = on.do(tc.op, o)
					gotErr[i] = on.norm(gotErr[i])
				}()
				if o.noCombine {
					<-done
					continue
				}
				n++
				waitFor(t, func() bool { return queued() == n }, "call %d queued", i)
			}
			release()
			wg.Wait()
			for i, o := range tc.ops {
				assert.Equal(t, want[i], got[i], "call %d (%s): result", i, o.key)
				assert.Equal(t, wantErr[i], gotErr[i], "call %d (%s): error", i, o.key)
			}
			assert.Equal(t, off.mem.Bytes(), on.mem.Bytes(), "the bytes the calls moved")

			s := on.st.Stats().Op(tc.op)
			total := 0
			sizes := make([]uint64, len(s.CombinedBatchSizes))
			for _, b := range tc.batches {
				total += b
				sizes[bucketOf(b)]++
			}
			assert.EqualValues(t, total, s.Combined, "combined calls")
			assert.EqualValues(t, len(tc.batches), s.CombinedBatches, "combined crossings")
			assert.Equal(t, sizes, s.CombinedBatchSizes, "batch sizes")
			so := off.st.Stats().Op(tc.op)
			assert.Equal(t, so.Calls, s.Calls, "every call counted once")
			assert.Equal(t, so.FailedCalls, s.FailedCalls)
			assert.Equal(t, so.Errors, s.Errors)
			assert.Zero(t, so.Combined+so.CombinedBatches, "no combining when off")

			// The same objects, leases and bytes on both.
			keys := map[string]bool{}
			for _, k := range present {
				keys[k] = true
			}
			for _, o := range tc.ops {
				if o.key != "LONG" {
					keys[o.key] = true
				}
			}
			for k := range keys {
				vOn, errOn := on.st.Get(on.key(k))
				vOff, errOff := off.st.Get(off.key(k))
				assert.Equal(t, off.norm(errOff), on.norm(errOn), "get %q", k)
				assert.Equal(t, vOff, vOn, "value of %q", k)
				assert.Equal(t, off.norm(off.st.Remove(off.key(k), false)), on.norm(on.st.Remove(on.key(k), false)), "remove %q (leases)", k)
			}
		})
	}
}

// bucketOf is the CombinedBatchSizes bucket of a batch of n keys.
func bucketOf(n int) int {
	b := 0
	for 2<<b < n {
		b++
	}
	return b
}

// waitFor waits until cond holds, at most 10 s.
func waitFor(t *testing.T, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: "+format, args...)
		}
		runtime.Gosched()
		time.Sleep(100 * time.Microsecond)
	}
}

// TestCombiningBounds: a batch carries at most CombineMaxKeys keys and
// CombineMaxBytes bytes; the calls left over cross in the next batch.
func TestCombiningBounds(t *testing.T) {
	st := mooncaketest.NewCluster(t).Open(t, combiningOn)
	t.Run("keys", func(t *testing.T) {
		n := mooncake.CombineMaxKeys + 5
		queued, release := mooncake.HoldCombining(st, mooncake.OpIsExist)
		keys := mooncaketest.Keys(t, "k", n)
		var wg sync.WaitGroup
		for _, k := range keys {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := st.IsExist(k)
				assert.NoError(t, err)
				assert.False(t, ok)
			}()
		}
		waitFor(t, func() bool { return queued() == n }, "all queued")
		release()
		wg.Wait()
		s := st.Stats().Op(mooncake.OpIsExist)
		assert.EqualValues(t, 2, s.CombinedBatches)
		assert.EqualValues(t, n, s.Combined)
		assert.EqualValues(t, 1, s.CombinedBatchSizes[bucketOf(mooncake.CombineMaxKeys)])
		assert.EqualValues(t, 1, s.CombinedBatchSizes[bucketOf(5)])
	})
	t.Run("bytes", func(t *testing.T) {
		half := mooncake.CombineMaxBytes / 2
		mem := mooncaketest.Memory(t, st, half+1<<20)
		keys := mooncaketest.Keys(t, "g", 3)
		for i, k := range keys {
			require.NoError(t, st.Raw().PutFrom(k, mem.Addr()+uintptr(i*4096), 4096))
		}
		before := st.Stats().Op(mooncake.OpGetInto)
		queued, release := mooncake.HoldCombining(st, mooncake.OpGetInto)
		var wg sync.WaitGroup
		for i, k := range keys {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Each destination is half the byte bound: two fit a batch.
				n, err := st.Raw().GetInto(k, mem.Addr()+uintptr(i*(1<<19)), uint64(half))
				assert.NoError(t, err)
				assert.EqualValues(t, 4096, n)
			}()
			waitFor(t, func() bool { return queued() == i+1 }, "queued")
		}
		release()
		wg.Wait()
		s := st.Stats().Op(mooncake.OpGetInto)
		assert.EqualValues(t, 1, s.CombinedBatches-before.CombinedBatches, "one batch of two, then one call alone")
		assert.EqualValues(t, 2, s.Combined-before.Combined)
	})
}

// TestCombiningCloseWhileQueued: queued calls hold the store open like
// calls in progress: Close waits for them, each gets its real result, and
// calls after Close get ErrClosed without queueing.
func TestCombiningCloseWhileQueued(t *testing.T) {
	st := mooncaketest.NewCluster(t).Open(t, combiningOn)
	mem := mooncaketest.Memory(t, st, 1<<20)
	keys := mooncaketest.Keys(t, "k", 8)
	for i, k := range keys[:4] {
		require.NoError(t, st.Raw().PutFrom(k, mem.Addr()+uintptr(i*4096), 4096))
	}
	queued, release := mooncake.HoldCombining(st, mooncake.OpGetInto)
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := st.Raw().GetInto(k, mem.Addr()+uintptr(512<<10+i*4096), 4096)
			if i < 4 {
				assert.NoError(t, err, "queued before Close: its real result")
				assert.EqualValues(t, 4096, n)
			} else {
				assert.ErrorIs(t, err, mooncake.ErrObjectNotFound, "queued before Close: its real result")
			}
		}()
	}
	waitFor(t, func() bool { return queued() == len(keys) }, "all queued")
	closed := make(chan struct{})
	go func() {
		_ = st.Close()
		close(closed)
	}()
	select {
	case <-closed:
		t.Fatal("Close returned while calls were queued")
	case <-time.After(50 * time.Millisecond):
	}
	release()
	wg.Wait()
	<-closed
	_, err := st.Raw().GetInto(keys[0], mem.Addr(), 4096)
	assert.ErrorIs(t, err, mooncake.ErrClosed)
	_, err = st.IsExist(keys[0])
	assert.ErrorIs(t, err, mooncake.ErrClosed)
}

// TestCombiningAloneAllocatesNothing: a call that finds its kind idle
// makes its single call with no allocation, as without combining.
func TestCombiningAloneAllocatesNothing(t *testing.T) {
	st := mooncaketest.NewCluster(t).Open(t, combiningOn)
	mem := mooncaketest.Memory(t, st, 1<<16)
	k := mooncaketest.Key(t, "k")
	sp, err := mem.Span(0, 4096)
	require.NoError(t, err)
	dst, err := mem.Span(8192, 4096)
	require.NoError(t, err)
	require.NoError(t, st.PutFrom(k, sp))
	val, buf := make([]byte, 4096), make([]byte, 0, 8192)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for name, call := range map[string]func() error{
		"Put":        func() error { return st.Put(k, val) },
		"Upsert":     func() error { return st.Upsert(k, val) },
		"AppendGet":  func() error { _, err := st.AppendGet(buf[:0], k); return err },
		"GetInto":    func() error { _, err := st.GetInto(k, dst); return err },
		"PutFrom":    func() error { return st.PutFrom(k, sp) },
		"UpsertFrom": func() error { return st.UpsertFrom(k, sp) },
		"IsExist":    func() error { _, err := st.IsExist(k); return err },
		// A live context costs nothing more.
		"PutContext":       func() error { return st.PutContext(ctx, k, val) },
		"AppendGetContext": func() error { _, err := st.AppendGetContext(ctx, buf[:0], k); return err },
		"GetIntoContext":   func() error { _, err := st.GetIntoContext(ctx, k, dst); return err },
		"PutFromContext":   func() error { return st.PutFromContext(ctx, k, sp) },
		"IsExistContext":   func() error { _, err := st.IsExistContext(ctx, k); return err },
	} {
		require.NoError(t, call(), name)
		var bad int
		allocs := testing.AllocsPerRun(100, func() {
			if call() != nil {
				bad++
			}
		})
		assert.Zero(t, bad, name)
		assert.Zero(t, allocs, "%s alone allocates nothing", name)
	}
	for _, op := range []mooncake.Op{mooncake.OpGetInto, mooncake.OpPutFrom, mooncake.OpUpsertFrom, mooncake.OpIsExist,
		mooncake.OpGet, mooncake.OpPut, mooncake.OpUpsert, mooncake.OpRemove} {
		assert.Zero(t, st.Stats().Op(op).Combined, "%s: nothing combined", op)
	}
}

func TestCombiningConfig(t *testing.T) {
	cfg := mooncaketest.NewCluster(t).Config(func(c *mooncake.Config) { c.Combining = 3 })
	assert.ErrorIs(t, cfg.Validate(), mooncake.ErrInvalidConfig)
	_, err := mooncake.Open(cfg)
	assert.ErrorIs(t, err, mooncake.ErrInvalidParams)
	assert.Equal(t, mooncake.CombiningDefault, mooncake.DefaultConfig().Combining)
	// On by default: calls queued behind a crossing combine.
	st := mooncaketest.NewCluster(t).Open(t)
	queued, release := mooncake.HoldCombining(st, mooncake.OpIsExist)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := st.IsExist(mooncaketest.Key(t, fmt.Sprint("k", i)))
			assert.NoError(t, err)
		}()
		waitFor(t, func() bool { return queued() == i+1 }, "call %d queued", i)
	}
	release()
	wg.Wait()
	assert.EqualValues(t, 3, st.Stats().Op(mooncake.OpIsExist).Combined)
	assert.Equal(t, 3, mooncake.StagedQueues(st), "staging for the copying get, put and upsert")
	// A query-only client (no local buffer) combines but registers no staging.
	q := mooncaketest.NewCluster(t).Open(t, func(c *mooncake.Config) { c.LocalBufferSize, c.GlobalSegmentSize = 0, 0 })
	assert.Zero(t, mooncake.StagedQueues(q), "a query-only client's staging")
	_, err = q.IsExist(mooncaketest.Key(t, "q"))
	require.NoError(t, err)
	// Off: nothing queues (HoldCombining would find no queue).
	off := mooncaketest.NewCluster(t).Open(t, combiningOff)
	_, err = off.IsExist(mooncaketest.Key(t, "k"))
	require.NoError(t, err)
	assert.Zero(t, off.Stats().Op(mooncake.OpIsExist).Combined)
}

// The stress test's keys and writers: every write carries a header naming
// its key, writer, sequence number and size, and bytes derived from them,
// so any read can be checked against the writes made so far.
const (
	stressKeys    = 24
	stressWorkers = 64
	stressHeader  = 16
	stressMaxSize = 4096
)

// stressKey is the model of one key: counts of writes (puts and upserts)
// and of upserts started and done, and whether a write has succeeded.
type stressKey struct {
	wStarted, wDone   atomic.Int64
	upStarted, upDone atomic.Int64
	written           atomic.Bool
}

func stressSeed(key, worker, seq uint32) uint64 {
	return uint64(key)<<40 | uint64(worker)<<24 | uint64(seq)
}

// stressValue writes the value of (key, worker, seq) of size bytes into b.
func stressValue(b []byte, key, worker, seq uint32) {
	binary.LittleEndian.PutUint32(b[0:], key)
	binary.LittleEndian.PutUint32(b[4:], worker)
	binary.LittleEndian.PutUint32(b[8:], seq)
	binary.LittleEndian.PutUint32(b[12:], uint32(len(b)))
	mooncaketest.Fill(b[stressHeader:], stressSeed(key, worker, seq))
}

// stressCheck reports what is wrong with value b read for key, given the
// sequence numbers each worker had started.
func stressCheck(b []byte, key uint32, started []atomic.Uint32, withdrawn *sync.Map) error {
	if len(b) < stressHeader {
		return fmt.Errorf("%d bytes", len(b))
	}
	k, w, seq, n := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]),
		binary.LittleEndian.Uint32(b[8:]), binary.LittleEndian.Uint32(b[12:])
	switch {
	case k != key:
		return fmt.Errorf("the value of key %d", k)
	case int(n) != len(b):
		return fmt.Errorf("%d bytes, header says %d", len(b), n)
	case int(w) >= len(started) || seq > started[w].Load():
		return fmt.Errorf("worker %d seq %d never started", w, seq)
	}
	if _, ok := withdrawn.Load(uint64(w)<<32 | uint64(seq)); ok {
		return fmt.Errorf("worker %d seq %d was written by a call that returned its context's error", w, seq)
	}
	want := make([]byte, len(b))
	stressValue(want, k, w, seq)
	if !bytes.Equal(want, b) {
		return fmt.Errorf("bytes of worker %d seq %d differ", w, seq)
	}
	return nil
}

// TestCombiningStress: 64 goroutines mix every combined call (zero-copy
// puts through two views, upserts, gets into large and too-small buffers,
// existence checks, calls that fail: the empty key, a key never written, a
// key too long) over overlapping keys; every result is checked against a
// model of the writes, and every error has its code, key and op. Some puts
// and existence checks carry a context that ends within microseconds: one
// that returns the context's error must have made no call (its value is
// never read back, and Stats does not count it).
func TestCombiningStress(t *testing.T) {
	rounds := 150
	if testing.Short() {
		rounds = 30
	}
	cl := mooncaketest.NewCluster(t)
	st := cl.Open(t, combiningOn)
	other := st.WithReplicateConfig(mooncake.ReplicateConfig{ReplicaNum: 1})
	mem := mooncaketest.Memory(t, st, stressWorkers*2*stressMaxSize)
	keys := mooncaketest.Keys(t, "s", stressKeys)
	never := mooncaketest.Key(t, "never")
	long := strings.Repeat("L", mooncake.MaxKeyLen+1)
	model := make([]stressKey, stressKeys)
	started := make([]atomic.Uint32, stressWorkers)
	// The calls made, by operation: get_into, put_from, upsert_from,
	// is_exist, and the copying get, put, upsert, and remove.
	stressOps := []mooncake.Op{mooncake.OpGetInto, mooncake.OpPutFrom, mooncake.OpUpsertFrom, mooncake.OpIsExist,
		mooncake.OpGet, mooncake.OpPut, mooncake.OpUpsert, mooncake.OpRemove}
	calls := make([]atomic.Int64, len(stressOps))
	var tornReads, refusedGets, leftCalls atomic.Int64
	var withdrawn sync.Map // worker<<32|seq of the puts that returned their context's error
	// shortCtx is, for one call in six, a context that ends within 40 µs
	// (a fifth of them before the call starts).
	shortCtx := func(rng *rand.Rand) (context.Context, context.CancelFunc) {
		if rng.IntN(6) != 0 {
			return context.Background(), func() {}
		}
		return context.WithTimeout(context.Background(), time.Duration(rng.IntN(50)-10)*time.Microsecond)
	}
	var wg sync.WaitGroup
	for w := 0; w < stressWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 24))
			buf := mem.Bytes()[w*2*stressMaxSize : (w+1)*2*stressMaxSize]
			heap := make([]byte, stressMaxSize) // the copying calls' Go memory
			src, dst := mem.Addr()+uintptr(w*2*stressMaxSize), mem.Addr()+uintptr(w*2*stressMaxSize+stressMaxSize)
			fail := func(format string, args ...any) {
				t.Errorf("worker %d: "+format, append([]any{w}, args...)...)
			}
			// torn judges a read whose bytes are not a value written: the
			// hazard upstream documents for a read that overlaps an upsert
			// of its key (docs/faults.md), else a failure.
			torn := func(upOverlap bool, format string, args ...any) {
				if !upOverlap || !cl.Native {
					fail(format, args...)
					return
				}
				tornReads.Add(1)
			}
			shape := func(err error, op mooncake.Op, key string) {
				var me *mooncake.Error
				if !errors.As(err, &me) || me.Op != op || me.Key != key {
					fail("%s %.20q: error %#v, want an *Error with its op and key", op, key, err)
				}
			}
			// withdraw takes a put that returned its context's error out of
			// the model: it made no call, so its value must never be read
			// and Stats does not count it. It returns whether the put
			// withdrew, and the error left to judge.
			withdraw := func(err error, op mooncake.Op, key string, seq uint32) (bool, error) {
				if !errors.Is(err, context.DeadlineExceeded) {
					return false, err
				}
				shape(err, op, key)
				calls[slices.Index(stressOps, op)].Add(-1)
				withdrawn.Store(uint64(w)<<32|uint64(seq), true)
				leftCalls.Add(1)
				return true, nil
			}
			for r := 0; r < rounds; r++ {
				ki := rng.IntN(stressKeys)
				k, m := keys[ki], &model[ki]
				switch p := rng.IntN(100); {
				case p < 30: // a write: put (either view) or upsert, zero-copy or copying
					seq := started[w].Add(1)
					size := stressHeader + rng.IntN(stressMaxSize-stressHeader-48) + 48
					stressValue(buf[:size], uint32(ki), uint32(w), seq)
					copy(heap, buf[:size])
					upsert, copying := p < 10, rng.IntN(2) == 0
					m.wStarted.Add(1)
					var err error
					left := false // the put returned its context's error
					switch {
					case upsert && copying:
						m.upStarted.Add(1)
						calls[6].Add(1)
						err = st.Upsert(k, heap[:size])
						m.upDone.Add(1)
					case upsert:
						m.upStarted.Add(1)
						calls[2].Add(1)
						err = st.Raw().UpsertFrom(k, src, uint64(size))
						m.upDone.Add(1)
					case copying:
						calls[5].Add(1)
						ctx, cancel := shortCtx(rng)
						err = other.PutContext(ctx, k, heap[:size])
						cancel()
						left, err = withdraw(err, mooncake.OpPut, k, seq)
					case p < 20:
						calls[1].Add(1)
						ctx, cancel := shortCtx(rng)
						sp, e := mem.Span(uint64(src-mem.Addr()), uint64(size))
						if e != nil {
							fail("span: %v", e)
						}
						err = st.PutFromContext(ctx, k, sp)
						cancel()
						left, err = withdraw(err, mooncake.OpPutFrom, k, seq)
					default:
						calls[1].Add(1)
						err = other.Raw().PutFrom(k, src, uint64(size))
					}
					if err == nil && !left {
						m.written.Store(true)
					}
					m.wDone.Add(1)
					if err != nil {
						fail("write %q: %v", k, err)
					}
				case p < 55: // a copying get, appended to a prefix it keeps
					existed, wDone, upDone := m.written.Load(), m.wDone.Load(), m.upDone.Load()
					calls[4].Add(1)
					dst := append(heap[:0], "pre"...)
					v, err := st.AppendGet(dst, k)
					overlap, upOverlap := m.wStarted.Load() > wDone, m.upStarted.Load() > upDone
					switch {
					case err == nil && string(v[:3]) != "pre":
						fail("append-get %q: the prefix was overwritten", k)
					case err == nil:
						if e := stressCheck(v[3:], uint32(ki), started, &withdrawn); e != nil {
							torn(upOverlap, "append-get %q: %v", k, e)
						}
					case errors.Is(err, mooncake.ErrInvalidParams) && upOverlap && cl.Native:
						// The native copying get reads twice when the first
						// read fails and the object exists; an upsert that
						// overlaps both leaves INVALID_PARAMS (docs/combining.md).
						refusedGets.Add(1)
					case errors.Is(err, mooncake.ErrObjectNotFound) && (!existed || upOverlap):
					case errors.Is(err, mooncake.ErrReplicaIsNotReady) && overlap:
					default:
						fail("append-get %q (written before: %v, writes overlapping: %v): %v", k, existed, overlap, err)
					}
					if err != nil {
						shape(err, mooncake.OpGet, k)
					}
				case p < 80: // a get, sometimes into a buffer too small
					small := p >= 75
					size := uint64(stressMaxSize)
					if small {
						size = 16
					}
					existed, wDone, upDone := m.written.Load(), m.wDone.Load(), m.upDone.Load()
					calls[0].Add(1)
					n, err := st.Raw().GetInto(k, dst, size)
					overlap, upOverlap := m.wStarted.Load() > wDone, m.upStarted.Load() > upDone
					switch {
					case err == nil && small:
						fail("get %q into 16 bytes: %d bytes, no error", k, n)
					case err == nil:
						if e := stressCheck(buf[stressMaxSize:stressMaxSize+int(n)], uint32(ki), started, &withdrawn); e != nil {
							torn(upOverlap, "get %q: %v", k, e)
						}
					case errors.Is(err, mooncake.ErrInvalidParams) && small:
					case errors.Is(err, mooncake.ErrObjectNotFound) && (!existed || upOverlap):
					case errors.Is(err, mooncake.ErrReplicaIsNotReady) && overlap:
					default:
						fail("get %q (written before: %v, writes overlapping: %v): %v", k, existed, overlap, err)
					}
					if err != nil {
						shape(err, mooncake.OpGetInto, k)
					}
				case p < 95: // exists
					existed, upDone := m.written.Load(), m.upDone.Load()
					calls[3].Add(1)
					ctx, cancel := shortCtx(rng)
					ok, err := st.IsExistContext(ctx, k)
					cancel()
					upOverlap := m.upStarted.Load() > upDone
					switch {
					case errors.Is(err, context.DeadlineExceeded):
						shape(err, mooncake.OpIsExist, k)
						calls[3].Add(-1)
						leftCalls.Add(1)
					case err != nil:
						fail("exists %q: %v", k, err)
					case ok && m.wStarted.Load() == 0:
						fail("exists %q before any write", k)
					case !ok && existed && !upOverlap:
						fail("exists %q: false after a write returned, with no upsert overlapping", k)
					}
				case p < 97: // the empty key: refused for itself alone
					calls[1].Add(1)
					err := st.Raw().PutFrom("", src, 64)
					if !errors.Is(err, mooncake.ErrInvalidParams) {
						fail("put of the empty key: %v", err)
					}
					shape(err, mooncake.OpPutFrom, "")
				case p < 98: // a key never written
					calls[0].Add(1)
					_, err := st.Raw().GetInto(never, dst, stressMaxSize)
					if !errors.Is(err, mooncake.ErrObjectNotFound) {
						fail("get of a key never written: %v", err)
					}
					shape(err, mooncake.OpGetInto, never)
				case p < 99: // a remove of a key never written
					calls[7].Add(1)
					err := st.Remove(never, rng.IntN(2) == 0)
					if !errors.Is(err, mooncake.ErrObjectNotFound) {
						fail("remove of a key never written: %v", err)
					}
					shape(err, mooncake.OpRemove, never)
				default: // a key too long: refused alone, with its own error
					calls[3].Add(1)
					_, err := st.IsExist(long)
					if !errors.Is(err, mooncake.ErrInvalidParams) || !errors.Is(err, mooncake.ErrKeyTooLong) {
						fail("exists of a key too long: %v", err)
					}
					shape(err, mooncake.OpIsExist, long)
				}
			}
		}()
	}
	// Now and then a kind's queue is held, as a long crossing would hold
	// it, so that batches form even when the scheduler runs the workers one
	// at a time (on a busy 2-vCPU machine the calls did not always overlap).
	stop := make(chan struct{})
	var holder sync.WaitGroup
	holder.Add(1)
	go func() {
		defer holder.Done()
		ops := stressOps
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			queued, release := mooncake.HoldCombining(st, ops[i%len(ops)])
			for deadline := time.Now().Add(2 * time.Millisecond); queued() < 2 && time.Now().Before(deadline); {
				runtime.Gosched()
			}
			release()
		}
	}()
	wg.Wait()
	close(stop)
	holder.Wait()

	// Every key written holds a value some write stored.
	for i, k := range keys {
		calls[4].Add(1)
		v, err := st.Get(k)
		switch {
		case err != nil && model[i].written.Load():
			t.Errorf("key %d: %v after writes returned", i, err)
		case err == nil:
			if e := stressCheck(v, uint32(i), started, &withdrawn); e != nil {
				t.Errorf("key %d: %v", i, e)
			}
		}
	}
	s := st.Stats()
	var combined uint64
	for i, op := range stressOps {
		o := s.Op(op)
		assert.EqualValues(t, calls[i].Load(), o.Calls, "%s: every call counted once", op)
		combined += o.Combined
		t.Logf("%s: %d calls, %d combined in %d batches, sizes %v", op, o.Calls, o.Combined, o.CombinedBatches, o.CombinedBatchSizes)
	}
	assert.NotZero(t, combined, "no call was combined: the test did not test combining")
	t.Logf("reads overlapping an upsert of their key: %d returned bytes no write stored, %d copying gets refused", tornReads.Load(), refusedGets.Load())
	t.Logf("calls that returned their context's error: %d", leftCalls.Load())
	assert.NotZero(t, leftCalls.Load(), "contexts that ended before their calls started")
}

// TestCombiningDummy: a dummy client with combining on carries queued
// zero-copy calls, existence checks and removes in one batch (one RPC to
// its real client) with each call's own result; its copying calls, which
// would need staging from the memory pool, never queue.
func TestCombiningDummy(t *testing.T) {
	c := mooncaketest.NewCluster(t)
	d := c.OpenDummy(t, c.StartRealClient(t), func(cfg *mooncake.DummyConfig) {
		cfg.LocalBufferSize, cfg.Combining = 1<<20, mooncake.CombiningOn
	})
	peer := c.Open(t)
	const n, size = 6, 4096
	pool, err := d.AllocFromMemPool(2 * n * size)
	require.NoError(t, err)
	base := uintptr(unsafe.Pointer(&pool[0]))
	require.NoError(t, d.RegisterBuffer(base, uint64(len(pool))))
	mooncaketest.Fill(pool[:n*size], 3)
	key := func(i int) string { return mooncaketest.Key(t, fmt.Sprintf("d%d", i)) }
	// queue runs call(i) for i < n behind a held queue of op, then lets
	// them cross, and returns their errors.
	queue := func(op mooncake.Op, call func(i int) error) []error {
		errs := make([]error, n)
		queued, release := mooncake.HoldCombining(d, op)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = call(i) }()
			waitFor(t, func() bool { return queued() == i+1 }, "call %d queued", i)
		}
		release()
		wg.Wait()
		return errs
	}
	errs := queue(mooncake.OpPutFrom, func(i int) error {
		if i == n-1 {
			return d.Raw().PutFrom("", base+uintptr(i*size), size) // refused alone, in the batch
		}
		return d.Raw().PutFrom(key(i), base+uintptr(i*size), size)
	})
	for i, err := range errs[:n-1] {
		require.NoError(t, err, "put_from %d", i)
	}
	require.Error(t, errs[n-1], "put_from of the empty key")
	exist := make([]bool, n)
	errs = queue(mooncake.OpIsExist, func(i int) (err error) { exist[i], err = d.IsExist(key(i)); return })
	for i := range n {
		require.NoError(t, errs[i])
		assert.Equal(t, i < n-1, exist[i], "is_exist %d", i)
	}
	errs = queue(mooncake.OpGetInto, func(i int) error {
		_, err := d.Raw().GetInto(key(i), base+uintptr((n+i)*size), size)
		return err
	})
	for i := range n - 1 {
		require.NoError(t, errs[i], "get_into %d", i)
		assert.Equal(t, pool[i*size:(i+1)*size], pool[(n+i)*size:(n+i+1)*size], "get_into %d: bytes", i)
	}
	require.ErrorIs(t, errs[n-1], mooncake.ErrObjectNotFound)
	// Removes of objects nobody has read (a read's lease would refuse them).
	rkey := func(i int) string { return key(50 + i) }
	for i := range n - 1 {
		require.NoError(t, d.Raw().PutFrom(rkey(i), base+uintptr(i*size), size))
	}
	errs = queue(mooncake.OpRemove, func(i int) error { return d.Remove(rkey(i), false) })
	for i := range n - 1 {
		require.NoError(t, errs[i], "remove %d", i)
	}
	require.ErrorIs(t, errs[n-1], mooncake.ErrObjectNotFound)
	for _, op := range []mooncake.Op{mooncake.OpPutFrom, mooncake.OpIsExist, mooncake.OpGetInto, mooncake.OpRemove} {
		s := d.Stats().Op(op)
		assert.EqualValues(t, n, s.Combined, "%s: combined calls", op)
		assert.EqualValues(t, 1, s.CombinedBatches, "%s: one crossing", op)
	}
	// A copying put goes alone although its queue is held.
	_, release := mooncake.HoldCombining(d, mooncake.OpPut)
	require.NoError(t, d.Put(key(100), []byte("copying")))
	release()
	v, err := peer.Get(key(100))
	require.NoError(t, err)
	assert.Equal(t, "copying", string(v))
}

// TestCombiningContext: the Context variants of the combined calls. A call
// whose context ends while it is queued behind a crossing leaves the queue
// and returns the context's error (an *Error naming its op and key) having
// made no call: its put stores nothing, Stats does not count it, and the
// calls queued beside it are still served. A call whose context has
// already ended makes no call even when it would go alone; one with a live
// context gets its real result.
func TestCombiningContext(t *testing.T) {
	st := mooncaketest.NewCluster(t).Open(t, combiningOn)
	mem := mooncaketest.Memory(t, st, 1<<20)
	mooncaketest.Fill(mem.Bytes()[:64<<10], 5)
	src, err := mem.Span(0, 4096)
	require.NoError(t, err)
	dst, err := mem.Span(512<<10, 4096)
	require.NoError(t, err)
	present := mooncaketest.Key(t, "present")
	require.NoError(t, st.PutFrom(present, src))
	val := mem.Bytes()[:4096]
	type call func(ctx context.Context, key string) error
	cases := []struct {
		name  string
		op    mooncake.Op // the queue it waits in
		write bool        // it would store key
		call  call
	}{
		{"PutContext", mooncake.OpPut, true, func(ctx context.Context, k string) error { return st.PutContext(ctx, k, val) }},
		{"UpsertContext", mooncake.OpUpsert, true, func(ctx context.Context, k string) error { return st.UpsertContext(ctx, k, val) }},
		{"PutFromContext", mooncake.OpPutFrom, true, func(ctx context.Context, k string) error { return st.PutFromContext(ctx, k, src) }},
		{"UpsertFromContext", mooncake.OpUpsertFrom, true, func(ctx context.Context, k string) error { return st.UpsertFromContext(ctx, k, src) }},
		{"GetContext", mooncake.OpGet, false, func(ctx context.Context, k string) error { _, err := st.GetContext(ctx, k); return err }},
		{"AppendGetContext", mooncake.OpGet, false, func(ctx context.Context, k string) error {
			_, err := st.AppendGetContext(ctx, make([]byte, 0, 8192), k)
			return err
		}},
		{"GetIntoContext", mooncake.OpGetInto, false, func(ctx context.Context, k string) error { _, err := st.GetIntoContext(ctx, k, dst); return err }},
		{"IsExistContext", mooncake.OpIsExist, false, func(ctx context.Context, k string) error { _, err := st.IsExistContext(ctx, k); return err }},
		{"RemoveContext", mooncake.OpRemove, false, func(ctx context.Context, k string) error { return st.RemoveContext(ctx, k, false) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := mooncaketest.Key(t, "k")
			if !tc.write { // reads and removes act on an object that exists
				require.NoError(t, st.PutFrom(key, src))
			}
			isCtxErr := func(err error, want error) {
				t.Helper()
				require.ErrorIs(t, err, want)
				var me *mooncake.Error
				require.ErrorAs(t, err, &me)
				assert.Equal(t, tc.op, me.Op)
				assert.Equal(t, key, me.Key)
			}
			before := st.Stats().Op(tc.op).Calls

			// A nil context: refused, no call.
			var none context.Context
			require.ErrorIs(t, tc.call(none, key), mooncake.ErrInvalidParams)

			// Ended before the call: no call, though the queue is idle.
			done, cancel := context.WithCancel(context.Background())
			cancel()
			isCtxErr(tc.call(done, key), context.Canceled)

			// Ended while queued: it leaves; a neighbour is served.
			queued, release := mooncake.HoldCombining(st, tc.op)
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			errc := make(chan error, 1)
			go func() { errc <- tc.call(ctx, key) }()
			waitFor(t, func() bool { return queued() == 1 }, "the call queued")
			neighbour := make(chan error, 1)
			go func() { _, err := st.IsExistContext(context.Background(), present); neighbour <- err }()
			cancel()
			select {
			case err := <-errc:
				isCtxErr(err, context.Canceled)
			case <-time.After(10 * time.Second):
				release()
				t.Fatal("the queued call did not leave when its context ended")
			}
			release()
			if tc.op == mooncake.OpIsExist { // the neighbour shares the held queue
				require.NoError(t, <-neighbour)
			}
			want := before
			if tc.op == mooncake.OpIsExist {
				want++ // the neighbour's
			}
			assert.Equal(t, want, st.Stats().Op(tc.op).Calls, "a call that left is not counted")
			ok, err := st.IsExist(key)
			require.NoError(t, err)
			assert.Equal(t, !tc.write, ok, "the call that left did nothing")

			// A live context: the real result (a remove's on a key the
			// check above did not lease).
			live := key
			if tc.op == mooncake.OpRemove {
				live = mooncaketest.Key(t, "unleased")
				require.NoError(t, st.PutFrom(live, src))
			}
			require.NoError(t, tc.call(context.Background(), live))
			if tc.op != mooncake.OpIsExist {
				require.NoError(t, <-neighbour)
			}
		})
	}
}
