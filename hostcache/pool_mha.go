package hostcache

import "fmt"

// MHAConfig describes an MHA host pool (SGLang MHATokenToKVPoolHost, memory_pool_host.py).
type MHAConfig struct {
	Layers   int   // L: host layers (target + packed draft layers)
	Heads    int   // H: KV heads per rank
	HeadDim  int   // D (Dk for the asymmetric pool)
	VHeadDim int   // Dv, asymmetric pool only
	DType    DType // device store dtype
	PageSize int   // P
	// Tokens is the requested capacity; page_num = Tokens/P + 1. PageNum,
	// when non-zero, sets page_num directly (side pools copy the anchor's).
	Tokens    int
	PageNum   int
	Layout    Layout
	Allocator Allocator // nil: an MmapAllocator with zero Options
}

func (c *MHAConfig) check(what string, needV bool) (int, error) {
	for _, f := range []struct {
		n string
		v int
	}{{"layers", c.Layers}, {"heads", c.Heads}, {"head dim", c.HeadDim}, {"page size", c.PageSize}} {
		if err := positive(what, f.n, f.v); err != nil {
			return 0, err
		}
	}
	if needV {
		if err := positive(what, "v head dim", c.VHeadDim); err != nil {
			return 0, err
		}
	}
	if err := checkDType(what, "dtype", c.DType); err != nil {
		return 0, err
	}
	if !c.Layout.Valid() {
		return 0, &ConfigError{What: what, Field: "layout", Reason: fmt.Sprintf("invalid layout %v", c.Layout)}
	}
	return capacity(what, c.Tokens, c.PageNum, c.PageSize)
}

// NewMHAPool allocates an MHATokenToKVPoolHost: one kv_buffer whose leading
// dimension is 2 (K then V). Layouts: layer_first [2,L,S,H,D], page_first
// [2,S,L,H,D], page_first_direct [2,page_num,L,P,H,D], page_head
// [2,page_num,H,P,L,D]. Page meta gives K then V per page (2 entries), or
// 2*L entries K(l0),V(l0),K(l1),... in layer_first.
func NewMHAPool(cfg MHAConfig) (*HostPool, error) {
	what := fmt.Sprintf("mha(%s L=%d H=%d D=%d %v P=%d)", cfg.Layout, cfg.Layers, cfg.Heads, cfg.HeadDim, cfg.DType, cfg.PageSize)
	pn, err := cfg.check(what, false)
	if err != nil {
		return nil, err
	}
	L, H, D, P := cfg.Layers, cfg.Heads, cfg.HeadDim, cfg.PageSize
	S := pn * P
	b := newBuilder(KindMHA, cfg.Layout, cfg.DType, cfg.Allocator)
	p := b.p
	p.pageSize, p.size, p.pageNum = P, S, pn
	p.desc = fmt.Sprintf("mha(%s L=%d H=%d D=%d %v P=%d S=%d)", cfg.Layout, L, H, D, cfg.DType, P, S)
	is := cfg.DType.Size()
	d := dims{what: p.desc}
	hd := d.mul(uint64(H), uint64(D), is) // token stride of one layer
	half := d.mul(uint64(L), uint64(S), hd)
	total := d.mul(2, half)
	p.sizePerToken = d.mul(hd, uint64(L), 2)
	p.kSizePerToken = p.sizePerToken / 2
	if d.err != nil {
		return nil, d.err
	}
	var shape, halfShape []int
	switch cfg.Layout {
	case LayerFirst:
		shape = []int{2, L, S, H, D}
	case PageFirst:
		shape = []int{2, S, L, H, D}
	case PageFirstDirect:
		shape = []int{2, pn, L, P, H, D}
	case PageHead:
		shape = []int{2, pn, H, P, L, D}
	default:
		return nil, &LayoutError{Pool: p.desc, Kind: KindMHA, Layout: cfg.Layout, Op: "construct"}
	}
	halfShape = shape[1:]
	kv, err := b.allocBuf("kv", total, shape, cfg.DType)
	if err != nil {
		return nil, b.fail(err)
	}
	k := view(kv, "k", 0, half, halfShape)
	v := view(kv, "v", half, half, halfShape)
	p.kv = []Buffer{kv}
	p.hybrid, p.hasHybrid = []Buffer{k, v}, true
	p.all = []Buffer{kv, k, v}
	p.hasV = true
	p.heads = H
	p.geometry = geometry{L: L, H: H, D: D, is: is, vOff: half, base: kv.Addr}
	uP, uL, uS := uint64(P), uint64(L), uint64(S)
	switch cfg.Layout {
	case LayerFirst:
		c := component{base: kv.Addr, pageStride: uP * hd, repStride: uS * hd, size: uP * hd}
		cv := c
		cv.base += uintptr(half)
		p.plan = plan{comps: []component{c, cv}, reps: L}
		p.fp = fmt.Sprintf("mha-lshd-%v-l%dh%dd%d-p%d", cfg.DType, L, H, D, P)
	default:
		c := component{base: kv.Addr, pageStride: uP * uL * hd, size: uP * uL * hd}
		cv := c
		cv.base += uintptr(half)
		p.plan = plan{comps: []component{c, cv}, reps: 1}
		order := map[Layout]string{PageFirst: "plhd", PageFirstDirect: "lphd", PageHead: "hpld"}[cfg.Layout]
		p.fp = fmt.Sprintf("mha-%s-%v-l%dh%dd%d-p%d", order, cfg.DType, L, H, D, P)
	}
	p.splitOK = cfg.Layout == PageHead
	return b.done(), nil
}

// NewAsymmetricMHAPool allocates an AsymmetricMHATokenToKVPoolHost (head_dim
// != v_head_dim): separate K [.., H, Dk] and V [.., H, Dv] tensors, page_first
// [S,L,H,D*] or page_first_direct [page_num,L,P,H,D*]; other layouts are
// refused. Meta: K then V per page.
func NewAsymmetricMHAPool(cfg MHAConfig) (*HostPool, error) {
	what := fmt.Sprintf("asymmetric_mha(%s L=%d H=%d Dk=%d Dv=%d %v P=%d)", cfg.Layout, cfg.Layers, cfg.Heads, cfg.HeadDim, cfg.VHeadDim, cfg.DType, cfg.PageSize)
	pn, err := cfg.check(what, true)
	if err != nil {
		return nil, err
	}
	L, H, Dk, Dv, P := cfg.Layers, cfg.Heads, cfg.HeadDim, cfg.VHeadDim, cfg.PageSize
	S := pn * P
	b := newBuilder(KindAsymmetricMHA, cfg.Layout, cfg.DType, cfg.Allocator)
	p := b.p
	p.pageSize, p.size, p.pageNum = P, S, pn
	p.desc = fmt.Sprintf("asymmetric_mha(%s L=%d H=%d Dk=%d Dv=%d %v P=%d S=%d)", cfg.Layout, L, H, Dk, Dv, cfg.DType, P, S)
	var kShape, vShape []int
	var order string
	switch cfg.Layout {
	case PageFirst:
		kShape, vShape, order = []int{S, L, H, Dk}, []int{S, L, H, Dv}, "plhd"
	case PageFirstDirect:
		kShape, vShape, order = []int{pn, L, P, H, Dk}, []int{pn, L, P, H, Dv}, "lphd"
	default:
		return nil, &LayoutError{Pool: p.desc, Kind: KindAsymmetricMHA, Layout: cfg.Layout, Op: "construct", Reason: "only page_first and page_first_direct"}
	}
	is := cfg.DType.Size()
	d := dims{what: p.desc}
	kPage := d.mul(uint64(L), uint64(P), uint64(H), uint64(Dk), is)
	vPage := d.mul(uint64(L), uint64(P), uint64(H), uint64(Dv), is)
	kSize := d.mul(kPage, uint64(pn))
	vSize := d.mul(vPage, uint64(pn))
	p.sizePerToken = d.mul(uint64(H), uint64(L), is, uint64(Dk+Dv))
	p.kSizePerToken = d.mul(uint64(H), uint64(L), is, uint64(Dk))
	if d.err != nil {
		return nil, d.err
	}
	k, err := b.allocBuf("k", kSize, kShape, cfg.DType)
	if err != nil {
		return nil, b.fail(err)
	}
	v, err := b.allocBuf("v", vSize, vShape, cfg.DType)
	if err != nil {
		return nil, b.fail(err)
	}
	p.kv = []Buffer{k, v}
	p.hybrid, p.hasHybrid = []Buffer{k, v}, true
	p.all = []Buffer{k, v}
	p.hasV = true
	p.plan = plan{comps: []component{
		{base: k.Addr, pageStride: kPage, size: kPage},
		{base: v.Addr, pageStride: vPage, size: vPage},
	}, reps: 1}
	p.fp = fmt.Sprintf("amha-%s-%v-l%dh%dk%dv%d-p%d", order, cfg.DType, L, H, Dk, Dv, P)
	return b.done(), nil
}

// NewKOnlyMHAPool allocates an MHATokenToKOnlyPoolHost (MiniMax sparse
// index-K side pool): one k_buffer, layer_first [L,S,H,D], page_first
// [S,L,H,D] or page_first_direct [page_num,L,P,H,D]. Page meta (one entry per
// page) exists for page_first and page_first_direct only. Set PageNum from
// the anchor pool.
func NewKOnlyMHAPool(cfg MHAConfig) (*HostPool, error) {
	what := fmt.Sprintf("k_only_mha(%s L=%d H=%d D=%d %v P=%d)", cfg.Layout, cfg.Layers, cfg.Heads, cfg.HeadDim, cfg.DType, cfg.PageSize)
	pn, err := cfg.check(what, false)
	if err != nil {
		return nil, err
	}
	L, H, D, P := cfg.Layers, cfg.Heads, cfg.HeadDim, cfg.PageSize
	S := pn * P
	b := newBuilder(KindKOnlyMHA, cfg.Layout, cfg.DType, cfg.Allocator)
	p := b.p
	p.pageSize, p.size, p.pageNum = P, S, pn
	p.desc = fmt.Sprintf("k_only_mha(%s L=%d H=%d D=%d %v P=%d S=%d)", cfg.Layout, L, H, D, cfg.DType, P, S)
	var shape []int
	var order string
	switch cfg.Layout {
	case LayerFirst:
		shape, order = []int{L, S, H, D}, "lshd"
	case PageFirst:
		shape, order = []int{S, L, H, D}, "plhd"
	case PageFirstDirect:
		shape, order = []int{pn, L, P, H, D}, "lphd"
	default:
		return nil, &LayoutError{Pool: p.desc, Kind: KindKOnlyMHA, Layout: cfg.Layout, Op: "construct"}
	}
	is := cfg.DType.Size()
	d := dims{what: p.desc}
	page := d.mul(uint64(L), uint64(P), uint64(H), uint64(D), is)
	size := d.mul(page, uint64(pn))
	p.sizePerToken = d.mul(uint64(H), uint64(D), uint64(L), is)
	p.kSizePerToken = p.sizePerToken
	if d.err != nil {
		return nil, d.err
	}
	k, err := b.allocBuf("k", size, shape, cfg.DType)
	if err != nil {
		return nil, b.fail(err)
	}
	p.kv = []Buffer{k}
	p.hybrid, p.hasHybrid = []Buffer{k}, true
	p.all = []Buffer{k}
	p.fp = fmt.Sprintf("konly-%s-%v-l%dh%dd%d-p%d", order, cfg.DType, L, H, D, P)
	if cfg.Layout == LayerFirst {
		p.metaErr = &LayoutError{Pool: p.desc, Kind: KindKOnlyMHA, Layout: LayerFirst, Op: "page meta", Reason: "only page_first and page_first_direct"}
	} else {
		p.plan = plan{comps: []component{{base: k.Addr, pageStride: page, size: page}}, reps: 1}
	}
	return b.done(), nil
}
