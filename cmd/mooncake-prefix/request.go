package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"sync"
)

// A request is mostly one long array of token ids: encoding/json decodes it
// through reflection at about 115 ns an id (470 µs for a 4096-token prompt,
// far more than hashing it; by hand: 50 µs), so the common shape has a
// fast path: an object with only "tokens" (an array of integers) and
// "prior" (a string without escapes), in any order, with any JSON
// whitespace. Anything else (another key, a fraction, an exponent, an
// escape, an integer beyond int64, a duplicate key, ...) is decoded by
// encoding/json instead, which gives the same answer or the error. The
// fuzz target FuzzDecodeRequest holds the two to that.

// reqBuf is a request's reusable memory: the body and the token ids.
type reqBuf struct {
	body   []byte
	tokens []int64
}

var reqBufs = sync.Pool{New: func() any { return &reqBuf{body: make([]byte, 0, 64<<10), tokens: make([]int64, 0, 8192)} }}

// putReqBuf keeps b for the next request unless a huge one grew it.
func putReqBuf(b *reqBuf) {
	if cap(b.body) <= 1<<20 && cap(b.tokens) <= 1<<18 {
		reqBufs.Put(b)
	}
}

// readRequest reads and decodes r's body into b (whose tokens the result
// shares).
func readRequest(r *http.Request, b *reqBuf) (lookupRequest, error) {
	body, err := readAll(http.MaxBytesReader(nil, r.Body, maxBody), b.body[:0])
	b.body = body
	if err != nil {
		return lookupRequest{}, err
	}
	return decodeRequest(body, b)
}

// readAll is io.ReadAll into dst.
func readAll(r io.Reader, dst []byte) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// decodeRequest decodes body: the fast path, or encoding/json.
func decodeRequest(body []byte, b *reqBuf) (lookupRequest, error) {
	if req, ok := fastDecode(body, b.tokens[:0]); ok {
		b.tokens = req.Tokens[:0]
		return req, nil
	}
	var req lookupRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		return lookupRequest{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return lookupRequest{}, errors.New("more than one JSON value")
	}
	return req, nil
}

// fastDecode parses the common shape; ok is false for anything else.
func fastDecode(s []byte, tokens []int64) (req lookupRequest, ok bool) {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return req, false
	}
	i = skipSpace(s, i+1)
	seenTokens, seenPrior := false, false
	if i < len(s) && s[i] == '}' {
		i++
	} else {
		for {
			key, j, ok := plainString(s, i)
			if !ok {
				return req, false
			}
			i = skipSpace(s, j)
			if i >= len(s) || s[i] != ':' {
				return req, false
			}
			i = skipSpace(s, i+1)
			switch {
			case string(key) == "tokens" && !seenTokens:
				seenTokens = true
				if tokens, i, ok = intArray(s, i, tokens); !ok {
					return req, false
				}
				req.Tokens = tokens
			case string(key) == "prior" && !seenPrior:
				seenPrior = true
				var v []byte
				if v, i, ok = plainString(s, i); !ok {
					return req, false
				}
				req.Prior = string(v)
			default:
				return req, false
			}
			i = skipSpace(s, i)
			if i >= len(s) {
				return req, false
			}
			if s[i] == '}' {
				i++
				break
			}
			if s[i] != ',' {
				return req, false
			}
			i = skipSpace(s, i+1)
		}
	}
	if skipSpace(s, i) != len(s) {
		return req, false
	}
	return req, true
}

func skipSpace(s []byte, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// plainString parses a string of printable ASCII without escapes.
func plainString(s []byte, i int) ([]byte, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return s[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// intArray parses an array of JSON integers that fit int64.
func intArray(s []byte, i int, dst []int64) ([]int64, int, bool) {
	if i >= len(s) || s[i] != '[' {
		return nil, 0, false
	}
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == ']' {
		return dst, i + 1, true
	}
	for {
		v, j, ok := jsonInt(s, i)
		if !ok {
			return nil, 0, false
		}
		dst = append(dst, v)
		i = skipSpace(s, j)
		if i >= len(s) {
			return nil, 0, false
		}
		switch s[i] {
		case ']':
			return dst, i + 1, true
		case ',':
			i = skipSpace(s, i+1)
		default:
			return nil, 0, false
		}
	}
}

// jsonInt parses -?(0|[1-9][0-9]*) within int64, not followed by a
// fraction or an exponent.
func jsonInt(s []byte, i int) (int64, int, bool) {
	neg := i < len(s) && s[i] == '-'
	if neg {
		i++
	}
	start := i
	var u uint64
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		d := uint64(s[i] - '0')
		if u > (math.MaxUint64-d)/10 {
			return 0, 0, false
		}
		u = u*10 + d
		i++
	}
	switch n := i - start; {
	case n == 0, n > 1 && s[start] == '0':
		return 0, 0, false
	}
	if i < len(s) && (s[i] == '.' || s[i] == 'e' || s[i] == 'E') {
		return 0, 0, false
	}
	if neg {
		if u > 1<<63 {
			return 0, 0, false
		}
		return -int64(u), i, true
	}
	if u > math.MaxInt64 {
		return 0, 0, false
	}
	return int64(u), i, true
}
