// Package testcluster starts upstream's mooncake_master on free loopback
// ports, with its HTTP metadata server, and stops, kills or restarts it by
// its PID: the one place scripts/cluster and the fault tests get a master
// from.
package testcluster

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Options configure a master.
type Options struct {
	Bin     string        // mooncake_master; "" finds it (FindMaster)
	LogDir  string        // directory of its log (default build/cluster-logs)
	Lease   string        // --default_kv_lease_ttl in ms ("" = upstream's 10 s)
	Wait    time.Duration // how long to wait for it to answer (default 60 s)
	Extra   []string      // more flags
	Ports   []int         // rpc, http, metrics; nil = free ports
	Quiet   bool          // do not print the start and stop lines
	LogName string        // log file name (default master-<rpc>.log)
	// HA, when set, starts the master as a member of an HA group: no HTTP
	// metadata server (clients of an HA cluster use P2PHANDSHAKE, etcd or
	// Redis metadata), ready when its admin port answers, serving RPC only
	// while it leads.
	HA *HA
	// KVEvents, when set, starts the master with its KV event publisher
	// (--enable_kv_events) bound to tcp://127.0.0.1:<free port>. Only a
	// master built with ENABLE_KV_EVENTS publishes: WaitKVEvents tells.
	KVEvents *KVEvents
}

// KVEvents configures the master's KV event publisher.
type KVEvents struct {
	BackendID string // --kv_events_backend_id (default "mcgo-test")
	Port      int    // 0: a free port, kept across Restart
	// QueueCapacity is --kv_events_queue_capacity (0: upstream's 65536).
	QueueCapacity int
}

// Master is one running mooncake_master.
type Master struct {
	opts    Options
	bin     string
	ports   []int
	LogPath string

	// metricsHost: the master takes --metrics_host (upstream before it,
	// v0.3.12.post1, listens for metrics on every address; tests still
	// connect to 127.0.0.1 only).
	metricsHost bool

	kvPort  int         // the KV event publisher's port, 0 without KVEvents
	kvLive  atomic.Bool // WaitKVEvents saw the publisher listen
	kvFlags bool        // the binary takes --enable_kv_events

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	exitErr error         // its Wait error, once done is closed
}

// HA is an HA master group's election backend.
type HA struct {
	Backend    string // "etcd" or "redis"
	Connstring string // etcd endpoints ("127.0.0.1:2379;..."), or Redis host:port
	ClusterID  string // --cluster_id; clients need the same (mooncake.Config.ClusterID)
	// SnapshotDir is where a Redis group's masters keep the snapshots a
	// new leader restores from (a directory the group shares).
	SnapshotDir string
}

// Start starts a master and waits until its RPC port and metadata server
// answer.
func Start(opts Options) (*Master, error) {
	bin, err := FindMaster(opts.Bin)
	if err != nil {
		return nil, err
	}
	if opts.LogDir == "" {
		opts.LogDir = "build/cluster-logs"
	}
	if opts.Wait == 0 {
		opts.Wait = 60 * time.Second
	}
	if err := os.MkdirAll(opts.LogDir, 0o755); err != nil {
		return nil, err
	}
	ports := opts.Ports
	if ports == nil {
		if ports, err = FreePorts(3); err != nil {
			return nil, err
		}
	}
	m := &Master{opts: opts, bin: bin, ports: ports}
	if kv := opts.KVEvents; kv != nil {
		// Upstream before the publisher (v0.3.12.post1) has no such flags,
		// and refuses to start with an unknown one.
		if m.kvFlags, err = hasFlag(bin, "enable_kv_events"); err != nil {
			return nil, err
		}
		m.kvPort = kv.Port
		if m.kvPort == 0 {
			p, err := FreePorts(1)
			if err != nil {
				return nil, err
			}
			m.kvPort = p[0]
		}
	}
	if m.metricsHost, err = hasFlag(bin, "metrics_host"); err != nil {
		return nil, err
	}
	name := opts.LogName
	if name == "" {
		name = fmt.Sprintf("master-%d.log", ports[0])
	}
	m.LogPath = filepath.Join(opts.LogDir, name)
	if err := m.start(); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *Master) start() error {
	logf, err := os.OpenFile(m.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	args := []string{
		"--rpc_address=127.0.0.1",
		"--rpc_port=" + strconv.Itoa(m.ports[0]),
		"--metrics_port=" + strconv.Itoa(m.ports[2]),
		"--logtostderr=true",
	}
	if ha := m.opts.HA; ha != nil {
		args = append(args, "--enable_ha=true", "--ha_backend_type="+ha.Backend,
			"--ha_backend_connstring="+ha.Connstring, "--cluster_id="+ha.ClusterID)
		if ha.Backend == "etcd" {
			// At the pinned commit a master promotes itself only with a
			// standby capability (oplog or snapshot restore): without one,
			// upstream's NoopStandbyController refuses every promotion
			// (fixed upstream by kvcache-ai/Mooncake#3566, after the pin).
			args = append(args, "--etcd_endpoints="+ha.Connstring, "--enable_oplog=true")
		} else {
			// Upstream's oplog follows etcd only: a Redis group's standby
			// capability is snapshot restore, from a local directory.
			args = append(args, "--enable_snapshot_restore=true", "--snapshot_object_store_type=local",
				"--snapshot_backup_dir="+ha.SnapshotDir)
		}
	} else {
		args = append(args, "--enable_http_metadata_server=true",
			"--http_metadata_server_host=127.0.0.1",
			"--http_metadata_server_port="+strconv.Itoa(m.ports[1]))
	}
	if m.metricsHost {
		args = append(args, "--metrics_host=127.0.0.1")
	}
	if m.opts.Lease != "" {
		args = append(args, "--default_kv_lease_ttl="+m.opts.Lease)
	}
	if kv := m.opts.KVEvents; kv != nil && m.kvFlags {
		id := kv.BackendID
		if id == "" {
			id = "mcgo-test"
		}
		args = append(args, "--enable_kv_events=true", "--kv_events_bind_endpoint="+m.KVEventsEndpoint(),
			"--kv_events_backend_id="+id)
		if kv.QueueCapacity > 0 {
			args = append(args, "--kv_events_queue_capacity="+strconv.Itoa(kv.QueueCapacity))
		}
	}
	args = append(args, m.opts.Extra...)
	cmd := exec.Command(m.bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "MC_TCP_BIND_ADDRESS=127.0.0.1")
	if m.opts.HA != nil && m.opts.HA.SnapshotDir != "" {
		cmd.Env = append(cmd.Env, "MOONCAKE_SNAPSHOT_LOCAL_PATH="+m.opts.HA.SnapshotDir)
	}
	// Its own process group: a terminal's Ctrl-C reaches only the runner,
	// which stops the master by PID.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", m.bin, err)
	}
	done := make(chan struct{})
	m.mu.Lock()
	m.cmd, m.done = cmd, done
	m.mu.Unlock()
	go func() {
		err := cmd.Wait()
		logf.Close()
		m.mu.Lock()
		m.exitErr = err
		m.mu.Unlock()
		close(done)
	}()
	if !m.opts.Quiet {
		fmt.Fprintf(os.Stderr, "cluster: mooncake_master pid %d, rpc %s, metadata %s, log %s\n",
			cmd.Process.Pid, m.Addr(), m.MetadataURL(), m.LogPath)
	}
	if err := m.waitReady(); err != nil {
		m.Stop()
		return fmt.Errorf("%w (see %s)", err, m.LogPath)
	}
	return nil
}

// Addr is the master's RPC address, MetadataURL its HTTP metadata server.
func (m *Master) Addr() string        { return fmt.Sprintf("127.0.0.1:%d", m.ports[0]) }
func (m *Master) MetadataURL() string { return fmt.Sprintf("http://127.0.0.1:%d/metadata", m.ports[1]) }

// KVEventsEndpoint is where the master's KV event publisher binds
// (tcp://127.0.0.1:port), "" when it was started without KVEvents.
func (m *Master) KVEventsEndpoint() string {
	if m.kvPort == 0 {
		return ""
	}
	return fmt.Sprintf("tcp://127.0.0.1:%d", m.kvPort)
}

// ErrNoKVEvents: the master was asked for KV events and does not publish
// them (a build with ENABLE_KV_EVENTS=OFF, whose publisher is a stub that
// binds nothing).
var ErrNoKVEvents = errors.New("testcluster: the master does not publish KV events (built without ENABLE_KV_EVENTS)")

// WaitKVEvents waits up to wait for the master's publisher to accept a
// connection: nil once it does, ErrNoKVEvents (or why not) when it never
// does. A member of an HA group publishes only while it leads.
func (m *Master) WaitKVEvents(wait time.Duration) error {
	if m.kvPort == 0 {
		return errors.New("testcluster: the master was started without KVEvents")
	}
	if !m.kvFlags {
		return fmt.Errorf("%w: %s has no --enable_kv_events", ErrNoKVEvents, m.bin)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", m.kvPort)
	deadline := time.Now().Add(wait)
	for {
		c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
		if err == nil {
			c.Close()
			m.kvLive.Store(true)
			return nil
		}
		if m.PID() == 0 {
			return errors.New("testcluster: the master is not running")
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: nothing listens on %s after %v", ErrNoKVEvents, addr, wait)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// AdminURL is the master's metrics and admin HTTP server (get_all_segments, ...).
func (m *Master) AdminURL() string { return fmt.Sprintf("http://127.0.0.1:%d", m.ports[2]) }

// PID is the running master's process id (0 when stopped).
func (m *Master) PID() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd == nil {
		return 0
	}
	return m.cmd.Process.Pid
}

// Exited is closed when the running master's process ends (on its own or
// stopped); ExitErr then says how.
func (m *Master) Exited() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.done
}

// ExitErr is the last master process's Wait error.
func (m *Master) ExitErr() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.exitErr
}

// Crashed says whether the master's process ended by a signal nobody here
// sent (Stop, Kill and Restart do not count), and which: upstream's own
// crash, which a test must tell apart from the binding's failures.
func (m *Master) Crashed() (syscall.Signal, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd == nil {
		return 0, false
	}
	select {
	case <-m.done:
	default:
		return 0, false
	}
	var ee *exec.ExitError
	if !errors.As(m.exitErr, &ee) {
		return 0, false
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal(), true
	}
	return 0, false
}

// Stop ends the master with SIGTERM (SIGKILL after 10 s) and waits for it.
func (m *Master) Stop() { m.signal(syscall.SIGTERM, 10*time.Second) }

// Kill ends the master with SIGKILL, as a crash would, and waits for it.
func (m *Master) Kill() { m.signal(syscall.SIGKILL, 0) }

// Pause stops the master with SIGSTOP: its ports stay open and the kernel
// still accepts connections, but nothing answers, as with a hung server.
func (m *Master) Pause() error { return m.sendTo(syscall.SIGSTOP) }

// Resume continues a paused master (SIGCONT).
func (m *Master) Resume() error { return m.sendTo(syscall.SIGCONT) }

func (m *Master) sendTo(sig syscall.Signal) error {
	pid := m.PID()
	if pid == 0 {
		return errors.New("testcluster: the master is not running")
	}
	return syscall.Kill(pid, sig)
}

func (m *Master) signal(sig syscall.Signal, grace time.Duration) {
	m.mu.Lock()
	cmd, exited := m.cmd, m.done
	m.cmd = nil
	m.mu.Unlock()
	if cmd == nil {
		return
	}
	pid := cmd.Process.Pid
	_ = syscall.Kill(pid, sig)
	// A paused master handles SIGTERM only once continued.
	_ = syscall.Kill(pid, syscall.SIGCONT)
	if grace > 0 {
		select {
		case <-exited:
		case <-time.After(grace):
			_ = syscall.Kill(pid, syscall.SIGKILL)
			<-exited
		}
	} else {
		<-exited
	}
	if !m.opts.Quiet {
		fmt.Fprintf(os.Stderr, "cluster: stopped mooncake_master (pid %d, %v); log %s\n", pid, sig, m.LogPath)
	}
}

// Restart starts a new master on the same ports (after Kill or Stop).
func (m *Master) Restart() error {
	if m.PID() != 0 {
		return errors.New("testcluster: the master is still running")
	}
	return m.start()
}

// Env is the environment a client of this master runs with: the
// conformance suite's variables and Mooncake's own, all on loopback.
func (m *Master) Env() []string {
	env := []string{
		"MCGO_TEST_MASTER=" + m.Addr(),
		"MCGO_TEST_METADATA=" + m.MetadataURL(),
		"MCGO_TEST_MASTER_ADMIN=" + m.AdminURL(),
		"MOONCAKE_MASTER=" + m.Addr(),
		"MOONCAKE_TE_META_DATA_SERVER=" + m.MetadataURL(),
		"MOONCAKE_PROTOCOL=tcp",
		"MOONCAKE_GLOBAL_SEGMENT_SIZE=1gb",
		"MOONCAKE_LOCAL_HOSTNAME=127.0.0.1",
		"MOONCAKE_DEVICE=",
		"MC_TCP_BIND_ADDRESS=127.0.0.1",
		"MC_MS_AUTO_DISC=0",
	}
	if m.kvLive.Load() {
		// mooncaketest's Cluster.KVEvents: the publisher a test subscribes to.
		env = append(env, "MCGO_TEST_KV_EVENTS="+m.KVEventsEndpoint())
	}
	return env
}

// FindMaster finds mooncake_master: path, $MOONCAKE_MASTER_BIN,
// $MOONCAKE_PREFIX/build/mooncake-store/src/mooncake_master, or PATH.
func FindMaster(path string) (string, error) {
	return findBin(path, "mooncake_master", "MOONCAKE_MASTER_BIN")
}

// FindRealClient finds upstream's standalone real client, mooncake_client,
// as FindMaster finds the master ($MOONCAKE_REAL_CLIENT_BIN first).
func FindRealClient(path string) (string, error) {
	return findBin(path, "mooncake_client", "MOONCAKE_REAL_CLIENT_BIN")
}

func findBin(path, name, envVar string) (string, error) {
	var tried []string
	try := func(p string) (string, bool) {
		if p == "" {
			return "", false
		}
		tried = append(tried, p)
		st, err := os.Stat(p)
		return p, err == nil && !st.IsDir() && st.Mode()&0o111 != 0
	}
	if p, ok := try(path); ok {
		return p, nil
	}
	if p, ok := try(os.Getenv(envVar)); ok {
		return p, nil
	}
	if pre := os.Getenv("MOONCAKE_PREFIX"); pre != "" {
		for _, c := range []string{"build/mooncake-store/src/" + name, "bin/" + name} {
			if p, ok := try(filepath.Join(pre, c)); ok {
				return p, nil
			}
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	tried = append(tried, name+" on PATH")
	return "", fmt.Errorf("%s not found (tried %q); set MOONCAKE_PREFIX to an upstream build or %s", name, tried, envVar)
}

// FreePorts returns n distinct free TCP ports on 127.0.0.1.
func FreePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitReady waits until the RPC port accepts connections and the HTTP
// metadata server answers.
func (m *Master) waitReady() error {
	deadline := time.Now().Add(m.opts.Wait)
	client := &http.Client{Timeout: 2 * time.Second}
	url := fmt.Sprintf("http://127.0.0.1:%d/metadata?key=mcgo_probe", m.ports[1])
	addr := m.Addr()
	if m.opts.HA != nil {
		// A member of an HA group serves RPC only while it leads; its
		// admin server answers from the start.
		url, addr = m.AdminURL()+"/metrics", fmt.Sprintf("127.0.0.1:%d", m.ports[2])
	}
	exited := m.Exited()
	for {
		select {
		case <-exited:
			return fmt.Errorf("mooncake_master exited during start-up: %v", m.ExitErr())
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			resp, herr := client.Get(url)
			if herr == nil {
				resp.Body.Close()
				return nil
			}
			err = herr
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mooncake_master not ready after %s: %v", m.opts.Wait, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Serving reports whether the master's RPC port accepts connections: in an
// HA group, whether it is the leader.
func (m *Master) Serving() bool {
	if m.PID() == 0 {
		return false
	}
	c, err := net.DialTimeout("tcp", m.Addr(), 500*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// WaitLeader waits until one master of an HA group serves, and returns it.
func WaitLeader(ms []*Master, wait time.Duration) (*Master, error) {
	deadline := time.Now().Add(wait)
	for {
		for _, m := range ms {
			if m.Serving() {
				return m, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("testcluster: no master of the HA group serves after %v", wait)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
