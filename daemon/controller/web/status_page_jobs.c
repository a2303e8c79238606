#include "config.h"

#include <stdlib.h>

#include "daemon/sched/sched.h"
#include "daemon/controller/domain/goodput.h"
#include "daemon/controller/domain/jobs.h"
#include "lib/hostlist.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/queues.h"
#include "daemon/controller/web/status_page_int.h"

/* Waiting for a start: not launching (those hold GPUs: running). */
static bool
job_waiting(const struct job *j)
{
	return (j->state == JOB_PENDING || j->state == JOB_RESTARTING) &&
	    !jobs_is_active(j);
}

/* What the job asks for: "2 × 8 GPUs", "1-4 × 8 GPUs", "2 whole nodes",
 * "1 node, CPU only". */
static void
job_size(struct status_out *o, const struct job *j)
{
	const struct job_spec *s = &j->spec;

	if (s->nodes_max > s->nodes_min)
		status_page_html_printf(o, "%u-%u", s->nodes_min, s->nodes_max);
	else
		status_page_html_printf(o, "%u", s->nodes_min);
	if (s->cpu_only)
		status_page_html_printf(o, " node%s, CPU only",
		    s->nodes_max == 1 ? "" : "s");
	else if (s->gpus_per_node == 0)
		status_page_html_printf(o, " whole node%s",
		    s->nodes_max == 1 ? "" : "s");
	else
		status_page_html_printf(o, " &times; %u GPU%s",
		    s->gpus_per_node, s->gpus_per_node == 1 ? "" : "s");
}

/* The cells every job table begins with: id, name, user, queue, state. */
static void
job_cells(struct status_out *o, const struct job *j)
{
	status_page_html_put(o, "<td>");
	status_page_html_job(o, j);
	status_page_html_put(o, "</td><td>");
	status_page_html_text(o, j->spec.name);
	status_page_html_put(o, "</td><td>");
	status_page_html_text(o, j->user);
	status_page_html_put(o, "</td><td>");
	status_page_html_text(o, j->spec.queue != NULL ? j->spec.queue : "-");
	status_page_html_printf(o, "</td><td>%s</td>",
	    job_state_name(j->state));
}

static void
pending_row(struct status_ctx *c, const struct job *j)
{
	struct status_out *o = &c->out;
	int64_t now = c->in->health.now_ms;

	status_page_html_put(o, "<tr>");
	job_cells(o, j);
	status_page_html_put(o, "<td>");
	job_size(o, j);
	status_page_html_printf(o, "</td><td class=\"r\">%d</td><td>",
	    j->spec.priority);
	status_page_html_age(o, now - j->submit_ms);
	status_page_html_put(o, "</td><td>");
	if (j->expected_start_ms > 0)
		status_page_html_time(o, j->expected_start_ms);
	else
		status_page_html_put(o, "-");
	/* The reason as `cohort jobs` shows it. */
	status_page_html_put(o, "</td><td class=\"why\">");
	status_page_html_text(o, j->reason[0] != '\0' ? j->reason : "-");
	status_page_html_put(o, "</td></tr>\n");
}

void
status_page_jobs_pending(struct status_ctx *c)
{
	struct status_out *o = &c->out;
	size_t i, n = 0, shown = 0;

	for (i = 0; i < c->nlive; i++)
		n += job_waiting(c->live[i]);
	status_page_html_printf(o, "<section id=\"pending\"><h2>Waiting jobs "
	    "(%zu)</h2>\n", n);
	if (n == 0) {
		status_page_html_put(o, "<p>None.</p></section>\n");
		return;
	}
	status_page_html_put(o, "<table class=\"jobs\"><tr><th>Job</th>"
	    "<th>Name</th><th>User</th><th>Queue</th><th>State</th>"
	    "<th>Size</th><th>Priority</th><th>Waiting</th>"
	    "<th>Expected start</th><th>Reason</th></tr>\n");
	for (i = 0; i < c->nlive && shown < STATUS_PAGE_JOBS_MAX; i++)
		if (job_waiting(c->live[i])) {
			pending_row(c, c->live[i]);
			shown++;
		}
	status_page_html_put(o, "</table>\n");
	if (n > shown)
		status_page_html_printf(o, "<p class=\"more\">and %zu more "
		    "waiting (cohort jobs --state pending lists them "
		    "all)</p>\n", n - shown);
	status_page_html_put(o, "</section>\n");
}

/* The job's nodes as a hostlist ("node[01-04]"). */
static void
job_nodes(struct status_out *o, const struct job *j)
{
	char *names[64], *list;
	size_t i, n = j->nplace < 64 ? j->nplace : 64;

	if (n == 0) {
		status_page_html_put(o, "-");
		return;
	}
	for (i = 0; i < n; i++)
		names[i] = (char *)j->place[i].node;
	if ((list = hostlist_compress(names, n)) == NULL) {
		status_page_html_text(o, names[0]);
		if (n > 1)
			status_page_html_put(o, ",&hellip;");
		return;
	}
	status_page_html_text(o, list);
	if (j->nplace > n)
		status_page_html_put(o, ",&hellip;");
	free(list);
}

static void
running_row(struct status_ctx *c, const struct job *j)
{
	struct status_out *o = &c->out;
	struct job_goodput_view v;
	unsigned gpus = 0;
	size_t i;

	for (i = 0; i < j->nplace; i++)
		gpus += j->place[i].ngpus;
	status_page_html_printf(o, "<tr><td><i class=\"g j%u\"></i></td>",
	    status_page_html_colour(j->id));
	job_cells(o, j);
	status_page_html_put(o, "<td>");
	job_nodes(o, j);
	status_page_html_printf(o, "</td><td class=\"r\">%u</td><td>", gpus);
	if (j->start_ms > 0)
		status_page_html_age(o, c->in->health.now_ms - j->start_ms);
	else
		status_page_html_put(o, "launching");
	status_page_html_printf(o, "</td><td class=\"r\">%u</td>",
	    j->restarts);
	/* ETTR: the share of its time since the first start that went to
	 * work kept. */
	goodput_view(j, c->in->health.now_ms, &v);
	if (j->gp.first_start_ms > 0)
		status_page_html_printf(o, "<td class=\"r\">%.3f</td></tr>\n",
		    v.ettr);
	else
		status_page_html_put(o, "<td class=\"r\">-</td></tr>\n");
}

void
status_page_jobs_running(struct status_ctx *c)
{
	struct status_out *o = &c->out;
	size_t i, n = 0, shown = 0;

	for (i = 0; i < c->nlive; i++)
		n += jobs_is_active(c->live[i]);
	status_page_html_printf(o, "<section id=\"running\"><h2>Running jobs "
	    "(%zu)</h2>\n", n);
	if (n == 0) {
		status_page_html_put(o, "<p>None.</p></section>\n");
		return;
	}
	status_page_html_put(o, "<table class=\"jobs\"><tr><th></th>"
	    "<th>Job</th><th>Name</th><th>User</th><th>Queue</th>"
	    "<th>State</th><th>Nodes</th><th>GPUs</th><th>Running for</th>"
	    "<th>Restarts</th><th>ETTR</th></tr>\n");
	for (i = 0; i < c->nlive && shown < STATUS_PAGE_JOBS_MAX; i++)
		if (jobs_is_active(c->live[i])) {
			running_row(c, c->live[i]);
			shown++;
		}
	status_page_html_put(o, "</table>\n");
	if (n > shown)
		status_page_html_printf(o, "<p class=\"more\">and %zu more "
		    "running</p>\n", n - shown);
	status_page_html_put(o, "</section>\n");
}

static void
queue_row(struct status_out *o, const struct queue_row *r)
{
	unsigned pct;

	status_page_html_printf(o, "<tr><td style=\"padding-left:%.1fem\">",
	    0.4 + 1.5 * r->depth);
	status_page_html_text(o, r->name);
	if (r->nominal == SCHED_UNLIMITED) {
		status_page_html_printf(o, "</td><td class=\"r\">unlimited</td>"
		    "<td class=\"r\">%u</td><td></td>", r->used);
	} else {
		pct = r->nominal == 0 ? (r->used > 0 ? 100 : 0) :
		    (unsigned)((uint64_t)r->used * 100 / r->nominal);
		status_page_html_printf(o, "</td><td class=\"r\">%u</td>"
		    "<td class=\"r\">%u</td><td><span class=\"bar\"><span "
		    "class=\"%s\" style=\"width:%u%%\"></span></span> %u%%"
		    "</td>", r->nominal, r->used, pct > 100 ? "over" : "in",
		    pct > 100 ? 100 : pct, pct);
	}
	status_page_html_printf(o, "<td class=\"r\">%u</td><td class=\"r\">%u"
	    "</td><td class=\"r\">%u</td><td class=\"r\">%u</td>"
	    "<td class=\"r\">%u</td><td class=\"r\">%u</td>"
	    "<td class=\"r\">%.2f</td></tr>\n", r->borrowed, r->lent,
	    r->pending, r->running_jobs, r->pending_jobs, r->weight,
	    r->factor);
}

void
status_page_jobs_queues(struct status_ctx *c)
{
	struct status_out *o = &c->out;
	struct queue_row *rows = NULL;
	size_t i, nrows = 0;

	if (c->in->queues == NULL)
		return;
	if (queues_report_live(c->in->queues, c->live, c->nlive,
	    nodes_max_gpus(c->in->nodes), c->in->health.now_ms, &rows,
	    &nrows) == -1) {
		o->failed = true;
		return;
	}
	status_page_html_put(o, "<section id=\"queues\"><h2>Queues</h2>\n"
	    "<table class=\"jobs\"><tr><th>Queue</th><th>Quota (GPUs)</th>"
	    "<th>Used</th><th>Of quota</th><th>Borrowed</th><th>Lent</th>"
	    "<th>GPUs asked</th><th>Running</th><th>Waiting</th>"
	    "<th>Weight</th><th>Fair share</th></tr>\n");
	for (i = 0; i < nrows; i++)
		queue_row(o, &rows[i]);
	status_page_html_put(o, "</table></section>\n");
	free(rows);
}
