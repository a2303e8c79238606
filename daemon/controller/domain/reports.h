/* What an agent may report, and about which jobs (docs/SPEC.md "Security
 * model"): a report that names a job counts only when it comes from the
 * node holding that rank in the job's current attempt; checkpoints only
 * from rank 0's node. Everything else is refused, counted by kind (for
 * cohort_agent_reports_rejected_total) and logged with the node's name,
 * a few lines per node per window. Domain code: no protobuf, no
 * libevent; the judging is a pure function of the job and the node. */
#ifndef COHORT_CONTROLLER_REPORTS_H
#define COHORT_CONTROLLER_REPORTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/job.h"
#include "lib/ratelim.h"

enum report_kind {
	REPORT_TASK_EXIT = 0,	/* an ended task (TaskExit, or in a list) */
	REPORT_TASK_RUNNING,	/* a running task in a heartbeat/register */
	REPORT_CHECKPOINT,
	REPORT_PROGRESS,
	REPORT_TOO_MANY,	/* a list longer than the node could hold */
	REPORT_REGISTER,	/* a registration refused (unknown node) */
	REPORT_XID,		/* an XID on a GPU the node does not have */
	REPORT_STEP_TIME,	/* a rank's compute time per step */
	REPORT_KINDS
};

enum report_verdict {
	REPORT_ACCEPT,	/* from the node holding it: act on it */
	REPORT_STALE,	/* another attempt, an ended or unknown job: nothing
			 * to change (an exit is acknowledged, a running
			 * task stopped on the reporting node only) */
	REPORT_FOREIGN,	/* the job's current attempt, but not this node's
			 * to report: refused */
};

/* Lines logged per node per window about refused reports; the rest are
 * counted and summed up in the next line. */
#define REPORTS_LOG_BURST 5
#define REPORTS_LOG_WINDOW_MS 10000
/* Tasks (or checkpoints, progress reports, XIDs) one message may list:
 * what the node could host at once (a job per GPU, each with the most
 * tasks per node a job may ask for; an agent forgets an ended task once
 * it is acknowledged, and starts nothing while it cannot reach the
 * controller), and never fewer than the floor. */
#define REPORTS_TASKS_FLOOR 4096

/* Reports that cannot be judged in constant time (a node named by a
 * progress report or a running task, not by its rank) searched for in
 * the gang's placement, per message; the rest of a message's such
 * reports are refused unsearched. Reports from the rightful node seldom
 * need a search (cluster.c looks at the node's GPUs first). */
#define REPORTS_SCANS_MAX 256

/* Fail-job XIDs one heartbeat may list: this many per GPU of the node;
 * the rest of the list is refused (once, as too_many). Each GPU is acted
 * on once per message, in one pass over the active jobs. */
#define REPORTS_XIDS_PER_GPU 4

/* A checkpoint as rank 0's agent reports it (LATEST of a job). */
struct checkpoint_report {
	uint64_t job_id;
	uint32_t attempt;
	uint64_t step;
	const char *path;	/* borrowed */
	int64_t time_ms;	/* when the job wrote it */
	uint32_t cost_ms;	/* what the job says writing it took; 0: none */
};

/* A fail-job XID as the agent reports it. */
struct xid_report {
	uint32_t gpu;
	uint32_t xid;
};

/* Judge one report of kind from node about (job, attempt, rank); job may
 * be NULL (the controller has no such job). rank is ignored for
 * checkpoints (rank 0's node) and progress (any node of the job). */
enum report_verdict reports_judge(const struct job *job, const char *node,
    enum report_kind kind, uint32_t attempt, unsigned rank);

/* The most entries a node with ngpus GPUs may list in one message. */
size_t reports_tasks_max(unsigned ngpus);

/* The kind's label on /metrics ("task_exit", "checkpoint", ...). */
const char *report_kind_name(enum report_kind kind);

struct reports {
	unsigned long rejected[REPORT_KINDS];
	/* For refusals not tied to a registered node's budget. */
	struct ratelim unregistered_log;
};

/* Count a refused report of kind and log what (one line, with the node's
 * name) within rl's budget (the node's own; NULL: the shared one). */
void reports_reject(struct reports *r, struct ratelim *rl, const char *node,
    enum report_kind kind, int64_t now_ms, const char *what);

#endif
