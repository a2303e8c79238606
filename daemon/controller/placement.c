/* First-fit gang placement in strict queue order. The topology-aware
 * core of daemon/sched/ replaces the body of placement_decide behind the
 * same interface. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nodes.h"
#include "placement.h"

static int
queue_cmp(const void *a, const void *b)
{
	const struct job *x = *(const struct job *const *)a;
	const struct job *y = *(const struct job *const *)b;

	if (x->spec.priority != y->spec.priority)
		return x->spec.priority > y->spec.priority ? -1 : 1;
	if (x->submit_ms != y->submit_ms)
		return x->submit_ms < y->submit_ms ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static bool
node_usable(const struct node *n)
{
	return n->state == NODE_UP && n->conn_id != 0 && n->inv.ngpus > 0;
}

static bool
node_type_ok(const struct node *n, const struct job *job)
{
	return job->spec.gpu_type == NULL ||
	    strcasestr(n->inv.gpus[0].model, job->spec.gpu_type) != NULL;
}

/* GPUs job needs on n (0 in the spec: all of the node's). */
static unsigned
job_gpus_on(const struct job *job, const struct node *n)
{
	return job->spec.gpus_per_node ? job->spec.gpus_per_node :
	    n->inv.ngpus;
}

/* Take the lowest-numbered free GPUs of n for job into p. */
static void
take_gpus(struct node *n, const struct job *job, struct placement *p,
    unsigned rank, uint64_t *taken)
{
	unsigned want = job_gpus_on(job, n), i;

	snprintf(p->node, sizeof(p->node), "%s", n->name);
	p->node_rank = rank;
	p->ngpus = 0;
	for (i = 0; i < n->inv.ngpus && p->ngpus < want; i++) {
		if (n->gpu_job[i] != 0 || (*taken & (1ULL << i)))
			continue;
		p->gpus[p->ngpus++] = i;
		*taken |= 1ULL << i;
	}
}

static int
add_reason(struct placement_result *res, uint64_t id, const char *why)
{
	struct placement_reason *r;

	r = reallocarray(res->reasons, res->nreasons + 1, sizeof(*r));
	if (r == NULL)
		return -1;
	res->reasons = r;
	r[res->nreasons].job_id = id;
	snprintf(r[res->nreasons].reason, sizeof(r->reason), "%s", why);
	res->nreasons++;
	return 0;
}

/* Try to place job; on success append a start and mark its GPUs. */
static int
place_job(const struct placement_input *in, const struct job *job,
    struct placement_result *res, const char **why)
{
	struct placement_start *s;
	struct placement *place;
	uint64_t *taken;
	size_t i, found = 0, typed = 0;

	place = calloc(job->spec.nodes_max, sizeof(*place));
	taken = calloc(in->nnodes ? in->nnodes : 1, sizeof(*taken));
	if (place == NULL || taken == NULL)
		goto nomem;
	for (i = 0; i < in->nnodes && found < job->spec.nodes_max; i++) {
		struct node *n = in->nodes[i];

		if (!node_usable(n) || !node_type_ok(n, job))
			continue;
		typed++;
		if (job_gpus_on(job, n) > n->inv.ngpus ||
		    node_gpus_free(n) < job_gpus_on(job, n))
			continue;
		take_gpus(n, job, &place[found], (unsigned)found, &taken[i]);
		found++;
	}
	if (found < job->spec.nodes_min) {
		*why = typed == 0 && job->spec.gpu_type != NULL ? "GpuType" :
		    "Resources";
		free(place);
		free(taken);
		return 0;
	}
	s = reallocarray(res->starts, res->nstarts + 1, sizeof(*s));
	if (s == NULL)
		goto nomem;
	res->starts = s;
	s[res->nstarts].job_id = job->id;
	s[res->nstarts].place = place;
	s[res->nstarts].nplace = found;
	res->nstarts++;
	/* Later jobs of this pass see these GPUs as taken. */
	for (i = 0; i < found; i++) {
		struct node *n = NULL;
		size_t k, g;

		for (k = 0; k < in->nnodes; k++)
			if (strcmp(in->nodes[k]->name, place[i].node) == 0)
				n = in->nodes[k];
		for (g = 0; n != NULL && g < place[i].ngpus; g++)
			n->gpu_job[place[i].gpus[g]] = job->id;
	}
	free(taken);
	*why = NULL;
	return 0;
nomem:
	free(place);
	free(taken);
	return -1;
}

int
placement_decide(const struct placement_input *in,
    struct placement_result *res)
{
	const struct job **q;
	const char *why;
	bool blocked = false;
	size_t i;

	memset(res, 0, sizeof(*res));
	if ((q = calloc(in->npending ? in->npending : 1, sizeof(*q))) == NULL)
		return -1;
	memcpy(q, in->pending, in->npending * sizeof(*q));
	qsort(q, in->npending, sizeof(*q), queue_cmp);
	for (i = 0; i < in->npending; i++) {
		/* Strict order: nothing passes the first job that waits. */
		if (blocked) {
			if (add_reason(res, q[i]->id, "Priority") == -1)
				goto nomem;
			continue;
		}
		if (place_job(in, q[i], res, &why) == -1)
			goto nomem;
		if (why != NULL) {
			blocked = true;
			if (add_reason(res, q[i]->id, why) == -1)
				goto nomem;
		}
	}
	free(q);
	return 0;
nomem:
	free(q);
	placement_result_free(res);
	errno = ENOMEM;
	return -1;
}

void
placement_result_free(struct placement_result *res)
{
	size_t i;

	for (i = 0; i < res->nstarts; i++)
		free(res->starts[i].place);
	free(res->starts);
	free(res->reasons);
	memset(res, 0, sizeof(*res));
}
