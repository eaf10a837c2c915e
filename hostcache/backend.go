package hostcache

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/mooncake-go/mooncake-go/internal/memreg"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// Options configures a Backend (SGLang HiCacheStorageConfig plus the
// Mooncake backend's extra_config keys).
type Options struct {
	TPRank, TPSize int
	PPRank, PPSize int
	// RankReplicated is SGLang's is_mla_model: the KV (MLA, DeepSeek V4) is
	// identical on every TP rank, keys carry no TP rank, and only TP rank 0
	// writes objects whose keys carry no TP rank.
	RankReplicated bool
	// ModelName becomes part of the key prefix ("/" → "-"), as in newest
	// SGLang. Leave it empty to share objects with PR-era SGLang.
	ModelName string
	// ExtraBackendTag is extra_config["extra_backend_tag"] (nil: absent).
	ExtraBackendTag *string
	// TPLCMSize enables split heads when > TPSize, the KV is not
	// rank-replicated and the anchor layout is page_head. It must be a
	// multiple of TPSize.
	TPLCMSize int
	// LayoutFingerprint appends the anchor pool's Fingerprint to the key
	// prefix. Off by default (SGLang keys encode no layout): pages of equal
	// size but different byte order (MLA page_first vs layer_first /
	// page_first_direct; MHA page_first vs page_first_direct vs page_head)
	// otherwise collide silently when deployments share a cluster.
	LayoutFingerprint bool
}

// Backend is the HiCache storage backend over a Mooncake Store (SGLang
// MooncakeStore, mem_cache/storage/mooncake_store/mooncake_store.py). Register the anchor pool with
// RegisterPool, side pools with RegisterPoolV2, then call the Batch* methods.
// All methods are safe for concurrent use.
type Backend struct {
	store      Store
	opts       Options
	skipBackup bool

	mu     sync.RWMutex
	closed bool
	anchor Pool
	scheme *KeyScheme
	splitF int
	pools  map[PoolName]*sidePool
	regs   []registration // sorted by addr
	// Scratch batches: a few slots that survive garbage collections (a
	// sync.Pool is emptied by them, and a fresh batch allocates while it
	// grows), then a sync.Pool for bursts of concurrent calls.
	slots   [scratchSlots]atomic.Pointer[batch]
	scratch sync.Pool
}

const scratchSlots = 8

type sidePool struct {
	name      PoolName
	pool      Pool
	suffixes  []string
	rankLocal bool // keys carry the TP rank: every rank writes
}

type registration struct {
	addr uintptr
	size uint64
	pool string
	buf  string
	host *hostmem.Memory // marked registered while the registration lasts
}

// NewBackend validates opts and returns a backend over store.
func NewBackend(store Store, opts Options) (*Backend, error) {
	if isNil(store) {
		return nil, &ConfigError{What: "backend", Field: "store", Reason: "nil store"}
	}
	if opts.TPSize == 0 {
		opts.TPSize = 1
	}
	if opts.PPSize == 0 {
		opts.PPSize = 1
	}
	if opts.TPRank < 0 || opts.TPRank >= opts.TPSize {
		return nil, &ConfigError{What: "backend", Field: "tp rank", Reason: fmt.Sprintf("rank %d of %d", opts.TPRank, opts.TPSize)}
	}
	if opts.PPRank < 0 || opts.PPRank >= opts.PPSize {
		return nil, &ConfigError{What: "backend", Field: "pp rank", Reason: fmt.Sprintf("rank %d of %d", opts.PPRank, opts.PPSize)}
	}
	if opts.TPLCMSize < 0 || (opts.TPLCMSize > 0 && opts.TPLCMSize%opts.TPSize != 0) {
		return nil, &ConfigError{What: "backend", Field: "tp_lcm_size", Reason: fmt.Sprintf("%d is not a multiple of tp size %d", opts.TPLCMSize, opts.TPSize)}
	}
	b := &Backend{store: store, opts: opts, pools: map[PoolName]*sidePool{}}
	b.skipBackup = opts.RankReplicated && opts.TPRank != 0
	b.scratch.New = func() any { return new(batch) }
	return b, nil
}

// SkipsBackup reports whether this rank skips writing rank-replicated
// objects (SGLang backup_skip: rank-replicated KV and TP rank != 0).
func (b *Backend) SkipsBackup() bool { return b.skipBackup }

// GBPerPage is SGLang's gb_per_page metric of the registered anchor:
// get_ksize_per_token() * page_size / 2^30 (0 before RegisterPool).
func (b *Backend) GBPerPage() float64 {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.anchor == nil {
		return 0
	}
	return float64(b.anchor.KSizePerToken()) * float64(b.anchor.PageSize()) / (1 << 30)
}

// KeyScheme returns the key scheme (nil before RegisterPool).
func (b *Backend) KeyScheme() *KeyScheme {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.scheme
}

// SplitFactor returns F when split heads are active, else 0.
func (b *Backend) SplitFactor() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.splitF
}

// RegisterPool registers the anchor host pool (SGLang
// register_mem_pool_host): it fixes the key scheme and, unless the pool has
// no buffer (logical anchor, dummy pool), registers every buffer from
// IterHostPoolBuffers with the store. A group registers its anchor's
// buffers only; use RegisterPoolGroup to register its side pools too.
func (b *Backend) RegisterPool(pool Pool) error {
	if isNilPool(pool) {
		return &ConfigError{What: "backend", Field: "pool", Reason: "nil pool"}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	if b.anchor != nil {
		return &ConfigError{What: "backend", Field: "pool", Reason: "a host pool is already registered"}
	}
	h := pool.host()
	switch h.kind {
	case KindMHA, KindAsymmetricMHA, KindKOnlyMHA:
		if b.opts.RankReplicated {
			return &ConfigError{What: "backend", Field: "rank replicated", Reason: fmt.Sprintf("rank-replicated (MLA) keys do not fit %s pool %s", h.kind, pool)}
		}
	case KindMLA, KindV4Paged, KindV4State:
		if !b.opts.RankReplicated && pool.HasBuffer() {
			return &ConfigError{What: "backend", Field: "rank replicated", Reason: fmt.Sprintf("%s pool %s needs Options.RankReplicated (SGLang is_mla_model)", h.kind, pool)}
		}
	}
	splitF := 0
	if b.opts.TPLCMSize > b.opts.TPSize && !b.opts.RankReplicated && pool.Layout() == PageHead {
		splitF = b.opts.TPLCMSize / b.opts.TPSize
		if _, err := h.splitPlan(splitF, new([2]component)); err != nil {
			return err
		}
	}
	kc := KeyConfig{TPRank: b.opts.TPRank, TPSize: b.opts.TPSize, PPRank: b.opts.PPRank, PPSize: b.opts.PPSize,
		RankReplicated: b.opts.RankReplicated, SplitFactor: splitF, ExtraBackendTag: b.opts.ExtraBackendTag, ModelName: b.opts.ModelName}
	if b.opts.LayoutFingerprint {
		kc.Fingerprint = pool.Fingerprint()
	}
	scheme, err := NewKeyScheme(kc)
	if err != nil {
		return err
	}
	if pool.HasBuffer() {
		if err := b.registerBuffersLocked(pool.String(), IterHostPoolBuffers(pool)); err != nil {
			return err
		}
	}
	b.anchor, b.scheme, b.splitF = pool, scheme, splitF
	return nil
}

// RegisterPoolV2 registers a side pool under name (SGLang
// register_mem_host_pool_v2): "kv" is a no-op; "draft" registers the pool's
// kv_buffer only; any other name registers IterHostPoolBuffers(pool). The
// pool name must have a key scheme for this pool (checked here, not at the
// first I/O).
func (b *Backend) RegisterPoolV2(name PoolName, pool Pool) error {
	if name == PoolKV {
		return nil
	}
	if isNilPool(pool) {
		return &PoolError{Name: name, Reason: "nil pool", Err: ErrInvalidConfig}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	if b.scheme == nil {
		return &PoolError{Name: name, Reason: "register the anchor pool (RegisterPool) first", Err: ErrNotRegistered}
	}
	if _, dup := b.pools[name]; dup {
		return &PoolError{Name: name, Reason: "already registered", Err: ErrInvalidConfig}
	}
	suffixes, rankLocal, err := b.scheme.v2Suffixes(name, pool)
	if err != nil {
		return err
	}
	if n, err := pool.EntriesPerPage(); err == nil {
		if n < len(suffixes) || n%len(suffixes) != 0 || (n > len(suffixes) && len(suffixes) != 1) {
			return &PoolError{Name: name, Reason: fmt.Sprintf("pool %s has %d buffers per page for %d keys per page; they cannot be grouped (use page_first or page_first_direct)", pool, n, len(suffixes)), Err: ErrUnsupportedLayout}
		}
	} else if pool.HasBuffer() {
		return fmt.Errorf("hostcache: register pool %q: %w", string(name), err)
	}
	var bufs []Buffer
	if name == PoolDraft {
		for _, x := range pool.KVBuffer() {
			if x.Size > 0 {
				bufs = append(bufs, x)
			}
		}
	} else {
		bufs = IterHostPoolBuffers(pool)
	}
	if err := b.registerBuffersLocked(fmt.Sprintf("%s:%s", string(name), pool), bufs); err != nil {
		return err
	}
	b.pools[name] = &sidePool{name: name, pool: pool, suffixes: suffixes, rankLocal: rankLocal}
	return nil
}

// RegisterPoolGroup registers a group's anchor with RegisterPool and each
// side pool with RegisterPoolV2.
func (b *Backend) RegisterPoolGroup(g *PoolGroup) error {
	if g == nil {
		return &ConfigError{What: "backend", Field: "group", Reason: "nil group"}
	}
	if err := b.RegisterPool(g); err != nil {
		return err
	}
	for _, e := range g.entries {
		if err := b.RegisterPoolV2(e.Name, e.Pool); err != nil {
			return err
		}
	}
	return nil
}

// registerBuffersLocked registers bufs, skipping buffers already covered by
// a registration (SGLang would get -600 for a duplicate), refusing partial
// overlaps, and rolling back this call's registrations on failure.
func (b *Backend) registerBuffersLocked(pool string, bufs []Buffer) error {
	var done []registration
	rollback := func() {
		for _, r := range done {
			_ = b.store.UnregisterBuffer(r.addr)
			b.removeReg(r.addr)
			memreg.Unmark(r.host)
		}
	}
	for _, buf := range bufs {
		if buf.Size == 0 || buf.Addr == 0 {
			continue
		}
		covered, overlap := b.coverage(buf.Addr, buf.Size)
		if covered {
			continue
		}
		if overlap != nil {
			rollback()
			return &RegisterError{Pool: pool, Buffer: buf.Name, Addr: buf.Addr, Size: buf.Size,
				Err: fmt.Errorf("%w: [%#x, +%d) of %s/%s", ErrOverlap, overlap.addr, overlap.size, overlap.pool, overlap.buf)}
		}
		if err := b.store.RegisterBuffer(buf.Addr, buf.Size); err != nil {
			rollback()
			return &RegisterError{Pool: pool, Buffer: buf.Name, Addr: buf.Addr, Size: buf.Size, Err: err}
		}
		r := registration{addr: buf.Addr, size: buf.Size, pool: pool, buf: buf.Name}
		if buf.Host != nil {
			if err := memreg.Mark(buf.Host); err != nil {
				_ = b.store.UnregisterBuffer(buf.Addr)
				rollback()
				return &RegisterError{Pool: pool, Buffer: buf.Name, Addr: buf.Addr, Size: buf.Size, Err: err}
			}
			r.host = buf.Host
		}
		done = append(done, r)
		b.insertReg(r)
	}
	return nil
}

// coverage reports whether [addr, addr+size) is already registered (inside
// one registration, or inside the union of adjacent registrations, as when
// an MHA pool's K and V halves are registered and its whole kv_buffer comes
// again as a draft pool), or else which registration it partially overlaps.
func (b *Backend) coverage(addr uintptr, size uint64) (covered bool, overlap *registration) {
	end := addr + uintptr(size)
	cur := addr // first byte not yet known to be covered
	for i := range b.regs {
		r := &b.regs[i]
		rEnd := r.addr + uintptr(r.size)
		if rEnd <= addr || r.addr >= end {
			continue
		}
		if r.addr > cur {
			return false, r // a gap before r: r overlaps only part of the range
		}
		if rEnd > cur {
			cur = rEnd
		}
		if cur >= end {
			return true, nil
		}
	}
	for i := range b.regs {
		r := &b.regs[i]
		if r.addr < end && addr < r.addr+uintptr(r.size) {
			return false, r
		}
	}
	return false, nil
}

func (b *Backend) insertReg(r registration) {
	i := sort.Search(len(b.regs), func(i int) bool { return b.regs[i].addr >= r.addr })
	b.regs = append(b.regs, registration{})
	copy(b.regs[i+1:], b.regs[i:])
	b.regs[i] = r
}

func (b *Backend) removeReg(addr uintptr) {
	for i := range b.regs {
		if b.regs[i].addr == addr {
			b.regs = append(b.regs[:i], b.regs[i+1:]...)
			return
		}
	}
}

// RegisteredBuffers returns the registered (address, size) ranges, sorted.
func (b *Backend) RegisteredBuffers() []Buffer {
	b.mu.RLock()
	defer b.mu.RUnlock()
	out := make([]Buffer, len(b.regs))
	for i, r := range b.regs {
		out[i] = Buffer{Name: r.pool + "/" + r.buf, Addr: r.addr, Size: r.size}
	}
	return out
}

// Close unregisters every buffer this backend registered. Further calls
// return ErrClosed. Close the pools (freeing their memory) afterwards.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	var errs []error
	for _, r := range b.regs {
		if err := b.store.UnregisterBuffer(r.addr); err != nil {
			errs = append(errs, &StoreError{Op: "UnregisterBuffer", Err: fmt.Errorf("%s/%s %#x: %w", r.pool, r.buf, r.addr, err)})
		}
		// The backend gives the buffer up either way (a closed store has
		// dropped it already); a failure is reported above.
		memreg.Unmark(r.host)
	}
	b.regs = nil
	return errors.Join(errs...)
}

// Clear removes every object from the store (SGLang clear(): remove_all()).
func (b *Backend) Clear() error {
	if _, err := b.store.RemoveAll(false); err != nil {
		return &StoreError{Op: "RemoveAll", Err: err}
	}
	return nil
}
