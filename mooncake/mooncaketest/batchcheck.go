package mooncaketest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake"
)

// checkBatch checks the outcome of a batch call that crossed: res has one
// entry per key of keys, and err is nil when every entry is >= 0, else a
// *mooncake.BatchError of op whose Total is len(res) and whose Failed names
// exactly the keys with a negative entry, in key order, each with its
// entry's code and op. It returns the *BatchError (nil when nothing
// failed), so the caller can go on to check particular codes.
func checkBatch(t testing.TB, op mooncake.Op, keys []string, res []int64, err error, msgAndArgs ...any) *mooncake.BatchError {
	t.Helper()
	what := message(msgAndArgs)
	if what != "" {
		what += ": "
	}
	if len(res) != len(keys) {
		t.Fatalf("%s%s: %d results for %d keys (err %v)", what, op, len(res), len(keys), err)
		return nil
	}
	var want []int
	for i, r := range res {
		if r < 0 {
			want = append(want, i)
		}
	}
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("%s%s: every key succeeded (%v), yet the call failed: %v", what, op, res, err)
		}
		return nil
	}
	var be *mooncake.BatchError
	if !errors.As(err, &be) {
		t.Fatalf("%s%s: keys %v failed (%v), want a *mooncake.BatchError, got %v", what, op, want, res, err)
		return nil
	}
	if be.Op != op || be.Total != len(res) {
		t.Errorf("%s%s: BatchError{Op: %s, Total: %d}, want Op %s, Total %d", what, op, be.Op, be.Total, op, len(res))
	}
	if len(be.Failed) != len(want) {
		t.Fatalf("%s%s: BatchError names %d keys (%v), want %d: %v", what, op, len(be.Failed), be, len(want), res)
		return be
	}
	for j, i := range want {
		f := be.Failed[j]
		if f.Key != keys[i] || f.Op != op || int64(f.Code) != res[i] {
			t.Errorf("%s%s: failed key %d is {%s %q %v}, want {%s %q %v}", what, op, j, f.Op, f.Key, f.Code, op, keys[i], mooncake.ErrorCode(res[i]))
		}
		if !errors.Is(err, f.Code) {
			t.Errorf("%s%s: errors.Is(err, %v) is false though key %q failed with it", what, op, f.Code, f.Key)
		}
	}
	// A *BatchError is not an *Error: errors.As(err, &*Error) means a
	// call that failed as a whole.
	var whole *mooncake.Error
	if errors.As(err, &whole) {
		t.Errorf("%s%s: errors.As finds an *Error (%v) in a batch whose keys failed", what, op, whole)
	}
	return be
}

// checkFailed is checkBatch for a call some of whose keys must fail: it
// also checks that those are exactly the keys at failedAt.
func checkFailed(t testing.TB, op mooncake.Op, keys []string, res []int64, err error, failedAt []int, msgAndArgs ...any) *mooncake.BatchError {
	t.Helper()
	be := checkBatch(t, op, keys, res, err, msgAndArgs...)
	var got []int
	for i, r := range res {
		if r < 0 {
			got = append(got, i)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(failedAt) {
		t.Errorf("%s: keys %v failed (%v), want %v: %s", op, got, res, failedAt, message(msgAndArgs))
	}
	return be
}

// checkRefused checks a batch call refused as a whole: no results, and an
// *mooncake.Error of op with code (not a *BatchError).
func checkRefused(t testing.TB, op mooncake.Op, res []int64, err error, code mooncake.ErrorCode, msgAndArgs ...any) {
	t.Helper()
	what := message(msgAndArgs)
	isCode(t, err, code, what)
	assert.Nil(t, res, "a refused call has no results: "+what)
	var be *mooncake.BatchError
	assert.False(t, errors.As(err, &be), fmt.Sprintf("a refused call is no *BatchError: %v: %s", err, what))
	var me *mooncake.Error
	if require.ErrorAs(t, err, &me, what) {
		assert.Equal(t, op, me.Op, what)
	}
}

// rangeKeys are the keys of reqs' ranges, one per range: the keys of
// get_into_ranges' results.
func rangeKeys(reqs []mooncake.KeyRanges) []string {
	var out []string
	for _, rq := range reqs {
		for range rq.Ranges {
			out = append(out, rq.Key)
		}
	}
	return out
}

// reqKeys are the keys of reqs, one per request: the keys of a session's
// ReadRanges and WriteRanges results.
func reqKeys(reqs []mooncake.KeyRanges) []string {
	out := make([]string, len(reqs))
	for i, rq := range reqs {
		out[i] = rq.Key
	}
	return out
}
