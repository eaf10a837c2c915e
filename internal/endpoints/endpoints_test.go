package endpoints

import (
	"slices"
	"strings"
	"testing"
)

func TestMaster(t *testing.T) {
	for _, c := range []struct {
		in   string
		kind Kind
		eps  []string
		bad  string // a part of the error; "" = accepted
	}{
		{in: "127.0.0.1:50051", kind: Direct, eps: []string{"127.0.0.1:50051"}},
		{in: "master.example:1", kind: Direct, eps: []string{"master.example:1"}},
		{in: "[::1]:50051", kind: Direct, eps: []string{"[::1]:50051"}},
		{in: "etcd://127.0.0.1:2379", kind: Etcd, eps: []string{"127.0.0.1:2379"}},
		{in: "etcd://h1:2379;h2:2379, h3:2379;", kind: Etcd, eps: []string{"h1:2379", "h2:2379", "h3:2379"}},
		{in: "etcd://http://h1:2379;https://h2:2379/", kind: Etcd, eps: []string{"h1:2379", "h2:2379"}},
		{in: "redis://127.0.0.1:6380", kind: Redis, eps: []string{"127.0.0.1:6380"}},
		{in: "redis://redis.example/", kind: Redis, eps: []string{"redis.example:6379"}},
		{in: "redis://[::1]", kind: Redis, eps: []string{"[::1]:6379"}},
		{in: "k8s://default/mooncake-master", kind: K8s},

		{in: "", bad: "empty"},
		{in: "127.0.0.1", bad: "not host:port"},
		{in: "127.0.0.1:0", bad: "1..65535"},
		{in: "127.0.0.1:65536", bad: "1..65535"},
		{in: "127.0.0.1:-1", bad: "1..65535"},
		{in: ":50051", bad: "no host"},
		{in: "a b:1", bad: "space"},
		{in: "h:1\x00", bad: "NUL"},
		{in: "h:1\n", bad: "control"},
		{in: strings.Repeat("h", 5000) + ":1", bad: "at most"},
		{in: "ETCD://h:2379", bad: "unknown HA backend"},
		{in: "zk://h:2181", bad: "unknown HA backend"},
		{in: "etcd://", bad: "no etcd endpoint"},
		{in: "etcd://;;", bad: "no etcd endpoint"},
		{in: "etcd://h1", bad: "not host:port"},
		{in: "etcd://h1:2379;h2", bad: "not host:port"},
		{in: "etcd://grpc://h1:2379", bad: "http(s)://"},
		{in: "redis://", bad: "no redis endpoint"},
		{in: "redis://h:0", bad: "1..65535"},
		{in: "redis://user:pw@h:6379", bad: "MC_REDIS_PASSWORD"},
		{in: "redis://h:6379/3", bad: "MC_REDIS_DB_INDEX"},
		{in: "redis://a:b:c", bad: "not host:port"},
		{in: "k8s://", bad: "namespace"},
	} {
		got, err := Master(c.in)
		if c.bad != "" {
			if err == nil || !strings.Contains(err.Error(), c.bad) {
				t.Errorf("Master(%.40q) = %+v, %v; want an error with %q", c.in, got, err, c.bad)
			}
			continue
		}
		if err != nil || got.Kind != c.kind || !slices.Equal(got.Endpoints, c.eps) {
			t.Errorf("Master(%q) = %+v, %v; want %v %q", c.in, got, err, c.kind, c.eps)
		}
	}
}

func TestMetadata(t *testing.T) {
	for _, c := range []struct {
		in   string
		kind Kind
		eps  []string
		bad  string
	}{
		{in: "P2PHANDSHAKE", kind: P2P},
		{in: "http://127.0.0.1:8080/metadata", kind: HTTP, eps: []string{"127.0.0.1:8080"}},
		{in: "https://meta.example/metadata", kind: HTTP, eps: []string{"meta.example:443"}},
		{in: "http://meta.example", kind: HTTP, eps: []string{"meta.example:80"}},
		{in: "etcd://127.0.0.1:2379", kind: Etcd, eps: []string{"127.0.0.1:2379"}},
		{in: "127.0.0.1:2379", kind: Etcd, eps: []string{"127.0.0.1:2379"}},
		{in: "h1:2379;h2:2379", kind: Etcd, eps: []string{"h1:2379", "h2:2379"}},
		{in: "redis://127.0.0.1:6379", kind: Redis, eps: []string{"127.0.0.1:6379"}},

		{in: "", bad: "empty"},
		{in: "p2phandshake", bad: "not host:port"},
		{in: "http://", bad: "no host"},
		{in: "http://:8080/metadata", bad: "no host"},
		{in: "http://h:/metadata", bad: "1..65535"},
		{in: "http://h:0/metadata", bad: "1..65535"},
		{in: "http://h:99999/metadata", bad: "1..65535"},
		{in: "ftp://h/metadata", bad: "unknown protocol"},
		{in: "k8s://default/x", bad: "unknown protocol"},
		{in: "etcd://", bad: "no etcd endpoint"},
		{in: "metadata", bad: "without a scheme is etcd's"},
		{in: "redis://", bad: "no redis endpoint"},
	} {
		got, err := Metadata(c.in)
		if c.bad != "" {
			if err == nil || !strings.Contains(err.Error(), c.bad) {
				t.Errorf("Metadata(%q) = %+v, %v; want an error with %q", c.in, got, err, c.bad)
			}
			continue
		}
		if err != nil || got.Kind != c.kind || !slices.Equal(got.Endpoints, c.eps) {
			t.Errorf("Metadata(%q) = %+v, %v; want %v %q", c.in, got, err, c.kind, c.eps)
		}
	}
}

// FuzzAddresses: never a panic; an accepted address has endpoints that
// are host:port with a port in range, and a kind that fits its function.
func FuzzAddresses(f *testing.F) {
	for _, s := range []string{"127.0.0.1:50051", "etcd://h1:1;h2:2", "redis://[::1]", "http://h:8080/m",
		"P2PHANDSHAKE", "k8s://ns/x", "h:1,h:2", "[::1]:1", "redis://h/", "etcd://http://h:1/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		check := func(what string, a Address, err error, kinds ...Kind) {
			if err != nil {
				return
			}
			if !slices.Contains(kinds, a.Kind) {
				t.Fatalf("%s(%q): kind %v", what, s, a.Kind)
			}
			for _, ep := range a.Endpoints {
				if _, err := hostPort(ep, ""); err != nil {
					t.Fatalf("%s(%q): endpoint %q: %v", what, s, ep, err)
				}
			}
			if (a.Kind == P2P || a.Kind == K8s) != (len(a.Endpoints) == 0) {
				t.Fatalf("%s(%q): %v with endpoints %q", what, s, a.Kind, a.Endpoints)
			}
		}
		a, err := Master(s)
		check("Master", a, err, Direct, Etcd, Redis, K8s)
		a, err = Metadata(s)
		check("Metadata", a, err, HTTP, Etcd, Redis, P2P)
	})
}
