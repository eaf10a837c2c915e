package transfer_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
)

// TestNilAndZeroValues calls every exported method of *Engine, *Batch and
// *Segment on a nil pointer and on a zero value, with zero arguments (a
// live context where one is taken): none may panic, and every error is a
// closed engine (ErrClosed), an invalid handle (ErrInvalidHandle: a batch
// or segment the engine did not make) or an argument refused
// (ErrInvalidArgument), as the store's nil and zero values promise.
func TestNilAndZeroValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		min  int // methods the type has at least, so that none is missed silently
	}{
		{"nil Engine", (*transfer.Engine)(nil), 20},
		{"zero Engine", &transfer.Engine{}, 20},
		{"nil Batch", (*transfer.Batch)(nil), 8},
		{"zero Batch", &transfer.Batch{}, 8},
		{"nil Segment", (*transfer.Segment)(nil), 6},
		{"zero Segment", &transfer.Segment{}, 6},
	} {
		if n := callEvery(t, tc.name, reflect.ValueOf(tc.v)); n < tc.min {
			t.Errorf("%s: only %d methods called, want at least %d", tc.name, n, tc.min)
		}
	}
}

func callEvery(t *testing.T, name string, v reflect.Value) int {
	errType := reflect.TypeOf((*error)(nil)).Elem()
	ctxType := reflect.TypeOf((*context.Context)(nil)).Elem()
	typ := v.Type()
	for i := 0; i < typ.NumMethod(); i++ {
		m := typ.Method(i)
		t.Run(name+"/"+m.Name, func(t *testing.T) {
			args := make([]reflect.Value, m.Type.NumIn()-1)
			for j := range args {
				in := m.Type.In(j + 1)
				if in == ctxType {
					args[j] = reflect.ValueOf(context.Background())
					continue
				}
				args[j] = reflect.Zero(in)
			}
			if m.Name == "Transfer" || m.Name == "TransferNotify" || m.Name == "Submit" || m.Name == "SubmitNotify" {
				// One request, so that the call gets past "nothing to do".
				args[len(args)-1-btoi(m.Name == "TransferNotify" || m.Name == "SubmitNotify")] = reflect.ValueOf([]transfer.Request{{}})
			}
			var out []reflect.Value
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic: %v", r)
					}
				}()
				out = v.Method(i).Call(args)
			}()
			for _, o := range out {
				if o.Type() != errType || o.IsNil() {
					continue
				}
				err := o.Interface().(error)
				if !errors.Is(err, transfer.ErrClosed) && !errors.Is(err, transfer.ErrInvalidHandle) && !errors.Is(err, transfer.ErrInvalidArgument) {
					t.Errorf("%v, want ErrClosed, ErrInvalidHandle or ErrInvalidArgument", err)
				}
			}
		})
	}
	return typ.NumMethod()
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
