//go:build cgo && !mooncake_native

package transfer_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
)

// These examples run on the embedded engine, where engines that share a
// metadata string meet in the process; against real Mooncake the two
// engines are two processes (or machines) and the metadata server is
// upstream's.

// engineWith opens an engine named name and registers mem with it.
func engineWith(name string, mem *hostmem.Memory) *transfer.Engine {
	e, err := transfer.Open(transfer.Config{MetadataServer: "http://example-te.invalid/metadata", LocalServerName: name})
	if err != nil {
		log.Fatal(err)
	}
	if err := e.RegisterMemory(mem); err != nil {
		log.Fatal(err)
	}
	return e
}

// Transfer is the synchronous form: it submits the requests as one batch,
// waits for them and frees the batch. A write moves bytes from this
// engine's registered memory into a peer's.
func ExampleEngine_Transfer() {
	local, _ := hostmem.Alloc(1<<20, hostmem.Options{})
	remote, _ := hostmem.Alloc(1<<20, hostmem.Options{})
	defer local.Free()
	defer remote.Free()
	prefill := engineWith("127.0.0.1:17101", local)
	defer prefill.Close() // before Free: Close ends the registration
	decode := engineWith("127.0.0.1:17102", remote)
	defer decode.Close()

	peer, err := prefill.OpenSegment(decode.SegmentName())
	if err != nil {
		log.Fatal(err)
	}
	bufs, err := peer.Buffers(nil) // what the peer registered
	if err != nil {
		log.Fatal(err)
	}
	copy(local.Bytes(), "layer 0 of page 7")
	reqs := []transfer.Request{{Dir: transfer.Write, Segment: peer.Handle(),
		Local: local.Addr(), Remote: bufs[0].Addr + 4096, Length: 17}}
	sum, err := prefill.Transfer(context.Background(), reqs)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sum.State, sum.Bytes, string(remote.Bytes()[4096:4096+17]))
	// Output:
	// completed 17 layer 0 of page 7
}

// A Batch is the asynchronous form: Submit returns at once, Status polls
// the whole batch in one call, and Wait never returns while a request may
// still touch the memory, even when ctx ends first (WaitOrLeave does).
func ExampleBatch_Wait() {
	local, _ := hostmem.Alloc(1<<20, hostmem.Options{})
	remote, _ := hostmem.Alloc(1<<20, hostmem.Options{})
	defer local.Free()
	defer remote.Free()
	a := engineWith("127.0.0.1:17111", local)
	defer a.Close()
	b := engineWith("127.0.0.1:17112", remote)
	defer b.Close()
	peer, err := a.OpenSegment(b.SegmentName())
	if err != nil {
		log.Fatal(err)
	}
	copy(remote.Bytes(), "written by the peer")

	batch, err := a.NewBatch(4)
	if err != nil {
		log.Fatal(err)
	}
	defer batch.Free()
	// Read the peer's first 19 bytes, in two requests.
	reqs := []transfer.Request{
		{Dir: transfer.Read, Segment: peer.Handle(), Local: local.Addr(), Remote: uint64(remote.Addr()), Length: 10},
		{Dir: transfer.Read, Segment: peer.Handle(), Local: local.Addr() + 10, Remote: uint64(remote.Addr()) + 10, Length: 9},
	}
	if err := batch.Submit(reqs); err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sum, err := batch.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	tasks := make([]transfer.RequestStatus, 2)
	if _, err := batch.Status(tasks); err != nil {
		log.Fatal(err)
	}
	fmt.Println(sum.Tasks, sum.Bytes, tasks[0].State, tasks[1].Bytes, string(local.Bytes()[:19]))
	// Output:
	// 2 19 completed 9 written by the peer
}
