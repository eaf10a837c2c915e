//go:build cgo

package main

import (
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

// TestFreshRemovesGenerations: fresh removes the previous generation of
// fresh keys (removeGen) once the next write would pass the caller's share
// of -gen-bytes: plain keys by their keys, page keys with every key the
// HiCache backend derives from them (a suffix here); a key whose put
// failed (absent) does not fail the removal.
func TestFreshRemovesGenerations(t *testing.T) {
	st := mooncaketest.Open(t)
	for _, page := range []bool{false, true} {
		b := &bench{st: st, o: &options{genBytes: 3 * 4096}, run: "fresh-test"}
		cr := &caseRun{bench: b, idx: map[bool]int{false: 1, true: 2}[page]}
		var first []string
		for i := 0; i < 3; i++ {
			keys, err := cr.fresh(nil, 1, 4096, page)
			if err != nil {
				t.Fatal(err)
			}
			stored := keys[0]
			if page {
				stored += "_0_k" // as the backend stores a page
			}
			if i < 2 { // the third stays unwritten: a failed put
				if err := st.Put(stored, []byte("v")); err != nil {
					t.Fatal(err)
				}
			}
			first = append(first, stored)
		}
		next, err := cr.fresh(nil, 1, 4096, page)
		if err != nil {
			t.Fatalf("page %v: fresh past the generation: %v", page, err)
		}
		if cr.gen != 1 || next[0] == first[0] {
			t.Fatalf("page %v: generation %d, key %q after %q", page, cr.gen, next[0], first[0])
		}
		for _, k := range first {
			if ok, err := st.IsExist(k); err != nil || ok {
				t.Errorf("page %v: %q of the removed generation: exists %v, %v", page, k, ok, err)
			}
		}
	}
}
