package mooncaketest

import (
	"errors"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed, fatal bool
}

func (r *recorder) Helper()           {}
func (r *recorder) Error(args ...any) { r.failed = true }
func (r *recorder) Fatal(args ...any) { r.failed, r.fatal = true, true }

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
