package transfer

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/mooncake-go/mooncake-go/internal/cabi"
)

// Direction says which way a request moves bytes.
type Direction uint32

const (
	Read  Direction = 0 // remote -> local
	Write Direction = 1 // local -> remote
)

func (o Direction) String() string {
	switch o {
	case Read:
		return "read"
	case Write:
		return "write"
	}
	return fmt.Sprintf("Direction(%d)", uint32(o))
}

// Request is one one-sided transfer: Length bytes between Local, in memory
// this engine registered, and Remote, an address inside one buffer the
// segment's engine registered (see Segment.Buffers).
//
// Its layout is the C ABI's mcgo_te_request, so a []Request crosses into C
// as it is, without a copy.
type Request struct {
	Dir     Direction
	_       uint32
	Segment SegmentHandle
	Local   uintptr
	Remote  uint64
	Length  uint64
}

// State is a task's or a batch's state (upstream's TransferStatusEnum).
type State int32

const (
	Waiting   State = 0 // queued
	Pending   State = 1 // running
	Completed State = 4
	Failed    State = 6
)

func (s State) String() string {
	switch s {
	case Waiting:
		return "waiting"
	case Pending:
		return "pending"
	case Completed:
		return "completed"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("State(%d)", int32(s))
}

// Done reports whether s is final.
func (s State) Done() bool { return s == Completed || s == Failed }

// RequestStatus is one task's state and the bytes it moved (0, or its length
// once Completed). Its layout is the C ABI's mcgo_te_task_status.
type RequestStatus struct {
	State State
	_     uint32
	Bytes uint64
}

// NotifyState says what became of a batch's notification.
type NotifyState int32

const (
	NotifyNone       NotifyState = 0
	NotifyPending    NotifyState = 1 // sent when the batch is seen Completed
	NotifySent       NotifyState = 2
	NotifyDropped    NotifyState = 3 // the batch failed: nothing was sent
	NotifySendFailed NotifyState = 4 // Summary.NotifyCode says why
)

// Summary is the state of a whole batch. Its layout is the C ABI's
// mcgo_te_batch_summary.
type Summary struct {
	// State is Completed when every task is (or the batch has none),
	// Failed as soon as one task failed (others may still run), else
	// Waiting.
	State State
	// InFlight counts the tasks not finished: the memory of the batch is
	// in use while it is > 0.
	InFlight uint32
	Tasks    uint64 // tasks submitted
	Bytes    uint64 // bytes of the completed tasks
	Notify   NotifyState
	// NotifyCode is why the notification could not be sent.
	NotifyCode ErrorCode
}

// The Go types above must have the C layout (checked against the C structs
// by TestLayout); these fail to compile if a size drifts.
var (
	_ [40]byte = [unsafe.Sizeof(Request{})]byte{}
	_ [16]byte = [unsafe.Sizeof(RequestStatus{})]byte{}
	_ [32]byte = [unsafe.Sizeof(Summary{})]byte{}
)

// spinFor is how long Wait polls without sleeping; it reads the clock once
// per spinCheck polls.
const (
	spinFor   = time.Millisecond
	spinCheck = 32
)

// MaxBatch is the largest batch capacity.
const MaxBatch = 1 << 20

// Batch is a set of requests submitted together and watched with one call.
// Its capacity counts every request ever submitted to it (as upstream's).
// A Batch is not safe for concurrent use. Free it (Wait does not).
type Batch struct {
	e        *Engine
	id       uint64
	capacity int
	tasks    int
	freed    bool
}

// NewBatch allocates a batch for up to capacity requests.
func (e *Engine) NewBatch(capacity int) (*Batch, error) {
	b := new(Batch)
	if err := e.initBatch(b, capacity); err != nil {
		return nil, err
	}
	return b, nil
}

func (e *Engine) initBatch(b *Batch, capacity int) error {
	if capacity < 0 || capacity > MaxBatch {
		return argErr(OpAllocBatch, "", fmt.Sprintf("capacity %d is outside 0..%d", capacity, MaxBatch))
	}
	if !e.enter() {
		return closedErr(OpAllocBatch)
	}
	id, rc := e.h.BatchAlloc(uint32(capacity))
	e.gate.Leave()
	if rc != 0 {
		return codeErr(OpAllocBatch, "", rc)
	}
	*b = Batch{e: e, id: id, capacity: capacity}
	return nil
}

// Capacity is how many requests the batch takes in all; Len how many it
// has (0 for a nil Batch).
func (b *Batch) Capacity() int {
	if b == nil {
		return 0
	}
	return b.capacity
}

func (b *Batch) Len() int {
	if b == nil {
		return 0
	}
	return b.tasks
}

// enter admits a call on the batch's engine: a batch freed is refused with
// ErrBatchFreed, a nil or zero Batch (not made by NewBatch) with
// ErrInvalidHandle, one of a closed engine with ErrClosed.
func (b *Batch) enter(op Op) error {
	switch {
	case b == nil || b.e == nil:
		return &Error{Op: op, Code: ErrInvalidHandle, Err: errNoBatch}
	case b.freed:
		return &Error{Op: op, Err: ErrBatchFreed}
	case !b.e.enter():
		return closedErr(op)
	}
	return nil
}

var errNoBatch = errors.New("nil or zero Batch: not made by NewBatch")

// Submit adds reqs to the batch and starts them; it returns at once (Wait
// for them). Requests that cannot be right are refused before anything is
// sent, and a refusal adds nothing: an unknown opcode, a zero length, a null
// or wrapping range, no segment (ErrInvalidArgument), more requests than the
// capacity left (ErrTooManyRequests), a segment closed or of another engine
// (ErrInvalidHandle), a local range outside this engine's registered memory
// (ErrAddressNotRegistered). A remote range outside the peer's registered
// buffers fails its task. An empty reqs is a no-op.
//
// The local and remote memory of every request must stay mapped until
// Wait has returned (or Status reports no task InFlight).
func (b *Batch) Submit(reqs []Request) error { return b.submit(reqs, "", "") }

// SubmitNotify is Submit with a notification for the engine of reqs[0]'s
// segment, sent when the batch is first seen Completed (by Status or
// Wait), and never for a batch that failed. A batch has at most one; a
// second replaces it.
func (b *Batch) SubmitNotify(reqs []Request, n Notification) error {
	if len(reqs) == 0 {
		return argErr(OpSubmit, "", "a notification needs a request to say where it goes")
	}
	if n.Name == "" && n.Message == "" {
		return argErr(OpSubmit, "", "empty notification")
	}
	if len(n.Name)+len(n.Message) > NotifyMaxBytes {
		return argErr(OpSubmit, "", fmt.Sprintf("notification of %d bytes, more than %d", len(n.Name)+len(n.Message), NotifyMaxBytes))
	}
	return b.submit(reqs, n.Name, n.Message)
}

func (b *Batch) submit(reqs []Request, notifyName, notifyMsg string) error {
	if b == nil || b.e == nil || b.freed {
		return b.enter(OpSubmit) // the refusal
	}
	if len(reqs) == 0 {
		return nil
	}
	if len(reqs) > b.capacity-b.tasks {
		return &Error{Op: OpSubmit, Code: ErrTooManyRequests,
			Err: fmt.Errorf("%d requests, %d of the batch's %d left", len(reqs), b.capacity-b.tasks, b.capacity)}
	}
	for i := range reqs {
		if err := checkRequest(&reqs[i]); err != nil {
			return &Error{Op: OpSubmit, Code: ErrInvalidArgument, Err: fmt.Errorf("request %d: %s", i, err)}
		}
	}
	if err := b.enter(OpSubmit); err != nil {
		return err
	}
	rc := b.e.h.BatchSubmit(b.id, cabi.SlicePtr(reqs), len(reqs), notifyName, notifyMsg)
	b.e.gate.Leave()
	if rc != 0 {
		return codeErr(OpSubmit, "", rc)
	}
	b.tasks += len(reqs)
	return nil
}

type requestError string

func (e requestError) Error() string { return string(e) }

// checkRequest is the part of the C ABI's checks that needs no engine
// state, made in Go so that bad requests never cross (and read as errors
// naming the field).
func checkRequest(r *Request) error {
	switch {
	case r.Dir != Read && r.Dir != Write:
		return requestError("unknown opcode")
	case r.Length == 0:
		return requestError("zero length")
	case r.Local == 0 || r.Remote == 0:
		return requestError("null address")
	case r.Length-1 > uint64(^uintptr(0)-r.Local) || r.Length-1 > ^uint64(0)-r.Remote:
		return requestError("range wraps around the address space")
	case r.Segment == 0:
		return requestError("no segment")
	}
	return nil
}

// Status reports every task's state into tasks (as many as fit) and the
// batch's summary, in one call. It is also what sends a completed batch's
// notification.
func (b *Batch) Status(tasks []RequestStatus) (Summary, error) {
	var sum Summary
	if err := b.enter(OpStatus); err != nil {
		return sum, err
	}
	rc := b.e.h.BatchStatus(b.id, cabi.SlicePtr(tasks), len(tasks), unsafe.Pointer(&sum))
	b.e.gate.Leave()
	return sum, codeErr(OpStatus, "", rc)
}

// Wait polls the batch (one call per poll: spinning for the first 1 ms,
// then sleeping longer and longer, at most 1/32 of the time waited so far
// and 1 ms) until no task is in flight, and returns its summary; an error
// wrapping ErrTaskFailed when a task failed.
//
// The engine cannot cancel a transfer, so Wait never returns while one may
// still read or write the batch's memory: when ctx is done first, Wait goes
// on polling until the tasks end and then returns ctx's error (with any
// task failure). How long that takes is the transport's: the embedded
// engine's copies are short; upstream's TCP transport ends a task on
// completion, a socket error or its status timeout (MC_TCP_STATUS_TIMEOUT_SEC,
// 30 s). Engine.Close ends every transfer at once. Use WaitOrLeave to get
// control back early instead.
func (b *Batch) Wait(ctx context.Context) (Summary, error) { return b.wait(ctx, false) }

// WaitOrLeave is Wait that returns as soon as ctx is done, with an error
// wrapping ErrInFlight when tasks are still running: their memory is then
// still in use, and the batch must be waited for again (or the engine
// closed) before it is reused or freed.
func (b *Batch) WaitOrLeave(ctx context.Context) (Summary, error) { return b.wait(ctx, true) }

func (b *Batch) wait(ctx context.Context, leave bool) (Summary, error) {
	var ctxErr error
	done := ctx.Done()
	var start time.Time
	sleep := time.Duration(0)
	spinning := true
	for polls := 0; ; polls++ {
		sum, err := b.Status(nil)
		if err != nil {
			return sum, err
		}
		if sum.InFlight == 0 {
			return sum, waitErr(sum, ctxErr)
		}
		if ctxErr == nil && done != nil {
			select {
			case <-done:
				ctxErr = ctx.Err()
				if leave {
					return sum, &Error{Op: OpWait, Err: fmt.Errorf("%w (%d of %d tasks): %w", ErrInFlight, sum.InFlight, sum.Tasks, ctxErr)}
				}
			default:
			}
		}
		if polls == 0 {
			start = time.Now()
		}
		// Spin for the first spinFor, where small transfers end, giving
		// the CPU to other threads between polls (sched_yield): on a busy
		// machine the threads that do the transfer get it, on an idle one
		// the yield returns at once. Not runtime.Gosched: with an idle P
		// it wakes another thread for nothing (docs/transfer-engine.md).
		// The clock is read every spinCheck polls. Then sleep, longer and
		// longer but at most 1/32 of the time waited: a sleep wakes late
		// by tens of microseconds, and the bound keeps that lateness a few
		// percent of the transfer.
		if spinning {
			osYield()
			if polls%spinCheck != spinCheck-1 {
				continue
			}
			if spinning = time.Since(start) < spinFor; spinning {
				continue
			}
		}
		sleep = min(max(2*sleep, 10*time.Microsecond), max(time.Since(start)/32, 10*time.Microsecond), time.Millisecond)
		time.Sleep(sleep)
	}
}

func waitErr(sum Summary, ctxErr error) error {
	switch {
	case sum.State == Failed && ctxErr != nil:
		return &Error{Op: OpWait, Err: fmt.Errorf("%w: %w", ErrTaskFailed, ctxErr)}
	case sum.State == Failed:
		return &Error{Op: OpWait, Err: ErrTaskFailed}
	case ctxErr != nil:
		return &Error{Op: OpWait, Err: ctxErr}
	}
	return nil
}

// Free frees the batch. It fails with ErrBatchBusy, and the batch stays,
// while a task is in flight. Freeing twice is an error wrapping
// ErrBatchFreed.
func (b *Batch) Free() error {
	if err := b.enter(OpFreeBatch); err != nil {
		return err
	}
	rc := b.e.h.BatchFree(b.id)
	b.e.gate.Leave()
	if rc != 0 {
		return codeErr(OpFreeBatch, "", rc)
	}
	b.freed = true
	return nil
}

// Transfer submits reqs in a batch of their own, waits for them (as Wait)
// and frees the batch: the synchronous form. A steady stream of calls
// allocates nothing.
func (e *Engine) Transfer(ctx context.Context, reqs []Request) (Summary, error) {
	return e.transfer(ctx, reqs, Notification{})
}

// TransferNotify is Transfer with a notification (see SubmitNotify).
func (e *Engine) TransferNotify(ctx context.Context, reqs []Request, n Notification) (Summary, error) {
	if n.Name == "" && n.Message == "" {
		return Summary{}, argErr(OpSubmit, "", "empty notification")
	}
	return e.transfer(ctx, reqs, n)
}

func (e *Engine) transfer(ctx context.Context, reqs []Request, n Notification) (Summary, error) {
	if e == nil || !e.opened {
		return Summary{}, closedErr(OpSubmit)
	}
	if len(reqs) == 0 {
		return Summary{State: Completed}, nil
	}
	if e.comb != nil && n.Name == "" && n.Message == "" && combinable(reqs) {
		return e.comb.call(e, ctx, reqs)
	}
	return e.transferAlone(ctx, reqs, n)
}

// transferAlone is a synchronous transfer in a batch of its own.
func (e *Engine) transferAlone(ctx context.Context, reqs []Request, n Notification) (Summary, error) {
	b := e.batches.Get().(*Batch)
	defer e.batches.Put(b)
	if err := e.initBatch(b, len(reqs)); err != nil {
		return Summary{}, err
	}
	var err error
	if n.Name != "" || n.Message != "" {
		err = b.SubmitNotify(reqs, n)
	} else {
		err = b.Submit(reqs)
	}
	if err != nil {
		_ = b.Free()
		return Summary{}, err
	}
	sum, err := b.Wait(ctx)
	if ferr := b.Free(); ferr != nil && err == nil {
		err = ferr
	}
	return sum, err
}

// Write copies n bytes from local to remote in seg and waits for it.
func (e *Engine) Write(ctx context.Context, seg *Segment, local uintptr, remote uint64, n uint64) error {
	return e.one(ctx, Write, seg, local, remote, n)
}

// Read copies n bytes from remote in seg to local and waits for it.
func (e *Engine) Read(ctx context.Context, seg *Segment, local uintptr, remote uint64, n uint64) error {
	return e.one(ctx, Read, seg, local, remote, n)
}

func (e *Engine) one(ctx context.Context, op Direction, seg *Segment, local uintptr, remote uint64, n uint64) error {
	if seg == nil {
		return argErr(OpSubmit, "", "nil segment")
	}
	reqs := [1]Request{{Dir: op, Segment: seg.id, Local: local, Remote: remote, Length: n}}
	_, err := e.transfer(ctx, reqs[:], Notification{})
	return err
}
