//go:build cgo && !mooncake_native

package main

import "testing"

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
	} {
		if err := run(args); err == nil {
			t.Errorf("run(%q) succeeded", args)
		}
	}
}
