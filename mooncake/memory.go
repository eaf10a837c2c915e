//go:build unix

package mooncake

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/mooncake-go/mooncake-go/internal/hostmem"
)

// HostMemory is host memory that is safe to register with a Store for
// zero-copy transfers: an anonymous private mmap, page-aligned, outside the
// Go heap (the garbage collector never moves or frees it), optionally backed
// by huge pages and locked in RAM.
//
// Free unmaps it; the caller must first unregister it from every Store
// (or close the stores) and stop using Bytes.
type HostMemory struct {
	mu     sync.Mutex
	raw    []byte // the mapping as unix.Mmap returned it (needed by Munmap)
	b      []byte // raw[:size]
	huge   bool
	locked bool
}

// HostMemoryOptions selects how AllocHostMemory maps memory.
type HostMemoryOptions struct {
	// HugePages asks for MAP_HUGETLB (2 MiB pages, size rounded up). When the
	// system has no huge pages reserved, AllocHostMemory falls back to normal
	// pages unless RequireHugePages is set.
	HugePages        bool
	RequireHugePages bool
	// Lock pins the pages in RAM with mlock (needs RLIMIT_MEMLOCK or
	// CAP_IPC_LOCK). A failure is an error.
	Lock bool
	// Populate pre-faults every page (MAP_POPULATE), so the first transfer
	// does not pay for page faults.
	Populate bool
	// TransparentHugePages asks the kernel to back the mapping with
	// transparent huge pages (madvise MADV_HUGEPAGE). Unlike HugePages it
	// needs no reserved pages: it works wherever THP is "madvise" or
	// "always" (/sys/kernel/mm/transparent_hugepage/enabled), and is a
	// no-op elsewhere and outside Linux. One TLB entry then covers 2 MiB
	// instead of 4 KiB; on virtual machines this can double the bandwidth
	// of large copies (docs/benchmarks.md). Ignored when the mapping got
	// hugetlb pages.
	TransparentHugePages bool
}

const hugePageSize = 2 << 20

// AllocHostMemory maps size bytes of zeroed host memory.
func AllocHostMemory(size int, opts HostMemoryOptions) (*HostMemory, error) {
	if size <= 0 {
		return nil, fmt.Errorf("mooncake: host memory: size %d must be positive", size)
	}
	flags := unix.MAP_PRIVATE | unix.MAP_ANONYMOUS
	// With THP the mapping is populated after the advice, or the pages
	// would be faulted in small.
	thp := opts.TransparentHugePages && hostmem.MadvHugePage != 0
	if opts.Populate && !thp {
		flags |= hostmem.MapPopulate
	}
	m := &HostMemory{}
	var err error
	if (opts.HugePages || opts.RequireHugePages) && hostmem.MapHugeTLB != 0 {
		n := (size + hugePageSize - 1) / hugePageSize * hugePageSize
		m.raw, err = unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, flags|hostmem.MapHugeTLB)
		if err == nil {
			m.huge = true
			m.b = m.raw[:size:size]
		} else if opts.RequireHugePages {
			return nil, fmt.Errorf("mooncake: host memory: %d bytes of huge pages: %w", n, err)
		}
	}
	if m.raw == nil {
		m.raw, err = unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, flags)
		if err != nil {
			return nil, fmt.Errorf("mooncake: host memory: mmap %d bytes: %w", size, err)
		}
		m.b = m.raw
		if thp {
			// Advice only: a kernel without THP refuses it, and the
			// memory is still good.
			_ = unix.Madvise(m.raw, hostmem.MadvHugePage)
			if opts.Populate {
				hostmem.Populate(m.raw)
			}
		}
	}
	if opts.RequireHugePages && !m.huge {
		_ = m.unmap()
		return nil, fmt.Errorf("mooncake: host memory: huge pages are not supported on this system")
	}
	if opts.Lock {
		if err := unix.Mlock(m.b); err != nil {
			_ = m.unmap()
			return nil, fmt.Errorf("mooncake: host memory: mlock %d bytes: %w (raise RLIMIT_MEMLOCK)", size, err)
		}
		m.locked = true
	}
	return m, nil
}

// Bytes returns the memory as a byte slice (nil after Free).
func (m *HostMemory) Bytes() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.b
}

// Addr returns the address of the first byte (0 after Free).
func (m *HostMemory) Addr() uintptr {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(m.b)))
}

// Size returns the usable size in bytes (0 after Free).
func (m *HostMemory) Size() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return uint64(len(m.b))
}

// HugePages reports whether the mapping is backed by huge pages.
func (m *HostMemory) HugePages() bool { return m.huge }

// Locked reports whether the mapping is locked in RAM.
func (m *HostMemory) Locked() bool { return m.locked }

// Free unmaps the memory. It is idempotent.
func (m *HostMemory) Free() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.unmap()
}

func (m *HostMemory) unmap() error {
	if m.raw == nil {
		return nil
	}
	raw := m.raw
	m.raw, m.b = nil, nil
	if err := unix.Munmap(raw); err != nil {
		return fmt.Errorf("mooncake: host memory: munmap: %w", err)
	}
	return nil
}

// RegisterMemory registers all of m with the store.
func (s *Store) RegisterMemory(m *HostMemory) error {
	if m == nil || m.Size() == 0 {
		return &Error{Op: OpRegisterBuffer, Code: ErrInvalidParams, Err: errors.New("nil or freed host memory")}
	}
	return s.RegisterBuffer(m.Addr(), m.Size())
}
