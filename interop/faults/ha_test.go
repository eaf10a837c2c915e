//go:build cgo

package faults

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/internal/testcluster"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
)

// unavailable ends a test of an HA or etcd/Redis setup that this machine
// cannot run: a skip, or a failure with MCGO_REQUIRE_HA=1 (make chaos-ha).
func unavailable(t *testing.T, why any) {
	t.Helper()
	if os.Getenv("MCGO_REQUIRE_HA") == "1" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// requireHA ends a test of an HA cluster on backend ("etcd" or "redis")
// when the native library's upstream was built without it.
func requireHA(t *testing.T, backend string) {
	t.Helper()
	mooncaketest.RequireNative(t)
	caps := mooncake.Backend().Capabilities
	if has := map[string]bool{"etcd": caps.MasterEtcd, "redis": caps.MasterRedis}[backend]; !has {
		unavailable(t, fmt.Sprintf("the native library's upstream was built without the %s HA backend (Capabilities: %v)", backend, caps))
	}
}

// startServer starts etcd or Redis for the test, or skips (fails with
// MCGO_REQUIRE_HA=1) when it is not installed.
func startServer(t *testing.T, backend string) *testcluster.Server {
	t.Helper()
	s, err := testcluster.StartBackend(backend, t.TempDir())
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(s.Stop)
	return s
}

// startHAGroup starts n masters electing their leader through ha and
// waits until one serves.
func startHAGroup(t *testing.T, ha *testcluster.HA, n int) ([]*testcluster.Master, *testcluster.Master) {
	t.Helper()
	var ms []*testcluster.Master
	for i := 0; i < n; i++ {
		ms = append(ms, startMaster(t, testcluster.Options{HA: ha, LogName: fmt.Sprintf("ha-%s-%s-%d.log", ha.Backend, ha.ClusterID, i)}))
	}
	leader, err := testcluster.WaitLeader(ms, haElectBound)
	if err != nil {
		t.Fatal(err)
	}
	return ms, leader
}

func haConfig(ha *testcluster.HA, master string) mooncake.Config {
	return mooncake.Config{
		LocalHostname: "127.0.0.1", MetadataServer: "P2PHANDSHAKE", GlobalSegmentSize: 64 << 20,
		LocalBufferSize: 16 << 20, Protocol: "tcp", MasterServerAddress: master, ClusterID: ha.ClusterID,
	}
}

// TestHALeaderKilled: two masters elect a leader through etcd (oplog on)
// or Redis (snapshot restore), four clients opened on etcd:// or redis://
// do batch puts and gets; the leader is SIGKILLed. Every call returns
// within a bound, no read returns wrong bytes, the clients follow the new
// leader (the time from the kill to the first successful put and get is
// measured), and what became of the objects put before the failover is
// counted.
func TestHALeaderKilled(t *testing.T) {
	for _, backend := range []string{"etcd", "redis"} {
		t.Run(backend, func(t *testing.T) { testHALeaderKilled(t, backend) })
	}
}

// startHA starts backend's server and a group of two masters on it, and
// returns the clients' config.
func startHA(t *testing.T, backend string) (*testcluster.Server, []*testcluster.Master, *testcluster.Master, mooncake.Config) {
	t.Helper()
	requireHA(t, backend)
	began := time.Now()
	server := startServer(t, backend)
	// The cluster id is process-wide (Config.ClusterID), so every HA test
	// of this process uses the same one, each on its own server.
	ha := &testcluster.HA{Backend: backend, Connstring: server.Addr(), ClusterID: haClusterID, SnapshotDir: t.TempDir()}
	ms, leader := startHAGroup(t, ha, 2)
	t.Logf("%s: a leader serves %v after start", backend, time.Since(began).Round(time.Millisecond))
	return server, ms, leader, haConfig(ha, backend+"://"+server.Addr())
}

// faultUnderLoad runs the workers for 2 s, then kill, and marks the calls
// from then on as after the fault; it returns when, and how to stop them.
func faultUnderLoad(t *testing.T, workers []*worker, kill func()) (at time.Time, stop func()) {
	var fault atomic.Int64
	stop = runWorkers(workers, &fault)
	t.Cleanup(stop)
	time.Sleep(2 * time.Second)
	kill()
	at = time.Now()
	fault.Store(1)
	return at, stop
}

// recovered waits (at most bound) until every worker has put and got
// successfully in a call that started after since, and returns how long
// after since each first did.
func recovered(workers []*worker, since time.Time, bound time.Duration) (firstPut, firstGet map[int]time.Duration) {
	firstPut, firstGet = map[int]time.Duration{}, map[int]time.Duration{}
	deadline := since.Add(bound)
	for time.Now().Before(deadline) && (len(firstPut) < len(workers) || len(firstGet) < len(workers)) {
		time.Sleep(200 * time.Millisecond)
		for _, w := range workers {
			w.mu.Lock()
			for _, r := range w.after {
				if r.err != nil || r.at.Before(since) {
					continue
				}
				d := r.at.Add(r.took).Sub(since)
				if _, ok := firstPut[w.id]; r.put && !ok {
					firstPut[w.id] = d
				}
				if _, ok := firstGet[w.id]; !r.put && !ok {
					firstGet[w.id] = d
				}
			}
			w.mu.Unlock()
		}
	}
	return firstPut, firstGet
}

// checkAfter checks the workers' calls since the fault: each failure typed,
// none slower than haCallBound, no wrong bytes, and a successful put and
// get each after the recovery; it returns the failures and the slowest call.
func checkAfter(t *testing.T, what string, workers []*worker, firstPut, firstGet map[int]time.Duration) (failed int, worst time.Duration) {
	t.Helper()
	for _, w := range workers {
		for _, r := range w.after {
			worst = max(worst, r.took)
			if r.err != nil {
				failed++
				if errCode(r.err) == 0 {
					t.Errorf("%s: worker %d: a call returned %v, want a typed error", what, w.id, r.err)
				}
			}
		}
		if c := w.corrupt.Load(); c != 0 {
			t.Errorf("%s: worker %d: %d reads returned other bytes than written", what, w.id, c)
		}
		if _, ok := firstPut[w.id]; !ok {
			t.Errorf("%s: worker %d: no successful put within %v", what, w.id, haRecoverBound)
		}
		if _, ok := firstGet[w.id]; !ok {
			t.Errorf("%s: worker %d: no successful get within %v", what, w.id, haRecoverBound)
		}
	}
	if worst > haCallBound {
		t.Errorf("%s: a call took %v, more than %v", what, worst, haCallBound)
	}
	return failed, worst
}

// closeAll closes the stores together (Close after a failover takes 10-30
// s a client, measured) within haCloseBound.
func closeAll(t *testing.T, what string, ws []*worker) {
	t.Helper()
	t0 := time.Now()
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() { defer wg.Done(); _ = w.st.Close() }()
	}
	wg.Wait()
	took := time.Since(t0)
	t.Logf("%s: %d clients closed in %v", what, len(ws), took.Round(time.Millisecond))
	if took > haCloseBound {
		t.Errorf("%s: Close took %v, more than %v", what, took, haCloseBound)
	}
}

func testHALeaderKilled(t *testing.T, backend string) {
	began := time.Now()
	_, ms, leader, cfg := startHA(t, backend)

	pre := openWorkers(t, cfg, 1)[0]
	const preKeys = 64
	for i := 0; i < preKeys; i++ {
		if err := pre.st.Put(fmt.Sprintf("ha/pre/%d", i), bytes.Repeat([]byte{byte(i)}, 1024)); err != nil {
			t.Fatalf("put before the failover: %v", err)
		}
	}
	workers := openWorkers(t, cfg, 4)
	t.Logf("%s: five clients open and 64 objects put at %v", backend, time.Since(began).Round(time.Millisecond))
	killed, stop := faultUnderLoad(t, workers, leader.Kill)

	firstPut, firstGet := recovered(workers, killed, haRecoverBound)
	time.Sleep(time.Second)
	stop()
	failed, worst := checkAfter(t, backend+": after the kill", workers, firstPut, firstGet)
	var newLeader *testcluster.Master
	for _, m := range ms {
		if m != leader && m.Serving() {
			newLeader = m
		}
	}
	if newLeader == nil {
		t.Errorf("no other master serves after the kill")
	}
	t.Logf("%s: workers stopped at %v", backend, time.Since(began).Round(time.Millisecond))
	// The objects put before the failover.
	intact, lost := 0, 0
	for i := 0; i < preKeys; i++ {
		v, err := pre.st.Get(fmt.Sprintf("ha/pre/%d", i))
		switch {
		case err == nil && bytes.Equal(v, bytes.Repeat([]byte{byte(i)}, 1024)):
			intact++
		case err == nil:
			t.Errorf("ha/pre/%d: other bytes after the failover", i)
		default:
			lost++
		}
	}
	t.Logf("%s: leader killed: %d calls failed after it (typed), the slowest call took %v; first successful put %v, get %v after the kill (per worker); "+
		"objects put before: %d of %d intact, %d not found", backend, failed, worst.Round(time.Millisecond),
		firstPut, firstGet, intact, preKeys, lost)
	// What a failover keeps: with etcd the oplog replicates the metadata
	// to the standby, so every object put before is found; with Redis at
	// the pinned commit nothing replicates it (a new leader restores only
	// a snapshot, and none is taken by default), so the objects are gone
	// (not found: never other bytes).
	if backend == "etcd" && intact != preKeys {
		t.Errorf("etcd: %d of the %d objects put before the failover are intact, want all (the oplog)", intact, preKeys)
	}
	closeAll(t, backend, append(workers, pre))
}

// TestHABackendRestarted: the election backend (etcd, Redis) is killed for
// haBackendDown while four clients do batch puts and gets, then started
// again on its data. Every call returns within a bound, typed when it
// fails, no read returns wrong bytes, every client puts and gets again
// after the restart within a bound, and a client opened while the backend
// is down fails Open with ErrRPCFail within its connect timeout.
func TestHABackendRestarted(t *testing.T) {
	for _, backend := range []string{"etcd", "redis"} {
		t.Run(backend, func(t *testing.T) { testHABackendRestarted(t, backend) })
	}
}

func testHABackendRestarted(t *testing.T, backend string) {
	server, ms, _, cfg := startHA(t, backend)
	workers := openWorkers(t, cfg, 4)
	down, stop := faultUnderLoad(t, workers, server.Kill)

	c := cfg
	c.ConnectTimeout = 2 * time.Second
	t0 := time.Now()
	st, err := mooncake.Open(c)
	took := time.Since(t0)
	if st != nil {
		_ = st.Close()
	}
	t.Logf("%s: Open with %s down: %v after %v", backend, backend, err, took.Round(time.Millisecond))
	if errCode(err) != mooncake.ErrRPCFail || took > c.ConnectTimeout+time.Second {
		t.Errorf("%s: Open with %s down: %v after %v, want ErrRPCFail within %v", backend, backend, err, took, c.ConnectTimeout)
	}
	time.Sleep(time.Until(down.Add(haBackendDown)))
	okDuring := 0
	for _, w := range workers {
		w.mu.Lock()
		for _, r := range w.after {
			if r.err == nil {
				okDuring++
			}
		}
		w.mu.Unlock()
	}
	if err := server.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	firstPut, firstGet := recovered(workers, restarted, haRecoverBound)
	time.Sleep(time.Second)
	stop()
	failed, worst := checkAfter(t, backend+": after the restart", workers, firstPut, firstGet)
	serving := 0
	for _, m := range ms {
		if m.Serving() {
			serving++
		}
	}
	if serving != 1 {
		t.Errorf("%s: %d masters serve after the restart, want one", backend, serving)
	}
	t.Logf("%s: down %v: %d calls succeeded while it was down, %d failed (typed) from the kill on, the slowest took %v; "+
		"first successful put %v, get %v after the restart (per worker)", backend, haBackendDown, okDuring, failed,
		worst.Round(time.Millisecond), firstPut, firstGet)
	closeAll(t, backend, workers)
}

// haClusterID is the one cluster id of this test process's HA clients.
const haClusterID = "mcgo-faults"

// Bounds measured on a 2-vCPU VM against upstream 3b5a5941 built with the
// release options (docs/ha.md), with room.
const (
	haElectBound   = 60 * time.Second // the first leader of a new group
	haCallBound    = 30 * time.Second // one call while the leader is gone
	haRecoverBound = 60 * time.Second // from the kill to every client's first success
	haCloseBound   = 60 * time.Second // Close of the clients after the failover
	haBackendDown  = 8 * time.Second  // how long TestHABackendRestarted keeps etcd or Redis down
)

// requireMetadata ends a test of the transfer engine on backend's
// metadata ("etcd", "redis") as requireHA does.
func requireMetadata(t *testing.T, backend string) {
	t.Helper()
	mooncaketest.RequireNative(t)
	caps := mooncake.Backend().Capabilities
	if has := map[string]bool{"etcd": caps.MetadataEtcd, "redis": caps.MetadataRedis}[backend]; !has {
		unavailable(t, fmt.Sprintf("the native library's upstream was built without %s metadata (Capabilities: %v)", backend, caps))
	}
}

// openEngine opens a transfer engine on metadata with 1 MiB registered.
func openEngine(t *testing.T, metadata string) (*transfer.Engine, *hostmem.Memory) {
	t.Helper()
	e, mem, err := tryOpenEngine(t, metadata)
	if err != nil {
		t.Fatalf("open an engine on %s: %v", metadata, err)
	}
	return e, mem
}

func tryOpenEngine(t *testing.T, metadata string) (*transfer.Engine, *hostmem.Memory, error) {
	t.Helper()
	ports, err := testcluster.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	e, err := transfer.Open(transfer.Config{MetadataServer: metadata, LocalServerName: fmt.Sprintf("127.0.0.1:%d", ports[0]), Protocol: "tcp"})
	if err != nil {
		return nil, nil, err
	}
	mem, err := hostmem.Alloc(1<<20, hostmem.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.RegisterMemory(mem); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(); _ = mem.Free() })
	return e, mem, nil
}

// roundTrip writes 4 KiB of fill into b's memory from a and reads it back.
func roundTrip(a *transfer.Engine, am *hostmem.Memory, seg *transfer.Segment, fill byte) error {
	bufs, err := seg.Buffers(nil)
	if err != nil {
		return err
	}
	src := am.Bytes()[:4096]
	for i := range src {
		src[i] = fill
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Write(ctx, seg, am.Addr(), bufs[0].Addr, 4096); err != nil {
		return err
	}
	dst := am.Bytes()[4096:8192]
	clear(dst)
	if err := a.Read(ctx, seg, am.Addr()+4096, bufs[0].Addr, 4096); err != nil {
		return err
	}
	if !bytes.Equal(src, dst) {
		return errors.New("read back other bytes than written")
	}
	return nil
}

// TestEngineEtcdMetadata: transfer engines find each other through etcd
// metadata (etcd:// and the bare endpoints upstream also reads as etcd).
// With etcd down, the first transfer to a segment opened before fails
// (upstream's TCP transport looks the peer's RPC address up at an engine's
// first transfer to it), typed and within a bound, and so does opening a
// segment; after
// etcd restarts, a new engine opens and is found again within a bound.
func TestEngineEtcdMetadata(t *testing.T) {
	requireMetadata(t, "etcd")
	etcd := startServer(t, "etcd")
	for _, meta := range []string{"etcd://" + etcd.Addr(), etcd.Addr()} {
		a, am := openEngine(t, meta)
		b, _ := openEngine(t, meta)
		seg, err := a.OpenSegment(b.SegmentName())
		if err != nil {
			t.Fatalf("%s: open the peer's segment: %v", meta, err)
		}
		if err := roundTrip(a, am, seg, 7); err != nil {
			t.Fatalf("%s: %v", meta, err)
		}
	}
	a, am := openEngine(t, "etcd://"+etcd.Addr())
	b, _ := openEngine(t, "etcd://"+etcd.Addr())
	seg, err := a.OpenSegment(b.SegmentName())
	if err != nil {
		t.Fatal(err)
	}
	etcd.Kill()
	t0 := time.Now()
	err = roundTrip(a, am, seg, 8)
	took := time.Since(t0)
	t.Logf("a transfer to an opened segment with etcd down: %v after %v", err, took.Round(time.Millisecond))
	if !errors.Is(err, transfer.ErrTaskFailed) || took > metadataDownBound {
		t.Errorf("a transfer with etcd down: %v after %v, want ErrTaskFailed within %v", err, took, metadataDownBound)
	}
	t0 = time.Now()
	_, err = a.OpenSegment("127.0.0.1:1")
	took = time.Since(t0)
	t.Logf("OpenSegment of an unknown peer with etcd down: %v after %v", err, took.Round(time.Millisecond))
	if !errors.Is(err, transfer.ErrMetadata) {
		t.Errorf("OpenSegment of an unknown peer with etcd down: %v, want ErrMetadata", err)
	}
	if took > metadataDownBound {
		t.Errorf("OpenSegment with etcd down took %v, more than %v", took, metadataDownBound)
	}
	if err := etcd.Restart(); err != nil {
		t.Fatal(err)
	}
	// The process's etcd client (upstream's, one per process) reconnects
	// with a back-off: the first calls after the restart may still fail.
	t0 = time.Now()
	var c *transfer.Engine
	for {
		if c, _, err = tryOpenEngine(t, "etcd://"+etcd.Addr()); err == nil {
			seg, err = a.OpenSegment(c.SegmentName())
		}
		if err == nil || time.Since(t0) > metadataDownBound {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("a new engine after etcd restarted: %v", err)
	}
	t.Logf("after etcd restarted, a new engine opened and was found in %v", time.Since(t0).Round(time.Millisecond))
	if err := roundTrip(a, am, seg, 9); err != nil {
		t.Errorf("after etcd restarted: %v", err)
	}
	// Upstream keeps one etcd metadata client per process: an engine on
	// other etcd endpoints is refused while these are open.
	other := startServer(t, "etcd")
	e, err := transfer.Open(transfer.Config{MetadataServer: "etcd://" + other.Addr(), LocalServerName: "127.0.0.1:1", Protocol: "tcp"})
	if err == nil {
		_ = e.Close()
	}
	if !errors.Is(err, transfer.ErrInvalidArgument) || !strings.Contains(err.Error(), "one etcd metadata client per process") {
		t.Errorf("an engine on other etcd endpoints: %v, want ErrInvalidArgument naming upstream's one client", err)
	}
}

const metadataDownBound = 30 * time.Second

// TestHAPutAfterRemove pins what a write right after a Remove of the same
// key does on an HA master, with no failover at all. With the oplog (etcd) a
// remove keeps the object's metadata until the remove's oplog entry is
// durable; a PutStart meanwhile gets OBJECT_ALREADY_EXISTS, which upstream's
// client reports as success: the put is acknowledged and nothing is stored
// (found by the HA soak). The test counts such dropped puts, and what an
// Upsert in the same place does, with the write 0-90 ms after the remove, and
// whether a write found once is gone later; it checks what the binding does
// promise: every call returns, and a read finds the new value or nothing,
// never other bytes.
func TestHAPutAfterRemove(t *testing.T) {
	for _, backend := range []string{"etcd", "redis"} {
		t.Run(backend, func(t *testing.T) {
			_, _, _, cfg := startHA(t, backend)
			st := openWorkers(t, cfg, 1)[0].st
			const rounds = 100
			dropped, failed, vanished := map[string]int{}, map[string]int{}, map[string]int{}
			stored := map[string][]string{}
			for _, op := range []string{"put", "upsert"} {
				write := map[string]func(string, []byte) error{"put": st.Put, "upsert": st.Upsert}[op]
				for i := 0; i < rounds; i++ {
					key := fmt.Sprintf("ha/par/%s/%d", op, i)
					old, val := bytes.Repeat([]byte{1}, 4096), bytes.Repeat([]byte{byte(2 + i)}, 4096)
					if err := st.Put(key, old); err != nil {
						t.Fatalf("%s round %d: put: %v", op, i, err)
					}
					if err := st.Remove(key, true); err != nil {
						t.Fatalf("%s round %d: remove: %v", op, i, err)
					}
					// 0-90 ms between the remove and the write: the write lands
					// before, while or after the remove becomes durable.
					time.Sleep(time.Duration(i%10) * 10 * time.Millisecond)
					if err := write(key, val); err != nil {
						// A typed refusal is honest; count it.
						var me *mooncake.Error
						if !errors.As(err, &me) {
							t.Fatalf("%s round %d: %s after the remove: %v, not a *mooncake.Error", op, i, op, err)
						}
						failed[op+" "+me.Code.Error()]++
						continue
					}
					got, err := st.Get(key)
					switch {
					case errors.Is(err, mooncake.ErrObjectNotFound):
						dropped[op]++
					case err != nil:
						t.Fatalf("%s round %d: get: %v", op, i, err)
					case !bytes.Equal(got, val):
						t.Fatalf("%s round %d: read %d bytes that are not the value written", op, i, len(got))
					default:
						stored[op] = append(stored[op], key)
					}
				}
			}
			// A write read back once may still go when the remove before it
			// becomes durable.
			time.Sleep(2 * time.Second)
			for op, keys := range stored {
				for _, key := range keys {
					if _, err := st.Get(key); errors.Is(err, mooncake.ErrObjectNotFound) {
						vanished[op]++
					} else if err != nil {
						t.Fatalf("%s: get %s again: %v", op, key, err)
					}
				}
			}
			t.Logf("%s: right after a remove of the same key, %d of %d puts and %d of %d upserts were acknowledged and then not found; refused: %v; "+
				"of those read back, %d puts and %d upserts were gone 2 s later", backend, dropped["put"], rounds, dropped["upsert"], rounds, failed,
				vanished["put"], vanished["upsert"])
			// Redis has no oplog: a remove is immediate. On etcd most such
			// puts are dropped at the pinned commit (71-99%, with the load
			// of the machine); when none is, upstream has fixed it: update
			// docs/ha.md and the soak's PutAfterRemoveMayDrop.
			if backend == "redis" && (dropped["put"]+dropped["upsert"] != 0 || len(failed) != 0 || len(vanished) != 0) {
				t.Errorf("redis: writes after a remove dropped (%v), refused (%v) or gone later (%v), want none", dropped, failed, vanished)
			}
			if backend == "etcd" && dropped["put"] == 0 {
				t.Errorf("etcd: %d of %d puts after a remove dropped; upstream's behaviour changed (docs/ha.md)", dropped["put"], rounds)
			}
		})
	}
}

// TestHAPlacementAfterFailover: a client puts objects that prefer its own
// segment before and after a leader failover on etcd; once the clients have
// remounted at the new leader, placement follows the preference as before
// (the HA soak lost objects that were placed elsewhere: docs/ha.md).
func TestHAPlacementAfterFailover(t *testing.T) {
	_, _, leader, cfg := startHA(t, "etcd")
	ws := openWorkers(t, cfg, 2)
	host, err := ws[0].st.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	own := ws[0].st.WithReplicateConfig(mooncake.ReplicateConfig{PreferredSegments: []string{host}})
	where := func(phase string) map[string]int {
		locs := map[string]int{}
		for i := 0; i < 32; i++ {
			key := fmt.Sprintf("ha/place/%s/%d", phase, i)
			if err := own.Put(key, bytes.Repeat([]byte{byte(i)}, 4096)); err != nil {
				t.Fatalf("%s: put %s: %v", phase, key, err)
			}
			reps, err := own.GetReplicaDesc(key)
			if err != nil {
				t.Fatalf("%s: replicas of %s: %v", phase, key, err)
			}
			for _, r := range reps {
				locs[r.Location]++
			}
		}
		return locs
	}
	before := where("before")
	leader.Kill()
	killed := time.Now()
	for time.Since(killed) < haRecoverBound {
		if err := own.Upsert("ha/place/probe", []byte("x")); err == nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(15 * time.Second) // every client has remounted
	after := where("after")
	t.Logf("preferred segment %s; replicas before the failover: %v; after: %v", host, before, after)
	if len(before) != 1 || !maps.Equal(before, after) {
		t.Errorf("replicas before the failover %v, after %v: want all in the preferred segment both times", before, after)
	}
}
