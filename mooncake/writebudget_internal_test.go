package mooncake

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestWriteBudget: batches that fit both bounds cross at once; one that
// does not waits until releases make room; waiters are admitted in arrival
// order (a small batch behind a waiting large one waits too); a batch
// larger than a bound goes alone; an unbounded dimension never makes a
// batch wait.
func TestWriteBudget(t *testing.T) {
	type batch struct {
		n int
		b uint64
	}
	type step struct {
		batch
		crosses bool // whether it is admitted at once
	}
	const MiB = 1 << 20
	for _, tc := range []struct {
		name        string
		keys, bytes int64
		held        batch // in flight before the steps
		steps       []step
	}{
		{"fits", 4096, 64 * MiB, batch{3072, 12 * MiB}, []step{{batch{1024, 4 * MiB}, true}}},
		{"keys full", 4096, 64 * MiB, batch{4096, 16 * MiB}, []step{{batch{1, 4096}, false}}},
		{"bytes full", 4096, 64 * MiB, batch{128, 64 * MiB}, []step{{batch{1, 4096}, false}}},
		{"keys do not fit", 4096, 64 * MiB, batch{3072, MiB}, []step{{batch{2048, MiB}, false}}},
		{"bytes do not fit", 4096, 64 * MiB, batch{128, 60 * MiB}, []step{{batch{128, 9 * MiB}, false}}},
		{"behind a waiter", 4096, 64 * MiB, batch{3072, MiB}, []step{{batch{2048, MiB}, false}, {batch{1, 4096}, false}}},
		{"larger than the budget, others in flight", 4096, 64 * MiB, batch{1, 4096}, []step{{batch{10000, 40 * MiB}, false}}},
		{"larger than the budget, alone", 4096, 64 * MiB, batch{}, []step{{batch{10000, 1 << 40}, true}}},
		{"bytes unbounded", 4096, 0, batch{1024, 1 << 40}, []step{{batch{1024, 1 << 40}, true}, {batch{4096, 1}, false}}},
		{"keys unbounded", 0, 64 * MiB, batch{100000, MiB}, []step{{batch{100000, MiB}, true}, {batch{1, 63 * MiB}, false}}},
		{"a budget of one key", 1, 0, batch{}, []step{{batch{5, 1}, true}, {batch{1, 1}, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wb := newWriteBudget(tc.keys, tc.bytes)
			var releases []budget
			if tc.held != (batch{}) {
				w := wb.weight(tc.held.n, tc.held.b)
				wb.acquire(nil, w)
				releases = append(releases, w)
			}
			var wg sync.WaitGroup
			var crossed atomic.Int32
			for i, s := range tc.steps {
				w := wb.weight(s.n, s.b)
				done := make(chan struct{})
				wg.Add(1)
				go func() {
					defer wg.Done()
					wb.acquire(nil, w)
					close(done)
					crossed.Add(1)
				}()
				select {
				case <-done:
					if !s.crosses {
						t.Fatalf("step %d: a batch of %d keys, %d bytes crossed, want it to wait", i, s.n, s.b)
					}
				case <-time.After(50 * time.Millisecond):
					if s.crosses {
						t.Fatalf("step %d: a batch of %d keys, %d bytes waited, want it to cross", i, s.n, s.b)
					}
				}
				releases = append(releases, w)
			}
			// Give everything back in arrival order: each release admits
			// the waiters that then fit.
			for _, w := range releases {
				wb.release(w)
			}
			waitAll := make(chan struct{})
			go func() { wg.Wait(); close(waitAll) }()
			select {
			case <-waitAll:
			case <-time.After(10 * time.Second):
				t.Fatalf("%d of %d batches crossed after every release", crossed.Load(), len(tc.steps))
			}
			wb.mu.Lock()
			defer wb.mu.Unlock()
			if wb.used != (budget{}) || len(wb.waiters) != 0 {
				t.Fatalf("after every release: used %+v, %d waiting", wb.used, len(wb.waiters))
			}
		})
	}
	if newWriteBudget(0, 0) != nil {
		t.Errorf("no bounds: a budget")
	}
}

// TestWriteBudgetAloneAllocatesNothing: a batch that fits takes and gives
// back its weight without allocating.
func TestWriteBudgetAloneAllocatesNothing(t *testing.T) {
	wb := newWriteBudget(4096, 64<<20)
	if a := testing.AllocsPerRun(100, func() { w := wb.weight(1024, 4<<20); wb.acquire(nil, w); wb.release(w) }); a != 0 {
		t.Fatalf("%v allocations per batch", a)
	}
}

// TestWriteBudgetLeave: a waiter whose done closes leaves the queue having
// taken nothing, and its leaving admits the waiters behind it that now fit
// (it may have been the head that held them back); a closed done does not
// stop a batch that fits.
func TestWriteBudgetLeave(t *testing.T) {
	wb := newWriteBudget(4, 0)
	held := wb.weight(3, 0)
	wb.acquire(nil, held)

	closed := make(chan struct{})
	close(closed)
	if !wb.acquire(closed, wb.weight(1, 0)) {
		t.Fatal("a batch that fits did not cross with done closed")
	}
	wb.release(wb.weight(1, 0))

	big, small := wb.weight(2, 0), wb.weight(1, 0) // the small one fits, but is behind
	leave := make(chan struct{})
	bigDone, smallDone := make(chan bool, 1), make(chan bool, 1)
	go func() { bigDone <- wb.acquire(leave, big) }()
	waitWaiters(t, wb, 1)
	go func() { smallDone <- wb.acquire(nil, small) }()
	waitWaiters(t, wb, 2)
	select {
	case <-smallDone:
		t.Fatal("a batch overtook the waiter ahead of it")
	case <-time.After(20 * time.Millisecond):
	}
	close(leave)
	if took := <-bigDone; took {
		t.Fatal("the waiter that left took its weight")
	}
	select {
	case <-smallDone:
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter behind the one that left was not admitted")
	}
	wb.release(small)
	wb.release(held)
	wb.mu.Lock()
	defer wb.mu.Unlock()
	if wb.used != (budget{}) || len(wb.waiters) != 0 {
		t.Fatalf("after all: used %+v, %d waiting", wb.used, len(wb.waiters))
	}
}

// TestWriteBudgetNoLoss: many goroutines taking and giving back random
// weights never hold more than the budget, never lose or keep weight, and
// all finish; also when their waits end at random (some as they are
// admitted).
func TestWriteBudgetNoLoss(t *testing.T) {
	for _, leave := range []bool{false, true} {
		t.Run(map[bool]string{false: "waiting", true: "leaving"}[leave], func(t *testing.T) {
			wb := newWriteBudget(100, 1000)
			var keys, bytes, left atomic.Int64
			var over atomic.Bool
			var wg sync.WaitGroup
			for g := range 32 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 200 {
						// some larger than the budget in one dimension or both
						w := wb.weight(1+(g*7+i*13)%150, uint64(1+(g*31+i*17)%1500))
						var done chan struct{}
						var timer *time.Timer
						if leave {
							done = make(chan struct{})
							timer = time.AfterFunc(time.Duration((g+i)%50)*time.Microsecond, func() { close(done) })
						}
						took := wb.acquire(done, w)
						if timer != nil {
							timer.Stop()
						}
						if !took {
							left.Add(1)
							continue
						}
						if keys.Add(w.keys) > 100 || bytes.Add(w.bytes) > 1000 {
							over.Store(true)
						}
						keys.Add(-w.keys)
						bytes.Add(-w.bytes)
						wb.release(w)
					}
				}()
			}
			finished := make(chan struct{})
			go func() { wg.Wait(); close(finished) }()
			select {
			case <-finished:
			case <-time.After(time.Minute):
				t.Fatal("callers still waiting after a minute: weight was lost")
			}
			if over.Load() {
				t.Fatal("more than the budget in flight")
			}
			if wb.used != (budget{}) || len(wb.waiters) != 0 {
				t.Fatalf("after all: used %+v, %d waiting", wb.used, len(wb.waiters))
			}
			if !leave && left.Load() > 0 {
				t.Fatalf("%d waits with no done channel ended without the weight", left.Load())
			}
			t.Logf("%d of %d waits left", left.Load(), 32*200)
		})
	}
}

// waitWaiters waits until n callers wait in wb's queue.
func waitWaiters(t *testing.T, wb *writeBudget, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		wb.mu.Lock()
		got := len(wb.waiters)
		wb.mu.Unlock()
		if got == n {
			return
		}
	}
	t.Fatalf("%d callers never waited", n)
}
