//go:build cgo

package main

/*
#cgo noescape mcbench_copy
#cgo nocallback mcbench_copy
#include <stddef.h>
#include <stdint.h>
#include <string.h>

// One call per request: copy i moves n[i] bytes from src[i] to dst[i].
static void mcbench_copy(const uintptr_t *dst, const uintptr_t *src,
                         const uint64_t *n, size_t count) {
  for (size_t i = 0; i < count; i++) {
    memcpy((void *)dst[i], (const void *)src[i], (size_t)n[i]);
  }
}
*/
import "C"

import "unsafe"

// refCopyImpl names the copy routine of the memcpy reference. It is the C
// library's memcpy: the routine upstream's local transfers use (its memcpy
// worker) and the one Python's ctypes.memmove calls.
const refCopyImpl = "libc memcpy"

// copyList copies n[i] bytes from src[i] to dst[i] for every i, in one cgo
// call. The addresses are of mmap'd memory, never the Go heap.
func copyList(dst, src []uintptr, n []uint64) {
	if len(n) == 0 {
		return
	}
	C.mcbench_copy((*C.uintptr_t)(unsafe.Pointer(unsafe.SliceData(dst))),
		(*C.uintptr_t)(unsafe.Pointer(unsafe.SliceData(src))),
		(*C.uint64_t)(unsafe.Pointer(unsafe.SliceData(n))), C.size_t(len(n)))
}
