//go:build cgo && !mooncake_native

package cabi

// The embedded backend, all of it: the dispatch table (dispatch_gen.c) is
// filled with its functions, store and transfer engine alike, whichever
// of the APIs a program uses.
import (
	_ "github.com/mooncake-go/mooncake-go/cgo/embedded/base"
	_ "github.com/mooncake-go/mooncake-go/cgo/embedded/store"
	_ "github.com/mooncake-go/mooncake-go/cgo/embedded/transfer"
)

// linkedYields is false for the embedded backend: its calls run on the
// calling thread and never wait for another one.
const linkedYields = false
