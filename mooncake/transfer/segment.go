package transfer

import (
	"errors"
	"fmt"
)

// SegmentHandle names an open segment in a Request. It is a validated handle:
// one that was closed, or belongs to another engine, is refused with
// ErrInvalidHandle.
type SegmentHandle uint64

// Segment is another engine's registered memory (or this engine's own,
// opened by its own name), the target of requests.
type Segment struct {
	e    *Engine
	id   SegmentHandle
	name string
}

// Buffer is one region a peer registered: Addr is an address in the peer's
// process, the form Request.Remote takes.
type Buffer struct {
	Addr uint64
	Size uint64
}

// OpenSegment opens the segment of the engine named name (its
// SegmentName). An unknown name is ErrMetadata.
func (e *Engine) OpenSegment(name string) (*Segment, error) {
	// A peer's name may come without a port (P2PHANDSHAKE hosts): the
	// engine reports what it cannot find.
	name, err := segmentName(name, false)
	if err != nil {
		return nil, &Error{Op: OpOpenSegment, Code: ErrInvalidArgument, Err: err}
	}
	if !e.enter() {
		return nil, closedErr(OpOpenSegment)
	}
	id, rc := e.h.OpenSegment(name)
	e.gate.Leave()
	if rc != 0 {
		return nil, codeErr(OpOpenSegment, name, rc)
	}
	return &Segment{e: e, id: SegmentHandle(id), name: name}, nil
}

// Handle is what requests name the segment by (Request.Segment); 0, which
// no request takes, for a nil or zero Segment.
func (s *Segment) Handle() SegmentHandle {
	if s == nil {
		return 0
	}
	return s.id
}

// Name is the segment's name.
func (s *Segment) Name() string {
	if s == nil {
		return ""
	}
	return s.name
}

// enter admits a call on the segment's engine: a nil or zero Segment (not
// made by OpenSegment) is refused with ErrInvalidHandle, a segment of a
// closed engine with ErrClosed.
func (s *Segment) enter(op Op) error {
	if s == nil || s.e == nil {
		return &Error{Op: op, Code: ErrInvalidHandle, Err: errNoSegment}
	}
	if !s.e.enter() {
		return closedErr(op)
	}
	return nil
}

var errNoSegment = errors.New("nil or zero Segment: not opened by OpenSegment")

// Close invalidates the segment's handle.
func (s *Segment) Close() error {
	if err := s.enter(OpCloseSegment); err != nil {
		return err
	}
	rc := s.e.h.CloseSegment(uint64(s.id))
	s.e.gate.Leave()
	return codeErr(OpCloseSegment, s.name, rc)
}

// Buffers appends the peer's registered buffers, in the order it
// registered them, to dst. The list is the one seen when the segment was
// opened (or last refreshed); Refresh fetches it again.
func (s *Segment) Buffers(dst []Buffer) ([]Buffer, error) { return s.buffers(dst, false) }

// Refresh is Buffers after fetching the peer's list again.
func (s *Segment) Refresh(dst []Buffer) ([]Buffer, error) { return s.buffers(dst, true) }

func (s *Segment) buffers(dst []Buffer, refresh bool) ([]Buffer, error) {
	if err := s.enter(OpSegmentBuffers); err != nil {
		return dst, err
	}
	defer s.e.gate.Leave()
	addrs, lens := make([]uint64, 16), make([]uint64, 16)
	for {
		total, rc := s.e.h.SegmentBuffers(uint64(s.id), refresh, addrs, lens)
		if rc != 0 {
			return dst, codeErr(OpSegmentBuffers, s.name, rc)
		}
		if total <= len(addrs) {
			for i := 0; i < total; i++ {
				dst = append(dst, Buffer{Addr: addrs[i], Size: lens[i]})
			}
			return dst, nil
		}
		addrs, lens = make([]uint64, total), make([]uint64, total)
		refresh = false // the list just fetched
	}
}

func (s *Segment) String() string {
	if s == nil {
		return "segment <nil>"
	}
	return fmt.Sprintf("segment %q (%#x)", s.name, uint64(s.id))
}
