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

// TestCallerGroupStopsTogether checks that no caller leaves its measured
// phase (for its cleanup) while another caller's request is still running,
// and that a caller whose request fails does not hold the others.
func TestCallerGroupStopsTogether(t *testing.T) {
	for _, failing := range []bool{false, true} {
		const n = 3
		g := newCallerGroup(n)
		release := make(chan struct{})
		left := make(chan int, n)
		errs := make([]error, n)
		for k := 0; k < n; k++ {
			go func() {
				errs[k] = func() error {
					_, err := g.measure(0, func(rec *recorder) error {
						rec.add(time.Microsecond, 1, 1)
						if k == 0 {
							<-release // the slow caller's last request
						}
						if k == 1 && failing {
							return errAborted
						}
						return nil
					})
					return err
				}()
				left <- k
			}()
		}
		g.ready.Wait()
		g.t0 = time.Now()
		close(g.start)
		if failing {
			if k := <-left; k != 1 {
				t.Fatalf("caller %d left first; want the failing caller 1", k)
			}
		}
		select {
		case k := <-left:
			t.Fatalf("failing=%v: caller %d left its measured phase while caller 0's request ran", failing, k)
		case <-time.After(50 * time.Millisecond):
		}
		close(release)
		remaining := n
		if failing {
			remaining--
		}
		for range remaining {
			select {
			case <-left:
			case <-time.After(10 * time.Second):
				t.Fatalf("failing=%v: the callers did not leave after the last request", failing)
			}
		}
		g.done.Wait()
		if failing && errs[1] == nil {
			t.Errorf("the failing caller returned no error")
		}
	}
}
