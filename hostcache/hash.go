package hostcache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// PageHashes returns SGLang's page hashes (get_hash_str, hicache_storage.py), the logical
// keys of the storage backend: for each full page i of tokens,
// h_i = hex(SHA-256(raw32(prev) ‖ uint32_le(t) for t in page i)) where prev is
// h_{i-1}, and for the first page the caller-supplied prior hash (the last
// page hash of the prefix already cached; "" for none, which omits it). A
// trailing partial page is not hashed.
func PageHashes(prior string, tokens []uint32, pageSize int) ([]string, error) {
	if pageSize <= 0 {
		return nil, &ConfigError{What: "page hashes", Field: "page size", Reason: fmt.Sprintf("must be positive, got %d", pageSize)}
	}
	var prev []byte
	if prior != "" {
		raw, err := hex.DecodeString(prior)
		if err != nil {
			return nil, &ConfigError{What: "page hashes", Field: "prior", Reason: fmt.Sprintf("%q is not hex", prior)}
		}
		prev = raw
	}
	n := len(tokens) / pageSize
	out := make([]string, 0, n)
	buf := make([]byte, 0, sha256.Size+4*pageSize)
	for i := 0; i < n; i++ {
		buf = append(buf[:0], prev...)
		for _, t := range tokens[i*pageSize : (i+1)*pageSize] {
			buf = binary.LittleEndian.AppendUint32(buf, t)
		}
		sum := sha256.Sum256(buf)
		prev = sum[:]
		out = append(out, hex.EncodeToString(sum[:]))
	}
	return out, nil
}
