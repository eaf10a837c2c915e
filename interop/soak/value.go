// Package soak is the soak test's traffic: every value a soak client
// writes says which key and which version it is, every byte read is
// checked, and each writer keeps a model of its own keys so that a lost or
// stale write is told apart from a corrupt one. The Go clients run Worker;
// upstream's Python client runs scripts/soak_python.py, which writes and
// checks the same values (keep the two in step). make soak-native drives
// both against a loopback cluster (soak_native_test.go).
package soak

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
)

// HeaderSize is the size of a value's header: "MCSK", the version, the
// CRC-32 (IEEE) of the key and the value's size, each 4 bytes little-endian.
// The body is SHA-256(key + "#" + decimal version) repeated.
const HeaderSize = 16

var magic = [4]byte{'M', 'C', 'S', 'K'}

// Errors of Check.
var (
	ErrShort    = errors.New("soak: value shorter than its header")
	ErrMagic    = errors.New("soak: not a soak value")
	ErrOtherKey = errors.New("soak: value of another key")
	ErrSize     = errors.New("soak: value size differs from its header")
	ErrBody     = errors.New("soak: body differs from the one of its version")
)

// Fill writes the value of (key, ver) over all of dst (len(dst) >=
// HeaderSize).
func Fill(dst []byte, key string, ver uint32) {
	copy(dst, magic[:])
	binary.LittleEndian.PutUint32(dst[4:], ver)
	binary.LittleEndian.PutUint32(dst[8:], crc32.ChecksumIEEE([]byte(key)))
	binary.LittleEndian.PutUint32(dst[12:], uint32(len(dst)))
	d := seed(key, ver)
	body := dst[HeaderSize:]
	for i := 0; i < len(body); i += len(d) {
		copy(body[i:], d[:])
	}
}

// Check verifies that b is a whole value of key and returns its version.
func Check(b []byte, key string) (uint32, error) {
	if len(b) < HeaderSize {
		return 0, ErrShort
	}
	if [4]byte(b[:4]) != magic {
		return 0, ErrMagic
	}
	ver := binary.LittleEndian.Uint32(b[4:])
	if binary.LittleEndian.Uint32(b[8:]) != crc32.ChecksumIEEE([]byte(key)) {
		return ver, ErrOtherKey
	}
	if n := binary.LittleEndian.Uint32(b[12:]); int(n) != len(b) {
		return ver, fmt.Errorf("%w: header %d, read %d", ErrSize, n, len(b))
	}
	d := seed(key, ver)
	body := b[HeaderSize:]
	for i := 0; i < len(body); i += len(d) {
		n := min(len(d), len(body)-i)
		if string(body[i:i+n]) != string(d[:n]) {
			return ver, fmt.Errorf("%w: at byte %d", ErrBody, HeaderSize+i)
		}
	}
	return ver, nil
}

func seed(key string, ver uint32) [32]byte {
	var buf [64]byte
	s := append(append(append(buf[:0], key...), '#'), strconv.FormatUint(uint64(ver), 10)...)
	return sha256.Sum256(s)
}
