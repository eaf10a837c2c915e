//go:build cgo

package faults

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/internal/testcluster"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

// dummyCloseBound is how long Close of a dummy may take whatever its real
// client does: the native shim waits 10 s for upstream's teardown.
const dummyCloseBound = 15 * time.Second

func startRealClient(t *testing.T, m *testcluster.Master) *testcluster.RealClient {
	t.Helper()
	r, err := testcluster.StartRealClient(testcluster.RealClientOptions{
		Master: m.Addr(), Metadata: m.MetadataURL(), Segment: "64mb", Local: "16mb",
		LogDir: "../../build/cluster-logs", Quiet: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r
}

func openDummy(t *testing.T, r *testcluster.RealClient) *mooncake.Store {
	t.Helper()
	d, err := mooncake.OpenDummy(mooncake.DummyConfig{ServerAddress: r.Addr(), LocalBufferSize: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDummyRealClientFaults: a dummy whose real client (upstream's
// mooncake_client) dies or hangs. Calls fail typed; HealthCheck says so;
// Close returns within dummyCloseBound even when the real client hangs,
// where upstream's DummyClient teardown blocks until it answers again.
func TestDummyRealClientFaults(t *testing.T) {
	mooncaketest.RequireNative(t)
	value := bytes.Repeat([]byte("d"), 4096)
	// A master each: the master lists a killed real client's segment until
	// its client TTL ends, and puts placed on it fail.
	t.Run("killed", func(t *testing.T) {
		r := startRealClient(t, startMaster(t, testcluster.Options{}))
		d := openDummy(t, r)
		if err := d.Put("dummy-fault/killed", value); err != nil {
			t.Fatal(err)
		}
		r.Kill()
		t0 := time.Now()
		_, err := d.Get("dummy-fault/killed")
		t.Logf("get after the real client was killed: %v in %v", err, time.Since(t0))
		if !errors.Is(err, mooncake.ErrRPCFail) {
			t.Errorf("get: %v, want RPC_FAIL", err)
		}
		t0 = time.Now()
		for d.HealthCheck() == nil && time.Since(t0) < 10*time.Second {
			time.Sleep(50 * time.Millisecond)
		}
		err = d.HealthCheck()
		t.Logf("health check after the get: %v after %v more", err, time.Since(t0))
		if !errors.Is(err, mooncake.ErrRPCFail) {
			t.Errorf("health check: %v, want RPC_FAIL", err)
		}
		t0 = time.Now()
		d.Close()
		t.Logf("close: %v", time.Since(t0))
		if took := time.Since(t0); took > dummyCloseBound {
			t.Errorf("close took %v, more than %v", took, dummyCloseBound)
		}
	})

	t.Run("hung", func(t *testing.T) {
		r := startRealClient(t, startMaster(t, testcluster.Options{}))
		d := openDummy(t, r)
		if err := d.Put("dummy-fault/hung", value); err != nil {
			t.Fatal(err)
		}
		if err := r.Pause(); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		for d.HealthCheck() == nil && time.Since(t0) < 60*time.Second {
			time.Sleep(100 * time.Millisecond)
		}
		err := d.HealthCheck()
		t.Logf("health check once the real client hangs: %v after %v", err, time.Since(t0))
		if !errors.Is(err, mooncake.ErrRPCFail) {
			t.Errorf("health check: %v, want RPC_FAIL", err)
		}
		t0 = time.Now()
		_, err = d.Get("dummy-fault/hung")
		t.Logf("get on a hung real client: %v in %v", err, time.Since(t0))
		if err == nil {
			t.Error("get succeeds on a hung real client")
		}
		t0 = time.Now()
		d.Close()
		took := time.Since(t0)
		t.Logf("close with the real client hung: %v", took)
		if took > dummyCloseBound {
			t.Errorf("close took %v, more than %v", took, dummyCloseBound)
		}
		if err := r.Resume(); err != nil {
			t.Fatal(err)
		}
	})
}
