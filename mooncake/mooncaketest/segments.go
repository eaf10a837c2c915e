package mooncaketest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// Segments mounted while the store runs: allocated memory and a file's
// range, placement onto them, misuse, unmount at once (the objects on them
// go) and after a grace period (readable until then, no new replicas).
func testSegments(t *testing.T, c *Cluster) {
	node := c.Open(t, func(cfg *mooncake.Config) { cfg.GlobalSegmentSize = 0 })
	host, err := node.Hostname()
	require.NoError(t, err)
	writer := c.Open(t)
	onNode := writer.WithReplicateConfig(mooncake.ReplicateConfig{PreferredSegments: []string{host}})
	value := bytes.Repeat([]byte("seg"), 1500)
	locationOf := func(key string) string {
		t.Helper()
		reps, err := writer.GetReplicaDesc(key)
		require.NoError(t, err)
		require.Len(t, reps, 1)
		return reps[0].Location
	}

	ids, size, err := node.AllocateAndMountSegment(1, mooncake.MountOptions{})
	require.NoError(t, err)
	require.Len(t, ids, 1)
	assert.Equal(t, uint64(mooncake.SegmentSlabSize), size, "rounded up to one slab")
	back, err := mooncake.ParseSegmentID(ids[0].String())
	require.NoError(t, err)
	assert.Equal(t, ids[0], back)
	onAlloc := Key(t, "on-allocated")
	require.NoError(t, onNode.Put(onAlloc, value))
	assert.Equal(t, host, locationOf(onAlloc), "placed on the mounted segment")

	for _, tc := range []struct {
		name string
		err  error
	}{
		{"the other kind of unmount", node.UnmountSegments(ids, 0)},
		{"an id nobody mounted", node.UnmountAndFreeSegments([]mooncake.SegmentID{{First: 1, Second: 2}}, 0)},
		{"another client's segment", writer.UnmountAndFreeSegments(ids, 0)},
		{"a negative grace period", node.UnmountAndFreeSegments(ids, -time.Second)},
	} {
		isCode(t, tc.err, mooncake.ErrInvalidParams, tc.name)
	}
	var me *mooncake.Error
	require.ErrorAs(t, node.UnmountSegments(ids, 0), &me)
	assert.Equal(t, ids[0].String(), me.Key, "the error names the segment")
	assert.Equal(t, mooncake.OpUnmountSegment, me.Op)
	for _, tc := range []struct {
		name string
		size uint64
		opt  mooncake.MountOptions
	}{
		{"size 0", 0, mooncake.MountOptions{}},
		{"size overflows when rounded", ^uint64(0), mooncake.MountOptions{}},
		{"unknown protocol", 1, mooncake.MountOptions{Protocol: "carrier-pigeon"}},
		{"NUL in location", 1, mooncake.MountOptions{Location: "cpu:0\x00x"}},
	} {
		_, _, err := node.AllocateAndMountSegment(tc.size, tc.opt)
		isCode(t, err, mooncake.ErrInvalidParams, tc.name)
	}
	// More than a process can map is a size error, not upstream's
	// INTERNAL_ERROR of a failed allocation.
	_, _, err = node.AllocateAndMountSegment(1<<62, mooncake.MountOptions{})
	isCode(t, err, mooncake.ErrInvalidParams, "2^62 bytes")
	assert.ErrorIs(t, err, mooncake.ErrInvalidSize, "2^62 bytes")

	require.NoError(t, node.UnmountAndFreeSegments(ids, 0))
	_, err = writer.Get(onAlloc)
	isCode(t, err, mooncake.ErrObjectNotFound, "its only replica was on the unmounted segment")
	isCode(t, node.UnmountAndFreeSegments(ids, 0), mooncake.ErrInvalidParams, "unmounted already")

	// A file's range.
	dir := t.TempDir()
	path := filepath.Join(dir, "segment")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(2*mooncake.SegmentSlabSize))
	require.NoError(t, f.Close())
	page := uint64(os.Getpagesize())
	for _, tc := range []struct {
		name         string
		path         string
		offset, size uint64
	}{
		{"missing file", filepath.Join(dir, "missing"), 0, mooncake.SegmentSlabSize},
		{"a directory", dir, 0, mooncake.SegmentSlabSize},
		{"offset not page-aligned", path, page / 2, mooncake.SegmentSlabSize},
		{"past the end", path, mooncake.SegmentSlabSize, mooncake.SegmentSlabSize + page},
		{"size 0", path, 0, 0},
		{"NUL in path", path + "\x00", 0, mooncake.SegmentSlabSize},
	} {
		_, err := node.MountSegment(tc.path, tc.offset, tc.size, mooncake.MountOptions{})
		isCode(t, err, mooncake.ErrInvalidParams, tc.name)
	}
	ids, err = node.MountSegment(path, mooncake.SegmentSlabSize, mooncake.SegmentSlabSize, mooncake.MountOptions{Protocol: "tcp"})
	require.NoError(t, err)
	require.Len(t, ids, 1)
	onFile := Key(t, "on-file")
	require.NoError(t, onNode.Put(onFile, value))
	assert.Equal(t, host, locationOf(onFile))

	// Gracefully: readable during the grace period, no new replicas, gone after.
	start := time.Now()
	require.NoError(t, node.UnmountSegments(ids, time.Second))
	got, err := writer.Get(onFile)
	require.NoError(t, err, "readable during the grace period")
	assert.Equal(t, value, got)
	late := Key(t, "late")
	if err := onNode.Put(late, value); err == nil {
		assert.NotEqual(t, host, locationOf(late), "a draining segment takes no new replica")
	} else {
		t.Logf("a put preferring the draining segment: %v", err)
	}
	for deadline := start.Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, err := writer.Get(onFile)
		if err != nil {
			isCode(t, err, mooncake.ErrObjectNotFound, "gone once the grace period is over")
			break
		}
		require.True(t, time.Now().Before(deadline), "still readable 20 s after a 1 s grace period")
	}
	assert.True(t, time.Since(start) >= time.Second, "gone before the grace period was over")
	t.Logf("objects on a segment unmounted with a 1 s grace period gone after %v", time.Since(start).Round(time.Millisecond))
	isCode(t, node.UnmountSegments(ids, 0), mooncake.ErrInvalidParams, "unmounted already")

	// No SSD offload here: the disk tier's calls have nothing to do (an
	// upstream without drainLocalDiskSegment, v0.3.12.post1, has no
	// UnmountLocalDiskSegment at all).
	start = time.Now()
	if mooncake.Backend().Capabilities.UnmountLocalDisk {
		require.NoError(t, node.UnmountLocalDiskSegment(time.Second))
	} else {
		require.True(t, c.Native, "the embedded engine has UnmountLocalDiskSegment")
		isCode(t, node.UnmountLocalDiskSegment(time.Second), mooncake.ErrNotSupported)
	}
	assert.True(t, time.Since(start) < 900*time.Millisecond, "no tier, so no grace period to wait out")
	n, err := node.OffloadRPCReadCount()
	require.NoError(t, err)
	assert.Equal(t, int64(0), n)
	isCode(t, node.UnmountLocalDiskSegment(-time.Second), mooncake.ErrInvalidParams)
}

// group_ids: members of a group share read leases; the group count must
// match the call's keys; an object's group cannot change. data_type is a
// label within 0..9.
func testGroupIDs(t *testing.T, c *Cluster) {
	st := c.Open(t)
	keys := Keys(t, "g", 3)
	group := "grp-" + keys[0]
	vals := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	require.NoError(t, st.WithReplicateConfig(mooncake.ReplicateConfig{GroupIDs: []string{group, group, ""}}).PutBatch(hostmem.PackKeys(keys...), vals))
	_, err := st.Get(keys[0])
	require.NoError(t, err)
	isCode(t, st.Remove(keys[1], false), mooncake.ErrObjectHasLease, "the lookup of one member leased the group")
	require.NoError(t, st.Remove(keys[2], false), "not in the group")

	two := Keys(t, "wrong", 2)
	err = st.WithReplicateConfig(mooncake.ReplicateConfig{GroupIDs: []string{group}}).PutBatch(hostmem.PackKeys(two...), vals[:2])
	isCode(t, err, mooncake.ErrInvalidParams, "one group for two keys")
	ok, err := st.IsExist(two[0])
	require.NoError(t, err)
	assert.False(t, ok, "nothing stored")
	one := Key(t, "one")
	require.NoError(t, st.WithReplicateConfig(mooncake.ReplicateConfig{GroupIDs: []string{group}}).Put(one, []byte("1")))
	isCode(t, st.WithReplicateConfig(mooncake.ReplicateConfig{GroupIDs: []string{"other"}}).Upsert(keys[0], []byte("A")),
		mooncake.ErrInvalidParams, "a group cannot change")
	require.NoError(t, st.WithReplicateConfig(mooncake.ReplicateConfig{GroupIDs: []string{group}}).Upsert(keys[0], []byte("A")))

	require.NoError(t, st.WithReplicateConfig(mooncake.ReplicateConfig{DataType: mooncake.DataKVCache}).Put(Key(t, "kv"), []byte("v")))
	isCode(t, st.WithReplicateConfig(mooncake.ReplicateConfig{DataType: 10}).Put(Key(t, "bad"), []byte("v")), mooncake.ErrInvalidParams)
}
