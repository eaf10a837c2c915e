//go:build cgo && !mooncake_native

package transfer

// #cgo CXXFLAGS: -std=c++17 -O2 -I${SRCDIR}/../.. -I${SRCDIR}/../../include
// #cgo LDFLAGS: -lpthread
import "C"

// The engine uses the shared regions.
import _ "github.com/mooncake-go/mooncake-go/cgo/embedded/base"
