package mooncake

import "golang.org/x/sys/unix"

const (
	mapPopulate = unix.MAP_POPULATE
	mapHugeTLB  = unix.MAP_HUGETLB
)
