package mooncake

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// ConfigFromSetupDict builds a Config from the dict form of the Python
// client's setup (store.setup({...}), upstream's RealClient setup_internal),
// with its key names, its defaults and its value syntax, so that a setup
// dict moves to Go unchanged: every value is a string (Python stringifies
// them); local_hostname and metadata_server are required; sizes
// (global_segment_size, local_buffer_size) are numbers with an optional unit
// as upstream reads them ("16 MB", "1.5g", "4096", "infinite"); the
// defaults are upstream's: 16 MiB segment and local buffer, protocol "tcp",
// master_server_addr "127.0.0.1:50051", tenant "default", client HTTP port
// 9300.
//
// Stricter than upstream, so that a mistake is not silently a different
// cluster: an unknown key, a boolean other than upstream's words (true/false, 1/0, yes/no,
// on/off, enable/disable, in any case; upstream warns and uses the default) and ipc_socket_path (the socket a
// RealClient serves dummy clients on; the Go client serves none) are
// ErrInvalidConfig.
func ConfigFromSetupDict(dict map[string]string) (Config, error) {
	cfg := Config{
		LocalHostname:       dict["local_hostname"],
		MetadataServer:      dict["metadata_server"],
		GlobalSegmentSize:   16 << 20,
		LocalBufferSize:     16 << 20,
		Protocol:            "tcp",
		DeviceName:          dict["rdma_devices"],
		MasterServerAddress: "127.0.0.1:50051",
		TenantID:            "default",
		SSDOffloadPath:      dict["ssd_offload_path"],
		ClientHTTPPort:      9300,
	}
	var unknown []string
	for k := range dict {
		if _, ok := setupDictKeys[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return Config{}, sentinelf(ErrInvalidConfig, "mooncake: setup dict: unknown keys %q", unknown)
	}
	if cfg.LocalHostname == "" || cfg.MetadataServer == "" {
		return Config{}, sentinelf(ErrInvalidConfig, "mooncake: setup dict: local_hostname and metadata_server are required")
	}
	if v := dict["ipc_socket_path"]; v != "" {
		return Config{}, sentinelf(ErrInvalidConfig, "mooncake: setup dict: ipc_socket_path %q: the Go client serves no dummy clients", v)
	}
	for _, f := range []struct {
		key string
		dst *Size
	}{{"global_segment_size", &cfg.GlobalSegmentSize}, {"local_buffer_size", &cfg.LocalBufferSize}} {
		if v, ok := dict[f.key]; ok {
			n, ok := upstreamByteSize(v)
			if !ok {
				return Config{}, sentinelf(ErrInvalidConfig, "mooncake: setup dict: %s %q is not a size", f.key, v)
			}
			*f.dst = Size(n)
		}
	}
	for k, dst := range map[string]*string{"protocol": &cfg.Protocol, "master_server_addr": &cfg.MasterServerAddress, "tenant_id": &cfg.TenantID} {
		if v, ok := dict[k]; ok {
			*dst = v
		}
	}
	for k, dst := range map[string]*bool{"enable_ssd_offload": &cfg.EnableSSDOffload, "enable_client_http_server": &cfg.EnableClientHTTPServer} {
		if v, ok := dict[k]; ok {
			b, ok := dictBool(v)
			if !ok {
				return Config{}, sentinelf(ErrInvalidConfig, "mooncake: setup dict: %s %q is not a boolean", k, v)
			}
			*dst = b
		}
	}
	if v, ok := dict["client_http_port"]; ok {
		p, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || p < 0 || p > 65535 {
			return Config{}, sentinelf(ErrInvalidConfig, "mooncake: setup dict: client_http_port %q is not a port", v)
		}
		cfg.ClientHTTPPort = p
	}
	return cfg, nil
}

// setupDictKeys are the keys upstream's dict setup reads.
var setupDictKeys = map[string]struct{}{
	"local_hostname": {}, "metadata_server": {}, "global_segment_size": {}, "local_buffer_size": {},
	"protocol": {}, "rdma_devices": {}, "master_server_addr": {}, "ipc_socket_path": {},
	"enable_ssd_offload": {}, "ssd_offload_path": {}, "tenant_id": {}, "enable_client_http_server": {},
	"client_http_port": {},
}

// upstreamByteSize reads a size as upstream's try_string_to_byte_size: a
// non-negative number as std::stod reads it (fractions and exponents
// allowed), optional spaces, and a
// unit B, K/KB, M/MB, G/GB or T/TB in any case (powers of 1,024); "infinite"
// is the largest size. The fraction of a byte is dropped, as upstream's
// cast does.
func upstreamByteSize(s string) (uint64, bool) {
	s = strings.TrimSpace(s)
	if s == "infinite" {
		return math.MaxUint64, true
	}
	// The number is the longest prefix that parses, as std::stod reads it
	// ("1e3" is 1,000 bytes).
	end, v := 0, 0.0
	for p := min(len(s), 64); p > 0; p-- {
		if f, err := strconv.ParseFloat(s[:p], 64); err == nil {
			end, v = p, f
			break
		}
	}
	if end == 0 || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	mult := map[string]float64{"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "M": 1 << 20, "MB": 1 << 20,
		"G": 1 << 30, "GB": 1 << 30, "T": 1 << 40, "TB": 1 << 40}[strings.ToUpper(strings.TrimSpace(s[end:]))]
	if mult == 0 {
		return 0, false
	}
	b := v * mult
	if b >= math.MaxUint64 {
		return 0, false
	}
	return uint64(b), true
}

func dictBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes", "on", "enable":
		return true, true
	case "false", "0", "no", "off", "disable":
		return false, true
	}
	return false, false
}
