package mooncake

import "runtime"

// Test hooks of combining (combine.go) for the external tests.

// CombineMaxKeys and CombineMaxBytes are the bounds of a combined batch.
const (
	CombineMaxKeys  = combineMaxKeys
	CombineMaxBytes = combineMaxBytes
)

// HoldCombining makes op's combining queue on st busy, as a crossing in
// flight does, so that the combinable calls of op that follow queue.
// queued reports how many wait; release ends the pretend crossing, and the
// first queued call then leads a batch of those that fit. op is OpGetInto,
// OpPutFrom, OpUpsertFrom or OpIsExist, and st has combining on.
func HoldCombining(st *Store, op Op) (queued func() int, release func()) {
	k := combKinds
	for i := combKind(0); i < combKinds; i++ {
		if i.op() == op {
			k = i
			break
		}
	}
	q := &st.c().comb.queues[k]
	for !q.TryAcquire() {
		runtime.Gosched()
	}
	return q.Queued, q.Release
}

// StagedQueues counts st's combining queues that hold registered staging.
func StagedQueues(st *Store) int {
	n := 0
	if cb := st.c().comb; cb != nil {
		for i := range cb.queues {
			if cb.queues[i].staged() {
				n++
			}
		}
	}
	return n
}

// HoldBatchWrites takes what a batch write of n keys and b bytes takes of
// st's batch-write budget (Config.BatchWriteKeys, BatchWriteBytes), as if
// it were in upstream; release gives it back.
func HoldBatchWrites(st *Store, n int, b uint64) (release func()) {
	wb := st.c().writes
	w := wb.weight(n, b)
	wb.acquire(nil, w)
	return func() { wb.release(w) }
}

// BatchWriteBounds are the keys and bytes st's batch writes may have in
// flight (0: no bound).
func BatchWriteBounds(st *Store) (keys, bytes int64) {
	if wb := st.c().writes; wb != nil {
		return wb.max.keys, wb.max.bytes
	}
	return 0, 0
}
