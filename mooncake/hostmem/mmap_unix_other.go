//go:build unix && !linux

package hostmem

// Other Unix systems have no MAP_POPULATE, MAP_HUGETLB or transparent huge
// pages: memory is mapped with normal pages and faulted in on first touch.
const (
	mapPopulate  = 0
	mapHugeTLB   = 0
	madvHugePage = 0
)

func populate([]byte) {}

// mapped cannot ask other systems cheaply: every range counts as mapped.
func mapped(uintptr, uint64) (bool, error) { return true, nil }
