//go:build cgo

package mooncake_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

// reportCgo reports cgo calls per operation, so the "one crossing per
// batch" property is measured, not assumed.
func reportCgo(b *testing.B, before int64) {
	b.ReportMetric(float64(runtime.NumCgoCall()-before)/float64(b.N), "cgo-calls/op")
}

type benchBatch struct {
	keys           []string
	addrs, dsts    []uintptr
	sizes, offsets []uint64
	res            []int64
}

// newBenchBatch lays out n keys of nbuf buffers of bufSize bytes: sources in
// the first half of mem, destinations in the second.
func newBenchBatch(b *testing.B, mem *hostmem.Memory, prefix string, n, nbuf, bufSize int) *benchBatch {
	bb := &benchBatch{res: make([]int64, n), offsets: []uint64{0}}
	half := uintptr(n * nbuf * bufSize)
	for i := 0; i < n; i++ {
		bb.keys = append(bb.keys, mooncaketest.Key(b, fmt.Sprintf("%s-%d", prefix, i)))
		for j := 0; j < nbuf; j++ {
			off := uintptr((i*nbuf + j) * bufSize)
			bb.addrs = append(bb.addrs, mem.Addr()+off)
			bb.dsts = append(bb.dsts, mem.Addr()+half+off)
			bb.sizes = append(bb.sizes, uint64(bufSize))
		}
		bb.offsets = append(bb.offsets, uint64(len(bb.addrs)))
	}
	return bb
}

// check stops the benchmark unless every key of a batch call succeeded:
// no error (a *BatchError names the keys that failed) and every result
// entry in place and not negative.
func check(b *testing.B, op mooncake.Op, keys []string, res []int64, err error) {
	if err != nil {
		b.Fatal(err)
	}
	if len(res) != len(keys) {
		b.Fatalf("%s: %d results for %d keys", op, len(res), len(keys))
	}
	for i, r := range res {
		if r < 0 {
			b.Fatalf("%s %q: %v, and no error", op, keys[i], mooncake.ErrorCode(r))
		}
	}
}

// BenchmarkBatch measures the binding on 128-key batches: single-buffer
// (4 KiB objects) and multi-buffer (61 buffers of 1152 B per key, a
// layer-first DeepSeek-V3 MLA page slice).
func BenchmarkBatch(b *testing.B) {
	for _, tc := range []struct {
		name               string
		keys, nbuf, bufLen int
	}{
		{"single_128x4KiB", 128, 1, 4096},
		{"multi_128x61x1152B", 128, 61, 1152},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cl := mooncaketest.NewCluster(b)
			st := cl.Open(b, func(c *mooncake.Config) { c.GlobalSegmentSize = 256 << 20 })
			mem := mooncaketest.Memory(b, st, 2*tc.keys*tc.nbuf*tc.bufLen)
			mooncaketest.Fill(mem.Bytes(), 1)
			bb := newBenchBatch(b, mem, tc.name, tc.keys, tc.nbuf, tc.bufLen)
			objBytes := int64(tc.keys * tc.nbuf * tc.bufLen)
			multi := tc.nbuf > 1

			put := func() ([]int64, error) {
				if multi {
					return st.Raw().BatchUpsertFromMultiBuffers(bb.keys, bb.addrs, bb.sizes, bb.offsets, bb.res)
				}
				return st.Raw().BatchUpsertFrom(bb.keys, bb.addrs, bb.sizes, bb.res)
			}
			get := func() ([]int64, error) {
				if multi {
					return st.Raw().BatchGetIntoMultiBuffers(bb.keys, bb.dsts, bb.sizes, bb.offsets, bb.res)
				}
				return st.Raw().BatchGetInto(bb.keys, bb.dsts, bb.sizes, bb.res)
			}
			packed := hostmem.PackKeys(bb.keys...)
			exists := func() ([]int64, error) { return st.BatchIsExist(packed, bb.res) }
			putOnce := func() ([]int64, error) { // write-once path: every key exists
				if multi {
					return st.Raw().BatchPutFromMultiBuffers(bb.keys, bb.addrs, bb.sizes, bb.offsets, bb.res)
				}
				return st.Raw().BatchPutFrom(bb.keys, bb.addrs, bb.sizes, bb.res)
			}
			res, err := put()
			check(b, "warm-up", bb.keys, res, err)
			res, err = get()
			check(b, "warm-up", bb.keys, res, err)
			for _, op := range []struct {
				name  string
				call  func() ([]int64, error)
				bytes int64
			}{
				{"upsert", put, objBytes},
				{"get", get, objBytes},
				{"put_existing", putOnce, 0},
				{"is_exist", exists, 0},
			} {
				b.Run(op.name, func(b *testing.B) {
					b.SetBytes(op.bytes)
					b.ReportAllocs()
					before := runtime.NumCgoCall()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						res, err := op.call()
						if err != nil || len(res) != tc.keys || res[0] < 0 {
							b.Fatal(res, err)
						}
					}
					b.StopTimer()
					reportCgo(b, before)
				})
			}
		})
	}
}

// BenchmarkLargeObject compares the embedded engine's bandwidth for 4 MiB
// objects with a plain copy of the same bytes between the same buffers.
func BenchmarkLargeObject(b *testing.B) {
	const size = 4 << 20
	cl := mooncaketest.NewCluster(b)
	st := cl.Open(b, func(c *mooncake.Config) { c.GlobalSegmentSize = 64 << 20 })
	mem := mooncaketest.Memory(b, st, 2*size)
	buf := mem.Bytes()
	mooncaketest.Fill(buf[:size], 2)
	k := mooncaketest.Key(b, "4MiB")
	if err := st.Raw().PutFrom(k, mem.Addr(), size); err != nil {
		b.Fatal(err)
	}
	b.Run("memcpy", func(b *testing.B) {
		b.SetBytes(size)
		for i := 0; i < b.N; i++ {
			copy(buf[size:], buf[:size])
		}
	})
	b.Run("upsert_from", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := st.Raw().UpsertFrom(k, mem.Addr(), size); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("get_into", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := st.Raw().GetInto(k, mem.Addr()+size, size); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkConcurrentGetInto: callers goroutines make single 4 KiB
// zero-copy gets (GetInto) of their own keys on one store, with combining
// off and on (docs/combining.md). cgo-calls/op shows the crossings saved,
// combined/op the share of gets that crossed with others. On the embedded
// engine a get is a memcpy, so the times say little about real Mooncake,
// against which combining is to be measured.
func BenchmarkConcurrentGetInto(b *testing.B) {
	const size = 4096
	for _, callers := range []int{1, 4, 16, 64} {
		for _, mode := range []struct {
			name string
			m    mooncake.CombiningMode
		}{{"off", mooncake.CombiningOff}, {"on", mooncake.CombiningOn}} {
			b.Run(fmt.Sprintf("callers=%d/combining=%s", callers, mode.name), func(b *testing.B) {
				st := mooncaketest.NewCluster(b).Open(b, func(c *mooncake.Config) { c.Combining = mode.m })
				mem := mooncaketest.Memory(b, st, 2*callers*size)
				mooncaketest.Fill(mem.Bytes(), 3)
				keys := mooncaketest.Keys(b, "k", callers)
				for i, k := range keys {
					if err := st.Raw().PutFrom(k, mem.Addr()+uintptr(2*i*size), size); err != nil {
						b.Fatal(err)
					}
				}
				b.SetBytes(size)
				b.ReportAllocs()
				before := runtime.NumCgoCall()
				combined := st.Stats().Op(mooncake.OpGetInto).Combined
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				for w := 0; w < callers; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						dst := mem.Addr() + uintptr((2*w+1)*size)
						for next.Add(1) <= int64(b.N) {
							if n, err := st.Raw().GetInto(keys[w], dst, size); err != nil || n != size {
								b.Error(n, err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				reportCgo(b, before)
				b.ReportMetric(float64(st.Stats().Op(mooncake.OpGetInto).Combined-combined)/float64(b.N), "combined/op")
			})
		}
	}
}
