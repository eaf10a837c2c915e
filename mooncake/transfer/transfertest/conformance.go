package transfertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/internal/fill"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
)

// RunConformance runs every case on engines from newEnv.
func RunConformance(t *testing.T, newEnv func(testing.TB) *Env) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, newEnv(t)) })
	}
}

var cases = []struct {
	name string
	run  func(*testing.T, *Env)
}{
	{"Lifecycle", testLifecycle},
	{"OpenRefusesBadConfig", testOpenRefusesBadConfig},
	{"MetadataForms", testMetadataForms},
	{"Registration", testRegistration},
	{"Segments", testSegments},
	{"WriteThenRead", testWriteThenRead},
	{"SubmitRefusals", testSubmitRefusals},
	{"RemoteOutsidePeerMemoryFails", testRemoteOutsidePeerMemoryFails},
	{"Notifications", testNotifications},
	{"BatchLifecycle", testBatchLifecycle},
	{"CancelledWaitWaitsForTransfers", testCancelledWait},
	{"ConcurrentTransfers", testConcurrentTransfers},
	{"CloseDuringTransfers", testCloseDuringTransfers},
}

func must(t testing.TB, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func isCode(t testing.TB, err error, code transfer.ErrorCode, what string) {
	t.Helper()
	if !errors.Is(err, code) {
		t.Errorf("%s: got %v, want %v", what, err, code)
	}
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// pair is two engines and registered memory on each.
type pair struct {
	a, b   *transfer.Engine
	ma, mb *hostmem.Memory
	seg    *transfer.Segment // b's segment, opened by a
}

func newPair(t *testing.T, env *Env, size int) *pair {
	t.Helper()
	p := &pair{a: env.Open(t), b: env.Open(t)}
	p.ma, p.mb = Memory(t, p.a, size), Memory(t, p.b, size)
	var err error
	p.seg, err = p.a.OpenSegment(p.b.SegmentName())
	must(t, err, "open the peer's segment")
	return p
}

func (p *pair) req(op transfer.Direction, localOff, remoteOff int, n uint64) transfer.Request {
	return transfer.Request{Dir: op, Segment: p.seg.Handle(), Local: p.ma.Addr() + uintptr(localOff),
		Remote: uint64(p.mb.Addr()) + uint64(remoteOff), Length: n}
}

func testLifecycle(t *testing.T, env *Env) {
	e := env.Open(t)
	if e.SegmentName() == "" {
		t.Fatal("no segment name")
	}
	addr, err := e.LocalAddress()
	must(t, err, "local address")
	if addr == "" {
		t.Error("empty local address")
	}
	port, err := e.RPCPort()
	must(t, err, "rpc port")
	if port == 0 {
		t.Error("rpc port 0")
	}
	topo, err := e.Topology()
	must(t, err, "topology")
	if topo == "" {
		t.Error("empty topology")
	}
	must(t, e.InstallTransport(env.Protocol, "", ""), "installing the installed transport again")
	// Close is idempotent, and every call after it says ErrClosed.
	must(t, e.Close(), "close")
	must(t, e.Close(), "close again")
	calls := map[string]error{
		"register": e.RegisterBuffer(0x1000, 10),
		"open":     func() error { _, err := e.OpenSegment("x"); return err }(),
		"batch":    func() error { _, err := e.NewBatch(1); return err }(),
		"notify":   e.NotifyPeer("x", transfer.Notification{Name: "n"}),
		"recv":     func() error { _, err := e.Notifications(nil); return err }(),
		"address":  func() error { _, err := e.LocalAddress(); return err }(),
	}
	for name, err := range calls {
		if !errors.Is(err, transfer.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}

func testOpenRefusesBadConfig(t *testing.T, env *Env) {
	for name, cfg := range map[string]transfer.Config{
		"ftp metadata":   {MetadataServer: "ftp://127.0.0.1/metadata", LocalServerName: env.Name()},
		"etcd no port":   {MetadataServer: "etcd://127.0.0.1", LocalServerName: env.Name()},
		"redis no host":  {MetadataServer: "redis://", LocalServerName: env.Name()},
		"no metadata":    {LocalServerName: env.Name()},
		"no name":        {MetadataServer: env.Metadata},
		"NUL in name":    {MetadataServer: env.Metadata, LocalServerName: "127.0.0.1\x00:1"},
		"protocol":       {MetadataServer: env.Metadata, LocalServerName: env.Name(), Protocol: "carrier-pigeon"},
		"NUL in devices": {MetadataServer: env.Metadata, LocalServerName: env.Name(), DeviceNames: "a\x00b"},
	} {
		e, err := transfer.Open(cfg)
		if err == nil {
			e.Close()
			t.Errorf("%s: opened", name)
			continue
		}
		isCode(t, err, transfer.ErrInvalidArgument, name)
	}
}

// testMetadataForms: the etcd and Redis metadata forms are refused with
// ErrNotImplemented by a backend built without them (upstream aborts the
// process on one); the embedded engine has them all (its metadata are
// names). A native backend that has them is tested against live servers
// (docs/ha.md).
func testMetadataForms(t *testing.T, env *Env) {
	caps := mooncake.Backend().Capabilities
	for _, tc := range []struct {
		name, metadata string
		has            bool
	}{
		{"etcd", "etcd://127.0.0.1:2379", caps.MetadataEtcd},
		{"etcd endpoints", "127.0.0.1:2379;127.0.0.1:2380", caps.MetadataEtcd},
		{"redis", "redis://127.0.0.1:6379", caps.MetadataRedis},
		{"http", "http://127.0.0.1:8080/metadata", caps.MetadataHTTP},
	} {
		if tc.has && env.Native {
			continue
		}
		e, err := transfer.Open(transfer.Config{MetadataServer: tc.metadata, LocalServerName: env.Name(), Protocol: env.Protocol})
		if tc.has {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			} else if err := e.Close(); err != nil {
				t.Errorf("%s: Close: %v", tc.name, err)
			}
			continue
		}
		if e != nil {
			_ = e.Close()
		}
		isCode(t, err, transfer.ErrNotImplemented, tc.name)
	}
}

func testRegistration(t *testing.T, env *Env) {
	e := env.Open(t)
	m := Memory(t, nil, 1<<20)
	a := m.Addr()
	isCode(t, e.RegisterBuffer(a, 0), transfer.ErrInvalidArgument, "zero length")
	must(t, e.RegisterBuffer(a, 4096), "register")
	isCode(t, e.RegisterBuffer(a, 4096), transfer.ErrAddressOverlapped, "registered twice")
	isCode(t, e.RegisterBuffer(a+100, 10), transfer.ErrAddressOverlapped, "inside a region")
	isCode(t, e.UnregisterBuffer(a+1), transfer.ErrAddressNotRegistered, "not a region start")
	must(t, e.UnregisterBuffer(a), "unregister")
	// Batches are all or nothing.
	isCode(t, e.RegisterBuffers([]uintptr{a, a + 8192, a + 8192 + 100}, []uint64{4096, 4096, 4096}), transfer.ErrAddressOverlapped, "overlapping batch")
	isCode(t, e.UnregisterBuffer(a), transfer.ErrAddressNotRegistered, "nothing of a refused batch stays")
	must(t, e.RegisterBuffers([]uintptr{a, a + 8192}, []uint64{4096, 4096}), "register batch")
	isCode(t, e.UnregisterBuffers([]uintptr{a, a + 1}), transfer.ErrAddressNotRegistered, "unregister batch with a bad address")
	must(t, e.UnregisterBuffers([]uintptr{a, a + 8192}), "unregister batch")
	isCode(t, e.RegisterBuffers([]uintptr{a}, nil), transfer.ErrInvalidArgument, "addresses without sizes")
	// Registered memory cannot be freed under the engine.
	own, err := hostmem.Alloc(1<<16, hostmem.Options{})
	must(t, err, "alloc")
	must(t, e.RegisterMemory(own), "register memory")
	if !errors.Is(own.Free(), hostmem.ErrRegistered) {
		t.Error("registered memory was freed")
	}
	must(t, e.UnregisterMemory(own), "unregister memory")
	isCode(t, e.UnregisterMemory(own), transfer.ErrInvalidArgument, "unregistered twice")
	must(t, own.Free(), "free after unregister")
	isCode(t, e.RegisterMemory(own), transfer.ErrInvalidArgument, "freed memory")
}

func testSegments(t *testing.T, env *Env) {
	a, b := env.Open(t), env.Open(t)
	m := Memory(t, nil, 1<<20)
	must(t, b.RegisterBuffer(m.Addr()+65536, 1000), "register")
	must(t, b.RegisterBuffer(m.Addr(), 2000), "register")
	_, err := a.OpenSegment("")
	isCode(t, err, transfer.ErrInvalidArgument, "empty name")
	_, err = a.OpenSegment("127.0.0.1:1")
	isCode(t, err, transfer.ErrMetadata, "unknown segment")
	seg, err := a.OpenSegment("/" + b.SegmentName())
	must(t, err, "open with a leading /")
	if seg.Name() != b.SegmentName() {
		t.Errorf("segment name %q, want %q", seg.Name(), b.SegmentName())
	}
	bufs, err := seg.Buffers(nil)
	must(t, err, "buffers")
	want := []transfer.Buffer{{Addr: uint64(m.Addr()) + 65536, Size: 1000}, {Addr: uint64(m.Addr()), Size: 2000}}
	if !hasBuffers(bufs, want) {
		t.Errorf("buffers %v, want %v (in registration order)", bufs, want)
	}
	// A snapshot until refreshed.
	must(t, b.RegisterBuffer(m.Addr()+131072, 3000), "register a third")
	bufs, err = seg.Refresh(bufs[:0])
	must(t, err, "refresh")
	if !hasBuffers(bufs, append(want, transfer.Buffer{Addr: uint64(m.Addr()) + 131072, Size: 3000})) {
		t.Errorf("after refresh: %v", bufs)
	}
	// An engine opens its own segment by its own name.
	self, err := a.OpenSegment(a.SegmentName())
	must(t, err, "own segment")
	must(t, self.Close(), "close own")
	// A closed segment's ID is refused.
	must(t, seg.Close(), "close")
	isCode(t, seg.Close(), transfer.ErrInvalidHandle, "closed twice")
	ma := Memory(t, a, 4096)
	_, err = a.Transfer(ctx(t), []transfer.Request{{Dir: transfer.Write, Segment: seg.Handle(), Local: ma.Addr(), Remote: uint64(m.Addr()), Length: 10}})
	isCode(t, err, transfer.ErrInvalidHandle, "a closed segment in a request")
}

// hasBuffers reports whether got begins with want (upstream's TCP transport
// may list more buffers of the engine than the test registered).
func hasBuffers(got, want []transfer.Buffer) bool {
	found := 0
	for _, w := range want {
		for _, g := range got {
			if g == w {
				found++
				break
			}
		}
	}
	if found != len(want) {
		return false
	}
	// Registration order among the wanted ones.
	last := -1
	for _, w := range want {
		for i, g := range got {
			if g == w {
				if i < last {
					return false
				}
				last = i
			}
		}
	}
	return true
}

func testWriteThenRead(t *testing.T, env *Env) {
	p := newPair(t, env, 4<<20)
	fill.Fill(p.ma.Bytes()[:1<<20], 42)
	reqs := []transfer.Request{
		p.req(transfer.Write, 0, 0, 4096),
		p.req(transfer.Write, 4096, 1<<20, 1<<20-4096),
	}
	sum, err := p.a.Transfer(ctx(t), reqs)
	must(t, err, "write")
	if sum.State != transfer.Completed || sum.Tasks != 2 || sum.Bytes != 1<<20 {
		t.Errorf("summary %+v", sum)
	}
	if !bytes.Equal(p.mb.Bytes()[:4096], p.ma.Bytes()[:4096]) ||
		!bytes.Equal(p.mb.Bytes()[1<<20:2<<20-4096], p.ma.Bytes()[4096:1<<20]) {
		t.Fatal("written bytes differ")
	}
	// Read back into the other half of local memory.
	must(t, p.a.Read(ctx(t), p.seg, p.ma.Addr()+2<<20, uint64(p.mb.Addr())+1<<20, 1<<20-4096), "read")
	if !bytes.Equal(p.ma.Bytes()[2<<20:3<<20-4096], p.ma.Bytes()[4096:1<<20]) {
		t.Fatal("read bytes differ")
	}
	must(t, p.a.Write(ctx(t), p.seg, p.ma.Addr(), uint64(p.mb.Addr())+3<<20, 100), "write one")
	// The peer's own view: it reads what a wrote, from its own segment.
	self, err := p.b.OpenSegment(p.b.SegmentName())
	must(t, err, "own segment")
	back := make([]byte, 100)
	must(t, p.b.Read(ctx(t), self, p.mb.Addr()+2<<20, uint64(p.mb.Addr())+3<<20, 100), "read own segment")
	copy(back, p.mb.Bytes()[2<<20:])
	if !bytes.Equal(back, p.ma.Bytes()[:100]) {
		t.Error("own-segment read differs")
	}
}

func testSubmitRefusals(t *testing.T, env *Env) {
	p := newPair(t, env, 1<<20)
	b, err := p.a.NewBatch(2)
	must(t, err, "batch")
	defer b.Free()
	unreg := Memory(t, nil, 4096)
	ok := p.req(transfer.Write, 0, 0, 100)
	for _, c := range []struct {
		name string
		r    transfer.Request
		code transfer.ErrorCode
	}{
		{"opcode", transfer.Request{Dir: 9, Segment: ok.Segment, Local: ok.Local, Remote: ok.Remote, Length: 100}, transfer.ErrInvalidArgument},
		{"zero length", transfer.Request{Dir: transfer.Write, Segment: ok.Segment, Local: ok.Local, Remote: ok.Remote}, transfer.ErrInvalidArgument},
		{"null local", transfer.Request{Dir: transfer.Write, Segment: ok.Segment, Remote: ok.Remote, Length: 1}, transfer.ErrInvalidArgument},
		{"no segment", transfer.Request{Dir: transfer.Write, Local: ok.Local, Remote: ok.Remote, Length: 1}, transfer.ErrInvalidArgument},
		{"local wraps", transfer.Request{Dir: transfer.Write, Segment: ok.Segment, Local: ^uintptr(0) - 10, Remote: ok.Remote, Length: 100}, transfer.ErrInvalidArgument},
		{"remote wraps", transfer.Request{Dir: transfer.Write, Segment: ok.Segment, Local: ok.Local, Remote: ^uint64(0) - 10, Length: 100}, transfer.ErrInvalidArgument},
		{"foreign segment id", transfer.Request{Dir: transfer.Write, Segment: ok.Segment + 1, Local: ok.Local, Remote: ok.Remote, Length: 100}, transfer.ErrInvalidHandle},
		{"local not registered", transfer.Request{Dir: transfer.Write, Segment: ok.Segment, Local: unreg.Addr(), Remote: ok.Remote, Length: 100}, transfer.ErrAddressNotRegistered},
		{"local past its region", p.req(transfer.Write, 1<<20-50, 0, 100), transfer.ErrAddressNotRegistered},
	} {
		isCode(t, b.Submit([]transfer.Request{ok, c.r}), c.code, c.name)
	}
	sum, err := b.Status(nil)
	must(t, err, "status")
	if sum.Tasks != 0 || sum.State != transfer.Completed {
		t.Errorf("refused submits added tasks: %+v", sum)
	}
	must(t, b.Submit(nil), "an empty submit is a no-op")
	isCode(t, b.Submit([]transfer.Request{ok, ok, ok}), transfer.ErrTooManyRequests, "past the capacity")
	must(t, b.Submit([]transfer.Request{ok}), "one")
	must(t, b.Submit([]transfer.Request{ok}), "two")
	isCode(t, b.Submit([]transfer.Request{ok}), transfer.ErrTooManyRequests, "capacity counts over the batch's life")
	_, err = b.Wait(ctx(t))
	must(t, err, "wait")
	_, err = p.a.NewBatch(transfer.MaxBatch + 1)
	isCode(t, err, transfer.ErrInvalidArgument, "capacity too large")
	sum, err = p.a.Transfer(ctx(t), nil)
	if err != nil || sum.State != transfer.Completed {
		t.Errorf("empty Transfer: %+v %v", sum, err)
	}
}

func testRemoteOutsidePeerMemoryFails(t *testing.T, env *Env) {
	p := newPair(t, env, 1<<20)
	b, err := p.a.NewBatch(3)
	must(t, err, "batch")
	defer b.Free()
	must(t, b.Submit([]transfer.Request{
		p.req(transfer.Write, 0, 0, 4096),
		p.req(transfer.Write, 0, 1<<20-100, 200), // past the end of the peer's region
		p.req(transfer.Write, 0, 2<<20, 10),      // not registered by the peer
	}), "submit")
	sum, err := b.Wait(ctx(t))
	if !errors.Is(err, transfer.ErrTaskFailed) {
		t.Fatalf("wait: %v, want ErrTaskFailed", err)
	}
	st := make([]transfer.RequestStatus, 3)
	sum, err = b.Status(st)
	must(t, err, "status")
	if sum.State != transfer.Failed || st[0].State != transfer.Completed || st[0].Bytes != 4096 ||
		st[1].State != transfer.Failed || st[1].Bytes != 0 || st[2].State != transfer.Failed {
		t.Errorf("summary %+v, tasks %+v", sum, st)
	}
}

func testNotifications(t *testing.T, env *Env) {
	p := newPair(t, env, 1<<20)
	n := transfer.Notification{Name: "prefill", Message: "128 pages ✓"}
	sum, err := p.a.TransferNotify(ctx(t), []transfer.Request{p.req(transfer.Write, 0, 0, 4096)}, n)
	must(t, err, "transfer with a notification")
	if sum.Notify != transfer.NotifySent {
		t.Errorf("notify state %v", sum.Notify)
	}
	got := receive(t, p.b, 1)
	if got[0] != n {
		t.Errorf("received %+v, want %+v", got[0], n)
	}
	// A failed batch sends none.
	sum, err = p.a.TransferNotify(ctx(t), []transfer.Request{p.req(transfer.Write, 0, 2<<20, 4096)}, transfer.Notification{Name: "never"})
	if !errors.Is(err, transfer.ErrTaskFailed) || sum.Notify != transfer.NotifyDropped {
		t.Errorf("failed batch: %v, notify %v", err, sum.Notify)
	}
	// Direct notifications, by segment and by name, arrive in order.
	must(t, p.a.Notify(p.seg, transfer.Notification{Name: "1", Message: "first"}), "notify")
	must(t, p.a.NotifyPeer(p.b.SegmentName(), transfer.Notification{Name: "2", Message: "second"}), "notify peer")
	got = receive(t, p.b, 2)
	if got[0].Message != "first" || got[1].Message != "second" {
		t.Errorf("received %+v", got)
	}
	isCode(t, p.a.NotifyPeer("127.0.0.1:1", transfer.Notification{Name: "x"}), transfer.ErrMetadata, "unknown peer")
	isCode(t, p.a.Notify(p.seg, transfer.Notification{Name: "\xff"}), transfer.ErrInvalidArgument, "invalid UTF-8")
	big := string(make([]byte, transfer.NotifyMaxBytes+1))
	isCode(t, p.a.Notify(p.seg, transfer.Notification{Message: big}), transfer.ErrInvalidArgument, "too large")
	rest, err := p.b.Notifications(nil)
	must(t, err, "notifications")
	if len(rest) != 0 {
		t.Errorf("unexpected notifications %+v", rest)
	}
}

// receive waits (a notification travels asynchronously upstream) for n
// notifications.
func receive(t *testing.T, e *transfer.Engine, n int) []transfer.Notification {
	t.Helper()
	var got []transfer.Notification
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < n && time.Now().Before(deadline) {
		var err error
		got, err = e.Notifications(got)
		must(t, err, "notifications")
		if len(got) < n {
			time.Sleep(time.Millisecond)
		}
	}
	if len(got) != n {
		t.Fatalf("received %d notifications, want %d: %+v", len(got), n, got)
	}
	return got
}

func testBatchLifecycle(t *testing.T, env *Env) {
	p := newPair(t, env, 8<<20)
	b, err := p.a.NewBatch(1)
	must(t, err, "batch")
	must(t, b.Submit([]transfer.Request{p.req(transfer.Write, 0, 0, 8<<20)}), "submit")
	if sum, _ := b.Status(nil); sum.InFlight > 0 {
		isCode(t, b.Free(), transfer.ErrBatchBusy, "free while in flight")
	}
	_, err = b.Wait(ctx(t))
	must(t, err, "wait")
	must(t, b.Free(), "free")
	if err := b.Free(); !errors.Is(err, transfer.ErrBatchFreed) {
		t.Errorf("free twice: %v", err)
	}
	if _, err := b.Status(nil); !errors.Is(err, transfer.ErrBatchFreed) {
		t.Errorf("status of a freed batch: %v", err)
	}
	empty, err := p.a.NewBatch(0)
	must(t, err, "empty batch")
	sum, err := empty.Wait(ctx(t))
	if err != nil || sum.State != transfer.Completed || sum.Tasks != 0 {
		t.Errorf("empty batch: %+v %v", sum, err)
	}
	must(t, empty.Free(), "free the empty batch")
}

func testCancelledWait(t *testing.T, env *Env) {
	p := newPair(t, env, 32<<20)
	b, err := p.a.NewBatch(4)
	must(t, err, "batch")
	defer b.Free()
	reqs := []transfer.Request{
		p.req(transfer.Write, 0, 0, 8<<20), p.req(transfer.Write, 8<<20, 8<<20, 8<<20),
		p.req(transfer.Write, 16<<20, 16<<20, 8<<20), p.req(transfer.Write, 24<<20, 24<<20, 8<<20),
	}
	must(t, b.Submit(reqs), "submit")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	sum, err := b.Wait(cancelled)
	if sum.InFlight != 0 {
		t.Fatalf("Wait returned with %d tasks in flight", sum.InFlight)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("wait: %v, want context.Canceled", err)
	}
	// WaitOrLeave returns at once, saying whether tasks still run.
	b2, err := p.a.NewBatch(1)
	must(t, err, "batch")
	must(t, b2.Submit(reqs[:1]), "submit")
	_, err = b2.WaitOrLeave(cancelled)
	if err != nil && !errors.Is(err, transfer.ErrInFlight) && !errors.Is(err, context.Canceled) {
		t.Errorf("wait or leave: %v", err)
	}
	_, err = b2.Wait(ctx(t))
	must(t, err, "wait after leaving")
	must(t, b2.Free(), "free")
}

func testConcurrentTransfers(t *testing.T, env *Env) {
	p := newPair(t, env, 8<<20)
	fill.Fill(p.ma.Bytes(), 7)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			off := w << 20
			for i := 0; i < 20; i++ {
				if _, err := p.a.Transfer(context.Background(), []transfer.Request{p.req(transfer.Write, off, off, 1<<20)}); err != nil {
					errs <- fmt.Errorf("worker %d: %w", w, err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if !bytes.Equal(p.ma.Bytes(), p.mb.Bytes()) {
		t.Error("bytes differ")
	}
}

func testCloseDuringTransfers(t *testing.T, env *Env) {
	a, b := env.Open(t), env.Open(t)
	mb := Memory(t, b, 4<<20)
	ma, err := hostmem.Alloc(4<<20, hostmem.Options{})
	must(t, err, "alloc")
	must(t, a.RegisterMemory(ma), "register")
	seg, err := a.OpenSegment(b.SegmentName())
	must(t, err, "open")
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			<-start
			for i := 0; i < 50; i++ {
				_, err := a.Transfer(context.Background(), []transfer.Request{{Dir: transfer.Write, Segment: seg.Handle(),
					Local: ma.Addr() + uintptr(w<<20), Remote: uint64(mb.Addr()) + uint64(w<<20), Length: 1 << 20}})
				if errors.Is(err, transfer.ErrClosed) {
					return
				}
				if err != nil && !errors.Is(err, transfer.ErrInvalidHandle) {
					t.Errorf("worker %d: %v", w, err)
					return
				}
			}
		}(w)
	}
	close(start)
	time.Sleep(time.Millisecond)
	must(t, a.Close(), "close during transfers")
	wg.Wait()
	// Close ended the registration: the memory can go.
	must(t, ma.Free(), "free after close")
}
