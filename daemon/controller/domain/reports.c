/* Reports bound to the placement: see reports.h. */
#include "config.h"

#include <stdio.h>

#include "lib/log.h"
#include "daemon/controller/domain/reports.h"

static const char *const report_kind_names[REPORT_KINDS] = {
	[REPORT_TASK_EXIT] = "task_exit",
	[REPORT_TASK_RUNNING] = "task_running",
	[REPORT_CHECKPOINT] = "checkpoint",
	[REPORT_PROGRESS] = "progress",
	[REPORT_TOO_MANY] = "too_many",
	[REPORT_REGISTER] = "register",
	[REPORT_XID] = "xid",
	[REPORT_STEP_TIME] = "step_time",
};

const char *
report_kind_name(enum report_kind kind)
{
	return (unsigned)kind < REPORT_KINDS ? report_kind_names[kind] :
	    "unknown";
}

enum report_verdict
reports_judge(const struct job *job, const char *node, enum report_kind kind,
    uint32_t attempt, unsigned rank)
{
	/* Only the current attempt of a job holding an allocation can be
	 * changed by a report; for anything else the agent is told to
	 * forget it (or to stop it, on its own node). An agent's attempt
	 * newer than the controller's (a database restored from an older
	 * copy) is no more current than an older one. */
	if (job == NULL || job->nplace == 0 || job_state_is_final(job->state) ||
	    attempt != job->attempt)
		return REPORT_STALE;
	switch (kind) {
	case REPORT_TASK_EXIT:
	case REPORT_TASK_RUNNING:
	case REPORT_STEP_TIME:
		return job_rank_on_node(job, rank, node) ? REPORT_ACCEPT :
		    REPORT_FOREIGN;
	case REPORT_CHECKPOINT:
		/* Rank 0 lives on the node of node_rank 0. */
		return job_rank_on_node(job, 0, node) ? REPORT_ACCEPT :
		    REPORT_FOREIGN;
	case REPORT_PROGRESS:
		return job_node_placement(job, node) != NULL ? REPORT_ACCEPT :
		    REPORT_FOREIGN;
	default:
		return REPORT_FOREIGN;
	}
}

size_t
reports_tasks_max(unsigned ngpus)
{
	size_t n = (size_t)(ngpus > 0 ? ngpus : 1) *
	    JOB_TASKS_PER_NODE_LIMIT;

	return n > REPORTS_TASKS_FLOOR ? n : REPORTS_TASKS_FLOOR;
}

void
reports_reject(struct reports *r, struct ratelim *rl, const char *node,
    enum report_kind kind, int64_t now_ms, const char *what)
{
	unsigned long left_out = 0;

	if ((unsigned)kind < REPORT_KINDS)
		r->rejected[kind]++;
	if (rl == NULL)
		rl = &r->unregistered_log;
	if (!ratelim_allow(rl, now_ms, REPORTS_LOG_BURST,
	    REPORTS_LOG_WINDOW_MS, &left_out))
		return;
	if (left_out > 0)
		log_warnx("node %s: refused (%s): %s (and %lu more refusals "
		    "not logged)", node, report_kind_name(kind), what,
		    left_out);
	else
		log_warnx("node %s: refused (%s): %s", node,
		    report_kind_name(kind), what);
}
