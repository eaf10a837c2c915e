//go:build cgo

package transfer_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/internal/fill"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer/transfertest"
)

func combiningOn(c *transfer.Config) { c.Combining = transfer.CombiningOn }

// TestConformanceCombining: the conformance suite, unchanged, on engines
// that combine their synchronous transfers.
func TestConformanceCombining(t *testing.T) {
	transfertest.RunConformance(t, func(t testing.TB) *transfertest.Env {
		env := transfertest.NewEnv(t)
		env.Mods = append(env.Mods, combiningOn)
		return env
	})
}

// combPair is an engine that combines, a peer, registered memory on each,
// and the peer's segment.
type combPair struct {
	a, b   *transfer.Engine
	ma, mb *hostmem.Memory
	seg    *transfer.Segment
}

func newCombPair(t *testing.T, size int) *combPair {
	t.Helper()
	env := transfertest.NewEnv(t)
	p := &combPair{a: env.Open(t, combiningOn), b: env.Open(t)}
	p.ma, p.mb = transfertest.Memory(t, p.a, size), transfertest.Memory(t, p.b, size)
	var err error
	if p.seg, err = p.a.OpenSegment(p.b.SegmentName()); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *combPair) req(dir transfer.Direction, local, remote int, n uint64) transfer.Request {
	return transfer.Request{Dir: dir, Segment: p.seg.Handle(), Local: p.ma.Addr() + uintptr(local),
		Remote: uint64(p.mb.Addr()) + uint64(remote), Length: n}
}

// waitQueued waits until n calls are queued.
func waitQueued(t *testing.T, queued func() int, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); queued() != n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls queued, want %d", queued(), n)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

type combResult struct {
	sum transfer.Summary
	err error
}

// TestCombiningOwnResults: calls queued behind a batch and carried in one
// get the summary and error of their own requests: a failing request
// fails only its call, a call whose context ends while it is queued leaves
// with the context's error and moves nothing, and a call of several
// requests gets their sum.
func TestCombiningOwnResults(t *testing.T) {
	const mem = 1 << 20
	p := newCombPair(t, mem)
	fill.Fill(p.ma.Bytes()[:mem/2], 1)
	fill.Fill(p.mb.Bytes()[mem/2:], 2)
	cancelled, cancel := context.WithCancel(context.Background())
	calls := []struct {
		name string
		ctx  context.Context
		reqs []transfer.Request
	}{
		{"write", context.Background(), []transfer.Request{p.req(transfer.Write, 0, 0, 4096)}},
		{"outside", context.Background(), []transfer.Request{p.req(transfer.Write, 0, mem-100, 200)}},
		{"read", context.Background(), []transfer.Request{p.req(transfer.Read, mem/2, mem/2, 8192)}},
		{"cancelled", cancelled, []transfer.Request{p.req(transfer.Write, 8192, 8192, 4096)}},
		{"two", context.Background(), []transfer.Request{p.req(transfer.Write, 16384, 16384, 4096), p.req(transfer.Write, 20480, 20480, 100)}},
	}
	queued, release := transfer.HoldCombining(p.a)
	res := make([]combResult, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i].sum, res[i].err = p.a.Transfer(c.ctx, c.reqs)
		}()
		waitQueued(t, queued, i+1)
	}
	cancel()
	waitQueued(t, queued, len(calls)-1) // the cancelled call left the queue
	release()
	wg.Wait()

	done := func(tasks, bytes uint64) transfer.Summary {
		return transfer.Summary{State: transfer.Completed, Tasks: tasks, Bytes: bytes}
	}
	for i, want := range []transfer.Summary{done(1, 4096), {State: transfer.Failed, Tasks: 1}, done(1, 8192), {}, done(2, 4196)} {
		if res[i].sum != want {
			t.Errorf("%s: summary %+v, want %+v", calls[i].name, res[i].sum, want)
		}
	}
	for i, r := range res {
		switch calls[i].name {
		case "outside":
			if !errors.Is(r.err, transfer.ErrTaskFailed) {
				t.Errorf("outside: %v, want ErrTaskFailed", r.err)
			}
		case "cancelled":
			if !errors.Is(r.err, context.Canceled) {
				t.Errorf("cancelled: %v, want context.Canceled", r.err)
			}
		default:
			if r.err != nil {
				t.Errorf("%s: %v", calls[i].name, r.err)
			}
		}
	}
	if !bytes.Equal(p.mb.Bytes()[:4096], p.ma.Bytes()[:4096]) || !bytes.Equal(p.ma.Bytes()[mem/2:mem/2+8192], p.mb.Bytes()[mem/2:mem/2+8192]) ||
		!bytes.Equal(p.mb.Bytes()[16384:20580], p.ma.Bytes()[16384:20580]) {
		t.Error("the combined calls did not move their bytes")
	}
	if !bytes.Equal(p.mb.Bytes()[8192:12288], make([]byte, 4096)) {
		t.Error("the cancelled call wrote")
	}
	if s := p.a.CombiningStats(); s != (transfer.CombiningStats{Combined: 4, Batches: 1}) {
		t.Errorf("stats %+v, want 4 calls in 1 batch", s)
	}
}

// TestCombiningRefusedBatch: a request only the engine can refuse (local
// memory not registered) makes the combined submission fail as a whole;
// each call then transfers alone and gets its own call's result.
func TestCombiningRefusedBatch(t *testing.T) {
	p := newCombPair(t, 1<<20)
	fill.Fill(p.ma.Bytes()[:4096], 3)
	unreg, err := hostmem.Alloc(1<<16, hostmem.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unreg.Free() })
	bad := transfer.Request{Dir: transfer.Write, Segment: p.seg.Handle(), Local: unreg.Addr(), Remote: uint64(p.mb.Addr()) + 8192, Length: 4096}
	queued, release := transfer.HoldCombining(p.a)
	res := make([]combResult, 2)
	var wg sync.WaitGroup
	for i, reqs := range [][]transfer.Request{{p.req(transfer.Write, 0, 0, 4096)}, {bad}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i].sum, res[i].err = p.a.Transfer(context.Background(), reqs)
		}()
		waitQueued(t, queued, i+1)
	}
	release()
	wg.Wait()
	if res[0].err != nil || !bytes.Equal(p.mb.Bytes()[:4096], p.ma.Bytes()[:4096]) {
		t.Errorf("the good call: %v", res[0].err)
	}
	if !errors.Is(res[1].err, transfer.ErrAddressNotRegistered) {
		t.Errorf("the call from unregistered memory: %v, want ErrAddressNotRegistered", res[1].err)
	}
	if s := p.a.CombiningStats(); s.Batches != 0 {
		t.Errorf("stats %+v: the refused batch counted", s)
	}
}

// TestCombiningAloneAllocatesNothing: a call that finds the queue idle
// makes its own transfer with no allocation, as without combining.
func TestCombiningAloneAllocatesNothing(t *testing.T) {
	p := newCombPair(t, 1<<16)
	ctx := context.Background()
	var bad int
	allocs := testing.AllocsPerRun(100, func() {
		if p.a.Write(ctx, p.seg, p.ma.Addr(), uint64(p.mb.Addr()), 4096) != nil {
			bad++
		}
	})
	if bad != 0 || allocs != 0 {
		t.Errorf("%d failed, %v allocations per call", bad, allocs)
	}
	if s := p.a.CombiningStats(); s.Combined != 0 {
		t.Errorf("stats %+v: a lone call combined", s)
	}
}

// TestCombiningStress: 64 goroutines write and read back regions of their
// own through one combining engine, in calls of one to three requests,
// some failing (outside the peer's memory) and some cancelled; every byte
// read is checked, and every error is the call's own.
func TestCombiningStress(t *testing.T) {
	const workers, region = 64, 16 << 10
	rounds := 60
	if testing.Short() {
		rounds = 15
	}
	p := newCombPair(t, 2*workers*region)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 64))
			src, dst := 2*w*region, (2*w+1)*region
			for r := 0; r < rounds; r++ {
				n := 1 + rng.IntN(3)
				size := region / 4
				fill.Fill(p.ma.Bytes()[src:src+n*size], uint64(w<<16|r))
				reqs := make([]transfer.Request, 0, n+1)
				for i := 0; i < n; i++ {
					reqs = append(reqs, p.req(transfer.Write, src+i*size, w*region+i*size, uint64(size)))
				}
				failing := rng.IntN(10) == 0
				if failing {
					reqs = append(reqs, p.req(transfer.Write, src, 2*workers*region-10, 100))
				}
				_, err := p.a.Transfer(context.Background(), reqs)
				switch {
				case failing && !errors.Is(err, transfer.ErrTaskFailed):
					t.Errorf("worker %d: a call with a request outside the peer: %v", w, err)
					return
				case !failing && err != nil:
					t.Errorf("worker %d: write: %v", w, err)
					return
				}
				ctx, cancel := context.WithCancel(context.Background())
				if rng.IntN(10) == 0 {
					cancel() // a cancelled read either left the queue or read
				}
				err = p.a.Read(ctx, p.seg, p.ma.Addr()+uintptr(dst), uint64(p.mb.Addr())+uint64(w*region), uint64(n*size))
				cancel()
				if errors.Is(err, context.Canceled) {
					continue
				}
				if err != nil {
					t.Errorf("worker %d: read: %v", w, err)
					return
				}
				if !bytes.Equal(p.ma.Bytes()[dst:dst+n*size], p.ma.Bytes()[src:src+n*size]) {
					t.Errorf("worker %d round %d: read back other bytes", w, r)
					return
				}
			}
		}()
	}
	// Now and then hold the queue, so that batches form even when the
	// scheduler runs the workers one at a time.
	stop := make(chan struct{})
	var holder sync.WaitGroup
	holder.Add(1)
	go func() {
		defer holder.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			queued, release := transfer.HoldCombining(p.a)
			for deadline := time.Now().Add(2 * time.Millisecond); queued() < 2 && time.Now().Before(deadline); {
				runtime.Gosched()
			}
			release()
		}
	}()
	wg.Wait()
	close(stop)
	holder.Wait()
	s := p.a.CombiningStats()
	t.Logf("combined %d calls in %d batches", s.Combined, s.Batches)
	if s.Combined == 0 {
		t.Error("no call was combined: the test did not test combining")
	}
}

func TestCombiningConfig(t *testing.T) {
	env := transfertest.NewEnv(t)
	_, err := transfer.Open(transfer.Config{MetadataServer: env.Metadata, LocalServerName: env.Name(), Combining: 7})
	if !errors.Is(err, transfer.ErrInvalidArgument) {
		t.Errorf("combining mode 7: %v, want ErrInvalidArgument", err)
	}
	e := env.Open(t)
	if s := e.CombiningStats(); s != (transfer.CombiningStats{}) {
		t.Errorf("off: stats %+v", s)
	}
}
