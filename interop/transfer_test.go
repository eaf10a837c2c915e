//go:build cgo

package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer/transfertest"
)

// tePattern is the bytes of scripts/interop_te_peer.py's pattern(seed) at
// offsets off..off+n.
func tePattern(seed uint64, off, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		o := uint64(off + i)
		b[i] = byte(seed*31 + o*7 + o/251)
	}
	return b
}

type tePeer struct {
	t   *testing.T
	in  *json.Encoder
	out *bufio.Scanner
}

func (p *tePeer) do(req map[string]any) map[string]any {
	p.t.Helper()
	require.NoError(p.t, p.in.Encode(req))
	if !p.out.Scan() {
		p.t.Fatalf("python transfer engine exited: %v", p.out.Err())
	}
	var r map[string]any
	require.NoError(p.t, json.Unmarshal(p.out.Bytes(), &r), p.out.Text())
	if ok, _ := r["ok"].(bool); !ok {
		p.t.Fatalf("python transfer engine: %v (request %v)", r["error"], req)
	}
	return r
}

// TestTransferEngineInterop: Go's engine and upstream's Python
// TransferEngine (mooncake.engine) write into and read from each other's
// registered memory, byte for byte, and a notification crosses.
func TestTransferEngineInterop(t *testing.T) {
	mooncaketest.RequireNative(t)
	py, env := mooncaketest.Python(t)
	probe := exec.Command(py, "-c", "import mooncake.engine")
	probe.Env = env
	if out, err := probe.CombinedOutput(); err != nil {
		t.Fatalf("mooncake.engine is not importable although mooncake.store is: %v: %s", err, out)
	}
	tenv := transfertest.NewEnv(t)
	e := tenv.Open(t)
	mem := transfertest.Memory(t, e, 4<<20)

	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "scripts", "interop_te_peer.py")
	name := tenv.Name()
	cmd := exec.Command(py, script)
	cmd.Env = append(env, "MCGO_TE_PEER_NAME="+name, "MOONCAKE_TE_META_DATA_SERVER="+tenv.Metadata)
	cmd.Stderr = &testLogWriter{t: t, prefix: "python: "}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &tePeer{t: t, in: json.NewEncoder(stdin), out: bufio.NewScanner(stdout)}
	t.Cleanup(func() {
		_ = p.in.Encode(map[string]string{"op": "exit"})
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill() // by PID
			<-done
		}
	})
	if !p.out.Scan() {
		t.Fatalf("python transfer engine did not start: %v", p.out.Err())
	}
	var hello struct {
		OK      bool   `json:"ok"`
		Error   string `json:"error"`
		Segment string `json:"segment"`
		Addr    uint64 `json:"addr"`
		Size    int    `json:"size"`
	}
	require.NoError(t, json.Unmarshal(p.out.Bytes(), &hello), p.out.Text())
	require.True(t, hello.OK, hello.Error)

	seg, err := e.OpenSegment(hello.Segment)
	require.NoError(t, err, "open the Python engine's segment")
	bufs, err := seg.Buffers(nil)
	require.NoError(t, err)
	require.Contains(t, bufs, transfer.Buffer{Addr: hello.Addr, Size: uint64(hello.Size)}, "Go sees what Python registered")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const n = 1 << 20

	// Go reads what Python wrote into its own memory.
	p.do(map[string]any{"op": "fill", "seed": 3})
	require.NoError(t, e.Read(ctx, seg, mem.Addr(), hello.Addr, n))
	require.Equal(t, tePattern(3, 0, n), mem.Bytes()[:n], "Go read Python's bytes")

	// Go writes into Python's memory; Python checks.
	copy(mem.Bytes()[n:2*n], tePattern(5, n, n))
	_, err = e.TransferNotify(ctx, []transfer.Request{{Dir: transfer.Write, Segment: seg.Handle(), Local: mem.Addr() + n, Remote: hello.Addr + n, Length: n}},
		transfer.Notification{Name: "go", Message: "wrote 1 MiB"})
	require.NoError(t, err)
	p.do(map[string]any{"op": "check", "seed": 5, "off": n, "len": n})

	// Python writes into Go's memory and reads from it.
	p.do(map[string]any{"op": "fill", "seed": 9})
	p.do(map[string]any{"op": "write", "peer": e.SegmentName(), "addr": uint64(mem.Addr()) + 2*n, "off": 0, "len": n})
	require.Equal(t, tePattern(9, 0, n), mem.Bytes()[2*n:3*n], "Python wrote into Go's memory")
	copy(mem.Bytes()[3*n:4*n], tePattern(11, 3*n, n))
	p.do(map[string]any{"op": "read", "peer": e.SegmentName(), "addr": uint64(mem.Addr()) + 3*n, "off": 3 * n, "len": n})
	p.do(map[string]any{"op": "check", "seed": 11, "off": 3 * n, "len": n})

	// The notification of Go's batch reached Python.
	var got []any
	for deadline := time.Now().Add(10 * time.Second); len(got) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		got, _ = p.do(map[string]any{"op": "notifies"})["notifies"].([]any)
	}
	require.Equal(t, []any{map[string]any{"name": "go", "msg": "wrote 1 MiB"}}, got, "notifications received by Python")
	t.Logf("Go engine %s <-> Python engine %s: 4 x %d bytes verified, notification delivered", e.SegmentName(), hello.Segment, n)
}
