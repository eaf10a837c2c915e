package kvevents

import (
	"encoding/binary"
	"errors"
	"math"
)

// The msgpack subset the events use, both ways. A reader of our own rather
// than a general library: it decodes in place from the received payload,
// allocating nothing but the strings an Event keeps, and it is small enough
// to fuzz whole (docs/kv-events.md).

// errShort and errType are the decoder's two ways to fail; wireError adds
// where.
var (
	errShort = errors.New("msgpack: truncated")
	errType  = errors.New("msgpack: unexpected type")
	errDepth = errors.New("msgpack: nested too deeply")
)

// maxSkipDepth bounds the nesting a skipped value may have: an event's
// fields are flat, so anything deep is garbage or hostile.
const maxSkipDepth = 32

type reader struct {
	b   []byte
	off int
}

func (r *reader) byte1() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errShort
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *reader) take(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.off {
		return nil, errShort
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p, nil
}

func (r *reader) uintN(n int) (uint64, error) {
	p, err := r.take(n)
	if err != nil {
		return 0, err
	}
	switch n {
	case 1:
		return uint64(p[0]), nil
	case 2:
		return uint64(binary.BigEndian.Uint16(p)), nil
	case 4:
		return uint64(binary.BigEndian.Uint32(p)), nil
	}
	return binary.BigEndian.Uint64(p), nil
}

// peekNil consumes a nil and reports whether there was one.
func (r *reader) peekNil() bool {
	if r.off < len(r.b) && r.b[r.off] == 0xc0 {
		r.off++
		return true
	}
	return false
}

// arrayLen reads an array header.
func (r *reader) arrayLen() (int, error) {
	c, err := r.byte1()
	if err != nil {
		return 0, err
	}
	var n uint64
	switch {
	case c&0xf0 == 0x90:
		return int(c & 0x0f), nil
	case c == 0xdc:
		n, err = r.uintN(2)
	case c == 0xdd:
		n, err = r.uintN(4)
	default:
		return 0, errType
	}
	if err != nil {
		return 0, err
	}
	// Every element takes at least a byte: a count beyond the rest is a lie.
	if n > uint64(len(r.b)-r.off) {
		return 0, errShort
	}
	return int(n), nil
}

// mapLen reads a map header.
func (r *reader) mapLen() (int, error) {
	c, err := r.byte1()
	if err != nil {
		return 0, err
	}
	var n uint64
	switch {
	case c&0xf0 == 0x80:
		return int(c & 0x0f), nil
	case c == 0xde:
		n, err = r.uintN(2)
	case c == 0xdf:
		n, err = r.uintN(4)
	default:
		return 0, errType
	}
	if err != nil {
		return 0, err
	}
	if n > uint64(len(r.b)-r.off)/2 {
		return 0, errShort
	}
	return int(n), nil
}

// str reads a string (or bin) as a view into the payload.
func (r *reader) str() ([]byte, error) {
	c, err := r.byte1()
	if err != nil {
		return nil, err
	}
	var n uint64
	switch {
	case c&0xe0 == 0xa0:
		n = uint64(c & 0x1f)
	case c == 0xd9 || c == 0xc4:
		n, err = r.uintN(1)
	case c == 0xda || c == 0xc5:
		n, err = r.uintN(2)
	case c == 0xdb || c == 0xc6:
		n, err = r.uintN(4)
	default:
		return nil, errType
	}
	if err != nil {
		return nil, err
	}
	if n > uint64(len(r.b)-r.off) {
		return nil, errShort
	}
	return r.take(int(n))
}

// int reads any integer format as an int64 plus, for values above
// math.MaxInt64, the uint64 (big reports that).
func (r *reader) integer() (i int64, u uint64, big bool, err error) {
	c, err := r.byte1()
	if err != nil {
		return 0, 0, false, err
	}
	switch {
	case c <= 0x7f:
		return int64(c), uint64(c), false, nil
	case c >= 0xe0:
		v := int64(int8(c))
		return v, uint64(v), false, nil
	}
	var v uint64
	switch c {
	case 0xcc:
		v, err = r.uintN(1)
	case 0xcd:
		v, err = r.uintN(2)
	case 0xce:
		v, err = r.uintN(4)
	case 0xcf:
		v, err = r.uintN(8)
		if err == nil && v > math.MaxInt64 {
			return int64(v), v, true, nil
		}
	case 0xd0:
		v, err = r.uintN(1)
		s := int64(int8(v))
		return s, uint64(s), false, err
	case 0xd1:
		v, err = r.uintN(2)
		s := int64(int16(v))
		return s, uint64(s), false, err
	case 0xd2:
		v, err = r.uintN(4)
		s := int64(int32(v))
		return s, uint64(s), false, err
	case 0xd3:
		v, err = r.uintN(8)
		s := int64(v)
		return s, v, false, err
	default:
		return 0, 0, false, errType
	}
	return int64(v), v, false, err
}

// skip steps over one value of any type.
func (r *reader) skip(depth int) error {
	if depth > maxSkipDepth {
		return errDepth
	}
	if r.off >= len(r.b) {
		return errShort
	}
	c := r.b[r.off]
	switch {
	case c <= 0x7f, c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3:
		r.off++
		return nil
	case c&0xf0 == 0x80, c == 0xde, c == 0xdf:
		n, err := r.mapLen()
		if err != nil {
			return err
		}
		for i := 0; i < 2*n; i++ {
			if err := r.skip(depth + 1); err != nil {
				return err
			}
		}
		return nil
	case c&0xf0 == 0x90, c == 0xdc, c == 0xdd:
		n, err := r.arrayLen()
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			if err := r.skip(depth + 1); err != nil {
				return err
			}
		}
		return nil
	case c&0xe0 == 0xa0, c == 0xd9, c == 0xda, c == 0xdb, c == 0xc4, c == 0xc5, c == 0xc6:
		_, err := r.str()
		return err
	}
	r.off++
	var n int
	switch c {
	case 0xcc, 0xd0:
		n = 1
	case 0xcd, 0xd1:
		n = 2
	case 0xce, 0xd2, 0xca:
		n = 4
	case 0xcf, 0xd3, 0xcb:
		n = 8
	case 0xd4:
		n = 2 // fixext 1: type + data
	case 0xd5:
		n = 3
	case 0xd6:
		n = 5
	case 0xd7:
		n = 9
	case 0xd8:
		n = 17
	case 0xc7, 0xc8, 0xc9: // ext 8/16/32: length, type, data
		w := 1 << (c - 0xc7) // 1, 2, 4 bytes of length
		l, err := r.uintN(w)
		if err != nil {
			return err
		}
		if l > uint64(len(r.b)-r.off) {
			return errShort
		}
		n = int(l) + 1
	default: // 0xc1, never used
		return errType
	}
	_, err := r.take(n)
	return err
}

// The writer: msgpack-c's choices (the smallest format for each integer
// and string), so that Publisher's bytes equal upstream's for the same
// events.

func appendNil(b []byte) []byte { return append(b, 0xc0) }

func appendArrayLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xdc), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdd), uint32(n))
}

func appendMapLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x80|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xde), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdf), uint32(n))
}

func appendStr(b []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n <= math.MaxUint8:
		b = append(b, 0xd9, byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
	}
	return append(b, s...)
}

// appendUint is msgpack-c's pack of an unsigned integer.
func appendUint(b []byte, v uint64) []byte {
	switch {
	case v < 1<<7:
		return append(b, byte(v))
	case v < 1<<8:
		return append(b, 0xcc, byte(v))
	case v < 1<<16:
		return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(v))
	case v < 1<<32:
		return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xcf), v)
}

// appendInt is msgpack-c's pack of a signed integer: non-negative values as
// appendUint does, negative ones in the smallest signed format.
func appendInt(b []byte, v int64) []byte {
	switch {
	case v >= 0:
		return appendUint(b, uint64(v))
	case v >= -32:
		return append(b, byte(int8(v)))
	case v >= math.MinInt8:
		return append(b, 0xd0, byte(int8(v)))
	case v >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(int16(v)))
	case v >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(int32(v)))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(v))
}
