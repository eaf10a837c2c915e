package hostcache_test

import (
	"testing"

	"github.com/mooncake-go/mooncake-go/hostcache/hostcachetest"
)

// TestEndToEndFake runs the end-to-end suite on the in-memory fake store.
func TestEndToEndFake(t *testing.T) {
	store := hostcachetest.NewFakeStore()
	hostcachetest.RunEndToEnd(t, store)
	if n := store.Registered(); n != 0 {
		t.Fatalf("%d regions still registered after every backend closed", n)
	}
}
