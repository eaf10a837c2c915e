//go:build cgo && !mooncake_native

package mcgo

// The embedded engine is compiled from the engine_*.cc files in this
// directory.

// #cgo CXXFLAGS: -std=c++17 -O2
import "C"

// YieldAfterCalls is false for the embedded engine: its calls run on the
// calling thread and never wait for another one.
const YieldAfterCalls = false
