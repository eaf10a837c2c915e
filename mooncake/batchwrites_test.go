//go:build cgo

package mooncake_test

import (
	"errors"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

// TestBatchWrites: with Config.BatchWrites set, a zero-copy batch write
// waits while that many are in upstream and crosses when one ends; a batch
// read does not wait; a negative bound is refused.
func TestBatchWrites(t *testing.T) {
	cl := mooncaketest.NewCluster(t)
	st := cl.Open(t, func(c *mooncake.Config) { c.BatchWrites = 2 })
	mem := mooncaketest.Memory(t, st, 8<<10)
	a := mem.Addr()
	raw := st.Raw()
	if _, err := raw.BatchPutFrom([]string{"bw/r"}, []uintptr{a}, []uint64{4096}, nil); err != nil {
		t.Fatal(err)
	}

	release := mooncake.HoldBatchWrites(st, 2)
	done := make(chan error, 1)
	go func() {
		_, err := raw.BatchPutFrom([]string{"bw/w"}, []uintptr{a}, []uint64{4096}, nil)
		done <- err
	}()
	// A read crosses while both write slots are taken.
	if res, err := raw.BatchGetInto([]string{"bw/r"}, []uintptr{a + 4096}, []uint64{4096}, nil); err != nil || res[0] != 4096 {
		t.Fatalf("a batch read with the writes held: %v %v", res, err)
	}
	select {
	case err := <-done:
		t.Fatalf("a batch write crossed with %d of %d slots taken (err %v)", 2, 2, err)
	case <-time.After(100 * time.Millisecond):
	}
	release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the batch write did not cross after the slots were given back")
	}
	if ok, err := st.IsExist("bw/w"); err != nil || !ok {
		t.Fatalf("the written key: exists %v, %v", ok, err)
	}

	_, err := mooncake.Open(cl.Config(func(c *mooncake.Config) { c.BatchWrites = -1 }))
	if !errors.Is(err, mooncake.ErrInvalidConfig) {
		t.Fatalf("BatchWrites -1: %v, want ErrInvalidConfig", err)
	}
}
