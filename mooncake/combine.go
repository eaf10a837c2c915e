package mooncake

import (
	"math/bits"
	"sync"
	"time"

	"github.com/mooncake-go/mooncake-go/internal/cabi/cstore"
	"github.com/mooncake-go/mooncake-go/internal/combine"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// Flat combining of single-key calls (docs/combining.md): single-key calls
// of one kind on one connection that overlap in time cross into C as one
// batch call, because each crossing back from a blocking C call costs the
// Go runtime far more CPU than a key in a batch does. The queue protocol is
// internal/combine's; this file says what a batch of each kind is.

// combKind is a kind of single-key call that combines: one queue each.
type combKind uint8

const (
	combGetInto combKind = iota
	combPutFrom
	combUpsertFrom
	combIsExist
	combGet    // copying Get / AppendGet, through the queue's staging
	combPut    // copying Put, through the queue's staging
	combUpsert // copying Upsert, through the queue's staging
	combRemove
	combRemoveForce
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
	case combGet:
		return OpGet
	case combPut:
		return OpPut
	case combUpsert:
		return OpUpsert
	case combRemove, combRemoveForce:
		return OpRemove
	}
	return OpIsExist
}

// copying reports whether the kind's calls take or give Go memory, which a
// batch moves through registered staging memory the queue owns.
func (k combKind) copying() bool { return k == combGet || k == combPut || k == combUpsert }

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

// The copying calls' staging: one registered region per queue, allocated
// at its first batch. A copying call combines only up to combineCopyMax
// bytes (and the client's local buffer size, which bounds its single
// call): larger values gain nothing from sharing a crossing. A combined get
// does not know its object's size, so each gets a slot of the queue's
// current guess (getSlotMin..combineCopyMax), and one whose object is
// larger makes its single call after the batch.
const (
	combineStageBytes = 4 << 20
	combineCopyMax    = 1 << 20
	getSlotMin        = 4 << 10
	getSlotStart      = 64 << 10
)

// combCall is the arguments of one single-key call. view is the store view
// whose policy a put uses (nil for reads), so that only puts of one policy
// share a batch.
type combCall struct {
	view *Store
	key  string
	addr uintptr
	size uint64
	// The copying calls' memory: a put's value, or the slice a get appends
	// to; and a get's result: buf with the object appended.
	buf []byte
	out []byte
	// tooBig: a get's object (of size bytes) did not fit in a slice after
	// buf (the result is then ErrBufferOverflow). retry: a combined get whose object was
	// larger than its staging slot; it makes its single call.
	tooBig, retry bool
}

// combSlot is a queued call: its arguments and, once served, its result.
type combSlot struct {
	combine.Waiter
	combCall
	res int64 // the single call's result (size, 1/0, or a negative code)
	n   int   // calls carried by the crossing that served it
}

// Slots are recycled, so a queued call allocates nothing in steady state.
var combSlots = sync.Pool{New: func() any { return new(combSlot) }}

// combiner holds a connection's queues (nil when combining is off).
type combiner struct {
	queues [combKinds]combQueue
}

// newCombiner makes the queues of a client whose local buffer (which
// bounds its single copying calls) is localBuffer bytes.
func newCombiner(localBuffer Size) *combiner {
	cb := &combiner{}
	q := &cb.queues[combGet]
	q.slotMax = min(combineCopyMax, uint64(localBuffer))
	q.slot = min(getSlotStart, q.slotMax)
	return cb
}

// combQueue is one kind's queue.
type combQueue struct {
	combine.Queue[*combSlot]

	// The leader's scratch, touched only by whoever holds the queue.
	keys  []byte
	offs  []uint64
	addrs []uintptr
	sizes []uint64
	res   []int64
	seen  map[string]struct{} // keys in the batch (kinds that do not share keys)
	// stage is a copying kind's registered staging (nil if it could not be
	// had); slot is a get's guess per call, slotMax its bound.
	stage   *hostmem.Memory
	slot    uint64
	slotMax uint64
}

// call makes one single-key call of kind k and returns its result and how
// many calls the crossing that made it carried (1: its own single call;
// 0: done was closed while the call was queued, and nothing crossed for
// it). A copying get's slice comes back in a.out.
func (c *conn) call(done <-chan struct{}, k combKind, a *combCall) (int64, int) {
	if c.comb == nil || !a.combinable(k, c.cfg.LocalBufferSize) {
		return c.single(k, a), 1
	}
	q := &c.comb.queues[k]
	if k.copying() && !q.staged() { // a dummy's, or staging not had at Open
		return c.single(k, a), 1
	}
	if q.TryAcquire() {
		r := c.single(k, a)
		q.Release()
		return r, 1
	}
	r, n := q.enqueue(c, k, a, done)
	if a.retry { // carried by a batch that could not serve it
		r = c.single(k, a)
	}
	return r, n
}

// combinable reports whether a call may share a batch: not when the batch
// would refuse as a whole what the single call refuses alone (a key too
// long, a put policy with group ids or same-node placement), nor an empty
// destination, whose refusal only the single call's checks should judge.
func (a *combCall) combinable(k combKind, localBuffer Size) bool {
	if len(a.key) > MaxKeyLen {
		return false
	}
	switch k {
	case combGetInto:
		return a.addr != 0 && a.size > 0
	case combPutFrom, combUpsertFrom:
		return !a.view.cpolicy.HasGroups && !a.view.cpolicy.SameNode
	case combPut, combUpsert:
		// An empty value, or one larger than the local buffer, is refused
		// by the single call alone.
		n := uint64(len(a.buf))
		return n > 0 && n <= combineCopyMax && n <= uint64(localBuffer) &&
			!a.view.cpolicy.HasGroups && !a.view.cpolicy.SameNode
	case combGet:
		return uint64(localBuffer) >= getSlotMin
	}
	return true
}

// single makes a call alone: the call the binding makes without combining.
func (c *conn) single(k combKind, a *combCall) int64 {
	switch k {
	case combGetInto:
		return c.handle.GetInto(a.key, a.addr, a.size)
	case combPutFrom:
		return int64(c.handle.PutFrom(a.key, a.addr, a.size, &a.view.cpolicy))
	case combUpsertFrom:
		return int64(c.handle.UpsertFrom(a.key, a.addr, a.size, &a.view.cpolicy))
	case combGet:
		return c.getCopy(a)
	case combPut:
		return int64(c.handle.Put(a.key, a.buf, &a.view.cpolicy))
	case combUpsert:
		return int64(c.handle.Upsert(a.key, a.buf, &a.view.cpolicy))
	case combRemove, combRemoveForce:
		return int64(c.handle.Remove(a.key, k == combRemoveForce))
	}
	return int64(c.handle.IsExist(a.key))
}

// getCopy is the single copying get: one read, held by the library while
// a.buf grows to take the object.
func (c *conn) getCopy(a *combCall) int64 {
	size, h := c.handle.GetBegin(a.key)
	if size < 0 {
		return size
	}
	out, ok := growForGet(a.buf, size)
	if !ok {
		cstore.GetFinish(h, nil) // release the held read
		a.tooBig, a.size = true, uint64(size)
		return int64(ErrBufferOverflow)
	}
	if rc := cstore.GetFinish(h, out[len(a.buf):]); rc != 0 {
		return int64(rc)
	}
	a.out = out
	return size
}

// enqueue queues a call while a crossing is under way and waits for its
// result, or for the lead of the next crossing, or for done (then it
// returns 0 calls carried: it left the queue before any leader took it).
func (q *combQueue) enqueue(c *conn, k combKind, a *combCall, done <-chan struct{}) (int64, int) {
	sl := combSlots.Get().(*combSlot)
	sl.combCall = *a
	switch q.Join(sl, done) {
	case combine.Alone:
		sl.res, sl.n = c.single(k, &sl.combCall), 1
		q.Release()
	case combine.Lead:
		q.lead(c, k, sl)
	}
	r, n := sl.res, sl.n
	a.out, a.tooBig, a.retry, a.size = sl.out, sl.tooBig, sl.retry, sl.size
	*sl = combSlot{Waiter: sl.Waiter} // keep no key, view or memory alive in the pool
	combSlots.Put(sl)
	return r, n
}

// lead makes the crossing of a woken leader: its own call and the queued
// calls that fit, in one batch (or its single call when none fit), then
// hands the queue on and wakes the callers it served.
func (q *combQueue) lead(c *conn, k combKind, own *combSlot) {
	var arr [combineMaxKeys]*combSlot
	batch := q.take(k, append(arr[:0], own))
	if len(batch) == 1 {
		own.res, own.n = c.single(k, &own.combCall), 1
	} else {
		q.cross(c, k, batch)
	}
	q.Release()
	for _, sl := range batch[1:] {
		combine.Wake(sl)
	}
}

// take moves the queued calls that fit into batch (which holds the
// leader's own call): within the bounds, of the same view, and, for kinds
// whose batches differ from single calls on a repeated key, of a key the
// batch does not hold yet.
func (q *combQueue) take(k combKind, batch []*combSlot) []*combSlot {
	own := batch[0]
	bytes := q.bytesOf(k, own)
	maxBytes := uint64(combineMaxBytes)
	if k.copying() {
		maxBytes = combineStageBytes
	}
	unique := !k.sharesKeys()
	if unique {
		if q.seen == nil {
			q.seen = make(map[string]struct{}, combineMaxKeys)
		}
		q.seen[own.key] = struct{}{}
	}
	keys := len(batch)
	batch = q.Take(batch, func(sl *combSlot) bool {
		n := q.bytesOf(k, sl)
		if keys >= combineMaxKeys || sl.view != own.view || n > maxBytes || bytes > maxBytes-n {
			return false
		}
		if unique {
			if _, dup := q.seen[sl.key]; dup {
				return false
			}
			q.seen[sl.key] = struct{}{}
		}
		keys++
		bytes += n
		return true
	})
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
	var off uint64
	for _, sl := range batch {
		q.keys = append(q.keys, sl.key...)
		q.offs = append(q.offs, uint64(len(q.keys)))
		addr, size := sl.addr, sl.size
		if k.copying() { // carve the staging: puts copy their values in
			addr, size = q.stage.Addr()+uintptr(off), q.bytesOf(k, sl)
			if k != combGet {
				copy(q.stage.Bytes()[off:], sl.buf)
			}
			off += size
		}
		q.addrs = append(q.addrs, addr)
		q.sizes = append(q.sizes, size)
	}
	q.res = resultsFor(q.res, len(batch))
	h := c.handle
	var rc int32
	switch k {
	case combGetInto, combGet:
		rc = h.BatchGetInto(q.keys, q.offs, q.addrs, q.sizes, q.res)
	case combPutFrom, combPut:
		rc = h.BatchPutFrom(q.keys, q.offs, q.addrs, q.sizes, &batch[0].view.cpolicy, q.res)
	case combUpsertFrom, combUpsert:
		rc = h.BatchUpsertFrom(q.keys, q.offs, q.addrs, q.sizes, &batch[0].view.cpolicy, q.res)
	case combRemove, combRemoveForce:
		rc = h.BatchRemove(q.keys, q.offs, k == combRemoveForce, q.res)
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
	if k == combGet && rc == 0 {
		q.deliverGets(batch)
	}
}

// bytesOf is what a call takes of a batch's byte bound: its buffer, or a
// copying get's staging slot.
func (q *combQueue) bytesOf(k combKind, sl *combSlot) uint64 {
	switch k {
	case combGet:
		return q.slot
	case combPut, combUpsert:
		return uint64(len(sl.buf))
	}
	return sl.size
}

// stageAll gives each copying queue its registered staging, at Open:
// registering while other calls of the client transfer is a race inside
// upstream's client (docs/combining.md, "Staging"). A queue whose staging
// cannot be had lets its calls go alone.
func (cb *combiner) stageAll(c *conn) {
	// A client without a local buffer (a query-only client) has no copying
	// call that combines (see combinable), so it registers nothing.
	if uint64(c.cfg.LocalBufferSize) < getSlotMin {
		return
	}
	for k := range combKinds {
		if !k.copying() {
			continue
		}
		m, err := hostmem.Alloc(combineStageBytes, hostmem.Options{})
		if err != nil {
			continue
		}
		if c.handle.RegisterBuffer(m.Addr(), m.Size()) != 0 {
			_ = m.Free()
			continue
		}
		cb.queues[k].stage = m
	}
}

// staged reports whether a copying queue has its staging.
func (q *combQueue) staged() bool { return q.stage != nil }

// deliverGets copies each combined get's object out of the staging into
// its caller's slice before the staging is reused, and adapts the slot
// size: a get whose object was larger than its slot (upstream answers
// INVALID_PARAMS) makes its single call instead, and the next batches give
// larger slots.
func (q *combQueue) deliverGets(batch []*combSlot) {
	stage := q.stage.Bytes()
	largest, retried := uint64(0), false
	for i, sl := range batch {
		r := sl.res
		switch {
		case r == int64(ErrInvalidParams):
			sl.retry, retried = true, true
		case r >= 0:
			largest = max(largest, uint64(r))
			out, ok := growForGet(sl.buf, r)
			if !ok {
				sl.tooBig, sl.size, sl.res = true, uint64(r), int64(ErrBufferOverflow)
				continue
			}
			lo := q.addrs[i] - q.stage.Addr()
			copy(out[len(sl.buf):], stage[lo:lo+uintptr(r)])
			sl.out = out
		}
	}
	if retried {
		q.slot = min(q.slot*4, q.slotMax)
	} else {
		q.slot = max(getSlotMin, min(ceilPow2(largest), q.slotMax))
	}
}

// ceilPow2 is the least power of two ≥ n (1 for 0).
func ceilPow2(n uint64) uint64 {
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len64(n-1)
}

// freeStages ends the staging of every queue; Close calls it once the
// client (and with it every registration) is gone.
func (cb *combiner) freeStages() {
	for i := range cb.queues {
		if m := cb.queues[i].stage; m != nil {
			_ = m.Free()
			cb.queues[i].stage = nil
		}
	}
}

// counted records a call of op made through call: as a lone call's, plus,
// when its crossing carried others, as a combined one.
func (c *conn) counted(op Op, t0 time.Duration, r int64, bytes uint64, crossed int) {
	if crossed == 0 { // it left the queue: no call was made
		return
	}
	c.stats.single(op, t0, r, bytes)
	if crossed > 1 {
		c.stats.combinedCall(op)
	}
}
