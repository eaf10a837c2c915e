/*
 * mcgo/store.h: the store client of mooncake-go's C ABI (conventions in
 * mcgo/common.h).
 *
 * Store specifics:
 *   - return codes are mooncake::ErrorCode values (MCGO_OK, MCGO_* of
 *     mcgo/codes.h);
 *   - an empty key is never stored: puts report MCGO_INVALID_PARAMS for it;
 *     reads report it missing (MCGO_OBJECT_NOT_FOUND, or 0 from the
 *     existence calls), as upstream;
 *   - addresses of zero-copy calls name registered host memory;
 *   - a multi-buffer object is the concatenation of its buffers in order;
 *   - all functions are thread safe for one store handle, except
 *     mcgo_store_destroy, which the caller must not race with other calls on
 *     the same handle.
 */
#ifndef MCGO_STORE_H_
#define MCGO_STORE_H_

#include "mcgo/common.h"
#include "mcgo/transfer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcgo_store mcgo_store; /* opaque */

/* The longest key any call takes (bytes); longer keys are refused with
 * MCGO_INVALID_PARAMS. Upstream's master matches remove-by-regex patterns
 * with std::regex, which recurses once per key byte: a 40,000-byte key
 * crashes it. Keys this binding stores stay far below that. */
#define MCGO_MAX_KEY_LEN 4096

/* Store client configuration: Mooncake's setup() arguments. Strings are
 * NUL-terminated; NULL means "". */
typedef struct mcgo_store_config {
  const char *local_hostname;        /* e.g. "127.0.0.1" or "host:port" */
  const char *metadata_server;       /* "http://127.0.0.1:8080/metadata", "P2PHANDSHAKE" */
  uint64_t global_segment_size;      /* bytes this client mounts into the cluster; 0 = none */
  uint64_t local_buffer_size;        /* bytes of the client's local staging buffer */
  const char *protocol;              /* "tcp" or "rdma" */
  const char *device_name;           /* RDMA device list, "" = auto / none */
  const char *master_server_address; /* "127.0.0.1:50051" */
  /* Upstream's further setup options (ABI 4); zero values keep upstream's
   * defaults. mcgo_store_capabilities says which this backend honours; the
   * others are accepted and have no effect. */
  const char *tenant_id;             /* "" = "default": a tenant sees only its own objects */
  const char *ssd_offload_path;      /* where offloaded objects go */
  int32_t enable_ssd_offload;        /* offload objects to SSD */
  int32_t enable_client_http_server; /* the client's own HTTP (metrics) server */
  int32_t client_http_port;          /* its port; 0 = upstream's default (9300) */
} mcgo_store_config;

/* Setup options a backend honours (mcgo_store_capabilities): the native
 * backend honours them, the embedded engine accepts them and honours none
 * (one namespace, no SSD, no HTTP server, no NoF or DFS storage). */
#define MCGO_CAP_TENANTS 1u
#define MCGO_CAP_SSD_OFFLOAD 2u
#define MCGO_CAP_CLIENT_HTTP_SERVER 4u
#define MCGO_CAP_NOF_REPLICAS 8u
/* dfs_replica_num: the native backend has it when upstream's
 * ReplicateConfig does (not v0.3.12.post1, where a nonzero dfs_replica_num
 * is MCGO_NOT_SUPPORTED); the embedded engine has no DFS storage. */
#define MCGO_CAP_DFS_REPLICAS 16u
/* Calls and options that upstream versions differ in (ABI 7). The native
 * backend has those of the upstream it was built against (detected when it
 * is configured: cgo/native/features.cmake), the embedded engine has them
 * all. Without its bit, each call named is MCGO_NOT_SUPPORTED (a batch call
 * refused as a whole, after the argument checks every call makes), and an
 * option is refused with MCGO_NOT_SUPPORTED by every call that takes a
 * mcgo_replicate_config asking for it. */
#define MCGO_CAP_SESSIONS 32u /* the get and put session calls and their range calls */
#define MCGO_CAP_MULTI_BUFFER_UPSERT 64u /* mcgo_store_batch_upsert_from_multi_buffers */
/* soft_pin_action DISABLE and has_soft_pin_ttl. Without them ENABLE (and
 * with_soft_pin) pins as before, and PRESERVE is upstream's older "no soft
 * pin": the same for a put, but an upsert that keeps the size unpins. */
#define MCGO_CAP_SOFT_PIN_ACTIONS 128u
#define MCGO_CAP_UNMOUNT_LOCAL_DISK 256u /* mcgo_store_unmount_local_disk_segment */
/* The MCGO_CAP_* bits of this backend. */
uint32_t mcgo_store_capabilities(void);

/* Mooncake's ReplicateConfig. Passed by value.
 * preferred_segments holds preferred_segment_count NUL-terminated names back
 * to back ("a\0b\0"), preferred_segments_len bytes in all; NULL when the
 * count is 0. */
typedef struct mcgo_replicate_config {
  uint64_t replica_num; /* 0 is treated as 1 */
  int32_t with_soft_pin; /* the old field: soft_pin_action ENABLE while that is PRESERVE */
  int32_t with_hard_pin;
  int32_t prefer_alloc_in_same_node;
  uint32_t preferred_segment_count;
  const char *preferred_segments;
  uint64_t preferred_segments_len;
  /* ABI 4: the rest of upstream's ReplicateConfig. */
  uint64_t nof_replica_num;       /* NVMe-oF replicas */
  uint64_t dfs_replica_num;       /* distributed-file-system replicas */
  int32_t soft_pin_action;        /* MCGO_SOFT_PIN_* */
  int32_t has_soft_pin_ttl;       /* soft_pin_ttl_ms is set (else the master's default) */
  uint64_t soft_pin_ttl_ms;
  uint32_t preferred_nof_segment_count; /* packed like preferred_segments */
  const char *preferred_nof_segments;
  uint64_t preferred_nof_segments_len;
  /* ABI 5: upstream's group_ids, given when has_group_ids: one routing
   * group per key of the call (a single-key call: one), packed like
   * preferred_segments, "" for none; a count that is not the call's key
   * count is MCGO_INVALID_PARAMS for every key. Members of a group share
   * read leases (a lookup of one leases them all) and the master evicts a
   * group as a whole; an existing object's group cannot change. */
  int32_t has_group_ids;
  uint32_t group_id_count;
  const char *group_ids;
  uint64_t group_ids_len;
  int32_t data_type; /* upstream's ObjectDataType: 0 unknown .. 9 general */
} mcgo_replicate_config;

/* soft_pin_action values (upstream's SoftPinAction). */
#define MCGO_SOFT_PIN_PRESERVE 0
#define MCGO_SOFT_PIN_ENABLE 1
#define MCGO_SOFT_PIN_DISABLE 2

/* ---- lifecycle ----------------------------------------------------------- */

/* Creates an unconnected client. Returns 0 and sets *out, or an error. */
int32_t mcgo_store_create(mcgo_store **out);
/* Tears the client down (unmounts its segment, drops registrations) and
 * frees the handle. NULL is ignored. */
void mcgo_store_destroy(mcgo_store *s);
/* Connects the client. On failure returns a negative code and writes a
 * NUL-terminated message of at most errmsg_cap bytes into errmsg (if not
 * NULL). Calling setup twice returns MCGO_INVALID_PARAMS. */
int32_t mcgo_store_setup(mcgo_store *s, const mcgo_store_config *cfg, char *errmsg,
                   size_t errmsg_cap);
/* mcgo_store_setup on an existing transfer engine, as upstream's RealClient
 * setup that takes a TransferEngine: the store moves its bytes with that
 * engine and shares its registrations and RPC port, so one process has one
 * engine. cfg->local_hostname must be "" or the engine's segment name,
 * cfg->metadata_server "" or the engine's metadata string, and the engine
 * must have a transport installed (MCGO_INVALID_PARAMS otherwise). While
 * the store is set up, mcgo_te_destroy refuses to destroy the engine. */
int32_t mcgo_store_setup_on_engine(mcgo_store *s, const mcgo_store_config *cfg,
                                   mcgo_te *engine, char *errmsg,
                                   size_t errmsg_cap);
/* Sets the store up as upstream's DummyClient (Python's setup_dummy, ABI 6):
 * a thin client of a real client that runs in another process (upstream's
 * standalone mooncake_client; with the embedded engine, any store set up
 * in this process, named by its hostname). server_address is that real
 * client's "host:port" (its RPC port; port 1..65535). Every call goes to
 * the real client, which owns what the dummy puts; the zero-copy calls
 * move bytes in shared memory from mcgo_store_alloc_from_mem_pool, which
 * the real client maps once registered with mcgo_store_register_buffer.
 * local_buffer_size bytes of shared memory stage the copying gets (0: none,
 * and then they fail). mem_pool_size is passed on as upstream takes it;
 * upstream does not use it. A dummy refuses with MCGO_NOT_SUPPORTED what
 * upstream's DummyClient does not have: the segment and SSD calls, the
 * transfer sessions, and batch_replica_clear. Its hostname is "". */
int32_t mcgo_store_setup_dummy(mcgo_store *s, uint64_t mem_pool_size,
                               uint64_t local_buffer_size, const char *server_address,
                               char *errmsg, size_t errmsg_cap);
/* Allocates size bytes (1 B..1 TiB) of shared memory for a dummy's zero-copy
 * calls and sets *addr (alloc_from_mem_pool). It must be registered, with
 * exactly this address and size, before a zero-copy call uses it; a dummy
 * refuses to register anything else. Freed when the store is destroyed.
 * MCGO_NOT_SUPPORTED on a store not set up as a dummy (upstream's
 * RealClient answers 0). */
int32_t mcgo_store_alloc_from_mem_pool(mcgo_store *s, uint64_t size, uintptr_t *addr);
/* 0 when the client is set up and its master answers; MCGO_INVALID_PARAMS
 * when it is not set up; MCGO_RPC_FAIL when the master does not answer. */
int32_t mcgo_store_health_check(mcgo_store *s);
/* Writes the client's hostname (its segment name) into buf (NUL-terminated,
 * truncated to buf_cap) and its full length into *len. */
int32_t mcgo_store_hostname(mcgo_store *s, char *buf, size_t buf_cap, size_t *len);

/* ---- buffer registration ------------------------------------------------- */

/* Registers [addr, addr+size) for zero-copy transfers. Refuses addr 0,
 * size 0, and any overlap with a registered region (MCGO_INVALID_PARAMS). */
int32_t mcgo_store_register_buffer(mcgo_store *s, uintptr_t addr, uint64_t size);
/* Unregisters the region that starts at addr. Unknown addr: MCGO_INVALID_PARAMS. */
int32_t mcgo_store_unregister_buffer(mcgo_store *s, uintptr_t addr);

/* ---- copying single-key calls -------------------------------------------- */

/* Stores size bytes from data (any memory, copied during the call).
 * Write-once: an existing key is kept and 0 is returned. The copy is staged
 * in the client's local buffer: size 0, or a size larger than
 * local_buffer_size, is MCGO_INVALID_PARAMS. */
int32_t mcgo_store_put(mcgo_store *s, const char *key, size_t key_len,
                 const void *data, uint64_t size, mcgo_replicate_config cfg);
/* Like mcgo_store_put but replaces an existing object. */
int32_t mcgo_store_upsert(mcgo_store *s, const char *key, size_t key_len,
                    const void *data, uint64_t size, mcgo_replicate_config cfg);
/* One object from several pieces of any memory (upstream's put_parts /
 * upsert_parts): the concatenation of datas[0..n_parts) (sizes likewise),
 * copied once, into the local buffer, which must hold the whole (else
 * MCGO_INVALID_PARAMS, as is a total of 0 bytes: upstream would store
 * nothing and report success). */
int32_t mcgo_store_put_parts(mcgo_store *s, const char *key, size_t key_len,
                             const uintptr_t *datas, const uint64_t *sizes,
                             size_t n_parts, mcgo_replicate_config cfg);
int32_t mcgo_store_upsert_parts(mcgo_store *s, const char *key, size_t key_len,
                                const uintptr_t *datas, const uint64_t *sizes,
                                size_t n_parts, mcgo_replicate_config cfg);
/* The copying batch put (upstream's put_batch / upsert_batch): key i gets
 * sizes[i] bytes from datas[i] (any memory, copied during the call). All the
 * values are staged in the local buffer at once, so their total must fit;
 * an empty value, a duplicate key or prefer_alloc_in_same_node is
 * MCGO_INVALID_PARAMS, and then nothing is stored. One result for the
 * batch, as upstream: 0, or the first failed key's error (the other keys
 * may be stored). */
int32_t mcgo_store_put_batch(mcgo_store *s, const char *keys,
                             const uint64_t *key_offsets, size_t n,
                             const uintptr_t *datas, const uint64_t *sizes,
                             mcgo_replicate_config cfg);
int32_t mcgo_store_upsert_batch(mcgo_store *s, const char *keys,
                                const uint64_t *key_offsets, size_t n,
                                const uintptr_t *datas, const uint64_t *sizes,
                                mcgo_replicate_config cfg);
/* The copying get, in two steps so that the caller allocates the
 * destination only once it knows the size (one read of the object, no size
 * query). mcgo_store_get_begin reads the object into memory the library
 * owns, staged in the client's local buffer (an object larger than
 * local_buffer_size is MCGO_INVALID_PARAMS), and returns its size (or an error; then *handle is 0). On success
 * *handle is an opaque non-zero token that must be passed to mcgo_store_get_finish
 * exactly once, before mcgo_store_destroy. A handle holds the object's bytes (and,
 * on the native backend, space in the local buffer) until it is finished.
 * mcgo_store_get_finish copies the held bytes into dst and releases the handle;
 * dst_cap must be at least the size begin returned (else nothing is copied,
 * MCGO_BUFFER_OVERFLOW, and the handle is still released). dst NULL with
 * dst_cap 0 only releases. handle 0 is MCGO_INVALID_PARAMS. */
int64_t mcgo_store_get_begin(mcgo_store *s, const char *key, size_t key_len,
                       uintptr_t *handle);
int32_t mcgo_store_get_finish(uintptr_t handle, void *dst, uint64_t dst_cap);

/* ---- zero-copy single-key calls ------------------------------------------ */

/* Zero-copy calls read or write [addr, addr+size) directly. Over RDMA (and
 * in the embedded engine) every buffer must lie inside one registered region
 * or the local buffer, else the key fails with MCGO_TRANSFER_FAIL; upstream's
 * TCP transport does not check. put_from / upsert_from of size 0 store
 * nothing and return 0 (upstream's early return). */

int32_t mcgo_store_put_from(mcgo_store *s, const char *key, size_t key_len,
                      uintptr_t addr, uint64_t size, mcgo_replicate_config cfg);
int32_t mcgo_store_upsert_from(mcgo_store *s, const char *key, size_t key_len,
                         uintptr_t addr, uint64_t size,
                         mcgo_replicate_config cfg);
/* Returns bytes read (the object size) or an error; size < object size is
 * MCGO_INVALID_PARAMS. */
int64_t mcgo_store_get_into(mcgo_store *s, const char *key, size_t key_len,
                      uintptr_t addr, uint64_t size);

/* ---- zero-copy batch calls (one crossing per batch) ---------------------- */

/* results[i]: 0 or an error. */
int32_t mcgo_store_batch_put_from(mcgo_store *s, const char *keys,
                            const uint64_t *key_offsets, size_t n,
                            const uintptr_t *addrs, const uint64_t *sizes,
                            mcgo_replicate_config cfg, int64_t *results);
int32_t mcgo_store_batch_upsert_from(mcgo_store *s, const char *keys,
                               const uint64_t *key_offsets, size_t n,
                               const uintptr_t *addrs, const uint64_t *sizes,
                               mcgo_replicate_config cfg, int64_t *results);
/* results[i]: bytes read (object size) or an error. A destination larger
 * than the object is accepted; a smaller one is MCGO_INVALID_PARAMS. */
int32_t mcgo_store_batch_get_into(mcgo_store *s, const char *keys,
                            const uint64_t *key_offsets, size_t n,
                            const uintptr_t *addrs, const uint64_t *sizes,
                            int64_t *results);

/* Multi-buffer (CSR) variants. buf_offsets has n+1 entries, buf_offsets[0]
 * == 0, non-decreasing; buf_offsets[n] is the length of addrs and sizes.
 * Zero-size buffers inside a list are allowed and skipped; a key whose
 * buffers total 0 bytes is MCGO_INVALID_PARAMS. prefer_alloc_in_same_node
 * is accepted only with replica_num 1 (else every key is
 * MCGO_INVALID_PARAMS); the single-buffer puts refuse it altogether. */
int32_t mcgo_store_batch_put_from_multi_buffers(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *buf_offsets,
    mcgo_replicate_config cfg, int64_t *results);
int32_t mcgo_store_batch_upsert_from_multi_buffers(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *buf_offsets,
    mcgo_replicate_config cfg, int64_t *results);
/* results[i]: the object size, or an error: sum of sizes < object size is
 * MCGO_INVALID_PARAMS, > object size is MCGO_TRANSFER_FAIL (Mooncake's
 * memory-replica behaviour). */
int32_t mcgo_store_batch_get_into_multi_buffers(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *buf_offsets,
    int32_t prefer_same_node, int64_t *results);

/* ---- existence, size, removal -------------------------------------------- */

/* 1 exists, 0 missing, negative error. */
int32_t mcgo_store_is_exist(mcgo_store *s, const char *key, size_t key_len);
/* results[i]: 1, 0 or an error. */
int32_t mcgo_store_batch_is_exist(mcgo_store *s, const char *keys,
                            const uint64_t *key_offsets, size_t n,
                            int64_t *results);
/* Object size in bytes, or an error. */
int64_t mcgo_store_get_size(mcgo_store *s, const char *key, size_t key_len);
/* 0, or an error (MCGO_OBJECT_NOT_FOUND; MCGO_OBJECT_HAS_LEASE while a read
 * lease is held, unless force). */
int32_t mcgo_store_remove(mcgo_store *s, const char *key, size_t key_len,
                    int32_t force);
/* ---- replicas ------------------------------------------------------------ */

/* Kinds of replica (upstream's Replica::Descriptor variants). */
#define MCGO_REPLICA_MEMORY 0     /* in a client's mounted segment */
#define MCGO_REPLICA_NOF 1        /* NVMe-oF */
#define MCGO_REPLICA_DISK 2       /* a file (SSD offload) */
#define MCGO_REPLICA_LOCAL_DISK 3 /* a client's local disk */
#define MCGO_REPLICA_DFS 4        /* a distributed file system */

/* Where one replica of an object lives (upstream's Replica::Descriptor).
 * location points into the names buffer of the call: the transport
 * endpoint (the segment) of a memory, NoF or local-disk replica, the file
 * path of a disk or DFS replica. */
typedef struct mcgo_replica_desc {
  uint64_t id;          /* upstream's replica id (the embedded engine: its index) */
  int32_t kind;         /* MCGO_REPLICA_* */
  int32_t status;       /* upstream's ReplicaStatus: 0 undefined, 1 initialized,
                           2 processing, 3 complete, 4 removed, 5 failed */
  uint64_t size;        /* bytes: the buffer (memory, NoF) or the object (files) */
  uint64_t address;     /* memory, NoF: the buffer's address in its segment
                           (0 in the embedded engine, which has no addresses) */
  uint64_t file_offset; /* DFS: the object's offset in its file */
  uint64_t location_offset, location_len; /* into names */
} mcgo_replica_desc;

/* The replicas of each key (upstream's batch_get_replica_desc; a lookup,
 * which grants a read lease like a get). results[i] is key i's replica
 * count, or an error: MCGO_OBJECT_NOT_FOUND for a key that is missing or
 * not yet readable (upstream reports both as an empty list). Descriptors go
 * to descs in key order, locations to names. When descs_cap or names_cap is
 * too small, returns MCGO_BUFFER_OVERFLOW with *descs_needed and
 * *names_needed set (and results filled), so that the call can be repeated
 * with room; both are set on success too. */
int32_t mcgo_store_batch_get_replica_desc(mcgo_store *s, const char *keys,
                                          const uint64_t *key_offsets, size_t n,
                                          mcgo_replica_desc *descs, size_t descs_cap,
                                          char *names, size_t names_cap,
                                          size_t *descs_needed, size_t *names_needed,
                                          int64_t *results);

/* Clears replicas (upstream's batch_replica_clear): for each key this
 * client wrote last and whose read leases have expired, the replicas on the
 * segment named by segment/segment_len, or all of them when it is empty. An
 * object left without replicas is removed. results[i]: 1 cleared, 0
 * skipped (missing, written by another client, leased, being written, no
 * replica on that segment), as upstream skips them silently. */
int32_t mcgo_store_batch_replica_clear(mcgo_store *s, const char *keys,
                                       const uint64_t *key_offsets, size_t n,
                                       const char *segment, size_t segment_len,
                                       int64_t *results);

/* Removes each key as mcgo_store_remove does; results[i]: 0 or an error
 * (MCGO_OBJECT_NOT_FOUND, MCGO_OBJECT_HAS_LEASE unless force,
 * MCGO_REPLICA_IS_NOT_READY while a write is in flight). */
int32_t mcgo_store_batch_remove(mcgo_store *s, const char *keys,
                                const uint64_t *key_offsets, size_t n,
                                int32_t force, int64_t *results);
/* Removes every key matching the ECMAScript regular expression (whole-key
 * or partial match as upstream does: std::regex_search). Returns the count
 * removed, or an error (bad pattern: MCGO_INVALID_PARAMS). */
int64_t mcgo_store_remove_by_regex(mcgo_store *s, const char *pattern,
                             size_t pattern_len, int32_t force);
/* Removes every object; returns the count removed, or an error. */
int64_t mcgo_store_remove_all(mcgo_store *s, int32_t force);

/* ---- segments (ABI 5) ---------------------------------------------------- */

/* Upstream's UUID (segments, tasks, clients), which it prints as
 * "first-second". */
typedef struct mcgo_uuid {
  uint64_t first, second;
} mcgo_uuid;
typedef mcgo_uuid mcgo_segment_id;

/* The unit allocate_and_mount rounds sizes up to (upstream's
 * facebook::cachelib::Slab::kSize). */
#define MCGO_SEGMENT_SLAB_SIZE (16ull << 20)

/* Contributes more memory to the cluster: allocates size bytes, rounded up
 * to whole MCGO_SEGMENT_SLAB_SIZE (16 MiB) slabs, and mounts them as more segments of
 * this client (upstream's allocate_and_mount_segment; one segment, unless
 * the protocol caps how much one registration may cover). protocol NULL or
 * "" is the store's own; location NULL is "". The ids go to ids (at most
 * ids_cap; more is MCGO_BUFFER_OVERFLOW, nothing stays mounted, *n_ids says
 * how many were needed), their count to *n_ids, the bytes mounted to
 * *allocated. size 0, or one that overflows when rounded, is
 * MCGO_INVALID_PARAMS. */
int32_t mcgo_store_allocate_and_mount_segment(mcgo_store *s, uint64_t size,
                                              const char *protocol, const char *location,
                                              mcgo_segment_id *ids, size_t ids_cap,
                                              size_t *n_ids, uint64_t *allocated);
/* Mounts [offset, offset+size) of the file at path (a shared-memory file,
 * say under /dev/shm), mapped shared, as more segments of this client
 * (upstream's mount_segment). The file must open read-write, offset must be
 * a multiple of the page size, size > 0 and the range inside the file, else
 * MCGO_INVALID_PARAMS. ids, n_ids, protocol, location as above. */
int32_t mcgo_store_mount_segment(mcgo_store *s, const char *path, uint64_t offset,
                                 uint64_t size, const char *protocol, const char *location,
                                 mcgo_segment_id *ids, size_t ids_cap, size_t *n_ids);
/* Unmounts segments this client mounted with mcgo_store_mount_segment
 * (upstream's unmount_segment), resp. mounted with
 * mcgo_store_allocate_and_mount_segment and frees their memory (upstream's
 * unmount_and_free_segment). grace_seconds 0: at once; replicas on the
 * segment are dropped and objects left without one are removed. Otherwise
 * the segment stays readable but takes no new replicas for grace_seconds,
 * and is then unmounted as above. results[i]: 0, or MCGO_INVALID_PARAMS for
 * an id this client did not mount that way (or unmounted already), or the
 * master's code. Returns 0 or the first failed id's code. */
int32_t mcgo_store_unmount_segment(mcgo_store *s, const mcgo_segment_id *ids, size_t n,
                                   uint64_t grace_seconds, int64_t *results);
int32_t mcgo_store_unmount_and_free_segment(mcgo_store *s, const mcgo_segment_id *ids,
                                            size_t n, uint64_t grace_seconds,
                                            int64_t *results);

/* Reads byte ranges of objects into registered memory (upstream's
 * get_into_ranges), each key looked up once per call (granting a read
 * lease). Ranges are CSR lists as the session calls take them: key i's are
 * [buf_offsets[i], buf_offsets[i+1]), range j reads sizes[j] bytes at byte
 * offsets[j] of the object into addrs[j]. results has one entry per range
 * (buf_offsets[n] of them): the bytes read, or the key's lookup error
 * (MCGO_OBJECT_NOT_FOUND, ...), or MCGO_INVALID_PARAMS for a range past the
 * object's end or memory that is not registered (upstream checks the
 * destination against its registrations for this call, over TCP too). */
int32_t mcgo_store_get_into_ranges(mcgo_store *s, const char *keys, const uint64_t *key_offsets,
                                   size_t n, const uintptr_t *addrs, const uint64_t *sizes,
                                   const uint64_t *offsets, const uint64_t *buf_offsets,
                                   int64_t *results);

/* ---- SSD offload tier (ABI 5) -------------------------------------------- */

/* Deregisters this client's SSD-offload tier from the master, then waits
 * out grace_seconds (upstream's unmount_local_disk_segment): a planned
 * shutdown stops being advertised as the owner of offloaded objects before
 * it stops serving them. Blocks for the grace period. Without SSD offload
 * (the embedded engine, or a store set up without it) it does nothing and
 * returns 0, as upstream. */
int32_t mcgo_store_unmount_local_disk_segment(mcgo_store *s, uint64_t grace_seconds);
/* The number of offloaded objects this client has read from peers over RPC
 * (upstream's get_offload_rpc_read_count; 0 without SSD offload), or an
 * error. */
int64_t mcgo_store_offload_rpc_read_count(mcgo_store *s);

/* ---- sessions (ABI 5) ---------------------------------------------------- */

/* Upstream's transfer sessions (RealClient's batch_*_session_* calls): many
 * range transfers of the same objects for one master round trip. A session
 * is per key and per client: starting one for a key replaces (get) or is
 * refused by (put) the key's current one. Ranges are CSR lists as in the
 * multi-buffer calls: key i's ranges are [buf_offsets[i], buf_offsets[i+1]),
 * range j moves sizes[j] bytes between registered memory at addrs[j] and the
 * object at byte offsets[j]. A key with no ranges moves nothing and reports
 * 0.
 *
 * Get sessions: start looks each key up once (granting a read lease, as a
 * get does) and keeps one complete memory replica; results[i] 0, or
 * MCGO_OBJECT_NOT_FOUND, MCGO_INVALID_REPLICA (no complete memory replica),
 * MCGO_LEASE_EXPIRED. The range reads then ask the master nothing: they read
 * the kept replica while its lease runs. results[i]: bytes read, or
 * MCGO_INVALID_PARAMS (no session, a range past the object's end),
 * MCGO_LEASE_EXPIRED (the lease ran out: the session is dropped),
 * MCGO_TRANSFER_FAIL (memory not registered, in the embedded engine and
 * over RDMA). end drops the keys' sessions (never fails). */
int32_t mcgo_store_batch_get_session_start(mcgo_store *s, const char *keys,
                                           const uint64_t *key_offsets, size_t n,
                                           int64_t *results);
int32_t mcgo_store_batch_get_into_multi_buffer_ranges(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *offsets,
    const uint64_t *buf_offsets, int64_t *results);
int32_t mcgo_store_batch_get_session_end(mcgo_store *s, const char *keys,
                                         const uint64_t *key_offsets, size_t n);

/* Put sessions: start reserves each object (sizes[i] bytes, placed by cfg)
 * without writing it; results[i] 0, or MCGO_INVALID_PARAMS (the key has a
 * put session already, size 0), MCGO_OBJECT_ALREADY_EXISTS, or the master's
 * code. Until end the object is being written: gets report
 * MCGO_REPLICA_IS_NOT_READY. The range writes fill it; results[i]: bytes
 * written, or MCGO_INVALID_PARAMS (no open session, a range past the end),
 * MCGO_TRANSFER_FAIL. end waits for the key's range writes in flight, then
 * makes the object readable (bytes never written read as zeros in the
 * embedded engine, as whatever the segment held upstream); revoke waits
 * likewise and drops the reservation. results[i] 0, or MCGO_INVALID_PARAMS
 * for a key without a session; a key whose end or revoke fails at the
 * master keeps its session, so the call can be repeated. */
int32_t mcgo_store_batch_put_session_start(mcgo_store *s, const char *keys,
                                           const uint64_t *key_offsets, size_t n,
                                           const uint64_t *sizes, mcgo_replicate_config cfg,
                                           int64_t *results);
int32_t mcgo_store_batch_put_from_multi_buffer_ranges(
    mcgo_store *s, const char *keys, const uint64_t *key_offsets, size_t n,
    const uintptr_t *addrs, const uint64_t *sizes, const uint64_t *offsets,
    const uint64_t *buf_offsets, int64_t *results);
int32_t mcgo_store_batch_put_session_end(mcgo_store *s, const char *keys,
                                         const uint64_t *key_offsets, size_t n,
                                         int64_t *results);
int32_t mcgo_store_batch_put_session_revoke(mcgo_store *s, const char *keys,
                                            const uint64_t *key_offsets, size_t n,
                                            int64_t *results);

/* ---- copy and move tasks (ABI 5) ------------------------------------------ */

/* Task types and states (upstream's TaskType, TaskStatus). */
#define MCGO_TASK_COPY 0
#define MCGO_TASK_MOVE 1
#define MCGO_TASK_PENDING 0
#define MCGO_TASK_PROCESSING 1
#define MCGO_TASK_FAILED 2
#define MCGO_TASK_SUCCESS 3

/* A task as upstream's QueryTaskResponse describes it; message is
 * NUL-terminated (cut to fit). */
typedef struct mcgo_task_info {
  mcgo_uuid id;
  int32_t type;   /* MCGO_TASK_COPY, MCGO_TASK_MOVE */
  int32_t status; /* MCGO_TASK_PENDING .. MCGO_TASK_SUCCESS */
  int64_t created_at_ms;    /* Unix epoch milliseconds */
  int64_t updated_at_ms;
  mcgo_uuid assigned_client; /* the client that runs it (holds the source) */
  char message[256];
} mcgo_task_info;

/* Asks the master to copy key's object onto each of the target_count
 * segments named in targets (packed as preferred_segments are), as
 * upstream's create_copy_task; the client that holds the source replica
 * does it in the background. *task gets the task's id. MCGO_INVALID_PARAMS
 * for no target or one that is not mounted, MCGO_OBJECT_NOT_FOUND,
 * MCGO_UNAVAILABLE_IN_CURRENT_STATUS for a segment being unmounted.
 * Targets that hold a replica already are left as they are. */
int32_t mcgo_store_create_copy_task(mcgo_store *s, const char *key, size_t key_len,
                                    const char *targets, uint32_t target_count,
                                    uint64_t targets_len, mcgo_uuid *task);
/* Asks the master to move key's replica on segment source to segment
 * target (upstream's create_move_task): MCGO_INVALID_PARAMS when source
 * holds no replica, equals target, or target is not mounted; otherwise as
 * the copy. */
int32_t mcgo_store_create_move_task(mcgo_store *s, const char *key, size_t key_len,
                                    const char *source, size_t source_len,
                                    const char *target, size_t target_len, mcgo_uuid *task);
/* Fills *out with the task's state: MCGO_TASK_NOT_FOUND for an id the
 * master does not know (or has forgotten: finished tasks are pruned). */
int32_t mcgo_store_query_task(mcgo_store *s, mcgo_uuid task, mcgo_task_info *out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MCGO_STORE_H_ */
