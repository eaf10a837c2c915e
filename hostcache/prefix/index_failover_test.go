package prefix_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/hostcache/prefix"
	"github.com/mooncake-go/mooncake-go/mooncake/kvevents"
)

// leaderLocator names the publisher of the current leader and tells when it
// changes (a kvevents.ChangeWatcher), as an HA locator does.
type leaderLocator struct {
	mu      sync.Mutex
	ep      string
	changed chan struct{} // closed and replaced at each change
}

func newLeaderLocator(ep string) *leaderLocator {
	return &leaderLocator{ep: ep, changed: make(chan struct{})}
}

func (l *leaderLocator) Endpoint(context.Context) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ep, nil
}

func (l *leaderLocator) WaitChange(ctx context.Context, ep string) error {
	for {
		l.mu.Lock()
		cur, ch := l.ep, l.changed
		l.mu.Unlock()
		if cur != ep {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (l *leaderLocator) failover(ep string) {
	l.mu.Lock()
	l.ep = ep
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

// gapLog is the index as a handler, recording the gaps' reasons.
type gapLog struct {
	x    *prefix.Index
	mu   sync.Mutex
	gaps []kvevents.GapReason
}

func (g *gapLog) HandleBatch(b *kvevents.Batch) { g.x.HandleBatch(b) }
func (g *gapLog) HandleGap(gap kvevents.Gap) {
	g.mu.Lock()
	g.gaps = append(g.gaps, gap.Reason)
	g.mu.Unlock()
	g.x.HandleGap(gap)
}

func (g *gapLog) reasons() []kvevents.GapReason {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.gaps)
}

// TestIndexFailover: the master's leader changes; the events of the old
// leader's last moments are lost (the store changed without them). The
// subscriber follows the locator to the new leader's publisher, the index
// resyncs what it held and learns what was stored meanwhile, and takes the
// new leader's events.
func TestIndexFailover(t *testing.T) {
	f := newFixture(t, 4)
	st := newFakeStore()
	x := newIndex(t, prefix.IndexConfig{Scheme: f.scheme, Hasher: f.hasher, Resync: st})
	var pubs [2]*kvevents.Publisher
	for i := range pubs {
		p, err := kvevents.NewPublisher("tcp://127.0.0.1:0", "leader", kvevents.PublisherOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		pubs[i] = p
	}
	loc := newLeaderLocator(pubs[0].Endpoint())
	h := &gapLog{x: x}
	sub, err := kvevents.Subscribe(context.Background(), kvevents.SubscriberConfig{Locator: loc, Handler: h, MinBackoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	waitFor(t, "the first connection", func() bool { return pubs[0].Subscribers() == 1 && !x.Stats().Resyncing })

	rng := rand.New(rand.NewPCG(51, 52))
	a := prompt(rng, nil, 0, 8, f.pageSize)
	da := f.digests(a)
	publish := func(p *kvevents.Publisher, kind kvevents.Kind, keys []string) {
		t.Helper()
		var evs []kvevents.Event
		for _, k := range keys {
			st.set(k, kind == kvevents.Stored)
			evs = append(evs, kvevents.Event{Kind: kind, Key: k})
		}
		if err := p.Publish(evs); err != nil {
			t.Fatal(err)
		}
	}
	publish(pubs[0], kvevents.Stored, f.pageKeys(da...))
	waitFor(t, "the old leader's events", func() bool { return x.LookupDigests(da).Pages == 8 })

	// Lost with the old leader: page 5 of a loses a component, b is stored.
	st.set(f.keys(da[5])[1], false)
	b := prompt(rng, a, 3, 7, f.pageSize)
	db := f.digests(b)
	for _, k := range f.pageKeys(db...) {
		st.set(k, true)
	}
	loc.failover(pubs[1].Endpoint())
	waitFor(t, "the new leader's subscription", func() bool { return pubs[1].Subscribers() == 1 })
	waitFor(t, "the resync", func() bool { s := x.Stats(); return s.Resyncs >= 2 && !s.Resyncing })
	if r := x.LookupDigests(da); r.Pages != 5 {
		t.Fatalf("after the failover: %+v, want 5 (page 5 lost a component while no events came)", r)
	}
	// b was stored while no events came: a lookup's miss learns it.
	x.LookupDigests(db)
	waitFor(t, "learning b", func() bool { return x.LookupDigests(db).Pages == 7 })
	// The new leader's events are followed.
	publish(pubs[1], kvevents.Stored, f.keys(da[5])[1:2])
	waitFor(t, "the new leader's events", func() bool { return x.LookupDigests(da).Pages == 8 })
	if got := h.reasons(); !slices.Equal(got, []kvevents.GapReason{kvevents.Started, kvevents.Resubscribed}) {
		t.Fatalf("gaps %v, want started then resubscribed", got)
	}
	if s := sub.Stats(); s.Endpoint != pubs[1].Endpoint() || !s.Connected {
		t.Fatalf("subscriber %+v", s)
	}
}
