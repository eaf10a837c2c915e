// Package mooncake is a Go client for the Mooncake KV-cache store
// (github.com/kvcache-ai/Mooncake): lifecycle, buffer registration, copying
// and zero-copy put/get, batch and multi-buffer I/O, existence, size and
// removal, with Mooncake's error codes kept in typed errors.
//
// # Engines
//
// The default build links an embedded, in-process engine with Mooncake's
// semantics (write-once puts, read leases, registration rules, capacity
// limits), so programs and tests build and run with nothing installed. Stores
// opened with the same MasterServerAddress share one in-process cluster. It
// is a development and test engine, not a distributed store.
//
// Built with -tags mooncake_native, the same API runs over upstream
// Mooncake's client (RDMA or TCP) through libmcgo_native; see the README
// (make native). Engine reports which one is linked. Native calls block on
// RPCs and on upstream's transfer threads; the native build yields the
// goroutine (runtime.Gosched) after each, which keeps the runtime's sysmon
// from retaking the P of a goroutine that loops over calls (see the README,
// "Fast paths").
//
// # Quick start
//
//	st, err := mooncake.Open(mooncake.Config{
//		LocalHostname:       "127.0.0.1",
//		MetadataServer:      "http://127.0.0.1:8080/metadata",
//		GlobalSegmentSize:   4 << 30,
//		LocalBufferSize:     16 << 20,
//		Protocol:            "tcp",
//		MasterServerAddress: "127.0.0.1:50051",
//	})
//	if err != nil { ... }
//	defer st.Close()
//
//	mem, _ := hostmem.Alloc(uint64(64<<20), hostmem.Options{})
//	defer mem.Free()
//	_ = st.RegisterMemory(mem)
//
//	// One page = 3 layer buffers, stored as one object in one call.
//	keys := []string{"page-0"}
//	addrs := []uintptr{mem.Addr(), mem.Addr() + 4096, mem.Addr() + 8192}
//	sizes := []uint64{4096, 4096, 4096}
//	offsets := []uint64{0, 3}
//	res, err := st.BatchPutFromMultiBuffers(keys, addrs, sizes, offsets, nil)
//	if err == nil {
//		err = mooncake.BatchResultError(mooncake.OpBatchPutFromMultiBuffers, keys, res)
//	}
//
// Configuration can also come from the JSON file and MOONCAKE_* variables
// operators already use (ConfigFromEnv, LoadConfigFile).
//
// # Errors
//
// Every method returns *Error, whose Code is Mooncake's ErrorCode:
//
//	if errors.Is(err, mooncake.ErrObjectNotFound) { ... }
//
// Batch methods return one int64 per key (>= 0 success, < 0 the key's
// ErrorCode) in a caller-supplied slice, so a steady stream of batches does
// not allocate; ResultError and BatchResultError turn entries into errors.
//
// # Memory
//
// Zero-copy calls (PutFrom, GetInto, Batch*) take addresses of registered
// memory, never Go heap memory: AllocHostMemory maps page-aligned memory
// outside the Go heap, optionally on huge pages and locked.
package mooncake
