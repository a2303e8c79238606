/* Where a job step goes in its job's allocation (steps.h): its nodes in
 * node-rank order, --nodelist ones first, then those where it fits now;
 * tasks in blocks; GPUs per task, per node, in all, or all the job's;
 * free GPUs are those no running step without --overlap holds, and an
 * --exclusive step shares no node. Pure: no clock, no I/O. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/jobs.h"
#include "lib/hostlist.h"
#include "daemon/controller/domain/steps_int.h"

/* The job's placement indices in node_rank order into ord (nplace). */
static void
steps_order(const struct job *job, unsigned *ord)
{
	size_t i;

	for (i = 0; i < job->nplace; i++)
		ord[i] = (unsigned)i;
	for (i = 0; i < job->nplace; i++)
		if (job->place[i].node_rank < job->nplace)
			ord[job->place[i].node_rank] = (unsigned)i;
}

/* A node name of the job and its placement index, for lookups by name. */
struct step_name {
	const char *name;
	unsigned k;
};

static int
steps_name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct step_name *)a)->name,
	    ((const struct step_name *)b)->name);
}

/* Marks the placement indices named by hostlist expr in mark[]: 0, or
 * -1 with err (malformed, or a node outside the allocation). The names
 * are looked up in a sorted copy of the job's: a list naming every node
 * of a large job costs n log n, not n squared. */
static int
steps_mark_nodes(const struct job *job, const char *expr, const char *opt,
    uint8_t *mark, size_t *nmarked, struct cerr *err)
{
	char **names = NULL, why[160];
	struct step_name *byname, key, *hit;
	size_t n = 0, i, k;
	int rc = 0;

	*nmarked = 0;
	if (hostlist_expand(expr, job->nplace + 64, &names, &n, why,
	    sizeof(why)) == -1)
		return cerr_set(err, ERR_INVALID, "%s '%.100s': %s", opt, expr,
		    errno == E2BIG ? "names more nodes than the job has" :
		    why);
	if ((byname = calloc(job->nplace + 1, sizeof(*byname))) == NULL) {
		hostlist_free(names, n);
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	for (k = 0; k < job->nplace; k++) {
		byname[k].name = job->place[k].node;
		byname[k].k = (unsigned)k;
	}
	qsort(byname, job->nplace, sizeof(*byname), steps_name_cmp);
	for (i = 0; i < n && rc == 0; i++) {
		key.name = names[i];
		hit = job->nplace > 0 ? bsearch(&key, byname, job->nplace,
		    sizeof(*byname), steps_name_cmp) : NULL;
		if (hit == NULL)
			rc = cerr_set(err, ERR_INVALID, "%s: node %.64s is not "
			    "in job %" PRIu64 "'s allocation", opt, names[i],
			    job->id);
		else if (!mark[hit->k]) {
			mark[hit->k] = 1;
			(*nmarked)++;
		}
	}
	free(byname);
	hostlist_free(names, n);
	return rc;
}

/* What the running steps hold on one node of the job (a placement
 * index): GPUs (bit i: node-local GPU i), and whether an exclusive step
 * or any step runs there. */
struct step_use {
	uint64_t held;
	bool excl, any;
};

/* The use of every node of the job by its running steps, in one pass
 * over them: the layout then asks it once per candidate node, so that
 * its cost does not grow as running steps times nodes times nodes. */
static void
steps_usage(const struct job *job, const struct step_job *sj,
    struct step_use *use)
{
	const struct step *s;
	struct step_use *u;
	size_t i, g;

	memset(use, 0, job->nplace * sizeof(*use));
	if (sj == NULL)
		return;
	TAILQ_FOREACH(s, &sj->steps, entry) {
		if (s->state != JOB_RUNNING)
			continue;
		for (i = 0; i < s->nnodes; i++) {
			if (s->nodes[i].place >= job->nplace)
				continue;
			u = &use[s->nodes[i].place];
			u->any = true;
			u->excl |= s->exclusive;
			if (s->overlap)
				continue;
			for (g = 0; g < s->nodes[i].ngpus; g++)
				if (s->nodes[i].gpus[g] < 64)
					u->held |= 1ULL << s->nodes[i].gpus[g];
		}
	}
}

/* Whether node-local GPU g is held in u. */
static bool
steps_gpu_held(const struct step_use *u, unsigned g)
{
	return g < 64 && (u->held >> g & 1);
}

/* GPUs the step needs on a node with ntasks of its tasks and have of
 * the job's GPUs; node is its index in the step (of nnodes). */
static unsigned
steps_gpus_wanted(const struct step_req *r, const struct job *job,
    unsigned ntasks, unsigned have, size_t node, size_t nnodes)
{
	if (r->no_gpus)
		return 0;
	if (r->gpus_per_task > 0)
		return r->gpus_per_task * ntasks;
	if (r->gpus_per_node > 0)
		return r->gpus_per_node;
	if (r->gpus > 0)
		return (unsigned)(r->gpus / nnodes +
		    (node < r->gpus % nnodes ? 1 : 0));
	/* No GPU option: all the job's there (none for a CPU-only job);
	 * GPUs asked of a job that has none never fit. */
	return job->spec.cpu_only ? 0 : have;
}

/* How many nodes and tasks: 0 with *nn and *ntasks, or -1 with err. */
static int
steps_shape(const struct job *job, const struct step_req *r, size_t ncand,
    size_t nwanted, size_t *nn, unsigned *ntasks, struct cerr *err)
{
	unsigned tpn = r->ntasks_per_node > 0 ? r->ntasks_per_node :
	    job->spec.tasks_per_node > 0 ? job->spec.tasks_per_node : 1;
	size_t n;

	if (r->nodes > 0)
		n = r->nodes;
	else if (nwanted > 0)
		n = nwanted;
	else if (r->ntasks > 0)
		n = r->ntasks_per_node > 0 ?
		    (r->ntasks + r->ntasks_per_node - 1) / r->ntasks_per_node :
		    (r->ntasks < ncand ? r->ntasks : ncand);
	else
		n = ncand;
	if (n > ncand)
		return cerr_set(err, ERR_INVALID, "the step asks for %zu "
		    "node(s); job %" PRIu64 " has %zu%s", n, job->id, ncand,
		    ncand < job->nplace ? " beside --exclude" : "");
	if (nwanted > n)
		return cerr_set(err, ERR_INVALID, "--nodelist names %zu "
		    "nodes but the step asks for %zu", nwanted, n);
	if (n == 0)
		return cerr_set(err, ERR_INVALID, "the step has no node");
	if (r->ntasks > 0 && r->ntasks < n)
		return cerr_set(err, ERR_INVALID, "%u task(s) cannot run on "
		    "%zu nodes: ask for fewer nodes (-N)", r->ntasks, n);
	*ntasks = r->ntasks > 0 ? r->ntasks : (unsigned)(tpn * n);
	if (r->ntasks > 0 && r->ntasks_per_node > 0 &&
	    r->ntasks > r->ntasks_per_node * n)
		return cerr_set(err, ERR_INVALID, "%u tasks do not fit %u per "
		    "node on %zu nodes", r->ntasks, r->ntasks_per_node, n);
	if (*ntasks > STEPS_TASKS_MAX)
		return cerr_set(err, ERR_INVALID, "%u tasks: a step has at "
		    "most %u", *ntasks, STEPS_TASKS_MAX);
	/* The agents take at most JOB_TASKS_PER_NODE_LIMIT tasks of a
	 * step on a node: more is refused here, not after the launch. */
	if ((*ntasks + n - 1) / n > JOB_TASKS_PER_NODE_LIMIT)
		return cerr_set(err, ERR_INVALID, "%u tasks on %zu node(s): "
		    "at most %u per node", *ntasks, n,
		    JOB_TASKS_PER_NODE_LIMIT);
	*nn = n;
	return 0;
}

/* Whether node k (ntasks of the step there, node index i of nn) can
 * take its GPUs now: *need set; 1 fits now, 0 not now, -1 never (err). */
static int
steps_node_fits(const struct job *job, const struct step_use *use,
    const struct step_req *r, unsigned k, unsigned ntasks, size_t i,
    size_t nn, unsigned *need, struct cerr *err)
{
	const struct placement *p = &job->place[k];
	const struct step_use *u = &use[k];
	unsigned g, nfree = 0;

	*need = steps_gpus_wanted(r, job, ntasks, p->ngpus, i, nn);
	if (*need > p->ngpus)
		return cerr_set(err, ERR_INVALID, "the step needs %u GPU(s) on "
		    "%s; job %" PRIu64 " has %u there", *need, p->node,
		    job->id, p->ngpus);
	if (u->excl || (r->exclusive && u->any))
		return 0;
	if (r->overlap)
		return 1;
	for (g = 0; g < p->ngpus; g++)
		nfree += !steps_gpu_held(u, p->gpus[g]);
	return nfree >= *need;
}

/* Tasks on the i-th of nn nodes: block distribution of ntasks. */
static unsigned
steps_tasks_on(unsigned ntasks, size_t i, size_t nn)
{
	return (unsigned)(ntasks / nn + (i < ntasks % nn ? 1 : 0));
}

/* Fill s->nodes: the -w nodes first, then others in node_rank order,
 * those that fit now before those that do not. 0 (fits now), or -1 with
 * err: ERR_BUSY (not now) or ERR_INVALID. */
static int
steps_pick(const struct job *job, const struct step_use *use,
    const struct step_req *r, const unsigned *ord, const uint8_t *want,
    const uint8_t *skip, size_t nn, struct step *s, struct cerr *err)
{
	unsigned need, pass, k, nt;
	size_t i, got = 0;
	int fit;
	uint8_t *used;
	bool busy = false;
	char busy_node[PEER_NAME_MAX + 1] = "";

	if ((used = calloc(job->nplace, 1)) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	/* Pass 0: the named nodes; 1: others that fit now; 2: any. */
	for (pass = 0; pass < 3 && got < nn; pass++) {
		for (i = 0; i < job->nplace && got < nn; i++) {
			k = ord[i];
			if (used[k] || skip[k] || (pass == 0 && !want[k]))
				continue;
			nt = steps_tasks_on(s->ntasks, got, nn);
			fit = steps_node_fits(job, use, r, k, nt, got, nn,
			    &need, err);
			if (fit == -1) {
				free(used);
				return -1;
			}
			if (pass == 1 && fit == 0)
				continue;
			if (fit == 0 && !busy) {
				busy = true;
				snprintf(busy_node, sizeof(busy_node), "%s",
				    job->place[k].node);
			}
			used[k] = 1;
			s->nodes[got].place = k;
			s->nodes[got].ntasks = nt;
			s->nodes[got].ngpus = need;
			got++;
		}
	}
	free(used);
	if (busy)
		return cerr_set(err, ERR_BUSY, "the step waits for running "
		    "steps to free %s%s", busy_node, r->exclusive ?
		    " (--exclusive)" : "'s GPUs");
	return 0;
}

/* Choose the step's GPUs on each of its nodes: the free ones first (or
 * the first ones, --overlap). */
static void
steps_pick_gpus(const struct job *job, const struct step_use *use,
    struct step *s)
{
	const struct placement *p;
	struct step_use none = { 0, false, false };
	const struct step_use *u;
	unsigned g, n;
	size_t i;

	for (i = 0; i < s->nnodes; i++) {
		p = &job->place[s->nodes[i].place];
		u = s->overlap ? &none : &use[s->nodes[i].place];
		for (g = 0, n = 0; g < p->ngpus && n < s->nodes[i].ngpus; g++)
			if (!steps_gpu_held(u, p->gpus[g]))
				s->nodes[i].gpus[n++] = p->gpus[g];
		s->gpus += n;
	}
}

int
steps_layout(const struct job *job, const struct step_job *sj,
    const struct step_req *r, struct step *s, struct cerr *err)
{
	unsigned *ord = NULL;
	uint8_t *want = NULL, *skip = NULL;
	struct step_use *use = NULL;
	size_t nwanted = 0, nskip = 0, nn = 0, i, ncand;
	unsigned rank = 0;
	int rc = -1;

	if ((ord = calloc(job->nplace, sizeof(*ord))) == NULL ||
	    (want = calloc(job->nplace, 1)) == NULL ||
	    (skip = calloc(job->nplace, 1)) == NULL ||
	    (use = calloc(job->nplace, sizeof(*use))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto out;
	}
	steps_order(job, ord);
	steps_usage(job, sj, use);
	if ((r->nodelist != NULL && steps_mark_nodes(job, r->nodelist,
	    "--nodelist", want, &nwanted, err) == -1) ||
	    (r->exclude != NULL && steps_mark_nodes(job, r->exclude,
	    "--exclude", skip, &nskip, err) == -1))
		goto out;
	for (i = 0; i < job->nplace; i++)
		if (want[i] && skip[i]) {
			cerr_set(err, ERR_INVALID, "node %s is both in "
			    "--nodelist and in --exclude", job->place[i].node);
			goto out;
		}
	ncand = job->nplace - nskip;
	if (steps_shape(job, r, ncand, nwanted, &nn, &s->ntasks, err) == -1)
		goto out;
	if ((s->nodes = calloc(nn, sizeof(*s->nodes))) == NULL ||
	    (s->nodenames = calloc(nn, sizeof(*s->nodenames))) == NULL ||
	    (s->status = malloc(s->ntasks * sizeof(*s->status))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto out;
	}
	s->nnodes = nn;
	for (i = 0; i < nn; i++)
		s->nodenames[i] = NULL;
	if (steps_pick(job, use, r, ord, want, skip, nn, s, err) == -1)
		goto out;
	steps_pick_gpus(job, use, s);
	for (i = 0; i < nn; i++) {
		s->nodes[i].first_rank = rank;
		rank += s->nodes[i].ntasks;
		if ((s->nodenames[i] = strdup(job->place[s->nodes[i].place].
		    node)) == NULL) {
			cerr_set(err, ERR_INTERNAL, "out of memory");
			goto out;
		}
	}
	for (i = 0; i < s->ntasks; i++)
		s->status[i] = -1;
	rc = 0;
out:
	free(ord);
	free(want);
	free(skip);
	free(use);
	return rc;
}
