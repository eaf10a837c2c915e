//go:build cgo && !mooncake_native

package mcgo

// The embedded engine is compiled from the engine_*.cc files in this
// directory.

// #cgo CXXFLAGS: -std=c++17 -O2
import "C"
