package main

import (
	"syscall"
	"time"
)

// procCPU is the process's CPU time so far, user plus system, over all its
// threads (getrusage RUSAGE_SELF): the client's goroutines and the store
// client's own threads alike, as the Python client counts its own.
func procCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
