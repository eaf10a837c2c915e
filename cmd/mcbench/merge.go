package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// mcbench merge -o round.json part1.json part2.json ...
//
// bench-compare runs the plan in chunks (one scenario and API at a time),
// alternating the Go and Python clients chunk by chunk so that both measure
// every case within seconds of each other on a machine whose load changes.
// merge joins one client's chunks of one round into one run document.
func runMerge(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("mcbench merge", flag.ContinueOnError)
	out := fs.String("o", "", "write the merged run here")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		return errors.New("usage: mcbench merge -o OUT.json PART.json...")
	}
	var merged Run
	seen := map[string]string{}
	var parts []string
	for i, f := range fs.Args() {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var r Run
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if r.Schema != schema {
			return fmt.Errorf("%s: schema %q, want %q", f, r.Schema, schema)
		}
		if i == 0 {
			merged = r
			merged.Results, merged.Failures = nil, nil
			merged.Params = map[string]any{}
			for k, v := range r.Params {
				if k != "scenarios" && k != "apis" {
					merged.Params[k] = v
				}
			}
		} else if r.Client != merged.Client || r.Engine != merged.Engine {
			return fmt.Errorf("%s: a %s/%s run, the first part is %s/%s", f, r.Client, r.Engine, merged.Client, merged.Engine)
		}
		if r.Started < merged.Started {
			merged.Started = r.Started
		}
		for _, res := range r.Results {
			if prev, dup := seen[res.Name]; dup {
				return fmt.Errorf("case %s is in %s and %s", res.Name, prev, f)
			}
			seen[res.Name] = f
			merged.Results = append(merged.Results, res)
		}
		merged.Failures = append(merged.Failures, r.Failures...)
		parts = append(parts, filepath.Base(f))
	}
	merged.Params["merged_from"] = parts
	data, err := json.MarshalIndent(merged, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "merged %d parts, %d results into %s\n", len(parts), len(merged.Results), *out)
	return nil
}
