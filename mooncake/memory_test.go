//go:build unix

package mooncake

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHostMemory(t *testing.T) {
	page := uintptr(os.Getpagesize())
	for _, tc := range []struct {
		name string
		size int
		opts HostMemoryOptions
	}{
		{"plain", 3*4096 + 17, HostMemoryOptions{}},
		{"populated", 1 << 20, HostMemoryOptions{Populate: true}},
		{"locked", 1 << 20, HostMemoryOptions{Lock: true}},
		// Falls back to normal pages when none are reserved.
		{"huge pages if available", 3 << 20, HostMemoryOptions{HugePages: true}},
		{"transparent huge pages", 8 << 20, HostMemoryOptions{TransparentHugePages: true}},
		{"transparent huge pages, populated", 8 << 20, HostMemoryOptions{TransparentHugePages: true, Populate: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := AllocHostMemory(tc.size, tc.opts)
			if tc.opts.Lock && err != nil {
				// Without CAP_IPC_LOCK or enough RLIMIT_MEMLOCK the error
				// must say so (and nothing stays mapped).
				assert.ErrorContains(t, err, "RLIMIT_MEMLOCK")
				return
			}
			require.NoError(t, err)
			assert.EqualValues(t, tc.size, m.Size())
			assert.Zero(t, m.Addr()%page, "page-aligned")
			if m.HugePages() {
				assert.Zero(t, m.Addr()%hugePageSize, "huge-page aligned")
			}
			assert.Equal(t, tc.opts.Lock, m.Locked())
			b := m.Bytes()
			require.Len(t, b, tc.size)
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

func TestHostMemoryErrors(t *testing.T) {
	for _, size := range []int{0, -1} {
		_, err := AllocHostMemory(size, HostMemoryOptions{})
		assert.Error(t, err)
	}
	_, err := AllocHostMemory(1<<62, HostMemoryOptions{})
	assert.Error(t, err, "an impossible mapping fails cleanly")
}
