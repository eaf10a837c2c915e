//go:build !cgo

package cabi

import "fmt"

// linkedYields: without cgo there are no native calls.
const linkedYields = false

// loadLocked cannot load anything without cgo.
func loadLocked(path string, _ bool) error {
	return fmt.Errorf("%w: %s: built without cgo (CGO_ENABLED=0)", ErrNativeLibrary, path)
}
