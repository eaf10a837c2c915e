//go:build !linux

package main

// physicalMemory is unknown here: only overflow is checked.
func physicalMemory() uint64 { return 0 }
