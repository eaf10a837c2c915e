package transfer

import "runtime"

// HoldCombining makes e's combining queue busy, as a batch in flight does,
// so that the combinable synchronous transfers that follow queue. queued
// reports how many wait; release ends the pretend batch, and the first
// queued call then leads a batch of those that fit. e has combining on.
func HoldCombining(e *Engine) (queued func() int, release func()) {
	q := e.comb
	for !q.TryAcquire() {
		runtime.Gosched()
	}
	return q.Queued, q.Release
}

// CombineMaxRequests is the bound of a combined batch's requests.
const CombineMaxRequests = combineMaxRequests
