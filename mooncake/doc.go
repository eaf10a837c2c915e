// Package mooncake is a Go client for the Mooncake KV-cache store
// (github.com/kvcache-ai/Mooncake): lifecycle, buffer registration, copying
// and zero-copy put/get, batch and multi-buffer I/O, existence, size and
// removal, with Mooncake's error codes kept in typed errors.
//
// # One call per job
//
// One key is a string; many keys are a *hostmem.Keys (packed once, crossing
// into C as they are). Copying calls take any Go memory; zero-copy calls
// take registered host memory as a hostmem.Span (one object) or a
// hostmem.Buffers list (a batch, one buffer or a CSR list of buffers per
// key).
//
//	job                                       call
//	----------------------------------------  ------------------------------------------
//	open, close, health                       Open, OpenOnEngine, OpenDummy, Close, HealthCheck
//	store a Go value (write-once / replace)   Put / Upsert
//	one object from several Go slices         PutParts / UpsertParts
//	many Go values in one call                PutBatch / UpsertBatch
//	read a copy                               Get, AppendGet (into a reused slice)
//	register memory for zero-copy             RegisterMemory (hostmem), RegisterBuffer (your own mapping)
//	zero-copy, one object                     PutFrom / UpsertFrom / GetInto (a Span)
//	zero-copy, a batch (pages, layer-first)   BatchPutFrom / BatchUpsertFrom / BatchGetInto (Keys, Buffers)
//	byte ranges of objects                    GetIntoRanges, StartGetSession, StartPutSession
//	existence, size                           IsExist, BatchIsExist, GetSize
//	removal                                   Remove, BatchRemove, RemoveByRegex, RemoveAll
//	placement of puts                         WithReplicateConfig (a view of the store)
//	replicas, copy and move tasks             GetReplicaDesc, BatchGetReplicaDesc, BatchReplicaClear, CreateCopyTask, CreateMoveTask, WaitTask
//	segments mounted while running            AllocateAndMountSegment, MountSegment, UnmountSegments
//	counters                                  Stats (package mooncakeprom exports them)
//	which backend, what it honours            Backend, LoadNative
//	Python shapes: uintptr, []string          Raw
//
// docs/python-api.md maps every method of upstream's Python client to its
// Go counterpart.
//
// # Backends
//
// The default build links an embedded, in-process engine with Mooncake's
// semantics (write-once puts, read leases, registration rules, capacity
// limits), so programs and tests build and run with nothing installed. Stores
// opened with the same MasterServerAddress share one in-process cluster. It
// is a development and test engine, not a distributed store.
//
// The same program runs over upstream Mooncake's client (RDMA or TCP) when
// it loads the libmcgo_native.so built against the Mooncake of its machine
// (make native; see the README): MCGO_NATIVE_LIBRARY=<path>, or LoadNative
// or Config.NativeLibrary before the first Open. It is one program, built
// with plain go build; -tags mooncake_native links the library instead.
// Backend reports which one the process uses. Native store calls
// block on RPCs and on upstream's transfer threads; a call that no other
// call overlapped yields the goroutine (runtime.Gosched) when it returns,
// which keeps the runtime's sysmon from retaking the P of a goroutine that
// loops over calls, and calls that overlap do not yield, so concurrent
// callers do not queue for a P again between calls (docs/benchmarks.md
// measures both). Single-key calls of one kind that overlap (Get, GetInto,
// Put, PutFrom, Upsert, UpsertFrom, IsExist, Remove) cross into C as one
// batch call, each caller still getting exactly its own result and error
// (Config.Combining, on by default; docs/combining.md).
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
//	res, err := st.BatchPutFrom(keys, bufs, nil)
//
// Configuration can also come from the JSON file and MOONCAKE_* variables
// operators already use (ConfigFromEnv, LoadConfigFile).
//
// # Batch calls
//
// Every batch method makes exactly one cgo call. It takes an optional
// results slice and returns one entry per key: results[:n] when
// cap(results) is large enough (no allocation), else a new slice. An entry
// >= 0 is success (0 for puts, the bytes read for gets, 1 or 0 for
// BatchIsExist); an entry < 0 is Mooncake's ErrorCode for that key.
//
// When any key failed, the error is a *BatchError: the results are filled
// all the same, and the error names each failed key with the call's Op and
// its code, so errors.Is(err, ErrObjectNotFound) tells whether any key was
// missing and errors.As(err, &be) finds the keys. A *BatchError does not
// unwrap to its keys' errors: an *Error found with errors.As means a call
// that failed as a whole (or a single-key call). When the call was refused as a
// whole (closed store, arguments that do not fit together: slice lengths,
// CSR offsets, a key longer than MaxKeyLen), the error is an *Error and the
// results are nil. A batch in which nothing failed allocates nothing.
//
// # Contexts
//
// The single-key calls that combine have Context variants: GetContext,
// AppendGetContext, GetIntoContext, PutContext, PutFromContext,
// UpsertContext, UpsertFromContext, IsExistContext and RemoveContext.
// Neither backend can abandon a call once it has crossed into C, so the
// context bounds only the wait before the crossing: a call whose context
// has ended when it starts, or ends while the call waits in the combining
// queue (behind a crossing in progress, not yet taken into a batch),
// returns an *Error wrapping the context's error and has made no call
// (nothing stored, not counted in Stats); a nil context is refused with
// ErrInvalidParams. A call taken into a batch, or making its own call,
// returns its real result when that comes.
//
//	err := st.PutContext(ctx, key, value)
//	if errors.Is(err, context.DeadlineExceeded) {
//		// this call stored nothing
//	}
//
// The zero-copy batch writes have them too, BatchPutFromContext and
// BatchUpsertFromContext, by the same rule: their one wait in Go is for
// room in the store's batch-write budget (Config.BatchWriteKeys,
// BatchWriteBytes), and a batch whose context ends there leaves with nil
// results and an *Error wrapping the context's error, having stored
// nothing. Batch reads never wait in Go.
//
// # Errors
//
// Every method returns *Error (or *BatchError), whose Code is Mooncake's
// ErrorCode:
//
//	if errors.Is(err, mooncake.ErrObjectNotFound) { ... }
//
// # Memory
//
// Zero-copy calls take addresses of registered memory, never Go heap
// memory. Package hostmem maps page-aligned memory outside the Go heap,
// optionally on huge pages and locked; RegisterMemory registers it and
// keeps it from being freed until UnregisterMemory or Close. Spans are
// checked against their memory before the call. Raw takes bare uintptr
// addresses that nothing checks: the low level.
package mooncake
