package kvevents

// Test hooks for the external test package (kvevents_test), which may
// import mooncaketest (itself an importer of this package).

// EncodePayload is appendPayload.
func EncodePayload(b *Batch, opt FormatOptions) []byte { return appendPayload(nil, b, opt) }

// DecodePayload decodes a payload with a fresh decoder.
func DecodePayload(b *Batch, payload []byte) error {
	var d decoder
	return d.decodePayload(b, payload)
}
