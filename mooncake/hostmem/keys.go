package hostmem

// Keys is a list of keys packed into one byte buffer: key i is
// Buf[Offsets[i]:Offsets[i+1]], and len(Offsets) is the number of keys plus
// one. It is the form the C ABI takes, so a batch of Keys crosses without a
// string per key, and building one into reused buffers does not allocate.
//
// Unlike strings, the bytes are not immutable: whoever builds a Keys may
// rewrite it for the next batch, so a callee that must keep a key copies it
// (String does).
type Keys struct {
	Buf     []byte
	Offsets []uint64
}

// Reset empties k, keeping its capacity.
func (k *Keys) Reset() {
	k.Buf = k.Buf[:0]
	k.Offsets = append(k.Offsets[:0], 0)
}

// Append adds one key.
func (k *Keys) Append(key string) {
	if len(k.Offsets) == 0 {
		k.Offsets = append(k.Offsets, 0)
	}
	k.Buf = append(k.Buf, key...)
	k.Offsets = append(k.Offsets, uint64(len(k.Buf)))
}

// Pack replaces k's keys with keys and returns k: a Keys kept across
// batches packs them without allocating once its buffers have grown.
//
//	var scratch hostmem.Keys
//	res, err := st.BatchIsExist(scratch.Pack(names...), res)
func (k *Keys) Pack(keys ...string) *Keys {
	k.Reset()
	for _, s := range keys {
		k.Append(s)
	}
	return k
}

// PackKeys returns keys packed into a new Keys.
func PackKeys(keys ...string) *Keys { return new(Keys).Pack(keys...) }

// Len returns the number of keys.
func (k *Keys) Len() int {
	if k == nil {
		return 0
	}
	return max(len(k.Offsets)-1, 0)
}

// Bytes returns key i as a view of Buf (valid until Buf is rewritten).
func (k *Keys) Bytes(i int) []byte {
	lo, hi := k.Offsets[i], k.Offsets[i+1]
	return k.Buf[lo:hi:hi]
}

// String returns a copy of key i.
func (k *Keys) String(i int) string { return string(k.Bytes(i)) }

// Strings returns a copy of every key.
func (k *Keys) Strings() []string {
	out := make([]string, k.Len())
	for i := range out {
		out[i] = k.String(i)
	}
	return out
}

// Validate checks the packing: Offsets start at 0, never decrease and end
// inside Buf. A nil Keys, or one with no offsets, holds no keys.
func (k *Keys) Validate() error {
	if k == nil || len(k.Offsets) == 0 {
		return nil
	}
	if k.Offsets[0] != 0 {
		return shapeErr("keys", "offsets[0] = %d, want 0", k.Offsets[0])
	}
	for i := 1; i < len(k.Offsets); i++ {
		if k.Offsets[i] < k.Offsets[i-1] {
			return shapeErr("keys", "offsets decrease at key %d: %d then %d", i-1, k.Offsets[i-1], k.Offsets[i])
		}
	}
	if last := k.Offsets[len(k.Offsets)-1]; last > uint64(len(k.Buf)) {
		return shapeErr("keys", "offsets end at %d, past the %d bytes of the buffer", last, len(k.Buf))
	}
	return nil
}
