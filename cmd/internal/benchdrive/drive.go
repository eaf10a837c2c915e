// Package benchdrive runs two benchmark clients side by side on one
// cluster, case by case (mcbench drive, make bench-compare).
//
// Each client is a process in serve mode (mcbench -serve, bench_python.py
// --serve): it opens its store, prefaults its segment and writes one JSON
// line, its Run header without results. Then, for every line it reads on
// stdin (a case name of its plan), it runs that case with fresh keys and
// writes one JSON line, a benchplan.ServeReply. "quit" (or end of input)
// closes the store and ends the process.
//
// The drive sends every case to the first client, then to the second, a
// given number of times: A B A B, so the two measure a case seconds apart
// and never at the same time. A client answers a case it does not run
// (Python's client and the C floor a combining twin, the C floor most
// cases) with no results. Every round starts a fresh pair of
// processes, and the one started first alternates between rounds.
//
// A client may run its combining twins (benchplan.CombiningSuffix) in a
// process of its own (Options.GoTwinArgv, PythonTwinArgv), so that during
// every other case its process holds one store, as Python's does.
package benchdrive

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mooncake-go/mooncake-go/cmd/internal/benchplan"
	"github.com/mooncake-go/mooncake-go/cmd/internal/benchreport"
)

// Options of a drive.
type Options struct {
	Rounds int // fresh pairs of client processes
	Repeat int // runs of every case per client and round
	OutDir string
	// GoArgv and PythonArgv are the two clients' command lines, serve flags
	// included. The second is the Python client, or the Go client again for
	// an A/A check; its runs are named py-N either way.
	GoArgv, PythonArgv []string
	// CArgv, when set, is a third client, the C floor (cgo/bench/mcbench_c):
	// it runs after the other two on a case, or before them in every other
	// sample, answers only the cases it has (an empty result list for the
	// others), and its runs are c-N.json.
	CArgv []string
	// GoTwinArgv and PythonTwinArgv, when set, are a second process of the
	// Go (or second) client that runs that client's combining twins; the
	// drive sends them the twins' names instead of the client's own
	// process, and their results go into the client's runs.
	GoTwinArgv, PythonTwinArgv []string
	PythonFirst                bool     // Python before Go within a round (B A B A), to check that order does not matter
	Cases                      []string // the case names to send, in order
	Stdout, Stderr             io.Writer
}

// Run drives the clients and writes go-N.json and py-N.json, one per round
// and pass, and each process's log into o.OutDir.
func Run(o Options) error {
	if o.Rounds <= 0 || o.Repeat <= 0 {
		return errors.New("-rounds and -repeat must be positive")
	}
	if len(o.Cases) == 0 {
		return errors.New("the plan is empty")
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return err
	}
	samples := o.Rounds * o.Repeat
	goRuns, pyRuns := make([]benchplan.Run, samples), make([]benchplan.Run, samples)
	var cRuns []benchplan.Run
	if len(o.CArgv) > 0 {
		cRuns = make([]benchplan.Run, samples)
	}
	start := time.Now()
	// Where a process's memory lands (its segment above all) changes its
	// speed for its whole life on a virtual machine, so every round samples
	// another placement with its own pair of processes. The client that
	// connects first alternates because upstream's client may slow down or
	// speed up when another one joins.
	for r := 0; r < o.Rounds; r++ {
		first := "Go"
		if r%2 == 1 {
			first = "Python"
		}
		fmt.Fprintf(o.Stderr, "drive: round %d/%d: starting the clients, %s first (logs in %s)\n", r+1, o.Rounds, first, o.OutDir)
		startGo := func() (*server, error) {
			return startServer("Go", o.GoArgv, filepath.Join(o.OutDir, fmt.Sprintf("go-%d.log", r+1)))
		}
		startPy := func() (*server, error) {
			return startServer("Python", o.PythonArgv, filepath.Join(o.OutDir, fmt.Sprintf("py-%d.log", r+1)))
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
		// The C floor starts last: it is not one of the pair whose start
		// order alternates.
		var cs *server
		if cRuns != nil {
			if cs, err = startServer("C", o.CArgv, filepath.Join(o.OutDir, fmt.Sprintf("c-%d.log", r+1))); err != nil {
				gs.stop()
				ps.stop()
				return err
			}
		}
		// The twins' processes start after the others, for the same reason.
		cl := clients{g: gs, p: ps, c: cs}
		for _, t := range []struct {
			argv       []string
			name, file string
			into       **server
		}{{o.GoTwinArgv, "Go twins", "go-twins", &cl.gt}, {o.PythonTwinArgv, "second client's twins", "py-twins", &cl.pt}} {
			if len(t.argv) == 0 || err != nil {
				continue
			}
			*t.into, err = startServer(t.name, t.argv, filepath.Join(o.OutDir, fmt.Sprintf("%s-%d.log", t.file, r+1)))
		}
		if err != nil {
			cl.stop()
			return err
		}
		for k := 0; k < o.Repeat; k++ {
			i := r*o.Repeat + k
			goRuns[i], pyRuns[i] = gs.head, ps.head
			goRuns[i].Results, pyRuns[i].Results = nil, nil
			runs := []*benchplan.Run{&goRuns[i], &pyRuns[i]}
			if cs != nil {
				cRuns[i] = cs.head
				cRuns[i].Results = nil
				runs = append(runs, &cRuns[i])
			}
			for _, run := range runs {
				p := maps.Clone(run.Params)
				if p == nil {
					p = map[string]any{}
				}
				p["drive"] = map[string]any{"rounds": o.Rounds, "repeat": o.Repeat, "round": r + 1, "pass": k + 1, "first": first}
				run.Params = p
			}
		}
		var cRound []benchplan.Run
		if cs != nil {
			cRound = cRuns[r*o.Repeat:]
		}
		fmt.Fprintf(o.Stderr, "drive: round %d/%d memory at the start: %s\n", r+1, o.Rounds, cl.memory())
		err = o.round(cl, r, goRuns[r*o.Repeat:], pyRuns[r*o.Repeat:], cRound, start)
		fmt.Fprintf(o.Stderr, "drive: round %d/%d memory at the end: %s\n", r+1, o.Rounds, cl.memory())
		serr := cl.stop()
		if err != nil {
			return err
		}
		if serr != nil {
			return fmt.Errorf("round %d: %v", r+1, serr)
		}
	}
	if err := writeRuns(goRuns, pyRuns, o.OutDir, len(o.Cases), start, o.Stdout); err != nil {
		return err
	}
	return writeCRuns(cRuns, o.OutDir)
}

// clients are one round's processes: the pair, the C floor and the twins'
// processes (nil when not started).
type clients struct{ g, p, c, gt, pt *server }

// stop stops every process and says which exited badly.
func (cl clients) stop() error {
	var errs []error
	for _, s := range []*server{cl.g, cl.p, cl.c, cl.gt, cl.pt} {
		if s == nil {
			continue
		}
		if err := s.stop(); err != nil {
			errs = append(errs, fmt.Errorf("%s client exited with %v", s.name, err))
		}
	}
	return errors.Join(errs...)
}

// memory is each process's resident memory and the part of it in
// transparent huge pages (/proc/PID/smaps_rollup): a client whose segment
// or registered memory got 4 KiB pages where the others got huge ones
// copies slower for its whole life, which the drive's log should show.
func (cl clients) memory() string {
	var parts []string
	for _, s := range []*server{cl.g, cl.p, cl.c, cl.gt, cl.pt} {
		if s == nil || s.cmd.Process == nil {
			continue
		}
		rss, huge, err := smapsRollup(s.cmd.Process.Pid)
		if err != nil {
			parts = append(parts, fmt.Sprintf("%s: %v", s.name, err))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %d MiB (%d MiB huge)", s.name, rss>>20, huge>>20))
	}
	return strings.Join(parts, ", ")
}

// smapsRollup reads a process's Rss and AnonHugePages, in bytes.
func smapsRollup(pid int) (rss, huge int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, perr := strconv.ParseInt(f[1], 10, 64)
		if perr != nil {
			continue
		}
		switch f[0] {
		case "Rss:":
			rss = kb << 10
		case "AnonHugePages:":
			huge = kb << 10
		}
	}
	return rss, huge, nil
}

// forCase returns the pair's processes that run case name: a client's
// twins' process for a twin, when it has one.
func (cl clients) forCase(name string) (g, p *server) {
	g, p = cl.g, cl.p
	if strings.HasSuffix(name, benchplan.CombiningSuffix) {
		if cl.gt != nil {
			g = cl.gt
		}
		if cl.pt != nil {
			p = cl.pt
		}
	}
	return g, p
}

func (o Options) round(cl clients, r int, goRuns, pyRuns, cRuns []benchplan.Run, start time.Time) error {
	cs := cl.c
	for i, name := range o.Cases {
		for k := 0; k < o.Repeat; k++ {
			where := fmt.Sprintf("round %d/%d [%3d/%d] %d/%d", r+1, o.Rounds, i+1, len(o.Cases), k+1, o.Repeat)
			// The C floor runs after the pair, and before it every other
			// sample (round + pass odd), so that neither side always
			// finds the caches and the master warmed by the other.
			cFirst := cs != nil && (r+k)%2 == 1
			if cFirst {
				if err := o.cSample(cs, name, &cRuns[k], where); err != nil {
					return err
				}
			}
			gs, ps := cl.forCase(name)
			if err := o.pair(gs, ps, name, &goRuns[k], &pyRuns[k], where, start); err != nil {
				return err
			}
			if cs != nil && !cFirst {
				if err := o.cSample(cs, name, &cRuns[k], where); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// cSample runs case name on the C floor and appends its results to run.
func (o Options) cSample(cs *server, name string, run *benchplan.Run, where string) error {
	res, err := cs.run(name)
	if err != nil {
		return err
	}
	run.Results = append(run.Results, res...)
	if len(res) > 0 {
		fmt.Fprintf(o.Stderr, "drive: %s %-45s C  %8s keys/s, p50 %s µs\n", where, name, benchreport.Num(res[0].OpsPerSec),
			benchreport.Num(res[0].P50Us))
	}
	return nil
}

// writeCRuns writes the C floor's runs, c-N.json, if there was one.
func writeCRuns(runs []benchplan.Run, outDir string) error {
	for i, run := range runs {
		data, err := json.MarshalIndent(run, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(outDir, fmt.Sprintf("c-%d.json", i+1)), append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (o Options) pair(gs, ps *server, name string, goRun, pyRun *benchplan.Run, where string, start time.Time) error {
	var gres, pres []benchplan.Result
	var err error
	if o.PythonFirst {
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
	if len(gres) > 0 && len(pres) == 0 { // a case of the Go client's only (a combining twin)
		fmt.Fprintf(o.Stderr, "drive: %s %-45s go %8s keys/s  (%s, load %s)%s\n", where, name, benchreport.Num(gres[0].OpsPerSec),
			time.Since(start).Round(time.Second), loadAvg(), benchreport.PlacementNote(gres[0]))
	}
	if len(gres) > 0 && len(pres) > 0 {
		g, p := gres[0], pres[0]
		ratio := 0.0
		if p.OpsPerSec > 0 {
			ratio = g.OpsPerSec / p.OpsPerSec
		}
		fmt.Fprintf(o.Stderr, "drive: %s %-45s go %8s py %8s keys/s  %5.2fx  (%s, load %s)%s\n",
			where, name, benchreport.Num(g.OpsPerSec), benchreport.Num(p.OpsPerSec), ratio, time.Since(start).Round(time.Second), loadAvg(),
			benchreport.PlacementNote(g))
	}
	return nil
}

// server is one client process in serve mode.
type server struct {
	name string
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	head benchplan.Run
	log  *os.File
}

func startServer(name string, argv []string, logPath string) (*server, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("no command for the %s client", name)
	}
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
	if err := json.Unmarshal(line, &s.head); err != nil || s.head.Schema != benchplan.Schema {
		s.stop()
		return nil, fmt.Errorf("%s client: bad header %q (see %s)", name, line, logPath)
	}
	return s, nil
}

func (s *server) run(name string) ([]benchplan.Result, error) {
	if _, err := fmt.Fprintln(s.in, name); err != nil {
		return nil, fmt.Errorf("%s client: %w", s.name, err)
	}
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("%s client died during %s: %v", s.name, name, err)
	}
	var rep benchplan.ServeReply
	if err := json.Unmarshal(line, &rep); err != nil {
		return nil, fmt.Errorf("%s client: bad reply %q", s.name, line)
	}
	if rep.Error != "" {
		return nil, fmt.Errorf("%s client: %s", s.name, rep.Error)
	}
	return rep.Results, nil
}

// stop asks the client to quit and waits for it, since closing its store
// takes a few seconds in upstream's client; it kills it, by its own process
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

func writeRuns(goRuns, pyRuns []benchplan.Run, outDir string, cases int, start time.Time, stdout io.Writer) error {
	for r := range goRuns {
		for _, x := range []struct {
			run  benchplan.Run
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
