//go:build mooncake_native

// Command floorhost runs the C floor (cgo/bench/mcbench_c.cc) inside a Go
// process, to tell what in a Go caller keeps it above the floor when many
// callers share the store. Its callers are goroutines locked to their
// threads, each entering C once for its whole life; with -tick, each of
// their requests is preceded by an empty callback into Go: the runtime's
// two crossings a Go caller pays per call, without any of its Go code.
// It takes mcbench_c's flags and speaks its serve protocol, so that
// `mcbench drive -c` runs it beside Go and the plain floor
// (make bench-floor-host).
package main

/*
#cgo CXXFLAGS: -std=c++17 -O2 -I${SRCDIR}/../../include
#cgo LDFLAGS: -lmcgo_native -lstdc++
int mcbench_c_main(int argc, char **argv);
void mcbench_c_call(void *fn, void *arg);
*/
import "C"

import (
	"os"
	"runtime"
	"unsafe"
)

// mcbench_c_spawn runs fn(arg) on a goroutine locked to its thread: a
// thread the Go runtime made and schedules.
//
//export mcbench_c_spawn
func mcbench_c_spawn(fn, arg unsafe.Pointer) {
	go func() {
		runtime.LockOSThread()
		C.mcbench_c_call(fn, arg)
	}()
}

// mcbench_c_tick is the empty callback of -tick.
//
//export mcbench_c_tick
func mcbench_c_tick() {}

func main() {
	argv := make([]*C.char, len(os.Args)+1)
	for i, a := range os.Args {
		argv[i] = C.CString(a) // lives as long as the process
	}
	// argv is Go memory holding C pointers only, so it may be passed.
	os.Exit(int(C.mcbench_c_main(C.int(len(os.Args)), unsafe.SliceData(argv))))
}
