#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "daemon/sched/topo.h"
#include "jobs.h"
#include "nodes.h"
#include "status_page_int.h"

#define STATUS_PAGE_STR2(x) #x
#define STATUS_PAGE_STR(x) STATUS_PAGE_STR2(x)

/* What one GPU cell shows, most urgent first when several hold. */
enum cell {
	CELL_DOWN,		/* its node is DOWN */
	CELL_FAILED,		/* the GPU's health is FAILED */
	CELL_JOB,		/* a job holds it */
	CELL_DRAINED,		/* free, on a drained node */
	CELL_FREE,
	CELL_NKINDS,
};

static const char *const cell_name[CELL_NKINDS] = {
	"down", "failed", "in use", "drained", "free",
};
static const char *const cell_class[CELL_NKINDS] = {
	"down", "failed", "busy", "drained", "free",
};

/* A node's place on the page: its leaf switch (INT32_MAX: none, after
 * every switch), then its name (nodes_all's order). */
struct slot {
	int32_t leaf;
	size_t idx;
};

/* A run of slots shown under one heading. */
struct group {
	int32_t leaf;
	size_t first, n;
	unsigned long cells[CELL_NKINDS];
	unsigned long down, drained, unhealthy;
};

static enum cell
cell_of(const struct node *n, unsigned g)
{
	if (n->state == NODE_DOWN)
		return CELL_DOWN;
	if (node_gpu_health(n, g) == HEALTH_FAILED)
		return CELL_FAILED;
	if (n->gpu_job[g] != 0)
		return CELL_JOB;
	return n->drained ? CELL_DRAINED : CELL_FREE;
}

static const char *
gpu_reason(const struct node *n, unsigned g)
{
	unsigned k;

	for (k = 0; k < n->health.ngpus; k++)
		if (n->health.gpus[k].index == g)
			return n->health.gpus[k].reason;
	return "";
}

static int
slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	if (x->leaf != y->leaf)
		return x->leaf < y->leaf ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The end of a job's cell ("12 name (user)\">12</i>"), escaped once per
 * run of cells of the same job: at 10,000 nodes most of the page's
 * bytes. tail_len 0: too long to keep; written cell by cell. */
struct job_memo {
	uint64_t id;
	const struct job *job;
	char tail[2 * PEER_NAME_MAX + 256];
	size_t tail_len;
};

static void
cell_tail(struct status_out *o, const struct job *j)
{
	status_page_html_job(o, j);
	status_page_html_put(o, " ");
	status_page_html_text(o, j->spec.name);
	status_page_html_put(o, " (");
	status_page_html_text(o, j->user);
	status_page_html_put(o, ")\">");
	status_page_html_job(o, j);
	status_page_html_put(o, "</i>");
}

static void
memo_job(struct status_ctx *c, struct job_memo *m, uint64_t id)
{
	struct status_out scratch;
	size_t n;

	if (m->id == id)
		return;
	m->id = id;
	m->tail_len = 0;
	if ((m->job = jobs_get(c->in->jobs, id)) == NULL)
		return;
	if ((scratch.b = evbuffer_new()) == NULL)
		return;
	scratch.failed = false;
	cell_tail(&scratch, m->job);
	n = evbuffer_get_length(scratch.b);
	if (!scratch.failed && n <= sizeof(m->tail) &&
	    evbuffer_copyout(scratch.b, m->tail, n) == (ev_ssize_t)n)
		m->tail_len = n;
	evbuffer_free(scratch.b);
}

static void
cell_job(struct status_ctx *c, const struct node *n, unsigned g,
    struct job_memo *m)
{
	struct status_out *o = &c->out;

	memo_job(c, m, n->gpu_job[g]);
	status_page_html_printf(o, "<i class=\"g j%u\" title=\"GPU %u: job ",
	    status_page_html_colour(n->gpu_job[g]), g);
	if (m->job == NULL)
		status_page_html_printf(o, "%llu\">%llu</i>",
		    (unsigned long long)n->gpu_job[g],
		    (unsigned long long)n->gpu_job[g]);
	else if (m->tail_len > 0 && evbuffer_add(o->b, m->tail,
	    m->tail_len) == -1)
		o->failed = true;
	else if (m->tail_len == 0)
		cell_tail(o, m->job);
}

static void
cells(struct status_ctx *c, const struct node *n, struct job_memo *m)
{
	struct status_out *o = &c->out;
	unsigned g;

	for (g = 0; g < n->inv.ngpus; g++) {
		switch (cell_of(n, g)) {
		case CELL_JOB:
			cell_job(c, n, g, m);
			break;
		case CELL_FAILED:
			status_page_html_printf(o, "<i class=\"g failed\" "
			    "title=\"GPU %u FAILED: ", g);
			status_page_html_text(o, gpu_reason(n, g));
			if (n->gpu_job[g] != 0)
				status_page_html_printf(o, " (job %llu)",
				    (unsigned long long)n->gpu_job[g]);
			status_page_html_put(o, "\">&times;</i>");
			break;
		case CELL_DRAINED:
			status_page_html_printf(o, "<i class=\"g drained\" "
			    "title=\"GPU %u: free, node drained\"></i>", g);
			break;
		case CELL_DOWN:
			status_page_html_printf(o, "<i class=\"g down\" "
			    "title=\"GPU %u: node DOWN\"></i>", g);
			break;
		default:
			status_page_html_put(o, "<i class=\"g free\"></i>");
		}
	}
}

/* "UP", "DOWN", "UP DRAINING", "UP DRAINED FAILED spare", ... */
static void
node_state(struct status_out *o, const struct node *n)
{
	const char *drain = node_drain_state(n);

	status_page_html_put(o, node_state_name(n->state));
	if (drain[0] != '\0')
		status_page_html_printf(o, " <b class=\"drain\">%s</b>", drain);
	if (n->health.health != HEALTH_OK)
		status_page_html_printf(o, " <b class=\"bad\">%s</b>",
		    health_name(n->health.health));
	if (n->spare)
		status_page_html_put(o, " spare");
}

/* "GPU 2 FAILED: xid=79; GPU 5 DEGRADED: ..." for a node whose GPUs
 * are not all OK though the node is. */
static void
gpu_reasons(struct status_out *o, const struct node *n)
{
	unsigned k;

	for (k = 0; k < n->health.ngpus; k++) {
		if (n->health.gpus[k].health == HEALTH_OK)
			continue;
		status_page_html_printf(o, "%sGPU %u %s: ", k > 0 ? "; " : "",
		    n->health.gpus[k].index,
		    health_name(n->health.gpus[k].health));
		status_page_html_text(o, n->health.gpus[k].reason);
	}
}

/* Why the node is not plainly in service ("" when it is). */
static void
node_reason(struct status_out *o, const struct node *n)
{
	if (n->drained) {
		status_page_html_text(o, n->drain_reason);
		if (n->drain_actor[0] != '\0') {
			status_page_html_put(o, " <span class=\"dim\">(by ");
			status_page_html_text(o, n->drain_actor);
			status_page_html_put(o, ")</span>");
		}
	} else if (n->state == NODE_DOWN) {
		status_page_html_text(o, n->reason);
	} else if (n->health.health != HEALTH_OK) {
		status_page_html_text(o, n->health.reason);
	} else {
		gpu_reasons(o, n);
	}
}

static void
node_row(struct status_ctx *c, const struct node *n, struct job_memo *m)
{
	struct status_out *o = &c->out;

	status_page_html_printf(o, "<tr%s><th>",
	    n->state == NODE_DOWN ? " class=\"off\"" : "");
	status_page_html_text(o, n->name);
	status_page_html_put(o, "</th><td>");
	node_state(o, n);
	status_page_html_put(o, "</td><td class=\"cells\">");
	cells(c, n, m);
	status_page_html_put(o, "</td><td>");
	node_reason(o, n);
	status_page_html_put(o, "</td></tr>\n");
}

static bool
node_attention(const struct node *n)
{
	unsigned g;

	if (n->state == NODE_DOWN || n->drained ||
	    n->health.health != HEALTH_OK)
		return true;
	for (g = 0; g < n->inv.ngpus; g++)
		if (node_gpu_health(n, g) != HEALTH_OK)
			return true;
	return false;
}

static void
group_count(struct group *gr, const struct node *n)
{
	unsigned g;

	for (g = 0; g < n->inv.ngpus; g++)
		gr->cells[cell_of(n, g)]++;
	gr->down += n->state == NODE_DOWN;
	gr->drained += n->drained;
	gr->unhealthy += node_attention(n) && n->state != NODE_DOWN &&
	    !n->drained;
}

/* "12 free · 4 in use · 1 failed" with the non-zero counts. */
static void
counts(struct status_out *o, const unsigned long *cells)
{
	unsigned k;

	status_page_html_printf(o, "<span class=\"n free\">%lu free</span>",
	    cells[CELL_FREE]);
	for (k = 0; k < CELL_NKINDS; k++)
		if (k != CELL_FREE && cells[k] > 0)
			status_page_html_printf(o, " <span class=\"n %s\">"
			    "%lu %s</span>", cell_class[k], cells[k],
			    cell_name[k]);
}

static void
group_heading(struct status_ctx *c, const struct group *gr,
    struct node **all, const struct slot *order)
{
	struct status_out *o = &c->out;
	unsigned long gpus = 0;
	unsigned k;

	for (k = 0; k < CELL_NKINDS; k++)
		gpus += gr->cells[k];
	status_page_html_put(o, "<summary><b>");
	if (gr->leaf != INT32_MAX) {
		status_page_html_text(o, topo_switch_name(c->in->topo,
		    (size_t)gr->leaf));
	} else {
		/* Unswitched nodes, by name: first .. last of the run. */
		if (c->in->topo != NULL)
			status_page_html_put(o, "no switch: ");
		status_page_html_text(o, all[order[gr->first].idx]->name);
		if (gr->n > 1) {
			status_page_html_put(o, " &ndash; ");
			status_page_html_text(o,
			    all[order[gr->first + gr->n - 1].idx]->name);
		}
	}
	status_page_html_printf(o, "</b> %zu node%s, %lu GPU%s: ", gr->n,
	    gr->n == 1 ? "" : "s", gpus, gpus == 1 ? "" : "s");
	counts(o, gr->cells);
	if (gr->down > 0)
		status_page_html_printf(o, " <b class=\"bad\">%lu node%s "
		    "DOWN</b>", gr->down, gr->down == 1 ? "" : "s");
	if (gr->drained > 0)
		status_page_html_printf(o, " <b class=\"drain\">%lu "
		    "drained</b>", gr->drained);
	if (gr->unhealthy > 0)
		status_page_html_printf(o, " <b class=\"bad\">%lu "
		    "unhealthy</b>", gr->unhealthy);
	status_page_html_put(o, "</summary>\n");
}

static void
group_write(struct status_ctx *c, struct group *gr, struct node **all,
    const struct slot *order, bool open)
{
	struct status_out *o = &c->out;
	struct job_memo m = { .id = 0 };
	size_t i;

	for (i = 0; i < gr->n; i++)
		group_count(gr, all[order[gr->first + i].idx]);
	status_page_html_printf(o, "<details class=\"sw\"%s>",
	    open ? " open" : "");
	group_heading(c, gr, all, order);
	status_page_html_put(o, "<table class=\"nodes\">\n");
	for (i = 0; i < gr->n; i++)
		node_row(c, all[order[gr->first + i].idx], &m);
	status_page_html_put(o, "</table></details>\n");
}

/* Nodes down, drained or unhealthy, first of all: at 3 a.m. on 10,000
 * nodes these are what a person looks for. Open when short; else one
 * summary line that says how many of each. */
static void
attention(struct status_ctx *c, struct node **all, size_t n)
{
	struct status_out *o = &c->out;
	struct job_memo m = { .id = 0 };
	unsigned long down = 0, drained = 0, unhealthy = 0;
	size_t i, total = 0, shown = 0;

	for (i = 0; i < n; i++) {
		if (!node_attention(all[i]))
			continue;
		total++;
		if (all[i]->state == NODE_DOWN)
			down++;
		else if (all[i]->drained)
			drained++;
		else
			unhealthy++;
	}
	if (total == 0)
		return;
	status_page_html_printf(o, "<details class=\"sw\" id=\"attention\"%s>"
	    "<summary><b>Needing attention</b> %zu node%s: %lu DOWN, %lu "
	    "drained, %lu with GPUs not OK%s</summary>\n<table class=\"nodes\">"
	    "\n", total <= STATUS_PAGE_GROUP_NODES ? " open" : "", total,
	    total == 1 ? "" : "s", down, drained, unhealthy,
	    total > STATUS_PAGE_ATTENTION_MAX ? " (the first "
	    STATUS_PAGE_STR(STATUS_PAGE_ATTENTION_MAX) " here)" : "");
	for (i = 0; i < n && shown < STATUS_PAGE_ATTENTION_MAX; i++)
		if (node_attention(all[i])) {
			node_row(c, all[i], &m);
			shown++;
		}
	status_page_html_put(o, "</table></details>\n");
}

static void
legend(struct status_out *o, struct node **all, size_t n)
{
	unsigned long cells[CELL_NKINDS] = { 0 };
	size_t i;
	unsigned g;

	for (i = 0; i < n; i++)
		for (g = 0; g < all[i]->inv.ngpus; g++)
			cells[cell_of(all[i], g)]++;
	status_page_html_put(o, "<p class=\"legend\">"
	    "<i class=\"g free\"></i> free "
	    "<i class=\"g j1\">13</i> a job's (its id; one colour per job) "
	    "<i class=\"g failed\">&times;</i> failed "
	    "<i class=\"g drained\"></i> drained "
	    "<i class=\"g down\"></i> node down</p>\n<p>GPUs: ");
	counts(o, cells);
	status_page_html_put(o, "</p>\n");
}

void
status_page_nodes(struct status_ctx *c)
{
	struct status_out *o = &c->out;
	struct node **all;
	struct slot *order;
	struct group gr;
	size_t i, n;
	bool open;

	all = nodes_all(c->in->nodes, &n);
	status_page_html_printf(o, "<section id=\"nodes\"><h2>Nodes (%zu)"
	    "</h2>\n", n);
	if (n == 0) {
		status_page_html_put(o, "<p>No node has registered.</p>"
		    "</section>\n");
		return;
	}
	if ((order = calloc(n, sizeof(*order))) == NULL) {
		o->failed = true;
		return;
	}
	for (i = 0; i < n; i++) {
		int32_t leaf = c->in->topo != NULL ?
		    topo_node_leaf(c->in->topo, all[i]->name) : -1;

		order[i].leaf = leaf >= 0 ? leaf : INT32_MAX;
		order[i].idx = i;
	}
	qsort(order, n, sizeof(*order), slot_cmp);
	legend(o, all, n);
	attention(c, all, n);
	open = n <= (c->in->open_nodes > 0 ? c->in->open_nodes :
	    STATUS_PAGE_OPEN_NODES);
	if (!open)
		status_page_html_put(o, "<p class=\"more\">Many nodes: open a "
		    "switch to see its nodes.</p>\n");
	for (i = 0; i < n; i += gr.n) {
		memset(&gr, 0, sizeof(gr));
		gr.leaf = order[i].leaf;
		gr.first = i;
		while (i + gr.n < n && order[i + gr.n].leaf == gr.leaf &&
		    (gr.leaf != INT32_MAX || gr.n < STATUS_PAGE_GROUP_NODES))
			gr.n++;
		group_write(c, &gr, all, order, open);
	}
	free(order);
	status_page_html_put(o, "</section>\n");
}
