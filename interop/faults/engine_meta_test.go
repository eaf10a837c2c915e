//go:build cgo

package faults

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/internal/testcluster"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
)

// Transfer engines on etcd and Redis metadata, with a peer engine in
// another process: this test binary again, started with enginePeerEnv set
// to the metadata server. The peer prints "@@ ready <segment>" and then
// answers one "@@ " line per command read from stdin (enginePeerMain).
const enginePeerEnv = "MCGO_FAULTS_ENGINE_PEER"

// init runs the peer before TestMain, so that the peer needs nothing of
// faults_test.go's TestMain (the environment it inherits already binds
// loopback).
func init() {
	if meta := os.Getenv(enginePeerEnv); meta != "" {
		os.Exit(enginePeerMain(meta))
	}
}

// Bounds, with room for a 2-vCPU VM under other load (docs/ha.md has the
// measured values).
const (
	teCallBound    = 30 * time.Second // one transfer or metadata call
	teRecoverBound = 60 * time.Second // from the restart to the first successful transfer
	teStoreDown    = 10 * time.Second // how long the restart test keeps the store down
	tePeerBound    = 60 * time.Second // one command of the peer process
)

// The streaming layout of an engine's memory: the first teSlots slots are
// where the other process's streams write and read, then each own stream
// has a source and a destination slot.
const (
	teSlots    = 2
	teSlotSize = 4 << 20
	teMemSize  = 3 * teSlots * teSlotSize
)

// metaStore is the metadata server of a test, which the test can also
// read and change directly (etcd's v3 JSON gateway, Redis's RESP).
type metaStore struct {
	backend string // "etcd" or "redis"
	srv     *testcluster.Server
}

func startMetaStore(t *testing.T, backend string) metaStore {
	t.Helper()
	requireMetadata(t, backend)
	return metaStore{backend: backend, srv: startServer(t, backend)}
}

func (m metaStore) url() string { return m.backend + "://" + m.srv.Addr() }

// keys lists the store's keys under upstream's "mooncake/" prefix.
func (m metaStore) keys() ([]string, error) {
	var keys []string
	if m.backend == "redis" {
		v, err := redisDo(m.srv.Addr(), "KEYS", "mooncake/*")
		if err != nil {
			return nil, err
		}
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("KEYS: %v", v)
		}
		for _, k := range list {
			keys = append(keys, fmt.Sprint(k))
		}
	} else {
		var resp struct {
			Kvs []struct {
				Key []byte `json:"key"`
			} `json:"kvs"`
		}
		// "mooncake0" ends the range: '0' follows '/'.
		req := map[string]any{"key": []byte("mooncake/"), "range_end": []byte("mooncake0"), "keys_only": true}
		if err := etcdPost(m.srv.Addr(), "/v3/kv/range", req, &resp); err != nil {
			return nil, err
		}
		for _, kv := range resp.Kvs {
			keys = append(keys, string(kv.Key))
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// del deletes key and returns how many keys were deleted.
func (m metaStore) del(key string) (int64, error) {
	if m.backend == "redis" {
		v, err := redisDo(m.srv.Addr(), "DEL", key)
		n, _ := v.(int64)
		return n, err
	}
	var resp struct {
		Deleted int64 `json:"deleted,string"`
	}
	err := etcdPost(m.srv.Addr(), "/v3/kv/deleterange", map[string]any{"key": []byte(key)}, &resp)
	return resp.Deleted, err
}

// entriesOf are the keys upstream keeps for segment: its descriptor
// (".../ram/<segment>") and its RPC address (".../rpc_meta/<segment>").
func entriesOf(keys []string, segment string) []string {
	var out []string
	for _, k := range keys {
		if strings.HasSuffix(k, "/ram/"+segment) || strings.HasSuffix(k, "/rpc_meta/"+segment) {
			out = append(out, k)
		}
	}
	return out
}

func etcdPost(addr, path string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	c := http.Client{Timeout: 10 * time.Second}
	r, err := c.Post("http://"+addr+path, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	if r.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %s: %s", path, r.Status, b)
	}
	return json.Unmarshal(b, resp)
}

// redisDo sends one command over a connection of its own and returns the
// reply: a string, an int64, nil, or a []any of them.
func redisDo(addr string, args ...string) (any, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write(b.Bytes()); err != nil {
		return nil, err
	}
	return readRESP(bufio.NewReader(c))
}

func readRESP(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, errors.New("redis: empty reply line")
	}
	switch line[0] {
	case '+':
		return line[1:], nil
	case '-':
		return nil, errors.New("redis: " + line[1:])
	case ':':
		return strconv.ParseInt(line[1:], 10, 64)
	case '$', '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return nil, err
		}
		if line[0] == '$' {
			buf := make([]byte, n+2)
			if _, err := io.ReadFull(r, buf); err != nil {
				return nil, err
			}
			return string(buf[:n]), nil
		}
		list := make([]any, n)
		for i := range list {
			if list[i], err = readRESP(r); err != nil {
				return nil, err
			}
		}
		return list, nil
	}
	return nil, fmt.Errorf("redis: reply %q", line)
}

// openMetaEngine opens an engine on metadata with size bytes registered.
func openMetaEngine(metadata string, size int) (*transfer.Engine, *hostmem.Memory, error) {
	ports, err := testcluster.FreePorts(1)
	if err != nil {
		return nil, nil, err
	}
	e, err := transfer.Open(transfer.Config{MetadataServer: metadata, LocalServerName: fmt.Sprintf("127.0.0.1:%d", ports[0]), Protocol: "tcp"})
	if err != nil {
		return nil, nil, err
	}
	mem, err := hostmem.Alloc(uint64(size), hostmem.Options{})
	if err == nil {
		if err = e.RegisterMemory(mem); err != nil {
			_ = mem.Free()
		}
	}
	if err != nil {
		_ = e.Close()
		return nil, nil, err
	}
	return e, mem, nil
}

// openStreamEngine is openMetaEngine for a test, with teMemSize registered.
func openStreamEngine(t *testing.T, metadata string) (*transfer.Engine, *hostmem.Memory) {
	t.Helper()
	e, mem, err := openMetaEngine(metadata, teMemSize)
	if err != nil {
		t.Fatalf("open an engine on %s: %v", metadata, err)
	}
	t.Cleanup(func() { _ = e.Close(); _ = mem.Free() })
	return e, mem
}

// errKind names what err is typed as: the engine's code it carries, else
// the transfer sentinel it wraps, else "untyped" ("" for nil).
func errKind(err error) string {
	if err == nil {
		return ""
	}
	var te *transfer.Error
	if errors.As(err, &te) && te.Code != 0 {
		return te.Code.String()
	}
	for _, s := range []struct {
		name string
		err  error
	}{{"ErrTaskFailed", transfer.ErrTaskFailed}, {"ErrClosed", transfer.ErrClosed}} {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	return "untyped"
}

// xfer is one transfer call of a stream.
type xfer struct {
	At      int64  `json:"at"`   // start, Unix ns (the two processes share the clock)
	Took    int64  `json:"took"` // ns
	Read    bool   `json:"read,omitempty"`
	Kind    string `json:"kind,omitempty"` // errKind of its error
	Err     string `json:"err,omitempty"`
	Corrupt bool   `json:"corrupt,omitempty"` // a read that returned other bytes than written
}

// xferLog collects a process's stream calls.
type xferLog struct {
	inFlight atomic.Int64 // calls under way
	mu       sync.Mutex
	calls    []xfer
}

func (l *xferLog) add(x xfer) { l.mu.Lock(); l.calls = append(l.calls, x); l.mu.Unlock() }

func (l *xferLog) snapshot() []xfer { l.mu.Lock(); defer l.mu.Unlock(); return slices.Clone(l.calls) }

// startStreams runs teSlots streams from e to seg, each writing 1-4 MiB
// into its slot of seg's memory and reading it back, checking every byte,
// until stop (which reports false when a stream did not end within bound).
func startStreams(e *transfer.Engine, mem *hostmem.Memory, seg *transfer.Segment) (*xferLog, func(bound time.Duration) bool, error) {
	bufs, err := seg.Buffers(nil)
	if err != nil {
		return nil, nil, err
	}
	if len(bufs) == 0 || bufs[0].Size < teSlots*teSlotSize {
		return nil, nil, fmt.Errorf("segment %s: buffers %v, want %d bytes", seg.Name(), bufs, teSlots*teSlotSize)
	}
	log := &xferLog{}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for slot := 0; slot < teSlots; slot++ {
		wg.Add(1)
		go func() { defer wg.Done(); stream(e, mem, seg, bufs[0].Addr+uint64(slot*teSlotSize), slot, done, log) }()
	}
	var once sync.Once
	stop := func(bound time.Duration) bool {
		once.Do(func() { close(done) })
		ended := make(chan struct{})
		go func() { wg.Wait(); close(ended) }()
		select {
		case <-ended:
			return true
		case <-time.After(bound):
			return false
		}
	}
	return log, stop, nil
}

// stream is one stream of startStreams; it writes to and reads from
// remote, its slot of seg.
func stream(e *transfer.Engine, mem *hostmem.Memory, seg *transfer.Segment, remote uint64, slot int, done <-chan struct{}, log *xferLog) {
	own := teSlots*teSlotSize + slot*2*teSlotSize
	buf := mem.Bytes()
	src, dst := buf[own:own+teSlotSize], buf[own+teSlotSize:own+2*teSlotSize]
	srcAddr, dstAddr := mem.Addr()+uintptr(own), mem.Addr()+uintptr(own+teSlotSize)
	for round := 0; ; round++ {
		select {
		case <-done:
			return
		default:
		}
		n := (1 + round%4) << 20
		// A page pattern of its own per round and stream, so that a read
		// of another round's bytes shows.
		for i := 0; i < 4096; i++ {
			src[i] = byte(i*7 + round*13 + slot*101)
		}
		for k := 4096; k < n; k *= 2 {
			copy(src[k:n], src[:k])
		}
		clear(dst[:n])
		ctx, cancel := context.WithTimeout(context.Background(), 2*teCallBound)
		log.inFlight.Add(1)
		t0 := time.Now()
		err := e.Write(ctx, seg, srcAddr, remote, uint64(n))
		took := time.Since(t0)
		if err == nil {
			t1 := time.Now()
			err = e.Read(ctx, seg, dstAddr, remote, uint64(n))
			log.inFlight.Add(-1)
			log.add(xfer{At: t0.UnixNano(), Took: int64(took)})
			log.add(xfer{At: t1.UnixNano(), Took: int64(time.Since(t1)), Read: true, Kind: errKind(err), Err: errString(err),
				Corrupt: err == nil && !bytes.Equal(src[:n], dst[:n])})
		} else {
			log.inFlight.Add(-1)
			log.add(xfer{At: t0.UnixNano(), Took: int64(took), Kind: errKind(err), Err: errString(err)})
		}
		cancel()
		if err != nil {
			time.Sleep(50 * time.Millisecond) // no busy loop while the peer is unreachable
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// enginePeerMain is the peer process: an engine on meta with teMemSize
// registered, serving commands until stdin ends.
func enginePeerMain(meta string) int {
	e, mem, err := openMetaEngine(meta, teMemSize)
	if err != nil {
		fmt.Println("@@ error", err)
		return 1
	}
	fmt.Println("@@ ready", e.SegmentName())
	segs := map[string]*transfer.Segment{}
	open := func(name string) (*transfer.Segment, error) {
		if s, ok := segs[name]; ok {
			return s, nil
		}
		s, err := e.OpenSegment(name)
		if err == nil {
			segs[name] = s
		}
		return s, err
	}
	reply := func(err error) {
		if err != nil {
			fmt.Printf("@@ err %s %s\n", errKind(err), strings.ReplaceAll(err.Error(), "\n", " "))
			return
		}
		fmt.Println("@@ ok")
	}
	var log *xferLog
	var stop func(time.Duration) bool
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "trip": // trip <segment> <fill>: a round trip of 4 KiB
			seg, err := open(f[1])
			if err == nil {
				fill, _ := strconv.Atoi(f[2])
				err = roundTrip(e, mem, seg, byte(fill))
			}
			reply(err)
		case "close":
			reply(e.Close())
		case "stream": // stream <segment>: start the streams
			seg, err := open(f[1])
			if err == nil {
				log, stop, err = startStreams(e, mem, seg)
			}
			reply(err)
		case "calls", "stop": // the streams' calls so far, after stopping them for "stop"
			res := struct {
				Hung  bool   `json:"hung"`
				Calls []xfer `json:"calls"`
			}{}
			if f[0] == "stop" && stop != nil {
				res.Hung = !stop(2 * teCallBound)
			}
			if log != nil {
				res.Calls = log.snapshot()
			}
			b, _ := json.Marshal(res)
			fmt.Printf("@@ %s\n", b)
		default:
			fmt.Println("@@ err unknown command", f[0])
		}
	}
	return 0
}

// enginePeer is a running peer process.
type enginePeer struct {
	proc  *peerProc
	in    io.WriteCloser
	lines chan string
	name  string // its segment name
}

// startEnginePeer starts a peer engine on meta and waits for its segment
// name; its log (upstream's) goes to build/cluster-logs/<logName>.
func startEnginePeer(t *testing.T, meta, logName string) *enginePeer {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), enginePeerEnv+"="+meta)
	logDir := "../../build/cluster-logs" // the repository's build/, as startMaster's
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(logDir, logName))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logf
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &enginePeer{proc: &peerProc{cmd: cmd, done: make(chan struct{})}, in: in, lines: make(chan string, 1)}
	go func() { _ = cmd.Wait(); logf.Close(); close(p.proc.done) }()
	t.Cleanup(p.proc.kill)
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 256<<20)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "@@ "); ok {
				p.lines <- line
			}
		}
	}()
	line := p.next(t)
	name, ok := strings.CutPrefix(line, "ready ")
	if !ok {
		t.Fatalf("peer: %q (log %s)", line, logName)
	}
	p.name = name
	return p
}

func (p *enginePeer) next(t *testing.T) string {
	t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			t.Fatal("the peer process exited")
		}
		return line
	case <-time.After(tePeerBound):
		t.Fatalf("the peer process did not answer within %v", tePeerBound)
	}
	return ""
}

// do sends a command and returns its answer.
func (p *enginePeer) do(t *testing.T, cmd string) string {
	t.Helper()
	if _, err := fmt.Fprintln(p.in, cmd); err != nil {
		t.Fatalf("peer %s: %v", cmd, err)
	}
	return p.next(t)
}

// calls asks the peer for its streams' calls ("calls", or "stop").
func (p *enginePeer) calls(t *testing.T, cmd string) (calls []xfer, hung bool) {
	t.Helper()
	var res struct {
		Hung  bool   `json:"hung"`
		Calls []xfer `json:"calls"`
	}
	line := p.do(t, cmd)
	if err := json.Unmarshal([]byte(line), &res); err != nil {
		t.Fatalf("peer %s: %q: %v", cmd, line, err)
	}
	return res.Calls, res.Hung
}

// timedCall runs f, logs its error and how long it took, and returns it; a
// call slower than teCallBound is an error.
func timedCall(t *testing.T, what string, f func() error) error {
	t.Helper()
	t0 := time.Now()
	err := f()
	took := time.Since(t0)
	t.Logf("%s: %v after %v", what, err, took.Round(time.Microsecond))
	if took > teCallBound {
		t.Errorf("%s took %v, more than %v", what, took, teCallBound)
	}
	return err
}

// expect checks err against the pinned outcome: nil, or a sentinel it
// must wrap.
func expect(t *testing.T, what string, err, want error) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Errorf("%s: %v, want success", what, err)
	case want != nil && !errors.Is(err, want):
		t.Errorf("%s: %v, want %v", what, err, want)
	}
}

var teBackends = []string{"etcd", "redis"}

// TestEngineEtcdAndRedisTwoProcesses: an engine of this process and one of
// a peer process find each other through etcd and through Redis metadata,
// each opens the other's segment, and a write and read round trip works
// both ways, the bytes checked (also in this process's memory, written by
// the peer).
func TestEngineEtcdAndRedisTwoProcesses(t *testing.T) {
	for _, backend := range teBackends {
		t.Run(backend, func(t *testing.T) {
			ms := startMetaStore(t, backend)
			a, am := openEngine(t, ms.url())
			t0 := time.Now()
			p := startEnginePeer(t, ms.url(), "engine-peer-two-"+backend+".log")
			t.Logf("%s: the peer process's engine %s ready after %v", backend, p.name, time.Since(t0).Round(time.Millisecond))
			keys, err := ms.keys()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: keys: %q", backend, keys)
			// The key names the entry tests delete: a descriptor and an RPC
			// address per engine.
			for _, name := range []string{a.SegmentName(), p.name} {
				if got := entriesOf(keys, name); len(got) != 2 {
					t.Errorf("%s: the store's entries of %s: %q, want its ram/ and rpc_meta/ keys", backend, name, got)
				}
			}
			var seg *transfer.Segment
			err = timedCall(t, backend+": OpenSegment of the peer", func() (err error) { seg, err = a.OpenSegment(p.name); return err })
			if err != nil {
				t.Fatal(err)
			}
			err = timedCall(t, backend+": round trip to the peer", func() error { return roundTrip(a, am, seg, 0x11) })
			expect(t, backend+": round trip to the peer", err, nil)
			var reply string
			timedCall(t, backend+": the peer's round trip to this process", func() error { reply = p.do(t, "trip "+a.SegmentName()+" 34"); return nil })
			if reply != "ok" {
				t.Errorf("%s: the peer's round trip to this process: %s", backend, reply)
			}
			// roundTrip wrote its fill into the first 4 KiB of our memory.
			if got := am.Bytes()[:4096]; !bytes.Equal(got, bytes.Repeat([]byte{34}, 4096)) {
				t.Errorf("%s: this process's memory does not hold the peer's bytes", backend)
			}
		})
	}
}

// TestEngineEtcdAndRedisEntryGone: a peer's metadata entries disappear,
// (a) because the peer process closes its engine (upstream removes both
// entries), (b) because they are deleted in the store behind the peer's
// back. What a transfer to a segment opened before does, and opening it
// again (by an engine that opened it before, and by a fresh one), is
// pinned, each call typed and within teCallBound: upstream caches a
// segment's descriptor at open and its RPC address at the first transfer
// (metacache on), and never looks either up again for a transfer.
func TestEngineEtcdAndRedisEntryGone(t *testing.T) {
	for _, backend := range teBackends {
		t.Run(backend, func(t *testing.T) {
			ms := startMetaStore(t, backend)
			a, am := openEngine(t, ms.url())
			a2, a2m := openEngine(t, ms.url())
			closer := startEnginePeer(t, ms.url(), "engine-peer-closed-"+backend+".log")
			deleted := startEnginePeer(t, ms.url(), "engine-peer-deleted-"+backend+".log")
			segC, err := a.OpenSegment(closer.name)
			if err == nil {
				err = roundTrip(a, am, segC, 1)
			}
			if err != nil {
				t.Fatalf("%s: before: %v", backend, err)
			}
			segD, err := a.OpenSegment(deleted.name)
			if err == nil {
				err = roundTrip(a, am, segD, 2)
			}
			if err != nil {
				t.Fatalf("%s: before: %v", backend, err)
			}
			// a2 opens the segment but transfers nothing: it has the
			// descriptor, not yet the RPC address.
			segD2, err := a2.OpenSegment(deleted.name)
			if err != nil {
				t.Fatalf("%s: before: %v", backend, err)
			}

			// (a) The peer closes its engine; its process lives on.
			if r := closer.do(t, "close"); r != "ok" {
				t.Fatalf("%s: the peer's Close: %s", backend, r)
			}
			keys, err := ms.keys()
			if err != nil {
				t.Fatal(err)
			}
			if left := entriesOf(keys, closer.name); len(left) != 0 {
				t.Errorf("%s: after the peer's Close its entries are still there: %q", backend, left)
			}
			err = timedCall(t, backend+": closed peer: a transfer to its segment opened before", func() error { return roundTrip(a, am, segC, 3) })
			expect(t, backend+": closed peer: a transfer", err, transfer.ErrTaskFailed)
			err = timedCall(t, backend+": closed peer: OpenSegment by the engine that opened it before", func() error { _, err := a.OpenSegment(closer.name); return err })
			expect(t, backend+": closed peer: OpenSegment again", err, nil) // the cached descriptor
			f, _ := openEngine(t, ms.url())
			err = timedCall(t, backend+": closed peer: OpenSegment by a fresh engine", func() error { _, err := f.OpenSegment(closer.name); return err })
			expect(t, backend+": closed peer: OpenSegment by a fresh engine", err, transfer.ErrMetadata)

			// (b) The entries are deleted while the peer runs.
			keys, err = ms.keys()
			if err != nil {
				t.Fatal(err)
			}
			gone := entriesOf(keys, deleted.name)
			for _, k := range gone {
				if n, err := ms.del(k); n != 1 || err != nil {
					t.Fatalf("%s: delete %s: %d deleted, %v", backend, k, n, err)
				}
			}
			if len(gone) != 2 {
				t.Errorf("%s: deleted %q, want the ram/ and rpc_meta/ keys", backend, gone)
			}
			if keys, err = ms.keys(); err != nil || len(entriesOf(keys, deleted.name)) != 0 {
				t.Fatalf("%s: after the delete: %q, %v", backend, keys, err)
			}
			err = timedCall(t, backend+": deleted entries: a transfer by an engine that transferred before", func() error { return roundTrip(a, am, segD, 4) })
			expect(t, backend+": deleted entries: a transfer by an engine that transferred before", err, nil)
			err = timedCall(t, backend+": deleted entries: the first transfer by an engine that only opened the segment", func() error { return roundTrip(a2, a2m, segD2, 5) })
			expect(t, backend+": deleted entries: the first transfer by an engine that only opened it", err, transfer.ErrTaskFailed)
			err = timedCall(t, backend+": deleted entries: Segment.Refresh", func() error { _, err := segD.Refresh(nil); return err })
			expect(t, backend+": deleted entries: Segment.Refresh", err, transfer.ErrMetadata)
			err = timedCall(t, backend+": deleted entries: OpenSegment by the engine that opened it before", func() error { _, err := a.OpenSegment(deleted.name); return err })
			expect(t, backend+": deleted entries: OpenSegment again", err, nil)
			err = timedCall(t, backend+": deleted entries: OpenSegment by a fresh engine", func() error { _, err := f.OpenSegment(deleted.name); return err })
			expect(t, backend+": deleted entries: OpenSegment by a fresh engine", err, transfer.ErrMetadata)
			var reply string
			timedCall(t, backend+": deleted entries: the peer's round trip to this process", func() error { reply = deleted.do(t, "trip "+a.SegmentName()+" 6"); return nil })
			if reply != "ok" {
				t.Errorf("%s: the peer without entries could not reach this process: %s", backend, reply)
			}
		})
	}
}

// TestEngineEtcdAndRedisRestarted: an engine of this process and one of a
// peer process stream 1-4 MiB writes and reads to each other (two streams
// each way, every byte checked); the metadata store is SIGKILLed mid-transfer,
// kept down teStoreDown and started again. Every call returns within a
// bound, failures are typed, no read returns other bytes than written, and
// transfers succeed after the restart within a bound. What the store holds
// after the restart, and whether engines find each other through it, is
// pinned: etcd keeps its data and its client reconnects; Redis runs without
// persistence (every entry is gone) and upstream's hiredis connection of an
// engine opened before never reconnects.
func TestEngineEtcdAndRedisRestarted(t *testing.T) {
	for _, backend := range teBackends {
		t.Run(backend, func(t *testing.T) {
			ms := startMetaStore(t, backend)
			a, am := openStreamEngine(t, ms.url())
			p := startEnginePeer(t, ms.url(), "engine-peer-restart-"+backend+".log")
			seg, err := a.OpenSegment(p.name)
			if err != nil {
				t.Fatal(err)
			}
			if r := p.do(t, "stream "+a.SegmentName()); r != "ok" {
				t.Fatalf("%s: the peer's streams: %s", backend, r)
			}
			log, stop, err := startStreams(a, am, seg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { stop(2 * teCallBound) })
			// Warm up: both directions have transferred (a slow machine
			// needs more than a fixed time), then kill while a call of this
			// process is under way.
			for t0 := time.Now(); ; time.Sleep(100 * time.Millisecond) {
				peerCalls, _ := p.calls(t, "calls")
				if okCalls(log.snapshot()) >= 20 && okCalls(peerCalls) >= 20 {
					break
				}
				if time.Since(t0) > teRecoverBound {
					t.Fatalf("%s: fewer than 20 successful transfers each way in %v", backend, teRecoverBound)
				}
			}
			for t0 := time.Now(); log.inFlight.Load() == 0 && time.Since(t0) < 10*time.Second; {
				time.Sleep(100 * time.Microsecond)
			}
			killing := time.Now()
			ms.srv.Kill()
			killed := time.Now()
			// What needs the store while it is down: looking a segment up,
			// and opening an engine (it publishes its entries); together,
			// so that etcd's timeouts (5 s a call) fit in teStoreDown.
			var probes sync.WaitGroup
			probes.Add(2)
			go func() {
				defer probes.Done()
				err := timedCall(t, backend+": store down: OpenSegment of an unknown segment", func() error { _, err := a.OpenSegment("127.0.0.1:1"); return err })
				expect(t, backend+": store down: OpenSegment of an unknown segment", err, transfer.ErrMetadata)
			}()
			go func() {
				defer probes.Done()
				err := timedCall(t, backend+": store down: Open of a new engine", func() error {
					e, mem, err := openMetaEngine(ms.url(), 1<<20)
					if err == nil {
						_ = e.Close()
						_ = mem.Free()
					}
					return err
				})
				expect(t, backend+": store down: Open of a new engine", err, transfer.ErrMetadata)
			}()
			probes.Wait()
			time.Sleep(time.Until(killed.Add(teStoreDown)))
			if err := ms.srv.Restart(); err != nil {
				t.Fatal(err)
			}
			restarted := time.Now()
			t.Logf("%s: the store was down %v", backend, restarted.Sub(killed).Round(time.Millisecond))
			var ours, theirs time.Duration
			for time.Since(restarted) < teRecoverBound && (ours == 0 || theirs == 0) {
				time.Sleep(200 * time.Millisecond)
				ours = firstXferOK(log.snapshot(), restarted)
				peerCalls, _ := p.calls(t, "calls")
				theirs = firstXferOK(peerCalls, restarted)
			}
			time.Sleep(time.Second)
			if !stop(2 * teCallBound) {
				t.Errorf("%s: this process's streams did not end within %v (a call hangs)", backend, 2*teCallBound)
			}
			peerCalls, hung := p.calls(t, "stop")
			if hung {
				t.Errorf("%s: the peer's streams did not end within %v (a call hangs)", backend, 2*teCallBound)
			}
			inFlight := checkXfers(t, backend+": this process -> peer", log.snapshot(), killing, killed, restarted, ours)
			inFlight += checkXfers(t, backend+": peer -> this process", peerCalls, killing, killed, restarted, theirs)
			if inFlight == 0 {
				t.Errorf("%s: no transfer was under way when the store was killed", backend)
			}

			keys, err := ms.keys()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: after the restart the store holds %d keys under mooncake/: %q", backend, len(keys), keys)
			kept := len(entriesOf(keys, a.SegmentName())) + len(entriesOf(keys, p.name))
			if want := map[string]int{"etcd": 4, "redis": 0}[backend]; kept != want {
				t.Errorf("%s: %d entries of the two engines after the restart, want %d", backend, kept, want)
			}
			// A fresh engine opens once the process's client reaches the
			// store again (etcd's reconnects with a back-off, measured).
			var c *transfer.Engine
			var failed []string
			for {
				if c, _, err = tryOpenEngine(t, ms.url()); err == nil || time.Since(restarted) > teRecoverBound {
					break
				}
				failed = append(failed, errKind(err))
				time.Sleep(200 * time.Millisecond)
			}
			t.Logf("%s: a fresh engine opened %v after the restart (failed tries before: %v)", backend, time.Since(restarted).Round(time.Millisecond), failed)
			if err != nil {
				t.Fatalf("%s: no fresh engine opened within %v of the restart", backend, teRecoverBound)
			}
			if slices.Contains(failed, "untyped") {
				t.Errorf("%s: an Open after the restart failed untyped", backend)
			}
			if keys, err = ms.keys(); err != nil || len(entriesOf(keys, c.SegmentName())) != 2 {
				t.Errorf("%s: a fresh engine's entries after the restart: %q, %v", backend, keys, err)
			}
			// It finds the peer through the restarted store only if the store
			// kept the entries (etcd).
			var want error
			if backend == "redis" {
				want = transfer.ErrMetadata
			}
			err = timedCall(t, backend+": after the restart: OpenSegment of the peer by a fresh engine", func() error { _, err := c.OpenSegment(p.name); return err })
			expect(t, backend+": after the restart: OpenSegment of the peer by a fresh engine", err, want)
			// An engine opened before the restart finds one opened after it
			// only if its client reconnected (etcd's, with a back-off).
			tries := 0
			err = timedCall(t, backend+": after the restart: OpenSegment of a fresh engine by an engine opened before", func() error {
				for t0 := time.Now(); ; tries++ {
					_, err := a.OpenSegment(c.SegmentName())
					if err == nil || time.Since(t0) > 10*time.Second {
						return err
					}
					time.Sleep(200 * time.Millisecond)
				}
			})
			t.Logf("%s: the engine opened before tried OpenSegment %d times", backend, tries+1)
			expect(t, backend+": after the restart: OpenSegment of a fresh engine by an engine opened before", err, want)
		})
	}
}

// firstXferOK is how long after since the first successful call that
// started after since ended (0: none yet).
func firstXferOK(calls []xfer, since time.Time) time.Duration {
	var first time.Duration
	for _, c := range calls {
		if c.Kind != "" || c.At < since.UnixNano() {
			continue
		}
		if d := time.Duration(c.At + c.Took - since.UnixNano()); first == 0 || d < first {
			first = max(d, 1)
		}
	}
	return first
}

// okCalls counts the successful calls.
func okCalls(calls []xfer) int {
	n := 0
	for _, c := range calls {
		if c.Kind == "" {
			n++
		}
	}
	return n
}

// checkXfers checks one direction's calls: each failure typed, none slower
// than teCallBound, no read of other bytes, a success after the restart
// within teRecoverBound; it logs what happened from the kill on (the kill
// was sent at killing, the store was gone at killed) and returns how many
// calls were under way at the kill.
func checkXfers(t *testing.T, what string, calls []xfer, killing, killed, restarted time.Time, firstOK time.Duration) (inFlight int) {
	t.Helper()
	var worst time.Duration
	var before, during, after int
	kinds := map[string]int{}
	for _, c := range calls {
		took := time.Duration(c.Took)
		worst = max(worst, took)
		if c.Corrupt {
			t.Errorf("%s: a read at %v returned other bytes than written", what, time.Unix(0, c.At))
		}
		if c.Kind == "untyped" {
			t.Errorf("%s: a call returned %s, want a typed error", what, c.Err)
		}
		end := c.At + c.Took
		switch {
		case end < killing.UnixNano():
			before++
			continue
		case c.At < killed.UnixNano():
			inFlight++
		case c.At < restarted.UnixNano():
			during++
		default:
			after++
		}
		if c.Kind != "" {
			kinds[c.Kind]++
		}
	}
	if before == 0 {
		t.Errorf("%s: no call ended before the kill", what)
	}
	t.Logf("%s: %d calls before the kill, %d in flight at it, %d started while the store was down, %d after the restart; "+
		"failures from the kill on: %v; slowest call %v; first success after the restart %v",
		what, before, inFlight, during, after, kinds, worst.Round(time.Millisecond), firstOK.Round(time.Millisecond))
	// Pinned: a transfer between engines that have transferred before
	// needs no metadata (both lookups are cached), so none fails.
	if len(kinds) != 0 {
		t.Errorf("%s: transfers failed from the kill on: %v, want none", what, kinds)
	}
	if during == 0 {
		t.Errorf("%s: no call started while the store was down", what)
	}
	if worst > teCallBound {
		t.Errorf("%s: a call took %v, more than %v", what, worst, teCallBound)
	}
	if firstOK == 0 || firstOK > teRecoverBound {
		t.Errorf("%s: no successful transfer within %v of the restart", what, teRecoverBound)
	}
	return inFlight
}
