package mooncake

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	mcgo "github.com/mooncake-go/mooncake-go/cgo"
)

// Store is a Mooncake store client. It is safe for concurrent use by many
// goroutines. Close it when done; calls made after (or racing with) Close
// return an *Error wrapping ErrClosed, never a crash.
//
// A Store value may be a view made by WithReplicateConfig: views share one
// client, and closing any of them closes the client.
type Store struct {
	c  *client
	rc ReplicateConfig
	cr mcgo.Replicate // rc in the form the C call takes, prepared once
	// rcErr is set when rc is invalid; every put and upsert through this view
	// then fails with it.
	rcErr error
}

// client is the shared state behind every view of one connection.
type client struct {
	mu     sync.RWMutex // held shared by every call, exclusively by Close
	h      mcgo.Client
	closed bool
	cfg    Config
	// scratch recycles key-packing buffers between batch calls.
	scratch [scratchSlots]atomic.Pointer[keyScratch]
}

// Open creates a client and connects it to the master in cfg.
func Open(cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, &Error{Op: OpOpen, Code: ErrInvalidParams, Err: fmt.Errorf("config: %w", err)}
	}
	if err := checkABI(); err != nil {
		return nil, &Error{Op: OpOpen, Err: err}
	}
	h, rc := mcgo.Create()
	if rc != 0 {
		if rc == mcgo.CodeNoCgo {
			return nil, &Error{Op: OpOpen, Err: ErrNoCgo}
		}
		return nil, &Error{Op: OpOpen, Code: ErrorCode(rc)}
	}
	ccfg := mcgo.Config{
		LocalHostname:       cfg.LocalHostname,
		MetadataServer:      cfg.MetadataServer,
		GlobalSegmentSize:   uint64(cfg.GlobalSegmentSize),
		LocalBufferSize:     uint64(cfg.LocalBufferSize),
		Protocol:            cfg.Protocol,
		DeviceName:          cfg.DeviceName,
		MasterServerAddress: cfg.MasterServerAddress,
	}
	if rc, msg := h.Setup(&ccfg); rc != 0 {
		h.Destroy()
		e := &Error{Op: OpOpen, Code: ErrorCode(rc)}
		if msg != "" {
			e.Err = fmt.Errorf("%s (master %s)", msg, cfg.MasterServerAddress)
		} else {
			e.Err = fmt.Errorf("master %s", cfg.MasterServerAddress)
		}
		return nil, e
	}
	s := &Store{c: &client{h: h, cfg: cfg}}
	s.setReplicate(ReplicateConfig{})
	return s, nil
}

func checkABI() error {
	if got := mcgo.EngineABIVersion(); got != mcgo.ABIVersion {
		return fmt.Errorf("engine %q implements ABI %d, this package needs %d (rebuild with go clean -cache, or rebuild the native library)",
			mcgo.EngineName(), got, mcgo.ABIVersion)
	}
	return nil
}

// Close disconnects the client: it unmounts the client's segment and drops
// its buffer registrations. It waits for calls in progress to finish. Close
// is idempotent; it closes every view of the client.
func (s *Store) Close() error {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	c.h.Destroy()
	c.h = mcgo.Client{}
	return nil
}

// acquire takes the shared lock for one call. It returns false (and the
// caller returns ErrClosed) when the store is closed.
func (c *client) acquire() bool {
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return false
	}
	return true
}

// release ends a call. With the native engine it also yields the goroutine
// (runtime.Gosched, ~0.1 µs against calls of tens of microseconds and more).
// Why: a goroutine that loops over native calls never reaches a scheduling
// point, so after 10 ms the runtime's sysmon thread forcibly takes its P while
// it sits in a call, and then polls every 20 µs for a while; on a small
// machine those wake-ups steal CPU from upstream's RPC and copy threads that
// the call is waiting for. Measured on 2 vCPUs, one 4 KiB PutFrom at a time
// against a loopback cluster: 3.26k -> 3.66k puts/s, p50 254 -> 215 µs
// (sysmon's nanosleeps 12,021 -> 842), the same as the loop written in C.
func (c *client) release() {
	c.mu.RUnlock()
	if mcgo.YieldAfterCalls {
		runtime.Gosched()
	}
}

func closedErr(op Op, key string) error { return &Error{Op: op, Key: key, Err: ErrClosed} }

// Config returns the configuration the store was opened with.
func (s *Store) Config() Config { return s.c.cfg }

// Engine names the engine behind the store: "embedded" (the in-process
// engine of the default build) or "native" (upstream Mooncake).
func Engine() string { return mcgo.EngineName() }

// UpstreamCommit is the upstream Mooncake commit the native library was
// built against, or "" for the embedded engine.
func UpstreamCommit() string { return mcgo.UpstreamCommit() }

// HealthCheck returns nil when the client is connected and its master
// answers.
func (s *Store) HealthCheck() error {
	if !s.c.acquire() {
		return closedErr(OpHealthCheck, "")
	}
	rc := s.c.h.HealthCheck()
	s.c.release()
	return codeErr(OpHealthCheck, "", int64(rc))
}

// Hostname returns this client's segment name ("127.0.0.1:17001"), the name
// other clients use in ReplicateConfig.PreferredSegments.
func (s *Store) Hostname() (string, error) {
	if !s.c.acquire() {
		return "", closedErr(OpHostname, "")
	}
	h, rc := s.c.h.Hostname()
	s.c.release()
	if rc != 0 {
		return "", codeErr(OpHostname, "", int64(rc))
	}
	return h, nil
}

// ReplicateConfig is Mooncake's per-put placement policy.
type ReplicateConfig struct {
	// ReplicaNum is the number of replicas (0 means 1). Placement is best
	// effort across distinct segments.
	ReplicaNum int
	// WithSoftPin keeps the object from eviction while memory is available.
	WithSoftPin bool
	// WithHardPin keeps the object from eviction altogether.
	WithHardPin bool
	// PreferredSegments are segment names (Store.Hostname of other clients)
	// tried first, in order.
	PreferredSegments []string
	// PreferAllocInSameNode places replicas on this client's node (requires
	// ReplicaNum <= 1). Multi-buffer gets made through the view also prefer a
	// replica on this node.
	PreferAllocInSameNode bool
}

// WithReplicateConfig returns a view of s whose puts and upserts use rc. The
// view shares s's connection; closing either closes both. Views are cheap:
// make one per policy and reuse it.
func (s *Store) WithReplicateConfig(rc ReplicateConfig) *Store {
	v := &Store{c: s.c}
	v.setReplicate(rc)
	return v
}

// ReplicateConfig returns the placement policy of this view.
func (s *Store) ReplicateConfig() ReplicateConfig { return s.rc }

func (s *Store) setReplicate(rc ReplicateConfig) {
	rc.PreferredSegments = append([]string(nil), rc.PreferredSegments...)
	for _, seg := range rc.PreferredSegments {
		if seg == "" || strings.IndexByte(seg, 0) >= 0 {
			s.rcErr = fmt.Errorf("replicate config: preferred segment %q is empty or contains NUL", seg)
		}
	}
	if rc.ReplicaNum < 0 {
		s.rcErr = fmt.Errorf("replicate config: replica_num %d is negative", rc.ReplicaNum)
	}
	n := rc.ReplicaNum
	if n <= 0 {
		n = 1
	}
	s.rc = rc
	s.cr = mcgo.Replicate{
		ReplicaNum:   uint64(n),
		SoftPin:      rc.WithSoftPin,
		HardPin:      rc.WithHardPin,
		SameNode:     rc.PreferAllocInSameNode,
		SegmentCount: uint32(len(rc.PreferredSegments)),
	}
	if len(rc.PreferredSegments) > 0 {
		s.cr.Segments = []byte(strings.Join(rc.PreferredSegments, "\x00") + "\x00")
	}
}

// codeErr turns a single-call return code into an error (nil when rc >= 0).
func codeErr(op Op, key string, rc int64) error {
	if rc >= 0 {
		return nil
	}
	if rc == mcgo.CodeNoCgo {
		return &Error{Op: op, Key: key, Code: ErrNotSupported, Err: ErrNoCgo}
	}
	return &Error{Op: op, Key: key, Code: codeOf(rc)}
}
