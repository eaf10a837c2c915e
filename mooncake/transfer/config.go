package transfer

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mooncake-go/mooncake-go/internal/endpoints"
)

// maxSegmentName bounds a segment name: a DNS name is at most 253 bytes,
// and a name far longer than any host:port is a mistake (upstream would
// publish it in the metadata server as it is).
const maxSegmentName = 512

// segmentName is the one rule for segment names, in Open (this engine's)
// and OpenSegment (a peer's): a leading '/' is dropped, as upstream's
// openSegment drops it, and what is left must be a host and, when needPort,
// a port 1..65535 ("host:port"); without needPort the port may be left out
// (with P2PHANDSHAKE the engine appends its RPC port).
func segmentName(name string, needPort bool) (string, error) {
	n := strings.TrimLeft(name, "/")
	switch {
	case n == "":
		return "", fmt.Errorf("segment name %q is empty", name)
	case len(n) > maxSegmentName:
		return "", fmt.Errorf("segment name of %d bytes: at most %d", len(n), maxSegmentName)
	case !utf8.ValidString(n):
		return "", fmt.Errorf("segment name %q is not valid UTF-8", name)
	case strings.IndexByte(n, 0) >= 0:
		return "", fmt.Errorf("segment name %q contains NUL", name)
	}
	host, port, err := net.SplitHostPort(n)
	if err != nil {
		if !needPort && !strings.Contains(n, ":") {
			return n, nil // a host alone
		}
		return "", fmt.Errorf("segment name %q: want host:port", name)
	}
	if host == "" {
		return "", fmt.Errorf("segment name %q has no host", name)
	}
	if p, err := strconv.ParseUint(port, 10, 16); err != nil || p == 0 {
		return "", fmt.Errorf("segment name %q: port must be 1..65535", name)
	}
	return n, nil
}

// P2PHandshake is the metadata "server" of engines that reach each other
// directly by segment name, with no metadata server.
const P2PHandshake = endpoints.P2PHandshake

// check refuses what cannot be right in a Config before anything reaches
// the engine, naming the field, and returns it with LocalServerName in the
// one form segment names have, and its metadata server parsed.
func (cfg Config) check() (Config, endpoints.Address, error) {
	var md endpoints.Address
	for _, f := range []struct{ name, v string }{{"MetadataServer", cfg.MetadataServer}, {"Host", cfg.Host},
		{"Protocol", cfg.Protocol}, {"DeviceNames", cfg.DeviceNames}, {"NICPriorityMatrix", cfg.NICPriorityMatrix}} {
		if strings.IndexByte(f.v, 0) >= 0 {
			return cfg, md, fmt.Errorf("%s %q contains NUL", f.name, f.v)
		}
	}
	md, err := endpoints.Metadata(cfg.MetadataServer)
	if err != nil {
		return cfg, md, fmt.Errorf("MetadataServer: %w", err)
	}
	name, err := segmentName(cfg.LocalServerName, cfg.MetadataServer != P2PHandshake)
	if err != nil {
		return cfg, md, fmt.Errorf("LocalServerName: %w", err)
	}
	cfg.LocalServerName = name
	if !cfg.Combining.Valid() {
		return cfg, md, fmt.Errorf("combining mode %d: want CombiningDefault, CombiningOn or CombiningOff", cfg.Combining)
	}
	if cfg.RPCPort > 65535 {
		return cfg, md, fmt.Errorf("RPCPort %d: want 1..65535, or 0 for upstream's default", cfg.RPCPort)
	}
	switch cfg.Protocol {
	case "", "tcp", "rdma", "none":
	default:
		return cfg, md, fmt.Errorf("protocol %q is not tcp, rdma or none (Config.Protocol)", cfg.Protocol)
	}
	return cfg, md, nil
}
