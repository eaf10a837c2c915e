package soak

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// The key space of one writer (scripts/soak_python.py uses the same):
// <prefix>/s/<i> single objects of SingleSizes, <prefix>/b/<g>/<i> batches of
// BatchKeys x BatchValue bytes, <prefix>/m/<g>/<i> multi-buffer objects of
// MultiKeys keys x MultiBufs buffers x MultiBuf bytes, laid out in memory
// the way a layer-first page is (buffer b of key i at (b*MultiKeys+i)*MultiBuf),
// and <prefix>/p/<i>, PublishedKeys objects that other clients read.
//
// Other clients read only the published keys, which are written once and
// then only removed (without force) and put again, never upserted:
// upstream's reads hold no reference the master checks, so a read racing an
// in-place upsert of the same key returns a mix of two versions, and one
// racing a forced remove may return the bytes of whatever was stored in the
// freed memory next (both seen in the first soak; docs/soak.md). A read
// lease does block a remove without force, so the published keys are read
// safely. Only the writer reads its other keys, one call at a time.
const (
	SingleKeys = 48
	Groups     = 4
	BatchKeys  = 16
	BatchValue = 16 << 10
	MultiKeys  = 8
	MultiBufs  = 4
	MultiBuf   = 2 << 10
	// PublishedKeys are the keys other clients read.
	PublishedKeys = 16
)

// SingleSizes are the sizes of single objects: object i has SingleSizes[i %
// len(SingleSizes)].
var SingleSizes = []int{1 << 10, 4 << 10, 60 << 10, 250 << 10}

const (
	batchBytes = BatchKeys * BatchValue
	multiBytes = MultiKeys * MultiBufs * MultiBuf
	// MemSize is the registered memory a Worker needs: sources and
	// destinations of one batch and one multi-buffer batch.
	MemSize = 2*batchBytes + 2*multiBytes
)

// Worker is one writer's traffic: single puts, upserts, gets and removes,
// zero-copy batches and multi-buffer batches of its own keys, each read
// checked against its model, and reads of other clients' keys, each checked
// to be a whole value of its key.
type Worker struct {
	St     *mooncake.Store // writes go through it (give it a placement in the writer's own segment)
	Mem    *hostmem.Memory // MemSize bytes, registered with St
	Prefix string
	Seed   int64
	// Cross, when set, names another client's key to read (or "").
	Cross func(r *rand.Rand) string

	mu      sync.Mutex
	stats   *Stats
	slowest atomic.Int64 // ms; the step runs outside mu

	// multiUpsert: the backend has the multi-buffer upsert
	// (Capabilities.MultiBufferUpsert).
	multiUpsert bool

	model     map[string]*entry
	singles   []string
	published []string
	keys      hostmem.Keys // the batch being sent (pack)
	batches   [Groups][]string
	multis    [Groups][]string
	scratch   []byte
	res       []int64
	addrs     []uintptr
	sizes     []uint64
	offs      []uint64
}

// Snapshot returns a copy of the counters so far.
func (w *Worker) Snapshot() *Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stats == nil {
		return NewStats()
	}
	s := w.stats.Clone()
	s.SlowestMs = w.slowest.Load()
	return s
}

func (w *Worker) init() error {
	if w.Mem == nil || w.Mem.Size() < MemSize {
		return fmt.Errorf("soak: worker needs %d bytes of registered memory", MemSize)
	}
	w.stats = NewStats()
	w.multiUpsert = mooncake.Backend().Capabilities.MultiBufferUpsert
	w.model = map[string]*entry{}
	add := func(k string) string { w.model[k] = &entry{}; return k }
	for i := 0; i < SingleKeys; i++ {
		w.singles = append(w.singles, add(fmt.Sprintf("%s/s/%d", w.Prefix, i)))
	}
	for i := 0; i < PublishedKeys; i++ {
		w.published = append(w.published, add(fmt.Sprintf("%s/p/%d", w.Prefix, i)))
	}
	for g := 0; g < Groups; g++ {
		for i := 0; i < BatchKeys; i++ {
			w.batches[g] = append(w.batches[g], add(fmt.Sprintf("%s/b/%d/%d", w.Prefix, g, i)))
		}
		for i := 0; i < MultiKeys; i++ {
			w.multis[g] = append(w.multis[g], add(fmt.Sprintf("%s/m/%d/%d", w.Prefix, g, i)))
		}
	}
	w.scratch = make([]byte, SingleSizes[len(SingleSizes)-1])
	return nil
}

// Run does traffic until stop is closed.
func (w *Worker) Run(stop <-chan struct{}) error {
	if err := w.init(); err != nil {
		return err
	}
	r := rand.New(rand.NewSource(w.Seed))
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		began := time.Now()
		w.step(r)
		if ms := time.Since(began).Milliseconds(); ms > w.slowest.Load() {
			w.slowest.Store(ms)
		}
	}
}

// step does one random operation.
func (w *Worker) step(r *rand.Rand) {
	switch n := r.Intn(100); {
	case n < 20:
		w.write(r.Intn(len(w.singles)))
	case n < 40:
		w.get(w.singles[r.Intn(len(w.singles))])
	case n < 55:
		w.batch(r.Intn(Groups))
	case n < 70:
		w.multi(r.Intn(Groups))
	case n < 73:
		w.removeLocked(w.singles[r.Intn(len(w.singles))])
	case n < 76:
		w.publish(r.Intn(PublishedKeys))
	case n < 80:
		w.exist(r)
	default:
		if w.Cross != nil {
			if k := w.Cross(r); k != "" {
				w.cross(k)
			}
		}
	}
}

// Sweep reads every key of the worker once and checks it against the
// model (after Run has returned).
func (w *Worker) Sweep() {
	for _, k := range append(append([]string(nil), w.singles...), w.published...) {
		w.get(k)
	}
	for g := 0; g < Groups; g++ {
		for _, k := range append(append([]string(nil), w.batches[g]...), w.multis[g]...) {
			w.get(k)
		}
	}
}

func code(err error) string {
	var me *mooncake.Error
	if errors.As(err, &me) && me.Code != 0 {
		return me.Code.Error()
	}
	if errors.As(err, &me) && me.Err != nil {
		return me.Err.Error()
	}
	return err.Error()
}

func (w *Worker) count(op string, keys int) {
	w.stats.Ops[op]++
	w.stats.Keys[op] += int64(keys)
}

func (w *Worker) fail(op string, err error) {
	w.stats.Errors[op+": "+code(err)]++
}

// failCode counts one key of a batch that failed with code r.
func (w *Worker) failCode(op string, r int64) {
	w.stats.Errors[op+": "+mooncake.ErrorCode(r).Error()]++
}

// found checks a read of key that returned b (nil and notFound: no such
// object) against the model.
func (w *Worker) found(op, key string, b []byte, notFound bool) {
	e := w.model[key]
	var ver uint32
	if !notFound {
		v, err := Check(b, key)
		if err != nil {
			w.stats.corrupt("%s %q: %d bytes: %v", op, key, len(b), err)
			return
		}
		w.stats.BytesVerified += int64(len(b))
		ver = v
	}
	if e == nil {
		return
	}
	had, since := slices.Clone(e.possible()), e.at
	switch e.verdict(ver) {
	case lost:
		w.stats.lost("%s %s %q: read version %d (0: not found), the model has %v since %s", stamp(), op, key, ver, had, since.UTC().Format("15:04:05.000"))
	case dropped:
		w.stats.Dropped++
	case erased:
		w.stats.Erased++
	case rolledBack:
		w.stats.rolledBack("%s %s %q: read version %d (0: not found) after a failover, the model had %v", stamp(), op, key, ver, had)
	}
}

// write puts or upserts single object i. Its size is fixed by i: upstream
// upserts an object of the same size in place, and one of another size
// into new memory, keeping the old until its readers are surely done (the
// master's discarded replicas), which with random sizes filled the segments
// and made the master evict.
func (w *Worker) write(i int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.put(w.singles[i], SingleSizes[i%len(SingleSizes)], "")
}

// put writes the next version of key: Put while it is surely absent, else
// Upsert (op names the call in the counters, "publish" for published keys).
func (w *Worker) put(key string, size int, as string) {
	e := w.model[key]
	ver := e.next()
	v := w.scratch[:size]
	Fill(v, key, ver)
	op, put := "upsert", w.St.Upsert
	if cur, ok := e.certain(); ok && cur == 0 {
		op, put = "put", w.St.Put
	}
	if as != "" {
		op = as + "_" + op
	}
	w.count(op, 1)
	switch err := put(key, v); {
	case err == nil && strings.HasSuffix(op, "put"):
		e.ackedPut(ver)
	case err == nil:
		e.ackedUpsert(ver)
	case strings.HasSuffix(op, "put") && errors.Is(err, mooncake.ErrObjectAlreadyExists):
		w.stats.lost("put %q: exists, the model has it removed", key)
		e.failed(ver)
	case strings.HasSuffix(op, "put"):
		w.fail(op, err)
		e.failed(ver)
	default:
		w.fail(op, err)
		e.failedUpsert(ver)
	}
}

func (w *Worker) get(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.count("get", 1)
	b, err := w.St.Get(key)
	switch {
	case err == nil:
		w.found("get", key, b, false)
	case errors.Is(err, mooncake.ErrObjectNotFound):
		w.found("get", key, nil, true)
	default:
		w.fail("get", err)
	}
}

func (w *Worker) cross(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.count("cross_get", 1)
	b, err := w.St.Get(key)
	switch {
	case err == nil:
		w.found("cross_get", key, b, false)
	case errors.Is(err, mooncake.ErrObjectNotFound):
	default:
		w.fail("cross_get", err)
	}
}

func (w *Worker) removeLocked(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.remove(key)
}

// remove removes key without force, so that a reader's lease protects its
// read; a leased key stays (and its model with it).
func (w *Worker) remove(key string) bool {
	w.count("remove", 1)
	e := w.model[key]
	switch err := w.St.Remove(key, false); {
	case err == nil:
		e.ackedRemove()
		return true
	case errors.Is(err, mooncake.ErrObjectNotFound):
		w.found("remove", key, nil, true)
		return true
	case errors.Is(err, mooncake.ErrObjectHasLease):
		w.stats.Leased++
	default:
		w.fail("remove", err)
		e.failed(0)
	}
	return false
}

// publish replaces published key i: a remove (without force) and a put of
// the next version, or only the put while it is absent.
func (w *Worker) publish(i int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	key, size := w.published[i], SingleSizes[i%len(SingleSizes)]
	if cur, ok := w.model[key].certain(); (!ok || cur != 0) && !w.remove(key) {
		return
	}
	w.put(key, size, "publish")
}

func (w *Worker) exist(r *rand.Rand) {
	w.mu.Lock()
	defer w.mu.Unlock()
	keys := w.batches[r.Intn(Groups)]
	w.count("batch_is_exist", len(keys))
	res, err := w.St.BatchIsExist(w.pack(keys), w.res)
	if res == nil {
		w.fail("batch_is_exist", err)
		return
	}
	w.res = res
	for i, k := range keys {
		if res[i] < 0 {
			w.failCode("batch_is_exist", res[i])
			continue
		}
		e := w.model[k]
		had, since := slices.Clone(e.possible()), e.at
		switch e.existVerdict(res[i] == 1) {
		case lost:
			w.stats.lost("%s batch_is_exist %q: %d, the model has %v since %s", stamp(), k, res[i], had, since.UTC().Format("15:04:05.000"))
		case dropped:
			w.stats.Dropped++
		case erased:
			w.stats.Erased++
		case rolledBack:
			w.stats.rolledBack("%s batch_is_exist %q: %d after a failover, the model had %v", stamp(), k, res[i], had)
		}
	}
}

// batch writes one group with BatchPutFrom (all keys absent) or
// BatchUpsertFrom, then reads it back with BatchGetInto.
func (w *Worker) batch(g int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	keys := w.batches[g]
	mem := w.Mem.Bytes()
	src, dst := w.Mem.Addr(), w.Mem.Addr()+batchBytes
	var vers [BatchKeys]uint32
	absent := true
	w.addrs, w.sizes = w.addrs[:0], w.sizes[:0]
	for i, k := range keys {
		e := w.model[k]
		if cur, ok := e.certain(); !ok || cur != 0 {
			absent = false
		}
		vers[i] = e.next()
		Fill(mem[i*BatchValue:(i+1)*BatchValue], k, vers[i])
		w.addrs = append(w.addrs, src+uintptr(i*BatchValue))
		w.sizes = append(w.sizes, BatchValue)
	}
	op, call := "batch_upsert_from", w.St.BatchUpsertFrom
	if absent {
		op, call = "batch_put_from", w.St.BatchPutFrom
	}
	w.count(op, len(keys))
	packed := w.pack(keys)
	res, err := call(packed, hostmem.Buffers{Addrs: w.addrs, Sizes: w.sizes}, w.res)
	if !w.settle(op, keys, vers[:], res, err) {
		return
	}
	w.res = res
	clear(mem[batchBytes : 2*batchBytes])
	for i := range keys {
		w.addrs[i] = dst + uintptr(i*BatchValue)
	}
	w.count("batch_get_into", len(keys))
	res, err = w.St.BatchGetInto(packed, hostmem.Buffers{Addrs: w.addrs, Sizes: w.sizes}, w.res)
	if res == nil {
		w.fail("batch_get_into", err)
		return
	}
	w.res = res // keys that failed are judged one by one below
	for i, k := range keys {
		w.readResult("batch_get_into", k, res[i], mem[batchBytes+i*BatchValue:batchBytes+(i+1)*BatchValue])
	}
}

// multi is batch with multi-buffer objects: BatchPutFromMultiBuffers or
// BatchUpsertFromMultiBuffers, then BatchGetIntoMultiBuffers. Without the
// multi-buffer upsert (the native backend over upstream v0.3.12.post1,
// whose conformance case checks that it is refused), keys that may exist
// are removed first and the absent ones put, as the Python client does.
func (w *Worker) multi(g int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	keys := w.multis[g]
	if !w.multiUpsert {
		var absent []string
		for _, k := range keys {
			if cur, ok := w.model[k].certain(); (ok && cur == 0) || w.remove(k) {
				absent = append(absent, k)
			}
		}
		if keys = absent; len(keys) == 0 {
			return
		}
	}
	mem := w.Mem.Bytes()
	base := 2 * batchBytes
	src, dst := base, base+multiBytes
	var vers [MultiKeys]uint32
	absent := true
	w.addrs, w.sizes, w.offs = w.addrs[:0], w.sizes[:0], append(w.offs[:0], 0)
	val := w.scratch[:MultiBufs*MultiBuf]
	for i, k := range keys {
		e := w.model[k]
		if cur, ok := e.certain(); !ok || cur != 0 {
			absent = false
		}
		vers[i] = e.next()
		Fill(val, k, vers[i])
		for b := 0; b < MultiBufs; b++ {
			off := src + (b*MultiKeys+i)*MultiBuf
			copy(mem[off:off+MultiBuf], val[b*MultiBuf:])
			w.addrs = append(w.addrs, w.Mem.Addr()+uintptr(off))
			w.sizes = append(w.sizes, MultiBuf)
		}
		w.offs = append(w.offs, uint64(len(w.addrs)))
	}
	op, call := "batch_upsert_from_multi_buffers", w.St.BatchUpsertFrom
	if absent {
		op, call = "batch_put_from_multi_buffers", w.St.BatchPutFrom
	}
	w.count(op, len(keys))
	packed := w.pack(keys)
	res, err := call(packed, hostmem.Buffers{Addrs: w.addrs, Sizes: w.sizes, Offsets: w.offs}, w.res)
	if !w.settle(op, keys, vers[:], res, err) {
		return
	}
	w.res = res
	clear(mem[dst : dst+multiBytes])
	for i := range w.addrs {
		w.addrs[i] += uintptr(multiBytes)
	}
	w.count("batch_get_into_multi_buffers", len(keys))
	res, err = w.St.BatchGetInto(packed, hostmem.Buffers{Addrs: w.addrs, Sizes: w.sizes, Offsets: w.offs}, w.res)
	if res == nil {
		w.fail("batch_get_into_multi_buffers", err)
		return
	}
	w.res = res // keys that failed are judged one by one below
	for i, k := range keys {
		for b := 0; b < MultiBufs; b++ {
			off := dst + (b*MultiKeys+i)*MultiBuf
			copy(val[b*MultiBuf:], mem[off:off+MultiBuf])
		}
		w.readResult("batch_get_into_multi_buffers", k, res[i], val)
	}
}

// settle records a batch write's outcome per key, and reports whether the
// call crossed (false: it failed as a whole, every key with it).
func (w *Worker) settle(op string, keys []string, vers []uint32, res []int64, err error) bool {
	for i, k := range keys {
		switch {
		case res == nil && strings.Contains(op, "upsert"):
			w.model[k].failedUpsert(vers[i])
		case res == nil:
			w.model[k].failed(vers[i])
		case res[i] >= 0 && strings.Contains(op, "_put_"):
			w.model[k].ackedPut(vers[i])
		case res[i] >= 0:
			w.model[k].ackedUpsert(vers[i])
		case strings.Contains(op, "upsert"):
			w.model[k].failedUpsert(vers[i])
			w.failCode(op, res[i])
		default:
			w.model[k].failed(vers[i])
			w.failCode(op, res[i])
		}
	}
	if res == nil {
		w.fail(op, err)
	}
	return res != nil
}

// pack packs keys into the worker's reused key list for one batch call.
func (w *Worker) pack(keys []string) *hostmem.Keys {
	w.keys.Reset()
	for _, k := range keys {
		w.keys.Append(k)
	}
	return &w.keys
}

// readResult checks one key of a batch read: n is its result, b its bytes.
func (w *Worker) readResult(op, key string, n int64, b []byte) {
	switch {
	case n == int64(len(b)):
		w.found(op, key, b, false)
	case n == int64(mooncake.ErrObjectNotFound):
		w.found(op, key, nil, true)
	case n < 0:
		w.failCode(op, n)
	default:
		w.stats.corrupt("%s %q: %d bytes read into %d", op, key, n, len(b))
	}
}

// stamp is the wall clock in the masters' log format, for the notes.
func stamp() string { return time.Now().UTC().Format("15:04:05.000") }
