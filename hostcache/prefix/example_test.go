package prefix_test

import (
	"fmt"
	"log"

	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/hostcache/prefix"
)

// A router hashes a prompt's pages as SGLang does, then continues from the
// last hash when more tokens arrive.
func ExampleHasher() {
	h, err := prefix.NewHasher(prefix.HashConfig{PageSize: 4})
	if err != nil {
		log.Fatal(err)
	}
	pages, _ := h.AppendPages(nil, nil, []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	for _, p := range pages {
		fmt.Println(p)
	}
	// Two more tokens complete page 3; it chains from page 2's hash.
	more, _ := h.AppendPages(nil, &pages[1], []uint32{9, 10, 11, 12})
	fmt.Println(more[0])

	// EAGLE deployments hash bigrams: 5 tokens are 4 units, 2 pages of 2.
	eagle, _ := prefix.NewHasher(prefix.HashConfig{PageSize: 2, Mode: prefix.Bigram})
	pages, _ = eagle.AppendPages(nil, nil, []uint32{10, 11, 12, 13, 14})
	fmt.Println(len(pages), pages[1])

	// SGLang's refusals.
	_, err = h.AppendPagesInt64(nil, nil, []int64{1, 2, 3, 1 << 32})
	fmt.Println(err)
	_, err = prefix.ParsePrior("abcd")
	fmt.Println(err)
	// Output:
	// cf97adeedb59e05bfd73a2b4c2a8885708c4f4f70c84c64b27120e72ab733b72
	// 4ebfa8a1f3c341517621838c6e1b9aa350307e3f00b3cbd1a07ef740f54396d6
	// eddb4ab93695109cc0853fa0167c53aa0dc373ece757e530a734981168bdeebc
	// 2 75ab93a767bad1e254945d1a0ccfa1588d6ebb803303e412d984baedcbbf04b9
	// prefix: token 3 is 4294967296, outside [0, 4294967295]
	// prefix: "abcd" is not a 32-byte digest: 2 bytes: a prior must be exactly 32 bytes
}

// Keys of a TP-2 deployment: a page is stored when both ranks stored K and
// V. ParseKey maps a key (from a KV event, say) back to its page.
func ExampleScheme() {
	s, err := prefix.NewScheme(prefix.SchemeConfig{Keys: hostcache.KeyConfig{TPSize: 2, ModelName: "Qwen/Qwen3-8B"}})
	if err != nil {
		log.Fatal(err)
	}
	d, _ := prefix.ParseDigest("cf97adeedb59e05bfd73a2b4c2a8885708c4f4f70c84c64b27120e72ab733b72")
	for i := 0; i < s.ComponentsPerPage(); i++ {
		fmt.Println(s.Key(d, i))
	}
	page, comp, ok := s.ParseKeyString("Qwen-Qwen3-8B_cf97adeedb59e05bfd73a2b4c2a8885708c4f4f70c84c64b27120e72ab733b72_1_k")
	fmt.Println(page == d, comp, ok)
	_, _, ok = s.ParseKeyString("Other-Model_cf97adeedb59e05bfd73a2b4c2a8885708c4f4f70c84c64b27120e72ab733b72_1_k")
	fmt.Println(ok)
	// Output:
	// Qwen-Qwen3-8B_cf97adeedb59e05bfd73a2b4c2a8885708c4f4f70c84c64b27120e72ab733b72_0_k
	// Qwen-Qwen3-8B_cf97adeedb59e05bfd73a2b4c2a8885708c4f4f70c84c64b27120e72ab733b72_0_v
	// Qwen-Qwen3-8B_cf97adeedb59e05bfd73a2b4c2a8885708c4f4f70c84c64b27120e72ab733b72_1_k
	// Qwen-Qwen3-8B_cf97adeedb59e05bfd73a2b4c2a8885708c4f4f70c84c64b27120e72ab733b72_1_v
	// true 2 true
	// false
}
