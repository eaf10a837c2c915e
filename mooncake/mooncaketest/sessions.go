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
func testSessions(t *testing.T, c *Cluster) {
	st, other := c.Open(t), c.Open(t)
	const size, half = 64 << 10, 32 << 10
	src, dst := Memory(t, st, 2*size), Memory(t, other, 2*size)
	Fill(src.Bytes(), 7)
	keys := Keys(t, "obj", 2)
	inv, code := int64(mooncake.ErrInvalidParams), func(c mooncake.ErrorCode) int64 { return int64(c) }

	ps, res, err := st.StartPutSession(hostmem.PackKeys(keys[0], keys[1], Key(t, "empty"), keys[0]), []uint64{size, size, 0, size}, nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 0, inv, inv}, res, "size 0 and a key twice are refused")
	_, err = other.Get(keys[0])
	isCode(t, err, mooncake.ErrReplicaIsNotReady, "reserved, not written")
	_, res, err = other.StartPutSession(hostmem.PackKeys(keys[:1]...), []uint64{size}, nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{code(mooncake.ErrObjectAlreadyExists)}, res, "another client's put session reserved it")
	_, res, err = st.StartPutSession(hostmem.PackKeys(keys[:1]...), []uint64{size}, res)
	require.NoError(t, err)
	assert.Equal(t, []int64{inv}, res, "this client has a put session of the key already")

	stranger := Key(t, "stranger")
	res, err = ps.WriteRanges([]mooncake.KeyRanges{
		{Key: keys[0], Ranges: []mooncake.Range{{Addr: src.Addr() + half, Offset: half, Size: half}, {Addr: src.Addr(), Offset: 0, Size: half}}},
		{Key: keys[1], Ranges: []mooncake.Range{{Addr: src.Addr() + size, Offset: 0, Size: size}}},
		{Key: stranger},
		{Key: keys[0], Ranges: []mooncake.Range{{Addr: src.Addr(), Offset: size - 1, Size: 2}}},
	}, res)
	require.NoError(t, err)
	assert.Equal(t, []int64{size, size, inv, inv}, res, "written, written, not in the session, past the end")
	res, err = ps.End(nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 0, inv, inv}, res, "ended; the failed starts keep their codes")
	for i, k := range keys {
		v, err := other.Get(k)
		require.NoError(t, err)
		require.True(t, bytes.Equal(src.Bytes()[i*size:(i+1)*size], v), "object %d is what the ranges wrote", i)
	}
	res, err = ps.End(res)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 0, inv, inv}, res, "ending again changes nothing")
	res, err = ps.Revoke(res)
	require.NoError(t, err)
	assert.Equal(t, []int64{inv, inv, 0, 0}, res, "an ended object cannot be revoked")
	res, err = ps.WriteRanges([]mooncake.KeyRanges{{Key: keys[0]}}, res)
	require.NoError(t, err)
	assert.Equal(t, []int64{inv}, res, "ended keys take no more writes")

	dropped := Key(t, "dropped")
	ps2, res, err := st.StartPutSession(hostmem.PackKeys(dropped, keys[0]), []uint64{size, size}, nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, code(mooncake.ErrObjectAlreadyExists)}, res)
	res, err = ps2.Revoke(res)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 0}, res)
	_, err = other.Get(dropped)
	isCode(t, err, mooncake.ErrObjectNotFound, "revoked")

	missing := Key(t, "missing")
	gs, res, err := other.StartGetSession(hostmem.PackKeys(keys[0], keys[1], missing), nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 0, code(mooncake.ErrObjectNotFound)}, res)
	isCode(t, st.Remove(keys[0], false), mooncake.ErrObjectHasLease, "the session's lookup took a lease")
	_, res, err = other.StartGetSession(hostmem.PackKeys(keys[1:]...), res)
	require.NoError(t, err)
	assert.Equal(t, []int64{inv}, res, "another live session holds the key")
	res, err = gs.ReadRanges([]mooncake.KeyRanges{
		{Key: keys[0], Ranges: []mooncake.Range{{Addr: dst.Addr(), Offset: half, Size: half}, {Addr: dst.Addr() + half, Offset: 0, Size: half}}},
		{Key: keys[1], Ranges: []mooncake.Range{{Addr: dst.Addr() + size, Offset: 100, Size: 100}}},
		{Key: keys[1], Ranges: []mooncake.Range{{Addr: dst.Addr() + size, Offset: size - 10, Size: 11}}},
		{Key: missing},
		{Key: keys[0]},
	}, res)
	require.NoError(t, err)
	assert.Equal(t, []int64{size, 100, inv, inv, 0}, res, "read, read, past the end, not in the session, no ranges")
	b, s := dst.Bytes(), src.Bytes()
	require.True(t, bytes.Equal(s[half:size], b[:half]) && bytes.Equal(s[:half], b[half:size]), "halves swapped")
	require.True(t, bytes.Equal(s[size+100:size+200], b[size:size+100]), "a range from offset 100")
	require.NoError(t, gs.End())
	require.NoError(t, gs.End(), "ending twice is harmless")
	_, err = gs.ReadRanges([]mooncake.KeyRanges{{Key: keys[0]}}, nil)
	assert.ErrorIs(t, err, mooncake.ErrSessionEnded)
	isCode(t, err, mooncake.ErrInvalidParams)
	gs2, res, err := other.StartGetSession(hostmem.PackKeys(keys[1:]...), res)
	require.NoError(t, err)
	assert.Equal(t, []int64{0}, res, "free again once the session ended")
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
	_, _, err = st.StartPutSession(hostmem.PackKeys(keys...), []uint64{1}, nil)
	isCode(t, err, mooncake.ErrInvalidParams, "sizes and keys differ in length")
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
	res, err := reader.GetIntoRanges([]mooncake.KeyRanges{
		{Key: keys[0], Ranges: []mooncake.Range{{Addr: a, Offset: 5, Size: 10}, {Addr: a + 100, Offset: 990, Size: 10}, {Addr: a + 200, Offset: 995, Size: 10}}},
		{Key: Key(t, "missing"), Ranges: []mooncake.Range{{Addr: a + 300, Offset: 0, Size: 1}}},
		{Key: keys[1], Ranges: []mooncake.Range{{Addr: a + 400, Offset: 0, Size: 500}}},
		{Key: keys[1]},
	}, nil)
	require.NoError(t, err)
	inv := int64(mooncake.ErrInvalidParams)
	assert.Equal(t, []int64{10, 10, inv, int64(mooncake.ErrObjectNotFound), 500}, res,
		"read, read, past the end, missing, read; a key with no ranges has no result")
	b := mem.Bytes()
	assert.Equal(t, "5678901234", string(b[:10]))
	assert.Equal(t, "0123456789", string(b[100:110]))
	assert.Equal(t, string(vals[1]), string(b[400:900]))
	isCode(t, reader.Remove(keys[0], false), mooncake.ErrObjectHasLease, "the lookup took a lease")
	res, err = reader.GetIntoRanges([]mooncake.KeyRanges{{Key: keys[0], Ranges: []mooncake.Range{
		{Addr: uintptr(unsafe.Pointer(&unreg[0])), Offset: 0, Size: 8}}}}, res)
	require.NoError(t, err)
	assert.Equal(t, []int64{inv}, res, "memory not registered")
}
