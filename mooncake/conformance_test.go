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
