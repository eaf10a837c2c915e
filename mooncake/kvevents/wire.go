package kvevents

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrMalformed is what every decoding error matches (errors.Is): a message
// that is not upstream's three frames, or a payload that is not its
// msgpack.
var ErrMalformed = errors.New("kvevents: malformed message")

// WireError says which part of a message did not decode.
type WireError struct {
	Field string // "frames", "sequence", "payload", "events[3].object_key", ...
	Err   error
}

func (e *WireError) Error() string { return "kvevents: " + e.Field + ": " + e.Err.Error() }

// Is makes every WireError match ErrMalformed.
func (e *WireError) Is(target error) bool { return target == ErrMalformed }

func (e *WireError) Unwrap() error { return e.Err }

// decoder turns payloads into batches, reusing what it can: the Events
// slice, and the strings that repeat from event to event (medium, tenant,
// backend, group), which it interns.
type decoder struct {
	names map[string]string
	// Unknown counts events of a type neither stored nor removed, which
	// are left out of the batch (a newer publisher's kinds).
	unknown uint64
}

// maxInterned bounds the interned strings; beyond it they are allocated.
const maxInterned = 1024

func (d *decoder) intern(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if s, ok := d.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if d.names == nil {
		d.names = map[string]string{}
	}
	if len(d.names) < maxInterned {
		d.names[s] = s
	}
	return s
}

// decodeMessage decodes the three frames of one message into b.
func (d *decoder) decodeMessage(b *Batch, frames [][]byte) error {
	if len(frames) != 3 {
		return &WireError{Field: "frames", Err: fmt.Errorf("%d frames, want 3 (topic, sequence, payload)", len(frames))}
	}
	if len(frames[1]) != 8 {
		return &WireError{Field: "sequence", Err: fmt.Errorf("%d bytes, want 8", len(frames[1]))}
	}
	b.Seq = binary.BigEndian.Uint64(frames[1])
	return d.decodePayload(b, frames[2])
}

// decodePayload decodes [timestamp_ms, [event...], dp_rank] into b (Seq is
// left alone). b.Events is reused.
func (d *decoder) decodePayload(b *Batch, payload []byte) error {
	r := reader{b: payload}
	n, err := r.arrayLen()
	if err != nil {
		return &WireError{Field: "payload", Err: err}
	}
	if n < 2 || n > 3 {
		return &WireError{Field: "payload", Err: fmt.Errorf("array of %d, want [timestamp, events, dp_rank]", n)}
	}
	ts, _, _, err := r.integer()
	if err != nil {
		return &WireError{Field: "timestamp", Err: err}
	}
	b.Time = time.UnixMilli(ts)
	ne, err := r.arrayLen()
	if err != nil {
		return &WireError{Field: "events", Err: err}
	}
	b.Events = b.Events[:0]
	for i := 0; i < ne; i++ {
		if cap(b.Events) > len(b.Events) {
			b.Events = b.Events[:len(b.Events)+1]
		} else {
			b.Events = append(b.Events, Event{})
		}
		ev := &b.Events[len(b.Events)-1]
		*ev = Event{}
		if err := d.decodeEvent(&r, ev, i); err != nil {
			b.Events = b.Events[:0]
			return err
		}
		if ev.Kind == 0 {
			b.Events = b.Events[:len(b.Events)-1]
			d.unknown++
		}
	}
	b.DPRank = 0
	if n == 3 && !r.peekNil() {
		_, u, _, err := r.integer()
		if err != nil {
			return &WireError{Field: "dp_rank", Err: err}
		}
		b.DPRank = uint32(u)
	}
	if r.off != len(payload) {
		return &WireError{Field: "payload", Err: fmt.Errorf("%d bytes after the batch", len(payload)-r.off)}
	}
	return nil
}

func eventErr(i int, field string, err error) error {
	return &WireError{Field: "events[" + strconv.Itoa(i) + "]." + field, Err: err}
}

func (d *decoder) decodeEvent(r *reader, ev *Event, i int) error {
	n, err := r.mapLen()
	if err != nil {
		return eventErr(i, "map", err)
	}
	var legacy Kind // from "type", used when "event_type" is absent
	for f := 0; f < n; f++ {
		name, err := r.str()
		if err != nil {
			return eventErr(i, "key", err)
		}
		switch string(name) {
		case "event_id":
			_, u, _, err := r.integer()
			if err != nil {
				return eventErr(i, "event_id", err)
			}
			ev.ID = u
		case "timestamp":
			ts, _, _, err := r.integer()
			if err != nil {
				return eventErr(i, "timestamp", err)
			}
			ev.Time = time.UnixMilli(ts)
		case "event_type":
			s, err := r.str()
			if err != nil {
				return eventErr(i, "event_type", err)
			}
			switch string(s) {
			case "stored":
				ev.Kind = Stored
			case "removed":
				ev.Kind = Removed
			default:
				ev.Kind = 0
			}
		case "type":
			s, err := r.str()
			if err != nil {
				return eventErr(i, "type", err)
			}
			switch string(s) {
			case "BlockStored":
				legacy = Stored
			case "BlockRemoved":
				legacy = Removed
			}
		case "object_key":
			if r.peekNil() {
				continue
			}
			s, err := r.str()
			if err != nil {
				return eventErr(i, "object_key", err)
			}
			ev.Key = string(s)
		case "seq_hashes":
			if r.peekNil() {
				continue
			}
			m, err := r.arrayLen()
			if err != nil {
				return eventErr(i, "seq_hashes", err)
			}
			for j := 0; j < m; j++ {
				_, u, _, err := r.integer()
				if err != nil {
					return eventErr(i, "seq_hashes", err)
				}
				if j == 0 {
					ev.SeqHash, ev.HasSeqHash = u, true
				}
			}
		case "medium", "tenant_id", "backend_id", "group_id":
			if r.peekNil() {
				continue
			}
			s, err := r.str()
			if err != nil {
				return eventErr(i, string(name), err)
			}
			v := d.intern(s)
			switch name[0] {
			case 'm':
				ev.Medium = v
			case 't':
				ev.Tenant = v
			case 'b':
				ev.Backend = v
			default:
				ev.Group = v
			}
		default:
			if err := r.skip(0); err != nil {
				return eventErr(i, string(name), err)
			}
		}
	}
	if ev.Kind == 0 {
		ev.Kind = legacy
	}
	return nil
}

// FormatOptions are upstream's two switches of the event map
// (--kv_events_emit_legacy_compat, --kv_events_emit_object_key), both on by
// default there; here the zero value is upstream's default.
type FormatOptions struct {
	OmitLegacyFields bool // no "type", "block_hashes", "parent_block_hash"
	OmitObjectKey    bool // no "object_key" (events of non-u64 keys are then skipped)
}

// appendPayload encodes b as upstream's KvEventPublisher::PublishBatch does,
// field for field and in the same order. Each event's Backend is written
// as given (upstream: the publisher's backend_id); Tenant "" is written as
// "default".
func appendPayload(dst []byte, b *Batch, opt FormatOptions) []byte {
	ts := b.Time.UnixMilli()
	dst = appendArrayLen(dst, 3)
	dst = appendInt(dst, ts)
	dst = appendArrayLen(dst, len(b.Events))
	for i := range b.Events {
		ev := &b.Events[i]
		stored := ev.Kind == Stored
		seq, hasSeq := ev.SeqHash, ev.HasSeqHash
		fields := 13
		if !opt.OmitLegacyFields {
			fields += 2
		}
		if !opt.OmitObjectKey {
			fields++
		}
		if stored {
			fields += 3
			if !opt.OmitLegacyFields {
				fields++
			}
		} else {
			fields++
		}
		dst = appendMapLen(dst, fields)
		dst = appendStr(dst, "event_id")
		dst = appendUint(dst, ev.ID)
		dst = appendStr(dst, "timestamp")
		dst = appendInt(dst, ts)
		dst = appendStr(dst, "event_type")
		if stored {
			dst = appendStr(dst, "stored")
		} else {
			dst = appendStr(dst, "removed")
		}
		if !opt.OmitLegacyFields {
			dst = appendStr(dst, "type")
			if stored {
				dst = appendStr(dst, "BlockStored")
			} else {
				dst = appendStr(dst, "BlockRemoved")
			}
		}
		for _, k := range [...]string{"model_name", "block_size", "additional_salt", "lora_name"} {
			dst = appendNil(appendStr(dst, k))
		}
		tenant := ev.Tenant
		if tenant == "" {
			tenant = "default"
		}
		dst = appendStr(appendStr(dst, "tenant_id"), tenant)
		dst = appendStr(appendStr(dst, "backend_id"), ev.Backend)
		dst = appendOptStr(appendStr(dst, "group_id"), ev.Group)
		dst = appendOptStr(appendStr(dst, "medium"), ev.Medium)
		dst = appendNil(appendStr(dst, "dp_rank"))
		if !opt.OmitObjectKey {
			dst = appendStr(appendStr(dst, "object_key"), ev.Key)
		}
		dst = appendStr(dst, "seq_hashes")
		if hasSeq {
			dst = appendUint(appendArrayLen(dst, 1), seq)
		} else {
			dst = appendArrayLen(dst, 0)
		}
		if !opt.OmitLegacyFields {
			dst = appendStr(dst, "block_hashes")
			if hasSeq {
				dst = appendInt(appendArrayLen(dst, 1), int64(seq))
			} else {
				dst = appendArrayLen(dst, 0)
			}
		}
		dst = appendStr(dst, "base_block_idx")
		if stored {
			dst = appendUint(dst, 0)
			dst = appendNil(appendStr(dst, "parent_hash"))
			dst = appendNil(appendStr(dst, "token_ids"))
			if !opt.OmitLegacyFields {
				dst = appendNil(appendStr(dst, "parent_block_hash"))
			}
		} else {
			dst = appendNil(dst)
		}
	}
	return appendUint(dst, uint64(b.DPRank))
}

func appendOptStr(dst []byte, s string) []byte {
	if s == "" {
		return appendNil(dst)
	}
	return appendStr(dst, s)
}

// ParseSeqHash is upstream's ParseSeqHashFromObjectKey (key_util.h): a key
// that is a decimal or 0x-prefixed hex uint64 carries its sequence hash.
// Upstream parses with std::stoull and wants the whole key consumed, so a
// decimal key may start with C white space and a sign ("-1" is 2^64-1), and
// a value out of range is no hash.
func ParseSeqHash(key string) (uint64, bool) {
	if key == "" {
		return 0, false
	}
	if len(key) >= 2 && key[0] == '0' && (key[1] == 'x' || key[1] == 'X') {
		v, err := strconv.ParseUint(key[2:], 16, 64)
		return v, err == nil
	}
	i := 0
	for i < len(key) && (key[i] == ' ' || (key[i] >= '\t' && key[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(key) && (key[i] == '+' || key[i] == '-') {
		neg = key[i] == '-'
		i++
	}
	if i == len(key) {
		return 0, false
	}
	v, err := strconv.ParseUint(key[i:], 10, 64)
	if err != nil || key[i] == '+' || key[i] == '-' {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}
