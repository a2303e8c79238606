/* What jobs used: GPU time per run, kept on the job (gpu_ms,
 * wasted_gpu_ms) and as a row per run (job_runs) written in the
 * transaction that ends the run; `cohort usage` over those rows and the
 * runs going on; and when a pending job is expected to start.
 *
 * A run is the time a job is RUNNING (or RESIZING) on its allocation,
 * from start_ms (set when it becomes RUNNING) to the change that ends it:
 * completion, failure, restart, preemption, requeue, cancel, time limit.
 * Launching is not counted, as the job's tasks have not started yet
 * (Slurm counts from the allocation; here the few seconds of a launch
 * would be charged to users for work they could not do). Its GPU time
 * is the GPUs held times its length; the wasted part is the work lost
 * (what the change added to lost_work_ms: since the last checkpoint),
 * or the whole run when the job ends FAILED. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/goodput.h"
#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/jobs_int.h"
#include "lib/log.h"
#include "daemon/controller/store/store.h"
#include "daemon/controller/store/txq.h"

#define DAY_MS (86400 * INT64_C(1000))

bool
jobs_account_in_run(const struct job *job)
{
	return (job->state == JOB_RUNNING || job->state == JOB_RESIZING) &&
	    job->start_ms > 0 && job->nplace > 0;
}

/* What ended a run, as `cohort usage --by state` groups it. */
static const char *
jobs_account_outcome(const struct job *next)
{
	if (next->state != JOB_PENDING)
		return job_state_name(next->state);
	return strncmp(next->reason, JOBS_PREEMPTED_PREFIX,
	    strlen(JOBS_PREEMPTED_PREFIX)) == 0 ? "PREEMPTED" : "REQUEUED";
}

static uint64_t
sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t
sat_mul(uint64_t a, uint64_t b)
{
	return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

void
jobs_account_end(struct jobs *js, const struct job *job, struct job *next,
    int64_t now_ms)
{
	struct jobs_ended_run *e = &js->ended;
	uint64_t run_ms, wasted, lost;
	uint32_t gpus;

	memset(e, 0, sizeof(*e));
	/* Every change of the job passes here: its goodput is accounted up
	 * to now in the version written. */
	goodput_advance(job, next, now_ms);
	/* Still the same run: a checkpoint, a reason, a resize begun. */
	if (!jobs_account_in_run(job) || (jobs_account_in_run(next) &&
	    next->start_ms == job->start_ms))
		return;
	run_ms = now_ms > job->start_ms ? (uint64_t)(now_ms - job->start_ms) :
	    0;
	gpus = job_gpus(job);
	lost = next->lost_work_ms > job->lost_work_ms ?
	    next->lost_work_ms - job->lost_work_ms : 0;
	wasted = next->state == JOB_FAILED ? run_ms :
	    lost < run_ms ? lost : run_ms;
	next->gpu_ms = sat_add(next->gpu_ms, sat_mul(gpus, run_ms));
	next->wasted_gpu_ms = sat_add(next->wasted_gpu_ms,
	    sat_mul(gpus, wasted));
	e->set = true;
	e->job_id = job->id;
	e->attempt = job->attempt;
	e->user = job->user;
	e->queue = job->spec.queue;
	e->start_ms = job->start_ms;
	e->end_ms = job->start_ms + (int64_t)run_ms;
	e->gpus = gpus;
	e->nodes = (uint32_t)job->nplace;
	e->outcome = jobs_account_outcome(next);
	e->wasted_ms = wasted;
}

int
jobs_account_write(struct jobs *js, const struct job *job, struct cerr *err)
{
	struct jobs_ended_run e = js->ended;
	struct store_run r;

	memset(&js->ended, 0, sizeof(js->ended));
	if (!e.set || e.job_id != job->id)
		return 0;
	r.job_id = e.job_id;
	r.attempt = e.attempt;
	r.user = e.user;
	r.queue = e.queue != NULL ? e.queue : "";
	r.start_ms = e.start_ms;
	r.end_ms = e.end_ms;
	r.gpus = e.gpus;
	r.nodes = e.nodes;
	r.outcome = e.outcome;
	r.wasted_ms = e.wasted_ms;
	return store_run_insert(js->st, &r, err);
}

/* ---- Usage ---- */

struct usage_acc {
	const struct jobs_usage_query *q;
	struct jobs_usage_row *rows;
	size_t n;
	size_t cap;
	struct cerr *err;
};

/* A new zeroed row for key and day_ms. NULL with err set. */
static struct jobs_usage_row *
usage_append(struct usage_acc *a, const char *key, int64_t day_ms)
{
	struct jobs_usage_row *r;
	size_t cap;

	if (a->n == JOBS_USAGE_ROWS_MAX) {
		cerr_set(a->err, ERR_LIMIT, "more than %d groups; narrow the "
		    "window (--since, --until) or the filters",
		    JOBS_USAGE_ROWS_MAX);
		return NULL;
	}
	if (a->n == a->cap) {
		cap = a->cap ? a->cap * 2 : 16;
		if ((r = reallocarray(a->rows, cap, sizeof(*r))) == NULL) {
			cerr_set(a->err, ERR_INTERNAL, "out of memory");
			return NULL;
		}
		a->rows = r;
		a->cap = cap;
	}
	r = &a->rows[a->n++];
	memset(r, 0, sizeof(*r));
	snprintf(r->key, sizeof(r->key), "%s", key);
	r->day_ms = day_ms;
	return r;
}

/* The row of (key, day), added when new. NULL with err set. */
static struct jobs_usage_row *
usage_row(struct usage_acc *a, const char *key, int64_t day_ms)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		if (a->rows[i].day_ms == day_ms &&
		    strcmp(a->rows[i].key, key) == 0)
			return &a->rows[i];
	return usage_append(a, key, day_ms);
}

/* The store's groups are distinct: appended, not searched (the runs
 * going on are merged after). */
static int
usage_store_cb(const struct store_usage_row *sr, void *arg)
{
	struct usage_acc *a = arg;
	struct jobs_usage_row *r;

	if ((r = usage_append(a, sr->key != NULL ? sr->key : "",
	    sr->day_ms)) == NULL)
		return -1;
	r->gpu_ms = sr->gpu_ms > 0 ? (uint64_t)sr->gpu_ms : 0;
	r->wasted_gpu_ms = sr->wasted_gpu_ms > 0 ?
	    (uint64_t)sr->wasted_gpu_ms : 0;
	r->runs = sr->runs > 0 ? (uint64_t)sr->runs : 0;
	return 0;
}

static const char *
usage_key(const struct jobs_usage_query *q, const struct job *job)
{
	switch (q->by) {
	case JOBS_USAGE_USER:
		return job->user;
	case JOBS_USAGE_QUEUE:
		return job->spec.queue != NULL ? job->spec.queue : "";
	case JOBS_USAGE_STATE:
		return "RUNNING";
	default:
		return "";
	}
}

/* A run going on at now: [start_ms, now) clipped to the window (and,
 * by day, split at midnights). Nothing of it is wasted yet. */
static int
usage_add_live(struct usage_acc *a, const struct job *job, int64_t now)
{
	const struct jobs_usage_query *q = a->q;
	struct jobs_usage_row *r;
	int64_t s, e, d, part;
	uint32_t gpus = job_gpus(job);

	s = job->start_ms > q->since_ms ? job->start_ms : q->since_ms;
	e = now < q->until_ms ? now : q->until_ms;
	if ((q->user != NULL && strcmp(job->user, q->user) != 0) ||
	    (q->queue != NULL && strcmp(job->spec.queue != NULL ?
	    job->spec.queue : "", q->queue) != 0) || e <= s)
		return 0;
	if (q->by != JOBS_USAGE_DAY) {
		if ((r = usage_row(a, usage_key(q, job), 0)) == NULL)
			return -1;
		r->gpu_ms = sat_add(r->gpu_ms, sat_mul(gpus, (uint64_t)(e -
		    s)));
		r->runs++;
		return 0;
	}
	for (d = s - s % DAY_MS; d < e; d += DAY_MS) {
		part = (e < d + DAY_MS ? e : d + DAY_MS) - (s > d ? s : d);
		if ((r = usage_row(a, "", d)) == NULL)
			return -1;
		r->gpu_ms = sat_add(r->gpu_ms, sat_mul(gpus,
		    (uint64_t)part));
		r->runs++;
	}
	return 0;
}

static int
usage_row_cmp(const void *x, const void *y)
{
	const struct jobs_usage_row *a = x, *b = y;

	if (a->day_ms != b->day_ms)
		return a->day_ms < b->day_ms ? -1 : 1;
	return strcmp(a->key, b->key);
}

int
jobs_account_usage(struct jobs *js, const struct jobs_usage_query *q,
    int64_t now_ms, struct jobs_usage_row **rows, size_t *n,
    struct cerr *err)
{
	static const enum store_usage_by by[] = {
		[JOBS_USAGE_USER] = STORE_USAGE_USER,
		[JOBS_USAGE_QUEUE] = STORE_USAGE_QUEUE,
		[JOBS_USAGE_STATE] = STORE_USAGE_STATE,
		[JOBS_USAGE_DAY] = STORE_USAGE_DAY,
	};
	struct store_usage_query sq;
	struct usage_acc a = { q, NULL, 0, 0, err };
	size_t i;

	*rows = NULL;
	*n = 0;
	if (q->since_ms < 0 || q->until_ms <= q->since_ms ||
	    (unsigned)q->by > JOBS_USAGE_DAY)
		return cerr_set(err, ERR_INVALID, "the usage window must end "
		    "after it starts");
	sq.since_ms = q->since_ms;
	sq.until_ms = q->until_ms;
	sq.user = q->user;
	sq.queue = q->queue;
	sq.by = by[q->by];
	if (store_usage(js->st, &sq, usage_store_cb, &a, err) == -1)
		goto fail;
	for (i = 0; i < js->nruns; i++) {
		const struct job *job = jobs_get(js, js->runs[i].job_id);

		if (job != NULL && jobs_account_in_run(job) &&
		    usage_add_live(&a, job, now_ms) == -1)
			goto fail;
	}
	if (a.n > 1)
		qsort(a.rows, a.n, sizeof(*a.rows), usage_row_cmp);
	*rows = a.rows;
	*n = a.n;
	return 0;
fail:
	free(a.rows);
	return -1;
}

/* ---- Expected starts ---- */

void
jobs_set_expected_start(struct jobs *js, uint64_t id, int64_t start_ms)
{
	struct job *job = (struct job *)jobs_get(js, id);

	if (job == NULL || job->state != JOB_PENDING || jobs_is_active(job))
		return;
	job->expected_start_ms = start_ms > 0 ? start_ms : 0;
}

void
jobs_set_ckpt_advice(struct jobs *js, uint64_t id, uint32_t advice_s,
    int64_t now_ms)
{
	struct job *job = (struct job *)jobs_get(js, id);

	if (job != NULL) {
		job->ckpt_advice_s = advice_s;
		job->ckpt_advice_ms = now_ms;
	}
}

/* ---- Job steps' records ---- */

int
jobs_step_record(struct jobs *js, const struct store_step *s,
    struct cerr *err)
{
	if (txq_join(js->q, err) == -1)
		return -1;
	return store_step_put(js->st, s, err);
}

int
jobs_steps_end_running(struct jobs *js, uint64_t job_id, uint32_t attempt,
    bool node_fail, const char *reason, int64_t now_ms, struct cerr *err)
{
	if (txq_join(js->q, err) == -1)
		return -1;
	return store_steps_end_running(js->st, job_id, attempt,
	    node_fail ? JOB_FAILED : JOB_CANCELLED, node_fail, reason, now_ms,
	    err);
}

int
jobs_steps_orphaned(struct jobs *js, int64_t now_ms, struct cerr *err)
{
	if (txq_join(js->q, err) == -1)
		return -1;
	return store_steps_end_all(js->st, JOB_FAILED, "the controller "
	    "restarted: steps do not outlive it (their job does)", now_ms,
	    err);
}

int
jobs_steps_list(struct jobs *js, uint64_t job_id, size_t max,
    int (*cb)(const struct store_step *s, void *arg), void *arg,
    struct cerr *err)
{
	return store_steps_list(js->st, job_id, max, cb, arg, err);
}

int
jobs_step_get(struct jobs *js, uint64_t job_id, uint32_t step_id,
    int (*cb)(const struct store_step *s, void *arg), void *arg,
    struct cerr *err)
{
	return store_step_get(js->st, job_id, step_id, cb, arg, err);
}
