package mooncaketest

import (
	"context"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/mooncake"
)

// Copy and move tasks: refusals at creation, a copy onto another client's
// segment and a move off it, both run by the client holding the source and
// followed with WaitTask; the object reads back the same afterwards.
func testTasks(t *testing.T, c *Cluster) {
	a, b, d := c.Open(t), c.Open(t), c.Open(t)
	host := func(st *mooncake.Store) string {
		h, err := st.Hostname()
		require.NoError(t, err)
		return h
	}
	ha, hb, hd := host(a), host(b), host(d)
	k := Key(t, "obj")
	value := []byte("replicate me")
	require.NoError(t, a.WithReplicateConfig(mooncake.ReplicateConfig{PreferredSegments: []string{ha}}).Put(k, value))
	locations := func() []string {
		t.Helper()
		reps, err := b.GetReplicaDesc(k)
		require.NoError(t, err)
		var out []string
		for _, r := range reps {
			out = append(out, r.Location)
		}
		return out
	}
	require.Equal(t, []string{ha}, locations())

	for _, tc := range []struct {
		name string
		call func() error
		code mooncake.ErrorCode
	}{
		{"copy to no target", func() error { _, err := b.CreateCopyTask(k, nil); return err }, mooncake.ErrInvalidParams},
		{"copy to a target twice", func() error { _, err := b.CreateCopyTask(k, []string{hb, hd, hb}); return err }, mooncake.ErrInvalidParams},
		{"copy to 10,000 targets", func() error {
			many := make([]string, 10000)
			for i := range many {
				many[i] = hb
			}
			_, err := b.CreateCopyTask(k, many)
			return err
		}, mooncake.ErrInvalidParams},
		{"copy to a segment not mounted", func() error { _, err := b.CreateCopyTask(k, []string{"127.0.0.1:1"}); return err }, mooncake.ErrInvalidParams},
		{"copy of a missing object", func() error { _, err := b.CreateCopyTask(Key(t, "missing"), []string{hb}); return err }, mooncake.ErrObjectNotFound},
		{"move onto its source", func() error { _, err := b.CreateMoveTask(k, ha, ha); return err }, mooncake.ErrInvalidParams},
		{"move from a segment without a replica", func() error { _, err := b.CreateMoveTask(k, hb, ha); return err }, mooncake.ErrInvalidParams},
		{"query an unknown task", func() error { _, err := b.QueryTask(mooncake.TaskID{First: 1, Second: 2}); return err }, mooncake.ErrTaskNotFound},
	} {
		isCode(t, tc.call(), tc.code, tc.name)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	id, err := b.CreateCopyTask(k, []string{hb})
	require.NoError(t, err)
	info, err := b.WaitTask(ctx, id, 20*time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, id, info.ID)
	assert.Equal(t, mooncake.TaskCopy, info.Type)
	assert.Equal(t, mooncake.TaskSucceeded, info.Status)
	assert.False(t, info.Created.IsZero() || info.Updated.Before(info.Created), "timestamps")
	t.Logf("copy task done after %v (%q)", time.Since(start).Round(time.Millisecond), info.Message)
	assert.Equal(t, []string{ha, hb}, locations())

	start = time.Now()
	id, err = a.CreateMoveTask(k, hb, hd)
	require.NoError(t, err)
	info, err = a.WaitTask(ctx, id, 20*time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, mooncake.TaskMove, info.Type)
	t.Logf("move task done after %v", time.Since(start).Round(time.Millisecond))
	got := locations()
	assert.True(t, len(got) == 2 && got[0] != got[1], "two replicas: %v", got)
	for _, h := range got {
		assert.True(t, h == ha || h == hd, "replica on %s: want %s and %s only", h, ha, hd)
	}
	v, err := d.Get(k)
	require.NoError(t, err)
	assert.Equal(t, value, v)
}
