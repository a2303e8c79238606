/* The controller's orchestration: scheduling passes (coalesced, plus a
 * timer), launching a gang on its nodes all or nothing, following task
 * exits to the job's outcome, stopping gangs (failure, cancel, time
 * limit, node down), reconciling what agents report after either side
 * restarts, and fetching task logs. Domain code: it sees no protobuf; it
 * talks to agents through agentcmd.c. */
#ifndef COHORT_CONTROLLER_CLUSTER_H
#define COHORT_CONTROLLER_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/controller/agentcmd.h"
#include "lib/err.h"
#include "lib/inventory.h"
#include "lib/job.h"
#include "daemon/controller/reports.h"

struct event_base;
struct jobs;
struct nodes;
struct txq;
struct cluster;

struct topo;

struct cluster_opts {
	const struct topo *topo;	/* NULL: one flat domain */
	int64_t node_timeout_ms;	/* heartbeats missed → DOWN */
	uint32_t heartbeat_ms;		/* told to agents */
	uint64_t default_limit_s;	/* for jobs without --time */
	int64_t tick_ms;		/* timer for timeouts and passes */
	int queue_order;		/* enum sched_order */
	uint32_t queue_aging;		/* thousandths */
	/* Nodes allowed to register besides those in topo: sorted by
	 * strcmp, borrowed (NULL when none); or any name at all. */
	const char *const *known_nodes;
	size_t nknown_nodes;
	bool accept_unknown_nodes;
};

struct cluster *cluster_create(struct event_base *base, struct jobs *js,
    struct nodes *ns, struct agentcmd *ac, const struct cluster_opts *o,
    struct cerr *err);
void cluster_destroy(struct cluster *cl);

/* Something changed (a submit, an end, a node): run a pass soon. Many
 * calls in one loop round cost one pass. */
void cluster_changed(struct cluster *cl);

/* An agent message begins: what judging its reports may search is
 * bounded per message (REPORTS_SCANS_MAX). */
void cluster_reports_begin(struct cluster *cl);
/* May node name register (in the topology, in the nodes list, or any
 * name with accept_unknown_nodes)? */
bool cluster_node_known(const struct cluster *cl, const char *name);
/* The same, refused (ERR_DENIED), counted and logged when it may not. */
int cluster_check_node(struct cluster *cl, const char *name, int64_t now_ms,
    struct cerr *err);
/* A message from node (ngpus GPUs) whose longest list holds longest
 * entries: 0, or -1 with ERR_LIMIT when the node could not hold that
 * many tasks (refused, counted and logged). */
int cluster_check_lists(struct cluster *cl, const char *node, unsigned ngpus,
    size_t longest, int64_t now_ms, struct cerr *err);
/* An agent registered on conn_id, reporting the tasks it supervises.
 * ERR_DENIED for a node that is not known; ERR_LIMIT for more tasks than
 * it could hold. */
int cluster_register(struct cluster *cl, uint64_t conn_id, const char *name,
    const char *address, const struct inventory *inv, bool spare,
    const struct task_report *tasks, size_t ntasks, int64_t now_ms,
    struct cerr *err);
/* A heartbeat; ended tasks in it are handled as exits. */
void cluster_heartbeat(struct cluster *cl, uint64_t conn_id,
    const struct task_report *tasks, size_t ntasks, int64_t now_ms);
/* A task ended. 0 when recorded or when there is nothing to record (an
 * old attempt, an ended or unknown job): the caller acknowledges it after
 * the commit. -1 with err: ERR_DENIED when the reporting node does not
 * hold that rank of the job's current attempt (nothing changes). */
int cluster_task_exit(struct cluster *cl, uint64_t conn_id,
    const struct task_report *r, int64_t now_ms, struct cerr *err);
/* Cancel a job for who (owner or admin), stopping its gang if it runs. */
int cluster_cancel(struct cluster *cl, const struct peer *who, uint64_t id,
    int64_t now_ms, enum job_state *state, struct cerr *err);
void cluster_conn_closed(struct cluster *cl, uint64_t conn_id);

/* Read a task's log through its node's agent. cb runs later (or not at
 * all if this returns -1 with err). */
int cluster_read_log(struct cluster *cl, uint64_t job_id, unsigned rank,
    uint64_t offset, uint32_t max, int64_t now_ms, agentcmd_log_done cb,
    void *arg, struct cerr *err);

/* ---- Fault recovery (recovery.c) -------------------------------------- */

/* A node's health verdict, from its agent. */
void cluster_health(struct cluster *cl, uint64_t conn_id,
    const struct node_health *h, int64_t now_ms);
/* The XIDs of one heartbeat whose policy is fail-job (drain XIDs come as
 * GPU health): the jobs on each GPU named fail over, once per GPU, in one
 * pass. An XID on a GPU the node does not have is refused and counted;
 * past REPORTS_XIDS_PER_GPU per GPU the rest of the list is too. */
void cluster_xids(struct cluster *cl, uint64_t conn_id,
    const struct xid_report *x, size_t n, int64_t now_ms);
/* The checkpoints of one heartbeat: rank 0's agent (on conn_id) saw
 * LATEST name (step, path); from any other node one is refused and
 * counted. Of a job listed more than once only the highest step counts
 * (the last listed among equals), and a job's checkpoint is updated at
 * most once per JOBS_CKPT_MIN_INTERVAL_MS (the agent repeats LATEST in
 * every heartbeat, so a newer one is taken later). */
void cluster_checkpoints(struct cluster *cl, uint64_t conn_id,
    const struct checkpoint_report *r, size_t n, int64_t now_ms);
/* The node on conn_id saw the job's progress file change; refused and
 * counted unless that node holds part of the job's current attempt. */
void cluster_progress(struct cluster *cl, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, int64_t changed_ms);
/* Admin: remove a DOWN node that no job holds (ERR_CONFLICT otherwise),
 * from memory and from the store. */
int cluster_delete_node(struct cluster *cl, const struct peer *who,
    const char *node, int64_t now_ms, struct cerr *err);
/* Admin: drain nodes (with now: checkpoint and move their jobs). */
int cluster_drain(struct cluster *cl, const struct peer *who,
    const char *node, const char *reason, bool now, int64_t now_ms,
    struct cerr *err);
int cluster_resume(struct cluster *cl, const struct peer *who,
    const char *node, int64_t now_ms, struct cerr *err);

/* Counters for metrics and tests. */
struct cluster_stats {
	unsigned long passes;
	unsigned long started;
	unsigned long backfilled;
	uint64_t last_pass_us;		/* duration of the latest pass */
	uint64_t total_pass_us;
	unsigned long failures;		/* failures detected */
	unsigned long restarts;		/* jobs running again after one */
	uint64_t recovery_ms_sum;	/* failure → running again */
	uint64_t recovery_ms_p50;
	uint64_t recovery_ms_p99;
	uint64_t lost_work_ms;		/* summed over failures */
	unsigned long reports_rejected[REPORT_KINDS];	/* by kind */
};
void cluster_stats(const struct cluster *cl, struct cluster_stats *st);

#endif
