//go:build cgo

package faults

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/internal/testcluster"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/kvevents"
)

// TestHAKVEventsFollowLeader: a subscriber on a kvevents.LeaderLocator
// follows an HA master group's leader. Two masters with KV event
// publishers (each on its own loopback port) elect a leader through etcd or
// Redis; a Go client's put arrives from the leader's publisher; the leader
// is SIGKILLed; the subscriber reports a Resubscribed gap naming the new
// leader's publisher and receives the next put from it.
func TestHAKVEventsFollowLeader(t *testing.T) {
	for _, backend := range []string{"etcd", "redis"} {
		t.Run(backend, func(t *testing.T) { testHAKVEventsFollowLeader(t, backend) })
	}
}

// eventLog is a Handler keeping what arrives.
type eventLog struct {
	mu     sync.Mutex
	events []kvevents.Event
	gaps   []kvevents.Gap
}

func (l *eventLog) HandleBatch(b *kvevents.Batch) {
	l.mu.Lock()
	l.events = append(l.events, b.Events...)
	l.mu.Unlock()
}

func (l *eventLog) HandleGap(g kvevents.Gap) {
	l.mu.Lock()
	l.gaps = append(l.gaps, g)
	l.mu.Unlock()
}

// wait polls until ok holds for what arrived, or fails after d.
func (l *eventLog) wait(t *testing.T, d time.Duration, what string, ok func([]kvevents.Event, []kvevents.Gap) bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		l.mu.Lock()
		done := ok(l.events, l.gaps)
		l.mu.Unlock()
		if done {
			return
		}
		if time.Now().After(deadline) {
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Fatalf("%s: not after %v (gaps %+v, %d events)", what, d, l.gaps, len(l.events))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func testHAKVEventsFollowLeader(t *testing.T, backend string) {
	requireHA(t, backend)
	server := startServer(t, backend)
	ha := &testcluster.HA{Backend: backend, Connstring: server.Addr(), ClusterID: haClusterID, SnapshotDir: t.TempDir()}
	var ms []*testcluster.Master
	pubOf := map[string]string{}
	idOf := map[string]string{}
	for i := 0; i < 2; i++ {
		id := fmt.Sprintf("master-%d", i)
		m := startMaster(t, testcluster.Options{HA: ha, KVEvents: &testcluster.KVEvents{BackendID: id},
			LogName: fmt.Sprintf("ha-kv-%s-%d.log", backend, i)})
		ms = append(ms, m)
		pubOf[m.Addr()], idOf[m.KVEventsEndpoint()] = m.KVEventsEndpoint(), id
	}
	leader, err := testcluster.WaitLeader(ms, haElectBound)
	if err != nil {
		t.Fatal(err)
	}
	if err := leader.WaitKVEvents(10 * time.Second); err != nil {
		unavailable(t, err)
	}
	loc, err := kvevents.NewLeaderLocator(kvevents.LeaderConfig{
		MasterAddress: backend + "://" + server.Addr(), ClusterID: haClusterID,
		Publisher: func(leader string) (string, error) {
			if ep, ok := pubOf[leader]; ok {
				return ep, nil
			}
			return "", fmt.Errorf("leader %q is none of the test's masters", leader)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer loc.Close()
	log := &eventLog{}
	sub, err := kvevents.Subscribe(context.Background(), kvevents.SubscriberConfig{
		Locator: loc, Handler: log, MinBackoff: 50 * time.Millisecond, MaxBackoff: 500 * time.Millisecond,
		Heartbeat: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()

	st, err := mooncake.Open(haConfig(ha, backend+"://"+server.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	has := func(key, from string) func([]kvevents.Event, []kvevents.Gap) bool {
		return func(evs []kvevents.Event, _ []kvevents.Gap) bool {
			for _, ev := range evs {
				if ev.Key == key && ev.Kind == kvevents.Stored && ev.Backend == from {
					return true
				}
			}
			return false
		}
	}
	// Until the subscription has reached the leader's publisher.
	for i := 0; ; i++ {
		if err := st.Upsert("ha-kv/probe", []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		log.mu.Lock()
		n := len(log.events)
		log.mu.Unlock()
		if n > 0 {
			break
		}
		if i == 100 {
			t.Fatal("no event from the leader's publisher")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := st.Put("ha-kv/before", []byte("b")); err != nil {
		t.Fatal(err)
	}
	log.wait(t, 10*time.Second, "the put before the failover", has("ha-kv/before", idOf[leader.KVEventsEndpoint()]))

	killed := time.Now()
	leader.Kill()
	var next *testcluster.Master
	for _, m := range ms {
		if m != leader {
			next = m
		}
	}
	var resubscribed time.Duration
	log.wait(t, haRecoverBound, "a Resubscribed gap to the new leader", func(_ []kvevents.Event, gaps []kvevents.Gap) bool {
		for _, g := range gaps {
			if g.Reason == kvevents.Resubscribed && g.Endpoint == next.KVEventsEndpoint() {
				resubscribed = time.Since(killed)
				return true
			}
		}
		return false
	})
	deadline := time.Now().Add(haRecoverBound)
	for {
		err := st.Put("ha-kv/after", []byte("a"))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no put succeeded after the failover: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	log.wait(t, 10*time.Second, "the put after the failover", has("ha-kv/after", idOf[next.KVEventsEndpoint()]))
	log.mu.Lock()
	gaps := append([]kvevents.Gap(nil), log.gaps...)
	log.mu.Unlock()
	t.Logf("%s: leader killed; resubscribed to the new leader's publisher %v later, its first event %v after the kill; gaps %+v; stats %+v",
		backend, resubscribed.Round(time.Millisecond), time.Since(killed).Round(time.Millisecond), gaps, sub.Stats())
}
