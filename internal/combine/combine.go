// Package combine is the flat-combining queue that the binding's single
// calls share (docs/combining.md): the store's single-key calls, the
// transfer engine's synchronous transfers and the prefix lookup's
// existence checks. Each crossing back into Go from a blocking C call (or
// each RPC) costs far more than one more key in a batch, so calls that
// overlap in time are carried together.
//
// The protocol: a caller that finds its queue idle holds it and makes its
// own call at once (one atomic swap, nothing allocated, no timer); one that
// finds a call under way joins the queue and sleeps. When the holder
// releases the queue, the first queued caller wakes as the next leader,
// takes the queued calls that fit into its batch, crosses once for all of
// them, hands the queue on and wakes the ones it served. A caller never
// waits for more than the call in flight and then its own batch.
package combine

import (
	"sync"
	"sync/atomic"
)

// Waiter is the queue's part of a queued call: embed it in the call's slot.
// Slots are meant to be pooled; a Waiter keeps its channel across uses, so
// a queued call allocates nothing in steady state.
type Waiter struct {
	wake  chan struct{}
	lead  bool // woken to lead the next batch
	taken bool // out of the queue: a leader has it (set under the queue's mutex)
}

func (w *Waiter) waiter() *Waiter { return w }

// Slot is a queued call: a pointer to a struct that embeds Waiter.
type Slot interface{ waiter() *Waiter }

// The state word: busy while a holder owns the queue's crossing, plus one
// waiter per queued caller. Callers queue only while busy is set, and a
// holder leaving with callers queued hands busy on, so the word is either 0
// (idle) or has busy set.
const (
	busy   int64 = 1
	waiter int64 = 2
)

// Queue is one kind of call's queue. The zero value is an idle queue.
type Queue[S Slot] struct {
	state   atomic.Int64
	mu      sync.Mutex // guards waiting, and the waiter count with it
	waiting []S        // in arrival order
}

// TryAcquire holds the queue if it is idle: the caller then makes its call
// alone and must Release.
func (q *Queue[S]) TryAcquire() bool { return q.state.CompareAndSwap(0, busy) }

// Queued returns how many callers wait in the queue.
func (q *Queue[S]) Queued() int { return int(q.state.Load() / waiter) }

// Outcome is how a Join ended.
type Outcome int8

const (
	// Alone: the call under way ended before s queued; the caller holds
	// the queue, makes its call alone and must Release.
	Alone Outcome = iota
	// Lead: woken to lead; the caller holds the queue, fills its batch
	// with Take, crosses, Releases and Wakes the slots it served.
	Lead
	// Served: a leader carried s and has set its result.
	Served
	// Left: done was closed before any leader took s; s is out of the
	// queue and nothing was sent for it.
	Left
)

// Join queues s behind the call under way and waits until it is served or
// woken to lead. A nil done never fires; once a leader has taken s, done
// no longer counts (its memory is in the leader's batch).
func (q *Queue[S]) Join(s S, done <-chan struct{}) Outcome {
	w := s.waiter()
	if w.wake == nil {
		w.wake = make(chan struct{}, 1)
	}
	w.lead, w.taken = false, false
	q.mu.Lock()
	for {
		st := q.state.Load()
		if st == 0 { // the crossing ended meanwhile: alone after all
			if q.state.CompareAndSwap(0, busy) {
				q.mu.Unlock()
				return Alone
			}
			continue
		}
		if q.state.CompareAndSwap(st, st+waiter) {
			break
		}
	}
	q.waiting = append(q.waiting, s)
	q.mu.Unlock()
	select {
	case <-w.wake:
	case <-done:
		q.mu.Lock()
		if !w.taken {
			q.remove(s)
			q.mu.Unlock()
			return Left
		}
		q.mu.Unlock()
		<-w.wake
	}
	if w.lead {
		return Lead
	}
	return Served
}

// remove takes a queued slot out of the queue (under mu).
func (q *Queue[S]) remove(s S) {
	w := s.waiter()
	for i, o := range q.waiting {
		if o.waiter() == w {
			n := copy(q.waiting[i:], q.waiting[i+1:])
			var zero S
			q.waiting[i+n] = zero
			q.waiting = q.waiting[:i+n]
			q.state.Add(-waiter)
			return
		}
	}
}

// Take moves the queued slots that fit into batch (which holds the
// leader's own call), in arrival order, and returns it; the rest stay
// queued, in order. fits is asked under the queue's lock, once per queued
// slot, in order; it keeps its own running totals. (It is not given the
// batch, so that a batch in the leader's stack stays there.)
func (q *Queue[S]) Take(batch []S, fits func(s S) bool) []S {
	q.mu.Lock()
	kept := q.waiting[:0]
	taken := 0
	for _, s := range q.waiting {
		if !fits(s) {
			kept = append(kept, s)
			continue
		}
		s.waiter().taken = true
		batch = append(batch, s)
		taken++
	}
	clear(q.waiting[len(kept):])
	q.waiting = kept
	q.state.Add(-waiter * int64(taken))
	q.mu.Unlock()
	return batch
}

// Release ends the holder's crossing: the queue goes idle or, with callers
// queued, the first of them wakes to lead the next crossing (busy passes to
// it, so no queued caller is ever left without a leader).
func (q *Queue[S]) Release() {
	for {
		if q.state.CompareAndSwap(busy, 0) {
			return
		}
		q.mu.Lock()
		if len(q.waiting) == 0 {
			// A caller whose done fired left after the swap failed: the
			// count is back to busy alone.
			q.mu.Unlock()
			continue
		}
		next := q.waiting[0]
		n := copy(q.waiting, q.waiting[1:])
		var zero S
		q.waiting[n] = zero
		q.waiting = q.waiting[:n]
		w := next.waiter()
		w.taken, w.lead = true, true
		q.state.Add(-waiter)
		q.mu.Unlock()
		w.wake <- struct{}{}
		return
	}
}

// Wake tells a slot a leader served that its result is set. The leader
// calls it after Release, so the next leader starts meanwhile.
func Wake[S Slot](s S) { s.waiter().wake <- struct{}{} }
