//go:build cgo

package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/hostcache/prefix"
	"github.com/mooncake-go/mooncake-go/internal/testcluster"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/kvevents"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

// The prefix test's deployment: SGLang MHA on TP 2 (four keys a page),
// four tokens a page, the model name as the key prefix (newest SGLang).
const (
	pfxPageSize = 4
	pfxTP       = 2
	pfxModel    = "mcgo/prefix-test"
	pfxSegment  = 64 << 20
)

// prefixEnv is a cluster whose master publishes KV events: a Go writer
// whose segment is the cluster's memory (small, so that it evicts), a
// query-only reader (no segment, no buffer), and the publisher's endpoint.
type prefixEnv struct {
	writer, reader *mooncake.Store
	endpoint       string
	master         *testcluster.Master // native only
	hasher         *prefix.Hasher
	scheme         *prefix.Scheme
}

// newPrefixEnv starts the cluster: on the native engine, upstream's master
// with --enable_kv_events (internal/testcluster); on the embedded engine,
// the embedded master's publisher.
func newPrefixEnv(t *testing.T) *prefixEnv {
	t.Helper()
	e := &prefixEnv{}
	var cfg mooncake.Config
	if mooncake.Backend().Name == "native" {
		m, err := testcluster.Start(testcluster.Options{KVEvents: &testcluster.KVEvents{}, Lease: "200", Quiet: true,
			LogDir: "../build/cluster-logs"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Stop)
		if err := m.WaitKVEvents(20 * time.Second); err != nil {
			if errors.Is(err, testcluster.ErrNoKVEvents) && os.Getenv("MCGO_REQUIRE_KV_EVENTS") != "1" {
				t.Skipf("%v (make test-native sets MCGO_REQUIRE_KV_EVENTS=1 for an upstream built with ENABLE_KV_EVENTS)", err)
			}
			t.Fatal(err)
		}
		e.master, e.endpoint = m, m.KVEventsEndpoint()
		cfg = mooncake.Config{LocalHostname: "127.0.0.1", MetadataServer: m.MetadataURL(), Protocol: "tcp",
			MasterServerAddress: m.Addr()}
	} else {
		// The embedded master's events, drained into a kvevents.Publisher.
		c := mooncaketest.NewCluster(t)
		cfg, e.endpoint = c.Config(), c.KVEvents(t)
	}
	open := func(segment, buffer mooncake.Size) *mooncake.Store {
		c := cfg
		c.GlobalSegmentSize, c.LocalBufferSize = segment, buffer
		st, err := mooncake.Open(c)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	e.writer = open(pfxSegment, 16<<20)
	e.reader = open(0, 0)
	var err error
	if e.hasher, err = prefix.NewHasher(prefix.HashConfig{PageSize: pfxPageSize}); err != nil {
		t.Fatal(err)
	}
	if e.scheme, err = prefix.NewScheme(prefix.SchemeConfig{Keys: hostcache.KeyConfig{TPSize: pfxTP, ModelName: pfxModel}}); err != nil {
		t.Fatal(err)
	}
	return e
}

// follower is an index following the master's events.
type follower struct {
	x       *prefix.Index
	sub     *kvevents.Subscriber
	gaps    atomic.Int64
	removed atomic.Int64 // removed events received
}

func (f *follower) HandleBatch(b *kvevents.Batch) {
	for i := range b.Events {
		if b.Events[i].Kind == kvevents.Removed {
			f.removed.Add(1)
		}
	}
	f.x.HandleBatch(b)
}

func (f *follower) HandleGap(g kvevents.Gap) { f.gaps.Add(1); f.x.HandleGap(g) }

func (e *prefixEnv) follow(t *testing.T, x *prefix.Index) *follower {
	t.Helper()
	f := &follower{x: x}
	var err error
	f.sub, err = kvevents.Subscribe(context.Background(), kvevents.SubscriberConfig{Locator: kvevents.Static(e.endpoint), Handler: f})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.sub.Close() })
	deadline := time.Now().Add(20 * time.Second)
	for f.gaps.Load() == 0 || x.Stats().Resyncing {
		if time.Now().After(deadline) {
			t.Fatalf("no connection to the publisher %s: %+v", e.endpoint, f.sub.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The publisher sends nothing to a subscriber until the subscription
	// has reached it (ZMQ PUB/SUB), a moment after the connection is up
	// (the index learns what it missed then only when it is looked up):
	// store sentinel pages, outside the test's prompts, until one is seen.
	before := x.Stats().Events
	for i := 0; x.Stats().Events == before; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("no event from the master after %d sentinel pages: %+v", i, f.sub.Stats())
		}
		e.put(t, []prefix.Digest{{0x5e, byte(i), byte(i >> 8), byte(time.Now().UnixNano())}}, 64, nil)
		time.Sleep(10 * time.Millisecond)
	}
	return f
}

// universe is the prompts of the test (sharing prefixes) and their pages.
type universe struct {
	prompts [][]uint32
	pages   [][]prefix.Digest
	all     []prefix.Digest // every page once
}

func (e *prefixEnv) universe(rng *rand.Rand, n int) *universe {
	u := &universe{}
	base := make([]uint32, 24*pfxPageSize)
	for i := range base {
		base[i] = rng.Uint32N(150000)
	}
	seen := map[prefix.Digest]bool{}
	for i := 0; i < n; i++ {
		p := slices.Clone(base[:rng.IntN(len(base)+1)])
		for j := rng.IntN(8 * pfxPageSize); j > 0; j-- {
			p = append(p, rng.Uint32N(150000))
		}
		ds, _ := e.hasher.AppendPages(nil, nil, p)
		u.prompts, u.pages = append(u.prompts, p), append(u.pages, ds)
		for _, d := range ds {
			if !seen[d] {
				seen[d] = true
				u.all = append(u.all, d)
			}
		}
	}
	return u
}

// put stores the keys of pages with values of size bytes, leaving out the
// components skip names; a key already there is fine, and so is a full
// cluster (NO_AVAILABLE_HANDLE). It returns the number of keys stored.
func (e *prefixEnv) put(t *testing.T, pages []prefix.Digest, size int, skip func(int) bool) int {
	t.Helper()
	v := make([]byte, size)
	n := 0
	for _, d := range pages {
		for c := 0; c < e.scheme.ComponentsPerPage(); c++ {
			if skip != nil && skip(c) {
				continue
			}
			err := e.writer.Put(e.scheme.Key(d, c), v)
			switch {
			case err == nil:
				n++
			case errors.Is(err, mooncake.ErrObjectAlreadyExists), errors.Is(err, mooncake.ErrNoAvailableHandle):
			default:
				t.Fatalf("put: %v", err)
			}
		}
	}
	return n
}

// truth asks the store which pages are stored whole (one existence call).
func (e *prefixEnv) truth(t *testing.T, pages []prefix.Digest) map[prefix.Digest]bool {
	t.Helper()
	var k hostmem.Keys
	e.scheme.AppendPageKeys(&k, pages)
	res, err := e.reader.BatchIsExist(&k, nil)
	if err != nil {
		t.Fatalf("existence check: %v", err)
	}
	out := map[prefix.Digest]bool{}
	m := e.scheme.ComponentsPerPage()
	for i, d := range pages {
		whole := true
		for _, r := range res[i*m : (i+1)*m] {
			whole = whole && r == 1
		}
		out[d] = whole
	}
	return out
}

// settle waits until the index agrees with the store: on every page
// (exact), or on every prompt's stored prefix with no page counted that the
// store lacks (after a gap: pages stored while events were lost are
// learned when looked up). The direct lookup must equal the truth too. The
// store's truth is read again each round, since the master evicts in the
// background.
func (e *prefixEnv) settle(t *testing.T, phase string, x *prefix.Index, u *universe, exact bool) {
	t.Helper()
	direct := prefix.NewLookup(e.hasher, e.scheme, e.reader)
	deadline := time.Now().Add(30 * time.Second)
	for round := 0; ; round++ {
		tr := e.truth(t, u.all)
		var diffs []string
		for i, d := range u.all {
			if got, want := x.Contains(d), tr[d]; got != want && (exact || got) {
				diffs = append(diffs, fmt.Sprintf("page %d: index %v, store %v", i, got, want))
			}
		}
		for i, p := range u.prompts {
			want := 0
			for _, d := range u.pages[i] {
				if !tr[d] {
					break
				}
				want++
			}
			r, err := x.Lookup(nil, p)
			if err != nil {
				t.Fatal(err)
			}
			if r.Pages != want {
				diffs = append(diffs, fmt.Sprintf("prompt %d: index %d pages, store %d", i, r.Pages, want))
			}
			r, err = direct.Lookup(context.Background(), nil, p)
			if err != nil {
				t.Fatal(err)
			}
			if r.Pages != want {
				diffs = append(diffs, fmt.Sprintf("prompt %d: direct lookup %d pages, store %d", i, r.Pages, want))
			}
		}
		if len(diffs) == 0 {
			n := 0
			for _, ok := range tr {
				if ok {
					n++
				}
			}
			t.Logf("%s: index equals the store after %d rounds (%d of %d pages stored; %+v)", phase, round+1, n, len(u.all), x.Stats())
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the index differs from the store after 30 s (%+v):\n%s", phase, x.Stats(), strings.Join(diffs[:min(len(diffs), 20)], "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPrefixIndexEvents: SGLang-shaped page keys stored and removed by Go
// (and by upstream's Python client, when there is one), evicted under a
// small segment, and changed while the index was not subscribed: after
// every phase the index fed by the master's KV events equals the store's
// truth, and so does the direct lookup.
func TestPrefixIndexEvents(t *testing.T) {
	e := newPrefixEnv(t)
	x, err := prefix.NewIndex(prefix.IndexConfig{Scheme: e.scheme, Hasher: e.hasher, Resync: e.reader, ResyncBatch: 32})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	f := e.follow(t, x)
	rng := rand.New(rand.NewPCG(41, 42))
	u := e.universe(rng, 24)
	comps := e.scheme.ComponentsPerPage()

	// 1. Go stores a leading part of half the prompts, a few components
	// left out.
	for i := 0; i < len(u.prompts); i += 2 {
		e.put(t, u.pages[i][:rng.IntN(len(u.pages[i])+1)], 4096, func(int) bool { return rng.IntN(40) == 0 })
	}
	e.settle(t, "go puts", x, u, true)

	// 2. Go removes a component of some stored pages, and whole pages.
	tr := e.truth(t, u.all)
	for _, d := range u.all {
		if !tr[d] || rng.IntN(4) != 0 {
			continue
		}
		for c := 0; c < comps; c++ {
			if c == 0 || rng.IntN(2) == 0 {
				if err := e.writer.Remove(e.scheme.Key(d, c), true); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	e.settle(t, "go removes", x, u, true)

	// 3. Upstream's Python client stores the other prompts' pages, keys
	// and hashes computed its own way, and removes some of Go's (a subtest:
	// it is skipped, and says why, without upstream's Python module, unless
	// MCGO_REQUIRE_PYTHON=1 makes that a failure; the embedded engine has
	// no Python client).
	if e.master == nil {
		t.Log("python phase: none on the embedded engine (upstream's Python client talks to a real master)")
	} else {
		t.Run("python", func(t *testing.T) {
			py := startPrefixPeer(t, e.master.Env())
			for i := 1; i < len(u.prompts); i += 2 {
				n := rng.IntN(len(u.pages[i]) + 1)
				keys := py.putPages(u.prompts[i], n)
				var want []string
				for _, d := range u.pages[i][:n] {
					for c := 0; c < comps; c++ {
						want = append(want, e.scheme.Key(d, c))
					}
				}
				if !slices.Equal(keys, want) {
					t.Fatalf("the Python client's keys differ from the scheme's:\n%q\n%q", keys, want)
				}
			}
			var gone []string
			for _, d := range u.pages[0] {
				if rng.IntN(3) == 0 {
					gone = append(gone, e.scheme.Key(d, rng.IntN(comps)))
				}
			}
			py.remove(gone)
			e.settle(t, "python puts and removes", x, u, true)
		})
	}

	// 4. Pages of 256 KiB keys, twice the segment: the real master evicts
	// (and publishes the removals); the embedded engine does not evict, it
	// refuses the puts it has no room for (which publish nothing).
	before, removedBefore, tr0 := x.Stats().Events, f.removed.Load(), e.truth(t, u.all)
	var big []prefix.Digest
	for i := 0; len(big)*comps*256<<10 < 2*pfxSegment; i++ {
		big = append(big, prefix.Digest{0xe0, byte(i), byte(i >> 8)})
	}
	stored := 0
	for _, d := range big {
		stored += e.put(t, []prefix.Digest{d}, 256<<10, nil)
	}
	bu := &universe{all: append(slices.Clone(u.all), big...), prompts: u.prompts, pages: u.pages}
	phase := "a full segment (embedded: no eviction)"
	if e.master != nil {
		phase = "evictions"
	}
	e.settle(t, phase, x, bu, true)
	var k hostmem.Keys
	e.scheme.AppendPageKeys(&k, big)
	res, err := e.reader.BatchIsExist(&k, nil)
	if err != nil {
		t.Fatal(err)
	}
	present := 0
	for _, r := range res {
		if r == 1 {
			present++
		}
	}
	tr1, lost := e.truth(t, u.all), 0
	for d, was := range tr0 {
		if was && !tr1[d] {
			lost++
		}
	}
	evicted := f.removed.Load() - removedBefore
	t.Logf("%s: %d of %d keys of 256 KiB stored, %d still there; %d pages of the earlier phases gone; %d removed events (nothing was removed by a client)",
		phase, stored, len(res), present, lost, evicted)
	if e.master != nil && (evicted == 0 || lost+stored-present == 0) {
		t.Fatalf("nothing was evicted (%d events since the phase began)", x.Stats().Events-before)
	}

	// 5. A gap: the subscription ends, the store changes, a new one
	// starts: the pages held are checked again, the pages stored meanwhile
	// are learned as they are looked up.
	f.sub.Close()
	tr = e.truth(t, u.all)
	for _, d := range u.all {
		if tr[d] && rng.IntN(3) == 0 {
			if err := e.writer.Remove(e.scheme.Key(d, rng.IntN(comps)), true); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := 0; i < len(u.prompts); i += 3 {
		e.put(t, u.pages[i], 4096, nil)
	}
	e.follow(t, x)
	e.settle(t, "after a gap", x, u, false)
	if s := x.Stats(); s.Resyncs < 2 || s.ResyncPages == 0 {
		t.Fatalf("no resync of held pages after the gap: %+v", s)
	}
}

// prefixPeer is scripts/prefix_peer.py over a pipe.
type prefixPeer struct {
	t   *testing.T
	in  *json.Encoder
	out *bufio.Scanner
}

func startPrefixPeer(t *testing.T, clusterEnv []string) *prefixPeer {
	t.Helper()
	py, env := mooncaketest.Python(t)
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command(py, filepath.Join(filepath.Dir(file), "..", "scripts", "prefix_peer.py"))
	cmd.Env = append(env, clusterEnv...)
	cmd.Stderr = &testLogWriter{t: t, prefix: "python: "}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &prefixPeer{t: t, in: json.NewEncoder(stdin), out: bufio.NewScanner(stdout)}
	p.out.Buffer(make([]byte, 1<<20), 16<<20)
	t.Cleanup(func() {
		_ = p.in.Encode(map[string]string{"op": "exit"})
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill() // by PID
			<-done
		}
	})
	p.reply(nil)
	return p
}

func (p *prefixPeer) reply(into any) {
	p.t.Helper()
	if !p.out.Scan() {
		p.t.Fatalf("python peer exited: %v", p.out.Err())
	}
	var r struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(p.out.Bytes(), &r); err != nil || !r.OK {
		p.t.Fatalf("python peer: %s (%v)", p.out.Text(), err)
	}
	if into != nil {
		if err := json.Unmarshal(p.out.Bytes(), into); err != nil {
			p.t.Fatal(err)
		}
	}
}

func (p *prefixPeer) putPages(tokens []uint32, pages int) []string {
	p.t.Helper()
	if err := p.in.Encode(map[string]any{"op": "put_pages", "tokens": tokens, "page_size": pfxPageSize, "tp_size": pfxTP,
		"model": pfxModel, "pages": pages, "size": 4096}); err != nil {
		p.t.Fatal(err)
	}
	var r struct {
		Keys []string `json:"keys"`
	}
	p.reply(&r)
	return r.Keys
}

func (p *prefixPeer) remove(keys []string) {
	p.t.Helper()
	if err := p.in.Encode(map[string]any{"op": "remove", "keys": keys}); err != nil {
		p.t.Fatal(err)
	}
	p.reply(nil)
}
