package mooncake

import (
	"slices"
	"sync"
)

// writeBudget bounds the keys and the bytes of zero-copy batch writes a
// store has in upstream at once (Config.BatchWriteKeys, BatchWriteBytes).
// Callers that do not fit wait in arrival order: a large batch at the head
// is not overtaken by small ones behind it, so it cannot starve. Taking
// and giving back a budget that nobody waits on locks a mutex and
// allocates nothing.
type writeBudget struct {
	mu      sync.Mutex
	max     budget // a zero field: that dimension is unbounded
	used    budget
	waiters []*budgetWaiter // arrival order
}

// budget is an amount of the two dimensions.
type budget struct{ keys, bytes int64 }

// budgetWaiter is a caller waiting for its weight.
type budgetWaiter struct {
	w     budget
	ready chan struct{}
}

var budgetWaiters = sync.Pool{New: func() any { return &budgetWaiter{ready: make(chan struct{}, 1)} }}

// newWriteBudget returns a budget of at most keys keys and bytes bytes in
// flight (0: that dimension unbounded), or nil when both are unbounded.
func newWriteBudget(keys, bytes int64) *writeBudget {
	if keys <= 0 && bytes <= 0 {
		return nil
	}
	return &writeBudget{max: budget{max(keys, 0), max(bytes, 0)}}
}

// weight is what a batch of n keys and b bytes takes: in each bounded
// dimension at least 1 and at most the whole budget, so a batch larger than
// the budget crosses alone.
func (wb *writeBudget) weight(n int, b uint64) budget {
	clamp := func(v, limit int64) int64 {
		if limit == 0 {
			return 0
		}
		return min(max(v, 1), limit)
	}
	return budget{clamp(int64(n), wb.max.keys), clamp(int64(min(b, 1<<62)), wb.max.bytes)}
}

// fits reports whether w fits beside what is in flight.
func (wb *writeBudget) fits(w budget) bool {
	return wb.used.keys+w.keys <= wb.max.keys && wb.used.bytes+w.bytes <= wb.max.bytes
}

// acquire waits until w fits and takes it, or until done is closed (a
// context's Done; nil: never), when it takes nothing and reports false. A
// waiter that leaves may have been the head that held others back, so its
// leaving admits those that now fit.
func (wb *writeBudget) acquire(done <-chan struct{}, w budget) bool {
	wb.mu.Lock()
	if len(wb.waiters) == 0 && wb.fits(w) {
		wb.used.keys += w.keys
		wb.used.bytes += w.bytes
		wb.mu.Unlock()
		return true
	}
	q := budgetWaiters.Get().(*budgetWaiter)
	q.w = w
	wb.waiters = append(wb.waiters, q)
	wb.mu.Unlock()
	select {
	case <-q.ready: // admitLocked has taken q.w for us
		budgetWaiters.Put(q)
		return true
	case <-done:
	}
	wb.mu.Lock()
	i := slices.Index(wb.waiters, q)
	if i < 0 {
		// Admitted as done closed: the weight is ours, and the call goes on.
		wb.mu.Unlock()
		<-q.ready
		budgetWaiters.Put(q)
		return true
	}
	wb.waiters = slices.Delete(wb.waiters, i, i+1)
	wb.admitLocked()
	wb.mu.Unlock()
	budgetWaiters.Put(q)
	return false
}

// release gives back what acquire(w) took and admits the waiters at the
// head of the queue that now fit.
func (wb *writeBudget) release(w budget) {
	wb.mu.Lock()
	wb.used.keys -= w.keys
	wb.used.bytes -= w.bytes
	wb.admitLocked()
	wb.mu.Unlock()
}

// admitLocked takes the weights of the waiters at the head of the queue
// that fit, in arrival order, and wakes them.
func (wb *writeBudget) admitLocked() {
	k := 0
	for k < len(wb.waiters) && wb.fits(wb.waiters[k].w) {
		q := wb.waiters[k]
		wb.used.keys += q.w.keys
		wb.used.bytes += q.w.bytes
		q.ready <- struct{}{}
		k++
	}
	if k > 0 {
		rest := copy(wb.waiters, wb.waiters[k:])
		clear(wb.waiters[rest:])
		wb.waiters = wb.waiters[:rest]
	}
}
