package main

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"testing"
)

// FuzzDecodeRequest: the fast path decodes a body only when encoding/json
// decodes it, to the same request; decodeRequest agrees with
// encoding/json on every body (the same request, or an error from both).
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"tokens":[1,2,3,4]}`, `{"tokens":[1,2],"prior":"ab"}`, ` { "prior" : "" , "tokens" : [ 0 , -0 , 9223372036854775807 , -9223372036854775808 ] } `,
		`{"tokens":[]}`, `{}`, `{"tokens":[1,2],"tokens":[3]}`, `{"Tokens":[1]}`, `{"tokens":[1.0]}`, `{"tokens":[1e2]}`,
		`{"tokens":[01]}`, `{"tokens":[18446744073709551616]}`, `{"tokens":[9223372036854775808]}`, `{"prior":"\u0041"}`,
		`{"prior":null}`, `{"tokens":null}`, `{"tokens":[1,]}`, `{"tokens":[1] `, `[1,2]`, `{"tokens":[1]} x`, "{\"prior\":\"\xff\"}",
		`{"tokens":[-]}`, `{"tokens":[--1]}`, `{"model":"x","tokens":[1]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var want lookupRequest
		dec := json.NewDecoder(bytes.NewReader(body))
		werr := dec.Decode(&want)
		if werr == nil {
			if _, err := dec.Token(); err != io.EOF {
				werr = err
				if werr == nil {
					werr = io.ErrUnexpectedEOF
				}
			}
		}
		if fast, ok := fastDecode(body, nil); ok {
			if werr != nil {
				t.Fatalf("%q: the fast path decoded %+v, encoding/json refused: %v", body, fast, werr)
			}
			if !slices.Equal(fast.Tokens, want.Tokens) || fast.Prior != want.Prior {
				t.Fatalf("%q: fast %+v, encoding/json %+v", body, fast, want)
			}
		}
		got, gerr := decodeRequest(body, &reqBuf{})
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%q: decodeRequest error %v, encoding/json %v", body, gerr, werr)
		}
		if gerr == nil && (!slices.Equal(got.Tokens, want.Tokens) || got.Prior != want.Prior) {
			t.Fatalf("%q: decodeRequest %+v, encoding/json %+v", body, got, want)
		}
	})
}
