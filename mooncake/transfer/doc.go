// Package transfer is the Go binding of Mooncake's transfer engine: it
// registers local memory, opens other engines' segments by name, and moves
// bytes with batched one-sided reads and writes (RDMA or TCP), with small
// notifications between engines. It is what moves every byte under the
// store, and what prefill/decode disaggregation uses directly: a prefill
// node writes KV pages straight into a decode node's host pool.
//
//	e, err := transfer.Open(transfer.Config{
//		MetadataServer:  "http://127.0.0.1:8080/metadata",
//		LocalServerName: "127.0.0.1:17001",
//	})
//	defer e.Close()
//	mem, _ := hostmem.Alloc(1<<30, hostmem.Options{})
//	_ = e.RegisterMemory(mem)
//
//	peer, err := e.OpenSegment("127.0.0.1:17002")
//	bufs, _ := peer.Buffers(nil) // what the peer registered
//	reqs := []transfer.Request{{Dir: transfer.Write, Segment: peer.Handle(),
//		Local: mem.Addr(), Remote: bufs[0].Addr, Length: 4096}}
//	_, err = e.TransferNotify(ctx, reqs, transfer.Notification{Name: "pages", Message: "done"})
//
// Each Submit and each poll of a whole batch is one cgo call; requests
// cross as they are ([]Request has the C layout), and a steady stream of
// Transfer calls allocates nothing. Handles are validated on the C side: a
// closed segment or a freed batch is an error (ErrInvalidHandle), never
// undefined behaviour.
//
// The engine cannot cancel a transfer: Wait never returns while a transfer
// may still read or write the caller's memory (see Wait and WaitOrLeave).
//
// Errors are *Error values whose Code keeps the engine's code: upstream's
// ERR_* values, with its Status codes mapped to the ERR_* of the same name.
//
// Backends: the default build links an embedded, in-process engine with
// upstream's semantics (engines meet through their metadata string, copies
// run on worker threads); a process that loads libmcgo_native.so
// (MCGO_NATIVE_LIBRARY, Config.NativeLibrary, mooncake.LoadNative) runs on
// upstream's engine, as does a program built with -tags mooncake_native.
// Both refuse a local range outside registered memory at submit (as
// upstream's RDMA transport does; its TCP transport alone would not check).
package transfer
