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

// TestBatchErrors pins batchError, the one constructor of a batch call's
// per-key error (every batch call of Store, Raw and the sessions returns
// it beside the filled results).
func TestBatchErrors(t *testing.T) {
	one := func(key string, r int64) error {
		return batchError(OpBatchGetInto, []int64{r}, func(int) string { return key })
	}
	assert.NoError(t, one("k", 0))
	assert.NoError(t, one("k", 4096))
	err := one("k", -704)
	assert.True(t, errors.Is(err, ErrObjectNotFound))
	assert.ErrorContains(t, err, `"k"`)
	assert.True(t, errors.Is(one("k", -1<<40), ErrInternalError), "out-of-range codes do not wrap around")
	assert.True(t, errors.Is(codeErr(OpGetInto, "k", -1<<40), ErrInternalError), "nor in a single call's error")

	okRes, packed := []int64{0, 5}, hostmem.PackKeys("a", "b")
	assert.NoError(t, keysError(OpBatchPutFrom, packed, []int64{0, 0}))
	assert.Zero(t, testing.AllocsPerRun(10, func() {
		_ = keysError(OpBatchGetInto, packed, okRes)
		_, _ = batchResult(OpBatchGetInto, packed, 0, okRes)
	}), "no allocation when every key succeeded")
	assert.ErrorContains(t, keysError(OpBatchGetInto, packed, []int64{0, -704}), `"b"`)
	res, err := batchResult(OpBatchGetInto, packed, 0, []int64{0, -704})
	assert.Equal(t, []int64{0, -704}, res, "the results come back beside the error")
	assert.ErrorIs(t, err, ErrObjectNotFound)
	res, err = batchResult(OpBatchGetInto, packed, int32(ErrRPCFail), []int64{0, 0})
	assert.Nil(t, res, "a call refused as a whole has no results")
	var be *BatchError
	assert.False(t, errors.As(err, &be), "a refusal is no *BatchError: %v", err)
	assert.ErrorIs(t, err, ErrRPCFail)

	keys := hostmem.PackKeys("a", "b", "c", "d", "e", "f")
	err = keysError(OpBatchPutFrom, keys, []int64{0, -200, 0, -600, -600, -600})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrNoAvailableHandle))
	assert.True(t, errors.Is(err, ErrInvalidParams))
	assert.False(t, errors.Is(err, ErrObjectNotFound))
	require.True(t, errors.As(err, &be))
	assert.Equal(t, OpBatchPutFrom, be.Op)
	assert.Equal(t, 6, be.Total)
	require.Len(t, be.Failed, 4)
	for i, want := range []struct {
		key  string
		code ErrorCode
	}{{"b", ErrNoAvailableHandle}, {"d", ErrInvalidParams}, {"e", ErrInvalidParams}, {"f", ErrInvalidParams}} {
		assert.Equal(t, want.key, be.Failed[i].Key)
		assert.Equal(t, want.code, be.Failed[i].Code)
		assert.Equal(t, OpBatchPutFrom, be.Failed[i].Op, "each failed key's error names the call")
	}
	var me *Error
	assert.False(t, errors.As(err, &me), "a *BatchError is no *Error: that means a call failed as a whole")
	assert.Equal(t, `mooncake: batch_put_from: 4 of 6 failed; "b": NO_AVAILABLE_HANDLE (-200); "d": INVALID_PARAMS (-600); "e": INVALID_PARAMS (-600); ...`, err.Error())
	wrapped := fmt.Errorf("layer: %w", err)
	assert.True(t, errors.Is(wrapped, ErrNoAvailableHandle), "through a wrapping")
	assert.True(t, errors.As(wrapped, &be))
}

func TestBatchErrorNoAlloc(t *testing.T) {
	keys := hostmem.PackKeys("a", "b")
	res := []int64{0, 7}
	allocs := testing.AllocsPerRun(100, func() {
		if keysError(OpBatchGetInto, keys, res) != nil {
			t.Fatal("unexpected error")
		}
	})
	assert.Zero(t, allocs)
	failed := &BatchError{Op: OpBatchGetInto, Failed: []*Error{{Op: OpBatchGetInto, Key: "a", Code: ErrObjectNotFound}}, Total: 2}
	allocs = testing.AllocsPerRun(100, func() {
		if !failed.Is(ErrObjectNotFound) || failed.Is(ErrInvalidParams) {
			t.Fatal("BatchError.Is")
		}
	})
	assert.Zero(t, allocs, "BatchError.Is does not allocate")
}
