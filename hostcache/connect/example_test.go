//go:build cgo && !mooncake_native

package connect_test

import (
	"fmt"
	"log"

	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/hostcache/connect"
)

// Config is what one rank opens: SGLang splits the node's global segment
// between its tensor- and pipeline-parallel ranks, and a JSON device map
// gives each rank its NIC.
func ExampleConfig() {
	sc, err := hostcache.LoadStoreConfig(map[string]any{
		"local_hostname":        "127.0.0.1",
		"metadata_server":       "P2PHANDSHAKE",
		"master_server_address": "127.0.0.1:50051",
		"global_segment_size":   "8gb",
		"protocol":              "rdma",
		"device_name":           `{"0": "mlx5_0", "1": "mlx5_1"}`,
	}, func(string) (string, bool) { return "", false }) // no environment
	if err != nil {
		log.Fatal(err)
	}
	cfg, err := connect.Config(sc, connect.Rank{TP: 1, TPSize: 2})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.GlobalSegmentSize, cfg.DeviceName, cfg.MasterServerAddress)
	// Output:
	// 4gb mlx5_1 127.0.0.1:50051
}

// Open opens the store a HiCache configuration describes; the HiCache
// backend then stores pages of SGLang's host pools in it. (On the embedded
// engine the master address names an in-process cluster.)
func ExampleOpen() {
	sc, err := hostcache.LoadStoreConfig(map[string]any{
		"local_hostname":        "127.0.0.1",
		"metadata_server":       "P2PHANDSHAKE",
		"master_server_address": "example-connect",
		"global_segment_size":   64 << 20,
		"protocol":              "tcp",
	}, func(string) (string, bool) { return "", false })
	if err != nil {
		log.Fatal(err)
	}
	st, err := connect.Open(sc, connect.Rank{})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	pool, err := hostcache.NewMLAPool(hostcache.MLAConfig{Layers: 4, LatentDim: 576, DType: hostcache.BF16,
		PageSize: 64, Tokens: 1024, Layout: hostcache.LayerFirst})
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close() // after the backend's Close, which unregisters it
	be, err := hostcache.NewBackend(st, hostcache.Options{RankReplicated: true, ModelName: "example"})
	if err != nil {
		log.Fatal(err)
	}
	defer be.Close()
	if err := be.RegisterPool(pool); err != nil { // registered with the store for zero-copy
		log.Fatal(err)
	}
	tokens := make([]uint32, 2*64)
	pages, _ := hostcache.PageHashes("", tokens, 64)
	rows := make([]int64, len(tokens)) // the pool's token rows the pages occupy
	for i := range rows {
		rows[i] = int64(i)
	}
	ok, err := be.BatchSetV1(pages, rows, nil)
	fmt.Println("set:", ok, err)
	n, err := be.BatchExists(pages)
	fmt.Println("pages stored:", n, err)
	// Output:
	// set: [true true] <nil>
	// pages stored: 2 <nil>
}
