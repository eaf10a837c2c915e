//go:build cgo

package hostcache_test

import (
	"testing"

	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/hostcache/hostcachetest"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

// *mooncake.Store is the Store the backend is written against.
var _ hostcache.Store = (*mooncake.Store)(nil)

// TestEndToEndMooncake runs the end-to-end suite through the real binding:
// the embedded engine in `go test` / `make test`, or a live cluster in a
// native build (see mooncaketest.NewCluster).
func TestEndToEndMooncake(t *testing.T) {
	st := mooncaketest.Open(t)
	hostcachetest.RunEndToEnd(t, st)
}
