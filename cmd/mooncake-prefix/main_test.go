//go:build cgo

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/hostcache/prefix"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/kvevents"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // "" = accepted; else part of the error
	}{
		{nil, ""},
		{[]string{"-mode", "index", "-events", "tcp://127.0.0.1:5557"}, ""},
		{[]string{"-mode", "index"}, "needs -events"},
		{[]string{"-mode", "index", "-events", "leader:5557"}, ""},
		{[]string{"-mode", "index", "-events", "leader:x"}, "want leader:PORT"},
		{[]string{"-mode", "index", "-events", "tcp://a:1,b:2"}, "want tcp://host:port"},
		{[]string{"-mode", "sideways"}, "want direct or index"},
		{[]string{"-ranks", "some"}, "want all or one"},
		{[]string{"-max-pages", "0"}, "-max-pages"},
		{[]string{"-resync-batch", "-1"}, "-resync-batch"},
		{[]string{"-pool", "swa"}, "NAME=KIND"},
		{[]string{"-pool", "swa=bogus"}, "unknown pool kind"},
		{[]string{"-pool", "mamba=mamba,conv=x"}, "want a count"},
		{[]string{"-pool", "swa=mha,w"}, "unknown pool attribute"},
		{[]string{"stray"}, "unexpected arguments"},
	} {
		o, err := parse(tc.args, io.Discard)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: error %v, want one saying %q", tc.args, err, tc.want)
		case tc.want == "" && o.hash.PageSize != 64:
			t.Errorf("%q: page size %d", tc.args, o.hash.PageSize)
		}
	}
	o, err := parse([]string{"-tp-size", "4", "-mla", "-model", "Qwen/Qwen3-8B", "-backend-tag", "", "-bigram",
		"-pool", "mamba=mamba,temporal,conv=2", "-pool", "swa=mha,v", "-ranks", "one", "-tp-rank", "3"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	k := o.scheme.Keys
	if k.TPSize != 4 || k.TPRank != 3 || !k.RankReplicated || k.ModelName != "Qwen/Qwen3-8B" || k.ExtraBackendTag == nil ||
		o.hash.Mode != prefix.Bigram || o.scheme.Ranks != prefix.OneRank || len(o.scheme.Pools) != 2 ||
		o.scheme.Pools[0].Shape != (hostcache.PoolShape{Kind: hostcache.KindMamba, MambaTemporal: true, MambaConv: 2}) ||
		o.scheme.Pools[1].Shape != (hostcache.PoolShape{Kind: hostcache.KindMHA, HasV: true}) {
		t.Fatalf("parsed %+v %+v", o.scheme, o.hash)
	}
	if _, err := parse([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
}

// harness is a cluster, a writer storing SGLang-shaped pages into it and
// the command's service on a client that mounts no memory.
type harness struct {
	t      testing.TB
	c      *mooncaketest.Cluster
	writer *mooncake.Store
	reader *mooncake.Store
	scheme *prefix.Scheme
	hasher *prefix.Hasher
	o      *options
}

func newHarness(t testing.TB, args ...string) *harness {
	t.Helper()
	o, err := parse(append([]string{"-page-size", "4", "-tp-size", "2"}, args...), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c := mooncaketest.NewCluster(t)
	h := &harness{t: t, c: c, o: o, writer: c.Open(t)}
	// The command's client: no segment, no local buffer.
	h.reader = c.Open(t, func(cfg *mooncake.Config) { cfg.GlobalSegmentSize, cfg.LocalBufferSize = 0, 0 })
	if h.scheme, err = prefix.NewScheme(o.scheme); err != nil {
		t.Fatal(err)
	}
	if h.hasher, err = prefix.NewHasher(o.hash); err != nil {
		t.Fatal(err)
	}
	return h
}

// store puts every component key of pages (a small value each) and
// returns the keys.
func (h *harness) store(pages []prefix.Digest) []string {
	h.t.Helper()
	var k hostmem.Keys
	for _, d := range pages {
		h.scheme.AppendKeys(&k, d)
	}
	keys := k.Strings()
	for _, key := range keys {
		if err := h.writer.Put(key, []byte("page")); err != nil && !errors.Is(err, mooncake.ErrObjectAlreadyExists) {
			h.t.Fatalf("put %s: %v", key, err)
		}
	}
	return keys
}

func (h *harness) service(ctx context.Context) (*service, *httptest.Server) {
	h.t.Helper()
	svc, err := newService(ctx, h.o, h.reader, h.c.Config())
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(svc.close)
	srv := httptest.NewServer(svc.handler())
	h.t.Cleanup(srv.Close)
	return svc, srv
}

func post(t *testing.T, url, body string) (int, lookupResponse, string) {
	t.Helper()
	resp, err := http.Post(url+"/v1/lookup", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out lookupResponse
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
	}
	return resp.StatusCode, out, string(raw)
}

func tokensJSON(toks []uint32, prior string) string {
	b, _ := json.Marshal(map[string]any{"tokens": toks, "prior": prior})
	return string(b)
}

func randomTokens(rng *rand.Rand, n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = rng.Uint32N(150000)
	}
	return out
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestLookupDirect: the direct mode's answers, refusals and metrics.
func TestLookupDirect(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, srv := h.service(ctx)
	rng := rand.New(rand.NewPCG(1, 2))
	toks := randomTokens(rng, 6*4+3) // 6 full pages and a partial one
	ds, _ := h.hasher.AppendPages(nil, nil, toks)
	h.store(ds[:4])

	code, r, raw := post(t, srv.URL, tokensJSON(toks, ""))
	if code != 200 || r.Pages != 4 || r.Hashed != 6 || r.PageSize != 4 || r.LastHash != ds[3].String() {
		t.Fatalf("lookup: %d %s", code, raw)
	}
	// The prior carries on from page 3: the rest counts from there.
	h.store(ds[4:5])
	code, r, raw = post(t, srv.URL, tokensJSON(toks[16:], ds[3].String()))
	if code != 200 || r.Pages != 1 || r.Hashed != 2 || r.LastHash != ds[4].String() {
		t.Fatalf("lookup from a prior: %d %s", code, raw)
	}
	for _, tc := range []struct {
		body string
		code int
		says string
	}{
		{`{"tokens":[1,2,3,4],"prior":"abcd"}`, 400, "32-byte digest"},
		{`{"tokens":[1,-2,3,4]}`, 400, "outside"},
		{`{"tokens":[1,4294967296,3,4]}`, 400, "outside"},
		{`{"tokens":[1.5]}`, 400, "request"},
		{`{"tokens":`, 400, "request"},
		{`{"tokens":[]} {}`, 400, "more than one"},
		{`{"tokens":[1,2],"model":"x"}`, 200, `"hashed":0`}, // other keys: encoding/json's path, ignored
		{`{"Tokens":[1,2,3,4,5,6,7,8]}`, 200, `"hashed":2`}, // encoding/json matches keys case-insensitively
		{`{"tokens":[1,2,3,4],"prior":null}`, 200, `"hashed":1`},
		{`{"tokens":[9223372036854775808]}`, 400, "request"},
		{`{"tokens":[1e3]}`, 400, "request"},
		{`{"tokens":[]}`, 200, `"pages":0`},
	} {
		code, _, raw := post(t, srv.URL, tc.body)
		if code != tc.code || !strings.Contains(raw, tc.says) {
			t.Errorf("%s: %d %s, want %d saying %q", tc.body, code, raw, tc.code, tc.says)
		}
	}
	resp, err := http.Post(srv.URL+"/v1/lookup", "text/plain", strings.NewReader("{}"))
	if err != nil || resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("text/plain: %v %v", resp.Status, err)
	}
	resp.Body.Close()

	code, metrics := get(t, srv.URL+"/metrics")
	for _, want := range []string{
		`mooncake_prefix_lookups_total{code="200",mode="direct"} 6`,
		`mooncake_prefix_lookups_total{code="400",mode="direct"} 8`,
		`mooncake_prefix_lookups_total{code="415",mode="direct"} 1`,
		`mooncake_prefix_pages_total{kind="cached",mode="direct"} 5`,
		`mooncake_prefix_pages_total{kind="hashed",mode="direct"} 11`,
		`mooncake_prefix_lookup_duration_seconds_count{mode="direct"} 15`,
		`mooncake_store_calls_total{op="batch_is_exist"} 4`,
		`mooncake_prefix_direct_exist_calls_total 4`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if code != 200 || t.Failed() {
		t.Fatalf("metrics (%d):\n%s", code, metrics)
	}
	if code, _ := get(t, srv.URL+"/readyz"); code != 200 {
		t.Fatalf("readyz %d", code)
	}
}

// TestLookupIndex: the index mode follows a publisher's events (here the
// test's own, naming what the writer stored) and answers from memory.
func TestLookupIndex(t *testing.T) {
	pub, err := kvevents.NewPublisher("tcp://127.0.0.1:0", "test", kvevents.PublisherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	h := newHarness(t, "-mode", "index", "-events", pub.Endpoint(), "-learn-for", "-1s")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svc, srv := h.service(ctx)
	waitFor(t, "ready", func() bool { c, _ := get(t, srv.URL+"/readyz"); return c == 200 })
	// Ready means the service has connected; the publisher sends nothing to
	// it until its subscription has arrived (a ZMQ publisher's rule), which
	// under load can come after readyz does.
	waitFor(t, "the subscription", func() bool { return pub.Subscribers() == 1 })

	rng := rand.New(rand.NewPCG(3, 4))
	toks := randomTokens(rng, 8*4)
	ds, _ := h.hasher.AppendPages(nil, nil, toks)
	keys := h.store(ds[:5])
	var evs []kvevents.Event
	for _, k := range keys {
		evs = append(evs, kvevents.Event{Kind: kvevents.Stored, Key: k, Medium: "cpu"})
	}
	if err := pub.Publish(evs); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the events", func() bool { return svc.x.Stats().Complete == 5 })
	code, r, raw := post(t, srv.URL, tokensJSON(toks, ""))
	if code != 200 || r.Pages != 5 || r.LastHash != ds[4].String() {
		t.Fatalf("lookup: %d %s", code, raw)
	}
	// A removal of one component of page 2 ends the prefix there.
	if err := h.writer.Remove(keys[2*h.scheme.ComponentsPerPage()+1], true); err != nil {
		t.Fatal(err)
	}
	pub.Publish([]kvevents.Event{{Kind: kvevents.Removed, Key: keys[2*h.scheme.ComponentsPerPage()+1]}})
	waitFor(t, "the removal", func() bool { return svc.x.Stats().Complete == 4 })
	if _, r, raw = post(t, srv.URL, tokensJSON(toks, "")); r.Pages != 2 {
		t.Fatalf("after a removal: %s", raw)
	}
	_, metrics := get(t, srv.URL+"/metrics")
	for _, want := range []string{
		`mooncake_prefix_lookups_total{code="200",mode="index"} 2`,
		`mooncake_prefix_index_pages{state="complete"} 4`,
		`mooncake_prefix_event_gaps_total{reason="started"} 1`,
		`mooncake_prefix_event_lag_seconds_count 2`,
		`mooncake_prefix_subscriber_connected 1`,
		`mooncake_prefix_index_events_total{outcome="applied"} 21`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if t.Failed() {
		t.Fatalf("metrics:\n%s", metrics)
	}
	// No store call was made: the index was empty at the start's resync,
	// and learning is off.
	if strings.Contains(metrics, `op="batch_is_exist"`) {
		t.Fatalf("the index mode made existence calls per lookup:\n%s", metrics)
	}
}

// TestLookupIndexClusterEvents: the index mode on the cluster master's own
// events (the embedded master's publisher; on a live cluster, its
// --enable_kv_events publisher when scripts/cluster -kv-events started it).
func TestLookupIndexClusterEvents(t *testing.T) {
	h := newHarness(t)
	// No learning: what the index knows comes from the events.
	h.o.mode, h.o.events, h.o.learnFor = modeIndex, h.c.KVEvents(t), -1
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svc, srv := h.service(ctx)
	waitFor(t, "ready", func() bool { c, _ := get(t, srv.URL+"/readyz"); return c == 200 })
	// The publisher sends nothing to a subscriber until the subscription
	// has reached it (ZMQ PUB/SUB), a moment after the connection is up:
	// store sentinel pages until one is seen.
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; svc.x.Stats().Complete == 0; i++ {
		if i == 100 {
			t.Fatal("no event from the cluster's master after 100 sentinel pages")
		}
		sentinel, _ := h.hasher.AppendPages(nil, nil, randomTokens(rng, 4))
		h.store(sentinel)
		time.Sleep(10 * time.Millisecond)
	}
	toks := randomTokens(rng, 10*4)
	ds, _ := h.hasher.AppendPages(nil, nil, toks)
	keys := h.store(ds[:7])
	lookup := func() int {
		_, r, _ := post(t, srv.URL, tokensJSON(toks, ""))
		return r.Pages
	}
	waitFor(t, "the master's events", func() bool { return lookup() == 7 })
	if err := h.writer.Remove(keys[3*h.scheme.ComponentsPerPage()], true); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the removal", func() bool { return lookup() == 3 })
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
