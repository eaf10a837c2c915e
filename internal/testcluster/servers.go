package testcluster

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Server is an etcd or Redis server a test runs on 127.0.0.1 (an HA
// master's election backend, or a transfer engine's metadata store), with
// its data in a directory of its own, stopped by its PID.
type Server struct {
	Name    string // "etcd" or "redis"
	Port    int
	LogPath string
	bin     string
	args    []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Addr is the server's client address, 127.0.0.1:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// StartBackend starts the server of an HA backend by its name, "etcd"
// (StartEtcd) or "redis" (StartRedis).
func StartBackend(backend, dir string) (*Server, error) {
	switch backend {
	case "etcd":
		return StartEtcd(dir)
	case "redis":
		return StartRedis(dir)
	}
	return nil, fmt.Errorf("testcluster: no HA backend %q (etcd or redis)", backend)
}

// StartEtcd starts a one-member etcd cluster ($MCGO_ETCD_BIN, or etcd on
// PATH) with its data under dir.
func StartEtcd(dir string) (*Server, error) {
	bin, err := lookBin("MCGO_ETCD_BIN", "etcd")
	if err != nil {
		return nil, err
	}
	ports, err := FreePorts(2)
	if err != nil {
		return nil, err
	}
	client := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	s := &Server{Name: "etcd", Port: ports[0], bin: bin, LogPath: filepath.Join(dir, "etcd.log"), args: []string{
		"--name", "mcgo", "--data-dir", filepath.Join(dir, "etcd-data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "mcgo=" + peer,
	}}
	return s, s.start()
}

// StartRedis starts a Redis server ($MCGO_REDIS_BIN, or redis-server on
// PATH) without persistence, in dir.
func StartRedis(dir string) (*Server, error) {
	bin, err := lookBin("MCGO_REDIS_BIN", "redis-server")
	if err != nil {
		return nil, err
	}
	ports, err := FreePorts(1)
	if err != nil {
		return nil, err
	}
	s := &Server{Name: "redis", Port: ports[0], bin: bin, LogPath: filepath.Join(dir, "redis.log"), args: []string{
		"--bind", "127.0.0.1", "--port", strconv.Itoa(ports[0]), "--save", "", "--appendonly", "no", "--dir", dir,
	}}
	return s, s.start()
}

func lookBin(envVar, name string) (string, error) {
	if p := os.Getenv(envVar); p != "" {
		return p, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s not found on PATH (or set %s): %w", name, envVar, err)
	}
	return p, nil
}

func (s *Server) start() error {
	if err := os.MkdirAll(filepath.Dir(s.LogPath), 0o755); err != nil {
		return err
	}
	logf, err := os.OpenFile(s.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.bin, s.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-done:
			return fmt.Errorf("%s exited during start-up (see %s)", s.Name, s.LogPath)
		default:
		}
		if c, err := net.DialTimeout("tcp", s.Addr(), time.Second); err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			s.Kill()
			return fmt.Errorf("%s not listening on %s after 30 s (see %s)", s.Name, s.Addr(), s.LogPath)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// PID is the running server's process id (0 when stopped).
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Stop ends the server with SIGTERM (SIGKILL after 10 s) and waits.
func (s *Server) Stop() { s.signal(syscall.SIGTERM, 10*time.Second) }

// Kill ends the server with SIGKILL and waits.
func (s *Server) Kill() { s.signal(syscall.SIGKILL, 0) }

func (s *Server) signal(sig syscall.Signal, grace time.Duration) {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(cmd.Process.Pid, sig)
	if grace > 0 {
		select {
		case <-done:
			return
		case <-time.After(grace):
			_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		}
	}
	<-done
}

// Restart starts the server again on the same port and data (after Stop
// or Kill).
func (s *Server) Restart() error {
	if s.PID() != 0 {
		return errors.New("testcluster: the server is still running")
	}
	return s.start()
}
