/*
 * mcgo/transfer.h: the transfer engine of mooncake-go's C ABI (conventions
 * in mcgo/common.h).
 *
 * An engine registers local memory, opens other engines' segments by name
 * (a segment is the memory another engine registered), and moves bytes with
 * one-sided reads and writes in batches: a request names a local address, a
 * segment, an address inside the peer's registered memory, and a length.
 *
 * Transfer specifics:
 *   - every function returns 0 or one set of codes, the engine's: the
 *     MCGO_TE_ERR_* of mcgo/codes.h (upstream's ERR_* values; upstream's
 *     Status::Code values map to the ERR_* of the same name, see
 *     mcgo_te_code_from_status). An exception is MCGO_TE_ERR_INTERNAL.
 *   - batch and segment handles are 64-bit ids from a per-engine table with
 *     generations: an unknown, stale, freed or another engine's id is
 *     MCGO_TE_ERR_INVALID_HANDLE, never undefined behaviour. 0 is never a
 *     valid id.
 *   - remote_addr is an absolute address in the peer's process, inside one
 *     buffer the peer registered (as upstream's target_offset).
 *   - a batch has a capacity counted over its whole life (requests are never
 *     removed from it); submitting past it adds nothing.
 *   - transfers run asynchronously after submit; the memory they read and
 *     write must stay mapped until mcgo_te_batch_status reports no task in
 *     flight. Nothing can cancel a transfer that was submitted (upstream
 *     cannot); mcgo_te_destroy ends all of them.
 *   - all functions are thread safe for one engine, except mcgo_te_destroy,
 *     which the caller must not race with other calls on the same engine.
 */
#ifndef MCGO_TRANSFER_H_
#define MCGO_TRANSFER_H_

#include "mcgo/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcgo_te mcgo_te; /* opaque */

/* Engine configuration: upstream TransferEngine::init's arguments. Strings
 * are NUL-terminated; NULL means "". */
typedef struct mcgo_te_config {
  /* "http://127.0.0.1:8080/metadata", "https://...", or "P2PHANDSHAKE".
   * Engines meet through it: an engine can open the segments of engines
   * created with the same string. Anything else is
   * MCGO_TE_ERR_INVALID_ARGUMENT (upstream aborts the process on an etcd
   * string when built without etcd). */
  const char *metadata_server;
  /* This engine's segment name, "host:port", which peers open. With
   * P2PHANDSHAKE, "host": the engine appends its RPC port. Required. */
  const char *local_server_name;
  /* Upstream's ip_or_host and rpc_port arguments ("" and 0: derived from
   * local_server_name; upstream uses them only with its legacy RPC port
   * binding). */
  const char *host;
  uint32_t rpc_port;
} mcgo_te_config;

/* ---- lifecycle ----------------------------------------------------------- */

/* Creates and initialises an engine with no transport installed. On failure
 * returns a code, writes a NUL-terminated message of at most errmsg_cap
 * bytes into errmsg (if not NULL), and leaves *out NULL. */
int32_t mcgo_te_create(const mcgo_te_config *cfg, mcgo_te **out, char *errmsg,
                       size_t errmsg_cap);
/* Installs a transport: "tcp" or "rdma" (rdma: device_names is a comma list
 * of NICs, "" = every NIC found; nic_priority_matrix is upstream's JSON
 * matrix, "" = derived from the topology). Installing an installed
 * transport again is 0. Memory registered before is registered with it. */
int32_t mcgo_te_install_transport(mcgo_te *e, const char *protocol,
                                  const char *device_names,
                                  const char *nic_priority_matrix);
/* Ends every transfer of the engine, outgoing and incoming, unregisters its
 * memory and frees it: when it returns, no engine thread touches caller
 * memory and every id of the engine is invalid. While a store runs on the
 * engine (mcgo_store_setup_on_engine) it refuses with
 * MCGO_TE_ERR_BATCH_BUSY and does nothing. NULL is 0. */
int32_t mcgo_te_destroy(mcgo_te *e);

/* ---- identity ------------------------------------------------------------ */

/* Strings are written NUL-terminated, truncated to buf_cap; *len (if not
 * NULL) gets the full length. */
/* The segment name peers open ("127.0.0.1:17001"). */
int32_t mcgo_te_segment_name(mcgo_te *e, char *buf, size_t buf_cap, size_t *len);
/* The RPC endpoint, "ip:port" (upstream getLocalIpAndPort). */
int32_t mcgo_te_local_address(mcgo_te *e, char *buf, size_t buf_cap, size_t *len);
int32_t mcgo_te_rpc_port(mcgo_te *e, uint32_t *port);
/* The local NIC topology as upstream's JSON ("{}" without NICs). */
int32_t mcgo_te_topology(mcgo_te *e, char *buf, size_t buf_cap, size_t *len);

/* ---- registration -------------------------------------------------------- */

/* Registers [addr, addr+len) with every transport. addr 0, len 0, a range
 * that wraps: MCGO_TE_ERR_INVALID_ARGUMENT; any overlap with registered
 * memory: MCGO_TE_ERR_ADDRESS_OVERLAPPED. location is upstream's ("" means
 * "*": any). remote_accessible 0 keeps an RDMA region local-only. */
int32_t mcgo_te_register(mcgo_te *e, uintptr_t addr, uint64_t len,
                         const char *location, int32_t remote_accessible);
/* Unregisters the region that starts at addr (else
 * MCGO_TE_ERR_ADDRESS_NOT_REGISTERED). */
int32_t mcgo_te_unregister(mcgo_te *e, uintptr_t addr);
/* All or nothing. */
int32_t mcgo_te_register_batch(mcgo_te *e, const uintptr_t *addrs,
                               const uint64_t *lens, size_t n,
                               const char *location);
/* All or nothing: an address that starts no region refuses the whole call
 * (MCGO_TE_ERR_ADDRESS_NOT_REGISTERED) and unregisters nothing. */
int32_t mcgo_te_unregister_batch(mcgo_te *e, const uintptr_t *addrs, size_t n);

/* ---- segments ------------------------------------------------------------ */

/* Opens the segment of the engine named name (its mcgo_te_segment_name;
 * leading '/' ignored) and sets *seg. Opening a name twice gives ids of the
 * same segment; the engine's own name opens its own memory. An empty name is
 * MCGO_TE_ERR_INVALID_ARGUMENT, an unknown one MCGO_TE_ERR_METADATA. */
int32_t mcgo_te_open_segment(mcgo_te *e, const char *name, size_t name_len,
                             uint64_t *seg);
/* Invalidates seg. */
int32_t mcgo_te_close_segment(mcgo_te *e, uint64_t seg);
/* The peer's registered buffers, in the order it registered them: fills
 * min(cap, total) entries of addrs and lens and sets *total. The list is the
 * one seen when the segment was opened, or refreshed (refresh != 0 fetches
 * it again first). */
int32_t mcgo_te_segment_buffers(mcgo_te *e, uint64_t seg, int32_t refresh,
                                uint64_t *addrs, uint64_t *lens, size_t cap,
                                size_t *total);

/* ---- batches ------------------------------------------------------------- */

#define MCGO_TE_READ 0  /* remote -> local */
#define MCGO_TE_WRITE 1 /* local -> remote */

/* Task and batch states: upstream's TransferStatusEnum. */
#define MCGO_TE_WAITING 0
#define MCGO_TE_PENDING 1
#define MCGO_TE_COMPLETED 4
#define MCGO_TE_FAILED 6

/* The largest batch capacity. */
#define MCGO_TE_MAX_BATCH (1u << 20)
/* The largest notification, name and message together: upstream sends it
 * as one JSON frame of at most 1 MiB, and escaping can grow it. */
#define MCGO_TE_NOTIFY_MAX_BYTES (128u << 10)

/* One request. No pointers; 40 bytes. */
typedef struct mcgo_te_request {
  uint32_t opcode;      /* MCGO_TE_READ or MCGO_TE_WRITE */
  uint32_t reserved;    /* 0 */
  uint64_t segment;     /* from mcgo_te_open_segment */
  uint64_t local_addr;  /* in memory this engine registered */
  uint64_t remote_addr; /* inside one buffer the peer registered */
  uint64_t length;
} mcgo_te_request;

typedef struct mcgo_te_task_status {
  int32_t state;    /* MCGO_TE_WAITING ... MCGO_TE_FAILED */
  uint32_t reserved;
  uint64_t bytes;   /* bytes moved: 0, or the length once COMPLETED */
} mcgo_te_task_status;

/* What became of a batch's notification. */
#define MCGO_TE_NOTIFY_NONE 0
#define MCGO_TE_NOTIFY_PENDING 1 /* sent when the batch is seen COMPLETED */
#define MCGO_TE_NOTIFY_SENT 2
#define MCGO_TE_NOTIFY_DROPPED 3 /* the batch failed: nothing is sent */
#define MCGO_TE_NOTIFY_SEND_FAILED 4 /* notify_rc says why */

typedef struct mcgo_te_batch_summary {
  /* COMPLETED when every task is (or the batch has none); FAILED as soon as
   * one task failed, even while others are still in flight; else WAITING. */
  int32_t state;
  uint32_t in_flight; /* tasks not finished: the memory is in use while > 0 */
  uint64_t tasks;     /* tasks submitted to the batch */
  uint64_t bytes;     /* bytes of the COMPLETED tasks */
  int32_t notify;     /* MCGO_TE_NOTIFY_* */
  int32_t notify_rc;  /* with MCGO_TE_NOTIFY_SEND_FAILED: the code */
} mcgo_te_batch_summary;

/* Allocates a batch for up to capacity requests (0 .. MCGO_TE_MAX_BATCH). */
int32_t mcgo_te_batch_alloc(mcgo_te *e, uint32_t capacity, uint64_t *batch);
/* Adds n requests and starts them. Refused as a whole, adding nothing:
 * a bad handle (MCGO_TE_ERR_INVALID_HANDLE), opcode, wrapping range or
 * reserved field (MCGO_TE_ERR_INVALID_ARGUMENT), more requests than the
 * capacity left (MCGO_TE_ERR_TOO_MANY_REQUESTS), and, in the embedded
 * backend, a local range outside the engine's registered memory
 * (MCGO_TE_ERR_ADDRESS_NOT_REGISTERED, as upstream's RDMA; its TCP does not
 * check). A zero-length request completes without moving anything. A
 * remote range outside the peer's registered buffers fails its task.
 * With notify_name or notify_msg non-empty, the batch gets a notification
 * (at most one; a second replaces it): it is sent to the peer of reqs[0]
 * when a status call first sees the whole batch COMPLETED, never for a
 * batch that failed. */
int32_t mcgo_te_batch_submit(mcgo_te *e, uint64_t batch,
                             const mcgo_te_request *reqs, size_t n,
                             const char *notify_name, size_t notify_name_len,
                             const char *notify_msg, size_t notify_msg_len);
/* The state of every task, in one call: fills tasks[0 .. min(cap, tasks))
 * (tasks may be NULL with cap 0) and *summary. */
int32_t mcgo_te_batch_status(mcgo_te *e, uint64_t batch,
                             mcgo_te_task_status *tasks, size_t cap,
                             mcgo_te_batch_summary *summary);
/* Frees the batch. MCGO_TE_ERR_BATCH_BUSY (and the batch stays) while a
 * task is in flight. */
int32_t mcgo_te_batch_free(mcgo_te *e, uint64_t batch);

/* ---- notifications ------------------------------------------------------- */

/* Sends a notification to the engine of segment seg, or, with seg 0, to
 * the engine whose segment name is peer. name and msg are valid UTF-8, at
 * most MCGO_TE_NOTIFY_MAX_BYTES together. An unknown peer is
 * MCGO_TE_ERR_METADATA. */
int32_t mcgo_te_notify_send(mcgo_te *e, uint64_t seg, const char *peer,
                            size_t peer_len, const char *name, size_t name_len,
                            const char *msg, size_t msg_len);
/* Moves up to max_n received notifications, oldest first, into buf: name i
 * then message i, back to back, lengths in name_lens[i] and msg_lens[i].
 * Only whole notifications move; *n is how many. When the next one does not
 * fit, *need (if not NULL) gets its size and it stays queued. */
int32_t mcgo_te_notify_recv(mcgo_te *e, char *buf, uint64_t buf_cap,
                            uint64_t *name_lens, uint64_t *msg_lens,
                            size_t max_n, size_t *n, uint64_t *need);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MCGO_TRANSFER_H_ */
