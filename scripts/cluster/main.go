// Command cluster starts a local Mooncake cluster on loopback, runs a
// command against it, and stops it:
//
//	go run ./scripts/cluster [flags] -- command [args...]
//
// It starts upstream's mooncake_master with its HTTP metadata server on free
// ports of 127.0.0.1, waits until both answer, runs the command with
//
//	MCGO_TEST_MASTER=127.0.0.1:<rpc port>           (the conformance suite)
//	MCGO_TEST_METADATA=http://127.0.0.1:<port>/metadata
//	MOONCAKE_MASTER, MOONCAKE_TE_META_DATA_SERVER,   (Mooncake's own variables,
//	MOONCAKE_PROTOCOL=tcp, MOONCAKE_LOCAL_HOSTNAME,  read by ConfigFromEnv)
//	MOONCAKE_GLOBAL_SEGMENT_SIZE=1gb
//	MC_TCP_BIND_ADDRESS=127.0.0.1                    (keep clients on loopback)
//
// and stops the master by its PID when the command ends, fails, or the
// runner is interrupted. The master's log is kept in -logs. The exit status
// is the command's.
//
// mooncake_master is found through -master, $MOONCAKE_MASTER_BIN,
// $MOONCAKE_PREFIX/build/mooncake-store/src/mooncake_master, or PATH.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

func main() {
	code, err := run(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func run(args []string) (int, error) {
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	masterBin := fs.String("master", "", "path of mooncake_master")
	logDir := fs.String("logs", "build/cluster-logs", "directory for the master's log")
	lease := fs.String("lease", "", "master --default_kv_lease_ttl (default: upstream's, 10 s)")
	wait := fs.Duration("wait", 60*time.Second, "how long to wait for the master to answer")
	if err := fs.Parse(args); err != nil {
		return 2, err
	}
	cmdArgs := fs.Args()
	if len(cmdArgs) == 0 {
		return 2, errors.New("usage: cluster [flags] -- command [args...]")
	}
	bin, err := findMaster(*masterBin)
	if err != nil {
		return 1, err
	}
	if err := os.MkdirAll(*logDir, 0o755); err != nil {
		return 1, err
	}

	ports, err := freePorts(3)
	if err != nil {
		return 1, err
	}
	rpc, httpPort, metrics := ports[0], ports[1], ports[2]
	logPath := filepath.Join(*logDir, fmt.Sprintf("master-%d.log", rpc))
	logf, err := os.Create(logPath)
	if err != nil {
		return 1, err
	}
	defer logf.Close()
	margs := []string{
		"--rpc_address=127.0.0.1",
		"--rpc_port=" + strconv.Itoa(rpc),
		"--enable_http_metadata_server=true",
		"--http_metadata_server_host=127.0.0.1",
		"--http_metadata_server_port=" + strconv.Itoa(httpPort),
		"--metrics_host=127.0.0.1",
		"--metrics_port=" + strconv.Itoa(metrics),
		"--logtostderr=true",
	}
	if *lease != "" {
		margs = append(margs, "--default_kv_lease_ttl="+*lease)
	}
	master := exec.Command(bin, margs...)
	master.Stdout, master.Stderr = logf, logf
	master.Env = append(os.Environ(), "MC_TCP_BIND_ADDRESS=127.0.0.1")
	// Its own process group: a terminal's Ctrl-C reaches only us, and we stop
	// the master by PID.
	master.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := master.Start(); err != nil {
		return 1, fmt.Errorf("start %s: %w", bin, err)
	}
	pid := master.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- master.Wait() }()
	stop := func() {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(pid, syscall.SIGKILL)
			<-exited
		}
		fmt.Fprintf(os.Stderr, "cluster: stopped mooncake_master (pid %d); log %s\n", pid, logPath)
	}

	metaURL := fmt.Sprintf("http://127.0.0.1:%d/metadata", httpPort)
	masterAddr := fmt.Sprintf("127.0.0.1:%d", rpc)
	fmt.Fprintf(os.Stderr, "cluster: mooncake_master pid %d, rpc %s, metadata %s, log %s\n", pid, masterAddr, metaURL, logPath)
	if err := waitReady(masterAddr, httpPort, *wait, exited); err != nil {
		stop()
		return 1, fmt.Errorf("%w (see %s)", err, logPath)
	}

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	cmd := exec.Command(cmdArgs[0], cmdArgs[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(),
		"MCGO_TEST_MASTER="+masterAddr,
		"MCGO_TEST_METADATA="+metaURL,
		"MOONCAKE_MASTER="+masterAddr,
		"MOONCAKE_TE_META_DATA_SERVER="+metaURL,
		"MOONCAKE_PROTOCOL=tcp",
		"MOONCAKE_GLOBAL_SEGMENT_SIZE=1gb",
		"MOONCAKE_LOCAL_HOSTNAME=127.0.0.1",
		"MOONCAKE_DEVICE=",
		"MC_TCP_BIND_ADDRESS=127.0.0.1",
		"MC_MS_AUTO_DISC=0",
	)
	if err := cmd.Start(); err != nil {
		stop()
		return 1, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var cmdErr error
	select {
	case cmdErr = <-done:
	case <-ctx.Done():
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case cmdErr = <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			cmdErr = <-done
		}
	case err := <-exited:
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-done
		fmt.Fprintf(os.Stderr, "cluster: log %s\n", logPath)
		return 1, fmt.Errorf("mooncake_master exited while the command ran: %v", err)
	}
	stop()
	if cmdErr != nil {
		var ee *exec.ExitError
		if errors.As(cmdErr, &ee) {
			return ee.ExitCode(), nil
		}
		return 1, cmdErr
	}
	return 0, nil
}

func findMaster(flagPath string) (string, error) {
	var tried []string
	try := func(p string) (string, bool) {
		if p == "" {
			return "", false
		}
		tried = append(tried, p)
		st, err := os.Stat(p)
		return p, err == nil && !st.IsDir() && st.Mode()&0o111 != 0
	}
	if p, ok := try(flagPath); ok {
		return p, nil
	}
	if p, ok := try(os.Getenv("MOONCAKE_MASTER_BIN")); ok {
		return p, nil
	}
	if pre := os.Getenv("MOONCAKE_PREFIX"); pre != "" {
		for _, c := range []string{"build/mooncake-store/src/mooncake_master", "bin/mooncake_master"} {
			if p, ok := try(filepath.Join(pre, c)); ok {
				return p, nil
			}
		}
	}
	if p, err := exec.LookPath("mooncake_master"); err == nil {
		return p, nil
	}
	tried = append(tried, "mooncake_master on PATH")
	return "", fmt.Errorf("mooncake_master not found (tried %q); set MOONCAKE_PREFIX to an upstream build or MOONCAKE_MASTER_BIN", tried)
}

// freePorts returns n distinct free TCP ports on 127.0.0.1.
func freePorts(n int) ([]int, error) {
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

// waitReady waits until the master's RPC port accepts connections and its
// HTTP metadata server answers.
func waitReady(masterAddr string, httpPort int, limit time.Duration, exited <-chan error) error {
	deadline := time.Now().Add(limit)
	client := &http.Client{Timeout: 2 * time.Second}
	url := fmt.Sprintf("http://127.0.0.1:%d/metadata?key=mcgo_probe", httpPort)
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("mooncake_master exited during start-up: %v", err)
		default:
		}
		c, err := net.DialTimeout("tcp", masterAddr, time.Second)
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
			return fmt.Errorf("mooncake_master not ready after %s: %v", limit, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
