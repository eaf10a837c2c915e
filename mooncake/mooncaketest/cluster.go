// Package mooncaketest opens stores for tests and holds the conformance
// suite that every engine must pass unchanged: the embedded engine in
// `go test ./...`, and upstream Mooncake in `make test-native`.
//
// With the embedded engine, NewCluster makes a fresh in-process cluster per
// call. In a native build (-tags mooncake_native) it connects to the live
// cluster named by the environment:
//
//	MCGO_TEST_MASTER    master RPC address, e.g. 127.0.0.1:50051 (required)
//	MCGO_TEST_METADATA  metadata server, e.g. http://127.0.0.1:8080/metadata (required)
//	MCGO_TEST_MASTER_ADMIN  the master's admin HTTP server (optional): a stopped
//	                    real client's segment is waited out there
//	MCGO_TEST_PROTOCOL  tcp (default) or rdma
//	MCGO_TEST_DEVICE    RDMA device list (default "")
//	MCGO_TEST_ISOLATED  1 when no other process uses the cluster (a fresh
//	                    master per test binary, packages run with -p 1)
//
// scripts/cluster (go run ./scripts/cluster -- CMD) starts such a cluster on
// loopback and exports them.
package mooncaketest

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/internal/fill"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// Cluster hands out store clients that share one cluster.
type Cluster struct {
	base mooncake.Config
	// Native is true when the cluster is a live upstream Mooncake cluster.
	Native bool
	// Isolated is true when no other test uses the cluster, so capacity and
	// RemoveAll can be tested exactly. Only fresh embedded clusters are.
	Isolated bool
	// ChecksRegistration is true when zero-copy calls on unregistered memory
	// fail (the embedded engine, and Mooncake over RDMA). Mooncake's TCP
	// transport does not check: such calls then succeed.
	ChecksRegistration bool
}

var clusterSeq atomic.Int64

// runID keeps keys of different test processes apart on a shared cluster.
var runID = fmt.Sprintf("%x", time.Now().UnixNano()&0xffffffffff)

// NewCluster returns the cluster tests should use: a fresh embedded cluster,
// or the live cluster from the environment in a native build.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	if mooncake.Backend().Name == "native" {
		master, meta := os.Getenv("MCGO_TEST_MASTER"), os.Getenv("MCGO_TEST_METADATA")
		if master == "" || meta == "" {
			t.Fatalf("native engine: set MCGO_TEST_MASTER and MCGO_TEST_METADATA (make test-native starts a loopback cluster and sets them)")
		}
		proto := os.Getenv("MCGO_TEST_PROTOCOL")
		if proto == "" {
			proto = "tcp"
		}
		return &Cluster{
			base: mooncake.Config{
				LocalHostname:       "127.0.0.1",
				MetadataServer:      meta,
				GlobalSegmentSize:   128 << 20,
				LocalBufferSize:     32 << 20,
				Protocol:            proto,
				DeviceName:          os.Getenv("MCGO_TEST_DEVICE"),
				MasterServerAddress: master,
			},
			Native:             true,
			Isolated:           os.Getenv("MCGO_TEST_ISOLATED") == "1",
			ChecksRegistration: proto == "rdma",
		}
	}
	return &Cluster{
		base: mooncake.Config{
			LocalHostname:       "127.0.0.1",
			MetadataServer:      "P2PHANDSHAKE",
			GlobalSegmentSize:   128 << 20,
			LocalBufferSize:     32 << 20,
			Protocol:            "tcp",
			MasterServerAddress: fmt.Sprintf("embedded-test-%s-%d-%s", runID, clusterSeq.Add(1), sanitize(t.Name())),
		},
		Isolated:           true,
		ChecksRegistration: true,
	}
}

// Config returns the configuration Open uses, with mods applied.
func (c *Cluster) Config(mods ...func(*mooncake.Config)) mooncake.Config {
	cfg := c.base
	for _, m := range mods {
		m(&cfg)
	}
	return cfg
}

// With returns a copy of the cluster whose clients open with mods applied
// after the cluster's own settings: the conformance suite runs on it
// unchanged, e.g. with Config.Combining on.
func (c *Cluster) With(mods ...func(*mooncake.Config)) *Cluster {
	d := *c
	d.base = c.Config(mods...)
	return &d
}

// Open connects a new client to the cluster and closes it when the test
// ends.
func (c *Cluster) Open(t testing.TB, mods ...func(*mooncake.Config)) *mooncake.Store {
	t.Helper()
	st, err := mooncake.Open(c.Config(mods...))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// Open opens a client on a new cluster (see NewCluster).
func Open(t testing.TB) *mooncake.Store {
	t.Helper()
	return NewCluster(t).Open(t)
}

// Memory maps size bytes of host memory, registers it with st, and frees it
// when the test ends (after st is closed).
func Memory(t testing.TB, st *mooncake.Store, size int) *hostmem.Memory {
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
	if st != nil {
		if err := st.RegisterMemory(m); err != nil {
			t.Fatalf("register host memory: %v", err)
		}
		t.Cleanup(func() {
			// A test may have closed the store, which ends the registration.
			if err := st.UnregisterMemory(m); err != nil && !errors.Is(err, mooncake.ErrClosed) {
				t.Errorf("unregister host memory: %v", err)
			}
		})
	}
	return m
}

// Key returns a key unique to this test and process.
func Key(t testing.TB, name string) string {
	return "mcgo-test/" + runID + "/" + sanitize(t.Name()) + "/" + name
}

// Keys returns n unique keys.
func Keys(t testing.TB, prefix string, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = Key(t, fmt.Sprintf("%s-%d", prefix, i))
	}
	return keys
}

// KeyRegexPrefix returns a regular expression matching exactly the keys Key
// makes for this test (for RemoveByRegex).
func KeyRegexPrefix(t testing.TB) string {
	return "^" + regexp.QuoteMeta("mcgo-test/"+runID+"/"+sanitize(t.Name())+"/")
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

// Fill writes a pattern derived from seed into b.
func Fill(b []byte, seed uint64) { fill.Fill(b, seed) }

// RequireNative is the first line of a test that needs real Mooncake (a
// native backend: the library make native builds, loaded with
// MCGO_NATIVE_LIBRARY or linked with -tags mooncake_native). Without one
// the test is skipped, saying how to run it; where real Mooncake is
// required (MCGO_REQUIRE_UPSTREAM=1, as make test-native sets) it fails
// instead, so that it can never pass by not running.
func RequireNative(t testing.TB) {
	t.Helper()
	if mooncake.Backend().Name == "native" {
		return
	}
	if os.Getenv("MCGO_REQUIRE_UPSTREAM") == "1" {
		t.Fatalf("MCGO_REQUIRE_UPSTREAM=1 but the backend is %q: set MCGO_NATIVE_LIBRARY (make test-native does)", mooncake.Backend().Name)
	}
	t.Skip("needs real Mooncake: make test-native MOONCAKE_PREFIX=...")
}
