package transfer

import (
	"errors"
	"strconv"
	"strings"

	"github.com/mooncake-go/mooncake-go/internal/codes"
)

// ErrorCode is a transfer-engine error code: upstream's ERR_* values (its
// Status::Code values map to the ERR_* of the same name), plus the few the
// binding adds (ErrInvalidHandle, ErrInternal, ErrNotSupportedTransport).
// The constants are generated from internal/codes/codes.tsv. Every ErrorCode is
// an error:
//
//	if errors.Is(err, transfer.ErrAddressNotRegistered) { ... }
type ErrorCode int32

// String returns the code's name ("ERR_BATCH_BUSY"), or "ErrorCode(-n)".
func (c ErrorCode) String() string {
	if s := codes.EngineName(int64(c)); s != "" {
		return s
	}
	return "ErrorCode(" + strconv.Itoa(int(c)) + ")"
}

// Error makes every ErrorCode an error: "ERR_BATCH_BUSY (-4)".
func (c ErrorCode) Error() string { return c.String() + " (" + strconv.Itoa(int(c)) + ")" }

// Known reports whether c is a code of the table.
func (c ErrorCode) Known() bool { return codes.EngineName(int64(c)) != "" }

// Sentinel errors of the Go layer (wrapped in *Error).
var (
	// ErrClosed: the engine was closed.
	ErrClosed = errors.New("transfer engine is closed")
	// ErrNoCgo: built without cgo, there is no engine.
	ErrNoCgo = errors.New("mooncake-go was built without cgo (CGO_ENABLED=0); the transfer engine needs cgo")
	// ErrTaskFailed: a task of the batch failed (Status tells which).
	ErrTaskFailed = errors.New("a transfer task failed")
	// ErrInFlight: WaitOrLeave returned while transfers may still read or
	// write the batch's memory.
	ErrInFlight = errors.New("transfers are still in flight")
	// ErrBatchFreed: the batch was freed.
	ErrBatchFreed = errors.New("batch is freed")
)

// Op names an operation in errors (upstream's method names where there is
// one).
type Op string

// Operation names used in errors.
const (
	OpOpen             Op = "init"
	OpInstallTransport Op = "install_transport"
	OpClose            Op = "close"
	OpRegister         Op = "register_local_memory"
	OpUnregister       Op = "unregister_local_memory"
	OpOpenSegment      Op = "open_segment"
	OpCloseSegment     Op = "close_segment"
	OpSegmentBuffers   Op = "get_segment_buffers"
	OpAllocBatch       Op = "allocate_batch_id"
	OpSubmit           Op = "submit_transfer"
	OpStatus           Op = "get_batch_transfer_status"
	OpWait             Op = "wait"
	OpFreeBatch        Op = "free_batch_id"
	OpNotify           Op = "send_notify"
	OpNotifications    Op = "get_notifies"
	OpInfo             Op = "get_local_info"
)

// Error is the error type of the package. Code keeps the engine's code (0
// when the failure is the Go layer's, which then sets Err).
type Error struct {
	Op   Op
	Peer string // the segment involved, when there is one
	Code ErrorCode
	Err  error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("transfer: ")
	b.WriteString(string(e.Op))
	if e.Peer != "" {
		b.WriteString(" ")
		b.WriteString(strconv.Quote(e.Peer))
	}
	b.WriteString(": ")
	switch {
	case e.Err != nil && e.Code != 0:
		b.WriteString(e.Err.Error())
		b.WriteString(": ")
		b.WriteString(e.Code.Error())
	case e.Err != nil:
		b.WriteString(e.Err.Error())
	default:
		b.WriteString(e.Code.Error())
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is this error's ErrorCode.
func (e *Error) Is(target error) bool {
	c, ok := target.(ErrorCode)
	return ok && e.Code != 0 && c == e.Code
}

func codeErr(op Op, peer string, rc int32) error {
	if rc == 0 {
		return nil
	}
	return &Error{Op: op, Peer: peer, Code: ErrorCode(rc)}
}

func argErr(op Op, peer string, why string) error {
	return &Error{Op: op, Peer: peer, Code: ErrInvalidArgument, Err: errors.New(why)}
}

func closedErr(op Op) error { return &Error{Op: op, Err: ErrClosed} }
