// Package interop checks that mooncake-go and upstream Mooncake's Python
// client (the client SGLang uses) read each other's objects byte for byte:
// copying and zero-copy objects, multi-buffer objects, and HiCache pages in
// SGLang's key scheme and layouts (an MLA layer_first page stored as one
// multi-buffer object, an MHA page_first page as K and V objects).
//
// The test itself (interop_test.go) needs the native build and a live
// cluster: make test-native runs it when upstream's Python store module is
// importable (MOONCAKE_PYTHONPATH). The Python side is
// scripts/interop_peer.py; this file defines the object set both sides
// share, and must stay in step with it.
package interop

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/crc32"
)

// Geometry of the shared object set (scripts/interop_peer.py: PAGE, MLA,
// MHA, PAGES).
const (
	PageSize  = 16
	Pages     = 4
	MLALayers = 61
	MLALatent = 576
	MHALayers = 32
	MHAHeads  = 8
	MHAHeadD  = 128
)

// CopySizes are the sizes of the copying objects "{prefix}/copy-{i}".
var CopySizes = []int{1, 4096, 100000, 1 << 20}

// Zero-copy and multi-buffer object shapes.
const (
	ZCObjects   = 16
	ZCSize      = 64 << 10
	MBObjects   = 8
	MBBuffers   = 10
	MBBufferLen = 1000
)

// Pattern fills b with the bytes of an object whose key has CRC-32 seed:
// b[o] = seed + 5*o + o/997 (mod 256), as pattern() in interop_peer.py.
func Pattern(b []byte, seed uint32) {
	for o := range b {
		b[o] = byte(seed + uint32(o)*5 + uint32(o/997))
	}
}

// Object returns the bytes of the n-byte object stored under key.
func Object(key string, n int) []byte {
	b := make([]byte, n)
	Pattern(b, crc32.ChecksumIEEE([]byte(key)))
	return b
}

// Tokens returns the token ids of the prefix's pages and the prior hash
// that chains them, as page_hashes() in interop_peer.py derives them.
func Tokens(prefix string) (prior string, tokens []uint32) {
	sum := sha256.Sum256([]byte(prefix))
	seed := crc32.ChecksumIEEE([]byte(prefix))
	tokens = make([]uint32, Pages*PageSize)
	for i := range tokens {
		tokens[i] = seed + uint32(i)*7
	}
	return hex.EncodeToString(sum[:]), tokens
}

// CopyKey, ZCKey and MBKey name the non-HiCache objects of a prefix.
func CopyKey(prefix string, i int) string { return fmt.Sprintf("%s/copy-%d", prefix, i) }
func ZCKey(prefix string, i int) string   { return fmt.Sprintf("%s/zc-%d", prefix, i) }
func MBKey(prefix string, i int) string   { return fmt.Sprintf("%s/mb-%d", prefix, i) }
