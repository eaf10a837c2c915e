package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mooncake-go/mooncake-go/cmd/internal/benchreport"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
)

// runTECompare is `mcbench te-compare`: this binding's `mcbench te` and
// upstream's transfer_engine_bench with the same parameters, case by case,
// paired and alternating (the client that runs first changes every round),
// each client's initiator against its own target, every process stopped by
// its PID. It writes every run's JSON under -out and the report.
func runTECompare(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mcbench te-compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	upstream := fs.String("upstream", "", "upstream's transfer_engine_bench (required unless -aa)")
	self := fs.String("self", "", "the native mcbench binary (default: this one)")
	meta := fs.String("metadata_server", os.Getenv("MCGO_TEST_METADATA"), "metadata service (default $MCGO_TEST_METADATA)")
	ops := fs.String("ops", "read,write", "operations")
	blocks := fs.String("blocks", "4096,65536,1048576,4194304", "block sizes in bytes")
	batch := fs.Int("batch_size", 128, "requests per batch")
	threads := fs.Int("threads", 1, "initiator threads")
	extra := fs.String("extra", defaultExtra, "more cases, op:block:batch:threads, after -ops x -blocks (\"\": none)")
	duration := fs.Int("duration", 5, "seconds per run")
	rounds := fs.Int("rounds", 2, "rounds; each runs every case once per client")
	aa := fs.Bool("aa", false, "A/A: this binding against itself (the noise floor of a ratio)")
	out := fs.String("out", "", "directory for the runs (default build/bench-te/<time>)")
	report := fs.String("report", "", "markdown report to write (default docs/benchmarks-te.md, or -aa.md)")
	chart := fs.String("chart", "", "chart to write (default docs/benchmarks-te.svg; none with -aa)")
	command := fs.String("command", "mcbench te-compare", "the command line quoted in the report")
	from := fs.String("from", "", "write the report from this runs.json instead of running")
	noise := fs.String("noise", "", "runs.json of an A/A run (-aa): its per-case range goes into the report")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *from != "" {
		if _, err := os.Stat(*from); err != nil {
			return fmt.Errorf("-from: %w", err)
		}
	}
	if *meta == "" && *from == "" {
		return errors.New("-metadata_server is required (run under scripts/cluster, which sets $MCGO_TEST_METADATA)")
	}
	if *self == "" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		*self = exe
	}
	clients := []string{"go", "upstream"}
	if *aa {
		clients = []string{"go", "go2"}
	} else if *upstream == "" && *from == "" {
		return errors.New("-upstream (transfer_engine_bench) is required")
	}
	start := time.Now()
	if *from != "" {
		if *out == "" {
			*out = filepath.Dir(*from)
		}
	}
	if *out == "" {
		*out = filepath.Join("build", "bench-te", start.UTC().Format("20060102T150405Z"))
		if *aa {
			*out += "-aa" // where make bench-te-compare finds the noise floor
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	if *report == "" {
		*report = "docs/benchmarks-te.md"
		if *aa {
			*report = "docs/benchmarks-te-aa.md"
		}
	}
	if *chart == "" && !*aa {
		*chart = "docs/benchmarks-te.svg"
	}
	cases, err := teCases(*ops, *blocks, *batch, *threads, *extra)
	if err != nil {
		return err
	}
	var noiseRows []benchreport.TERow
	if *noise != "" {
		nr, err := readTERuns(*noise)
		if err != nil {
			return err
		}
		noiseRows = benchreport.CompareTE(nr, "go", "go2")
	}
	var runs []benchreport.TERun
	if *from != "" {
		if runs, err = readTERuns(*from); err != nil {
			return err
		}
		if fi, err := os.Stat(*from); err == nil {
			start = fi.ModTime()
		}
		return teReport(runs, clients, noiseRows, *command, start, *aa, *report, *chart, *from, stdout)
	}
	probe, err := transfer.Open(transfer.Config{MetadataServer: *meta, LocalServerName: nextName(), Protocol: "tcp"})
	if err != nil {
		return fmt.Errorf("probe engine: %w", err)
	}
	defer probe.Close()
	for r := 0; r < *rounds; r++ {
		for _, tc := range cases {
			order := clients
			if r%2 == 1 {
				order = []string{clients[1], clients[0]}
			}
			for _, c := range order {
				bin := *self
				if c == "upstream" {
					bin = *upstream
				}
				run, err := teRun(probe, bin, c, *meta, tc, *duration, r, *out)
				if err != nil {
					return fmt.Errorf("round %d %s %s: %w", r, c, tc, err)
				}
				fmt.Fprintf(stdout, "round %d %-8s %-28s %9.1f MB/s  p50 %6d us  p99 %6d us\n", r, c, tc, run.MBps, run.LatencyUS[0], run.LatencyUS[1])
				runs = append(runs, run)
			}
		}
	}
	data, _ := json.MarshalIndent(runs, "", " ")
	if err := os.WriteFile(filepath.Join(*out, "runs.json"), data, 0o644); err != nil {
		return err
	}
	return teReport(runs, clients, noiseRows, *command, start, *aa, *report, *chart, *out, stdout)
}

func readTERuns(path string) ([]benchreport.TERun, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var runs []benchreport.TERun
	if err := json.Unmarshal(data, &runs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return runs, nil
}

func teReport(runs []benchreport.TERun, clients []string, noise []benchreport.TERow, command string, when time.Time, aa bool,
	report, chart, runsAt string, stdout io.Writer) error {
	rows := benchreport.CompareTE(runs, clients[0], clients[1])
	if len(rows) == 0 {
		return errors.New("no paired runs to report")
	}
	md := benchreport.TEMarkdown(rows, noise, command, when, aa)
	if err := os.WriteFile(report, []byte(md), 0o644); err != nil {
		return err
	}
	if chart != "" {
		if err := benchreport.WriteTEChart(chart, rows, "Transfer engine over TCP on loopback: the binding / transfer_engine_bench"); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "wrote %s (runs in %s)\n", report, runsAt)
	return nil
}

// defaultExtra are the cases beyond the 128-request anchor: a lone
// request, a 1024-request batch, 64 MiB blocks and two initiator threads.
const defaultExtra = "read:4096:1:1,read:4096:1024:1,read:67108864:8:1,write:67108864:8:1,read:65536:128:2,write:65536:128:2"

// teCase is one set of parameters both tools run with.
type teCase struct {
	op             string
	block          uint64
	batch, threads int
}

func (c teCase) String() string {
	return fmt.Sprintf("%s %s x%d t%d", c.op, benchreport.BlockName(c.block), c.batch, c.threads)
}

// teCases is -ops x -blocks at -batch_size and -threads, then -extra.
func teCases(ops, blocks string, batch, threads int, extra string) ([]teCase, error) {
	var out []teCase
	for _, op := range strings.Split(ops, ",") {
		for _, b := range strings.Split(blocks, ",") {
			c, err := parseTECase(fmt.Sprintf("%s:%s:%d:%d", strings.TrimSpace(op), strings.TrimSpace(b), batch, threads))
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	if extra != "" {
		for _, e := range strings.Split(extra, ",") {
			c, err := parseTECase(strings.TrimSpace(e))
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	return out, nil
}

func parseTECase(s string) (teCase, error) {
	f := strings.Split(s, ":")
	if len(f) != 4 {
		return teCase{}, fmt.Errorf("case %q: want op:block:batch:threads", s)
	}
	c := teCase{op: f[0]}
	var err1, err2, err3 error
	c.block, err1 = strconv.ParseUint(f[1], 10, 64)
	c.batch, err2 = strconv.Atoi(f[2])
	c.threads, err3 = strconv.Atoi(f[3])
	switch {
	case c.op != "read" && c.op != "write":
		return teCase{}, fmt.Errorf("case %q: op is read or write", s)
	case err1 != nil || err2 != nil || err3 != nil || c.block == 0 || c.batch <= 0 || c.threads <= 0:
		return teCase{}, fmt.Errorf("case %q: block, batch and threads must be positive integers", s)
	case c.batch > transfer.MaxBatch:
		return teCase{}, fmt.Errorf("case %q: at most %d requests per batch", s, transfer.MaxBatch)
	}
	return c, nil
}

var nameSeq atomic.Int64

// nextName is a loopback segment name no other engine of this run has.
func nextName() string {
	return fmt.Sprintf("127.0.0.1:%d", 30000+os.Getpid()%5000+int(nameSeq.Add(1))*7)
}

var completed = regexp.MustCompile(`Test completed: duration ([0-9.]+), batch count ([0-9]+)`)
var latency = regexp.MustCompile(`batch latency: p50 (\S+) p99 (\S+)`)

// teRun starts bin as a target, runs bin as an initiator against it, and
// stops the target by its PID.
func teRun(probe *transfer.Engine, bin, client, meta string, tc teCase, seconds, round int, out string) (benchreport.TERun, error) {
	op, block, batch, threads := tc.op, tc.block, tc.batch, tc.threads
	run := benchreport.TERun{Client: client, Op: op, Block: block, Batch: batch, Threads: threads, Round: round}
	tname, iname := nextName(), nextName()
	base := []string{"--protocol=tcp", "--metadata_server=" + meta}
	logf, err := os.Create(filepath.Join(out, fmt.Sprintf("%d-%s-%s-%d-b%d-t%d.log", round, client, op, block, batch, threads)))
	if err != nil {
		return run, err
	}
	defer logf.Close()
	target := exec.Command(bin, teArgs(bin, append(base, "--mode=target", "--local_server_name="+tname))...)
	target.Stdout, target.Stderr = logf, logf
	target.Env = teEnv
	stdin, err := target.StdinPipe() // our target also ends when its input closes
	if err != nil {
		return run, err
	}
	if err := target.Start(); err != nil {
		return run, err
	}
	defer func() {
		_ = target.Process.Signal(syscall.SIGTERM) // by PID
		_ = stdin.Close()
		done := make(chan error, 1)
		go func() { done <- target.Wait() }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = target.Process.Kill()
			<-done
		}
	}()
	// Ready when its segment can be opened (both tools publish it).
	ready := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if s, err := probe.OpenSegment(tname); err == nil {
			if bufs, err := s.Refresh(nil); err == nil && len(bufs) > 0 {
				ready = true
			}
			_ = s.Close()
			if ready {
				break
			}
		}
	}
	if !ready {
		return run, fmt.Errorf("target %s did not publish its segment (log %s)", tname, logf.Name())
	}
	ini := exec.Command(bin, teArgs(bin, append(base, "--mode=initiator", "--local_server_name="+iname, "--segment_id="+tname,
		"--operation="+op, fmt.Sprintf("--block_size=%d", block), fmt.Sprintf("--batch_size=%d", batch),
		fmt.Sprintf("--threads=%d", threads), fmt.Sprintf("--duration=%d", seconds)))...)
	ini.Env = teEnv
	pr, pw := io.Pipe()
	ini.Stdout, ini.Stderr = io.MultiWriter(logf, pw), io.MultiWriter(logf, pw)
	if err := ini.Start(); err != nil {
		return run, err
	}
	go func() { _ = ini.Wait(); pw.Close() }()
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := sc.Text()
		if m := completed.FindStringSubmatch(line); m != nil {
			run.Seconds, _ = strconv.ParseFloat(m[1], 64)
			run.Batches, _ = strconv.Atoi(m[2])
		}
		if m := latency.FindStringSubmatch(line); m != nil {
			p50, _ := time.ParseDuration(m[1])
			p99, _ := time.ParseDuration(m[2])
			run.LatencyUS = [2]int{int(p50.Microseconds()), int(p99.Microseconds())}
		}
	}
	if ini.ProcessState == nil || !ini.ProcessState.Success() || run.Seconds == 0 {
		return run, fmt.Errorf("initiator failed (log %s)", logf.Name())
	}
	run.MBps = float64(run.Batches) * float64(batch) * float64(block) / run.Seconds / 1e6
	return run, nil
}

// teEnv is the children's environment: upstream's tool prints its summary
// with glog's LOG(INFO), which reaches stderr only with GLOG_logtostderr.
var teEnv = append(os.Environ(), "GLOG_logtostderr=1")

// teArgs prefixes the subcommand for this binding's binary (upstream's tool
// takes the flags alone).
func teArgs(bin string, flags []string) []string {
	if strings.Contains(filepath.Base(bin), "mcbench") {
		return append([]string{"te"}, flags...)
	}
	return flags
}
