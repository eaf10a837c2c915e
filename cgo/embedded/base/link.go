//go:build cgo && !mooncake_native

package base

// The version check is here so that this file changes with every ABI
// version: the go command does not hash headers outside a package's
// directory, and without it a cached object would report the old version.

/*
#cgo CFLAGS: -I${SRCDIR}/../../include
#cgo CXXFLAGS: -std=c++17 -O2 -I${SRCDIR}/../.. -I${SRCDIR}/../../include
#include "mcgo/common.h"
#if MCGO_ABI_VERSION != 8
#error "cgo/include/mcgo/common.h changed its ABI version: update this check and internal/cabi (abi.go, identity.go)"
#endif
*/
import "C"
