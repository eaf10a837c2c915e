package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/mooncake-go/mooncake-go/cmd/internal/benchreport"
)

// runCompare is mcbench compare: its flags, and cmd/internal/benchreport does
// the rest.
func runCompare(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("mcbench compare", flag.ContinueOnError)
	var gofl, pyfl, cfl string
	o := benchreport.Options{}
	fs.StringVar(&gofl, "go", "", "Go run JSON files (comma-separated, globs allowed), one per run")
	fs.StringVar(&pyfl, "python", "", "Python run JSON files (comma-separated, globs allowed), one per run")
	fs.StringVar(&cfl, "c", "", "the C floor's run JSON files (mcbench drive -c; comma-separated, globs allowed), one per run")
	fs.StringVar(&o.Noise, "noise", "", "the A/A check's summary (make bench-aa: docs/benchmarks-aa.json): each view's ratios get the same case's A/A ratio beside them")
	fs.StringVar(&o.Summary, "summary", "", "render the report from this summary (docs/benchmarks.json) instead of run files")
	fs.StringVar(&o.Out, "out", "", "write the summary here (docs/benchmarks.json)")
	fs.StringVar(&o.Chart, "chart", "", "write the chart here, as SVG or PNG by the extension (docs/benchmarks.svg)")
	fs.StringVar(&o.Markdown, "md", "", "replace the table section of this Markdown file (between "+benchreport.MarkBegin+" and "+benchreport.MarkEnd+")")
	fs.StringVar(&o.Command, "command", "", "the command that produced the runs, quoted in the report")
	fs.BoolVar(&o.AA, "aa", false, "A/A check: the -python files are Go runs too (mcbench drive -python <this binary>); "+
		"prints each case's paired ratio between two identical clients, the noise floor of a Go/Python ratio on this machine")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: mcbench compare -go 'out/go-*.json' -python 'out/py-*.json' [-out F] [-chart F] [-md F]\n"+
			"       mcbench compare -summary docs/benchmarks.json [-chart F] [-md F]\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if o.GoFiles, err = benchreport.Expand(gofl); err != nil {
		return err
	}
	if o.PythonFiles, err = benchreport.Expand(pyfl); err != nil {
		return err
	}
	if o.CFiles, err = benchreport.Expand(cfl); err != nil {
		return err
	}
	return benchreport.Run(o, stdout)
}
