// Package prefix answers the question a router asks of a Mooncake cluster
// that SGLang's HiCache fills: how many leading pages of this prompt are
// already stored? It is pure Go (no cgo in the key derivation) and needs
// only an Exister (*mooncake.Store satisfies it), so it runs on a store
// client that mounts no memory.
//
// # Page hashing
//
// Hasher follows SGLang's page hashing (get_hash_str in
// python/sglang/srt/mem_cache/utils.py over the compiled helper
// mem_cache/cpp_utils/hash_binding.cpp) in each of its modes: Plain token
// ids, EAGLE Bigram pairs, and optionally the wide pages of ids of 2^32 and
// more. Each page's SHA-256 chains the previous page's digest; the first
// page chains the prior (nil for none), so a router extends a cached prefix
// incrementally by passing the last hash it found. SGLang's refusals are
// typed errors: a prior that is not a 32-byte digest (ParsePrior,
// ErrInvalidDigest) and a token id out of range (AppendPagesInt64,
// ErrTokenRange).
//
// # Keys
//
// Scheme expands a page hash into the Mooncake object keys SGLang's
// Mooncake backend stores for it, with hostcache.KeyScheme's rules (tag and
// model prefix, TP and PP ranks, MHA or MLA, split heads, side pools), and
// ParseKey maps a key back to its page and component (for an index fed by
// the master's KV events).
//
// # Direct lookup
//
// Lookup makes one BatchIsExist call per request and counts pages with
// SGLang's batch_exists semantics: a page counts only if all of its keys
// exist, and counting stops at the first page that does not. docs/prefix.md
// has the measurements.
package prefix
