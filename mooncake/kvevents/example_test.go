package kvevents_test

import (
	"context"
	"fmt"
	"time"

	"github.com/mooncake-go/mooncake-go/mooncake/kvevents"
)

// printer prints what a subscription delivers and signals each batch.
type printer struct{ batches chan struct{} }

func (p printer) HandleBatch(b *kvevents.Batch) {
	for _, ev := range b.Events {
		fmt.Printf("batch %d: %v %s (seq hash %v %d)\n", b.Seq, ev.Kind, ev.Key, ev.HasSeqHash, ev.SeqHash)
	}
	p.batches <- struct{}{}
}

func (p printer) HandleGap(g kvevents.Gap) { fmt.Printf("gap: %v after %d\n", g.Reason, g.After) }

// Subscribe to a publisher (here one in the process; a master's is
// tcp://<master host>:<--kv_events_bind_endpoint port>). Every connection
// begins with a gap: a consumer that mirrors the store resynchronises then.
func ExampleSubscribe() {
	pub, err := kvevents.NewPublisher("tcp://127.0.0.1:0", "example", kvevents.PublisherOptions{})
	if err != nil {
		panic(err)
	}
	defer pub.Close()

	p := printer{batches: make(chan struct{}, 16)}
	sub, err := kvevents.Subscribe(context.Background(), kvevents.SubscriberConfig{
		Locator: kvevents.Static(pub.Endpoint()),
		Handler: p,
	})
	if err != nil {
		panic(err)
	}
	defer sub.Close()
	for pub.Subscribers() == 0 { // a ZMQ publisher drops what it sends before
		time.Sleep(time.Millisecond)
	}
	_ = pub.Publish([]kvevents.Event{{Kind: kvevents.Stored, Key: "12345", Medium: "cpu"}})
	<-p.batches
	_ = pub.Publish([]kvevents.Event{{Kind: kvevents.Removed, Key: "page-a_0_k", Medium: "cpu"}})
	<-p.batches
	st := sub.Stats()
	fmt.Println("events:", st.Events, "gaps:", st.Gaps)
	// Output:
	// gap: started after 0
	// batch 1: stored 12345 (seq hash true 12345)
	// batch 2: removed page-a_0_k (seq hash false 0)
	// events: 2 gaps: 1
}

// Follow the leader of an HA master group: its record in etcd or Redis
// names the leader's RPC address, and the deployment's rule maps it to the
// leader's publisher (every master binding port 5557 here).
func ExampleNewLeaderLocator() {
	loc, err := kvevents.NewLeaderLocator(kvevents.LeaderConfig{
		MasterAddress: "redis://127.0.0.1:6379",
		ClusterID:     "my-cluster",
		Publisher:     kvevents.PublisherPort(5557),
	})
	if err != nil {
		panic(err)
	}
	defer loc.Close()
	// kvevents.Subscribe(ctx, kvevents.SubscriberConfig{Locator: loc, Handler: h})
	// re-subscribes when the leader changes (a Resubscribed gap).
	fmt.Println("ready")
	// Output: ready
}
