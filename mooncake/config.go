package mooncake

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mooncake-go/mooncake-go/internal/cabi"
	"github.com/mooncake-go/mooncake-go/internal/cabi/cstore"
	"github.com/mooncake-go/mooncake-go/internal/endpoints"
)

// Config holds a store client's settings: the arguments of Mooncake's
// setup(). The JSON names are those of Mooncake's and SGLang's config files,
// so an operator's existing file loads unchanged (unknown keys are ignored).
type Config struct {
	// LocalHostname is the address peers use to reach this client
	// ("127.0.0.1", or "host:port"). Env MOONCAKE_LOCAL_HOSTNAME
	// (legacy LOCAL_HOSTNAME). Default "localhost".
	LocalHostname string `json:"local_hostname"`
	// MetadataServer is the transfer engine's metadata service:
	// "http://127.0.0.1:8080/metadata", "P2PHANDSHAKE",
	// "etcd://h1:2379;h2:2379" (or the endpoints alone, as upstream reads
	// them) or "redis://host:6379" (transfer.Config.MetadataServer has the
	// details). Env MOONCAKE_TE_META_DATA_SERVER. Default "P2PHANDSHAKE".
	MetadataServer string `json:"metadata_server"`
	// GlobalSegmentSize is how much memory this client mounts into the
	// cluster (0 = none). Env MOONCAKE_GLOBAL_SEGMENT_SIZE. Default 4gb.
	GlobalSegmentSize Size `json:"global_segment_size"`
	// LocalBufferSize is the client's staging buffer, used by the copying
	// Put/Get. Env MOONCAKE_LOCAL_BUFFER_SIZE. Default 16mb. 0 = none: the
	// copying calls then fail with ErrInvalidParams, as upstream's do. With
	// GlobalSegmentSize 0 too, the client mounts and registers nothing and
	// only asks (existence checks, zero-copy calls into memory it
	// registers): a router's query-only client (docs/prefix.md).
	LocalBufferSize Size `json:"local_buffer_size"`
	// Protocol is "tcp" or "rdma". Env MOONCAKE_PROTOCOL. Default "rdma".
	Protocol string `json:"protocol"`
	// DeviceName lists RDMA devices ("" = auto). Env MOONCAKE_DEVICE.
	DeviceName string `json:"device_name"`
	// MasterServerAddress is the master's RPC address ("127.0.0.1:50051"),
	// or, for an HA master group, where its leader is elected:
	// "etcd://h1:2379;h2:2379", "redis://host:6379" or
	// "k8s://namespace/lease" (docs/ha.md; the backend must have been
	// built with it: Capabilities). Env MOONCAKE_MASTER. Required. With
	// the embedded engine it names an in-process cluster: stores opened
	// with the same address share objects.
	MasterServerAddress string `json:"master_server_address"`
	// ClusterID names the HA master group whose leader an HA
	// MasterServerAddress finds: its masters' --cluster_id. Upstream's
	// client reads it from the environment (MC_STORE_CLUSTER_ID, default
	// "mooncake_cluster"), so it is process-wide: Open sets
	// MC_STORE_CLUSTER_ID when it is unset, and refuses (ErrInvalidConfig)
	// a ClusterID other than the one the process has. "" keeps the
	// process's. Only an HA master address reads it.
	ClusterID string `json:"cluster_id"`
	// LogLevel is the least severity upstream's client writes to its log
	// (glog): "info", "warning", "error" or "fatal", in any case; "" keeps
	// upstream's (info, or env MC_LOG_LEVEL). glog is process-wide: the
	// level of the latest Open applies to every client and engine of the
	// process. Upstream takes the level of its first engine only from the
	// environment, so Open sets MC_LOG_LEVEL in the process environment
	// when it is unset and LogLevel is info, warning or error: the one
	// change the binding makes to the environment besides ClusterID's.
	LogLevel string `json:"log_level"`
	// LogDir sends upstream's log to files in this directory instead of
	// stderr (ERROR and above still reach stderr); "" keeps stderr, or
	// upstream's MC_LOG_DIR. Process-wide and chosen once: an Open that
	// names another directory than the one chosen fails with
	// ErrInvalidParams. The embedded engine writes no log, so both fields
	// only need to be valid there.
	LogDir string `json:"log_dir"`

	// Upstream's further setup options; zero values keep its defaults.
	// Capabilities says which the backend honours: the embedded engine
	// accepts them and honours none.

	// TenantID names the client's tenant ("" is "default"). Upstream's
	// master keeps a namespace per tenant only when it runs with
	// --enable_multi_tenants and its quota table knows the tenant; by
	// default every tenant shares the default namespace (measured at the
	// pinned commit; the embedded engine has that one namespace always).
	TenantID string `json:"tenant_id"`
	// EnableSSDOffload lets the client offload objects to SSDOffloadPath.
	EnableSSDOffload bool   `json:"enable_ssd_offload"`
	SSDOffloadPath   string `json:"ssd_offload_path"`
	// EnableClientHTTPServer starts the client's own HTTP server (upstream's
	// client metrics) on ClientHTTPPort (0: upstream's 9300). Upstream
	// listens on every address.
	EnableClientHTTPServer bool `json:"enable_client_http_server"`
	ClientHTTPPort         int  `json:"client_http_port"`

	// ConnectTimeout bounds how long Open waits for the master's RPC port
	// and an HTTP metadata server to answer (native backend) before it
	// fails with ErrRPCFail; 0 means DefaultConnectTimeout. Upstream's own
	// setup retries an absent master for about 90 s and a hung metadata
	// server for minutes. The binding's own setting, not in upstream's
	// configuration file.
	ConnectTimeout time.Duration `json:"-"`

	// NativeLibrary, when set, is the libmcgo_native.so the process loads
	// as its backend before this store opens (LoadNative, whose rules
	// apply: the process's first backend is its only one). The binding's
	// own setting, not in upstream's configuration file.
	NativeLibrary string `json:"-"`

	// Combining says whether single-key calls of this client that overlap
	// in time cross into C together, as one batch call (docs/combining.md):
	// Get, AppendGet, GetInto, Put, PutFrom, Upsert, UpsertFrom, IsExist
	// and Remove. Each caller still gets exactly its own result and error,
	// and a call that overlaps no other makes its single call at once. On
	// by default (CombiningDefault): measured against real Mooncake it
	// never lost (docs/benchmarks.md, view 1). With it on, Open registers
	// 12 MiB of staging for the copying calls (none when LocalBufferSize is
	// under 4 KiB: such a client's copying calls never combine);
	// CombiningOff turns it off.
	// The binding's own setting, not in upstream's configuration file.
	Combining CombiningMode `json:"-"`

	// BatchWriteKeys and BatchWriteBytes bound the keys and the bytes of
	// zero-copy batch writes (BatchPutFrom, BatchUpsertFrom and their Raw
	// and multi-buffer forms) this client has in upstream at once; a batch
	// that does not fit waits in Go, in arrival order, and its latency in
	// Stats includes the wait. A batch larger than a bound goes alone. 0
	// means the default (DefaultBatchWriteKeys, DefaultBatchWriteBytes); a
	// negative value sets no bound. Upstream's client and master do less
	// per second with many batch puts in flight than with a few: with the
	// defaults, 64 goroutines each putting 1,024 x 4 KiB objects moved
	// 1.1-1.2x as many keys per second as unbounded, and 64 putting HiCache
	// requests of 128 pages (9 MiB each) 1.9-2.0x, while batches of 8 keys
	// from 64 goroutines lost a quarter to a third when held to four calls
	// in flight: so the bounds count keys and bytes, not calls
	// (docs/combining.md). Reads do not degrade that way and are never
	// bounded. One side effect, measured: upstream's client holds a
	// connection to the master per concurrent RPC, opening more as its
	// concurrency rises, and a loaded master accepts new connections slowly
	// (its acceptor shares a thread with request handlers); so after writes
	// held to a few at a time, a first burst of many concurrent batch reads
	// can wait up to seconds for its new connections. The binding's own
	// settings, not in upstream's configuration file.
	BatchWriteKeys  int   `json:"-"`
	BatchWriteBytes int64 `json:"-"`
}

// The defaults of Config.BatchWriteKeys and BatchWriteBytes: four batches
// of 1,024 keys, where 64 goroutines' 4 KiB puts ran fastest, and about
// seven HiCache requests of 128 pages of 69 KiB, where 64 goroutines'
// HiCache sets did.
const (
	DefaultBatchWriteKeys  = 4096
	DefaultBatchWriteBytes = 64 << 20
)

// batchWriteBounds are the bounds Config.BatchWriteKeys and
// BatchWriteBytes set (0: none).
func (c Config) batchWriteBounds() (keys, bytes int64) {
	bound := func(v, def int64) int64 {
		switch {
		case v < 0:
			return 0
		case v == 0:
			return def
		}
		return v
	}
	return bound(int64(c.BatchWriteKeys), DefaultBatchWriteKeys), bound(c.BatchWriteBytes, DefaultBatchWriteBytes)
}

// CombiningMode is Config.Combining: the transfer engine's type, so that
// one setting reads the same on both.
type CombiningMode = transfer.CombiningMode

// Combining modes. For a store the default is on; for a transfer engine
// (transfer.Config.Combining) it is off.
const (
	CombiningDefault = transfer.CombiningDefault // a store: on
	CombiningOn      = transfer.CombiningOn
	CombiningOff     = transfer.CombiningOff
)

// combining reports whether the config turns combining on.
func (c Config) combining() bool { return c.Combining != CombiningOff }

// DefaultConnectTimeout is Config.ConnectTimeout's default.
const DefaultConnectTimeout = 5 * time.Second

func (c Config) connectTimeout() time.Duration {
	if c.ConnectTimeout <= 0 {
		return DefaultConnectTimeout
	}
	return c.ConnectTimeout
}

// Capabilities say what the linked backend has of the optional features.
//
// The setup options (the first five) are honoured by the native backend,
// which passes them to upstream's setup, and by none on the embedded engine
// (one namespace for every tenant, no SSD, no HTTP server, no NoF or DFS
// storage), which accepts them all the same so that one config serves
// both.
//
// The rest are calls and options that upstream versions differ in: the
// native backend has those of the upstream it was built against (found
// when make native configures it; third_party/mooncake/PIN lists the
// tested versions, and the README what each has), the embedded engine has
// them all. Where one is false, its calls fail with ErrNotSupported, as a
// whole for a batch, and so does every write whose ReplicateConfig asks for
// an option it names.
type Capabilities struct {
	Tenants          bool // Config.TenantID reaches the master (see TenantID)
	SSDOffload       bool // Config.EnableSSDOffload
	ClientHTTPServer bool // Config.EnableClientHTTPServer
	NoFReplicas      bool // ReplicateConfig.NoFReplicaNum (the embedded engine refuses it)
	// DFSReplicas: ReplicateConfig.DFSReplicaNum reaches upstream (the
	// embedded engine refuses it as a cluster without DFS storage does;
	// the native backend over an upstream without it, v0.3.12.post1,
	// fails with ErrNotSupported).
	DFSReplicas bool

	// Sessions: StartGetSession and StartPutSession (and so the sessions'
	// range calls).
	Sessions bool
	// MultiBufferUpsert: BatchUpsertFrom with a buffer list per key, and
	// Raw.BatchUpsertFromMultiBuffers.
	MultiBufferUpsert bool
	// SoftPinActions: ReplicateConfig.SoftPinAction SoftPinDisable and
	// SoftPinTTL. Without them SoftPinEnable (and WithSoftPin) pins as
	// ever, and SoftPinPreserve is upstream's older "no soft pin": the same
	// for a put, but an upsert that keeps an object's size unpins it.
	SoftPinActions bool
	// UnmountLocalDisk: Store.UnmountLocalDiskSegment.
	UnmountLocalDisk bool

	// The address forms the backend can connect through, besides one
	// master at host:port and P2PHANDSHAKE (docs/ha.md): an HA master's
	// leader found through etcd, Redis or a Kubernetes lease
	// (MasterServerAddress "etcd://...", "redis://...", "k8s://..."), and
	// the transfer engine's metadata in an HTTP server, etcd or Redis
	// (MetadataServer, and transfer.Config.MetadataServer). The native
	// backend has those its upstream was built with (STORE_USE_ETCD,
	// STORE_USE_REDIS, STORE_USE_K8S_LEASE, USE_HTTP, USE_ETCD, USE_REDIS);
	// Open refuses the others with ErrNotSupported (transfer.Open with
	// transfer.ErrNotImplemented), where upstream would abort the process.
	// The embedded engine has them all: its masters and metadata are names.
	MasterEtcd, MasterRedis, MasterK8s        bool
	MetadataHTTP, MetadataEtcd, MetadataRedis bool
}

// String lists the capabilities the backend has and those it lacks, by
// their field names: "has Tenants, Sessions; lacks SSDOffload".
func (c Capabilities) String() string {
	var has, lacks []string
	for _, f := range []struct {
		name string
		on   bool
	}{
		{"Tenants", c.Tenants}, {"SSDOffload", c.SSDOffload}, {"ClientHTTPServer", c.ClientHTTPServer},
		{"NoFReplicas", c.NoFReplicas}, {"DFSReplicas", c.DFSReplicas}, {"Sessions", c.Sessions},
		{"MultiBufferUpsert", c.MultiBufferUpsert}, {"SoftPinActions", c.SoftPinActions},
		{"UnmountLocalDisk", c.UnmountLocalDisk}, {"MasterEtcd", c.MasterEtcd}, {"MasterRedis", c.MasterRedis},
		{"MasterK8s", c.MasterK8s}, {"MetadataHTTP", c.MetadataHTTP}, {"MetadataEtcd", c.MetadataEtcd},
		{"MetadataRedis", c.MetadataRedis},
	} {
		if f.on {
			has = append(has, f.name)
		} else {
			lacks = append(lacks, f.name)
		}
	}
	list := func(l []string) string {
		if len(l) == 0 {
			return "none"
		}
		return strings.Join(l, ", ")
	}
	return "has " + list(has) + "; lacks " + list(lacks)
}

func backendCapabilities() Capabilities {
	c, forms := cstore.Capabilities(), cabi.ConnectForms()
	has := func(bit uint32) bool { return c&bit != 0 }
	return Capabilities{
		Tenants: has(cstore.CapTenants), SSDOffload: has(cstore.CapSSDOffload),
		ClientHTTPServer: has(cstore.CapClientHTTPServer), NoFReplicas: has(cstore.CapNoFReplicas),
		DFSReplicas: has(cstore.CapDFSReplicas), Sessions: has(cstore.CapSessions),
		MultiBufferUpsert: has(cstore.CapMultiBufferUpsert), SoftPinActions: has(cstore.CapSoftPinActions),
		UnmountLocalDisk: has(cstore.CapUnmountLocalDisk),
		MasterEtcd:       forms&cabi.ConnectMasterEtcd != 0, MasterRedis: forms&cabi.ConnectMasterRedis != 0,
		MasterK8s: forms&cabi.ConnectMasterK8s != 0, MetadataHTTP: forms&cabi.ConnectMetadataHTTP != 0,
		MetadataEtcd: forms&cabi.ConnectMetadataEtcd != 0, MetadataRedis: forms&cabi.ConnectMetadataRedis != 0,
	}
}

// logLevels are the values of Config.LogLevel, in glog's order.
var logLevels = []string{"info", "warning", "error", "fatal"}

// logLevel is LogLevel as glog's severity (-1 for "").
func (c Config) logLevel() (int32, bool) {
	if c.LogLevel == "" {
		return -1, true
	}
	for i, l := range logLevels {
		if strings.EqualFold(c.LogLevel, l) {
			return int32(i), true
		}
	}
	return 0, false
}

// Defaults, as in Mooncake's and SGLang's configuration.
const (
	DefaultLocalHostname     = "localhost"
	DefaultMetadataServer    = "P2PHANDSHAKE"
	DefaultGlobalSegmentSize = Size(4 << 30)
	DefaultLocalBufferSize   = Size(16 << 20)
	DefaultProtocol          = "rdma"
)

// DefaultConfig returns a Config with every default set and no master.
func DefaultConfig() Config {
	return Config{
		LocalHostname:     DefaultLocalHostname,
		MetadataServer:    DefaultMetadataServer,
		GlobalSegmentSize: DefaultGlobalSegmentSize,
		LocalBufferSize:   DefaultLocalBufferSize,
		Protocol:          DefaultProtocol,
	}
}

// Environment variables read by ConfigFromEnv.
const (
	EnvConfigPath        = "MOONCAKE_CONFIG_PATH"
	EnvLocalHostname     = "MOONCAKE_LOCAL_HOSTNAME"
	EnvLegacyHostname    = "LOCAL_HOSTNAME"
	EnvMetadataServer    = "MOONCAKE_TE_META_DATA_SERVER"
	EnvGlobalSegmentSize = "MOONCAKE_GLOBAL_SEGMENT_SIZE"
	EnvLocalBufferSize   = "MOONCAKE_LOCAL_BUFFER_SIZE"
	EnvProtocol          = "MOONCAKE_PROTOCOL"
	EnvDevice            = "MOONCAKE_DEVICE"
	EnvMaster            = "MOONCAKE_MASTER"
)

// ParseConfig decodes a JSON config. Missing fields take their defaults;
// sizes may be numbers or strings such as "4gb".
func ParseConfig(data []byte) (Config, error) {
	cfg := DefaultConfig()
	if err := json.Unmarshal(data, &cfg); err != nil {
		return Config{}, sentinelf(ErrInvalidConfig, "mooncake: config: %w", err)
	}
	return cfg, nil
}

// LoadConfigFile reads a JSON config file (see ParseConfig).
func LoadConfigFile(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("mooncake: config: %w", err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return Config{}, sentinelf(ErrInvalidConfig, "mooncake: config file %s: %w", path, errors.Unwrap(err))
	}
	return cfg, nil
}

// ConfigFromEnv builds a Config the way Mooncake's Python client does: from
// the JSON file named by MOONCAKE_CONFIG_PATH when that is set, otherwise
// from the MOONCAKE_* variables (MOONCAKE_MASTER is then required). Unset
// variables keep their defaults.
func ConfigFromEnv() (Config, error) {
	return configFromLookup(os.LookupEnv)
}

func configFromLookup(lookup func(string) (string, bool)) (Config, error) {
	if p, ok := lookup(EnvConfigPath); ok && p != "" {
		return LoadConfigFile(p)
	}
	cfg := DefaultConfig()
	str := func(dst *string, names ...string) {
		for _, n := range names {
			if v, ok := lookup(n); ok {
				*dst = v
				return
			}
		}
	}
	str(&cfg.LocalHostname, EnvLocalHostname, EnvLegacyHostname)
	str(&cfg.MetadataServer, EnvMetadataServer)
	str(&cfg.Protocol, EnvProtocol)
	str(&cfg.DeviceName, EnvDevice)
	str(&cfg.MasterServerAddress, EnvMaster)
	for _, s := range []struct {
		name string
		dst  *Size
	}{{EnvGlobalSegmentSize, &cfg.GlobalSegmentSize}, {EnvLocalBufferSize, &cfg.LocalBufferSize}} {
		if v, ok := lookup(s.name); ok {
			n, err := ParseSize(v)
			if err != nil {
				return Config{}, sentinelf(ErrInvalidConfig, "mooncake: %s: %w", s.name, err)
			}
			*s.dst = n
		}
	}
	if cfg.MasterServerAddress == "" {
		return Config{}, sentinelf(ErrInvalidConfig, "mooncake: neither %s nor %s is set", EnvMaster, EnvConfigPath)
	}
	return cfg, nil
}

// Validate checks the fields Open needs. Its errors match ErrInvalidConfig.
// A string with a NUL byte is refused: C would cut it there, and two
// different configs would name the same cluster or host.
func (c Config) Validate() error {
	for _, f := range []struct{ name, v string }{
		{"local_hostname", c.LocalHostname}, {"metadata_server", c.MetadataServer}, {"protocol", c.Protocol},
		{"device_name", c.DeviceName}, {"master_server_address", c.MasterServerAddress}, {"log_dir", c.LogDir},
		{"tenant_id", c.TenantID}, {"ssd_offload_path", c.SSDOffloadPath}, {"cluster_id", c.ClusterID},
	} {
		if strings.IndexByte(f.v, 0) >= 0 {
			return sentinelf(ErrInvalidConfig, "%s %q contains a NUL byte", f.name, f.v)
		}
		if !utf8.ValidString(f.v) {
			// Upstream would carry it as U+FFFD replacement characters.
			return sentinelf(ErrInvalidConfig, "%s %q is not valid UTF-8", f.name, f.v)
		}
	}
	switch {
	case c.MasterServerAddress == "":
		return sentinelf(ErrInvalidConfig, "master_server_address is empty")
	case c.Protocol != "tcp" && c.Protocol != "rdma":
		return sentinelf(ErrInvalidConfig, "protocol %q: want \"tcp\" or \"rdma\"", c.Protocol)
	case c.LocalHostname == "":
		return sentinelf(ErrInvalidConfig, "local_hostname is empty")
	case c.MetadataServer == "":
		return sentinelf(ErrInvalidConfig, "metadata_server is empty")
	}
	// The HA forms are checked on every backend (the embedded engine's
	// masters are names, so one master's address is checked by Open, on
	// the native backend only).
	if strings.Contains(c.MasterServerAddress, "://") {
		if _, err := endpoints.Master(c.MasterServerAddress); err != nil {
			return sentinelf(ErrInvalidConfig, "master_server_address: %v", err)
		}
	}
	if _, err := endpoints.Metadata(c.MetadataServer); err != nil {
		return sentinelf(ErrInvalidConfig, "metadata_server: %v", err)
	}
	if c.ClientHTTPPort < 0 || c.ClientHTTPPort > 65535 {
		return sentinelf(ErrInvalidConfig, "client_http_port %d: want 0 (the default) to 65535", c.ClientHTTPPort)
	}
	if _, ok := c.logLevel(); !ok {
		return sentinelf(ErrInvalidConfig, "log_level %q: want one of %q (any case)", c.LogLevel, logLevels)
	}
	if !c.Combining.Valid() {
		return sentinelf(ErrInvalidConfig, "combining mode %d: want CombiningDefault, CombiningOn or CombiningOff", c.Combining)
	}
	if c.ConnectTimeout < 0 {
		return sentinelf(ErrInvalidConfig, "connect timeout %v is negative", c.ConnectTimeout)
	}
	return nil
}

// Size is a byte count. In JSON and environment variables it is an integer
// or a string with a binary unit, as Mooncake writes them: "4gb" is 4 GiB.
type Size uint64

// ParseSize parses "4294967296", "4gb", "4 GB", "512mb", "16MiB", "1t".
// Units are powers of 1024: b, k/kb/kib, m/mb/mib, g/gb/gib, t/tb/tib.
// The number must be a non-negative integer.
func ParseSize(s string) (Size, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" {
		return 0, sentinelf(ErrInvalidSize, "size %q: empty", s)
	}
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') {
		i--
	}
	num, unit := strings.TrimSpace(t[:i]), strings.TrimSpace(t[i:])
	var shift uint
	switch unit {
	case "", "b":
	case "k", "kb", "kib":
		shift = 10
	case "m", "mb", "mib":
		shift = 20
	case "g", "gb", "gib":
		shift = 30
	case "t", "tb", "tib":
		shift = 40
	default:
		return 0, sentinelf(ErrInvalidSize, "size %q: unknown unit %q (want b, kb, mb, gb or tb)", s, unit)
	}
	if num == "" {
		return 0, sentinelf(ErrInvalidSize, "size %q: no number", s)
	}
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil {
		return 0, sentinelf(ErrInvalidSize, "size %q: %q is not a non-negative integer", s, num)
	}
	if n > math.MaxUint64>>shift {
		return 0, sentinelf(ErrInvalidSize, "size %q: overflows 64 bits", s)
	}
	return Size(n << shift), nil
}

// UnmarshalJSON accepts a JSON number or a string for ParseSize.
func (z *Size) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return sentinelf(ErrInvalidSize, "size %s: %w", b, err)
		}
		n, err := ParseSize(s)
		if err != nil {
			return err
		}
		*z = n
		return nil
	}
	var n uint64
	if err := json.Unmarshal(b, &n); err != nil {
		return sentinelf(ErrInvalidSize, "size %s: want a non-negative integer or a string like \"4gb\"", b)
	}
	*z = Size(n)
	return nil
}

// String formats the size with the largest exact binary unit: "4gb".
func (z Size) String() string {
	n := uint64(z)
	for _, u := range []struct {
		shift uint
		name  string
	}{{40, "tb"}, {30, "gb"}, {20, "mb"}, {10, "kb"}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatUint(n>>u.shift, 10) + u.name
		}
	}
	return strconv.FormatUint(n, 10)
}
