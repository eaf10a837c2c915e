package hostcache

import (
	"fmt"
	"slices"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"

	"github.com/mooncake-go/mooncake-go/internal/codes"
)

// PoolTransfer is one side-pool transfer of a v2 call (SGLang PoolTransfer).
type PoolTransfer struct {
	Name PoolName
	// Keys are the page keys (untagged hashes), one per logical page.
	Keys []string
	// HostIndices are flat token indices into the side pool, len(Keys)*P.
	HostIndices []int64
	// HitPolicy is used by BatchExistsV2.
	HitPolicy HitPolicy
}

// PoolTransferResult is the result of BatchExistsV2.
type PoolTransferResult struct {
	// Pages is the longest prefix (in pages) every pool can restore.
	Pages int
	// Hits maps a pool to its own boundary (kv included when > 0); pools
	// whose boundary is 0 are absent (SGLang extra_pool_hit_pages).
	Hits map[PoolName]int
	// Restorable lists every prefix length (ascending) that all pools can
	// restore; trailing-page pools can leave holes.
	Restorable []int
}

func (b *Backend) getBatch() *batch {
	for i := range b.slots {
		if bt := b.slots[i].Swap(nil); bt != nil {
			return bt
		}
	}
	return b.scratch.Get().(*batch)
}

func (b *Backend) putBatch(x *batch) {
	for i := range b.slots {
		if b.slots[i].CompareAndSwap(nil, x) {
			return
		}
	}
	b.scratch.Put(x)
}

func (b *Backend) usableLocked() error {
	if b.closed {
		return ErrClosed
	}
	if b.anchor == nil {
		return ErrNotRegistered
	}
	return nil
}

func resizeBools(dst []bool, n int) []bool {
	if cap(dst) < n {
		dst = make([]bool, n)
	}
	dst = dst[:n]
	clear(dst)
	return dst
}

func resizeInts(dst []int64, n int) []int64 {
	if cap(dst) < n {
		dst = make([]int64, n, n+n/4)
	}
	return dst[:n]
}

// prepareV1 fills bt with the v1 keys, page buffer meta and (for
// multi-buffer pages) CSR offsets of pageKeys/hostIndices on the anchor
// pool, exactly what BatchGetV1/BatchSetV1 hand to the store. It does no
// store call and does not allocate once bt has grown to the batch size.
func (b *Backend) prepareV1(bt *batch, pageKeys []string, hostIndices []int64) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if err := b.usableLocked(); err != nil {
		return err
	}
	return b.prepareV1Locked(bt, pageKeys, hostIndices)
}

func (b *Backend) prepareV1Locked(bt *batch, pageKeys []string, hostIndices []int64) error {
	bt.reset()
	anchor := b.anchor
	if err := checkPages(anchor, PoolKV, pageKeys, hostIndices); err != nil {
		return err
	}
	if !anchor.HasBuffer() {
		return fmt.Errorf("hostcache: anchor pool %s: %w", anchor, ErrNoBuffer)
	}
	h := anchor.host()
	var err error
	if b.splitF > 0 {
		err = bt.addSegment(PoolKV, b.scheme, pageKeys, b.scheme.v1, func(a []uintptr, s []uint64) ([]uintptr, []uint64, error) {
			return h.SplitHeadsPageBufferMeta(a, s, hostIndices, b.splitF)
		}, anchor, len(pageKeys))
	} else {
		err = bt.addSegment(PoolKV, b.scheme, pageKeys, b.scheme.v1, func(a []uintptr, s []uint64) ([]uintptr, []uint64, error) {
			return anchor.AppendPageBufferMeta(a, s, hostIndices)
		}, anchor, len(pageKeys))
	}
	if err != nil {
		bt.reset()
		return err
	}
	bt.pages = len(pageKeys)
	bt.keysPerPage = len(b.scheme.v1)
	return nil
}

func checkPages(pool Pool, name PoolName, pageKeys []string, hostIndices []int64) error {
	P := pool.PageSize()
	if len(pageKeys) == 0 {
		return &IndexError{Pool: fmt.Sprintf("%s:%s", string(name), pool), Page: -1, Reason: "no page keys"}
	}
	if len(hostIndices) != len(pageKeys)*P {
		return &IndexError{Pool: fmt.Sprintf("%s:%s", string(name), pool), Page: -1, Count: len(hostIndices),
			Reason: fmt.Sprintf("%d host indices for %d page keys of %d tokens (want %d)", len(hostIndices), len(pageKeys), P, len(pageKeys)*P)}
	}
	return nil
}

// prepareV2 fills bt with every transfer's component keys, meta and CSR
// offsets as one aggregated batch (the form BatchGetV2/BatchSetV2 send). For
// a write on a rank that skips backup (see SkipsBackup), transfers whose keys
// carry no TP rank are left out when forSet is true.
func (b *Backend) prepareV2(bt *batch, transfers []PoolTransfer, forSet bool) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if err := b.usableLocked(); err != nil {
		return err
	}
	return b.prepareV2Locked(bt, transfers, forSet)
}

func (b *Backend) prepareV2Locked(bt *batch, transfers []PoolTransfer, forSet bool) error {
	bt.reset()
	for _, t := range transfers {
		sp := b.pools[t.Name]
		if sp == nil {
			bt.reset()
			return &PoolError{Name: t.Name, Reason: "not registered with RegisterPoolV2", Err: ErrUnregisteredPool}
		}
		if err := checkPages(sp.pool, t.Name, t.Keys, t.HostIndices); err != nil {
			bt.reset()
			return err
		}
		if forSet && b.skipBackup && !sp.rankLocal {
			bt.segs = append(bt.segs, segment{name: t.Name, keyStart: bt.nkeys(), keyEnd: bt.nkeys(), m: len(sp.suffixes), pages: len(t.Keys), skip: true})
			continue
		}
		pool, idx := sp.pool, t.HostIndices
		err := bt.addSegment(t.Name, b.scheme, t.Keys, sp.suffixes, func(a []uintptr, s []uint64) ([]uintptr, []uint64, error) {
			return pool.AppendPageBufferMeta(a, s, idx)
		}, pool, len(t.Keys))
		if err != nil {
			bt.reset()
			return err
		}
		bt.pages += len(t.Keys)
	}
	return nil
}

// ---------------------------------------------------------------------------
// Store calls with result-count validation.

// checkCount turns a batch call's outcome into the backend's: results for
// every key (some may have failed: their entries say so, and err, which
// describes them, adds nothing), a call that failed as a whole (no
// results: a StoreError), or a store that broke the contract.
func checkCount(op string, res []int64, want int, err error) error {
	if err != nil && res == nil {
		return &StoreError{Op: op, Keys: want, Err: err}
	}
	if len(res) != want {
		return &ResultCountError{Op: op, Want: want, Got: len(res)}
	}
	return nil
}

func (b *Backend) exists(keys *hostmem.Keys, dst []int64) ([]int64, error) {
	res, err := b.store.BatchIsExist(keys, dst[:0])
	if err := checkCount("BatchIsExist", res, keys.Len(), err); err != nil {
		return dst[:0], err
	}
	return res, nil
}

func storeOp(single, multi string, bufs hostmem.Buffers) string {
	if bufs.Multi() {
		return multi
	}
	return single
}

func (b *Backend) put(keys *hostmem.Keys, bufs hostmem.Buffers, dst []int64) ([]int64, error) {
	res, err := b.store.BatchPutFrom(keys, bufs, dst[:0])
	if err := checkCount(storeOp("BatchPutFrom", "BatchPutFromMultiBuffers", bufs), res, keys.Len(), err); err != nil {
		return dst[:0], err
	}
	return res, nil
}

func (b *Backend) get(keys *hostmem.Keys, bufs hostmem.Buffers, dst []int64) ([]int64, error) {
	res, err := b.store.BatchGetInto(keys, bufs, dst[:0])
	if err := checkCount(storeOp("BatchGetInto", "BatchGetIntoMultiBuffers", bufs), res, keys.Len(), err); err != nil {
		return dst[:0], err
	}
	return res, nil
}

// ---------------------------------------------------------------------------
// Core I/O on a prepared batch.

// doGet reads every key of bt and stores, per key, 1 for success (the
// store returned exactly the object size) or the failure code in bt.results.
func (b *Backend) doGet(bt *batch) error {
	res, err := b.get(&bt.keys, bt.bufs, bt.results)
	bt.results = res
	if err != nil {
		return err
	}
	for i, r := range res {
		// A get returns the object size. Accept only exactly the bytes the
		// page occupies: a smaller object (single-buffer get into a larger
		// destination) would leave the page partly stale.
		if r > 0 && uint64(r) == bt.objectSize(i) {
			res[i] = 0
		} else if r >= 0 {
			res[i] = codes.StoreInvalidParams
		}
	}
	return nil
}

// doSet writes bt: exists first, then puts only the keys that do not exist,
// leaving 0 (success) or the failure code per key in bt.results.
func (b *Backend) doSet(bt *batch) error {
	n := bt.nkeys()
	if n == 0 {
		bt.results = bt.results[:0]
		return nil
	}
	ex, err := b.exists(&bt.keys, bt.exist)
	bt.exist = ex
	if err != nil {
		return err
	}
	io := resizeInts(bt.results, n)
	bt.results = io
	s := &bt.sub
	s.idx = s.idx[:0]
	for i, e := range ex {
		if e == 1 {
			io[i] = 0
		} else {
			io[i] = -1
			s.idx = append(s.idx, i)
		}
	}
	if len(s.idx) == 0 {
		return nil
	}
	keys, bufs := &bt.keys, bt.bufs
	if len(s.idx) != n {
		keys, bufs = bt.subset()
	}
	put, err := b.put(keys, bufs, s.results)
	s.results = put
	if err != nil {
		return err
	}
	for j, i := range s.idx {
		io[i] = put[j]
	}
	return nil
}

// subset gathers the keys and buffers listed in bt.sub.idx.
func (bt *batch) subset() (*hostmem.Keys, hostmem.Buffers) {
	s := &bt.sub
	s.keys.Reset()
	s.bufs.Addrs = s.bufs.Addrs[:0]
	s.bufs.Sizes = s.bufs.Sizes[:0]
	if bt.multi() {
		s.bufs.Offsets = append(s.bufs.Offsets[:0], 0)
	}
	for _, i := range s.idx {
		s.keys.Buf = append(s.keys.Buf, bt.keys.Bytes(i)...)
		s.keys.Offsets = append(s.keys.Offsets, uint64(len(s.keys.Buf)))
		a, sz := bt.bufs.Group(i)
		s.bufs.Addrs = append(s.bufs.Addrs, a...)
		s.bufs.Sizes = append(s.bufs.Sizes, sz...)
		if bt.multi() {
			s.bufs.Offsets = append(s.bufs.Offsets, uint64(len(s.bufs.Addrs)))
		}
	}
	bufs := s.bufs
	if !bt.multi() {
		bufs.Offsets = nil
	}
	return &s.keys, bufs
}

// pageResults turns per-key codes (0 = success) of one segment into one bool
// per page, appended to dst.
func pageResults(dst []bool, codes []int64, seg segment) []bool {
	if seg.skip {
		for p := 0; p < seg.pages; p++ {
			dst = append(dst, true)
		}
		return dst
	}
	c := codes[seg.keyStart:seg.keyEnd]
	for p := 0; p < seg.pages; p++ {
		ok := true
		for _, r := range c[p*seg.m : (p+1)*seg.m] {
			if r != 0 {
				ok = false
				break
			}
		}
		dst = append(dst, ok)
	}
	return dst
}

// ---------------------------------------------------------------------------
// v1 API

// BatchExists returns the number of leading pages of pageKeys whose v1
// objects all exist (SGLang batch_exists): the first key whose
// batch_is_exist result is not 1 ends the prefix; for MHA both K and V must
// exist. Page hashes chain, so this is a prefix statement.
func (b *Backend) BatchExists(pageKeys []string) (int, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if err := b.usableLocked(); err != nil {
		return 0, err
	}
	return b.batchExistsLocked(pageKeys)
}

func (b *Backend) batchExistsLocked(pageKeys []string) (int, error) {
	if len(pageKeys) == 0 {
		return 0, nil
	}
	bt := b.getBatch()
	defer b.putBatch(bt)
	bt.reset()
	bt.buildKeys(b.scheme.tagPrefix, pageKeys, b.scheme.v1)
	ex, err := b.exists(&bt.keys, bt.exist)
	bt.exist = ex
	if err != nil {
		return 0, err
	}
	m := len(b.scheme.v1)
	for i, r := range ex {
		if r != 1 {
			return i / m, nil
		}
	}
	return len(ex) / m, nil
}

// BatchGetV1 loads the pages of pageKeys into the anchor pool at hostIndices
// (SGLang batch_get_v1) and returns one bool per page (appended to
// results[:0]). A page succeeds when every one of its objects was read with
// exactly the page's byte count. With a logical anchor (no buffer) every page
// reports true: the data lives in v2 pools. When the store call fails as a
// whole, every page is false and the error says why.
func (b *Backend) BatchGetV1(pageKeys []string, hostIndices []int64, results []bool) ([]bool, error) {
	return b.batchIOV1(pageKeys, hostIndices, results, false)
}

// BatchSetV1 stores the pages of pageKeys from the anchor pool at hostIndices
// (SGLang batch_set_v1): one exists call, then one put of only the objects
// that do not exist yet; a page succeeds when all its objects exist or were
// put. On a rank that skips backup (rank-replicated KV, TP rank != 0) nothing
// is written and every page reports true.
func (b *Backend) BatchSetV1(pageKeys []string, hostIndices []int64, results []bool) ([]bool, error) {
	return b.batchIOV1(pageKeys, hostIndices, results, true)
}

func (b *Backend) batchIOV1(pageKeys []string, hostIndices []int64, results []bool, isSet bool) ([]bool, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if err := b.usableLocked(); err != nil {
		return results[:0], err
	}
	n := len(pageKeys)
	if !b.anchor.HasBuffer() || (isSet && b.skipBackup) {
		if err := checkPages(b.anchor, PoolKV, pageKeys, hostIndices); err != nil {
			return results[:0], err
		}
		out := resizeBools(results, n)
		for i := range out {
			out[i] = true
		}
		return out, nil
	}
	bt := b.getBatch()
	defer b.putBatch(bt)
	if err := b.prepareV1Locked(bt, pageKeys, hostIndices); err != nil {
		return results[:0], err
	}
	var err error
	if isSet {
		err = b.doSet(bt)
	} else {
		err = b.doGet(bt)
	}
	if err != nil {
		return resizeBools(results, n), err
	}
	return pageResults(results[:0], bt.results, bt.segs[0]), nil
}

// ---------------------------------------------------------------------------
// v2 API

// BatchGetV2 loads every transfer's pages into its side pool with one store
// call and returns one bool per page per pool. Pages whose buffers outnumber
// their keys are read as multi-buffer objects.
func (b *Backend) BatchGetV2(transfers []PoolTransfer) (map[PoolName][]bool, error) {
	return b.batchIOV2(transfers, false)
}

// BatchSetV2 stores every transfer's pages with one exists call and one put
// of the missing objects (newest SGLang's aggregated v2 set). On a rank that
// skips backup, pools whose keys carry no TP rank are not written and report
// true.
func (b *Backend) BatchSetV2(transfers []PoolTransfer) (map[PoolName][]bool, error) {
	return b.batchIOV2(transfers, true)
}

func (b *Backend) batchIOV2(transfers []PoolTransfer, isSet bool) (map[PoolName][]bool, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if err := b.usableLocked(); err != nil {
		return nil, err
	}
	bt := b.getBatch()
	defer b.putBatch(bt)
	if err := b.prepareV2Locked(bt, transfers, isSet); err != nil {
		return nil, err
	}
	var err error
	switch {
	case bt.nkeys() == 0:
		bt.results = bt.results[:0]
	case isSet:
		err = b.doSet(bt)
	default:
		err = b.doGet(bt)
	}
	out := make(map[PoolName][]bool, len(bt.segs))
	for _, seg := range bt.segs {
		if err != nil && !seg.skip {
			out[seg.name] = make([]bool, seg.pages)
			continue
		}
		out[seg.name] = pageResults(nil, bt.results, seg)
	}
	return out, err
}

// BatchExistsV2 computes how many leading pages of pageKeys every pool can
// restore (SGLang batch_exists_v2, newest semantics): the KV prefix (all of
// pageKeys for a logical anchor, else BatchExists), then for each transfer
// the prefix lengths its hit policy allows; the result is the largest length
// every pool allows. Transfers are evaluated over pageKeys (their own Keys
// only size the trailing window).
func (b *Backend) BatchExistsV2(pageKeys []string, transfers []PoolTransfer) (PoolTransferResult, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	res := PoolTransferResult{Hits: map[PoolName]int{}}
	if err := b.usableLocked(); err != nil {
		return res, err
	}
	kvPages := len(pageKeys)
	if b.anchor.HasBuffer() {
		n, err := b.batchExistsLocked(pageKeys)
		if err != nil {
			return res, err
		}
		kvPages = n
	}
	if kvPages > 0 {
		res.Hits[PoolKV] = kvPages
	}
	restorable := make([]bool, kvPages+1) // restorable[n]: prefix of n pages
	for n := 1; n <= kvPages; n++ {
		restorable[n] = true
	}
	count := kvPages
	bt := b.getBatch()
	defer b.putBatch(bt)
	pageExists := make([]bool, kvPages)
	for _, t := range transfers {
		if count == 0 {
			break
		}
		sp := b.pools[t.Name]
		if sp == nil {
			return res, &PoolError{Name: t.Name, Reason: "not registered with RegisterPoolV2", Err: ErrUnregisteredPool}
		}
		if t.HitPolicy != AllPages && t.HitPolicy != TrailingPages {
			return res, &PoolError{Name: t.Name, Reason: fmt.Sprintf("unsupported hit policy %v", t.HitPolicy), Err: ErrInvalidConfig}
		}
		bt.reset()
		bt.buildKeys(b.scheme.tagPrefix, pageKeys, sp.suffixes)
		ex, err := b.exists(&bt.keys, bt.exist)
		bt.exist = ex
		if err != nil {
			return res, err
		}
		m := len(sp.suffixes)
		for i := 0; i < kvPages; i++ {
			ok := true
			for _, r := range ex[i*m : (i+1)*m] {
				if r != 1 {
					ok = false
					break
				}
			}
			pageExists[i] = ok
		}
		boundary := 0
		allowed := make([]bool, kvPages+1)
		switch t.HitPolicy {
		case AllPages:
			boundary = kvPages
			if i := slices.Index(pageExists, false); i >= 0 {
				boundary = i
			}
			for n := 1; n <= boundary; n++ {
				allowed[n] = true
			}
		case TrailingPages:
			window := max(1, len(t.Keys))
			// missing prefix sums: a window [lo, n) is complete when no page in it is missing.
			miss := make([]int, kvPages+1)
			for i := 0; i < kvPages; i++ {
				miss[i+1] = miss[i]
				if !pageExists[i] {
					miss[i+1]++
				}
			}
			for n := kvPages; n >= 1; n-- {
				lo := max(0, n-window)
				if miss[n]-miss[lo] == 0 {
					allowed[n] = true
					if boundary == 0 {
						boundary = n
					}
				}
			}
		}
		if boundary > 0 {
			res.Hits[t.Name] = boundary
		}
		count = 0
		for n := 1; n <= kvPages; n++ {
			restorable[n] = restorable[n] && allowed[n]
			if restorable[n] {
				count++
			}
		}
	}
	for n := 1; n <= kvPages; n++ {
		if restorable[n] {
			res.Restorable = append(res.Restorable, n)
			res.Pages = n
		}
	}
	return res, nil
}
