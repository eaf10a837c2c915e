//go:build unix

package hostcache

import "golang.org/x/sys/unix"

func osPageSize() int { return unix.Getpagesize() }

func mmapAnon(length int, huge, populate bool) ([]byte, error) {
	flags := unix.MAP_ANON | unix.MAP_PRIVATE
	if huge {
		flags |= mapHugeTLB
	}
	if populate {
		flags |= mapPopulate
	}
	return unix.Mmap(-1, 0, length, unix.PROT_READ|unix.PROT_WRITE, flags)
}

func munmap(b []byte) error { return unix.Munmap(b[:cap(b)]) }

func mlock(b []byte) error { return unix.Mlock(b) }
