package mooncake

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSegmentID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want SegmentID
		ok   bool
	}{
		{"1-2", SegmentID{1, 2}, true},
		{"18446744073709551615-0", SegmentID{^uint64(0), 0}, true},
		{"0012-7", SegmentID{12, 7}, true},
		{"", SegmentID{}, false},
		{"12", SegmentID{}, false},
		{"-2", SegmentID{}, false},
		{"1-", SegmentID{}, false},
		{"1-2-3", SegmentID{}, false},
		{"+1-2", SegmentID{}, false},
		{"1-+2", SegmentID{}, false},
		{"18446744073709551616-0", SegmentID{}, false},
		{"a-b", SegmentID{}, false},
		{" 1-2", SegmentID{}, false},
	} {
		got, err := ParseSegmentID(tc.in)
		if !tc.ok {
			assert.Errorf(t, err, "%q", tc.in)
			continue
		}
		require.NoErrorf(t, err, "%q", tc.in)
		assert.Equal(t, tc.want, got)
	}
}

// The text form round-trips, and whatever parses prints back as a number
// pair that parses to the same id.
func FuzzParseSegmentID(f *testing.F) {
	for _, s := range []string{"1-2", "0-0", "18446744073709551615-1", "x", "1--2", "007-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseSegmentID(s)
		if err != nil {
			return
		}
		again, err := ParseSegmentID(id.String())
		require.NoError(t, err)
		require.Equal(t, id, again)
	})
}
