package mooncake

import (
	"fmt"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// overheadShapes are the batch shapes of the overhead benchmarks: keys ×
// buffers per key. 128 × 61 is a layer-first DeepSeek-V3 HiCache batch.
var overheadShapes = []struct{ keys, bufs int }{
	{1, 1}, {16, 1}, {128, 1}, {1024, 1}, {1, 61}, {16, 61}, {128, 61},
}

// BenchmarkGoSideOverhead measures everything a multi-buffer batch call does
// in Go before and after the single cgo crossing: argument and CSR checks,
// packing the keys into one buffer (recycled scratch), the result slice.
// Compare with BenchmarkCallOverhead (the whole call): the difference is the
// crossing plus the engine's own work.
func BenchmarkGoSideOverhead(b *testing.B) {
	c := &conn{}
	for _, sh := range overheadShapes {
		b.Run(fmt.Sprintf("keys=%d/bufs=%d", sh.keys, sh.bufs), func(b *testing.B) {
			keys := make([]string, sh.keys)
			for i := range keys {
				keys[i] = fmt.Sprintf("%064x__k", i) // an SGLang MLA key
			}
			n := sh.keys * sh.bufs
			addrs := make([]uintptr, n)
			sizes := make([]uint64, n)
			offs := make([]uint64, sh.keys+1)
			for i := range addrs {
				addrs[i], sizes[i] = uintptr(0x10000+i*1152), 1152
			}
			for i := range offs {
				offs[i] = uint64(i * sh.bufs)
			}
			res := make([]int64, sh.keys)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := (hostmem.Buffers{Addrs: addrs, Sizes: sizes, Offsets: offs}).Validate(len(keys)); err != nil {
					b.Fatal(err)
				}
				r := resultsFor(res, len(keys))
				ks := c.packKeys(keys)
				c.freeKeys(ks)
				_ = r
			}
			b.StopTimer()
			perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(perOp/float64(sh.keys), "ns/key")
			b.ReportMetric(perOp/float64(n), "ns/buffer")
		})
	}
}
