//go:build cgo

package interop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

// peer is the Python side (scripts/interop_peer.py), driven over a pipe.
type peer struct {
	t   *testing.T
	cmd *exec.Cmd
	in  *json.Encoder
	out *bufio.Scanner
}

func startPeer(t *testing.T) *peer {
	py, env := mooncaketest.Python(t)
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "scripts", "interop_peer.py")
	cmd := exec.Command(py, script)
	cmd.Env = env
	cmd.Stderr = &testLogWriter{t: t, prefix: "python: "}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &peer{t: t, cmd: cmd, in: json.NewEncoder(stdin), out: bufio.NewScanner(stdout)}
	p.out.Buffer(make([]byte, 1<<20), 1<<20)
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
	ready := p.reply()
	t.Logf("python peer ready: %v", ready)
	return p
}

func (p *peer) reply() map[string]any {
	p.t.Helper()
	if !p.out.Scan() {
		p.t.Fatalf("python peer exited: %v", p.out.Err())
	}
	var r map[string]any
	require.NoError(p.t, json.Unmarshal(p.out.Bytes(), &r), p.out.Text())
	if ok, _ := r["ok"].(bool); !ok {
		p.t.Fatalf("python peer: %v", r["error"])
	}
	return r
}

func (p *peer) do(op, prefix string) map[string]any {
	p.t.Helper()
	require.NoError(p.t, p.in.Encode(map[string]string{"op": op, "prefix": prefix}))
	return p.reply()
}

type testLogWriter struct {
	t      *testing.T
	prefix string
}

func (w *testLogWriter) Write(b []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		// upstream's INFO lines are noise here; keep warnings and errors
		if len(line) > 0 && line[0] == 'I' {
			continue
		}
		w.t.Log(w.prefix + line)
	}
	return len(b), nil
}

// goSide holds the Go client and its host pools.
type goSide struct {
	st       *mooncake.Store
	mem      *hostmem.Memory
	mla, mha *hostcache.HostPool
	mlaB     *hostcache.Backend
	mhaB     *hostcache.Backend
}

func newGoSide(t *testing.T) *goSide {
	st := mooncaketest.NewCluster(t).Open(t)
	g := &goSide{st: st}
	g.mem = mooncaketest.Memory(t, st, ZCObjects*ZCSize+MBObjects*MBBuffers*MBBufferLen)
	var err error
	g.mla, err = hostcache.NewMLAPool(hostcache.MLAConfig{
		Layers: MLALayers, LatentDim: MLALatent, DType: hostcache.BF16,
		PageSize: PageSize, Tokens: Pages * PageSize, Layout: hostcache.LayerFirst,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.mla.Close() })
	g.mha, err = hostcache.NewMHAPool(hostcache.MHAConfig{
		Layers: MHALayers, Heads: MHAHeads, HeadDim: MHAHeadD, DType: hostcache.BF16,
		PageSize: PageSize, Tokens: Pages * PageSize, Layout: hostcache.PageFirst,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.mha.Close() })
	g.mlaB, err = hostcache.NewBackend(st, hostcache.Options{TPSize: 1, PPSize: 1, RankReplicated: true})
	require.NoError(t, err)
	require.NoError(t, g.mlaB.RegisterPool(g.mla))
	t.Cleanup(func() { _ = g.mlaB.Close() })
	g.mhaB, err = hostcache.NewBackend(st, hostcache.Options{TPSize: 1, PPSize: 1})
	require.NoError(t, err)
	require.NoError(t, g.mhaB.RegisterPool(g.mha))
	t.Cleanup(func() { _ = g.mhaB.Close() })
	return g
}

// slots returns the flat host indices of pages whose first slots are
// first[j].
func slots(first []int64) []int64 {
	var idx []int64
	for _, f := range first {
		for t := int64(0); t < PageSize; t++ {
			idx = append(idx, f+t)
		}
	}
	return idx
}

// pageBytes returns the bytes of each page of pool at the given first slots,
// in meta order (the object's byte order), and a writer for them.
func pageObject(t *testing.T, pool *hostcache.HostPool, first int64) (get func() []byte, set func([]byte), entries int) {
	addrs, sizes, err := pool.AppendPageBufferMeta(nil, nil, slots([]int64{first}))
	require.NoError(t, err)
	view := func(a uintptr, n uint64) []byte {
		for _, b := range pool.Buffers() {
			if b.Contains(a, n) && b.Mem != nil {
				off := a - b.Addr
				return b.Mem[off : off+uintptr(n)]
			}
		}
		t.Fatalf("meta entry %#x+%d outside the pool", a, n)
		return nil
	}
	get = func() []byte {
		var out []byte
		for i := range addrs {
			out = append(out, view(addrs[i], sizes[i])...)
		}
		return out
	}
	set = func(b []byte) {
		for i := range addrs {
			n := copy(view(addrs[i], sizes[i]), b)
			b = b[n:]
		}
	}
	return get, set, len(addrs)
}

func (g *goSide) verify(t *testing.T, prefix string) {
	for i, n := range CopySizes {
		k := CopyKey(prefix, i)
		got, err := g.st.Get(k)
		require.NoError(t, err)
		require.True(t, bytes.Equal(Object(k, n), got), "bytes of %s", k)
	}
	buf := g.mem.Bytes()
	clear(buf)
	var keys []string
	var addrs []uintptr
	var sizes []uint64
	for i := 0; i < ZCObjects; i++ {
		keys = append(keys, ZCKey(prefix, i))
		addrs = append(addrs, g.mem.Addr()+uintptr(i*ZCSize))
		sizes = append(sizes, ZCSize)
	}
	res, err := g.st.Raw().BatchGetInto(keys, addrs, sizes, nil)
	require.NoError(t, err)
	for i, k := range keys {
		require.EqualValues(t, ZCSize, res[i], k)
		require.True(t, bytes.Equal(Object(k, ZCSize), buf[i*ZCSize:(i+1)*ZCSize]), "bytes of %s", k)
	}
	keys, addrs, sizes = nil, nil, nil
	offsets := []uint64{0}
	mb := ZCObjects * ZCSize
	for i := 0; i < MBObjects; i++ {
		keys = append(keys, MBKey(prefix, i))
		for b := 0; b < MBBuffers; b++ { // buffer b of key i, interleaved
			addrs = append(addrs, g.mem.Addr()+uintptr(mb+(b*MBObjects+i)*MBBufferLen))
			sizes = append(sizes, MBBufferLen)
		}
		offsets = append(offsets, uint64(len(addrs)))
	}
	res, err = g.st.Raw().BatchGetIntoMultiBuffers(keys, addrs, sizes, offsets, nil)
	require.NoError(t, err)
	for i, k := range keys {
		require.EqualValues(t, MBBuffers*MBBufferLen, res[i], k)
		var got []byte
		for b := 0; b < MBBuffers; b++ {
			off := mb + (b*MBObjects+i)*MBBufferLen
			got = append(got, buf[off:off+MBBufferLen]...)
		}
		require.True(t, bytes.Equal(Object(k, MBBuffers*MBBufferLen), got), "bytes of %s", k)
	}

	prior, tokens := Tokens(prefix)
	hashes, err := hostcache.PageHashes(prior, tokens, PageSize)
	require.NoError(t, err)
	// Read the pages into other slots than the writer used.
	for _, tc := range []struct {
		name  string
		b     *hostcache.Backend
		pool  *hostcache.HostPool
		keys  func(h string) []string
		first func(j int) int64
	}{
		{"MLA layer_first", g.mlaB, g.mla, func(h string) []string { return []string{h + "__k"} },
			func(j int) int64 { return int64((Pages - j) * PageSize) }},
		{"MHA page_first", g.mhaB, g.mha, func(h string) []string { return []string{h + "_0_k", h + "_0_v"} },
			func(j int) int64 { return int64((Pages - 1 - j) * PageSize) }},
	} {
		for _, b := range tc.pool.Buffers() {
			clear(b.Mem)
		}
		var first []int64
		for j := range hashes {
			first = append(first, tc.first(j))
		}
		ok, err := tc.b.BatchGetV1(hashes, slots(first), nil)
		require.NoError(t, err, tc.name)
		require.Equal(t, []bool{true, true, true, true}, ok, tc.name)
		for j, h := range hashes {
			get, _, entries := pageObject(t, tc.pool, first[j])
			page := get()
			objKeys := tc.keys(h)
			per := len(page) / len(objKeys)
			for c, k := range objKeys {
				require.True(t, bytes.Equal(Object(k, per), page[c*per:(c+1)*per]), "%s page %d object %s (%d meta entries)", tc.name, j, k, entries)
			}
		}
	}
}

func (g *goSide) write(t *testing.T, prefix string) {
	for i, n := range CopySizes {
		k := CopyKey(prefix, i)
		require.NoError(t, g.st.Put(k, Object(k, n)))
	}
	buf := g.mem.Bytes()
	var keys []string
	var addrs []uintptr
	var sizes []uint64
	for i := 0; i < ZCObjects; i++ {
		k := ZCKey(prefix, i)
		copy(buf[i*ZCSize:], Object(k, ZCSize))
		keys = append(keys, k)
		addrs = append(addrs, g.mem.Addr()+uintptr(i*ZCSize))
		sizes = append(sizes, ZCSize)
	}
	res, err := g.st.Raw().BatchPutFrom(keys, addrs, sizes, nil)
	require.NoError(t, err, "every key stored")
	require.Equal(t, make([]int64, len(keys)), res)
	keys, addrs, sizes = nil, nil, nil
	offsets := []uint64{0}
	mb := ZCObjects * ZCSize
	for i := 0; i < MBObjects; i++ {
		k := MBKey(prefix, i)
		data := Object(k, MBBuffers*MBBufferLen)
		keys = append(keys, k)
		for b := 0; b < MBBuffers; b++ {
			off := mb + (b*MBObjects+i)*MBBufferLen
			copy(buf[off:off+MBBufferLen], data[b*MBBufferLen:])
			addrs = append(addrs, g.mem.Addr()+uintptr(off))
			sizes = append(sizes, MBBufferLen)
		}
		offsets = append(offsets, uint64(len(addrs)))
	}
	res, err = g.st.Raw().BatchPutFromMultiBuffers(keys, addrs, sizes, offsets, nil)
	require.NoError(t, err, "every key stored")
	require.Equal(t, make([]int64, len(keys)), res)

	prior, tokens := Tokens(prefix)
	hashes, err := hostcache.PageHashes(prior, tokens, PageSize)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		b    *hostcache.Backend
		pool *hostcache.HostPool
		keys func(h string) []string
	}{
		{"MLA layer_first", g.mlaB, g.mla, func(h string) []string { return []string{h + "__k"} }},
		{"MHA page_first", g.mhaB, g.mha, func(h string) []string { return []string{h + "_0_k", h + "_0_v"} }},
	} {
		var first []int64
		for j, h := range hashes {
			first = append(first, int64((j+1)*PageSize))
			get, set, _ := pageObject(t, tc.pool, first[j])
			n := len(get())
			var page []byte
			for _, k := range tc.keys(h) {
				page = append(page, Object(k, n/len(tc.keys(h)))...)
			}
			set(page)
		}
		ok, err := tc.b.BatchSetV1(hashes, slots(first), nil)
		require.NoError(t, err, tc.name)
		require.Equal(t, []bool{true, true, true, true}, ok, tc.name)
	}
}

// TestPythonInterop: Python writes, Go reads; Go writes, Python reads.
func TestPythonInterop(t *testing.T) {
	mooncaketest.RequireNative(t)
	p := startPeer(t)
	g := newGoSide(t)
	run := fmt.Sprintf("mcgo-interop/%d", time.Now().UnixNano())

	fromPython := run + "/py"
	t.Logf("python wrote: %v", p.do("write", fromPython))
	g.verify(t, fromPython)
	t.Logf("go verified every byte of the python objects under %s", fromPython)

	fromGo := run + "/go"
	g.write(t, fromGo)
	t.Logf("python verified: %v", p.do("verify", fromGo))
}
