//go:build cgo

package mooncake_test

import (
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

// TestBatchWriteKeys: with Config.BatchWriteKeys set, a zero-copy batch
// write that does not fit the keys in flight waits and crosses once they
// are given back; a batch read does not wait; 0 sets the default bound and
// a negative value none.
func TestBatchWriteKeys(t *testing.T) {
	cl := mooncaketest.NewCluster(t)
	st := cl.Open(t, func(c *mooncake.Config) { c.BatchWriteKeys = 4 })
	mem := mooncaketest.Memory(t, st, 16<<10)
	a := mem.Addr()
	raw := st.Raw()
	if _, err := raw.BatchPutFrom([]string{"bw/r"}, []uintptr{a}, []uint64{4096}, nil); err != nil {
		t.Fatal(err)
	}

	release := mooncake.HoldBatchWriteKeys(st, 3)
	// One key fits beside three.
	if _, err := raw.BatchPutFrom([]string{"bw/1"}, []uintptr{a}, []uint64{4096}, nil); err != nil {
		t.Fatalf("a 1-key batch write beside 3 of 4 keys: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := raw.BatchPutFrom([]string{"bw/w1", "bw/w2"}, []uintptr{a, a + 4096}, []uint64{4096, 4096}, nil)
		done <- err
	}()
	// A read crosses while the writes wait.
	if res, err := raw.BatchGetInto([]string{"bw/r"}, []uintptr{a + 8192}, []uint64{4096}, nil); err != nil || res[0] != 4096 {
		t.Fatalf("a batch read with the write budget held: %v %v", res, err)
	}
	select {
	case err := <-done:
		t.Fatalf("a 2-key batch write crossed with 3 of 4 keys in flight (err %v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the batch write did not cross after the keys were given back")
	}
	for _, k := range []string{"bw/1", "bw/w1", "bw/w2"} {
		if ok, err := st.IsExist(k); err != nil || !ok {
			t.Fatalf("%s: exists %v, %v", k, ok, err)
		}
	}

	// The setting's three forms.
	for _, tc := range []struct{ set, bound int }{{0, mooncake.DefaultBatchWriteKeys}, {-1, 0}, {7, 7}} {
		o := cl.Open(t, func(c *mooncake.Config) { c.BatchWriteKeys = tc.set })
		if got := mooncake.BatchWriteBound(o); got != tc.bound {
			t.Errorf("BatchWriteKeys %d: a bound of %d keys, want %d", tc.set, got, tc.bound)
		}
	}
}
