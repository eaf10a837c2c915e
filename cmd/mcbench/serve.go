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
	"strings"
	"time"
)

// The serve protocol (mcbench -serve, bench_python.py --serve): the client
// opens its store, prefaults its segment and writes one JSON line, its Run
// header without results. Then, for every line it reads on stdin (a case
// name of its plan), it runs that case with fresh keys and writes one JSON
// line {"results": [...]} or {"error": "..."}. "quit" (or end of input)
// closes the store and ends the process.
//
// mcbench drive keeps a Go and a Python server connected to one cluster and
// sends them every case in turn: Go, Python, Go, Python, ... So the two
// clients measure a case seconds apart and never at the same time. Each puts
// its objects in its own segment (-own-segment: preferred_segments), so both
// use upstream's local memcpy path as a lone client would. Each round starts
// a fresh pair of processes.

type serveReply struct {
	Results []Result `json:"results"`
	Error   string   `json:"error,omitempty"`
}

func (b *bench) serve(doc Run, plan []Case, in io.Reader, out io.Writer) error {
	byName := map[string]Case{}
	for _, c := range plan {
		byName[c.Name] = c
	}
	enc := json.NewEncoder(out)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	sc := bufio.NewScanner(in)
	for seq := 0; sc.Scan(); seq++ {
		name := strings.TrimSpace(sc.Text())
		if name == "" {
			continue
		}
		if name == "quit" {
			return nil
		}
		var rep serveReply
		if c, ok := byName[name]; !ok {
			rep.Error = fmt.Sprintf("no case %q in the plan", name)
		} else if res, err := b.runCase(seq, c); err != nil {
			rep.Error = fmt.Sprintf("%s: %v", name, err)
		} else {
			rep.Results = res
		}
		if rep.Results == nil {
			rep.Results = []Result{}
		}
		if err := enc.Encode(rep); err != nil {
			return err
		}
	}
	return sc.Err()
}

// server is one client process in serve mode.
type server struct {
	name string
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	head Run
	log  *os.File
}

func startServer(name string, argv []string, logPath string) (*server, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = logf
	in, err := cmd.StdinPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s client: %w", name, err)
	}
	s := &server{name: name, cmd: cmd, in: in, out: bufio.NewReaderSize(outp, 1<<20), log: logf}
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("%s client did not start (see %s): %v", name, logPath, err)
	}
	if err := json.Unmarshal(line, &s.head); err != nil || s.head.Schema != schema {
		s.stop()
		return nil, fmt.Errorf("%s client: bad header %q (see %s)", name, line, logPath)
	}
	return s, nil
}

func (s *server) run(name string) ([]Result, error) {
	if _, err := fmt.Fprintln(s.in, name); err != nil {
		return nil, fmt.Errorf("%s client: %w", s.name, err)
	}
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("%s client died during %s: %v", s.name, name, err)
	}
	var rep serveReply
	if err := json.Unmarshal(line, &rep); err != nil {
		return nil, fmt.Errorf("%s client: bad reply %q", s.name, line)
	}
	if rep.Error != "" {
		return nil, fmt.Errorf("%s client: %s", s.name, rep.Error)
	}
	return rep.Results, nil
}

// stop asks the client to quit and waits for it (closing its store takes
// a few seconds in upstream's client); it kills it, by its own process
// handle, only if it does not exit within a minute.
func (s *server) stop() error {
	if s.in != nil {
		fmt.Fprintln(s.in, "quit")
		s.in.Close()
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		_ = s.cmd.Process.Kill()
		err = <-done
	}
	s.log.Close()
	return err
}

// runDrive is mcbench drive: both clients side by side, case by case.
func runDrive(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mcbench drive", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rounds := fs.Int("rounds", 2, "rounds: fresh pairs of client processes; the client that starts first alternates "+
		"(Go in odd rounds, Python in even ones), because upstream's client slows down or speeds up when another joins")
	repeat := fs.Int("repeat", 2, "in every round, each case runs this many times per client, alternating Go and Python")
	outDir := fs.String("out", "build/bench/drive", "directory for the runs' JSON (go-N.json, py-N.json) and the clients' logs")
	python := fs.String("python", "python3 scripts/bench_python.py", "the Python client's command")
	goBin := fs.String("go", "", "the Go client's binary (default: this executable)")
	pyFirst := fs.Bool("python-first", false, "run Python before Go in every round (B A B A; to check that order does not matter)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: mcbench drive [-rounds N] [-out DIR] [-python CMD] -- [mcbench flags for both clients]\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	common := fs.Args()
	if *rounds <= 0 || *repeat <= 0 {
		return errors.New("-rounds and -repeat must be positive")
	}
	// The plan, from the same flags the clients get.
	o, err := parseFlags(append([]string{"-list"}, common...), stderr)
	if err != nil {
		return err
	}
	plan, err := o.params.Plan()
	if err != nil {
		return err
	}
	var names []string
	for _, c := range plan {
		if o.only != nil && !o.only.MatchString(c.Name) {
			continue
		}
		if c.Scenario == scVerifyWrite && c.Phase == "read" {
			continue // measured by its write case
		}
		names = append(names, c.Name)
	}
	if len(names) == 0 {
		return errors.New("the plan is empty")
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return err
	}
	self := *goBin
	if self == "" {
		if self, err = os.Executable(); err != nil {
			return err
		}
	}
	serveArgs := append([]string{"-serve", "-own-segment"}, common...)
	samples := *rounds * *repeat
	goRuns, pyRuns := make([]Run, samples), make([]Run, samples)
	start := time.Now()
	// Every round has its own pair of client processes: where a process's
	// memory lands (its segment above all) changes its speed for its whole
	// life on a virtual machine, so rounds sample several placements.
	for r := 0; r < *rounds; r++ {
		first := "Go"
		if r%2 == 1 {
			first = "Python"
		}
		fmt.Fprintf(stderr, "drive: round %d/%d: starting the clients, %s first (logs in %s)\n", r+1, *rounds, first, *outDir)
		startGo := func() (*server, error) {
			return startServer("Go", append([]string{self}, serveArgs...), filepath.Join(*outDir, fmt.Sprintf("go-%d.log", r+1)))
		}
		startPy := func() (*server, error) {
			return startServer("Python", append(strings.Fields(*python), serveArgs...), filepath.Join(*outDir, fmt.Sprintf("py-%d.log", r+1)))
		}
		var gs, ps *server
		var err error
		if first == "Go" {
			if gs, err = startGo(); err == nil {
				if ps, err = startPy(); err != nil {
					gs.stop()
				}
			}
		} else if ps, err = startPy(); err == nil {
			if gs, err = startGo(); err != nil {
				ps.stop()
			}
		}
		if err != nil {
			return err
		}
		for k := 0; k < *repeat; k++ {
			i := r**repeat + k
			goRuns[i], pyRuns[i] = gs.head, ps.head
			goRuns[i].Results, pyRuns[i].Results = nil, nil
			for _, run := range []*Run{&goRuns[i], &pyRuns[i]} {
				p := map[string]any{}
				for key, v := range run.Params {
					p[key] = v
				}
				p["drive"] = map[string]any{"rounds": *rounds, "repeat": *repeat, "round": r + 1, "pass": k + 1, "first": first}
				run.Params = p
			}
		}
		err = driveRound(gs, ps, names, r, *rounds, *repeat, *pyFirst, goRuns[r**repeat:], pyRuns[r**repeat:], start, stderr)
		gerr, perr := gs.stop(), ps.stop()
		if err != nil {
			return err
		}
		if gerr != nil || perr != nil {
			return fmt.Errorf("round %d: clients exited with %v / %v", r+1, gerr, perr)
		}
	}
	return writeDriveRuns(goRuns, pyRuns, *outDir, len(names), start, stdout)
}

func driveRound(gs, ps *server, names []string, r, rounds, repeat int, pyFirst bool, goRuns, pyRuns []Run, start time.Time, stderr io.Writer) error {
	for i, name := range names {
		for k := 0; k < repeat; k++ {
			if err := drivePair(gs, ps, name, pyFirst, &goRuns[k], &pyRuns[k], stderr, func() string {
				return fmt.Sprintf("round %d/%d [%3d/%d] %d/%d", r+1, rounds, i+1, len(names), k+1, repeat)
			}, start); err != nil {
				return err
			}
		}
	}
	return nil
}

func drivePair(gs, ps *server, name string, pyFirst bool, goRun, pyRun *Run, stderr io.Writer, where func() string, start time.Time) error {
	var gres, pres []Result
	var err error
	if pyFirst {
		if pres, err = ps.run(name); err == nil {
			gres, err = gs.run(name)
		}
	} else if gres, err = gs.run(name); err == nil {
		pres, err = ps.run(name)
	}
	if err != nil {
		return err
	}
	goRun.Results = append(goRun.Results, gres...)
	pyRun.Results = append(pyRun.Results, pres...)
	if len(gres) > 0 && len(pres) > 0 {
		g, p := gres[0], pres[0]
		ratio := 0.0
		if p.OpsPerSec > 0 {
			ratio = g.OpsPerSec / p.OpsPerSec
		}
		fmt.Fprintf(stderr, "drive: %s %-45s go %8s py %8s keys/s  %5.2fx  (%s, load %s)\n",
			where(), name, num(g.OpsPerSec), num(p.OpsPerSec), ratio, time.Since(start).Round(time.Second), loadAvg())
	}
	return nil
}

func writeDriveRuns(goRuns, pyRuns []Run, outDir string, cases int, start time.Time, stdout io.Writer) error {
	for r := range goRuns {
		for _, x := range []struct {
			run  Run
			file string
		}{{goRuns[r], fmt.Sprintf("go-%d.json", r+1)}, {pyRuns[r], fmt.Sprintf("py-%d.json", r+1)}} {
			for _, res := range x.run.Results {
				if res.Errors > 0 {
					x.run.Failures = append(x.run.Failures, fmt.Sprintf("%s: %d failed keys", res.Name, res.Errors))
				}
			}
			data, err := json.MarshalIndent(x.run, "", " ")
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(outDir, x.file), append(data, '\n'), 0o644); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(stdout, "drive: %d cases x %d samples x 2 clients in %s; runs in %s\n", cases, len(goRuns),
		time.Since(start).Round(time.Second), outDir)
	return nil
}

func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(data)); len(f) > 0 {
		return f[0]
	}
	return "?"
}
