//go:build cgo

package prefix_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/hostcache/prefix"
	"github.com/mooncake-go/mooncake-go/internal/testcluster"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

// queryOnly is the configuration of a client that only asks: no segment
// mounted, no local buffer (so nothing registered).
func queryOnly(c *mooncake.Config) {
	c.GlobalSegmentSize = 0
	c.LocalBufferSize = 0
}

// deployment is a TP-2 MHA deployment whose keys are unique to the test
// (its model name), so that tests can share a live cluster.
func deployment(t *testing.T, mode prefix.Mode) (*prefix.Hasher, *prefix.Scheme) {
	t.Helper()
	h, err := prefix.NewHasher(prefix.HashConfig{PageSize: 4, Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	s, err := prefix.NewScheme(prefix.SchemeConfig{Keys: hostcache.KeyConfig{TPSize: 2, ModelName: mooncaketest.Key(t, "model")}})
	if err != nil {
		t.Fatal(err)
	}
	return h, s
}

// putPages stores the component keys of pages, leaving out those skip
// names, with a small value each, and removes them when the test ends.
func putPages(t *testing.T, st *mooncake.Store, s *prefix.Scheme, pages []prefix.Digest, skip func(page, comp int) bool) {
	t.Helper()
	var keys []string
	for p, d := range pages {
		for c := 0; c < s.ComponentsPerPage(); c++ {
			if skip != nil && skip(p, c) {
				continue
			}
			k := s.Key(d, c)
			if err := st.Put(k, []byte(k)); err != nil && !errors.Is(err, mooncake.ErrObjectAlreadyExists) {
				t.Fatalf("put %s: %v", k, err)
			}
			keys = append(keys, k)
		}
	}
	t.Cleanup(func() {
		for _, k := range keys {
			_ = st.Remove(k, true)
		}
	})
}

// bruteForce counts the leading pages whose every key IsExist finds.
func bruteForce(t *testing.T, st *mooncake.Store, s *prefix.Scheme, pages []prefix.Digest) int {
	t.Helper()
	for p, d := range pages {
		for c := 0; c < s.ComponentsPerPage(); c++ {
			ok, err := st.IsExist(s.Key(d, c))
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				return p
			}
		}
	}
	return len(pages)
}

// TestLookupOnStore: random prompts sharing prefixes, stored in part by one
// client; the direct lookup of a query-only client equals a brute-force
// existence check, for plain and EAGLE hashing.
func TestLookupOnStore(t *testing.T) {
	cl := mooncaketest.NewCluster(t)
	writer := cl.Open(t)
	reader := cl.Open(t, queryOnly)
	for _, mode := range []prefix.Mode{prefix.Plain, prefix.Bigram} {
		t.Run(mode.String(), func(t *testing.T) {
			h, s := deployment(t, mode)
			l := prefix.NewLookup(h, s, reader)
			rng := rand.New(rand.NewPCG(3, uint64(mode)))
			base := make([]uint32, 4*24+1)
			for i := range base {
				base[i] = rng.Uint32()
			}
			var prompts [][]uint32
			for i := 0; i < 24; i++ {
				p := slices.Clone(base[:rng.IntN(len(base))])
				for j := rng.IntN(12); j > 0; j-- {
					p = append(p, rng.Uint32())
				}
				prompts = append(prompts, p)
				if i%2 == 0 {
					pages, _ := h.AppendPages(nil, nil, p)
					n := rng.IntN(len(pages) + 1)
					putPages(t, writer, s, pages[:n], func(int, int) bool { return rng.IntN(15) == 0 })
				}
			}
			for _, p := range prompts {
				r, err := l.Lookup(context.Background(), nil, p)
				if err != nil {
					t.Fatal(err)
				}
				pages, _ := h.AppendPages(nil, nil, p)
				if want := bruteForce(t, reader, s, pages); r.Pages != want || r.Hashed != len(pages) {
					t.Fatalf("%d of %d pages stored, brute force %d", r.Pages, r.Hashed, want)
				}
				if r.Pages > 0 && r.LastHash != pages[r.Pages-1] {
					t.Fatal("last hash is not the last stored page's")
				}
			}
		})
	}
}

// TestLookupFollowsRemoval: removing one key of a page in the middle ends
// the prefix there; extending from the returned hash finds nothing more.
func TestLookupFollowsRemoval(t *testing.T) {
	cl := mooncaketest.NewCluster(t)
	writer := cl.Open(t)
	reader := cl.Open(t, queryOnly)
	h, s := deployment(t, prefix.Plain)
	toks := make([]uint32, 4*8)
	for i := range toks {
		toks[i] = uint32(i * 31)
	}
	pages, _ := h.AppendPages(nil, nil, toks)
	putPages(t, writer, s, pages, nil)
	l := prefix.NewLookup(h, s, reader)
	r, err := l.Lookup(context.Background(), nil, toks)
	if err != nil || r.Pages != 8 {
		t.Fatalf("%+v %v", r, err)
	}
	if err := writer.Remove(s.Key(pages[5], 2), true); err != nil {
		t.Fatal(err)
	}
	r, err = l.Lookup(context.Background(), nil, toks)
	if err != nil || r.Pages != 5 || r.LastHash != pages[4] {
		t.Fatalf("after removal: %+v %v", r, err)
	}
	rest, err := l.Lookup(context.Background(), &r.LastHash, toks[4*5:])
	if err != nil || rest.Pages != 0 || rest.Hashed != 3 {
		t.Fatalf("extension: %+v %v", rest, err)
	}
}

// TestQueryOnlyClient: a client with GlobalSegmentSize 0 and
// LocalBufferSize 0 opens (on the embedded engine and on upstream), mounts
// no segment at the master, and answers existence checks; what needs its
// local buffer (a copying put or get) is refused.
func TestQueryOnlyClient(t *testing.T) {
	cl := mooncaketest.NewCluster(t)
	admin := os.Getenv("MCGO_TEST_MASTER_ADMIN")
	var before []string
	if cl.Native && admin != "" {
		var err error
		if before, err = testcluster.Segments(admin); err != nil {
			t.Fatal(err)
		}
	}
	rssW, threadsW := procStatus(t)
	writer := cl.Open(t)
	rssW1, threadsW1 := procStatus(t)
	t.Logf("%s engine: opening a first client (%s segment, %s local buffer): RSS %+d KiB, threads %+d", mooncake.Backend().Name,
		cl.Config().GlobalSegmentSize, cl.Config().LocalBufferSize, rssW1-rssW, threadsW1-threadsW)
	key := mooncaketest.Key(t, "k")
	if err := writer.Put(key, []byte("value")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = writer.Remove(key, true) })

	// What opening each client costs this process (docs/prefix.md,
	// "Query-only client"), after the first (which pays the engine's
	// one-time setup): logged, not judged.
	rss0, threads0 := procStatus(t)
	q := cl.Open(t, queryOnly)
	rss1, threads1 := procStatus(t)
	cl.Open(t)
	rss2, threads2 := procStatus(t)
	t.Logf("%s engine: then a query-only client: RSS %+d KiB, threads %+d; then one more full client: RSS %+d KiB, threads %+d",
		mooncake.Backend().Name, rss1-rss0, threads1-threads0, rss2-rss1, threads2-threads1)
	res, err := q.BatchIsExist(hostmem.PackKeys(key, key+"-absent"), nil)
	if err != nil || len(res) != 2 || res[0] != 1 || res[1] != 0 {
		t.Fatalf("BatchIsExist: %v %v", res, err)
	}
	if ok, err := q.IsExist(key); err != nil || !ok {
		t.Fatalf("IsExist: %v %v", ok, err)
	}
	// Nothing to stage a copy in: upstream's put and get fail to allocate
	// from the absent local buffer (INVALID_PARAMS), and so do the
	// embedded engine's.
	if err := q.Put(mooncaketest.Key(t, "from-query-only"), []byte("x")); !errors.Is(err, mooncake.ErrInvalidParams) {
		t.Errorf("put through a client without a local buffer: %v, want INVALID_PARAMS", err)
		_ = q.Remove(mooncaketest.Key(t, "from-query-only"), true)
	}
	if _, err := q.Get(key); !errors.Is(err, mooncake.ErrInvalidParams) {
		t.Errorf("get through a client without a local buffer: %v, want INVALID_PARAMS", err)
	}
	if cl.Native && admin != "" {
		after, err := testcluster.Segments(admin)
		if err != nil {
			t.Fatal(err)
		}
		// The two full clients mounted a segment each; the query-only
		// client none.
		if len(after) != len(before)+2 {
			t.Fatalf("segments before %v, after %v: want the two full clients' only", before, after)
		}
	}
}

// procStatus returns this process's resident set (KiB) and thread count.
func procStatus(t *testing.T) (rssKiB, threads int) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Logf("no /proc/self/status: %v", err)
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			rssKiB, _ = strconv.Atoi(f[1])
		case "Threads:":
			threads, _ = strconv.Atoi(f[1])
		}
	}
	return rssKiB, threads
}
