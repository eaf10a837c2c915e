package kvevents

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mooncake-go/mooncake-go/internal/zmtp"
)

// Upstream's constants (kv_event_publisher.cpp, kv_event_config.h).
const (
	// MaxBatch is the most events one message carries.
	MaxBatch = 64
	// DefaultQueueCapacity is --kv_events_queue_capacity's default.
	DefaultQueueCapacity = 65536
	// DefaultSendHWM is the PUB socket's send high-water mark: messages
	// queued per subscriber before further ones are dropped for it.
	DefaultSendHWM = 10000
)

// ErrClosed is returned by calls on a closed Publisher or Subscriber.
var ErrClosed = errors.New("kvevents: closed")

// PublisherOptions configures NewPublisher; the zero value is upstream's
// defaults.
type PublisherOptions struct {
	FormatOptions
	// QueueCapacity bounds the events waiting to be sent (default
	// DefaultQueueCapacity). When it is full the oldest event is dropped
	// and a sequence number is reserved for it, so subscribers see a gap.
	QueueCapacity int
	// SendHWM bounds the messages queued per subscriber (default
	// DefaultSendHWM); beyond it messages to that subscriber are dropped
	// silently, as libzmq's PUB does.
	SendHWM int
	// Now stamps batches (default time.Now).
	Now func() time.Time
}

// PublisherStats are upstream's publisher counters plus per-subscriber
// drops.
type PublisherStats struct {
	Batches, Events uint64
	Dropped         uint64 // events dropped from the full queue
	SkippedUnparsed uint64 // keys that are no u64 hash (sent unless OmitObjectKey)
	HWMDropped      uint64 // messages not queued for a subscriber at its SendHWM
	Subscribers     int    // connections with at least one subscription
}

// Publisher is a ZMQ PUB socket sending upstream's KV event messages: the
// same frames, payload and sequence rules as the master's KvEventPublisher.
type Publisher struct {
	ln       net.Listener
	endpoint string
	backend  string
	opts     PublisherOptions

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []Event // ring: queue[head:] then queue[:tail] when wrapped
	head, n int
	closing bool
	nextSeq uint64
	nextID  uint64

	subsMu  sync.Mutex
	subs    map[*pubConn]struct{}
	stopped bool // subs' channels are closed: nothing more is queued

	batches, events, dropped, skipped, hwm atomic.Uint64

	sendMu  sync.Mutex // orders messages: worker and Send
	scratch Batch
	buf     []byte

	wg     sync.WaitGroup
	closed chan struct{}
	once   sync.Once
}

// NewPublisher binds endpoint ("tcp://host:port"; host "*" for every
// interface, port 0 for a free one: Endpoint says which) and starts
// sending. backendID is the backend_id of every event, as upstream's
// --kv_events_backend_id (required there too).
func NewPublisher(endpoint, backendID string, opts PublisherOptions) (*Publisher, error) {
	host, port, err := splitEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	if backendID == "" {
		return nil, &EndpointError{endpoint, "backend id is empty (upstream refuses it too)"}
	}
	if opts.QueueCapacity <= 0 {
		opts.QueueCapacity = DefaultQueueCapacity
	}
	if opts.SendHWM <= 0 {
		opts.SendHWM = DefaultSendHWM
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	bindHost := host
	if host == "*" {
		bindHost = ""
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(bindHost, port))
	if err != nil {
		return nil, err
	}
	shown := host
	if host == "*" {
		shown = "0.0.0.0"
	}
	p := &Publisher{
		ln:       ln,
		endpoint: "tcp://" + net.JoinHostPort(shown, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)),
		backend:  backendID,
		opts:     opts,
		queue:    make([]Event, min(opts.QueueCapacity, 1024)),
		nextSeq:  1,
		nextID:   1,
		subs:     map[*pubConn]struct{}{},
		closed:   make(chan struct{}),
	}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(2)
	go p.acceptLoop()
	go p.worker()
	return p, nil
}

// Endpoint is the bound endpoint, with the port chosen when 0 was asked.
func (p *Publisher) Endpoint() string { return p.endpoint }

// Publish queues events as the master's PublishStored/PublishRemoved do:
// without blocking, dropping the oldest queued event (and reserving its
// sequence number) when the queue is full. Kind, Key, Medium, Tenant and
// Group are used; the event id, timestamp, seq_hashes and backend_id are
// set when the batch is sent, as upstream sets them.
func (p *Publisher) Publish(events []Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing {
		return ErrClosed
	}
	for _, ev := range events {
		if p.n == p.opts.QueueCapacity {
			p.head = (p.head + 1) % len(p.queue)
			p.n--
			p.dropped.Add(1)
			p.nextSeq++ // the gap subscribers will see
		}
		if p.n == len(p.queue) {
			p.growLocked()
		}
		p.queue[(p.head+p.n)%len(p.queue)] = ev
		p.n++
	}
	p.cond.Signal()
	return nil
}

func (p *Publisher) growLocked() {
	q := make([]Event, min(2*len(p.queue), p.opts.QueueCapacity))
	for i := 0; i < p.n; i++ {
		q[i] = p.queue[(p.head+i)%len(p.queue)]
	}
	p.queue, p.head = q, 0
}

// worker sends queued events in batches of at most MaxBatch.
func (p *Publisher) worker() {
	defer p.wg.Done()
	pending := make([]Event, 0, MaxBatch)
	for {
		p.mu.Lock()
		for p.n == 0 && !p.closing {
			p.cond.Wait()
		}
		if p.n == 0 && p.closing {
			p.mu.Unlock()
			return
		}
		pending = pending[:0]
		for p.n > 0 && len(pending) < MaxBatch {
			pending = append(pending, p.queue[p.head])
			p.queue[p.head] = Event{}
			p.head = (p.head + 1) % len(p.queue)
			p.n--
		}
		p.mu.Unlock()
		p.sendPending(pending)
	}
}

// sendPending is upstream's PublishBatch: events whose key is no u64 hash
// are sent only when object keys are (and the key is not empty); ids,
// seq_hashes and the timestamp are set here; the sequence number is taken
// only when something is sent.
func (p *Publisher) sendPending(pending []Event) {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	b := &p.scratch
	b.Events = b.Events[:0]
	for _, ev := range pending {
		h, ok := ParseSeqHash(ev.Key)
		if !ok {
			p.skipped.Add(1)
			if p.opts.OmitObjectKey || ev.Key == "" {
				continue
			}
		}
		ev.SeqHash, ev.HasSeqHash = h, ok
		ev.Backend = p.backend
		p.mu.Lock()
		ev.ID = p.nextID
		p.nextID++
		p.mu.Unlock()
		b.Events = append(b.Events, ev)
	}
	if len(b.Events) == 0 {
		return
	}
	b.Time = p.opts.Now()
	b.DPRank = 0
	p.mu.Lock()
	b.Seq = p.nextSeq
	p.nextSeq++
	p.mu.Unlock()
	p.sendLocked(b)
}

// Send sends one batch exactly as given: its Seq, Time (zero: now), DPRank
// and each event's fields (Backend "" is the publisher's backend id). It
// bypasses the queue: for a caller that keeps upstream's queue itself (the
// embedded engine's master) and for tests that need particular sequences.
func (p *Publisher) Send(b *Batch) error {
	select {
	case <-p.closed:
		return ErrClosed
	default:
	}
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	c := &p.scratch
	c.Seq, c.Time, c.DPRank = b.Seq, b.Time, b.DPRank
	if c.Time.IsZero() {
		c.Time = p.opts.Now()
	}
	c.Events = append(c.Events[:0], b.Events...)
	for i := range c.Events {
		if c.Events[i].Backend == "" {
			c.Events[i].Backend = p.backend
		}
	}
	p.sendLocked(c)
	return nil
}

// sendLocked encodes b once and queues it for every subscriber.
func (p *Publisher) sendLocked(b *Batch) {
	var seq [8]byte
	binary.BigEndian.PutUint64(seq[:], b.Seq)
	payload := appendPayload(p.buf[:0], b, p.opts.FormatOptions)
	p.buf = payload
	msg := zmtp.AppendMessage(make([]byte, 0, len(payload)+16), nil, seq[:], payload)
	p.batches.Add(1)
	p.events.Add(uint64(len(b.Events)))
	p.subsMu.Lock()
	if p.stopped {
		p.subsMu.Unlock()
		return
	}
	for c := range p.subs {
		if !c.matches(nil) {
			continue
		}
		select {
		case c.out <- msg:
		default:
			p.hwm.Add(1)
		}
	}
	p.subsMu.Unlock()
}

// Stats reports the counters.
func (p *Publisher) Stats() PublisherStats {
	st := PublisherStats{
		Batches: p.batches.Load(), Events: p.events.Load(), Dropped: p.dropped.Load(),
		SkippedUnparsed: p.skipped.Load(), HWMDropped: p.hwm.Load(),
	}
	p.subsMu.Lock()
	for c := range p.subs {
		if c.subscribed() {
			st.Subscribers++
		}
	}
	p.subsMu.Unlock()
	return st
}

// Subscribers is the number of connected subscribers whose subscription
// has arrived (what a test waits for before it publishes: a ZMQ publisher
// sends nothing to a subscriber before that).
func (p *Publisher) Subscribers() int { return p.Stats().Subscribers }

// Close stops accepting, sends what is queued, and closes every connection
// after its queued messages are written (at most a second for a stuck
// subscriber: upstream closes with LINGER 0 and drops them).
func (p *Publisher) Close() error {
	p.once.Do(func() {
		p.mu.Lock()
		p.closing = true
		p.cond.Broadcast()
		p.mu.Unlock()
		_ = p.ln.Close()
		p.wg.Wait() // the worker drained the queue; accept loop is gone
		close(p.closed)
		p.subsMu.Lock()
		p.stopped = true
		for c := range p.subs {
			close(c.out)
		}
		p.subsMu.Unlock()
		deadline := time.Now().Add(time.Second)
		for {
			p.subsMu.Lock()
			left := len(p.subs)
			p.subsMu.Unlock()
			if left == 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		p.subsMu.Lock()
		for c := range p.subs {
			_ = c.conn.Close()
		}
		p.subsMu.Unlock()
	})
	return nil
}

func (p *Publisher) acceptLoop() {
	defer p.wg.Done()
	for {
		nc, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(nc)
	}
}

// pubConn is one subscriber's connection.
type pubConn struct {
	conn   *zmtp.Conn
	out    chan []byte
	ctrl   chan []byte // PONG bodies from the reader
	mu     sync.Mutex
	topics [][]byte
}

func (c *pubConn) matches(topic []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.topics {
		if bytes.HasPrefix(topic, t) {
			return true
		}
	}
	return false
}

func (c *pubConn) subscribed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.topics) > 0
}

func (p *Publisher) serve(nc net.Conn) {
	zc, err := zmtp.Handshake(nc, "PUB", []string{"SUB", "XSUB"}, time.Now().Add(5*time.Second))
	if err != nil {
		_ = nc.Close()
		return
	}
	c := &pubConn{conn: zc, out: make(chan []byte, p.opts.SendHWM), ctrl: make(chan []byte, 4)}
	p.subsMu.Lock()
	if p.stopped {
		p.subsMu.Unlock()
		_ = nc.Close()
		return
	}
	p.subs[c] = struct{}{}
	p.subsMu.Unlock()
	done := make(chan struct{})
	go func() { // reader: subscriptions and pings
		defer close(done)
		var m zmtp.Message
		for {
			if err := zc.Read(&m); err != nil {
				return
			}
			if topic, sub, ok := zmtp.Subscription(&m); ok {
				c.mu.Lock()
				if sub {
					c.topics = append(c.topics, bytes.Clone(topic))
				} else {
					for i, t := range c.topics {
						if bytes.Equal(t, topic) {
							c.topics = append(c.topics[:i], c.topics[i+1:]...)
							break
						}
					}
				}
				c.mu.Unlock()
				continue
			}
			if m.Command == "PING" {
				ctx := []byte{}
				if len(m.Body) > 2 {
					ctx = bytes.Clone(m.Body[2:])
				}
				select {
				case c.ctrl <- ctx:
				default:
				}
			}
		}
	}()
	defer func() {
		_ = zc.Close()
		p.subsMu.Lock()
		delete(p.subs, c)
		p.subsMu.Unlock()
	}()
	for {
		select {
		case msg, ok := <-c.out:
			if !ok {
				_ = zc.Flush()
				return
			}
			if zc.WriteRaw(msg) != nil {
				return
			}
			// Write what else is queued before flushing, as libzmq batches.
			for more := true; more; {
				select {
				case m2, ok := <-c.out:
					if !ok {
						_ = zc.Flush()
						return
					}
					if zc.WriteRaw(m2) != nil {
						return
					}
					more = zc.Buffered() < 256<<10
				default:
					more = false
				}
			}
			if zc.Flush() != nil {
				return
			}
		case ctx := <-c.ctrl:
			zc.WriteCommand("PONG", ctx)
			if zc.Flush() != nil {
				return
			}
		case <-done:
			return
		}
	}
}
