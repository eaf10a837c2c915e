//go:build !cgo

package transfer_test

import (
	"errors"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
)

// Without cgo there is no engine: Open says so, with a sentinel.
func TestOpenWithoutCgo(t *testing.T) {
	e, err := transfer.Open(transfer.Config{MetadataServer: "P2PHANDSHAKE", LocalServerName: "127.0.0.1"})
	if e != nil || !errors.Is(err, transfer.ErrNoCgo) {
		t.Fatalf("Open: %v, %v; want ErrNoCgo", e, err)
	}
}
