// Package hostmem is host memory for zero-copy I/O with Mooncake, and the
// shapes a batch of such I/O crosses in. It is pure Go (no cgo), shared by
// package mooncake, package hostcache and their tests.
//
//   - Memory: an anonymous private mapping, page-aligned and outside the Go
//     heap (the garbage collector never moves or frees it), optionally on
//     huge pages and locked. It counts its registrations, and Free refuses
//     to unmap memory that is still registered, since a transfer engine may
//     still read or write it.
//   - Span: a checked (memory, offset, length) range of a Memory.
//   - Buffers: a list of buffers in CSR form (one buffer per key, or a list
//     per key), with the one validator every batch call uses.
//   - Keys: keys packed into one byte buffer plus offsets, the form the C
//     ABI takes, so that a batch of keys crosses without a string per key.
//
// Example:
//
//	mem, err := hostmem.Alloc(1<<30, hostmem.Options{TransparentHugePages: true})
//	if err != nil { ... }
//	defer mem.Free()
//	if err := st.RegisterMemory(mem); err != nil { ... } // st is a *mooncake.Store
//	page, _ := mem.Span(0, 4096)
//	err = st.PutFrom("key", page)
package hostmem

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/mooncake-go/mooncake-go/internal/memreg"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrAlloc: memory could not be mapped, locked or unmapped.
	ErrAlloc = errors.New("hostmem: allocation failed")
	// ErrFreed: the Memory was freed (or is nil).
	ErrFreed = errors.New("hostmem: memory is freed")
	// ErrRegistered: Free was called while the memory is still registered.
	ErrRegistered = errors.New("hostmem: memory is still registered")
	// ErrRange: an offset or length lies outside the memory.
	ErrRange = errors.New("hostmem: range outside the memory")
	// ErrShape: a buffer list or key list does not fit together.
	ErrShape = errors.New("hostmem: malformed list")
	// ErrNotSupported: this system has no anonymous mmap.
	ErrNotSupported = errors.New("hostmem: host memory needs a Unix system (mmap)")
)

// DefaultHugePageSize is the huge page size HugePages rounds to unless
// Options.HugePageSize says otherwise.
const DefaultHugePageSize = 2 << 20

// Options selects how Alloc maps memory. The zero value maps normal pages,
// faulted in on first touch.
type Options struct {
	// HugePages asks for MAP_HUGETLB pages (the length is rounded up to
	// HugePageSize). Without reserved huge pages (vm.nr_hugepages) Alloc
	// falls back to normal pages, unless RequireHugePages is set.
	HugePages        bool
	RequireHugePages bool
	// HugePageSize is the size HugePages rounds to (DefaultHugePageSize when 0).
	HugePageSize uint64
	// TransparentHugePages advises the kernel to back the mapping with
	// transparent huge pages (MADV_HUGEPAGE): fewer TLB misses on large
	// copies, without reserved pages. A no-op where THP is off and outside
	// Linux, and ignored when the mapping got hugetlb pages.
	TransparentHugePages bool
	// Lock pins the pages in RAM (mlock; needs RLIMIT_MEMLOCK or
	// CAP_IPC_LOCK). A failure is an error.
	Lock bool
	// Populate pre-faults every page, so the first transfer does not pay
	// for page faults.
	Populate bool
}

// Memory is host memory that is safe to register for zero-copy transfers.
// It is safe for concurrent use. The zero value and nil are freed memory.
type Memory struct {
	mu     sync.Mutex
	raw    []byte // the whole mapping, as munmap needs it
	b      []byte // raw[:size]
	huge   bool
	locked bool
	regs   int // registrations not yet released
}

// Alloc maps size bytes of zeroed host memory.
func Alloc(size uint64, opts Options) (*Memory, error) {
	if size == 0 {
		return nil, fmt.Errorf("%w: size 0", ErrAlloc)
	}
	if size > maxMapping {
		return nil, fmt.Errorf("%w: size %d is larger than this system maps", ErrAlloc, size)
	}
	m := &Memory{}
	if err := m.mmap(size, opts); err != nil {
		return nil, err
	}
	return m, nil
}

// maxMapping keeps lengths representable as int (and, rounded up to a huge
// page, from overflowing).
const maxMapping = uint64(1<<62 - 1)

// Bytes returns the memory as a byte slice (nil once freed). The slice is
// valid until Free.
func (m *Memory) Bytes() []byte {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.b
}

// Addr returns the address of the first byte (0 once freed).
func (m *Memory) Addr() uintptr {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.addrLocked()
}

func (m *Memory) addrLocked() uintptr {
	if len(m.b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(m.b)))
}

// Size returns the usable size in bytes (0 once freed).
func (m *Memory) Size() uint64 {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return uint64(len(m.b))
}

// HugePages reports whether the mapping is backed by hugetlb pages.
func (m *Memory) HugePages() bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.huge
}

// Locked reports whether the mapping is locked in RAM.
func (m *Memory) Locked() bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.locked
}

// Free unmaps the memory. It fails with ErrRegistered while a registration
// is outstanding (unregister it, or close what registered it, first), and
// is a no-op on freed memory.
func (m *Memory) Free() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.regs > 0 {
		return fmt.Errorf("%w: %d registration(s) of [%#x, +%d)", ErrRegistered, m.regs, m.addrLocked(), len(m.b))
	}
	return m.unmapLocked()
}

// markRegistered records one registration of the memory (by a store, a
// transfer engine, or a backend on their behalf, through internal/memreg);
// Free refuses while any is recorded. It fails with ErrFreed on freed
// memory.
func (m *Memory) markRegistered() error {
	if m == nil {
		return ErrFreed
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.raw == nil {
		return ErrFreed
	}
	m.regs++
	return nil
}

// markUnregistered ends one registration recorded by markRegistered.
func (m *Memory) markUnregistered() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.regs > 0 {
		m.regs--
	}
}

func init() {
	memreg.Install(
		func(x any) error { m, _ := x.(*Memory); return m.markRegistered() },
		func(x any) { m, _ := x.(*Memory); m.markUnregistered() })
}

// Registrations returns the number of registrations recorded.
func (m *Memory) Registrations() int {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.regs
}

// Span returns the n bytes at offset off, or ErrRange / ErrFreed.
func (m *Memory) Span(off, n uint64) (Span, error) {
	size := m.Size()
	if size == 0 {
		return Span{}, ErrFreed
	}
	if off > size || n > size-off {
		return Span{}, fmt.Errorf("%w: [%d, +%d) of %d bytes", ErrRange, off, n, size)
	}
	return Span{mem: m, off: off, n: n}, nil
}

// All returns the whole memory as one span (the zero Span once freed).
func (m *Memory) All() Span {
	s, _ := m.Span(0, m.Size())
	return s
}

// Span is a range of a Memory: n bytes at offset off. Make one with
// Memory.Span. A Span stays valid while its memory is not freed; Addr and
// Bytes check that.
type Span struct {
	mem *Memory
	off uint64
	n   uint64
}

// Memory returns the memory the span lies in (nil for the zero Span).
func (s Span) Memory() *Memory { return s.mem }

// Offset returns the span's offset within its memory.
func (s Span) Offset() uint64 { return s.off }

// Len returns the span's length in bytes.
func (s Span) Len() uint64 { return s.n }

// Addr returns the address of the span's first byte, or ErrFreed when its
// memory was freed (or the span is the zero Span).
func (s Span) Addr() (uintptr, error) {
	if s.mem == nil {
		return 0, ErrFreed
	}
	s.mem.mu.Lock()
	defer s.mem.mu.Unlock()
	base := s.mem.addrLocked()
	if base == 0 || s.off+s.n > uint64(len(s.mem.b)) {
		return 0, ErrFreed
	}
	return base + uintptr(s.off), nil
}

// Bytes returns the span as a byte slice (nil when its memory was freed).
func (s Span) Bytes() []byte {
	b := s.mem.Bytes()
	if s.off+s.n > uint64(len(b)) {
		return nil
	}
	return b[s.off : s.off+s.n : s.off+s.n]
}

// CheckMapped reports, as an error wrapping ErrRange, a range that is not
// all mapped memory of this process, or that wraps around the address
// space: what a registration of memory the program mapped itself
// (RegisterBuffer) must not be given, since an engine would read or write
// it. It asks the kernel (Linux; elsewhere it checks only that the range
// does not wrap). A null address or zero size passes: the registration
// calls refuse those with their own codes.
func CheckMapped(addr uintptr, size uint64) error {
	if addr == 0 || size == 0 {
		return nil
	}
	if size-1 > uint64(^uintptr(0)-addr) {
		return fmt.Errorf("%w: [%#x, +%d) wraps around the address space", ErrRange, addr, size)
	}
	ok, err := mapped(addr, size)
	if err != nil || ok {
		return nil // the kernel could not say: leave it to the engine
	}
	return fmt.Errorf("%w: [%#x, +%d) is not all mapped memory of this process", ErrRange, addr, size)
}
