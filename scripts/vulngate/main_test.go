package main

import (
	"strings"
	"testing"
)

const stream = `{"config": {"protocol_version": "v1.0.0"}}
{"finding": {"osv": "GO-1", "fixed_version": "v1.26.9", "trace": [{"module": "stdlib", "version": "v1.26.8"}]}}
{"finding": {"osv": "GO-1", "fixed_version": "v1.26.9", "trace": [{"module": "stdlib", "version": "v1.26.8", "package": "net/http", "function": "Get"}, {"module": "m"}]}}
{"finding": {"osv": "GO-2", "fixed_version": "v0.38.0", "trace": [{"module": "golang.org/x/image", "version": "v0.30.0", "package": "golang.org/x/image/tiff"}]}}
`

const called = `{"finding": {"osv": "GO-3", "fixed_version": "v0.38.0", "trace": [{"module": "golang.org/x/image", "version": "v0.30.0", "package": "golang.org/x/image/tiff", "function": "Decode"}]}}
`

func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name, in   string
		strict     bool
		failed     bool
		wantInLine string
	}{
		{"stdlib only", stream, false, false, "1 called in the standard library"},
		{"stdlib strict", stream, true, true, "fixed in Go v1.26.9"},
		{"module called", stream + called, false, true, "upgrade it in go.mod"},
		{"nothing", `{"config": {}}`, true, false, "0 called"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := read(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			lines, failed := judge(f, tc.strict)
			if failed != tc.failed || !strings.Contains(strings.Join(lines, "\n"), tc.wantInLine) {
				t.Errorf("failed %v, lines %q", failed, lines)
			}
		})
	}
	if _, err := read(strings.NewReader("{not json")); err == nil {
		t.Error("malformed input accepted")
	}
}
