//go:build cgo

package kvevents_test

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/kvevents"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

var (
	lagRate    = flag.Int("kvevents.rate", 10000, "BenchmarkEventLag: puts (so events) per second")
	lagWorkers = flag.Int("kvevents.workers", 16, "BenchmarkEventLag: goroutines putting")
	lagBatch   = flag.Int("kvevents.batch", 1, "BenchmarkEventLag: keys per put call (PutBatch when above 1)")
	lagChild   = flag.Bool("kvevents.child", true, "BenchmarkEventLag on a real master: put from a child process")
)

// lagHandler records, per event of the benchmark's keys, when it arrived
// and the batch's timestamp.
type lagHandler struct {
	prefix string
	recv   []atomic.Int64 // unix ns the event arrived, by key index
	stamp  []atomic.Int64 // the batch timestamp (ms precision), unix ns
	got    atomic.Int64
	gaps   atomic.Int64
	inner  *collector
}

func (h *lagHandler) HandleBatch(b *kvevents.Batch) {
	now := time.Now().UnixNano()
	for i := range b.Events {
		k := b.Events[i].Key
		if !strings.HasPrefix(k, h.prefix) {
			continue
		}
		n, err := strconv.Atoi(k[len(h.prefix):])
		if err != nil || n >= len(h.recv) {
			continue
		}
		h.recv[n].Store(now)
		h.stamp[n].Store(b.Time.UnixNano())
		h.got.Add(1)
	}
	h.inner.HandleBatch(b)
}

func (h *lagHandler) HandleGap(g kvevents.Gap) {
	if g.Reason != kvevents.Started {
		h.gaps.Add(1)
	}
	h.inner.HandleGap(g)
}

// BenchmarkEventLag puts b.N keys at -kvevents.rate per second from
// -kvevents.workers goroutines, -kvevents.batch keys per call (a batch put
// is one RPC whose keys the master ends one by one, as SGLang's page
// writes), and measures each key's Stored event:
// after the master's batch timestamp (what SubscriberStats.LastLag
// reports; the timestamp has millisecond precision, so up to 1 ms is the
// truncation), and after the put started and returned (end to end; an
// event may arrive before its put returns, since the master publishes at
// PutEnd, before its reply). Run it with -benchtime=<events>x; docs/kv-events.md
// has the runs against a real master.
func BenchmarkEventLag(b *testing.B) {
	c := mooncaketest.NewCluster(b)
	ep := c.KVEvents(b)
	st := c.Open(b)
	h := &lagHandler{prefix: mooncaketest.Key(b, "lag") + "/", inner: newCollector()}
	n := b.N
	h.recv, h.stamp = make([]atomic.Int64, n), make([]atomic.Int64, n)
	s, err := kvevents.Subscribe(b.Context(), kvevents.SubscriberConfig{Locator: kvevents.Static(ep), Handler: h})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	// Until the subscription has reached the publisher.
	for i := 0; ; i++ {
		if err := st.Upsert(mooncaketest.Key(b, fmt.Sprint("probe-", i)), []byte("p")); err != nil {
			b.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		h.inner.mu.Lock()
		seen := len(h.inner.events) > 0
		h.inner.mu.Unlock()
		if seen {
			break
		}
		if i == 500 {
			b.Fatal("no event from the publisher")
		}
	}
	var start, done []int64
	var putErrs int64
	b.ResetTimer()
	t0 := time.Now()
	if c.Native && *lagChild {
		start, done, putErrs = putInChild(b, h.prefix, n, t0)
	} else {
		start, done, putErrs = putPaced(st, h.prefix, n, t0)
	}
	deadline := time.Now().Add(10 * time.Second)
	for h.got.Load() < int64(n)-putErrs && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	b.StopTimer()
	var fromStamp, fromStart, fromDone []float64
	missing := 0
	for i := 0; i < n; i++ {
		r := h.recv[i].Load()
		if r == 0 {
			missing++
			continue
		}
		fromStamp = append(fromStamp, float64(r-h.stamp[i].Load())/1e6)
		fromStart = append(fromStart, float64(r-start[i])/1e6)
		fromDone = append(fromDone, float64(r-done[i])/1e6)
	}
	pct := func(v []float64, p float64) float64 {
		if len(v) == 0 {
			return 0
		}
		slices.Sort(v)
		return v[min(len(v)-1, int(p*float64(len(v))))]
	}
	if first, last := slices.Min(start), slices.Max(start); last > first {
		b.ReportMetric(float64(n-1)/(float64(last-first)/1e9), "events/s")
	}
	b.ReportMetric(pct(fromStamp, 0.50), "p50-ms")
	b.ReportMetric(pct(fromStamp, 0.99), "p99-ms")
	b.ReportMetric(pct(fromStamp, 1), "max-ms")
	b.ReportMetric(pct(fromStart, 0.50), "e2e-p50-ms")
	b.ReportMetric(pct(fromStart, 0.99), "e2e-p99-ms")
	b.ReportMetric(pct(fromDone, 0.99), "after-return-p99-ms")
	b.ReportMetric(float64(missing), "missing")
	b.ReportMetric(float64(h.gaps.Load()), "gaps")
	b.ReportMetric(float64(putErrs), "put-errors")
}

// putPaced puts n keys prefix+i, key i at t0 + i/rate, from -kvevents.workers
// goroutines, -kvevents.batch keys a call, and returns when each call
// started and returned (unix ns, per key) and how many keys failed.
func putPaced(st *mooncake.Store, prefix string, n int, t0 time.Time) (start, done []int64, failed int64) {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = prefix + strconv.Itoa(i)
	}
	start, done = make([]int64, n), make([]int64, n)
	interval := time.Second / time.Duration(*lagRate)
	var next atomic.Int64
	var wg sync.WaitGroup
	var putErrs atomic.Int64
	value := []byte("v")
	batch := max(1, *lagBatch)
	calls := (n + batch - 1) / batch
	for w := 0; w < *lagWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var pk hostmem.Keys
			values := make([][]byte, batch)
			for j := range values {
				values[j] = value
			}
			for {
				call := int(next.Add(1) - 1)
				if call >= calls {
					return
				}
				lo, hi := call*batch, min(n, (call+1)*batch)
				if d := time.Until(t0.Add(time.Duration(lo) * interval)); d > 0 {
					time.Sleep(d)
				}
				t := time.Now().UnixNano()
				var err error
				if batch == 1 {
					err = st.Put(keys[lo], value)
				} else {
					pk.Reset()
					for i := lo; i < hi; i++ {
						pk.Append(keys[i])
					}
					err = st.PutBatch(&pk, values[:hi-lo])
				}
				e := time.Now().UnixNano()
				if err != nil {
					putErrs.Add(int64(hi - lo))
				}
				for i := lo; i < hi; i++ {
					start[i], done[i] = t, e
				}
			}
		}()
	}
	wg.Wait()
	return start, done, putErrs.Load()
}

// The child process of putInChild: it puts as putPaced and writes each
// key's start and done times (16 bytes a key) and the failures to stdout.
const putterEnv = "MCGO_KVEVENTS_PUTTER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(putterEnv); spec != "" {
		os.Exit(putterMain(spec))
	}
	os.Exit(m.Run())
}

func putterMain(spec string) int {
	flag.Parse()
	var prefix string
	var n int
	var t0 int64
	if _, err := fmt.Sscan(spec, &prefix, &n, &t0); err != nil {
		fmt.Fprintln(os.Stderr, "putter:", err)
		return 2
	}
	st, err := mooncake.Open(mooncake.Config{
		LocalHostname: "127.0.0.1", MetadataServer: os.Getenv("MCGO_TEST_METADATA"), GlobalSegmentSize: 256 << 20,
		LocalBufferSize: 32 << 20, Protocol: "tcp", MasterServerAddress: os.Getenv("MCGO_TEST_MASTER"),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "putter:", err)
		return 1
	}
	defer st.Close()
	fmt.Fprintln(os.Stderr, "putter: ready")
	start, done, failed := putPaced(st, prefix, n, time.Unix(0, t0))
	w := bufio.NewWriter(os.Stdout)
	for i := range start {
		_ = binary.Write(w, binary.LittleEndian, [2]int64{start[i], done[i]})
	}
	_ = binary.Write(w, binary.LittleEndian, failed)
	_ = w.Flush()
	return 0
}

// putInChild runs putPaced in a child process (a router's writers are
// other processes: the subscriber then competes only with the master and
// the writers for the CPU, not with the writers' runtime too).
func putInChild(b *testing.B, prefix string, n int, t0 time.Time) (start, done []int64, failed int64) {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	// The child opens its store before t0: start a second from now.
	t0 = t0.Add(time.Second)
	cmd := exec.Command(exe, "-kvevents.rate="+strconv.Itoa(*lagRate), "-kvevents.workers="+strconv.Itoa(*lagWorkers),
		"-kvevents.batch="+strconv.Itoa(*lagBatch))
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %d", putterEnv, prefix, n, t0.UnixNano()))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("putter: %v", err)
	}
	if len(out) != 16*n+8 {
		b.Fatalf("putter wrote %d bytes, want %d", len(out), 16*n+8)
	}
	start, done = make([]int64, n), make([]int64, n)
	for i := 0; i < n; i++ {
		start[i] = int64(binary.LittleEndian.Uint64(out[16*i:]))
		done[i] = int64(binary.LittleEndian.Uint64(out[16*i+8:]))
	}
	return start, done, int64(binary.LittleEndian.Uint64(out[16*n:]))
}
