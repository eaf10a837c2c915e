package hostmem_test

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// anonHugeKiB reads the AnonHugePages of the mapping that starts at addr
// from /proc/self/smaps.
func anonHugeKiB(t *testing.T, addr uintptr) int {
	f, err := os.Open("/proc/self/smaps")
	require.NoError(t, err)
	defer f.Close()
	start := fmt.Sprintf("%x-", addr)
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		// A mapping's header is "start-end perms offset dev inode [path]";
		// its fields are "Name: value kB".
		if f := strings.Fields(line); len(f) >= 5 && !strings.HasSuffix(f[0], ":") {
			in = strings.HasPrefix(line, start)
		}
		var kib int
		if in && strings.HasPrefix(line, "AnonHugePages:") {
			_, err := fmt.Sscanf(line, "AnonHugePages: %d kB", &kib)
			require.NoError(t, err)
			return kib
		}
	}
	require.NoError(t, sc.Err())
	t.Fatalf("no mapping at %#x in /proc/self/smaps", addr)
	return 0
}

// TestTransparentHugePages checks that the option gets huge pages where the
// kernel offers them to madvise()d memory, and that populating keeps them.
func TestTransparentHugePages(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skipf("transparent huge pages are off on this machine (%q, %v): the option is a no-op", strings.TrimSpace(string(mode)), err)
	}
	const size = 32 << 20
	for _, thp := range []bool{false, true} {
		m, err := hostmem.Alloc(size, hostmem.Options{Populate: true, TransparentHugePages: thp})
		require.NoError(t, err)
		huge := anonHugeKiB(t, m.Addr())
		t.Logf("TransparentHugePages=%v: AnonHugePages %d KiB of %d", thp, huge, size>>10)
		if thp {
			// The kernel may fail to find free 2 MiB blocks for a few of
			// them; most must be huge.
			require.Greater(t, huge, size>>10/2, "populated THP mapping got small pages")
		} else if strings.Contains(string(mode), "[madvise]") {
			require.Zero(t, huge, "without the advice, madvise mode gives small pages")
		}
		require.NoError(t, m.Free())
	}
}
