package kvevents

import (
	"strconv"
	"testing"
)

// FuzzDecodePayload: any bytes decode or fail with a WireError, never
// panic; what decodes re-encodes and decodes to the same events.
func FuzzDecodePayload(f *testing.F) {
	f.Add(appendPayload(nil, sampleBatch(), FormatOptions{}))
	f.Add(appendPayload(nil, sampleBatch(), FormatOptions{OmitLegacyFields: true, OmitObjectKey: true}))
	f.Add([]byte{0x93, 0x01, 0x91, 0x81, 0xa1, 'z', 0xc7, 0x01, 0x05, 0x00, 0x00})
	f.Add([]byte{0x92, 0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x90})
	f.Fuzz(func(t *testing.T, p []byte) {
		var d decoder
		var b Batch
		if err := d.decodePayload(&b, p); err != nil {
			if _, ok := err.(*WireError); !ok {
				t.Fatalf("error %T %v is not a *WireError", err, err)
			}
			return
		}
		for _, ev := range b.Events {
			if ev.Kind != Stored && ev.Kind != Removed {
				t.Fatalf("delivered kind %d", ev.Kind)
			}
		}
		// Event timestamps are per event on the wire; the encoder writes the
		// batch's, so compare after normalising them.
		for i := range b.Events {
			b.Events[i].Time = b.Time
		}
		q := appendPayload(nil, &b, FormatOptions{})
		var c Batch
		if err := d.decodePayload(&c, q); err != nil {
			t.Fatalf("re-encoded payload does not decode: %v", err)
		}
		if len(c.Events) != len(b.Events) || !c.Time.Equal(b.Time) {
			t.Fatalf("round trip: %d events at %v, want %d at %v", len(c.Events), c.Time, len(b.Events), b.Time)
		}
		for i := range b.Events {
			want := b.Events[i]
			if want.Tenant == "" {
				want.Tenant = "default"
			}
			// The encoder derives nothing else: seq_hashes come from the event.
			if c.Events[i] != want {
				t.Fatalf("event %d: %+v, want %+v", i, c.Events[i], want)
			}
		}
	})
}

// FuzzParseSeqHash: never panics; a key of digits only parses as
// strconv.ParseUint does, and a 0x key as base-16 ParseUint of the rest.
func FuzzParseSeqHash(f *testing.F) {
	for _, s := range []string{"0", "12", "0x1f", "-1", " +3", "abc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := ParseSeqHash(s)
		if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
			w, err := strconv.ParseUint(s[2:], 16, 64)
			if ok != (err == nil) || (ok && v != w) {
				t.Fatalf("%q: %d %v, ParseUint %d %v", s, v, ok, w, err)
			}
			return
		}
		digits := s != ""
		for _, c := range []byte(s) {
			digits = digits && c >= '0' && c <= '9'
		}
		if digits {
			w, err := strconv.ParseUint(s, 10, 64)
			if ok != (err == nil) || (ok && v != w) {
				t.Fatalf("%q: %d %v, ParseUint %d %v", s, v, ok, w, err)
			}
		}
	})
}
