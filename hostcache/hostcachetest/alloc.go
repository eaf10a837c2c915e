package hostcachetest

import (
	"errors"
	"fmt"
	"sync"

	"github.com/mooncake-go/mooncake-go/hostcache"
)

// Allocator is a tracking test allocator over hostcache.MmapAllocator: it
// fills new memory with Fill, counts live regions, refuses double frees and
// can fail on demand. Call Leaks (or use NewAllocator(t)) to check that every
// region was freed.
type Allocator struct {
	// Fill is written to every byte of a new region (mmap gives zeros).
	Fill byte
	// FailAfter, when > 0, makes the FailAfter-th and later Alloc calls fail.
	FailAfter int

	inner hostcache.MmapAllocator
	mu    sync.Mutex
	live  map[uintptr]uint64
	count int
}

// ErrInjected is returned by Allocator.Alloc when FailAfter triggers.
var ErrInjected = errors.New("hostcachetest: injected allocation failure")

// TB is the subset of testing.TB the helpers need.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
	Logf(format string, args ...any)
}

// NewAllocator returns an Allocator whose leaks fail t at cleanup.
func NewAllocator(t TB) *Allocator {
	a := &Allocator{}
	t.Cleanup(func() {
		if n := a.Leaks(); n != 0 {
			t.Errorf("hostcachetest.Allocator: %d regions were never freed", n)
		}
	})
	return a
}

// Alloc implements hostcache.Allocator.
func (a *Allocator) Alloc(size uint64) (hostcache.Region, error) {
	a.mu.Lock()
	a.count++
	fail := a.FailAfter > 0 && a.count >= a.FailAfter
	a.mu.Unlock()
	if fail {
		return hostcache.Region{}, ErrInjected
	}
	r, err := a.inner.Alloc(size)
	if err != nil || r.Size == 0 {
		return r, err
	}
	if a.Fill != 0 {
		for i := range r.Mem {
			r.Mem[i] = a.Fill
		}
	}
	a.mu.Lock()
	if a.live == nil {
		a.live = map[uintptr]uint64{}
	}
	a.live[r.Addr] = r.Size
	a.mu.Unlock()
	return r, nil
}

// Free implements hostcache.Allocator.
func (a *Allocator) Free(r hostcache.Region) error {
	if r.Size == 0 {
		return nil
	}
	a.mu.Lock()
	size, ok := a.live[r.Addr]
	if ok {
		delete(a.live, r.Addr)
	}
	a.mu.Unlock()
	if !ok || size != r.Size {
		return fmt.Errorf("hostcachetest: free of unknown region %#x (+%d)", r.Addr, r.Size)
	}
	return a.inner.Free(r)
}

// Leaks returns the number of live regions.
func (a *Allocator) Leaks() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.live)
}

// VirtualAllocator hands out addresses without memory, for checking the
// address arithmetic (golden vectors, fuzzing huge geometries). Regions
// start at Base (default 0x1000) and follow each other aligned to 4 KiB.
// Pools built with it must never be registered with a store.
type VirtualAllocator struct {
	Base uintptr
	mu   sync.Mutex
	next uintptr
}

// Alloc implements hostcache.Allocator.
func (a *VirtualAllocator) Alloc(size uint64) (hostcache.Region, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.next == 0 {
		a.next = a.Base
		if a.next == 0 {
			a.next = 0x1000
		}
	}
	addr := a.next
	end := uint64(addr) + size
	if end < size || end > uint64(^uintptr(0))>>1 {
		return hostcache.Region{}, fmt.Errorf("hostcachetest: virtual address space exhausted (%d bytes)", size)
	}
	a.next = uintptr((end + 4095) &^ 4095)
	return hostcache.Region{Addr: addr, Size: size}, nil
}

// Free implements hostcache.Allocator (a no-op).
func (a *VirtualAllocator) Free(hostcache.Region) error { return nil }
