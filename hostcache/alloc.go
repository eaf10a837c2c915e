package hostcache

import (
	"errors"
	"fmt"
	"unsafe"
)

// Region is a block of host memory that a pool uses as one tensor.
//
// Addr is the address of the first byte, Size the usable length. Mem, when
// non-nil, is the same memory as a byte slice (len(Mem) == Size and
// &Mem[0] == Addr); it lets tests and services read and write pool bytes
// without unsafe code. Layout-only regions (addresses without memory, used to
// check the address arithmetic) have Mem == nil and must never be handed to a
// store.
//
// The memory must not be Go heap memory: it is registered with Mooncake and
// accessed by the transfer engine (RDMA or memcpy) while Go holds no pointer
// into it that the garbage collector would honour. mmap'ed, huge-page or
// C-allocated memory qualifies.
type Region struct {
	Addr uintptr
	Size uint64
	Mem  []byte
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

// Allocator provides the host memory behind pool tensors. Alloc must return
// page-aligned memory (at least 64-byte aligned) of exactly size usable bytes
// that is not Go heap memory and stays at the same address until Free.
type Allocator interface {
	Alloc(size uint64) (Region, error)
	Free(r Region) error
}

// MmapAllocator allocates anonymous private mappings (golang.org/x/sys/unix):
// page-aligned, zero-filled and outside the Go heap, so safe to register with
// Mooncake. The zero value uses normal 4 KiB pages without locking.
type MmapAllocator struct {
	// HugePages maps with MAP_HUGETLB; the length is rounded up to
	// HugePageSize. Needs reserved huge pages (vm.nr_hugepages).
	HugePages bool
	// HugePageSize is the huge page size for rounding (default 2 MiB).
	HugePageSize uint64
	// Lock mlock()s the mapping (needs RLIMIT_MEMLOCK / CAP_IPC_LOCK).
	Lock bool
	// Populate pre-faults the mapping (MAP_POPULATE).
	Populate bool
	// TransparentHugePages advises the kernel to back the mapping with
	// transparent huge pages (MADV_HUGEPAGE; Linux, THP "madvise" or
	// "always"; no reserved pages needed). Ignored with HugePages.
	TransparentHugePages bool
}

// DefaultAllocator is the allocator pools use when their config leaves
// Allocator nil.
var DefaultAllocator Allocator = &MmapAllocator{}

// ErrAlloc is returned (wrapped) when host memory cannot be allocated or freed.
var ErrAlloc = errors.New("hostcache: host memory allocation failed")

func (a *MmapAllocator) roundTo() uint64 {
	if a.HugePages {
		if a.HugePageSize != 0 {
			return a.HugePageSize
		}
		return 2 << 20
	}
	return uint64(osPageSize())
}

// Alloc maps size bytes (rounded up to the page size internally; the Region
// reports size).
func (a *MmapAllocator) Alloc(size uint64) (Region, error) {
	if size == 0 {
		return Region{}, nil
	}
	round := a.roundTo()
	length := size
	if rem := size % round; rem != 0 {
		if length+(round-rem) < length {
			return Region{}, fmt.Errorf("%w: size %d overflows", ErrAlloc, size)
		}
		length += round - rem
	}
	if length > uint64(maxInt) {
		return Region{}, fmt.Errorf("%w: size %d too large", ErrAlloc, size)
	}
	mem, err := mmapAnon(int(length), a.HugePages, a.TransparentHugePages, a.Populate)
	if err != nil {
		return Region{}, fmt.Errorf("%w: mmap %d bytes (huge pages %v): %v", ErrAlloc, length, a.HugePages, err)
	}
	if a.Lock {
		if err := mlock(mem); err != nil {
			_ = munmap(mem)
			return Region{}, fmt.Errorf("%w: mlock %d bytes: %v", ErrAlloc, length, err)
		}
	}
	mem = mem[:size:length]
	return Region{Addr: uintptr(unsafe.Pointer(&mem[0])), Size: size, Mem: mem}, nil
}

// Free unmaps a region returned by Alloc. Freeing the zero Region is a no-op.
func (a *MmapAllocator) Free(r Region) error {
	if r.Size == 0 && r.Mem == nil {
		return nil
	}
	if r.Mem == nil {
		return fmt.Errorf("%w: region %#x has no mapping", ErrAlloc, r.Addr)
	}
	if err := munmap(r.Mem); err != nil {
		return fmt.Errorf("%w: munmap %#x: %v", ErrAlloc, r.Addr, err)
	}
	return nil
}

const maxInt = int(^uint(0) >> 1)
