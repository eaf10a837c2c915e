package mooncake

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mooncake-go/mooncake-go/internal/cabi"
	"github.com/mooncake-go/mooncake-go/internal/cabi/cstore"
	"github.com/mooncake-go/mooncake-go/internal/cabi/ctransfer"
	"github.com/mooncake-go/mooncake-go/internal/endpoints"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
)

// Store is a Mooncake store client. It is safe for concurrent use by many
// goroutines. Close it when done; calls made after (or racing with) Close
// return an *Error wrapping ErrClosed, never a crash.
//
// A Store value may be a view made by WithReplicateConfig: views share one
// connection, and closing any of them closes it.
type Store struct {
	conn    *conn
	policy  ReplicateConfig
	cpolicy cstore.Replicate // policy in the form the C call takes, prepared once
	// policyErr is set when policy is invalid; every put and upsert through
	// this view then fails with it.
	policyErr error
}

// conn is the shared state behind every view of one connection.
type conn struct {
	gate   cabi.Gate // admits calls; Close waits for them
	handle cstore.Client
	cfg    Config
	// scratch recycles key-packing buffers between batch calls.
	scratch [scratchSlots]atomic.Pointer[keyScratch]
	// mems are the memories registered through RegisterMemory, by address;
	// their registrations end at UnregisterMemory or Close.
	memMu sync.Mutex
	mems  map[uintptr]*hostmem.Memory
	// stats counts the calls (Store.Stats); nil on the closed connection.
	stats *statsTable
	// comb queues overlapping single-key calls (combine.go); nil when
	// Config.Combining is off.
	comb *combiner
	// writes admits zero-copy batch writes into upstream within
	// Config.BatchWriteKeys and BatchWriteBytes (batchPacked); nil when
	// unbounded.
	writes *writeBudget
	// getSessions owns each key of a live GetSession (sessions.go).
	sessMu      sync.Mutex
	getSessions map[string]*GetSession
	// dummy is the configuration of a dummy client (OpenDummy), else nil;
	// poolUsed the bytes its AllocFromMemPool handed out (under memMu).
	dummy    *DummyConfig
	poolUsed uint64
	// release lets go of the process-wide etcd clients the store uses
	// (cabi.HoldEtcd); nil when none.
	release func()
}

// Open creates a client and connects it to the master in cfg. With the
// native backend it first checks that the master's RPC port and an HTTP
// metadata server answer (within cfg.ConnectTimeout): a cluster that is
// down or hung fails Open with ErrRPCFail within seconds, where upstream's
// setup retries for minutes.
func Open(cfg Config) (*Store, error) { return open(cfg, nil) }

// OpenOnEngine is Open on an existing transfer engine, as SGLang shares one
// engine between its store and its transfers: the store moves its bytes
// with e, shares its registrations (memory registered with either is
// registered with both) and its RPC port. cfg.LocalHostname and
// cfg.MetadataServer may be left empty (they are the engine's), or must
// equal the engine's segment name and metadata string. e cannot be closed
// while the store is open: close the store first.
func OpenOnEngine(cfg Config, e *transfer.Engine) (*Store, error) {
	if e == nil {
		return nil, &Error{Op: OpOpen, Code: ErrInvalidParams, Err: errors.New("nil transfer engine")}
	}
	if _, release, ok := ctransfer.EngineOf(e); ok {
		release()
	} else {
		// A zero Engine, or one closed: never a store of its own instead.
		return nil, &Error{Op: OpOpen, Code: ErrInvalidParams, Err: errors.New("the transfer engine is closed or was never opened (transfer.Open)")}
	}
	if cfg.LocalHostname == "" {
		cfg.LocalHostname = e.SegmentName()
	}
	if cfg.MetadataServer == "" {
		cfg.MetadataServer = e.Config().MetadataServer
	}
	return open(cfg, e)
}

func open(cfg Config, engine *transfer.Engine) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, &Error{Op: OpOpen, Code: ErrInvalidParams, Err: fmt.Errorf("config: %w", err)}
	}
	if err := loadConfigured(cfg.NativeLibrary); err != nil {
		return nil, &Error{Op: OpOpen, Err: err}
	}
	if err := cabi.CheckABI(); err != nil {
		return nil, &Error{Op: OpOpen, Err: err}
	}
	// On the caller's engine the metadata connection is already made.
	release, err := checkAddresses(cfg, engine == nil)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			release()
		}
	}()
	level, _ := cfg.logLevel()
	if err := setLog(level, cfg.LogDir); err != nil {
		return nil, err
	}
	h, err := createHandle(OpOpen)
	if err != nil {
		return nil, err
	}
	ccfg := cstore.Config{
		LocalHostname:       cfg.LocalHostname,
		MetadataServer:      cfg.MetadataServer,
		GlobalSegmentSize:   uint64(cfg.GlobalSegmentSize),
		LocalBufferSize:     uint64(cfg.LocalBufferSize),
		Protocol:            cfg.Protocol,
		DeviceName:          cfg.DeviceName,
		MasterServerAddress: cfg.MasterServerAddress,
		TenantID:            cfg.TenantID,
		SSDOffloadPath:      cfg.SSDOffloadPath,
		SSDOffload:          cfg.EnableSSDOffload,
		ClientHTTPServer:    cfg.EnableClientHTTPServer,
		ClientHTTPPort:      int32(cfg.ClientHTTPPort),
	}
	var (
		rc  int32
		msg string
	)
	if engine != nil {
		te, release, ok := ctransfer.EngineOf(engine)
		if !ok {
			h.Destroy()
			return nil, &Error{Op: OpOpen, Code: ErrInvalidParams, Err: errors.New("the transfer engine is closed")}
		}
		rc, msg = h.SetupOnEngine(&ccfg, te.Ptr())
		release()
	} else {
		rc, msg = h.Setup(&ccfg)
	}
	if rc != 0 {
		h.Destroy()
		e := &Error{Op: OpOpen, Code: ErrorCode(rc)}
		if msg != "" {
			e.Err = fmt.Errorf("%s (master %s)", msg, cfg.MasterServerAddress)
		} else {
			e.Err = fmt.Errorf("master %s", cfg.MasterServerAddress)
		}
		return nil, e
	}
	// Upstream sets glog's level from MC_LOG_LEVEL when the process's first
	// engine starts, after the call above: set it again.
	if err := setLog(level, ""); err != nil {
		h.Destroy()
		return nil, err
	}
	ok = true
	s := &Store{conn: &conn{handle: h, cfg: cfg, stats: newStatsTable(), release: release}}
	s.conn.writes = newWriteBudget(cfg.batchWriteBounds())
	if cfg.combining() {
		s.conn.comb = newCombiner(cfg.LocalBufferSize)
		s.conn.comb.stageAll(s.conn)
	}
	s.setReplicate(ReplicateConfig{})
	return s, nil
}

// createHandle makes an unconnected client for op's setup.
func createHandle(op Op) (cstore.Client, error) {
	h, rc := cstore.Create()
	if rc == cabi.CodeNoCgo {
		return h, &Error{Op: op, Err: ErrNoCgo}
	}
	if rc != 0 {
		return h, &Error{Op: op, Code: ErrorCode(rc)}
	}
	return h, nil
}

// Close disconnects the client: it unmounts the client's segment and drops
// its buffer registrations. It waits for calls in progress to finish. Close
// is idempotent; it closes every view of the client.
func (s *Store) Close() error {
	c := s.c()
	c.gate.Close(func() {
		c.handle.Destroy()
		c.handle = cstore.Client{}
		c.releaseMemory()
		if c.comb != nil {
			c.comb.freeStages()
		}
		if c.release != nil {
			c.release()
		}
	})
	return nil
}

// checkAddresses checks the master and metadata addresses (checkForms) and
// holds the process-wide etcd clients they need (cabi.HoldEtcd: another
// client of this process on other etcd endpoints is refused); release lets
// go of them when the store closes.
func checkAddresses(cfg Config, metadata bool) (release func(), err error) {
	m, md, err := checkForms(cfg, metadata)
	if err != nil {
		return nil, err
	}
	releaseMaster, err := cabi.HoldEtcd(m, true)
	if err != nil {
		return nil, &Error{Op: OpOpen, Code: ErrInvalidParams, Err: fmt.Errorf("master %s: %w", cfg.MasterServerAddress, err)}
	}
	if !metadata {
		return releaseMaster, nil
	}
	releaseMeta, err := cabi.HoldEtcd(md, false)
	if err != nil {
		releaseMaster()
		return nil, &Error{Op: OpOpen, Code: ErrInvalidParams, Err: fmt.Errorf("metadata server %s: %w", cfg.MetadataServer, err)}
	}
	return func() { releaseMaster(); releaseMeta() }, nil
}

// checkForms refuses a master or metadata form the backend cannot
// use (ErrNotSupported: upstream built without it would fail late, or
// abort the process), and on the native backend checks that the master
// and, with metadata, the metadata service answer: upstream's setup retries
// a master that is not there for about 90 s, and a hung metadata server
// for minutes, so one that is down fails Open at once (connection refused)
// or after cfg's connect timeout (no answer), with ErrRPCFail. Validate
// has checked the forms; the embedded engine's masters are names.
func checkForms(cfg Config, metadata bool) (m, md endpoints.Address, err error) {
	native := cabi.BackendName() == "native"
	if m, err = endpoints.Master(cfg.MasterServerAddress); err != nil {
		if native {
			return m, md, &Error{Op: OpOpen, Code: ErrInvalidParams, Err: sentinelf(ErrInvalidConfig, "config: master_server_address: %v", err)}
		}
		m = endpoints.Address{Kind: endpoints.Direct}
	}
	if md, err = endpoints.Metadata(cfg.MetadataServer); err != nil {
		return m, md, &Error{Op: OpOpen, Code: ErrInvalidParams, Err: sentinelf(ErrInvalidConfig, "config: metadata_server: %v", err)}
	}
	if err := cabi.CheckForm(m, true); err != nil {
		return m, md, &Error{Op: OpOpen, Code: ErrNotSupported, Err: fmt.Errorf("master %s: %w", cfg.MasterServerAddress, err)}
	}
	if m.Kind != endpoints.Direct {
		if err := chooseClusterID(cfg.ClusterID); err != nil {
			return m, md, &Error{Op: OpOpen, Code: ErrInvalidParams, Err: err}
		}
	}
	if err := cabi.CheckForm(md, false); err != nil {
		return m, md, &Error{Op: OpOpen, Code: ErrNotSupported, Err: fmt.Errorf("metadata server %s: %w", cfg.MetadataServer, err)}
	}
	if !native {
		return m, md, nil
	}
	timeout := cfg.connectTimeout()
	if err := endpoints.Probe(m, timeout); err != nil {
		what := "master"
		if m.Kind != endpoints.Direct {
			what = "the " + m.Kind.String() + " server of HA master"
		}
		return m, md, &Error{Op: OpOpen, Code: ErrRPCFail, Err: fmt.Errorf("%s %s unreachable: %w", what, cfg.MasterServerAddress, err)}
	}
	if !metadata {
		return m, md, nil
	}
	if md.Kind == endpoints.HTTP && strings.HasPrefix(cfg.MetadataServer, "http://") {
		return m, md, probeHTTP(cfg.MetadataServer, timeout)
	}
	if err := endpoints.Probe(md, timeout); err != nil {
		return m, md, &Error{Op: OpOpen, Code: ErrRPCFail, Err: fmt.Errorf("metadata server %s unreachable: %w", cfg.MetadataServer, err)}
	}
	return m, md, nil
}

// envClusterID is where upstream's HA client reads the master group's
// cluster id (EtcdLeaderCoordinator and RedisLeaderCoordinator
// ResolveClusterNamespace).
const envClusterID = "MC_STORE_CLUSTER_ID"

var clusterIDMu sync.Mutex

// chooseClusterID makes the process's cluster id id (see Config.ClusterID):
// "" keeps it, an unset one is set, another one is refused.
func chooseClusterID(id string) error {
	if id == "" {
		return nil
	}
	clusterIDMu.Lock()
	defer clusterIDMu.Unlock()
	switch cur := os.Getenv(envClusterID); cur {
	case id:
		return nil
	case "":
		return os.Setenv(envClusterID, id)
	default:
		return sentinelf(ErrInvalidConfig, "cluster_id %q: this process's HA clients use %q (%s; upstream reads it from the environment, so it is one per process)", id, cur, envClusterID)
	}
}

// probeTCP dials what's RPC port at addr: ErrRPCFail when nothing answers
// within timeout.
func probeTCP(op Op, what, addr string, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return &Error{Op: op, Code: ErrRPCFail, Err: fmt.Errorf("%s %s unreachable: %w", what, addr, err)}
	}
	return c.Close()
}

func setLog(level int32, dir string) error {
	if level < 0 && dir == "" {
		return nil
	}
	// One of the two places the binding changes the process environment
	// (see Config.LogLevel; the other is chooseClusterID): upstream reads MC_LOG_LEVEL once, when the
	// process's first engine starts, and sets glog's level from it, and
	// has no other way to be told; so that the first setup's own lines
	// follow the level too, it is set when the user has not set it
	// (upstream's names: INFO, WARNING, ERROR).
	if level >= 0 && level <= 2 && os.Getenv("MC_LOG_LEVEL") == "" {
		_ = os.Setenv("MC_LOG_LEVEL", strings.ToUpper(logLevels[level]))
	}
	switch rc := cabi.SetLog(level, dir); rc {
	case 0, cabi.CodeNoCgo:
		return nil // without cgo, Create refuses next with ErrNoCgo
	default:
		return &Error{Op: OpOpen, Code: ErrorCode(rc), Err: fmt.Errorf(
			"log_dir %q: not a writable directory, or the process logs elsewhere already (log_dir is chosen once per process; env MC_LOG_DIR)", dir)}
	}
}

// metadataProbeKey is the key of the probe's GET (upstream's server answers
// 404 for it, and logs nothing).
const metadataProbeKey = "mcgo/open-probe"

// probeHTTP asks an HTTP metadata server for a key nobody writes: any
// HTTP answer will do. Upstream's setup gives each metadata request 3 s and
// retries its setup 20 times, so a server that accepts connections but does
// not answer (hung, or stopped) kept Open waiting for minutes (measured:
// more than 60 s; interop/faults TestMetadataLost); with the probe, none
// within timeout fails Open with ErrRPCFail. A server that is down fails
// at once.
func probeHTTP(server string, timeout time.Duration) error {
	fail := func(err error) error {
		return &Error{Op: OpOpen, Code: ErrRPCFail, Err: fmt.Errorf("metadata server %s: %w", server, err)}
	}
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return &Error{Op: OpOpen, Code: ErrInvalidParams, Err: fmt.Errorf("metadata server %q is not a URL", server)}
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "80")
	}
	deadline := time.Now().Add(timeout)
	c, err := net.DialTimeout("tcp", host, timeout)
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	_ = c.SetDeadline(deadline)
	q := u.Query()
	q.Set("key", metadataProbeKey)
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	req := "GET " + path + "?" + q.Encode() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nConnection: close\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		return fail(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return fail(fmt.Errorf("no answer within %v: %w", timeout, err))
	}
	if !strings.HasPrefix(line, "HTTP/") {
		return fail(fmt.Errorf("answered %q, not HTTP", strings.TrimSpace(line)))
	}
	return nil
}

// c is the store's connection; a nil *Store or a zero Store has the closed
// one, so that every call on it reports ErrClosed instead of crashing.
func (s *Store) c() *conn {
	if s == nil || s.conn == nil {
		return closedConn
	}
	return s.conn
}

// policyError is the view's invalid-policy error (none on a nil Store,
// whose calls fail as closed).
func (s *Store) policyError() error {
	if s == nil {
		return nil
	}
	return s.policyErr
}

var closedConn = func() *conn {
	c := &conn{}
	c.gate.Close(func() {})
	return c
}()

func closedErr(op Op, key string) error { return &Error{Op: op, Key: key, Err: ErrClosed} }

// Config returns the configuration the store was opened with.
func (s *Store) Config() Config { return s.c().cfg }

// BackendInfo describes the backend behind every Store and transfer
// Engine of this program.
type BackendInfo struct {
	// Name is "embedded" (the in-process engine of the default build),
	// "native" (upstream Mooncake, -tags mooncake_native), or "none (built
	// without cgo)".
	Name string
	// UpstreamCommit is the upstream Mooncake commit the native library
	// was built against ("" for the embedded backend).
	UpstreamCommit string
	// Library is the native library loaded at run time (LoadNative,
	// MCGO_NATIVE_LIBRARY), "" for the backend linked into the program.
	Library string
	// Capabilities says which optional features the backend has: the
	// setup options it honours, and the calls and options that depend on
	// the upstream version.
	Capabilities Capabilities
}

// Backend describes the backend of this process: the one linked into the
// program, or the native library LoadNative (or MCGO_NATIVE_LIBRARY)
// loaded.
func Backend() BackendInfo {
	return BackendInfo{Name: cabi.BackendName(), UpstreamCommit: cabi.UpstreamCommit(),
		Library: cabi.NativePath(), Capabilities: backendCapabilities()}
}

// Why a native library was refused by LoadNative (or by the first Open,
// for one named in MCGO_NATIVE_LIBRARY).
var (
	// ErrNativeLibrary: it cannot be loaded (no such file, not a shared
	// library of this machine, a missing dependency) or lacks a function
	// of the C ABI.
	ErrNativeLibrary = cabi.ErrNativeLibrary
	// ErrNativeABI: it implements another version of the C ABI (rebuild it
	// from this module's cgo/native: make native).
	ErrNativeABI = cabi.ErrNativeABI
	// ErrNativeUpstream: it was built against an upstream commit this
	// module was not tested with (third_party/mooncake/PIN); accept it with
	// NativeOptions.AnyUpstream or MCGO_NATIVE_ANY_UPSTREAM=1.
	ErrNativeUpstream = cabi.ErrNativeUpstream
	// ErrBackendInUse: a store or an engine of another backend is open in
	// the process already.
	ErrBackendInUse = cabi.ErrBackendInUse
)

// loadConfigured loads a Config's NativeLibrary (MCGO_NATIVE_ANY_UPSTREAM=1
// accepts any upstream).
func loadConfigured(path string) error {
	if path == "" {
		return nil
	}
	return cabi.LoadNative(path, os.Getenv(cabi.EnvNativeAnyUpstream) == "1")
}

// NativeOptions are LoadNative's options.
type NativeOptions struct {
	// AnyUpstream accepts a library built against any upstream commit,
	// not only those this module was tested with.
	AnyUpstream bool
}

// LoadNative makes the native library at path (a libmcgo_native.so that
// make native builds against the Mooncake of the machine) the backend of
// every store and transfer engine of this process, in place of the one
// linked in (the embedded engine of a default build): a Go service is
// built once with go build and uses the Mooncake its container provides.
// The choice is the process's, made once: it must come before the first
// Open (ErrBackendInUse after, unless path is the library loaded already).
// The environment variable MCGO_NATIVE_LIBRARY does the same without a
// call, when the process first needs a backend.
//
// The library is refused with ErrNativeLibrary, ErrNativeABI or
// ErrNativeUpstream (wrapped, with the reason), and the process keeps its
// backend.
func LoadNative(path string, opt NativeOptions) (BackendInfo, error) {
	if err := cabi.LoadNative(path, opt.AnyUpstream); err != nil {
		return Backend(), &Error{Op: OpLoadNative, Err: err}
	}
	return Backend(), nil
}

// HealthCheck returns nil when the client is connected and its master
// answers.
func (s *Store) HealthCheck() error {
	if !s.c().gate.Enter() {
		return closedErr(OpHealthCheck, "")
	}
	rc := s.c().handle.HealthCheck()
	s.c().gate.Leave()
	return codeErr(OpHealthCheck, "", int64(rc))
}

// Hostname returns this client's segment name ("127.0.0.1:17001"), the name
// other clients use in ReplicateConfig.PreferredSegments.
func (s *Store) Hostname() (string, error) {
	if !s.c().gate.Enter() {
		return "", closedErr(OpHostname, "")
	}
	h, rc := s.c().handle.Hostname()
	s.c().gate.Leave()
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
	// SoftPinAction is upstream's soft_pin_action, which replaced
	// with_soft_pin: preserve (the default: a new object is not pinned, an
	// upserted one keeps its pin), enable or disable. WithSoftPin still
	// works: it means SoftPinEnable while the action is SoftPinPreserve.
	// SoftPinDisable needs Capabilities.SoftPinActions; without it writes
	// fail with ErrNotSupported (see Capabilities for what preserve is
	// then).
	SoftPinAction SoftPinAction
	// SoftPinTTL is how long a soft pin lasts (upstream's soft_pin_ttl_ms,
	// millisecond resolution); 0 keeps the master's default. A TTL needs
	// Capabilities.SoftPinActions, like SoftPinDisable.
	SoftPinTTL time.Duration
	// NoFReplicaNum and DFSReplicaNum ask for NVMe-oF and distributed-FS
	// replicas besides the memory ones. A cluster without such storage
	// refuses them per key: ErrInvalidParams for NoF,
	// ErrDFSServiceUnavailable for DFS (upstream at the pinned commit); the
	// embedded engine never has any (BackendCapabilities) and does the same.
	// The native backend over an upstream without DFS replicas
	// (Capabilities.DFSReplicas false) refuses a DFSReplicaNum with
	// ErrNotSupported.
	NoFReplicaNum, DFSReplicaNum int
	// PreferredNoFSegments are NoF segments tried first.
	PreferredNoFSegments []string
	// GroupIDs are upstream's group_ids: when not nil, one routing group
	// per key of each write made through the view (a single-key write takes
	// one), "" for no group; another count fails every key with
	// ErrInvalidParams. The members of a group share read leases (a lookup
	// of one leases them all), the master keeps them in one metadata shard
	// and evicts them together; an existing object's group cannot change
	// (an upsert naming another group fails with ErrInvalidParams).
	GroupIDs []string
	// DataType is upstream's ObjectDataType, a label the master keeps with
	// the object.
	DataType ObjectDataType
}

// ObjectDataType is upstream's ObjectDataType.
type ObjectDataType int32

// Object data types (10-255 are reserved upstream and refused).
const (
	DataUnknown        ObjectDataType = 0
	DataKVCache        ObjectDataType = 1
	DataTensor         ObjectDataType = 2
	DataWeight         ObjectDataType = 3
	DataSample         ObjectDataType = 4
	DataActivation     ObjectDataType = 5
	DataGradient       ObjectDataType = 6
	DataOptimizerState ObjectDataType = 7
	DataMetadata       ObjectDataType = 8
	DataGeneral        ObjectDataType = 9
)

// SoftPinAction is upstream's SoftPinAction.
type SoftPinAction int32

// Soft-pin actions.
const (
	SoftPinPreserve SoftPinAction = 0
	SoftPinEnable   SoftPinAction = 1
	SoftPinDisable  SoftPinAction = 2
)

// WithReplicateConfig returns a view of s whose puts and upserts use rc. The
// view shares s's connection; closing either closes both. Views are cheap:
// make one per policy and reuse it.
func (s *Store) WithReplicateConfig(rc ReplicateConfig) *Store {
	v := &Store{conn: s.c()}
	v.setReplicate(rc)
	return v
}

// ReplicateConfig returns the placement policy of this view.
func (s *Store) ReplicateConfig() ReplicateConfig {
	if s == nil {
		return ReplicateConfig{}
	}
	return s.policy
}

func (s *Store) setReplicate(rc ReplicateConfig) {
	rc.PreferredSegments = append([]string(nil), rc.PreferredSegments...)
	for _, seg := range rc.PreferredSegments {
		if seg == "" || strings.IndexByte(seg, 0) >= 0 {
			s.policyErr = fmt.Errorf("replicate config: preferred segment %q is empty or contains NUL", seg)
		}
	}
	if rc.ReplicaNum < 0 {
		s.policyErr = fmt.Errorf("replicate config: replica_num %d is negative", rc.ReplicaNum)
	}
	rc.PreferredNoFSegments = append([]string(nil), rc.PreferredNoFSegments...)
	for _, seg := range rc.PreferredNoFSegments {
		if seg == "" || strings.IndexByte(seg, 0) >= 0 {
			s.policyErr = fmt.Errorf("replicate config: preferred NoF segment %q is empty or contains NUL", seg)
		}
	}
	switch {
	case rc.NoFReplicaNum < 0 || rc.DFSReplicaNum < 0:
		s.policyErr = fmt.Errorf("replicate config: negative NoF (%d) or DFS (%d) replica count", rc.NoFReplicaNum, rc.DFSReplicaNum)
	case rc.SoftPinAction < SoftPinPreserve || rc.SoftPinAction > SoftPinDisable:
		s.policyErr = fmt.Errorf("replicate config: soft pin action %d: want preserve, enable or disable", rc.SoftPinAction)
	case rc.SoftPinTTL < 0 || (rc.SoftPinTTL > 0 && rc.SoftPinTTL < time.Millisecond):
		s.policyErr = fmt.Errorf("replicate config: soft pin TTL %v: want 0 (the default) or at least 1 ms", rc.SoftPinTTL)
	case rc.DataType < DataUnknown || rc.DataType > DataGeneral:
		s.policyErr = fmt.Errorf("replicate config: data type %d: want 0 to 9", rc.DataType)
	}
	if rc.GroupIDs != nil {
		rc.GroupIDs = append([]string{}, rc.GroupIDs...)
		for _, g := range rc.GroupIDs {
			if strings.IndexByte(g, 0) >= 0 {
				s.policyErr = fmt.Errorf("replicate config: group id %q contains NUL", g)
			}
		}
	}
	n := rc.ReplicaNum
	if n <= 0 {
		n = 1
	}
	s.policy = rc
	s.cpolicy = cstore.Replicate{
		ReplicaNum:   uint64(n),
		SoftPin:      rc.WithSoftPin,
		HardPin:      rc.WithHardPin,
		SameNode:     rc.PreferAllocInSameNode,
		SegmentCount: uint32(len(rc.PreferredSegments)),
		NoFReplicas:  uint64(max(rc.NoFReplicaNum, 0)),
		DFSReplicas:  uint64(max(rc.DFSReplicaNum, 0)),
		SoftPinAct:   int32(rc.SoftPinAction),
		HasPinTTL:    rc.SoftPinTTL > 0,
		PinTTLMs:     uint64(rc.SoftPinTTL / time.Millisecond),
		NoFCount:     uint32(len(rc.PreferredNoFSegments)),
	}
	s.cpolicy.Segments, _ = cstore.PackNames(rc.PreferredSegments)
	s.cpolicy.NoFSegments, _ = cstore.PackNames(rc.PreferredNoFSegments)
	if rc.GroupIDs != nil {
		s.cpolicy.HasGroups = true
		s.cpolicy.Groups, s.cpolicy.GroupCount = cstore.PackNames(rc.GroupIDs)
	}
	s.cpolicy.DataType = int32(rc.DataType)
}

// codeErr turns a single-call return code into an error (nil when rc >= 0).
func codeErr(op Op, key string, rc int64) error {
	if rc >= 0 {
		return nil
	}
	if rc == cabi.CodeNoCgo {
		return &Error{Op: op, Key: key, Code: ErrNotSupported, Err: ErrNoCgo}
	}
	e := &Error{Op: op, Key: key, Code: codeOf(rc)}
	if e.Code == ErrInvalidParams {
		switch {
		case op == OpRemoveByRegex:
			e.Err = ErrPatternRefused
		case len(key) > MaxKeyLen:
			e.Err = ErrKeyTooLong
		}
	}
	return e
}
