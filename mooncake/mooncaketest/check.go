package mooncaketest

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"testing"
)

// The conformance suite checks with these two values, shaped like testify's
// assert and require packages so that the suite reads the usual way, but
// without making every importer of this package depend on testify:
// assert reports a failure and goes on, require stops the test.
var (
	assert  = checker{}
	require = checker{fatal: true}
)

type checker struct{ fatal bool }

// fail reports a failed check with the caller's message and returns false.
func (c checker) fail(t testing.TB, what string, msgAndArgs []any) bool {
	t.Helper()
	if m := message(msgAndArgs); m != "" {
		what += ": " + m
	}
	if c.fatal {
		t.Fatal(what)
	} else {
		t.Error(what)
	}
	return false
}

func message(msgAndArgs []any) string {
	switch {
	case len(msgAndArgs) == 0:
		return ""
	case len(msgAndArgs) > 1:
		if f, ok := msgAndArgs[0].(string); ok {
			return fmt.Sprintf(f, msgAndArgs[1:]...)
		}
	}
	return fmt.Sprint(msgAndArgs...)
}

func (c checker) NoError(t testing.TB, err error, msgAndArgs ...any) bool {
	t.Helper()
	if err != nil {
		return c.fail(t, fmt.Sprintf("unexpected error: %v", err), msgAndArgs)
	}
	return true
}

func (c checker) Error(t testing.TB, err error, msgAndArgs ...any) bool {
	t.Helper()
	if err == nil {
		return c.fail(t, "expected an error, got nil", msgAndArgs)
	}
	return true
}

func (c checker) Errorf(t testing.TB, err error, format string, args ...any) bool {
	t.Helper()
	return c.Error(t, err, append([]any{format}, args...)...)
}

func (c checker) ErrorAs(t testing.TB, err error, target any, msgAndArgs ...any) bool {
	t.Helper()
	if !errors.As(err, target) {
		return c.fail(t, fmt.Sprintf("error %v is not a %T", err, target), msgAndArgs)
	}
	return true
}

func (c checker) ErrorIs(t testing.TB, err, target error, msgAndArgs ...any) bool {
	t.Helper()
	if !errors.Is(err, target) {
		return c.fail(t, fmt.Sprintf("error %v is not %v", err, target), msgAndArgs)
	}
	return true
}

func (c checker) True(t testing.TB, v bool, msgAndArgs ...any) bool {
	t.Helper()
	if !v {
		return c.fail(t, "should be true", msgAndArgs)
	}
	return true
}

func (c checker) Truef(t testing.TB, v bool, format string, args ...any) bool {
	t.Helper()
	return c.True(t, v, append([]any{format}, args...)...)
}

func (c checker) False(t testing.TB, v bool, msgAndArgs ...any) bool {
	t.Helper()
	if v {
		return c.fail(t, "should be false", msgAndArgs)
	}
	return true
}

// Equal compares with reflect.DeepEqual ([]byte with bytes.Equal).
func (c checker) Equal(t testing.TB, want, got any, msgAndArgs ...any) bool {
	t.Helper()
	if !equal(want, got) {
		return c.fail(t, fmt.Sprintf("not equal:\n\twant %#v\n\tgot  %#v", want, got), msgAndArgs)
	}
	return true
}

func (c checker) NotEqual(t testing.TB, a, b any, msgAndArgs ...any) bool {
	t.Helper()
	if equal(a, b) {
		return c.fail(t, fmt.Sprintf("should differ: %#v", a), msgAndArgs)
	}
	return true
}

// EqualValues is Equal after converting numbers of any type to a common one.
func (c checker) EqualValues(t testing.TB, want, got any, msgAndArgs ...any) bool {
	t.Helper()
	if !equal(want, got) {
		w, wok := integer(want)
		g, gok := integer(got)
		if !wok || !gok || w.Cmp(g) != 0 {
			return c.fail(t, fmt.Sprintf("not equal:\n\twant %v (%T)\n\tgot  %v (%T)", want, want, got, got), msgAndArgs)
		}
	}
	return true
}

func (c checker) EqualValuesf(t testing.TB, want, got any, format string, args ...any) bool {
	t.Helper()
	return c.EqualValues(t, want, got, append([]any{format}, args...)...)
}

func (c checker) Len(t testing.TB, v any, n int, msgAndArgs ...any) bool {
	t.Helper()
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map, reflect.String, reflect.Chan:
		if rv.Len() == n {
			return true
		}
		return c.fail(t, fmt.Sprintf("length %d, want %d", rv.Len(), n), msgAndArgs)
	}
	return c.fail(t, fmt.Sprintf("%T has no length", v), msgAndArgs)
}

func (c checker) Empty(t testing.TB, v any, msgAndArgs ...any) bool {
	t.Helper()
	if !isEmpty(v) {
		return c.fail(t, fmt.Sprintf("should be empty: %#v", v), msgAndArgs)
	}
	return true
}

func (c checker) NotEmpty(t testing.TB, v any, msgAndArgs ...any) bool {
	t.Helper()
	if isEmpty(v) {
		return c.fail(t, "should not be empty", msgAndArgs)
	}
	return true
}

func (c checker) Nil(t testing.TB, v any, msgAndArgs ...any) bool {
	t.Helper()
	if !isNil(v) {
		return c.fail(t, fmt.Sprintf("should be nil: %#v", v), msgAndArgs)
	}
	return true
}

func (c checker) NotNil(t testing.TB, v any, msgAndArgs ...any) bool {
	t.Helper()
	if isNil(v) {
		return c.fail(t, "should not be nil", msgAndArgs)
	}
	return true
}

func (c checker) Zero(t testing.TB, v any, msgAndArgs ...any) bool {
	t.Helper()
	if v != nil && !reflect.ValueOf(v).IsZero() {
		return c.fail(t, fmt.Sprintf("should be zero: %#v", v), msgAndArgs)
	}
	return true
}

func (c checker) Positive(t testing.TB, v any, msgAndArgs ...any) bool {
	t.Helper()
	if n, ok := number(v); !ok || n <= 0 {
		return c.fail(t, fmt.Sprintf("should be positive: %v", v), msgAndArgs)
	}
	return true
}

func (c checker) Less(t testing.TB, a, b any, msgAndArgs ...any) bool {
	t.Helper()
	x, xok := number(a)
	y, yok := number(b)
	if !xok || !yok || !(x < y) {
		return c.fail(t, fmt.Sprintf("%v should be less than %v", a, b), msgAndArgs)
	}
	return true
}

func (c checker) Contains(t testing.TB, s, sub string, msgAndArgs ...any) bool {
	t.Helper()
	if !strings.Contains(s, sub) {
		return c.fail(t, fmt.Sprintf("%q does not contain %q", s, sub), msgAndArgs)
	}
	return true
}

// Same reports whether two pointers are the same.
func (c checker) Same(t testing.TB, a, b any, msgAndArgs ...any) bool {
	t.Helper()
	ra, rb := reflect.ValueOf(a), reflect.ValueOf(b)
	if ra.Kind() != reflect.Pointer || rb.Kind() != reflect.Pointer || ra.Type() != rb.Type() || ra.Pointer() != rb.Pointer() {
		return c.fail(t, fmt.Sprintf("not the same pointer: %p and %p", a, b), msgAndArgs)
	}
	return true
}

func equal(a, b any) bool {
	if x, ok := a.([]byte); ok {
		if y, ok := b.([]byte); ok {
			return bytes.Equal(x, y)
		}
	}
	return reflect.DeepEqual(a, b)
}

// number converts any integer or float to a float64 that is exact for the
// values the suite compares (codes, sizes and counts well below 2^53).
func number(v any) (float64, bool) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	}
	return 0, false
}

// integer converts any integer exactly.
func integer(v any) (*big.Int, bool) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return big.NewInt(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return new(big.Int).SetUint64(rv.Uint()), true
	}
	return nil, false
}

func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.Func, reflect.Chan:
		return rv.IsNil()
	}
	return false
}

func isEmpty(v any) bool {
	if isNil(v) {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map, reflect.String, reflect.Chan:
		return rv.Len() == 0
	}
	return rv.IsZero()
}
