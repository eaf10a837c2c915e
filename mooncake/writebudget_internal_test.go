package mooncake

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestWriteBudget: batches that fit cross at once; one that does not waits
// until releases make room; waiters are admitted in arrival order (a small
// batch behind a waiting large one waits too); a batch larger than the
// budget goes alone.
func TestWriteBudget(t *testing.T) {
	type step struct {
		n       int  // keys of the batch that arrives
		crosses bool // whether it is admitted at once
	}
	for _, tc := range []struct {
		name  string
		max   int
		held  int // keys already in flight
		steps []step
	}{
		{"fits", 4096, 3072, []step{{1024, true}}},
		{"full", 4096, 4096, []step{{1, false}}},
		{"does not fit", 4096, 3072, []step{{2048, false}}},
		{"behind a waiter", 4096, 3072, []step{{2048, false}, {1, false}}},
		{"larger than the budget, others in flight", 4096, 1, []step{{10000, false}}},
		{"larger than the budget, alone", 4096, 0, []step{{10000, true}}},
		{"a budget of one key", 1, 0, []step{{5, true}, {1, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newWriteBudget(tc.max)
			if tc.held > 0 {
				b.acquire(tc.held)
			}
			var releases []int
			if tc.held > 0 {
				releases = append(releases, tc.held)
			}
			var wg sync.WaitGroup
			var crossed atomic.Int32
			for i, s := range tc.steps {
				done := make(chan struct{})
				wg.Add(1)
				go func() {
					defer wg.Done()
					b.acquire(s.n)
					close(done)
					crossed.Add(1)
				}()
				select {
				case <-done:
					if !s.crosses {
						t.Fatalf("step %d: a batch of %d keys crossed, want it to wait (budget %d, %d held)", i, s.n, tc.max, tc.held)
					}
				case <-time.After(50 * time.Millisecond):
					if s.crosses {
						t.Fatalf("step %d: a batch of %d keys waited, want it to cross (budget %d, %d held)", i, s.n, tc.max, tc.held)
					}
				}
				releases = append(releases, s.n)
			}
			// Give everything back in arrival order: each release admits
			// the waiters that then fit.
			for _, n := range releases {
				b.release(n)
			}
			waitAll := make(chan struct{})
			go func() { wg.Wait(); close(waitAll) }()
			select {
			case <-waitAll:
			case <-time.After(10 * time.Second):
				t.Fatalf("%d of %d batches crossed after every release", crossed.Load(), len(tc.steps))
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			if b.used != 0 || len(b.waiters) != 0 {
				t.Fatalf("after every release: used %d, %d waiting", b.used, len(b.waiters))
			}
		})
	}
}

// TestWriteBudgetNoLoss: many goroutines taking and giving back random
// weights never hold more than the budget, and all finish.
func TestWriteBudgetNoLoss(t *testing.T) {
	b := newWriteBudget(100)
	var inFlight, peak atomic.Int64
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				n := 1 + (g*7+i*13)%150 // some larger than the budget
				b.acquire(n)
				w := int64(b.weight(n))
				if v := inFlight.Add(w); v > peak.Load() {
					peak.Store(v)
				}
				inFlight.Add(-w)
				b.release(n)
			}
		}()
	}
	wg.Wait()
	if p := peak.Load(); p > 100 {
		t.Fatalf("%d keys in flight, budget 100", p)
	}
	if b.used != 0 || len(b.waiters) != 0 {
		t.Fatalf("after all: used %d, %d waiting", b.used, len(b.waiters))
	}
}

// TestWriteBudgetAloneAllocatesNothing: a batch that fits takes and gives
// back its keys without allocating.
func TestWriteBudgetAloneAllocatesNothing(t *testing.T) {
	b := newWriteBudget(4096)
	if a := testing.AllocsPerRun(100, func() { b.acquire(1024); b.release(1024) }); a != 0 {
		t.Fatalf("%v allocations per batch", a)
	}
}
