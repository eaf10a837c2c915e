//go:build unix

package hostmem

import (
	"fmt"

	"golang.org/x/sys/unix"
)

func (m *Memory) mmap(size uint64, opts Options) error {
	flags := unix.MAP_PRIVATE | unix.MAP_ANONYMOUS
	// With THP the mapping is populated after the advice, or its pages
	// would be faulted in small.
	thp := opts.TransparentHugePages && madvHugePage != 0
	if opts.Populate && !thp {
		flags |= mapPopulate
	}
	prot := unix.PROT_READ | unix.PROT_WRITE
	var err error
	if (opts.HugePages || opts.RequireHugePages) && mapHugeTLB != 0 {
		hp := opts.HugePageSize
		if hp == 0 {
			hp = DefaultHugePageSize
		}
		n := (size + hp - 1) / hp * hp
		m.raw, err = unix.Mmap(-1, 0, int(n), prot, flags|mapHugeTLB)
		if err == nil {
			m.huge = true
		} else if opts.RequireHugePages {
			return fmt.Errorf("%w: %d bytes of huge pages: %v", ErrAlloc, n, err)
		}
	}
	if opts.RequireHugePages && !m.huge {
		return fmt.Errorf("%w: huge pages are not supported on this system", ErrAlloc)
	}
	if m.raw == nil {
		m.raw, err = unix.Mmap(-1, 0, int(size), prot, flags)
		if err != nil {
			return fmt.Errorf("%w: mmap %d bytes: %v", ErrAlloc, size, err)
		}
		if thp {
			// Advice only: a kernel without THP refuses it, and the memory
			// is still good.
			_ = unix.Madvise(m.raw, madvHugePage)
			if opts.Populate {
				populate(m.raw)
			}
		}
	}
	m.b = m.raw[:size:size]
	if opts.Lock {
		if err := unix.Mlock(m.b); err != nil {
			_ = m.unmapLocked()
			return fmt.Errorf("%w: mlock %d bytes: %v (raise RLIMIT_MEMLOCK)", ErrAlloc, size, err)
		}
		m.locked = true
	}
	return nil
}

func (m *Memory) unmapLocked() error {
	if m.raw == nil {
		return nil
	}
	raw := m.raw
	m.raw, m.b, m.huge, m.locked = nil, nil, false, false
	if err := unix.Munmap(raw); err != nil {
		return fmt.Errorf("%w: munmap: %v", ErrAlloc, err)
	}
	return nil
}

// PageSize returns the system's page size.
func PageSize() int { return unix.Getpagesize() }
