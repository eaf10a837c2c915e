package mooncake

import "sync"

// writeBudget bounds the keys of zero-copy batch writes a store has in
// upstream at once (Config.BatchWriteKeys). Callers that do not fit wait in
// arrival order: a large batch at the head is not overtaken by small ones
// behind it, so it cannot starve. Taking and giving back a budget that
// nobody waits on locks a mutex and allocates nothing.
type writeBudget struct {
	mu      sync.Mutex
	max     int
	used    int
	waiters []*budgetWaiter // arrival order
}

// budgetWaiter is a caller waiting for n keys of the budget.
type budgetWaiter struct {
	n     int
	ready chan struct{}
}

var budgetWaiters = sync.Pool{New: func() any { return &budgetWaiter{ready: make(chan struct{}, 1)} }}

func newWriteBudget(max int) *writeBudget { return &writeBudget{max: max} }

// weight is what a batch of n keys takes: a batch larger than the whole
// budget takes all of it, and so crosses alone.
func (b *writeBudget) weight(n int) int {
	if n > b.max {
		return b.max
	}
	if n < 1 {
		return 1
	}
	return n
}

// acquire waits until a batch of n keys fits and takes its weight.
func (b *writeBudget) acquire(n int) {
	n = b.weight(n)
	b.mu.Lock()
	if len(b.waiters) == 0 && b.used+n <= b.max {
		b.used += n
		b.mu.Unlock()
		return
	}
	w := budgetWaiters.Get().(*budgetWaiter)
	w.n = n
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	<-w.ready // release has added w.n to used
	budgetWaiters.Put(w)
}

// release gives back what acquire(n) took and admits the waiters at the
// head of the queue that now fit.
func (b *writeBudget) release(n int) {
	n = b.weight(n)
	b.mu.Lock()
	b.used -= n
	k := 0
	for k < len(b.waiters) && b.used+b.waiters[k].n <= b.max {
		b.used += b.waiters[k].n
		b.waiters[k].ready <- struct{}{}
		k++
	}
	if k > 0 {
		rest := copy(b.waiters, b.waiters[k:])
		clear(b.waiters[rest:])
		b.waiters = b.waiters[:rest]
	}
	b.mu.Unlock()
}
