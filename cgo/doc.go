// Package mcgo is the one place where mooncake-go crosses into C.
//
// The directory holds our own C ABI header (mcgo.h), the embedded engine
// that implements it in-process (engine_*.cc, compiled by cgo in the default
// build), the native shim over upstream Mooncake (native/, built by CMake and
// linked with -tags mooncake_native), and the thin Go declarations in this
// package that call the header.
//
// Nothing here is meant for applications: use package
// github.com/mooncake-go/mooncake-go/mooncake. This package takes packed,
// pointer-free arguments (keys in one byte buffer plus offsets, addresses as
// uintptr arrays, multi-buffer lists in CSR form), makes exactly one cgo call
// per operation or batch, and never lets C keep a Go pointer.
//
// Build modes:
//
//	default                 embedded engine, compiled from this directory
//	-tags mooncake_native   links libmcgo_native (see the README: make native)
//	CGO_ENABLED=0           every call returns CodeNoCgo; hostcache still works
package mcgo
