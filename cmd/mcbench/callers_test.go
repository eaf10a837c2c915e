package main

import (
	"sync"
	"testing"
	"time"
)

// TestCallerGroupWarmsUpTogether checks that no caller starts its warm-up
// before every caller has prepared, and that a caller which fails before
// its warm-up (runCallers then marks it done) does not hold the others.
func TestCallerGroupWarmsUpTogether(t *testing.T) {
	for _, failing := range []int{-1, 0, 3} {
		const n = 5
		g := newCallerGroup(n)
		var mu sync.Mutex
		var lastPrepared time.Time
		started := make([]time.Time, n)
		var wg sync.WaitGroup
		for k := 0; k < n; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(time.Duration(k) * 5 * time.Millisecond) // preparing
				if k == failing {
					g.warm.Done() // what runCallers does for a caller that never warmed
					return
				}
				mu.Lock()
				if now := time.Now(); now.After(lastPrepared) {
					lastPrepared = now
				}
				mu.Unlock()
				g.warmUp()
				started[k] = time.Now()
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("failing caller %d: the warm-up barrier did not open", failing)
		}
		for k, s := range started {
			if k != failing && s.Before(lastPrepared) {
				t.Errorf("failing caller %d: caller %d warmed up at %v, before the last caller prepared (%v)", failing, k, s, lastPrepared)
			}
		}
	}
}
