package hostmem

import "golang.org/x/sys/unix"

// Linux mmap flags and advice; 0 on other systems, where they are not used.
const (
	mapPopulate  = unix.MAP_POPULATE
	mapHugeTLB   = unix.MAP_HUGETLB
	madvHugePage = unix.MADV_HUGEPAGE
)

// populate faults in every page of b for writing: MADV_POPULATE_WRITE
// (Linux 5.14), else a write to each page. Used after MADV_HUGEPAGE, which
// MAP_POPULATE would precede.
func populate(b []byte) {
	if unix.Madvise(b, unix.MADV_POPULATE_WRITE) == nil {
		return
	}
	ps := unix.Getpagesize()
	for i := 0; i < len(b); i += ps {
		b[i] = 0
	}
}

// mapped asks the kernel whether every page of [addr, addr+size) is mapped:
// msync answers ENOMEM for a range with a hole, looking at the process's
// mappings only (MS_ASYNC writes nothing back), whatever the range's size.
func mapped(addr uintptr, size uint64) (bool, error) {
	ps := uintptr(unix.Getpagesize())
	start := addr &^ (ps - 1)
	_, _, errno := unix.Syscall(unix.SYS_MSYNC, start, uintptr(size)+(addr-start), unix.MS_ASYNC)
	switch errno {
	case 0:
		return true, nil
	case unix.ENOMEM:
		return false, nil
	}
	return false, errno
}
