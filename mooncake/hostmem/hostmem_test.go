//go:build unix

package hostmem_test

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mooncake-go/mooncake-go/internal/memreg"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

func TestAlloc(t *testing.T) {
	page := uintptr(os.Getpagesize())
	for _, tc := range []struct {
		name string
		size uint64
		opts hostmem.Options
	}{
		{"plain", 3*4096 + 17, hostmem.Options{}},
		{"populated", 1 << 20, hostmem.Options{Populate: true}},
		{"locked", 1 << 20, hostmem.Options{Lock: true}},
		// Falls back to normal pages when none are reserved.
		{"huge pages if available", 3 << 20, hostmem.Options{HugePages: true}},
		{"transparent huge pages", 8 << 20, hostmem.Options{TransparentHugePages: true}},
		{"transparent huge pages, populated", 8 << 20, hostmem.Options{TransparentHugePages: true, Populate: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := hostmem.Alloc(tc.size, tc.opts)
			if tc.opts.Lock && err != nil {
				// Without CAP_IPC_LOCK or enough RLIMIT_MEMLOCK the error
				// must say so (and nothing stays mapped).
				assert.ErrorIs(t, err, hostmem.ErrAlloc)
				assert.ErrorContains(t, err, "RLIMIT_MEMLOCK")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.size, m.Size())
			assert.Zero(t, m.Addr()%page, "page-aligned")
			if m.HugePages() {
				assert.Zero(t, m.Addr()%hostmem.DefaultHugePageSize, "huge-page aligned")
			}
			assert.Equal(t, tc.opts.Lock, m.Locked())
			b := m.Bytes()
			require.Len(t, b, int(tc.size))
			assert.Zero(t, b[0]|b[len(b)-1], "zeroed")
			b[0], b[len(b)-1] = 1, 2 // writable to the last byte
			require.NoError(t, m.Free())
			require.NoError(t, m.Free(), "Free is idempotent")
			assert.Zero(t, m.Addr())
			assert.Zero(t, m.Size())
			assert.Nil(t, m.Bytes())
		})
	}
}

func TestAllocErrors(t *testing.T) {
	for _, size := range []uint64{0, 1 << 62, ^uint64(0)} {
		m, err := hostmem.Alloc(size, hostmem.Options{})
		assert.ErrorIs(t, err, hostmem.ErrAlloc, "size %d", size)
		assert.Nil(t, m)
	}
	_, err := hostmem.Alloc(1<<20, hostmem.Options{RequireHugePages: true, HugePageSize: 1 << 30})
	if err != nil {
		assert.ErrorIs(t, err, hostmem.ErrAlloc)
	}
}

// TestFreeRefusedWhileRegistered: a transfer engine may still read or write
// registered memory, so unmapping it must wait for the last registration.
func TestFreeRefusedWhileRegistered(t *testing.T) {
	m, err := hostmem.Alloc(1<<16, hostmem.Options{})
	require.NoError(t, err)
	require.NoError(t, memreg.Mark(m))
	require.NoError(t, memreg.Mark(m))
	assert.Equal(t, 2, m.Registrations())
	err = m.Free()
	assert.ErrorIs(t, err, hostmem.ErrRegistered)
	assert.NotZero(t, m.Addr(), "still mapped")
	m.Bytes()[100] = 7 // and usable
	memreg.Unmark(m)
	assert.ErrorIs(t, m.Free(), hostmem.ErrRegistered, "one registration left")
	memreg.Unmark(m)
	memreg.Unmark(m) // an extra release is harmless
	require.NoError(t, m.Free())
	assert.ErrorIs(t, memreg.Mark(m), hostmem.ErrFreed, "freed memory cannot be registered")
}

func TestNilAndZeroMemory(t *testing.T) {
	for _, m := range []*hostmem.Memory{nil, {}} {
		assert.Zero(t, m.Addr())
		assert.Zero(t, m.Size())
		assert.Nil(t, m.Bytes())
		assert.False(t, m.HugePages())
		assert.False(t, m.Locked())
		assert.NoError(t, m.Free())
		assert.ErrorIs(t, memreg.Mark(m), hostmem.ErrFreed)
		memreg.Unmark(m)
		assert.Zero(t, m.Registrations())
		_, err := m.Span(0, 1)
		assert.ErrorIs(t, err, hostmem.ErrFreed)
		assert.Zero(t, m.All())
	}
	var s hostmem.Span
	_, err := s.Addr()
	assert.ErrorIs(t, err, hostmem.ErrFreed)
	assert.Nil(t, s.Bytes())
}

func TestSpan(t *testing.T) {
	m, err := hostmem.Alloc(8192, hostmem.Options{})
	require.NoError(t, err)
	for _, tc := range []struct {
		off, n uint64
		ok     bool
	}{
		{0, 8192, true}, {0, 0, true}, {8192, 0, true}, {100, 200, true},
		{8192, 1, false}, {1, 8192, false}, {0, ^uint64(0), false}, {^uint64(0), 2, false},
	} {
		s, err := m.Span(tc.off, tc.n)
		if !tc.ok {
			assert.ErrorIs(t, err, hostmem.ErrRange, "[%d,+%d)", tc.off, tc.n)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.off, s.Offset())
		assert.Equal(t, tc.n, s.Len())
		assert.Same(t, m, s.Memory())
		a, err := s.Addr()
		require.NoError(t, err)
		assert.Equal(t, m.Addr()+uintptr(tc.off), a)
		assert.Len(t, s.Bytes(), int(tc.n))
	}
	s, _ := m.Span(10, 4)
	copy(s.Bytes(), "abcd")
	assert.Equal(t, "abcd", string(m.Bytes()[10:14]))
	assert.Equal(t, uint64(8192), m.All().Len())
	require.NoError(t, m.Free())
	_, err = s.Addr()
	assert.True(t, errors.Is(err, hostmem.ErrFreed), "a span of freed memory has no address")
	assert.Nil(t, s.Bytes())
}
