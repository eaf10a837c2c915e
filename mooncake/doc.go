// Package mooncake is a Go client for the Mooncake KV-cache store
// (github.com/kvcache-ai/Mooncake): lifecycle, buffer registration, copying
// and zero-copy put/get, batch and multi-buffer I/O, existence, size and
// removal, with Mooncake's error codes kept in typed errors.
//
// # Backends
//
// The default build links an embedded, in-process engine with Mooncake's
// semantics (write-once puts, read leases, registration rules, capacity
// limits), so programs and tests build and run with nothing installed. Stores
// opened with the same MasterServerAddress share one in-process cluster. It
// is a development and test engine, not a distributed store.
//
// Built with -tags mooncake_native, the same API runs over upstream
// Mooncake's client (RDMA or TCP) through libmcgo_native; see the README
// (make native). Backend reports which one is linked. Native calls block
// on RPCs and on upstream's transfer threads; the native build yields the
// goroutine (runtime.Gosched) after each that no other call overlapped,
// which keeps the runtime's sysmon from retaking the P of a goroutine that
// loops over calls; concurrent callers do not yield, so they do not queue
// for a P again between calls (docs/benchmarks.md measures both).
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
//	mem, _ := hostmem.Alloc(64<<20, hostmem.Options{})
//	defer mem.Free() // after st.Close, which ends the registration
//	_ = st.RegisterMemory(mem)
//
//	// One page = 3 layer buffers, stored as one object in one call.
//	keys := hostmem.PackKeys("page-0")
//	a := mem.Addr()
//	bufs := hostmem.Buffers{
//		Addrs:   []uintptr{a, a + 4096, a + 8192},
//		Sizes:   []uint64{4096, 4096, 4096},
//		Offsets: []uint64{0, 3},
//	}
//	res, err := st.BatchPutFromBuffers(keys, bufs, nil)
//	if err == nil {
//		err = mooncake.BatchKeysError(mooncake.OpBatchPutFromMultiBuffers, keys, res)
//	}
//
// Configuration can also come from the JSON file and MOONCAKE_* variables
// operators already use (ConfigFromEnv, LoadConfigFile).
//
// # Batch calls
//
// Every batch method makes exactly one cgo call. It takes an optional
// results slice and returns one entry per key: results[:n] when cap(results)
// is large enough (no allocation), else a new slice. An entry >= 0 is
// success (0 for puts, the bytes read for gets, 1 or 0 for BatchIsExist); an
// entry < 0 is Mooncake's ErrorCode for that key (turn it into an error with
// ResultError, or all of them with BatchResultError or BatchKeysError).
// The returned error is non-nil only when the call as a whole was refused:
// closed store, or arguments that do not fit together (slice lengths, CSR
// offsets); then the returned slice is nil.
//
// Keys come as strings (packed into reused scratch for the crossing) or
// already packed (hostmem.Keys, the form the C ABI takes, for the typed
// calls). Buffers come as parallel address and size slices (the uintptr
// calls) or as a hostmem.Buffers list (the typed calls), whose addresses
// must lie in registered memory that stays mapped during the call.
//
// # Beyond puts and gets
//
// The rest of upstream's Python client, one file each: ranges of objects
// (GetIntoRanges, and the transfer sessions StartGetSession and
// StartPutSession, whose range calls ask the master nothing), replicas
// (GetReplicaDesc, BatchReplicaClear), copy and move tasks (CreateCopyTask,
// CreateMoveTask, WaitTask), segments mounted while the store runs
// (AllocateAndMountSegment, MountSegment, UnmountSegments), per-operation
// counters (Stats; package mooncakeprom exports them to Prometheus), the
// dict form of the Python setup (ConfigFromSetupDict), and dummy clients
// (OpenDummy, AllocFromMemPool: a thin client of upstream's standalone
// real client, sharing its segment and connections through shared memory).
// docs/python-api.md maps every Python method to its Go counterpart.
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
// Zero-copy calls take addresses of registered memory, never Go heap
// memory. Package hostmem maps page-aligned memory outside the Go heap,
// optionally on huge pages and locked; RegisterMemory registers it and
// keeps it from being freed until UnregisterMemory or Close. The typed
// calls (PutSpan, GetIntoSpan, BatchPutFromBuffers, ...) check spans
// against their memory before the call; the uintptr calls are the low
// level.
package mooncake
