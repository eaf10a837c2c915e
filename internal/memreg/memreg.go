// Package memreg lets the packages that register host memory (mooncake,
// mooncake/transfer, hostcache) record each registration in the
// hostmem.Memory it covers, so that Free refuses memory an engine may
// still touch, without giving users of hostmem a way to unbalance the
// count. Package hostmem installs the two functions when it is
// initialised; every caller imports hostmem, so they are set before use.
package memreg

// Mark records one registration of m (a *hostmem.Memory); it fails with
// hostmem.ErrFreed on freed memory. Whoever calls it calls Unmark exactly
// once when the registration ends.
func Mark(m any) error { return mark(m) }

// Unmark ends one registration recorded by Mark.
func Unmark(m any) { unmark(m) }

var (
	mark   func(any) error
	unmark func(any)
)

// Install is called once, by package hostmem.
func Install(markFn func(any) error, unmarkFn func(any)) {
	mark, unmark = markFn, unmarkFn
}
