/* The Prometheus text exposition (format 0.0.4) at /metrics. Every
 * family has HELP and TYPE lines and its samples together; label values
 * come from bounded sets only (states, reasons, request types, the
 * configured queues), never from users, jobs or nodes, so the page's
 * size depends on the configuration, not on the workload. Families that
 * split a whole (GPUs, nodes, drain states) add up to it. */
#include "config.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "lib/clock.h"
#include "lib/histogram.h"

#include "daemon/controller/domain/cluster.h"
#include "daemon/controller/domain/goodput.h"
#include "daemon/controller/web/http.h"
#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/web/metrics.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/queues.h"
#include "daemon/controller/domain/quota.h"
#include "daemon/controller/domain/suspect.h"
#include "daemon/controller/store/txq.h"

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
	struct job_goodput_view v;
	/* productive, lost, restart, wait, checkpoint */
	double gp[5] = { 0 }, wall = 0;
	static const char *const gp_kinds[5] = {
		"productive", "lost", "restart", "wait", "checkpoint",
	};
	int64_t now = clock_now_ms();
	size_t i, k, n;

	if (jobs_list(src->jobs, &f, &all, &n) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		for (k = 0; k < HTTP_NSTATES; k++)
			if (all[i]->state == http_states[k])
				count[k]++;
		goodput_view(all[i], now, &v);
		gp[0] += (double)v.productive_ms / 1e3;
		gp[1] += (double)v.lost_ms / 1e3;
		gp[2] += (double)v.restart_ms / 1e3;
		gp[3] += (double)v.wait_ms / 1e3;
		gp[4] += (double)v.ckpt_ms / 1e3;
	}
	free(all);
	metric_head(b, "cohort_jobs", "gauge", "Jobs by state.");
	for (k = 0; k < HTTP_NSTATES; k++)
		evbuffer_add_printf(b, "cohort_jobs{state=\"%s\"} %lu\n",
		    job_state_name(http_states[k]), count[k]);
	metric_head(b, "cohort_goodput_seconds", "gauge",
	    "Wall time of the jobs kept since their first start, by what it "
	    "went to; adds up to it.");
	for (k = 0; k < 5; k++) {
		evbuffer_add_printf(b, "cohort_goodput_seconds{kind=\"%s\"} "
		    "%.3f\n", gp_kinds[k], gp[k]);
		wall += gp[k];
	}
	metric_head(b, "cohort_goodput_ettr", "gauge",
	    "Productive time over the wall time of the jobs kept (1 when "
	    "none ran).");
	evbuffer_add_printf(b, "cohort_goodput_ettr %.6f\n",
	    wall > 0 ? gp[0] / wall : 1.0);
	return 0;
}

/* What a GPU is counted as; each GPU is in exactly one. */
enum metrics_gpu {
	MG_FREE,	/* UP, undrained, not a spare, healthy, no job */
	MG_ALLOCATED,	/* held by a job (on an UP node) */
	MG_FAILED,	/* its health says FAILED (on an UP node) */
	MG_SPARE,	/* idle on a hot spare: for replacements only */
	MG_UNAVAILABLE,	/* the rest: its node DOWN, draining or drained */
	MG_N
};
static const char *const metrics_gpu_names[MG_N] = {
	"free", "allocated", "failed", "spare", "unavailable",
};

/* A DOWN node's GPUs are unknown, whatever was last heard of them: all
 * unavailable. On an UP node a failed GPU is failed even while a job
 * still holds it (the job is being moved); a held one is allocated, also
 * on a draining node; idle ones are free only where new work may go. */
static enum metrics_gpu
metrics_gpu_kind(const struct node *n, unsigned g)
{
	if (n->state != NODE_UP)
		return MG_UNAVAILABLE;
	if (node_gpu_health(n, g) == HEALTH_FAILED)
		return MG_FAILED;
	if (n->gpu_job[g] != 0)
		return MG_ALLOCATED;
	if (n->drained)
		return MG_UNAVAILABLE;
	return n->spare ? MG_SPARE : MG_FREE;
}

const char *
metrics_gpu_state(const struct node *n, unsigned g)
{
	return metrics_gpu_names[metrics_gpu_kind(n, g)];
}

static void
http_nodes(const struct http_sources *src, struct evbuffer *b)
{
	struct node **all;
	unsigned long gpus[MG_N] = { 0 }, up = 0, draining = 0, drained = 0;
	const char *ds;
	size_t i, n;
	unsigned g, k;

	all = nodes_all(src->nodes, &n);
	for (i = 0; i < n; i++) {
		up += all[i]->state == NODE_UP;
		ds = node_drain_state(all[i]);
		draining += strcmp(ds, "DRAINING") == 0;
		drained += strcmp(ds, "DRAINED") == 0;
		for (g = 0; g < all[i]->inv->ngpus && g < INV_MAX_GPUS; g++)
			gpus[metrics_gpu_kind(all[i], g)]++;
	}
	metric_head(b, "cohort_nodes", "gauge",
	    "Nodes by state (UP or DOWN); adds up to the nodes known.");
	evbuffer_add_printf(b, "cohort_nodes{state=\"UP\"} %lu\n"
	    "cohort_nodes{state=\"DOWN\"} %lu\n", up, (unsigned long)n - up);
	metric_head(b, "cohort_nodes_drain", "gauge",
	    "Nodes by drain state: none, draining (drained, jobs still on "
	    "it), drained; adds up to the nodes known.");
	evbuffer_add_printf(b, "cohort_nodes_drain{state=\"none\"} %lu\n"
	    "cohort_nodes_drain{state=\"draining\"} %lu\n"
	    "cohort_nodes_drain{state=\"drained\"} %lu\n",
	    (unsigned long)n - draining - drained, draining, drained);
	metric_head(b, "cohort_gpus", "gauge",
	    "GPUs by state; adds up to every node's GPUs. free: on an UP, "
	    "undrained node, healthy, no job; unavailable: on a DOWN, "
	    "draining or drained node.");
	for (k = 0; k < MG_N; k++)
		evbuffer_add_printf(b, "cohort_gpus{state=\"%s\"} %lu\n",
		    metrics_gpu_names[k], gpus[k]);
}

static void
metrics_line(void *arg, const char *text)
{
	evbuffer_add_printf(arg, "%s\n", text);
}

/* Request latency by type, and the scheduling pass. */
static void
http_latency(const struct http_figures *fg, struct evbuffer *b)
{
	char labels[64];
	size_t i;

	metric_head(b, "cohort_sched_pass_seconds", "histogram",
	    "Duration of scheduling passes.");
	histogram_lines(&fg->pass, "cohort_sched_pass_seconds", "",
	    metrics_line, b);
	if (fg->nrpc == 0)
		return;
	metric_head(b, "cohort_rpc_request_seconds", "histogram",
	    "Time from a request decoded to its reply queued, including the "
	    "wait for the commit that covers it, by request type.");
	for (i = 0; i < fg->nrpc; i++) {
		/* Type names are the protocol's: [a-z_], nothing to escape. */
		snprintf(labels, sizeof(labels), "type=\"%s\"",
		    fg->rpc_name[i]);
		histogram_lines(fg->rpc_latency[i],
		    "cohort_rpc_request_seconds", labels, metrics_line, b);
	}
}

/* A replica's (the leader's: only it serves /metrics) Raft figures. */
static void
metrics_repl(const struct http_figures *fg, struct evbuffer *b)
{
	metric_head(b, "cohort_replication_entries_total", "counter",
	    "Commits replicated as Raft entries by this leader.");
	evbuffer_add_printf(b, "cohort_replication_entries_total %lu\n",
	    fg->repl_entries);
	metric_head(b, "cohort_replication_pages_total", "counter",
	    "WAL pages (4 KiB) in those entries.");
	evbuffer_add_printf(b, "cohort_replication_pages_total %lu\n",
	    fg->repl_pages);
	metric_head(b, "cohort_replication_wait_seconds_total", "counter",
	    "Time commits waited for a quorum and the apply, all together.");
	evbuffer_add_printf(b, "cohort_replication_wait_seconds_total %.6f\n",
	    (double)fg->repl_wait_us / 1e6);
	metric_head(b, "cohort_replication_snapshots_deferred_total", "counter",
	    "Snapshots put off while entries of an older term were past the "
	    "commit index (libraft 0.15's barriers; docs/REPLICATION.md).");
	evbuffer_add_printf(b, "cohort_replication_snapshots_deferred_total "
	    "%lu\n", fg->repl_snapshots_deferred);
	metric_head(b, "cohort_replication_raft_refused_total", "counter",
	    "Connections to the Raft port closed before TLS: not from a "
	    "replica's address.");
	evbuffer_add_printf(b, "cohort_replication_raft_refused_total %lu\n",
	    fg->repl_raft_refused);
	metric_head(b, "cohort_replication_term", "gauge",
	    "The current Raft term.");
	evbuffer_add_printf(b, "cohort_replication_term %llu\n",
	    (unsigned long long)fg->repl_term);
	metric_head(b, "cohort_replication_commit_index", "gauge",
	    "The highest Raft log index known committed.");
	evbuffer_add_printf(b, "cohort_replication_commit_index %llu\n",
	    (unsigned long long)fg->repl_commit_index);
}

/* Connection admission and the fair loop (server.h). */
static void
http_admission(const struct http_figures *fg, struct evbuffer *b)
{
	size_t k;

	metric_head(b, "cohort_connections_by_state", "gauge",
	    "Open connections: in the TLS handshake, agents, users/admins.");
	evbuffer_add_printf(b,
	    "cohort_connections_by_state{state=\"handshaking\"} %u\n"
	    "cohort_connections_by_state{state=\"agent\"} %u\n"
	    "cohort_connections_by_state{state=\"user\"} %u\n",
	    fg->handshaking, fg->agents, fg->people);
	metric_head(b, "cohort_connections_throttled", "gauge",
	    "Connections not read until their replies drain.");
	evbuffer_add_printf(b, "cohort_connections_throttled %u\n",
	    fg->throttled);
	metric_head(b, "cohort_connections_refused_total", "counter",
	    "Connections refused or evicted by admission, by reason.");
	for (k = 0; k < fg->nrefusals; k++)
		evbuffer_add_printf(b,
		    "cohort_connections_refused_total{reason=\"%s\"} %lu\n",
		    fg->refusal_name[k], fg->refused[k]);
	metric_head(b, "cohort_connections_timed_out_total", "counter",
	    "Connections closed by a deadline, by reason.");
	for (k = 0; k < fg->nclosures; k++)
		evbuffer_add_printf(b,
		    "cohort_connections_timed_out_total{reason=\"%s\"} %lu\n",
		    fg->closure_name[k], fg->closed[k]);
	metric_head(b, "cohort_read_yields_total", "counter",
	    "Read rounds cut short at the per-connection frame cap.");
	evbuffer_add_printf(b, "cohort_read_yields_total %lu\n", fg->yields);
}

static void
http_sched(const struct http_sources *src, const struct http_figures *fg,
    struct evbuffer *b)
{
	struct cluster_stats st;
	enum report_kind k;

	cluster_stats(src->cluster, &st);
	metric_head(b, "cohort_sched_passes_total", "counter",
	    "Scheduling passes run.");
	evbuffer_add_printf(b, "cohort_sched_passes_total %lu\n", st.passes);
	metric_head(b, "cohort_sched_last_pass_seconds", "gauge",
	    "Duration of the latest scheduling pass.");
	evbuffer_add_printf(b, "cohort_sched_last_pass_seconds %.6f\n",
	    (double)fg->last_pass_us / 1e6);
	http_latency(fg, b);
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
	metric_head(b, "cohort_stragglers_total", "counter",
	    "Ranks named persistently slower than their gang's peers.");
	evbuffer_add_printf(b, "cohort_stragglers_total %lu\n", st.stragglers);
	metric_head(b, "cohort_steps_running", "gauge",
	    "Job steps (srun) running now.");
	evbuffer_add_printf(b, "cohort_steps_running %zu\n", st.steps_running);
	metric_head(b, "cohort_interactive_sessions", "gauge",
	    "srun --pty steps running now.");
	evbuffer_add_printf(b, "cohort_interactive_sessions %zu\n",
	    st.sessions);
	metric_head(b, "cohort_interactive_sessions_idle_ended_total",
	    "counter", "srun --pty steps ended because no client followed "
	    "them for interactive_idle.");
	evbuffer_add_printf(b, "cohort_interactive_sessions_idle_ended_total "
	    "%lu\n", st.sessions_idle_ended);
	metric_head(b, "cohort_step_input_bytes_total", "counter",
	    "Bytes of srun's and cohort attach's input sent on to tasks.");
	evbuffer_add_printf(b, "cohort_step_input_bytes_total %llu\n",
	    (unsigned long long)st.input_bytes);
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
	metric_head(b, "cohort_db_syncs_total", "counter",
	    "fdatasync calls of the WAL on the group commit's sync thread "
	    "(each covers the commits made since the last one started).");
	evbuffer_add_printf(b, "cohort_db_syncs_total %lu\n",
	    txq_syncs(src->txq));
	if (fg->has_repl)
		metrics_repl(fg, b);
	metric_head(b, "cohort_connections", "gauge", "Open connections.");
	evbuffer_add_printf(b, "cohort_connections %u\n",
	    fg->conns);
	if (src->http != NULL) {
		struct http_stats hs;

		http_stats(src->http, &hs);
		metric_head(b, "cohort_http_connections", "gauge",
		    "Open connections to this HTTP listener.");
		evbuffer_add_printf(b, "cohort_http_connections %u\n",
		    hs.conns);
		metric_head(b, "cohort_http_accept_pauses_total", "counter",
		    "Times the HTTP listener stopped accepting at its "
		    "connection cap.");
		evbuffer_add_printf(b, "cohort_http_accept_pauses_total %lu\n",
		    hs.accept_pauses);
	}
	http_admission(fg, b);
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

/* Mail (mailer.h): zeros where no mailer runs, so that the families are
 * always there to alert on. */
static void
http_mail(const struct http_figures *fg, struct evbuffer *b)
{
	metric_head(b, "cohort_mail_sent_total", "counter",
	    "Mails whose mail_program exited 0.");
	evbuffer_add_printf(b, "cohort_mail_sent_total %llu\n",
	    (unsigned long long)fg->mail_sent);
	metric_head(b, "cohort_mail_failed_total", "counter",
	    "Mails whose mail_program did not start, failed or was killed "
	    "after 30 s.");
	evbuffer_add_printf(b, "cohort_mail_failed_total %llu\n",
	    (unsigned long long)fg->mail_failed);
	metric_head(b, "cohort_mail_dropped_total", "counter",
	    "Mails dropped, the oldest of a full queue.");
	evbuffer_add_printf(b, "cohort_mail_dropped_total %llu\n",
	    (unsigned long long)fg->mail_dropped);
}

/* One family of a per-queue value: name{queue="Q"} V for each row. */
static void
metrics_queue_family(struct evbuffer *b, const struct queue_row *rows,
    size_t n, const char *name, const char *help, size_t field)
{
	size_t i;

	metric_head(b, name, "gauge", help);
	for (i = 0; i < n; i++)
		evbuffer_add_printf(b, "%s{queue=\"%s\"} %" PRIu32 "\n", name,
		    rows[i].name,
		    *(const uint32_t *)((const char *)&rows[i] + field));
}

static void
metrics_queue_rows(struct evbuffer *b, const struct queue_row *rows, size_t n)
{
	size_t i;

	/* Names are checked at load ([A-Za-z0-9_.-]): nothing to escape. */
	metric_head(b, "cohort_queue_info", "gauge",
	    "One per configured queue (1), with its parent (\"\" at the top).");
	for (i = 0; i < n; i++)
		evbuffer_add_printf(b, "cohort_queue_info{queue=\"%s\","
		    "parent=\"%s\"} 1\n", rows[i].name, rows[i].parent);
	metric_head(b, "cohort_queue_jobs", "gauge",
	    "Jobs of a queue's subtree, running (holding GPUs) or pending.");
	for (i = 0; i < n; i++)
		evbuffer_add_printf(b, "cohort_queue_jobs{queue=\"%s\","
		    "state=\"running\"} %" PRIu32 "\ncohort_queue_jobs{queue="
		    "\"%s\",state=\"pending\"} %" PRIu32 "\n", rows[i].name,
		    rows[i].running_jobs, rows[i].name, rows[i].pending_jobs);
	metrics_queue_family(b, rows, n, "cohort_queue_gpus_in_use",
	    "GPUs held by running jobs of a queue's subtree.",
	    offsetof(struct queue_row, used));
	metric_head(b, "cohort_queue_gpus_nominal", "gauge",
	    "A queue's nominal quota of GPUs (absent: no quota).");
	for (i = 0; i < n; i++)
		if (rows[i].nominal != SCHED_UNLIMITED)
			evbuffer_add_printf(b, "cohort_queue_gpus_nominal"
			    "{queue=\"%s\"} %" PRIu32 "\n", rows[i].name,
			    rows[i].nominal);
	metrics_queue_family(b, rows, n, "cohort_queue_gpus_borrowed",
	    "GPUs a queue uses beyond its nominal quota.",
	    offsetof(struct queue_row, borrowed));
	metrics_queue_family(b, rows, n, "cohort_queue_gpus_lent",
	    "Of a queue's unused nominal GPUs, those its siblings use.",
	    offsetof(struct queue_row, lent));
	metrics_queue_family(b, rows, n, "cohort_queue_gpus_pending",
	    "GPUs asked by waiting jobs of a queue's subtree.",
	    offsetof(struct queue_row, pending));
	metrics_queue_family(b, rows, n, "cohort_queue_weight",
	    "A queue's fair-share weight among its siblings.",
	    offsetof(struct queue_row, weight));
	metric_head(b, "cohort_queue_fair_share_factor", "gauge",
	    "A queue's fair-share factor: its decayed usage against its "
	    "share (lower runs first).");
	for (i = 0; i < n; i++)
		evbuffer_add_printf(b, "cohort_queue_fair_share_factor{queue="
		    "\"%s\"} %.6g\n", rows[i].name, rows[i].factor);
}

/* The configured queues (as `cohort queues`). 0, or -1 (ENOMEM). */
static int
http_queues(const struct http_sources *src, struct evbuffer *b)
{
	const struct jobs_filter live = { .all = false };
	const struct job **list = NULL;
	struct queue_row *rows = NULL;
	size_t n = 0, nrows = 0;
	int rc = -1;

	if (src->queues == NULL)
		return 0;
	if (jobs_list(src->jobs, &live, &list, &n) == -1 ||
	    queues_report_live(src->queues, list, n,
	    nodes_max_gpus(src->nodes), clock_now_ms(), &rows, &nrows) == -1)
		goto out;
	metrics_queue_rows(b, rows, nrows);
	rc = 0;
out:
	free(rows);
	free(list);
	return rc;
}

/* Suspect nodes (suspect.h): a sample per node only while it has a
 * score, so the label set is bounded by the nodes that fail. */
static void
http_suspect(const struct http_sources *src, struct evbuffer *b)
{
	struct suspect *s = src->cluster != NULL ?
	    cluster_suspect(src->cluster) : NULL;
	struct suspect_node *const *v;
	int64_t now = clock_now_ms();
	unsigned long standing = 0;
	uint32_t sc;
	size_t i, n;

	if (s == NULL)
		return;
	v = suspect_all(s, &n);
	for (i = 0; i < n; i++)
		standing += v[i]->reason[0] != '\0';
	metric_head(b, "cohort_nodes_suspect_drained_total", "counter",
	    "Nodes that crossed a suspect threshold (jobs failing early "
	    "there and fine elsewhere, or repeated hardware failures) and "
	    "were drained, since the controller started.");
	evbuffer_add_printf(b, "cohort_nodes_suspect_drained_total %lu\n",
	    suspect_crossings(s));
	metric_head(b, "cohort_nodes_suspect", "gauge",
	    "Nodes drained as suspects and not resumed since.");
	evbuffer_add_printf(b, "cohort_nodes_suspect %lu\n", standing);
	metric_head(b, "cohort_node_suspect_score", "gauge",
	    "Failures attributed to a node, and its ranks named "
	    "stragglers, that count now (nodes with none are left out).");
	for (i = 0; i < n; i++)
		if ((sc = suspect_score(s, v[i]->name, now)) > 0)
			evbuffer_add_printf(b, "cohort_node_suspect_score"
			    "{node=\"%s\"} %u\n", v[i]->name, sc);
}

/* 0, or -1 (ENOMEM). */
int
metrics_render(const struct http_sources *src, struct evbuffer *b)
{
	struct http_figures fg;

	memset(&fg, 0, sizeof(fg));
	src->figures(src->figures_arg, &fg);
	if (http_jobs(src, b) == -1)
		return -1;
	http_nodes(src, b);
	http_suspect(src, b);
	http_sched(src, &fg, b);
	http_limits(src, b);
	http_mail(&fg, b);
	return http_queues(src, b);
}
