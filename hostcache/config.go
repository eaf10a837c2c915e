package hostcache

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// Environment variables and defaults used by SGLang's Mooncake backend
// (environ.py, mooncake_store.py). The MOONCAKE_* names are the ones
// package mooncake reads too; the SGLang* ones are SGLang's own (mooncake's
// EnvConfigPath and EnvLocalBufferSize are Mooncake's MOONCAKE_CONFIG_PATH
// and MOONCAKE_LOCAL_BUFFER_SIZE). Package hostcache/connect turns a
// StoreConfig into a mooncake.Config.
const (
	EnvSGLangConfigPath      = "SGLANG_HICACHE_MOONCAKE_CONFIG_PATH"
	EnvMaster                = "MOONCAKE_MASTER"
	EnvClient                = "MOONCAKE_CLIENT"
	EnvLocalHostname         = "MOONCAKE_LOCAL_HOSTNAME"
	EnvLegacyHostname        = "LOCAL_HOSTNAME"
	EnvMetadataServer        = "MOONCAKE_TE_META_DATA_SERVER"
	EnvGlobalSegmentSize     = "MOONCAKE_GLOBAL_SEGMENT_SIZE"
	EnvProtocol              = "MOONCAKE_PROTOCOL"
	EnvDevice                = "MOONCAKE_DEVICE"
	EnvMasterMetricsPort     = "MOONCAKE_MASTER_METRICS_PORT"
	EnvCheckServer           = "MOONCAKE_CHECK_SERVER"
	EnvStandalone            = "MOONCAKE_STANDALONE_STORAGE"
	EnvSSDOffload            = "MOONCAKE_ENABLE_SSD_OFFLOAD"
	EnvSSDOffloadPath        = "MOONCAKE_OFFLOAD_FILE_STORAGE_PATH"
	EnvTenantID              = "MOONCAKE_TENANT_ID"
	EnvSGLangLocalBufferSize = "SGLANG_MOONCAKE_LOCAL_BUFFER_SIZE"

	DefaultLocalHostname     = "localhost"
	DefaultMetadataServer    = "P2PHANDSHAKE"
	defaultGlobalSegmentSize = "4gb"
	DefaultProtocol          = "rdma"
	DefaultMasterMetricsPort = 9003
	DefaultTenantID          = "default"
	DefaultLocalBufferSize   = 16 << 20
)

// ConfigSource says where a StoreConfig came from.
type ConfigSource string

// Config sources in precedence order.
const (
	SourceExtraConfig ConfigSource = "extra_config"
	SourceFile        ConfigSource = "file"
	SourceEnv         ConfigSource = "env"
)

// StoreConfig is SGLang's MooncakeStoreConfig plus the local buffer size.
type StoreConfig struct {
	LocalHostname       string
	MetadataServer      string
	GlobalSegmentSize   uint64 // whole-node size; see PerRankSegmentSize
	Protocol            string
	DeviceName          string
	MasterServerAddress string
	MasterMetricsPort   int
	CheckServer         bool
	StandaloneStorage   bool
	ClientServerAddress string
	EnableSSDOffload    bool
	SSDOffloadPath      string // "" when unset
	TenantID            string
	LocalBufferSize     uint64
	Source              ConfigSource
}

// PerRankSegmentSize is global_segment_size // (tp_size * pp_size) (newest
// SGLang; PR-era divided by tp_size only — pass ppSize 1 for that).
func (c StoreConfig) PerRankSegmentSize(tpSize, ppSize int) uint64 {
	d := uint64(max(tpSize, 1)) * uint64(max(ppSize, 1))
	return c.GlobalSegmentSize / d
}

// ResolveDeviceName returns the device list for tpRank: device_name as is,
// or, when it is a JSON object (starts with "{"), the entry for the rank's
// string key ("" when missing or malformed).
func (c StoreConfig) ResolveDeviceName(tpRank int) string {
	d := c.DeviceName
	if !strings.HasPrefix(strings.TrimSpace(d), "{") {
		return d
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(d), &m); err != nil {
		return ""
	}
	if v, ok := m[strconv.Itoa(tpRank)].(string); ok {
		return v
	}
	return ""
}

// MasterHost is the host part of master_server_address (text before the
// first ":"), used for the check_server probe.
func (c StoreConfig) MasterHost() string {
	h, _, _ := strings.Cut(c.MasterServerAddress, ":")
	return h
}

// SegmentsURL is the master's segment listing that SGLang polls when
// check_server is set (http://{master host}:{metrics port}/get_all_segments;
// an empty body means the master is not ready yet).
func (c StoreConfig) SegmentsURL() string {
	return fmt.Sprintf("http://%s:%d/get_all_segments", c.MasterHost(), c.MasterMetricsPort)
}

// Getenv looks up an environment variable (os.LookupEnv in production).
type Getenv func(name string) (string, bool)

func cfgErr(field, format string, args ...any) error {
	return &ConfigError{What: "mooncake config", Field: field, Reason: fmt.Sprintf(format, args...)}
}

// ParseGlobalSegmentSize parses global_segment_size like SGLang: an integer
// is used as is; a string is trimmed and lower-cased, and "<n>gb" means
// n GiB (n an integer); any other string must be an integer ("4g", "512mb"
// and "4.5gb" are errors). A JSON number is accepted when it is integral
// (float values are truncated as Python int() does). Negative sizes are
// rejected.
func ParseGlobalSegmentSize(v any) (uint64, error) {
	switch x := v.(type) {
	case int:
		return nonNeg(int64(x))
	case int64:
		return nonNeg(x)
	case uint64:
		return x, nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return nonNeg(i)
		}
		f, err := x.Float64()
		if err != nil {
			return 0, cfgErr("global_segment_size", "%q is not a number", x.String())
		}
		return ParseGlobalSegmentSize(f)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x >= 1<<63 {
			return 0, cfgErr("global_segment_size", "%v is not a valid size", x)
		}
		return uint64(x), nil
	case string:
		s := strings.ToLower(strings.TrimSpace(x))
		if num, ok := strings.CutSuffix(s, "gb"); ok {
			num = strings.TrimSpace(num)
			if num == "" {
				return 0, cfgErr("global_segment_size", "missing number before 'gb' in %q", x)
			}
			n, err := pyInt(num)
			if err != nil {
				return 0, cfgErr("global_segment_size", "%q: %v", x, err)
			}
			if n < 0 || n > math.MaxInt64>>30 {
				return 0, cfgErr("global_segment_size", "%q is out of range", x)
			}
			return uint64(n) << 30, nil
		}
		n, err := pyInt(s)
		if err != nil {
			return 0, cfgErr("global_segment_size", "%q: %v (use a byte count or \"<n>gb\")", x, err)
		}
		return nonNeg(n)
	case nil:
		return 0, cfgErr("global_segment_size", "null")
	}
	return 0, cfgErr("global_segment_size", "unsupported type %T", v)
}

func nonNeg(n int64) (uint64, error) {
	if n < 0 {
		return 0, cfgErr("global_segment_size", "negative size %d", n)
	}
	return uint64(n), nil
}

// pyInt parses a decimal integer like Python int(str): optional surrounding
// whitespace, optional sign, digits with single underscores between them.
func pyInt(s string) (int64, error) {
	s = strings.TrimSpace(s)
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 || body == "" || body[0] == '_' || body[len(body)-1] == '_' || strings.Contains(body, "__") {
		return 0, fmt.Errorf("invalid literal for int(): %q", s)
	}
	clean := strings.ReplaceAll(s, "_", "")
	n, err := strconv.ParseInt(clean, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid literal for int(): %q", s)
	}
	return n, nil
}

// envBool parses SGLang EnvBool values (case-insensitive true/1/yes/y,
// false/0/no/n); anything else falls back to the default, as SGLang does
// (with a warning there).
func envBool(getenv Getenv, name string, def bool) bool {
	v, ok := getenv(name)
	if !ok {
		return def
	}
	if b, ok := parseBoolWord(v); ok {
		return b
	}
	return def
}

func parseBoolWord(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "true", "1", "yes", "y":
		return true, true
	case "false", "0", "no", "n":
		return false, true
	}
	return false, false
}

func envStr(getenv Getenv, name, def string) string {
	if v, ok := getenv(name); ok {
		return v
	}
	return def
}

func envInt(getenv Getenv, name string, def int) int {
	v, ok := getenv(name)
	if !ok {
		return def
	}
	n, err := pyInt(v)
	if err != nil || n > math.MaxInt32 || n < math.MinInt32 {
		return def
	}
	return int(n)
}

// ParseExtraConfig parses --hicache-storage-backend-extra-config: a JSON
// object, or "@path.json" to read one from a file. (SGLang also accepts
// @file.toml / @file.yaml; those are refused with a clear error here.)
func ParseExtraConfig(s string) (map[string]any, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	data := []byte(s)
	if path, ok := strings.CutPrefix(s, "@"); ok {
		lower := strings.ToLower(path)
		if !strings.HasSuffix(lower, ".json") {
			return nil, cfgErr("extra_config", "%q: only JSON files are supported (toml/yaml are not)", path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, cfgErr("extra_config", "read %s: %v", path, err)
		}
		data = b
	}
	return decodeJSONObject("extra_config", data)
}

func decodeJSONObject(what string, data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, cfgErr(what, "invalid JSON object: %v", err)
	}
	if dec.More() {
		return nil, cfgErr(what, "trailing data after the JSON object")
	}
	if m == nil {
		return nil, cfgErr(what, "JSON null is not an object")
	}
	return m, nil
}

// LoadStoreConfig resolves the Mooncake client configuration with SGLang's
// precedence (mooncake_store.py, MooncakeStoreConfig):
//
//  1. extra (the backend's extra_config) when it has a non-null
//     master_server_address or client_server_address;
//  2. else the JSON file named by SGLANG_HICACHE_MOONCAKE_CONFIG_PATH
//     (which must contain one of the two address keys);
//  3. else the MOONCAKE_* environment (MOONCAKE_MASTER or MOONCAKE_CLIENT
//     must be set).
//
// In modes 1 and 2 a missing field takes the declared default, not the
// environment's value. getenv nil means os.LookupEnv. JSON fields of the
// wrong type are errors (SGLang would pass them through to Mooncake).
func LoadStoreConfig(extra map[string]any, getenv Getenv) (StoreConfig, error) {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	local, err := localBufferSize(getenv)
	if err != nil {
		return StoreConfig{}, err
	}
	var c StoreConfig
	switch {
	case extra != nil && (extra["master_server_address"] != nil || extra["client_server_address"] != nil):
		c, err = configFromMap(extra, SourceExtraConfig)
	default:
		if path, ok := getenv(EnvSGLangConfigPath); ok {
			data, rerr := os.ReadFile(path)
			if rerr != nil {
				return StoreConfig{}, cfgErr(EnvSGLangConfigPath, "failed to load config from %s: %v", path, rerr)
			}
			m, derr := decodeJSONObject("config file "+path, data)
			if derr != nil {
				return StoreConfig{}, derr
			}
			c, err = configFromMap(m, SourceFile)
		} else {
			c, err = configFromEnv(getenv)
		}
	}
	if err != nil {
		return StoreConfig{}, err
	}
	c.LocalBufferSize = local
	return c, nil
}

func localBufferSize(getenv Getenv) (uint64, error) {
	v, ok := getenv(EnvSGLangLocalBufferSize)
	if !ok {
		return DefaultLocalBufferSize, nil
	}
	n, err := pyInt(v)
	if err != nil || n <= 0 {
		return 0, cfgErr(EnvSGLangLocalBufferSize, "%q is not a positive byte count", v)
	}
	return uint64(n), nil
}

func configFromMap(m map[string]any, src ConfigSource) (StoreConfig, error) {
	_, hasM := m["master_server_address"]
	_, hasC := m["client_server_address"]
	if !hasM && !hasC {
		return StoreConfig{}, cfgErr("master_server_address", "either master_server_address or client_server_address is required in the %s", src)
	}
	c := StoreConfig{Source: src}
	var err error
	str := func(key, def string) string {
		v, ok := m[key]
		if !ok {
			return def
		}
		if v == nil {
			return ""
		}
		s, isStr := v.(string)
		if !isStr && err == nil {
			err = cfgErr(key, "want a string, got %T", v)
		}
		return s
	}
	boolean := func(key string) bool {
		v, ok := m[key]
		if !ok || v == nil {
			return false
		}
		switch x := v.(type) {
		case bool:
			return x
		case string:
			if b, ok := parseBoolWord(x); ok {
				return b
			}
		case json.Number:
			if x.String() == "0" || x.String() == "1" {
				return x.String() == "1"
			}
		}
		if err == nil {
			err = cfgErr(key, "want a boolean, got %v", v)
		}
		return false
	}
	c.LocalHostname = str("local_hostname", DefaultLocalHostname)
	c.MetadataServer = str("metadata_server", DefaultMetadataServer)
	c.Protocol = str("protocol", DefaultProtocol)
	c.DeviceName = str("device_name", "")
	c.MasterServerAddress = str("master_server_address", "")
	c.ClientServerAddress = str("client_server_address", "")
	c.SSDOffloadPath = str("ssd_offload_path", "")
	c.CheckServer = boolean("check_server")
	c.StandaloneStorage = boolean("standalone_storage")
	c.EnableSSDOffload = boolean("enable_ssd_offload")
	if err != nil {
		return StoreConfig{}, err
	}
	if v, ok := m["global_segment_size"]; ok {
		c.GlobalSegmentSize, err = ParseGlobalSegmentSize(v)
	} else {
		c.GlobalSegmentSize, err = ParseGlobalSegmentSize(defaultGlobalSegmentSize)
	}
	if err != nil {
		return StoreConfig{}, err
	}
	c.MasterMetricsPort = DefaultMasterMetricsPort
	if v, ok := m["master_metrics_port"]; ok && v != nil {
		var n int64
		var perr error
		switch x := v.(type) {
		case json.Number:
			n, perr = x.Int64()
		case string:
			n, perr = pyInt(x)
		case int:
			n = int64(x)
		case float64:
			n = int64(x)
			if float64(n) != x {
				perr = fmt.Errorf("not an integer")
			}
		default:
			perr = fmt.Errorf("unsupported type %T", v)
		}
		if perr != nil || n < 0 || n > 65535 {
			return StoreConfig{}, cfgErr("master_metrics_port", "%v is not a port number", v)
		}
		c.MasterMetricsPort = int(n)
	}
	c.TenantID = normalizeTenant(m["tenant_id"])
	return c, nil
}

func normalizeTenant(v any) string {
	if v == nil {
		return DefaultTenantID
	}
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case json.Number:
		s = x.String()
	default:
		s = fmt.Sprint(x)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultTenantID
	}
	return s
}

func configFromEnv(getenv Getenv) (StoreConfig, error) {
	_, hasM := getenv(EnvMaster)
	_, hasC := getenv(EnvClient)
	if !hasM && !hasC {
		return StoreConfig{}, cfgErr(EnvMaster, "either the environment variable %s or %s must be set (or %s, or extra_config)", EnvMaster, EnvClient, EnvSGLangConfigPath)
	}
	c := StoreConfig{Source: SourceEnv}
	if v, ok := getenv(EnvLocalHostname); ok {
		c.LocalHostname = v
	} else {
		c.LocalHostname = envStr(getenv, EnvLegacyHostname, DefaultLocalHostname)
	}
	c.MetadataServer = envStr(getenv, EnvMetadataServer, DefaultMetadataServer)
	size, err := ParseGlobalSegmentSize(envStr(getenv, EnvGlobalSegmentSize, defaultGlobalSegmentSize))
	if err != nil {
		return StoreConfig{}, err
	}
	c.GlobalSegmentSize = size
	c.Protocol = envStr(getenv, EnvProtocol, DefaultProtocol)
	c.DeviceName = envStr(getenv, EnvDevice, "")
	c.MasterServerAddress = envStr(getenv, EnvMaster, "")
	c.MasterMetricsPort = envInt(getenv, EnvMasterMetricsPort, DefaultMasterMetricsPort)
	c.CheckServer = envBool(getenv, EnvCheckServer, false)
	c.StandaloneStorage = envBool(getenv, EnvStandalone, false)
	c.ClientServerAddress = envStr(getenv, EnvClient, "")
	c.EnableSSDOffload = envBool(getenv, EnvSSDOffload, false)
	c.SSDOffloadPath = envStr(getenv, EnvSSDOffloadPath, "")
	if v, ok := getenv(EnvTenantID); ok {
		c.TenantID = normalizeTenant(v)
	} else {
		c.TenantID = DefaultTenantID
	}
	return c, nil
}

// OptionsFromExtraConfig reads the backend keys of extra_config into opts:
// extra_backend_tag (any non-null value, stringified) and tp_lcm_size
// (which SGLang's controller pops before the backend sees it).
func OptionsFromExtraConfig(extra map[string]any, opts Options) (Options, error) {
	if v, ok := extra["extra_backend_tag"]; ok && v != nil {
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case json.Number:
			s = x.String()
		case bool:
			s = map[bool]string{true: "True", false: "False"}[x] // Python str(bool)
		default:
			s = fmt.Sprint(x)
		}
		opts.ExtraBackendTag = &s
	}
	if v, ok := extra["tp_lcm_size"]; ok && v != nil {
		var n int64
		var err error
		switch x := v.(type) {
		case json.Number:
			n, err = x.Int64()
		case int:
			n = int64(x)
		case float64:
			n = int64(x)
			if float64(n) != x { // 1.5 is no LCM of TP sizes (int() would make it 1)
				err = fmt.Errorf("not an integer")
			}
		default:
			err = fmt.Errorf("unsupported type %T", v)
		}
		if err != nil || n < 0 || n > 1<<20 {
			return opts, cfgErr("tp_lcm_size", "%v is not a valid size", v)
		}
		opts.TPLCMSize = int(n)
	}
	return opts, nil
}
