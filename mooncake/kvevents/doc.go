// Package kvevents reads and writes the KV cache events of Mooncake's master:
// the ZMQ PUB stream upstream publishes when built with ENABLE_KV_EVENTS and
// started with --enable_kv_events --kv_events_bind_endpoint=...
//
// Each message has three frames: an empty topic, the batch sequence as a
// big-endian uint64, and a msgpack payload [timestamp_ms, [event map...],
// dp_rank]. Subscribe decodes them into typed events (Stored, Removed),
// detects sequence gaps, reconnects with back-off and asks a Locator where
// the publisher is, so an HA deployment can follow its leader. NewPublisher
// writes the same frames (the embedded engine's master and tests use it).
//
// Pure Go: no cgo, no libzmq (docs/kv-events.md says why).
package kvevents
