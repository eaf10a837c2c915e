package pagehash

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"testing"
)

func TestPages(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		n    int
		want int
	}{
		{Spec{PageSize: 4}, 0, 0}, {Spec{PageSize: 4}, 3, 0}, {Spec{PageSize: 4}, 4, 1}, {Spec{PageSize: 4}, 11, 2},
		{Spec{PageSize: 4, Bigram: true}, 4, 0}, {Spec{PageSize: 4, Bigram: true}, 5, 1}, {Spec{PageSize: 4, Bigram: true}, 9, 2},
		{Spec{PageSize: 1, Bigram: true}, 1, 0}, {Spec{PageSize: 1, Bigram: true}, 2, 1}, {Spec{PageSize: 0}, 10, 0},
	} {
		if got := c.spec.Pages(c.n); got != c.want {
			t.Errorf("%+v.Pages(%d) = %d, want %d", c.spec, c.n, got, c.want)
		}
	}
	if (Spec{}).MaxToken() != math.MaxUint32 || (Spec{Wide: true}).MaxToken() != math.MaxInt64 {
		t.Error("MaxToken")
	}
}

// TestOnePage spells out one page of each mode with sha256.Sum256.
func TestOnePage(t *testing.T) {
	prior := [Size]byte{0xaa}
	le32 := func(xs ...uint32) []byte {
		var b []byte
		for _, x := range xs {
			b = binary.LittleEndian.AppendUint32(b, x)
		}
		return b
	}
	le64 := func(xs ...uint64) []byte {
		var b []byte
		for _, x := range xs {
			b = binary.LittleEndian.AppendUint64(b, x)
		}
		return b
	}
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	if got := AppendUint32(nil, &prior, []uint32{1, 2, 3}, Spec{PageSize: 3}); len(got) != 1 || got[0] != sha256.Sum256(cat(prior[:], le32(1, 2, 3))) {
		t.Error("plain")
	}
	if got := AppendUint32[[Size]byte](nil, nil, []uint32{1, 2, 3}, Spec{PageSize: 2, Bigram: true}); len(got) != 1 || got[0] != sha256.Sum256(le32(1, 2, 2, 3)) {
		t.Error("bigram")
	}
	got, bad := AppendInt64(nil, &prior, []int64{7, 1 << 33}, Spec{PageSize: 2, Wide: true})
	if bad != -1 || len(got) != 1 || got[0] != sha256.Sum256(cat(prior[:], []byte{0xff}, le64(7, 1<<33))) {
		t.Error("wide")
	}
	got, bad = AppendInt64[[Size]byte](nil, nil, []int64{7, 1 << 33, 9}, Spec{PageSize: 1, Bigram: true, Wide: true})
	p0 := sha256.Sum256(cat([]byte{0xff}, le64(7, 1<<33)))
	if bad != -1 || len(got) != 2 || got[0] != p0 || got[1] != sha256.Sum256(cat(p0[:], []byte{0xff}, le64(1<<33, 9))) {
		t.Error("wide bigram")
	}
	if _, bad := AppendInt64[[Size]byte](nil, nil, []int64{1, 1 << 33}, Spec{PageSize: 1}); bad != 1 {
		t.Errorf("narrow: refused at %d, want 1", bad)
	}
}
