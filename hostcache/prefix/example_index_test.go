package prefix_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/hostcache/prefix"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/kvevents"
)

// An index fed events by hand (a subscriber calls HandleBatch the same
// way): a page counts once all its keys are stored, and a removal of one
// ends the prefix there.
func ExampleIndex() {
	h, _ := prefix.NewHasher(prefix.HashConfig{PageSize: 4})
	s, _ := prefix.NewScheme(prefix.SchemeConfig{Keys: hostcache.KeyConfig{TPSize: 1}})
	x, err := prefix.NewIndex(prefix.IndexConfig{Scheme: s, Hasher: h, MaxPages: 1 << 16})
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()

	prompt := []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}
	pages, _ := h.AppendPages(nil, nil, prompt)
	var keys hostmem.Keys
	s.AppendPageKeys(&keys, pages[:2]) // pages 0 and 1: "<hash>_0_k", "<hash>_0_v"
	stored := &kvevents.Batch{Seq: 1}
	for _, k := range keys.Strings() {
		stored.Events = append(stored.Events, kvevents.Event{Kind: kvevents.Stored, Key: k})
	}
	x.HandleBatch(stored)

	r, _ := x.Lookup(nil, prompt)
	fmt.Println(r.Pages, "of", r.Hashed, "pages cached; continue from", r.LastHash.String()[:16])

	x.HandleBatch(&kvevents.Batch{Seq: 2, Events: []kvevents.Event{{Kind: kvevents.Removed, Key: s.Key(pages[1], 1)}}})
	r, _ = x.Lookup(nil, prompt)
	fmt.Println(r.Pages, "of", r.Hashed, "pages cached")
	// Output:
	// 2 of 3 pages cached; continue from 4ebfa8a1f3c34151
	// 1 of 3 pages cached
}

// A router's index following a master's KV events: Subscribe with the
// index as the handler. Here the publisher is a kvevents.Publisher in the
// same process; against a cluster it is the master's
// --kv_events_bind_endpoint, and Resync is the store client
// (*mooncake.Store) that checks the index after a gap.
func ExampleIndex_subscribe() {
	pub, err := kvevents.NewPublisher("tcp://127.0.0.1:0", "example", kvevents.PublisherOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer pub.Close()

	h, _ := prefix.NewHasher(prefix.HashConfig{PageSize: 4})
	s, _ := prefix.NewScheme(prefix.SchemeConfig{Keys: hostcache.KeyConfig{TPSize: 1}})
	x, _ := prefix.NewIndex(prefix.IndexConfig{Scheme: s, Hasher: h})
	defer x.Close()
	sub, err := kvevents.Subscribe(context.Background(), kvevents.SubscriberConfig{Locator: kvevents.Static(pub.Endpoint()), Handler: x})
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()
	for pub.Subscribers() == 0 {
		time.Sleep(time.Millisecond)
	}

	prompt := []uint32{1, 2, 3, 4, 5, 6, 7, 8}
	pages, _ := h.AppendPages(nil, nil, prompt)
	var evs []kvevents.Event
	for i := 0; i < s.ComponentsPerPage(); i++ {
		evs = append(evs, kvevents.Event{Kind: kvevents.Stored, Key: s.Key(pages[0], i)})
	}
	pub.Publish(evs) // what the master does when SGLang stores page 0
	for x.Stats().Complete == 0 {
		time.Sleep(time.Millisecond)
	}
	r, _ := x.Lookup(nil, prompt)
	fmt.Println(r.Pages, "of", r.Hashed, "pages cached")
	// Output:
	// 1 of 2 pages cached
}
