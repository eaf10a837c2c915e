package kvevents

import (
	"context"
	"fmt"
	"time"
)

// Kind says what happened to an object: upstream's "event_type" ("stored" or
// "removed"; the legacy "type" is BlockStored or BlockRemoved).
type Kind uint8

const (
	// Stored: the object became readable (a put ended, an upsert replaced it).
	Stored Kind = iota + 1
	// Removed: the object is gone (removed, evicted, expired, or its last
	// replica was dropped).
	Removed
)

func (k Kind) String() string {
	switch k {
	case Stored:
		return "stored"
	case Removed:
		return "removed"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Event is one entry of a batch, decoded from upstream's msgpack map
// (mooncake-store/src/kv_event/kv_event_publisher.cpp).
type Event struct {
	Kind Kind
	ID   uint64 // event_id: per publisher, from 1, increasing by one per event sent
	// Key is object_key; "" when the publisher runs with emit_object_key off.
	Key string
	// SeqHash is seq_hashes[0]: upstream fills it only for keys that are a
	// decimal or 0x-hex u64, so it is absent for SGLang's hex-digest keys.
	SeqHash    uint64
	HasSeqHash bool
	// Medium is "cpu", "disk", ... ("" when the publisher sent nil); Tenant is
	// tenant_id ("default" unless the object carries another); Backend is
	// the publisher's backend_id; Group is group_id ("" for none).
	Medium, Tenant, Backend, Group string
	Time                           time.Time // the event's timestamp (ms)
}

// Batch is one ZMQ message of the publisher: up to 64 events sent together.
type Batch struct {
	Seq    uint64    // the sequence frame (big-endian u64), from 1
	Time   time.Time // the batch's timestamp (ms)
	DPRank uint32    // the batch-level dp_rank (upstream sends 0)
	// Events is valid only during the Handler call: the subscriber reuses
	// it and its backing array for the next batch. Key strings may be kept.
	Events []Event
}

// GapReason says why events may be missing between two batches.
type GapReason uint8

const (
	// SequenceGap: the sequence frame jumped, so the publisher dropped
	// events (its queue was full) or its socket's high-water mark dropped
	// messages. After and Before are the sequences around the gap.
	SequenceGap GapReason = iota + 1
	// Reconnected: the connection to the same publisher was lost and made
	// again (or the publisher restarted); events in between are unknown.
	Reconnected
	// Resubscribed: the Locator named another publisher (a new HA leader),
	// whose sequence numbers start afresh.
	Resubscribed
	// Started: the subscription's first connection is up; whatever the
	// publisher sent before (and until ZMQ's subscription reached it) was
	// not seen. Reported once, before any batch.
	Started
)

func (r GapReason) String() string {
	switch r {
	case SequenceGap:
		return "sequence gap"
	case Reconnected:
		return "reconnected"
	case Resubscribed:
		return "resubscribed"
	case Started:
		return "started"
	}
	return fmt.Sprintf("GapReason(%d)", uint8(r))
}

// Gap: events between two delivered batches may be missing. A consumer that
// mirrors the store's contents resynchronises after one. Every connection
// starts with one (Started, Reconnected or Resubscribed), reported when the
// connection is up and before its first batch; SequenceGap comes just before
// the batch that showed it.
type Gap struct {
	// After is the last sequence delivered before the gap (0: none on this
	// connection); Before is the first sequence after it (0: not known yet,
	// as after a reconnect the gap is reported before any batch arrives).
	After, Before uint64
	Reason        GapReason
	Endpoint      string // the publisher the next batches come from
}

// Handler receives a subscription's batches and gaps, in order, from one
// goroutine. It must not keep Batch.Events after returning.
type Handler interface {
	HandleBatch(*Batch)
	HandleGap(Gap)
}

// Locator answers where the current publisher is. The subscriber asks it on
// each connect and reconnect.
type Locator interface {
	Endpoint(ctx context.Context) (string, error)
}

// ChangeWatcher is a Locator that can also tell when the endpoint it gave is
// no longer current (an HA leader changed). WaitChange blocks until the
// publisher endpoint differs from endpoint (returning nil) or ctx ends. The
// subscriber then drops its connection, asks Endpoint again, and reports a
// Gap with Reason Resubscribed.
type ChangeWatcher interface {
	Locator
	WaitChange(ctx context.Context, endpoint string) error
}

type staticLocator string

func (s staticLocator) Endpoint(context.Context) (string, error) { return string(s), nil }

// Static is the Locator of a single master: always endpoint.
func Static(endpoint string) Locator { return staticLocator(endpoint) }

// LocatorFunc adapts a function to Locator (for a caller that already knows
// how to find its leader).
type LocatorFunc func(ctx context.Context) (string, error)

// Endpoint calls f.
func (f LocatorFunc) Endpoint(ctx context.Context) (string, error) { return f(ctx) }

// SubscriberStats counts a subscription's traffic since Subscribe.
type SubscriberStats struct {
	Batches, Events uint64
	Gaps            uint64 // gaps of every reason
	Missed          uint64 // sequence numbers skipped in SequenceGap gaps
	Reconnects      uint64 // connections made after the first
	DecodeErrors    uint64 // messages dropped because they did not decode
	UnknownEvents   uint64 // events of a type neither stored nor removed, left out
	LastSeq         uint64
	// LastLag is now minus the timestamp of the last batch when it was
	// delivered (clock skew between hosts included).
	LastLag time.Duration
	// Connected is true while a connection to a publisher is up.
	Connected bool
	// Heartbeating is true while the publisher answers PINGs, so a silent
	// publisher is noticed after SubscriberConfig.HeartbeatTimeout.
	Heartbeating bool
	Endpoint     string
}
