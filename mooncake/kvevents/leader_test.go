package kvevents

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeRedis answers AUTH, SELECT and HMGET from a map of hashes, and logs
// the commands it got.
type fakeRedis struct {
	mu     sync.Mutex
	hashes map[string]map[string]string
	log    []string
	ln     net.Listener
}

func startFakeRedis(t *testing.T) *fakeRedis {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRedis{hashes: map[string]map[string]string{}, ln: ln}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go f.serve(c)
		}
	}()
	return f
}

func (f *fakeRedis) set(key string, fields ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(fields) == 0 {
		delete(f.hashes, key)
		return
	}
	h := map[string]string{}
	for i := 0; i+1 < len(fields); i += 2 {
		h[fields[i]] = fields[i+1]
	}
	f.hashes[key] = h
}

func (f *fakeRedis) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		v, err := readRESP(r, 0)
		if err != nil {
			return
		}
		args, _ := v.([]any)
		var s []string
		for _, a := range args {
			s = append(s, a.(string))
		}
		f.mu.Lock()
		f.log = append(f.log, strings.Join(s, " "))
		var out string
		switch strings.ToUpper(s[0]) {
		case "AUTH", "SELECT":
			out = "+OK\r\n"
		case "HMGET":
			h := f.hashes[s[1]]
			out = "*" + strconv.Itoa(len(s)-2) + "\r\n"
			for _, field := range s[2:] {
				if v, ok := h[field]; ok {
					out += "$" + strconv.Itoa(len(v)) + "\r\n" + v + "\r\n"
				} else {
					out += "$-1\r\n"
				}
			}
		default:
			out = "-ERR unknown command\r\n"
		}
		f.mu.Unlock()
		if _, err := io.WriteString(c, out); err != nil {
			return
		}
	}
}

func TestLeaderLocatorRedis(t *testing.T) {
	f := startFakeRedis(t)
	t.Setenv("MC_REDIS_PASSWORD", "pw")
	t.Setenv("MC_REDIS_USERNAME", "")
	t.Setenv("MC_REDIS_DB_INDEX", "3")
	l, err := NewLeaderLocator(LeaderConfig{MasterAddress: "redis://" + f.ln.Addr().String(), ClusterID: "c{1}/",
		Publisher: PublisherPort(5557), Poll: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	if _, err := l.Endpoint(ctx); !errors.Is(err, ErrNoLeader) {
		t.Fatalf("no record: %v", err)
	}
	key := "mooncake-store/{c_1_}/master_view" // upstream's SanitizeHashTagComponent
	f.set(key, "leader_address", "10.0.0.1:50051", "view_version", "7", "owner_token", "x")
	v, err := l.Leader(ctx)
	if err != nil || v != (LeaderView{"10.0.0.1:50051", 7}) {
		t.Fatalf("leader %+v, %v", v, err)
	}
	ep, err := l.Endpoint(ctx)
	if err != nil || ep != "tcp://10.0.0.1:5557" {
		t.Fatalf("endpoint %q, %v", ep, err)
	}
	done := make(chan error, 1)
	go func() { done <- l.WaitChange(ctx, ep) }()
	f.set(key) // the leader's lease ran out: no change yet
	time.Sleep(30 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("WaitChange returned %v without a new leader", err)
	default:
	}
	f.set(key, "leader_address", "10.0.0.2:50051", "view_version", "8", "owner_token", "y")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.log[0] != "AUTH pw" || f.log[1] != "SELECT 3" || !strings.HasPrefix(f.log[2], "HMGET "+key+" leader_address view_version") {
		t.Fatalf("commands %q", f.log[:3])
	}
}

func TestLeaderLocatorEtcd(t *testing.T) {
	var mu sync.Mutex
	value := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Key string }
		if r.URL.Path != "/v3/kv/range" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		k, _ := base64.StdEncoding.DecodeString(req.Key)
		mu.Lock()
		defer mu.Unlock()
		if string(k) != "mooncake-store/mooncake_cluster/master_view" || value == "" {
			_, _ = io.WriteString(w, `{"header":{"revision":"3"}}`)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"kvs": []map[string]string{{
			"key": req.Key, "value": base64.StdEncoding.EncodeToString([]byte(value)), "mod_revision": "42"}}})
	}))
	defer srv.Close()
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := dead.Addr().String()
	dead.Close()
	t.Setenv("MC_STORE_CLUSTER_ID", "")
	// The first endpoint is down: the next one answers.
	l, err := NewLeaderLocator(LeaderConfig{MasterAddress: "etcd://" + deadAddr + ";" + strings.TrimPrefix(srv.URL, "http://"),
		Publisher: func(leader string) (string, error) { return "tcp://pub-of-" + leader, nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := l.Endpoint(ctx); !errors.Is(err, ErrNoLeader) {
		t.Fatalf("no record: %v", err)
	}
	mu.Lock()
	value = "127.0.0.1:50051"
	mu.Unlock()
	v, err := l.Leader(ctx)
	if err != nil || v != (LeaderView{"127.0.0.1:50051", 42}) {
		t.Fatalf("leader %+v, %v", v, err)
	}
	if ep, _ := l.Endpoint(ctx); ep != "tcp://pub-of-127.0.0.1:50051" {
		t.Fatalf("endpoint %q", ep)
	}
}

func TestLeaderConfigErrors(t *testing.T) {
	for _, cfg := range []LeaderConfig{
		{MasterAddress: "redis://h"},
		{MasterAddress: "127.0.0.1:50051", Publisher: PublisherPort(1)},
		{MasterAddress: "k8s://ns/lease", Publisher: PublisherPort(1)},
		{MasterAddress: "zk://h", Publisher: PublisherPort(1)},
	} {
		if _, err := NewLeaderLocator(cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
	if _, err := PublisherPort(1)("no-port"); err == nil {
		t.Error("PublisherPort of an address without a port")
	}
	if ep, _ := PublisherPort(9)("[::1]:50051"); ep != "tcp://[::1]:9" {
		t.Errorf("IPv6: %q", ep)
	}
}

// FuzzRESP: any bytes read as a reply or fail, never panic.
func FuzzRESP(f *testing.F) {
	for _, s := range []string{"*2\r\n$3\r\nabc\r\n$-1\r\n", "-ERR x\r\n", ":12\r\n", "+OK\r\n", "$5\r\nab\r\n", "*-1\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = readRESP(bufio.NewReader(strings.NewReader(string(b))), 0)
	})
}
