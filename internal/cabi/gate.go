package cabi

import (
	"runtime"
	"sync"
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
}

// Enter admits one call. It returns false (and the caller reports its
// closed error without calling C) once the gate is closed.
func (g *Gate) Enter() bool {
	g.mu.RLock()
	if g.closed {
		g.mu.RUnlock()
		return false
	}
	return true
}

// Leave ends a call admitted by Enter. With the native backend it also
// yields the goroutine: a goroutine that loops over blocking native calls
// never reaches a scheduling point, so the runtime's sysmon thread takes its
// P in the middle of a call and then wakes often, taking CPU from the
// upstream threads the call waits for (docs/benchmarks.md measures it).
func (g *Gate) Leave() {
	g.mu.RUnlock()
	if YieldAfterCalls && !g.NoYield {
		runtime.Gosched()
	}
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
