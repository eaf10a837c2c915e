//go:build unix && !linux

package mooncake

// No MAP_POPULATE or MAP_HUGETLB outside Linux: memory is mapped with normal
// pages, faulted in on first touch.
const (
	mapPopulate  = 0
	mapHugeTLB   = 0
	madvHugePage = 0
)

func populate([]byte) {}
