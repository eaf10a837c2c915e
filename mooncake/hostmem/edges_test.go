package hostmem_test

import (
	"errors"
	"math"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// TestShapeEdges: a negative key count is refused (it used to panic), and
// a sum of sizes past 64 bits saturates instead of wrapping to a small
// object size.
func TestShapeEdges(t *testing.T) {
	for _, n := range []int{-1, -1 << 40} {
		if err := (hostmem.Buffers{Offsets: []uint64{}}).Validate(n); !errors.Is(err, hostmem.ErrShape) {
			t.Errorf("Validate(%d): %v, want ErrShape", n, err)
		}
	}
	b := hostmem.Buffers{Addrs: []uintptr{1, 2, 3}, Sizes: []uint64{1 << 63, 1 << 63, 1}, Offsets: []uint64{0, 3}}
	if got := b.ObjectSize(0); got != math.MaxUint64 {
		t.Errorf("ObjectSize of 2^64+1 bytes: %d, want MaxUint64", got)
	}
	b.Sizes = []uint64{1 << 62, 1 << 62, 1}
	if got := b.ObjectSize(0); got != 1<<63+1 {
		t.Errorf("ObjectSize: %d", got)
	}
}
