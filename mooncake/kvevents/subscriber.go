package kvevents

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mooncake-go/mooncake-go/internal/zmtp"
)

// SubscriberConfig configures Subscribe. Locator and Handler are required;
// zero durations take the defaults named.
type SubscriberConfig struct {
	Locator Locator
	Handler Handler
	// MinBackoff and MaxBackoff bound the wait before a reconnect, which
	// doubles from MinBackoff (default 50 ms) up to MaxBackoff (default
	// 5 s) while attempts fail, and starts again once one succeeds.
	MinBackoff, MaxBackoff time.Duration
	// DialTimeout bounds a connect and its handshake (default 3 s).
	DialTimeout time.Duration
	// Heartbeat is the interval of ZMTP PINGs to the publisher (default
	// 2 s; negative: none). Once the publisher has answered one, a
	// connection silent for HeartbeatTimeout (default 3 heartbeats) is
	// dropped and made again: that is how a publisher whose host vanished
	// is noticed (a dead TCP peer sends nothing, not even a reset).
	Heartbeat, HeartbeatTimeout time.Duration
	// MaxMessage bounds one received message (default 64 MiB).
	MaxMessage int
	// OnError, if set, hears every failed attempt and lost connection
	// (*ConnError), each once. It must not block.
	OnError func(error)
	// Now is the clock of lag measurements (default time.Now).
	Now func() time.Time
}

// ConnError is a failed connection attempt or a lost connection.
type ConnError struct {
	Op       string // "locate", "dial", "handshake", "read"
	Endpoint string
	Err      error
}

func (e *ConnError) Error() string {
	if e.Endpoint == "" {
		return fmt.Sprintf("kvevents: %s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("kvevents: %s %s: %v", e.Op, e.Endpoint, e.Err)
}

func (e *ConnError) Unwrap() error { return e.Err }

// ErrConfig is what a SubscriberConfig missing its Locator or Handler
// returns.
var ErrConfig = errors.New("kvevents: bad subscriber config")

// Subscriber follows the publisher its Locator names, delivering batches
// and gaps to its Handler from one goroutine.
type Subscriber struct {
	cfg    SubscriberConfig
	cancel context.CancelFunc
	done   chan struct{}

	batches, events, gaps, missed, reconnects, decodeErrs, unknown atomic.Uint64
	lastSeq                                                        atomic.Uint64
	lastLag                                                        atomic.Int64
	connected, heartbeating                                        atomic.Bool
	endpoint                                                       atomic.Pointer[string]

	connMu sync.Mutex
	conn   net.Conn // the live connection, closed by Close to unblock a read
}

// Subscribe starts following. It returns at once; the first Gap (Started)
// reaches the Handler when the first connection is up.
func Subscribe(ctx context.Context, cfg SubscriberConfig) (*Subscriber, error) {
	if cfg.Locator == nil || cfg.Handler == nil {
		return nil, fmt.Errorf("%w: Locator and Handler are required", ErrConfig)
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = 50 * time.Millisecond
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 5 * time.Second
	}
	cfg.MaxBackoff = max(cfg.MaxBackoff, cfg.MinBackoff)
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 3 * time.Second
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = 2 * time.Second
	}
	if cfg.HeartbeatTimeout <= 0 {
		cfg.HeartbeatTimeout = 3 * cfg.Heartbeat
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Subscriber{cfg: cfg, cancel: cancel, done: make(chan struct{})}
	go s.run(ctx)
	return s, nil
}

// Close stops the subscription and waits for its goroutine (so no Handler
// call runs after Close returns). Calling it from the Handler deadlocks.
func (s *Subscriber) Close() error {
	s.cancel()
	s.connMu.Lock()
	if s.conn != nil {
		_ = s.conn.Close()
	}
	s.connMu.Unlock()
	<-s.done
	return nil
}

// Done is closed when the subscription has stopped (Close, or the context
// given to Subscribe ended).
func (s *Subscriber) Done() <-chan struct{} { return s.done }

// Stats reports the counters.
func (s *Subscriber) Stats() SubscriberStats {
	st := SubscriberStats{
		Batches: s.batches.Load(), Events: s.events.Load(), Gaps: s.gaps.Load(),
		Missed: s.missed.Load(), Reconnects: s.reconnects.Load(),
		DecodeErrors: s.decodeErrs.Load(), UnknownEvents: s.unknown.Load(),
		LastSeq: s.lastSeq.Load(), LastLag: time.Duration(s.lastLag.Load()),
		Connected: s.connected.Load(), Heartbeating: s.heartbeating.Load(),
	}
	if ep := s.endpoint.Load(); ep != nil {
		st.Endpoint = *ep
	}
	return st
}

func (s *Subscriber) report(err error) {
	if s.cfg.OnError != nil {
		s.cfg.OnError(err)
	}
}

func (s *Subscriber) gap(g Gap) {
	s.gaps.Add(1)
	s.cfg.Handler.HandleGap(g)
}

// run connects, reads until the connection ends, and connects again.
func (s *Subscriber) run(ctx context.Context) {
	defer close(s.done)
	defer s.connected.Store(false)
	backoff := s.cfg.MinBackoff
	prev := ""       // the endpoint of the last connection that was up
	var last uint64  // the last sequence delivered (0: none yet)
	connections := 0 // connections that were up
	for ctx.Err() == nil {
		ep, conn, err := s.connect(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.report(err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, s.cfg.MaxBackoff)
			continue
		}
		backoff = s.cfg.MinBackoff
		g := Gap{After: last, Endpoint: ep, Reason: Started}
		switch {
		case connections == 0:
		case ep != prev:
			g.Reason = Resubscribed
		default:
			g.Reason = Reconnected
		}
		if connections > 0 {
			s.reconnects.Add(1)
		}
		connections++
		prev = ep
		s.endpoint.Store(&ep)
		s.connected.Store(true)
		s.gap(g)
		var changed atomic.Bool
		last, err = s.serve(ctx, conn, ep, last, &changed)
		s.connected.Store(false)
		s.heartbeating.Store(false)
		if ctx.Err() != nil {
			return
		}
		if !changed.Load() {
			s.report(&ConnError{Op: "read", Endpoint: ep, Err: err})
		}
	}
}

// connect asks the Locator and makes one connection.
func (s *Subscriber) connect(ctx context.Context) (string, *zmtp.Conn, error) {
	lctx, cancel := context.WithTimeout(ctx, s.cfg.DialTimeout)
	defer cancel()
	ep, err := s.cfg.Locator.Endpoint(lctx)
	if err != nil {
		return "", nil, &ConnError{Op: "locate", Err: err}
	}
	addr, err := dialAddress(ep)
	if err != nil {
		return ep, nil, &ConnError{Op: "locate", Endpoint: ep, Err: err}
	}
	var d net.Dialer
	nc, err := d.DialContext(lctx, "tcp", addr)
	if err != nil {
		return ep, nil, &ConnError{Op: "dial", Endpoint: ep, Err: err}
	}
	deadline, _ := lctx.Deadline()
	zc, err := zmtp.Handshake(nc, "SUB", []string{"PUB", "XPUB"}, deadline)
	if err != nil {
		_ = nc.Close()
		return ep, nil, &ConnError{Op: "handshake", Endpoint: ep, Err: err}
	}
	zc.MaxMessage = s.cfg.MaxMessage
	zc.Subscribe(nil) // everything: the master's topic frame is empty
	if err := zc.Flush(); err != nil {
		_ = nc.Close()
		return ep, nil, &ConnError{Op: "handshake", Endpoint: ep, Err: err}
	}
	return ep, zc, nil
}

// serve reads one connection until it fails, ctx ends, or the Locator says
// the endpoint changed (changed is then set). It returns the last sequence
// delivered.
func (s *Subscriber) serve(ctx context.Context, zc *zmtp.Conn, ep string, last uint64, changed *atomic.Bool) (uint64, error) {
	s.connMu.Lock()
	s.conn = zc.NetConn()
	s.connMu.Unlock()
	cctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		_ = zc.Close()
		wg.Wait()
		s.connMu.Lock()
		s.conn = nil
		s.connMu.Unlock()
	}()
	// The connection ends when ctx ends (Close also closes it directly).
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-cctx.Done()
		_ = zc.Close()
	}()
	if w, ok := s.cfg.Locator.(ChangeWatcher); ok {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if w.WaitChange(cctx, ep) == nil && cctx.Err() == nil {
				changed.Store(true)
				_ = zc.Close()
			}
		}()
	}
	var writeMu sync.Mutex // the pinger and PONG replies share the writer
	var ponged atomic.Bool
	if s.cfg.Heartbeat > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(s.cfg.Heartbeat)
			defer t.Stop()
			for {
				select {
				case <-cctx.Done():
					return
				case <-t.C:
					writeMu.Lock()
					zc.Ping(s.cfg.HeartbeatTimeout, nil)
					err := zc.Flush()
					writeMu.Unlock()
					if err != nil {
						return
					}
				}
			}
		}()
	}
	var (
		m   zmtp.Message
		dec decoder
		b   Batch
	)
	nc := zc.NetConn()
	first := true
	for {
		if ponged.Load() {
			_ = nc.SetReadDeadline(time.Now().Add(s.cfg.HeartbeatTimeout))
		}
		if err := zc.Read(&m); err != nil {
			return last, err
		}
		switch m.Command {
		case "":
		case "PONG":
			ponged.Store(true)
			s.heartbeating.Store(true)
			continue
		case "PING":
			writeMu.Lock()
			zc.PongFor(&m)
			err := zc.Flush()
			writeMu.Unlock()
			if err != nil {
				return last, err
			}
			continue
		case "ERROR":
			return last, fmt.Errorf("publisher sent ERROR")
		default:
			continue
		}
		if err := dec.decodeMessage(&b, m.Frames); err != nil {
			// Not delivered: if the sequence frame was readable, the next
			// batch shows the hole as a SequenceGap.
			s.decodeErrs.Add(1)
			s.report(&ConnError{Op: "decode", Endpoint: ep, Err: err})
			continue
		}
		if dec.unknown != 0 {
			s.unknown.Add(dec.unknown)
			dec.unknown = 0
		}
		// The first batch of a connection follows the connection's Gap;
		// after it, every sequence must be the last one plus one.
		if !first && b.Seq != last+1 {
			if b.Seq > last+1 {
				s.missed.Add(b.Seq - last - 1)
			}
			s.gap(Gap{After: last, Before: b.Seq, Reason: SequenceGap, Endpoint: ep})
		}
		first = false
		last = b.Seq
		s.lastSeq.Store(last)
		s.batches.Add(1)
		s.events.Add(uint64(len(b.Events)))
		s.lastLag.Store(int64(s.cfg.Now().Sub(b.Time)))
		s.cfg.Handler.HandleBatch(&b)
	}
}
