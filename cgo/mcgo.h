/*
 * mcgo.h: the C ABI of mooncake-go.
 *
 * This header is ours (not upstream's). Two engines implement it:
 *   - the embedded engine (cgo/engine_*.cc), an in-process store with
 *     Mooncake's semantics, compiled by cgo in the default build;
 *   - the native shim (cgo/native/), C++ over upstream's mooncake::RealClient,
 *     built by CMake into one shared library and linked with -tags mooncake_native.
 *
 * Conventions
 *   - Every function is prefixed mcgo_ and never throws: C++ exceptions are
 *     caught at the boundary and reported as MCGO_INTERNAL_ERROR (-1).
 *   - Return codes are Mooncake ErrorCode values (0 = OK, negative = error).
 *   - Keys cross packed: one byte buffer `keys` plus `key_offsets[n+1]`;
 *     key i is the bytes keys[key_offsets[i] .. key_offsets[i+1]). Keys are
 *     not NUL-terminated. An empty key is never stored: puts report
 *     MCGO_INVALID_PARAMS for it; reads report it missing
 *     (MCGO_OBJECT_NOT_FOUND, or 0 from the existence calls), as upstream.
 *   - Addresses cross as pointer-free integer arrays (uintptr_t). They name
 *     memory the caller owns (registered host memory for zero-copy calls).
 *   - Multi-buffer lists cross in CSR form: flat `addrs[]`, flat `sizes[]`
 *     and per-key `buf_offsets[n+1]`; key i owns the buffers
 *     addrs[buf_offsets[i] .. buf_offsets[i+1]). The object is the
 *     concatenation of those buffers in order.
 *   - Batch calls fill `results[n]` (one int64 per key: >= 0 success, value
 *     depends on the call; < 0 an ErrorCode) and return 0, or return a
 *     negative ErrorCode when the call as a whole was refused, in which case
 *     every results[i] is also set to that code.
 *   - No implementation keeps any pointer passed in after the call returns.
 *   - All functions are thread safe for one store handle, except
 *     mcgo_destroy, which the caller must not race with other calls on the
 *     same handle.
 */
#ifndef MCGO_H_
#define MCGO_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bump on any change to a signature, struct layout or semantic contract.
 * The Go side checks mcgo_abi_version() == MCGO_ABI_VERSION at Open, and
 * keeps its own copy of the number (mooncake-go/cgo/abi.go), so a stale
 * object in the Go build cache is caught as well. */
#define MCGO_ABI_VERSION 2

/* A few ErrorCode values the engines return themselves (the full table is
 * upstream's mooncake-store/include/types.h, mirrored in Go). */
#define MCGO_OK 0
#define MCGO_INTERNAL_ERROR (-1)
#define MCGO_BUFFER_OVERFLOW (-10)
#define MCGO_NO_AVAILABLE_HANDLE (-200)
#define MCGO_INVALID_KEY (-400)
#define MCGO_INVALID_PARAMS (-600)
#define MCGO_INVALID_REPLICA (-702)
#define MCGO_REPLICA_IS_NOT_READY (-703) /* the object is still being written */
#define MCGO_OBJECT_NOT_FOUND (-704)
#define MCGO_OBJECT_ALREADY_EXISTS (-705)
#define MCGO_OBJECT_HAS_LEASE (-706)
#define MCGO_TRANSFER_FAIL (-800)
#define MCGO_RPC_FAIL (-900)
#define MCGO_UNAVAILABLE_IN_CURRENT_STATUS (-1010)
#define MCGO_NOT_SUPPORTED (-1012)

typedef struct mcgo_store mcgo_store; /* opaque */

/* Store client configuration: Mooncake's setup() arguments. Strings are
 * NUL-terminated; NULL means "". */
typedef struct mcgo_config {
  const char *local_hostname;        /* e.g. "127.0.0.1" or "host:port" */
  const char *metadata_server;       /* "http://127.0.0.1:8080/metadata", "P2PHANDSHAKE" */
  uint64_t global_segment_size;      /* bytes this client mounts into the cluster; 0 = none */
  uint64_t local_buffer_size;        /* bytes of the client's local staging buffer */
  const char *protocol;              /* "tcp" or "rdma" */
  const char *device_name;           /* RDMA device list, "" = auto / none */
  const char *master_server_address; /* "127.0.0.1:50051" */
} mcgo_config;

/* Mooncake's ReplicateConfig. Passed by value.
 * preferred_segments holds preferred_segment_count NUL-terminated names back
 * to back ("a\0b\0"), preferred_segments_len bytes in all; NULL when the
 * count is 0. */
typedef struct mcgo_replicate_config {
  uint64_t replica_num; /* 0 is treated as 1 */
  int32_t with_soft_pin;
  int32_t with_hard_pin;
  int32_t prefer_alloc_in_same_node;
  uint32_t preferred_segment_count;
  const char *preferred_segments;
  uint64_t preferred_segments_len;
} mcgo_replicate_config;

/* ---- identity ------------------------------------------------------------ */

uint32_t mcgo_abi_version(void);
/* "embedded" or "native". Static string. */
const char *mcgo_engine_name(void);
/* Upstream Mooncake commit the native shim was built against; "" for the
 * embedded engine. Static string. */
const char *mcgo_upstream_commit(void);

/* ---- lifecycle ----------------------------------------------------------- */

/* Creates an unconnected client. Returns 0 and sets *out, or an error. */
int32_t mcgo_create(mcgo_store **out);
/* Tears the client down (unmounts its segment, drops registrations) and
 * frees the handle. NULL is ignored. */
void mcgo_destroy(mcgo_store *s);
/* Connects the client. On failure returns a negative code and writes a
 * NUL-terminated message of at most errmsg_cap bytes into errmsg (if not
 * NULL). Calling setup twice returns MCGO_INVALID_PARAMS. */
int32_t mcgo_setup(mcgo_store *s, const mcgo_config *cfg, char *errmsg,
                   size_t errmsg_cap);
/* 0 when the client is set up and its master answers; MCGO_INVALID_PARAMS
 * when it is not set up; MCGO_RPC_FAIL when the master does not answer. */
int32_t mcgo_health_check(mcgo_store *s);
/* Writes the client's hostname (its segment name) into buf (NUL-terminated,
 * truncated to buf_cap) and its full length into *len. */
int32_t mcgo_hostname(mcgo_store *s, char *buf, size_t buf_cap, size_t *len);

/* ---- buffer registration ------------------------------------------------- */

/* Registers [addr, addr+size) for zero-copy transfers. Refuses addr 0,
 * size 0, and any overlap with a registered region (MCGO_INVALID_PARAMS). */
int32_t mcgo_register_buffer(mcgo_store *s, uintptr_t addr, uint64_t size);
/* Unregisters the region that starts at addr. Unknown addr: MCGO_INVALID_PARAMS. */
int32_t mcgo_unregister_buffer(mcgo_store *s, uintptr_t addr);

/* ---- copying single-key calls -------------------------------------------- */

/* Stores size bytes from data (any memory, copied during the call).
 * Write-once: an existing key is kept and 0 is returned. The copy is staged
 * in the client's local buffer: size 0, or a size larger than
 * local_buffer_size, is MCGO_INVALID_PARAMS. */
int32_t mcgo_put(mcgo_store *s, const char *key, size_t key_len,
                 const void *data, uint64_t size, mcgo_replicate_config cfg);
/* Like mcgo_put but replaces an existing object. */
int32_t mcgo_upsert(mcgo_store *s, const char *key, size_t key_len,
                    const void *data, uint64_t size, mcgo_replicate_config cfg);
/* Copies the object into dst (any memory). Returns its size in bytes, or an
 * error. *object_size (if not NULL) receives the object size whenever it is
 * known; when dst_cap is smaller than the object, MCGO_BUFFER_OVERFLOW is
 * returned so the caller can retry with a larger dst. The object is staged
 * in the client's local buffer: one larger than local_buffer_size is
 * MCGO_INVALID_PARAMS. */
int64_t mcgo_get(mcgo_store *s, const char *key, size_t key_len, void *dst,
                 uint64_t dst_cap, uint64_t *object_size);

/* The copying get in two steps, for callers that allocate the destination
 * only once they know the size (one read of the object, no size query).
 * mcgo_get_begin reads the object, as mcgo_get does, into memory the library
 * owns, and returns its size (or an error; then *handle is 0). On success
 * *handle is an opaque non-zero token that must be passed to mcgo_get_finish
 * exactly once, before mcgo_destroy. A handle holds the object's bytes (and,
 * on the native backend, space in the local buffer) until it is finished.
 * mcgo_get_finish copies the held bytes into dst and releases the handle;
 * dst_cap must be at least the size begin returned (else nothing is copied,
 * MCGO_BUFFER_OVERFLOW, and the handle is still released). dst NULL with
 * dst_cap 0 only releases. handle 0 is MCGO_INVALID_PARAMS. */
int64_t mcgo_get_begin(mcgo_store *s, const char *key, size_t key_len,
                       uintptr_t *handle);
int32_t mcgo_get_finish(uintptr_t handle, void *dst, uint64_t dst_cap);

/* ---- zero-copy single-key calls ------------------------------------------ */

/* Zero-copy calls read or write [addr, addr+size) directly. Over RDMA (and
 * in the embedded engine) every buffer must lie inside one registered region
 * or the local buffer, else the key fails with MCGO_TRANSFER_FAIL; upstream's
 * TCP transport does not check. put_from / upsert_from of size 0 store
 * nothing and return 0 (upstream's early return). */

int32_t mcgo_put_from(mcgo_store *s, const char *key, size_t key_len,
                      uintptr_t addr, uint64_t size, mcgo_replicate_config cfg);
int32_t mcgo_upsert_from(mcgo_store *s, const char *key, size_t key_len,
                         uintptr_t addr, uint64_t size,
                         mcgo_replicate_config cfg);
/* Returns bytes read (the object size) or an error; size < object size is
 * MCGO_INVALID_PARAMS. */
int64_t mcgo_get_into(mcgo_store *s, const char *key, size_t key_len,
                      uintptr_t addr, uint64_t size);

/* ---- zero-copy batch calls (one crossing per batch) ---------------------- */

/* results[i]: 0 or an error. */
int32_t mcgo_batch_put_from(mcgo_store *s, const char *keys,
                            const uint64_t *key_offsets, size_t n,
                            const uintptr_t *addrs, const uint64_t *sizes,
                            mcgo_replicate_config cfg, int64_t *results);
int32_t mcgo_batch_upsert_from(mcgo_store *s, const char *keys,
                               const uint64_t *key_offsets, size_t n,
                               const uintptr_t *addrs, const uint64_t *sizes,
                               mcgo_replicate_config cfg, int64_t *results);
/* results[i]: bytes read (object size) or an error. A destination larger
 * than the object is accepted; a smaller one is MCGO_INVALID_PARAMS. */
int32_t mcgo_batch_get_into(mcgo_store *s, const char *keys,
                            const uint64_t *key_offsets, size_t n,
                            const uintptr_t *addrs, const uint64_t *sizes,
                            int64_t *results);

/* Multi-buffer (CSR) variants. buf_offsets has n+1 entries, buf_offsets[0]
 * == 0, non-decreasing; buf_offsets[n] is the length of addrs and sizes.
 * Zero-size buffers inside a list are allowed and skipped; a key whose
 * buffers total 0 bytes is MCGO_INVALID_PARAMS. prefer_alloc_in_same_node
 * is accepted only with replica_num 1 (else every key is
 * MCGO_INVALID_PARAMS); the single-buffer puts refuse it altogether. */
int32_t mcgo_batch_put_from_multi_buffers(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *buf_offsets,
    mcgo_replicate_config cfg, int64_t *results);
int32_t mcgo_batch_upsert_from_multi_buffers(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *buf_offsets,
    mcgo_replicate_config cfg, int64_t *results);
/* results[i]: the object size, or an error: sum of sizes < object size is
 * MCGO_INVALID_PARAMS, > object size is MCGO_TRANSFER_FAIL (Mooncake's
 * memory-replica behaviour). */
int32_t mcgo_batch_get_into_multi_buffers(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *buf_offsets,
    int32_t prefer_same_node, int64_t *results);

/* ---- existence, size, removal -------------------------------------------- */

/* 1 exists, 0 missing, negative error. */
int32_t mcgo_is_exist(mcgo_store *s, const char *key, size_t key_len);
/* results[i]: 1, 0 or an error. */
int32_t mcgo_batch_is_exist(mcgo_store *s, const char *keys,
                            const uint64_t *key_offsets, size_t n,
                            int64_t *results);
/* Object size in bytes, or an error. */
int64_t mcgo_get_size(mcgo_store *s, const char *key, size_t key_len);
/* 0, or an error (MCGO_OBJECT_NOT_FOUND; MCGO_OBJECT_HAS_LEASE while a read
 * lease is held, unless force). */
int32_t mcgo_remove(mcgo_store *s, const char *key, size_t key_len,
                    int32_t force);
/* Removes every key matching the ECMAScript regular expression (whole-key
 * or partial match as upstream does: std::regex_search). Returns the count
 * removed, or an error (bad pattern: MCGO_INVALID_PARAMS). */
int64_t mcgo_remove_by_regex(mcgo_store *s, const char *pattern,
                             size_t pattern_len, int32_t force);
/* Removes every object; returns the count removed, or an error. */
int64_t mcgo_remove_all(mcgo_store *s, int32_t force);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MCGO_H_ */
