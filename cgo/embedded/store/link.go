//go:build cgo && !mooncake_native

package store

// #cgo CXXFLAGS: -std=c++17 -O2 -I${SRCDIR}/../.. -I${SRCDIR}/../../include
import "C"

// The store uses the shared regions and object memory, and can run on a
// transfer engine.
import (
	_ "github.com/mooncake-go/mooncake-go/cgo/embedded/base"
	_ "github.com/mooncake-go/mooncake-go/cgo/embedded/transfer"
)
