//go:build cgo && !mooncake_native

package cabi

import _ "github.com/mooncake-go/mooncake-go/cgo/embedded/base" // the embedded backend

// YieldAfterCalls is false for the embedded backend: its calls run on the
// calling thread and never wait for another one. Without cgo it is false
// too: there are no native calls.
//
//nocgo:value false
const YieldAfterCalls = false
