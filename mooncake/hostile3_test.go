package mooncake_test

import (
	"errors"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
)

// TestHostileThirdRoundConfig pins the Go-side refusals of the third
// hostile round (issue 21) that need no cluster.
func TestHostileThirdRoundConfig(t *testing.T) {
	base := mooncake.Config{LocalHostname: "127.0.0.1", MetadataServer: "P2PHANDSHAKE", Protocol: "tcp", MasterServerAddress: "127.0.0.1:50051"}
	for _, tc := range []struct {
		name string
		mod  func(*mooncake.Config)
	}{
		{"invalid UTF-8 in the master address", func(c *mooncake.Config) { c.MasterServerAddress = "127.0.0.1:\xff50051" }},
		{"invalid UTF-8 in the hostname", func(c *mooncake.Config) { c.LocalHostname = "h\xc3" }},
	} {
		cfg := base
		tc.mod(&cfg)
		if err := cfg.Validate(); !errors.Is(err, mooncake.ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", tc.name, err)
		}
	}
	if err := base.Validate(); err != nil {
		t.Fatalf("the base config: %v", err)
	}
	for _, bad := range []string{"", "1", "a-b", "1-2-3"} {
		if _, err := mooncake.ParseSegmentID(bad); !errors.Is(err, mooncake.ErrInvalidID) {
			t.Errorf("ParseSegmentID(%q): %v, want ErrInvalidID", bad, err)
		}
	}
	levels := []string{"INFO", "Warning", "error", "FATAL"}
	for _, l := range levels {
		cfg := base
		cfg.LogLevel = l
		if err := cfg.Validate(); err != nil {
			t.Errorf("log level %q (any case is documented): %v", l, err)
		}
	}
}

// TestOpenOnEngineRefusesAZeroEngine: a zero transfer.Engine is refused
// (it used to open an ordinary store with an engine of its own).
func TestOpenOnEngineRefusesAZeroEngine(t *testing.T) {
	cfg := mooncake.Config{LocalHostname: "127.0.0.1", MetadataServer: "P2PHANDSHAKE", Protocol: "tcp", MasterServerAddress: "zero-engine"}
	for name, e := range map[string]*transfer.Engine{"nil": nil, "zero": {}} {
		st, err := mooncake.OpenOnEngine(cfg, e)
		if err == nil {
			st.Close()
			t.Errorf("%s engine: opened", name)
			continue
		}
		if !errors.Is(err, mooncake.ErrInvalidParams) {
			t.Errorf("%s engine: %v, want ErrInvalidParams", name, err)
		}
	}
}
