//go:build !cgo

package main

import "unsafe"

const refCopyImpl = "Go copy"

// copyList is the cgo build's copy loop in Go (the addresses are of mmap'd
// memory, never the Go heap).
func copyList(dst, src []uintptr, n []uint64) {
	for i := range n {
		d := unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&dst[i]))), n[i])
		s := unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&src[i]))), n[i])
		copy(d, s)
	}
}
