package cliconfig

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake"
)

func TestConfig(t *testing.T) {
	d := Defaults{Segment: "512mb", LocalBuffer: "16mb", EmbeddedMaster: "embedded-test"}
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		want    mooncake.Config
		source  Source
		errWant string
	}{
		{name: "embedded default", want: mooncake.Config{LocalHostname: "127.0.0.1", MetadataServer: "P2PHANDSHAKE",
			GlobalSegmentSize: 512 << 20, LocalBufferSize: 16 << 20, Protocol: "tcp", MasterServerAddress: "embedded-test"},
			source: FromDefault},
		{name: "embedded ignores the device", args: []string{"-device", "mlx5_0", "-segment", "1gb", "-local-buffer", "1mb", "-hostname", "h"},
			want: mooncake.Config{LocalHostname: "h", MetadataServer: "P2PHANDSHAKE", GlobalSegmentSize: 1 << 30,
				LocalBufferSize: 1 << 20, Protocol: "tcp", MasterServerAddress: "embedded-test"}, source: FromDefault},
		{name: "flags", args: []string{"-master", "m:1", "-metadata", "http://x/metadata", "-protocol", "rdma", "-device", "mlx5_0"},
			env: map[string]string{mooncake.EnvMaster: "env:1"},
			want: mooncake.Config{LocalHostname: "127.0.0.1", MetadataServer: "http://x/metadata", GlobalSegmentSize: 512 << 20,
				LocalBufferSize: 16 << 20, Protocol: "rdma", DeviceName: "mlx5_0", MasterServerAddress: "m:1"}, source: FromFlags},
		{name: "environment, taken whole", args: []string{"-segment", "1gb"},
			env: map[string]string{mooncake.EnvMaster: "env:1", mooncake.EnvMetadataServer: "http://e/metadata"},
			want: mooncake.Config{LocalHostname: mooncake.DefaultLocalHostname, MetadataServer: "http://e/metadata",
				GlobalSegmentSize: mooncake.DefaultGlobalSegmentSize, LocalBufferSize: mooncake.DefaultLocalBufferSize,
				Protocol: mooncake.DefaultProtocol, MasterServerAddress: "env:1"}, source: FromEnv},
		{name: "master without metadata", args: []string{"-master", "m:1"}, errWant: "-master needs -metadata"},
		{name: "bad segment", args: []string{"-segment", "lots"}, errWant: "-segment"},
		{name: "bad segment with the environment", args: []string{"-segment", "lots"},
			env: map[string]string{mooncake.EnvMaster: "env:1"}, errWant: "-segment"},
		{name: "bad local buffer", args: []string{"-local-buffer", "4.5mb"}, errWant: "-local-buffer"},
		{name: "bad environment", env: map[string]string{mooncake.EnvMaster: "env:1", mooncake.EnvGlobalSegmentSize: "x"},
			errWant: mooncake.EnvGlobalSegmentSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(mooncake.EnvMaster, "")
			t.Setenv(mooncake.EnvConfigPath, "")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			f := Register(fs, d)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			cfg, src, err := f.Config()
			if tc.errWant != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errWant) {
					t.Fatalf("error %v, want one naming %q", err, tc.errWant)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg != tc.want || src != tc.source {
				t.Errorf("got %+v (%s)\nwant %+v (%s)", cfg, src, tc.want, tc.source)
			}
		})
	}
}

func TestConnectionFlagsAreRegistered(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	Register(fs, Defaults{Segment: "1mb", LocalBuffer: "1mb"})
	for _, name := range ConnectionFlags {
		if fs.Lookup(name) == nil {
			t.Errorf("-%s is not registered", name)
		}
	}
}
