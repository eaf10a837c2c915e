package combine

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type call struct {
	Waiter
	in, out int
	served  int // times a leader served it (must end at 0 or 1)
}

func takeAll(*call) bool { return true }

// waitQueued spins until n callers are queued (the test's only clock).
func waitQueued(t *testing.T, q *Queue[*call], n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for q.state.Load() != busy+int64(n)*waiter {
		if time.Now().After(deadline) {
			t.Fatalf("state %d, want %d queued", q.state.Load(), n)
		}
		runtime.Gosched()
	}
}

func TestQueueOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name string
		// holder runs while the queue is held with one caller queued; it
		// returns the outcome the queued caller must see.
		holder func(q *Queue[*call], done chan struct{}) Outcome
		cancel bool // the queued caller's done channel is closed
	}{
		{"release hands the lead to the queued caller", func(q *Queue[*call], _ chan struct{}) Outcome {
			q.Release()
			return Lead
		}, false},
		{"the holder takes and serves the queued caller", func(q *Queue[*call], _ chan struct{}) Outcome {
			b := q.Take(nil, takeAll)
			if len(b) != 1 {
				panic("took nothing")
			}
			b[0].out = b[0].in * 2
			q.Release()
			Wake(b[0])
			return Served
		}, false},
		{"a queued caller whose done fires leaves, and release goes idle", func(q *Queue[*call], done chan struct{}) Outcome {
			close(done)
			return Left
		}, true},
		{"a taken caller stays to be served though its done fires", func(q *Queue[*call], done chan struct{}) Outcome {
			b := q.Take(nil, takeAll)
			close(done)
			time.Sleep(10 * time.Millisecond)
			b[0].out = b[0].in * 2
			q.Release()
			Wake(b[0])
			return Served
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var q Queue[*call]
			if !q.TryAcquire() {
				t.Fatal("an idle queue was not acquired")
			}
			if q.TryAcquire() {
				t.Fatal("a held queue was acquired")
			}
			c := &call{in: 21}
			done := make(chan struct{})
			got := make(chan Outcome, 1)
			go func() { got <- q.Join(c, done) }()
			waitQueued(t, &q, 1)
			want := tc.holder(&q, done)
			o := <-got
			if o != want {
				t.Fatalf("outcome %d, want %d", o, want)
			}
			switch o {
			case Lead:
				q.Release()
			case Served:
				if c.out != 42 {
					t.Fatalf("served with %d, want 42", c.out)
				}
			case Left:
				q.Release()
			}
			if q.state.Load() != 0 || len(q.waiting) != 0 {
				t.Fatalf("queue not idle: state %d, %d waiting", q.state.Load(), len(q.waiting))
			}
		})
	}
}

// TestQueueStress: many goroutines call through one queue, some with done
// channels that fire; every call ends exactly once (served once with its
// own result, or made alone, or left unserved), and the queue ends idle.
func TestQueueStress(t *testing.T) {
	const goroutines, calls, maxBatch = 32, 2000, 8
	var q Queue[*call]
	var alone, led, served, left, batches atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			slot := new(call)
			for i := range calls {
				in := g*calls + i
				if q.TryAcquire() {
					alone.Add(1)
					q.Release()
					continue
				}
				*slot = call{Waiter: slot.Waiter, in: in}
				var done chan struct{}
				if rng.IntN(4) == 0 {
					done = make(chan struct{})
					time.AfterFunc(time.Duration(rng.IntN(50))*time.Microsecond, func() { close(done) })
				}
				switch q.Join(slot, done) {
				case Alone:
					alone.Add(1)
					q.Release()
				case Left:
					left.Add(1)
					if slot.served != 0 {
						t.Errorf("call %d left but was served", in)
					}
				case Lead:
					led.Add(1)
					var arr [maxBatch]*call
					n := 1
					b := q.Take(append(arr[:0], slot), func(*call) bool { n++; return n <= maxBatch })
					batches.Add(1)
					for _, c := range b {
						c.out = c.in * 2
						c.served++
					}
					q.Release()
					for _, c := range b[1:] {
						Wake(c)
					}
				case Served:
					served.Add(1)
				}
				if o := slot.out; (slot.served != 0 || o != 0) && (slot.served != 1 || o != in*2) {
					t.Errorf("call %d: served %d times, result %d", in, slot.served, o)
				}
			}
		}()
	}
	wg.Wait()
	if st := q.state.Load(); st != 0 || len(q.waiting) != 0 {
		t.Fatalf("queue not idle: state %d, %d waiting", st, len(q.waiting))
	}
	total := alone.Load() + led.Load() + served.Load() + left.Load()
	if total != goroutines*calls {
		t.Fatalf("%d calls ended, want %d", total, goroutines*calls)
	}
	t.Logf("alone %d, led %d (batches %d), served %d, left %d", alone.Load(), led.Load(), batches.Load(), served.Load(), left.Load())
}

// An idle queue costs a caller alone two atomics and nothing allocated.
func TestAloneAllocatesNothing(t *testing.T) {
	var q Queue[*call]
	if n := testing.AllocsPerRun(1000, func() {
		if q.TryAcquire() {
			q.Release()
		}
	}); n != 0 {
		t.Fatalf("%v allocations per call alone", n)
	}
}
