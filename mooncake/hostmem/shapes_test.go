package hostmem_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

func TestBuffersValidate(t *testing.T) {
	a3, s3 := []uintptr{1, 2, 3}, []uint64{1, 1, 1}
	for _, tc := range []struct {
		name string
		b    hostmem.Buffers
		n    int
		ok   bool
	}{
		{"single", hostmem.Buffers{Addrs: a3, Sizes: s3}, 3, true},
		{"single, empty", hostmem.Buffers{}, 0, true},
		{"single, wrong count", hostmem.Buffers{Addrs: a3, Sizes: s3}, 2, false},
		{"sizes differ", hostmem.Buffers{Addrs: a3, Sizes: s3[:2]}, 3, false},
		{"multi", hostmem.Buffers{Addrs: a3, Sizes: s3, Offsets: []uint64{0, 2, 3}}, 2, true},
		{"multi, empty group", hostmem.Buffers{Addrs: a3, Sizes: s3, Offsets: []uint64{0, 0, 3}}, 2, true},
		{"multi, no keys", hostmem.Buffers{Offsets: []uint64{0}}, 0, true},
		{"multi, empty offsets", hostmem.Buffers{Offsets: []uint64{}}, 0, false},
		{"multi, short offsets", hostmem.Buffers{Addrs: a3, Sizes: s3, Offsets: []uint64{0, 3}}, 2, false},
		{"multi, not from 0", hostmem.Buffers{Addrs: a3, Sizes: s3, Offsets: []uint64{1, 2, 3}}, 2, false},
		{"multi, decreasing", hostmem.Buffers{Addrs: a3, Sizes: s3, Offsets: []uint64{0, 3, 2}}, 2, false},
		{"multi, not to the end", hostmem.Buffers{Addrs: a3, Sizes: s3, Offsets: []uint64{0, 1, 2}}, 2, false},
		{"multi, past the end", hostmem.Buffers{Addrs: a3, Sizes: s3, Offsets: []uint64{0, 1, 4}}, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.b.Validate(tc.n)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, hostmem.ErrShape)
			}
		})
	}
}

func TestBuffersGroups(t *testing.T) {
	b := hostmem.Buffers{Addrs: []uintptr{10, 20, 30}, Sizes: []uint64{1, 2, 3}, Offsets: []uint64{0, 2, 3}}
	require.NoError(t, b.Validate(2))
	assert.True(t, b.Multi())
	assert.Equal(t, 2, b.Len())
	a, s := b.Group(0)
	assert.Equal(t, []uintptr{10, 20}, a)
	assert.Equal(t, []uint64{1, 2}, s)
	assert.Equal(t, uint64(3), b.ObjectSize(0))
	assert.Equal(t, uint64(3), b.ObjectSize(1))
	fa, fs := b.Flatten()
	assert.Equal(t, b.Addrs, fa, "flattening a packed list is the identity")
	assert.Equal(t, b.Sizes, fs)
	na, ns := b.Nested()
	assert.Equal(t, [][]uintptr{{10, 20}, {30}}, na)
	assert.Equal(t, [][]uint64{{1, 2}, {3}}, ns)
	single := hostmem.Buffers{Addrs: b.Addrs, Sizes: b.Sizes}
	assert.False(t, single.Multi())
	assert.Equal(t, 3, single.Len())
	assert.Equal(t, uint64(2), single.ObjectSize(1))
}

func TestKeys(t *testing.T) {
	k := hostmem.PackKeys("a", "", "ccc")
	require.NoError(t, k.Validate())
	assert.Equal(t, 3, k.Len())
	assert.Equal(t, []string{"a", "", "ccc"}, k.Strings())
	s := k.String(2)
	k.Reset()
	k.Append("zzz")
	assert.Equal(t, "ccc", s, "String copies: rewriting the buffer does not change it")
	assert.Equal(t, 1, k.Len())
	var z hostmem.Keys
	assert.Zero(t, z.Len())
	assert.NoError(t, z.Validate())
	var nilKeys *hostmem.Keys
	assert.Zero(t, nilKeys.Len())
	for _, bad := range []hostmem.Keys{
		{Buf: []byte("ab"), Offsets: []uint64{1, 2}},
		{Buf: []byte("ab"), Offsets: []uint64{0, 2, 1}},
		{Buf: []byte("ab"), Offsets: []uint64{0, 3}},
	} {
		assert.ErrorIs(t, bad.Validate(), hostmem.ErrShape, "%v", bad)
	}
}

// FuzzBuffersValidate: whatever the lists, Validate never panics, and when
// it accepts them every group can be read without going out of range.
func FuzzBuffersValidate(f *testing.F) {
	f.Add(3, 3, []byte{0, 1, 3}, true)
	f.Add(2, 2, []byte{0, 2, 1}, true)
	f.Add(2, 2, []byte{}, false)
	f.Fuzz(func(t *testing.T, nAddrs, nKeys int, offs []byte, multi bool) {
		if nAddrs < 0 || nAddrs > 64 || nKeys < 0 || nKeys > 64 {
			return
		}
		b := hostmem.Buffers{Addrs: make([]uintptr, nAddrs), Sizes: make([]uint64, nAddrs)}
		if multi {
			b.Offsets = make([]uint64, len(offs))
			for i, o := range offs {
				b.Offsets[i] = uint64(o)
			}
		}
		if b.Validate(nKeys) != nil {
			return
		}
		total := 0
		for i := 0; i < b.Len(); i++ {
			a, s := b.Group(i)
			if len(a) != len(s) {
				t.Fatal("group lengths differ")
			}
			total += len(a)
		}
		if b.Len() != nKeys || total != nAddrs {
			t.Fatalf("accepted %d keys over %d buffers, groups cover %d", b.Len(), nAddrs, total)
		}
	})
}
