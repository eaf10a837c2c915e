package mooncaketest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/mooncake-go/mooncake-go/internal/cabi"
	"github.com/mooncake-go/mooncake-go/internal/cabi/cstore"
	"github.com/mooncake-go/mooncake-go/internal/codes"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/kvevents"
)

// ErrNotEmbedded: StartKVEvents needs the embedded engine; a real master
// publishes its own events (--enable_kv_events).
var ErrNotEmbedded = errors.New("mooncaketest: KV events of an embedded master need the embedded engine")

// KVEventsOptions configure StartKVEvents; the zero value is upstream's
// defaults on a free loopback port.
type KVEventsOptions struct {
	Endpoint  string // where to bind (default tcp://127.0.0.1:0)
	BackendID string // backend_id of the events (default "embedded")
	// QueueCapacity bounds the master's event queue (default 65536): when
	// it is full the oldest event is dropped, and a sequence number with it.
	QueueCapacity uint64
	Publisher     kvevents.PublisherOptions
}

// KVEvents is the KV event publisher of an embedded cluster's master: what
// upstream's master publishes with --enable_kv_events, for the same
// operations (cgo/embedded/store/kv_events.h), on a kvevents.Publisher.
type KVEvents struct {
	address string
	pub     *kvevents.Publisher
	done    chan struct{}
	once    sync.Once
	err     error
}

// StartKVEvents starts recording the KV events of the embedded cluster whose
// clients use masterAddress (it may not exist yet) and publishing them.
func StartKVEvents(masterAddress string, opts KVEventsOptions) (*KVEvents, error) {
	if opts.Endpoint == "" {
		opts.Endpoint = "tcp://127.0.0.1:0"
	}
	if opts.BackendID == "" {
		opts.BackendID = "embedded"
	}
	if err := cabi.Select(); err != nil {
		return nil, err
	}
	if cabi.BackendName() != "embedded" {
		return nil, fmt.Errorf("%w (the backend is %s)", ErrNotEmbedded, cabi.BackendName())
	}
	pub, err := kvevents.NewPublisher(opts.Endpoint, opts.BackendID, opts.Publisher)
	if err != nil {
		return nil, err
	}
	if rc := cstore.KVEventsStart(masterAddress, opts.QueueCapacity); rc != 0 {
		_ = pub.Close()
		return nil, fmt.Errorf("mooncaketest: start KV events of %q: %s (%d)", masterAddress, codes.StoreName(int64(rc)), rc)
	}
	k := &KVEvents{address: masterAddress, pub: pub, done: make(chan struct{})}
	go k.pump()
	return k, nil
}

// Endpoint is where the publisher listens.
func (k *KVEvents) Endpoint() string { return k.pub.Endpoint() }

// Publisher is the publisher (its Stats, Subscribers).
func (k *KVEvents) Publisher() *kvevents.Publisher { return k.pub }

// Close stops recording (what is queued is dropped) and the publisher.
func (k *KVEvents) Close() error {
	k.once.Do(func() {
		cstore.KVEventsStop(k.address)
		<-k.done
		_ = k.pub.Close()
	})
	return k.err
}

// pump moves the master's batches to the publisher, as upstream's worker
// thread moves its queue to the ZMQ socket.
func (k *KVEvents) pump() {
	defer close(k.done)
	buf := make([]byte, 1<<20)
	var b kvevents.Batch
	nextID := uint64(1)
	for {
		n, seq, used, _, rc := cstore.KVEventsDrain(k.address, 100, buf)
		switch {
		case rc == int32(mooncake.ErrBufferOverflow):
			buf = make([]byte, used)
			continue
		case rc != 0:
			if rc != int32(mooncake.ErrObjectNotFound) {
				k.err = fmt.Errorf("mooncaketest: drain KV events: %s (%d)", codes.StoreName(int64(rc)), rc)
			}
			return
		case n == 0:
			continue
		}
		b.Seq, b.Events = seq, b.Events[:0]
		p := buf[:used]
		for i := uint32(0); i < n; i++ {
			kl, gl := binary.LittleEndian.Uint32(p[2:]), binary.LittleEndian.Uint32(p[6:])
			ev := kvevents.Event{Kind: kvevents.Stored, ID: nextID, Medium: "cpu", Tenant: "default",
				Key: string(p[10 : 10+kl]), Group: string(p[10+kl : 10+kl+gl])}
			if p[0] == 2 {
				ev.Kind = kvevents.Removed
			}
			ev.SeqHash, ev.HasSeqHash = kvevents.ParseSeqHash(ev.Key)
			nextID++
			b.Events = append(b.Events, ev)
			p = p[10+kl+gl:]
		}
		if err := k.pub.Send(&b); err != nil {
			return
		}
	}
}

// KVEvents returns the endpoint of the KV event publisher of the cluster's
// master. On the embedded engine it starts one (StartKVEvents), stopped
// when the test ends. On a live cluster it is MCGO_TEST_KV_EVENTS, which
// scripts/cluster -kv-events sets when the master publishes; without it the
// test is skipped, or fails where events are required
// (MCGO_REQUIRE_KV_EVENTS=1, as make test-native sets for an upstream
// built with ENABLE_KV_EVENTS).
func (c *Cluster) KVEvents(t testing.TB) string {
	t.Helper()
	if c.Native {
		if ep := os.Getenv("MCGO_TEST_KV_EVENTS"); ep != "" {
			return ep
		}
		if os.Getenv("MCGO_REQUIRE_KV_EVENTS") == "1" {
			t.Fatal("MCGO_REQUIRE_KV_EVENTS=1 but MCGO_TEST_KV_EVENTS is not set: run under scripts/cluster -kv-events with a master built with ENABLE_KV_EVENTS")
		}
		t.Skip("the cluster's master publishes no KV events (MCGO_TEST_KV_EVENTS unset; an upstream built with ENABLE_KV_EVENTS under scripts/cluster -kv-events sets it)")
	}
	k, err := StartKVEvents(c.base.MasterServerAddress, KVEventsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := k.Close(); err != nil {
			t.Error(err)
		}
	})
	return k.Endpoint()
}
