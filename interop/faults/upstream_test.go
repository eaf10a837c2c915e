//go:build cgo

package faults

import (
	"syscall"
	"testing"

	"github.com/mooncake-go/mooncake-go/internal/testcluster"
	"github.com/mooncake-go/mooncake-go/mooncake"
)

// knownCrash is a crash of upstream's mooncake_master that a fault test
// provokes in an older upstream version and the pinned one fixed: the
// test then ends with a skip that names it (docs/faults.md, "Upstream
// versions"). Any other crash, in any other test or version, fails.
type knownCrash struct {
	commit string // upstream commit (mooncake.Backend().UpstreamCommit)
	test   string // t.Name()
	sig    syscall.Signal
	what   string
}

var knownCrashes = []knownCrash{{
	commit: "6041a609a8c3af35e778f70db344f145c2914980", // v0.3.12.post1
	test:   "TestMetadataLost",
	sig:    syscall.SIGSEGV,
	what: "v0.3.12.post1's master dereferences null in MasterService::MetadataAccessorRW, " +
		"called from PutEnd for a BatchPutEnd, after a client that held replicas of objects " +
		"still being put expired (3 of 3 runs; the pinned commit's master survives the same run)",
}}

// checkMaster ends the test when upstream's master m crashed: with a skip
// naming the defect if it is a known crash of the linked upstream
// version, otherwise as a failure.
func checkMaster(t *testing.T, m *testcluster.Master) {
	t.Helper()
	sig, crashed := m.Crashed()
	if !crashed {
		return
	}
	commit := mooncake.Backend().UpstreamCommit
	for _, k := range knownCrashes {
		if k.commit == commit && k.test == t.Name() && k.sig == sig {
			t.Skipf("upstream %.8s: mooncake_master crashed (%v), a known defect of this version: %s; log %s",
				commit, sig, k.what, m.LogPath)
		}
	}
	t.Fatalf("upstream's mooncake_master crashed (%v) on its own; log %s", sig, m.LogPath)
}
