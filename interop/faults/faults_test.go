//go:build cgo

package faults

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/internal/testcluster"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

func TestMain(m *testing.M) {
	// Clients advertise and listen on loopback only.
	os.Setenv("MC_TCP_BIND_ADDRESS", "127.0.0.1")
	if os.Getenv(peerEnv) != "" {
		os.Exit(peerMain())
	}
	os.Exit(m.Run())
}

func startMaster(t *testing.T, opts testcluster.Options) *testcluster.Master {
	t.Helper()
	opts.Quiet = true
	if opts.LogDir == "" {
		opts.LogDir = "../../build/cluster-logs" // the repository's build/, not this package's
	}
	m, err := testcluster.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sig, crashed := m.Crashed(); crashed && !t.Skipped() {
			t.Errorf("upstream's mooncake_master crashed (%v) on its own; log %s", sig, m.LogPath)
		}
		m.Stop()
	})
	return m
}

func config(m *testcluster.Master, segment mooncake.Size) mooncake.Config {
	return mooncake.Config{
		LocalHostname: "127.0.0.1", MetadataServer: m.MetadataURL(), GlobalSegmentSize: segment,
		LocalBufferSize: 16 << 20, Protocol: "tcp", MasterServerAddress: m.Addr(),
	}
}

// worker does batch puts of fresh keys and batch gets of them, checking
// every byte read, until stop; it records every call after the fault.
type worker struct {
	id      int
	st      *mooncake.Store
	mem     *hostmem.Memory
	ok      atomic.Int64 // calls that succeeded
	corrupt atomic.Int64 // reads that returned other bytes than written
	mu      sync.Mutex
	after   []result // calls that started after the fault
}

type result struct {
	at   time.Time // when the call started
	took time.Duration
	put  bool
	err  error
}

const (
	batchKeys = 16
	valueSize = 4096
)

func (w *worker) run(stop <-chan struct{}, fault *atomic.Int64) {
	src := w.mem.Addr()
	dst := src + batchKeys*valueSize
	buf := w.mem.Bytes()
	keys := make([]string, batchKeys)
	addrs, dsts, sizes := make([]uintptr, batchKeys), make([]uintptr, batchKeys), make([]uint64, batchKeys)
	var res []int64
	for round := 0; ; round++ {
		select {
		case <-stop:
			return
		default:
		}
		for i := range keys {
			keys[i] = fmt.Sprintf("fault/%d/%d/%d", w.id, round, i)
			addrs[i], dsts[i], sizes[i] = src+uintptr(i*valueSize), dst+uintptr(i*valueSize), valueSize
			copy(buf[i*valueSize:(i+1)*valueSize], bytes.Repeat([]byte{byte(round + i)}, valueSize))
		}
		clear(buf[batchKeys*valueSize : 2*batchKeys*valueSize])
		for _, put := range []bool{true, false} {
			faulted := fault.Load() != 0
			t0 := time.Now()
			var err error
			// err is the call's refusal, or the *BatchError of its keys
			// that failed.
			if put {
				res, err = w.st.Raw().BatchPutFrom(keys, addrs, sizes, res)
			} else {
				res, err = w.st.Raw().BatchGetInto(keys, dsts, sizes, res)
				if err == nil {
					for i := range keys {
						want := bytes.Repeat([]byte{byte(round + i)}, valueSize)
						if !bytes.Equal(buf[(batchKeys+i)*valueSize:(batchKeys+i+1)*valueSize], want) {
							w.corrupt.Add(1)
						}
					}
				}
			}
			took := time.Since(t0)
			if err == nil {
				w.ok.Add(1)
			}
			if faulted {
				w.mu.Lock()
				w.after = append(w.after, result{at: t0, took: took, put: put, err: err})
				w.mu.Unlock()
			}
			if err != nil {
				break
			}
		}
	}
}

// openWorkers opens n clients with cfg, each with registered memory for
// its batches.
// errCode is the Mooncake code an error carries: an *Error's (a single
// call, or a call refused as a whole) or the first failed key's of a
// *BatchError; 0 when it has none.
func errCode(err error) mooncake.ErrorCode {
	var me *mooncake.Error
	if errors.As(err, &me) {
		return me.Code
	}
	var be *mooncake.BatchError
	if errors.As(err, &be) && len(be.Failed) > 0 {
		return be.Failed[0].Code
	}
	return 0
}

func openWorkers(t *testing.T, cfg mooncake.Config, n int) []*worker {
	t.Helper()
	var workers []*worker
	for i := 0; i < n; i++ {
		st, err := mooncake.Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		mem, err := hostmem.Alloc(2*batchKeys*valueSize, hostmem.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.RegisterMemory(mem); err != nil {
			t.Fatal(err)
		}
		workers = append(workers, &worker{id: i, st: st, mem: mem})
		// For a test that ends early; a test's own Close first makes this
		// one a no-op (ErrClosed), and Free after it.
		t.Cleanup(func() { st.Close(); _ = mem.Free() })
	}
	return workers
}

// runWorkers runs the workers until the returned stop is called (it waits
// for them; later calls do nothing).
func runWorkers(workers []*worker, fault *atomic.Int64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() { defer wg.Done(); w.run(done, fault) }()
	}
	return sync.OnceFunc(func() { close(done); wg.Wait() })
}

// TestMasterKilled: the master is SIGKILLed while four clients do batch
// puts and gets. Every call from then on returns a typed error within a
// bound, no read returns wrong bytes, and Close works.
func TestMasterKilled(t *testing.T) {
	mooncaketest.RequireNative(t)
	m := startMaster(t, testcluster.Options{})
	workers := openWorkers(t, config(m, 64<<20), 4)
	var fault atomic.Int64
	stop := runWorkers(workers, &fault)
	time.Sleep(2 * time.Second)
	before := int64(0)
	for _, w := range workers {
		before += w.ok.Load()
	}
	killed := time.Now()
	// Kill waits until the master has exited: only calls that start after
	// that count as after the kill (one that crossed while the signal was
	// on its way may still succeed).
	m.Kill()
	fault.Store(1)
	time.Sleep(6 * time.Second)
	stop()
	t.Logf("%d calls succeeded before the kill", before)
	var worst time.Duration
	calls := 0
	for _, w := range workers {
		if len(w.after) == 0 {
			t.Errorf("worker %d made no call after the kill (a call hangs?)", w.id)
		}
		for _, r := range w.after {
			calls++
			worst = max(worst, r.took)
			if errCode(r.err) == 0 {
				t.Errorf("worker %d: a call after the kill returned %v, want a typed error", w.id, r.err)
			}
		}
		if c := w.corrupt.Load(); c != 0 {
			t.Errorf("worker %d: %d reads returned other bytes than written", w.id, c)
		}
	}
	t.Logf("%d calls after the kill, all failed typed; the slowest took %v (%v after the kill)", calls, worst, time.Since(killed).Round(time.Millisecond))
	if worst > killCallBound {
		t.Errorf("a call after the kill took %v, more than %v", worst, killCallBound)
	}
	// Close unmounts the segment, which needs the master: it gives up after
	// upstream's retries. Closed together, the clients take that time once.
	var closeWorst atomic.Int64
	var cwg sync.WaitGroup
	for _, w := range workers {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			t0 := time.Now()
			if err := w.st.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			took := time.Since(t0)
			for {
				old := closeWorst.Load()
				if int64(took) <= old || closeWorst.CompareAndSwap(old, int64(took)) {
					break
				}
			}
			if err := w.mem.Free(); err != nil {
				t.Errorf("free after close: %v", err)
			}
		}()
	}
	cwg.Wait()
	t.Logf("Close with the master gone: %v", time.Duration(closeWorst.Load()))
	if d := time.Duration(closeWorst.Load()); d > killCloseBound {
		t.Errorf("Close took %v, more than %v", d, killCloseBound)
	}
}

// Bounds measured on a 2-vCPU VM against upstream 3b5a5941 (docs/faults.md),
// with room: calls after a master SIGKILL failed within 4.4-4.6 s, and
// Close of four clients at once within 18 s.
const (
	killCallBound  = 10 * time.Second
	killCloseBound = 30 * time.Second
)

// TestMasterRestarted: the master is killed and a new one started on the
// same address. What the existing clients do is measured; a new Open works.
func TestMasterRestarted(t *testing.T) {
	mooncaketest.RequireNative(t)
	m := startMaster(t, testcluster.Options{})
	st, err := mooncake.Open(config(m, 64<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Put("restart/before", []byte("v")); err != nil {
		t.Fatal(err)
	}
	m.Kill()
	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	var firstOK time.Duration
	var lastErr error
	for time.Since(restarted) < 60*time.Second {
		err := st.Put(fmt.Sprintf("restart/after/%d", time.Now().UnixNano()), []byte("v"))
		if err == nil {
			firstOK = time.Since(restarted)
			break
		}
		lastErr = err
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("old client: first put after the restart succeeded after %v (until then: %v)", firstOK, lastErr)
	if firstOK == 0 || firstOK > restartBound {
		t.Errorf("the old client did not recover within %v", restartBound)
	}
	// Upstream's client remounts its segment on the new master; the objects
	// the old master knew are gone.
	if _, err := st.Get("restart/before"); !errors.Is(err, mooncake.ErrObjectNotFound) {
		t.Errorf("object from before the restart: %v, want ErrObjectNotFound", err)
	}
	st2, err := mooncake.Open(config(m, 64<<20))
	if err != nil {
		t.Fatalf("a new Open after the restart: %v", err)
	}
	defer st2.Close()
	if err := st2.Put("restart/new", []byte("v")); err != nil {
		t.Errorf("new client put: %v", err)
	}
	if v, err := st.Get("restart/new"); err != nil || string(v) != "v" {
		t.Errorf("old client reads the new client's object: %q, %v", v, err)
	}
}

// restartBound: the old client's puts succeeded again 0.8 s after the restart.
const restartBound = 10 * time.Second

// TestUnreachableAtOpen: Open against a master or a metadata server that is
// not there fails with a typed error within a bound, and leaks nothing.
func TestUnreachableAtOpen(t *testing.T) {
	mooncaketest.RequireNative(t)
	m := startMaster(t, testcluster.Options{})
	ports, err := testcluster.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	dead := fmt.Sprintf("127.0.0.1:%d", ports[0])
	deadMeta := fmt.Sprintf("http://127.0.0.1:%d/metadata", ports[1])
	for name, cfg := range map[string]mooncake.Config{
		"no master":          func() mooncake.Config { c := config(m, 64<<20); c.MasterServerAddress = dead; return c }(),
		"no metadata server": func() mooncake.Config { c := config(m, 64<<20); c.MetadataServer = deadMeta; return c }(),
	} {
		t0 := time.Now()
		st, err := mooncake.Open(cfg)
		took := time.Since(t0)
		var me *mooncake.Error
		t.Logf("%s: %v in %v", name, err, took)
		if st != nil {
			st.Close()
			t.Errorf("%s: Open succeeded", name)
		}
		if !errors.As(err, &me) || me.Code == 0 {
			t.Errorf("%s: %v, want a typed error", name, err)
		}
		if took > unreachableBound {
			t.Errorf("%s: Open took %v, more than %v", name, took, unreachableBound)
		}
	}
	// A master or metadata server that is down is refused at once, before
	// upstream's setup would retry the master for 90 s.
	_, err = mooncake.Open(func() mooncake.Config { c := config(m, 64<<20); c.MasterServerAddress = dead; return c }())
	if !errors.Is(err, mooncake.ErrRPCFail) {
		t.Errorf("no master: %v, want ErrRPCFail", err)
	}
	_, err = mooncake.Open(func() mooncake.Config { c := config(m, 64<<20); c.MetadataServer = deadMeta; return c }())
	if !errors.Is(err, mooncake.ErrRPCFail) {
		t.Errorf("no metadata server: %v, want ErrRPCFail", err)
	}
}

// unreachableBound: no master failed in 0.1 ms (connection refused, our
// probe), no metadata server at once (the metadata probe; upstream alone: 2.1 s).
const unreachableBound = 10 * time.Second

// The peer process of TestPeerVanishes: this test binary again, started
// with peerEnv set. It opens a client on the master named by its arguments,
// puts peerObjects objects placed in its own segment, prints "ready" and
// waits to be killed.
const (
	peerEnv     = "MCGO_FAULTS_PEER"
	peerObjects = 32
	peerSize    = 64 << 10
)

func peerValue(i int) []byte { return bytes.Repeat([]byte{byte(i + 1)}, peerSize) }

func peerMain() int {
	cfg := mooncake.Config{
		LocalHostname: "127.0.0.1", MetadataServer: os.Getenv("MCGO_FAULTS_META"), GlobalSegmentSize: 64 << 20,
		LocalBufferSize: 16 << 20, Protocol: "tcp", MasterServerAddress: os.Getenv("MCGO_FAULTS_MASTER"),
	}
	st, err := mooncake.Open(cfg)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	host, err := st.Hostname()
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	if os.Getenv(peerEnv) == "reader" {
		// Take a read lease on every lease/i the test put, then wait.
		for i := 0; i < peerObjects; i++ {
			if _, err := st.Get(fmt.Sprintf("lease/%d", i)); err != nil {
				fmt.Println("error", err)
				return 1
			}
		}
		fmt.Println("ready", host)
		select {}
	}
	own := st.WithReplicateConfig(mooncake.ReplicateConfig{PreferredSegments: []string{host}})
	prefix := cmp.Or(os.Getenv("MCGO_FAULTS_PREFIX"), "peer")
	for i := 0; i < peerObjects; i++ {
		if err := own.Put(fmt.Sprintf("%s/%d", prefix, i), peerValue(i)); err != nil {
			fmt.Println("error", err)
			return 1
		}
	}
	fmt.Println("ready", host)
	select {} // until killed
}

// TestPeerVanishes: a client whose segment holds objects is SIGKILLed.
// Reading them from another client then fails typed within a bound and
// never returns other bytes; objects in other segments are unaffected; once
// the master notices the client is gone (its live TTL), they are not found.
func TestPeerVanishes(t *testing.T) {
	mooncaketest.RequireNative(t)
	m := startMaster(t, testcluster.Options{})
	peer, peerHost := startPeer(t, m, "writer")

	st, err := mooncake.Open(config(m, 64<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	host, _ := st.Hostname()
	mine := st.WithReplicateConfig(mooncake.ReplicateConfig{PreferredSegments: []string{host}})
	if err := mine.Put("mine/0", peerValue(7)); err != nil {
		t.Fatal(err)
	}
	check := func(i int) error {
		v, err := st.Get(fmt.Sprintf("peer/%d", i))
		if err == nil && !bytes.Equal(v, peerValue(i)) {
			t.Errorf("peer/%d: %d bytes that are not its value", i, len(v))
		}
		return err
	}
	for i := 0; i < peerObjects; i++ {
		if err := check(i); err != nil {
			t.Fatalf("before the kill: peer/%d: %v (segment %s)", i, err, peerHost)
		}
	}

	peer.kill()
	killed := time.Now()
	var worst, notFoundAfter time.Duration
	codes := map[mooncake.ErrorCode]int{}
	for round := 0; time.Since(killed) < 40*time.Second; round++ {
		allGone := true
		for i := 0; i < peerObjects; i++ {
			t0 := time.Now()
			err := check(i)
			worst = max(worst, time.Since(t0))
			var me *mooncake.Error
			switch {
			case err == nil:
				allGone = false // a replica still served (the segment's memory is gone: it must not)
				t.Errorf("peer/%d read after its client was killed", i)
			case !errors.As(err, &me) || me.Code == 0:
				t.Fatalf("peer/%d: %v, want a typed error", i, err)
			default:
				codes[me.Code]++
				if me.Code != mooncake.ErrObjectNotFound {
					allGone = false
				}
			}
		}
		if allGone {
			notFoundAfter = time.Since(killed)
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("after the kill: errors %v; slowest get %v; all objects not found after %v", codes, worst, notFoundAfter)
	if worst > peerCallBound {
		t.Errorf("a get took %v, more than %v", worst, peerCallBound)
	}
	if notFoundAfter == 0 {
		t.Errorf("the master still lists the dead client's objects after 40 s")
	}
	if v, err := st.Get("mine/0"); err != nil || !bytes.Equal(v, peerValue(7)) {
		t.Errorf("an object in another segment: %v", err)
	}
}

// peerCallBound: measured on the 2-vCPU VM (docs/faults.md), with room.
const peerCallBound = 10 * time.Second

// peerProc is a peer process, stopped by its PID.
type peerProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func (p *peerProc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// startPeer starts this test binary as a peer client of m in mode
// ("writer": puts peer/i into its own segment; "reader": takes read leases
// on lease/i) and waits until it is ready; it returns its segment name.
func startPeer(t *testing.T, m *testcluster.Master, mode string) (*peerProc, string) {
	t.Helper()
	return startPeerWith(t, m, m.MetadataURL(), mode, "peer")
}

// startPeerWith is startPeer with the peer's metadata server and, for a
// writer, the prefix of its keys.
func startPeerWith(t *testing.T, m *testcluster.Master, meta, mode, prefix string) (*peerProc, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), peerEnv+"="+mode, "MCGO_FAULTS_MASTER="+m.Addr(), "MCGO_FAULTS_META="+meta, "MCGO_FAULTS_PREFIX="+prefix)
	cmd.Stderr = io.Discard
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &peerProc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(p.kill)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready") {
		t.Fatalf("peer: %q, %v", line, err)
	}
	return p, strings.TrimSpace(strings.TrimPrefix(line, "ready"))
}

// TestDeadClientsLeases: a client takes read leases and is SIGKILLed.
// Removes without force fail with ErrObjectHasLease only until the lease
// TTL (2 s on this master) has passed, then succeed.
func TestDeadClientsLeases(t *testing.T) {
	mooncaketest.RequireNative(t)
	const ttl = 2 * time.Second
	m := startMaster(t, testcluster.Options{Lease: strconv.Itoa(int(ttl.Milliseconds()))})
	st, err := mooncake.Open(config(m, 64<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := 0; i < peerObjects; i++ {
		if err := st.Put(fmt.Sprintf("lease/%d", i), peerValue(i)); err != nil {
			t.Fatal(err)
		}
	}
	// Our own puts hold no lease; wait out any from the puts' checks.
	time.Sleep(ttl + 500*time.Millisecond)
	peer, _ := startPeer(t, m, "reader")
	leased := time.Now()
	peer.kill()
	if err := st.Remove("lease/0", false); !errors.Is(err, mooncake.ErrObjectHasLease) {
		t.Errorf("remove right after the reader died: %v, want ErrObjectHasLease", err)
	}
	var removedAfter time.Duration
	for time.Since(leased) < 10*ttl {
		if err := st.Remove("lease/0", false); err == nil {
			removedAfter = time.Since(leased)
			break
		} else if !errors.Is(err, mooncake.ErrObjectHasLease) {
			t.Fatalf("remove: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("a dead reader's lease blocked removes for %v (lease TTL %v)", removedAfter, ttl)
	if removedAfter == 0 || removedAfter > ttl+2*time.Second {
		t.Errorf("removes blocked for %v, want about the lease TTL %v", removedAfter, ttl)
	}
	// The reader took its leases one get after another before it said it
	// was ready: the last ends by leased+ttl.
	time.Sleep(time.Until(leased.Add(ttl + 100*time.Millisecond)))
	n, err := st.RemoveByRegex("^lease/", false)
	if err != nil || n != peerObjects-1 {
		t.Errorf("the other leased objects: removed %d, %v; want %d", n, err, peerObjects-1)
	}
}
