//go:build cgo

package faults

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestTwoGoRuntimes pins what a Go service relies on while upstream's etcd
// client, libetcd_wrapper.so (a Go c-shared library, so a second Go runtime),
// is loaded and busy: two engines on etcd metadata transfer the whole time
// (every transfer looks the peer up in etcd through the wrapper), and
// meanwhile this process's runtime still owns its signals (os/signal,
// SIGPIPE on a pipe, SIGCHLD of os/exec), turns a nil dereference into a
// recoverable panic, profiles with SIGPROF and collects garbage.
func TestTwoGoRuntimes(t *testing.T) {
	requireMetadata(t, "etcd")
	etcd := startServer(t, "etcd")
	a, am := openEngine(t, "etcd://"+etcd.Addr())
	b, _ := openEngine(t, "etcd://"+etcd.Addr())
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(maps, []byte("libetcd_wrapper")) {
		t.Fatal("an upstream with etcd metadata is linked, but libetcd_wrapper.so is not mapped in this process")
	}
	seg, err := a.OpenSegment(b.SegmentName())
	if err != nil {
		t.Fatal(err)
	}

	// Load on both runtimes for the whole test.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var transfers atomic.Int64
	var transferErr atomic.Value
	wg.Add(1)
	go func() {
		defer wg.Done()
		for fill := byte(1); ; fill++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := roundTrip(a, am, seg, fill); err != nil {
				transferErr.Store(err)
				return
			}
			transfers.Add(1)
		}
	}()
	defer func() {
		close(stop)
		wg.Wait()
		if err, _ := transferErr.Load().(error); err != nil {
			t.Errorf("a transfer during the test: %v", err)
		}
		t.Logf("%d round trips through etcd metadata during the test", transfers.Load())
		if transfers.Load() == 0 {
			t.Error("no transfer completed: the wrapper's runtime was never busy")
		}
	}()

	t.Run("os/signal", func(t *testing.T) {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGUSR1)
		defer signal.Stop(ch)
		for i := 0; i < 200; i++ {
			if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
				t.Fatal(err)
			}
			select {
			case <-ch:
			case <-time.After(5 * time.Second):
				t.Fatalf("SIGUSR1 %d not delivered to os/signal within 5 s", i)
			}
		}
	})
	t.Run("SIGPIPE", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		defer w.Close()
		// The process survives, and the writer gets EPIPE.
		if _, err := w.Write([]byte("x")); !errors.Is(err, syscall.EPIPE) {
			t.Fatalf("write to a pipe with no reader: %v, want EPIPE", err)
		}
	})
	t.Run("SIGCHLD", func(t *testing.T) {
		for i := 0; i < 20; i++ {
			out, err := exec.Command("sh", "-c", "echo ok").Output()
			if err != nil || strings.TrimSpace(string(out)) != "ok" {
				t.Fatalf("run a child: %q, %v", out, err)
			}
		}
	})
	t.Run("nil dereference", func(t *testing.T) {
		for i := 0; i < 100; i++ {
			if err := derefNil(); err == nil || !strings.Contains(err.Error(), "nil pointer dereference") {
				t.Fatalf("a nil dereference recovered as %v, want a runtime error", err)
			}
		}
	})
	t.Run("SIGPROF", func(t *testing.T) {
		var prof bytes.Buffer
		if err := pprof.StartCPUProfile(&prof); err != nil {
			t.Fatal(err)
		}
		spin(2 * time.Second)
		pprof.StopCPUProfile()
		// A sample in spin puts its name in the profile's string table.
		zr, err := gzip.NewReader(&prof)
		if err != nil {
			t.Fatal(err)
		}
		p, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(p, []byte("faults.spin")) {
			t.Fatalf("a CPU profile of 2 s spinning in spin has no sample in it (%d bytes)", len(p))
		}
	})
	t.Run("GC", func(t *testing.T) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before := ms.NumGC
		for i := 0; i < 20; i++ {
			_ = make([]byte, 8<<20)
			runtime.GC()
		}
		runtime.ReadMemStats(&ms)
		if ms.NumGC-before < 20 {
			t.Fatalf("%d collections, want 20", ms.NumGC-before)
		}
	})
}

// derefNil dereferences a nil pointer and returns the recovered panic.
func derefNil() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err, _ = r.(error)
		}
	}()
	var p *[1 << 10]byte
	sink = p[len(os.Args)%2]
	return nil
}

var sink byte

// spin keeps a CPU busy in Go for d, so that SIGPROF fires in Go code.
func spin(d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	x := 1
	for ctx.Err() == nil {
		for i := 0; i < 1e5; i++ {
			x = x*31 + i
		}
	}
	sink = byte(x)
}
