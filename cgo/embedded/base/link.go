//go:build cgo && !mooncake_native

package base

// #cgo CXXFLAGS: -std=c++17 -O2 -I${SRCDIR}/../.. -I${SRCDIR}/../../include
import "C"
