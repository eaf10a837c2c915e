//go:build cgo

package mooncake_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

// TestBatchWrites: a zero-copy batch write that does not fit the keys
// (Config.BatchWriteKeys) or the bytes (BatchWriteBytes) in flight waits
// and crosses once they are given back; a batch read does not wait; 0 sets
// the default bound and a negative value none.
func TestBatchWrites(t *testing.T) {
	cl := mooncaketest.NewCluster(t)
	st := cl.Open(t, func(c *mooncake.Config) { c.BatchWriteKeys = 4 })
	mem := mooncaketest.Memory(t, st, 16<<10)
	a := mem.Addr()
	raw := st.Raw()
	if _, err := raw.BatchPutFrom([]string{"bw/r"}, []uintptr{a}, []uint64{4096}, nil); err != nil {
		t.Fatal(err)
	}

	release := mooncake.HoldBatchWrites(st, 3, 3*4096)
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

	// A batch within the keys bound waits for bytes: 1 key of 4 KiB fits
	// beside 8 KiB of a 12 KiB bound, 2 keys of 4 KiB do not.
	bst := cl.Open(t, func(c *mooncake.Config) { c.BatchWriteKeys, c.BatchWriteBytes = -1, 12<<10 })
	bmem := mooncaketest.Memory(t, bst, 8<<10)
	release = mooncake.HoldBatchWrites(bst, 2, 8<<10)
	if _, err := bst.Raw().BatchPutFrom([]string{"bb/1"}, []uintptr{bmem.Addr()}, []uint64{4096}, nil); err != nil {
		t.Fatal(err)
	}
	go func() {
		_, err := bst.Raw().BatchPutFrom([]string{"bb/w1", "bb/w2"}, []uintptr{bmem.Addr(), bmem.Addr() + 4096}, []uint64{4096, 4096}, nil)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("8 KiB crossed beside 8 KiB of a 12 KiB bound (err %v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// The settings' three forms.
	for _, tc := range []struct {
		keys               int
		bytes              int64
		wantKeys, wantByte int64
	}{
		{0, 0, mooncake.DefaultBatchWriteKeys, mooncake.DefaultBatchWriteBytes},
		{-1, -1, 0, 0},
		{7, -1, 7, 0},
		{-1, 1 << 20, 0, 1 << 20},
	} {
		o := cl.Open(t, func(c *mooncake.Config) { c.BatchWriteKeys, c.BatchWriteBytes = tc.keys, tc.bytes })
		if k, b := mooncake.BatchWriteBounds(o); k != tc.wantKeys || b != tc.wantByte {
			t.Errorf("BatchWriteKeys %d, BatchWriteBytes %d: bounds %d keys, %d bytes; want %d, %d", tc.keys, tc.bytes, k, b, tc.wantKeys, tc.wantByte)
		}
	}
}

// TestBatchWritesContext: the Context variants of the zero-copy batch
// writes. A context that ends while the batch waits for the write budget
// makes it leave with an *Error wrapping the context's error, nil results,
// nothing stored and no call counted; one that has ended before the call
// stops it even when the budget has room; a nil context is refused; a live
// one gets the real results. One buffer per key and a buffer list per key.
func TestBatchWritesContext(t *testing.T) {
	cl := mooncaketest.NewCluster(t)
	st := cl.Open(t, func(c *mooncake.Config) { c.BatchWriteKeys = 4 })
	mem := mooncaketest.Memory(t, st, 16<<10)
	a := mem.Addr()
	type call func(ctx context.Context, keys *hostmem.Keys, bufs hostmem.Buffers) ([]int64, error)
	one := hostmem.Buffers{Addrs: []uintptr{a, a + 4096}, Sizes: []uint64{4096, 4096}}
	multi := hostmem.Buffers{Addrs: []uintptr{a, a + 2048, a + 4096}, Sizes: []uint64{2048, 2048, 4096}, Offsets: []uint64{0, 2, 3}}
	for _, tc := range []struct {
		name string
		op   mooncake.Op
		bufs hostmem.Buffers
		call call
	}{
		{"BatchPutFromContext", mooncake.OpBatchPutFrom, one, func(ctx context.Context, k *hostmem.Keys, b hostmem.Buffers) ([]int64, error) {
			return st.BatchPutFromContext(ctx, k, b, nil)
		}},
		{"BatchPutFromContext/multi", mooncake.OpBatchPutFromMultiBuffers, multi, func(ctx context.Context, k *hostmem.Keys, b hostmem.Buffers) ([]int64, error) {
			return st.BatchPutFromContext(ctx, k, b, nil)
		}},
		{"BatchUpsertFromContext", mooncake.OpBatchUpsertFrom, one, func(ctx context.Context, k *hostmem.Keys, b hostmem.Buffers) ([]int64, error) {
			return st.BatchUpsertFromContext(ctx, k, b, nil)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys := hostmem.PackKeys(mooncaketest.Key(t, "a"), mooncaketest.Key(t, "b"))
			calls := func() uint64 { return st.Stats().Op(tc.op).Calls }
			storedNothing := func(res []int64, err error, want error) {
				t.Helper()
				require.ErrorIs(t, err, want)
				var me *mooncake.Error
				require.ErrorAs(t, err, &me)
				assert.Equal(t, tc.op, me.Op)
				assert.Nil(t, res)
				for _, k := range keys.Strings() {
					ok, err := st.IsExist(k)
					require.NoError(t, err)
					assert.False(t, ok, "%s stored by a call that did not cross", k)
				}
			}
			before := calls()

			var none context.Context
			res, err := tc.call(none, keys, tc.bufs)
			storedNothing(res, err, mooncake.ErrInvalidParams)
			ended, cancel := context.WithCancel(context.Background())
			cancel()
			res, err = tc.call(ended, keys, tc.bufs)
			storedNothing(res, err, context.Canceled)

			// Ends while it waits: 2 keys do not fit beside 3 of 4.
			release := mooncake.HoldBatchWrites(st, 3, 3*4096)
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			res, err = tc.call(ctx, keys, tc.bufs)
			cancel()
			storedNothing(res, err, context.DeadlineExceeded)
			assert.Equal(t, before, calls(), "calls that did not cross were counted")

			// A live context waits for room and crosses.
			ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			done := make(chan error, 1)
			go func() { _, err := tc.call(ctx, keys, tc.bufs); done <- err }()
			time.Sleep(20 * time.Millisecond)
			release()
			require.NoError(t, <-done)
			for _, k := range keys.Strings() {
				ok, err := st.IsExist(k)
				require.NoError(t, err)
				assert.True(t, ok, k)
			}
			assert.Equal(t, before+1, calls())
		})
	}
}
