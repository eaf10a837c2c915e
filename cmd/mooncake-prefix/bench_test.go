//go:build cgo

package main

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/hostcache/prefix"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/kvevents"
)

// BenchmarkServeLookup: the server's cost of one POST /v1/lookup of a
// 64-page prompt (page size 64: 4096 token ids, about 25 KB of JSON) whose
// pages are all in the index: decoding, hashing, the index, encoding, the
// metrics (no network: the handler is called directly).
func BenchmarkServeLookup(b *testing.B) {
	pub, err := kvevents.NewPublisher("tcp://127.0.0.1:0", "bench", kvevents.PublisherOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer pub.Close()
	h := newHarness(b, "-page-size", "64", "-mode", "index", "-events", pub.Endpoint(), "-learn-for", "-1s")
	h.o.hash.PageSize = 64
	if h.hasher, err = prefix.NewHasher(h.o.hash); err != nil {
		b.Fatal(err)
	}
	svc, _ := h.service(context.Background())
	// The pages go straight into the index, not the store: wait for the
	// start's resync first, which would drop them.
	for ok, _ := svc.ready(); !ok; ok, _ = svc.ready() {
		time.Sleep(time.Millisecond)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	toks := randomTokens(rng, 64*64)
	ds, _ := h.hasher.AppendPages(nil, nil, toks)
	var k hostmem.Keys
	h.scheme.AppendPageKeys(&k, ds)
	batch := &kvevents.Batch{Seq: 1}
	for _, key := range k.Strings() {
		batch.Events = append(batch.Events, kvevents.Event{Kind: kvevents.Stored, Key: key})
	}
	svc.x.HandleBatch(batch)
	body := tokensJSON(toks, "")
	handler := svc.handler()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/v1/lookup", strings.NewReader(body))
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, req)
		if w.Code != 200 || !strings.Contains(w.Body.String(), `"pages":64`) {
			b.Fatal(w.Body.String())
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
}
