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

// TestConformanceCombining runs the suite with single-key calls combined
// (Config.Combining): every answer must be the same as without.
func TestConformanceCombining(t *testing.T) {
	mooncaketest.RunConformance(t, func(tb testing.TB) *mooncaketest.Cluster {
		return mooncaketest.NewCluster(tb).With(func(c *mooncake.Config) { c.Combining = mooncake.CombiningOn })
	})
}
