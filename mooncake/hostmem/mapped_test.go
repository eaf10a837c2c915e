package hostmem_test

import (
	"errors"
	"runtime"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// TestCheckMapped: a range inside a mapping passes, one running past it or
// wrapping around the address space is ErrRange.
func TestCheckMapped(t *testing.T) {
	m, err := hostmem.Alloc(1<<20, hostmem.Options{})
	if errors.Is(err, hostmem.ErrNotSupported) {
		t.Skip("no mmap on this system")
	}
	if err != nil {
		t.Fatal(err)
	}
	a := m.Addr()
	for _, tc := range []struct {
		name string
		addr uintptr
		size uint64
		ok   bool
	}{
		{"all of it", a, 1 << 20, true},
		{"a byte inside", a + 12345, 1, true},
		{"null and empty pass (the engines refuse them)", 0, 0, true},
		{"2^63 bytes over 1 MiB", a, 1 << 63, runtime.GOOS != "linux"},
		{"wraps around", a, ^uint64(0), false},
	} {
		err := hostmem.CheckMapped(tc.addr, tc.size)
		if tc.ok && err != nil || !tc.ok && !errors.Is(err, hostmem.ErrRange) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if err := m.Free(); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" {
		if err := hostmem.CheckMapped(a, 4096); !errors.Is(err, hostmem.ErrRange) {
			t.Errorf("freed memory: %v, want ErrRange", err)
		}
	}
}
