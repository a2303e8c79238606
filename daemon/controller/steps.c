/* Job steps: see steps.h. The layout of a step (which nodes, how many
 * tasks on each, which GPUs) is decided here from the job's allocation
 * and the steps running in it; the agents start the tasks. */
#include "config.h"

#include <sys/wait.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_int.h"
#include "jobs.h"
#include "lib/hostlist.h"
#include "lib/log.h"
#include "nodes.h"
#include "steps.h"
#include "store.h"

/* The steps of one job's attempt. */
struct step_job {
	uint64_t job_id;
	uint32_t attempt;
	uint32_t next_id;
	unsigned nrunning;
	unsigned nended;
	TAILQ_HEAD(, step) steps;	/* by id */
	TAILQ_ENTRY(step_job) entry;
};

/* What a launch's answer needs to find its step again (the step may be
 * gone by then). */
struct step_launch_arg {
	struct cluster *cl;
	uint64_t job_id;
	uint32_t attempt;
	uint32_t step_id;
	char node[PEER_NAME_MAX + 1];
};

static void steps_end(struct cluster *, struct step *, enum job_state,
    const char *, int64_t);

static struct step_job *
steps_job(const struct cluster *cl, uint64_t job_id)
{
	struct step_job *sj;

	TAILQ_FOREACH(sj, &cl->step_jobs, entry)
		if (sj->job_id == job_id)
			return sj;
	return NULL;
}

static void
step_free(struct step *s)
{
	if (s == NULL)
		return;
	free(s->name);
	free(s->user);
	free(s->nodes);
	hostlist_free(s->nodenames, s->nnodes);
	free(s->status);
	strv_free(s->argv, s->argc);
	strv_free(s->env, s->nenv);
	free(s->workdir);
	free(s);
}

static void
steps_job_free(struct cluster *cl, struct step_job *sj)
{
	struct step *s;

	while ((s = TAILQ_FIRST(&sj->steps)) != NULL) {
		TAILQ_REMOVE(&sj->steps, s, entry);
		step_free(s);
	}
	TAILQ_REMOVE(&cl->step_jobs, sj, entry);
	free(sj);
}

void
steps_destroy_all(struct cluster *cl)
{
	struct step_job *sj;

	while ((sj = TAILQ_FIRST(&cl->step_jobs)) != NULL)
		steps_job_free(cl, sj);
}

/* Drop the steps of jobs that no longer run (ended, requeued, gone) or
 * of an earlier attempt: the store has their records, and without this
 * every job that ever ran a step kept its table, and each lookup walked
 * them all. The launches still out find their step gone (by id). */
static void
steps_gc(struct cluster *cl, int64_t now)
{
	struct step_job *sj, *next;
	const struct job *job;
	struct step *s;

	for (sj = TAILQ_FIRST(&cl->step_jobs); sj != NULL; sj = next) {
		next = TAILQ_NEXT(sj, entry);
		job = jobs_get(cl->js, sj->job_id);
		if (job != NULL && jobs_is_active(job) &&
		    job->attempt == sj->attempt)
			continue;
		/* Ended with their job as a rule; recorded if not. */
		TAILQ_FOREACH(s, &sj->steps, entry)
			if (s->state == JOB_RUNNING)
				steps_end(cl, s, JOB_CANCELLED, "its job's run "
				    "is over", now);
		steps_job_free(cl, sj);
	}
}

/* The steps of the job's current attempt, made when missing (the tables
 * of jobs that ended, and of earlier attempts, are dropped then). NULL:
 * out of memory. */
static struct step_job *
steps_job_current(struct cluster *cl, const struct job *job, int64_t now)
{
	struct step_job *sj = steps_job(cl, job->id);

	if (sj != NULL && sj->attempt == job->attempt)
		return sj;
	steps_gc(cl, now);
	if ((sj = calloc(1, sizeof(*sj))) == NULL)
		return NULL;
	sj->job_id = job->id;
	sj->attempt = job->attempt;
	TAILQ_INIT(&sj->steps);
	TAILQ_INSERT_TAIL(&cl->step_jobs, sj, entry);
	return sj;
}

static struct step *
steps_find(const struct cluster *cl, uint64_t job_id, uint32_t attempt,
    uint32_t step_id)
{
	struct step_job *sj = steps_job(cl, job_id);
	struct step *s;

	if (sj == NULL || sj->attempt != attempt)
		return NULL;
	TAILQ_FOREACH(s, &sj->steps, entry)
		if (s->id == step_id)
			return s;
	return NULL;
}

const struct step *
steps_get(const struct cluster *cl, uint64_t job_id, uint32_t step_id)
{
	const struct job *job = jobs_get(cl->js, job_id);

	return job != NULL ? steps_find(cl, job_id, job->attempt, step_id) :
	    NULL;
}

size_t
steps_running(const struct cluster *cl, uint64_t job_id)
{
	const struct job *job = jobs_get(cl->js, job_id);
	struct step_job *sj = steps_job(cl, job_id);

	return job != NULL && sj != NULL && sj->attempt == job->attempt ?
	    sj->nrunning : 0;
}

int
steps_may(const struct cluster *cl, const struct peer *who, uint64_t job_id,
    struct cerr *err)
{
	const struct job *job = jobs_get(cl->js, job_id);

	if (job == NULL)
		return cerr_set(err, ERR_NOT_FOUND, "no job %" PRIu64, job_id);
	if ((who->role & ROLE_ADMIN) || strcmp(who->name, job->user) == 0)
		return 0;
	return cerr_set(err, ERR_DENIED, "job %" PRIu64 " is not yours",
	    job_id);
}

/* ---- Layout --------------------------------------------------------- */

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

/* The step's nodes and tasks: 0, or -1 with err. */
static int
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

/* ---- Records ---------------------------------------------------------- */

/* "a,b,c" and "2,2,1" of the step into buffers of the caller's. */
static int
steps_lists(const struct step *s, char **nodes, char **tpn)
{
	size_t i, nl = 1, tl = 1;
	char *np, *tp;

	for (i = 0; i < s->nnodes; i++) {
		nl += strlen(s->nodenames[i]) + 1;
		tl += 11;
	}
	if ((*nodes = np = malloc(nl)) == NULL ||
	    (*tpn = tp = malloc(tl)) == NULL) {
		free(*nodes);
		return -1;
	}
	*np = *tp = '\0';
	for (i = 0; i < s->nnodes; i++) {
		np += sprintf(np, "%s%s", i ? "," : "", s->nodenames[i]);
		tp += sprintf(tp, "%s%u", i ? "," : "", s->nodes[i].ntasks);
	}
	return 0;
}

static void
steps_record(struct cluster *cl, const struct step *s)
{
	struct store_step row;
	char *nodes, *tpn;
	struct cerr err;

	if (steps_lists(s, &nodes, &tpn) == -1) {
		log_warnx("job %" PRIu64 ": step %u: out of memory", s->job_id,
		    s->id);
		return;
	}
	memset(&row, 0, sizeof(row));
	row.job_id = s->job_id;
	row.attempt = s->attempt;
	row.step_id = s->id;
	row.name = s->name;
	row.state = s->state;
	row.node_fail = s->node_fail;
	row.has_exit = s->has_exit;
	row.exit_code = s->exit_code;
	row.reason = s->reason;
	row.start_ms = s->start_ms;
	row.end_ms = s->end_ms;
	row.nodelist = nodes;
	row.tasks_per_node = tpn;
	row.ntasks = s->ntasks;
	row.gpus = s->gpus;
	cerr_clear(&err);
	if (jobs_step_record(cl->js, &row, &err) == -1)
		log_warnx("job %" PRIu64 ": step %u: %s", s->job_id, s->id,
		    err.text);
	free(nodes);
	free(tpn);
}

/* ---- Ending ----------------------------------------------------------- */

static void
steps_stop_tasks(struct cluster *cl, const struct step *s, const char *why)
{
	const struct node *n;
	size_t i;

	for (i = 0; i < s->nnodes; i++)
		if ((n = nodes_get(cl->ns, s->nodenames[i])) != NULL &&
		    n->conn_id != 0)
			cl->out.ops->stop_step(cl->out.ctx, n->conn_id,
			    s->job_id, s->attempt, s->id, why);
}

/* The step is over: its state, the record, what it held freed. Ended
 * steps beyond STEPS_ENDED_KEPT leave memory (the store has them). */
static void
steps_end(struct cluster *cl, struct step *s, enum job_state state,
    const char *reason, int64_t now)
{
	struct step_job *sj = steps_job(cl, s->job_id);
	struct step *old;

	if (s->state != JOB_RUNNING)
		return;
	s->state = state;
	s->end_ms = now;
	if (reason != NULL && s->reason[0] == '\0')
		snprintf(s->reason, sizeof(s->reason), "%s", reason);
	log_info("job %" PRIu64 ": step %u %s%s%s", s->job_id, s->id,
	    s->node_fail ? "NODE_FAIL" : job_state_name(state),
	    s->reason[0] ? ": " : "", s->reason);
	steps_record(cl, s);
	strv_free(s->argv, s->argc);
	strv_free(s->env, s->nenv);
	s->argv = s->env = NULL;
	s->argc = s->nenv = 0;
	if (sj == NULL)
		return;
	sj->nrunning--;
	if (++sj->nended <= STEPS_ENDED_KEPT)
		return;
	TAILQ_FOREACH(old, &sj->steps, entry)
		if (old->state != JOB_RUNNING && old->launches_out == 0)
			break;
	if (old != NULL && old != s) {
		TAILQ_REMOVE(&sj->steps, old, entry);
		step_free(old);
		sj->nended--;
	}
}

/* A task's wait status as an exit code: N, or 128+N for signal N. */
static int32_t
steps_code(int ws)
{
	if (WIFEXITED(ws))
		return WEXITSTATUS(ws);
	if (WIFSIGNALED(ws))
		return 128 + WTERMSIG(ws);
	return 1;
}

void
steps_job_ending(struct cluster *cl, const struct job *job, bool node_fail,
    const char *reason, int64_t now)
{
	struct step_job *sj = steps_job(cl, job->id);
	struct step *s;
	struct cerr err;

	if (sj != NULL && sj->attempt == job->attempt)
		TAILQ_FOREACH(s, &sj->steps, entry) {
			if (s->state != JOB_RUNNING)
				continue;
			s->node_fail = node_fail;
			steps_end(cl, s, node_fail ? JOB_FAILED :
			    JOB_CANCELLED, reason, now);
		}
	/* Steps a restarted controller does not know of. */
	cerr_clear(&err);
	if (job->spec.batch && jobs_steps_end_running(cl->js, job->id,
	    job->attempt, node_fail, reason, now, &err) == -1)
		log_warnx("job %" PRIu64 ": %s", job->id, err.text);
	/* The run is over: its steps leave memory (the store has them; a
	 * launch still answering finds none and is dropped). */
	if (sj != NULL && sj->attempt == job->attempt)
		steps_job_free(cl, sj);
}

void
steps_node_failed(struct cluster *cl, const struct job *job,
    const char *node, const char *cause, int64_t now)
{
	struct step_job *sj = steps_job(cl, job->id);
	struct step *s;
	size_t i;

	if (sj == NULL || sj->attempt != job->attempt)
		return;
	TAILQ_FOREACH(s, &sj->steps, entry) {
		if (s->state != JOB_RUNNING)
			continue;
		for (i = 0; i < s->nnodes; i++)
			if (strcmp(s->nodenames[i], node) == 0)
				break;
		if (i == s->nnodes)
			continue;
		s->node_fail = true;
		steps_end(cl, s, JOB_FAILED, cause, now);
	}
}

/* ---- Launching -------------------------------------------------------- */

static void
steps_launched_cb(void *arg, const struct cerr *err, int64_t now)
{
	struct step_launch_arg *a = arg;
	struct step *s = steps_find(a->cl, a->job_id, a->attempt, a->step_id);
	char why[sizeof(s->reason)];

	if (s != NULL && s->launches_out > 0)
		s->launches_out--;
	if (s != NULL && err != NULL && s->state == JOB_RUNNING) {
		snprintf(why, sizeof(why), "could not start on %s: %.100s",
		    a->node, err->text);
		s->has_exit = true;
		s->exit_code = 1;
		steps_stop_tasks(a->cl, s, why);
		steps_end(a->cl, s, JOB_FAILED, why, now);
	}
	free(a);
}

/* Send the step's launches; 0, or -1 with err (nothing was sent that is
 * not stopped again). */
static int
steps_send(struct cluster *cl, const struct job *job, struct step *s,
    int64_t now, struct cerr *err)
{
	const char **nodelist;
	struct step_launch_arg *a;
	struct launch_cmd lc;
	const struct node *n, *first;
	size_t i;

	if ((nodelist = calloc(job->nplace, sizeof(*nodelist))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	for (i = 0; i < job->nplace; i++)
		if (job->place[i].node_rank < job->nplace)
			nodelist[job->place[i].node_rank] = job->place[i].node;
	first = nodes_get(cl->ns, s->nodenames[0]);
	memset(&lc, 0, sizeof(lc));
	lc.job = job;
	lc.nodelist = nodelist;
	lc.nnodes = job->nplace;
	lc.master_addr = lc.step_master_addr = first != NULL &&
	    first->address[0] != '\0' ? first->address : s->nodenames[0];
	lc.master_port = s->master_port;
	lc.step = s;
	for (i = 0; i < s->nnodes; i++) {
		n = nodes_get(cl->ns, s->nodenames[i]);
		lc.place = &job->place[s->nodes[i].place];
		lc.snode = &s->nodes[i];
		lc.snode_index = (unsigned)i;
		if (n == NULL || n->conn_id == 0 ||
		    (a = calloc(1, sizeof(*a))) == NULL) {
			cerr_set(err, ERR_UNAVAILABLE, "node %s is not "
			    "reachable", s->nodenames[i]);
			break;
		}
		a->cl = cl;
		a->job_id = s->job_id;
		a->attempt = s->attempt;
		a->step_id = s->id;
		snprintf(a->node, sizeof(a->node), "%s", s->nodenames[i]);
		if (cl->out.ops->launch(cl->out.ctx, n->conn_id, &lc, now,
		    steps_launched_cb, a) == -1) {
			free(a);
			cerr_set(err, ERR_UNAVAILABLE, "node %s is not "
			    "reachable", s->nodenames[i]);
			break;
		}
		s->launches_out++;
	}
	free(nodelist);
	return i == s->nnodes ? 0 : -1;
}

/* A port for the step's rendezvous, apart from the job's and from the
 * other running steps' (gang.c spreads jobs over 20000-39999). */
static unsigned
steps_port(const struct job *job, const struct step_job *sj, uint32_t id)
{
	const struct step *s;
	unsigned port, tries;
	bool taken;

	for (tries = 0; tries < 1000; tries++) {
		port = 20000 + (unsigned)((job->id * 131 + job->attempt +
		    7919ULL * (id + 1 + tries)) % 20000);
		taken = false;
		TAILQ_FOREACH(s, &sj->steps, entry)
			taken |= s->state == JOB_RUNNING &&
			    s->master_port == port;
		if (!taken)
			return port;
	}
	return port;
}

static int
steps_copy_req(struct step *s, const struct job *job,
    const struct step_req *r)
{
	const char *base;

	if (r->name != NULL && r->name[0] != '\0')
		base = r->name;
	else if ((base = strrchr(r->argv[0], '/')) != NULL && base[1] != '\0')
		base++;
	else
		base = r->argv[0];
	if ((s->name = strndup(base, JOB_NAME_MAX)) == NULL ||
	    (s->user = strdup(job->user)) == NULL ||
	    strv_copy(&s->argv, &s->argc, r->argv, r->argc) == -1 ||
	    strv_copy(&s->env, &s->nenv, r->env, r->nenv) == -1 ||
	    (r->workdir != NULL && (s->workdir = strdup(r->workdir)) == NULL))
		return -1;
	return 0;
}

static int
steps_check_req(const struct step_req *r, struct cerr *err)
{
	if (r->argc == 0 || r->argv[0] == NULL || r->argv[0][0] == '\0')
		return cerr_set(err, ERR_INVALID, "a step needs a command");
	if ((r->gpus_per_task > 0) + (r->gpus_per_node > 0) + (r->gpus > 0) +
	    r->no_gpus > 1)
		return cerr_set(err, ERR_INVALID, "give one of --gpus, "
		    "--gpus-per-node and --gpus-per-task");
	if (r->overlap && r->exclusive)
		return cerr_set(err, ERR_INVALID, "--overlap and --exclusive "
		    "exclude each other");
	if (r->gpus_per_task > PLACE_MAX_GPUS ||
	    r->gpus_per_node > PLACE_MAX_GPUS ||
	    r->nodes > JOB_NODES_LIMIT || r->ntasks > STEPS_TASKS_MAX ||
	    r->ntasks_per_node > JOB_TASKS_PER_NODE_LIMIT ||
	    r->cpus_per_task > JOB_CPUS_PER_NODE_MAX)
		return cerr_set(err, ERR_INVALID, "a step option is beyond "
		    "its limit");
	return 0;
}

int
steps_create(struct cluster *cl, const struct peer *who,
    const struct step_req *r, int64_t now, const struct step **out,
    struct cerr *err)
{
	const struct job *job = jobs_get(cl->js, r->job_id);
	struct step_job *sj;
	struct step *s;

	if (job == NULL)
		return cerr_set(err, ERR_NOT_FOUND, "no job %" PRIu64,
		    r->job_id);
	if (strcmp(who->name, job->user) != 0)
		return cerr_set(err, ERR_DENIED, "only the owner of job %"
		    PRIu64 " may start steps in it", job->id);
	if (job->state != JOB_RUNNING)
		return cerr_set(err, job->state == JOB_PENDING ? ERR_BUSY :
		    ERR_CONFLICT, "job %" PRIu64 " is %s: steps start only "
		    "while it runs", job->id, job_state_name(job->state));
	if (steps_check_req(r, err) == -1)
		return -1;
	if ((sj = steps_job_current(cl, job, now)) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	if (sj->nrunning >= STEPS_RUNNING_MAX)
		return cerr_set(err, ERR_BUSY, "job %" PRIu64 " runs %u steps "
		    "already, the most at once", job->id, sj->nrunning);
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	s->job_id = job->id;
	s->attempt = job->attempt;
	s->id = sj->next_id;
	s->state = JOB_RUNNING;
	s->start_ms = now;
	s->overlap = r->overlap;
	s->exclusive = r->exclusive;
	s->kill_on_bad_exit = r->kill_on_bad_exit;
	s->gpus_per_task = r->gpus_per_task;
	s->cpus_per_task = r->cpus_per_task;
	if (steps_copy_req(s, job, r) == -1) {
		step_free(s);
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	if (steps_layout(job, sj, r, s, err) == -1) {
		step_free(s);
		return -1;
	}
	s->master_port = steps_port(job, sj, s->id);
	sj->next_id++;
	sj->nrunning++;
	TAILQ_INSERT_TAIL(&sj->steps, s, entry);
	steps_record(cl, s);
	log_info("job %" PRIu64 ": step %u: %u task(s) on %zu node(s)",
	    job->id, s->id, s->ntasks, s->nnodes);
	if (steps_send(cl, job, s, now, err) == -1) {
		s->has_exit = true;
		s->exit_code = 1;
		steps_stop_tasks(cl, s, "could not start");
		steps_end(cl, s, JOB_FAILED, err->text, now);
		return -1;
	}
	*out = s;
	return 0;
}

/* ---- Signals and reports ------------------------------------------- */

int
steps_signal(struct cluster *cl, const struct peer *who, uint64_t job_id,
    uint32_t step_id, int sig, int64_t now, struct cerr *err)
{
	const struct job *job = jobs_get(cl->js, job_id);
	struct step *s;
	const struct node *n;
	size_t i;

	if (steps_may(cl, who, job_id, err) == -1)
		return -1;
	if ((s = steps_find(cl, job_id, job->attempt, step_id)) == NULL ||
	    s->state != JOB_RUNNING)
		return cerr_set(err, s == NULL ? ERR_NOT_FOUND : ERR_CONFLICT,
		    "step %" PRIu64 ".%u is not running", job_id, step_id);
	if (sig == SIGKILL) {
		snprintf(s->reason, sizeof(s->reason), "cancelled by %s",
		    who->name);
		steps_stop_tasks(cl, s, s->reason);
		s->has_exit = true;
		s->exit_code = 128 + SIGKILL;
		steps_end(cl, s, JOB_CANCELLED, NULL, now);
		return 0;
	}
	for (i = 0; i < s->nnodes; i++)
		if ((n = nodes_get(cl->ns, s->nodenames[i])) != NULL &&
		    n->conn_id != 0)
			cl->out.ops->signal_step(cl->out.ctx, n->conn_id,
			    job_id, s->attempt, s->id, sig);
	return 0;
}

/* The index in s of the node holding rank, or -1. The nodes hold
 * consecutive ranks in order: a binary search, as every task report
 * (exits, heartbeats) asks it. */
static long
steps_rank_node(const struct step *s, unsigned rank)
{
	size_t lo = 0, hi = s->nnodes, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (rank < s->nodes[mid].first_rank)
			hi = mid;
		else if (rank - s->nodes[mid].first_rank >=
		    s->nodes[mid].ntasks)
			lo = mid + 1;
		else
			return (long)mid;
	}
	return -1;
}

bool
steps_task_wanted(const struct cluster *cl, const struct node *n,
    const struct task_report *r)
{
	const struct step *s = steps_find(cl, r->job_id, r->restart, r->step);
	long i;

	if (s == NULL || s->state != JOB_RUNNING ||
	    (i = steps_rank_node(s, r->rank)) < 0)
		return false;
	return strcmp(s->nodenames[i], n->name) == 0;
}

int
steps_task_node(const struct cluster *cl, uint64_t job_id, uint32_t step_id,
    unsigned rank, const char **node, struct cerr *err)
{
	const struct step *s = steps_get(cl, job_id, step_id);
	long i;

	if (s == NULL)
		return cerr_set(err, ERR_NOT_FOUND, "step %" PRIu64 ".%u is not "
		    "known (steps of a job's current run only)", job_id,
		    step_id);
	if ((i = steps_rank_node(s, rank)) < 0)
		return cerr_set(err, ERR_INVALID, "step %" PRIu64 ".%u has "
		    "tasks 0..%u", job_id, step_id, s->ntasks - 1);
	*node = s->nodenames[i];
	return 0;
}

int
steps_task_exit(struct cluster *cl, struct node *n,
    const struct task_report *r, int64_t now, struct cerr *err)
{
	const struct job *job = jobs_get(cl->js, r->job_id);
	struct step *s;
	long i;
	int32_t code;

	if (job == NULL || !jobs_is_active(job) || r->restart != job->attempt ||
	    (s = steps_find(cl, r->job_id, r->restart, r->step)) == NULL)
		return 0;
	if ((i = steps_rank_node(s, r->rank)) < 0 ||
	    strcmp(s->nodenames[i], n->name) != 0)
		return cerr_set(err, ERR_DENIED, "node %s does not hold task "
		    "%u of step %" PRIu64 ".%u", n->name, r->rank, r->job_id,
		    r->step);
	if (s->state != JOB_RUNNING || s->status[r->rank] != -1)
		return 0;
	s->status[r->rank] = r->wait_status;
	code = steps_code(r->wait_status);
	if (!s->has_exit || code > s->exit_code)
		s->exit_code = code;
	s->has_exit = true;
	if (code != 0 && s->reason[0] == '\0')
		snprintf(s->reason, sizeof(s->reason), "task %u %s %d%s%.120s",
		    r->rank, WIFSIGNALED(r->wait_status) ? "killed by signal" :
		    "exited with", WIFSIGNALED(r->wait_status) ?
		    WTERMSIG(r->wait_status) : code, r->why[0] ? ": " : "",
		    r->why);
	/* Once: a stop reaches every node of the step, and every task
	 * that it kills reports a failure too. */
	if (code != 0 && s->kill_on_bad_exit && !s->stopping &&
	    s->ndone + 1 < s->ntasks) {
		s->stopping = true;
		steps_stop_tasks(cl, s, "a task failed (--kill-on-bad-exit)");
	}
	if (++s->ndone < s->ntasks)
		return 0;
	steps_end(cl, s, s->exit_code == 0 ? JOB_COMPLETED : JOB_FAILED, NULL,
	    now);
	return 0;
}
