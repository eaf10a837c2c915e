//go:build cgo && !mooncake_native

package store

// #cgo CXXFLAGS: -std=c++17 -O2 -I${SRCDIR}/../.. -I${SRCDIR}/../../include
import "C"

// The store engine uses the shared regions and object memory.
import _ "github.com/mooncake-go/mooncake-go/cgo/embedded/base"
