//go:build cgo

package transfer_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer/transfertest"
)

// TestOpenRefusesBadConfig: what cannot be a segment name, a metadata
// server or an RPC port is refused by Open with ErrInvalidArgument naming
// the field, before anything reaches the engine.
func TestOpenRefusesBadConfig(t *testing.T) {
	env := transfertest.NewEnv(t)
	http := env.Metadata
	if !strings.HasPrefix(http, "http") {
		http = "http://127.0.0.1:1/metadata" // the checks come before any connection
	}
	for _, tc := range []struct {
		name  string
		cfg   transfer.Config
		field string
	}{
		{"port 0", transfer.Config{MetadataServer: http, LocalServerName: "127.0.0.1:0"}, "LocalServerName"},
		{"port 65536", transfer.Config{MetadataServer: http, LocalServerName: "127.0.0.1:65536"}, "LocalServerName"},
		{"port -1", transfer.Config{MetadataServer: http, LocalServerName: "127.0.0.1:-1"}, "LocalServerName"},
		{"port 99999999999", transfer.Config{MetadataServer: http, LocalServerName: "127.0.0.1:99999999999"}, "LocalServerName"},
		{"no port", transfer.Config{MetadataServer: http, LocalServerName: "127.0.0.1"}, "LocalServerName"},
		{"no host", transfer.Config{MetadataServer: http, LocalServerName: ":5000"}, "LocalServerName"},
		{"1 MiB name", transfer.Config{MetadataServer: http, LocalServerName: strings.Repeat("a", 1<<20) + ":1"}, "LocalServerName"},
		{"invalid UTF-8", transfer.Config{MetadataServer: http, LocalServerName: "h\xff:5000"}, "LocalServerName"},
		{"only slashes", transfer.Config{MetadataServer: http, LocalServerName: "//"}, "LocalServerName"},
		{"http:// alone", transfer.Config{MetadataServer: "http://", LocalServerName: "127.0.0.1:5000"}, "MetadataServer"},
		{"https:///path", transfer.Config{MetadataServer: "https:///metadata", LocalServerName: "127.0.0.1:5000"}, "MetadataServer"},
		{"metadata port 0", transfer.Config{MetadataServer: "http://127.0.0.1:0/m", LocalServerName: "127.0.0.1:5000"}, "MetadataServer"},
		{"RPC port 65536", transfer.Config{MetadataServer: http, LocalServerName: "127.0.0.1:5000", RPCPort: 65536}, "RPCPort"},
		{"protocol", transfer.Config{MetadataServer: http, LocalServerName: "127.0.0.1:5000", Protocol: "udp"}, "Protocol"},
		{"NUL in host", transfer.Config{MetadataServer: http, LocalServerName: "127.0.0.1:5000", Host: "a\x00"}, "Host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := transfer.Open(tc.cfg)
			if err == nil {
				e.Close()
				t.Fatal("accepted")
			}
			var te *transfer.Error
			if !errors.Is(err, transfer.ErrInvalidArgument) || !errors.As(err, &te) || te.Op != transfer.OpOpen || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("%v: want ErrInvalidArgument of %s naming %s", err, transfer.OpOpen, tc.field)
			}
		})
	}
}

// TestSegmentNameOneRule: a leading '/' is dropped by Open as by
// OpenSegment, so an engine opened with one can be reached by its own
// SegmentName (before, OpenSegment(e.SegmentName()) failed with
// ERR_METADATA).
func TestSegmentNameOneRule(t *testing.T) {
	env := transfertest.NewEnv(t)
	e := env.Open(t, func(c *transfer.Config) { c.LocalServerName = "/" + c.LocalServerName })
	if got := e.SegmentName(); strings.HasPrefix(got, "/") {
		t.Errorf("SegmentName %q keeps the '/'", got)
	}
	peer := env.Open(t)
	seg, err := peer.OpenSegment(e.SegmentName())
	if err != nil {
		t.Fatalf("OpenSegment(%q): %v", e.SegmentName(), err)
	}
	seg2, err := peer.OpenSegment("/" + e.SegmentName())
	if err != nil || seg2.Name() != seg.Name() {
		t.Errorf("OpenSegment with '/': %v, name %q vs %q", err, seg2.Name(), seg.Name())
	}
}
