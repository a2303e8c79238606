#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "cluster.h"
#include "driver.h"
#include "http.h"
#include "jobs.h"
#include "metrics.h"
#include "nodes.h"
#include "quota.h"
#include "server.h"
#include "txq.h"

static const enum job_state http_states[] = {
	JOB_PENDING, JOB_RUNNING, JOB_RESTARTING, JOB_RESIZING,
	JOB_COMPLETED, JOB_FAILED, JOB_CANCELLED, JOB_TIMEOUT,
};
#define HTTP_NSTATES (sizeof(http_states) / sizeof(http_states[0]))

static void
metric_head(struct evbuffer *b, const char *name, const char *type,
    const char *help)
{
	evbuffer_add_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help,
	    name, type);
}

/* 0, or -1 (ENOMEM): no page rather than one that says "no jobs". */
static int
http_jobs(const struct http_sources *src, struct evbuffer *b)
{
	struct jobs_filter f = { .all = true };
	const struct job **all;
	unsigned long count[HTTP_NSTATES] = { 0 };
	size_t i, k, n;

	if (jobs_list(src->jobs, &f, &all, &n) == -1)
		return -1;
	for (i = 0; i < n; i++)
		for (k = 0; k < HTTP_NSTATES; k++)
			if (all[i]->state == http_states[k])
				count[k]++;
	free(all);
	metric_head(b, "cohort_jobs", "gauge", "Jobs by state.");
	for (k = 0; k < HTTP_NSTATES; k++)
		evbuffer_add_printf(b, "cohort_jobs{state=\"%s\"} %lu\n",
		    job_state_name(http_states[k]), count[k]);
	return 0;
}

static void
http_nodes(const struct http_sources *src, struct evbuffer *b)
{
	struct node **all;
	unsigned long up = 0, down = 0, drained = 0, total = 0, free_gpus = 0;
	unsigned long failed = 0;
	size_t i, n;
	unsigned g;

	all = nodes_all(src->nodes, &n);
	for (i = 0; i < n; i++) {
		if (all[i]->state == NODE_UP)
			up++;
		else
			down++;
		drained += all[i]->drained;
		total += all[i]->inv.ngpus;
		for (g = 0; g < all[i]->inv.ngpus; g++) {
			if (node_gpu_health(all[i], g) == HEALTH_FAILED)
				failed++;
			else if (all[i]->gpu_job[g] == 0)
				free_gpus++;
		}
	}
	metric_head(b, "cohort_nodes", "gauge", "Nodes by state.");
	evbuffer_add_printf(b, "cohort_nodes{state=\"UP\"} %lu\n"
	    "cohort_nodes{state=\"DOWN\"} %lu\n"
	    "cohort_nodes{state=\"drained\"} %lu\n", up, down, drained);
	metric_head(b, "cohort_gpus", "gauge", "GPUs by state.");
	evbuffer_add_printf(b, "cohort_gpus{state=\"free\"} %lu\n"
	    "cohort_gpus{state=\"allocated\"} %lu\n"
	    "cohort_gpus{state=\"failed\"} %lu\n", free_gpus,
	    total - free_gpus - failed, failed);
}

/* Connection admission and the fair loop (server.h). */
static void
http_admission(const struct http_sources *src, struct evbuffer *b)
{
	struct server_stats st;
	unsigned k;

	server_stats(src->server, &st);
	metric_head(b, "cohort_connections_by_state", "gauge",
	    "Open connections: in the TLS handshake, agents, users/admins.");
	evbuffer_add_printf(b,
	    "cohort_connections_by_state{state=\"handshaking\"} %u\n"
	    "cohort_connections_by_state{state=\"agent\"} %u\n"
	    "cohort_connections_by_state{state=\"user\"} %u\n",
	    st.handshaking, st.agents, st.people);
	metric_head(b, "cohort_connections_throttled", "gauge",
	    "Connections not read until their replies drain.");
	evbuffer_add_printf(b, "cohort_connections_throttled %u\n",
	    st.throttled);
	metric_head(b, "cohort_connections_refused_total", "counter",
	    "Connections refused or evicted by admission, by reason.");
	for (k = 0; k < SERVER_NREFUSALS; k++)
		evbuffer_add_printf(b,
		    "cohort_connections_refused_total{reason=\"%s\"} %lu\n",
		    server_refusal_name(k), st.refused[k]);
	metric_head(b, "cohort_connections_timed_out_total", "counter",
	    "Connections closed by a deadline, by reason.");
	for (k = 0; k < SERVER_NCLOSURES; k++)
		evbuffer_add_printf(b,
		    "cohort_connections_timed_out_total{reason=\"%s\"} %lu\n",
		    server_closure_name(k), st.closed[k]);
	metric_head(b, "cohort_read_yields_total", "counter",
	    "Read rounds cut short at the per-connection frame cap.");
	evbuffer_add_printf(b, "cohort_read_yields_total %lu\n", st.yields);
}

static void
http_sched(const struct http_sources *src, struct evbuffer *b)
{
	struct cluster_stats st;
	struct driver_stats ds;
	enum report_kind k;

	cluster_stats(src->cluster, &st);
	driver_stats(src->driver, &ds);
	metric_head(b, "cohort_sched_passes_total", "counter",
	    "Scheduling passes run.");
	evbuffer_add_printf(b, "cohort_sched_passes_total %lu\n", st.passes);
	metric_head(b, "cohort_sched_pass_seconds_total", "counter",
	    "Time spent in scheduling passes.");
	evbuffer_add_printf(b, "cohort_sched_pass_seconds_total %.6f\n",
	    (double)ds.total_pass_us / 1e6);
	metric_head(b, "cohort_sched_last_pass_seconds", "gauge",
	    "Duration of the latest scheduling pass.");
	evbuffer_add_printf(b, "cohort_sched_last_pass_seconds %.6f\n",
	    (double)ds.last_pass_us / 1e6);
	metric_head(b, "cohort_jobs_started_total", "counter",
	    "Gang starts decided by the scheduler.");
	evbuffer_add_printf(b, "cohort_jobs_started_total %lu\n", st.started);
	metric_head(b, "cohort_jobs_backfilled_total", "counter",
	    "Starts that backfilled around a reservation.");
	evbuffer_add_printf(b, "cohort_jobs_backfilled_total %lu\n",
	    st.backfilled);
	metric_head(b, "cohort_failures_total", "counter",
	    "Job failures detected (node down, health, task, hang, move).");
	evbuffer_add_printf(b, "cohort_failures_total %lu\n", st.failures);
	metric_head(b, "cohort_restarts_total", "counter",
	    "Jobs running again after a failure.");
	evbuffer_add_printf(b, "cohort_restarts_total %lu\n", st.restarts);
	metric_head(b, "cohort_failure_to_restart_seconds", "summary",
	    "Time from a detected failure to the job running again.");
	evbuffer_add_printf(b,
	    "cohort_failure_to_restart_seconds{quantile=\"0.5\"} %.3f\n"
	    "cohort_failure_to_restart_seconds{quantile=\"0.99\"} %.3f\n"
	    "cohort_failure_to_restart_seconds_sum %.3f\n"
	    "cohort_failure_to_restart_seconds_count %lu\n",
	    (double)st.recovery_ms_p50 / 1e3, (double)st.recovery_ms_p99 / 1e3,
	    (double)st.recovery_ms_sum / 1e3, st.restarts);
	metric_head(b, "cohort_lost_work_seconds_total", "counter",
	    "Work lost to failures: time since the last checkpoint.");
	evbuffer_add_printf(b, "cohort_lost_work_seconds_total %.3f\n",
	    (double)st.lost_work_ms / 1e3);
	metric_head(b, "cohort_preemptions_total", "counter",
	    "Jobs preempted (checkpointed, stopped, requeued) for others.");
	evbuffer_add_printf(b, "cohort_preemptions_total %lu\n",
	    st.preemptions);
	metric_head(b, "cohort_preempt_lost_work_seconds_total", "counter",
	    "Work lost to preemptions: time since the victim's checkpoint.");
	evbuffer_add_printf(b, "cohort_preempt_lost_work_seconds_total %.3f\n",
	    (double)st.preempt_lost_ms / 1e3);
	metric_head(b, "cohort_agent_reports_rejected_total", "counter",
	    "Agent reports and registrations refused, by kind: a report "
	    "about a rank, checkpoint or job its node does not hold, too "
	    "many entries, an unknown node.");
	for (k = 0; k < REPORT_KINDS; k++)
		evbuffer_add_printf(b, "cohort_agent_reports_rejected_total"
		    "{kind=\"%s\"} %lu\n", report_kind_name(k),
		    st.reports_rejected[k]);
	metric_head(b, "cohort_db_commits_total", "counter",
	    "SQLite commits (each may cover many requests).");
	evbuffer_add_printf(b, "cohort_db_commits_total %lu\n",
	    txq_commits(src->txq));
	metric_head(b, "cohort_connections", "gauge", "Open connections.");
	evbuffer_add_printf(b, "cohort_connections %u\n",
	    server_conn_count(src->server));
	http_admission(src, b);
}

/* Refusals by limit kind only: a label per user would let one user grow
 * the exposition without bound. */
static void
http_limits(const struct http_sources *src, struct evbuffer *b)
{
	struct quota_stats st;

	jobs_quota_stats(src->jobs, &st);
	metric_head(b, "cohort_submits_refused_total", "counter",
	    "Submits refused by a per-user limit (ERROR_LIMIT).");
	evbuffer_add_printf(b, "cohort_submits_refused_total{limit=\"pending\"}"
	    " %llu\ncohort_submits_refused_total{limit=\"rate\"} %llu\n",
	    (unsigned long long)st.refused_pending,
	    (unsigned long long)st.refused_rate);
}

/* 0, or -1 (ENOMEM). */
int
metrics_render(const struct http_sources *src, struct evbuffer *b)
{
	if (http_jobs(src, b) == -1)
		return -1;
	http_nodes(src, b);
	http_sched(src, b);
	http_limits(src, b);
	return 0;
}
