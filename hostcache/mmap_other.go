//go:build !unix

package hostcache

import "errors"

var errNoMmap = errors.New("anonymous mmap is not available on this platform; supply an Allocator")

func osPageSize() int { return 4096 }

func mmapAnon(length int, huge, thp, populate bool) ([]byte, error) { return nil, errNoMmap }

func munmap(b []byte) error { return errNoMmap }

func mlock(b []byte) error { return errNoMmap }
