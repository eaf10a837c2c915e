package prefix

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/mooncake-go/mooncake-go/internal/pagehash"
)

// Digest is one page hash (SHA-256): SGLang's get_hash_str output in binary.
type Digest [pagehash.Size]byte

// String returns the lower-case hex form, as SGLang's keys carry it.
func (d Digest) String() string { return string(d.AppendHex(make([]byte, 0, 2*len(d)))) }

// AppendHex appends the lower-case hex form to b (no allocation when b has
// room for 64 bytes more).
func (d Digest) AppendHex(b []byte) []byte {
	const digits = "0123456789abcdef"
	for _, x := range d {
		b = append(b, digits[x>>4], digits[x&0x0f])
	}
	return b
}

// Int64 is SGLang's hash_str_to_int64 (the block id of its KV events): the
// first 8 bytes as a big-endian two's-complement integer.
func (d Digest) Int64() int64 { return int64(binary.BigEndian.Uint64(d[:8])) }

// ParseDigest parses exactly 64 hex digits (either case).
func ParseDigest(s string) (Digest, error) {
	var d Digest
	if len(s) != 2*len(d) {
		return d, &DigestError{Input: s, Reason: fmt.Sprintf("%d characters, want %d hex digits", len(s), 2*len(d))}
	}
	if _, err := hex.Decode(d[:], []byte(s)); err != nil {
		return Digest{}, &DigestError{Input: s, Reason: "not hex"}
	}
	return d, nil
}

// ParsePrior parses a prior hash as SGLang's get_hash_str takes it: "" is no
// prior (nil), anything else must be bytes.fromhex of exactly 32 bytes
// (hex digits of either case; ASCII whitespace allowed between byte pairs,
// as Python's bytes.fromhex allows it). SGLang refuses other lengths
// ("prior_digest must be exactly 32 bytes"); so does ParsePrior, with a
// *DigestError.
func ParsePrior(s string) (*Digest, error) {
	if s == "" {
		return nil, nil
	}
	var d Digest
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if isPySpace(c) {
			i++
			continue
		}
		if i+1 >= len(s) {
			return nil, &DigestError{Input: s, Reason: fmt.Sprintf("odd hex digit at %d", i)}
		}
		hi, ok1 := unhex(c)
		lo, ok2 := unhex(s[i+1])
		if !ok1 || !ok2 {
			return nil, &DigestError{Input: s, Reason: fmt.Sprintf("not hex at %d", i)}
		}
		if n == len(d) {
			return nil, &DigestError{Input: s, Reason: fmt.Sprintf("more than %d bytes: a prior must be exactly %d bytes", len(d), len(d))}
		}
		d[n] = hi<<4 | lo
		n++
		i += 2
	}
	if n != len(d) {
		return nil, &DigestError{Input: s, Reason: fmt.Sprintf("%d bytes: a prior must be exactly %d bytes", n, len(d))}
	}
	return &d, nil
}

// isPySpace is Python's bytes.isspace: the ASCII whitespace bytes.fromhex skips.
func isPySpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
