//go:build unix && !linux

package hostcache

// MAP_HUGETLB and MAP_POPULATE are Linux-only; elsewhere they are ignored.
const (
	mapHugeTLB   = 0
	mapPopulate  = 0
	madvHugePage = 0
)

func populate([]byte) {}
