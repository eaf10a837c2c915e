//go:build cgo && !mooncake_native

package mooncake_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"
	"unsafe"

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// These examples run on the embedded engine: the master address only names
// an in-process cluster.
func exampleConfig(name string) mooncake.Config {
	return mooncake.Config{
		LocalHostname:       "127.0.0.1",
		MetadataServer:      "P2PHANDSHAKE",
		GlobalSegmentSize:   64 << 20,
		LocalBufferSize:     16 << 20,
		Protocol:            "tcp",
		MasterServerAddress: "example-" + name,
	}
}

func Example() {
	st, err := mooncake.Open(exampleConfig("basic"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	if err := st.Put("greeting", []byte("hello, mooncake")); err != nil {
		log.Fatal(err)
	}
	v, err := st.Get("greeting")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(v))

	_, err = st.Get("nobody-wrote-this")
	fmt.Println(errors.Is(err, mooncake.ErrObjectNotFound))
	fmt.Println(err)
	// Output:
	// hello, mooncake
	// true
	// mooncake: get "nobody-wrote-this": OBJECT_NOT_FOUND (-704)
}

// A layer-first KV page is one buffer per layer. BatchPutFrom with a CSR
// buffer list stores each page as one object (the concatenation of its
// buffers) in one call; BatchGetInto scatters it back.
func ExampleStore_BatchPutFrom() {
	const layers, pages, bufSize = 4, 2, 1024
	mem, err := hostmem.Alloc(uint64(2*layers*pages*bufSize), hostmem.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Free() // deferred first, so it runs after st.Close, which ends the registration
	st, err := mooncake.Open(exampleConfig("multi"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	if err := st.RegisterMemory(mem); err != nil {
		log.Fatal(err)
	}
	b := mem.Bytes()
	for i := range b[:layers*pages*bufSize] {
		b[i] = byte(i / bufSize) // each (layer, page) buffer has its own value
	}

	// CSR form: page p owns Addrs[Offsets[p]:Offsets[p+1]]. Layer l of
	// page p lives at (l*pages+p)*bufSize: a page is not contiguous.
	keys := hostmem.PackKeys("page-0", "page-1")
	src := hostmem.Buffers{Offsets: []uint64{0}}
	dst := hostmem.Buffers{Offsets: []uint64{0}}
	for p := 0; p < pages; p++ {
		for l := 0; l < layers; l++ {
			off := uintptr((l*pages + p) * bufSize)
			src.Addrs = append(src.Addrs, mem.Addr()+off)
			dst.Addrs = append(dst.Addrs, mem.Addr()+uintptr(layers*pages*bufSize)+off)
			src.Sizes = append(src.Sizes, bufSize)
		}
		src.Offsets = append(src.Offsets, uint64(len(src.Addrs)))
	}
	dst.Sizes, dst.Offsets = src.Sizes, src.Offsets

	results := make([]int64, keys.Len()) // reused: no allocation per call
	if _, err := st.BatchPutFrom(keys, src, results); err != nil {
		log.Fatal(err) // a *mooncake.BatchError names any key that failed
	}
	results, err = st.BatchGetInto(keys, dst, results)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("bytes read per page:", results)
	obj, _ := st.Get("page-1")
	fmt.Println("page-1 starts with layer values:", obj[0], obj[bufSize], obj[2*bufSize], obj[3*bufSize])
	// Output:
	// bytes read per page: [4096 4096]
	// page-1 starts with layer values: 1 3 5 7
}

// A batch in which some keys failed returns every key's result and a
// *BatchError naming the keys that failed, with their codes.
func ExampleBatchError() {
	mem, err := hostmem.Alloc(1<<16, hostmem.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Free() // runs after st.Close
	st, err := mooncake.Open(exampleConfig("batcherr"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	if err := st.RegisterMemory(mem); err != nil {
		log.Fatal(err)
	}
	page, _ := mem.Span(0, 4096)
	if err := st.PutFrom("present", page); err != nil {
		log.Fatal(err)
	}

	a := mem.Addr() + 4096
	res, err := st.BatchGetInto(hostmem.PackKeys("present", "absent"),
		hostmem.Buffers{Addrs: []uintptr{a, a + 4096}, Sizes: []uint64{4096, 4096}}, nil)
	fmt.Println("results:", res)
	fmt.Println("not found:", errors.Is(err, mooncake.ErrObjectNotFound))
	var be *mooncake.BatchError
	if errors.As(err, &be) {
		for _, f := range be.Failed {
			fmt.Printf("%s %q: %s\n", f.Op, f.Key, f.Code.String())
		}
	}
	// Output:
	// results: [4096 -704]
	// not found: true
	// batch_get_into "absent": OBJECT_NOT_FOUND
}

// The single zero-copy calls take spans of host memory, checked against
// their memory before the call; registered memory cannot be freed under
// the store.
func ExampleStore_PutFrom() {
	st, err := mooncake.Open(exampleConfig("typed"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	mem, err := hostmem.Alloc(1<<20, hostmem.Options{})
	if err != nil {
		log.Fatal(err)
	}
	if err := st.RegisterMemory(mem); err != nil {
		log.Fatal(err)
	}
	page, _ := mem.Span(0, 4096)
	copy(page.Bytes(), "hello, page")
	if err := st.PutFrom("one", page); err != nil {
		log.Fatal(err)
	}
	back, _ := mem.Span(4096, 4096)
	n, err := st.GetInto("one", back)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d bytes: %s\n", n, back.Bytes()[:11])
	fmt.Println("exists:", must(st.BatchIsExist(hostmem.PackKeys("one", "two"), nil)))
	fmt.Println("free while registered:", errors.Is(mem.Free(), hostmem.ErrRegistered))
	if err := st.UnregisterMemory(mem); err != nil {
		log.Fatal(err)
	}
	fmt.Println("free after unregister:", mem.Free())
	// Output:
	// 4096 bytes: hello, page
	// exists: [1 0]
	// free while registered: true
	// free after unregister: <nil>
}

// Raw takes upstream's Python shapes, []string keys and uintptr addresses,
// for porting code written against upstream's client and for memory no
// hostmem.Memory describes. Nothing checks the addresses.
func ExampleStore_Raw() {
	mem, err := hostmem.Alloc(1<<16, hostmem.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Free() // runs after st.Close
	st, err := mooncake.Open(exampleConfig("raw"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	if err := st.RegisterMemory(mem); err != nil {
		log.Fatal(err)
	}
	a := mem.Addr()
	copy(mem.Bytes(), "abcdefgh")
	raw := st.Raw()
	// batch_put_from(keys, ptrs, sizes), as in Python.
	if _, err := raw.BatchPutFrom([]string{"x", "y"}, []uintptr{a, a + 4}, []uint64{4, 4}, nil); err != nil {
		log.Fatal(err)
	}
	n, err := raw.GetInto("y", a+4096, 4096)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, string(mem.Bytes()[4096:4096+n]))
	// Output:
	// 4 efgh
}

func must(v []int64, err error) []int64 {
	if err != nil {
		log.Fatal(err)
	}
	return v
}

func ExampleConfigFromEnv() {
	// With MOONCAKE_MASTER=10.0.0.1:50051 and MOONCAKE_PROTOCOL=tcp set,
	// as SGLang deployments already do:
	cfg, err := mooncake.ConfigFromEnv()
	if err != nil {
		fmt.Println(err)
		return
	}
	st, err := mooncake.Open(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
}

func ExampleParseSize() {
	for _, s := range []string{"4gb", "512mb", "16777216"} {
		n, _ := mooncake.ParseSize(s)
		fmt.Println(s, uint64(n))
	}
	// Output:
	// 4gb 4294967296
	// 512mb 536870912
	// 16777216 16777216
}

// AppendGet reads through the copying path without allocating: one buffer,
// reused for every object that fits in it.
func ExampleStore_AppendGet() {
	st, err := mooncake.Open(exampleConfig("appendget"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	for _, k := range []string{"a", "bb", "ccc"} {
		if err := st.Put(k, []byte("value of "+k)); err != nil {
			log.Fatal(err)
		}
	}
	buf := make([]byte, 0, 4096)
	for _, k := range []string{"a", "bb", "ccc"} {
		buf, err = st.AppendGet(buf[:0], k)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %q\n", k, buf)
	}
	// Output:
	// a: "value of a"
	// bb: "value of bb"
	// ccc: "value of ccc"
}

// A request handler's deadline bounds a call's wait to be combined with
// others; a call that returns the context's error made no call at all.
func ExampleStore_PutContext() {
	st, err := mooncake.Open(exampleConfig("putcontext"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := st.PutContext(ctx, "session-42", []byte("kv page")); err != nil {
		log.Fatal(err)
	}
	v, err := st.GetContext(ctx, "session-42")
	fmt.Printf("%q %v\n", v, err)

	cancel() // ended before the call: nothing crosses
	err = st.PutContext(ctx, "session-43", []byte("late"))
	fmt.Println(errors.Is(err, context.Canceled))
	ok, _ := st.IsExist("session-43")
	fmt.Println(ok)
	// Output:
	// "kv page" <nil>
	// true
	// false
}

// A batch write bounded by a request's deadline: it waits in Go only for
// room in the store's batch-write budget, and leaves that wait, having
// stored nothing, when the context ends.
func ExampleStore_BatchPutFromContext() {
	mem, err := hostmem.Alloc(8192, hostmem.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Free()
	st, err := mooncake.Open(exampleConfig("batchcontext"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	if err := st.RegisterMemory(mem); err != nil {
		log.Fatal(err)
	}
	keys := hostmem.PackKeys("page-a", "page-b")
	bufs := hostmem.Buffers{Addrs: []uintptr{mem.Addr(), mem.Addr() + 4096}, Sizes: []uint64{4096, 4096}}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res, err := st.BatchPutFromContext(ctx, keys, bufs, nil)
	fmt.Println(res, err)

	cancel()
	res, err = st.BatchPutFromContext(ctx, hostmem.PackKeys("page-c"), hostmem.Buffers{Addrs: bufs.Addrs[:1], Sizes: bufs.Sizes[:1]}, nil)
	fmt.Println(res, errors.Is(err, context.Canceled))
	// Output:
	// [0 0] <nil>
	// [] true
}

// One object from several slices, copied once; and a copying batch.
func ExampleStore_PutParts() {
	st, err := mooncake.Open(exampleConfig("parts"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	header, body := []byte("v1:"), []byte("payload")
	if err := st.PutParts("record", header, body); err != nil {
		log.Fatal(err)
	}
	v, _ := st.Get("record")
	fmt.Println(string(v))

	err = st.PutBatch(hostmem.PackKeys("a", "b"), [][]byte{[]byte("first"), []byte("second")})
	fmt.Println(err)
	res, _ := st.BatchRemove(hostmem.PackKeys("a", "b", "c"), true, nil)
	fmt.Println(res)
	// Output:
	// v1:payload
	// <nil>
	// [0 0 -704]
}

// Stats counts every call; mooncakeprom exports the same numbers.
func ExampleStore_Stats() {
	st, err := mooncake.Open(exampleConfig("stats"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	_ = st.Put("k", make([]byte, 1000))
	for i := 0; i < 3; i++ {
		_, _ = st.Get("k")
	}
	_, _ = st.Get("missing")
	get := st.Stats().Op(mooncake.OpGet)
	fmt.Println(get.Calls, "calls,", get.Bytes, "bytes, errors:", get.Errors)
	fmt.Println(get.Latency.Count == get.Calls, get.Latency.Quantile(0.99) > 0)
	// Output:
	// 4 calls, 3000 bytes, errors: map[OBJECT_NOT_FOUND (-704):1]
	// true true
}

// A storage node grows and shrinks: it opens without a segment, contributes
// memory while it runs, and takes it back, gracefully, so that readers have
// a moment to finish.
func ExampleStore_AllocateAndMountSegment() {
	cfg := exampleConfig("segments")
	cfg.GlobalSegmentSize = 0 // contributes nothing at Open
	node, err := mooncake.Open(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer node.Close()
	host, _ := node.Hostname()

	ids, size, err := node.AllocateAndMountSegment(100<<20, mooncake.MountOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(ids), "segment of", size>>20, "MiB") // rounded up to whole 16 MiB slabs

	onNode := node.WithReplicateConfig(mooncake.ReplicateConfig{PreferredSegments: []string{host}})
	if err := onNode.Put("page-0", []byte("kv")); err != nil {
		log.Fatal(err)
	}
	if err := node.UnmountAndFreeSegments(ids, time.Second); err != nil {
		log.Fatal(err)
	}
	v, err := node.Get("page-0")
	fmt.Println(string(v), err) // still readable during the grace period
	time.Sleep(1100 * time.Millisecond)
	_, err = node.Get("page-0")
	fmt.Println(errors.Is(err, mooncake.ErrObjectNotFound))
	// Output:
	// 1 segment of 112 MiB
	// kv <nil>
	// true
}

// A put session fills an object piece by piece (a prefill writing each
// layer as it is computed) and makes it readable at End; a get session then
// reads only the pieces a reader needs, for one lookup.
func ExampleStore_StartPutSession() {
	st, err := mooncake.Open(exampleConfig("sessions"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	mem, err := hostmem.Alloc(8192, hostmem.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Free()
	if err := st.RegisterMemory(mem); err != nil {
		log.Fatal(err)
	}
	defer st.UnregisterMemory(mem)
	copy(mem.Bytes(), "layer0..layer1..")

	ps, _, err := st.StartPutSession(hostmem.PackKeys("page"), []uint64{16}, nil)
	if err != nil {
		log.Fatal(err)
	}
	for layer := uint64(0); layer < 2; layer++ { // one range write per layer
		r := []mooncake.KeyRanges{{Key: "page", Ranges: []mooncake.Range{{Addr: mem.Addr() + uintptr(8*layer), Offset: 8 * layer, Size: 8}}}}
		if _, err := ps.WriteRanges(r, nil); err != nil {
			log.Fatal(err)
		}
	}
	res, err := ps.End(nil)
	fmt.Println(res, err)

	gs, _, err := st.StartGetSession(hostmem.PackKeys("page"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer gs.End()
	out := mem.Bytes()[4096:]
	n, err := gs.ReadRanges([]mooncake.KeyRanges{{Key: "page", Ranges: []mooncake.Range{{Addr: mem.Addr() + 4096, Offset: 8, Size: 8}}}}, nil)
	fmt.Println(n, err, string(out[:8]))
	// Output:
	// [0] <nil>
	// [8] <nil> layer1..
}

// A copy task adds a replica of an object on another client's segment; the
// client holding the source does it, and WaitTask follows the task.
func ExampleStore_CreateCopyTask() {
	a, err := mooncake.Open(exampleConfig("tasks"))
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	b, err := mooncake.Open(exampleConfig("tasks"))
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	ha, _ := a.Hostname()
	hb, _ := b.Hostname()
	if err := a.WithReplicateConfig(mooncake.ReplicateConfig{PreferredSegments: []string{ha}}).Put("hot", []byte("v")); err != nil {
		log.Fatal(err)
	}

	id, err := a.CreateCopyTask("hot", []string{hb})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	info, err := a.WaitTask(ctx, id, 0)
	fmt.Println(info.Type, info.Status, err)
	reps, _ := a.GetReplicaDesc("hot")
	fmt.Println(len(reps), "replicas")
	// Output:
	// copy succeeded <nil>
	// 2 replicas
}

// A dummy client: the bytes live in shared memory the real client maps, so
// a zero-copy put through the dummy copies nothing in this process. In
// production the real client is upstream's mooncake_client on this host
// (ServerAddress "127.0.0.1:50052"); with the embedded engine it is a store
// of this process, named by its hostname.
func ExampleOpenDummy() {
	real, err := mooncake.Open(exampleConfig("dummy"))
	if err != nil {
		log.Fatal(err)
	}
	defer real.Close()
	addr, _ := real.Hostname()

	d, err := mooncake.OpenDummy(mooncake.DummyConfig{ServerAddress: addr, LocalBufferSize: 16 << 20})
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	page, err := d.AllocFromMemPool(4096) // valid until d.Close
	if err != nil {
		log.Fatal(err)
	}
	if err := d.RegisterBuffer(uintptr(unsafe.Pointer(&page[0])), uint64(len(page))); err != nil {
		log.Fatal(err)
	}
	copy(page, "layer-0 kv")
	if err := d.Raw().PutFrom("page-0", uintptr(unsafe.Pointer(&page[0])), uint64(len(page))); err != nil {
		log.Fatal(err)
	}
	v, err := real.Get("page-0") // the real client holds what its dummy put
	fmt.Println(string(v[:10]), len(v), err)
	_, err = d.BatchReplicaClear(hostmem.PackKeys("page-0"), "", nil)
	fmt.Println(errors.Is(err, mooncake.ErrNotSupported))
	// Output:
	// layer-0 kv 4096 <nil>
	// true
}
