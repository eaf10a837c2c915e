package kvevents

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mooncake-go/mooncake-go/internal/endpoints"
)

// ErrNoLeader: the HA group has no leader recorded right now (an election
// is under way, or no master runs).
var ErrNoLeader = errors.New("kvevents: no master leads the HA group")

// LeaderConfig configures NewLeaderLocator.
type LeaderConfig struct {
	// MasterAddress is the HA group's address as its clients are given it:
	// "etcd://host:port[;host:port...]" or "redis://host[:port]" (Redis
	// credentials and database from MC_REDIS_USERNAME, MC_REDIS_PASSWORD,
	// MC_REDIS_DB_INDEX, as upstream reads them). k8s:// is not read here.
	MasterAddress string
	// ClusterID is the group's --cluster_id: "" means $MC_STORE_CLUSTER_ID,
	// else "mooncake_cluster", as upstream resolves it.
	ClusterID string
	// Publisher maps the leader's RPC address (host:port, what the group
	// records) to its KV event endpoint. The record has no publisher
	// endpoint, so a deployment states its rule: PublisherPort(5557) for
	// masters that all bind the same port. Required.
	Publisher func(leader string) (string, error)
	// Poll is how often WaitChange reads the record (default 200 ms, the
	// interval upstream's Redis coordinator watches it with).
	Poll time.Duration
	// Timeout bounds one read (default 2 s).
	Timeout time.Duration
}

// LeaderView is the HA group's record of its leader.
type LeaderView struct {
	Address string // the leader's RPC address
	// Version changes with every election: Redis' view_version, etcd's
	// revision of the record.
	Version uint64
}

// LeaderLocator is a ChangeWatcher that follows the leader of a Mooncake
// HA master group: it reads the record upstream's leader keeps in etcd
// (key mooncake-store/<cluster id>/master_view, value the leader's address)
// or Redis (hash mooncake-store/{<cluster id>}/master_view, field
// leader_address), and maps the leader to its publisher. Only the leader
// publishes: a standby binds its publisher when it is elected.
type LeaderLocator struct {
	cfg   LeaderConfig
	kind  endpoints.Kind
	eps   []string
	key   string
	http  *http.Client
	redis redisConn
}

// PublisherPort is the Publisher rule of masters that all bind their KV
// event publisher on port: "tcp://<leader host>:<port>".
func PublisherPort(port int) func(string) (string, error) {
	return func(leader string) (string, error) {
		host, _, err := net.SplitHostPort(leader)
		if err != nil {
			return "", fmt.Errorf("kvevents: leader address %q: %w", leader, err)
		}
		return "tcp://" + net.JoinHostPort(host, strconv.Itoa(port)), nil
	}
}

// NewLeaderLocator checks cfg and returns the locator; nothing is read yet.
func NewLeaderLocator(cfg LeaderConfig) (*LeaderLocator, error) {
	if cfg.Publisher == nil {
		return nil, fmt.Errorf("%w: LeaderConfig.Publisher is required", ErrConfig)
	}
	a, err := endpoints.Master(cfg.MasterAddress)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if cfg.ClusterID == "" {
		cfg.ClusterID = os.Getenv("MC_STORE_CLUSTER_ID")
	}
	if cfg.ClusterID == "" {
		cfg.ClusterID = "mooncake_cluster"
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 200 * time.Millisecond
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Second
	}
	l := &LeaderLocator{cfg: cfg, kind: a.Kind, eps: a.Endpoints}
	switch a.Kind {
	case endpoints.Etcd:
		l.key = "mooncake-store/" + strings.TrimSuffix(cfg.ClusterID, "/") + "/master_view"
		l.http = &http.Client{Timeout: cfg.Timeout}
	case endpoints.Redis:
		tag := strings.NewReplacer("{", "_", "}", "_").Replace(strings.TrimSuffix(cfg.ClusterID, "/"))
		l.key = "mooncake-store/{" + tag + "}/master_view"
		l.redis = redisConn{addr: a.Endpoints[0], timeout: cfg.Timeout}
	default:
		return nil, fmt.Errorf("%w: master address %q: a leader is read from etcd:// or redis:// (k8s:// is not supported; a single master needs Static)", ErrConfig, cfg.MasterAddress)
	}
	return l, nil
}

// Leader reads the group's leader record: ErrNoLeader when there is none.
func (l *LeaderLocator) Leader(ctx context.Context) (LeaderView, error) {
	ctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	defer cancel()
	if l.kind == endpoints.Etcd {
		return l.etcdLeader(ctx)
	}
	return l.redis.leader(ctx, l.key)
}

// Endpoint is the current leader's publisher endpoint.
func (l *LeaderLocator) Endpoint(ctx context.Context) (string, error) {
	v, err := l.Leader(ctx)
	if err != nil {
		return "", err
	}
	return l.cfg.Publisher(v.Address)
}

// WaitChange polls the record until a leader whose publisher is not
// endpoint is recorded. A missing leader or a failed read is not a change:
// a dead leader's connection ends on its own (or by heartbeat).
func (l *LeaderLocator) WaitChange(ctx context.Context, endpoint string) error {
	t := time.NewTicker(l.cfg.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if ep, err := l.Endpoint(ctx); err == nil && ep != endpoint {
			return nil
		}
	}
}

// Close releases the Redis connection (nothing for etcd).
func (l *LeaderLocator) Close() error { return l.redis.close() }

// etcdLeader reads the record through etcd's v3 JSON gateway (POST
// /v3/kv/range), endpoint after endpoint: plain HTTP, no gRPC client.
func (l *LeaderLocator) etcdLeader(ctx context.Context) (LeaderView, error) {
	body, _ := json.Marshal(map[string]string{"key": base64.StdEncoding.EncodeToString([]byte(l.key))})
	var errs []error
	for _, ep := range l.eps {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+ep+"/v3/kv/range", bytes.NewReader(body))
		if err != nil {
			return LeaderView{}, err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := l.http.Do(req)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			errs = append(errs, fmt.Errorf("etcd %s: %s %v: %.200s", ep, resp.Status, err, data))
			continue
		}
		var r struct {
			KVs []struct {
				Value       string `json:"value"`
				ModRevision string `json:"mod_revision"`
			} `json:"kvs"`
		}
		if err := json.Unmarshal(data, &r); err != nil {
			return LeaderView{}, fmt.Errorf("kvevents: etcd %s: %w", ep, err)
		}
		if len(r.KVs) == 0 {
			return LeaderView{}, ErrNoLeader
		}
		v, err := base64.StdEncoding.DecodeString(r.KVs[0].Value)
		if err != nil || len(v) == 0 {
			return LeaderView{}, ErrNoLeader
		}
		rev, _ := strconv.ParseUint(r.KVs[0].ModRevision, 10, 64)
		return LeaderView{Address: string(v), Version: rev}, nil
	}
	return LeaderView{}, fmt.Errorf("kvevents: no etcd endpoint answered: %w", errors.Join(errs...))
}

// redisConn is the one Redis command a leader read needs (HMGET), in RESP
// over one connection made again after an error.
type redisConn struct {
	addr    string
	timeout time.Duration
	mu      sync.Mutex
	c       net.Conn
	r       *bufioReader
}

func (c *redisConn) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return nil
	}
	err := c.c.Close()
	c.c = nil
	return err
}

func (c *redisConn) leader(ctx context.Context, key string) (LeaderView, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, err := c.leaderLocked(ctx, key)
	if err != nil && !errors.Is(err, ErrNoLeader) && c.c != nil {
		_ = c.c.Close()
		c.c = nil
	}
	return v, err
}

func (c *redisConn) leaderLocked(ctx context.Context, key string) (LeaderView, error) {
	if c.c == nil {
		if err := c.dial(ctx); err != nil {
			return LeaderView{}, err
		}
	}
	dl, _ := ctx.Deadline()
	_ = c.c.SetDeadline(dl)
	reply, err := c.do("HMGET", key, "leader_address", "view_version")
	if err != nil {
		return LeaderView{}, err
	}
	arr, ok := reply.([]any)
	if !ok || len(arr) != 2 {
		return LeaderView{}, fmt.Errorf("kvevents: redis HMGET answered %v", reply)
	}
	addr, _ := arr[0].(string)
	if addr == "" {
		return LeaderView{}, ErrNoLeader
	}
	ver, _ := arr[1].(string)
	n, _ := strconv.ParseUint(ver, 10, 64)
	return LeaderView{Address: addr, Version: n}, nil
}

// dial connects and authenticates as upstream's ConnectRedis does.
func (c *redisConn) dial(ctx context.Context) error {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return fmt.Errorf("kvevents: redis %s: %w", c.addr, err)
	}
	c.c, c.r = nc, newBufioReader(nc)
	dl, _ := ctx.Deadline()
	_ = nc.SetDeadline(dl)
	fail := func(err error) error {
		_ = nc.Close()
		c.c = nil
		return fmt.Errorf("kvevents: redis %s: %w", c.addr, err)
	}
	if pw := os.Getenv("MC_REDIS_PASSWORD"); pw != "" {
		args := []string{"AUTH", pw}
		if u := os.Getenv("MC_REDIS_USERNAME"); u != "" {
			args = []string{"AUTH", u, pw}
		}
		if _, err := c.do(args...); err != nil {
			return fail(err)
		}
	}
	if db := os.Getenv("MC_REDIS_DB_INDEX"); db != "" && db != "0" {
		if _, err := strconv.Atoi(db); err != nil {
			return fail(fmt.Errorf("MC_REDIS_DB_INDEX %q is not a number", db))
		}
		if _, err := c.do("SELECT", db); err != nil {
			return fail(err)
		}
	}
	return nil
}

// do sends one command and reads its reply: a string, an int64, nil or a
// []any of them; a Redis error reply is an error.
func (c *redisConn) do(args ...string) (any, error) {
	var b []byte
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, "\r\n"...)
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, "\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	if _, err := c.c.Write(b); err != nil {
		return nil, err
	}
	return readRESP(c.r, 0)
}
