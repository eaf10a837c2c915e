package hostcache

import (
	"fmt"
	"strings"
)

// DType is the element type of a host pool tensor. Only its size matters for
// addresses; the name is used in messages and layout fingerprints.
type DType uint8

// Element types. The zero value is invalid so that an unset field is caught.
const (
	DTypeInvalid DType = iota
	BF16
	FP16
	FP8 // float8 (e4m3 or e5m2; same size)
	Int8
	Uint8
	FP32
)

var dtypeNames = [...]string{"invalid", "bf16", "fp16", "fp8", "int8", "uint8", "fp32"}
var dtypeSizes = [...]uint64{0, 2, 2, 1, 1, 1, 4}

// Size returns the number of bytes per element (0 for an invalid DType).
func (d DType) Size() uint64 {
	if int(d) >= len(dtypeSizes) {
		return 0
	}
	return dtypeSizes[d]
}

// Valid reports whether d is one of the defined element types.
func (d DType) Valid() bool { return d != DTypeInvalid && int(d) < len(dtypeNames) }

func (d DType) String() string {
	if int(d) >= len(dtypeNames) {
		return fmt.Sprintf("dtype(%d)", uint8(d))
	}
	return dtypeNames[d]
}

// ParseDType accepts the names used by String plus the common torch spellings
// ("bfloat16", "float16", "float8_e4m3fn", "float32", ...).
func ParseDType(s string) (DType, error) {
	switch strings.ToLower(strings.TrimPrefix(strings.TrimSpace(s), "torch.")) {
	case "bf16", "bfloat16":
		return BF16, nil
	case "fp16", "float16", "half":
		return FP16, nil
	case "fp8", "float8", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz":
		return FP8, nil
	case "int8":
		return Int8, nil
	case "uint8":
		return Uint8, nil
	case "fp32", "float32", "float":
		return FP32, nil
	}
	return DTypeInvalid, &ConfigError{What: "dtype", Reason: fmt.Sprintf("unknown dtype %q", s)}
}

// Layout is a host pool memory layout (SGLang --hicache-mem-layout).
type Layout uint8

// Host pool layouts. The zero value is invalid.
const (
	LayoutInvalid Layout = iota
	// LayerFirst: one region per layer, page data of layer l at l*S*... ([L, S, ...]).
	LayerFirst
	// PageFirst: token-major ([S, L, ...]); a page is contiguous, ordered [P][L][...].
	PageFirst
	// PageFirstDirect: page-major then layer-major ([page_num, L, P, ...]); a page
	// is contiguous, ordered [L][P][...].
	PageFirstDirect
	// PageHead: page-major then head-major ([page_num, H, P, L, D]); MHA only.
	PageHead
	// PageFirstKVSplit: MLA on Ascend/NPU: separate K (latent), V (rope) and
	// optional indexer tensors, each [page_num, L, P, 1, width].
	PageFirstKVSplit
)

var layoutNames = [...]string{"invalid", "layer_first", "page_first", "page_first_direct", "page_head", "page_first_kv_split"}

// AllLayouts returns every valid layout in declaration order (a new slice).
func AllLayouts() []Layout {
	return []Layout{LayerFirst, PageFirst, PageFirstDirect, PageHead, PageFirstKVSplit}
}

func (l Layout) String() string {
	if int(l) >= len(layoutNames) {
		return fmt.Sprintf("layout(%d)", uint8(l))
	}
	return layoutNames[l]
}

// Valid reports whether l is one of the defined layouts.
func (l Layout) Valid() bool { return l != LayoutInvalid && int(l) < len(layoutNames) }

// ParseLayout parses SGLang's layout names ("layer_first", "page_first", ...).
func ParseLayout(s string) (Layout, error) {
	for i, n := range layoutNames {
		if i > 0 && n == s {
			return Layout(i), nil
		}
	}
	return LayoutInvalid, &ConfigError{What: "layout", Reason: fmt.Sprintf("unknown layout %q (want one of layer_first, page_first, page_first_direct, page_head, page_first_kv_split)", s)}
}

// Kind is the kind of host pool.
type Kind uint8

// Pool kinds (SGLang memory_pool_host.py).
const (
	KindInvalid       Kind = iota
	KindMHA                // MHATokenToKVPoolHost: K and V in one [2, ...] tensor
	KindAsymmetricMHA      // AsymmetricMHATokenToKVPoolHost: separate K and V tensors, Dk != Dv
	KindKOnlyMHA           // MHATokenToKOnlyPoolHost: K only (sparse index-K side pool)
	KindMLA                // MLATokenToKVPoolHost: one latent per token per layer
	KindDSAIndexer         // DSAIndexerPoolHost: packed index keys + scales
	KindMamba              // MambaPoolHost: temporal + conv states, page size 1
	KindV4Paged            // DeepSeekV4PagedHostPool
	KindV4State            // DeepSeekV4StateHostPool
	KindLogical            // LogicalHostPool: slot manager without a buffer
	KindGroup              // HostPoolGroup: an anchor plus side pools
)

var kindNames = [...]string{"invalid", "mha", "asymmetric_mha", "k_only_mha", "mla", "dsa_indexer", "mamba", "deepseek_v4_paged", "deepseek_v4_state", "logical", "group"}

func (k Kind) String() string {
	if int(k) >= len(kindNames) {
		return fmt.Sprintf("kind(%d)", uint8(k))
	}
	return kindNames[k]
}

// PoolName names a HiCache pool (SGLang PoolName); its string value is used
// in v2 keys.
type PoolName string

// Pool names (hicache_storage.py PoolName).
const (
	PoolKV                       PoolName = "kv"
	PoolMamba                    PoolName = "mamba"
	PoolSWA                      PoolName = "swa"
	PoolIndexer                  PoolName = "indexer"
	PoolDeepSeekV4C4             PoolName = "deepseek_v4_c4"
	PoolDeepSeekV4C4Indexer      PoolName = "deepseek_v4_c4_indexer"
	PoolDeepSeekV4C128           PoolName = "deepseek_v4_c128"
	PoolDeepSeekV4C4State        PoolName = "deepseek_v4_c4_state"
	PoolDeepSeekV4C4IndexerState PoolName = "deepseek_v4_c4_indexer_state"
	PoolDeepSeekV4C128State      PoolName = "deepseek_v4_c128_state"
	PoolDeepSeekV4C4IndexerScale PoolName = "deepseek_v4_c4_indexer_scale"
	PoolDraft                    PoolName = "draft"
	PoolDraftIndexer             PoolName = "draft_indexer"
	PoolDraftSWA                 PoolName = "draft_swa"
)

// HitPolicy decides how a side pool's existing pages limit a prefix hit.
type HitPolicy uint8

const (
	// AllPages: every page of the prefix must exist in the pool.
	AllPages HitPolicy = iota
	// TrailingPages: only the last len(PoolTransfer.Keys) pages (at least 1)
	// before the stop point must exist (sliding-window or state pools).
	TrailingPages
)

func (h HitPolicy) String() string {
	switch h {
	case AllPages:
		return "all_pages"
	case TrailingPages:
		return "trailing_pages"
	}
	return fmt.Sprintf("hit_policy(%d)", uint8(h))
}
