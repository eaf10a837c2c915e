package transfer

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/mooncake-go/mooncake-go/internal/cabi"
	"github.com/mooncake-go/mooncake-go/internal/cabi/ctransfer"
	"github.com/mooncake-go/mooncake-go/internal/memreg"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// Config is what Open needs: upstream TransferEngine::init's arguments and
// the transport to install.
type Config struct {
	// MetadataServer is where engines publish and find each other's
	// segments: "http://127.0.0.1:8080/metadata" (the master's HTTP
	// metadata server), "https://...", "etcd://h1:2379;h2:2379" (or the
	// endpoints alone, as upstream reads them), "redis://host:6379"
	// (credentials in MC_REDIS_USERNAME, MC_REDIS_PASSWORD,
	// MC_REDIS_DB_INDEX), or "P2PHANDSHAKE" (peers are reached directly by
	// name). A native backend whose upstream was built without the form's
	// backend refuses it with ErrNotImplemented (mooncake.Backend's
	// Capabilities list what it has). The embedded backend's engines meet
	// when their strings are equal.
	MetadataServer string
	// LocalServerName is this engine's segment name, "host:port", the
	// name peers open. With P2PHANDSHAKE give the host only: the engine
	// appends its RPC port (SegmentName reports the result).
	LocalServerName string
	// Host and RPCPort are upstream's ip_or_host and rpc_port arguments
	// (upstream reads them only with its legacy RPC port binding).
	Host    string
	RPCPort uint32
	// Protocol is the transport Open installs: "tcp" (the default) or
	// "rdma"; "none" installs nothing (InstallTransport later).
	Protocol string
	// DeviceNames lists RDMA NICs ("" = every NIC found);
	// NICPriorityMatrix is upstream's JSON matrix ("" = from the topology).
	DeviceNames       string
	NICPriorityMatrix string
	// NativeLibrary, when set, is the libmcgo_native.so the process loads
	// as its backend before this engine opens (mooncake.LoadNative, whose
	// rules apply: the process's first backend is its only one).
	NativeLibrary string
	// Combining says whether synchronous transfers (Transfer, Read, Write)
	// that overlap in time are submitted together, as one batch watched by
	// one poller (docs/combining.md, "The transfer engine"). Each call
	// still gets the summary and error of its own requests.
	Combining CombiningMode
}

// Engine is a transfer engine: it registers local memory, opens other
// engines' segments, and moves bytes with batched one-sided reads and
// writes. It is safe for concurrent use. Close it when done; calls made
// after (or racing with) Close return an error wrapping ErrClosed.
type Engine struct {
	opened bool // set by Open: a nil or zero Engine is a closed one
	gate   cabi.Gate
	// release lets go of the process's etcd metadata client (cabi.HoldEtcd).
	release func()
	h       ctransfer.Engine
	cfg     Config
	name    string

	memMu sync.Mutex
	mems  map[uintptr]*hostmem.Memory

	batches sync.Pool // *Batch for Transfer, so a steady stream allocates nothing
	// comb combines overlapping synchronous transfers (combine.go); nil
	// when Config.Combining is off.
	comb *combiner

	recvMu   sync.Mutex
	recvBuf  []byte
	recvName []uint64
	recvMsg  []uint64
}

// Open creates an engine, initialises it and installs cfg.Protocol.
func Open(cfg Config) (*Engine, error) {
	if cfg.NativeLibrary != "" {
		if err := cabi.LoadNative(cfg.NativeLibrary, os.Getenv(cabi.EnvNativeAnyUpstream) == "1"); err != nil {
			return nil, &Error{Op: OpOpen, Err: err}
		}
	}
	if err := cabi.CheckABI(); err != nil {
		return nil, &Error{Op: OpOpen, Err: err}
	}
	if cabi.BackendName() == "none (built without cgo)" {
		return nil, &Error{Op: OpOpen, Err: ErrNoCgo}
	}
	cfg, md, err := cfg.check()
	if err != nil {
		return nil, &Error{Op: OpOpen, Code: ErrInvalidArgument, Err: err}
	}
	if err := cabi.CheckForm(md, false); err != nil {
		// Upstream built without this metadata backend aborts the process.
		return nil, &Error{Op: OpOpen, Code: ErrNotImplemented, Err: fmt.Errorf("MetadataServer %s: %w", cfg.MetadataServer, err)}
	}
	release, err := cabi.HoldEtcd(md, false)
	if err != nil {
		return nil, &Error{Op: OpOpen, Code: ErrInvalidArgument, Err: fmt.Errorf("MetadataServer: %w", err)}
	}
	protocol := cfg.Protocol
	if protocol == "" {
		protocol = "tcp"
	}
	h, rc, msg := ctransfer.Create(&ctransfer.Config{
		MetadataServer:  cfg.MetadataServer,
		LocalServerName: cfg.LocalServerName,
		Host:            cfg.Host,
		RPCPort:         cfg.RPCPort,
	})
	if rc != 0 {
		release()
		e := &Error{Op: OpOpen, Code: ErrorCode(rc)}
		if msg != "" {
			e.Err = errors.New(msg)
		}
		return nil, e
	}
	e := &Engine{opened: true, h: h, cfg: cfg, release: release}
	e.gate.NoYield = true // the engine's calls are short; Wait has its own schedule
	name, rc := h.SegmentName()
	if rc == 0 && protocol != "none" {
		rc = h.InstallTransport(protocol, cfg.DeviceNames, cfg.NICPriorityMatrix)
	}
	if rc != 0 {
		h.Destroy()
		release()
		return nil, &Error{Op: OpInstallTransport, Code: ErrorCode(rc), Err: fmt.Errorf("protocol %s", protocol)}
	}
	e.name = name
	e.batches.New = func() any { return new(Batch) }
	if cfg.Combining == CombiningOn {
		e.comb = &combiner{}
	}
	return e, nil
}

// Close ends every transfer of the engine, outgoing and incoming, and
// frees it: when Close returns, no engine thread touches memory the engine
// registered, and every Batch and Segment of it is invalid. Memory
// registered through RegisterMemory is released (it can be freed then).
// Close fails, and the engine stays open, while a store runs on the engine
// (close the store first). Close is idempotent.
func (e *Engine) Close() error {
	if e == nil || !e.opened {
		return nil
	}
	return e.gate.TryClose(func() error {
		if rc := e.h.Destroy(); rc != 0 {
			return &Error{Op: OpClose, Code: ErrorCode(rc), Err: errors.New("a store still runs on the engine")}
		}
		e.h = ctransfer.Engine{}
		e.release()
		e.memMu.Lock()
		for addr, m := range e.mems {
			memreg.Unmark(m)
			delete(e.mems, addr)
		}
		e.memMu.Unlock()
		return nil
	})
}

// SegmentName is the name peers open to reach this engine's memory ("" for
// a nil or zero Engine).
func (e *Engine) SegmentName() string {
	if e == nil {
		return ""
	}
	return e.name
}

// Config returns the configuration the engine was opened with.
func (e *Engine) Config() Config {
	if e == nil {
		return Config{}
	}
	return e.cfg
}

// enter admits a call: false, for a closed error, on a nil Engine, a zero
// one (never opened) and after Close. Every call goes through it, so that
// no value of the type crashes a caller.
func (e *Engine) enter() bool {
	return e != nil && e.opened && e.gate.Enter()
}

// LocalAddress is the engine's RPC endpoint, "ip:port".
func (e *Engine) LocalAddress() (string, error) {
	if !e.enter() {
		return "", closedErr(OpInfo)
	}
	s, rc := e.h.LocalAddress()
	e.gate.Leave()
	return s, codeErr(OpInfo, "", rc)
}

// RPCPort is the engine's RPC port.
func (e *Engine) RPCPort() (uint32, error) {
	if !e.enter() {
		return 0, closedErr(OpInfo)
	}
	p, rc := e.h.RPCPort()
	e.gate.Leave()
	return p, codeErr(OpInfo, "", rc)
}

// Topology is the local NIC topology as upstream's JSON ("{}" without NICs).
func (e *Engine) Topology() (string, error) {
	if !e.enter() {
		return "", closedErr(OpInfo)
	}
	s, rc := e.h.Topology()
	e.gate.Leave()
	return s, codeErr(OpInfo, "", rc)
}

// InstallTransport installs another transport ("tcp" or "rdma").
func (e *Engine) InstallTransport(protocol, deviceNames, nicPriorityMatrix string) error {
	for _, s := range []string{protocol, deviceNames, nicPriorityMatrix} {
		if strings.IndexByte(s, 0) >= 0 {
			return argErr(OpInstallTransport, "", "argument contains NUL")
		}
	}
	if !e.enter() {
		return closedErr(OpInstallTransport)
	}
	rc := e.h.InstallTransport(protocol, deviceNames, nicPriorityMatrix)
	e.gate.Leave()
	return codeErr(OpInstallTransport, "", rc)
}

// RegisterBuffer registers [addr, addr+size) for transfers: peers can read
// and write it, and it can be the local side of a request. It is for memory
// the program mapped itself (hostmem memory goes through RegisterMemory,
// which also keeps it from being freed while registered). The memory must
// stay mapped until UnregisterBuffer or Close, and must not be Go heap
// memory. A null or empty range, or one that is not all mapped memory of
// the process (hostmem.CheckMapped), is refused with ErrInvalidArgument, an
// overlap with ErrAddressOverlapped.
func (e *Engine) RegisterBuffer(addr uintptr, size uint64) error {
	if !e.enter() {
		return closedErr(OpRegister)
	}
	if err := hostmem.CheckMapped(addr, size); err != nil {
		e.gate.Leave()
		return &Error{Op: OpRegister, Code: ErrInvalidArgument, Err: err}
	}
	rc := e.h.Register(addr, size, "", true)
	e.gate.Leave()
	return codeErr(OpRegister, "", rc)
}

// UnregisterBuffer unregisters the region that starts at addr. It waits for
// the engine's copies into or out of the region (in the embedded backend;
// upstream's TCP transport can still finish a peer's write that was already
// accepted). For the start of memory registered with RegisterMemory it is
// UnregisterMemory: the registration the memory counts ends with it.
func (e *Engine) UnregisterBuffer(addr uintptr) error {
	if !e.enter() {
		return closedErr(OpUnregister)
	}
	defer e.gate.Leave()
	e.memMu.Lock() // as UnregisterMemory: one count for both calls
	defer e.memMu.Unlock()
	rc := e.h.Unregister(addr)
	if rc == 0 {
		e.forget(addr)
	}
	return codeErr(OpUnregister, "", rc)
}

// forget ends the RegisterMemory registration of the memory at addr, if
// there is one; the caller holds memMu.
func (e *Engine) forget(addr uintptr) {
	if m := e.mems[addr]; m != nil {
		delete(e.mems, addr)
		memreg.Unmark(m)
	}
}

// RegisterBuffers registers every (addrs[i], sizes[i]), all or nothing.
func (e *Engine) RegisterBuffers(addrs []uintptr, sizes []uint64) error {
	if len(addrs) != len(sizes) {
		return argErr(OpRegister, "", fmt.Sprintf("%d addresses and %d sizes", len(addrs), len(sizes)))
	}
	if !e.enter() {
		return closedErr(OpRegister)
	}
	for i := range addrs {
		if err := hostmem.CheckMapped(addrs[i], sizes[i]); err != nil {
			e.gate.Leave()
			return &Error{Op: OpRegister, Code: ErrInvalidArgument, Err: fmt.Errorf("region %d: %w", i, err)}
		}
	}
	rc := e.h.RegisterBatch(addrs, sizes, "")
	e.gate.Leave()
	return codeErr(OpRegister, "", rc)
}

// UnregisterBuffers unregisters the regions starting at addrs, all or
// nothing (memory registered with RegisterMemory among them, as
// UnregisterBuffer).
func (e *Engine) UnregisterBuffers(addrs []uintptr) error {
	for i, a := range addrs {
		if slices.Contains(addrs[:i], a) {
			return argErr(OpUnregister, "", fmt.Sprintf("region %#x named twice", a))
		}
	}
	if !e.enter() {
		return closedErr(OpUnregister)
	}
	defer e.gate.Leave()
	e.memMu.Lock()
	defer e.memMu.Unlock()
	rc := e.h.UnregisterBatch(addrs)
	if rc == 0 {
		for _, a := range addrs {
			e.forget(a)
		}
	}
	return codeErr(OpUnregister, "", rc)
}

// RegisterMemory registers all of m and records the registration in it
// (m.Free refuses until UnregisterMemory or Close).
func (e *Engine) RegisterMemory(m *hostmem.Memory) error {
	if err := memreg.Mark(m); err != nil {
		return &Error{Op: OpRegister, Code: ErrInvalidArgument, Err: err}
	}
	if !e.enter() {
		memreg.Unmark(m)
		return closedErr(OpRegister)
	}
	defer e.gate.Leave()
	e.memMu.Lock()
	defer e.memMu.Unlock()
	addr := m.Addr()
	if rc := e.h.Register(addr, m.Size(), "", true); rc != 0 {
		memreg.Unmark(m)
		return codeErr(OpRegister, "", rc)
	}
	if e.mems == nil {
		e.mems = map[uintptr]*hostmem.Memory{}
	}
	e.mems[addr] = m
	return nil
}

// UnregisterMemory unregisters memory registered with RegisterMemory.
func (e *Engine) UnregisterMemory(m *hostmem.Memory) error {
	if !e.enter() {
		return closedErr(OpUnregister)
	}
	defer e.gate.Leave()
	e.memMu.Lock()
	defer e.memMu.Unlock()
	addr := m.Addr()
	if addr == 0 || e.mems[addr] != m {
		return argErr(OpUnregister, "", "memory is not registered with this engine through RegisterMemory")
	}
	if rc := e.h.Unregister(addr); rc != 0 {
		return codeErr(OpUnregister, "", rc)
	}
	e.forget(addr)
	return nil
}

// Notification is a small message between engines.
type Notification struct {
	Name    string
	Message string
}

// Notify sends a notification to the engine of segment s.
func (e *Engine) Notify(s *Segment, n Notification) error {
	if s == nil {
		return argErr(OpNotify, "", "nil segment")
	}
	return e.notify(s.id, "", s.name, n)
}

// NotifyPeer sends a notification to the engine whose segment name is peer.
func (e *Engine) NotifyPeer(peer string, n Notification) error {
	if peer == "" {
		return argErr(OpNotify, "", "empty peer name")
	}
	return e.notify(0, peer, peer, n)
}

func (e *Engine) notify(seg SegmentHandle, peer, label string, n Notification) error {
	if n.Name == "" && n.Message == "" {
		return argErr(OpNotify, label, "empty notification") // as the batch forms refuse one
	}
	if len(n.Name)+len(n.Message) > NotifyMaxBytes {
		return argErr(OpNotify, label, fmt.Sprintf("%d bytes of name and message, more than %d", len(n.Name)+len(n.Message), NotifyMaxBytes))
	}
	if !e.enter() {
		return closedErr(OpNotify)
	}
	rc := e.h.NotifySend(uint64(seg), peer, n.Name, n.Message)
	e.gate.Leave()
	return codeErr(OpNotify, label, rc)
}

// NotifyMaxBytes bounds a notification's name and message together.
//
// Notifications wait in the receiving engine until its Notifications reads
// them. The embedded engine keeps at most 64 MiB of them unread: past that
// a send fails with ErrMemory (the sender learns it; nothing is dropped
// silently). Upstream's engine keeps every unread one, without a bound: a
// receiver that never reads grows.
const NotifyMaxBytes = 128 << 10

// Notifications appends every notification received so far (oldest first)
// to dst and returns it; each is returned once.
func (e *Engine) Notifications(dst []Notification) ([]Notification, error) {
	if !e.enter() {
		return dst, closedErr(OpNotifications)
	}
	defer e.gate.Leave()
	e.recvMu.Lock()
	defer e.recvMu.Unlock()
	if e.recvBuf == nil {
		e.recvBuf = make([]byte, 64<<10)
		e.recvName = make([]uint64, 64)
		e.recvMsg = make([]uint64, 64)
	}
	for {
		n, need, rc := e.h.NotifyRecv(e.recvBuf, e.recvName, e.recvMsg)
		if rc != 0 {
			return dst, codeErr(OpNotifications, "", rc)
		}
		off := uint64(0)
		for i := 0; i < n; i++ {
			name := string(e.recvBuf[off : off+e.recvName[i]])
			off += e.recvName[i]
			msg := string(e.recvBuf[off : off+e.recvMsg[i]])
			off += e.recvMsg[i]
			dst = append(dst, Notification{Name: name, Message: msg})
		}
		switch {
		case need > uint64(len(e.recvBuf)):
			e.recvBuf = make([]byte, need)
		case n < len(e.recvName) && need == 0:
			return dst, nil // drained
		}
	}
}

func init() {
	ctransfer.EngineOf = func(x any) (ctransfer.Engine, func(), bool) {
		e, ok := x.(*Engine)
		if !ok || !e.enter() {
			return ctransfer.Engine{}, nil, false
		}
		return e.h, e.gate.Leave, true
	}
}
