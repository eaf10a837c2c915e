package prefix

import (
	"fmt"

	"github.com/mooncake-go/mooncake-go/internal/pagehash"
)

// Mode is how SGLang turns a request's token ids into hashed units.
type Mode uint8

const (
	// Plain hashes each token id as a little-endian uint32.
	Plain Mode = iota
	// Bigram is EAGLE speculative decoding's radix key: the units are the
	// pairs (t[i], t[i+1]) (utils.convert_to_bigram_key, RadixKey with
	// is_bigram), each hashed as two uint32; n tokens make n-1 units, so a
	// page of P units reads P+1 tokens and the next page starts at the last
	// token of the one before.
	Bigram
)

func (m Mode) String() string {
	switch m {
	case Plain:
		return "plain"
	case Bigram:
		return "bigram"
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// HashConfig selects SGLang's page hashing for a deployment.
type HashConfig struct {
	// PageSize is the page size in units (SGLang --page-size), > 0.
	PageSize int
	// Mode: Plain or Bigram (a deployment with EAGLE speculative decoding).
	Mode Mode
	// WideTokens hashes a page holding an id of 2^32 or more as the byte
	// 0xff then its units as little-endian uint64 (the variant of SGLang's
	// hash_binding.cpp that accepts such ids) instead of refusing the id
	// with ErrTokenRange (the variant that checks every id with
	// "token id does not fit in uint32"). Pages of smaller ids hash the same
	// either way. Only AppendPagesInt64 can be given such ids.
	WideTokens bool
	// MemoPages, when positive, makes the hasher remember the digests of
	// recently hashed pages in a table of that many slots (rounded up to a
	// power of two), keyed by the page's whole hash input (its prior and its
	// ids, compared in full on every hit, so the digests are exactly
	// SHA-256's). Requests that share prefixes then hash each shared page
	// once: a hit costs a table probe instead of a SHA-256, a miss some
	// 40-160 ns more than the SHA-256 alone (docs/prefix.md, "The memo").
	// Memory: about 80 bytes plus 4 bytes a unit (8 with Bigram; twice that
	// with WideTokens) per slot, touched as slots fill.
	MemoPages int
}

// Hasher follows SGLang's page hashing in one mode. It is safe for
// concurrent use.
type Hasher struct {
	spec pagehash.Spec
	mode Mode
	memo int
}

// NewHasher validates cfg.
func NewHasher(cfg HashConfig) (*Hasher, error) {
	if cfg.PageSize <= 0 {
		return nil, &ConfigError{What: "hasher", Field: "page size", Reason: fmt.Sprintf("must be positive, got %d", cfg.PageSize)}
	}
	if cfg.Mode != Plain && cfg.Mode != Bigram {
		return nil, &ConfigError{What: "hasher", Field: "mode", Reason: cfg.Mode.String()}
	}
	if cfg.MemoPages < 0 {
		return nil, &ConfigError{What: "hasher", Field: "memo pages", Reason: fmt.Sprintf("must not be negative, got %d", cfg.MemoPages)}
	}
	spec := pagehash.Spec{PageSize: cfg.PageSize, Bigram: cfg.Mode == Bigram, Wide: cfg.WideTokens}
	if cfg.MemoPages > 0 {
		spec.Memo = pagehash.NewMemo(cfg.MemoPages, spec)
	}
	return &Hasher{spec: spec, mode: cfg.Mode, memo: cfg.MemoPages}, nil
}

// Config returns the configuration h was made with.
func (h *Hasher) Config() HashConfig {
	return HashConfig{PageSize: h.spec.PageSize, Mode: h.mode, WideTokens: h.spec.Wide, MemoPages: h.memo}
}

// MemoStats counts the hasher's memo: pages found in it, pages hashed, and
// pages it holds (all zero without a memo).
type MemoStats struct {
	Hits, Misses uint64
	Pages        int
}

// MemoStats returns the memo's counts so far.
func (h *Hasher) MemoStats() MemoStats {
	if h.spec.Memo == nil {
		return MemoStats{}
	}
	st := h.spec.Memo.Stats()
	return MemoStats{Hits: st.Hits, Misses: st.Misses, Pages: st.Pages}
}

// Pages returns the number of full pages n tokens make (a trailing partial
// page is never stored by HiCache, so it is not hashed).
func (h *Hasher) Pages(n int) int { return h.spec.Pages(n) }

// AppendPages hashes each full page of tokens, chaining from prior (nil =
// no prior: the first page of a request, or a chain SGLang starts at the
// root), and appends the digests to dst: no allocation when dst has room.
// A uint32 id is always in range, so the error is always nil; it is there
// so that the call reads like AppendPagesInt64.
func (h *Hasher) AppendPages(dst []Digest, prior *Digest, tokens []uint32) ([]Digest, error) {
	return pagehash.AppendUint32(dst, prior, tokens, h.spec), nil
}

// CheckInt64 refuses ids as AppendPagesInt64 does (a *TokenError for the
// first id below 0 or above the largest the hasher takes), without hashing.
func (h *Hasher) CheckInt64(tokens []int64) error {
	limit := h.spec.MaxToken()
	for i, t := range tokens {
		if t < 0 || uint64(t) > limit {
			return &TokenError{Index: i, Value: t, Max: limit}
		}
	}
	return nil
}

// AppendPagesInt64 is AppendPages for ids as a router receives them (JSON
// numbers, Python ints, SGLang's int64 arrays). As SGLang's helper does, it
// checks every id, the trailing partial page's too, and refuses the request
// with a *TokenError (ErrTokenRange) when one is negative or above 2^32-1
// (2^63-1 with WideTokens); dst is then returned unchanged.
func (h *Hasher) AppendPagesInt64(dst []Digest, prior *Digest, tokens []int64) ([]Digest, error) {
	out, bad := pagehash.AppendInt64(dst, prior, tokens, h.spec)
	if bad >= 0 {
		return dst, &TokenError{Index: bad, Value: tokens[bad], Max: h.spec.MaxToken()}
	}
	return out, nil
}
