// Package hostmem holds the Linux memory advice shared by mooncake's host
// memory and hostcache's allocator (pure Go, no cgo).
package hostmem
