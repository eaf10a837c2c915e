package kvevents

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func sampleBatch() *Batch {
	ts := time.UnixMilli(1_764_000_000_123)
	return &Batch{Seq: 7, Time: ts, Events: []Event{
		{Kind: Stored, ID: 1, Key: "12345", SeqHash: 12345, HasSeqHash: true, Medium: "cpu", Tenant: "default", Backend: "b1", Time: ts},
		{Kind: Removed, ID: 2, Key: "abc_0_k", Medium: "disk", Tenant: "t2", Backend: "b1", Group: "g", Time: ts},
		{Kind: Stored, ID: math.MaxUint64, Key: "0xffffffffffffffff", SeqHash: math.MaxUint64, HasSeqHash: true, Medium: "cpu", Tenant: "default", Backend: "b1", Time: ts},
		{Kind: Stored, ID: 300, Key: strings.Repeat("k", 70000), Medium: "cpu", Tenant: "default", Backend: strings.Repeat("b", 40), Time: ts},
	}}
}

func TestPayloadRoundTrip(t *testing.T) {
	for _, opt := range []FormatOptions{{}, {OmitLegacyFields: true}, {OmitObjectKey: true}, {OmitLegacyFields: true, OmitObjectKey: true}} {
		in := sampleBatch()
		p := appendPayload(nil, in, opt)
		var out Batch
		var d decoder
		if err := d.decodePayload(&out, p); err != nil {
			t.Fatalf("%+v: %v", opt, err)
		}
		if !out.Time.Equal(in.Time) || len(out.Events) != len(in.Events) {
			t.Fatalf("%+v: got time %v, %d events", opt, out.Time, len(out.Events))
		}
		for i, want := range in.Events {
			if opt.OmitObjectKey {
				want.Key = ""
			}
			if got := out.Events[i]; got != want {
				t.Errorf("%+v: event %d:\n got %+v\nwant %+v", opt, i, got, want)
			}
		}
		// Encoding what was decoded gives the same bytes (what the test
		// against the real master checks on upstream's own payloads).
		if !opt.OmitObjectKey {
			if q := appendPayload(nil, &out, opt); !bytes.Equal(p, q) {
				t.Errorf("%+v: re-encoding differs", opt)
			}
		}
	}
}

// TestPayloadLayout pins the first event's bytes: upstream's field order
// and msgpack-c's smallest formats.
func TestPayloadLayout(t *testing.T) {
	b := &Batch{Time: time.UnixMilli(1), Events: []Event{{Kind: Removed, ID: 1, Key: "k", Backend: "b"}}}
	got := appendPayload(nil, b, FormatOptions{OmitLegacyFields: true})
	var want []byte
	want = append(want, 0x93, 0x01, 0x91, 0x80|15)
	kv := func(k string, v ...byte) {
		want = append(want, 0xa0|byte(len(k)))
		want = append(want, k...)
		want = append(want, v...)
	}
	str := func(s string) []byte { return append([]byte{0xa0 | byte(len(s))}, s...) }
	kv("event_id", 0x01)
	kv("timestamp", 0x01)
	kv("event_type", str("removed")...)
	for _, k := range []string{"model_name", "block_size", "additional_salt", "lora_name"} {
		kv(k, 0xc0)
	}
	kv("tenant_id", str("default")...)
	kv("backend_id", str("b")...)
	kv("group_id", 0xc0)
	kv("medium", 0xc0)
	kv("dp_rank", 0xc0)
	kv("object_key", str("k")...)
	kv("seq_hashes", 0x90)
	kv("base_block_idx", 0xc0)
	want = append(want, 0x00)
	if !bytes.Equal(got, want) {
		t.Fatalf("layout:\n got % x\nwant % x", got, want)
	}
}

func TestIntegerFormats(t *testing.T) {
	for _, tc := range []struct {
		v    int64
		want []byte
	}{
		{0, []byte{0x00}}, {127, []byte{0x7f}}, {128, []byte{0xcc, 0x80}}, {256, []byte{0xcd, 1, 0}},
		{1 << 16, []byte{0xce, 0, 1, 0, 0}}, {1 << 32, []byte{0xcf, 0, 0, 0, 1, 0, 0, 0, 0}},
		{-1, []byte{0xff}}, {-32, []byte{0xe0}}, {-33, []byte{0xd0, 0xdf}}, {-129, []byte{0xd1, 0xff, 0x7f}},
		{-32769, []byte{0xd2, 0xff, 0xff, 0x7f, 0xff}}, {math.MinInt64, []byte{0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0}},
	} {
		got := appendInt(nil, tc.v)
		if !bytes.Equal(got, tc.want) {
			t.Errorf("appendInt(%d) = % x, want % x", tc.v, got, tc.want)
		}
		r := reader{b: got}
		i, _, _, err := r.integer()
		if err != nil || i != tc.v {
			t.Errorf("integer(% x) = %d, %v", got, i, err)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	good := appendPayload(nil, sampleBatch(), FormatOptions{})
	for _, tc := range []struct {
		name    string
		payload []byte
		field   string
	}{
		{"empty", nil, "payload"},
		{"not an array", []byte{0x01}, "payload"},
		{"array of 1", []byte{0x91, 0x01}, "payload"},
		{"timestamp is a string", []byte{0x93, 0xa1, 'x', 0x90, 0x00}, "timestamp"},
		{"events not an array", []byte{0x93, 0x01, 0x01, 0x00}, "events"},
		{"event not a map", []byte{0x93, 0x01, 0x91, 0x01, 0x00}, "events[0].map"},
		{"map key not a string", []byte{0x93, 0x01, 0x91, 0x81, 0x01, 0x01, 0x00}, "events[0].key"},
		{"object_key an int", []byte{0x93, 0x01, 0x91, 0x81, 0xaa, 'o', 'b', 'j', 'e', 'c', 't', '_', 'k', 'e', 'y', 0x01, 0x00}, "events[0].object_key"},
		{"count beyond the data", []byte{0x93, 0x01, 0xdd, 0xff, 0xff, 0xff, 0xff}, "events"},
		{"truncated", good[:len(good)-1], ""},
		{"trailing bytes", append(append([]byte{}, good...), 0x00), "payload"},
		{"nested too deep", append([]byte{0x93, 0x01, 0x91, 0x81, 0xa1, 'z'}, bytes.Repeat([]byte{0x91}, 40)...), "events[0].z"},
	} {
		var b Batch
		var d decoder
		err := d.decodePayload(&b, tc.payload)
		var we *WireError
		if !errors.Is(err, ErrMalformed) || !errors.As(err, &we) {
			t.Errorf("%s: err = %v, want a WireError", tc.name, err)
			continue
		}
		if tc.field != "" && we.Field != tc.field {
			t.Errorf("%s: field %q, want %q (%v)", tc.name, we.Field, tc.field, err)
		}
	}
}

func TestDecodeMessageFrames(t *testing.T) {
	var d decoder
	var b Batch
	p := appendPayload(nil, sampleBatch(), FormatOptions{})
	if err := d.decodeMessage(&b, [][]byte{nil, {0, 0, 0, 0, 0, 0, 1, 2}, p}); err != nil || b.Seq != 258 {
		t.Fatalf("seq %d, %v", b.Seq, err)
	}
	for _, frames := range [][][]byte{{nil, p}, {nil, {1, 2}, p}, {nil, make([]byte, 8), p, nil}} {
		if err := d.decodeMessage(&b, frames); !errors.Is(err, ErrMalformed) {
			t.Errorf("%d frames: %v", len(frames), err)
		}
	}
}

// TestDecodeKinds: event_type wins over the legacy type; an unknown kind is
// left out and counted.
func TestDecodeKinds(t *testing.T) {
	ev := func(fields ...string) []byte {
		b := appendMapLen(nil, len(fields)/2)
		for _, f := range fields {
			b = appendStr(b, f)
		}
		return b
	}
	payload := appendInt(appendArrayLen(nil, 3), 5)
	payload = appendArrayLen(payload, 4)
	payload = append(payload, ev("type", "BlockRemoved")...)
	payload = append(payload, ev("event_type", "stored", "type", "BlockRemoved")...)
	payload = append(payload, ev("event_type", "cleared")...)
	payload = append(payload, ev("object_key", "x")...)
	payload = appendNil(payload)
	var d decoder
	var b Batch
	if err := d.decodePayload(&b, payload); err != nil {
		t.Fatal(err)
	}
	if len(b.Events) != 2 || b.Events[0].Kind != Removed || b.Events[1].Kind != Stored || d.unknown != 2 {
		t.Fatalf("events %+v, unknown %d", b.Events, d.unknown)
	}
}

func TestParseSeqHash(t *testing.T) {
	for _, tc := range []struct {
		key string
		v   uint64
		ok  bool
	}{
		{"0", 0, true}, {"12345", 12345, true}, {"18446744073709551615", math.MaxUint64, true},
		{"18446744073709551616", 0, false}, {"0x1f", 31, true}, {"0XFF", 255, true},
		{"0x", 0, false}, {"0xg", 0, false}, {"0x+5", 0, false}, {"", 0, false},
		{" 12", 12, true}, {"\t+7", 7, true}, {"-1", math.MaxUint64, true}, {"-0", 0, true},
		{"12 ", 0, false}, {"+", 0, false}, {"+-1", 0, false}, {" 0x5", 0, false},
		{"abc_0_k", 0, false}, {"1e3", 0, false}, {"1_000", 0, false},
	} {
		v, ok := ParseSeqHash(tc.key)
		if v != tc.v || ok != tc.ok {
			t.Errorf("ParseSeqHash(%q) = %d, %v; want %d, %v", tc.key, v, ok, tc.v, tc.ok)
		}
	}
}

// TestDecodeAllocations: in steady state a batch costs one allocation per
// event (its key) and nothing else.
func TestDecodeAllocations(t *testing.T) {
	in := &Batch{Time: time.UnixMilli(1)}
	for i := 0; i < MaxBatch; i++ {
		in.Events = append(in.Events, Event{Kind: Stored, ID: uint64(i), Key: "3b1f9b0c2d7e4a5f6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b_0_k",
			Medium: "cpu", Tenant: "default", Backend: "master-1", Group: "g1"})
	}
	p := appendPayload(nil, in, FormatOptions{})
	var d decoder
	var b Batch
	allocs := testing.AllocsPerRun(100, func() {
		if err := d.decodePayload(&b, p); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > MaxBatch {
		t.Fatalf("%.0f allocations per batch of %d events, want at most one per event", allocs, MaxBatch)
	}
}

func BenchmarkDecodeBatch(b *testing.B) {
	in := &Batch{Time: time.UnixMilli(1)}
	for i := 0; i < MaxBatch; i++ {
		in.Events = append(in.Events, Event{Kind: Stored, ID: uint64(i), Key: "3b1f9b0c2d7e4a5f6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b_0_k",
			Medium: "cpu", Tenant: "default", Backend: "master-1"})
	}
	p := appendPayload(nil, in, FormatOptions{})
	var d decoder
	var out Batch
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		if err := d.decodePayload(&out, p); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*MaxBatch), "ns/event")
}

func BenchmarkEncodeBatch(b *testing.B) {
	in := sampleBatch()
	in.Events = in.Events[:3]
	buf := appendPayload(nil, in, FormatOptions{})
	b.ReportAllocs()
	for b.Loop() {
		buf = appendPayload(buf[:0], in, FormatOptions{})
	}
}
