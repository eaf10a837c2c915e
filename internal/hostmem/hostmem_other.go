//go:build !linux

package hostmem

// No MAP_POPULATE, MAP_HUGETLB or transparent huge pages outside Linux:
// memory is mapped with normal pages and faulted in on first touch.
const (
	MapPopulate  = 0
	MapHugeTLB   = 0
	MadvHugePage = 0
)

// Populate does nothing outside Linux.
func Populate([]byte) {}
