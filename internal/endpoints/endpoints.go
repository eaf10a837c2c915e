// Package endpoints parses the addresses a store client and a transfer
// engine are given: the master's (one master, or a leader elected through
// etcd, Redis or Kubernetes) and the transfer engine's metadata service
// (HTTP, etcd, Redis, or none with P2PHANDSHAKE). The rules are upstream's
// (client_service.cpp ParseHABackendSpec, ha/common/redis ParseRedisEndpoint,
// transfer_metadata_plugin.cpp parseConnectionString, the etcd wrapper's
// endpoint list), applied before anything reaches upstream, where a form
// it cannot use fails late, vaguely, or with LOG(FATAL).
package endpoints

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Kind is what an address names.
type Kind int

const (
	// Direct is one master at host:port.
	Direct Kind = iota
	// Etcd is a leader (master) or metadata kept in etcd: etcd://h1:p1;h2:p2.
	Etcd
	// Redis is a leader (master) or metadata kept in Redis: redis://host[:port].
	Redis
	// K8s is a leader elected through a Kubernetes lease (master only).
	K8s
	// HTTP is an HTTP metadata server: http(s)://host[:port]/path.
	HTTP
	// P2P is no metadata server (P2PHANDSHAKE): engines reach each other
	// by segment name.
	P2P
)

func (k Kind) String() string {
	switch k {
	case Direct:
		return "direct"
	case Etcd:
		return "etcd"
	case Redis:
		return "redis"
	case K8s:
		return "k8s"
	case HTTP:
		return "http"
	case P2P:
		return "P2PHANDSHAKE"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Address is a parsed master address or metadata server.
type Address struct {
	Kind Kind
	// Endpoints are the host:port pairs a client dials (etcd: every
	// endpoint, in order; Redis: one, port 6379 when none was given;
	// HTTP: the URL's host and port, 80 or 443 when none was given).
	// Empty for P2P and K8s.
	Endpoints []string
}

// P2PHandshake is the metadata "server" of engines that reach each other
// directly by segment name.
const P2PHandshake = "P2PHANDSHAKE"

// maxLen bounds an address: far longer than any list of endpoints, and
// upstream copies it into every RPC and log line.
const maxLen = 4096

// Master parses a store client's master_server_address: "host:port" for
// one master, or "etcd://h1:p1;h2:p2", "redis://host[:port]",
// "k8s://namespace/lease" for the leader of an HA master group.
func Master(s string) (Address, error) {
	if err := common(s); err != nil {
		return Address{}, err
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		ep, err := hostPort(s, "")
		if err != nil {
			return Address{}, fmt.Errorf("master %q: %w (want host:port, or etcd://, redis:// or k8s:// for an HA master)", s, err)
		}
		return Address{Kind: Direct, Endpoints: []string{ep}}, nil
	}
	switch scheme {
	case "etcd":
		eps, err := etcdEndpoints(rest)
		if err != nil {
			return Address{}, fmt.Errorf("master %q: %w", s, err)
		}
		return Address{Kind: Etcd, Endpoints: eps}, nil
	case "redis":
		ep, err := redisEndpoint(rest)
		if err != nil {
			return Address{}, fmt.Errorf("master %q: %w", s, err)
		}
		return Address{Kind: Redis, Endpoints: []string{ep}}, nil
	case "k8s":
		if strings.Trim(rest, "/") == "" {
			return Address{}, fmt.Errorf("master %q: want k8s://namespace/lease", s)
		}
		return Address{Kind: K8s}, nil
	}
	return Address{}, fmt.Errorf("master %q: unknown HA backend %q (want etcd, redis or k8s; upstream's names are lowercase)", s, scheme)
}

// Metadata parses a transfer engine's metadata server: "P2PHANDSHAKE",
// "http(s)://host[:port]/path", "etcd://h1:p1;h2:p2" (or the endpoints
// alone, which upstream reads as etcd), or "redis://host[:port]".
func Metadata(s string) (Address, error) {
	if s == P2PHandshake {
		return Address{Kind: P2P}, nil
	}
	if err := common(s); err != nil {
		return Address{}, err
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		// Upstream's parseConnectionString: no scheme means etcd.
		scheme, rest = "etcd", s
	}
	switch scheme {
	case "http", "https":
		ep, err := httpEndpoint(s, scheme)
		if err != nil {
			return Address{}, fmt.Errorf("metadata server %q: %w", s, err)
		}
		return Address{Kind: HTTP, Endpoints: []string{ep}}, nil
	case "etcd":
		eps, err := etcdEndpoints(rest)
		if err != nil {
			hint := ""
			if !ok {
				hint = " (an address without a scheme is etcd's; want " + P2PHandshake + ", http(s)://, etcd:// or redis://)"
			}
			return Address{}, fmt.Errorf("metadata server %q: %w%s", s, err, hint)
		}
		return Address{Kind: Etcd, Endpoints: eps}, nil
	case "redis":
		ep, err := redisEndpoint(rest)
		if err != nil {
			return Address{}, fmt.Errorf("metadata server %q: %w", s, err)
		}
		return Address{Kind: Redis, Endpoints: []string{ep}}, nil
	}
	return Address{}, fmt.Errorf("metadata server %q: unknown protocol %q (want %s, http(s)://, etcd:// or redis://)", s, scheme, P2PHandshake)
}

func common(s string) error {
	switch {
	case s == "":
		return errors.New("empty address")
	case len(s) > maxLen:
		return fmt.Errorf("address of %d bytes: at most %d", len(s), maxLen)
	case strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("address %q contains a control character or NUL", s)
	}
	return nil
}

// hostPort checks host:port (an IPv6 host in brackets); with a non-empty
// defPort a missing port takes it.
func hostPort(s, defPort string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		// No port: only where there is a default, and only a plain host
		// or a bracketed IPv6 one.
		h := s
		if len(h) > 1 && h[0] == '[' && h[len(h)-1] == ']' {
			h = h[1 : len(h)-1]
		} else if strings.ContainsAny(h, ":[]") {
			defPort = ""
		}
		if defPort == "" {
			return "", fmt.Errorf("%q is not host:port", s)
		}
		host, port = h, defPort
	}
	if host == "" {
		return "", fmt.Errorf("%q has no host", s)
	}
	if strings.ContainsAny(host, " /@") {
		return "", fmt.Errorf("%q: host %q contains a space, '/' or '@'", s, host)
	}
	if p, err := strconv.ParseUint(port, 10, 16); err != nil || p == 0 {
		return "", fmt.Errorf("%q: port must be 1..65535", s)
	}
	return net.JoinHostPort(host, port), nil
}

// etcdEndpoints is the etcd wrapper's list: endpoints separated by ';' or
// ',', blanks dropped, each host:port or http(s)://host:port.
func etcdEndpoints(list string) ([]string, error) {
	var out []string
	for _, ep := range strings.FieldsFunc(list, func(r rune) bool { return r == ';' || r == ',' }) {
		if ep = strings.TrimSpace(ep); ep == "" {
			continue
		}
		hp := ep
		if scheme, rest, ok := strings.Cut(ep, "://"); ok {
			if scheme != "http" && scheme != "https" {
				return nil, fmt.Errorf("etcd endpoint %q: want host:port or http(s)://host:port", ep)
			}
			hp = strings.TrimSuffix(rest, "/")
		}
		n, err := hostPort(hp, "")
		if err != nil {
			return nil, fmt.Errorf("etcd endpoint %w", err)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("no etcd endpoint (want etcd://host:port[;host:port...])")
	}
	return out, nil
}

// redisEndpoint is upstream's ParseRedisEndpoint: host[:port] with an
// optional trailing '/', an IPv6 host in brackets; port 6379 by default.
func redisEndpoint(s string) (string, error) {
	s = strings.TrimSuffix(s, "/")
	if strings.Contains(s, "/") || strings.Contains(s, "@") {
		return "", fmt.Errorf("redis endpoint %q: want host[:port] (a password goes in MC_REDIS_PASSWORD, a database in MC_REDIS_DB_INDEX)", s)
	}
	if s == "" {
		return "", errors.New("no redis endpoint (want redis://host[:port])")
	}
	ep, err := hostPort(s, "6379")
	if err != nil {
		return "", fmt.Errorf("redis endpoint %w", err)
	}
	return ep, nil
}

func httpEndpoint(s, scheme string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || u.Hostname() == "" {
		return "", errors.New("no host")
	}
	port := u.Port()
	if port == "" {
		if strings.HasSuffix(u.Host, ":") {
			return "", errors.New("port must be 1..65535")
		}
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	if p, err := strconv.ParseUint(port, 10, 16); err != nil || p == 0 {
		return "", errors.New("port must be 1..65535")
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

// Probe dials a's endpoints in order and returns nil as soon as one
// accepts a TCP connection within timeout, else the last error: a quick
// answer where upstream's clients retry an absent server for minutes.
// Addresses without endpoints (P2P, K8s) need no probe.
func Probe(a Address, timeout time.Duration) error {
	var err error
	for _, ep := range a.Endpoints {
		var c net.Conn
		if c, err = net.DialTimeout("tcp", ep, timeout); err == nil {
			return c.Close()
		}
	}
	return err
}
