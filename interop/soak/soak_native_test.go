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
// against its model. The long-lived client's RSS, goroutines and Go heap
// are sampled.
//
//	MCGO_SOAK_DURATION  how long (required: the test is skipped without it)
//	MCGO_SOAK_RESTART   restart interval (default 1m)
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

func openClient(master, meta string, segment mooncake.Size) (*mooncake.Store, *mooncake.Store, error) {
	st, err := mooncake.Open(mooncake.Config{
		LocalHostname: "127.0.0.1", MetadataServer: meta, GlobalSegmentSize: segment,
		LocalBufferSize: 32 << 20, Protocol: "tcp", MasterServerAddress: master,
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
// a last report and Close.
func childMain() int {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	prefix := os.Getenv(childEnv)
	st, own, err := openClient(os.Getenv("MCGO_SOAK_MASTER"), os.Getenv("MCGO_SOAK_META"), 128<<20)
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

func startChild(t *testing.T, kind string, gen int, m *testcluster.Master, logDir string) *child {
	t.Helper()
	c := &child{kind: kind, gen: gen, done: make(chan struct{}), ready: make(chan string, 1)}
	env := append(os.Environ(), m.Env()...)
	switch kind {
	case "go":
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		c.prefix = fmt.Sprintf("soak/gc/%d", gen)
		c.cmd = exec.Command(exe, "-test.run=^$")
		env = append(env, childEnv+"="+c.prefix, "MCGO_SOAK_MASTER="+m.Addr(), "MCGO_SOAK_META="+m.MetadataURL(),
			"MCGO_SOAK_SEED="+strconv.Itoa(gen+1))
	case "python":
		c.prefix = fmt.Sprintf("soak/py/%d", gen)
		py := os.Getenv("PYTHON")
		if py == "" {
			py = "python3"
		}
		c.cmd = exec.Command(py, "../../scripts/soak_python.py", "--prefix", c.prefix, "--cross-prefix", "soak/go/w0/p",
			"--seed", strconv.Itoa(gen+1))
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
	at         time.Duration
	rss, heap  uint64
	goroutines int
}

func rss() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
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
	// Short read leases: a remove without force waits for the readers'
	// leases, and the soak's reads take milliseconds.
	m, err := testcluster.Start(testcluster.Options{LogDir: logDir, Quiet: true, Lease: "1000"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()

	st, own, err := openClient(m.Addr(), m.MetadataURL(), 256<<20)
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
		c := startChild(t, kind, gens[kind], m, logDir)
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
		samples = append(samples, sample{time.Since(start), rss(), ms.HeapInuse, runtime.NumGoroutine()})
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
	deadline := start.Add(dur)
	for time.Now().Before(deadline) {
		<-sampleTick.C
		takeSample()
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
	for _, k := range kinds {
		retire(k, true)
	}
	takeSample()
	mainStats := sum(ws)
	elapsed := time.Since(start)

	// Verdicts.
	all := map[string]*Stats{"Go, long-lived (4 workers)": mainStats, "Go, restarted process (2 workers)": totals["go"], "Python (upstream's client), restarted": totals["python"]}
	for name, s := range all {
		if s.Corrupt != 0 || s.Lost != 0 {
			t.Errorf("%s: %d corrupt reads %q, %d lost writes %q", name, s.Corrupt, s.CorruptNotes, s.Lost, s.LostNotes)
		}
		if s.Calls() == 0 {
			t.Errorf("%s: no calls", name)
		}
	}
	if want := int(dur/restart) - 1; len(restarts) < want {
		t.Errorf("%d restarts, want at least %d", len(restarts), want)
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
	for _, s := range samples[warm:] {
		minG, maxG = min(minG, s.goroutines), max(maxG, s.goroutines)
		maxRSS = max(maxRSS, s.rss)
	}
	const mib = 1 << 20
	if end.rss > half.rss+max(16*mib, half.rss/20) {
		t.Errorf("RSS grew from %d MiB (half-way) to %d MiB", half.rss/mib, end.rss/mib)
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
	fmt.Fprintf(&b, "`%s`: %v against upstream at the pinned commit on one loopback master (TCP), measured %s UTC.\n",
		cmdLine(), elapsed.Round(time.Second), time.Now().UTC().Format("2006-01-02 15:04"))
	fmt.Fprintf(&b, "A long-lived Go client (4 worker goroutines), a Go client process (2 workers) and upstream's Python client,\n")
	fmt.Fprintf(&b, "all writing into their own segments, doing single puts/upserts/gets/removes, zero-copy batches of 16 x 16 KiB\n")
	fmt.Fprintf(&b, "and multi-buffer batches of 8 keys x 4 x 2 KiB, `batch_is_exist`, and reads of each other's keys.\n")
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
	fmt.Fprintf(&b, "| client | calls | keys | bytes verified | corrupt reads | lost writes | removes refused (leased) | errors by code |\n|---|---|---|---|---|---|---|---|\n")
	for _, name := range []string{"Go, long-lived (4 workers)", "Go, restarted process (2 workers)", "Python (upstream's client), restarted"} {
		s := all[name]
		var keys int64
		for _, v := range s.Keys {
			keys += v
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %.1f GiB | %d | %d | %d | %s |\n", name, s.Calls(), keys, float64(s.BytesVerified)/(1<<30), s.Corrupt, s.Lost, s.Leased, s.ErrorSummary())
	}
	if len(unreported) > 0 {
		fmt.Fprintf(&b, "\nKilled before their first report (their calls are not counted): %s.\n", strings.Join(unreported, ", "))
	}
	fmt.Fprintf(&b, "\nThe master evicted %d objects (its log's EVICT-RESULT lines); the model counts any missing object as lost.\n", evictions(m.LogPath))
	fmt.Fprintf(&b, "\nThe long-lived Go client's process (samples every 5 s; warm-up %v):\n\n", samples[warm].at.Round(time.Second))
	fmt.Fprintf(&b, "| | after the warm-up | half-way | end | max |\n|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| RSS | %d MiB | %d MiB | %d MiB | %d MiB |\n", samples[warm].rss/mib, half.rss/mib, end.rss/mib, maxRSS/mib)
	fmt.Fprintf(&b, "| Go heap in use | %.1f MiB | %.1f MiB | %.1f MiB | |\n", float64(samples[warm].heap)/mib, float64(half.heap)/mib, float64(end.heap)/mib)
	fmt.Fprintf(&b, "| goroutines | %d | %d | %d | %d (min %d) |\n", samples[warm].goroutines, half.goroutines, end.goroutines, maxG, minG)
	fmt.Fprintf(&b, "\nOperations of the long-lived client: %s.\n", opSummary(mainStats))
	fmt.Fprintf(&b, "\nChecks: every read's bytes are the value of its key (header: key CRC, version, size; body: SHA-256 of key and\n")
	fmt.Fprintf(&b, "version); each writer's reads of its own keys match its model (acknowledged writes, with the versions a failed\n")
	fmt.Fprintf(&b, "call may have left); each client process checks all its keys before a graceful stop; the long-lived client\n")
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

// evictions sums evicted_count over the master log's EVICT-RESULT lines.
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
