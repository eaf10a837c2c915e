//go:build cgo

package faults

import (
	"bytes"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/internal/testcluster"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

// call is one timed call that may hang: it runs in its own goroutine and
// is given up on (reported as hung) after watch.
type call struct {
	name string
	err  error
	took time.Duration
	hung bool
}

func timed(name string, watch time.Duration, f func() error) call {
	done := make(chan call, 1)
	t0 := time.Now()
	go func() {
		err := f()
		done <- call{name: name, err: err, took: time.Since(t0)}
	}()
	select {
	case c := <-done:
		return c
	case <-time.After(watch):
		return call{name: name, took: watch, hung: true}
	}
}

// metaProbe is what a client does while its metadata server is away: read
// objects of a peer it has read from before (its segment is known), put and
// get in its own segment, read objects of a peer it has not read from (the
// segment must be looked up), and open a new client.
func metaProbe(t *testing.T, st *mooncake.Store, m *testcluster.Master, meta string, round int) []call {
	readAll := func(prefix string) func() error {
		return func() error {
			for i := 0; i < peerObjects; i++ {
				v, err := st.Get(fmt.Sprintf("%s/%d", prefix, i))
				if err != nil {
					return err
				}
				if !bytes.Equal(v, peerValue(i)) {
					t.Errorf("%s/%d: %d bytes that are not its value", prefix, i, len(v))
				}
			}
			return nil
		}
	}
	host, _ := st.Hostname()
	mine := st.WithReplicateConfig(mooncake.ReplicateConfig{PreferredSegments: []string{host}})
	own := func() error {
		k := fmt.Sprintf("own/%d", round)
		if err := mine.Put(k, peerValue(round)); err != nil {
			return err
		}
		v, err := st.Get(k)
		if err == nil && !bytes.Equal(v, peerValue(round)) {
			t.Errorf("%s: wrong bytes", k)
		}
		return err
	}
	open := func() error {
		c := config(m, 16<<20)
		c.MetadataServer = meta
		st2, err := mooncake.Open(c)
		if err == nil {
			st2.Close()
		}
		return err
	}
	const watch = 60 * time.Second
	return []call{
		timed("get from a known peer", watch, readAll("known")),
		timed("put and get in its own segment", watch, own),
		timed("get from a peer not read before", watch, readAll(fmt.Sprintf("unknown%d", round))),
		timed("Open a new client", watch, open),
	}
}

// metaCallBound: the slowest call measured was a get from an unknown peer
// while the server was paused, 3.0 s (upstream's curl timeout), and Open
// then, 5.0 s (Config.ConnectTimeout, by default DefaultConnectTimeout);
// docs/faults.md.
const metaCallBound = 10 * time.Second

// TestMetadataLost: the HTTP metadata server (a second master's, so that it
// can fail on its own) is paused (SIGSTOP: connections are accepted and never
// answered), then continued; then killed, then restarted empty. A client
// already open keeps working with the segments it knows, and its own; a
// segment it has not looked up yet fails typed; a new Open fails typed
// within a bound while the server is away.
func TestMetadataLost(t *testing.T) {
	mooncaketest.RequireNative(t)
	m := startMaster(t, testcluster.Options{})
	md := startMaster(t, testcluster.Options{})
	meta := md.MetadataURL()
	for _, prefix := range []string{"known", "unknown0", "unknown1", "unknown2", "unknown3"} {
		startPeerWith(t, m, meta, "writer", prefix)
	}
	c := config(m, 64<<20)
	c.MetadataServer = meta
	st, err := mooncake.Open(c)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Batch traffic the whole time, placed anywhere in the cluster.
	workers := openWorkers(t, c, 2)
	var fault atomic.Int64
	stop := runWorkers(workers, &fault)
	defer stop() // a test ended early (checkMaster) stops them too
	for _, c := range metaProbe(t, st, m, meta, 100)[:2] {
		if c.err != nil || c.hung {
			t.Fatalf("before the fault: %s: %v", c.name, c.err)
		}
	}

	// want[i] is the code of metaProbe's call i (0: success).
	rpcFail, invalid := mooncake.ErrRPCFail, mooncake.ErrInvalidParams
	for round, phase := range []struct {
		name  string
		fault func() error
		want  [4]mooncake.ErrorCode
	}{
		{"paused", md.Pause, [4]mooncake.ErrorCode{0, 0, invalid, rpcFail}},
		{"continued", func() error { err := md.Resume(); time.Sleep(time.Second); return err }, [4]mooncake.ErrorCode{}},
		{"killed", func() error { md.Kill(); return nil }, [4]mooncake.ErrorCode{0, 0, invalid, rpcFail}},
		// Upstream's clients publish their segments again only when their
		// master asks them to remount (client_service.cpp): a metadata
		// server restarted empty has lost every peer's segment for good.
		{"restarted empty", md.Restart, [4]mooncake.ErrorCode{0, 0, invalid, 0}},
	} {
		fault.Store(1)
		if err := phase.fault(); err != nil {
			t.Fatal(err)
		}
		calls := metaProbe(t, st, m, meta, round)
		checkMaster(t, m)
		for i, c := range calls {
			t.Logf("%s: %s: %v in %v", phase.name, c.name, c.err, c.took.Round(time.Millisecond))
			switch {
			case c.hung:
				t.Errorf("%s: %s: no answer in %v", phase.name, c.name, c.took)
			case c.took > metaCallBound:
				t.Errorf("%s: %s: took %v, more than %v", phase.name, c.name, c.took, metaCallBound)
			}
			switch {
			case c.hung:
			case phase.want[i] == 0 && c.err != nil:
				t.Errorf("%s: %s: %v, want success", phase.name, c.name, c.err)
			case phase.want[i] != 0 && !errors.Is(c.err, phase.want[i]):
				t.Errorf("%s: %s: %v, want %v", phase.name, c.name, c.err, phase.want[i])
			}
		}
	}
	if t.Failed() {
		_ = md.Resume() // let a hung call finish before the cleanups stop everything
	}
	stop()
	var worst time.Duration
	codes := map[mooncake.ErrorCode]int{}
	ok := 0
	for _, w := range workers {
		for _, r := range w.after {
			worst = max(worst, r.took)
			switch code := errCode(r.err); {
			case r.err == nil:
				ok++
			case code != 0:
				codes[code]++
			default:
				t.Errorf("worker %d: %v, want a typed error", w.id, r.err)
			}
		}
		if c := w.corrupt.Load(); c != 0 {
			t.Errorf("worker %d: %d reads returned other bytes than written", w.id, c)
		}
		w.st.Close()
		_ = w.mem.Free()
	}
	t.Logf("batch workers from the first fault on: %d calls succeeded, failures by code %v, slowest %v", ok, codes, worst)
	if worst > metaCallBound {
		t.Errorf("a batch call took %v, more than %v", worst, metaCallBound)
	}
}
