package connect_test

import (
	"errors"
	"testing"

	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/hostcache/connect"
	"github.com/mooncake-go/mooncake-go/mooncake"
)

func base() hostcache.StoreConfig {
	return hostcache.StoreConfig{
		LocalHostname:       "127.0.0.1",
		MetadataServer:      "P2PHANDSHAKE",
		GlobalSegmentSize:   128 << 20,
		Protocol:            "tcp",
		DeviceName:          `{"0": "mlx5_0", "1": "mlx5_1"}`,
		MasterServerAddress: "connect-test:50051",
		LocalBufferSize:     16 << 20,
		TenantID:            hostcache.DefaultTenantID,
	}
}

func TestConfig(t *testing.T) {
	cfg, err := connect.Config(base(), connect.Rank{TP: 1, TPSize: 2, PPSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := mooncake.Config{LocalHostname: "127.0.0.1", MetadataServer: "P2PHANDSHAKE", GlobalSegmentSize: 32 << 20,
		LocalBufferSize: 16 << 20, Protocol: "tcp", DeviceName: "mlx5_1", MasterServerAddress: "connect-test:50051"}
	if cfg != want {
		t.Fatalf("got %+v\nwant %+v", cfg, want)
	}
	if cfg, _ := connect.Config(base(), connect.Rank{}); cfg.GlobalSegmentSize != 128<<20 || cfg.DeviceName != "mlx5_0" {
		t.Fatalf("rank 0 of 1: %+v", cfg)
	}
}

func TestConfigRefusesWhatItCannotCarry(t *testing.T) {
	for name, mod := range map[string]func(*hostcache.StoreConfig){
		"ssd offload":   func(c *hostcache.StoreConfig) { c.EnableSSDOffload = true },
		"standalone":    func(c *hostcache.StoreConfig) { c.StandaloneStorage = true },
		"client server": func(c *hostcache.StoreConfig) { c.ClientServerAddress = "127.0.0.1:9000" },
		"tenant":        func(c *hostcache.StoreConfig) { c.TenantID = "team-a" },
	} {
		sc := base()
		mod(&sc)
		if _, err := connect.Config(sc, connect.Rank{}); !errors.Is(err, connect.ErrNotSupported) {
			t.Errorf("%s: got %v, want ErrNotSupported", name, err)
		}
	}
	sc := base()
	sc.MasterServerAddress = ""
	if _, err := connect.Config(sc, connect.Rank{}); err == nil {
		t.Error("a config without master was accepted")
	}
}

func TestOpen(t *testing.T) {
	if mooncake.Backend().Name != "embedded" {
		t.Skip("opens the in-process cluster of the default build")
	}
	st, err := connect.Open(base(), connect.Rank{TPSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Put("k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	var _ hostcache.Store = st
}
