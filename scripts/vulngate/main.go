// Command vulngate reads govulncheck's JSON stream (-format json) on stdin
// and fails when the module's code calls a vulnerable function of a
// module it requires: those are ours to fix (an upgrade in go.mod). A
// vulnerability in the standard library is fixed by a newer Go toolchain,
// not by this module: it is listed with the version that fixes it, and
// fails the gate only with -stdlib. make vuln runs it.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
)

type frame struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Package  string `json:"package"`
	Function string `json:"function"`
}

type finding struct {
	OSV          string  `json:"osv"`
	FixedVersion string  `json:"fixed_version"`
	Trace        []frame `json:"trace"`
}

func main() {
	strictStdlib := flag.Bool("stdlib", false, "fail on called vulnerabilities of the standard library too")
	flag.Parse()
	called, err := read(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vulngate:", err)
		os.Exit(2)
	}
	lines, failed := judge(called, *strictStdlib)
	for _, l := range lines {
		fmt.Println(l)
	}
	if failed {
		os.Exit(1)
	}
}

// judge says what each called vulnerability means and whether the gate
// fails.
func judge(called []finding, strictStdlib bool) (lines []string, failed bool) {
	std := 0
	for _, f := range called {
		top := f.Trace[0]
		if top.Module == "stdlib" {
			std++
			lines = append(lines, fmt.Sprintf("vulngate: %s in the standard library (%s.%s): fixed in Go %s; this toolchain is %s",
				f.OSV, top.Package, top.Function, f.FixedVersion, top.Version))
			failed = failed || strictStdlib
			continue
		}
		lines = append(lines, fmt.Sprintf("vulngate: %s called in %s@%s (%s.%s): fixed in %s: upgrade it in go.mod",
			f.OSV, top.Module, top.Version, top.Package, top.Function, f.FixedVersion))
		failed = true
	}
	if !failed {
		lines = append(lines, fmt.Sprintf("vulngate: no called vulnerability in a required module (%d called in the standard library)", std))
	}
	return lines, failed
}

// read returns the findings whose trace reaches a function (the code calls
// it), one per vulnerability, sorted by id.
func read(r io.Reader) ([]finding, error) {
	dec := json.NewDecoder(r)
	seen := map[string]finding{}
	for {
		var msg struct {
			Finding *finding `json:"finding"`
		}
		err := dec.Decode(&msg)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		f := msg.Finding
		if f == nil || len(f.Trace) == 0 || f.Trace[0].Function == "" {
			continue
		}
		seen[f.OSV] = *f
	}
	out := make([]finding, 0, len(seen))
	for _, f := range seen {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].OSV < out[j].OSV })
	return out, nil
}
