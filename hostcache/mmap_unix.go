//go:build unix

package hostcache

import "golang.org/x/sys/unix"

func osPageSize() int { return unix.Getpagesize() }

func mmapAnon(length int, huge, thp, pop bool) ([]byte, error) {
	flags := unix.MAP_ANON | unix.MAP_PRIVATE
	if huge {
		flags |= mapHugeTLB
	}
	// Transparent huge pages: advise first, then populate, or the pages
	// are faulted in small.
	thp = thp && !huge && madvHugePage != 0
	if pop && !thp {
		flags |= mapPopulate
	}
	b, err := unix.Mmap(-1, 0, length, unix.PROT_READ|unix.PROT_WRITE, flags)
	if err != nil || !thp {
		return b, err
	}
	_ = unix.Madvise(b, madvHugePage) // advice: refused without THP, harmless
	if pop {
		populate(b)
	}
	return b, nil
}

func munmap(b []byte) error { return unix.Munmap(b[:cap(b)]) }

func mlock(b []byte) error { return unix.Mlock(b) }
