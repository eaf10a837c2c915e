// Package transfertest runs the transfer engine's conformance suite: one set
// of behaviours that the embedded engine and upstream's (a native build,
// against a live metadata server) must both show. It also hands out engines
// and registered memory for tests.
//
// Environment of a native build (make test-native sets it):
//
//	MCGO_TEST_METADATA  the master's HTTP metadata server, e.g. http://127.0.0.1:8080/metadata
//	MCGO_TEST_PROTOCOL  tcp (default) or rdma
package transfertest

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
)

// Env hands out engines that can reach each other.
type Env struct {
	// Metadata is the metadata string every engine of the Env uses.
	Metadata string
	Protocol string
	// Native is true against upstream's engine.
	Native bool
	// Mods apply to every engine the Env opens, before Open's own (the
	// conformance suite runs unchanged with, say, Config.Combining on).
	Mods []func(*transfer.Config)
}

var envSeq atomic.Int64

var runID = fmt.Sprintf("%x", time.Now().UnixNano()&0xffffff)

// NewEnv returns the environment tests should use: a fresh namespace of
// the embedded engine, or the live metadata server in a native build.
func NewEnv(t testing.TB) *Env {
	t.Helper()
	if mooncake.Backend().Name == "native" {
		meta := os.Getenv("MCGO_TEST_METADATA")
		if meta == "" {
			t.Fatalf("native engine: set MCGO_TEST_METADATA (make test-native starts a loopback cluster and sets it)")
		}
		proto := os.Getenv("MCGO_TEST_PROTOCOL")
		if proto == "" {
			proto = "tcp"
		}
		return &Env{Metadata: meta, Protocol: proto, Native: true}
	}
	return &Env{Metadata: fmt.Sprintf("http://embedded-%s-%d.invalid/metadata", runID, envSeq.Add(1)), Protocol: "tcp"}
}

var portSeq atomic.Int64

// Name returns a segment name no other engine of this run uses.
func (env *Env) Name() string {
	// Upstream binds its own ports; the name only has to be unique.
	return fmt.Sprintf("127.0.0.1:%d", 20000+portSeq.Add(1)%20000+int64(os.Getpid()%1000)*20)
}

// Open opens an engine and closes it when the test ends.
func (env *Env) Open(t testing.TB, mods ...func(*transfer.Config)) *transfer.Engine {
	t.Helper()
	cfg := transfer.Config{MetadataServer: env.Metadata, LocalServerName: env.Name(), Protocol: env.Protocol}
	for _, m := range append(env.Mods[:len(env.Mods):len(env.Mods)], mods...) {
		m(&cfg)
	}
	e, err := transfer.Open(cfg)
	if err != nil {
		t.Fatalf("open transfer engine: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("close transfer engine: %v", err)
		}
	})
	return e
}

// Memory maps size bytes, registers them with e (when not nil), and frees
// them when the test ends (after the engine is closed, which ends the
// registration).
func Memory(t testing.TB, e *transfer.Engine, size int) *hostmem.Memory {
	t.Helper()
	m, err := hostmem.Alloc(uint64(size), hostmem.Options{})
	if err != nil {
		t.Fatalf("alloc host memory: %v", err)
	}
	t.Cleanup(func() {
		if err := m.Free(); err != nil {
			t.Errorf("free host memory: %v", err)
		}
	})
	if e != nil {
		if err := e.RegisterMemory(m); err != nil {
			t.Fatalf("register host memory: %v", err)
		}
		t.Cleanup(func() {
			if err := e.UnregisterMemory(m); err != nil && !errors.Is(err, transfer.ErrClosed) {
				t.Errorf("unregister host memory: %v", err)
			}
		})
	}
	return m
}
