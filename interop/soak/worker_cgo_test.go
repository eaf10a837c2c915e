//go:build cgo

package soak

import (
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

// Two workers on one cluster, each reading the other's keys: every read is
// checked, nothing is lost or corrupt on a healthy engine.
func TestWorkers(t *testing.T) {
	c := mooncaketest.NewCluster(t)
	var workers []*Worker
	for i := 0; i < 2; i++ {
		st := c.Open(t)
		mem, err := hostmem.Alloc(MemSize, hostmem.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.RegisterMemory(mem); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close(); mem.Free() })
		workers = append(workers, &Worker{St: st, Mem: mem, Prefix: fmt.Sprintf("%s/w%d", mooncaketest.Key(t, "soak"), i), Seed: int64(i)})
	}
	for i, w := range workers {
		other := workers[1-i].Prefix
		w.Cross = func(r *rand.Rand) string { return fmt.Sprintf("%s/p/%d", other, r.Intn(PublishedKeys)) }
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.Run(stop); err != nil {
				t.Error(err)
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()
	for i, w := range workers {
		w.Sweep()
		s := w.Snapshot()
		t.Logf("worker %d: %d calls, %d bytes verified, errors %s", i, s.Calls(), s.BytesVerified, s.ErrorSummary())
		// A read of a key the other worker is writing may find its
		// replica not ready yet (-703); the worker's own calls never fail.
		own := 0
		for k, n := range s.Errors {
			if !strings.HasPrefix(k, "cross_get: ") {
				own += int(n)
			}
		}
		if s.Corrupt != 0 || s.Lost != 0 || own != 0 {
			t.Errorf("worker %d: %d corrupt, %d lost, errors %s: %v", i, s.Corrupt, s.Lost, s.ErrorSummary(), append(s.CorruptNotes, s.LostNotes...))
		}
		for _, op := range []string{"put", "upsert", "get", "batch_get_into", "batch_get_into_multi_buffers", "remove", "publish_put", "batch_is_exist", "cross_get"} {
			if s.Ops[op] == 0 {
				t.Errorf("worker %d never did %s", i, op)
			}
		}
	}
	// The checks catch a value that is not what the model holds.
	w := workers[0]
	k := w.singles[0]
	bad := make([]byte, 100)
	Fill(bad, k, w.model[k].next()+5)
	if err := w.St.Upsert(k, bad); err != nil {
		t.Fatal(err)
	}
	before := w.Snapshot().Lost
	w.get(k)
	if w.Snapshot().Lost != before+1 {
		t.Error("a version the model never wrote was not counted lost")
	}
}
