package mooncake

import (
	"golang.org/x/sys/unix"

	"github.com/mooncake-go/mooncake-go/internal/hostmem"
)

const (
	mapPopulate  = unix.MAP_POPULATE
	mapHugeTLB   = unix.MAP_HUGETLB
	madvHugePage = hostmem.MadvHugePage
)

var populate = hostmem.Populate
