package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// maxCallers bounds a case's callers: each caller's key prefix ends in two
// hex digits of its number.
const maxCallers = 256

// callerGroup runs the measured requests of a case's callers together:
// every caller prepares its own buffers, keys and dataset; then all of them
// warm up together, so the warm-up reaches the case's concurrency (upstream's
// client opens a master connection per concurrent RPC, and under load the
// master accepts new ones slowly: docs/combining.md); then all of them start
// at once and stop at the same deadline, and none goes on to its cleanup
// before the last has stopped (as bench_python.py's CallerGroup). The
// window from start to the last
// caller's stop is what throughput and CPU time are measured over, since
// with several callers the sum of latencies is not time spent.
type callerGroup struct {
	warm        sync.WaitGroup // callers that reached the warm-up
	ready, done sync.WaitGroup // callers that reached the start, that stopped
	start       chan struct{}  // closed when the measured window opens
	abort       chan struct{}  // closed when a caller failed before the start
	once        sync.Once
	t0          time.Time

	// values are what the callers share (made by the first that asks).
	mu     sync.Mutex
	values map[string]any
}

// shared returns the value named name, made with mk by the first caller
// that asks for it.
func (g *callerGroup) shared(name string, mk func() any) any {
	g.mu.Lock()
	defer g.mu.Unlock()
	if v, ok := g.values[name]; ok {
		return v
	}
	if g.values == nil {
		g.values = map[string]any{}
	}
	v := mk()
	g.values[name] = v
	return v
}

func newCallerGroup(n int) *callerGroup {
	g := &callerGroup{start: make(chan struct{}), abort: make(chan struct{})}
	g.warm.Add(n)
	g.ready.Add(n)
	g.done.Add(n)
	return g
}

// warmUp waits until every caller has prepared (or failed), so that their
// warm-ups start together.
func (g *callerGroup) warmUp() {
	g.warm.Done()
	g.warm.Wait()
}

var errAborted = errors.New("another caller failed")

// measure is one caller's measured phase: it waits for the start, runs s
// until limit has passed since the start, then waits until every caller
// has stopped. The last wait keeps what a caller does after its window
// (its cleanup's RemoveByRegex, a std::regex pass over every key that
// holds one of the master's two RPC threads) from landing among the
// other callers' last requests: without it, 64-caller 1,024-key cases had
// requests stalled 1-4 s behind those scans (docs/combining.md).
func (g *callerGroup) measure(limit time.Duration, s step) (*recorder, error) {
	g.ready.Done()
	rec, err := g.run(limit, s)
	g.done.Done()
	if err != nil {
		return nil, err // an aborted or failed caller holds nobody
	}
	g.done.Wait()
	return rec, nil
}

// run waits for the start, then runs s until limit has passed since it.
func (g *callerGroup) run(limit time.Duration, s step) (*recorder, error) {
	select {
	case <-g.start:
	case <-g.abort:
		return nil, errAborted
	}
	rec := newRecorder(1 << 12)
	for rec.requests == 0 || time.Since(g.t0) < limit {
		if err := s(rec); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

// runCallers runs case c with c.Callers concurrent callers, each a caseRun
// of its own (its own key prefix, buffers and share of -gen-bytes), and
// returns one result over all of them.
func (b *bench) runCallers(idx int, c Case) ([]Result, error) {
	n := c.NumCallers()
	if n > maxCallers || !c.Timed {
		return nil, fmt.Errorf("%s: %d callers (at most %d, and only for time-based cases)", c.Name, n, maxCallers)
	}
	g := newCallerGroup(n)
	runs := make([]*caseRun, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := range runs {
		o := *b.o
		o.genBytes = max(o.genBytes/int64(n), 1)
		cb := *b
		cb.o = &o
		cb.run = fmt.Sprintf("%s%02x", b.run[:len(b.run)-2], k)
		cr := &caseRun{bench: &cb, idx: idx, c: c, group: g}
		runs[k] = cr
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A caller that fails before it reaches the start still
			// counts as ready and done, so the others are not left
			// waiting; the start then aborts them.
			_, err := b.runOne(cr)
			if !cr.warmed {
				g.warm.Done()
			}
			if !cr.entered {
				if err == nil {
					err = fmt.Errorf("%s: a caller ended without a measured phase", c.Name)
				}
				g.once.Do(func() { close(g.abort) })
				g.ready.Done()
				g.done.Done()
			}
			errs[k] = err
		}()
	}
	g.ready.Wait()
	comb0 := runs[0].combCounters()
	cpu0, lo0 := procCPU(), loopbackBytes()
	g.t0 = time.Now()
	close(g.start)
	g.done.Wait()
	window, cpu, lo := time.Since(g.t0), procCPU()-cpu0, loopbackSince(lo0)
	comb := runs[0].combCounters().since(comb0)
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, errAborted) {
			return nil, err
		}
	}
	all := newRecorder(0)
	all.start = g.t0 // wall time counts from the common start
	for _, cr := range runs {
		all.merge(cr.rec)
	}
	all.window, all.cpu, all.comb, all.loopback = int64(window), int64(cpu), comb, lo
	return []Result{all.result(c)}, nil
}
