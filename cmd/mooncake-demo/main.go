// Command mooncake-demo runs the main job of mooncake-go end to end: it
// allocates registered host memory, writes a few hundred objects with
// single-buffer and multi-buffer (layer-first page) zero-copy puts, reads
// them back into other memory, verifies every byte, and prints what it did
// and the throughput.
//
// By default it runs on the embedded engine. To run against a live cluster,
// give its address with flags (native build: make native demo-native), or
// set MOONCAKE_MASTER / MOONCAKE_CONFIG_PATH as SGLang deployments do:
//
//	mooncake-demo -master 127.0.0.1:50051 -metadata http://127.0.0.1:8080/metadata -protocol tcp
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/bits"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/mooncake-go/mooncake-go/cmd/internal/cliconfig"
	"github.com/mooncake-go/mooncake-go/internal/fill"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

func main() {
	err := run(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return // -h: the usage was printed
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mooncake-demo:", err)
		os.Exit(1)
	}
}

type options struct {
	cfg       mooncake.Config
	source    string
	objects   int
	objSize   int
	pages     int
	layers    int
	layerSize int
	batch     int
}

func parseFlags(args []string) (*options, error) {
	fs := flag.NewFlagSet("mooncake-demo", flag.ContinueOnError)
	cluster := cliconfig.Register(fs, cliconfig.Defaults{Segment: "512mb", LocalBuffer: "16mb", EmbeddedMaster: "embedded-demo"})
	o := &options{}
	fs.IntVar(&o.objects, "objects", 256, "single-buffer objects")
	fs.IntVar(&o.objSize, "object-size", 64<<10, "bytes per single-buffer object")
	fs.IntVar(&o.pages, "pages", 128, "multi-buffer pages")
	fs.IntVar(&o.layers, "layers", 61, "buffers (layers) per page")
	fs.IntVar(&o.layerSize, "layer-size", 1152*16, "bytes per layer buffer (DeepSeek-V3 MLA: 1152 B per token)")
	fs.IntVar(&o.batch, "batch", 128, "keys per batch call")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	cfg, src, err := cluster.Config()
	if err != nil {
		return nil, err
	}
	o.cfg, o.source = cfg, string(src)
	if o.objects < 0 || o.pages < 0 || o.objSize <= 0 || o.layers <= 0 || o.layerSize <= 0 || o.batch <= 0 {
		return nil, errors.New("counts and sizes must be positive")
	}
	if _, err := o.memoryBytes(); err != nil {
		return nil, err
	}
	return o, nil
}

// memoryBytes is the host memory the demo maps: a source and a destination
// for every object and page. It refuses products that overflow and more
// than the machine's RAM (the memory is populated: more would end in the
// OOM killer, not an error).
func (o *options) memoryBytes() (uint64, error) {
	mul := func(a, b uint64) (uint64, bool) {
		hi, lo := bits.Mul64(a, b)
		return lo, hi == 0
	}
	single, ok1 := mul(uint64(o.objects), uint64(o.objSize))
	page, ok2 := mul(uint64(o.layers), uint64(o.layerSize))
	multi, ok3 := mul(uint64(o.pages), page)
	sum, carry := bits.Add64(single, multi, 0)
	total, ok4 := mul(2, sum)
	if !ok1 || !ok2 || !ok3 || carry != 0 || !ok4 || total > math.MaxInt64 {
		return 0, errors.New("-objects x -object-size and -pages x -layers x -layer-size overflow 64 bits")
	}
	if ram := physicalMemory(); ram > 0 && total > ram {
		return 0, fmt.Errorf("the demo needs %s of host memory, more than this machine's %s", human(int(total)), human(int(ram)))
	}
	return total, nil
}

func run(args []string) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	b := mooncake.Backend()
	fmt.Printf("mooncake-go demo: backend %s, master %q (%s), protocol %s\n",
		b.Name, o.cfg.MasterServerAddress, o.source, o.cfg.Protocol)
	if b.UpstreamCommit != "" {
		fmt.Printf("mooncake-go demo: upstream %.8s, library %s\n", b.UpstreamCommit, b.Library)
	}
	fmt.Printf("mooncake-go demo: capabilities: %v\n", b.Capabilities)
	st, err := mooncake.Open(o.cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	host, err := st.Hostname()
	if err != nil {
		return err
	}
	fmt.Printf("client %s mounted a %s segment\n", host, o.cfg.GlobalSegmentSize)

	singleBytes := o.objects * o.objSize // memoryBytes checked these products
	pageBytes := o.layers * o.layerSize
	multiBytes := o.pages * pageBytes
	total := 2 * (singleBytes + multiBytes)
	mem, err := hostmem.Alloc(uint64(total), hostmem.Options{Populate: true})
	if err != nil {
		return err
	}
	defer mem.Free()
	if err := st.RegisterMemory(mem); err != nil {
		return err
	}
	defer st.UnregisterBuffer(mem.Addr())
	fmt.Printf("host memory: %s mmap'd at %#x, page-aligned, registered\n", human(total), mem.Addr())

	buf := mem.Bytes()
	fill.Fill(buf[:singleBytes], 1)
	fill.Fill(buf[2*singleBytes:2*singleBytes+multiBytes], 2)
	prefix := fmt.Sprintf("mcgo-demo/%d/", time.Now().UnixNano())

	// Single-buffer objects: source i at i*objSize, destination in the
	// second half.
	var keys []string
	var src, dst []uintptr
	var sizes []uint64
	for i := 0; i < o.objects; i++ {
		keys = append(keys, fmt.Sprintf("%sobj-%d", prefix, i))
		src = append(src, mem.Addr()+uintptr(i*o.objSize))
		dst = append(dst, mem.Addr()+uintptr(singleBytes+i*o.objSize))
		sizes = append(sizes, uint64(o.objSize))
	}
	// Each batch packs its keys into one reused hostmem.Keys: they cross
	// into C as they are, with no string per key.
	var batchKeys hostmem.Keys
	pack := func(keys []string) *hostmem.Keys {
		batchKeys.Reset()
		for _, k := range keys {
			batchKeys.Append(k)
		}
		return &batchKeys
	}
	putD, err := batched(o.batch, len(keys), func(lo, hi int, res []int64) ([]int64, error) {
		return st.BatchPutFrom(pack(keys[lo:hi]), hostmem.Buffers{Addrs: src[lo:hi], Sizes: sizes[lo:hi]}, res)
	})
	if err != nil {
		return err
	}
	getD, err := batched(o.batch, len(keys), func(lo, hi int, res []int64) ([]int64, error) {
		return st.BatchGetInto(pack(keys[lo:hi]), hostmem.Buffers{Addrs: dst[lo:hi], Sizes: sizes[lo:hi]}, res)
	})
	if err != nil {
		return err
	}
	if !bytes.Equal(buf[:singleBytes], buf[singleBytes:2*singleBytes]) {
		return errors.New("single-buffer objects: bytes read back differ")
	}
	report("single-buffer", fmt.Sprintf("%d objects x %s", o.objects, human(o.objSize)), singleBytes, o.objects, putD, getD)

	// Multi-buffer pages, layer-first: layer l of page p lives at
	// (l*pages + p)*layerSize, so a page is not contiguous.
	base := mem.Addr() + uintptr(2*singleBytes)
	var pkeys []string
	var psrc, pdst []uintptr
	var psizes []uint64
	poffs := []uint64{0}
	for p := 0; p < o.pages; p++ {
		pkeys = append(pkeys, fmt.Sprintf("%spage-%d", prefix, p))
		for l := 0; l < o.layers; l++ {
			off := uintptr((l*o.pages + p) * o.layerSize)
			psrc = append(psrc, base+off)
			pdst = append(pdst, base+uintptr(multiBytes)+off)
			psizes = append(psizes, uint64(o.layerSize))
		}
		poffs = append(poffs, uint64(len(psrc)))
	}
	// The buffer lists of pages [lo, hi) in CSR form: page i owns
	// addrs[offs[i]:offs[i+1]], its layers in order.
	offs := make([]uint64, 0, o.batch+1)
	csr := func(addrs []uintptr, lo, hi int) hostmem.Buffers {
		a, b := poffs[lo], poffs[hi]
		offs = offs[:0]
		for i := lo; i <= hi; i++ {
			offs = append(offs, poffs[i]-a)
		}
		return hostmem.Buffers{Addrs: addrs[a:b], Sizes: psizes[a:b], Offsets: offs}
	}
	putD, err = batched(o.batch, len(pkeys), func(lo, hi int, res []int64) ([]int64, error) {
		return st.BatchPutFrom(pack(pkeys[lo:hi]), csr(psrc, lo, hi), res)
	})
	if err != nil {
		return err
	}
	getD, err = batched(o.batch, len(pkeys), func(lo, hi int, res []int64) ([]int64, error) {
		return st.BatchGetInto(pack(pkeys[lo:hi]), csr(pdst, lo, hi), res)
	})
	if err != nil {
		return err
	}
	mb := buf[2*singleBytes:]
	if !bytes.Equal(mb[:multiBytes], mb[multiBytes:2*multiBytes]) {
		return errors.New("multi-buffer pages: bytes read back differ")
	}
	report("multi-buffer", fmt.Sprintf("%d pages x %d buffers x %s", o.pages, o.layers, human(o.layerSize)),
		multiBytes, o.pages, putD, getD)

	// A page is one object: the concatenation of its layers.
	if o.pages > 0 {
		whole, err := st.Get(pkeys[0])
		if err != nil {
			return err
		}
		for l := 0; l < o.layers; l++ {
			off := l * o.pages * o.layerSize
			if !bytes.Equal(whole[l*o.layerSize:(l+1)*o.layerSize], mb[off:off+o.layerSize]) {
				return fmt.Errorf("page 0 layer %d: object bytes differ", l)
			}
		}
		fmt.Printf("page 0 read back whole with Get: %s = %d layers concatenated, verified\n", human(len(whole)), o.layers)
	}

	all := append(append([]string(nil), keys...), pkeys...)
	ex, err := st.BatchIsExist(hostmem.PackKeys(all...), nil)
	if err != nil {
		return err
	}
	n := 0
	for _, e := range ex {
		if e == 1 {
			n++
		}
	}
	removed, err := st.RemoveByRegex("^"+regexp.QuoteMeta(prefix), true)
	if err != nil {
		return err
	}
	fmt.Printf("exist: %d/%d keys; removed %d; every byte verified (%s)\n", n, len(all), removed, human(singleBytes+multiBytes))
	if n != len(all) || removed != int64(len(all)) {
		return fmt.Errorf("expected %d keys to exist and be removed", len(all))
	}
	printStats(st.Stats())
	return nil
}

// printStats shows the client's own counters (Store.Stats; the same
// numbers package mooncakeprom exports to Prometheus).
func printStats(s mooncake.Stats) {
	fmt.Println("client stats (Store.Stats):")
	for _, o := range s.Ops {
		fmt.Printf("  %-30s %5d calls %7d keys %10s  p50 <= %-7v p99 <= %-7v failed keys %d\n", o.Op, o.Calls, o.Keys,
			human(int(o.Bytes)), o.Latency.Quantile(0.5), o.Latency.Quantile(0.99), o.FailedKeys)
	}
}

// batched runs call over [0, n) in chunks of size batch; a key that
// failed fails it (the batch call's *mooncake.BatchError names it).
func batched(batch, n int, call func(lo, hi int, res []int64) ([]int64, error)) (time.Duration, error) {
	res := make([]int64, batch)
	var d time.Duration
	for lo := 0; lo < n; lo += batch {
		hi := min(lo+batch, n)
		t0 := time.Now()
		_, err := call(lo, hi, res)
		d += time.Since(t0)
		if err != nil {
			return 0, err
		}
	}
	return d, nil
}

func report(what, shape string, nbytes, nkeys int, put, get time.Duration) {
	gbps := func(d time.Duration) float64 { return float64(nbytes) / d.Seconds() / 1e9 }
	fmt.Printf("%-13s %-36s put %6.2f GB/s (%8.0f keys/s)   get %6.2f GB/s (%8.0f keys/s)   verified\n",
		what+":", shape, gbps(put), float64(nkeys)/put.Seconds(), gbps(get), float64(nkeys)/get.Seconds())
}

func human(n int) string {
	switch {
	case n >= 1<<30 && n%(1<<20) == 0:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return strings.TrimSpace(fmt.Sprintf("%d B", n))
}
