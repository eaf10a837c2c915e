// Package cliconfig turns a command's cluster flags (-master, -metadata,
// -hostname, -protocol, -device, -segment, -local-buffer) into a
// mooncake.Config, the same way in every command of this module.
//
// Where the config comes from, in order:
//
//  1. -master given: the flags (then -metadata is required);
//  2. MOONCAKE_MASTER or MOONCAKE_CONFIG_PATH set: mooncake.ConfigFromEnv,
//     taken whole, as SGLang deployments configure their clients;
//  3. otherwise the embedded engine, under the command's own master name
//     (an in-process cluster; see mooncake.Config.MasterServerAddress).
package cliconfig

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/mooncake-go/mooncake-go/mooncake"
)

// Defaults are the flag defaults of one command.
type Defaults struct {
	Segment        string // -segment
	LocalBuffer    string // -local-buffer
	EmbeddedMaster string // the master name of the embedded engine
}

// Source says where a Config came from.
type Source string

const (
	FromFlags   Source = "flags"
	FromEnv     Source = "environment"
	FromDefault Source = "embedded default"
)

// Flags holds the flag values after FlagSet.Parse. A command may change
// Segment and LocalBuffer before calling Config, e.g. to apply defaults of
// its own modes.
type Flags struct {
	Master, Metadata, Hostname, Protocol, Device string
	Segment, LocalBuffer                         string
	embeddedMaster                               string
}

// Register defines the cluster flags on fs.
func Register(fs *flag.FlagSet, d Defaults) *Flags {
	f := &Flags{embeddedMaster: d.EmbeddedMaster}
	fs.StringVar(&f.Master, "master", "", "master RPC address of a live cluster (default: $"+mooncake.EnvMaster+", else the embedded engine)")
	fs.StringVar(&f.Metadata, "metadata", "", "metadata server of the live cluster, e.g. http://127.0.0.1:8080/metadata")
	fs.StringVar(&f.Hostname, "hostname", "127.0.0.1", "this client's local_hostname")
	fs.StringVar(&f.Protocol, "protocol", "tcp", "transport: tcp or rdma")
	fs.StringVar(&f.Device, "device", "", "RDMA device list")
	fs.StringVar(&f.Segment, "segment", d.Segment, "global segment size this client mounts")
	fs.StringVar(&f.LocalBuffer, "local-buffer", d.LocalBuffer, "local buffer size (staging for the copying put/get)")
	return f
}

// ConnectionFlags are the flags that say which cluster to join and how;
// a command that starts other clients on the same cluster passes these on.
var ConnectionFlags = []string{"master", "metadata", "hostname", "protocol", "device"}

// Sizes parses -segment and -local-buffer.
func (f *Flags) Sizes() (segment, localBuffer mooncake.Size, err error) {
	if segment, err = mooncake.ParseSize(f.Segment); err != nil {
		return 0, 0, fmt.Errorf("-segment: %w", err)
	}
	if localBuffer, err = mooncake.ParseSize(f.LocalBuffer); err != nil {
		return 0, 0, fmt.Errorf("-local-buffer: %w", err)
	}
	return segment, localBuffer, nil
}

// Config builds the config (see the package documentation). The sizes are
// checked whichever source wins, so a bad flag never goes unnoticed.
func (f *Flags) Config() (mooncake.Config, Source, error) {
	seg, lb, err := f.Sizes()
	if err != nil {
		return mooncake.Config{}, "", err
	}
	switch {
	case f.Master != "":
		if f.Metadata == "" {
			return mooncake.Config{}, "", errors.New("-master needs -metadata")
		}
		return mooncake.Config{LocalHostname: f.Hostname, MetadataServer: f.Metadata, GlobalSegmentSize: seg,
			LocalBufferSize: lb, Protocol: f.Protocol, DeviceName: f.Device, MasterServerAddress: f.Master}, FromFlags, nil
	case os.Getenv(mooncake.EnvMaster) != "" || os.Getenv(mooncake.EnvConfigPath) != "":
		cfg, err := mooncake.ConfigFromEnv()
		if err != nil {
			return mooncake.Config{}, "", err
		}
		return cfg, FromEnv, nil
	}
	// The embedded engine has no metadata service and no devices.
	return mooncake.Config{LocalHostname: f.Hostname, MetadataServer: "P2PHANDSHAKE", GlobalSegmentSize: seg,
		LocalBufferSize: lb, Protocol: f.Protocol, MasterServerAddress: f.embeddedMaster}, FromDefault, nil
}
