package mooncake

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mooncake-go/mooncake-go/internal/codes"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

func TestErrorCodeNames(t *testing.T) {
	assert.Equal(t, "OBJECT_NOT_FOUND", ErrObjectNotFound.String())
	assert.Equal(t, "OBJECT_NOT_FOUND (-704)", ErrObjectNotFound.Error())
	assert.Equal(t, "ErrorCode(-42)", ErrorCode(-42).String())
	assert.False(t, ErrorCode(-42).Known())
	table := codes.StoreTable()
	assert.Len(t, table, 72, "every value of upstream's ErrorCode enum")
	for _, e := range table {
		c := ErrorCode(e.Value)
		assert.True(t, c.Known())
		assert.Equal(t, e.Upstream, c.String())
		assert.LessOrEqual(t, int(c), 0)
	}
}

func TestErrorIs(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", &Error{Op: OpGet, Key: "k1", Code: ErrObjectNotFound})
	assert.True(t, errors.Is(err, ErrObjectNotFound))
	assert.False(t, errors.Is(err, ErrInvalidParams))
	assert.False(t, errors.Is(err, ErrClosed))
	var me *Error
	require.True(t, errors.As(err, &me))
	assert.Equal(t, "k1", me.Key)
	assert.Equal(t, `wrapped: mooncake: get "k1": OBJECT_NOT_FOUND (-704)`, err.Error())

	closed := &Error{Op: OpPut, Key: "k", Err: ErrClosed}
	assert.True(t, errors.Is(closed, ErrClosed))
	assert.False(t, errors.Is(closed, CodeOK), "a Go-side error matches no code")
	assert.Equal(t, `mooncake: put "k": store is closed`, closed.Error())

	both := &Error{Op: OpOpen, Code: ErrInvalidParams, Err: errors.New("config: protocol")}
	assert.True(t, errors.Is(both, ErrInvalidParams))
	assert.Equal(t, "mooncake: setup: config: protocol: INVALID_PARAMS (-600)", both.Error())
}

func TestResultErrors(t *testing.T) {
	assert.NoError(t, ResultError(OpBatchGetInto, "k", 0))
	assert.NoError(t, ResultError(OpBatchGetInto, "k", 4096))
	err := ResultError(OpBatchGetInto, "k", -704)
	assert.True(t, errors.Is(err, ErrObjectNotFound))
	assert.ErrorContains(t, err, `"k"`)
	assert.True(t, errors.Is(ResultError(OpBatchGetInto, "k", -1<<40), ErrInternalError), "out-of-range codes do not wrap around")

	assert.NoError(t, BatchResultError(OpBatchPutFrom, []string{"a", "b"}, []int64{0, 0}))
	okKeys, okRes, packed := []string{"a", "b"}, []int64{0, 5}, hostmem.PackKeys("a", "b")
	assert.Zero(t, testing.AllocsPerRun(10, func() {
		_ = BatchResultError(OpBatchGetInto, okKeys, okRes)
		_ = BatchKeysError(OpBatchGetInto, packed, okRes)
	}), "no allocation when every key succeeded")
	assert.ErrorContains(t, BatchKeysError(OpBatchGetInto, packed, []int64{0, -704}), `"b"`)
	keys := []string{"a", "b", "c", "d", "e", "f"}
	err = BatchResultError(OpBatchPutFrom, keys, []int64{0, -200, 0, -600, -600, -600})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrNoAvailableHandle))
	assert.True(t, errors.Is(err, ErrInvalidParams))
	assert.False(t, errors.Is(err, ErrObjectNotFound))
	var be *BatchError
	require.True(t, errors.As(err, &be))
	assert.Len(t, be.Failed, 4)
	assert.Equal(t, "b", be.Failed[0].Key)
	assert.Equal(t, `mooncake: batch_put_from: 4 of 6 keys failed; "b": NO_AVAILABLE_HANDLE (-200); "d": INVALID_PARAMS (-600); "e": INVALID_PARAMS (-600); ...`, err.Error())
}

func TestBatchResultErrorNoAlloc(t *testing.T) {
	keys := []string{"a", "b"}
	res := []int64{0, 7}
	allocs := testing.AllocsPerRun(100, func() {
		if BatchResultError(OpBatchGetInto, keys, res) != nil {
			t.Fatal("unexpected error")
		}
	})
	assert.Zero(t, allocs)
}
