package mooncake

import (
	"math/bits"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"github.com/mooncake-go/mooncake-go/internal/codes"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// Every call that reaches the engine is counted: per operation, its calls,
// keys, bytes moved, failures by code and a latency histogram. Counting is
// two monotonic clock reads and a few atomic adds on counters of the
// connection (no lock, no allocation): 105-111 ns per call on the 2-vCPU VM
// (BenchmarkStatsSingle; the clock reads are about 60 of it), where a
// single 4 KiB get from real Mooncake over loopback takes well over 100 µs
// (docs/benchmarks.md). So it is always on; Stats copies the counters out.

// statOps are the operations counted, in the order of the counters.
var statOps = [...]Op{
	OpPut, OpUpsert, OpGet, OpPutFrom, OpUpsertFrom, OpGetInto,
	OpPutParts, OpUpsertParts, OpPutBatch, OpUpsertBatch,
	OpBatchPutFrom, OpBatchUpsertFrom, OpBatchGetInto,
	OpBatchPutFromMultiBuffers, OpBatchUpsertFromMultiBuffers, OpBatchGetIntoMultiBuffers,
	OpIsExist, OpBatchIsExist, OpGetSize, OpRemove, OpBatchRemove, OpRemoveByRegex, OpRemoveAll,
	OpBatchGetReplicaDesc, OpBatchReplicaClear,
	OpRegisterBuffer, OpUnregisterBuffer,
	OpGetIntoRanges, OpBatchGetIntoMultiBufferRanges, OpBatchPutFromMultiBufferRanges,
}

// statSlot is op's index in statOps (-1: not counted). A switch, which
// the compiler turns into a binary search: a map lookup cost twice as much
// (BenchmarkStatsSingle).
func statSlot(op Op) int {
	switch op {
	case OpPut:
		return 0
	case OpUpsert:
		return 1
	case OpGet:
		return 2
	case OpPutFrom:
		return 3
	case OpUpsertFrom:
		return 4
	case OpGetInto:
		return 5
	case OpPutParts:
		return 6
	case OpUpsertParts:
		return 7
	case OpPutBatch:
		return 8
	case OpUpsertBatch:
		return 9
	case OpBatchPutFrom:
		return 10
	case OpBatchUpsertFrom:
		return 11
	case OpBatchGetInto:
		return 12
	case OpBatchPutFromMultiBuffers:
		return 13
	case OpBatchUpsertFromMultiBuffers:
		return 14
	case OpBatchGetIntoMultiBuffers:
		return 15
	case OpIsExist:
		return 16
	case OpBatchIsExist:
		return 17
	case OpGetSize:
		return 18
	case OpRemove:
		return 19
	case OpBatchRemove:
		return 20
	case OpRemoveByRegex:
		return 21
	case OpRemoveAll:
		return 22
	case OpBatchGetReplicaDesc:
		return 23
	case OpBatchReplicaClear:
		return 24
	case OpRegisterBuffer:
		return 25
	case OpUnregisterBuffer:
		return 26
	case OpGetIntoRanges:
		return 27
	case OpBatchGetIntoMultiBufferRanges:
		return 28
	case OpBatchPutFromMultiBufferRanges:
		return 29
	}
	return -1
}

// clockBase makes every timestamp a monotonic-clock reading only:
// time.Since(clockBase) reads one clock, where time.Now reads two.
var clockBase = time.Now()

// now is the stats' timestamp: nanoseconds on the monotonic clock.
func now() time.Duration { return time.Since(clockBase) }

// codeSlots numbers Mooncake's store codes for the per-code counters; slot 0
// holds codes the table does not know.
var codeSlots, slotCodes = func() (map[int64]int, []ErrorCode) {
	t := codes.StoreTable()
	m := make(map[int64]int, len(t))
	back := []ErrorCode{0}
	for _, e := range t {
		if e.Value < 0 {
			m[e.Value] = len(back)
			back = append(back, ErrorCode(e.Value))
		}
	}
	return m, back
}()

// latencyBounds are the upper bounds of the latency histogram's buckets:
// 1 µs, 2 µs, 4 µs, ... about 16.8 s; one more bucket counts the rest.
// Every Histogram gets its own copy (Histogram.Bounds).
var latencyBounds = func() []time.Duration {
	b := make([]time.Duration, histBuckets-1)
	for i := range b {
		b[i] = time.Microsecond << i
	}
	return b
}()

const histBuckets = 26

type opCounters struct {
	calls, keys, bytes     atomic.Uint64
	failedCalls, failedKey atomic.Uint64
	latSum                 atomic.Uint64 // nanoseconds
	lat                    [histBuckets]atomic.Uint64
	codes                  []atomic.Uint64 // by code slot
	// Combining (combine.go): calls that crossed with others, the batch
	// crossings that carried them, and their key counts.
	combined, combinedBatches atomic.Uint64
	batchSizes                [combineBuckets]atomic.Uint64
}

// combineBuckets are the buckets of OpStats.CombinedBatchSizes: bucket i
// counts batches of 2^i+1 to 2^(i+1) keys (2; 3-4; ...; 65-128), the last
// also any larger.
const combineBuckets = 7

// combineBucket is the bucket of a combined batch of n >= 2 keys.
func combineBucket(n int) int {
	return min(max(bits.Len(uint(n-1))-1, 0), combineBuckets-1)
}

// combinedBatch records one batch crossing of n combined calls of op.
func (t *statsTable) combinedBatch(op Op, n int) {
	if o := t.counters(op); o != nil {
		o.combinedBatches.Add(1)
		o.batchSizes[combineBucket(n)].Add(1)
	}
}

// combinedCall records that one call of op crossed in a combined batch
// (its call, keys and bytes are counted by single, as a lone call's).
func (t *statsTable) combinedCall(op Op) {
	if o := t.counters(op); o != nil {
		o.combined.Add(1)
	}
}

type statsTable struct {
	ops [len(statOps)]opCounters
}

func newStatsTable() *statsTable {
	t := &statsTable{}
	for i := range t.ops {
		t.ops[i].codes = make([]atomic.Uint64, len(slotCodes))
	}
	return t
}

func (t *statsTable) counters(op Op) *opCounters {
	if t == nil {
		return nil
	}
	i := statSlot(op)
	if i < 0 {
		return nil
	}
	return &t.ops[i]
}

func bucket(d time.Duration) int {
	us := uint64(d / time.Microsecond)
	return min(bits.Len64(us), histBuckets-1)
}

func (o *opCounters) call(t0 time.Duration, keys int, bytes uint64) {
	d := now() - t0
	o.calls.Add(1)
	o.keys.Add(uint64(keys))
	o.bytes.Add(bytes)
	o.latSum.Add(uint64(d))
	o.lat[bucket(d)].Add(1)
}

func (o *opCounters) code(c int64) {
	o.codes[codeSlots[c]].Add(1)
}

// single records a one-key call that returned code rc (< 0: failed) and
// moved bytes.
func (t *statsTable) single(op Op, t0 time.Duration, rc int64, bytes uint64) {
	t.whole(op, t0, 1, rc, bytes)
}

// whole records a call of keys keys with one code for all of them.
func (t *statsTable) whole(op Op, t0 time.Duration, keys int, rc int64, bytes uint64) {
	o := t.counters(op)
	if o == nil {
		return
	}
	if rc < 0 {
		o.call(t0, keys, 0)
		o.failedCalls.Add(1)
		o.failedKey.Add(uint64(keys))
		o.code(rc)
		return
	}
	o.call(t0, keys, bytes)
}

// batch records a batch call: rc is the whole call's code, res the per-key
// results. Bytes are the sizes read (gets: results are object sizes) or the
// buffers of the keys that were stored (puts: bufs).
func (t *statsTable) batch(op Op, t0 time.Duration, rc int32, res []int64, bufs *hostmem.Buffers) {
	o := t.counters(op)
	if o == nil {
		return
	}
	if rc != 0 {
		o.call(t0, len(res), 0)
		o.failedCalls.Add(1)
		o.failedKey.Add(uint64(len(res)))
		o.code(int64(rc))
		return
	}
	var bytes uint64
	failed := 0
	for i, r := range res {
		switch {
		case r < 0:
			failed++
			o.code(r)
		case bufs == nil:
			if resultIsBytes(op) {
				bytes += uint64(r)
			}
		case r == 0:
			if bufs.Offsets == nil {
				bytes += bufs.Sizes[i]
			} else {
				for _, n := range bufs.Sizes[bufs.Offsets[i]:bufs.Offsets[i+1]] {
					bytes += n
				}
			}
		}
	}
	o.call(t0, len(res), bytes)
	if failed > 0 {
		o.failedCalls.Add(1)
		o.failedKey.Add(uint64(failed))
	}
}

// Stats is a snapshot of a client's counters since Open: every call that
// reached the engine (calls refused by the binding's own argument checks are
// not counted). All views of one connection share them.
type Stats struct {
	Ops []OpStats // operations called at least once, by name
}

// Op returns the counters of op (zero if it was never called).
func (s Stats) Op(op Op) OpStats {
	for _, o := range s.Ops {
		if o.Op == op {
			return o
		}
	}
	return OpStats{Op: op, Latency: Histogram{Bounds: slices.Clone(latencyBounds), Counts: make([]uint64, histBuckets)},
		CombinedBatchSizes: make([]uint64, combineBuckets)}
}

// OpStats are one operation's counters.
type OpStats struct {
	Op    Op
	Calls uint64
	Keys  uint64 // keys carried (1 per single-key call)
	// Bytes moved: the object sizes read; the bytes of the keys stored.
	Bytes uint64
	// FailedCalls counts calls that failed as a whole or for at least one
	// key; FailedKeys the keys that failed (all of a call that failed as
	// a whole).
	FailedCalls, FailedKeys uint64
	// Errors counts failures by Mooncake code: per key for batches, and
	// once for a batch that failed as a whole. Code 0 collects codes the
	// binding's table does not know.
	Errors  map[ErrorCode]uint64
	Latency Histogram
	// Combined counts the calls that crossed into C in one batch with other
	// callers' calls (Config.Combining), a subset of Calls, each counted
	// above as if made alone (its latency includes its wait).
	// CombinedBatches counts the batch crossings that carried them, and
	// CombinedBatchSizes their key counts: element i counts batches of
	// 2^i+1 to 2^(i+1) keys (2; 3-4; 5-8; ...; 65-128). Zero without
	// combining.
	Combined, CombinedBatches uint64
	CombinedBatchSizes        []uint64
}

// Histogram is a latency histogram: Counts[i] calls took at most
// Bounds[i] (and more than Bounds[i-1]); the last count is for calls slower
// than every bound.
type Histogram struct {
	Bounds []time.Duration
	Counts []uint64
	Count  uint64
	Sum    time.Duration
}

// Mean is the mean latency.
func (h Histogram) Mean() time.Duration {
	if h.Count == 0 {
		return 0
	}
	return h.Sum / time.Duration(h.Count)
}

// Quantile returns the upper bound of the bucket that holds the q-th
// quantile (0 < q <= 1): an upper estimate, within a factor of two.
func (h Histogram) Quantile(q float64) time.Duration {
	if h.Count == 0 {
		return 0
	}
	want := uint64(q*float64(h.Count) + 0.5)
	want = max(want, 1)
	var seen uint64
	for i, c := range h.Counts {
		seen += c
		if seen >= want {
			if i < len(h.Bounds) {
				return h.Bounds[i]
			}
			break
		}
	}
	if len(h.Bounds) == 0 {
		return 0 // not a histogram of this package
	}
	return h.Bounds[len(h.Bounds)-1] * 2
}

func (t *statsTable) snapshot() Stats {
	var s Stats
	if t == nil {
		return s
	}
	for i := range t.ops {
		o := &t.ops[i]
		calls := o.calls.Load()
		if calls == 0 {
			continue
		}
		st := OpStats{
			Op: statOps[i], Calls: calls, Keys: o.keys.Load(), Bytes: o.bytes.Load(),
			FailedCalls: o.failedCalls.Load(), FailedKeys: o.failedKey.Load(),
			Latency:  Histogram{Bounds: slices.Clone(latencyBounds), Counts: make([]uint64, histBuckets), Sum: time.Duration(o.latSum.Load())},
			Combined: o.combined.Load(), CombinedBatches: o.combinedBatches.Load(),
			CombinedBatchSizes: make([]uint64, combineBuckets),
		}
		for j := range o.batchSizes {
			st.CombinedBatchSizes[j] = o.batchSizes[j].Load()
		}
		for j := range o.lat {
			st.Latency.Counts[j] = o.lat[j].Load()
			st.Latency.Count += st.Latency.Counts[j]
		}
		for j := range o.codes {
			if n := o.codes[j].Load(); n > 0 {
				if st.Errors == nil {
					st.Errors = map[ErrorCode]uint64{}
				}
				st.Errors[slotCodes[j]] += n
			}
		}
		s.Ops = append(s.Ops, st)
	}
	sort.Slice(s.Ops, func(a, b int) bool { return s.Ops[a].Op < s.Ops[b].Op })
	return s
}

// Stats returns the client's counters (see Stats). A closed store keeps the
// counts it had; a nil or zero Store has none.
func (s *Store) Stats() Stats {
	return s.c().stats.snapshot()
}

// resultIsBytes says whether op's per-key results are the bytes it moved
// (reads, and the ranged writes of put sessions).
func resultIsBytes(op Op) bool {
	switch op {
	case OpBatchGetInto, OpBatchGetIntoMultiBuffers, OpGetIntoRanges,
		OpBatchGetIntoMultiBufferRanges, OpBatchPutFromMultiBufferRanges:
		return true
	}
	return false
}
