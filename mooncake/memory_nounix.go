//go:build !unix

package mooncake

import "errors"

// HostMemory is host memory that is safe to register with a Store. It needs
// a Unix system (mmap); elsewhere AllocHostMemory fails.
type HostMemory struct{}

// HostMemoryOptions selects how AllocHostMemory maps memory.
type HostMemoryOptions struct {
	HugePages, RequireHugePages, Lock, Populate, TransparentHugePages bool
}

var errNoMmap = errors.New("mooncake: host memory needs a Unix system (mmap)")

// AllocHostMemory fails on this system.
func AllocHostMemory(size int, opts HostMemoryOptions) (*HostMemory, error) { return nil, errNoMmap }

func (m *HostMemory) Bytes() []byte   { return nil }
func (m *HostMemory) Addr() uintptr   { return 0 }
func (m *HostMemory) Size() uint64    { return 0 }
func (m *HostMemory) HugePages() bool { return false }
func (m *HostMemory) Locked() bool    { return false }
func (m *HostMemory) Free() error     { return nil }

// RegisterMemory fails on this system.
func (s *Store) RegisterMemory(m *HostMemory) error {
	return &Error{Op: OpRegisterBuffer, Code: ErrInvalidParams, Err: errNoMmap}
}
