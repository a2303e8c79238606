/* Fault recovery (docs/SPEC.md "Health", docs/design/recovery.md): what the
 * controller does with a node's health, XIDs, drains, checkpoints and
 * progress. Domain code like cluster.h: `now` comes in with every call. */
#ifndef COHORT_CONTROLLER_RECOVERY_H
#define COHORT_CONTROLLER_RECOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/inventory.h"
#include "lib/job.h"
#include "daemon/controller/domain/reports.h"

struct cluster;

/* A node's health verdict, from its agent. */
void recovery_health(struct cluster *cl, uint64_t conn_id,
    const struct node_health *h, int64_t now_ms);
/* The XIDs of one heartbeat whose policy is fail-job (drain XIDs come as
 * GPU health): the jobs on each GPU named fail over, once per GPU, in one
 * pass. An XID on a GPU the node does not have is refused and counted;
 * past REPORTS_XIDS_PER_GPU per GPU the rest of the list is too. */
void recovery_xids(struct cluster *cl, uint64_t conn_id,
    const struct xid_report *x, size_t n, int64_t now_ms);
/* The checkpoints of one heartbeat: rank 0's agent (on conn_id) saw
 * LATEST name (step, path); from any other node one is refused and
 * counted. Of a job listed more than once only the highest step counts
 * (the last listed among equals), and a job's checkpoint is updated at
 * most once per JOBS_CKPT_MIN_INTERVAL_MS (the agent repeats LATEST in
 * every heartbeat, so a newer one is taken later). */
void recovery_checkpoints(struct cluster *cl, uint64_t conn_id,
    const struct checkpoint_report *r, size_t n, int64_t now_ms);
/* The node on conn_id saw the job's progress file change at changed_ms;
 * refused and counted unless that node holds part of the job's current
 * attempt. */
void recovery_progress(struct cluster *cl, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, int64_t changed_ms, int64_t now_ms);
/* Admin: drain a node (with now: checkpoint and move its jobs). */
int recovery_drain(struct cluster *cl, const struct peer *who,
    const char *node, const char *reason, bool now, int64_t now_ms,
    struct cerr *err);
int recovery_resume(struct cluster *cl, const struct peer *who,
    const char *node, int64_t now_ms, struct cerr *err);
/* Admin: drain or resume the named nodes (distinct, each known:
 * ERR_NOT_FOUND otherwise) all or none, as nodes_drain_many and
 * nodes_resume_many say; with now, the jobs on every node drained are
 * checkpointed and moved. *changed: how many nodes changed. */
int recovery_drain_nodes(struct cluster *cl, const struct peer *who,
    char *const *names, size_t n, const char *reason, bool now, bool force,
    int64_t now_ms, size_t *changed, struct cerr *err);
int recovery_resume_nodes(struct cluster *cl, const struct peer *who,
    char *const *names, size_t n, int64_t now_ms, size_t *changed,
    struct cerr *err);

#endif
