package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// TestDriveArgv: the Go client's own flags reach every Go process, the
// twins run in a process of their own when the plan has twins, and the
// second client is treated as a Go client only for an A/A check.
func TestDriveArgv(t *testing.T) {
	join := func(a []string) string { return strings.Join(a, " ") }
	for _, tc := range []struct {
		name         string
		flags        []string
		aa           bool
		g, p, gt, pt string // "" for none
	}{
		{"twins, Python second", []string{"-quick", "-batch-write-keys", "-1"}, false,
			"gobin -batch-write-keys -1 S -twins apart", "py S", "gobin -batch-write-keys -1 S -twins only", ""},
		{"twins, A/A", []string{"-quick", "-hash-memo", "8"}, true,
			"gobin -hash-memo 8 S -twins apart", "py -hash-memo 8 S -twins apart", "gobin -hash-memo 8 S -twins only",
			"py -hash-memo 8 S -twins only"},
		{"no twins", []string{"-quick", "-combining=false"}, true, "gobin S", "py S", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseFlags(tc.flags, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			g, p, gt, pt := driveArgv(o, []string{"gobin"}, []string{"py"}, "plan.jsonl", tc.aa)
			s := join(clientArgs(o, "plan.jsonl"))
			for _, x := range []struct {
				what string
				got  []string
				want string
			}{{"Go", g, tc.g}, {"second", p, tc.p}, {"Go twins", gt, tc.gt}, {"second's twins", pt, tc.pt}} {
				want := strings.ReplaceAll(x.want, "S", s)
				if join(x.got) != want {
					t.Errorf("%s client: %q, want %q", x.what, join(x.got), want)
				}
			}
			if !slices.Contains(clientArgs(o, "plan.jsonl"), "-own-segment") {
				t.Errorf("client args lack -own-segment")
			}
		})
	}
}
