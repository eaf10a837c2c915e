package hostcache

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// Buffer is one physical tensor of a pool, or a named view of one (the K and
// V halves of an MHA kv_buffer).
type Buffer struct {
	Name  string // "kv", "k", "v", "index_k", "index_k_scale", "temporal", "conv_0", "layer_3", ...
	Addr  uintptr
	Size  uint64 // bytes; 0 for an empty tensor (e.g. Mamba temporal state of a conv-only model)
	Shape []int  // SGLang's tensor shape
	DType DType
	Mem   []byte          // the bytes (nil for layout-only pools)
	Host  *hostmem.Memory // the memory the buffer lies in, when its allocator says (see Region)
}

// End returns Addr + Size.
func (b Buffer) End() uintptr { return b.Addr + uintptr(b.Size) }

// Contains reports whether [addr, addr+size) lies inside the buffer.
func (b Buffer) Contains(addr uintptr, size uint64) bool {
	return addr >= b.Addr && size <= b.Size && uint64(addr-b.Addr) <= b.Size-size
}

// Pool is a host KV pool: a *HostPool or a *PoolGroup. The interface is
// sealed; use the New*Pool constructors.
type Pool interface {
	Kind() Kind
	Layout() Layout
	// PageSize is P, the number of token slots per page.
	PageSize() int
	// Size is S, the capacity in token slots (PageNum * PageSize).
	Size() int
	// PageNum is the number of host pages.
	PageNum() int
	// HasBuffer reports whether the pool owns memory (SGLang: kv_buffer is not
	// None). False for the logical anchor and dummy pools.
	HasBuffer() bool
	// KVBuffer is SGLang's kv_buffer: nil when absent, one buffer for
	// most pools, one per layer for a layer-first DeepSeek V4 pool.
	KVBuffer() []Buffer
	// HybridPoolBuffers is get_hybrid_pool_buffer() when the pool defines
	// it (ok == true); entries may have Size 0.
	HybridPoolBuffers() (bufs []Buffer, ok bool)
	// AppendPageBufferMeta appends the (address, size) entries of every page
	// of indices (flat token indices, len a multiple of P; the first index
	// of each page selects it) to addrs/sizes, page-major and
	// component-minor. On error the inputs are returned unchanged.
	AppendPageBufferMeta(addrs []uintptr, sizes []uint64, indices []int64) ([]uintptr, []uint64, error)
	// EntriesPerPage is the number of meta entries per page, or an error
	// when the layout has no page meta.
	EntriesPerPage() (int, error)
	// PageBytes is the number of bytes one page occupies (sum of its entries).
	PageBytes() uint64
	// SizePerToken is size_per_token; KSizePerToken is get_ksize_per_token.
	SizePerToken() uint64
	KSizePerToken() uint64
	// Fingerprint describes the byte order and geometry of one stored page,
	// e.g. "mla-lpc-bf16-l61-c576-p64" (see Options.LayoutFingerprint).
	Fingerprint() string
	String() string
	// Close frees the pool's memory. Unregister it from any store first.
	Close() error

	host() *HostPool
}

// PageBufferMeta returns the page buffer meta of indices as new slices
// (SGLang get_page_buffer_meta). Use AppendPageBufferMeta to reuse memory.
func PageBufferMeta(p Pool, indices []int64) ([]uintptr, []uint64, error) {
	if isNilPool(p) {
		return nil, nil, &ConfigError{What: "page buffer meta", Field: "pool", Reason: "nil pool"}
	}
	return p.AppendPageBufferMeta(nil, nil, indices)
}

// component is one strided run of a page: entry j of page row r is at
// base + r*pageStride + j*repStride and has size bytes.
type component struct {
	base       uintptr
	pageStride uint64
	repStride  uint64
	size       uint64
}

// plan describes how a page maps to meta entries: for each repetition j in
// [0, reps) (layers, or head groups), for each component, one entry.
type plan struct {
	comps []component
	reps  int
}

func (pl *plan) entries() int { return len(pl.comps) * pl.reps }

func (pl *plan) pageBytes() uint64 {
	var n uint64
	for _, c := range pl.comps {
		n += c.size
	}
	return n * uint64(pl.reps)
}

// HostPool is a host KV pool of one kind. Build it with NewMHAPool,
// NewAsymmetricMHAPool, NewKOnlyMHAPool, NewMLAPool, NewDSAIndexerPool,
// NewMambaPool, NewV4PagedPool, NewV4StatePool or NewLogicalPool.
//
// The address arithmetic is immutable after construction, so a HostPool is
// safe for concurrent AppendPageBufferMeta calls; Close must not race with
// them.
type HostPool struct {
	kind     Kind
	layout   Layout
	dtype    DType
	pageSize int // P, token slots per page
	size     int // S, token slots in all
	pageNum  int
	rows     uint64 // page rows addressable by indices: valid idx/P < rows
	desc     string
	fp       string

	alloc         Allocator
	regions       []Region
	kv            []Buffer
	hybrid        []Buffer
	hasHybrid     bool
	all           []Buffer // every buffer, for containment checks
	plan          plan
	metaErr       error
	splitOK       bool // MHA page_head: split-heads meta available
	heads         int
	sizePerToken  uint64
	kSizePerToken uint64
	allocPerToken uint64 // 0: sizePerToken (see AllocatedBytesPerToken)
	hasV          bool   // pool has a v_buffer (MHA kinds)
	mambaT        bool   // Mamba: temporal component present
	mambaNC       int    // Mamba: number of conv states
	closed        bool
	geometry      geometry
}

// geometry keeps the dimensions needed for split heads.
type geometry struct {
	L, H, D int
	is      uint64
	vOff    uint64
	base    uintptr
}

func (p *HostPool) host() *HostPool { return p }

// Kind returns the pool kind.
func (p *HostPool) Kind() Kind { return p.kind }

// Layout returns the pool layout.
func (p *HostPool) Layout() Layout { return p.layout }

// DType returns the main element type.
func (p *HostPool) DType() DType { return p.dtype }

// PageSize returns P.
func (p *HostPool) PageSize() int { return p.pageSize }

// Size returns S.
func (p *HostPool) Size() int { return p.size }

// PageNum returns the number of pages.
func (p *HostPool) PageNum() int { return p.pageNum }

// HasBuffer reports whether kv_buffer is present.
func (p *HostPool) HasBuffer() bool { return len(p.kv) > 0 }

// KVBuffer returns kv_buffer (see Pool).
func (p *HostPool) KVBuffer() []Buffer { return p.kv }

// HybridPoolBuffers returns get_hybrid_pool_buffer() (see Pool).
func (p *HostPool) HybridPoolBuffers() ([]Buffer, bool) { return p.hybrid, p.hasHybrid }

// Buffers returns every buffer of the pool (including views and empty ones).
func (p *HostPool) Buffers() []Buffer { return p.all }

// SizePerToken returns size_per_token.
func (p *HostPool) SizePerToken() uint64 { return p.sizePerToken }

// KSizePerToken returns get_ksize_per_token().
func (p *HostPool) KSizePerToken() uint64 { return p.kSizePerToken }

// AllocatedBytesPerToken is the bytes the pool's buffers hold per token. It
// equals SizePerToken except where SGLang's number is not the allocation:
// DeepSeek V4 paged and state pools (SGLang reports one (page, layer) row,
// item_bytes or state_page_bytes, as the per-token size; the allocation is
// layers*item/page_size per token), and page_first_kv_split (SGLang counts
// kv_lora_rank+qk_rope_head_dim, or its override, in the store dtype; the
// pool allocates the K and V buffers at their own widths and dtypes, V
// even when FP8 DSA leaves it dead).
func (p *HostPool) AllocatedBytesPerToken() uint64 {
	if p.allocPerToken != 0 {
		return p.allocPerToken
	}
	return p.sizePerToken
}

// Fingerprint returns the layout fingerprint (see Pool).
func (p *HostPool) Fingerprint() string { return p.fp }

func (p *HostPool) String() string { return p.desc }

// HasVBuffer reports whether the pool has a separate V component (MHA kinds).
func (p *HostPool) HasVBuffer() bool { return p.hasV }

// PageBytes returns the bytes per page (0 when there is no page meta).
func (p *HostPool) PageBytes() uint64 {
	if p.metaErr != nil {
		return 0
	}
	return p.plan.pageBytes()
}

// EntriesPerPage returns the number of meta entries per page.
func (p *HostPool) EntriesPerPage() (int, error) {
	if p.metaErr != nil {
		return 0, p.metaErr
	}
	return p.plan.entries(), nil
}

// Close frees the pool memory through its allocator. It is idempotent. It
// fails, freeing nothing, while a buffer is still registered with a store
// through a Backend (close the Backend first).
func (p *HostPool) Close() error {
	if p.closed {
		return nil
	}
	// A store may still transfer into registered memory: refuse before
	// freeing anything, so the pool stays whole and usable.
	for _, r := range p.regions {
		if n := r.Host.Registrations(); n > 0 {
			return fmt.Errorf("hostcache: close pool %s: region %#x (+%d) is still registered (close the Backend first): %w", p.desc, r.Addr, r.Size, hostmem.ErrRegistered)
		}
	}
	p.closed = true
	p.metaErr = fmt.Errorf("hostcache: pool %s is closed: %w", p.desc, ErrNoBuffer)
	var errs []error
	for _, r := range p.regions {
		if err := p.alloc.Free(r); err != nil {
			if !errors.Is(err, ErrAlloc) {
				err = fmt.Errorf("%w: free %#x: %w", ErrAlloc, r.Addr, err)
			}
			errs = append(errs, err)
		}
	}
	p.regions = nil
	return errors.Join(errs...)
}

// AppendPageBufferMeta implements Pool.
func (p *HostPool) AppendPageBufferMeta(addrs []uintptr, sizes []uint64, indices []int64) ([]uintptr, []uint64, error) {
	if p.metaErr != nil {
		return addrs, sizes, p.metaErr
	}
	return p.appendMeta(&p.plan, addrs, sizes, indices)
}

// SplitHeadsPageBufferMeta is get_split_heads_page_buffer_meta(indices, F):
// MHA page_head only; each page yields 2*F entries k(h0), v(h0), k(h1), ...
// of L*P*H*D*is/F bytes.
func (p *HostPool) SplitHeadsPageBufferMeta(addrs []uintptr, sizes []uint64, indices []int64, factor int) ([]uintptr, []uint64, error) {
	var comps [2]component
	pl, err := p.splitPlan(factor, &comps)
	if err != nil {
		return addrs, sizes, err
	}
	return p.appendMeta(&pl, addrs, sizes, indices)
}

func (p *HostPool) splitPlan(factor int, comps *[2]component) (plan, error) {
	if p.metaErr != nil {
		return plan{}, p.metaErr
	}
	if !p.splitOK {
		return plan{}, &LayoutError{Pool: p.desc, Kind: p.kind, Layout: p.layout, Op: "split-heads meta", Reason: "split heads needs an MHA page_head pool"}
	}
	g := p.geometry
	if factor <= 0 || g.H%factor != 0 {
		return plan{}, &ConfigError{What: p.desc, Field: "split factor", Reason: fmt.Sprintf("%d does not divide %d heads", factor, g.H)}
	}
	P, L, D := uint64(p.pageSize), uint64(g.L), uint64(g.D)
	page := P * uint64(g.H) * L * D * g.is
	comps[0] = component{base: g.base, pageStride: page, repStride: uint64(g.H/factor) * P * L * D * g.is, size: page / uint64(factor)}
	comps[1] = comps[0]
	comps[1].base += uintptr(g.vOff)
	return plan{comps: comps[:], reps: factor}, nil
}

func (p *HostPool) indexErr(page int, idx int64, reason string) error {
	return &IndexError{Pool: p.desc, Page: page, Index: idx, Reason: reason}
}

func (p *HostPool) appendMeta(pl *plan, addrs []uintptr, sizes []uint64, indices []int64) ([]uintptr, []uint64, error) {
	P := p.pageSize
	n := len(indices)
	if n == 0 {
		return addrs, sizes, &IndexError{Pool: p.desc, Page: -1, Reason: "no host indices"}
	}
	if n%P != 0 {
		return addrs, sizes, &IndexError{Pool: p.desc, Page: -1, Count: n, Reason: fmt.Sprintf("%d host indices is not a multiple of the page size %d", n, P)}
	}
	pages := n / P
	per := pl.entries()
	if per == 0 || pages > math.MaxInt/per {
		return addrs, sizes, &IndexError{Pool: p.desc, Page: -1, Count: n, Reason: "too many pages"}
	}
	na, ns := len(addrs), len(sizes)
	need := pages * per
	outA := slices.Grow(addrs, need)[:na+need]
	outS := slices.Grow(sizes, need)[:ns+need]
	// On error the inputs are returned unchanged (the grown tail is scratch).
	if bad := fillMeta(pl, outA[na:], outS[ns:], indices, P, p.rows); bad >= 0 {
		return addrs, sizes, p.badIndex(bad, indices[bad*P])
	}
	return outA, outS, nil
}

// fillMeta writes the meta entries of every page of indices into a and s
// (each exactly pages*entries long). It returns the number of the first page
// whose first index is negative, not a multiple of P or outside the pool,
// or -1. Specialised loops cover the hot shapes: one component repeated per
// layer (MLA) and two components once (MHA K and V).
func fillMeta(pl *plan, a []uintptr, s []uint64, indices []int64, P int, rows uint64) int {
	comps, reps := pl.comps, pl.reps
	uP := uint64(P)
	limit := rows * uP
	if uP&(uP-1) == 0 {
		shift := uint(bits.TrailingZeros64(uP)) & 63
		mask := uP - 1
		switch {
		case len(comps) == 1 && reps == 1:
			c := comps[0]
			for i, off := 0, 0; off < len(indices); i, off = i+1, off+P {
				u := uint64(indices[off])
				if u >= limit || u&mask != 0 {
					return i
				}
				a[i] = c.base + uintptr((u>>shift)*c.pageStride)
				s[i] = c.size
			}
			return -1
		case len(comps) == 1:
			c := comps[0]
			k := 0
			for off := 0; off < len(indices); off += P {
				u := uint64(indices[off])
				if u >= limit || u&mask != 0 {
					return off / P
				}
				ptr := c.base + uintptr((u>>shift)*c.pageStride)
				e := a[k : k+reps]
				es := s[k : k+reps]
				for j := range e {
					e[j] = ptr
					es[j] = c.size
					ptr += uintptr(c.repStride)
				}
				k += reps
			}
			return -1
		case len(comps) == 2 && reps == 1:
			c0, c1 := comps[0], comps[1]
			k := 0
			for off := 0; off < len(indices); off += P {
				u := uint64(indices[off])
				if u >= limit || u&mask != 0 {
					return off / P
				}
				row := u >> shift
				e := a[k : k+2]
				es := s[k : k+2]
				e[0] = c0.base + uintptr(row*c0.pageStride)
				e[1] = c1.base + uintptr(row*c1.pageStride)
				es[0] = c0.size
				es[1] = c1.size
				k += 2
			}
			return -1
		}
	}
	k := 0
	for off := 0; off < len(indices); off += P {
		u := uint64(indices[off])
		row := u / uP
		if u >= limit || row*uP != u {
			return off / P
		}
		for j := 0; j < reps; j++ {
			jo := uint64(j)
			for ci := range comps {
				c := &comps[ci]
				a[k] = c.base + uintptr(row*c.pageStride+jo*c.repStride)
				s[k] = c.size
				k++
			}
		}
	}
	return -1
}

func (p *HostPool) badIndex(pg int, idx int64) error {
	if idx < 0 || idx%int64(p.pageSize) != 0 {
		return p.indexErr(pg, idx, fmt.Sprintf("first index of a page must be a non-negative multiple of the page size %d", p.pageSize))
	}
	return p.indexErr(pg, idx, fmt.Sprintf("page is outside the pool (%d token slots)", p.rows*uint64(p.pageSize)))
}

// ---------------------------------------------------------------------------
// Sizing

// HostReserveBytes is the host memory SGLang keeps free (10 GiB) when it
// sizes a host pool.
const HostReserveBytes = 10 << 30

// PageCount returns SGLang's page_num for a requested number of tokens:
// floor(requested/P) + 1 (one page more than needed, even when divisible).
// It saturates at math.MaxInt instead of wrapping.
func PageCount(requestedTokens, pageSize int) int {
	if pageSize <= 0 || requestedTokens < 0 {
		return 0
	}
	n := requestedTokens / pageSize
	if n == math.MaxInt {
		return n
	}
	return n + 1
}

// RequestedTokensFromHostSize is floor(hostSizeGB*1e9 / sizePerToken) with
// Python float floor-division semantics (--hicache-size, decimal GB). A size
// that is not a positive finite number gives 0 (Python would raise); the
// result saturates at math.MaxInt.
func RequestedTokensFromHostSize(hostSizeGB float64, sizePerToken uint64) int {
	if sizePerToken == 0 || !(hostSizeGB > 0) || math.IsInf(hostSizeGB, 1) {
		return 0
	}
	x := hostSizeGB * 1e9
	if math.IsInf(x, 1) {
		return math.MaxInt
	}
	q := pyFloorDiv(x, float64(sizePerToken))
	if q >= float64(math.MaxInt) {
		return math.MaxInt
	}
	return int(q)
}

// RequestedTokensFromRatio is int(deviceSize * ratio) (--hicache-ratio).
func RequestedTokensFromRatio(deviceSize int, ratio float64) int {
	v := float64(deviceSize) * ratio
	if !(v > 0) {
		return 0
	}
	if v >= float64(math.MaxInt) {
		return math.MaxInt
	}
	return int(v)
}

// pyFloorDiv mirrors CPython's float floor division.
func pyFloorDiv(vx, wx float64) float64 {
	mod := math.Mod(vx, wx)
	div := (vx - mod) / wx
	if mod != 0 && (wx < 0) != (mod < 0) {
		div -= 1
	}
	if div != 0 {
		fl := math.Floor(div)
		if div-fl > 0.5 {
			fl += 1
		}
		return fl
	}
	return math.Copysign(0, vx/wx)
}

// CheckHostBudget returns an error when requested bytes do not fit in
// available minus HostReserveBytes (SGLang's host memory check).
func CheckHostBudget(requested, available uint64) error {
	budget := uint64(0)
	if available > HostReserveBytes {
		budget = available - HostReserveBytes
	}
	if requested > budget {
		return &ConfigError{What: "host memory", Reason: fmt.Sprintf("requesting %.2f GB but only %.2f GB is available after the %d GiB reserve", float64(requested)/1e9, float64(budget)/1e9, HostReserveBytes>>30)}
	}
	return nil
}

// ---------------------------------------------------------------------------
// Construction helpers

// dims multiplies positive dimensions with overflow checking.
type dims struct {
	err  error
	what string
}

func (d *dims) mul(xs ...uint64) uint64 {
	r := uint64(1)
	for _, x := range xs {
		hi, lo := bits.Mul64(r, x)
		if hi != 0 || lo > 1<<62 {
			if d.err == nil {
				d.err = &ConfigError{What: d.what, Reason: "size overflows"}
			}
			return 0
		}
		r = lo
	}
	return r
}

func (d *dims) add(a, b uint64) uint64 {
	s := a + b
	if s < a || s > 1<<62 {
		if d.err == nil {
			d.err = &ConfigError{What: d.what, Reason: "size overflows"}
		}
		return 0
	}
	return s
}

// MaxLayers and MaxHeads bound a pool's layers and heads: models have a few
// hundred layers at most, and a pool of 2^31 layers would build, then ask
// for tens of GiB of page meta for one page.
const (
	MaxLayers = 1 << 12
	MaxHeads  = 1 << 12
)

// fieldLimits are the bounds of fields tighter than positive's 2^31.
var fieldLimits = map[string]int{"layers": MaxLayers, "heads": MaxHeads}

func positive(what, field string, v int) error {
	if v <= 0 {
		return &ConfigError{What: what, Field: field, Reason: fmt.Sprintf("must be positive, got %d", v)}
	}
	if m, ok := fieldLimits[field]; ok && v > m {
		return &ConfigError{What: what, Field: field, Reason: fmt.Sprintf("%d is more than %d", v, m)}
	}
	if int64(v) > 1<<31 {
		return &ConfigError{What: what, Field: field, Reason: fmt.Sprintf("too large: %d", v)}
	}
	return nil
}

func checkDType(what, field string, d DType) error {
	if !d.Valid() {
		return &ConfigError{What: what, Field: field, Reason: fmt.Sprintf("invalid dtype %v", d)}
	}
	return nil
}

// capacity resolves page_num from (tokens, pageNum override).
func capacity(what string, tokens, pageNum, P int) (int, error) {
	if pageNum < 0 || tokens < 0 {
		return 0, &ConfigError{What: what, Field: "capacity", Reason: "tokens and page_num must not be negative"}
	}
	pn := pageNum
	if pn == 0 {
		pn = PageCount(tokens, P)
	}
	if pn <= 0 || int64(pn) > (1<<40)/int64(P) {
		return 0, &ConfigError{What: what, Field: "capacity", Reason: fmt.Sprintf("page_num %d out of range", pn)}
	}
	return pn, nil
}

// builder accumulates allocations for one pool and frees them on failure.
type builder struct {
	p *HostPool
}

func newBuilder(kind Kind, layout Layout, dt DType, alloc Allocator) *builder {
	if alloc == nil {
		alloc = defaultAllocator
	}
	return &builder{p: &HostPool{kind: kind, layout: layout, dtype: dt, alloc: alloc}}
}

// allocBuf allocates one tensor; a zero size yields an empty buffer.
func (b *builder) allocBuf(name string, size uint64, shape []int, dt DType) (Buffer, error) {
	buf := Buffer{Name: name, Size: size, Shape: shape, DType: dt}
	if size == 0 {
		return buf, nil
	}
	r, err := b.p.alloc.Alloc(size)
	if err != nil {
		// A caller's allocator fails with its own error: it is wrapped in
		// ErrAlloc too, as for MmapAllocator (unless it already is).
		if errors.Is(err, ErrAlloc) {
			return buf, fmt.Errorf("hostcache: allocate %s (%d bytes) for %s: %w", name, size, b.p.desc, err)
		}
		return buf, fmt.Errorf("hostcache: allocate %s (%d bytes) for %s: %w: %w", name, size, b.p.desc, ErrAlloc, err)
	}
	b.p.regions = append(b.p.regions, r)
	if r.Size < size || r.Addr == 0 || r.Addr+uintptr(size) < r.Addr || (r.Mem != nil && uint64(len(r.Mem)) < size) {
		return buf, &ConfigError{What: b.p.desc, Field: name, Reason: fmt.Sprintf("allocator returned an unusable region [%#x, +%d) for %d bytes", r.Addr, r.Size, size)}
	}
	buf.Addr = r.Addr
	buf.Host = r.Host
	if r.Mem != nil {
		buf.Mem = r.Mem[:size:size]
	}
	return buf, nil
}

func (b *builder) fail(err error) error {
	for _, r := range b.p.regions {
		_ = b.p.alloc.Free(r)
	}
	b.p.regions = nil
	return err
}

func (b *builder) done() *HostPool {
	p := b.p
	if p.rows == 0 {
		p.rows = uint64(p.pageNum)
	}
	return p
}

func view(parent Buffer, name string, off, size uint64, shape []int) Buffer {
	v := Buffer{Name: name, Addr: parent.Addr + uintptr(off), Size: size, Shape: shape, DType: parent.DType, Host: parent.Host}
	if parent.Mem != nil {
		v.Mem = parent.Mem[off : off+size : off+size]
	}
	return v
}
