//go:build !linux

package transfer

// osYield is a no-op where sched_yield is not wired: Wait then spins.
func osYield() {}
