package main

import (
	"fmt"
	"time"
	"unsafe"

	hc "github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// hicache runs a HiCache case through hostcache.Backend, exactly as a Go
// serving process would: a host pool in registered memory, page keys in,
// BatchSetV1 / BatchGetV1 / BatchExists (page meta, keys, CSR packing and
// the store calls inside). The request writes pages [0, batch) of the
// pool, and reads into pages [batch, 2*batch).
func (cr *caseRun) hicache() ([]Result, error) {
	c := cr.c
	alloc := &hc.MmapAllocator{Options: hostmem.Options{Populate: cr.o.populate, TransparentHugePages: cr.o.thp}}
	tokens := 2 * c.Batch * c.PageSize
	var pool *hc.HostPool
	var opts hc.Options
	var err error
	if c.Pool == poolMLA {
		pool, err = hc.NewMLAPool(hc.MLAConfig{Layers: mlaLayers, LatentDim: mlaLatent, DType: hc.BF16,
			PageSize: c.PageSize, Tokens: tokens, Layout: hc.LayerFirst, Allocator: alloc})
		opts.RankReplicated = true
	} else {
		pool, err = hc.NewMHAPool(hc.MHAConfig{Layers: mhaLayers, Heads: mhaHeads, HeadDim: mhaHeadDim, DType: hc.BF16,
			PageSize: c.PageSize, Tokens: tokens, Layout: hc.PageFirst, Allocator: alloc})
	}
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	for _, b := range pool.Buffers() {
		for i := range b.Mem {
			b.Mem[i] = 0x5a
		}
	}
	ts := &timedStore{st: cr.st}
	be, err := hc.NewBackend(ts, opts)
	if err != nil {
		return nil, err
	}
	defer be.Close()
	if err := be.RegisterPool(pool); err != nil {
		return nil, err
	}
	tok := func(first int) []int64 {
		idx := make([]int64, 0, c.Batch*c.PageSize)
		for p := first; p < first+c.Batch; p++ {
			for t := 0; t < c.PageSize; t++ {
				idx = append(idx, int64(p*c.PageSize+t))
			}
		}
		return idx
	}
	setIdx, getIdx := tok(0), tok(c.Batch)
	if cr.o.memcpyRef && c.ValueSize >= largeObject && c.Scenario != scHiExists {
		// The memcpy reference: the request's page buffers copied one by
		// one to (set) or from (get) a rotating cold region, as the store
		// copies them to or from its segment.
		idx := setIdx
		if c.Scenario == scHiGet {
			idx = getIdx
		}
		addrs, sizes, err := pool.AppendPageBufferMeta(nil, nil, idx)
		if err != nil {
			return nil, err
		}
		mem := pool.KVBuffer()[0] // the whole [2,...] tensor for MHA
		bufs := make([][]byte, len(addrs))
		for i, a := range addrs {
			off := int(a - mem.Addr)
			bufs[i] = mem.Mem[off : off+int(sizes[i])]
		}
		ref, err := cr.newRefCopy(bufs, c.Scenario == scHiGet)
		if err != nil {
			return nil, err
		}
		defer ref.free()
	}
	keysPerReq := c.KeysPerRequest()
	pageBytes := int64(keysPerReq/c.Batch) * int64(c.ValueSize)
	reqBytes := int64(c.Batch) * pageBytes
	ok := make([]bool, 0, c.Batch)
	pageKeys := make([]string, 0, c.Batch)

	checkAll := func(ok []bool, err error) int {
		if err != nil {
			return c.Batch
		}
		f := 0
		for _, v := range ok {
			if !v {
				f++
			}
		}
		return f + c.Batch - len(ok)
	}
	// set stores pageKeys from the write half of the pool.
	set := func(keys []string, rec *recorder) {
		ts.inside = 0
		t0 := time.Now()
		res, err := be.BatchSetV1(keys, setIdx, ok)
		failed := checkAll(res, err)
		d := time.Since(t0)
		rec.add(d, keysPerReq, int64(c.Batch-failed)*pageBytes)
		rec.outside += int64(d - ts.inside)
		rec.errors += failed
	}
	if c.Scenario == scHiSet {
		rec, err := cr.drive(func(rec *recorder) error {
			keys, err := cr.fresh(pageKeys, c.Batch, reqBytes, true)
			if err != nil {
				return err
			}
			set(keys, rec)
			return nil
		})
		if err != nil {
			return nil, err
		}
		if err := cr.placement(cr.nextID, func(k *hostmem.Keys, id int) { cr.pageStoreKeys(be, k, cr.pageKey('w', cr.gen, id)) }, rec); err != nil {
			return nil, err
		}
		return []Result{cr.result(rec)}, nil
	}

	// get, exists: a prepared dataset of Objects pages.
	data := make([]string, c.Objects)
	for i := range data {
		data[i] = cr.pageKey('d', 0, i)
	}
	prep := newRecorder(16)
	for lo := 0; lo < len(data); lo += c.Batch {
		set(data[lo:lo+c.Batch], prep)
	}
	if prep.errors > 0 {
		return nil, fmt.Errorf("preparing the dataset: %d pages failed", prep.errors)
	}
	cursor := 0
	next := func() []string {
		keys := data[cursor : cursor+c.Batch]
		cursor = (cursor + c.Batch) % len(data)
		return keys
	}
	var s step
	if c.Scenario == scHiGet {
		s = func(rec *recorder) error {
			keys := next()
			ts.inside = 0
			t0 := time.Now()
			res, err := be.BatchGetV1(keys, getIdx, ok)
			failed := checkAll(res, err)
			d := time.Since(t0)
			rec.add(d, keysPerReq, int64(c.Batch-failed)*pageBytes)
			rec.outside += int64(d - ts.inside)
			rec.errors += failed
			return nil
		}
	} else {
		s = func(rec *recorder) error {
			keys := next()
			ts.inside = 0
			t0 := time.Now()
			n, err := be.BatchExists(keys)
			d := time.Since(t0)
			rec.add(d, keysPerReq, 0)
			rec.outside += int64(d - ts.inside)
			if err != nil || n != c.Batch {
				rec.errors += c.Batch
			}
			return nil
		}
	}
	rec, err := cr.drive(s)
	if err != nil {
		return nil, err
	}
	if err := cr.placement(len(data), func(k *hostmem.Keys, id int) { cr.pageStoreKeys(be, k, data[id]) }, rec); err != nil {
		return nil, err
	}
	return []Result{cr.result(rec)}, nil
}

// pageStoreKeys appends the store keys the backend keeps page under.
func (cr *caseRun) pageStoreKeys(be *hc.Backend, k *hostmem.Keys, page string) {
	for _, key := range be.KeyScheme().V1Keys([]string{page}) {
		k.Append(key)
	}
}

// refRegion is the cold side of the memcpy reference: a region as large as
// a generation of written objects (-gen-bytes), walked request by request,
// so that the reference copies touch as much memory as the store does (on
// a machine whose L3 can hold a whole request, copying between the same two
// buffers every time would measure the cache, not memcpy).
type refRegion struct{ mem *hostmem.Memory }

func (r refRegion) free() { r.mem.Free() }

// newRefCopy sets cr.refCopy to copy bufs (the request's buffers, in
// order) into the next request-sized window of the cold region, or, for
// gets, from it into bufs: one memcpy per buffer (refCopyImpl), all in one
// cgo call.
func (cr *caseRun) newRefCopy(bufs [][]byte, get bool) (refRegion, error) {
	var reqBytes int
	for _, b := range bufs {
		reqBytes += len(b)
	}
	size := int(cr.o.genBytes) / reqBytes * reqBytes
	if size < 2*reqBytes {
		size = 2 * reqBytes
	}
	mem, err := hostmem.Alloc(uint64(size), hostmem.Options{Populate: true, TransparentHugePages: cr.o.thp})
	if err != nil {
		return refRegion{}, err
	}
	cold := mem.Addr() // populated: every page is resident
	dst := make([]uintptr, len(bufs))
	src := make([]uintptr, len(bufs))
	lens := make([]uint64, len(bufs))
	bufAddr := make([]uintptr, len(bufs))
	for i, b := range bufs {
		lens[i] = uint64(len(b))
		if len(b) > 0 {
			bufAddr[i] = uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		}
	}
	off := 0
	cr.refCopy = func() int64 {
		if off+reqBytes > size {
			off = 0
		}
		o := cold + uintptr(off)
		for i, b := range bufs {
			if get {
				dst[i], src[i] = bufAddr[i], o
			} else {
				dst[i], src[i] = o, bufAddr[i]
			}
			o += uintptr(len(b))
		}
		copyList(dst, src, lens)
		off += reqBytes
		return int64(reqBytes)
	}
	return refRegion{mem}, nil
}

// timedStore is the store as hostcache sees it, with the time spent inside
// the store's batch calls added up: a request's time minus that is what the
// HiCache layer itself costs (page meta, keys, packing, result checks). It
// wraps every method of hostcache.Store explicitly, so that no call can
// reach the store untimed.
type timedStore struct {
	st     *mooncake.Store
	inside time.Duration
}

var _ hc.Store = (*timedStore)(nil)

func (t *timedStore) timed(call func() ([]int64, error)) ([]int64, error) {
	t0 := time.Now()
	r, err := call()
	t.inside += time.Since(t0)
	return r, err
}

func (t *timedStore) RegisterBuffer(addr uintptr, size uint64) error {
	return t.st.RegisterBuffer(addr, size)
}

func (t *timedStore) UnregisterBuffer(addr uintptr) error { return t.st.UnregisterBuffer(addr) }

func (t *timedStore) RemoveAll(force bool) (int64, error) { return t.st.RemoveAll(force) }

func (t *timedStore) BatchIsExist(keys *hostmem.Keys, res []int64) ([]int64, error) {
	return t.timed(func() ([]int64, error) { return t.st.BatchIsExist(keys, res) })
}

func (t *timedStore) BatchPutFrom(keys *hostmem.Keys, bufs hostmem.Buffers, res []int64) ([]int64, error) {
	return t.timed(func() ([]int64, error) { return t.st.BatchPutFrom(keys, bufs, res) })
}

func (t *timedStore) BatchGetInto(keys *hostmem.Keys, bufs hostmem.Buffers, res []int64) ([]int64, error) {
	return t.timed(func() ([]int64, error) { return t.st.BatchGetInto(keys, bufs, res) })
}

// multi runs multi_put / multi_get with prebuilt CSR lists (the binding's
// own cost, no hostcache) and memcpy, the reference: the same bytes copied
// buffer by buffer between the same two layer-first regions.
func (cr *caseRun) multi() ([]Result, error) {
	c := cr.c
	span := c.Batch * c.Buffers * c.BufSize
	mem, err := hostmem.Alloc(uint64(2*span), hostmem.Options{Populate: cr.o.populate, TransparentHugePages: cr.o.thp})
	if err != nil {
		return nil, err
	}
	defer mem.Free()
	buf := mem.Bytes()
	for i := range buf[:span] {
		buf[i] = byte(i*7 + 1)
	}
	if c.Scenario != scMemcpy {
		if err := cr.st.RegisterMemory(mem); err != nil {
			return nil, err
		}
		defer cr.st.UnregisterBuffer(mem.Addr())
	}
	// Layer-first: buffer l of key k at (l*keys + k) * size.
	var src, dst []uintptr
	var sizes []uint64
	offs := []uint64{0}
	var spans [][2]int
	for k := 0; k < c.Batch; k++ {
		for l := 0; l < c.Buffers; l++ {
			off := (l*c.Batch + k) * c.BufSize
			src = append(src, mem.Addr()+uintptr(off))
			dst = append(dst, mem.Addr()+uintptr(span+off))
			sizes = append(sizes, uint64(c.BufSize))
			spans = append(spans, [2]int{off, off + c.BufSize})
		}
		offs = append(offs, uint64(len(src)))
	}
	res := make([]int64, c.Batch)
	keys := make([]string, 0, c.Batch)
	reqBytes := int64(span)
	memcpy := func() int64 {
		for _, sp := range spans {
			copy(buf[span+sp[0]:span+sp[1]], buf[sp[0]:sp[1]])
		}
		return reqBytes
	}
	if cr.o.memcpyRef && c.ValueSize >= largeObject && c.Scenario != scMemcpy {
		bufs := make([][]byte, len(spans))
		for i, sp := range spans {
			if c.Scenario == scMultiGet {
				bufs[i] = buf[span+sp[0] : span+sp[1]]
			} else {
				bufs[i] = buf[sp[0]:sp[1]]
			}
		}
		ref, err := cr.newRefCopy(bufs, c.Scenario == scMultiGet)
		if err != nil {
			return nil, err
		}
		defer ref.free()
	}
	var s step
	switch c.Scenario {
	case scMemcpy:
		s = func(rec *recorder) error {
			t0 := time.Now()
			n := memcpy()
			rec.add(time.Since(t0), c.Batch, n)
			return nil
		}
	case scMultiPut:
		s = func(rec *recorder) error {
			k, err := cr.fresh(keys, c.Batch, reqBytes, false)
			if err != nil {
				return err
			}
			t0 := time.Now()
			r, err := cr.st.Raw().BatchPutFromMultiBuffers(k, src, sizes, offs, res)
			failed := countFailed(r, err, c.Batch, 0)
			rec.add(time.Since(t0), c.Batch, int64(c.Batch-failed)*int64(c.ValueSize))
			rec.errors += failed
			return nil
		}
	default:
		data := make([]string, c.Objects)
		for i := range data {
			data[i] = cr.key('d', 0, i)
		}
		for lo := 0; lo < len(data); lo += c.Batch {
			r, err := cr.st.Raw().BatchPutFromMultiBuffers(data[lo:lo+c.Batch], src, sizes, offs, res)
			if f := countFailed(r, err, c.Batch, 0); f > 0 {
				return nil, fmt.Errorf("preparing the dataset: %d puts failed (%v)", f, err)
			}
		}
		cursor := 0
		s = func(rec *recorder) error {
			k := data[cursor : cursor+c.Batch]
			cursor = (cursor + c.Batch) % len(data)
			t0 := time.Now()
			r, err := cr.st.Raw().BatchGetIntoMultiBuffers(k, dst, sizes, offs, res)
			failed := countFailed(r, err, c.Batch, int64(c.ValueSize))
			rec.add(time.Since(t0), c.Batch, int64(c.Batch-failed)*int64(c.ValueSize))
			rec.errors += failed
			return nil
		}
	}
	rec, err := cr.drive(s)
	if err != nil {
		return nil, err
	}
	return []Result{cr.result(rec)}, nil
}
