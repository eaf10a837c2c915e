package mooncake

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mooncake-go/mooncake-go/internal/codes"
)

// ErrorCode is a Mooncake store error code: the values of upstream's
// mooncake::ErrorCode enum (mooncake-store/include/types.h), kept exactly
// (the constants are generated from internal/codes/codes.tsv). Every
// ErrorCode is an error, so callers can write
//
//	if errors.Is(err, mooncake.ErrObjectNotFound) { ... }
type ErrorCode int32

// String returns upstream's enumerator name ("OBJECT_NOT_FOUND"), or
// "ErrorCode(-n)" for a value the table does not know.
func (c ErrorCode) String() string {
	if s := codes.StoreName(int64(c)); s != "" {
		return s
	}
	return "ErrorCode(" + strconv.Itoa(int(c)) + ")"
}

// Error makes every ErrorCode an error: "OBJECT_NOT_FOUND (-704)".
func (c ErrorCode) Error() string {
	return c.String() + " (" + strconv.Itoa(int(c)) + ")"
}

// Known reports whether c is a value of upstream's enum.
func (c ErrorCode) Known() bool { return codes.StoreName(int64(c)) != "" }

// ErrClosed is returned (wrapped in *Error) by every call on a closed Store.
var ErrClosed = errors.New("store is closed")

// ErrInvalidConfig is matched (errors.Is) by every error about a Config:
// Validate, ParseConfig, LoadConfigFile's parse errors, ConfigFromEnv, and
// Open's refusal of a config.
var ErrInvalidConfig = errors.New("invalid config")

// ErrInvalidSize is matched by every error of ParseSize and of a Size in
// JSON (and so also by the config errors they cause).
var ErrInvalidSize = errors.New("invalid size")

// ErrInvalidID is matched by the errors of ParseSegmentID.
var ErrInvalidID = errors.New("invalid segment id")

// sentinelError is an error with its own message that also matches a
// sentinel, so that messages stay as they read and errors.Is still works.
type sentinelError struct {
	msg      string
	sentinel error
	err      error // wrapped cause, if any
}

func (e *sentinelError) Error() string        { return e.msg }
func (e *sentinelError) Is(target error) bool { return target == e.sentinel }
func (e *sentinelError) Unwrap() error        { return e.err }

// sentinelf formats like fmt.Errorf (%w included) and matches sentinel.
func sentinelf(sentinel error, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &sentinelError{msg: err.Error(), sentinel: sentinel, err: errors.Unwrap(err)}
}

// MaxKeyLen is the longest key any call takes, in bytes (MCGO_MAX_KEY_LEN).
// Upstream's master matches RemoveByRegex patterns with std::regex, which
// recurses once per key byte: one 40,000-byte key crashes it, so keys this
// binding stores stay far below that. A longer key is refused with
// ErrInvalidParams wrapping ErrKeyTooLong.
const MaxKeyLen = 4096

// ErrKeyTooLong is wrapped by the error of a call given a key longer than
// MaxKeyLen.
var ErrKeyTooLong = errors.New("key longer than MaxKeyLen (4096 bytes)")

// ErrPatternRefused is wrapped by RemoveByRegex's error when the pattern is
// malformed or outside the subset that cannot crash or hang upstream's
// master (see Store.RemoveByRegex).
var ErrPatternRefused = errors.New("pattern malformed or outside the safe subset (see Store.RemoveByRegex)")

// ErrNoCgo is returned by Open in a build without cgo.
var ErrNoCgo = errors.New("mooncake-go was built without cgo (CGO_ENABLED=0); the store client needs cgo")

// Op names an operation in errors; it is the upstream method name.
type Op string

// Operation names used in errors.
const (
	OpOpen                          Op = "setup"
	OpHealthCheck                   Op = "health_check"
	OpHostname                      Op = "get_hostname"
	OpRegisterBuffer                Op = "register_buffer"
	OpUnregisterBuffer              Op = "unregister_buffer"
	OpPut                           Op = "put"
	OpUpsert                        Op = "upsert"
	OpGet                           Op = "get"
	OpPutParts                      Op = "put_parts"
	OpUpsertParts                   Op = "upsert_parts"
	OpPutBatch                      Op = "put_batch"
	OpUpsertBatch                   Op = "upsert_batch"
	OpPutFrom                       Op = "put_from"
	OpUpsertFrom                    Op = "upsert_from"
	OpGetInto                       Op = "get_into"
	OpBatchPutFrom                  Op = "batch_put_from"
	OpBatchUpsertFrom               Op = "batch_upsert_from"
	OpBatchGetInto                  Op = "batch_get_into"
	OpBatchPutFromMultiBuffers      Op = "batch_put_from_multi_buffers"
	OpBatchUpsertFromMultiBuffers   Op = "batch_upsert_from_multi_buffers"
	OpBatchGetIntoMultiBuffers      Op = "batch_get_into_multi_buffers"
	OpIsExist                       Op = "is_exist"
	OpBatchIsExist                  Op = "batch_is_exist"
	OpGetSize                       Op = "get_size"
	OpRemove                        Op = "remove"
	OpBatchRemove                   Op = "batch_remove"
	OpGetReplicaDesc                Op = "get_replica_desc"
	OpBatchReplicaClear             Op = "batch_replica_clear"
	OpBatchGetReplicaDesc           Op = "batch_get_replica_desc"
	OpRemoveByRegex                 Op = "remove_by_regex"
	OpRemoveAll                     Op = "remove_all"
	OpAllocateAndMountSegment       Op = "allocate_and_mount_segment"
	OpBatchGetSessionStart          Op = "batch_get_session_start"
	OpBatchGetIntoMultiBufferRanges Op = "batch_get_into_multi_buffer_ranges"
	OpBatchGetSessionEnd            Op = "batch_get_session_end"
	OpBatchPutSessionStart          Op = "batch_put_session_start"
	OpBatchPutFromMultiBufferRanges Op = "batch_put_from_multi_buffer_ranges"
	OpBatchPutSessionEnd            Op = "batch_put_session_end"
	OpBatchPutSessionRevoke         Op = "batch_put_session_revoke"
	OpCreateCopyTask                Op = "create_copy_task"
	OpCreateMoveTask                Op = "create_move_task"
	OpQueryTask                     Op = "query_task"
	OpGetIntoRanges                 Op = "get_into_ranges"
	OpUnmountLocalDiskSegment       Op = "unmount_local_disk_segment"
	OpOffloadRPCReadCount           Op = "get_offload_rpc_read_count"
	OpMountSegment                  Op = "mount_segment"
	OpUnmountSegment                Op = "unmount_segment"
	OpUnmountAndFreeSegment         Op = "unmount_and_free_segment"
	OpSetupDummy                    Op = "setup_dummy"
	OpAllocFromMemPool              Op = "alloc_from_mem_pool"
	OpLoadNative                    Op = "load_native"
)

// Error is the error type of every Store method. Code keeps Mooncake's code
// (0 when the failure did not come from Mooncake, e.g. ErrClosed or a Go-side
// argument check, which then sets Err).
type Error struct {
	Op   Op        // the operation, e.g. OpBatchGetInto
	Key  string    // the key, when the error concerns one key
	Code ErrorCode // Mooncake's code, or 0
	Err  error     // an underlying cause (ErrClosed, an argument error), or nil
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("mooncake: ")
	b.WriteString(string(e.Op))
	if e.Key != "" {
		b.WriteString(" ")
		b.WriteString(strconv.Quote(e.Key))
	}
	b.WriteString(": ")
	switch {
	case e.Err != nil && e.Code != CodeOK:
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
	return ok && e.Code != CodeOK && c == e.Code
}

// BatchError is the error of a batch call in which some keys failed: the
// call crossed, every key has its entry in the results the call returned,
// and Failed lists the entries that are a negative code, each as the
// *Error a single call would have returned (Op and Key set by the call).
// errors.Is(err, ErrObjectNotFound) is true when any key failed with that
// code. It does not unwrap to its keys' errors, so that errors.As(err,
// &e) with e an *Error means what it says: the call (or a single call)
// failed as a whole; errors.As(err, &be) with be a *BatchError finds the
// keys.
type BatchError struct {
	Op     Op
	Failed []*Error // one per failed entry, in order
	Total  int      // entries (results) in the batch: keys, or ranges for GetIntoRanges
}

func (e *BatchError) Error() string {
	var b strings.Builder
	b.WriteString("mooncake: ")
	b.WriteString(string(e.Op))
	b.WriteString(": ")
	b.WriteString(strconv.Itoa(len(e.Failed)))
	b.WriteString(" of ")
	b.WriteString(strconv.Itoa(e.Total))
	b.WriteString(" failed")
	for i, f := range e.Failed {
		if i == 3 {
			b.WriteString("; ...")
			break
		}
		b.WriteString("; ")
		b.WriteString(strconv.Quote(f.Key))
		b.WriteString(": ")
		b.WriteString(f.Code.Error())
	}
	return b.String()
}

// Is reports whether any failed entry's code is target.
func (e *BatchError) Is(target error) bool {
	for _, f := range e.Failed {
		if f.Is(target) {
			return true
		}
	}
	return false
}

// batchError returns nil when every result is >= 0, else a *BatchError
// naming the failed keys. It allocates only when something failed. keyAt
// is called only for failed entries.
func batchError(op Op, results []int64, keyAt func(int) string) error {
	var be *BatchError
	for i, r := range results {
		if r >= 0 {
			continue
		}
		if be == nil {
			be = &BatchError{Op: op, Total: len(results)}
		}
		be.Failed = append(be.Failed, &Error{Op: op, Key: keyAt(i), Code: codeOf(r)})
	}
	if be == nil {
		return nil
	}
	return be
}

func codeOf(r int64) ErrorCode {
	if r < -1<<31 || r > 1<<31-1 {
		return ErrInternalError
	}
	return ErrorCode(r)
}
