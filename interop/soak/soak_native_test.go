//go:build cgo

package soak

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/internal/testcluster"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

// The soak (make soak-native): a long-lived Go client with four workers, a
// Go client process with two and upstream's Python client on one loopback
// master; every SOAK_RESTART one of the two client processes is restarted,
// alternately, by SIGTERM (it stops, checks all its keys and closes) or by
// SIGKILL. Every byte read is checked; each writer checks its own keys
// against its model. The long-lived client's RSS, threads, goroutines and
// Go heap are sampled.
//
// With MCGO_SOAK_HA=etcd (make soak-ha) the same clients run on an HA group
// instead: two masters electing their leader in etcd (oplog on), clients on
// etcd:// for the master and etcd metadata, and every MCGO_SOAK_FAILOVER the
// leader is SIGKILLed and started again as a standby. MCGO_SOAK_HA=redis
// (make soak-ha SOAK_HA=redis) does the same on Redis (snapshot restore,
// Redis metadata), where a failover forgets every object: the model's
// rollbacks allow exactly that. No client process is
// restarted there: a writer's puts may land in another client's segment
// while its own is not yet remounted at the new leader, and leave with that
// client (docs/ha.md), which the model would count as lost.
//
//	MCGO_SOAK_DURATION  how long (required: the test is skipped without it)
//	MCGO_SOAK_RESTART   restart interval (default 1m)
//	MCGO_SOAK_HA        "etcd" or "redis": the HA cluster above
//	MCGO_SOAK_FAILOVER  failover interval on the HA cluster (default 1m)
//	MCGO_SOAK_REPORT    where the Markdown report goes (default build/soak/report-<time>.md)
//	MCGO_PYTHONPATH     where upstream's mooncake package is (required)

const childEnv = "MCGO_SOAK_CHILD"

func TestMain(m *testing.M) {
	os.Setenv("MC_TCP_BIND_ADDRESS", "127.0.0.1")
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	os.Exit(m.Run())
}

const mainWorkers, childWorkers = 4, 2

func openClient(c *cluster, segment mooncake.Size) (*mooncake.Store, *mooncake.Store, error) {
	st, err := mooncake.Open(mooncake.Config{
		LocalHostname: "127.0.0.1", MetadataServer: c.meta, GlobalSegmentSize: segment,
		LocalBufferSize: 32 << 20, Protocol: "tcp", MasterServerAddress: c.master, ClusterID: c.clusterID,
	})
	if err != nil {
		return nil, nil, err
	}
	host, err := st.Hostname()
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	// Each writer's objects live in its own segment: a restarted peer takes
	// only its own objects with it, so any other loss is a lost write.
	return st, st.WithReplicateConfig(mooncake.ReplicateConfig{PreferredSegments: []string{host}}), nil
}

// startWorkers runs n workers on st with registered memory; stop ends them
// and returns once they have.
func startWorkers(st, own *mooncake.Store, prefix string, n int, seed int64, cross func(*rand.Rand) string) ([]*Worker, func() error, error) {
	var ws []*Worker
	// Each worker's memory stays registered with st, and mapped, until the
	// test process ends: the soak's stores outlive the workers.
	for i := 0; i < n; i++ {
		mem, err := hostmem.Alloc(MemSize, hostmem.Options{})
		if err != nil {
			return nil, nil, err
		}
		if err := st.RegisterMemory(mem); err != nil {
			return nil, nil, err
		}
		ws = append(ws, &Worker{St: own, Mem: mem, Prefix: fmt.Sprintf("%s/w%d", prefix, i), Seed: seed*100 + int64(i), Cross: cross})
	}
	done := make(chan struct{})
	errs := make(chan error, n)
	for _, w := range ws {
		go func() { errs <- w.Run(done) }()
	}
	return ws, func() error {
		close(done)
		var first error
		for range ws {
			if err := <-errs; err != nil && first == nil {
				first = err
			}
		}
		return first
	}, nil
}

func sum(ws []*Worker) *Stats {
	s := NewStats()
	for _, w := range ws {
		s.Add(w.Snapshot())
	}
	return s
}

// mainCross reads the long-lived client's single keys.
func mainCross(r *rand.Rand) string {
	return fmt.Sprintf("soak/go/w%d/p/%d", r.Intn(mainWorkers), r.Intn(PublishedKeys))
}

// childMain is the Go client process: workers until SIGTERM, then a sweep,
// a last report and Close; or until SIGUSR2, then the sweep and the report,
// and Close only on SIGTERM (the soak's end: every client checks its keys
// before any client's segment leaves).
func childMain() int {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	hold := make(chan os.Signal, 1)
	signal.Notify(hold, syscall.SIGUSR2)
	held := false
	failover := make(chan os.Signal, 16)
	signal.Notify(failover, syscall.SIGUSR1)
	go func() {
		for range failover {
			NoteFailover()
		}
	}()
	prefix := os.Getenv(childEnv)
	PutAfterRemoveMayDrop = os.Getenv("MCGO_SOAK_HA") == "etcd"
	c := &cluster{master: os.Getenv("MCGO_SOAK_MASTER"), meta: os.Getenv("MCGO_SOAK_META"), clusterID: os.Getenv("MCGO_SOAK_CLUSTER_ID")}
	// On an HA cluster no master may lead for a few seconds (a failover):
	// Open fails then, and a new client retries as a service would.
	st, own, err := openClient(c, 128<<20)
	for deadline := time.Now().Add(90 * time.Second); err != nil && time.Now().Before(deadline); {
		time.Sleep(time.Second)
		st, own, err = openClient(c, 128<<20)
	}
	if err != nil {
		fmt.Println(`{"error":` + strconv.Quote(err.Error()) + `}`)
		return 1
	}
	seed, _ := strconv.ParseInt(os.Getenv("MCGO_SOAK_SEED"), 10, 64)
	ws, stop, err := startWorkers(st, own, prefix, childWorkers, seed, mainCross)
	if err != nil {
		fmt.Println(`{"error":` + strconv.Quote(err.Error()) + `}`)
		return 1
	}
	host, _ := st.Hostname()
	fmt.Printf("{\"ready\":%q}\n", host)
	report := func(final bool) {
		b, _ := json.Marshal(map[string]any{"stats": sum(ws), "final": final})
		fmt.Println(string(b))
	}
	tick := time.NewTicker(2 * time.Second)
	for {
		select {
		case <-tick.C:
			report(false)
			continue
		case <-term:
		case <-hold:
			held = true
		}
		break
	}
	if err := stop(); err != nil {
		fmt.Println(`{"error":` + strconv.Quote(err.Error()) + `}`)
	}
	for _, w := range ws {
		w.Sweep()
	}
	report(true)
	if held {
		<-term
	}
	st.Close()
	return 0
}

// child is one client process of the soak.
type child struct {
	kind   string // "go" or "python"
	gen    int
	prefix string
	cmd    *exec.Cmd
	done   chan struct{}
	ready  chan string

	mu    sync.Mutex
	last  *Stats
	final bool
	err   string
}

func (c *child) stats() (*Stats, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		return NewStats(), c.final
	}
	return c.last, c.final
}

func startChild(t *testing.T, kind string, gen int, cl *cluster, logDir string) *child {
	t.Helper()
	c := &child{kind: kind, gen: gen, done: make(chan struct{}), ready: make(chan string, 1)}
	env := append(os.Environ(), cl.env()...)
	switch kind {
	case "go":
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		c.prefix = fmt.Sprintf("soak/gc/%d", gen)
		c.cmd = exec.Command(exe, "-test.run=^$")
		env = append(env, childEnv+"="+c.prefix, "MCGO_SOAK_MASTER="+cl.master, "MCGO_SOAK_META="+cl.meta,
			"MCGO_SOAK_CLUSTER_ID="+cl.clusterID, "MCGO_SOAK_SEED="+strconv.Itoa(gen+1))
	case "python":
		c.prefix = fmt.Sprintf("soak/py/%d", gen)
		py := os.Getenv("PYTHON")
		if py == "" {
			py = "python3"
		}
		args := []string{"../../scripts/soak_python.py", "--prefix", c.prefix, "--cross-prefix", "soak/go/w0/p", "--seed", strconv.Itoa(gen + 1)}
		if cl.backend == "etcd" {
			args = append(args, "--oplog")
		}
		c.cmd = exec.Command(py, args...)
		env = append(env, "PYTHONPATH="+os.Getenv("MCGO_PYTHONPATH"))
	}
	c.cmd.Env = env
	logf, err := os.Create(filepath.Join(logDir, fmt.Sprintf("%s-%d.log", kind, gen)))
	if err != nil {
		t.Fatal(err)
	}
	c.cmd.Stderr = logf
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var line struct {
				Ready *string `json:"ready"`
				Stats *Stats  `json:"stats"`
				Final bool    `json:"final"`
				Error string  `json:"error"`
			}
			if json.Unmarshal(sc.Bytes(), &line) != nil {
				continue
			}
			c.mu.Lock()
			switch {
			case line.Ready != nil:
				c.ready <- *line.Ready
			case line.Stats != nil:
				c.last, c.final = normalize(line.Stats), line.Final
			case line.Error != "":
				c.err = line.Error
			}
			c.mu.Unlock()
		}
		_ = c.cmd.Wait()
		logf.Close()
		close(c.done)
	}()
	select {
	case <-c.ready:
	case <-c.done:
		t.Fatalf("%s client %d exited before it was ready (%s; see %s)", kind, gen, c.err, logf.Name())
	case <-time.After(2 * time.Minute):
		c.cmd.Process.Kill()
		t.Fatalf("%s client %d not ready after 2 minutes", kind, gen)
	}
	return c
}

// normalize names the Python client's numeric codes as the Go client does
// (one code table: mooncake.ErrorCode).
func normalize(s *Stats) *Stats {
	for k, v := range s.Errors {
		op, c, ok := strings.Cut(k, ": ")
		if n, err := strconv.Atoi(c); ok && err == nil {
			delete(s.Errors, k)
			s.Errors[op+": "+mooncake.ErrorCode(n).Error()] += v
		}
	}
	if s.Ops == nil {
		s.Ops = map[string]int64{}
	}
	if s.Keys == nil {
		s.Keys = map[string]int64{}
	}
	return s
}

// waitFinal waits until the child has made its final report (after
// SIGUSR2), has exited, or d has passed.
func (c *child) waitFinal(d time.Duration) {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		if _, final := c.stats(); final {
			return
		}
		select {
		case <-c.done:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop ends the child: gracefully (SIGTERM: it checks its keys, reports
// and closes; SIGKILL after a minute) or with SIGKILL.
func (c *child) stop(graceful bool) {
	if graceful {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
			return
		case <-time.After(time.Minute):
		}
	}
	_ = c.cmd.Process.Kill()
	<-c.done
}

type sample struct {
	at                  time.Duration
	rss, heap           uint64
	goroutines, threads int
}

// procStatus is the number of field ("VmRSS:", in kB, or "Threads:") in
// /proc/self/status.
func procStatus(field string) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == field {
			n, _ := strconv.ParseUint(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// cluster is what the soak runs on: one master with HTTP metadata, or an
// HA group of two masters electing their leader in etcd, with etcd
// metadata.
type cluster struct {
	master, meta, clusterID string
	masters                 []*testcluster.Master
	backend                 string              // the HA group's election backend ("etcd", "redis"), or ""
	server                  *testcluster.Server // its server
}

const soakClusterID = "mcgo-soak"

// failoverSettle is how long after the first client's first put and get at
// the new leader a failover's window stays open (failover).
const failoverSettle = 10 * time.Second

func startSingle(logDir string) (*cluster, error) {
	// Short read leases: a remove without force waits for the readers'
	// leases, and the soak's reads take milliseconds.
	m, err := testcluster.Start(testcluster.Options{LogDir: logDir, Quiet: true, Lease: "1000"})
	if err != nil {
		return nil, err
	}
	return &cluster{master: m.Addr(), meta: m.MetadataURL(), masters: []*testcluster.Master{m}}, nil
}

// startHA starts backend's server (etcd or Redis) and two masters
// electing their leader in it; clients use it for the master and for the
// transfer engine's metadata. On etcd the standby follows the oplog; on
// Redis a new leader restores a snapshot, and the masters take none, so a
// failover there forgets every object (docs/ha.md).
func startHA(logDir, backend string) (*cluster, error) {
	server, err := testcluster.StartBackend(backend, logDir)
	if err != nil {
		return nil, err
	}
	url := backend + "://" + server.Addr()
	c := &cluster{master: url, meta: url, clusterID: soakClusterID, backend: backend, server: server}
	ha := &testcluster.HA{Backend: backend, Connstring: server.Addr(), ClusterID: soakClusterID, SnapshotDir: filepath.Join(logDir, "snapshots")}
	for i := 0; i < 2; i++ {
		m, err := testcluster.Start(testcluster.Options{LogDir: logDir, Quiet: true, Lease: "1000", HA: ha, LogName: fmt.Sprintf("master-%d.log", i)})
		if err != nil {
			c.stop()
			return nil, err
		}
		c.masters = append(c.masters, m)
	}
	if _, err := testcluster.WaitLeader(c.masters, time.Minute); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// env is a client process's environment.
func (c *cluster) env() []string {
	env := append(c.masters[0].Env(), "MOONCAKE_MASTER="+c.master, "MOONCAKE_TE_META_DATA_SERVER="+c.meta)
	if c.clusterID != "" {
		env = append(env, "MC_STORE_CLUSTER_ID="+c.clusterID)
	}
	return env
}

func (c *cluster) stop() {
	for _, m := range c.masters {
		m.Stop()
	}
	if c.server != nil {
		c.server.Stop()
	}
}

// evictions sums evicted_count over the masters' logs' EVICT-RESULT lines.
func (c *cluster) evictions() int {
	n := 0
	for _, m := range c.masters {
		n += evictions(m.LogPath)
	}
	return n
}

// grep counts the masters' log lines that contain s.
func (c *cluster) grep(s string) int {
	n := 0
	for _, m := range c.masters {
		b, _ := os.ReadFile(m.LogPath)
		n += strings.Count(string(b), s)
	}
	return n
}

// failover is one leader kill on the HA cluster.
type failover struct {
	at, elected, recovered time.Duration
	killed                 string
	err                    error
}

// failover tells every client (notify), SIGKILLs the serving master, waits
// for another to serve, starts the killed one again (a standby now), waits
// until st puts and gets again (it measures from the kill), and tells every
// client again failoverSettle later: writes acknowledged between the two
// notes, before the clients have remounted their segments at the new
// leader, may be rolled back too (the soak found some lost then).
func (c *cluster) failover(st *mooncake.Store, start time.Time, notify func()) failover {
	f := failover{at: time.Since(start)}
	leader, err := testcluster.WaitLeader(c.masters, 0)
	if err != nil {
		f.err = err
		return f
	}
	f.killed = leader.Addr()
	var others []*testcluster.Master
	for _, m := range c.masters {
		if m != leader {
			others = append(others, m)
		}
	}
	notify()
	leader.Kill()
	killed := time.Now()
	if _, err := testcluster.WaitLeader(others, time.Minute); err != nil {
		f.err = err
		return f
	}
	f.elected = time.Since(killed)
	if err := leader.Restart(); err != nil {
		f.err = fmt.Errorf("restart the killed master: %w", err)
		return f
	}
	probe := fmt.Sprintf("soak/probe/%d", f.at.Milliseconds())
	for time.Since(killed) < 2*time.Minute {
		if err = st.Upsert(probe, []byte(probe)); err == nil {
			var b []byte
			if b, err = st.Get(probe); err == nil && string(b) != probe {
				err = fmt.Errorf("probe read %q", b)
			}
		}
		if err == nil {
			f.recovered = time.Since(killed)
			time.Sleep(failoverSettle)
			notify()
			return f
		}
		time.Sleep(100 * time.Millisecond)
	}
	f.err = fmt.Errorf("no put and get succeeded 2 minutes after the kill: %w", err)
	return f
}

func TestSoak(t *testing.T) {
	mooncaketest.RequireNative(t)
	dur, err := time.ParseDuration(os.Getenv("MCGO_SOAK_DURATION"))
	if err != nil {
		t.Skip("the soak runs when asked: make soak-native (MCGO_SOAK_DURATION)")
	}
	restart := time.Minute
	if s := os.Getenv("MCGO_SOAK_RESTART"); s != "" {
		if restart, err = time.ParseDuration(s); err != nil {
			t.Fatal(err)
		}
	}
	if os.Getenv("MCGO_PYTHONPATH") == "" {
		t.Fatal("the soak needs upstream's Python client: set MOONCAKE_PYTHONPATH (make soak-native)")
	}
	ha := os.Getenv("MCGO_SOAK_HA")
	failoverEvery := time.Minute
	switch ha {
	case "":
	case "etcd", "redis":
		caps := mooncake.Backend().Capabilities
		if has := map[string]bool{"etcd": caps.MasterEtcd && caps.MetadataEtcd, "redis": caps.MasterRedis && caps.MetadataRedis}[ha]; !has {
			t.Fatalf("the HA soak on %s needs an upstream built with its HA master and metadata (STORE_USE_ETCD and USE_ETCD, or STORE_USE_REDIS and USE_REDIS; Capabilities: %v)", ha, caps)
		}
		if s := os.Getenv("MCGO_SOAK_FAILOVER"); s != "" {
			if failoverEvery, err = time.ParseDuration(s); err != nil {
				t.Fatal(err)
			}
		}
	default:
		t.Fatalf("MCGO_SOAK_HA=%q: the HA soak runs on etcd or redis", ha)
	}
	stamp := time.Now().UTC().Format("20060102-150405")
	logDir := filepath.Join("../../build/soak", stamp)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Upstream's client logs every failed call through glog to stderr; in
	// a soak that is thousands of lines: they go to a file.
	if f, err := os.Create(filepath.Join(logDir, "go-main.log")); err == nil {
		_ = syscall.Dup3(int(f.Fd()), 2, 0)
	}
	var cl *cluster
	if ha != "" {
		cl, err = startHA(logDir, ha)
		PutAfterRemoveMayDrop = ha == "etcd" // the oplog's pending removes
	} else {
		cl, err = startSingle(logDir)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer cl.stop()

	st, own, err := openClient(cl, 256<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var peers atomic.Pointer[[2]string] // the children's current prefixes
	peers.Store(&[2]string{})
	cross := func(r *rand.Rand) string {
		p := peers.Load()[r.Intn(2)]
		if p == "" {
			return ""
		}
		if strings.HasPrefix(p, "soak/gc/") {
			p += fmt.Sprintf("/w%d", r.Intn(childWorkers))
		}
		return fmt.Sprintf("%s/p/%d", p, r.Intn(PublishedKeys))
	}
	ws, stopWorkers, err := startWorkers(st, own, "soak/go", mainWorkers, 0, cross)
	if err != nil {
		t.Fatal(err)
	}

	kinds := []string{"python", "go"}
	gens := map[string]int{}
	current := map[string]*child{}
	totals := map[string]*Stats{"python": NewStats(), "go": NewStats()}
	var unreported []string // generations killed before their first report
	launch := func(kind string) {
		c := startChild(t, kind, gens[kind], cl, logDir)
		gens[kind]++
		current[kind] = c
		p := *peers.Load()
		if kind == "python" {
			p[0] = c.prefix
		} else {
			p[1] = c.prefix
		}
		peers.Store(&p)
	}
	retire := func(kind string, graceful bool) {
		c := current[kind]
		c.stop(graceful)
		s, final := c.stats()
		if graceful && !final {
			t.Errorf("%s client %d stopped by SIGTERM without its final report (%s)", kind, c.gen, c.err)
		}
		if s.Calls() == 0 {
			unreported = append(unreported, fmt.Sprintf("%s %d", kind, c.gen))
		}
		totals[kind].Add(s)
	}
	for _, k := range kinds {
		launch(k)
	}

	start := time.Now()
	var samples []sample
	takeSample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		samples = append(samples, sample{time.Since(start), procStatus("VmRSS:") << 10, ms.HeapInuse, runtime.NumGoroutine(), int(procStatus("Threads:"))})
	}
	takeSample()
	type restartRec struct {
		at       time.Duration
		kind     string
		gen      int
		graceful bool
	}
	var restarts []restartRec
	sampleTick := time.NewTicker(5 * time.Second)
	defer sampleTick.Stop()
	nextRestart := start.Add(restart)
	var failovers []failover
	nextFailover := start.Add(failoverEvery)
	if ha != "" {
		nextRestart = start.Add(dur + time.Hour) // no restarts (above)
	}
	deadline := start.Add(dur)
	for time.Now().Before(deadline) {
		<-sampleTick.C
		takeSample()
		if now := time.Now(); ha != "" && now.After(nextFailover) && now.Add(failoverEvery/2).Before(deadline) {
			f := cl.failover(st, start, func() {
				NoteFailover()
				for _, c := range current {
					_ = c.cmd.Process.Signal(syscall.SIGUSR1)
				}
			})
			failovers = append(failovers, f)
			if f.err != nil {
				t.Errorf("failover at %v: %v", f.at.Round(time.Second), f.err)
				break
			}
			t.Logf("failover at %v (%s UTC): killed %s, a new leader served after %v, the long-lived client put and got after %v",
				f.at.Round(time.Second), start.Add(f.at).UTC().Format("15:04:05"), f.killed, f.elected.Round(time.Millisecond), f.recovered.Round(time.Millisecond))
			// On the schedule, not from now: the 5 s ticks and the failover
			// itself would otherwise push each next one a few seconds later
			// (a 10-minute run on Redis made 8, not 9).
			for !nextFailover.After(time.Now()) {
				nextFailover = nextFailover.Add(failoverEvery)
			}
			continue
		}
		if now := time.Now(); now.After(nextRestart) && now.Add(restart/2).Before(deadline) {
			i := len(restarts)
			kind, graceful := kinds[i%2], (i/2)%2 == 0
			restarts = append(restarts, restartRec{time.Since(start), kind, current[kind].gen, graceful})
			retire(kind, graceful)
			launch(kind)
			nextRestart = now.Add(restart)
		}
	}
	if err := stopWorkers(); err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		w.Sweep()
	}
	// Two phases: every child checks its keys (SIGUSR2) before any closes,
	// because a key may sit on another client's segment (the preferred
	// segment is a preference; an upsert in place keeps its replica), and
	// a closed client's segment leaves with what it holds.
	for _, k := range kinds {
		_ = current[k].cmd.Process.Signal(syscall.SIGUSR2)
	}
	for _, k := range kinds {
		current[k].waitFinal(2 * time.Minute)
	}
	for _, k := range kinds {
		retire(k, true)
	}
	takeSample()
	mainStats := sum(ws)
	elapsed := time.Since(start)

	// Verdicts.
	all := map[string]*Stats{"Go, long-lived (4 workers)": mainStats, "Go, client process (2 workers)": totals["go"], "Python (upstream's client)": totals["python"]}
	for name, s := range all {
		if s.Corrupt != 0 || s.Lost != 0 {
			t.Errorf("%s: %d corrupt reads %q, %d lost writes %q", name, s.Corrupt, s.CorruptNotes, s.Lost, s.LostNotes)
		}
		if s.RolledBack != 0 {
			t.Logf("%s: %d reads rolled back by a failover, e.g. %q", name, s.RolledBack, s.RolledNotes)
		}
		if s.Calls() == 0 {
			t.Errorf("%s: no calls", name)
		}
	}
	if want := int(dur/restart) - 1; ha == "" && len(restarts) < want {
		t.Errorf("%d restarts, want at least %d", len(restarts), want)
	}
	if want := int(dur/failoverEvery) - 1; ha != "" && len(failovers) < want {
		t.Errorf("%d failovers, want at least %d", len(failovers), want)
	}
	warm := 0
	for i, s := range samples {
		if s.at >= min(time.Minute, dur/4) {
			warm = i
			break
		}
	}
	half := samples[warm+(len(samples)-1-warm)/2]
	end := samples[len(samples)-1]
	minG, maxG := samples[warm].goroutines, samples[warm].goroutines
	var maxRSS uint64
	var maxThreads int
	for _, s := range samples[warm:] {
		minG, maxG = min(minG, s.goroutines), max(maxG, s.goroutines)
		maxRSS = max(maxRSS, s.rss)
		maxThreads = max(maxThreads, s.threads)
	}
	const mib = 1 << 20
	if end.rss > half.rss+max(16*mib, half.rss/20) {
		t.Errorf("RSS grew from %d MiB (half-way) to %d MiB", half.rss/mib, end.rss/mib)
	}
	// Threads: upstream's wrapper leaked a goroutine and a thread per HA
	// watch (kvcache-ai/Mooncake#3059); a failover a minute would show that.
	if end.threads > half.threads+max(16, half.threads/10) {
		t.Errorf("threads grew from %d (half-way) to %d", half.threads, end.threads)
	}
	if maxG-minG > 10 {
		t.Errorf("goroutines ranged %d-%d after the warm-up", minG, maxG)
	}
	if end.heap > 2*samples[warm].heap+8*mib {
		t.Errorf("Go heap in use grew from %d to %d MiB", samples[warm].heap/mib, end.heap/mib)
	}

	// Report.
	var b strings.Builder
	fmt.Fprintf(&b, "# Soak\n\n")
	where := "one loopback master (TCP, HTTP metadata)"
	if ha != "" {
		where = map[string]string{
			"etcd":  "an HA group of two loopback masters electing their leader in etcd (oplog on; TCP, etcd metadata)",
			"redis": "an HA group of two loopback masters electing their leader in Redis (snapshot restore, no snapshot taken: a failover forgets every object; TCP, Redis metadata)",
		}[ha]
	}
	fmt.Fprintf(&b, "`%s`: %v against upstream at the pinned commit on %s, measured %s UTC.\n",
		cmdLine(), elapsed.Round(time.Second), where, time.Now().UTC().Format("2006-01-02 15:04"))
	fmt.Fprintf(&b, "A long-lived Go client (4 worker goroutines), a Go client process (2 workers) and upstream's Python client,\n")
	fmt.Fprintf(&b, "all writing into their own segments, doing single puts/upserts/gets/removes, zero-copy batches of 16 x 16 KiB\n")
	fmt.Fprintf(&b, "and multi-buffer batches of 8 keys x 4 x 2 KiB, `batch_is_exist`, and reads of each other's keys.\n")
	if ha == "" {
		fmt.Fprintf(&b, "Every %v one client process was restarted (%d restarts: ", restart, len(restarts))
		for i, r := range restarts {
			if i > 0 {
				b.WriteString(", ")
			}
			how := "SIGKILL"
			if r.graceful {
				how = "SIGTERM"
			}
			fmt.Fprintf(&b, "%s %s at %v", r.kind, how, r.at.Round(time.Second))
		}
		fmt.Fprintf(&b, ").\n\n")
	} else {
		fmt.Fprintf(&b, "No client process was restarted (the failover is the fault; restarts are `make soak-native`'s).\n")
		fmt.Fprintf(&b, "Every %v the leader was SIGKILLed and started again as a standby (%d failovers). From the kill:\n\n", failoverEvery, len(failovers))
		fmt.Fprintf(&b, "| at | leader killed | another master serves after | the long-lived client's first put and get after |\n|---|---|---|---|\n")
		for _, f := range failovers {
			if f.err != nil {
				fmt.Fprintf(&b, "| %v | %s | failed: %v | |\n", f.at.Round(time.Second), f.killed, f.err)
				continue
			}
			fmt.Fprintf(&b, "| %v | %s | %.1f s | %.1f s |\n", f.at.Round(time.Second), f.killed, f.elected.Seconds(), f.recovered.Seconds())
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "| client | calls | keys | bytes verified | corrupt reads | lost writes | rolled back by a failover | puts after a remove dropped | erased by a failed upsert | removes refused (leased) | slowest step | errors by code |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, name := range []string{"Go, long-lived (4 workers)", "Go, client process (2 workers)", "Python (upstream's client)"} {
		s := all[name]
		var keys int64
		for _, v := range s.Keys {
			keys += v
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %.1f GiB | %d | %d | %d | %d | %d | %d | %.1f s | %s |\n", name, s.Calls(), keys, float64(s.BytesVerified)/(1<<30), s.Corrupt, s.Lost, s.RolledBack, s.Dropped, s.Erased, s.Leased, float64(s.SlowestMs)/1000, s.ErrorSummary())
	}
	if len(unreported) > 0 {
		fmt.Fprintf(&b, "\nKilled before their first report (their calls are not counted): %s.\n", strings.Join(unreported, ", "))
	}
	fmt.Fprintf(&b, "\nA step is one call, or a write and its read-back. The masters evicted %d objects (their logs' EVICT-RESULT lines); the model counts any missing object as lost.\n", cl.evictions())
	if ha != "" {
		fmt.Fprintf(&b, "A read of a key last certain before a failover's window closed (%v after the long-lived client's first put and get at the new leader)\n", failoverSettle)
		fmt.Fprintf(&b, "that finds an earlier state (an older version, or not found) is a rollback, not a loss:\n")
		if ha == "etcd" {
			fmt.Fprintf(&b, "the leader acknowledges a write before its oplog entry is durable in etcd, and drops the entry when its queue is full\n")
			fmt.Fprintf(&b, "(the leaders logged %d `PutEnd: OpLog queue failed` warnings; docs/ha.md).\n", cl.grep("OpLog queue failed"))
			fmt.Fprintf(&b, "A put of a key its writer removed before, acknowledged and then read back missing, is counted apart: with the oplog,\n")
			fmt.Fprintf(&b, "a removed object's metadata stays until the remove is durable, the master answers a put meanwhile OBJECT_ALREADY_EXISTS,\n")
			fmt.Fprintf(&b, "and upstream's client reports that as success (docs/ha.md).\n")
		} else {
			fmt.Fprintf(&b, "on Redis nothing replicates the objects' metadata, so a new leader starts with none: every object put before\n")
			fmt.Fprintf(&b, "a failover reads as not found after it (docs/ha.md).\n")
		}
	}
	fmt.Fprintf(&b, "\nThe long-lived Go client's process (samples every 5 s; warm-up %v):\n\n", samples[warm].at.Round(time.Second))
	fmt.Fprintf(&b, "| | after the warm-up | half-way | end | max |\n|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| RSS | %d MiB | %d MiB | %d MiB | %d MiB |\n", samples[warm].rss/mib, half.rss/mib, end.rss/mib, maxRSS/mib)
	fmt.Fprintf(&b, "| Go heap in use | %.1f MiB | %.1f MiB | %.1f MiB | |\n", float64(samples[warm].heap)/mib, float64(half.heap)/mib, float64(end.heap)/mib)
	fmt.Fprintf(&b, "| threads | %d | %d | %d | %d |\n", samples[warm].threads, half.threads, end.threads, maxThreads)
	fmt.Fprintf(&b, "| goroutines | %d | %d | %d | %d (min %d) |\n", samples[warm].goroutines, half.goroutines, end.goroutines, maxG, minG)
	fmt.Fprintf(&b, "\nOperations of the long-lived client: %s.\n", opSummary(mainStats))
	fmt.Fprintf(&b, "\nChecks: every read's bytes are the value of its key (header: key CRC, version, size; body: SHA-256 of key and\n")
	fmt.Fprintf(&b, "version); each writer's reads of its own keys match its model (acknowledged writes, with the versions a failed\n")
	fmt.Fprintf(&b, "call may have left); each client process checks all its keys before a graceful stop (at the end, all of them before any closes); the long-lived client\n")
	fmt.Fprintf(&b, "checks all of its keys at the end. Other clients read only a writer's published keys, which are removed\n")
	fmt.Fprintf(&b, "without force and never upserted: why is in [faults.md](faults.md#readers-racing-writers-of-the-same-key).\n")
	fmt.Fprintf(&b, "Logs: `build/soak/%s/`.\n", stamp)
	if t.Failed() {
		fmt.Fprintf(&b, "\n**The soak failed** (see the test output).\n")
	}
	report := os.Getenv("MCGO_SOAK_REPORT")
	if report == "" {
		report = filepath.Join(logDir, "report.md")
	} else if !filepath.IsAbs(report) {
		report = filepath.Join("../..", report)
	}
	if err := os.WriteFile(report, []byte(b.String()), 0o644); err != nil {
		t.Error(err)
	}
	t.Logf("report %s:\n%s", report, b.String())
}

// evictions sums evicted_count over a master log's EVICT-RESULT lines.
func evictions(log string) int {
	b, err := os.ReadFile(log)
	if err != nil {
		return -1
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if _, rest, ok := strings.Cut(l, "[EVICT-RESULT] evicted_count="); ok {
			f, _, _ := strings.Cut(rest, ",")
			c, _ := strconv.Atoi(f)
			n += c
		}
	}
	return n
}

func opSummary(s *Stats) string {
	var parts []string
	for _, op := range []string{"put", "upsert", "get", "remove", "publish_put", "batch_put_from", "batch_upsert_from", "batch_get_into",
		"batch_put_from_multi_buffers", "batch_upsert_from_multi_buffers", "batch_get_into_multi_buffers", "batch_is_exist", "cross_get"} {
		if n := s.Ops[op]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", op, n))
		}
	}
	return strings.Join(parts, ", ")
}

func cmdLine() string {
	if c := os.Getenv("MCGO_SOAK_COMMAND"); c != "" {
		return c
	}
	return "make soak-native"
}
