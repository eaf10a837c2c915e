//go:build linux

package hostcache

import "golang.org/x/sys/unix"

const (
	mapHugeTLB  = unix.MAP_HUGETLB
	mapPopulate = unix.MAP_POPULATE
)
