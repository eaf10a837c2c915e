// transfer_batch.h: what both transfer-engine backends compute of a batch
// for mcgo_te_batch_status (and _free): the summary of its tasks and the
// state of its notification, so that both report a batch the same way.
// Header-only, C++17.
#ifndef MCGO_COMMON_TRANSFER_BATCH_H_
#define MCGO_COMMON_TRANSFER_BATCH_H_

#include <cstddef>
#include <cstdint>

#include "mcgo/transfer.h"

namespace mcgo::te {

// Summarize fills *sum from the n tasks of a batch, and tasks[0..cap) with
// the first of them. state(i, &bytes) returns task i's MCGO_TE_* state and,
// when it is COMPLETED, sets bytes (the backend reads them only then).
// A batch is FAILED when a task failed, else COMPLETED when none is in
// flight, else WAITING; only completed tasks count bytes. The notification
// fields are left to SettleNotify.
template <typename State>
void Summarize(size_t n, State &&state, mcgo_te_task_status *tasks, size_t cap,
               mcgo_te_batch_summary *sum) {
  *sum = mcgo_te_batch_summary{};
  bool failed = false;
  for (size_t i = 0; i < n; ++i) {
    uint64_t done = 0;
    const int32_t st = state(i, &done);
    const uint64_t bytes = st == MCGO_TE_COMPLETED ? done : 0;
    if (st == MCGO_TE_FAILED) failed = true;
    if (st != MCGO_TE_COMPLETED && st != MCGO_TE_FAILED) ++sum->in_flight;
    sum->bytes += bytes;
    if (i < cap) tasks[i] = mcgo_te_task_status{st, 0, bytes};
  }
  sum->tasks = n;
  sum->state = failed ? MCGO_TE_FAILED : (sum->in_flight == 0 ? MCGO_TE_COMPLETED : MCGO_TE_WAITING);
}

// SettleNotify moves a batch's pending notification on once the batch is
// final: a failed batch drops it; a completed one sends it, once, with
// send() (0, or the code it failed with). Then it copies the notification's
// state into the summary.
template <typename Send>
void SettleNotify(int32_t *notify, int32_t *notify_rc, Send &&send, mcgo_te_batch_summary *sum) {
  if (*notify == MCGO_TE_NOTIFY_PENDING) {
    if (sum->state == MCGO_TE_FAILED) {
      *notify = MCGO_TE_NOTIFY_DROPPED;
    } else if (sum->state == MCGO_TE_COMPLETED) {
      const int32_t rc = send();
      *notify = rc == 0 ? MCGO_TE_NOTIFY_SENT : MCGO_TE_NOTIFY_SEND_FAILED;
      *notify_rc = rc;
    }
  }
  sum->notify = *notify;
  sum->notify_rc = *notify_rc;
}

// ArmNotify records the notification of a submit on batch b (either
// backend's batch type): pending until the batch is final.
template <typename Batch>
void ArmNotify(Batch *b, const char *name, size_t name_len, const char *msg, size_t msg_len) {
  b->has_notify = true;
  b->notify_name.assign(name == nullptr ? "" : name, name_len);
  b->notify_msg.assign(msg == nullptr ? "" : msg, msg_len);
  b->notify = MCGO_TE_NOTIFY_PENDING;
  b->notify_rc = 0;
}

}  // namespace mcgo::te

#endif  // MCGO_COMMON_TRANSFER_BATCH_H_
