// Package hostcache holds SGLang-compatible HiCache host KV pools in Go and
// stores and loads their pages in Mooncake exactly as SGLang's Mooncake
// storage backend does, including the layer-first layout where one page is
// one buffer per layer. It is pure Go (it builds and tests with
// CGO_ENABLED=0) and talks to Mooncake through the small Store interface,
// which *mooncake.Store satisfies.
//
// # Pools
//
// A pool owns host memory that is safe to register with Mooncake
// (page-aligned, never the Go heap), allocated through an Allocator
// (MmapAllocator over package hostmem by default; huge pages and mlock are
// options). A pool refuses to Close while a Backend still has its buffers
// registered. The kinds follow SGLang's host pools
// (python/sglang/srt/mem_cache/memory_pool_host.py): NewMHAPool (K and V in one [2,...] tensor),
// NewAsymmetricMHAPool, NewKOnlyMHAPool, NewMLAPool, NewDSAIndexerPool,
// NewMambaPool, NewV4PagedPool, NewV4StatePool, NewLogicalPool (an anchor with
// no buffer) and NewPoolGroup (an anchor plus side pools). The layouts are
// LayerFirst, PageFirst, PageFirstDirect, PageHead and PageFirstKVSplit; an
// unsupported kind × layout pair fails with a *LayoutError
// (errors.Is(err, ErrUnsupportedLayout)). Capacity follows SGLang:
// page_num = requested/P + 1 and S = page_num*P.
//
// Pool.AppendPageBufferMeta turns flat token indices into the (address,
// size) list of every page, page-major and component-minor: one entry per
// page for page_first MLA, K then V for MHA, one entry per layer for
// layer_first MLA, and so on. IterHostPoolBuffers lists the buffers to
// register. PackMultiBufferMeta groups a flat list under keys in CSR form
// (offsets instead of nested slices; the result is a hostmem.Buffers), with
// explicit errors for every edge case.
//
// # Keys
//
// KeyScheme builds SGLang's Mooncake keys (KeyScheme.Build packs them into a
// reused hostmem.Keys; V1Keys returns strings): "{hash}_{tp}_k"/"_v" for MHA,
// "{hash}__k" for MLA without pipeline parallelism ("{hash}_{pp}_k" with it),
// the split-heads ranks, the "{tag}_{model}_" prefix and the v2 side-pool
// suffixes ("__deepseek_v4_c4", "_{tp}_temporal", ...). PageHashes computes
// SGLang's chained page hashes. Options.LayoutFingerprint adds the pool's
// byte-order fingerprint to the prefix (off by default, for compatibility):
// MLA page_first and layer_first pages have the same size and key but a
// different byte order, and would otherwise be read as each other silently.
//
// # Backend
//
// Backend is SGLang's MooncakeStore
// (python/sglang/srt/mem_cache/storage/mooncake_store/mooncake_store.py):
// RegisterPool / RegisterPoolV2 register
// the pool buffers (never twice, never overlapping), BatchExists counts the
// leading stored pages, BatchExistsV2 applies the side pools' hit policies,
// BatchGetV1/BatchSetV1 move anchor pages (exists first, then one put of the
// missing objects only), and BatchGetV2/BatchSetV2 move side-pool pages.
// Pages with more buffers than keys (layer_first) are stored as multi-buffer
// objects; MHA K/V pages are never grouped, so MHA layer_first is refused
// with a clear error. Every store result count is checked. On a
// rank-replicated model (MLA, DeepSeek V4) only TP rank 0 writes objects
// whose keys carry no TP rank. LoadStoreConfig resolves the Mooncake client
// configuration with SGLang's precedence (extra_config, then the JSON file
// named by SGLANG_HICACHE_MOONCAKE_CONFIG_PATH, then MOONCAKE_* variables)
// and size syntax ("4gb").
//
// # Performance
//
// Preparing a batch (page meta, keys, packing) allocates nothing once the
// backend's scratch has grown: keys are built packed (hostmem.Keys, one byte
// buffer plus offsets) and cross the Store interface that way, so there is
// no string per key, and preparing the same page list again rewrites only
// the keys of pages that changed. Since those bytes are rewritten for the
// next batch, a Store copies whatever it keeps (strings handed to anyone are
// always copies).
//
// Package hostcachetest provides an in-memory FakeStore with Mooncake's
// semantics, test allocators, and RunEndToEnd, the suite that runs unchanged
// on the fake, the embedded engine and a live cluster.
package hostcache
