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
#include "lib/constraint.h"
#include "lib/hostlist.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/placement.h"
#include "daemon/controller/domain/queues.h"
#include "daemon/controller/domain/suspect.h"

/* Scratch for one pass: the core's input arrays. */
struct snapshot {
	struct sched_node *nodes;
	struct sched_gpu *gpus;
	struct sched_running *running;
	struct sched_job *jobs;
	uint32_t *prev;		/* every job's previous gang, back to back */
	uint8_t *ok;		/* node filters, nnodes bytes per job that
				 * has one, back to back */
	size_t nrunning;
	/* With queues: the tree, then one more top-level queue for jobs
	 * whose queue is no longer configured (no quota: whatever they
	 * hold is borrowed); sched's pending index -> in->pending index
	 * (jobs of such a queue wait outside the pass). */
	struct sched_queue *queues;
	size_t nqueues;
	size_t *pidx;
	size_t njobs;
	uint32_t *used;		/* GPUs held per queue, for reasons */
};

static void
snapshot_free(struct snapshot *s)
{
	free(s->nodes);
	free(s->gpus);
	free(s->running);
	free(s->jobs);
	free(s->prev);
	free(s->ok);
	free(s->queues);
	free(s->pidx);
	free(s->used);
}

static bool
id_listed(const uint64_t *ids, size_t n, uint64_t id)
{
	return n > 0 && bsearch(&id, ids, n, sizeof(*ids), job_id_cmp) != NULL;
}

static bool
queues_on(const struct placement_input *in)
{
	return in->queues != NULL && queues_configured(in->queues);
}

/* The queue tree and what each queue holds now. */
static int
snapshot_queues(const struct placement_input *in, struct snapshot *s)
{
	size_t nq = queues_count(in->queues), i;
	int q, f;

	s->nqueues = nq + 1;
	if ((s->queues = calloc(s->nqueues, sizeof(*s->queues))) == NULL ||
	    (s->used = calloc(s->nqueues, sizeof(*s->used))) == NULL)
		return -1;
	queues_sched(in->queues, in->now_ms, s->queues);
	s->queues[nq].parent = -1;
	for (f = 0; f < SCHED_FLAVORS_MAX; f++)
		s->queues[nq].nominal[f] = 0;
	s->queues[nq].borrow_limit = SCHED_UNLIMITED;
	s->queues[nq].lend_limit = SCHED_UNLIMITED;
	s->queues[nq].preempt = SCHED_PREEMPT_NEVER;
	for (i = 0; i < in->nactive; i++) {
		q = queues_job_queue(in->queues, in->active[i]);
		for (q = q < 0 ? (int)nq : q; q >= 0; q = s->queues[q].parent)
			s->used[q] += job_gpus(in->active[i]);
	}
	return 0;
}

/* The core's view of active job i with queues. */
static void
snapshot_running_queue(const struct placement_input *in, struct snapshot *s,
    size_t i)
{
	const struct job *job = in->active[i];
	const struct queue_def *d;
	struct sched_running *sr = &s->running[i];
	int q = queues_job_queue(in->queues, job);

	sr->queue = q < 0 ? (uint32_t)(s->nqueues - 1) : (uint32_t)q;
	sr->priority = job->spec.priority;
	sr->start = job->start_ms / 1000;
	sr->lost = (int64_t)(job_unsaved_ms(job, in->now_ms) / 1000);
	/* Only a job that runs may be preempted: not one launching,
	 * resizing, or already being checkpointed to go. */
	d = q < 0 ? NULL : queues_def(in->queues, (size_t)q);
	sr->preemptible = job->state == JOB_RUNNING && job->start_ms > 0 &&
	    !id_listed(in->busy, in->nbusy, job->id) &&
	    (d == NULL || in->now_ms - job->start_ms >=
	    (int64_t)d->min_runtime_s * 1000);
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

	if (in->nnodes == 0)
		return -1;
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

	for (i = 0; i < n->inv->ngpus; i++) {
		const struct gpu_info *g = &n->inv->gpus[i];

		gpus[i].index = g->index;
		gpus[i].health = sched_health(node_gpu_health(n, i));
		gpus[i].job = n->gpu_job[i];
		gpus[i].nvlink = g->nvlink_domain;
		gpus[i].pcie = g->pcie_switch;
		gpus[i].numa = g->numa_node;
		gpus[i].near_nic = g->nic >= 0 && g->nic_near;
		gpus[i].rail = g->nic;
	}
	sn->name = n->name;
	/* A node whose agent is away cannot be launched on, even before
	 * its heartbeats are overdue. */
	sn->up = n->state == NODE_UP && n->conn_id != 0;
	sn->drained = n->drained;
	sn->health = sched_health(n->health->health);
	sn->gpu_model = n->inv->ngpus > 0 ? n->inv->gpus[0].model : NULL;
	sn->spare = n->spare;
	sn->cpu_jobs = n->cpu_jobs;
	sn->exclusive = n->exclusive;
	sn->gpus = gpus;
	sn->ngpus = n->inv->ngpus;
}

/* The nodes a restart must leave out (stragglers', or one that failed
 * the job early twice in a row), a comma list, if any: none for a
 * restart the caller lets use them (in->unavoid). */
static const char *
avoided(const struct placement_input *in, const struct job *job)
{
	return job->state == JOB_RESTARTING && job->avoid != NULL &&
	    job->avoid_attempt == job->attempt &&
	    !id_listed(in->unavoid, in->nunavoid, job->id) ? job->avoid :
	    NULL;
}

static bool
has_filter(const struct placement_input *in, const struct job *job)
{
	return avoided(in, job) != NULL ||
	    job->spec.nodelist != NULL || job->spec.exclude != NULL ||
	    job->spec.constraint != NULL || job->spec.gpu_memory_mb > 0 ||
	    job->spec.cpus_per_task > 0 || job->spec.mem_per_node_mb > 0;
}

static bool
same_str(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* The same filter as job b's: the tasks of an array share one, so the
 * core counts it once (its counts are remembered per filter). */
static bool
same_filter(const struct placement_input *in, const struct job *a,
    const struct job *b)
{
	return same_str(avoided(in, a), avoided(in, b)) &&
	    same_str(a->spec.nodelist, b->spec.nodelist) &&
	    same_str(a->spec.exclude, b->spec.exclude) &&
	    same_str(a->spec.constraint, b->spec.constraint) &&
	    a->spec.gpu_memory_mb == b->spec.gpu_memory_mb &&
	    (uint64_t)a->spec.cpus_per_task * a->spec.tasks_per_node ==
	    (uint64_t)b->spec.cpus_per_task * b->spec.tasks_per_node &&
	    a->spec.mem_per_node_mb == b->spec.mem_per_node_mb;
}

/* Set ok[i] to v for each node of hostlist expr the input has. A name
 * the controller does not know is skipped (submit refuses those it
 * never knew; a deleted node just is not there); a list that does not
 * expand (submit validated it) allows nothing more. */
static void
filter_mark(const struct placement_input *in, const char *expr,
    uint8_t *ok, uint8_t v)
{
	char **names;
	size_t n, k;
	int64_t idx;

	if (hostlist_expand(expr, in->nnodes + 4096, &names, &n, NULL,
	    0) == -1)
		return;
	for (k = 0; k < n; k++)
		if ((idx = node_index(in, names[k])) >= 0)
			ok[idx] = v;
	hostlist_free(names, n);
}

/* Whether a node meets --constraint, --gpu-memory, --cpus-per-task (x
 * --tasks-per-node: the node's CPUs, not what other jobs are bound to:
 * the controller does not count cores) and --mem-per-node (its memory).
 * Every GPU must
 * have the memory, not just some: the core picks GPU indices on a node
 * by topology alone, so on a mixed node it could otherwise hand out the
 * small ones. An expression that does not parse (submit checked it)
 * allows nothing. */
static bool
node_meets(const struct node *n, const struct job_spec *spec)
{
	const struct inventory *inv = n->inv;
	const char *feat[FEATURES_MAX];
	unsigned i;

	if (spec->gpu_memory_mb > 0 && inv->ngpus == 0)
		return false;
	if (!job_node_cpus_ok(spec, inv->ncpus) ||
	    !job_node_mem_ok(spec, inv->memory_mb))
		return false;
	for (i = 0; i < inv->ngpus && spec->gpu_memory_mb > 0; i++)
		if (!job_gpu_memory_ok(inv->gpus[i].memory_mb,
		    spec->gpu_memory_mb))
			return false;
	if (spec->constraint == NULL)
		return true;
	/* Configured and derived (lib/features.h) alike. */
	return constraint_match(spec->constraint, feat, node_features(n,
	    feat)) == 1;
}

/* The core's node filter of a job with --nodelist / --exclude /
 * --constraint / --gpu-memory, in ok (nnodes bytes): the listed nodes
 * (every node without a list) less the excluded ones, less those
 * without the features or the GPU memory. */
static void
filter_build(const struct placement_input *in, const struct job *job,
    uint8_t *ok)
{
	size_t i;

	if (in->nnodes == 0)
		return;
	memset(ok, job->spec.nodelist != NULL ? 0 : 1, in->nnodes);
	if (job->spec.nodelist != NULL)
		filter_mark(in, job->spec.nodelist, ok, 1);
	if (job->spec.exclude != NULL)
		filter_mark(in, job->spec.exclude, ok, 0);
	if (avoided(in, job) != NULL)
		filter_mark(in, avoided(in, job), ok, 0);
	if (job->spec.constraint == NULL && job->spec.gpu_memory_mb == 0 &&
	    job->spec.cpus_per_task == 0 && job->spec.mem_per_node_mb == 0)
		return;
	for (i = 0; i < in->nnodes; i++)
		if (ok[i] && !node_meets(in->nodes[i], &job->spec))
			ok[i] = 0;
}

/* A restart does not go back to the nodes its job failed early on
 * (suspect.h), or it might never run fine elsewhere, which is what
 * tells a node that fails every job from a job that fails everywhere:
 * a preference in the ranking is not enough where the topology's
 * best fit chooses a switch first. Kept only while the other nodes
 * could still hold the job. */
static bool
avoids(const struct placement_input *in, const struct job *job)
{
	size_t i;

	if (in->suspect == NULL || job->state != JOB_RESTARTING ||
	    id_listed(in->unavoid, in->nunavoid, job->id))
		return false;
	for (i = 0; i < in->nnodes; i++)
		if (suspect_failed_here(in->suspect, job->id,
		    in->nodes[i]->name))
			return true;
	return false;
}

bool
placement_avoids(const struct placement_input *in, const struct job *job)
{
	return avoided(in, job) != NULL || avoids(in, job);
}

static void
filter_avoid(const struct placement_input *in, const struct job *job,
    uint8_t *ok)
{
	size_t i, left = 0, out = 0;

	for (i = 0; i < in->nnodes; i++) {
		if (!ok[i])
			continue;
		if (suspect_failed_here(in->suspect, job->id,
		    in->nodes[i]->name))
			out++;
		else
			left++;
	}
	if (out == 0 || left < job->spec.nodes_min)
		return;
	for (i = 0; i < in->nnodes; i++)
		if (ok[i] && suspect_failed_here(in->suspect, job->id,
		    in->nodes[i]->name))
			ok[i] = 0;
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
	size_t i, k, g = 0, ngpus = 0, nprev = 0, p = 0, nfilt = 0, f = 0;
	int64_t now = in->now_ms / 1000, idx;
	const struct job *job, *last = NULL;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < in->nnodes; i++)
		ngpus += in->nodes[i]->inv->ngpus;
	for (i = 0; i < in->npending; i++) {
		if (in->pending[i]->state == JOB_RESTARTING)
			nprev += in->pending[i]->nprev;
		nfilt += has_filter(in, in->pending[i]) ||
		    avoids(in, in->pending[i]);
	}
	if ((s->prev = calloc(nprev + 1, sizeof(*s->prev))) == NULL)
		return -1;
	/* Jobs without a filter cost nothing here. */
	if (nfilt > 0 && (in->nnodes > SIZE_MAX / nfilt ||
	    (s->ok = malloc(nfilt * in->nnodes + 1)) == NULL))
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
		g += in->nodes[i]->inv->ngpus;
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
	if ((s->pidx = calloc(in->npending + 1, sizeof(*s->pidx))) == NULL)
		return -1;
	if (queues_on(in)) {
		if (snapshot_queues(in, s) == -1)
			return -1;
		for (i = 0; i < in->nactive; i++)
			snapshot_running_queue(in, s, i);
	}
	for (i = 0; i < in->npending; i++) {
		struct sched_job *sj = &s->jobs[s->njobs];
		int q = 0;

		job = in->pending[i];
		if (queues_on(in)) {
			/* A job of a queue no longer configured waits
			 * outside the pass (placement_decide says why). */
			if ((q = queues_job_queue(in->queues, job)) < 0)
				continue;
			sj->queue = (uint32_t)q;
			sj->user_share = queues_user_share(in->queues,
			    (size_t)q, job->user, in->now_ms);
			sj->preempting = id_listed(in->preempting,
			    in->npreempting, job->id);
		}
		s->pidx[s->njobs++] = i;
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
		/* --gpus-per-node 0 on the wire is cpu_only: the core
		 * then reads no gpus_per_node (0 there means whole
		 * nodes). */
		sj->cpu_only = job->spec.cpu_only;
		sj->exclusive = job->spec.exclusive;
		sj->segment = job->spec.segment;
		if (has_filter(in, job) && !avoids(in, job) && last != NULL &&
		    same_filter(in, job, last) && !avoids(in, last))
			sj->node_ok = s->ok + f - in->nnodes;
		else if (has_filter(in, job) || avoids(in, job)) {
			sj->node_ok = s->ok + f;
			filter_build(in, job, s->ok + f);
			if (avoids(in, job))
				filter_avoid(in, job, s->ok + f);
			f += in->nnodes;
			last = job;
		}
		/* A restart keeps the healthy nodes of its old gang, in
		 * rank order (the input keeps the placement's order). */
		if (job->state != JOB_RESTARTING || job->nprev == 0)
			continue;
		sj->prev_nodes = &s->prev[p];
		for (k = 0; k < job->nprev; k++)
			if ((idx = node_index(in, job->prev_place[k].node)) >= 0 &&
			    (!avoids(in, job) ||
			    !suspect_failed_here(in->suspect, job->id,
			    job->prev_place[k].node)))
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

/* BadConstraints texts count the nodes that meet a job's --constraint
 * (features alone), each count a walk over every node: the last few
 * expressions are remembered, and at most this many walks are made in a
 * pass, so that many such jobs cannot stretch it; the jobs beyond get
 * the plain name. */
#define REASON_COUNTS_MAX 32
#define REASON_MEMO 4

struct reason_memo {
	const char *expr[REASON_MEMO];
	size_t n[REASON_MEMO];
	unsigned next, walks;
};

/* How many nodes meet expr; 0 or -1 when over the budget. */
static int
constraint_nodes(const struct placement_input *in, const char *expr,
    struct reason_memo *m, size_t *count)
{
	const char *feat[FEATURES_MAX];
	unsigned k;
	size_t i, n = 0;

	for (k = 0; k < REASON_MEMO; k++)
		if (m->expr[k] != NULL && strcmp(m->expr[k], expr) == 0) {
			*count = m->n[k];
			return 0;
		}
	if (m->walks >= REASON_COUNTS_MAX)
		return -1;
	m->walks++;
	for (i = 0; i < in->nnodes; i++)
		n += constraint_match(expr, feat, node_features(in->nodes[i],
		    feat)) == 1;
	k = m->next++ % REASON_MEMO;
	m->expr[k] = expr;
	m->n[k] = n;
	*count = n;
	return 0;
}

/* BadConstraints of a job with a --constraint that too few nodes meet,
 * whatever their state (the core judges it with every node free): say
 * so, as submit does when it can tell (feasible.c). A job gets here
 * when it was accepted while the cluster was incomplete, or when the
 * nodes with the features left or lost them; it starts once enough such
 * nodes register. 0 when written, -1 for the plain name. */
static int
reason_features(const struct placement_input *in, const struct job *job,
    struct reason_memo *m, const char *name, char *buf, size_t len)
{
	const char *expr = job->spec.constraint;
	size_t n;

	if (expr == NULL || constraint_nodes(in, expr, m, &n) == -1 ||
	    n >= job->spec.nodes_min)
		return -1;
	if (n == 0)
		snprintf(buf, len, "%s: no node has feature%s %.100s", name,
		    strpbrk(expr, "&|") != NULL ? "s" : "", expr);
	else
		snprintf(buf, len, "%s: --constraint %.80s: %zu node%s meet%s "
		    "it, --nodes %u", name, expr, n, n == 1 ? "" : "s",
		    n == 1 ? "s" : "", job->spec.nodes_min);
	return 0;
}

/* The text of a pending reason: the core's name, and for the top blocked
 * job when it is expected to run (like squeue --start), for a queue at
 * its limit which one and how full, for a preemptor what it waits for. */
static void
reason_text(const struct placement_input *in, const struct snapshot *s,
    const struct sched_result *r, size_t j, struct reason_memo *memo,
    char *buf, size_t len)
{
	const char *name = sched_reason_name(r->reasons[j]);
	const struct queue_def *d;
	const struct sched_queue *sq;
	uint32_t q, cap;
	struct tm tm;
	char when[32];
	time_t t;
	size_t n;

	if (r->reasons[j] == SCHED_REASON_BAD_CONSTRAINTS &&
	    reason_features(in, in->pending[s->pidx[j]], memo, name, buf,
	    len) == 0)
		return;
	if (r->has_resv && r->resv.pending == j) {
		t = (time_t)r->resv.start;
		gmtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		snprintf(buf, len, "%s (reserved, starts by %s)", name, when);
	} else if (r->reasons[j] == SCHED_REASON_QUEUE_QUOTA &&
	    r->quota_queue != NULL && (q = r->quota_queue[j]) + 1 <
	    s->nqueues) {
		d = queues_def(in->queues, q);
		sq = &s->queues[q];
		cap = SCHED_UNLIMITED;
		if (sq->nominal[0] != SCHED_UNLIMITED && sq->borrow_limit !=
		    SCHED_UNLIMITED && sq->nominal[0] <= SCHED_UNLIMITED -
		    1 - sq->borrow_limit)
			cap = sq->nominal[0] + sq->borrow_limit;
		if (cap != SCHED_UNLIMITED)
			snprintf(buf, len, "%s: %s: %u/%u GPUs", name, d->name,
			    s->used[q], cap);
		else if (sq->nominal[0] != SCHED_UNLIMITED)
			snprintf(buf, len, "%s: %s: %u GPUs used, nominal %u; "
			    "the rest is kept for other queues", name,
			    d->name, s->used[q], sq->nominal[0]);
		else
			snprintf(buf, len, "%s: %s: %u GPUs used", name,
			    d->name, s->used[q]);
	} else if (r->reasons[j] == SCHED_REASON_PREEMPTING)
		snprintf(buf, len, "%s: waiting for preempted jobs to "
		    "checkpoint and stop", name);
	else {
		/* The usual case, for every pending job in every pass:
		 * copied, not formatted (snprintf was ~5% of a pass). */
		n = strlen(name);
		if (n >= len)
			n = len - 1;
		memcpy(buf, name, n);
		buf[n] = '\0';
	}
}

static int
result_reasons(const struct placement_input *in, const struct snapshot *s,
    const struct sched_result *r, struct placement_result *res)
{
	struct reason_memo memo = { .next = 0 };
	struct placement_reason *pr;
	const struct job *job;
	size_t i, j, n = in->npending - s->njobs;

	for (j = 0; j < s->njobs; j++)
		if (r->reasons[j] != SCHED_REASON_NONE)
			n++;
	if (n == 0)
		return 0;
	if ((res->reasons = calloc(n, sizeof(*res->reasons))) == NULL)
		return -1;
	for (j = 0; j < s->njobs; j++) {
		if (r->reasons[j] == SCHED_REASON_NONE)
			continue;
		pr = &res->reasons[res->nreasons++];
		pr->job = in->pending[s->pidx[j]];
		pr->job_id = pr->job->id;
		reason_text(in, s, r, j, &memo, pr->reason,
		    sizeof(pr->reason));
		if (r->has_resv && r->resv.pending == j)
			pr->start_ms = r->resv.start * 1000;
	}
	/* The jobs left out of the pass: their queue is gone. */
	for (i = 0, j = 0; i < in->npending; i++) {
		if (j < s->njobs && s->pidx[j] == i) {
			j++;
			continue;
		}
		job = in->pending[i];
		pr = &res->reasons[res->nreasons++];
		pr->job = job;
		pr->job_id = job->id;
		snprintf(pr->reason, sizeof(pr->reason), "QueueUnknown: queue "
		    "%s is not configured", job->spec.queue != NULL ?
		    job->spec.queue : QUEUE_DEFAULT_NAME);
	}
	return 0;
}

static int
result_preempts(const struct sched_result *r, struct placement_result *res)
{
	struct placement_preemption *pp;
	size_t i;

	if (r->npreempts == 0)
		return 0;
	if ((res->preempts = calloc(r->npreempts, sizeof(*pp))) == NULL)
		return -1;
	for (i = 0; i < r->npreempts; i++) {
		pp = &res->preempts[res->npreempts];
		if ((pp->victims = calloc(r->preempts[i].nvictims + 1,
		    sizeof(*pp->victims))) == NULL)
			return -1;
		pp->job_id = r->preempts[i].job;
		pp->nvictims = r->preempts[i].nvictims;
		memcpy(pp->victims, r->preempts[i].victims,
		    pp->nvictims * sizeof(*pp->victims));
		res->npreempts++;
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
	size_t i;

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
	si.npending = s.njobs;
	si.config.starve_s = in->starve_s;
	si.config.starve_min_gpus = in->starve_min_gpus;
	if (s.queues != NULL) {
		si.queues = s.queues;
		si.nqueues = s.nqueues;
		si.flavors = queues_flavors(in->queues, &si.nflavors);
	}
	si.config.default_limit = (int64_t)in->default_limit_s;
	/* The queue policy ([controller] queue_order, queue_aging). */
	si.config.order = (enum sched_order)in->queue_order;
	si.config.aging = in->queue_aging;
	if (in->suspect != NULL) {
		si.config.suspect_gang_nodes =
		    suspect_get_opts(in->suspect)->large_gang_nodes;
		for (i = 0; i < in->nnodes; i++)
			s.nodes[i].suspect = suspect_recent(in->suspect,
			    in->nodes[i]->name, in->now_ms);
	}
	if ((r = sched_run(&si)) == NULL)
		goto nomem;
	if (result_starts(in, r, res) == -1 ||
	    result_reasons(in, &s, r, res) == -1 ||
	    result_preempts(r, res) == -1)
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
	for (i = 0; i < res->npreempts; i++)
		free(res->preempts[i].victims);
	free(res->preempts);
	memset(res, 0, sizeof(*res));
}
