//go:build cgo

package mooncake_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

// BenchmarkCallOverhead measures the binding's cost per batch, per key and
// per buffer on calls whose engine work is as small as the API allows, so
// what remains is the binding (Go checks, key packing, one cgo crossing,
// the C side unpacking keys and building the engine's arguments) plus the
// engine's bookkeeping:
//
//   - is_exist: BatchIsExist (keys only), its keys packed from strings on
//     each call into a reused hostmem.Keys, as a caller holding []string
//     does (BatchIsExist has no string form);
//   - put_existing: BatchPutFromMultiBuffers of keys that already exist
//     (write-once: the engine looks each key up and moves no data), with
//     1 or 61 buffers of 1152 B per key;
//   - get_1B: BatchGetIntoMultiBuffers of objects of one byte per buffer
//     (data movement reduced to the minimum).
//
// On the embedded engine the engine's work is an in-process map lookup; in a
// native build (make test-native style cluster) it includes the master
// RPC, so the same benchmark then shows the binding next to upstream's cost.
// ns/key and ns/buffer divide the time per call by the keys and buffers it
// carries; cgo-calls/op shows one crossing per batch.
func BenchmarkCallOverhead(b *testing.B) {
	shapes := []struct{ keys, bufs int }{
		{1, 1}, {16, 1}, {128, 1}, {1024, 1}, {1, 61}, {16, 61}, {128, 61},
	}
	cl := mooncaketest.NewCluster(b)
	st := cl.Open(b, func(c *mooncake.Config) { c.GlobalSegmentSize = 64 << 20 })
	mem := mooncaketest.Memory(b, st, 2*128*61*1152)
	base := mem.Addr()
	for _, sh := range shapes {
		nbuf := sh.keys * sh.bufs
		keys := make([]string, sh.keys)
		for i := range keys {
			keys[i] = mooncaketest.Key(b, fmt.Sprintf("ovh-%d-%d-%048d", sh.keys, sh.bufs, i))
		}
		addrs := make([]uintptr, nbuf)
		sizes := make([]uint64, nbuf)
		one := make([]uint64, nbuf)
		offs := make([]uint64, sh.keys+1)
		for i := range addrs {
			addrs[i], sizes[i], one[i] = base+uintptr(i*1152), 1152, 1
		}
		for i := range offs {
			offs[i] = uint64(i * sh.bufs)
		}
		res := make([]int64, sh.keys)
		// Store the objects once: 1152 B per buffer for put_existing, and
		// one-byte objects (other keys) for get_1B.
		small := make([]string, sh.keys)
		for i := range small {
			small[i] = keys[i] + "-1B"
		}
		packed, packedSmall := hostmem.PackKeys(keys...), hostmem.PackKeys(small...)
		var repacked hostmem.Keys
		bufs := hostmem.Buffers{Addrs: addrs, Sizes: sizes, Offsets: offs}
		oneBufs := hostmem.Buffers{Addrs: addrs, Sizes: one, Offsets: offs}
		r, err := st.Raw().BatchPutFromMultiBuffers(keys, addrs, sizes, offs, res)
		check(b, mooncake.OpBatchPutFromMultiBuffers, keys, r, err)
		r, err = st.Raw().BatchPutFromMultiBuffers(small, addrs, one, offs, res)
		check(b, mooncake.OpBatchPutFromMultiBuffers, small, r, err)

		for _, op := range []struct {
			name string
			call func() ([]int64, error)
		}{
			{"is_exist", func() ([]int64, error) {
				repacked.Reset()
				for _, k := range keys {
					repacked.Append(k)
				}
				return st.BatchIsExist(&repacked, res)
			}},
			{"put_existing", func() ([]int64, error) { return st.Raw().BatchPutFromMultiBuffers(keys, addrs, sizes, offs, res) }},
			{"get_1B", func() ([]int64, error) { return st.Raw().BatchGetIntoMultiBuffers(small, addrs, one, offs, res) }},
			// The typed calls over packed keys: no packing copy.
			{"is_exist_packed", func() ([]int64, error) { return st.BatchIsExist(packed, res) }},
			{"put_existing_packed", func() ([]int64, error) { return st.BatchPutFrom(packed, bufs, res) }},
			{"get_1B_packed", func() ([]int64, error) { return st.BatchGetInto(packedSmall, oneBufs, res) }},
		} {
			b.Run(fmt.Sprintf("%s/keys=%d/bufs=%d", op.name, sh.keys, sh.bufs), func(b *testing.B) {
				b.ReportAllocs()
				before := runtime.NumCgoCall()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					r, err := op.call()
					if err != nil || len(r) != sh.keys || r[0] < 0 {
						b.Fatal(r, err)
					}
				}
				b.StopTimer()
				reportCgo(b, before)
				perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				b.ReportMetric(perOp/float64(sh.keys), "ns/key")
				b.ReportMetric(perOp/float64(nbuf), "ns/buffer")
			})
		}
	}
}
