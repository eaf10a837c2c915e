//go:build cgo

package mooncake

import (
	"testing"

	"github.com/mooncake-go/mooncake-go/internal/cabi/cstore"
)

// MaxKeyLen is the C header's limit, not a copy that could drift.
func TestMaxKeyLenIsTheHeaders(t *testing.T) {
	if MaxKeyLen != cstore.MaxKeyLen {
		t.Fatalf("mooncake.MaxKeyLen %d, MCGO_MAX_KEY_LEN %d", MaxKeyLen, cstore.MaxKeyLen)
	}
}
