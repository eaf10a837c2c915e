//go:build cgo

package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/hostcache/prefix"
	"github.com/mooncake-go/mooncake-go/internal/testcluster"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

// haUnavailable ends the HA test on a machine that cannot run it: a skip,
// or a failure where make chaos-ha requires it (MCGO_REQUIRE_HA=1).
func haUnavailable(t *testing.T, why any) {
	t.Helper()
	if os.Getenv("MCGO_REQUIRE_HA") == "1" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// TestHAIndexFollowsLeader: a real HA group of two masters electing their
// leader in etcd, each started with its KV event publisher; the command in
// index mode is given both publishers. The leader is SIGKILLed while pages
// are stored; the command follows the new leader's publisher, resyncs, and
// answers as the store does (which, with etcd's oplog, keeps every object).
// make chaos-ha runs it (a process of its own: upstream keeps one etcd
// client per process).
func TestHAIndexFollowsLeader(t *testing.T) {
	mooncaketest.RequireNative(t)
	if !mooncake.Backend().Capabilities.MasterEtcd {
		haUnavailable(t, "the native library's upstream was built without the etcd HA backend")
	}
	etcd, err := testcluster.StartEtcd(t.TempDir())
	if err != nil {
		haUnavailable(t, err)
	}
	t.Cleanup(etcd.Stop)
	ha := &testcluster.HA{Backend: "etcd", Connstring: etcd.Addr(), ClusterID: "mcgo-prefix-ha"}
	var ms []*testcluster.Master
	var endpoints []string
	for i := 0; i < 2; i++ {
		m, err := testcluster.Start(testcluster.Options{HA: ha, KVEvents: &testcluster.KVEvents{}, Quiet: true,
			LogDir: "../../build/cluster-logs", LogName: fmt.Sprintf("prefix-ha-%d.log", i)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Stop)
		ms, endpoints = append(ms, m), append(endpoints, m.KVEventsEndpoint())
	}
	leader, err := testcluster.WaitLeader(ms, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := leader.WaitKVEvents(20 * time.Second); err != nil {
		if errors.Is(err, testcluster.ErrNoKVEvents) && os.Getenv("MCGO_REQUIRE_KV_EVENTS") != "1" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	cfg := mooncake.Config{LocalHostname: "127.0.0.1", MetadataServer: "P2PHANDSHAKE", GlobalSegmentSize: 64 << 20,
		LocalBufferSize: 16 << 20, Protocol: "tcp", MasterServerAddress: "etcd://" + etcd.Addr(), ClusterID: ha.ClusterID}
	open := func(seg, buf mooncake.Size) *mooncake.Store {
		c := cfg
		c.GlobalSegmentSize, c.LocalBufferSize = seg, buf
		st, err := mooncake.Open(c)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	writer, reader := open(64<<20, 16<<20), open(0, 0)

	o, err := parse([]string{"-page-size", "4", "-tp-size", "2", "-mode", "index", "-events", strings.Join(endpoints, ",")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svc, err := newService(ctx, o, reader, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.close()
	srv := httptest.NewServer(svc.handler())
	defer srv.Close()
	h, _ := prefix.NewHasher(o.hash)
	s, _ := prefix.NewScheme(o.scheme)
	// put stores every key of pages, retrying while the cluster fails over.
	put := func(pages []prefix.Digest) {
		t.Helper()
		var k hostmem.Keys
		s.AppendPageKeys(&k, pages)
		for _, key := range k.Strings() {
			deadline := time.Now().Add(time.Minute)
			for {
				err := writer.Put(key, []byte("page"))
				if err == nil || errors.Is(err, mooncake.ErrObjectAlreadyExists) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("put %s: %v", key, err)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	rng := rand.New(rand.NewPCG(11, 12))
	waitFor(t, "ready", func() bool { ok, _ := svc.ready(); return ok })
	for i := 0; svc.x.Stats().Complete == 0; i++ {
		if i == 100 {
			t.Fatal("no event from the leader after 100 sentinel pages")
		}
		ds, _ := h.AppendPages(nil, nil, randomTokens(rng, 4))
		put(ds)
		time.Sleep(10 * time.Millisecond)
	}
	var prompts [][]uint32
	base := randomTokens(rng, 12*4)
	for i := 0; i < 8; i++ {
		prompts = append(prompts, append(append([]uint32(nil), base[:rng.IntN(12)*4]...), randomTokens(rng, 4*(1+rng.IntN(6)))...))
	}
	// agree waits until every prompt's answer is the store's.
	agree := func(phase string) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			var diffs []string
			for i, p := range prompts {
				ds, _ := h.AppendPages(nil, nil, p)
				var k hostmem.Keys
				s.AppendPageKeys(&k, ds)
				res, err := reader.BatchIsExist(&k, nil)
				want := 0
				for err == nil && want < len(ds) && allOne(res[want*s.ComponentsPerPage():(want+1)*s.ComponentsPerPage()]) {
					want++
				}
				_, r, _ := post(t, srv.URL, tokensJSON(p, ""))
				if err != nil || r.Pages != want {
					diffs = append(diffs, fmt.Sprintf("prompt %d: command %d pages, store %d (%v)", i, r.Pages, want, err))
				}
			}
			if len(diffs) == 0 {
				t.Logf("%s: the command agrees with the store (%+v)", phase, svc.x.Stats())
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: after a minute:\n%s\nindex %+v\nsubscriber %+v", phase, strings.Join(diffs, "\n"), svc.x.Stats(), svc.sub.Stats())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	var before hostmem.Keys
	for i := 0; i < len(prompts); i += 2 {
		ds, _ := h.AppendPages(nil, nil, prompts[i])
		n := rng.IntN(len(ds) + 1)
		put(ds[:n])
		s.AppendPageKeys(&before, ds[:n])
	}
	agree("before the failover")

	killed := time.Now()
	leader.Kill()
	for i := 1; i < len(prompts); i += 2 {
		ds, _ := h.AppendPages(nil, nil, prompts[i])
		put(ds)
	}
	ds, _ := h.AppendPages(nil, nil, prompts[0])
	if len(ds) > 0 {
		if err := writer.Remove(s.Key(ds[0], 0), true); err != nil && !errors.Is(err, mooncake.ErrObjectNotFound) {
			t.Fatal(err)
		}
	}
	agree("after the failover")
	if res, err := reader.BatchIsExist(&before, nil); err == nil {
		kept := 0
		for _, r := range res {
			if r == 1 {
				kept++
			}
		}
		t.Logf("keys stored before the failover: %d of %d still there (the index agrees either way)", kept, len(res))
	}
	ss := svc.sub.Stats()
	if ss.Endpoint == leader.KVEventsEndpoint() || !ss.Connected {
		t.Fatalf("the subscriber did not follow the new leader: %+v", ss)
	}
	t.Logf("followed the new leader's publisher %s; %v after the kill", ss.Endpoint, time.Since(killed).Round(time.Millisecond))
}

func allOne(s []int64) bool {
	for _, x := range s {
		if x != 1 {
			return false
		}
	}
	return true
}
