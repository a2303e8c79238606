/* The controller's side of scheduling: a snapshot of its nodes and jobs in
 * the pure core's terms (daemon/sched/), one pass, and the decisions back
 * in the controller's terms. The core sees no controller struct, the
 * controller no core struct beyond this file. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/sched/sched.h"
#include "nodes.h"
#include "placement.h"

/* Scratch for one pass: the core's input arrays. */
struct snapshot {
	struct sched_node *nodes;
	struct sched_gpu *gpus;
	struct sched_running *running;
	struct sched_job *jobs;
	uint32_t *prev;		/* every job's previous gang, back to back */
	size_t nrunning;
};

static void
snapshot_free(struct snapshot *s)
{
	free(s->nodes);
	free(s->gpus);
	free(s->running);
	free(s->jobs);
	free(s->prev);
}

static int
node_name_cmp(const void *key, const void *elem)
{
	return strcmp(key, (*(struct node *const *)elem)->name);
}

/* The index of node name in the input (sorted by name), or -1. */
static int64_t
node_index(const struct placement_input *in, const char *name)
{
	struct node *const *n;

	n = bsearch(name, in->nodes, in->nnodes, sizeof(*in->nodes),
	    node_name_cmp);
	return n == NULL ? -1 : (int64_t)(n - in->nodes);
}

static enum sched_topo_mode
topo_mode(enum topo_mode m)
{
	switch (m) {
	case TOPO_REQUIRED:
		return SCHED_TOPO_REQUIRED;
	case TOPO_PREFERRED:
		return SCHED_TOPO_PREFERRED;
	default:
		return SCHED_TOPO_ANY;
	}
}

static enum sched_health
sched_health(enum health_state h)
{
	switch (h) {
	case HEALTH_DEGRADED:
		return SCHED_HEALTH_DEGRADED;
	case HEALTH_FAILED:
		return SCHED_HEALTH_FAILED;
	default:
		return SCHED_HEALTH_OK;
	}
}

static void
snapshot_node(const struct node *n, struct sched_node *sn,
    struct sched_gpu *gpus)
{
	unsigned i;

	for (i = 0; i < n->inv.ngpus; i++) {
		const struct gpu_info *g = &n->inv.gpus[i];

		gpus[i].index = g->index;
		gpus[i].health = sched_health(node_gpu_health(n, i));
		gpus[i].job = n->gpu_job[i];
		gpus[i].nvlink = g->nvlink_domain;
		gpus[i].pcie = g->pcie_switch;
		gpus[i].numa = g->numa_node;
		gpus[i].near_nic = g->nic >= 0;
	}
	sn->name = n->name;
	/* A node whose agent is away cannot be launched on, even before
	 * its heartbeats are overdue. */
	sn->up = n->state == NODE_UP && n->conn_id != 0;
	sn->drained = n->drained;
	sn->health = sched_health(n->health.health);
	sn->gpu_model = n->inv.ngpus > 0 ? n->inv.gpus[0].model : NULL;
	sn->spare = n->spare;
	sn->gpus = gpus;
	sn->ngpus = n->inv.ngpus;
}

static int64_t
job_limit_s(const struct job *job, uint64_t default_limit_s)
{
	return (int64_t)(job->spec.time_limit_s ? job->spec.time_limit_s :
	    default_limit_s);
}

static int
snapshot_build(const struct placement_input *in, struct snapshot *s)
{
	size_t i, k, g = 0, ngpus = 0, nprev = 0, p = 0;
	int64_t now = in->now_ms / 1000, idx;
	const struct job *job;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < in->nnodes; i++)
		ngpus += in->nodes[i]->inv.ngpus;
	for (i = 0; i < in->npending; i++)
		if (in->pending[i]->state == JOB_RESTARTING)
			nprev += in->pending[i]->nprev;
	if ((s->prev = calloc(nprev + 1, sizeof(*s->prev))) == NULL)
		return -1;
	s->nodes = calloc(in->nnodes + 1, sizeof(*s->nodes));
	s->gpus = calloc(ngpus + 1, sizeof(*s->gpus));
	s->running = calloc(in->nactive + 1, sizeof(*s->running));
	s->jobs = calloc(in->npending + 1, sizeof(*s->jobs));
	if (s->nodes == NULL || s->gpus == NULL || s->running == NULL ||
	    s->jobs == NULL)
		return -1;
	for (i = 0; i < in->nnodes; i++) {
		snapshot_node(in->nodes[i], &s->nodes[i], &s->gpus[g]);
		g += in->nodes[i]->inv.ngpus;
	}
	/* Expected ends let backfill see when resources come back; a job
	 * still launching counts from now. */
	for (i = 0; i < in->nactive; i++) {
		job = in->active[i];
		s->running[i].id = job->id;
		s->running[i].end = (job->start_ms ? job->start_ms / 1000 :
		    now) + job_limit_s(job, in->default_limit_s);
	}
	s->nrunning = in->nactive;
	for (i = 0; i < in->npending; i++) {
		struct sched_job *sj = &s->jobs[i];

		job = in->pending[i];
		sj->id = job->id;
		sj->priority = job->spec.priority;
		sj->submit = job->submit_ms / 1000;
		sj->restarting = job->state == JOB_RESTARTING;
		sj->nodes_min = job->spec.nodes_min;
		sj->nodes_max = job->spec.nodes_max;
		sj->gpus_per_node = job->spec.gpus_per_node;
		sj->gpu_type = job->spec.gpu_type;
		sj->topo_mode = topo_mode(job->spec.topo_mode);
		sj->topo_level = job->spec.topo_level;
		sj->time_limit = job_limit_s(job, in->default_limit_s);
		/* A restart keeps the healthy nodes of its old gang, in
		 * rank order (the input keeps the placement's order). */
		if (job->state != JOB_RESTARTING || job->nprev == 0)
			continue;
		sj->prev_nodes = &s->prev[p];
		for (k = 0; k < job->nprev; k++)
			if ((idx = node_index(in, job->prev_place[k].node)) >= 0)
				s->prev[p + sj->nprev++] = (uint32_t)idx;
		p += sj->nprev;
	}
	return 0;
}

static int
result_starts(const struct placement_input *in, const struct sched_result *r,
    struct placement_result *res)
{
	const struct sched_start *st;
	struct placement *place;
	size_t i, k, g;

	if (r->nstarts == 0)
		return 0;
	if ((res->starts = calloc(r->nstarts, sizeof(*res->starts))) == NULL)
		return -1;
	for (i = 0; i < r->nstarts; i++) {
		st = &r->starts[i];
		if ((place = calloc(st->nnodes, sizeof(*place))) == NULL)
			return -1;
		res->starts[i].job_id = st->job;
		res->starts[i].place = place;
		res->starts[i].nplace = st->nnodes;
		res->nstarts++;
		for (k = 0; k < st->nnodes; k++) {
			const struct sched_place *sp = &st->nodes[k];

			snprintf(place[k].node, sizeof(place[k].node), "%s",
			    in->nodes[sp->node]->name);
			place[k].node_rank = (unsigned)k;
			place[k].ngpus = sp->ngpus < PLACE_MAX_GPUS ?
			    sp->ngpus : PLACE_MAX_GPUS;
			for (g = 0; g < place[k].ngpus; g++)
				place[k].gpus[g] = sp->gpus[g];
		}
	}
	return 0;
}

static int
result_reasons(const struct placement_input *in,
    const struct sched_result *r, struct placement_result *res)
{
	size_t i, n = 0;

	for (i = 0; i < in->npending; i++)
		if (r->reasons[i] != SCHED_REASON_NONE)
			n++;
	if (n == 0)
		return 0;
	if ((res->reasons = calloc(n, sizeof(*res->reasons))) == NULL)
		return -1;
	for (i = 0; i < in->npending; i++) {
		struct placement_reason *pr;

		if (r->reasons[i] == SCHED_REASON_NONE)
			continue;
		pr = &res->reasons[res->nreasons++];
		pr->job_id = in->pending[i]->id;
		snprintf(pr->reason, sizeof(pr->reason), "%s",
		    sched_reason_name(r->reasons[i]));
		if (r->has_resv && r->resv.pending == i) {
			/* Like squeue --start: when it is expected to run. */
			time_t t = (time_t)r->resv.start;
			struct tm tm;
			char when[32];

			gmtime_r(&t, &tm);
			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
			snprintf(pr->reason, sizeof(pr->reason),
			    "%s (reserved, starts by %s)",
			    sched_reason_name(r->reasons[i]), when);
		}
	}
	return 0;
}

int
placement_decide(const struct placement_input *in,
    struct placement_result *res)
{
	struct sched_input si;
	struct sched_result *r = NULL;
	struct snapshot s;

	memset(res, 0, sizeof(*res));
	memset(&si, 0, sizeof(si));
	if (snapshot_build(in, &s) == -1)
		goto nomem;
	si.now = in->now_ms / 1000;
	si.topo = in->topo;
	si.nodes = s.nodes;
	si.nnodes = in->nnodes;
	si.running = s.running;
	si.nrunning = s.nrunning;
	si.pending = s.jobs;
	si.npending = in->npending;
	si.config.default_limit = (int64_t)in->default_limit_s;
	/* The queue policy ([controller] queue_order, queue_aging). */
	si.config.order = (enum sched_order)in->queue_order;
	si.config.aging = in->queue_aging;
	if ((r = sched_run(&si)) == NULL)
		goto nomem;
	if (result_starts(in, r, res) == -1 ||
	    result_reasons(in, r, res) == -1)
		goto nomem;
	res->backfilled = r->stats.backfilled;
	sched_result_free(r);
	snapshot_free(&s);
	return 0;
nomem:
	sched_result_free(r);
	snapshot_free(&s);
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
