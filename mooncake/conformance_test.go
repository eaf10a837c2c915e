//go:build cgo

package mooncake_test

import (
	"testing"

	_ "github.com/ianlancetaylor/cgosymbolizer" // symbolized C++ frames if the engine crashes

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

func TestConformance(t *testing.T) {
	t.Logf("engine %s %s", mooncake.Backend().Name, mooncake.Backend().UpstreamCommit)
	mooncaketest.RunConformance(t, mooncaketest.NewCluster)
}

// TestConformanceCombiningOff runs the suite with combining off (the
// default, above, has it on) and batch writes one at a time (a budget of
// one key, Config.BatchWriteKeys, lets every batch write in alone): every
// answer must be the same.
func TestConformanceCombiningOff(t *testing.T) {
	mooncaketest.RunConformance(t, func(tb testing.TB) *mooncaketest.Cluster {
		return mooncaketest.NewCluster(tb).With(func(c *mooncake.Config) {
			c.Combining = mooncake.CombiningOff
			c.BatchWriteKeys = 1
		})
	})
}
