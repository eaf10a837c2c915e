package mooncake

import (
	"sync"
	"sync/atomic"
	"time"
)

// Flat combining of single-key calls (docs/combining.md): single-key calls
// of one kind on one connection that overlap in time cross into C as one
// batch call, because each crossing back from a blocking C call costs the
// Go runtime far more CPU than a key in a batch does. A caller that finds
// its kind idle makes its single call at once (two atomics, no
// allocation); one that finds a crossing under way queues, and the queue's
// next leader carries it in its batch.

// combKind is a kind of single-key call that combines: one queue each.
type combKind uint8

const (
	combGetInto combKind = iota
	combPutFrom
	combUpsertFrom
	combIsExist
	combKinds
)

// op is the kind's single-call operation: its calls report errors and are
// counted under it, as if made alone.
func (k combKind) op() Op {
	switch k {
	case combGetInto:
		return OpGetInto
	case combPutFrom:
		return OpPutFrom
	case combUpsertFrom:
		return OpUpsertFrom
	}
	return OpIsExist
}

// sharesKeys reports whether two calls of the same key may share a batch:
// only where upstream's batch with a repeated key equals two single calls
// (docs/combining.md, "The same key twice").
func (k combKind) sharesKeys() bool { return k == combIsExist }

// The bounds of a combined batch: keys, and bytes (the sizes of the calls'
// buffers); both to be chosen by measurement against real Mooncake.
const (
	combineMaxKeys  = 128
	combineMaxBytes = 16 << 20
)

// A queue's state word: combBusy while a leader owns the queue's crossing,
// plus combWaiter per queued caller. Callers queue only while busy is set,
// and a leader leaving with callers queued hands busy on, so the word is
// either 0 (idle) or has busy set.
const (
	combBusy   int64 = 1
	combWaiter int64 = 2
)

// combCall is the arguments of one single-key call. view is the store view
// whose policy a put uses (nil for reads), so that only puts of one policy
// share a batch.
type combCall struct {
	view *Store
	key  string
	addr uintptr
	size uint64
}

// combSlot is a queued call: its arguments and, once served, its result.
type combSlot struct {
	combCall
	res  int64 // the single call's result (size, 1/0, or a negative code)
	n    int   // calls carried by the crossing that served it
	lead bool  // woken to lead the next crossing, not with a result
	wake chan struct{}
}

// Slots are recycled, so a queued call allocates nothing in steady state.
var combSlots = sync.Pool{New: func() any { return &combSlot{wake: make(chan struct{}, 1)} }}

// combiner holds a connection's queues (nil when combining is off).
type combiner struct {
	queues [combKinds]combQueue
}

// combQueue is one kind's queue.
type combQueue struct {
	state   atomic.Int64 // combBusy | waiters*combWaiter
	mu      sync.Mutex   // guards waiting, and the waiter count with it
	waiting []*combSlot  // in arrival order

	// The leader's scratch, touched only by whoever holds combBusy.
	keys  []byte
	offs  []uint64
	addrs []uintptr
	sizes []uint64
	res   []int64
	seen  map[string]struct{} // keys in the batch (kinds that do not share keys)
}

// call makes one single-key call of kind k and returns its result and how
// many calls the crossing that made it carried (1: its own single call).
func (c *conn) call(k combKind, a combCall) (int64, int) {
	if c.comb == nil || !a.combinable(k) {
		return c.single(k, a), 1
	}
	q := &c.comb.queues[k]
	if q.state.CompareAndSwap(0, combBusy) {
		r := c.single(k, a)
		q.release()
		return r, 1
	}
	return q.enqueue(c, k, a)
}

// combinable reports whether a call may share a batch: not when the batch
// would refuse as a whole what the single call refuses alone (a key too
// long, a put policy with group ids or same-node placement), nor an empty
// destination, whose refusal only the single call's checks should judge.
func (a *combCall) combinable(k combKind) bool {
	if len(a.key) > MaxKeyLen {
		return false
	}
	switch k {
	case combGetInto:
		return a.addr != 0 && a.size > 0
	case combPutFrom, combUpsertFrom:
		return !a.view.cpolicy.HasGroups && !a.view.cpolicy.SameNode
	}
	return true
}

// single makes a call alone: the call the binding makes without combining.
func (c *conn) single(k combKind, a combCall) int64 {
	switch k {
	case combGetInto:
		return c.handle.GetInto(a.key, a.addr, a.size)
	case combPutFrom:
		return int64(c.handle.PutFrom(a.key, a.addr, a.size, &a.view.cpolicy))
	case combUpsertFrom:
		return int64(c.handle.UpsertFrom(a.key, a.addr, a.size, &a.view.cpolicy))
	}
	return int64(c.handle.IsExist(a.key))
}

// enqueue queues a call while a crossing is under way and waits for its
// result, or for the lead of the next crossing.
func (q *combQueue) enqueue(c *conn, k combKind, a combCall) (int64, int) {
	q.mu.Lock()
	for {
		st := q.state.Load()
		if st == 0 { // the crossing ended meanwhile: alone after all
			if q.state.CompareAndSwap(0, combBusy) {
				q.mu.Unlock()
				r := c.single(k, a)
				q.release()
				return r, 1
			}
			continue
		}
		if q.state.CompareAndSwap(st, st+combWaiter) {
			break
		}
	}
	sl := combSlots.Get().(*combSlot)
	sl.combCall = a
	q.waiting = append(q.waiting, sl)
	q.mu.Unlock()
	<-sl.wake
	if sl.lead {
		q.lead(c, k, sl)
	}
	r, n := sl.res, sl.n
	*sl = combSlot{wake: sl.wake} // keep no key or view alive in the pool
	combSlots.Put(sl)
	return r, n
}

// release ends the holder's crossing: the queue goes idle, or, with
// callers queued, the first of them is woken to lead the next crossing
// (busy passes to it, so no queued caller is ever left without a leader).
func (q *combQueue) release() {
	if q.state.CompareAndSwap(combBusy, 0) {
		return
	}
	q.mu.Lock()
	next := q.waiting[0]
	n := copy(q.waiting, q.waiting[1:])
	q.waiting[n] = nil
	q.waiting = q.waiting[:n]
	q.state.Add(-combWaiter)
	q.mu.Unlock()
	next.lead = true
	next.wake <- struct{}{}
}

// lead makes the crossing of a woken leader: its own call and the queued
// calls that fit, in one batch (or its single call when none fit), then
// hands the queue on and wakes the callers it served.
func (q *combQueue) lead(c *conn, k combKind, own *combSlot) {
	var arr [combineMaxKeys]*combSlot
	batch := q.take(k, append(arr[:0], own))
	if len(batch) == 1 {
		own.res, own.n = c.single(k, own.combCall), 1
		q.release()
		return
	}
	q.cross(c, k, batch)
	q.release()
	for _, sl := range batch[1:] {
		sl.wake <- struct{}{}
	}
}

// take moves the queued calls that fit into batch (which holds the
// leader's own call), in arrival order: within the bounds, of the same
// view, and, for kinds whose batches differ from single calls on a repeated
// key, of a key the batch does not hold yet. The rest stay queued, in
// order.
func (q *combQueue) take(k combKind, batch []*combSlot) []*combSlot {
	own := batch[0]
	bytes := own.size
	unique := !k.sharesKeys()
	if unique {
		if q.seen == nil {
			q.seen = make(map[string]struct{}, combineMaxKeys)
		}
		q.seen[own.key] = struct{}{}
	}
	q.mu.Lock()
	kept := q.waiting[:0]
	for _, sl := range q.waiting {
		fits := len(batch) < combineMaxKeys && sl.view == own.view &&
			sl.size <= combineMaxBytes && bytes <= combineMaxBytes-sl.size
		if fits && unique {
			_, dup := q.seen[sl.key]
			fits = !dup
		}
		if !fits {
			kept = append(kept, sl)
			continue
		}
		batch = append(batch, sl)
		bytes += sl.size
		if unique {
			q.seen[sl.key] = struct{}{}
		}
	}
	clear(q.waiting[len(kept):])
	q.waiting = kept
	q.state.Add(-combWaiter * int64(len(batch)-1))
	q.mu.Unlock()
	clear(q.seen)
	return batch
}

// cross makes one batch call for the calls of batch and gives each its
// result: its own entry of the batch's results, or the batch's code when
// the call was refused as a whole (which is what each single call would
// have returned: see combinable).
func (q *combQueue) cross(c *conn, k combKind, batch []*combSlot) {
	q.keys, q.offs = q.keys[:0], append(q.offs[:0], 0)
	q.addrs, q.sizes = q.addrs[:0], q.sizes[:0]
	for _, sl := range batch {
		q.keys = append(q.keys, sl.key...)
		q.offs = append(q.offs, uint64(len(q.keys)))
		q.addrs = append(q.addrs, sl.addr)
		q.sizes = append(q.sizes, sl.size)
	}
	q.res = resultsFor(q.res, len(batch))
	h := c.handle
	var rc int32
	switch k {
	case combGetInto:
		rc = h.BatchGetInto(q.keys, q.offs, q.addrs, q.sizes, q.res)
	case combPutFrom:
		rc = h.BatchPutFrom(q.keys, q.offs, q.addrs, q.sizes, &batch[0].view.cpolicy, q.res)
	case combUpsertFrom:
		rc = h.BatchUpsertFrom(q.keys, q.offs, q.addrs, q.sizes, &batch[0].view.cpolicy, q.res)
	default:
		rc = h.BatchIsExist(q.keys, q.offs, q.res)
	}
	c.stats.combinedBatch(k.op(), len(batch))
	for i, sl := range batch {
		sl.n = len(batch)
		if rc != 0 {
			sl.res = int64(rc)
		} else {
			sl.res = q.res[i]
		}
	}
}

// counted records a call of op made through call: as a lone call's, plus,
// when its crossing carried others, as a combined one.
func (c *conn) counted(op Op, t0 time.Duration, r int64, bytes uint64, crossed int) {
	c.stats.single(op, t0, r, bytes)
	if crossed > 1 {
		c.stats.combinedCall(op)
	}
}
