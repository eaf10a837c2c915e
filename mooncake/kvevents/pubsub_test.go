package kvevents

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/internal/zmtp"
)

// recorder is a Handler that hands copies of what it gets to a channel.
type recorder struct {
	ch    chan any // Batch (copied) or Gap
	block chan struct{}
}

func newRecorder() *recorder { return &recorder{ch: make(chan any, 1<<16)} }

func (r *recorder) HandleBatch(b *Batch) {
	if r.block != nil {
		<-r.block
	}
	c := *b
	c.Events = append([]Event(nil), b.Events...)
	r.ch <- c
}

func (r *recorder) HandleGap(g Gap) { r.ch <- g }

func (r *recorder) next(t *testing.T) any {
	t.Helper()
	select {
	case v := <-r.ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("nothing delivered in 10 s")
		return nil
	}
}

func (r *recorder) gap(t *testing.T) Gap {
	t.Helper()
	v := r.next(t)
	g, ok := v.(Gap)
	if !ok {
		t.Fatalf("got %+v, want a gap", v)
	}
	return g
}

func (r *recorder) batch(t *testing.T) Batch {
	t.Helper()
	v := r.next(t)
	b, ok := v.(Batch)
	if !ok {
		t.Fatalf("got %+v, want a batch", v)
	}
	return b
}

func publisher(t *testing.T, ep string, opts PublisherOptions) *Publisher {
	t.Helper()
	p, err := NewPublisher(ep, "test-backend", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func subscribe(t *testing.T, cfg SubscriberConfig) *Subscriber {
	t.Helper()
	s, err := Subscribe(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// waitSubscribed waits until p has n subscribers whose subscription arrived.
func waitSubscribed(t *testing.T, p *Publisher, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for p.Subscribers() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d subscribers after 10 s, want %d", p.Subscribers(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func stored(keys ...string) []Event {
	evs := make([]Event, len(keys))
	for i, k := range keys {
		evs[i] = Event{Kind: Stored, Key: k, Medium: "cpu"}
	}
	return evs
}

func TestPubSubInOrder(t *testing.T) {
	p := publisher(t, "tcp://127.0.0.1:0", PublisherOptions{})
	r := newRecorder()
	s := subscribe(t, SubscriberConfig{Locator: Static(p.Endpoint()), Handler: r})
	if g := r.gap(t); g.Reason != Started || g.After != 0 || g.Endpoint != p.Endpoint() {
		t.Fatalf("first gap %+v", g)
	}
	waitSubscribed(t, p, 1)
	const n = 1000
	for i := 0; i < n; i++ {
		kind := Stored
		if i%3 == 2 {
			kind = Removed
		}
		if err := p.Publish([]Event{{Kind: kind, Key: "key-" + itoa(i), Medium: "cpu", Group: "g"}}); err != nil {
			t.Fatal(err)
		}
	}
	var seq uint64
	for got := 0; got < n; {
		b := r.batch(t)
		if b.Seq != seq+1 {
			t.Fatalf("batch seq %d after %d", b.Seq, seq)
		}
		seq = b.Seq
		if len(b.Events) == 0 || len(b.Events) > MaxBatch {
			t.Fatalf("batch of %d events", len(b.Events))
		}
		for _, ev := range b.Events {
			want := Stored
			if got%3 == 2 {
				want = Removed
			}
			if ev.Key != "key-"+itoa(got) || ev.ID != uint64(got+1) || ev.Kind != want ||
				ev.Backend != "test-backend" || ev.Tenant != "default" || ev.Medium != "cpu" || ev.Group != "g" || !ev.Time.Equal(b.Time) {
				t.Fatalf("event %d: %+v", got, ev)
			}
			got++
		}
	}
	st := s.Stats()
	if st.Events != n || st.Gaps != 1 || st.Missed != 0 || st.DecodeErrors != 0 || !st.Connected || st.LastSeq != seq {
		t.Fatalf("stats %+v", st)
	}
	if ps := p.Stats(); ps.Events != n || ps.Batches != seq || ps.Dropped != 0 || ps.SkippedUnparsed != n {
		t.Fatalf("publisher stats %+v", ps)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestQueueOverflowIsAGap: a full queue drops its oldest events and
// reserves a sequence number for each, so the subscriber sees how many.
func TestQueueOverflowIsAGap(t *testing.T) {
	p := publisher(t, "tcp://127.0.0.1:0", PublisherOptions{QueueCapacity: 4})
	r := newRecorder()
	s := subscribe(t, SubscriberConfig{Locator: Static(p.Endpoint()), Handler: r})
	r.gap(t)
	waitSubscribed(t, p, 1)
	_ = p.Publish(stored("1"))
	if b := r.batch(t); b.Seq != 1 {
		t.Fatalf("seq %d", b.Seq)
	}
	keys := make([]string, 100)
	for i := range keys {
		keys[i] = itoa(1000 + i)
	}
	_ = p.Publish(stored(keys...)) // one call: the worker cannot take any before it ends
	g := r.gap(t)
	if g.Reason != SequenceGap || g.After != 1 || g.Before != 98 {
		t.Fatalf("gap %+v, want 1 -> 98 (96 dropped)", g)
	}
	b := r.batch(t)
	if b.Seq != 98 || len(b.Events) != 4 || b.Events[0].Key != "1096" || !b.Events[0].HasSeqHash || b.Events[0].SeqHash != 1096 {
		t.Fatalf("batch %+v", b)
	}
	if st := s.Stats(); st.Missed != 96 || st.Gaps != 2 {
		t.Fatalf("stats %+v", st)
	}
	if ps := p.Stats(); ps.Dropped != 96 {
		t.Fatalf("publisher stats %+v", ps)
	}
}

// TestSkipsUnparsedWithoutObjectKeys: without object keys upstream sends
// only the events whose key is a u64 hash, and takes no sequence number
// for a batch left empty.
func TestSkipsUnparsedWithoutObjectKeys(t *testing.T) {
	p := publisher(t, "tcp://127.0.0.1:0", PublisherOptions{FormatOptions: FormatOptions{OmitObjectKey: true}})
	r := newRecorder()
	subscribe(t, SubscriberConfig{Locator: Static(p.Endpoint()), Handler: r})
	r.gap(t)
	waitSubscribed(t, p, 1)
	_ = p.Publish(stored("not-a-hash"))
	_ = p.Publish(stored("42", "x"))
	b := r.batch(t)
	if b.Seq != 1 || len(b.Events) != 1 || b.Events[0].Key != "" || b.Events[0].SeqHash != 42 || b.Events[0].ID != 1 {
		t.Fatalf("batch %+v", b)
	}
	if ps := p.Stats(); ps.SkippedUnparsed != 2 || ps.Events != 1 {
		t.Fatalf("publisher stats %+v", ps)
	}
}

// TestSendHWMDropsSilently: a subscriber that does not read loses messages
// beyond the high-water mark, and sees the hole as a sequence gap.
func TestSendHWMDropsSilently(t *testing.T) {
	p := publisher(t, "tcp://127.0.0.1:0", PublisherOptions{SendHWM: 2})
	r := newRecorder()
	r.block = make(chan struct{})
	subscribe(t, SubscriberConfig{Locator: Static(p.Endpoint()), Handler: r})
	r.gap(t)
	waitSubscribed(t, p, 1)
	big := strings.Repeat("k", 1<<20)
	const n = 64 // 64 MiB: more than the socket buffers hold
	for i := 1; i <= n; i++ {
		if err := p.Send(&Batch{Seq: uint64(i), Events: []Event{{Kind: Stored, ID: uint64(i), Key: big}}}); err != nil {
			t.Fatal(err)
		}
	}
	if p.Stats().HWMDropped == 0 {
		t.Fatal("nothing dropped at the high-water mark")
	}
	close(r.block)
	// Messages at the end may have been dropped too: small ones follow
	// until one arrives.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for seq := uint64(n + 1); ; seq++ {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				_ = p.Send(&Batch{Seq: seq, Events: stored("marker")})
			}
		}
	}()
	var last uint64
	sawGap := false
	for last <= n {
		switch v := r.next(t).(type) {
		case Batch:
			last = v.Seq
		case Gap:
			if v.Reason != SequenceGap || v.After != last || v.Before <= last+1 {
				t.Fatalf("gap %+v after %d", v, last)
			}
			sawGap = true
		}
	}
	if !sawGap {
		t.Fatal("no sequence gap reported")
	}
}

// TestPublisherRestartIsReconnect: the same endpoint going away and coming
// back is a Reconnected gap naming the last sequence seen.
func TestPublisherRestartIsReconnect(t *testing.T) {
	p := publisher(t, "tcp://127.0.0.1:0", PublisherOptions{})
	ep := p.Endpoint()
	r := newRecorder()
	var errs sync.Map
	s := subscribe(t, SubscriberConfig{Locator: Static(ep), Handler: r, MinBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
		OnError: func(err error) {
			var ce *ConnError
			if errors.As(err, &ce) {
				errs.Store(ce.Op, true)
			}
		}})
	r.gap(t)
	waitSubscribed(t, p, 1)
	_ = p.Publish(stored("a", "b"))
	if b := r.batch(t); b.Seq != 1 {
		t.Fatalf("seq %d", b.Seq)
	}
	_ = p.Close()
	p2 := publisher(t, ep, PublisherOptions{})
	g := r.gap(t)
	if g.Reason != Reconnected || g.After != 1 || g.Before != 0 || g.Endpoint != ep {
		t.Fatalf("gap %+v", g)
	}
	waitSubscribed(t, p2, 1)
	_ = p2.Publish(stored("c"))
	if b := r.batch(t); b.Seq != 1 || b.Events[0].Key != "c" {
		t.Fatalf("batch %+v", b)
	}
	if st := s.Stats(); st.Reconnects != 1 || st.Gaps != 2 {
		t.Fatalf("stats %+v", st)
	}
	if _, ok := errs.Load("read"); !ok {
		t.Fatal("the lost connection was not reported")
	}
}

// switcher is a ChangeWatcher whose endpoint the test sets.
type switcher struct {
	mu      sync.Mutex
	ep      string
	changed chan struct{}
}

func (s *switcher) Endpoint(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ep, nil
}

func (s *switcher) WaitChange(ctx context.Context, ep string) error {
	for {
		s.mu.Lock()
		cur, ch := s.ep, s.changed
		s.mu.Unlock()
		if cur != ep {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

func (s *switcher) set(ep string) {
	s.mu.Lock()
	s.ep = ep
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// TestResubscribeOnLeaderChange: a ChangeWatcher that names another
// publisher moves the subscription there, reported as Resubscribed, while
// the old publisher still runs.
func TestResubscribeOnLeaderChange(t *testing.T) {
	a := publisher(t, "tcp://127.0.0.1:0", PublisherOptions{})
	b := publisher(t, "tcp://127.0.0.1:0", PublisherOptions{})
	loc := &switcher{ep: a.Endpoint(), changed: make(chan struct{})}
	r := newRecorder()
	s := subscribe(t, SubscriberConfig{Locator: loc, Handler: r})
	r.gap(t)
	waitSubscribed(t, a, 1)
	_ = a.Publish(stored("on-a"))
	r.batch(t)
	loc.set(b.Endpoint())
	g := r.gap(t)
	if g.Reason != Resubscribed || g.After != 1 || g.Endpoint != b.Endpoint() {
		t.Fatalf("gap %+v", g)
	}
	waitSubscribed(t, b, 1)
	waitSubscribed(t, a, 0)
	_ = a.Publish(stored("lost"))
	_ = b.Publish(stored("on-b"))
	if bt := r.batch(t); bt.Events[0].Key != "on-b" {
		t.Fatalf("batch %+v", bt)
	}
	if st := s.Stats(); st.Endpoint != b.Endpoint() || st.Reconnects != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// rawPublisher is a ZMTP PUB speaking through internal/zmtp directly, for
// what a well-behaved Publisher never sends.
func rawPublisher(t *testing.T, serve func(c *zmtp.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				c, err := zmtp.Handshake(nc, "PUB", []string{"SUB"}, time.Now().Add(5*time.Second))
				if err != nil {
					return
				}
				var m zmtp.Message
				if err := c.Read(&m); err != nil { // the subscription
					return
				}
				serve(c)
			}()
		}
	}()
	return "tcp://" + ln.Addr().String()
}

func seqFrame(s uint64) []byte { return binary.BigEndian.AppendUint64(nil, s) }

// TestDecodeErrorBecomesGap: a message that does not decode is counted and
// dropped; the next batch shows the hole.
func TestDecodeErrorBecomesGap(t *testing.T) {
	good := func(seq uint64) []byte {
		return appendPayload(nil, &Batch{Time: time.Now(), Events: stored("k" + itoa(int(seq)))}, FormatOptions{})
	}
	ep := rawPublisher(t, func(c *zmtp.Conn) {
		c.WriteMessage(nil, seqFrame(1), good(1))
		c.WriteMessage(nil, seqFrame(2), []byte{0xc1})
		c.WriteMessage(nil, []byte{1, 2, 3}, good(9))
		c.WriteMessage(nil, seqFrame(3), good(3))
		_ = c.Flush()
		var m zmtp.Message
		_ = c.Read(&m) // until the subscriber goes
	})
	r := newRecorder()
	var decodeErrs sync.Map
	s := subscribe(t, SubscriberConfig{Locator: Static(ep), Handler: r, OnError: func(err error) {
		if errors.Is(err, ErrMalformed) {
			decodeErrs.Store(err.Error(), true)
		}
	}})
	r.gap(t)
	if b := r.batch(t); b.Seq != 1 {
		t.Fatalf("batch %+v", b)
	}
	if g := r.gap(t); g.Reason != SequenceGap || g.After != 1 || g.Before != 3 {
		t.Fatalf("gap %+v", g)
	}
	if b := r.batch(t); b.Seq != 3 || b.Events[0].Key != "k3" {
		t.Fatalf("batch %+v", b)
	}
	if st := s.Stats(); st.DecodeErrors != 2 || st.Missed != 1 {
		t.Fatalf("stats %+v", st)
	}
	n := 0
	decodeErrs.Range(func(any, any) bool { n++; return true })
	if n != 2 {
		t.Fatalf("%d decode errors reported, want 2", n)
	}
}

// TestSilentPublisherIsDropped: a publisher that answered PINGs and then
// goes silent (its host hung) is left after HeartbeatTimeout, and the
// subscriber connects again.
func TestSilentPublisherIsDropped(t *testing.T) {
	var mu sync.Mutex
	conns := 0
	ep := rawPublisher(t, func(c *zmtp.Conn) {
		mu.Lock()
		conns++
		first := conns == 1
		mu.Unlock()
		var m zmtp.Message
		for {
			if err := c.Read(&m); err != nil {
				return
			}
			if m.Command == "PING" && first {
				c.PongFor(&m)
				_ = c.Flush()
				first = false
				continue
			}
			// Then silence: pings are read and never answered.
		}
	})
	r := newRecorder()
	s := subscribe(t, SubscriberConfig{Locator: Static(ep), Handler: r, Heartbeat: 20 * time.Millisecond, HeartbeatTimeout: 200 * time.Millisecond})
	r.gap(t)
	if g := r.gap(t); g.Reason != Reconnected {
		t.Fatalf("gap %+v", g)
	}
	if st := s.Stats(); st.Reconnects < 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestNoHeartbeatTimeoutWithoutPong: a publisher that never answers PINGs
// (one without ZMTP 3.1 heartbeats) is not dropped for being quiet.
func TestNoHeartbeatTimeoutWithoutPong(t *testing.T) {
	ep := rawPublisher(t, func(c *zmtp.Conn) {
		var m zmtp.Message
		for c.Read(&m) == nil {
		}
	})
	r := newRecorder()
	var lost sync.WaitGroup
	lost.Add(1)
	var once sync.Once
	s := subscribe(t, SubscriberConfig{Locator: Static(ep), Handler: r, Heartbeat: 10 * time.Millisecond, HeartbeatTimeout: 30 * time.Millisecond,
		OnError: func(error) { once.Do(lost.Done) }})
	r.gap(t)
	time.Sleep(300 * time.Millisecond) // ten timeouts' worth of quiet
	if st := s.Stats(); st.Reconnects != 0 || st.Heartbeating || !st.Connected {
		t.Fatalf("stats %+v", st)
	}
}

func TestLocatorAndDialErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ep := "tcp://" + ln.Addr().String()
	_ = ln.Close() // nothing listens there now
	fail := true
	var mu sync.Mutex
	ops := make(chan string, 100)
	loc := LocatorFunc(func(context.Context) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			fail = false
			return "", errors.New("no leader yet")
		}
		return ep, nil
	})
	r := newRecorder()
	subscribe(t, SubscriberConfig{Locator: loc, Handler: r, MinBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond,
		OnError: func(err error) {
			var ce *ConnError
			if errors.As(err, &ce) {
				select {
				case ops <- ce.Op:
				default:
				}
			}
		}})
	if op := <-ops; op != "locate" {
		t.Fatalf("first error %q, want locate", op)
	}
	if op := <-ops; op != "dial" {
		t.Fatalf("second error %q, want dial", op)
	}
	p := publisher(t, ep, PublisherOptions{})
	if g := r.gap(t); g.Reason != Started || g.Endpoint != p.Endpoint() {
		t.Fatalf("gap %+v", g)
	}
}

func TestConfigErrors(t *testing.T) {
	if _, err := Subscribe(context.Background(), SubscriberConfig{Handler: newRecorder()}); !errors.Is(err, ErrConfig) {
		t.Fatalf("no locator: %v", err)
	}
	for _, ep := range []string{"ipc:///tmp/x", "tcp://127.0.0.1", "tcp://:5557", "tcp://127.0.0.1:99999", "tcp://*:0"} {
		if _, err := dialAddress(ep); !errors.Is(err, ErrEndpoint) {
			t.Errorf("dialAddress(%q): %v", ep, err)
		}
	}
	if _, err := NewPublisher("tcp://127.0.0.1:0", "", PublisherOptions{}); !errors.Is(err, ErrEndpoint) {
		t.Errorf("empty backend id: %v", err)
	}
	p := publisher(t, "tcp://*:0", PublisherOptions{})
	if !strings.HasPrefix(p.Endpoint(), "tcp://0.0.0.0:") {
		t.Errorf("endpoint %q", p.Endpoint())
	}
	_ = p.Close()
	if err := p.Publish(stored("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("publish after close: %v", err)
	}
	if err := p.Send(&Batch{Seq: 1}); !errors.Is(err, ErrClosed) {
		t.Errorf("send after close: %v", err)
	}
}

// TestCloseEndsHandlerCalls: once Close returns, the Handler is not called.
func TestCloseEndsHandlerCalls(t *testing.T) {
	p := publisher(t, "tcp://127.0.0.1:0", PublisherOptions{})
	r := newRecorder()
	s := subscribe(t, SubscriberConfig{Locator: Static(p.Endpoint()), Handler: r})
	r.gap(t)
	waitSubscribed(t, p, 1)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				_ = p.Publish(stored("x"))
				time.Sleep(100 * time.Microsecond)
			}
		}
	}()
	r.batch(t)
	_ = s.Close()
	close(stop)
	n := len(r.ch)
	time.Sleep(50 * time.Millisecond)
	if len(r.ch) != n {
		t.Fatal("handler called after Close")
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("Done not closed")
	}
}
