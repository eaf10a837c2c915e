//go:build cgo

package main

import (
	"fmt"
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

// TestKeys: the hand-formatted keys are the fmt forms bench_python.py
// writes too, key after key on one caseRun (which reuses its buffer), and
// each returned key stays as it was.
func TestKeys(t *testing.T) {
	cr := &caseRun{bench: &bench{run: "r7f3"}, idx: 12}
	var got, want []string
	for _, v := range []struct {
		ns      byte
		gen, id int
	}{{'w', 0, 0}, {'d', 7, 123456}, {'u', 9999, 999999999999}, {'w', 12345, 1234567890123}, {'w', 1, 1}} {
		got = append(got, cr.key(v.ns, v.gen, v.id), cr.pageKey(v.ns, v.gen, v.id))
		want = append(want, fmt.Sprintf("%s-%03d-%c%04d-%012d", "r7f3", 12, v.ns, v.gen, v.id),
			fmt.Sprintf("%s-%03d-%c%04d-%045d", "r7f3", 12, v.ns, v.gen, v.id))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("key %d: %q, want %q", i, got[i], want[i])
		}
	}
}
