package cabi

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Gate admits calls on one C handle and lets Close wait for them: calls
// hold it shared, Close exclusively, so a handle is never destroyed under a
// call and no call reaches C after Close. The zero value is an open gate.
type Gate struct {
	mu     sync.RWMutex
	closed bool
	// NoYield, set before the first call, turns off the yield of Leave:
	// for handles whose calls are short (the transfer engine's), a yield
	// is not free: with an idle P, Gosched wakes another thread (futex),
	// which finds nothing to run and sleeps again (docs/transfer-engine.md).
	NoYield bool
	// inflight counts the calls between Enter and Leave, so that Leave
	// yields only for a lone caller.
	inflight atomic.Int32
}

// Enter admits one call. It returns false (and the caller reports its
// closed error without calling C) once the gate is closed.
func (g *Gate) Enter() bool {
	g.mu.RLock()
	if g.closed {
		g.mu.RUnlock()
		return false
	}
	g.inflight.Add(1)
	return true
}

// Leave ends a call admitted by Enter. With the native backend, when no
// other call is in flight, it also yields the goroutine: a goroutine that
// loops over blocking native calls never reaches a scheduling point, so the
// runtime's sysmon thread takes its P in the middle of a call and then wakes
// often, taking CPU from the upstream threads the call waits for. With
// other calls in flight it does not: their goroutines already give the
// scheduler its points, and a yield would send this one to the global run
// queue to wait for a P again before its next call, which halved the
// throughput of 16 concurrent callers on 2 Ps
// (docs/notes/2026-12-01-found-on-the-way.md).
func (g *Gate) Leave() {
	if g.leave() && yields.Load() && !g.NoYield {
		yieldNow()
	}
}

// yieldNow is the yield of Leave (a function of its own for the benchmark,
// which runs without the native backend).
func yieldNow() { runtime.Gosched() }

// leave ends a call and reports whether it was the only one in flight.
func (g *Gate) leave() bool {
	n := g.inflight.Add(-1)
	g.mu.RUnlock()
	return n == 0
}

// Close waits for the calls in progress, runs destroy (which frees the C
// handle) and closes the gate. It returns false, without running destroy,
// when the gate was already closed.
func (g *Gate) Close(destroy func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.closed = true
	destroy()
	return true
}

// Closed reports whether Close has run.
func (g *Gate) Closed() bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.closed
}

// TryClose is Close for a destroy that can refuse: when destroy returns an
// error the gate stays open and the error is returned. It returns nil, and
// does nothing, when the gate was already closed.
func (g *Gate) TryClose(destroy func() error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	if err := destroy(); err != nil {
		return err
	}
	g.closed = true
	return nil
}
