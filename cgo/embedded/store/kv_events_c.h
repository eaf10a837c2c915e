/*
 * Embedded engine only: the KV events of an embedded cluster, for Go's
 * publisher (internal/cabi/cstore, mooncaketest.StartKVEvents). Not part of
 * the C ABI (cgo/include/mcgo): the native backend's master publishes its
 * own over ZMQ, and these functions exist only in builds that link the
 * embedded engine.
 *
 * A cluster is named by the master_server_address its clients use.
 * Recording may start before the cluster exists (it starts with its first
 * client) and goes on across its clients coming and going.
 */
#ifndef MCGO_EMBEDDED_STORE_KV_EVENTS_C_H_
#define MCGO_EMBEDDED_STORE_KV_EVENTS_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Starts recording the events of the cluster at address in a queue of
 * capacity events (0: upstream's 65536). MCGO_OK, or MCGO_INVALID_PARAMS
 * (empty address, or already recording). */
int32_t mcgo_embedded_kv_events_start(const char *address, size_t address_len, uint64_t capacity);

/* Stops recording and drops what is queued; a waiting drain returns
 * MCGO_OBJECT_NOT_FOUND. MCGO_OBJECT_NOT_FOUND when not recording. A later
 * start numbers sequences from 1 again, as a restarted master does. */
int32_t mcgo_embedded_kv_events_stop(const char *address, size_t address_len);

/* Takes the next batch (at most 64 events), waiting up to timeout_ms for
 * one. Each event is packed into buf as
 *   uint8 kind (1 stored, 2 removed), uint8 medium (1 "cpu"),
 *   uint32 key length, uint32 group length (little endian), key, group.
 * On MCGO_OK, *n events (0 after the timeout) fill *used bytes, *seq is the
 * batch's sequence number (a sequence was reserved for every event the full
 * queue dropped before it) and *dropped the events dropped so far. When not
 * even the first event fits in cap bytes: MCGO_BUFFER_OVERFLOW with the
 * bytes it needs in *used, and nothing taken. MCGO_OBJECT_NOT_FOUND when
 * not recording (or stopped and drained). */
int32_t mcgo_embedded_kv_events_drain(const char *address, size_t address_len, uint32_t timeout_ms,
                                      uint8_t *buf, size_t cap, uint32_t *n, uint64_t *seq,
                                      size_t *used, uint64_t *dropped);

#ifdef __cplusplus
}
#endif

#endif /* MCGO_EMBEDDED_STORE_KV_EVENTS_C_H_ */
