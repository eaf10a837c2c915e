//go:build cgo

package kvevents_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/internal/testcluster"
	"github.com/mooncake-go/mooncake-go/internal/zmtp"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/kvevents"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

// TestPayloadBytesMatchEncoder reads the publisher's messages as they are on
// the wire and checks that Publisher's encoder writes the same bytes for
// what was decoded: against a real master, that our frames are upstream's
// byte for byte (msgpack-c's formats, the field order, the sequence frame).
func TestPayloadBytesMatchEncoder(t *testing.T) {
	c := mooncaketest.NewCluster(t)
	ep := c.KVEvents(t)
	st := c.Open(t)
	addr := strings.TrimPrefix(ep, "tcp://")
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	zc, err := zmtp.Handshake(nc, "SUB", []string{"PUB", "XPUB"}, time.Now().Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	zc.Subscribe(nil)
	if err := zc.Flush(); err != nil {
		t.Fatal(err)
	}
	msgs := make(chan [][]byte, 1024)
	go func() {
		var m zmtp.Message
		for zc.Read(&m) == nil {
			if m.Command == "" {
				f := make([][]byte, len(m.Frames))
				for i := range f {
					f[i] = append([]byte(nil), m.Frames[i]...)
				}
				msgs <- f
			}
		}
		close(msgs)
	}()
	// Keys of every shape: hex digests, decimal and 0x hashes (seq_hashes
	// and block_hashes filled), one beyond 2^63 (block_hashes negative), a
	// long one (str16).
	keys := []string{
		mooncaketest.Key(t, "plain"),
		fmt.Sprint(uint64(time.Now().UnixNano())),
		fmt.Sprintf("0x%x", uint64(time.Now().UnixNano())|1<<63),
		mooncaketest.Key(t, strings.Repeat("L", 300)),
	}
	deadline := time.After(30 * time.Second)
	// Every key's put and remove must be seen. The subscription may join
	// in the middle of a round (ZMQ's slow joiner: what is published before
	// it is dropped), so a round is sent again whenever nothing arrives for
	// a while, until each key has shown both events.
	seen := map[string]int{}
	done := func() bool {
		for _, k := range keys {
			if seen[k] < 2 {
				return false
			}
		}
		return true
	}
	send := func() {
		for _, k := range keys {
			_ = st.Upsert(k, []byte("v"))
			_ = st.Remove(k, true)
		}
	}
	send()
	for !done() {
		select {
		case f, ok := <-msgs:
			if !ok {
				t.Fatal("connection closed")
			}
			if len(f) != 3 || len(f[0]) != 0 || len(f[1]) != 8 {
				t.Fatalf("frames %d: topic %d bytes, sequence %d bytes", len(f), len(f[0]), len(f[1]))
			}
			var b kvevents.Batch
			if err := kvevents.DecodePayload(&b, f[2]); err != nil {
				t.Fatal(err)
			}
			for _, ev := range b.Events {
				if !ev.Time.Equal(b.Time) {
					t.Fatalf("event time %v, batch %v", ev.Time, b.Time)
				}
				for _, k := range keys {
					if ev.Key == k {
						seen[k]++
					}
				}
			}
			if q := kvevents.EncodePayload(&b, kvevents.FormatOptions{}); string(q) != string(f[2]) {
				t.Fatalf("re-encoded payload differs:\nwire % x\nours % x", f[2], q)
			}
		case <-time.After(200 * time.Millisecond):
			send()
		case <-deadline:
			t.Fatalf("events seen per key after 30 s: %v", seen)
		}
	}
}

// runPython runs ops with upstream's Python client (scripts/kvevents_peer.py)
// against the master env names, and returns their results.
func runPython(t *testing.T, env []string, ops ...[]any) []any {
	t.Helper()
	py, penv := mooncaketest.Python(t)
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "scripts", "kvevents_peer.py")
	js, _ := json.Marshal(ops)
	cmd := exec.Command(py, script, string(js))
	cmd.Env = append(penv, env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	var r struct {
		OK      bool  `json:"ok"`
		Results []any `json:"results"`
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil || !r.OK {
		t.Fatalf("python said %q: %v", out, err)
	}
	return r.Results
}

// clusterEnv is what a Python client of the test cluster needs.
func clusterEnv() []string {
	return []string{
		"MOONCAKE_MASTER=" + os.Getenv("MCGO_TEST_MASTER"),
		"MOONCAKE_TE_META_DATA_SERVER=" + os.Getenv("MCGO_TEST_METADATA"),
		"MC_TCP_BIND_ADDRESS=127.0.0.1",
	}
}

// TestPythonClientPublishes: keys put and removed by upstream's Python
// client, between Go's, arrive as typed events in order, with no gap.
func TestPythonClientPublishes(t *testing.T) {
	mooncaketest.RequireNative(t)
	c := mooncaketest.NewCluster(t)
	ep := c.KVEvents(t)
	mooncaketest.Python(t)
	st := c.Open(t)
	col, sub, from := live(t, st, ep)
	k := func(n string) string { return mooncaketest.Key(t, n) }
	if err := st.Put(k("go-1"), []byte("g")); err != nil {
		t.Fatal(err)
	}
	res := runPython(t, clusterEnv(),
		[]any{"put", k("py-1"), "v"},
		[]any{"put", k("py-1"), "w"}, // exists
		[]any{"upsert", k("py-1"), "longer"},
		[]any{"put_batch", []string{k("py-2"), k("py-3")}, "b"},
		[]any{"remove", k("py-1")},
		[]any{"batch_remove", []string{k("py-2")}},
		[]any{"remove", k("go-1")},
	)
	t.Logf("python results %v", res)
	if err := st.Put(k("end"), []byte("e")); err != nil {
		t.Fatal(err)
	}
	_, got := col.waitFor(t, from, 20*time.Second, func(ev kvevents.Event) bool { return ev.Key == k("end") })
	check(t, got, []want{
		{kvevents.Stored, k("go-1")},
		{kvevents.Stored, k("py-1")},
		{kvevents.Stored, k("py-1")},
		{kvevents.Stored, k("py-2")}, {kvevents.Stored, k("py-3")},
		{kvevents.Removed, k("py-1")},
		{kvevents.Removed, k("go-1")},
		// The Python client's exit unmounted its segment: objects whose only
		// replica was there went without an event (upstream's
		// UnmountSegment publishes none).
		{kvevents.Stored, k("end")},
	}, "")
	gaps, _ := col.snapshot()
	if len(gaps) != 1 || sub.Stats().Missed != 0 {
		t.Fatalf("gaps %+v, stats %+v", gaps, sub.Stats())
	}
}

// ownMaster starts a master with KV events for one test; a master built
// without them skips the test, or fails it where they are required.
func ownMaster(t *testing.T, opts testcluster.Options) *testcluster.Master {
	t.Helper()
	mooncaketest.RequireNative(t)
	opts.Quiet = true
	opts.LogDir = "../../build/cluster-logs"
	if opts.KVEvents == nil {
		opts.KVEvents = &testcluster.KVEvents{BackendID: "own-master"}
	}
	m, err := testcluster.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	if err := m.WaitKVEvents(3 * time.Second); err != nil {
		if errors.Is(err, testcluster.ErrNoKVEvents) && os.Getenv("MCGO_REQUIRE_KV_EVENTS") != "1" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	return m
}

func openOn(t *testing.T, m *testcluster.Master, segment uint64) *mooncake.Store {
	t.Helper()
	st, err := mooncake.Open(mooncake.Config{
		LocalHostname: "127.0.0.1", MetadataServer: m.MetadataURL(), GlobalSegmentSize: mooncake.Size(segment),
		LocalBufferSize: 16 << 20, Protocol: "tcp", MasterServerAddress: m.Addr(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// TestMasterRestartIsReconnect: a restarted master (its publisher numbers
// from 1 again) is a Reconnected gap after the last sequence seen, and its
// events follow; the subscriber heartbeats with libzmq's PUB.
func TestMasterRestartIsReconnect(t *testing.T) {
	m := ownMaster(t, testcluster.Options{})
	st := openOn(t, m, 64<<20)
	col := newCollector()
	sub, err := kvevents.Subscribe(context.Background(), kvevents.SubscriberConfig{
		Locator: kvevents.Static(m.KVEventsEndpoint()), Handler: col,
		MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, Heartbeat: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for i := 0; ; i++ { // until the subscription has arrived
		if err := st.Upsert("before", []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		if _, seqs := col.snapshot(); len(seqs) > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !sub.Stats().Heartbeating {
		if time.Now().After(deadline) {
			t.Fatal("libzmq's PUB answered no PING")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // let the last probes' events arrive
	_, seqs := col.snapshot()
	lastBefore := seqs[len(seqs)-1]
	col.mu.Lock()
	from := len(col.events)
	col.mu.Unlock()

	m.Kill()
	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
	// The client finds the new master on its own (upstream remounts).
	deadline = time.Now().Add(60 * time.Second)
	for {
		err := st.Put("after", []byte("a"))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no put succeeded after the restart: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	_, got := col.waitFor(t, from, 20*time.Second, func(ev kvevents.Event) bool { return ev.Key == "after" })
	if got[len(got)-1].Kind != kvevents.Stored || got[len(got)-1].Backend != "own-master" {
		t.Fatalf("event %+v", got[len(got)-1])
	}
	gaps, seqs := col.snapshot()
	if len(gaps) != 2 || gaps[1].Reason != kvevents.Reconnected || gaps[1].After != lastBefore {
		t.Fatalf("gaps %+v, want started then reconnected after %d", gaps, lastBefore)
	}
	if st := sub.Stats(); st.Reconnects != 1 || st.Missed != 0 {
		t.Fatalf("stats %+v", st)
	}
	t.Logf("sequences %v: the restarted master numbers from 1 again", seqs)
}

// TestEvictionPublishesRemoved: objects the master evicts from a small
// segment arrive as Removed events, and are gone.
func TestEvictionPublishesRemoved(t *testing.T) {
	m := ownMaster(t, testcluster.Options{})
	st := openOn(t, m, 16<<20)
	col, _, from := live(t, st, m.KVEventsEndpoint())
	value := make([]byte, 1<<20)
	removedByUs := map[string]bool{}
	var stored []string
	for i := 0; i < 64; i++ {
		k := fmt.Sprintf("evict-%d", i)
		for try := 0; ; try++ {
			err := st.Put(k, value)
			if err == nil {
				stored = append(stored, k)
				break
			}
			if !errors.Is(err, mooncake.ErrNoAvailableHandle) || try == 50 {
				t.Fatalf("put %s: %v", k, err)
			}
			time.Sleep(100 * time.Millisecond) // the master evicts in the background
		}
	}
	for try := 0; ; try++ {
		err := st.Put("evict-end", []byte("e"))
		if err == nil {
			break
		}
		if !errors.Is(err, mooncake.ErrNoAvailableHandle) || try == 50 {
			t.Fatalf("put evict-end: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, got := col.waitFor(t, from, 30*time.Second, func(ev kvevents.Event) bool { return ev.Key == "evict-end" })
	evicted := 0
	for _, ev := range got {
		if ev.Kind != kvevents.Removed || removedByUs[ev.Key] {
			continue
		}
		evicted++
		if ok, err := st.IsExist(ev.Key); err != nil || ok {
			t.Errorf("%s evicted but exists=%v (%v)", ev.Key, ok, err)
		}
	}
	if evicted == 0 {
		t.Fatalf("64 MiB into a 16 MiB segment and no Removed event (%d events)", len(got))
	}
	t.Logf("%d of %d objects evicted, each with a Removed event", evicted, len(stored))
}
