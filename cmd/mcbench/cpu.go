package main

import (
	"os"
	"strconv"
	"strings"
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

// loopbackBytes is what the host's loopback interface has received so far
// (/proc/net/dev; -1 where there is none). The drive runs one client at a
// time on a loopback cluster, so over a case's window it is that client's
// traffic and its master's: a few hundred bytes per key of RPC when the
// store copies objects in memory, the objects' own bytes when a transfer
// goes over TCP instead.
func loopbackBytes() int64 {
	data, err := os.ReadFile("/proc/net/dev")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || name != "lo" {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return -1
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return -1
		}
		return n
	}
	return -1
}

// loopbackSince is the loopback bytes since lo0 (-1 when unknown).
func loopbackSince(lo0 int64) int64 {
	if lo0 < 0 {
		return -1
	}
	if lo := loopbackBytes(); lo >= lo0 {
		return lo - lo0
	}
	return -1
}
