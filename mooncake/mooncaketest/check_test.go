package mooncaketest

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed, fatal bool
}

func (r *recorder) Helper()                           {}
func (r *recorder) Error(args ...any)                 { r.failed = true }
func (r *recorder) Fatal(args ...any)                 { r.failed, r.fatal = true, true }
func (r *recorder) Errorf(format string, args ...any) { r.failed = true }
func (r *recorder) Fatalf(format string, args ...any) { r.failed, r.fatal = true, true }

// TestChecker: every check the suite uses must fail on a wrong value and
// pass on a right one, or the suite could pass vacuously.
func TestChecker(t *testing.T) {
	x, y := new(int), new(int)
	var target codeErr
	cases := []struct {
		name      string
		pass, bad func(c checker, t testing.TB) bool
	}{
		{"NoError", func(c checker, t testing.TB) bool { return c.NoError(t, nil) }, func(c checker, t testing.TB) bool { return c.NoError(t, errors.New("x")) }},
		{"Error", func(c checker, t testing.TB) bool { return c.Error(t, errors.New("x")) }, func(c checker, t testing.TB) bool { return c.Error(t, nil) }},
		{"ErrorAs", func(c checker, t testing.TB) bool { return c.ErrorAs(t, codeErr{}, &target) }, func(c checker, t testing.TB) bool { return c.ErrorAs(t, errors.New("x"), &target) }},
		{"True", func(c checker, t testing.TB) bool { return c.True(t, true) }, func(c checker, t testing.TB) bool { return c.True(t, false) }},
		{"False", func(c checker, t testing.TB) bool { return c.False(t, false) }, func(c checker, t testing.TB) bool { return c.False(t, true) }},
		{"Equal", func(c checker, t testing.TB) bool { return c.Equal(t, []byte("a"), []byte("a")) }, func(c checker, t testing.TB) bool { return c.Equal(t, int64(1), 1) }},
		{"NotEqual", func(c checker, t testing.TB) bool { return c.NotEqual(t, 1, 2) }, func(c checker, t testing.TB) bool { return c.NotEqual(t, "a", "a") }},
		{"EqualValues", func(c checker, t testing.TB) bool { return c.EqualValues(t, int64(-704), int32(-704)) }, func(c checker, t testing.TB) bool { return c.EqualValues(t, ^uint64(0), uint64(1<<64-2)) }},
		{"Len", func(c checker, t testing.TB) bool { return c.Len(t, []int{1, 2}, 2) }, func(c checker, t testing.TB) bool { return c.Len(t, "abc", 2) }},
		{"Empty", func(c checker, t testing.TB) bool { return c.Empty(t, []int{}) }, func(c checker, t testing.TB) bool { return c.Empty(t, []int{1}) }},
		{"NotEmpty", func(c checker, t testing.TB) bool { return c.NotEmpty(t, "a") }, func(c checker, t testing.TB) bool { return c.NotEmpty(t, "") }},
		{"NotNil", func(c checker, t testing.TB) bool { return c.NotNil(t, x) }, func(c checker, t testing.TB) bool { return c.NotNil(t, (*int)(nil)) }},
		{"ErrorIs", func(c checker, t testing.TB) bool { return c.ErrorIs(t, fmt.Errorf("w: %w", io.EOF), io.EOF) }, func(c checker, t testing.TB) bool { return c.ErrorIs(t, errors.New("x"), io.EOF) }},
		{"Nil", func(c checker, t testing.TB) bool { return c.Nil(t, (*int)(nil)) }, func(c checker, t testing.TB) bool { return c.Nil(t, x) }},
		{"Zero", func(c checker, t testing.TB) bool { return c.Zero(t, 0) }, func(c checker, t testing.TB) bool { return c.Zero(t, 3) }},
		{"Positive", func(c checker, t testing.TB) bool { return c.Positive(t, int64(1)) }, func(c checker, t testing.TB) bool { return c.Positive(t, 0) }},
		{"Less", func(c checker, t testing.TB) bool { return c.Less(t, int64(-1), int64(0)) }, func(c checker, t testing.TB) bool { return c.Less(t, 0, 0) }},
		{"Contains", func(c checker, t testing.TB) bool { return c.Contains(t, "abc", "b") }, func(c checker, t testing.TB) bool { return c.Contains(t, "abc", "d") }},
		{"Same", func(c checker, t testing.TB) bool { return c.Same(t, x, x) }, func(c checker, t testing.TB) bool { return c.Same(t, x, y) }},
	}
	for _, tc := range cases {
		for _, c := range []checker{assert, require} {
			r := &recorder{TB: t}
			if !tc.pass(c, r) || r.failed {
				t.Errorf("%s (fatal=%v): a right value failed", tc.name, c.fatal)
			}
			r = &recorder{TB: t}
			if tc.bad(c, r) || !r.failed || r.fatal != c.fatal {
				t.Errorf("%s (fatal=%v): a wrong value passed or failed the wrong way (%+v)", tc.name, c.fatal, r)
			}
		}
	}
}

type codeErr struct{}

func (codeErr) Error() string { return "code" }

// TestCheckBatch: checkBatch, which every batch call of the suite goes
// through, must refuse each way an outcome can be wrong.
func TestCheckBatch(t *testing.T) {
	keys := []string{"a", "b", "c"}
	op := mooncake.OpBatchGetInto
	fail := func(i int, code mooncake.ErrorCode) *mooncake.Error {
		return &mooncake.Error{Op: op, Key: keys[i], Code: code}
	}
	nf := mooncake.ErrObjectNotFound
	res := []int64{5, int64(nf), 7}
	good := &mooncake.BatchError{Op: op, Total: 3, Failed: []*mooncake.Error{fail(1, nf)}}
	for _, tc := range []struct {
		name string
		res  []int64
		err  error
		ok   bool
	}{
		{"all succeeded", []int64{5, 6, 7}, nil, true},
		{"one failed", res, good, true},
		{"wrapped", res, fmt.Errorf("w: %w", good), true},
		{"no error though a key failed", res, nil, false},
		{"an error though every key succeeded", []int64{5, 6, 7}, good, false},
		{"a plain error", res, fail(1, nf), false},
		{"too few results", res[:2], good, false},
		{"no results", nil, fail(1, nf), false},
		{"wrong op", res, &mooncake.BatchError{Op: mooncake.OpBatchPutFrom, Total: 3, Failed: []*mooncake.Error{fail(1, nf)}}, false},
		{"wrong total", res, &mooncake.BatchError{Op: op, Total: 2, Failed: []*mooncake.Error{fail(1, nf)}}, false},
		{"wrong key", res, &mooncake.BatchError{Op: op, Total: 3, Failed: []*mooncake.Error{fail(2, nf)}}, false},
		{"wrong code", res, &mooncake.BatchError{Op: op, Total: 3, Failed: []*mooncake.Error{fail(1, mooncake.ErrInvalidParams)}}, false},
		{"a key too many", res, &mooncake.BatchError{Op: op, Total: 3, Failed: []*mooncake.Error{fail(1, nf), fail(2, nf)}}, false},
		{"key's op missing", res, &mooncake.BatchError{Op: op, Total: 3, Failed: []*mooncake.Error{{Key: "b", Code: nf}}}, false},
	} {
		r := &recorder{TB: t}
		checkBatch(r, op, keys, tc.res, tc.err)
		if r.failed == tc.ok {
			t.Errorf("%s: checkBatch failed=%v, want %v", tc.name, r.failed, !tc.ok)
		}
	}
	r := &recorder{TB: t}
	checkFailed(r, op, keys, res, good, []int{1})
	if r.failed {
		t.Error("checkFailed: the right key")
	}
	r = &recorder{TB: t}
	checkFailed(r, op, keys, res, good, []int{2})
	if !r.failed {
		t.Error("checkFailed: the wrong key passed")
	}
	r = &recorder{TB: t}
	checkFailed(r, op, keys, []int64{5, 6, 7}, nil, []int{1})
	if !r.failed {
		t.Error("checkFailed: nothing failed, yet a key should have")
	}
	refusal := &mooncake.Error{Op: op, Code: mooncake.ErrInvalidParams}
	for _, tc := range []struct {
		name string
		res  []int64
		err  error
		ok   bool
	}{
		{"refused", nil, refusal, true},
		{"results beside a refusal", []int64{0}, refusal, false},
		{"no error", nil, nil, false},
		{"a batch error", nil, &mooncake.BatchError{Op: op, Total: 1, Failed: []*mooncake.Error{{Op: op, Code: mooncake.ErrInvalidParams}}}, false},
		{"another op", nil, &mooncake.Error{Op: mooncake.OpBatchPutFrom, Code: mooncake.ErrInvalidParams}, false},
		{"another code", nil, &mooncake.Error{Op: op, Code: nf}, false},
	} {
		r := &recorder{TB: t}
		checkRefused(r, op, tc.res, tc.err, mooncake.ErrInvalidParams)
		if r.failed == tc.ok {
			t.Errorf("checkRefused %s: failed=%v, want %v", tc.name, r.failed, !tc.ok)
		}
	}
}
