package hostcache

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// Region is a block of host memory that a pool uses as one tensor.
//
// Addr is the address of the first byte, Size the usable length. Mem, when
// non-nil, is the same memory as a byte slice (len(Mem) == Size and
// &Mem[0] == Addr); it lets tests and services read and write pool bytes
// without unsafe code. Host, when non-nil, is the hostmem.Memory the region
// lies in: the backend records its registrations there, so the memory
// cannot be freed while a store may still transfer into it. Layout-only
// regions (addresses without memory, used to check the address arithmetic)
// have Mem == nil and must never be handed to a store.
//
// The memory must not be Go heap memory: it is registered with Mooncake and
// accessed by the transfer engine (RDMA or memcpy) while Go holds no pointer
// into it that the garbage collector would honour. mmap'ed, huge-page or
// C-allocated memory qualifies.
type Region struct {
	Addr uintptr
	Size uint64
	Mem  []byte
	Host *hostmem.Memory
}

// Bytes returns the region as a byte slice (nil for layout-only regions).
func (r Region) Bytes() []byte { return r.Mem }

// RegionOf wraps memory the caller owns (mmap'ed, huge-page, C-allocated;
// never the Go heap) as a Region.
func RegionOf(mem []byte) Region {
	if len(mem) == 0 {
		return Region{}
	}
	return Region{Addr: uintptr(unsafe.Pointer(&mem[0])), Size: uint64(len(mem)), Mem: mem}
}

// RegionOfMemory returns all of m as a Region.
func RegionOfMemory(m *hostmem.Memory) Region {
	r := RegionOf(m.Bytes())
	if r.Size > 0 {
		r.Host = m
	}
	return r
}

// Allocator provides the host memory behind pool tensors. Alloc must return
// page-aligned memory (at least 64-byte aligned) of exactly size usable bytes
// that is not Go heap memory and stays at the same address until Free.
type Allocator interface {
	Alloc(size uint64) (Region, error)
	Free(r Region) error
}

// MmapAllocator allocates host memory with hostmem.Alloc: anonymous private
// mappings, page-aligned, zero-filled and outside the Go heap, so safe to
// register with Mooncake. The zero value maps normal pages without locking;
// it is what pools use when their config leaves Allocator nil.
type MmapAllocator struct {
	Options hostmem.Options
}

// ErrAlloc is returned (wrapped) when host memory cannot be allocated or
// freed; the hostmem cause (hostmem.ErrAlloc, hostmem.ErrRegistered, ...)
// is wrapped too.
var ErrAlloc = errors.New("hostcache: host memory allocation failed")

// Alloc maps size bytes (a Region of size 0 for size 0).
func (a *MmapAllocator) Alloc(size uint64) (Region, error) {
	if size == 0 {
		return Region{}, nil
	}
	m, err := hostmem.Alloc(size, a.Options)
	if err != nil {
		return Region{}, fmt.Errorf("%w: %w", ErrAlloc, err)
	}
	return RegionOfMemory(m), nil
}

// Free unmaps a region returned by Alloc. Freeing the zero Region is a
// no-op; freeing memory that is still registered fails (hostmem.ErrRegistered)
// and leaves it mapped.
func (a *MmapAllocator) Free(r Region) error {
	if r.Size == 0 && r.Mem == nil {
		return nil
	}
	if r.Host == nil {
		return fmt.Errorf("%w: region %#x was not allocated by MmapAllocator", ErrAlloc, r.Addr)
	}
	if err := r.Host.Free(); err != nil {
		return fmt.Errorf("%w: free %#x: %w", ErrAlloc, r.Addr, err)
	}
	return nil
}

// defaultAllocator serves pools whose config leaves Allocator nil.
var defaultAllocator Allocator = &MmapAllocator{}
