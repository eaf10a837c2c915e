package mooncake

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"
	"unsafe"

	"github.com/mooncake-go/mooncake-go/internal/cabi"
)

// Dummy clients: upstream's Python setup_dummy and alloc_from_mem_pool.
//
// A dummy is a thin client of a real client that runs in another process:
// upstream's standalone mooncake_client (real_client_main.cpp), which
// mounts the memory, talks to the master and moves the bytes. The dummy
// sends it every call over RPC and shares memory with it: buffers from
// AllocFromMemPool are shared memory that the real client maps once they
// are registered, so zero-copy calls on them move no bytes through the
// dummy. What a dummy puts belongs to its real client and outlives the
// dummy. One real client serves many dummies, which is how several
// processes on a host share one mounted segment and one set of RDMA
// connections.

// DummyConfig configures a dummy client (OpenDummy): Python's
// setup_dummy(mem_pool_size, local_buffer_size, server_address).
type DummyConfig struct {
	// ServerAddress is the real client's RPC address, "host:port"
	// (mooncake_client's --host and --port; upstream's default port is
	// 50052). The dummy reaches its shared-memory socket through the
	// port, as upstream's does. With the embedded engine a real client is
	// a Store open in this process, and ServerAddress its Hostname.
	ServerAddress string
	// LocalBufferSize is shared memory that stages the copying gets (Get,
	// GetBatch); 0 means none, and they fail.
	LocalBufferSize Size
	// MemPoolSize bounds the bytes AllocFromMemPool hands out in all; 0
	// means no bound. Upstream takes the number and does not use it: the
	// bound is this binding's, so that it is not silently ignored.
	MemPoolSize Size
	// ConnectTimeout bounds how long OpenDummy waits for the real
	// client's port to answer (native backend); 0 means
	// DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Combining is Config.Combining for the dummy: overlapping single-key
	// zero-copy calls, IsExist and Remove cross as one batch call (each
	// is one RPC to the real client); on by default, as a store's. The
	// copying calls do not combine on a dummy: their staging would have to
	// come out of the memory pool.
	Combining CombiningMode
}

// Validate reports what is wrong with cfg, or nil.
func (cfg DummyConfig) Validate() error {
	host, port, err := net.SplitHostPort(cfg.ServerAddress)
	if err != nil || host == "" {
		return sentinelf(ErrInvalidConfig, "ServerAddress %q: want host:port", cfg.ServerAddress)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return sentinelf(ErrInvalidConfig, "ServerAddress %q: port must be 1..65535", cfg.ServerAddress)
	}
	if cfg.ConnectTimeout < 0 {
		return sentinelf(ErrInvalidConfig, "connect timeout %v is negative", cfg.ConnectTimeout)
	}
	if !cfg.Combining.Valid() {
		return sentinelf(ErrInvalidConfig, "combining mode %d: want CombiningDefault, CombiningOn or CombiningOff", cfg.Combining)
	}
	return nil
}

// OpenDummy opens a dummy client of the real client at cfg.ServerAddress.
// Nothing listening there fails it with ErrRPCFail at once (native
// backend: a TCP dial first, ConnectTimeout); a real client that
// listens but hangs, after upstream's 30 s RPC timeout. Once the real
// client dies or hangs, calls fail with ErrRPCFail and so does
// HealthCheck, and Close returns within about 10 s however the real client
// is (docs/faults.md). The Store it returns takes every
// call a Store opened by Open takes, except those upstream's DummyClient
// does not have, which fail with ErrNotSupported: the segment calls, the
// SSD-offload calls, the transfer sessions and BatchReplicaClear. Its
// Hostname is "". Zero-copy calls need memory from AllocFromMemPool.
func OpenDummy(cfg DummyConfig) (*Store, error) {
	const op = OpSetupDummy
	if err := cfg.Validate(); err != nil {
		return nil, &Error{Op: op, Code: ErrInvalidParams, Err: fmt.Errorf("config: %w", err)}
	}
	if err := cabi.CheckABI(); err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	if cabi.BackendName() == "native" {
		if err := probeTCP(op, "real client", cfg.ServerAddress, Config{ConnectTimeout: cfg.ConnectTimeout}.connectTimeout()); err != nil {
			return nil, err
		}
	}
	h, err := createHandle(op)
	if err != nil {
		return nil, err
	}
	rc, msg := h.SetupDummy(uint64(cfg.MemPoolSize), uint64(cfg.LocalBufferSize), cfg.ServerAddress)
	if rc != 0 {
		h.Destroy()
		if msg == "" {
			msg = "real client " + cfg.ServerAddress
		}
		return nil, &Error{Op: op, Code: ErrorCode(rc), Err: errors.New(msg)}
	}
	d := cfg
	s := &Store{conn: &conn{handle: h, cfg: Config{LocalBufferSize: cfg.LocalBufferSize, Combining: cfg.Combining}, dummy: &d, stats: newStatsTable()}}
	if s.conn.cfg.combining() {
		s.conn.comb = newCombiner(cfg.LocalBufferSize) // no staging: see DummyConfig.Combining
	}
	s.setReplicate(ReplicateConfig{})
	return s, nil
}

// DummyConfig returns the configuration of a dummy client, and whether s
// is one.
func (s *Store) DummyConfig() (DummyConfig, bool) {
	if d := s.c().dummy; d != nil {
		return *d, true
	}
	return DummyConfig{}, false
}

// AllocFromMemPool allocates size bytes of shared memory for a dummy's
// zero-copy calls (upstream's alloc_from_mem_pool). Register it with
// RegisterBuffer, with exactly its address and length, before a zero-copy
// call uses it: a dummy refuses to register any other memory. It stays
// valid until Close, which frees it; using it after Close faults. A store
// that is not a dummy fails with ErrNotSupported (upstream's real client
// answers 0); more than DummyConfig.MemPoolSize in all fails with
// ErrInvalidSize.
func (s *Store) AllocFromMemPool(size uint64) ([]byte, error) {
	const op = OpAllocFromMemPool
	c := s.c()
	if size == 0 {
		return nil, &Error{Op: op, Code: ErrInvalidParams, Err: errors.New("size 0")}
	}
	if !c.gate.Enter() {
		return nil, closedErr(op, "")
	}
	defer c.gate.Leave()
	c.memMu.Lock()
	defer c.memMu.Unlock()
	if d := c.dummy; d != nil && d.MemPoolSize > 0 && (size > uint64(d.MemPoolSize) || c.poolUsed > uint64(d.MemPoolSize)-size) {
		return nil, &Error{Op: op, Code: ErrInvalidParams, Err: fmt.Errorf("%w: %d bytes more would exceed MemPoolSize %d (%d in use)",
			ErrInvalidSize, size, uint64(d.MemPoolSize), c.poolUsed)}
	}
	p, rc := c.handle.AllocFromMemPool(size)
	if rc != 0 {
		return nil, &Error{Op: op, Code: ErrorCode(rc), Err: fmt.Errorf("%d bytes", size)}
	}
	c.poolUsed += size
	return unsafe.Slice((*byte)(p), size), nil
}
