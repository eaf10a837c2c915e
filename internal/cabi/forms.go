package cabi

import (
	"fmt"

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
