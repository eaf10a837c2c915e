package hostcache

import "fmt"

// MLAConfig describes an MLA host pool (SGLang MLATokenToKVPoolHost, memory_pool_host.py).
type MLAConfig struct {
	Layers int // L (target + packed draft layers)
	// LatentDim is C = kv_lora_rank + qk_rope_head_dim (576 for
	// DeepSeek-V3). page_first_kv_split uses it only for SizePerToken, as
	// SGLang's kv_cache_dim (its override_kv_cache_dim when the builder
	// passes one, e.g. the packed 656 under FP8 DSA); 0 there means
	// KVLoraRank + RopeDim.
	LatentDim int
	DType     DType // device store dtype (uint8 for FP8 DSA packed latents)
	PageSize  int
	Tokens    int // requested capacity (page_num = Tokens/P + 1)
	PageNum   int // page_num override
	Layout    Layout
	// Dummy builds a pool without memory (a non-source rank): kv_buffer is
	// None, nothing is registered and there is no page meta.
	Dummy bool

	// page_first_kv_split only.
	KVLoraRank   int   // Kw: K width (or the packed width under FP8 DSA)
	KDType       DType // K dtype; defaults to DType
	RopeDim      int   // R: V width
	FP8DSA       bool  // V is dead: allocated and registered, but no V meta entry
	IndexHeadDim int   // Di; 0 = no indexer buffers
	IndexDType   DType // index_k dtype; defaults to DType
	IndexLayers  int   // L_idx (physical indexer layers); defaults to Layers
	IndexScale   bool  // fp32 index_k_scale_buffer present

	Allocator Allocator
}

// NewMLAPool allocates an MLATokenToKVPoolHost. Layouts: layer_first
// kv_buffer [L,S,1,C] (L entries per page, one per layer), page_first
// [S,L,1,C] and page_first_direct [page_num,L,P,1,C] (1 entry per page),
// page_first_kv_split (K, V unless FP8 DSA, INDEX_K, SCALE: 1–4 entries per
// page). page_head is refused.
func NewMLAPool(cfg MLAConfig) (*HostPool, error) {
	what := fmt.Sprintf("mla(%s L=%d C=%d %v P=%d)", cfg.Layout, cfg.Layers, cfg.LatentDim, cfg.DType, cfg.PageSize)
	if err := positive(what, "layers", cfg.Layers); err != nil {
		return nil, err
	}
	if err := positive(what, "page size", cfg.PageSize); err != nil {
		return nil, err
	}
	if err := checkDType(what, "dtype", cfg.DType); err != nil {
		return nil, err
	}
	if !cfg.Layout.Valid() {
		return nil, &ConfigError{What: what, Field: "layout", Reason: fmt.Sprintf("invalid layout %v", cfg.Layout)}
	}
	pn, err := capacity(what, cfg.Tokens, cfg.PageNum, cfg.PageSize)
	if err != nil {
		return nil, err
	}
	L, P := cfg.Layers, cfg.PageSize
	S := pn * P
	b := newBuilder(KindMLA, cfg.Layout, cfg.DType, cfg.Allocator)
	p := b.p
	p.pageSize, p.size, p.pageNum = P, S, pn
	is := cfg.DType.Size()
	uL, uP, uS := uint64(L), uint64(P), uint64(S)
	d := dims{}

	if cfg.Layout == PageFirstKVSplit {
		return newMLAKVSplit(cfg, b, pn)
	}
	if err := positive(what, "latent dim", cfg.LatentDim); err != nil {
		return nil, err
	}
	C := cfg.LatentDim
	p.desc = fmt.Sprintf("mla(%s L=%d C=%d %v P=%d S=%d)", cfg.Layout, L, C, cfg.DType, P, S)
	d.what = p.desc
	var shape []int
	var order string
	switch cfg.Layout {
	case LayerFirst:
		shape, order = []int{L, S, 1, C}, "lpc"
	case PageFirst:
		shape, order = []int{S, L, 1, C}, "plc"
	case PageFirstDirect:
		shape, order = []int{pn, L, P, 1, C}, "lpc"
	default:
		return nil, &LayoutError{Pool: p.desc, Kind: KindMLA, Layout: cfg.Layout, Op: "construct"}
	}
	ce := d.mul(uint64(C), is)
	total := d.mul(uL, uS, ce)
	p.sizePerToken = d.mul(ce, uL)
	p.kSizePerToken = p.sizePerToken
	if d.err != nil {
		return nil, d.err
	}
	p.fp = fmt.Sprintf("mla-%s-%v-l%dc%d-p%d", order, cfg.DType, L, C, P)
	if cfg.Dummy {
		p.metaErr = fmt.Errorf("hostcache: %s is a dummy pool: %w", p.desc, ErrNoBuffer)
		return b.done(), nil
	}
	kv, err := b.allocBuf("kv", total, shape, cfg.DType)
	if err != nil {
		return nil, b.fail(err)
	}
	p.kv = []Buffer{kv}
	p.all = []Buffer{kv}
	if cfg.Layout == LayerFirst {
		p.plan = plan{comps: []component{{base: kv.Addr, pageStride: uP * ce, repStride: uS * ce, size: uP * ce}}, reps: L}
	} else {
		p.plan = plan{comps: []component{{base: kv.Addr, pageStride: uP * uL * ce, size: uP * uL * ce}}, reps: 1}
	}
	return b.done(), nil
}

func newMLAKVSplit(cfg MLAConfig, b *builder, pn int) (*HostPool, error) {
	p := b.p
	L, P, S := cfg.Layers, cfg.PageSize, p.size
	what := fmt.Sprintf("mla(%s L=%d Kw=%d R=%d %v P=%d S=%d)", cfg.Layout, L, cfg.KVLoraRank, cfg.RopeDim, cfg.DType, P, S)
	p.desc = what
	if err := positive(what, "kv lora rank", cfg.KVLoraRank); err != nil {
		return nil, err
	}
	if err := positive(what, "rope dim", cfg.RopeDim); err != nil {
		return nil, err
	}
	kdt := cfg.KDType
	if kdt == DTypeInvalid {
		kdt = cfg.DType
	}
	if err := checkDType(what, "k dtype", kdt); err != nil {
		return nil, err
	}
	idt := cfg.IndexDType
	if idt == DTypeInvalid {
		idt = cfg.DType
	}
	lidx := cfg.IndexLayers
	if lidx == 0 {
		lidx = L
	}
	hasIdx := cfg.IndexHeadDim > 0
	if cfg.IndexHeadDim < 0 || cfg.IndexLayers < 0 {
		return nil, &ConfigError{What: what, Field: "indexer", Reason: "negative index head dim or layers"}
	}
	if cfg.IndexScale && !hasIdx {
		return nil, &ConfigError{What: what, Field: "index scale", Reason: "needs an index head dim"}
	}
	if hasIdx {
		if err := checkDType(what, "index dtype", idt); err != nil {
			return nil, err
		}
		if err := positive(what, "index layers", lidx); err != nil {
			return nil, err
		}
	}
	Kw, R, Di := cfg.KVLoraRank, cfg.RopeDim, cfg.IndexHeadDim
	uL, uP, upn, uLi := uint64(L), uint64(P), uint64(pn), uint64(lidx)
	d := dims{what: what}
	kPage := d.mul(uL, uP, uint64(Kw), kdt.Size())
	vPage := d.mul(uL, uP, uint64(R), cfg.DType.Size())
	var iPage, sPage uint64
	if hasIdx {
		iPage = d.mul(uLi, uP, uint64(Di), idt.Size())
		if cfg.IndexScale {
			sPage = d.mul(uLi, uP, 4)
		}
	}
	kSize, vSize, iSize, sSize := d.mul(kPage, upn), d.mul(vPage, upn), d.mul(iPage, upn), d.mul(sPage, upn)
	// SGLang's get_size_per_token: kv_cache_dim (kv_lora_rank +
	// qk_rope_head_dim, or the override: LatentDim) in the store dtype per
	// layer, plus the indexer's head dim in the same dtype and 4 scale bytes
	// per indexer layer. What is allocated counts each buffer at its width.
	C := uint64(cfg.LatentDim)
	if C == 0 {
		C = uint64(Kw) + uint64(R)
	}
	is := cfg.DType.Size()
	p.sizePerToken = d.add(d.mul(C, is, uL), d.add(d.mul(uint64(Di), is, uLi), d.mul(uLi, 4, boolU(cfg.IndexScale))))
	p.kSizePerToken = p.sizePerToken
	p.allocPerToken = d.add(d.add(d.mul(uL, uint64(Kw), kdt.Size()), d.mul(uL, uint64(R), cfg.DType.Size())),
		d.add(d.mul(uLi, uint64(Di), idt.Size()), d.mul(uLi, 4, boolU(cfg.IndexScale))))
	if d.err != nil {
		return nil, d.err
	}
	p.fp = fmt.Sprintf("mla-kvsplit-%v%v-l%dk%dr%d-i%dx%d%s-v%d-p%d", kdt, cfg.DType, L, Kw, R, Di, lidx, map[bool]string{true: "s", false: ""}[cfg.IndexScale], boolU(!cfg.FP8DSA), P)
	if cfg.Dummy {
		p.metaErr = fmt.Errorf("hostcache: %s is a dummy pool: %w", p.desc, ErrNoBuffer)
		return b.done(), nil
	}
	k, err := b.allocBuf("k", kSize, []int{pn, L, P, 1, Kw}, kdt)
	if err != nil {
		return nil, b.fail(err)
	}
	v, err := b.allocBuf("v", vSize, []int{pn, L, P, 1, R}, cfg.DType)
	if err != nil {
		return nil, b.fail(err)
	}
	bufs := []Buffer{k, v}
	comps := []component{{base: k.Addr, pageStride: kPage, size: kPage}}
	if !cfg.FP8DSA {
		comps = append(comps, component{base: v.Addr, pageStride: vPage, size: vPage})
	}
	if hasIdx {
		ik, err := b.allocBuf("index_k", iSize, []int{pn, lidx, P, 1, Di}, idt)
		if err != nil {
			return nil, b.fail(err)
		}
		bufs = append(bufs, ik)
		comps = append(comps, component{base: ik.Addr, pageStride: iPage, size: iPage})
		if cfg.IndexScale {
			sc, err := b.allocBuf("index_k_scale", sSize, []int{pn, lidx, P, 1, 1}, FP32)
			if err != nil {
				return nil, b.fail(err)
			}
			bufs = append(bufs, sc)
			comps = append(comps, component{base: sc.Addr, pageStride: sPage, size: sPage})
		}
	}
	p.kv = []Buffer{k} // kv_buffer is k_buffer
	p.hybrid, p.hasHybrid = bufs, true
	p.all = bufs
	p.plan = plan{comps: comps, reps: 1}
	return b.done(), nil
}

func boolU(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
