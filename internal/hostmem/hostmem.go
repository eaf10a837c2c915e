// Package hostmem holds the mmap flags and memory advice shared by
// mooncake's host memory and hostcache's allocator (pure Go, no cgo), with
// zero values outside Linux.
package hostmem
