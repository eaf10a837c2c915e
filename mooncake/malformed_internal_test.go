package mooncake

import (
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// TestBatchErrorsOnMalformedKeys: the error paths that name a batch's keys
// (a failed key, a whole-call refusal) never index a malformed packing, a
// panic issue 21 found in the exported form of keysError.
func TestBatchErrorsOnMalformedKeys(t *testing.T) {
	for name, k := range map[string]*hostmem.Keys{
		"offsets past the buffer": {Buf: []byte("ab"), Offsets: []uint64{0, 1, 9}},
		"decreasing offsets":      {Buf: []byte("abcd"), Offsets: []uint64{0, 3, 1}},
		"not starting at 0":       {Buf: []byte("abcd"), Offsets: []uint64{5, 6, 7}},
		"nil":                     nil,
	} {
		t.Run(name, func(t *testing.T) {
			if err := keysError(OpBatchGetInto, k, []int64{-704, -704}); err == nil {
				t.Error("keysError: nil for failed keys")
			}
			if err := refused(OpBatchGetInto, k, int32(ErrInvalidParams)); err == nil {
				t.Error("refused: nil")
			}
		})
	}
}
