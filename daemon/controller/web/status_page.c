#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "daemon/controller/domain/cluster.h"
#include "daemon/controller/web/http.h"
#include "daemon/controller/domain/jobs.h"
#include "lib/clock.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/web/status_page_int.h"
#include "daemon/controller/store/store.h"
#include "daemon/controller/store/txq.h"

/* One stylesheet, inline: the page is one request and works offline. The
 * twelve job colours are dark enough for white text and none is the red
 * of a failed GPU or the grey of a down node. */
static const char status_css[] =
    "body{font:13px/1.4 'DejaVu Sans',sans-serif;margin:12px 18px;"
    "color:#1c1c1c;background:#fbfbfa}"
    "h1{font-size:20px;margin:0 0 6px}h1 small{font-weight:normal;"
    "color:#666;font-size:13px}"
    "h2{font-size:16px;margin:18px 0 6px;border-bottom:1px solid #ccc}"
    "h3{font-size:14px;margin:10px 0 4px}"
    "table{border-collapse:collapse}th,td{padding:1px 7px;text-align:left;"
    "vertical-align:middle}table.jobs tr:nth-child(even),"
    "table.nodes tr:nth-child(even){background:#f0f0ee}"
    "table.jobs th{background:#e4e4e0}td.r{text-align:right}"
    "td.why{color:#7a4b00}td.feat{font-size:90%}tr.off th{color:#888}"
    ".health{display:flex;flex-wrap:wrap;gap:6px;margin:0;padding:0}"
    ".health div{border:1px solid #ddd;background:#fff;padding:3px 9px;"
    "border-radius:4px}.health b{display:block;font-size:15px}"
    ".g{display:inline-block;box-sizing:border-box;width:30px;height:18px;"
    "margin:1px;border-radius:3px;font:10px/18px 'DejaVu Sans Mono',"
    "monospace;text-align:center;color:#fff;overflow:hidden;"
    "vertical-align:middle;font-style:normal}"
    ".free{background:#d7ecd0;border:1px solid #8fc27f}"
    ".failed{background:#d62728;font-weight:bold;font-size:13px}"
    ".drained{background:repeating-linear-gradient(45deg,#c9c9c9 0 3px,"
    "#f1f1f1 3px 6px);border:1px solid #aaa}"
    ".down{background:#4a4a4a}"
    ".j0{background:#4e79a7}.j1{background:#e07b16}.j2{background:#3f8f3a}"
    ".j3{background:#8e5a9a}.j4{background:#8c6d4f}.j5{background:#2f8f8a}"
    ".j6{background:#a47d00}.j7{background:#c2477a}.j8{background:#1f5fa8}"
    ".j9{background:#7a4a3a}.j10{background:#5b3d9a}.j11{background:#0e7f8c}"
    "span.n{padding:0 4px;border-radius:3px}span.n.free{border:0}"
    "span.busy{background:#dde6f2}span.failed,span.down{color:#fff}"
    "span.drained{color:#222;border:0}"
    "b.bad{color:#c0161b}b.drain{color:#8a5a00}.dim,.more{color:#666}"
    "details.sw,div.sw{margin:4px 0;border:1px solid #ddd;background:#fff;"
    "border-radius:4px;padding:2px 6px}summary{cursor:pointer;padding:2px 0}"
    "div.sw{padding:4px 6px}div.sw a{color:inherit}"
    ".legend .g{margin-left:10px}"
    ".bar{display:inline-block;width:80px;height:9px;background:#eee;"
    "border:1px solid #ccc;vertical-align:middle}.bar span{display:block;"
    "height:100%}.bar .in{background:#4e79a7}.bar .over{background:#e07b16}";

static void
health(struct status_ctx *c)
{
	const struct status_page_health *h = &c->in->health;
	struct status_out *o = &c->out;
	size_t i, pending = 0, running = 0, restarting = 0;

	for (i = 0; i < c->nlive; i++) {
		if (jobs_is_active(c->live[i]))
			running++;
		else if (c->live[i]->state == JOB_RESTARTING)
			restarting++;
		else if (c->live[i]->state == JOB_PENDING)
			pending++;
	}
	status_page_html_put(o, "<div id=\"health\" class=\"health\">"
	    "<div>Uptime<b>");
	status_page_html_age(o, h->now_ms - h->started_ms);
	status_page_html_put(o, "</b></div><div>Last pass<b>");
	if (h->has_pass && h->last_pass_us < 1000)
		status_page_html_printf(o, "%llu &micro;s",
		    (unsigned long long)h->last_pass_us);
	else if (h->has_pass)
		status_page_html_printf(o, "%.1f ms",
		    (double)h->last_pass_us / 1e3);
	else
		status_page_html_put(o, "-");
	status_page_html_printf(o, "</b></div><div>Pending<b>%zu</b></div>"
	    "<div>Running<b>%zu</b></div><div>Restarting<b>%zu</b></div>"
	    "<div>Connections<b>%u</b>%u agents, %u people</div>"
	    "<div>DB commits<b>%lu</b></div><div>Rendered<b>", pending,
	    running, restarting, h->conns, h->agents, h->people, h->commits);
	status_page_html_time(o, h->now_ms);
	status_page_html_put(o, "</b></div></div>\n");
}

/* The latest events, copied out of store_events_list's callback. */
struct ev_row {
	int64_t time_ms;
	uint64_t job_id;
	char *node, *kind, *actor, *detail;
};

struct ev_acc {
	struct ev_row rows[STATUS_PAGE_EVENTS];
	size_t n;
};

static int
ev_keep(const struct store_event *e, void *arg)
{
	struct ev_acc *a = arg;
	struct ev_row *r;

	if (a->n == STATUS_PAGE_EVENTS)
		return 0;
	r = &a->rows[a->n++];
	r->time_ms = e->time_ms;
	r->job_id = e->job_id;
	r->node = e->node != NULL ? strdup(e->node) : NULL;
	r->kind = strdup(e->kind);
	r->actor = strdup(e->actor);
	r->detail = strdup(e->detail);
	if ((e->node != NULL && r->node == NULL) || r->kind == NULL ||
	    r->actor == NULL || r->detail == NULL)
		return -1;
	return 0;
}

static void
ev_row(struct status_out *o, const struct ev_row *r)
{
	status_page_html_put(o, "<tr><td>");
	status_page_html_time(o, r->time_ms);
	status_page_html_put(o, "</td><td>");
	status_page_html_text(o, r->kind);
	status_page_html_put(o, "</td><td>");
	if (r->job_id != 0)
		status_page_html_printf(o, "%llu",
		    (unsigned long long)r->job_id);
	status_page_html_put(o, "</td><td>");
	status_page_html_text(o, r->node);
	status_page_html_put(o, "</td><td>");
	status_page_html_text(o, r->actor);
	status_page_html_put(o, "</td><td>");
	status_page_html_text(o, r->detail);
	status_page_html_put(o, "</td></tr>\n");
}

static void
events(struct status_ctx *c)
{
	struct status_out *o = &c->out;
	struct ev_acc a;
	struct cerr err;
	int64_t last;
	size_t i;

	if (c->in->store == NULL)
		return;
	a.n = 0;
	cerr_clear(&err);
	status_page_html_put(o, "<section id=\"events\"><h2>Latest events"
	    "</h2>\n");
	if (store_events_last_id(c->in->store, &last, &err) == -1 ||
	    store_events_list(c->in->store, last > STATUS_PAGE_EVENTS ?
	    last - STATUS_PAGE_EVENTS : 0, 0, NULL, NULL, 0,
	    STATUS_PAGE_EVENTS, ev_keep, &a, &err) == -1) {
		/* The rest of the page is still worth having. */
		status_page_html_put(o, "<p><b class=\"bad\">The event log "
		    "cannot be read now:</b> ");
		status_page_html_text(o, err.code != ERR_NONE ? err.text :
		    "out of memory");
		status_page_html_put(o, "</p>");
	} else if (a.n == 0) {
		status_page_html_put(o, "<p>None.</p>");
	} else {
		status_page_html_put(o, "<table class=\"jobs\"><tr><th>Time</th>"
		    "<th>Kind</th><th>Job</th><th>Node</th><th>By</th>"
		    "<th>Detail</th></tr>\n");
		for (i = a.n; i-- > 0;)
			ev_row(o, &a.rows[i]);
		status_page_html_put(o, "</table><p class=\"more\">cohort "
		    "events lists them all.</p>");
	}
	for (i = 0; i < a.n; i++) {
		free(a.rows[i].node);
		free(a.rows[i].kind);
		free(a.rows[i].actor);
		free(a.rows[i].detail);
	}
	status_page_html_put(o, "</section>\n");
}

static void
head(struct status_ctx *c)
{
	struct status_out *o = &c->out;

	status_page_html_put(o, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
	    "<meta charset=\"utf-8\"><meta name=\"viewport\" content=\""
	    "width=device-width, initial-scale=1\"><title>Cohort status"
	    "</title><style>");
	status_page_html_put(o, status_css);
	status_page_html_put(o, "</style></head>\n<body>\n<h1>Cohort <small>"
	    "cohortd " PACKAGE_VERSION " &middot; <a href=\"/metrics\">"
	    "metrics</a> &middot; reload to refresh</small></h1>\n");
}

int
status_page_write(const struct status_page_in *in, struct evbuffer *b)
{
	const struct jobs_filter live = { .all = false };
	struct status_ctx c = { .in = in, .out = { b, false } };

	if (jobs_list(in->jobs, &live, &c.live, &c.nlive) == -1)
		return -1;
	head(&c);
	health(&c);
	status_page_nodes(&c);
	status_page_jobs_pending(&c);
	status_page_jobs_running(&c);
	status_page_jobs_queues(&c);
	events(&c);
	status_page_html_put(&c.out, "</body></html>\n");
	free(c.live);
	return c.out.failed ? -1 : 0;
}

bool
status_page_switch_ok(const char *s)
{
	return peer_name_ok(s);
}

int
status_page_render(const struct http_sources *src, const char *sw,
    struct evbuffer *b)
{
	struct status_page_in in = {
		.switch_name = sw,
		.jobs = src->jobs,
		.nodes = src->nodes,
		.topo = cluster_topo(src->cluster),
		.queues = src->queues,
		.store = src->store,
		.suspect = cluster_suspect(src->cluster),
	};
	struct http_figures fg;
	struct cluster_stats cs;

	memset(&fg, 0, sizeof(fg));
	src->figures(src->figures_arg, &fg);
	cluster_stats(src->cluster, &cs);
	in.health.now_ms = clock_now_ms();
	in.health.started_ms = cluster_started_ms(src->cluster);
	in.health.has_pass = cs.passes > 0;
	in.health.last_pass_us = fg.last_pass_us;
	in.health.conns = fg.conns;
	in.health.agents = fg.agents;
	in.health.people = fg.people;
	in.health.commits = txq_commits(src->txq);
	return status_page_write(&in, b);
}
