//go:build cgo

package cabi

/*
#cgo CFLAGS: -I${SRCDIR}/../../cgo/include
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "dispatch_load.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// loadLocked opens the library, checks it and installs it (sel.mu held).
func loadLocked(path string, anyUpstream bool) error {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var t C.struct_mcgo_fns
	var msg [512]C.char
	switch rc := C.mcgo_dispatch_open(cpath, &t, &msg[0], C.size_t(len(msg))); rc {
	case 0:
	case C.MCGO_DISPATCH_ABI:
		return fmt.Errorf("%w: %s: %s", ErrNativeABI, path, C.GoString(&msg[0]))
	default:
		return fmt.Errorf("%w: %s: %s", ErrNativeLibrary, path, C.GoString(&msg[0]))
	}
	commit := C.GoString(C.mcgo_dispatch_upstream(&t))
	if _, ok := acceptedUpstream[commit]; !ok && !anyUpstream {
		return fmt.Errorf("%w: %s was built against upstream %q; tested: %s (accept it anyway with %s=1 or LoadNative's option)",
			ErrNativeUpstream, path, commit, acceptedList(), EnvNativeAnyUpstream)
	}
	C.mcgo_dispatch_install(&t)
	sel.path = path
	yields.Store(true) // a native backend's calls wait on upstream's threads
	return nil
}
