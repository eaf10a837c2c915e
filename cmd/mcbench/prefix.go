package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"

	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/hostcache/prefix"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// prefixLookup runs prefix_lookup: a router's direct lookup of a prompt
// of c.Batch pages of c.PageSize tokens, all of them stored by an SGLang
// deployment (MHA, one TP rank: a K and a V key per page). Each request
// hashes the prompt's token ids (hostcache/prefix, SGLang's page hashing),
// builds its keys, and counts the leading stored pages with one
// BatchIsExist call; a request that does not find every page counts the
// missing pages as errors. scripts/bench_python.py does the same with
// hashlib and upstream's batch_is_exist.
//
// The callers of a case are a router's concurrent requests: they look up
// one deployment (one key scheme) through one prefix.Lookup, which
// combines requests that overlap into one call (prefix.Lookup's doc).
// Each caller stores and looks up prompts of its own.
func (cr *caseRun) prefixLookup() (res []Result, err error) {
	c := cr.c
	h, err := prefix.NewHasher(prefix.HashConfig{PageSize: c.PageSize, MemoPages: cr.o.hashMemo})
	if err != nil {
		return nil, err
	}
	// The deployment's keys: tagged with the case's namespace, the same
	// for all callers ("{run}-{case}-p", the run without its caller
	// digits).
	tag := fmt.Sprintf("%s-%03d-p", cr.run, cr.idx)
	if cr.group != nil {
		tag = fmt.Sprintf("%s-%03d-p", cr.run[:len(cr.run)-2], cr.idx)
	}
	s, err := prefix.NewScheme(prefix.SchemeConfig{Keys: hostcache.KeyConfig{ExtraBackendTag: &tag}})
	if err != nil {
		return nil, err
	}
	if s.ComponentsPerPage() != c.KeysPerRequest()/c.Batch {
		return nil, fmt.Errorf("%s: %d keys per page, the plan counts %d", c.Name, s.ComponentsPerPage(), c.KeysPerRequest()/c.Batch)
	}

	// This caller's dataset: Objects/Batch prompts of random token ids,
	// every page stored; removed when the case ends (the keys are not in
	// the caller's namespace, which the case's cleanup removes).
	seed := fnv.New64a()
	seed.Write([]byte(cr.run))
	rng := rand.New(rand.NewPCG(cr.o.seed, seed.Sum64()))
	prompts := make([][]uint32, max(c.Objects/c.Batch, 1))
	value := make([]byte, c.ValueSize)
	var values [][]byte
	stored := make([]hostmem.Keys, len(prompts))
	defer func() {
		for i := range stored {
			if stored[i].Len() == 0 {
				continue
			}
			if _, rerr := cr.st.BatchRemove(&stored[i], true, nil); rerr != nil && err == nil {
				err = fmt.Errorf("cleanup: %w", rerr)
			}
		}
	}()
	for i := range prompts {
		p := make([]uint32, c.Batch*c.PageSize)
		for j := range p {
			p[j] = rng.Uint32N(1 << 17) // a vocabulary's ids
		}
		prompts[i] = p
		pages, _ := h.AppendPages(nil, nil, p)
		var keys hostmem.Keys
		keys.Reset()
		s.AppendPageKeys(&keys, pages)
		values = values[:0]
		for range keys.Len() {
			values = append(values, value)
		}
		if err := cr.st.PutBatch(&keys, values); err != nil {
			return nil, fmt.Errorf("preparing the dataset: %w", err)
		}
		stored[i] = keys
	}

	var l *prefix.Lookup
	if cr.group != nil {
		l = cr.group.shared("prefix.Lookup", func() any { return prefix.NewLookup(h, s, cr.st) }).(*prefix.Lookup)
	} else {
		l = prefix.NewLookup(h, s, cr.st)
	}
	ctx := context.Background()
	kpr := c.KeysPerRequest()
	next := 0
	rec, err := cr.drive(func(rec *recorder) error {
		p := prompts[next]
		next = (next + 1) % len(prompts)
		t0 := time.Now()
		r, err := l.Lookup(ctx, nil, p)
		d := time.Since(t0)
		rec.add(d, kpr, 0)
		if err != nil || r.Pages != c.Batch {
			rec.errors += c.Batch - r.Pages
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if cr.group != nil {
		// How much the callers' requests combined (once per case, by the
		// first caller done: the others finish within a request).
		cr.group.shared("prefix.Stats", func() any {
			st := l.Stats()
			cr.prog.note(fmt.Sprintf("mcbench: %s: %d lookups in %d calls (%d combined)", c.Name, st.Lookups, st.Calls, st.Combined))
			return st
		})
	}
	return []Result{cr.result(rec)}, nil
}
