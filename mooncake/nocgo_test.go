//go:build !cgo

package mooncake_test

import (
	"errors"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake"
)

func TestOpenWithoutCgo(t *testing.T) {
	cfg := mooncake.DefaultConfig()
	cfg.MasterServerAddress = "127.0.0.1:50051"
	st, err := mooncake.Open(cfg)
	if st != nil || !errors.Is(err, mooncake.ErrNoCgo) {
		t.Fatalf("Open without cgo = %v, %v; want ErrNoCgo", st, err)
	}
}
