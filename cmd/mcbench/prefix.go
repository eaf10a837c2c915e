package main

import (
	"context"
	"fmt"
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
// builds its keys, makes one BatchIsExist call and counts the leading
// stored pages; a request that does not find every page counts its pages
// as errors. scripts/bench_python.py does the same with hashlib and
// upstream's batch_is_exist.
func (cr *caseRun) prefixLookup() ([]Result, error) {
	c := cr.c
	h, err := prefix.NewHasher(prefix.HashConfig{PageSize: c.PageSize})
	if err != nil {
		return nil, err
	}
	// The tag puts the keys in the case's namespace ("{run}-{case}-"), so
	// that the case's cleanup removes them.
	tag := fmt.Sprintf("%s-%03d-p", cr.run, cr.idx)
	s, err := prefix.NewScheme(prefix.SchemeConfig{Keys: hostcache.KeyConfig{ExtraBackendTag: &tag}})
	if err != nil {
		return nil, err
	}
	if s.ComponentsPerPage() != c.KeysPerRequest()/c.Batch {
		return nil, fmt.Errorf("%s: %d keys per page, the plan counts %d", c.Name, s.ComponentsPerPage(), c.KeysPerRequest()/c.Batch)
	}

	// The dataset: Objects/Batch prompts of random token ids, every page
	// stored.
	rng := rand.New(rand.NewPCG(cr.o.seed, uint64(cr.idx)))
	prompts := make([][]uint32, max(c.Objects/c.Batch, 1))
	value := make([]byte, c.ValueSize)
	var keys hostmem.Keys
	var values [][]byte
	for i := range prompts {
		p := make([]uint32, c.Batch*c.PageSize)
		for j := range p {
			p[j] = rng.Uint32N(1 << 17) // a vocabulary's ids
		}
		prompts[i] = p
		pages, _ := h.AppendPages(nil, nil, p)
		keys.Reset()
		s.AppendPageKeys(&keys, pages)
		values = values[:0]
		for range keys.Len() {
			values = append(values, value)
		}
		if err := cr.st.PutBatch(&keys, values); err != nil {
			return nil, fmt.Errorf("preparing the dataset: %w", err)
		}
	}

	l := prefix.NewLookup(h, s, cr.st)
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
	return []Result{cr.result(rec)}, nil
}
