package hostcache

import "fmt"

// DSAIndexerConfig describes a DSA (NSA) indexer side pool (SGLang memory_pool_host.py).
// Page size, capacity and layout are copied from the anchor KV pool.
type DSAIndexerConfig struct {
	Layers         int // owned indexer layers (+ packed draft tails)
	IndexHeadDim   int // Di (128)
	QuantBlockSize int // one fp32 scale per block (128 ⇒ 128 + 4 = 132 bytes per token per layer)
	// BytesPerTokenPerLayer overrides Di + Di/QuantBlockSize*4 when non-zero.
	BytesPerTokenPerLayer int
	Dummy                 bool // allocator-only pool without memory
	Allocator             Allocator
}

// NewDSAIndexerPool allocates a DSAIndexerPoolHost next to anchor. Storage is
// uint8; page_stride = P * bytes-per-token-per-layer. Layouts: layer_first
// [L, n_pages, page_stride], page_first / page_first_direct
// [n_pages, L, 1, page_stride] with n_pages = (S+P+1)/P. Page meta (one
// entry of L*page_stride bytes per page) only for page_first(_direct).
func NewDSAIndexerPool(anchor Pool, cfg DSAIndexerConfig) (*HostPool, error) {
	if isNilPool(anchor) {
		return nil, &ConfigError{What: "dsa_indexer", Field: "anchor", Reason: "nil anchor pool"}
	}
	layout, P, S, pn := anchor.Layout(), anchor.PageSize(), anchor.Size(), anchor.PageNum()
	what := fmt.Sprintf("dsa_indexer(%s L=%d Di=%d P=%d S=%d)", layout, cfg.Layers, cfg.IndexHeadDim, P, S)
	if err := positive(what, "layers", cfg.Layers); err != nil {
		return nil, err
	}
	bpt := cfg.BytesPerTokenPerLayer
	if bpt == 0 {
		if err := positive(what, "index head dim", cfg.IndexHeadDim); err != nil {
			return nil, err
		}
		if err := positive(what, "quant block size", cfg.QuantBlockSize); err != nil {
			return nil, err
		}
		bpt = cfg.IndexHeadDim + cfg.IndexHeadDim/cfg.QuantBlockSize*4
	}
	if err := positive(what, "bytes per token per layer", bpt); err != nil {
		return nil, err
	}
	b := newBuilder(KindDSAIndexer, layout, Uint8, cfg.Allocator)
	p := b.p
	p.pageSize, p.size, p.pageNum = P, S, pn
	p.desc = fmt.Sprintf("dsa_indexer(%s L=%d bytes/token/layer=%d P=%d S=%d)", layout, cfg.Layers, bpt, P, S)
	d := dims{what: p.desc}
	L := cfg.Layers
	stride := d.mul(uint64(P), uint64(bpt))
	nPages := (S + P + 1) / P
	total := d.mul(uint64(nPages), uint64(L), stride)
	p.sizePerToken = d.mul(uint64(bpt), uint64(L))
	p.kSizePerToken = p.sizePerToken
	if d.err != nil {
		return nil, d.err
	}
	var shape []int
	switch layout {
	case LayerFirst:
		shape = []int{L, nPages, int(stride)}
	case PageFirst, PageFirstDirect:
		shape = []int{nPages, L, 1, int(stride)}
	default:
		return nil, &LayoutError{Pool: p.desc, Kind: KindDSAIndexer, Layout: layout, Op: "construct"}
	}
	p.fp = fmt.Sprintf("dsa-%s-l%db%d-p%d", map[bool]string{true: "ls", false: "lp"}[layout == LayerFirst], L, bpt, P)
	if cfg.Dummy {
		p.metaErr = fmt.Errorf("hostcache: %s is a dummy pool: %w", p.desc, ErrNoBuffer)
		return b.done(), nil
	}
	buf, err := b.allocBuf("index_k_with_scale", total, shape, Uint8)
	if err != nil {
		return nil, b.fail(err)
	}
	p.kv = []Buffer{buf}
	p.hybrid, p.hasHybrid = []Buffer{buf}, true
	p.all = []Buffer{buf}
	if layout == LayerFirst {
		p.metaErr = &LayoutError{Pool: p.desc, Kind: KindDSAIndexer, Layout: layout, Op: "page meta", Reason: "only page_first and page_first_direct"}
	} else {
		page := uint64(L) * stride
		p.plan = plan{comps: []component{{base: buf.Addr, pageStride: page, size: page}}, reps: 1}
	}
	return b.done(), nil
}

// MambaConfig describes a Mamba state side pool (SGLang memory_pool_host.py). Its page
// size is always 1 (one slot per request state).
type MambaConfig struct {
	Layers        int     // Lm: mamba layers
	TemporalShape []int   // per-layer SSM state shape; product 0 ⇒ no temporal state (conv-only)
	TemporalDType DType   // temporal dtype
	ConvShapes    [][]int // per-layer conv state shapes (one per conv state)
	ConvDType     DType
	Tokens        int // requested slots (page_num = Tokens + 1)
	PageNum       int // page_num override
	Layout        Layout
	Allocator     Allocator
}

func prod(what, field string, shape []int) (uint64, error) {
	n := uint64(1)
	for _, x := range shape {
		if x < 0 || int64(x) > 1<<31 {
			return 0, &ConfigError{What: what, Field: field, Reason: fmt.Sprintf("bad dimension %d", x)}
		}
		n *= uint64(x)
		if n > 1<<40 {
			return 0, &ConfigError{What: what, Field: field, Reason: "too large"}
		}
	}
	return n, nil
}

// NewMambaPool allocates a MambaPoolHost: temporal [S, Lm, 1, *shape] and one
// conv tensor [S, Lm, 1, *shape_j] per conv state, page_first or
// page_first_direct only. Meta per slot: temporal (omitted when its shape is
// empty) then conv_0, conv_1, ...
func NewMambaPool(cfg MambaConfig) (*HostPool, error) {
	what := fmt.Sprintf("mamba(%s Lm=%d)", cfg.Layout, cfg.Layers)
	if err := positive(what, "layers", cfg.Layers); err != nil {
		return nil, err
	}
	if !cfg.Layout.Valid() {
		return nil, &ConfigError{What: what, Field: "layout", Reason: fmt.Sprintf("invalid layout %v", cfg.Layout)}
	}
	if len(cfg.ConvShapes) == 0 {
		return nil, &ConfigError{What: what, Field: "conv shapes", Reason: "at least one conv state is required"}
	}
	et, err := prod(what, "temporal shape", cfg.TemporalShape)
	if err != nil {
		return nil, err
	}
	if len(cfg.TemporalShape) == 0 {
		et = 0
	}
	if et > 0 {
		if err := checkDType(what, "temporal dtype", cfg.TemporalDType); err != nil {
			return nil, err
		}
	}
	if err := checkDType(what, "conv dtype", cfg.ConvDType); err != nil {
		return nil, err
	}
	ecs := make([]uint64, len(cfg.ConvShapes))
	for j, sh := range cfg.ConvShapes {
		n, err := prod(what, fmt.Sprintf("conv shape %d", j), sh)
		if err != nil {
			return nil, err
		}
		if n == 0 || len(sh) == 0 {
			return nil, &ConfigError{What: what, Field: fmt.Sprintf("conv shape %d", j), Reason: "empty conv state"}
		}
		ecs[j] = n
	}
	pn, err := capacity(what, cfg.Tokens, cfg.PageNum, 1)
	if err != nil {
		return nil, err
	}
	b := newBuilder(KindMamba, cfg.Layout, cfg.ConvDType, cfg.Allocator)
	p := b.p
	p.pageSize, p.size, p.pageNum = 1, pn, pn
	p.desc = fmt.Sprintf("mamba(%s Lm=%d temporal=%v %v conv=%v %v S=%d)", cfg.Layout, cfg.Layers, cfg.TemporalShape, cfg.TemporalDType, cfg.ConvShapes, cfg.ConvDType, pn)
	if cfg.Layout != PageFirst && cfg.Layout != PageFirstDirect {
		return nil, &LayoutError{Pool: p.desc, Kind: KindMamba, Layout: cfg.Layout, Op: "construct", Reason: "only page_first and page_first_direct"}
	}
	d := dims{what: p.desc}
	Lm := uint64(cfg.Layers)
	tPage := d.mul(Lm, et, cfg.TemporalDType.Size())
	shape := func(s []int) []int { return append([]int{pn, cfg.Layers, 1}, s...) }
	t, err := b.allocBuf("temporal", d.mul(tPage, uint64(pn)), shape(cfg.TemporalShape), cfg.TemporalDType)
	if err != nil || d.err != nil {
		if err == nil {
			err = d.err
		}
		return nil, b.fail(err)
	}
	bufs := []Buffer{t}
	var comps []component
	if et > 0 {
		comps = append(comps, component{base: t.Addr, pageStride: tPage, size: tPage})
	}
	sizePerToken := tPage
	for j, ec := range ecs {
		cPage := d.mul(Lm, ec, cfg.ConvDType.Size())
		c, err := b.allocBuf(fmt.Sprintf("conv_%d", j), d.mul(cPage, uint64(pn)), shape(cfg.ConvShapes[j]), cfg.ConvDType)
		if err != nil || d.err != nil {
			if err == nil {
				err = d.err
			}
			return nil, b.fail(err)
		}
		bufs = append(bufs, c)
		comps = append(comps, component{base: c.Addr, pageStride: cPage, size: cPage})
		sizePerToken = d.add(sizePerToken, cPage)
	}
	if d.err != nil {
		return nil, b.fail(d.err)
	}
	p.sizePerToken, p.kSizePerToken = sizePerToken, sizePerToken
	nonEmpty := make([]Buffer, 0, len(bufs))
	for _, x := range bufs {
		if x.Size > 0 {
			nonEmpty = append(nonEmpty, x)
		}
	}
	p.kv = nonEmpty
	p.hybrid, p.hasHybrid = bufs, true
	p.all = bufs
	p.plan = plan{comps: comps, reps: 1}
	p.mambaT = et > 0
	p.mambaNC = len(ecs)
	p.fp = fmt.Sprintf("mamba-lm%d-t%d%v-c%d%v", cfg.Layers, et, cfg.TemporalDType, len(ecs), cfg.ConvDType)
	for _, ec := range ecs {
		p.fp += fmt.Sprintf("x%d", ec)
	}
	return b.done(), nil
}

// MambaComponents returns whether a Mamba pool has a temporal component and
// how many conv states it has (0, 0 for other kinds).
func (p *HostPool) MambaComponents() (temporal bool, conv int) { return p.mambaT, p.mambaNC }

// V4Config describes a DeepSeek V4 paged or state host pool (SGLang memory_pool_host.py).
type V4Config struct {
	Name      PoolName // e.g. deepseek_v4_c4 (a label; the backend uses its own name)
	Layers    int      // L = number of device buffers
	ItemBytes int      // bytes of one (page, layer) row (padded), or state_page_bytes
	NumPages  int      // N host pages
	PageSize  int      // slot page size P (swa_page_size for state pools)
	Layout    Layout
	Allocator Allocator
}

// NewV4PagedPool allocates a DeepSeekV4PagedHostPool: layer_first is L
// separate tensors [N, item_bytes] (L registrations, L entries per page),
// page_first one [N, L, item_bytes], page_first_direct [N, L, 1, item_bytes]
// (1 entry per page). Every layout stores a page as [L][item_bytes].
func NewV4PagedPool(cfg V4Config) (*HostPool, error) { return newV4(KindV4Paged, cfg) }

// NewV4StatePool allocates a DeepSeekV4StateHostPool (same layouts and meta as
// the paged pool; P is the SWA page size, ItemBytes the state page bytes).
func NewV4StatePool(cfg V4Config) (*HostPool, error) { return newV4(KindV4State, cfg) }

func newV4(kind Kind, cfg V4Config) (*HostPool, error) {
	what := fmt.Sprintf("%s(%s %s L=%d item=%d N=%d P=%d)", kind, cfg.Name, cfg.Layout, cfg.Layers, cfg.ItemBytes, cfg.NumPages, cfg.PageSize)
	for _, f := range []struct {
		n string
		v int
	}{{"layers", cfg.Layers}, {"item bytes", cfg.ItemBytes}, {"num pages", cfg.NumPages}, {"page size", cfg.PageSize}} {
		if err := positive(what, f.n, f.v); err != nil {
			return nil, err
		}
	}
	if !cfg.Layout.Valid() {
		return nil, &ConfigError{What: what, Field: "layout", Reason: fmt.Sprintf("invalid layout %v", cfg.Layout)}
	}
	L, item, N, P := cfg.Layers, cfg.ItemBytes, cfg.NumPages, cfg.PageSize
	b := newBuilder(kind, cfg.Layout, Uint8, cfg.Allocator)
	p := b.p
	d := dims{what: what}
	S := d.mul(uint64(N), uint64(P))
	if d.err != nil || S > 1<<40 {
		return nil, &ConfigError{What: what, Field: "capacity", Reason: "N*P too large"}
	}
	p.pageSize, p.size, p.pageNum = P, int(S), N
	p.rows = uint64(N)
	p.desc = what
	layerBytes := d.mul(uint64(N), uint64(item))
	// SGLang: size_per_token = get_ksize_per_token() = item_bytes
	// (state_page_bytes for state pools), one row, not per token.
	p.sizePerToken, p.kSizePerToken = uint64(item), uint64(item)
	p.allocPerToken = d.mul(uint64(L), uint64(item)) / uint64(P)
	if d.err != nil {
		return nil, d.err
	}
	p.fp = fmt.Sprintf("v4-li-l%di%d-p%d", L, item, P)
	switch cfg.Layout {
	case LayerFirst:
		comps := make([]component, L)
		bufs := make([]Buffer, L)
		for l := 0; l < L; l++ {
			buf, err := b.allocBuf(fmt.Sprintf("layer_%d", l), layerBytes, []int{N, item}, Uint8)
			if err != nil {
				return nil, b.fail(err)
			}
			bufs[l] = buf
			comps[l] = component{base: buf.Addr, pageStride: uint64(item), size: uint64(item)}
		}
		p.kv = bufs
		p.hybrid, p.hasHybrid = bufs, true
		p.all = bufs
		p.plan = plan{comps: comps, reps: 1}
	case PageFirst, PageFirstDirect:
		shape := []int{N, L, item}
		if cfg.Layout == PageFirstDirect {
			shape = []int{N, L, 1, item}
		}
		total := d.mul(layerBytes, uint64(L))
		if d.err != nil {
			return nil, d.err
		}
		buf, err := b.allocBuf("kv", total, shape, Uint8)
		if err != nil {
			return nil, b.fail(err)
		}
		page := uint64(L) * uint64(item)
		p.kv = []Buffer{buf}
		p.hybrid, p.hasHybrid = []Buffer{buf}, true
		p.all = []Buffer{buf}
		p.plan = plan{comps: []component{{base: buf.Addr, pageStride: page, size: page}}, reps: 1}
	default:
		return nil, &LayoutError{Pool: p.desc, Kind: kind, Layout: cfg.Layout, Op: "construct"}
	}
	return b.done(), nil
}

// LogicalConfig describes the DeepSeek V4 logical KV anchor.
type LogicalConfig struct {
	PageSize int
	Tokens   int
	PageNum  int
	Layout   Layout
}

// NewLogicalPool returns a LogicalHostPool: page-aligned token slots without
// any buffer (kv_buffer is None, page meta is ErrNoBuffer, ksize 0). Its data
// lives in the v2 side pools.
func NewLogicalPool(cfg LogicalConfig) (*HostPool, error) {
	what := fmt.Sprintf("logical(%s P=%d)", cfg.Layout, cfg.PageSize)
	if err := positive(what, "page size", cfg.PageSize); err != nil {
		return nil, err
	}
	if !cfg.Layout.Valid() {
		return nil, &ConfigError{What: what, Field: "layout", Reason: fmt.Sprintf("invalid layout %v", cfg.Layout)}
	}
	pn, err := capacity(what, cfg.Tokens, cfg.PageNum, cfg.PageSize)
	if err != nil {
		return nil, err
	}
	b := newBuilder(KindLogical, cfg.Layout, DTypeInvalid, nil)
	p := b.p
	p.pageSize, p.size, p.pageNum = cfg.PageSize, pn*cfg.PageSize, pn
	p.desc = fmt.Sprintf("logical(%s P=%d S=%d)", cfg.Layout, cfg.PageSize, p.size)
	p.fp = fmt.Sprintf("logical-p%d", cfg.PageSize)
	p.metaErr = fmt.Errorf("hostcache: %s owns no buffer (its data lives in v2 side pools): %w", p.desc, ErrNoBuffer)
	return b.done(), nil
}

// PoolEntry is a side pool of a PoolGroup.
type PoolEntry struct {
	Name PoolName
	Pool Pool
}

// PoolGroup is SGLang's HostPoolGroup: an anchor plus side pools. Layout,
// page size, capacity, kv_buffer and page meta delegate to the anchor; the
// side pools are registered through Backend.RegisterPoolV2 (or all at once
// with Backend.RegisterPoolGroup).
type PoolGroup struct {
	// The anchor answers every Pool method the group does not override
	// (the group's geometry, meta and buffers are the anchor's).
	anchorPool
	entries []PoolEntry
}

// anchorPool names the embedded anchor: unexported, so a group does not
// expose it as a field.
type anchorPool = Pool

// NewPoolGroup builds a group. The anchor must not itself be a group; side
// pool names must be unique and not "kv".
func NewPoolGroup(anchor Pool, entries ...PoolEntry) (*PoolGroup, error) {
	if isNilPool(anchor) {
		return nil, &ConfigError{What: "pool group", Field: "anchor", Reason: "nil anchor"}
	}
	if _, ok := anchor.(*PoolGroup); ok {
		return nil, &ConfigError{What: "pool group", Field: "anchor", Reason: "anchor is itself a group"}
	}
	seen := map[PoolName]bool{}
	for _, e := range entries {
		if isNilPool(e.Pool) {
			return nil, &ConfigError{What: "pool group", Field: string(e.Name), Reason: "nil pool"}
		}
		if _, ok := e.Pool.(*PoolGroup); ok {
			return nil, &ConfigError{What: "pool group", Field: string(e.Name), Reason: "nested group"}
		}
		if e.Name == PoolKV || e.Name == "" || seen[e.Name] {
			return nil, &ConfigError{What: "pool group", Field: string(e.Name), Reason: "side pool names must be unique, non-empty and not \"kv\""}
		}
		seen[e.Name] = true
	}
	return &PoolGroup{anchorPool: anchor, entries: append([]PoolEntry(nil), entries...)}, nil
}

// Anchor returns the anchor pool.
func (g *PoolGroup) Anchor() Pool { return g.anchorPool }

// Entries returns the side pools.
func (g *PoolGroup) Entries() []PoolEntry { return g.entries }

// Kind returns KindGroup.
func (g *PoolGroup) Kind() Kind { return KindGroup }

// HybridPoolBuffers: a group defines none (SGLang registers the anchor's
// kv_buffer for a group; see IterHostPoolBuffers).
func (g *PoolGroup) HybridPoolBuffers() ([]Buffer, bool) { return nil, false }

func (g *PoolGroup) String() string {
	s := "group(anchor=" + g.anchorPool.String()
	for _, e := range g.entries {
		s += ", " + string(e.Name) + "=" + e.Pool.String()
	}
	return s + ")"
}

// Close closes the anchor and every side pool.
func (g *PoolGroup) Close() error {
	var first error
	if err := g.anchorPool.Close(); err != nil {
		first = err
	}
	for _, e := range g.entries {
		if err := e.Pool.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// IterHostPoolBuffers returns the buffers to register for pool, in order:
// get_hybrid_pool_buffer() when the pool defines it, else kv_buffer (for a
// group: the anchor's buffers), skipping absent and empty (0-byte) buffers
// and any buffer inside one already listed, so the result never overlaps.
func IterHostPoolBuffers(pool Pool) []Buffer {
	if isNilPool(pool) {
		return nil
	}
	var src []Buffer
	if g, ok := pool.(*PoolGroup); ok {
		return IterHostPoolBuffers(g.anchorPool)
	}
	if h, ok := pool.HybridPoolBuffers(); ok {
		src = h
	} else {
		src = pool.KVBuffer()
	}
	out := make([]Buffer, 0, len(src))
outer:
	for _, b := range src {
		if b.Size == 0 || b.Addr == 0 {
			continue
		}
		for _, o := range out {
			if o.Contains(b.Addr, b.Size) {
				continue outer
			}
		}
		out = append(out, b)
	}
	return out
}
