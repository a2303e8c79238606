/* Slow ranks (straggler.h). Each job with reports has a table of its
 * ranks: the last `window` compute times of each (a ring), how many
 * arrived since the last comparison, and how many comparisons in a row
 * found it slow. A comparison runs when every rank has `window` new
 * reports, so a rank that reports more often weighs no more: one
 * median per rank, sorted once (n log n for n ranks), and each rank
 * against the median of the others. The work per report is constant
 * but for that one sort per window.
 *
 * Jobs are found by id through a small hash table: a heartbeat of a
 * node lists every rank it runs. */
#include "config.h"

#include <sys/queue.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/cluster_int.h"
#include "daemon/controller/domain/jobs.h"
#include "lib/log.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/reports.h"
#include "daemon/controller/domain/straggler.h"
#include "daemon/controller/domain/suspect.h"

#define SG_BUCKETS 256

struct sg_rank {
	uint64_t last_step;
	bool seen;		/* last_step is one */
	bool flagged;		/* named in this attempt */
	uint32_t fresh;		/* reports since the last comparison */
	uint32_t pos, n;	/* the ring of samples */
	uint32_t slow;		/* slow windows in a row */
};

struct sg_job {
	uint64_t job_id;
	uint32_t attempt;	/* of the samples */
	uint32_t nranks;	/* 0: no samples kept */
	uint32_t ready;		/* ranks with `window` fresh reports */
	struct sg_rank *ranks;
	uint32_t *samples;	/* nranks × window */
	struct straggler_found found[STRAGGLER_FOUND_MAX];
	size_t nfound;
	/* Named by the last comparison, not yet taken (straggler_take). */
	struct straggler_found due[STRAGGLER_DUE_MAX];
	size_t ndue;
	LIST_ENTRY(sg_job) entry;
};

LIST_HEAD(sg_bucket, sg_job);

struct stragglers {
	struct straggler_opts o;
	struct sg_bucket b[SG_BUCKETS];
	uint32_t *scratch;	/* medians, for a comparison */
	size_t nscratch;
};

struct stragglers *
straggler_create(const struct straggler_opts *o)
{
	struct stragglers *s;
	size_t i;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	if (o != NULL)
		s->o = *o;
	if (s->o.window == 0)
		s->o.window = STRAGGLER_DEFAULT_WINDOW;
	if (s->o.window > STRAGGLER_WINDOW_MAX)
		s->o.window = STRAGGLER_WINDOW_MAX;
	if (s->o.windows == 0)
		s->o.windows = STRAGGLER_DEFAULT_WINDOWS;
	if (s->o.factor_pct <= 100)
		s->o.factor_pct = STRAGGLER_DEFAULT_FACTOR_PCT;
	for (i = 0; i < SG_BUCKETS; i++)
		LIST_INIT(&s->b[i]);
	return s;
}

static void
sg_samples_free(struct sg_job *j)
{
	free(j->ranks);
	free(j->samples);
	j->ranks = NULL;
	j->samples = NULL;
	j->nranks = 0;
	j->ready = 0;
	j->ndue = 0;
}

static void
sg_job_free(struct sg_job *j)
{
	LIST_REMOVE(j, entry);
	sg_samples_free(j);
	free(j);
}

void
straggler_destroy(struct stragglers *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < SG_BUCKETS; i++)
		while (!LIST_EMPTY(&s->b[i]))
			sg_job_free(LIST_FIRST(&s->b[i]));
	free(s->scratch);
	free(s);
}

static struct sg_bucket *
sg_bucket(const struct stragglers *s, uint64_t job_id)
{
	return (struct sg_bucket *)&s->b[(job_id * 0x9e3779b97f4a7c15ULL) >>
	    56];
}

static struct sg_job *
sg_find(const struct stragglers *s, uint64_t job_id)
{
	struct sg_job *j;

	LIST_FOREACH(j, sg_bucket(s, job_id), entry)
		if (j->job_id == job_id)
			return j;
	return NULL;
}

/* The job's entry with samples for its current attempt; NULL (ENOMEM,
 * or a gang too large to compare: E2BIG). */
static struct sg_job *
sg_get(struct stragglers *s, const struct job *job)
{
	struct sg_job *j = sg_find(s, job->id);
	uint64_t nranks = job_nranks(job);

	if (nranks > STRAGGLER_RANKS_MAX) {
		errno = E2BIG;
		return NULL;
	}
	if (j == NULL) {
		if ((j = calloc(1, sizeof(*j))) == NULL)
			return NULL;
		j->job_id = job->id;
		LIST_INSERT_HEAD(sg_bucket(s, job->id), j, entry);
	}
	if (j->nranks != 0 && j->attempt == job->attempt &&
	    j->nranks == nranks)
		return j;
	/* A new attempt (or size): its ranks start over. */
	sg_samples_free(j);
	j->attempt = job->attempt;
	if (nranks == 0 ||
	    (j->ranks = calloc(nranks, sizeof(*j->ranks))) == NULL ||
	    (j->samples = calloc(nranks * s->o.window,
	    sizeof(*j->samples))) == NULL) {
		sg_samples_free(j);
		errno = ENOMEM;
		return NULL;
	}
	j->nranks = (uint32_t)nranks;
	return j;
}

static int
sg_u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of v[0..n) sorted, without the element at skip (n > 1 with
 * a skip): the mean of the two middle ones for an even count. */
static uint32_t
sg_median_sorted(const uint32_t *v, size_t n, size_t skip)
{
	size_t m, lo, hi;

	if (skip < n)
		n--;
	if (n == 0)
		return 0;
	m = n / 2;
	lo = (n % 2 == 0) ? m - 1 : m;
	hi = m;
	/* Indices in the list without skip, mapped back. */
	if (skip <= lo)
		lo++;
	if (skip <= hi)
		hi++;
	return (uint32_t)(((uint64_t)v[lo] + v[hi]) / 2);
}

/* The median of the rank's last window. */
static uint32_t
sg_rank_median(struct stragglers *s, const struct sg_job *j, uint32_t r,
    uint32_t *buf)
{
	memcpy(buf, j->samples + (size_t)r * s->o.window,
	    s->o.window * sizeof(*buf));
	qsort(buf, s->o.window, sizeof(*buf), sg_u32_cmp);
	return sg_median_sorted(buf, s->o.window, SIZE_MAX);
}

/* Every rank has a full window of new reports: compare them. Names
 * each rank that crosses the line (up to STRAGGLER_DUE_MAX; the rest
 * at the next comparison's end: their counts stay) into j->due. */
static void
sg_compare(struct stragglers *s, struct sg_job *j, const struct job *job,
    int64_t now)
{
	struct straggler_found *found;
	uint32_t *med, *sorted, *buf, r, peers;
	size_t need = (size_t)j->nranks * 2 + s->o.window, k;
	unsigned tpn;

	if (need > s->nscratch) {
		free(s->scratch);
		if ((s->scratch = calloc(need, sizeof(*s->scratch))) == NULL) {
			s->nscratch = 0;
			return;
		}
		s->nscratch = need;
	}
	med = s->scratch;
	sorted = med + j->nranks;
	buf = sorted + j->nranks;
	for (r = 0; r < j->nranks; r++)
		med[r] = sg_rank_median(s, j, r, buf);
	memcpy(sorted, med, j->nranks * sizeof(*sorted));
	qsort(sorted, j->nranks, sizeof(*sorted), sg_u32_cmp);
	for (r = 0; r < j->nranks; r++) {
		j->ranks[r].fresh = 0;
		/* Its own value's place in the sorted list (any equal one
		 * leaves the same others). */
		for (k = 0; k < j->nranks && sorted[k] != med[r]; k++)
			;
		peers = sg_median_sorted(sorted, j->nranks, k);
		if ((uint64_t)med[r] * 100 >
		    (uint64_t)(peers > 0 ? peers : 1) * s->o.factor_pct)
			j->ranks[r].slow++;
		else
			j->ranks[r].slow = 0;
		if (j->ndue == STRAGGLER_DUE_MAX || j->ranks[r].flagged ||
		    j->ranks[r].slow < s->o.windows)
			continue;
		j->ranks[r].flagged = true;
		found = &j->due[j->ndue++];
		memset(found, 0, sizeof(*found));
		found->rank = r;
		found->attempt = job->attempt;
		tpn = job->spec.tasks_per_node > 0 ?
		    job->spec.tasks_per_node : 1;
		if (r / tpn < job->nplace)
			snprintf(found->node, sizeof(found->node), "%s",
			    job->place[r / tpn].node);
		found->median_ms = med[r];
		found->peers_ms = peers;
		found->windows = j->ranks[r].slow;
		found->time_ms = now;
	}
	j->ready = 0;
}

/* The first of j's named ranks nobody took yet, into found. */
static bool
sg_take(struct sg_job *j, struct straggler_found *found)
{
	if (j == NULL || j->ndue == 0)
		return false;
	*found = j->due[0];
	memmove(&j->due[0], &j->due[1], --j->ndue * sizeof(j->due[0]));
	return true;
}

bool
straggler_take(struct stragglers *s, uint64_t job_id,
    struct straggler_found *found)
{
	return sg_take(sg_find(s, job_id), found);
}

bool
straggler_sample(struct stragglers *s, const struct job *job, uint32_t rank,
    uint64_t step, uint32_t compute_ms, int64_t now,
    struct straggler_found *found)
{
	struct sg_rank *rk;
	struct sg_job *j;

	if (job->state != JOB_RUNNING || (j = sg_get(s, job)) == NULL ||
	    rank >= j->nranks || j->nranks < 2)
		return false;
	rk = &j->ranks[rank];
	if (rk->seen && rk->last_step == step)
		return false;
	rk->seen = true;
	rk->last_step = step;
	j->samples[(size_t)rank * s->o.window + rk->pos] = compute_ms;
	rk->pos = (rk->pos + 1) % s->o.window;
	if (rk->n < s->o.window)
		rk->n++;
	if (++rk->fresh == s->o.window)
		j->ready++;
	if (j->ready == j->nranks)
		sg_compare(s, j, job, now);
	return sg_take(j, found);
}

static void
sg_note(struct sg_job *j, const struct straggler_found *f)
{
	if (j->nfound == STRAGGLER_FOUND_MAX) {
		memmove(&j->found[0], &j->found[1],
		    (STRAGGLER_FOUND_MAX - 1) * sizeof(j->found[0]));
		j->nfound--;
	}
	j->found[j->nfound++] = *f;
}

/* The share of place[0 .. n) on node, or NULL. */
static const struct placement *
share_on(const struct placement *place, size_t n, const char *node)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(place[i].node, node) == 0)
			return &place[i];
	return NULL;
}

bool
cluster_room_elsewhere(struct cluster *cl, const struct placement *place,
    size_t nplace, const char *node, unsigned need)
{
	const struct placement *p = share_on(place, nplace, node);
	struct node **all;
	size_t i, n;

	all = nodes_all(cl->ns, &n);
	for (i = 0; i < n && need > 0; i++) {
		if (all[i]->state != NODE_UP || all[i]->conn_id == 0 ||
		    all[i]->drained || all[i]->health->health != HEALTH_OK ||
		    share_on(place, nplace, all[i]->name) != NULL)
			continue;
		if (p == NULL || node_gpus_free(all[i]) >= p->ngpus)
			need--;
	}
	return need == 0;
}

/* Whether f's node was named already in f's attempt. */
static bool
sg_named(const struct sg_job *j, const struct straggler_found *f)
{
	size_t i;

	for (i = 0; i < j->nfound; i++)
		if (j->found[i].attempt == f->attempt &&
		    strcmp(j->found[i].node, f->node) == 0)
			return true;
	return false;
}

/* A straggler found in job: say so and, when asked, move its node. */
static void
sg_found(struct cluster *cl, struct sg_job *j, const struct job *job,
    struct straggler_found *f, int64_t now)
{
	char detail[600], cause[256], act[160] = "",
	    ev[SUSPECT_DETAIL_MAX + 1];
	unsigned x10 = (unsigned)((uint64_t)f->median_ms * 10 /
	    (f->peers_ms > 0 ? f->peers_ms : 1));
	bool moving = recovery_evacuating(cl, job->id) ||
	    job->state == JOB_RESTARTING, move = false,
	    again = sg_named(j, f);
	/* A restarting job's gang is its previous one. */
	const struct placement *place = job->state == JOB_RESTARTING ?
	    job->prev_place : job->place;
	size_t nplace = job->state == JOB_RESTARTING ? job->nprev :
	    job->nplace;
	struct cerr err;

	snprintf(cause, sizeof(cause), "straggler: rank %u on %s is %u.%u× "
	    "slower than its peers", f->rank, f->node, x10 / 10, x10 % 10);
	/* Every node named before the move leaves with it: the restart
	 * leaves them all out, so none takes another's place. */
	if (job->spec.on_straggler == JOB_STRAGGLER_REPLACE) {
		if (!jobs_avoids(job, f->node) && !cluster_room_elsewhere(cl,
		    place, nplace, f->node, jobs_avoiding(job) + 1))
			snprintf(act, sizeof(act), "; no spare or free node to "
			    "move it to: reported only");
		else if (jobs_avoid_node(cl->js, job->id, f->node) == -1)
			snprintf(act, sizeof(act), "; the move leaves out %d "
			    "nodes already: reported only", JOB_AVOID_MAX);
		else {
			f->replaced = true;
			move = !moving;
			snprintf(act, sizeof(act), moving ? "; the job is being "
			    "moved already: %s's ranks move too" : "; moving "
			    "%s's ranks at the next checkpoint", f->node);
		}
	}
	snprintf(detail, sizeof(detail), "rank %u on %s: median %u ms per "
	    "step over its last %u reports, its peers' %u ms (%u.%u×), "
	    "%u windows in a row%s", f->rank, f->node, f->median_ms,
	    cl->sg->o.window, f->peers_ms, x10 / 10, x10 % 10,
	    f->windows, act);
	sg_note(j, f);
	cl->stats.stragglers++;
	/* The node's score rises and placement puts it last for restarts
	 * and large gangs while it is recent; slowness never drains. */
	snprintf(ev, sizeof(ev), "rank %u %u.%u× its peers", f->rank,
	    x10 / 10, x10 % 10);
	if (!again)	/* one piece of evidence a node and attempt */
		cluster_suspect_hw(cl, f->node, SUSPECT_SLOW, job->id, ev,
		    now);
	log_warnx("job %" PRIu64 ": straggler: %s", job->id, detail);
	if (jobs_event(cl->js, job->id, f->node, "straggler", "cohortd",
	    detail, now, &err) == -1)
		log_warnx("job %" PRIu64 ": %s", job->id, err.text);
	if (move)
		recovery_replace(cl, job, cause, now);
}

void
straggler_reports(struct cluster *cl, uint64_t conn_id,
    const struct step_time_report *r, size_t nr, int64_t now)
{
	struct node *n = nodes_by_conn(cl->ns, conn_id);
	struct straggler_found f;
	const struct job *job;
	char what[160];
	size_t i;

	if (n == NULL || cl->sg == NULL)
		return;
	for (i = 0; i < nr; i++) {
		job = jobs_get(cl->js, r[i].job_id);
		switch (reports_judge(job, n->name, REPORT_STEP_TIME,
		    r[i].attempt, r[i].rank)) {
		case REPORT_STALE:
			continue;
		case REPORT_FOREIGN:
			snprintf(what, sizeof(what), "job %" PRIu64 " attempt "
			    "%u rank %u: not this node's rank", r[i].job_id,
			    r[i].attempt, r[i].rank);
			reports_reject(&cl->reports, &n->report_log, n->name,
			    REPORT_STEP_TIME, now, what);
			continue;
		case REPORT_ACCEPT:
			break;
		}
		if (!straggler_sample(cl->sg, job, r[i].rank, r[i].step,
		    r[i].compute_ms, now, &f))
			continue;
		do
			sg_found(cl, sg_find(cl->sg, job->id), job, &f, now);
		while (straggler_take(cl->sg, job->id, &f));
	}
}

void
straggler_tick(struct cluster *cl, int64_t now)
{
	struct sg_job *j, *next;
	const struct job *job;
	size_t i;

	(void)now;
	if (cl->sg == NULL)
		return;
	for (i = 0; i < SG_BUCKETS; i++)
		for (j = LIST_FIRST(&cl->sg->b[i]); j != NULL; j = next) {
			next = LIST_NEXT(j, entry);
			job = jobs_get(cl->js, j->job_id);
			if (job != NULL && job->state == JOB_RUNNING &&
			    job->attempt == j->attempt)
				continue;
			sg_samples_free(j);
			if (job == NULL || j->nfound == 0)
				sg_job_free(j);
		}
}

const struct straggler_found *
straggler_list(const struct cluster *cl, uint64_t job_id, size_t *n)
{
	const struct sg_job *j;

	*n = 0;
	if (cl->sg == NULL || (j = sg_find(cl->sg, job_id)) == NULL)
		return NULL;
	*n = j->nfound;
	return j->found;
}
