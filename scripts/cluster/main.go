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
//	MCGO_TEST_MASTER_ADMIN=http://127.0.0.1:<metrics port>
//	MOONCAKE_MASTER, MOONCAKE_TE_META_DATA_SERVER,   (Mooncake's own variables,
//	MOONCAKE_PROTOCOL=tcp, MOONCAKE_LOCAL_HOSTNAME,  read by ConfigFromEnv)
//	MOONCAKE_GLOBAL_SEGMENT_SIZE=1gb
//	MC_TCP_BIND_ADDRESS=127.0.0.1                    (keep clients on loopback)
//	MCGO_TEST_KV_EVENTS=tcp://127.0.0.1:<port>       (with -kv-events, when the
//	                                                 master publishes KV events)
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
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/mooncake-go/mooncake-go/internal/testcluster"
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
	kvEvents := fs.Bool("kv-events", false, "start the master with its KV event publisher on a free loopback port (a master built without ENABLE_KV_EVENTS ignores it)")
	if err := fs.Parse(args); err != nil {
		return 2, err
	}
	cmdArgs := fs.Args()
	if len(cmdArgs) == 0 {
		return 2, errors.New("usage: cluster [flags] -- command [args...]")
	}
	opts := testcluster.Options{Bin: *masterBin, LogDir: *logDir, Lease: *lease, Wait: *wait}
	if *kvEvents {
		opts.KVEvents = &testcluster.KVEvents{}
	}
	m, err := testcluster.Start(opts)
	if err != nil {
		return 1, err
	}
	if *kvEvents {
		// The publisher binds while the master starts; a stub (a build
		// without ENABLE_KV_EVENTS) never does.
		if err := m.WaitKVEvents(3 * time.Second); err != nil {
			fmt.Fprintf(os.Stderr, "cluster: no KV events: %v\n", err)
		} else {
			fmt.Fprintf(os.Stderr, "cluster: KV events on %s\n", m.KVEventsEndpoint())
		}
	}

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	cmd := exec.Command(cmdArgs[0], cmdArgs[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), m.Env()...)
	if err := cmd.Start(); err != nil {
		m.Stop()
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
	case <-m.Exited():
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-done
		fmt.Fprintf(os.Stderr, "cluster: log %s\n", m.LogPath)
		return 1, fmt.Errorf("mooncake_master exited while the command ran: %v", m.ExitErr())
	}
	m.Stop()
	if cmdErr != nil {
		var ee *exec.ExitError
		if errors.As(cmdErr, &ee) {
			return ee.ExitCode(), nil
		}
		return 1, cmdErr
	}
	return 0, nil
}
