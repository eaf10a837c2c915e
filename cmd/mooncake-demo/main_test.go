//go:build cgo && !mooncake_native

package main

import (
	"errors"
	"flag"
	"os"
	"testing"
)

// The demo's whole path on the embedded engine, with small sizes.
func TestDemoRuns(t *testing.T) {
	args := []string{"-objects", "16", "-object-size", "4096", "-pages", "8", "-layers", "5", "-layer-size", "1152", "-batch", "3", "-segment", "64mb"}
	if err := run(args); err != nil {
		t.Fatal(err)
	}
}

func TestDemoRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-segment", "lots"},
		{"-master", "127.0.0.1:50051"}, // no -metadata
		{"-batch", "0"},
		{"stray"}, // arguments are not ignored
		{"-objects", "1", "-object-size", "9223372036854775807"},              // the total overflows
		{"-objects", "4", "-object-size", "4611686018427387904"},              // wraps to 0 unchecked
		{"-pages", "1024", "-layers", "4096", "-layer-size", "1099511627776"}, // more than any machine's RAM
	} {
		if err := run(args); err == nil || errors.Is(err, flag.ErrHelp) {
			t.Errorf("run(%q) = %v, want an error", args, err)
		}
	}
	// -h prints the usage and is not a failure (main exits 0 on ErrHelp).
	stderr := os.Stderr
	os.Stderr, _ = os.Open(os.DevNull)
	err := run([]string{"-h"})
	os.Stderr = stderr
	if !errors.Is(err, flag.ErrHelp) {
		t.Errorf("run(-h) = %v, want flag.ErrHelp", err)
	}
}
