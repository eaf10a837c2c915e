package mooncake

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mooncake-go/mooncake-go/internal/cabi/cstore"
)

// Segments: a client contributes memory to the cluster as segments. Open
// mounts one, of Config.GlobalSegmentSize, and Close unmounts it; these
// calls mount more while the store runs and take them back, so that a Go
// process can be a storage node that grows and shrinks (upstream's
// allocate_and_mount_segment, mount_segment, unmount_segment and
// unmount_and_free_segment). All the segments of one client carry its name
// (Store.Hostname), the name placement and replica descriptors use.

// SegmentID identifies a segment this client mounted: upstream's segment
// UUID, whose text form (String, ParseSegmentID) is "first-second" in
// decimal, as upstream's Python client prints it.
type SegmentID struct{ First, Second uint64 }

// String is upstream's text form of the id.
func (id SegmentID) String() string {
	return strconv.FormatUint(id.First, 10) + "-" + strconv.FormatUint(id.Second, 10)
}

// ParseSegmentID parses upstream's text form of a segment id, as the
// Python client returns it in "segment_ids".
func ParseSegmentID(s string) (SegmentID, error) {
	a, b, ok := strings.Cut(s, "-")
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || strings.HasPrefix(a, "+") || strings.HasPrefix(b, "+") {
		return SegmentID{}, sentinelf(ErrInvalidID, "mooncake: segment id %q: want two decimal numbers joined by '-'", s)
	}
	return SegmentID{x, y}, nil
}

// SegmentSlabSize is the unit AllocateAndMountSegment rounds sizes up to:
// one slab of upstream's allocator, which mounts nothing smaller.
const SegmentSlabSize = 16 << 20

// MountOptions are the transport options of a mount. The zero value mounts
// for the store's own protocol.
type MountOptions struct {
	// Protocol the memory is registered for, "tcp" or "rdma"; "" is the
	// store's Config.Protocol (upstream's Python default is "tcp").
	Protocol string
	// Location is the transfer engine's placement hint for the memory (a
	// NUMA node such as "cpu:0"); "" lets it choose. The embedded engine
	// has no placement and ignores it.
	Location string
}

// maxMountIDs is how many ids one mount may return. Upstream splits a
// mount only for transports that cap one registration (efa, cxi, ub); tcp
// and rdma give one segment.
const maxMountIDs = 64

// maxMountSize is the user address space of x86-64 and arm64 with 4-level
// page tables (128 TiB): no process maps a segment larger (upstream
// answered INTERNAL_ERROR for one).
const maxMountSize = 1 << 47

// AllocateAndMountSegment allocates size bytes, rounded up to whole
// SegmentSlabSize slabs, and mounts them into the cluster as more segments
// of this client (upstream's allocate_and_mount_segment). It returns the
// segments' ids and the bytes mounted. The memory belongs to the store:
// UnmountAndFreeSegments (or Close) gives it back. size 0 is
// ErrInvalidParams.
func (s *Store) AllocateAndMountSegment(size uint64, opt MountOptions) ([]SegmentID, uint64, error) {
	const op = OpAllocateAndMountSegment
	if err := mountOptionsOk(op, opt); err != nil {
		return nil, 0, err
	}
	if size > maxMountSize {
		return nil, 0, &Error{Op: op, Code: ErrInvalidParams, Err: sentinelf(ErrInvalidSize,
			"%d bytes: more than a process can map (%d)", size, uint64(maxMountSize))}
	}
	c := s.c()
	if !c.gate.Enter() {
		return nil, 0, closedErr(op, "")
	}
	defer c.gate.Leave()
	var ids [maxMountIDs]cstore.SegmentID
	n, allocated, rc := c.handle.AllocateAndMountSegment(size, opt.Protocol, opt.Location, ids[:])
	if rc != 0 {
		return nil, 0, &Error{Op: op, Code: codeOf(int64(rc)), Err: fmt.Errorf("%d bytes", size)}
	}
	return segmentIDs(ids[:n]), allocated, nil
}

// MountSegment mounts [offset, offset+size) of the file at path (typically
// a shared-memory file under /dev/shm that another process fills or reads)
// into the cluster as more segments of this client (upstream's
// mount_segment). The store maps the file itself, shared; the mapping goes
// with UnmountSegments or Close. The file must open read-write, offset must
// be a multiple of the page size, size > 0 and the range inside the file,
// else ErrInvalidParams.
func (s *Store) MountSegment(path string, offset, size uint64, opt MountOptions) ([]SegmentID, error) {
	const op = OpMountSegment
	if err := mountOptionsOk(op, opt); err != nil {
		return nil, err
	}
	if strings.IndexByte(path, 0) >= 0 {
		return nil, argErr(op, "path %q holds a NUL byte", path)
	}
	c := s.c()
	if !c.gate.Enter() {
		return nil, closedErr(op, "")
	}
	defer c.gate.Leave()
	var ids [maxMountIDs]cstore.SegmentID
	n, rc := c.handle.MountSegment(path, offset, size, opt.Protocol, opt.Location, ids[:])
	if rc != 0 {
		return nil, &Error{Op: op, Code: codeOf(int64(rc)), Err: fmt.Errorf("%s [%d, +%d)", path, offset, size)}
	}
	return segmentIDs(ids[:n]), nil
}

// UnmountSegments unmounts segments mounted with MountSegment (upstream's
// unmount_segment). With grace 0 they go at once: their replicas are
// dropped and objects left without one are removed, leased or not. With a
// grace period (whole seconds, rounded up, as upstream counts it) each
// stays readable but takes no new replicas for that long, and then goes the
// same way. Every id is tried; the error joins one *Error per id that
// failed, naming it: ErrInvalidParams for an id this store did not mount
// with MountSegment, or unmounted already.
func (s *Store) UnmountSegments(ids []SegmentID, grace time.Duration) error {
	return s.unmount(OpUnmountSegment, ids, grace, false)
}

// UnmountAndFreeSegments unmounts segments mounted with
// AllocateAndMountSegment and frees their memory (upstream's
// unmount_and_free_segment), as UnmountSegments does.
func (s *Store) UnmountAndFreeSegments(ids []SegmentID, grace time.Duration) error {
	return s.unmount(OpUnmountAndFreeSegment, ids, grace, true)
}

func (s *Store) unmount(op Op, ids []SegmentID, grace time.Duration, free bool) error {
	if grace < 0 {
		return argErr(op, "grace period %v is negative", grace)
	}
	c := s.c()
	if !c.gate.Enter() {
		return closedErr(op, "")
	}
	defer c.gate.Leave()
	if len(ids) == 0 {
		return nil
	}
	cids := make([]cstore.SegmentID, len(ids))
	for i, id := range ids {
		cids[i] = cstore.SegmentID(id)
	}
	results := make([]int64, len(ids))
	seconds := uint64((grace + time.Second - 1) / time.Second)
	rc := c.handle.UnmountSegments(cids, seconds, free, results)
	var errs []error
	for i, r := range results {
		if r < 0 {
			errs = append(errs, &Error{Op: op, Key: ids[i].String(), Code: codeOf(r)})
		}
	}
	if len(errs) == 0 && rc != 0 {
		return &Error{Op: op, Code: codeOf(int64(rc))}
	}
	return errors.Join(errs...)
}

func mountOptionsOk(op Op, opt MountOptions) error {
	for _, v := range [...]string{opt.Protocol, opt.Location} {
		if strings.IndexByte(v, 0) >= 0 {
			return argErr(op, "mount option %q holds a NUL byte", v)
		}
	}
	return nil
}

func segmentIDs(ids []cstore.SegmentID) []SegmentID {
	out := make([]SegmentID, len(ids))
	for i, id := range ids {
		out[i] = SegmentID(id)
	}
	return out
}

// UnmountLocalDiskSegment deregisters this client's SSD-offload tier from
// the master and then waits out grace (whole seconds, rounded up), so that
// a planned shutdown stops being advertised as the owner of offloaded
// objects before it stops serving them (upstream's
// unmount_local_disk_segment). It blocks for the grace period. Without SSD
// offload (Config.EnableSSDOffload unset, or the embedded engine) it does
// nothing, as upstream. It needs Capabilities.UnmountLocalDisk, else it
// fails with ErrNotSupported.
func (s *Store) UnmountLocalDiskSegment(grace time.Duration) error {
	const op = OpUnmountLocalDiskSegment
	if grace < 0 {
		return argErr(op, "grace period %v is negative", grace)
	}
	c := s.c()
	if !c.gate.Enter() {
		return closedErr(op, "")
	}
	rc := c.handle.UnmountLocalDiskSegment(uint64((grace + time.Second - 1) / time.Second))
	c.gate.Leave()
	return codeErr(op, "", int64(rc))
}

// OffloadRPCReadCount is how many offloaded objects this client has read
// from its peers over RPC (upstream's get_offload_rpc_read_count; 0
// without SSD offload).
func (s *Store) OffloadRPCReadCount() (int64, error) {
	const op = OpOffloadRPCReadCount
	c := s.c()
	if !c.gate.Enter() {
		return 0, closedErr(op, "")
	}
	n := c.handle.OffloadRPCReadCount()
	c.gate.Leave()
	if n < 0 {
		return 0, codeErr(op, "", n)
	}
	return n, nil
}
