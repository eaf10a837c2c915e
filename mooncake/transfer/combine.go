package transfer

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/mooncake-go/mooncake-go/internal/combine"
)

// Combining of synchronous transfers (Config.Combining; docs/combining.md,
// "The transfer engine"): Transfer, Read and Write calls on one engine that
// overlap in time are submitted as one batch and watched by one poller. A
// synchronous transfer alone costs a batch allocation, a submission, a
// status poll loop and a free, each a crossing into C, and every caller
// polls its own batch; combined, one caller (the leader) does that for all.
// The queue protocol is internal/combine's, as the store's: a caller that
// finds the queue idle makes its own transfer at once; one that finds a
// batch under way queues, and the next leader carries it.

// CombiningMode is Config.Combining (and the store's Config.Combining).
type CombiningMode int8

// Combining modes. CombiningDefault is off for an engine (combining pays
// from about 16 concurrent callers: docs/combining.md) and on for a
// store (mooncake.Config.Combining).
const (
	CombiningDefault CombiningMode = iota
	CombiningOn
	CombiningOff
)

// Valid reports whether m is one of the modes.
func (m CombiningMode) Valid() bool { return m >= CombiningDefault && m <= CombiningOff }

// The bounds of a combined batch, and of a call that combines: a caller of
// a large transfer gains nothing from sharing a batch, and everyone in a
// batch waits for all of it.
const (
	combineMaxRequests = 128
	combineMaxLength   = 1 << 20 // bytes of one call's requests
)

// combSlot is a queued call and, once served, its result.
type combSlot struct {
	combine.Waiter
	ctx   context.Context
	reqs  []Request
	sum   Summary
	err   error
	retry bool // its batch could not be submitted: it transfers alone
}

var combSlots = sync.Pool{New: func() any { return new(combSlot) }}

// combiner is an engine's queue (nil when combining is off).
type combiner struct {
	combine.Queue[*combSlot]

	// The leader's scratch, touched only by whoever holds the queue.
	reqs  []Request
	tasks []RequestStatus
	batch Batch

	// Counters (Engine.CombiningStats).
	combined, batches atomic.Uint64
}

// combinable reports whether a call may share a batch: requests Go can
// check in full (a bad one is refused alone, by the caller's own Submit),
// within the bounds.
func combinable(reqs []Request) bool {
	if len(reqs) > combineMaxRequests {
		return false
	}
	var n uint64
	for i := range reqs {
		if checkRequest(&reqs[i]) != nil {
			return false
		}
		n += reqs[i].Length
		if n > combineMaxLength {
			return false
		}
	}
	return true
}

// call makes one synchronous transfer through the queue.
func (q *combiner) call(e *Engine, ctx context.Context, reqs []Request) (Summary, error) {
	if q.TryAcquire() {
		sum, err := e.transferAlone(ctx, reqs, Notification{})
		q.Release()
		return sum, err
	}
	sl := combSlots.Get().(*combSlot)
	// A copy, so that the caller's requests do not escape to the heap
	// (the slot's buffer is kept with it in the pool).
	sl.ctx, sl.reqs = ctx, append(sl.reqs[:0], reqs...)
	var sum Summary
	var err error
	switch q.Join(sl, ctx.Done()) {
	case combine.Alone:
		sum, err = e.transferAlone(ctx, reqs, Notification{})
		q.Release()
	case combine.Left: // it sent nothing
		err = &Error{Op: OpSubmit, Err: ctx.Err()}
	case combine.Lead:
		q.lead(e, sl)
		fallthrough
	case combine.Served:
		sum, err = sl.sum, sl.err
		if sl.retry {
			sum, err = e.transferAlone(ctx, reqs, Notification{})
		}
	}
	*sl = combSlot{Waiter: sl.Waiter, reqs: sl.reqs[:0]} // keep no context alive in the pool
	combSlots.Put(sl)
	return sum, err
}

// lead makes the batch of a woken leader: its own requests and those of
// the queued calls that fit, submitted together and waited for; each call
// gets the summary and error of its own tasks.
func (q *combiner) lead(e *Engine, own *combSlot) {
	var arr [combineMaxRequests]*combSlot
	n := len(own.reqs)
	batch := q.Take(append(arr[:0], own), func(sl *combSlot) bool {
		if n+len(sl.reqs) > combineMaxRequests {
			return false
		}
		n += len(sl.reqs)
		return true
	})
	if len(batch) == 1 {
		own.sum, own.err = e.transferAlone(own.ctx, own.reqs, Notification{})
		q.Release()
		return
	}
	if !q.transferAll(e, batch, n) {
		for _, sl := range batch { // each goes alone: its own call's refusal
			sl.retry = true
		}
	}
	q.Release()
	for _, sl := range batch[1:] {
		combine.Wake(sl)
	}
}

// transferAll submits the calls of batch (n requests) as one batch, waits
// for it and gives each call its result; false if the batch could not be
// allocated or submitted (a refusal, such as a segment closed or local
// memory not registered, that each call must get from its own Submit).
func (q *combiner) transferAll(e *Engine, batch []*combSlot, n int) bool {
	q.reqs = q.reqs[:0]
	for _, sl := range batch {
		q.reqs = append(q.reqs, sl.reqs...)
	}
	b := &q.batch
	if err := e.initBatch(b, n); err != nil {
		return false
	}
	if err := b.Submit(q.reqs); err != nil {
		_ = b.Free()
		return false
	}
	// Every call's memory is in use until the batch ends, so the wait does
	// not stop for anyone's context; each call's context is judged below.
	_, werr := b.Wait(context.Background())
	if cap(q.tasks) < n {
		q.tasks = make([]RequestStatus, n, combineMaxRequests)
	}
	q.tasks = q.tasks[:n]
	_, serr := b.Status(q.tasks)
	_ = b.Free()
	q.batches.Add(1)
	q.combined.Add(uint64(len(batch)))
	i := 0
	for _, sl := range batch {
		tasks := q.tasks[i : i+len(sl.reqs)]
		i += len(sl.reqs)
		if serr != nil { // the engine closed under the batch
			sl.err = serr
			continue
		}
		if werr != nil && !errors.Is(werr, ErrTaskFailed) {
			sl.err = werr
			continue
		}
		sl.sum = ownSummary(tasks)
		sl.err = waitErr(sl.sum, sl.ctx.Err())
	}
	return true
}

// ownSummary is the summary a call's own batch would have had once done.
func ownSummary(tasks []RequestStatus) Summary {
	s := Summary{State: Completed, Tasks: uint64(len(tasks))}
	for _, t := range tasks {
		s.Bytes += t.Bytes
		if t.State == Failed {
			s.State = Failed
		}
	}
	return s
}

// CombiningStats counts the synchronous calls that crossed in a batch with
// others and the batches that carried them (zero with combining off).
type CombiningStats struct {
	Combined, Batches uint64
}

// CombiningStats returns the engine's combining counters.
func (e *Engine) CombiningStats() CombiningStats {
	if e == nil || e.comb == nil {
		return CombiningStats{}
	}
	return CombiningStats{Combined: e.comb.combined.Load(), Batches: e.comb.batches.Load()}
}
