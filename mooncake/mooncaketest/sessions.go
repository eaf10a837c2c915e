package mooncaketest

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// Transfer sessions: a put session reserves objects that range writes fill
// (unreadable until End; Revoke drops them), a get session reads ranges of
// what its one lookup found; misuse of either is refused per key, and the
// zero values and ended sessions refuse everything.
//
// A backend without them (Capabilities.Sessions false: the native backend
// over upstream v0.3.12.post1) refuses both starts as a whole with
// ErrNotSupported, after the same argument checks.
func testSessions(t *testing.T, c *Cluster) {
	if !mooncake.Backend().Capabilities.Sessions {
		testSessionsNotSupported(t, c)
		return
	}
	st, other := c.Open(t), c.Open(t)
	const size, half = 64 << 10, 32 << 10
	src, dst := Memory(t, st, 2*size), Memory(t, other, 2*size)
	Fill(src.Bytes(), 7)
	keys := Keys(t, "obj", 2)
	inv, code := int64(mooncake.ErrInvalidParams), func(c mooncake.ErrorCode) int64 { return int64(c) }

	putKeys := []string{keys[0], keys[1], Key(t, "empty"), keys[0]}
	ps, res, err := st.StartPutSession(hostmem.PackKeys(putKeys...), []uint64{size, size, 0, size}, nil)
	assert.Equal(t, []int64{0, 0, inv, inv}, res, "size 0 and a key twice are refused")
	checkFailed(t, mooncake.OpBatchPutSessionStart, putKeys, res, err, []int{2, 3})
	require.NotNil(t, ps, "the session holds the keys that started, beside the *BatchError")
	_, err = other.Get(keys[0])
	isCode(t, err, mooncake.ErrReplicaIsNotReady, "reserved, not written")
	none, res, err := other.StartPutSession(hostmem.PackKeys(keys[:1]...), []uint64{size}, nil)
	assert.Equal(t, []int64{code(mooncake.ErrObjectAlreadyExists)}, res, "another client's put session reserved it")
	checkFailed(t, mooncake.OpBatchPutSessionStart, keys[:1], res, err, []int{0})
	assert.ErrorIs(t, err, mooncake.ErrObjectAlreadyExists)
	require.NotNil(t, none, "a session is returned even when no key started")
	res, err = none.End(nil)
	checkFailed(t, mooncake.OpBatchPutSessionEnd, keys[:1], res, err, []int{0}, "a key that never started cannot end")
	none, res, err = st.StartPutSession(hostmem.PackKeys(keys[:1]...), []uint64{size}, res)
	assert.Equal(t, []int64{inv}, res, "this client has a put session of the key already")
	checkFailed(t, mooncake.OpBatchPutSessionStart, keys[:1], res, err, []int{0})
	require.NotNil(t, none)

	stranger := Key(t, "stranger")
	writes := []mooncake.KeyRanges{
		{Key: keys[0], Ranges: []mooncake.Range{{Addr: src.Addr() + half, Offset: half, Size: half}, {Addr: src.Addr(), Offset: 0, Size: half}}},
		{Key: keys[1], Ranges: []mooncake.Range{{Addr: src.Addr() + size, Offset: 0, Size: size}}},
		{Key: stranger},
		{Key: keys[0], Ranges: []mooncake.Range{{Addr: src.Addr(), Offset: size - 1, Size: 2}}},
	}
	res, err = ps.WriteRanges(writes, res)
	assert.Equal(t, []int64{size, size, inv, inv}, res, "written, written, not in the session, past the end")
	checkFailed(t, mooncake.OpBatchPutFromMultiBufferRanges, reqKeys(writes), res, err, []int{2, 3})
	res, err = ps.End(nil)
	assert.Equal(t, []int64{0, 0, inv, inv}, res, "ended; the failed starts keep their codes")
	checkFailed(t, mooncake.OpBatchPutSessionEnd, putKeys, res, err, []int{2, 3})
	for i, k := range keys {
		v, err := other.Get(k)
		require.NoError(t, err)
		require.True(t, bytes.Equal(src.Bytes()[i*size:(i+1)*size], v), "object %d is what the ranges wrote", i)
	}
	res, err = ps.End(res)
	assert.Equal(t, []int64{0, 0, inv, inv}, res, "ending again changes nothing")
	checkFailed(t, mooncake.OpBatchPutSessionEnd, putKeys, res, err, []int{2, 3})
	res, err = ps.Revoke(res)
	assert.Equal(t, []int64{inv, inv, 0, 0}, res, "an ended object cannot be revoked")
	checkFailed(t, mooncake.OpBatchPutSessionRevoke, putKeys, res, err, []int{0, 1})
	res, err = ps.WriteRanges([]mooncake.KeyRanges{{Key: keys[0]}}, res)
	checkRefused(t, mooncake.OpBatchPutFromMultiBufferRanges, res, err, mooncake.ErrInvalidParams, "an ended session takes no more writes")
	assert.ErrorIs(t, err, mooncake.ErrSessionEnded, "as the sessions doc says")

	dropped := Key(t, "dropped")
	ps2, res, err := st.StartPutSession(hostmem.PackKeys(dropped, keys[0]), []uint64{size, size}, nil)
	assert.Equal(t, []int64{0, code(mooncake.ErrObjectAlreadyExists)}, res)
	checkFailed(t, mooncake.OpBatchPutSessionStart, []string{dropped, keys[0]}, res, err, []int{1})
	require.NotNil(t, ps2)
	res, err = ps2.Revoke(res)
	assert.Equal(t, []int64{0, 0}, res)
	checkFailed(t, mooncake.OpBatchPutSessionRevoke, []string{dropped, keys[0]}, res, err, nil)
	_, err = other.Get(dropped)
	isCode(t, err, mooncake.ErrObjectNotFound, "revoked")

	missing := Key(t, "missing")
	getKeys := []string{keys[0], keys[1], missing}
	gs, res, err := other.StartGetSession(hostmem.PackKeys(getKeys...), nil)
	assert.Equal(t, []int64{0, 0, code(mooncake.ErrObjectNotFound)}, res)
	checkFailed(t, mooncake.OpBatchGetSessionStart, getKeys, res, err, []int{2})
	assert.ErrorIs(t, err, mooncake.ErrObjectNotFound)
	require.NotNil(t, gs, "the session holds the keys that started, beside the *BatchError")
	isCode(t, st.Remove(keys[0], false), mooncake.ErrObjectHasLease, "the session's lookup took a lease")
	held, res, err := other.StartGetSession(hostmem.PackKeys(keys[1:]...), res)
	assert.Equal(t, []int64{inv}, res, "another live session holds the key")
	checkFailed(t, mooncake.OpBatchGetSessionStart, keys[1:], res, err, []int{0})
	require.NotNil(t, held)
	require.NoError(t, held.End(), "a session holding no key ends")
	reads := []mooncake.KeyRanges{
		{Key: keys[0], Ranges: []mooncake.Range{{Addr: dst.Addr(), Offset: half, Size: half}, {Addr: dst.Addr() + half, Offset: 0, Size: half}}},
		{Key: keys[1], Ranges: []mooncake.Range{{Addr: dst.Addr() + size, Offset: 100, Size: 100}}},
		{Key: keys[1], Ranges: []mooncake.Range{{Addr: dst.Addr() + size, Offset: size - 10, Size: 11}}},
		{Key: missing},
		{Key: keys[0]},
	}
	res, err = gs.ReadRanges(reads, res)
	assert.Equal(t, []int64{size, 100, inv, inv, 0}, res, "read, read, past the end, not in the session, no ranges")
	checkFailed(t, mooncake.OpBatchGetIntoMultiBufferRanges, reqKeys(reads), res, err, []int{2, 3})
	b, s := dst.Bytes(), src.Bytes()
	require.True(t, bytes.Equal(s[half:size], b[:half]) && bytes.Equal(s[:half], b[half:size]), "halves swapped")
	require.True(t, bytes.Equal(s[size+100:size+200], b[size:size+100]), "a range from offset 100")
	require.NoError(t, gs.End())
	require.NoError(t, gs.End(), "ending twice is harmless")
	_, err = gs.ReadRanges([]mooncake.KeyRanges{{Key: keys[0]}}, nil)
	assert.ErrorIs(t, err, mooncake.ErrSessionEnded)
	isCode(t, err, mooncake.ErrInvalidParams)
	gs2, res, err := other.StartGetSession(hostmem.PackKeys(keys[1:]...), res)
	assert.Equal(t, []int64{0}, res, "free again once the session ended")
	checkFailed(t, mooncake.OpBatchGetSessionStart, keys[1:], res, err, nil)
	require.NoError(t, gs2.End())

	var zg mooncake.GetSession
	_, err = zg.ReadRanges(nil, nil)
	assert.ErrorIs(t, err, mooncake.ErrSessionEnded)
	assert.NoError(t, zg.End())
	var zp mooncake.PutSession
	_, err = zp.WriteRanges(nil, nil)
	assert.ErrorIs(t, err, mooncake.ErrSessionEnded)
	_, err = zp.End(nil)
	assert.ErrorIs(t, err, mooncake.ErrSessionEnded)
	nps, res, err := st.StartPutSession(hostmem.PackKeys(keys...), []uint64{1}, nil)
	checkRefused(t, mooncake.OpBatchPutSessionStart, res, err, mooncake.ErrInvalidParams, "sizes and keys differ in length")
	assert.Nil(t, nps, "no session when the call is refused as a whole")
	ngs, res, err := st.StartGetSession(&hostmem.Keys{Buf: []byte("k"), Offsets: []uint64{0, 2}}, nil)
	checkRefused(t, mooncake.OpBatchGetSessionStart, res, err, mooncake.ErrInvalidParams, "malformed keys")
	assert.Nil(t, ngs, "no session when the call is refused as a whole")
}

func testSessionsNotSupported(t *testing.T, c *Cluster) {
	require.True(t, c.Native, "the embedded engine has the sessions")
	st := c.Open(t)
	k := Key(t, "obj")
	require.NoError(t, st.Put(k, []byte("v")))
	gs, res, err := st.StartGetSession(hostmem.PackKeys(k), nil)
	checkRefused(t, mooncake.OpBatchGetSessionStart, res, err, mooncake.ErrNotSupported, "a get session of an existing key")
	assert.Nil(t, gs)
	ps, res, err := st.StartPutSession(hostmem.PackKeys(Key(t, "new")), []uint64{64}, nil)
	checkRefused(t, mooncake.OpBatchPutSessionStart, res, err, mooncake.ErrNotSupported, "a put session of a new key")
	assert.Nil(t, ps)
	// Malformed input is still ErrInvalidParams.
	ps, res, err = st.StartPutSession(hostmem.PackKeys(k, Key(t, "x")), []uint64{1}, nil)
	checkRefused(t, mooncake.OpBatchPutSessionStart, res, err, mooncake.ErrInvalidParams, "sizes and keys differ in length")
	assert.Nil(t, ps)
	gs, res, err = st.StartGetSession(&hostmem.Keys{Buf: []byte("k"), Offsets: []uint64{0, 2}}, nil)
	checkRefused(t, mooncake.OpBatchGetSessionStart, res, err, mooncake.ErrInvalidParams, "malformed keys")
	assert.Nil(t, gs)
	// The object is untouched, and the zero sessions behave as ever.
	v, err := st.Get(k)
	require.NoError(t, err)
	assert.Equal(t, "v", string(v))
	var zp mooncake.PutSession
	_, err = zp.WriteRanges(nil, nil)
	assert.ErrorIs(t, err, mooncake.ErrSessionEnded)
}

// get_into_ranges: byte ranges of several objects in one call, a result per
// range; a missing key fails its ranges only.
func testGetIntoRanges(t *testing.T, c *Cluster) {
	st := c.Open(t)
	reader := c.Open(t)
	keys := Keys(t, "r", 2)
	vals := [][]byte{bytes.Repeat([]byte("0123456789"), 100), bytes.Repeat([]byte("abcdefghij"), 50)}
	for i, k := range keys {
		require.NoError(t, st.Put(k, vals[i]))
	}
	mem := Memory(t, reader, 4096)
	unreg := make([]byte, 64)
	a := mem.Addr()
	reqs := []mooncake.KeyRanges{
		{Key: keys[0], Ranges: []mooncake.Range{{Addr: a, Offset: 5, Size: 10}, {Addr: a + 100, Offset: 990, Size: 10}, {Addr: a + 200, Offset: 995, Size: 10}}},
		{Key: Key(t, "missing"), Ranges: []mooncake.Range{{Addr: a + 300, Offset: 0, Size: 1}}},
		{Key: keys[1], Ranges: []mooncake.Range{{Addr: a + 400, Offset: 0, Size: 500}}},
		{Key: keys[1]},
	}
	res, err := reader.GetIntoRanges(reqs, nil)
	inv := int64(mooncake.ErrInvalidParams)
	assert.Equal(t, []int64{10, 10, inv, int64(mooncake.ErrObjectNotFound), 500}, res,
		"read, read, past the end, missing, read; a key with no ranges has no result")
	checkFailed(t, mooncake.OpGetIntoRanges, rangeKeys(reqs), res, err, []int{2, 3}, "the error names each failed range's key")
	b := mem.Bytes()
	assert.Equal(t, "5678901234", string(b[:10]))
	assert.Equal(t, "0123456789", string(b[100:110]))
	assert.Equal(t, string(vals[1]), string(b[400:900]))
	isCode(t, reader.Remove(keys[0], false), mooncake.ErrObjectHasLease, "the lookup took a lease")
	res, err = reader.GetIntoRanges([]mooncake.KeyRanges{{Key: keys[0], Ranges: []mooncake.Range{
		{Addr: uintptr(unsafe.Pointer(&unreg[0])), Offset: 0, Size: 8}}}}, res)
	assert.Equal(t, []int64{inv}, res, "memory not registered")
	checkFailed(t, mooncake.OpGetIntoRanges, keys[:1], res, err, []int{0})
}
