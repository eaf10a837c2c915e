package prefix_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/mooncake-go/mooncake-go/hostcache/prefix"
	"github.com/mooncake-go/mooncake-go/mooncake/kvevents"
)

// benchIndex returns an index holding held pages of random prompts (so the
// map has a realistic size) plus the pages of prompts, whose 64 pages are
// all stored; its hasher remembers memo pages.
func benchIndex(b *testing.B, pageSize, held, prompts, memo int) (*prefix.Index, [][]uint32, [][]prefix.Digest) {
	b.Helper()
	f := newFixture(b, pageSize)
	h, err := prefix.NewHasher(prefix.HashConfig{PageSize: pageSize, MemoPages: memo})
	if err != nil {
		b.Fatal(err)
	}
	x := newIndex(b, prefix.IndexConfig{Scheme: f.scheme, Hasher: h, MaxPages: held + 64*prompts})
	rng := rand.New(rand.NewPCG(21, 22))
	var keys []string
	flush := func(force bool) {
		for len(keys) >= 64 || force && len(keys) > 0 {
			n := min(64, len(keys))
			x.HandleBatch(f.batch(kvevents.Stored, keys[:n]...))
			keys = keys[n:]
		}
	}
	var d prefix.Digest
	for i := 0; i < held; i++ {
		for j := range d {
			d[j] = byte(rng.Uint32())
		}
		keys = append(keys, f.keys(d)...)
		flush(false)
	}
	var toks [][]uint32
	var dss [][]prefix.Digest
	base := prompt(rng, nil, 0, 64, pageSize)
	for i := 0; i < prompts; i++ {
		p := prompt(rng, base, 32, 64, pageSize) // half the pages shared, as prompts with one system prompt
		toks = append(toks, p)
		ds := f.digests(p)
		dss = append(dss, ds)
		keys = append(keys, f.pageKeys(ds...)...)
		flush(false)
	}
	flush(true)
	for _, ds := range dss {
		if r := x.LookupDigests(ds); r.Pages != 64 {
			b.Fatalf("setup: %+v", r)
		}
	}
	return x, toks, dss
}

// benchLookups looks the prompts up in turn, every page of each stored.
func benchLookups(b *testing.B, x *prefix.Index, toks [][]uint32) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if r, err := x.Lookup(nil, toks[i%len(toks)]); err != nil || r.Pages != 64 {
			b.Fatal(r, err)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
}

// BenchmarkIndexLookup: lookups of 64-page prompts, all pages stored, in an
// index of 200k pages. "hash+index" hashes the token ids (SHA-256 of every
// page) and looks the pages up; "index" is given the digests (a router
// that carries them). Run with -cpu 1 for one core.
func BenchmarkIndexLookup(b *testing.B) {
	for _, pageSize := range []int{16, 64} {
		x, toks, dss := benchIndex(b, pageSize, 200_000, 64, 0)
		b.Run(fmt.Sprintf("hash+index/page%d", pageSize), func(b *testing.B) { benchLookups(b, x, toks) })
		b.Run(fmt.Sprintf("hash/page%d", pageSize), func(b *testing.B) {
			h := testHasher(b, pageSize)
			dst := make([]prefix.Digest, 0, 64)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				dst, _ = h.AppendPages(dst[:0], nil, toks[i%len(toks)])
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "prompts/s")
		})
		b.Run(fmt.Sprintf("index/page%d", pageSize), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if r := x.LookupDigests(dss[i%len(dss)]); r.Pages != 64 {
					b.Fatal(r)
				}
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
		})
		b.Run(fmt.Sprintf("index-parallel/page%d", pageSize), func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					if r := x.LookupDigests(dss[i%len(dss)]); r.Pages != 64 {
						b.Fatal(r)
					}
					i++
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
		})
		x.Close()
		runtime.GC()
	}
}

// BenchmarkIndexLookupMemo is hash+index of BenchmarkIndexLookup with the
// hasher's memo (HashConfig.MemoPages, the command's default size): the 64
// prompts come round again, as a router's requests repeat their prefixes,
// so once warm most pages are hits (memo-hit). novel is a lookup of a
// prompt the cache has nothing of; memo-miss hashes whole prompts of new
// pages through the memo (its cost when it never hits; compare
// BenchmarkIndexLookup's hash).
func BenchmarkIndexLookupMemo(b *testing.B) {
	const memoPages = 8192 // the command's default
	for _, pageSize := range []int{16, 64} {
		x, toks, _ := benchIndex(b, pageSize, 200_000, 64, memoPages)
		b.Run(fmt.Sprintf("memo-hit/page%d", pageSize), func(b *testing.B) { benchLookups(b, x, toks) })
		// A prompt that shares nothing with the cache: Lookup hashes only
		// until the first page the index lacks.
		b.Run(fmt.Sprintf("novel/page%d", pageSize), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(33, 34))
			p := prompt(rng, nil, 0, 64, pageSize)
			b.ReportAllocs()
			for b.Loop() {
				p[0]++
				if r, err := x.Lookup(nil, p); err != nil || r.Pages != 0 || r.Hashed != 64 {
					b.Fatal(r, err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
		})
		x.Close()
		// Every page new: prompts that share nothing with those before
		// (the tokens are drawn before the timer runs), all hashed: what
		// the memo costs when it never hits.
		b.Run(fmt.Sprintf("memo-miss/page%d", pageSize), func(b *testing.B) {
			h, err := prefix.NewHasher(prefix.HashConfig{PageSize: pageSize, MemoPages: memoPages})
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(31, 32))
			fresh := make([][]uint32, 256)
			for i := range fresh {
				fresh[i] = prompt(rng, nil, 0, 64, pageSize)
			}
			dst := make([]prefix.Digest, 0, 64)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				p := fresh[i%len(fresh)]
				p[0]++ // a new first page: every page of the chain is new
				dst, _ = h.AppendPages(dst[:0], nil, p)
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "prompts/s")
		})
		runtime.GC()
	}
}

// BenchmarkIndexEvents: applying batches of 64 stored events (keys parsed,
// bits set) to an index of 200k pages.
func BenchmarkIndexEvents(b *testing.B) {
	f := newFixture(b, 16)
	x := newIndex(b, prefix.IndexConfig{Scheme: f.scheme, MaxPages: 200_000})
	rng := rand.New(rand.NewPCG(23, 24))
	var batches []*kvevents.Batch
	for i := 0; i < 1024; i++ {
		var keys []string
		for len(keys) < 64 {
			var d prefix.Digest
			for j := range d {
				d[j] = byte(rng.Uint32())
			}
			keys = append(keys, f.keys(d)...)
		}
		batches = append(batches, f.batch(kvevents.Stored, keys...))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		x.HandleBatch(batches[i%len(batches)])
		i++
	}
	b.ReportMetric(float64(b.N)*64/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkIndexMemory reports the heap an index of 1M complete two-key
// pages holds (bytes/page).
func BenchmarkIndexMemory(b *testing.B) {
	f := newFixture(b, 16)
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		x := newIndex(b, prefix.IndexConfig{Scheme: f.scheme, MaxPages: 1 << 20})
		rng := rand.New(rand.NewPCG(25, 26))
		batch := &kvevents.Batch{Events: make([]kvevents.Event, 64)}
		var d prefix.Digest
		for n := 0; n < 1<<20; n += 32 {
			for e := 0; e < 64; e += 2 {
				for j := range d {
					d[j] = byte(rng.Uint32())
				}
				ks := f.keys(d)
				batch.Events[e] = kvevents.Event{Kind: kvevents.Stored, Key: ks[0]}
				batch.Events[e+1] = kvevents.Event{Kind: kvevents.Stored, Key: ks[1]}
			}
			x.HandleBatch(batch)
		}
		for i := range batch.Events {
			batch.Events[i] = kvevents.Event{}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if s := x.Stats(); s.Complete != 1<<20 {
			b.Fatalf("%+v", s)
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "bytes/page")
		runtime.KeepAlive(x)
	}
}
