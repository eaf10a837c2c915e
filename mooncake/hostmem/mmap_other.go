//go:build !unix

package hostmem

func (m *Memory) mmap(uint64, Options) error { return ErrNotSupported }

func (m *Memory) unmapLocked() error { return nil }

// PageSize returns the usual page size; nothing is mapped on this system.
func PageSize() int { return 4096 }

func mapped(uintptr, uint64) (bool, error) { return true, nil }
