package mooncakeprom

import (
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake"
)

// TestBatchKeys: the combined batch sizes become a cumulative histogram
// whose bounds are the buckets' largest sizes and whose sum is the number
// of combined calls.
func TestBatchKeys(t *testing.T) {
	// 3 batches of 2 keys, 1 of 3-4 (say 4), 2 of 65-128 (say 100 and 128).
	o := mooncake.OpStats{Combined: 3*2 + 4 + 100 + 128, CombinedBatches: 6,
		CombinedBatchSizes: []uint64{3, 1, 0, 0, 0, 0, 2}}
	count, sum, b := batchKeys(o)
	if count != 6 || sum != 238 {
		t.Errorf("count %d sum %v, want 6 and 238", count, sum)
	}
	want := map[float64]uint64{2: 3, 4: 4, 8: 4, 16: 4, 32: 4, 64: 4, 128: 6}
	for bound, n := range want {
		if b[bound] != n {
			t.Errorf("bucket ≤%v: %d, want %d", bound, b[bound], n)
		}
	}
	if len(b) != len(want) {
		t.Errorf("buckets %v, want %v", b, want)
	}
}
