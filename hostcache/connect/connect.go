// Package connect opens the Mooncake store that a HiCache configuration
// describes: it turns a hostcache.StoreConfig (resolved with SGLang's
// precedence by hostcache.LoadStoreConfig) into a mooncake.Config for one
// rank, the way SGLang's MooncakeStore calls setup(). It is the one place
// that imports both hostcache (pure Go) and mooncake (cgo), so hostcache
// stays buildable without cgo. It also turns a push plan (hostcache.Peer)
// into transfer requests.
//
//	sc, err := hostcache.LoadStoreConfig(extraConfig)
//	st, err := connect.Open(sc, connect.Rank{TP: rank, TPSize: tp})
//	be, err := hostcache.NewBackend(st, hostcache.Options{TPRank: rank, TPSize: tp})
package connect

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
)

// Rank is the parallel position of the process opening the store.
type Rank struct {
	TP, TPSize int // tensor-parallel rank and size (0 size means 1)
	PPSize     int // pipeline-parallel size (0 means 1)
}

// ErrNotSupported is returned for a StoreConfig setting that mooncake.Config
// cannot carry yet; it is reported rather than dropped, since the store
// would then behave differently from what the operator configured.
var ErrNotSupported = errors.New("connect: setting not supported by mooncake.Config")

// Config returns the mooncake.Config of rank r: the per-rank share of the
// global segment (global_segment_size / (tp_size * pp_size), as newest
// SGLang), the rank's entry of a JSON device map, and the other setup
// arguments as they are.
func Config(sc hostcache.StoreConfig, r Rank) (mooncake.Config, error) {
	var unsupported []string
	if sc.EnableSSDOffload {
		unsupported = append(unsupported, "enable_ssd_offload")
	}
	if sc.StandaloneStorage {
		unsupported = append(unsupported, "standalone_storage")
	}
	if sc.ClientServerAddress != "" {
		unsupported = append(unsupported, "client_server_address")
	}
	if sc.TenantID != "" && sc.TenantID != hostcache.DefaultTenantID {
		unsupported = append(unsupported, "tenant_id")
	}
	if len(unsupported) > 0 {
		return mooncake.Config{}, fmt.Errorf("%w: %s", ErrNotSupported, strings.Join(unsupported, ", "))
	}
	cfg := mooncake.Config{
		LocalHostname:       sc.LocalHostname,
		MetadataServer:      sc.MetadataServer,
		GlobalSegmentSize:   mooncake.Size(sc.PerRankSegmentSize(max(r.TPSize, 1), max(r.PPSize, 1))),
		LocalBufferSize:     mooncake.Size(sc.LocalBufferSize),
		Protocol:            sc.Protocol,
		DeviceName:          sc.ResolveDeviceName(r.TP),
		MasterServerAddress: sc.MasterServerAddress,
	}
	return cfg, cfg.Validate()
}

// Open opens the store of rank r (Config, then mooncake.Open).
func Open(sc hostcache.StoreConfig, r Rank) (*mooncake.Store, error) {
	cfg, err := Config(sc, r)
	if err != nil {
		return nil, err
	}
	return mooncake.Open(cfg)
}

// AppendRequests appends one transfer request per copy of a push plan
// (hostcache.Peer.AppendPush) to dst: writes into segment seg, the peer's.
func AppendRequests(dst []transfer.Request, seg transfer.SegmentHandle, copies []hostcache.Copy) []transfer.Request {
	for _, c := range copies {
		dst = append(dst, transfer.Request{Dir: transfer.Write, Segment: seg, Local: c.Local, Remote: c.Remote, Length: c.Length})
	}
	return dst
}
