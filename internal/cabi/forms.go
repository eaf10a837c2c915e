package cabi

import (
	"fmt"
	"strings"
	"sync"

	"github.com/mooncake-go/mooncake-go/internal/endpoints"
)

// CheckForm returns an error when the backend cannot connect through a's
// kind (ConnectForms): a master found through an HA backend when master
// is true, else a transfer engine's metadata service. One master at
// host:port and P2PHANDSHAKE every backend has.
func CheckForm(a endpoints.Address, master bool) error {
	bit, flag := formBit(a.Kind, master)
	if bit == 0 || ConnectForms()&bit != 0 {
		return nil
	}
	what := "metadata"
	if master {
		what = "HA master"
	}
	return fmt.Errorf("%s backend %s: the %s backend was built without it (upstream's %s; the capability query, mooncake.Backend().Capabilities, lists what it has)",
		what, a.Kind, BackendName(), flag)
}

func formBit(k endpoints.Kind, master bool) (uint32, string) {
	if master {
		switch k {
		case endpoints.Etcd:
			return ConnectMasterEtcd, "STORE_USE_ETCD"
		case endpoints.Redis:
			return ConnectMasterRedis, "STORE_USE_REDIS"
		case endpoints.K8s:
			return ConnectMasterK8s, "STORE_USE_K8S_LEASE"
		}
		return 0, ""
	}
	switch k {
	case endpoints.HTTP:
		return ConnectMetadataHTTP, "USE_HTTP"
	case endpoints.Etcd:
		return ConnectMetadataEtcd, "USE_ETCD"
	case endpoints.Redis:
		return ConnectMetadataRedis, "USE_REDIS"
	}
	return 0, ""
}

// Upstream keeps one etcd client per process for the transfer engines'
// metadata (the etcd wrapper's NewEtcdClient, reference-counted: a second
// engine on other endpoints silently talks to the first one's) and one for
// the store's HA leader election (EtcdHelper: refused, vaguely, for other
// endpoints, and never released). holdEtcd keeps what this process's
// clients use, so that a second set of endpoints is refused up front with
// a clear error.
var etcdHold struct {
	sync.Mutex
	metadata     string // endpoints of the metadata client, while refs > 0
	metadataRefs int
	master       string // endpoints of the HA client, for good once set
}

// HoldEtcd records that a client of the native backend uses etcd at a (a
// master's leader election when master is true, else transfer-engine
// metadata) and returns the release for its Close. Other addresses, and
// the embedded engine's, hold nothing.
func HoldEtcd(a endpoints.Address, master bool) (release func(), err error) {
	if a.Kind != endpoints.Etcd || BackendName() != "native" {
		return func() {}, nil
	}
	eps := strings.Join(a.Endpoints, ";")
	etcdHold.Lock()
	defer etcdHold.Unlock()
	if master {
		switch etcdHold.master {
		case "", eps:
			etcdHold.master = eps
			return func() {}, nil
		}
		return nil, fmt.Errorf("etcd %s: this process's HA clients use etcd %s (upstream keeps one etcd client per process for the leader election, for good)", eps, etcdHold.master)
	}
	if etcdHold.metadataRefs > 0 && etcdHold.metadata != eps {
		return nil, fmt.Errorf("etcd %s: this process's transfer engines use etcd %s (upstream keeps one etcd metadata client per process, shared by every engine)", eps, etcdHold.metadata)
	}
	etcdHold.metadata = eps
	etcdHold.metadataRefs++
	return sync.OnceFunc(func() {
		etcdHold.Lock()
		etcdHold.metadataRefs--
		etcdHold.Unlock()
	}), nil
}
