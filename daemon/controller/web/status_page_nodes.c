#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sched/topo.h"
#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/suspect.h"
#include "daemon/controller/web/status_page_int.h"

#define STATUS_PAGE_STR2(x) #x
#define STATUS_PAGE_STR(x) STATUS_PAGE_STR2(x)

static const char *const cell_name[STATUS_CELL_NKINDS] = {
	"down", "failed", "in use", "drained", "free",
};
static const char *const cell_class[STATUS_CELL_NKINDS] = {
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
	unsigned long cells[STATUS_CELL_NKINDS];
	unsigned long down, drained, unhealthy;
};

static int
slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	if (x->leaf != y->leaf)
		return x->leaf < y->leaf ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void
group_count(struct group *gr, const struct node *n)
{
	unsigned g;

	for (g = 0; g < n->inv->ngpus && g < INV_MAX_GPUS; g++)
		gr->cells[status_page_cells_kind(n, g)]++;
	gr->down += n->state == NODE_DOWN;
	gr->drained += n->drained;
	gr->unhealthy += status_page_cells_attention(n) && n->state != NODE_DOWN &&
	    !n->drained;
}

/* "12 free · 4 in use · 1 failed" with the non-zero counts. */
static void
counts(struct status_out *o, const unsigned long *cells)
{
	unsigned k;

	status_page_html_printf(o, "<span class=\"n free\">%lu free</span>",
	    cells[STATUS_CELL_FREE]);
	for (k = 0; k < STATUS_CELL_NKINDS; k++)
		if (k != STATUS_CELL_FREE && cells[k] > 0)
			status_page_html_printf(o, " <span class=\"n %s\">"
			    "%lu %s</span>", cell_class[k], cells[k],
			    cell_name[k]);
}

/* The group's heading: its name (a link to /?switch=LINK when link is
 * not NULL), its size and counts. */
static void
group_heading(struct status_ctx *c, const struct group *gr,
    struct node **all, const struct slot *order, const char *link)
{
	struct status_out *o = &c->out;
	unsigned long gpus = 0;
	unsigned k;

	for (k = 0; k < STATUS_CELL_NKINDS; k++)
		gpus += gr->cells[k];
	if (link != NULL) {
		/* status_page_switch_ok: nothing to escape in a URL. */
		status_page_html_put(o, "<a href=\"/?switch=");
		status_page_html_text(o, link);
		status_page_html_put(o, "\">");
	}
	status_page_html_put(o, "<b>");
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
	status_page_html_put(o, link != NULL ? "</b></a>" : "</b>");
	status_page_html_printf(o, " %zu node%s, %lu GPU%s: ", gr->n,
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
}

/* A group with every node's row, open. */
static void
group_write(struct status_ctx *c, struct group *gr, struct node **all,
    const struct slot *order)
{
	struct status_out *o = &c->out;
	struct status_memo m = { .id = 0 };
	size_t i;

	status_page_html_put(o, "<details class=\"sw\" open><summary>");
	group_heading(c, gr, all, order, NULL);
	status_page_html_put(o, "</summary>\n<table class=\"nodes\">\n");
	for (i = 0; i < gr->n; i++)
		status_page_cells_row(c, all[order[gr->first + i].idx], &m);
	status_page_html_put(o, "</table></details>\n");
}

/* A group as one summary row linking to its own page: no node row, so
 * that 10,000 nodes cost a few hundred rows. */
static void
group_link(struct status_ctx *c, struct group *gr, struct node **all,
    const struct slot *order, const char *name)
{
	status_page_html_put(&c->out, "<div class=\"sw\">");
	group_heading(c, gr, all, order, status_page_switch_ok(name) ? name :
	    NULL);
	status_page_html_put(&c->out, "</div>\n");
}

/* The group from slot i on: a leaf switch's nodes, or at most
 * STATUS_PAGE_GROUP_NODES nodes under none. */
static void
group_next(const struct slot *order, size_t n, size_t i, struct group *gr)
{
	memset(gr, 0, sizeof(*gr));
	gr->leaf = order[i].leaf;
	gr->first = i;
	while (i + gr->n < n && order[i + gr->n].leaf == gr->leaf &&
	    (gr->leaf != INT32_MAX || gr->n < STATUS_PAGE_GROUP_NODES))
		gr->n++;
}

/* The name /?switch= knows a group by: its switch's, or
 * STATUS_PAGE_UNSWITCHED "N" for the Nth group under no switch. */
static const char *
group_name(struct status_ctx *c, const struct group *gr, unsigned long nth,
    char *buf, size_t size)
{
	if (gr->leaf != INT32_MAX)
		return topo_switch_name(c->in->topo, (size_t)gr->leaf);
	snprintf(buf, size, STATUS_PAGE_UNSWITCHED "%lu", nth);
	return buf;
}

/* The first slot of the group named sw, or n when none is so named (a
 * switch of the topology comes before the unswitched groups: it wins). */
static size_t
group_find(struct status_ctx *c, const struct slot *order, size_t n,
    const char *sw)
{
	char buf[sizeof(STATUS_PAGE_UNSWITCHED) + 24];
	unsigned long nth = 0;
	struct group gr;
	size_t i;

	for (i = 0; i < n; i += gr.n) {
		group_next(order, n, i, &gr);
		nth += gr.leaf == INT32_MAX;
		if (strcmp(group_name(c, &gr, nth, buf, sizeof(buf)), sw) == 0)
			return i;
	}
	return n;
}

/* Nodes down, drained or unhealthy, first of all: at 3 a.m. on 10,000
 * nodes these are what a person looks for. Open when short; else one
 * summary line that says how many of each. */
static void
attention(struct status_ctx *c, struct node **all, size_t n)
{
	struct status_out *o = &c->out;
	struct status_memo m = { .id = 0 };
	unsigned long down = 0, drained = 0, unhealthy = 0;
	size_t i, total = 0, shown = 0;

	for (i = 0; i < n; i++) {
		if (!status_page_cells_attention(all[i]))
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
		if (status_page_cells_attention(all[i])) {
			status_page_cells_row(c, all[i], &m);
			shown++;
		}
	status_page_html_put(o, "</table></details>\n");
}

/* Nodes failures are attributed to (suspect.h): the score that counts
 * now, whether it is drained for it or exempt, and the evidence, highest
 * score first in the order suspect_all gives (by name), at most
 * STATUS_PAGE_ATTENTION_MAX of them. Only nodes with a score: the table
 * is as long as the nodes that fail, not the cluster. */
static void
suspects(struct status_ctx *c)
{
	struct status_out *o = &c->out;
	struct suspect_node *const *v;
	int64_t now = c->in->health.now_ms;
	size_t i, n, total = 0, shown = 0;
	uint32_t sc, best = 0;

	if (c->in->suspect == NULL)
		return;
	v = suspect_all(c->in->suspect, &n);
	for (i = 0; i < n; i++)
		if ((sc = suspect_score(c->in->suspect, v[i]->name, now)) > 0) {
			total++;
			best = sc > best ? sc : best;
		}
	if (total == 0)
		return;
	status_page_html_printf(o, "<details class=\"sw\" id=\"suspects\" "
	    "open><summary><b>Suspect nodes</b> %zu with failures that count "
	    "against them%s</summary>\n<table class=\"jobs\"><tr>"
	    "<th>Node</th><th>Score</th><th>Drained</th><th>Evidence</th>"
	    "</tr>\n", total, total > STATUS_PAGE_ATTENTION_MAX ? " (the "
	    "first " STATUS_PAGE_STR(STATUS_PAGE_ATTENTION_MAX) " here)" : "");
	/* Highest first: one walk per score present, bounded by the rows
	 * shown. */
	for (; best > 0 && shown < STATUS_PAGE_ATTENTION_MAX; best--)
		for (i = 0; i < n && shown < STATUS_PAGE_ATTENTION_MAX; i++) {
			if (suspect_score(c->in->suspect, v[i]->name, now) !=
			    best)
				continue;
			status_page_html_put(o, "<tr><td>");
			status_page_html_text(o, v[i]->name);
			status_page_html_printf(o, "</td><td class=\"r\">%u"
			    "</td><td>%s</td><td class=\"why\">", best,
			    v[i]->reason[0] != '\0' ? "<b class=\"drain\">"
			    "suspect</b>" : v[i]->exempt ? "exempt" : "-");
			status_page_html_text(o, v[i]->text);
			status_page_html_put(o, "</td></tr>\n");
			shown++;
		}
	status_page_html_put(o, "</table></details>\n");
}

static void
legend(struct status_out *o, struct node **all, size_t n)
{
	unsigned long cells[STATUS_CELL_NKINDS] = { 0 };
	size_t i;
	unsigned g;

	for (i = 0; i < n; i++)
		for (g = 0; g < all[i]->inv->ngpus && g < INV_MAX_GPUS; g++)
			cells[status_page_cells_kind(all[i], g)]++;
	status_page_html_put(o, "<p class=\"legend\">"
	    "<i class=\"g free\"></i> free "
	    "<i class=\"g j1\">13</i> a job's (its id; one colour per job) "
	    "<i class=\"g failed\">&times;</i> failed "
	    "<i class=\"g drained\"></i> drained "
	    "<i class=\"g down\"></i> node down</p>\n<p>GPUs: ");
	counts(o, cells);
	status_page_html_put(o, "</p>\n");
}

/* Every group: all open when the cluster is small and no switch was
 * asked for; else the one asked for (sel < n) open, first, and the
 * others as summary rows. */
static void
groups(struct status_ctx *c, struct node **all, const struct slot *order,
    size_t n, size_t sel)
{
	const char *sw = c->in->switch_name;
	char buf[sizeof(STATUS_PAGE_UNSWITCHED) + 24];
	unsigned long nth = 0;
	struct group gr;
	size_t i, k;
	bool all_open = (sw == NULL || sw[0] == '\0') &&
	    n <= (c->in->open_nodes > 0 ? c->in->open_nodes :
	    STATUS_PAGE_OPEN_NODES);

	if (sel < n) {
		group_next(order, n, sel, &gr);
		for (i = 0; i < gr.n; i++)
			group_count(&gr, all[order[sel + i].idx]);
		group_write(c, &gr, all, order);
		status_page_html_put(&c->out, "<h3>Every switch (<a href=\"/\">"
		    "the overview</a>)</h3>\n");
	} else if (!all_open) {
		status_page_html_put(&c->out, "<p class=\"more\">Many nodes: "
		    "follow a switch to see its nodes.</p>\n");
	}
	for (i = 0; i < n; i += gr.n) {
		group_next(order, n, i, &gr);
		nth += gr.leaf == INT32_MAX;
		if (i == sel)
			continue;
		for (k = 0; k < gr.n; k++)
			group_count(&gr, all[order[i + k].idx]);
		if (all_open)
			group_write(c, &gr, all, order);
		else
			group_link(c, &gr, all, order, group_name(c, &gr, nth,
			    buf, sizeof(buf)));
	}
}

/* /?switch= named no group of nodes (200, not 404: the rest of the page
 * is still the status). */
static void
no_switch(struct status_out *o, const char *sw)
{
	status_page_html_put(o, "<p><b class=\"bad\">No switch ");
	status_page_html_text(o, sw);
	status_page_html_put(o, ".</b> <a href=\"/\">The overview</a></p>\n");
}

void
status_page_nodes(struct status_ctx *c)
{
	struct status_out *o = &c->out;
	const char *sw = c->in->switch_name;
	struct node **all;
	struct slot *order;
	size_t i, n, sel;

	all = nodes_all(c->in->nodes, &n);
	status_page_html_printf(o, "<section id=\"nodes\"><h2>Nodes (%zu)"
	    "</h2>\n", n);
	if (sw != NULL && sw[0] != '\0' && n == 0)
		no_switch(o, sw);
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
	sel = sw != NULL && sw[0] != '\0' ? group_find(c, order, n, sw) : n;
	if (sw != NULL && sw[0] != '\0' && sel == n)
		no_switch(o, sw);
	legend(o, all, n);
	attention(c, all, n);
	suspects(c);
	groups(c, all, order, n, sel);
	free(order);
	status_page_html_put(o, "</section>\n");
}
