package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mooncake-go/mooncake-go/cmd/internal/benchdrive"
)

// runDrive is mcbench drive: it builds the plan from the flags after "--",
// writes it to the output directory, and has cmd/internal/benchdrive run it on
// a Go and a second client that both read that plan file, so the two run
// the same cases with the same settings by construction.
func runDrive(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mcbench drive", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rounds := fs.Int("rounds", 2, "rounds: fresh pairs of client processes; the client that starts first alternates "+
		"(Go in odd rounds, Python in even ones), because upstream's client slows down or speeds up when another joins")
	repeat := fs.Int("repeat", 2, "in every round, each case runs this many times per client, alternating Go and Python")
	outDir := fs.String("out", "build/bench/drive", "directory for the plan (plan.jsonl), the runs' JSON (go-N.json, py-N.json) and the clients' logs")
	python := fs.String("python", "python3 scripts/bench_python.py", "the second client's command: the Python client, or an mcbench binary for an A/A check")
	goBin := fs.String("go", "", "the Go client's command (default: this executable); the Go client's own flags after -- "+
		"(-hash-memo, -batch-write-keys, -batch-write-bytes) go to every Go client")
	cBin := fs.String("c", "", "the C floor client's command (cgo/bench/mcbench_c, built by make bench-compare): a third client, "+
		"after the other two in every pair, for the single-call and raw multi-buffer cases; \"\" for none")
	aa := fs.Bool("aa", false, "the second client (-python) is an mcbench too (an A/A check): its combining twins run apart as the Go client's do")
	pyFirst := fs.Bool("python-first", false, "run Python before Go in every round (B A B A; to check that order does not matter)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: mcbench drive [-rounds N] [-out DIR] [-python CMD] -- [mcbench flags: the plan and the cluster]\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	o, err := parseFlags(fs.Args(), stderr)
	if err != nil {
		return err
	}
	if o.serve || o.list || o.ownSeg || o.jsonPath != "" || o.cpuprof != "" || o.twins != twinsHere {
		return errors.New("drive: -serve, -own-segment, -list, -json, -cpuprofile and -twins are the drive's business, not flags for its clients")
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return err
	}
	planPath, err := filepath.Abs(filepath.Join(*outDir, "plan.jsonl"))
	if err != nil {
		return err
	}
	f, err := os.Create(planPath)
	if err != nil {
		return err
	}
	if err := o.planFile().Write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	var names []string
	for _, c := range o.cases {
		if c.Scenario == scVerifyWrite && c.Phase == "read" {
			continue // measured by its write case
		}
		names = append(names, c.Name)
	}
	goArgv := strings.Fields(*goBin)
	if len(goArgv) == 0 {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		goArgv = []string{self}
	}
	var cArgv []string
	if *cBin != "" {
		cArgv = append(strings.Fields(*cBin), clientArgs(o, planPath)...)
	}
	d := benchdrive.Options{
		CArgv:  cArgv,
		Rounds: *rounds, Repeat: *repeat, OutDir: *outDir, PythonFirst: *pyFirst, Cases: names,
		Stdout: stdout, Stderr: stderr,
	}
	d.GoArgv, d.PythonArgv, d.GoTwinArgv, d.PythonTwinArgv = driveArgv(o, goArgv, strings.Fields(*python), planPath, *aa)
	return benchdrive.Run(d)
}

// clientArgs are the serve flags every client of a drive gets. Each client
// puts its objects in its own segment, so each uses upstream's local memcpy
// path as a lone client would.
func clientArgs(o *options, planPath string) []string {
	return append([]string{"-serve", "-own-segment", "-plan", planPath}, o.connArgs...)
}

// driveArgv are the command lines of a drive's Go client, its second client
// (a Go client too when aa) and their twins' processes (nil when the plan
// has no twins, or the second client is not a Go client). A Go client runs
// its combining twins in a process of its own, so that during every other
// case its process holds one store, as Python's does (a second store in the
// process cost the 4-caller batches up to 15%: docs/combining.md). The Go
// client's own flags (o.goArgs) go to every Go process.
func driveArgv(o *options, goArgv, second []string, planPath string, aa bool) (g, p, gt, pt []string) {
	client := clientArgs(o, planPath)
	g = slices.Concat(goArgv, o.goArgs, client)
	p = slices.Concat(second, client)
	if aa {
		p = slices.Concat(second, o.goArgs, client)
	}
	if !slices.ContainsFunc(o.cases, func(c Case) bool { return c.Combining }) {
		return g, p, nil, nil
	}
	gt = slices.Concat(g, []string{"-twins", twinsOnly})
	g = append(g, "-twins", twinsApart)
	if aa {
		pt = slices.Concat(p, []string{"-twins", twinsOnly})
		p = append(p, "-twins", twinsApart)
	}
	return g, p, gt, pt
}
