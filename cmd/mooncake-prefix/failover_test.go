//go:build cgo

package main

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/kvevents"
)

func TestLocatorOf(t *testing.T) {
	for _, tc := range []struct {
		events string
		n      int // members; 0: refused
	}{
		{"tcp://127.0.0.1:5557", 1},
		{"tcp://a:1,tcp://b:2", 2},
		{" tcp://a:1 , tcp://b:2 ,tcp://c:3", 3},
		{"127.0.0.1:5557", 0},
		{"tcp://*:5557", 0},
		{"tcp://a:0", 0},
		{"tcp://a:1,", 0},
		{"ipc:///tmp/x", 0},
	} {
		_, members, err := locatorOf(tc.events)
		if (err == nil) != (tc.n > 0) || len(members) != tc.n {
			t.Errorf("%q: %d members, %v; want %d", tc.events, len(members), err, tc.n)
		}
	}
}

// TestLocateLeader: leader:PORT reads the leader of the HA group of the
// cluster's master address, which must be etcd:// or redis://.
func TestLocateLeader(t *testing.T) {
	for _, tc := range []struct {
		master string
		ok     bool
	}{{"etcd://127.0.0.1:2379", true}, {"redis://127.0.0.1:6379", true}, {"127.0.0.1:50051", false}} {
		loc, err := locate("leader:5557", mooncake.Config{MasterServerAddress: tc.master})
		if _, isLeader := loc.(*kvevents.LeaderLocator); (err == nil && isLeader) != tc.ok {
			t.Errorf("%s: %T %v", tc.master, loc, err)
		}
	}
	if loc, err := locate("tcp://127.0.0.1:5557", mooncake.Config{}); err != nil || loc == nil {
		t.Fatalf("a static endpoint: %v", err)
	}
}

// TestMemberLocator: the member that accepts is named; after it, the
// next attempt starts with the member after it.
func TestMemberLocator(t *testing.T) {
	var pubs [3]*kvevents.Publisher
	var eps []string
	for i := range pubs {
		p, err := kvevents.NewPublisher("tcp://127.0.0.1:0", "m", kvevents.PublisherOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		pubs[i] = p
		eps = append(eps, p.Endpoint())
	}
	pubs[0].Close() // a standby: nothing listens
	l := newMemberLocator(eps)
	ctx := context.Background()
	for i, want := range []int{1, 2, 1} {
		ep, err := l.Endpoint(ctx)
		if err != nil || ep != eps[want] {
			t.Fatalf("call %d: %q %v, want member %d", i, ep, err, want)
		}
	}
	pubs[1].Close()
	pubs[2].Close()
	if _, err := l.Endpoint(ctx); err == nil || !strings.Contains(err.Error(), "no publisher of 3 masters") {
		t.Fatalf("no member listening: %v", err)
	}
}

// TestLookupIndexFailover: the command follows an HA group's leader: the
// old leader's publisher goes away with changes it never published; the
// new leader's starts; the index resyncs what it held, learns what it
// missed, and follows the new leader's events.
func TestLookupIndexFailover(t *testing.T) {
	a, err := kvevents.NewPublisher("tcp://127.0.0.1:0", "leader-a", kvevents.PublisherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := kvevents.NewPublisher("tcp://127.0.0.1:0", "leader-b", kvevents.PublisherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bEndpoint := b.Endpoint()
	b.Close() // the standby binds no publisher
	h := newHarness(t, "-mode", "index", "-events", a.Endpoint()+","+bEndpoint)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svc, srv := h.service(ctx)
	waitFor(t, "ready", func() bool { c, _ := get(t, srv.URL+"/readyz"); return c == 200 })
	waitFor(t, "the subscription", func() bool { return a.Subscribers() == 1 })

	rng := rand.New(rand.NewPCG(9, 10))
	toks := randomTokens(rng, 8*4)
	ds, _ := h.hasher.AppendPages(nil, nil, toks)
	publish := func(p *kvevents.Publisher, kind kvevents.Kind, keys ...string) {
		t.Helper()
		var evs []kvevents.Event
		for _, k := range keys {
			evs = append(evs, kvevents.Event{Kind: kind, Key: k})
		}
		if err := p.Publish(evs); err != nil {
			t.Fatal(err)
		}
	}
	publish(a, kvevents.Stored, h.store(ds[:6])...)
	lookup := func() int { _, r, _ := post(t, srv.URL, tokensJSON(toks, "")); return r.Pages }
	waitFor(t, "the old leader's events", func() bool { return lookup() == 6 })

	// The leader fails; before its publisher is gone page 2 loses a
	// component and pages 6 and 7 are stored, none of it published.
	a.Close()
	comps := h.scheme.ComponentsPerPage()
	if err := h.writer.Remove(h.scheme.Key(ds[2], comps-1), true); err != nil {
		t.Fatal(err)
	}
	h.store(ds[6:])
	b, err = kvevents.NewPublisher(bEndpoint, "leader-b", kvevents.PublisherOptions{})
	if err != nil {
		t.Fatalf("the new leader's publisher on %s: %v", bEndpoint, err)
	}
	defer b.Close()
	waitFor(t, "the new leader's subscription", func() bool { return b.Subscribers() == 1 })
	waitFor(t, "the resync", func() bool { return lookup() == 2 })

	// The new leader's events: page 2 whole again; the pages after it were
	// stored while no events came and are learned when looked up.
	key := h.scheme.Key(ds[2], comps-1)
	if err := h.writer.Put(key, []byte("page")); err != nil {
		t.Fatal(err)
	}
	publish(b, kvevents.Stored, key)
	waitFor(t, "the new leader's events and learning", func() bool { return lookup() == 8 })
	_, metrics := get(t, srv.URL+"/metrics")
	for _, want := range []string{
		`mooncake_prefix_event_gaps_total{reason="started"} 1`,
		`mooncake_prefix_event_gaps_total{reason="resubscribed"} 1`,
		`mooncake_prefix_index_resyncs_total 2`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if s := svc.sub.Stats(); s.Endpoint != bEndpoint {
		t.Fatalf("subscriber %+v, want on %s", s, bEndpoint)
	}
}
