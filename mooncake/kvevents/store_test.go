//go:build cgo

package kvevents_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/kvevents"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

// These tests run against the cluster mooncaketest gives: the embedded
// engine's master in go test, or a real one (make test-native) whose KV
// event publisher scripts/cluster -kv-events names. Both must publish the
// same events for the same operations.

// collector keeps what a subscription delivers.
type collector struct {
	mu     sync.Mutex
	events []kvevents.Event
	gaps   []kvevents.Gap
	seqs   []uint64
	lags   []time.Duration
	notify chan struct{}
}

func newCollector() *collector { return &collector{notify: make(chan struct{}, 1)} }

func (c *collector) HandleBatch(b *kvevents.Batch) {
	now := time.Now()
	c.mu.Lock()
	c.events = append(c.events, b.Events...)
	c.seqs = append(c.seqs, b.Seq)
	c.lags = append(c.lags, now.Sub(b.Time))
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

func (c *collector) HandleGap(g kvevents.Gap) {
	c.mu.Lock()
	c.gaps = append(c.gaps, g)
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// waitFor waits until an event satisfies ok, and returns the events from
// the one at from up to and including it.
func (c *collector) waitFor(t testing.TB, from int, wait time.Duration, ok func(kvevents.Event) bool) (int, []kvevents.Event) {
	t.Helper()
	deadline := time.After(wait)
	for {
		c.mu.Lock()
		for i := from; i < len(c.events); i++ {
			if ok(c.events[i]) {
				out := append([]kvevents.Event(nil), c.events[from:i+1]...)
				c.mu.Unlock()
				return i + 1, out
			}
		}
		c.mu.Unlock()
		select {
		case <-c.notify:
		case <-deadline:
			t.Fatalf("no such event after %v", wait)
		}
	}
}

func (c *collector) snapshot() ([]kvevents.Gap, []uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]kvevents.Gap(nil), c.gaps...), append([]uint64(nil), c.seqs...)
}

// live subscribes to ep and returns once the publisher is known to deliver:
// a probe key is upserted until its event arrives (a ZMQ publisher sends
// nothing to a subscriber before its subscription has reached it). The
// returned index is where the test's own events start.
func live(t testing.TB, st *mooncake.Store, ep string) (*collector, *kvevents.Subscriber, int) {
	t.Helper()
	c := newCollector()
	s, err := kvevents.Subscribe(context.Background(), kvevents.SubscriberConfig{Locator: kvevents.Static(ep), Handler: c})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	probe := mooncaketest.Key(t, "probe")
	var last string
	from := 0
	for i := 0; ; i++ {
		last = fmt.Sprintf("%s-%d", probe, i)
		if err := st.Upsert(last, []byte("p")); err != nil {
			t.Fatal(err)
		}
		select {
		case <-c.notify:
		case <-time.After(100 * time.Millisecond):
		}
		c.mu.Lock()
		seen := false
		for _, ev := range c.events {
			seen = seen || len(ev.Key) > len(probe) && ev.Key[:len(probe)] == probe
		}
		c.mu.Unlock()
		if seen {
			break
		}
		if i == 100 {
			t.Fatal("no event from the publisher after 100 probes")
		}
	}
	from, _ = c.waitFor(t, 0, 10*time.Second, func(ev kvevents.Event) bool { return ev.Key == last })
	return c, s, from
}

type want struct {
	kind kvevents.Kind
	key  string
}

func check(t *testing.T, got []kvevents.Event, wants []want, backend string) {
	t.Helper()
	if len(got) != len(wants) {
		for _, ev := range got {
			t.Logf("got %v %s", ev.Kind, ev.Key)
		}
		t.Fatalf("%d events, want %d", len(got), len(wants))
	}
	for i, w := range wants {
		ev := got[i]
		if ev.Kind != w.kind || ev.Key != w.key {
			t.Errorf("event %d: %v %q, want %v %q", i, ev.Kind, ev.Key, w.kind, w.key)
		}
		h, ok := kvevents.ParseSeqHash(ev.Key)
		if ev.HasSeqHash != ok || ev.SeqHash != h || ev.Medium != "cpu" || ev.Tenant != "default" || (backend != "" && ev.Backend != backend) {
			t.Errorf("event %d: %+v", i, ev)
		}
		if i > 0 && ev.ID != got[i-1].ID+1 {
			t.Errorf("event %d: id %d after %d", i, ev.ID, got[i-1].ID)
		}
	}
}

// TestStoreOperationsPublish: which store operations publish which events,
// in order, with no gap: the same list on the embedded engine and on a real
// master.
func TestStoreOperationsPublish(t *testing.T) {
	c := mooncaketest.NewCluster(t)
	ep := c.KVEvents(t)
	st := c.Open(t)
	col, sub, from := live(t, st, ep)

	k := func(n string) string { return mooncaketest.Key(t, n) }
	// A key that is a decimal u64 carries its seq hash.
	num := strconv.FormatUint(uint64(time.Now().UnixNano())|1<<62, 10)
	mem := mooncaketest.Memory(t, st, 1<<20)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.Put(k("a"), []byte("1")))
	must(st.Put(k("a"), []byte("2")))       // exists: write-once, nothing stored
	must(st.Upsert(k("a"), []byte("3")))    // same size
	must(st.Upsert(k("a"), []byte("four"))) // another size
	must(st.PutBatch(hostmem.PackKeys(k("b0"), k("b1"), k("b2")), [][]byte{{1}, {2}, {3}}))
	span, err := mem.Span(0, 4096)
	must(err)
	must(st.PutFrom(k("z"), span))
	must(st.Put(num, []byte("n")))
	must(st.Remove(k("a"), true))
	_, err = st.BatchRemove(hostmem.PackKeys(k("b0"), k("b1")), true, nil)
	must(err)
	_, err = st.RemoveByRegex(mooncaketest.KeyRegexPrefix(t)+"b2", true)
	must(err)
	must(st.Remove(num, true))
	must(st.Put(k("end"), []byte("e")))

	_, got := col.waitFor(t, from, 10*time.Second, func(ev kvevents.Event) bool { return ev.Key == k("end") })
	check(t, got, []want{
		{kvevents.Stored, k("a")},
		{kvevents.Stored, k("a")},
		{kvevents.Stored, k("a")},
		{kvevents.Stored, k("b0")}, {kvevents.Stored, k("b1")}, {kvevents.Stored, k("b2")},
		{kvevents.Stored, k("z")},
		{kvevents.Stored, num},
		{kvevents.Removed, k("a")},
		// BatchRemove and RemoveByRegex publish nothing (upstream's master
		// publishes from Remove only).
		{kvevents.Removed, num},
		{kvevents.Stored, k("end")},
	}, "")
	gaps, seqs := col.snapshot()
	if len(gaps) != 1 || gaps[0].Reason != kvevents.Started {
		t.Errorf("gaps %+v, want only the start", gaps)
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] != seqs[i-1]+1 {
			t.Errorf("sequence %d after %d", seqs[i], seqs[i-1])
		}
	}
	if st := sub.Stats(); st.DecodeErrors != 0 || st.UnknownEvents != 0 || st.Missed != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestRemoveAllPublishesNothing: RemoveAll (and a closed client's segment
// going) erase objects without an event, upstream's behaviour; a subscriber
// that mirrors the store must resync from existence checks.
func TestRemoveAllPublishesNothing(t *testing.T) {
	c := mooncaketest.NewCluster(t)
	if !c.Isolated {
		t.Skip("RemoveAll needs a cluster of its own")
	}
	ep := c.KVEvents(t)
	st := c.Open(t)
	col, _, from := live(t, st, ep)
	k := func(n string) string { return mooncaketest.Key(t, n) }
	if err := st.Put(k("x"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if n, err := st.RemoveAll(true); err != nil || n < 1 {
		t.Fatalf("RemoveAll: %d, %v", n, err)
	}
	if err := st.Put(k("end"), []byte("e")); err != nil {
		t.Fatal(err)
	}
	_, got := col.waitFor(t, from, 10*time.Second, func(ev kvevents.Event) bool { return ev.Key == k("end") })
	check(t, got, []want{{kvevents.Stored, k("x")}, {kvevents.Stored, k("end")}}, "")
}

// TestEmbeddedQueueOverflow: the embedded master's queue drops its oldest
// events when full and reserves their sequence numbers, as upstream's does.
func TestEmbeddedQueueOverflow(t *testing.T) {
	c := mooncaketest.NewCluster(t)
	if c.Native {
		t.Skip("the embedded master's queue (a real master's is --kv_events_queue_capacity)")
	}
	master := c.Config().MasterServerAddress
	k, err := mooncaketest.StartKVEvents(master, mooncaketest.KVEventsOptions{QueueCapacity: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	st := c.Open(t)
	col, _, from := live(t, st, k.Endpoint())
	keys := new(hostmem.Keys)
	values := make([][]byte, 1000)
	for i := range values {
		keys.Append(mooncaketest.Key(t, fmt.Sprint("o", i)))
		values[i] = []byte{byte(i)}
	}
	// One batch put records 1000 events under the cluster's lock, faster
	// than the pump takes batches of 64: most of them are dropped.
	if err := st.PutBatch(keys, values); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(mooncaketest.Key(t, "end"), []byte("e")); err != nil {
		t.Fatal(err)
	}
	col.waitFor(t, from, 10*time.Second, func(ev kvevents.Event) bool { return ev.Key == mooncaketest.Key(t, "end") })
	gaps, _ := col.snapshot()
	var missed uint64
	for _, g := range gaps[1:] {
		if g.Reason != kvevents.SequenceGap {
			t.Fatalf("gap %+v", g)
		}
		missed += g.Before - g.After - 1
	}
	col.mu.Lock()
	delivered := len(col.events) - from
	col.mu.Unlock()
	if missed == 0 || uint64(delivered)+missed != 1001 {
		t.Fatalf("%d events delivered + %d missed, want 1001", delivered, missed)
	}
}
