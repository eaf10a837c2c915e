//go:build linux

package hostcache

import (
	"golang.org/x/sys/unix"

	"github.com/mooncake-go/mooncake-go/internal/hostmem"
)

const (
	mapHugeTLB   = unix.MAP_HUGETLB
	mapPopulate  = unix.MAP_POPULATE
	madvHugePage = hostmem.MadvHugePage
)

var populate = hostmem.Populate
