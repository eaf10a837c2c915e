//go:build !cgo

package cabi

// Without cgo no backend is linked: the identity calls say so, and every
// call of the subpackages fails with CodeNoCgo.

func BackendABIVersion() uint32 { return ABIVersion }
func BackendName() string       { return "none (built without cgo)" }
func UpstreamCommit() string    { return "" }

// SetLog does nothing without cgo.
func SetLog(int32, string) int32 { return CodeNoCgo }

// YieldAfterCalls is false: without cgo there are no native calls.
const YieldAfterCalls = false
