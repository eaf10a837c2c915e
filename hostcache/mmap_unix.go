//go:build unix

package hostcache

import (
	"golang.org/x/sys/unix"

	"github.com/mooncake-go/mooncake-go/internal/hostmem"
)

func osPageSize() int { return unix.Getpagesize() }

func mmapAnon(length int, huge, thp, pop bool) ([]byte, error) {
	flags := unix.MAP_ANON | unix.MAP_PRIVATE
	if huge {
		flags |= hostmem.MapHugeTLB
	}
	// Transparent huge pages: advise first, then populate, or the pages
	// are faulted in small.
	thp = thp && !huge && hostmem.MadvHugePage != 0
	if pop && !thp {
		flags |= hostmem.MapPopulate
	}
	b, err := unix.Mmap(-1, 0, length, unix.PROT_READ|unix.PROT_WRITE, flags)
	if err != nil || !thp {
		return b, err
	}
	_ = unix.Madvise(b, hostmem.MadvHugePage) // advice: refused without THP, harmless
	if pop {
		hostmem.Populate(b)
	}
	return b, nil
}

func munmap(b []byte) error { return unix.Munmap(b[:cap(b)]) }

func mlock(b []byte) error { return unix.Mlock(b) }
