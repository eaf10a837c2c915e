// Package cabi is the Go side of mooncake-go's C ABI (cgo/include/mcgo):
// what every part shares. It reports which backend is linked and checks
// its ABI version, and it holds the Gate every Go handle uses to admit
// calls into C. The per-part declarations live in subpackages (cstore for
// the store); only they and this package import "C".
//
// Nothing here is meant for applications: use package
// github.com/mooncake-go/mooncake-go/mooncake.
//
// Build modes:
//
//	default                 the embedded backend, compiled from cgo/embedded
//	-tags mooncake_native   links libmcgo_native (make native)
//	CGO_ENABLED=0           every call fails with CodeNoCgo; pure-Go packages still work
//
// The no-cgo stubs (nocgo_gen.go here and in the subpackages) are generated
// from the cgo declarations: run go generate ./internal/cabi after changing
// one (see internal/cabi/gen for the rules and the //nocgo: directives).
package cabi

//go:generate go run ./gen
