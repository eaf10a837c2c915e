package hostcache

import (
	"encoding/hex"
	"fmt"

	"github.com/mooncake-go/mooncake-go/internal/pagehash"
)

// PageHashes returns SGLang's page hashes (get_hash_str, mem_cache/utils.py),
// the logical keys of the storage backend: for each full page i of tokens,
// h_i = hex(SHA-256(raw32(prev) ‖ uint32_le(t) for t in page i)) where prev is
// h_{i-1}, and for the first page the caller-supplied prior hash (the last
// page hash of the prefix already cached; "" for none, which omits it). A
// trailing partial page is not hashed. A prior that is not the hex of 32
// bytes is refused, as SGLang refuses it.
//
// It is the plain mode of hostcache/prefix.Hasher (which also has EAGLE
// bigrams, binary digests and no allocation per page); both are
// internal/pagehash.
func PageHashes(prior string, tokens []uint32, pageSize int) ([]string, error) {
	if pageSize <= 0 {
		return nil, &ConfigError{What: "page hashes", Field: "page size", Reason: fmt.Sprintf("must be positive, got %d", pageSize)}
	}
	var prev *[pagehash.Size]byte
	if prior != "" {
		raw, err := hex.DecodeString(prior)
		if err != nil {
			return nil, &ConfigError{What: "page hashes", Field: "prior", Reason: fmt.Sprintf("%q is not hex", prior)}
		}
		if len(raw) != pagehash.Size {
			return nil, &ConfigError{What: "page hashes", Field: "prior", Reason: fmt.Sprintf("%q is %d bytes, not a %d-byte digest", prior, len(raw), pagehash.Size)}
		}
		prev = (*[pagehash.Size]byte)(raw)
	}
	spec := pagehash.Spec{PageSize: pageSize}
	digests := pagehash.AppendUint32(make([][pagehash.Size]byte, 0, spec.Pages(len(tokens))), prev, tokens, spec)
	out := make([]string, len(digests))
	for i := range digests {
		out[i] = hex.EncodeToString(digests[i][:])
	}
	return out, nil
}
