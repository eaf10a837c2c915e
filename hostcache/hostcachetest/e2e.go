package hostcachetest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/mooncake-go/mooncake-go/hostcache"
)

// Case is one end-to-end scenario: an anchor pool and side pools built for
// writing (A) and, independently, for reading (B).
type Case struct {
	Name string
	Opts hostcache.Options
	// Anchor builds the anchor pool.
	Anchor func(a hostcache.Allocator) (hostcache.Pool, error)
	// ReadAnchor, when set, builds the reader's anchor instead (cross-layout
	// reads); ReadOpts then configures the reader.
	ReadAnchor func(a hostcache.Allocator) (hostcache.Pool, error)
	ReadOpts   *hostcache.Options
	// Sides builds the side pools next to an anchor.
	Sides func(a hostcache.Allocator, anchor hostcache.Pool) ([]hostcache.PoolEntry, error)
	// Group registers anchor+sides as a PoolGroup with RegisterPoolGroup.
	Group bool
	// WantErr, when set, is the error class every v1 call must fail with
	// (e.g. MHA layer_first).
	WantErr error
	// ReadMisses: the reader must find nothing (different key prefix).
	ReadMisses bool
}

const (
	e2ePages = 4
	fillA    = 0x00 // pattern seeds
	poisonB  = 0xEE
)

var rowsA = []int{1, 3, 0, 2}
var rowsB = []int{2, 0, 3, 1}

// RunEndToEnd runs every case of Cases against store: fill pool A with a
// pattern, BatchSetV1/V2, read into a fresh pool B with BatchGetV1/V2,
// compare every byte of every page (and check untouched pages are
// unchanged), then check exists counts and partial hits. Keys get a random
// tag, so it can run repeatedly against a live cluster.
func RunEndToEnd(t *testing.T, store hostcache.Store) {
	for _, c := range Cases() {
		t.Run(c.Name, func(t *testing.T) { RunCase(t, store, c) })
	}
	t.Run("skip_backup_rank1", func(t *testing.T) { runSkipBackup(t, store) })
}

func uniqueTag(name string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "e2e-" + hex.EncodeToString(b[:]) + "-" + name
}

type side struct {
	name hostcache.PoolName
	pool hostcache.Pool
}

type rig struct {
	backend *hostcache.Backend
	anchor  hostcache.Pool
	sides   []side
}

func build(t *testing.T, store hostcache.Store, opts hostcache.Options, anchorFn func(hostcache.Allocator) (hostcache.Pool, error),
	sidesFn func(hostcache.Allocator, hostcache.Pool) ([]hostcache.PoolEntry, error), group bool, fill byte, seed uint64) *rig {
	t.Helper()
	alloc := NewAllocator(t)
	alloc.Fill = fill
	anchor, err := anchorFn(alloc)
	if err != nil {
		t.Fatalf("build anchor: %v", err)
	}
	t.Cleanup(func() {
		if err := anchor.Close(); err != nil {
			t.Errorf("close anchor: %v", err)
		}
	})
	var entries []hostcache.PoolEntry
	if sidesFn != nil {
		entries, err = sidesFn(alloc, anchor)
		if err != nil {
			t.Fatalf("build side pools: %v", err)
		}
		for _, e := range entries {
			t.Cleanup(func() {
				if err := e.Pool.Close(); err != nil {
					t.Errorf("close %s: %v", e.Name, err)
				}
			})
		}
	}
	if seed != 0 {
		FillPattern(anchor, seed)
		for i, e := range entries {
			FillPattern(e.Pool, seed+uint64(i+1)*0x9E37)
		}
	}
	b, err := hostcache.NewBackend(store, opts)
	if err != nil {
		t.Fatalf("NewBackend: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("backend close: %v", err)
		}
	})
	if group {
		g, err := hostcache.NewPoolGroup(anchor, entries...)
		if err != nil {
			t.Fatalf("NewPoolGroup: %v", err)
		}
		if err := b.RegisterPoolGroup(g); err != nil {
			t.Fatalf("RegisterPoolGroup: %v", err)
		}
	} else {
		if err := b.RegisterPool(anchor); err != nil {
			t.Fatalf("RegisterPool: %v", err)
		}
		for _, e := range entries {
			if err := b.RegisterPoolV2(e.Name, e.Pool); err != nil {
				t.Fatalf("RegisterPoolV2(%s): %v", e.Name, err)
			}
		}
	}
	r := &rig{backend: b, anchor: anchor}
	for _, e := range entries {
		r.sides = append(r.sides, side{e.Name, e.Pool})
	}
	return r
}

// TokenIndices returns the flat token indices of page rows of a pool with
// page size p.
func TokenIndices(rows []int, p int) []int64 {
	out := make([]int64, 0, len(rows)*p)
	for _, r := range rows {
		for i := 0; i < p; i++ {
			out = append(out, int64(r*p+i))
		}
	}
	return out
}

// TestKeys returns n chained page hashes for a token stream derived from
// salt.
func TestKeys(salt string, n, pageSize int) []string {
	toks := make([]uint32, n*pageSize)
	for i := range toks {
		toks[i] = uint32(i)*2654435761 ^ uint32(len(salt)*977)
		for _, c := range salt {
			toks[i] = toks[i]*31 + uint32(c)
		}
	}
	keys, err := hostcache.PageHashes("", toks, pageSize)
	if err != nil {
		panic(err)
	}
	return keys
}

func (r *rig) transfers(keys []string, rows []int) []hostcache.PoolTransfer {
	var ts []hostcache.PoolTransfer
	for _, s := range r.sides {
		ts = append(ts, hostcache.PoolTransfer{Name: s.name, Keys: keys, HostIndices: TokenIndices(rows, s.pool.PageSize())})
	}
	return ts
}

func allTrue(t *testing.T, what string, got []bool, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("%s: %d results, want %d", what, len(got), n)
	}
	for i, ok := range got {
		if !ok {
			t.Fatalf("%s: page %d failed (results %v)", what, i, got)
		}
	}
}

// RunCase runs one Case against store.
func RunCase(t *testing.T, store hostcache.Store, c Case) {
	tag := uniqueTag(c.Name)
	opts := c.Opts
	opts.ExtraBackendTag = &tag
	a := build(t, store, opts, c.Anchor, c.Sides, c.Group, 0, 0x5EED)
	P := a.anchor.PageSize()
	keys := TestKeys(tag, e2ePages, P)
	idxA := TokenIndices(rowsA, P)
	hasV1 := a.anchor.HasBuffer()

	if c.WantErr != nil {
		if _, err := a.backend.BatchSetV1(keys, idxA, nil); !errors.Is(err, c.WantErr) {
			t.Fatalf("BatchSetV1: err %v, want %v", err, c.WantErr)
		}
		if _, err := a.backend.BatchGetV1(keys, idxA, nil); !errors.Is(err, c.WantErr) {
			t.Fatalf("BatchGetV1: err %v, want %v", err, c.WantErr)
		}
		return
	}

	// Write, twice: the second write finds every object and must still succeed.
	for round := 0; round < 2; round++ {
		if hasV1 {
			res, err := a.backend.BatchSetV1(keys, idxA, nil)
			if err != nil {
				t.Fatalf("BatchSetV1 round %d: %v", round, err)
			}
			allTrue(t, "BatchSetV1", res, e2ePages)
		}
		if len(a.sides) > 0 {
			res, err := a.backend.BatchSetV2(a.transfers(keys, rowsA))
			if err != nil {
				t.Fatalf("BatchSetV2 round %d: %v", round, err)
			}
			for _, s := range a.sides {
				allTrue(t, "BatchSetV2 "+string(s.name), res[s.name], e2ePages)
			}
		}
	}
	if n, err := a.backend.BatchExists(keys); err != nil || (hasV1 && n != e2ePages) {
		t.Fatalf("BatchExists = %d, %v; want %d", n, err, e2ePages)
	}
	if r, err := a.backend.BatchExistsV2(keys, a.transfers(keys, rowsA)); err != nil || r.Pages != e2ePages {
		t.Fatalf("BatchExistsV2 = %+v, %v; want %d pages", r, err, e2ePages)
	}

	// Read into fresh pools.
	ropts := opts
	if c.ReadOpts != nil {
		ropts = *c.ReadOpts
		ropts.ExtraBackendTag = &tag
	}
	anchorB := c.Anchor
	if c.ReadAnchor != nil {
		anchorB = c.ReadAnchor
	}
	b := build(t, store, ropts, anchorB, c.Sides, c.Group, poisonB, 0)
	idxB := TokenIndices(rowsB, b.anchor.PageSize())
	if c.ReadMisses {
		if n, err := b.backend.BatchExists(keys); err != nil || n != 0 {
			t.Fatalf("reader with another key prefix: BatchExists = %d, %v; want 0", n, err)
		}
		res, err := b.backend.BatchGetV1(keys, idxB, nil)
		if err != nil {
			t.Fatalf("BatchGetV1: %v", err)
		}
		for i, ok := range res {
			if ok {
				t.Fatalf("reader with another key prefix read page %d", i)
			}
		}
		return
	}
	if b.anchor.HasBuffer() {
		res, err := b.backend.BatchGetV1(keys, idxB, nil)
		if err != nil {
			t.Fatalf("BatchGetV1: %v", err)
		}
		allTrue(t, "BatchGetV1", res, e2ePages)
		comparePages(t, "anchor", a.anchor, rowsA, b.anchor, rowsB)
		checkPoison(t, "anchor", b.anchor, rowsB)
	}
	if len(b.sides) > 0 {
		res, err := b.backend.BatchGetV2(b.transfers(keys, rowsB))
		if err != nil {
			t.Fatalf("BatchGetV2: %v", err)
		}
		for i, s := range b.sides {
			allTrue(t, "BatchGetV2 "+string(s.name), res[s.name], e2ePages)
			comparePages(t, string(s.name), a.sides[i].pool, rowsA, s.pool, rowsB)
			checkPoison(t, string(s.name), s.pool, rowsB)
		}
	}

	// Partial hits: two written pages followed by two never written.
	partial := append(append([]string{}, keys[:2]...), TestKeys(tag+"-missing", 2, P)...)
	if n, err := b.backend.BatchExists(partial); err != nil || (hasV1 && n != 2) {
		t.Fatalf("BatchExists(partial) = %d, %v; want 2", n, err)
	}
	if r, err := b.backend.BatchExistsV2(partial, b.transfers(partial, rowsB)); err != nil || r.Pages != 2 {
		t.Fatalf("BatchExistsV2(partial) = %+v, %v; want 2 pages", r, err)
	}
	missingFirst := append(TestKeys(tag+"-other", 1, P), keys[1:]...)
	if n, err := b.backend.BatchExists(missingFirst); err != nil || n != 0 {
		t.Fatalf("BatchExists(missing first) = %d, %v; want 0", n, err)
	}
	want := []bool{true, true, false, false}
	if b.anchor.HasBuffer() {
		res, err := b.backend.BatchGetV1(partial, idxB, nil)
		if err != nil {
			t.Fatalf("BatchGetV1(partial): %v", err)
		}
		if fmt.Sprint(res) != fmt.Sprint(want) {
			t.Fatalf("BatchGetV1(partial) = %v, want %v", res, want)
		}
	}
	if len(b.sides) > 0 {
		res, err := b.backend.BatchGetV2(b.transfers(partial, rowsB))
		if err != nil {
			t.Fatalf("BatchGetV2(partial): %v", err)
		}
		for _, s := range b.sides {
			if fmt.Sprint(res[s.name]) != fmt.Sprint(want) {
				t.Fatalf("BatchGetV2(partial) %s = %v, want %v", s.name, res[s.name], want)
			}
		}
	}
}

// runSkipBackup: a rank-replicated rank != 0 reports success without writing.
func runSkipBackup(t *testing.T, store hostcache.Store) {
	tag := uniqueTag("skip")
	opts := hostcache.Options{TPRank: 1, TPSize: 2, RankReplicated: true, ExtraBackendTag: &tag}
	r := build(t, store, opts, mlaPool(hostcache.PageFirstDirect), nil, false, 0, 7)
	if !r.backend.SkipsBackup() {
		t.Fatalf("SkipsBackup = false for TP rank 1 of a rank-replicated model")
	}
	keys := TestKeys(tag, e2ePages, r.anchor.PageSize())
	res, err := r.backend.BatchSetV1(keys, TokenIndices(rowsA, r.anchor.PageSize()), nil)
	if err != nil {
		t.Fatalf("BatchSetV1: %v", err)
	}
	allTrue(t, "BatchSetV1 (skipped)", res, e2ePages)
	if n, err := r.backend.BatchExists(keys); err != nil || n != 0 {
		t.Fatalf("rank 1 wrote %d pages (err %v); want none", n, err)
	}
}

// FillPattern writes a deterministic pseudo-random pattern into every
// buffer of pool (and of a group's anchor).
func FillPattern(pool hostcache.Pool, seed uint64) {
	hp, ok := hostPool(pool)
	if !ok {
		return
	}
	for i, b := range hp.Buffers() {
		x := seed*0x9E3779B97F4A7C15 + uint64(i+1)*0xBF58476D1CE4E5B9
		m := b.Mem
		for j := 0; j+8 <= len(m); j += 8 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			for k := 0; k < 8; k++ {
				m[j+k] = byte(x >> (8 * k))
			}
		}
		for j := len(m) &^ 7; j < len(m); j++ {
			m[j] = byte(x >> (j & 7))
		}
	}
}

func hostPool(p hostcache.Pool) (*hostcache.HostPool, bool) {
	switch v := p.(type) {
	case *hostcache.HostPool:
		return v, true
	case *hostcache.PoolGroup:
		return hostPool(v.Anchor())
	}
	return nil, false
}

// PageBytes returns the bytes of the page at row (the concatenation of its
// meta entries, i.e. the stored objects of that page in order).
func PageBytes(pool hostcache.Pool, row int) ([]byte, error) {
	hp, ok := hostPool(pool)
	if !ok {
		return nil, fmt.Errorf("not a host pool")
	}
	addrs, sizes, err := hostcache.PageBufferMeta(pool, TokenIndices([]int{row}, pool.PageSize()))
	if err != nil {
		return nil, err
	}
	var out []byte
	for i, a := range addrs {
		found := false
		for _, b := range hp.Buffers() {
			if b.Mem != nil && b.Contains(a, sizes[i]) {
				off := uint64(a - b.Addr)
				out = append(out, b.Mem[off:off+sizes[i]]...)
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("entry %d [%#x, +%d) is outside the pool's buffers", i, a, sizes[i])
		}
	}
	return out, nil
}

func comparePages(t *testing.T, what string, a hostcache.Pool, ra []int, b hostcache.Pool, rb []int) {
	t.Helper()
	for i := range ra {
		pa, err := PageBytes(a, ra[i])
		if err != nil {
			t.Fatalf("%s: page bytes A: %v", what, err)
		}
		pb, err := PageBytes(b, rb[i])
		if err != nil {
			t.Fatalf("%s: page bytes B: %v", what, err)
		}
		if !bytes.Equal(pa, pb) {
			j := 0
			for j < len(pa) && j < len(pb) && pa[j] == pb[j] {
				j++
			}
			t.Fatalf("%s: page %d (row %d → row %d) differs at byte %d of %d/%d", what, i, ra[i], rb[i], j, len(pa), len(pb))
		}
		if bytes.Count(pa, []byte{poisonB}) == len(pa) {
			t.Fatalf("%s: page %d holds only the poison byte", what, i)
		}
	}
}

// checkPoison verifies that pages not read stay untouched.
func checkPoison(t *testing.T, what string, pool hostcache.Pool, used []int) {
	t.Helper()
	isUsed := map[int]bool{}
	for _, r := range used {
		isUsed[r] = true
	}
	rows := pool.PageNum()
	for r := 0; r < rows && r < 8; r++ {
		if isUsed[r] {
			continue
		}
		pb, err := PageBytes(pool, r)
		if err != nil {
			t.Fatalf("%s: page bytes row %d: %v", what, r, err)
		}
		if n := bytes.Count(pb, []byte{poisonB}); n != len(pb) {
			t.Fatalf("%s: row %d was not read but %d of %d bytes changed", what, r, len(pb)-n, len(pb))
		}
	}
}
