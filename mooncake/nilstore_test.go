package mooncake_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake"
)

// TestNilAndZeroStore calls every method of *Store, and of its Raw level,
// on a nil *Store and on a zero Store with zero arguments: none may panic,
// and every error returned is ErrClosed (a store that was never opened is
// a closed one).
func TestNilAndZeroStore(t *testing.T) {
	for name, s := range map[string]*mooncake.Store{"nil": nil, "zero": {}} {
		n := callEveryMethod(t, name, reflect.ValueOf(s))
		if n < 40 {
			t.Errorf("%s: only %d methods of *Store called", name, n)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("%s: Raw panics: %v", name, r)
				}
			}()
			if n := callEveryMethod(t, name+"/Raw", reflect.ValueOf(s.Raw())); n != 9 {
				t.Errorf("%s: %d methods of Raw called, want its 9", name, n)
			}
		}()
	}
}

// callEveryMethod calls each method of v with zero arguments as a subtest
// and returns how many it called.
func callEveryMethod(t *testing.T, name string, v reflect.Value) int {
	errType := reflect.TypeOf((*error)(nil)).Elem()
	typ := v.Type()
	for i := 0; i < typ.NumMethod(); i++ {
		m := typ.Method(i)
		t.Run(name+"/"+m.Name, func(t *testing.T) {
			args := make([]reflect.Value, m.Type.NumIn()-1)
			for j := range args {
				args[j] = reflect.Zero(m.Type.In(j + 1))
			}
			var out []reflect.Value
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic: %v", r)
					}
				}()
				if m.Type.IsVariadic() {
					out = v.Method(i).CallSlice(args)
				} else {
					out = v.Method(i).Call(args)
				}
			}()
			for _, o := range out {
				if o.Type() != errType || o.IsNil() {
					continue
				}
				err := o.Interface().(error)
				// Close of a never-opened store is a no-op; argument
				// errors may come first for zero arguments.
				var me *mooncake.Error
				if !errors.Is(err, mooncake.ErrClosed) && !(errors.As(err, &me) && me.Code == mooncake.ErrInvalidParams) {
					t.Errorf("%s: %v, want ErrClosed", m.Name, err)
				}
			}
		})
	}
	return typ.NumMethod()
}
