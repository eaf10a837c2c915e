//go:build !linux

package hostmem

// MadvHugePage is 0 outside Linux: no transparent huge pages.
const MadvHugePage = 0

// Populate does nothing outside Linux (pages fault in on first touch).
func Populate([]byte) {}
