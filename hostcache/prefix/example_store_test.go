//go:build cgo && !mooncake_native

package prefix_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/hostcache/prefix"
	"github.com/mooncake-go/mooncake-go/mooncake"
)

// A router's direct lookup: a query-only client (no segment, no local
// buffer) asks the cluster, in one call per request, how many leading
// pages of a prompt an SGLang deployment has stored. (The example runs on
// the embedded engine: the master address only names an in-process
// cluster.)
func ExampleLookup() {
	cfg := mooncake.Config{
		LocalHostname:       "127.0.0.1",
		MetadataServer:      "P2PHANDSHAKE",
		Protocol:            "tcp",
		MasterServerAddress: "example-prefix-lookup",
	}
	writerCfg := cfg
	writerCfg.GlobalSegmentSize, writerCfg.LocalBufferSize = 64<<20, 16<<20
	writer, err := mooncake.Open(writerCfg) // stands in for SGLang's HiCache
	if err != nil {
		log.Fatal(err)
	}
	defer writer.Close()
	router, err := mooncake.Open(cfg) // GlobalSegmentSize and LocalBufferSize 0
	if err != nil {
		log.Fatal(err)
	}
	defer router.Close()

	h, _ := prefix.NewHasher(prefix.HashConfig{PageSize: 4})
	s, _ := prefix.NewScheme(prefix.SchemeConfig{Keys: hostcache.KeyConfig{TPSize: 2, ModelName: "org/model"}})
	lookup := prefix.NewLookup(h, s, router)

	prompt := []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}
	pages, _ := h.AppendPages(nil, nil, prompt)
	// The deployment stored pages 0 and 1 on both ranks, and page 2 on
	// rank 0 only.
	for i := 0; i < 2*s.ComponentsPerPage()+2; i++ {
		if err := writer.Put(s.Key(pages[i/s.ComponentsPerPage()], i%s.ComponentsPerPage()), []byte("kv")); err != nil {
			log.Fatal(err)
		}
	}

	r, err := lookup.Lookup(context.Background(), nil, prompt)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d of %d pages cached, last %s\n", r.Pages, r.Hashed, r.LastHash)

	// The user adds two tokens: only the new pages are hashed and checked.
	r2, _ := lookup.Lookup(context.Background(), &r.LastHash, append(prompt[2*4:], 15, 16))
	fmt.Printf("%d more of %d\n", r2.Pages, r2.Hashed)
	// Output:
	// 2 of 3 pages cached, last 4ebfa8a1f3c341517621838c6e1b9aa350307e3f00b3cbd1a07ef740f54396d6
	// 0 more of 2
}
