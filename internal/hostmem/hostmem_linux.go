package hostmem

import "golang.org/x/sys/unix"

// Linux mmap flags and advice; 0 on other systems, where they are ignored.
const (
	MapPopulate  = unix.MAP_POPULATE
	MapHugeTLB   = unix.MAP_HUGETLB
	MadvHugePage = unix.MADV_HUGEPAGE
)

// Populate faults in every page of b for writing: MADV_POPULATE_WRITE
// (Linux 5.14), else a write to each page. Used after MADV_HUGEPAGE, which
// MAP_POPULATE would precede.
func Populate(b []byte) {
	if unix.Madvise(b, unix.MADV_POPULATE_WRITE) == nil {
		return
	}
	ps := unix.Getpagesize()
	for i := 0; i < len(b); i += ps {
		b[i] = 0
	}
}
