/* Interactive allocations (see alloc.h): when each running interactive
 * job's salloc was last heard of, in a small array sorted by job id, and
 * the rules that end such a job. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/alloc.h"
#include "daemon/controller/domain/cluster_int.h"
#include "daemon/controller/domain/jobs.h"
#include "lib/log.h"

struct alloc_seen {
	uint64_t job_id;
	int64_t seen_ms;
};

struct alloc_table {
	struct alloc_seen *v;
	size_t n, cap;
};

static int64_t
alloc_grace(const struct cluster *cl)
{
	return cl->o.interactive_grace_ms > 0 ? cl->o.interactive_grace_ms :
	    ALLOC_GRACE_DEFAULT_MS;
}

/* The index where job id is or would go. */
static size_t
alloc_pos(const struct alloc_table *t, uint64_t id)
{
	size_t lo = 0, hi = t->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (t->v[mid].job_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Job id heard of at now: its entry made when missing. Without memory
 * the job is not recorded, and the next tick tries again (its grace
 * counts from then, never from before). */
static void
alloc_heard(struct cluster *cl, uint64_t id, int64_t now)
{
	struct alloc_table *t = cl->allocs;
	struct alloc_seen *nv;
	size_t i, ncap;

	if (t == NULL && (t = cl->allocs = calloc(1, sizeof(*t))) == NULL)
		return;
	i = alloc_pos(t, id);
	if (i < t->n && t->v[i].job_id == id) {
		t->v[i].seen_ms = now;
		return;
	}
	if (t->n == t->cap) {
		ncap = t->cap ? t->cap * 2 : 16;
		if ((nv = reallocarray(t->v, ncap, sizeof(*nv))) == NULL)
			return;
		t->v = nv;
		t->cap = ncap;
	}
	memmove(&t->v[i + 1], &t->v[i], (t->n - i) * sizeof(*t->v));
	t->v[i].job_id = id;
	t->v[i].seen_ms = now;
	t->n++;
}

static const struct job *
alloc_owned(struct cluster *cl, const struct peer *who, uint64_t id,
    struct cerr *err)
{
	const struct job *job = jobs_get(cl->js, id);

	if (job == NULL) {
		cerr_set(err, ERR_NOT_FOUND, "no job %" PRIu64, id);
		return NULL;
	}
	if (strcmp(who->name, job->user) != 0) {
		cerr_set(err, ERR_DENIED, "job %" PRIu64 " is not yours: only "
		    "its owner may use its allocation", id);
		return NULL;
	}
	return job;
}

int
alloc_job(struct cluster *cl, const struct peer *who, uint64_t id,
    bool running, const struct job **jobp, struct cerr *err)
{
	const struct job *job;

	if ((job = alloc_owned(cl, who, id, err)) == NULL)
		return -1;
	if (running && job->state != JOB_RUNNING)
		return cerr_set(err, ERR_CONFLICT, "job %" PRIu64 " is not "
		    "running (%s)", id, job_state_name(job->state));
	*jobp = job;
	return 0;
}

int
alloc_keepalive(struct cluster *cl, const struct peer *who, uint64_t id,
    bool running, int64_t now, const struct job **jobp, struct cerr *err)
{
	if (alloc_job(cl, who, id, running, jobp, err) == -1)
		return -1;
	if ((*jobp)->spec.interactive && (*jobp)->state == JOB_RUNNING)
		alloc_heard(cl, id, now);
	return 0;
}

int
alloc_release(struct cluster *cl, const struct peer *who, uint64_t id,
    int exit_code, int64_t now, enum job_state *state, struct cerr *err)
{
	const struct job *job;
	char reason[96];

	if ((job = alloc_owned(cl, who, id, err)) == NULL)
		return -1;
	if (!job->spec.batch)
		return cerr_set(err, ERR_INVALID, "job %" PRIu64 " is not an "
		    "allocation (a batch job): use scancel", id);
	if (job_state_is_final(job->state)) {
		*state = job->state;
		return 0;
	}
	if (job->state != JOB_RUNNING)
		return cluster_cancel(cl, who, id, now, state, err);
	/* As the script's own exit would end it (cluster_task_exit): the
	 * gang stopped while its placement is known, then rank 0's exit
	 * recorded, which decides COMPLETED or FAILED with the code. */
	snprintf(reason, sizeof(reason), "the salloc shell exited with %d",
	    exit_code);
	gang_stop(cl, job, reason, now);
	if (jobs_task_exit(cl->js, id, job->attempt, 0,
	    (exit_code & 0xff) << 8, "", now, state, err) == -1)
		return -1;
	cluster_wake(cl);
	return 0;
}

/* End job (active or not) as state with reason. */
static void
alloc_end(struct cluster *cl, const struct job *job, enum job_state state,
    const char *reason, int64_t now)
{
	struct cerr err;

	if (jobs_is_active(job))
		gang_stop(cl, job, reason, now);
	cerr_clear(&err);
	if (jobs_end(cl->js, job->id, state, reason, now, &err) == -1)
		log_warnx("job %" PRIu64 ": %s", job->id, err.text);
	cluster_wake(cl);
}

void
alloc_tick(struct cluster *cl, int64_t now)
{
	struct alloc_table *t;
	const struct job **active, *job;
	char reason[128];
	size_t i, j, n;

	/* Running interactive jobs not yet heard of (started since, or
	 * running when this controller started) count from now. */
	if (jobs_active(cl->js, &active, &n) == -1)
		return;
	for (i = 0; i < n; i++)
		if (active[i]->spec.interactive &&
		    active[i]->state == JOB_RUNNING && (cl->allocs == NULL ||
		    (j = alloc_pos(cl->allocs, active[i]->id)) ==
		    cl->allocs->n || cl->allocs->v[j].job_id != active[i]->id))
			alloc_heard(cl, active[i]->id, now);
	free(active);
	if ((t = cl->allocs) == NULL)
		return;
	snprintf(reason, sizeof(reason), "inactive limit: no keepalive from "
	    "salloc for %" PRId64 " s", alloc_grace(cl) / 1000);
	for (i = j = 0; i < t->n; i++) {
		job = jobs_get(cl->js, t->v[i].job_id);
		if (job == NULL || job_state_is_final(job->state))
			continue;
		if (job->state != JOB_RUNNING)
			alloc_end(cl, job, JOB_CANCELLED, "an interactive "
			    "allocation is not started again", now);
		else if (now - t->v[i].seen_ms >= alloc_grace(cl))
			alloc_end(cl, job, JOB_TIMEOUT, reason, now);
		else
			t->v[j++] = t->v[i];
	}
	t->n = j;
}

void
alloc_destroy_all(struct cluster *cl)
{
	if (cl->allocs == NULL)
		return;
	free(cl->allocs->v);
	free(cl->allocs);
	cl->allocs = NULL;
}
