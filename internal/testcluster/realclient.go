package testcluster

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RealClient is one running mooncake_client: upstream's standalone real
// client, which dummy clients (Python's setup_dummy, mooncake.OpenDummy)
// call over RPC on Port and share memory with through the abstract socket
// "@mooncake_client_<Port>.sock".
type RealClient struct {
	Port    int
	LogPath string
	cmd     *exec.Cmd
	done    chan struct{}
}

// RealClientOptions configure a real client.
type RealClientOptions struct {
	Master, Metadata string        // the master's RPC address and metadata URL
	Segment, Local   string        // its segment and local buffer, upstream's size form ("128mb")
	LogDir           string        // directory of its log (default build/cluster-logs)
	Wait             time.Duration // how long to wait for it to answer (default 60 s)
	Quiet            bool          // do not print the start line
}

// StartRealClient starts a real client on a free loopback port and waits
// until its RPC port answers.
func StartRealClient(o RealClientOptions) (*RealClient, error) {
	if o.LogDir == "" {
		o.LogDir = "build/cluster-logs"
	}
	if o.Wait == 0 {
		o.Wait = 60 * time.Second
	}
	if err := os.MkdirAll(o.LogDir, 0o755); err != nil {
		return nil, err
	}
	bin, err := FindRealClient("")
	if err != nil {
		return nil, err
	}
	ports, err := FreePorts(1)
	if err != nil {
		return nil, err
	}
	r := &RealClient{Port: ports[0], LogPath: filepath.Join(o.LogDir, fmt.Sprintf("real-client-%d.log", ports[0])), done: make(chan struct{})}
	logf, err := os.OpenFile(r.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	r.cmd = exec.Command(bin,
		"--host=127.0.0.1",
		"--port="+strconv.Itoa(r.Port),
		"--metadata_server="+o.Metadata,
		"--master_server_address="+o.Master,
		"--protocol=tcp",
		"--global_segment_size="+o.Segment,
		"--local_buffer_size="+o.Local,
		"--logtostderr=true",
	)
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	r.cmd.Env = append(os.Environ(), "MC_TCP_BIND_ADDRESS=127.0.0.1")
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := r.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		_ = r.cmd.Wait()
		logf.Close()
		close(r.done)
	}()
	if !o.Quiet {
		fmt.Fprintf(os.Stderr, "cluster: mooncake_client pid %d, rpc %s, log %s\n", r.cmd.Process.Pid, r.Addr(), r.LogPath)
	}
	deadline := time.Now().Add(o.Wait)
	for {
		c, err := net.DialTimeout("tcp", r.Addr(), time.Second)
		if err == nil {
			c.Close()
			return r, nil
		}
		select {
		case <-r.done:
			return nil, fmt.Errorf("mooncake_client exited before it answered (see %s)", r.LogPath)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			r.Stop()
			return nil, fmt.Errorf("mooncake_client did not answer on %s within %v (see %s)", r.Addr(), o.Wait, r.LogPath)
		}
	}
}

// Addr is the real client's RPC address, what a dummy connects to.
func (r *RealClient) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.Port) }

// Stop ends the real client by its PID with SIGTERM (SIGKILL after 10 s)
// and waits for it.
func (r *RealClient) Stop() {
	_ = syscall.Kill(r.cmd.Process.Pid, syscall.SIGTERM)
	_ = syscall.Kill(r.cmd.Process.Pid, syscall.SIGCONT) // a paused one handles SIGTERM once continued
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(r.cmd.Process.Pid, syscall.SIGKILL)
		<-r.done
	}
}

// Kill ends the real client with SIGKILL, as a crash would, and waits.
func (r *RealClient) Kill() {
	_ = syscall.Kill(r.cmd.Process.Pid, syscall.SIGKILL)
	<-r.done
}

// Pause stops the real client with SIGSTOP, as a hung process; Resume
// continues it.
func (r *RealClient) Pause() error  { return syscall.Kill(r.cmd.Process.Pid, syscall.SIGSTOP) }
func (r *RealClient) Resume() error { return syscall.Kill(r.cmd.Process.Pid, syscall.SIGCONT) }

// segmentLines are where upstream's client logs the name its segment is
// mounted under: at INFO (transfer_engine_impl.cpp, parseHostNameWithPort)
// and, on its first start against a metadata server that does not know it
// yet, at WARNING (transfer_metadata.cpp), which is all the standalone
// client prints without --log_dir.
var segmentLines = []*regexp.Regexp{
	regexp.MustCompile(`server_name: (\S+) port: (\d+)`),
	regexp.MustCompile(`Failed to retrieve segment descriptor, name (\S+):(\d+)`),
}

// Segment is the name of the real client's segment at the master, read
// from its log ("" when the log does not say).
func (r *RealClient) Segment() string {
	b, err := os.ReadFile(r.LogPath)
	if err != nil {
		return ""
	}
	for _, re := range segmentLines {
		if m := re.FindSubmatch(b); m != nil {
			return string(m[1]) + ":" + string(m[2])
		}
	}
	return ""
}

// Segments lists the segments the master whose admin server is admin
// (Master.AdminURL) has mounted.
func Segments(admin string) ([]string, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(admin + "/get_all_segments")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s/get_all_segments: %s: %s", admin, resp.Status, body)
	}
	return strings.Fields(string(body)), nil
}

// WaitSegmentGone waits until the master (admin URL) no longer has segment
// name, at most wait: upstream's mooncake_client does not unmount when it
// is stopped, so its segment stays until the master expires the client
// (client_ttl, 10 s by default), and puts placed there until then fail.
func WaitSegmentGone(admin, name string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		segs, err := Segments(admin)
		if err != nil {
			return err
		}
		if !slices.Contains(segs, name) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the master still has segment %s after %v", name, wait)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
