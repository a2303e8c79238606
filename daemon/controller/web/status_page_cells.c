#include "config.h"

#include <event2/buffer.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/web/status_page_int.h"

enum status_cell
status_page_cells_kind(const struct node *n, unsigned g)
{
	if (n->state == NODE_DOWN)
		return STATUS_CELL_DOWN;
	if (node_gpu_health(n, g) == HEALTH_FAILED)
		return STATUS_CELL_FAILED;
	if (n->gpu_job[g] != 0)
		return STATUS_CELL_JOB;
	return n->drained ? STATUS_CELL_DRAINED : STATUS_CELL_FREE;
}

static const char *
gpu_reason(const struct node *n, unsigned g)
{
	unsigned k;

	for (k = 0; k < n->health->ngpus; k++)
		if (n->health->gpus[k].index == g)
			return n->health->gpus[k].reason;
	return "";
}


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
memo_job(struct status_ctx *c, struct status_memo *m, uint64_t id)
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
    struct status_memo *m)
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
cells(struct status_ctx *c, const struct node *n, struct status_memo *m)
{
	struct status_out *o = &c->out;
	unsigned g;

	for (g = 0; g < n->inv->ngpus && g < INV_MAX_GPUS; g++) {
		switch (status_page_cells_kind(n, g)) {
		case STATUS_CELL_JOB:
			cell_job(c, n, g, m);
			break;
		case STATUS_CELL_FAILED:
			status_page_html_printf(o, "<i class=\"g failed\" "
			    "title=\"GPU %u FAILED: ", g);
			status_page_html_text(o, gpu_reason(n, g));
			if (n->gpu_job[g] != 0)
				status_page_html_printf(o, " (job %llu)",
				    (unsigned long long)n->gpu_job[g]);
			status_page_html_put(o, "\">&times;</i>");
			break;
		case STATUS_CELL_DRAINED:
			status_page_html_printf(o, "<i class=\"g drained\" "
			    "title=\"GPU %u: free, node drained\"></i>", g);
			break;
		case STATUS_CELL_DOWN:
			status_page_html_printf(o, "<i class=\"g down\" "
			    "title=\"GPU %u: node DOWN\"></i>", g);
			break;
		default:
			status_page_html_put(o, "<i class=\"g free\"></i>");
		}
	}
}

/* "UP", "DOWN UNKNOWN", "UP DRAINING", "UP DRAINED FAILED spare", ...
 * A DOWN node's health is UNKNOWN, whatever it last reported (as cohort
 * nodes says it). */
static void
node_state(struct status_out *o, const struct node *n)
{
	const char *drain = node_drain_state(n);

	status_page_html_put(o, node_state_name(n->state));
	if (drain[0] != '\0')
		status_page_html_printf(o, " <b class=\"drain\">%s</b>", drain);
	if (n->state != NODE_UP)
		status_page_html_put(o, " <span class=\"dim\">UNKNOWN</span>");
	else if (n->health->health != HEALTH_OK)
		status_page_html_printf(o, " <b class=\"bad\">%s</b>",
		    health_name(n->health->health));
	if (n->spare)
		status_page_html_put(o, " spare");
}

/* "GPU 2 FAILED: xid=79; GPU 5 DEGRADED: ..." for a node whose GPUs
 * are not all OK though the node is. */
static void
gpu_reasons(struct status_out *o, const struct node *n)
{
	unsigned k;

	for (k = 0; k < n->health->ngpus; k++) {
		if (n->health->gpus[k].health == HEALTH_OK)
			continue;
		status_page_html_printf(o, "%sGPU %u %s: ", k > 0 ? "; " : "",
		    n->health->gpus[k].index,
		    health_name(n->health->gpus[k].health));
		status_page_html_text(o, n->health->gpus[k].reason);
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
	} else if (n->health->health != HEALTH_OK) {
		status_page_html_text(o, n->health->reason);
	} else {
		gpu_reasons(o, n);
	}
}

/* The node's features, as --constraint matches them: the configured
 * ones, then those derived from its inventory (dimmed, with a title
 * saying so); nothing for a node with none. */
static void
node_features_cell(struct status_out *o, const struct node *n)
{
	unsigned i;

	for (i = 0; i < n->inv->nfeatures && i < INV_MAX_FEATURES; i++) {
		status_page_html_put(o, i > 0 ? "," : "");
		status_page_html_text(o, n->inv->features[i]);
	}
	if (n->derived.n == 0)
		return;
	if (i > 0)
		status_page_html_put(o, " ");
	status_page_html_put(o, "<span class=\"dim\" title=\"derived from the "
	    "inventory\">");
	for (i = 0; i < n->derived.n && i < FEATURES_DERIVED_MAX; i++) {
		status_page_html_put(o, i > 0 ? "," : "");
		status_page_html_text(o, n->derived.v[i]);
	}
	status_page_html_put(o, "</span>");
}

void
status_page_cells_row(struct status_ctx *c, const struct node *n,
    struct status_memo *m)
{
	struct status_out *o = &c->out;

	status_page_html_printf(o, "<tr%s><th>",
	    n->state == NODE_DOWN ? " class=\"off\"" : "");
	status_page_html_text(o, n->name);
	status_page_html_put(o, "</th><td>");
	node_state(o, n);
	status_page_html_put(o, "</td><td class=\"cells\">");
	cells(c, n, m);
	status_page_html_put(o, "</td><td class=\"feat\">");
	node_features_cell(o, n);
	status_page_html_put(o, "</td><td>");
	node_reason(o, n);
	status_page_html_put(o, "</td></tr>\n");
}

bool
status_page_cells_attention(const struct node *n)
{
	unsigned g;

	if (n->state == NODE_DOWN || n->drained ||
	    n->health->health != HEALTH_OK)
		return true;
	for (g = 0; g < n->inv->ngpus && g < INV_MAX_GPUS; g++)
		if (node_gpu_health(n, g) != HEALTH_OK)
			return true;
	return false;
}
