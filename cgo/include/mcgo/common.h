/*
 * mcgo/common.h: what every part of mooncake-go's C ABI shares.
 *
 * The ABI is ours (not upstream's). Its parts, each in its own header:
 *   mcgo/store.h   the store client (mcgo_store_*)
 *   mcgo/codes.h   every error code, in Mooncake's values (generated)
 * Two backends implement it, selected when the Go program is built:
 *   - embedded: an in-process implementation with Mooncake's semantics
 *     (cgo/embedded/), compiled by cgo in the default build;
 *   - native: C++ over upstream Mooncake (cgo/native/), built by CMake into
 *     one shared library, libmcgo_native, linked with -tags mooncake_native.
 *
 * Conventions of every function:
 *   - it is prefixed mcgo_ and never throws: C++ exceptions are caught at
 *     the boundary and reported as MCGO_INTERNAL_ERROR (-1);
 *   - it returns 0 or a code of mcgo/codes.h, never another value for an
 *     error;
 *   - keys cross packed: one byte buffer `keys` plus `key_offsets[n+1]`;
 *     key i is keys[key_offsets[i] .. key_offsets[i+1]), not NUL-terminated;
 *   - addresses cross as pointer-free integers (uintptr_t) naming memory the
 *     caller owns; lists of buffers cross in CSR form (flat addrs[] and
 *     sizes[], per-item buf_offsets[n+1]);
 *   - a batch call fills results[n] (one int64 per item: >= 0 success,
 *     < 0 a code) and returns 0, or returns a negative code when the call
 *     as a whole was refused, in which case every results[i] holds it too;
 *   - no implementation keeps a pointer passed in after the call returns.
 */
#ifndef MCGO_COMMON_H_
#define MCGO_COMMON_H_

#include <stddef.h>
#include <stdint.h>

#include "mcgo/codes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bump on any change to a signature, struct layout or semantic contract of
 * any part of the ABI. The Go side checks mcgo_abi_version() against its own
 * copy of the number at run time, so a backend built from older headers (a
 * stale native library, or a stale object in Go's build cache) is refused
 * with a clear error instead of misbehaving. */
#define MCGO_ABI_VERSION 8

/* The ABI version the linked backend implements. */
uint32_t mcgo_abi_version(void);
/* "embedded" or "native". Static string. */
const char *mcgo_backend_name(void);
/* Upstream Mooncake commit the native backend was built against; "" for the
 * embedded backend. Static string. */
const char *mcgo_upstream_commit(void);

/* The address forms this backend can connect through (ABI 8), besides one
 * master at host:port and P2PHANDSHAKE, which every backend has: the HA
 * backends a store client can find its master's leader through
 * (master_server_address "etcd://...", "redis://...", "k8s://..."), and the
 * metadata services a transfer engine can keep its segments in
 * ("http(s)://...", "etcd://..." or bare endpoints, "redis://..."). The
 * native backend has those upstream was built with (STORE_USE_ETCD,
 * STORE_USE_REDIS, STORE_USE_K8S_LEASE, USE_HTTP, USE_ETCD, USE_REDIS);
 * upstream aborts the process (LOG(FATAL)) on a metadata form it lacks, so
 * the Go side refuses one before it gets there. The embedded engine, whose
 * masters and metadata are names, has them all. */
#define MCGO_CONNECT_MASTER_ETCD 1u
#define MCGO_CONNECT_MASTER_REDIS 2u
#define MCGO_CONNECT_MASTER_K8S 4u
#define MCGO_CONNECT_METADATA_HTTP 8u
#define MCGO_CONNECT_METADATA_ETCD 16u
#define MCGO_CONNECT_METADATA_REDIS 32u
uint32_t mcgo_connect_forms(void);

/* Upstream's logging (glog), which is process-wide. min_level is the least
 * severity written: 0 INFO, 1 WARNING, 2 ERROR, 3 FATAL; -1 leaves it.
 * dir, dir_len: "" leaves the destination (stderr, or upstream's MC_LOG_DIR);
 * else log files go to that directory (ERROR and above also to stderr).
 * The directory can be chosen once per process: choosing another one later,
 * one that is not a writable directory, or any while MC_LOG_DIR names
 * another, is MCGO_INVALID_PARAMS, as is a level out of range. Upstream
 * sets the level from MC_LOG_LEVEL when the first engine of the process
 * starts, so set it after that too. The embedded engine writes no logs:
 * it checks the arguments and returns 0. */
int32_t mcgo_set_log(int32_t min_level, const char *dir, size_t dir_len);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MCGO_COMMON_H_ */
