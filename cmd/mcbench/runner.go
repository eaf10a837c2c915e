package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// bench runs cases against one store client.
type bench struct {
	st   *mooncake.Store
	o    *options
	run  string // random per run: keys of different runs never collide
	prog *progress
	// combining runs the plan's combining twins: a second store, opened
	// with Config.Combining on (nil when the plan has none).
	combining *bench
}

// caseRun is the state of one case: its key namespace and the generation
// of fresh keys (removed, outside the clock, every -gen-bytes written).
type caseRun struct {
	*bench
	idx      int
	c        Case
	gen      int
	genBytes int64
	nextID   int
	rmKeys   hostmem.Keys // removeGen's
	rmRes    []int64
	// refCopy, when set (large pages), copies the request's bytes once
	// with plain memcpy; drive times it into ref in a block of its own
	// right after the measured requests (interleaved with them, each would
	// evict the other's lines and TLB entries and slow both down).
	refCopy func() int64
	ref     *recorder
	// group, when the case has several callers, starts and ends every
	// caller's measured requests together; rec is this caller's.
	group   *callerGroup
	rec     *recorder
	warmed  bool // the caller reached group.warmUp
	entered bool // the caller reached group.measure
	// keyBuf holds the keys' common prefix, prefixLen bytes, and then the
	// last key formatted (formatKey).
	keyBuf    []byte
	prefixLen int
}

// largeObject is the object size from which a case also measures the
// memcpy reference between its requests.
const largeObject = 1 << 20

// Keys: "{run}-{case}-{ns}{gen}-{id}". ns is 'w' for fresh writes, 'd' for
// a prepared dataset, 'u' for warm-up objects. HiCache page keys pad the id
// so that the page key is 64 characters, like SGLang's page hashes.
// They are formatted by hand after a prefix made once, as
// bench_python.py's are: with fmt.Sprintf, the Go client spent about 6% of
// its CPU in the 1,024-key puts formatting keys (docs/benchmarks.md).
func (cr *caseRun) key(ns byte, gen, id int) string { return cr.formatKey(ns, gen, id, 12) }

func (cr *caseRun) pageKey(ns byte, gen, id int) string { return cr.formatKey(ns, gen, id, 45) }

func (cr *caseRun) formatKey(ns byte, gen, id, width int) string {
	b := append(cr.keyPrefix(), ns)
	b = appendPadded(b, gen, 4)
	b = append(b, '-')
	b = appendPadded(b, id, width)
	cr.keyBuf = b
	return string(b)
}

// appendPadded appends v in decimal, zero-padded to width digits, as
// fmt's %0*d does for the non-negative numbers of keys.
func appendPadded(b []byte, v, width int) []byte {
	var tmp [20]byte
	d := strconv.AppendInt(tmp[:0], int64(v), 10)
	for i := len(d); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, d...)
}

// keyPrefix returns the case's keys' common prefix, "{run}-{case}-", in
// keyBuf, made on first use.
func (cr *caseRun) keyPrefix() []byte {
	if cr.keyBuf == nil {
		cr.keyBuf = fmt.Appendf(nil, "%s-%03d-", cr.run, cr.idx)
		cr.prefixLen = len(cr.keyBuf)
	}
	return cr.keyBuf[:cr.prefixLen]
}

func (cr *caseRun) casePattern() string {
	return "^" + regexp.QuoteMeta(string(cr.keyPrefix()))
}

// fresh returns n never-written keys for a write of reqBytes, first
// removing the current generation when it would exceed -gen-bytes.
func (cr *caseRun) fresh(dst []string, n int, reqBytes int64, page bool) ([]string, error) {
	if cr.genBytes > 0 && cr.genBytes+reqBytes > cr.o.genBytes {
		if err := cr.removeGen(page); err != nil {
			return nil, err
		}
		cr.gen++
		cr.genBytes, cr.nextID = 0, 0
	}
	cr.genBytes += reqBytes
	dst = dst[:0]
	for i := 0; i < n; i++ {
		if page {
			dst = append(dst, cr.pageKey('w', cr.gen, cr.nextID))
		} else {
			dst = append(dst, cr.key('w', cr.gen, cr.nextID))
		}
		cr.nextID++
	}
	return dst, nil
}

// removeChunk is how many keys one batch remove of a generation carries.
const removeChunk = 4096

// removeGen removes the current generation of fresh keys. Plain keys go by
// their keys, in batch removes: upstream's RemoveByRegex runs std::regex
// over every key the master holds, and with many callers (each removing
// its share of -gen-bytes) that took most of the machine and set the pace
// of the write cases (docs/combining.md). Page keys (the HiCache cases) go
// by their prefix: the backend stores each page under keys it derives from
// the page key (suffixes per rank and per K/V), which the page key alone
// does not name. Keys that are absent (a failed put) are no error here.
func (cr *caseRun) removeGen(page bool) error {
	if page {
		pat := cr.casePattern() + fmt.Sprintf("w%04d-", cr.gen)
		_, err := cr.st.RemoveByRegex(pat, true)
		return err
	}
	for lo := 0; lo < cr.nextID; lo += removeChunk {
		cr.rmKeys.Reset()
		for id := lo; id < min(lo+removeChunk, cr.nextID); id++ {
			cr.rmKeys.Append(cr.key('w', cr.gen, id))
		}
		var err error
		var per *mooncake.BatchError
		if cr.rmRes, err = cr.st.BatchRemove(&cr.rmKeys, true, cr.rmRes); err != nil && !errors.As(err, &per) {
			return err
		}
	}
	return nil
}

// placementLimit bounds the objects placement looks up per caller: a
// whole generation of 4 KiB objects at the default -gen-bytes.
const placementLimit = 1 << 17

// placement counts, among the case's last n objects (keys appends the
// store keys of object id; an even sample of them beyond placementLimit),
// those with a replica outside this client's own segment (-own-segment),
// outside the clock. Upstream places an object elsewhere when the
// preferred segment cannot hold it; such an object moves over the network
// instead of by memcpy, and one in a batch is enough to send the whole
// batch write through the transfer engine (TransferSubmitter::submit_batch
// copies in memory only when every replica is local), which the case's
// figures alone would not tell.
func (cr *caseRun) placement(n int, keys func(k *hostmem.Keys, id int), rec *recorder) error {
	pref := cr.st.ReplicateConfig().PreferredSegments
	if len(pref) == 0 || n == 0 {
		return nil
	}
	step := (n + placementLimit - 1) / placementLimit
	for lo := 0; lo < n; lo += removeChunk * step {
		cr.rmKeys.Reset()
		for id := lo; id < min(n, lo+removeChunk*step); id += step {
			keys(&cr.rmKeys, id)
		}
		reps, res, err := cr.st.BatchGetReplicaDesc(&cr.rmKeys, cr.rmRes)
		cr.rmRes = res
		var per *mooncake.BatchError
		if err != nil && !errors.As(err, &per) {
			return fmt.Errorf("placement: %w", err)
		}
		for i, rs := range reps {
			if res[i] < 0 {
				continue // gone already (a failed put): not placed anywhere
			}
			rec.placed++
			if slices.ContainsFunc(rs, func(r mooncake.Replica) bool { return r.Location != pref[0] }) {
				rec.offSegment++
			}
		}
	}
	return nil
}

// step is one request: it prepares its inputs outside the clock, then times
// the call and its checks into rec.
type step func(rec *recorder) error

// drive runs a time-based case: warm-up, then requests until -duration of
// busy time (or four times that of wall time) has passed.
func (cr *caseRun) drive(s step) (*recorder, error) {
	if g := cr.group; g != nil {
		cr.warmed = true
		g.warmUp()
	}
	if cr.o.warmup > 0 {
		w := newRecorder(1024)
		for t0 := time.Now(); time.Since(t0) < cr.o.warmup; {
			if err := s(w); err != nil {
				return nil, err
			}
		}
	}
	limit := time.Duration(cr.o.duration)
	if g := cr.group; g != nil {
		cr.entered = true
		rec, err := g.measure(limit, s)
		cr.rec = rec
		return rec, err
	}
	rec := newRecorder(1 << 16)
	wallLimit := 4*limit + time.Second
	comb0 := cr.combCounters()
	cpu0, lo0 := procCPU(), loopbackBytes()
	for rec.requests == 0 || (time.Duration(rec.busy) < limit && time.Since(rec.start) < wallLimit) {
		if err := s(rec); err != nil {
			return nil, err
		}
		cr.prog.fraction(float64(rec.busy) / float64(limit))
	}
	rec.cpu, rec.loopback = int64(procCPU()-cpu0), loopbackSince(lo0)
	rec.comb = cr.combCounters().since(comb0)
	if cr.refCopy != nil {
		// Half the case's time: a reference needs fewer samples.
		cr.ref = newRecorder(1024)
		cr.refCopy() // warm: the first pass over the region
		for cr.ref.requests == 0 || time.Duration(cr.ref.busy) < limit/2 {
			t0 := time.Now()
			n := cr.refCopy()
			cr.ref.add(time.Since(t0), 0, n)
			// Outside the clock, as the binding does after a native call:
			// a loop of cgo calls that never yields gets its P retaken by
			// sysmon every 10 ms, whose polling then slows the copies.
			runtime.Gosched()
		}
	}
	return rec, nil
}

// count runs a count-based case: n requests after two warm-up requests
// (warm run first, with their own keys).
func (cr *caseRun) count(n int, warm, s step) (*recorder, error) {
	if warm != nil {
		w := newRecorder(4)
		for i := 0; i < 2; i++ {
			if err := warm(w); err != nil {
				return nil, err
			}
		}
	}
	rec := newRecorder(n)
	cpu0 := procCPU()
	for i := 0; i < n; i++ {
		if err := s(rec); err != nil {
			return nil, err
		}
		cr.prog.fraction(float64(i+1) / float64(n))
	}
	rec.cpu = int64(procCPU() - cpu0)
	return rec, nil
}

// result is rec's result, with the memcpy reference when one was measured.
func (cr *caseRun) result(rec *recorder) Result {
	r := rec.result(cr.c)
	if cr.ref != nil && cr.ref.busy > 0 {
		r.MemcpyGBps = float64(cr.ref.bytes) / (float64(cr.ref.busy) / 1e9) / 1e9
	}
	return r
}

func (b *bench) runCase(idx int, c Case) (res []Result, err error) {
	// A process that does not run a case answers it with no results, as
	// Python's client answers a twin.
	if (c.Combining && b.o.twins == twinsApart) || (!c.Combining && b.o.twins == twinsOnly) {
		return nil, nil
	}
	if c.Combining {
		if b.combining == nil {
			return nil, fmt.Errorf("%s: a combining twin, and no combining store is open", c.Name)
		}
		b = b.combining
	}
	if c.NumCallers() > 1 {
		return b.runCallers(idx, c)
	}
	return b.runOne(&caseRun{bench: b, idx: idx, c: c})
}

// runOne runs one caller's part of a case and removes its objects.
func (b *bench) runOne(cr *caseRun) (res []Result, err error) {
	c := cr.c
	defer func() {
		// Remove every object of the case (reads hold leases: force).
		if _, rerr := b.st.RemoveByRegex(cr.casePattern(), true); rerr != nil && err == nil {
			err = fmt.Errorf("cleanup: %w", rerr)
		}
	}()
	switch c.Scenario {
	case scVerifyWrite, scFill, scWritePerf, scReadPerf, scMixedRW:
		if c.Scenario == scVerifyWrite && c.Phase == "read" {
			return nil, nil // measured together with the write phase
		}
		return cr.kv()
	case scHiSet, scHiGet, scHiExists:
		return cr.hicache()
	case scMultiPut, scMultiGet, scMemcpy:
		return cr.multi()
	case scPrefix:
		return cr.prefixLookup()
	}
	return nil, fmt.Errorf("unknown scenario %q", c.Scenario)
}

// kvRig is the memory of a store_kv_bench case: batch write slots and
// batch read slots in one registered mapping, and Go buffers for the
// copying API.
type kvRig struct {
	mem          *hostmem.Memory
	wAddr, rAddr []uintptr
	sizes        []uint64
	res          []int64
	keys         []string
	payload      []byte   // the value the copying puts store
	patterns     [][]byte // verify_write values, by id % 4
	dst          [][]byte // copying batch gets land here
}

var patternBytes = [4]byte{0x5a, 0xa5, 0x3c, 0xc3}

func (cr *caseRun) newKVRig() (*kvRig, error) {
	c := cr.c
	span := c.Batch * c.ValueSize
	mem, err := hostmem.Alloc(uint64(2*span), hostmem.Options{Populate: cr.o.populate, TransparentHugePages: cr.o.thp})
	if err != nil {
		return nil, err
	}
	if err := cr.st.RegisterMemory(mem); err != nil {
		mem.Free()
		return nil, err
	}
	r := &kvRig{mem: mem, res: make([]int64, c.Batch), keys: make([]string, 0, c.Batch)}
	buf := mem.Bytes()
	for i := range buf[:span] {
		buf[i] = patternBytes[0]
	}
	for i := 0; i < c.Batch; i++ {
		r.wAddr = append(r.wAddr, mem.Addr()+uintptr(i*c.ValueSize))
		r.rAddr = append(r.rAddr, mem.Addr()+uintptr(span+i*c.ValueSize))
		r.sizes = append(r.sizes, uint64(c.ValueSize))
	}
	r.payload = bytes.Repeat(patternBytes[:1], c.ValueSize)
	for _, p := range patternBytes {
		r.patterns = append(r.patterns, bytes.Repeat([]byte{p}, c.ValueSize))
	}
	if c.API == apiPlain {
		for i := 0; i < c.Batch; i++ {
			r.dst = append(r.dst, make([]byte, c.ValueSize))
		}
	}
	return r, nil
}

func (cr *caseRun) freeKVRig(r *kvRig) {
	_ = cr.st.UnregisterBuffer(r.mem.Addr())
	r.mem.Free()
}

func (r *kvRig) wslot(i, size int) []byte { return r.mem.Bytes()[i*size : (i+1)*size] }
func (r *kvRig) rslot(i, size int) []byte {
	off := len(r.wAddr) * size
	return r.mem.Bytes()[off+i*size : off+(i+1)*size]
}

// put writes keys with the case's API; vals, when non-nil, gives each
// key's value (verify_write), else the fixed payload is stored. It
// returns the number of failed keys.
func (cr *caseRun) put(r *kvRig, keys []string, vals [][]byte, rec *recorder) error {
	c, st, n := cr.c, cr.st, len(keys)
	size := c.ValueSize
	failed := 0
	var d time.Duration
	switch {
	case c.API == apiPlain && c.Batch == 1:
		v := r.payload
		if vals != nil {
			v = vals[0]
		}
		t0 := time.Now()
		if err := st.Put(keys[0], v); err != nil {
			failed++
		}
		d = time.Since(t0)
	case c.API == apiPlain:
		// The binding has no copying batch call: stage the values in
		// registered memory and make one zero-copy batch call, which is
		// what upstream's put_batch does inside (copy into the client's
		// local buffer, then one batch transfer).
		t0 := time.Now()
		for i := 0; i < n; i++ {
			v := r.payload
			if vals != nil {
				v = vals[i]
			}
			copy(r.wslot(i, size), v)
		}
		res, err := st.Raw().BatchPutFrom(keys, r.wAddr[:n], r.sizes[:n], r.res)
		failed = countFailed(res, err, n, 0)
		d = time.Since(t0)
	default:
		if vals != nil { // verify_write: the values are in registered memory before the clock starts
			for i := 0; i < n; i++ {
				copy(r.wslot(i, size), vals[i])
			}
		}
		t0 := time.Now()
		if c.Batch == 1 {
			if err := st.Raw().PutFrom(keys[0], r.wAddr[0], r.sizes[0]); err != nil {
				failed++
			}
		} else {
			res, err := st.Raw().BatchPutFrom(keys, r.wAddr[:n], r.sizes[:n], r.res)
			failed = countFailed(res, err, n, 0)
		}
		d = time.Since(t0)
	}
	rec.add(d, n, int64(n-failed)*int64(size))
	rec.errors += failed
	return nil
}

// get reads keys with the case's API; with want, each key's bytes are
// compared with want[i] inside the clock (as store_kv_bench's --verify).
func (cr *caseRun) get(r *kvRig, keys []string, want [][]byte, rec *recorder) error {
	c, st, n := cr.c, cr.st, len(keys)
	size := c.ValueSize
	failed := 0
	t0 := time.Now()
	switch {
	case c.API == apiPlain && c.Batch == 1:
		// Into the request's Go buffer, as the batch case copies into
		// r.dst: a Go service reads through one reused buffer.
		v, err := st.AppendGet(r.dst[0][:0], keys[0])
		if err != nil || len(v) != size || (want != nil && !bytes.Equal(v, want[0])) {
			failed++
		}
	case c.API == apiPlain:
		res, err := st.Raw().BatchGetInto(keys, r.rAddr[:n], r.sizes[:n], r.res)
		failed = countFailed(res, err, n, int64(size))
		for i := 0; i < n; i++ {
			copy(r.dst[i], r.rslot(i, size))
			if want != nil && !bytes.Equal(r.dst[i], want[i]) {
				failed++
			}
		}
	case c.Batch == 1:
		got, err := st.Raw().GetInto(keys[0], r.rAddr[0], r.sizes[0])
		if err != nil || got != int64(size) || (want != nil && !bytes.Equal(r.rslot(0, size), want[0])) {
			failed++
		}
	default:
		res, err := st.Raw().BatchGetInto(keys, r.rAddr[:n], r.sizes[:n], r.res)
		failed = countFailed(res, err, n, int64(size))
		if want != nil {
			for i := 0; i < n; i++ {
				if !bytes.Equal(r.rslot(i, size), want[i]) {
					failed++
				}
			}
		}
	}
	d := time.Since(t0)
	if failed > n {
		failed = n
	}
	rec.add(d, n, int64(n-failed)*int64(size))
	rec.errors += failed
	return nil
}

// countFailed counts keys whose result is not want (want < 0: any
// non-negative result is fine, otherwise exactly want). A call that failed
// as a whole (no results) failed every key; one whose keys failed returns
// their codes in res beside its *mooncake.BatchError.
func countFailed(res []int64, err error, n int, want int64) int {
	if res == nil && err != nil {
		return n
	}
	f := 0
	for _, r := range res[:n] {
		if r < 0 || r != want {
			f++
		}
	}
	return f
}

// prepare writes n dataset objects (namespace 'd') outside the clock with
// zero-copy batch puts.
func (cr *caseRun) prepare(r *kvRig, n int) ([]string, error) {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = cr.key('d', 0, i)
	}
	b := cr.c.Batch
	for lo := 0; lo < n; lo += b {
		hi := min(lo+b, n)
		res, err := cr.st.Raw().BatchPutFrom(keys[lo:hi], r.wAddr[:hi-lo], r.sizes[:hi-lo], r.res)
		if f := countFailed(res, err, hi-lo, 0); f > 0 {
			return nil, fmt.Errorf("preparing the dataset: %d of %d puts failed (%v)", f, hi-lo, err)
		}
	}
	return keys, nil
}

func (cr *caseRun) kv() ([]Result, error) {
	c := cr.c
	r, err := cr.newKVRig()
	if err != nil {
		return nil, err
	}
	defer cr.freeKVRig(r)
	reqBytes := int64(c.Batch * c.ValueSize)
	writeFresh := func(rec *recorder) error {
		keys, err := cr.fresh(r.keys, c.Batch, reqBytes, false)
		if err != nil {
			return err
		}
		return cr.put(r, keys, nil, rec)
	}
	switch c.Scenario {
	case scFill:
		warm := func(rec *recorder) error {
			keys := r.keys[:0]
			for i := 0; i < c.Batch; i++ {
				keys = append(keys, cr.key('u', 0, cr.nextID+i))
			}
			cr.nextID += c.Batch
			return cr.put(r, keys, nil, rec)
		}
		rec, err := cr.count(c.Objects/c.Batch, warm, writeFresh)
		if err != nil {
			return nil, err
		}
		return []Result{rec.result(c)}, nil
	case scWritePerf:
		rec, err := cr.drive(writeFresh)
		if err != nil {
			return nil, err
		}
		if err := cr.placement(cr.nextID, func(k *hostmem.Keys, id int) { k.Append(cr.key('w', cr.gen, id)) }, rec); err != nil {
			return nil, err
		}
		return []Result{rec.result(c)}, nil
	case scVerifyWrite:
		return cr.verifyWrite(r)
	}

	// read_perf, mixed_rw: a prepared dataset.
	data, err := cr.prepare(r, c.Objects)
	if err != nil {
		return nil, err
	}
	if c.Scenario == scReadPerf {
		cursor := 0
		rec, err := cr.drive(func(rec *recorder) error {
			keys := data[cursor : cursor+c.Batch]
			cursor = (cursor + c.Batch) % len(data)
			return cr.get(r, keys, nil, rec)
		})
		if err != nil {
			return nil, err
		}
		if err := cr.placement(len(data), func(k *hostmem.Keys, id int) { k.Append(data[id]) }, rec); err != nil {
			return nil, err
		}
		return []Result{rec.result(c)}, nil
	}
	rng := rand.New(rand.NewPCG(cr.o.seed, uint64(cr.idx)))
	rkeys := make([]string, c.Batch)
	rec, err := cr.drive(func(rec *recorder) error {
		if rng.IntN(100) < cr.o.rwmixread {
			for i := range rkeys {
				rkeys[i] = data[rng.IntN(len(data))]
			}
			return cr.get(r, rkeys, nil, rec)
		}
		return writeFresh(rec)
	})
	if err != nil {
		return nil, err
	}
	return []Result{rec.result(c)}, nil
}

// verifyWrite writes Objects objects whose bytes depend on their id, then
// reads every one back sequentially and compares it (store_kv_bench's
// verify_write); it returns the write and the read phase.
func (cr *caseRun) verifyWrite(r *kvRig) ([]Result, error) {
	c := cr.c
	keys := make([]string, c.Objects)
	for i := range keys {
		keys[i] = cr.key('w', 0, i)
	}
	vals := make([][]byte, c.Batch)
	at := 0
	wrec, err := cr.count(c.Objects/c.Batch, nil, func(rec *recorder) error {
		for i := range vals {
			vals[i] = r.patterns[(at+i)%4]
		}
		err := cr.put(r, keys[at:at+c.Batch], vals, rec)
		at += c.Batch
		return err
	})
	if err != nil {
		return nil, err
	}
	at = 0
	rrec, err := cr.count(c.Objects/c.Batch, nil, func(rec *recorder) error {
		for i := range vals {
			vals[i] = r.patterns[(at+i)%4]
		}
		err := cr.get(r, keys[at:at+c.Batch], vals, rec)
		at += c.Batch
		return err
	})
	if err != nil {
		return nil, err
	}
	rc := c
	rc.Phase = "read"
	rc.Name = "verify_write.read" + c.Name[len("verify_write.write"):]
	return []Result{wrec.result(c), rrec.result(rc)}, nil
}
