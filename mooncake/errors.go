package mooncake

import (
	"errors"
	"strconv"
	"strings"
)

// ErrorCode is a Mooncake store error code: the values of upstream's
// mooncake::ErrorCode enum (mooncake-store/include/types.h), kept exactly.
// Every ErrorCode is an error, so callers can write
//
//	if errors.Is(err, mooncake.ErrObjectNotFound) { ... }
type ErrorCode int32

// Error codes, mirroring upstream's ErrorCode enum value for value.
const (
	CodeOK                        ErrorCode = 0
	ErrInternalError              ErrorCode = -1
	ErrBufferOverflow             ErrorCode = -10
	ErrShardIndexOutOfRange       ErrorCode = -100
	ErrSegmentNotFound            ErrorCode = -101
	ErrSegmentAlreadyExists       ErrorCode = -102
	ErrClientNotFound             ErrorCode = -103
	ErrNoAvailableHandle          ErrorCode = -200
	ErrInvalidVersion             ErrorCode = -300
	ErrInvalidKey                 ErrorCode = -400
	ErrWriteFail                  ErrorCode = -500
	ErrInvalidParams              ErrorCode = -600
	ErrIllegalClient              ErrorCode = -601
	ErrInvalidWrite               ErrorCode = -700
	ErrInvalidRead                ErrorCode = -701
	ErrInvalidReplica             ErrorCode = -702
	ErrReplicaIsNotReady          ErrorCode = -703
	ErrObjectNotFound             ErrorCode = -704
	ErrObjectAlreadyExists        ErrorCode = -705
	ErrObjectHasLease             ErrorCode = -706
	ErrLeaseExpired               ErrorCode = -707
	ErrObjectHasReplicationTask   ErrorCode = -708
	ErrObjectNoReplicationTask    ErrorCode = -709
	ErrReplicaNotFound            ErrorCode = -710
	ErrReplicaAlreadyExists       ErrorCode = -711
	ErrReplicaIsGone              ErrorCode = -712
	ErrReplicaNotInLocalMemory    ErrorCode = -713
	ErrObjectReplicaBusy          ErrorCode = -714
	ErrTransferFail               ErrorCode = -800
	ErrChecksumMismatch           ErrorCode = -801
	ErrRPCFail                    ErrorCode = -900
	ErrRPCTimeout                 ErrorCode = -901
	ErrEtcdOperationError         ErrorCode = -1000
	ErrEtcdKeyNotExist            ErrorCode = -1001
	ErrEtcdTransactionFail        ErrorCode = -1002
	ErrEtcdCtxCancelled           ErrorCode = -1003
	ErrOplogEntryNotFound         ErrorCode = -1004
	ErrK8sLeaseOperationError     ErrorCode = -1005
	ErrK8sLeaseNotFound           ErrorCode = -1006
	ErrIncompleteOplogCatchUp     ErrorCode = -1007
	ErrUnavailableInCurrentStatus ErrorCode = -1010
	ErrUnavailableInCurrentMode   ErrorCode = -1011
	ErrNotSupported               ErrorCode = -1012
	ErrFileNotFound               ErrorCode = -1100
	ErrFileOpenFail               ErrorCode = -1101
	ErrFileReadFail               ErrorCode = -1102
	ErrFileWriteFail              ErrorCode = -1103
	ErrFileInvalidBuffer          ErrorCode = -1104
	ErrFileLockFail               ErrorCode = -1105
	ErrFileInvalidHandle          ErrorCode = -1106
	ErrBucketNotFound             ErrorCode = -1200
	ErrBucketAlreadyExists        ErrorCode = -1201
	ErrKeysExceedBucketLimit      ErrorCode = -1202
	ErrKeysUltraLimit             ErrorCode = -1203
	ErrUnableOffload              ErrorCode = -1300
	ErrUnableOffloading           ErrorCode = -1301
	ErrTaskNotFound               ErrorCode = -1400
	ErrTaskPendingLimitExceeded   ErrorCode = -1401
	ErrJobNotFound                ErrorCode = -1402
	ErrSerializeUnsupported       ErrorCode = -1500
	ErrSerializeFail              ErrorCode = -1501
	ErrDeserializeFail            ErrorCode = -1502
	ErrPersistentFail             ErrorCode = -1503
	ErrDFSNetworkTimeout          ErrorCode = -1600
	ErrDFSServiceUnavailable      ErrorCode = -1601
	ErrDFSQuotaExceeded           ErrorCode = -1602
	ErrDFSPermissionDenied        ErrorCode = -1603
	ErrDFSStaleHandle             ErrorCode = -1604
	ErrDFSPartialWrite            ErrorCode = -1605
	ErrTenantQuotaExceeded        ErrorCode = -1700
	ErrTenantNotRegistered        ErrorCode = -1701
	ErrTenantNotEmpty             ErrorCode = -1702
)

// codeNames maps each code to upstream's enumerator name.
var codeNames = map[ErrorCode]string{
	CodeOK:                        "OK",
	ErrInternalError:              "INTERNAL_ERROR",
	ErrBufferOverflow:             "BUFFER_OVERFLOW",
	ErrShardIndexOutOfRange:       "SHARD_INDEX_OUT_OF_RANGE",
	ErrSegmentNotFound:            "SEGMENT_NOT_FOUND",
	ErrSegmentAlreadyExists:       "SEGMENT_ALREADY_EXISTS",
	ErrClientNotFound:             "CLIENT_NOT_FOUND",
	ErrNoAvailableHandle:          "NO_AVAILABLE_HANDLE",
	ErrInvalidVersion:             "INVALID_VERSION",
	ErrInvalidKey:                 "INVALID_KEY",
	ErrWriteFail:                  "WRITE_FAIL",
	ErrInvalidParams:              "INVALID_PARAMS",
	ErrIllegalClient:              "ILLEGAL_CLIENT",
	ErrInvalidWrite:               "INVALID_WRITE",
	ErrInvalidRead:                "INVALID_READ",
	ErrInvalidReplica:             "INVALID_REPLICA",
	ErrReplicaIsNotReady:          "REPLICA_IS_NOT_READY",
	ErrObjectNotFound:             "OBJECT_NOT_FOUND",
	ErrObjectAlreadyExists:        "OBJECT_ALREADY_EXISTS",
	ErrObjectHasLease:             "OBJECT_HAS_LEASE",
	ErrLeaseExpired:               "LEASE_EXPIRED",
	ErrObjectHasReplicationTask:   "OBJECT_HAS_REPLICATION_TASK",
	ErrObjectNoReplicationTask:    "OBJECT_NO_REPLICATION_TASK",
	ErrReplicaNotFound:            "REPLICA_NOT_FOUND",
	ErrReplicaAlreadyExists:       "REPLICA_ALREADY_EXISTS",
	ErrReplicaIsGone:              "REPLICA_IS_GONE",
	ErrReplicaNotInLocalMemory:    "REPLICA_NOT_IN_LOCAL_MEMORY",
	ErrObjectReplicaBusy:          "OBJECT_REPLICA_BUSY",
	ErrTransferFail:               "TRANSFER_FAIL",
	ErrChecksumMismatch:           "CHECKSUM_MISMATCH",
	ErrRPCFail:                    "RPC_FAIL",
	ErrRPCTimeout:                 "RPC_TIMEOUT",
	ErrEtcdOperationError:         "ETCD_OPERATION_ERROR",
	ErrEtcdKeyNotExist:            "ETCD_KEY_NOT_EXIST",
	ErrEtcdTransactionFail:        "ETCD_TRANSACTION_FAIL",
	ErrEtcdCtxCancelled:           "ETCD_CTX_CANCELLED",
	ErrOplogEntryNotFound:         "OPLOG_ENTRY_NOT_FOUND",
	ErrK8sLeaseOperationError:     "K8S_LEASE_OPERATION_ERROR",
	ErrK8sLeaseNotFound:           "K8S_LEASE_NOT_FOUND",
	ErrIncompleteOplogCatchUp:     "INCOMPLETE_OPLOG_CATCH_UP",
	ErrUnavailableInCurrentStatus: "UNAVAILABLE_IN_CURRENT_STATUS",
	ErrUnavailableInCurrentMode:   "UNAVAILABLE_IN_CURRENT_MODE",
	ErrNotSupported:               "NOT_SUPPORTED",
	ErrFileNotFound:               "FILE_NOT_FOUND",
	ErrFileOpenFail:               "FILE_OPEN_FAIL",
	ErrFileReadFail:               "FILE_READ_FAIL",
	ErrFileWriteFail:              "FILE_WRITE_FAIL",
	ErrFileInvalidBuffer:          "FILE_INVALID_BUFFER",
	ErrFileLockFail:               "FILE_LOCK_FAIL",
	ErrFileInvalidHandle:          "FILE_INVALID_HANDLE",
	ErrBucketNotFound:             "BUCKET_NOT_FOUND",
	ErrBucketAlreadyExists:        "BUCKET_ALREADY_EXISTS",
	ErrKeysExceedBucketLimit:      "KEYS_EXCEED_BUCKET_LIMIT",
	ErrKeysUltraLimit:             "KEYS_ULTRA_LIMIT",
	ErrUnableOffload:              "UNABLE_OFFLOAD",
	ErrUnableOffloading:           "UNABLE_OFFLOADING",
	ErrTaskNotFound:               "TASK_NOT_FOUND",
	ErrTaskPendingLimitExceeded:   "TASK_PENDING_LIMIT_EXCEEDED",
	ErrJobNotFound:                "JOB_NOT_FOUND",
	ErrSerializeUnsupported:       "SERIALIZE_UNSUPPORTED",
	ErrSerializeFail:              "SERIALIZE_FAIL",
	ErrDeserializeFail:            "DESERIALIZE_FAIL",
	ErrPersistentFail:             "PERSISTENT_FAIL",
	ErrDFSNetworkTimeout:          "DFS_NETWORK_TIMEOUT",
	ErrDFSServiceUnavailable:      "DFS_SERVICE_UNAVAILABLE",
	ErrDFSQuotaExceeded:           "DFS_QUOTA_EXCEEDED",
	ErrDFSPermissionDenied:        "DFS_PERMISSION_DENIED",
	ErrDFSStaleHandle:             "DFS_STALE_HANDLE",
	ErrDFSPartialWrite:            "DFS_PARTIAL_WRITE",
	ErrTenantQuotaExceeded:        "TENANT_QUOTA_EXCEEDED",
	ErrTenantNotRegistered:        "TENANT_NOT_REGISTERED",
	ErrTenantNotEmpty:             "TENANT_NOT_EMPTY",
}

// String returns upstream's enumerator name ("OBJECT_NOT_FOUND"), or
// "ErrorCode(-n)" for a value the table does not know.
func (c ErrorCode) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return "ErrorCode(" + strconv.Itoa(int(c)) + ")"
}

// Error makes every ErrorCode an error: "OBJECT_NOT_FOUND (-704)".
func (c ErrorCode) Error() string {
	return c.String() + " (" + strconv.Itoa(int(c)) + ")"
}

// Known reports whether c is a value of upstream's enum.
func (c ErrorCode) Known() bool {
	_, ok := codeNames[c]
	return ok
}

// ErrClosed is returned (wrapped in *Error) by every call on a closed Store.
var ErrClosed = errors.New("store is closed")

// ErrNoCgo is returned by Open in a build without cgo.
var ErrNoCgo = errors.New("mooncake-go was built without cgo (CGO_ENABLED=0); the store client needs cgo")

// Op names an operation in errors; it is the upstream method name.
type Op string

// Operation names used in errors.
const (
	OpOpen                        Op = "setup"
	OpHealthCheck                 Op = "health_check"
	OpHostname                    Op = "get_hostname"
	OpRegisterBuffer              Op = "register_buffer"
	OpUnregisterBuffer            Op = "unregister_buffer"
	OpPut                         Op = "put"
	OpUpsert                      Op = "upsert"
	OpGet                         Op = "get"
	OpPutFrom                     Op = "put_from"
	OpUpsertFrom                  Op = "upsert_from"
	OpGetInto                     Op = "get_into"
	OpBatchPutFrom                Op = "batch_put_from"
	OpBatchUpsertFrom             Op = "batch_upsert_from"
	OpBatchGetInto                Op = "batch_get_into"
	OpBatchPutFromMultiBuffers    Op = "batch_put_from_multi_buffers"
	OpBatchUpsertFromMultiBuffers Op = "batch_upsert_from_multi_buffers"
	OpBatchGetIntoMultiBuffers    Op = "batch_get_into_multi_buffers"
	OpIsExist                     Op = "is_exist"
	OpBatchIsExist                Op = "batch_is_exist"
	OpGetSize                     Op = "get_size"
	OpRemove                      Op = "remove"
	OpRemoveByRegex               Op = "remove_by_regex"
	OpRemoveAll                   Op = "remove_all"
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

// ResultError turns one entry of a batch result into an error: nil when
// result >= 0, else an *Error naming op and key.
func ResultError(op Op, key string, result int64) error {
	if result >= 0 {
		return nil
	}
	return &Error{Op: op, Key: key, Code: codeOf(result)}
}

// BatchError collects the failed keys of one batch call.
type BatchError struct {
	Op     Op
	Failed []*Error // one per failed key, in key order
	Total  int      // keys in the batch
}

func (e *BatchError) Error() string {
	var b strings.Builder
	b.WriteString("mooncake: ")
	b.WriteString(string(e.Op))
	b.WriteString(": ")
	b.WriteString(strconv.Itoa(len(e.Failed)))
	b.WriteString(" of ")
	b.WriteString(strconv.Itoa(e.Total))
	b.WriteString(" keys failed")
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

// Unwrap exposes every per-key error to errors.Is and errors.As.
func (e *BatchError) Unwrap() []error {
	errs := make([]error, len(e.Failed))
	for i, f := range e.Failed {
		errs[i] = f
	}
	return errs
}

// BatchResultError returns nil when every result is >= 0, else a
// *BatchError listing the failed keys. It allocates only when something
// failed.
func BatchResultError(op Op, keys []string, results []int64) error {
	var be *BatchError
	for i, r := range results {
		if r >= 0 {
			continue
		}
		if be == nil {
			be = &BatchError{Op: op, Total: len(results)}
		}
		key := ""
		if i < len(keys) {
			key = keys[i]
		}
		be.Failed = append(be.Failed, &Error{Op: op, Key: key, Code: codeOf(r)})
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
