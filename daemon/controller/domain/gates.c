#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/cluster_int.h"
#include "daemon/controller/domain/gates.h"
#include "daemon/controller/domain/jobs.h"
#include "lib/depend.h"
#include "lib/log.h"

/* Tasks of a throttled array (%N) that hold an allocation, or were
 * let through to the scheduler in this pass. */
struct gates_array {
	uint64_t array_id;
	uint32_t n;
};

/* What became of a whole array a dependency names, counted once per
 * pass (1,000 tasks each waiting on a 1,000-task array would otherwise
 * cost a million lookups a pass). A task the pass itself cancels
 * (DependencyNeverSatisfied) can leave a count behind by one job that
 * has not ended: that only makes an item WAIT, never hold, and the
 * cancel asks for the pass that judges it afresh. */
struct gates_dep {
	uint64_t array_id;
	struct depend_status st;
};

struct gates {
	struct cluster *cl;
	int64_t now_ms;
	/* Sorted by array id. */
	struct gates_dep *deps;
	size_t ndeps;
	/* Sorted by array id. */
	struct gates_array *arrays;
	size_t narrays;
	/* Jobs holding an allocation, sorted by (user, name), and then
	 * the singleton jobs let through in this pass (unsorted, few):
	 * singleton allows one of each name and user. */
	const struct job **active;
	size_t nactive;
	const struct job **offered;
	size_t noffered;
	/* The job being judged, for the singleton callback. */
	const struct job *self;
};

static int
gates_key_cmp(const struct job *a, const struct job *b)
{
	int c = strcmp(a->user, b->user);

	return c != 0 ? c : strcmp(a->spec.name, b->spec.name);
}

static int
gates_key_qcmp(const void *a, const void *b)
{
	return gates_key_cmp(*(const struct job *const *)a,
	    *(const struct job *const *)b);
}

static int
gates_array_cmp(const void *a, const void *b)
{
	const struct job *x = *(const struct job *const *)a;
	const struct job *y = *(const struct job *const *)b;

	return x->array_id < y->array_id ? -1 : x->array_id > y->array_id;
}

/* Count the throttled arrays' tasks holding an allocation: once per
 * pass, from the active jobs. */
static int
gates_count_arrays(struct gates *g)
{
	const struct job **v;
	size_t i, n = 0;

	if (g->nactive == 0)
		return 0;
	if ((v = calloc(g->nactive, sizeof(*v))) == NULL ||
	    (g->arrays = calloc(g->nactive, sizeof(*g->arrays))) == NULL) {
		free(v);
		return -1;
	}
	for (i = 0; i < g->nactive; i++)
		if (g->active[i]->array_max > 0)
			v[n++] = g->active[i];
	if (n > 1)
		qsort(v, n, sizeof(*v), gates_array_cmp);
	for (i = 0; i < n; i++) {
		if (g->narrays == 0 ||
		    g->arrays[g->narrays - 1].array_id != v[i]->array_id)
			g->arrays[g->narrays++] = (struct gates_array){
			    v[i]->array_id, 0 };
		g->arrays[g->narrays - 1].n++;
	}
	free(v);
	return 0;
}

struct gates *
gates_begin(struct cluster *cl, int64_t now_ms)
{
	struct gates *g;

	if ((g = calloc(1, sizeof(*g))) == NULL)
		return NULL;
	g->cl = cl;
	g->now_ms = now_ms;
	if (jobs_active(cl->js, &g->active, &g->nactive) == -1 ||
	    gates_count_arrays(g) == -1) {
		gates_end(g);
		return NULL;
	}
	/* No job holds an allocation: jobs_active gave NULL. */
	if (g->nactive > 1)
		qsort(g->active, g->nactive, sizeof(*g->active),
		    gates_key_qcmp);
	return g;
}

void
gates_end(struct gates *g)
{
	if (g == NULL)
		return;
	free(g->arrays);
	free(g->deps);
	free(g->active);
	free(g->offered);
	free(g);
}

const char *
gates_hold_reason(enum job_hold hold)
{
	return hold == JOB_HOLD_ADMIN ? "JobHeldAdmin" : "JobHeldUser";
}

static int
gates_depend_lookup(void *arg, uint64_t id, bool has_task, uint32_t task,
    struct depend_status *st)
{
	struct gates *g = arg;
	const struct job *job;
	struct gates_dep *v;
	size_t lo = 0, hi = g->ndeps, mid;

	if (has_task || (job = jobs_get(g->cl->js, id)) == NULL ||
	    job->array_id != id)
		return jobs_depend_lookup(g->cl->js, id, has_task, task, st);
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (g->deps[mid].array_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < g->ndeps && g->deps[lo].array_id == id) {
		*st = g->deps[lo].st;
		return 0;
	}
	if (jobs_depend_lookup(g->cl->js, id, false, 0, st) == -1)
		return -1;
	/* Out of memory: counted again next time. */
	if ((v = reallocarray(g->deps, g->ndeps + 1, sizeof(*v))) != NULL) {
		g->deps = v;
		memmove(&v[lo + 1], &v[lo], (g->ndeps - lo) * sizeof(*v));
		v[lo].array_id = id;
		v[lo].st = *st;
		g->ndeps++;
	}
	return 0;
}

static bool
gates_singleton_free(void *arg)
{
	struct gates *g = arg;
	size_t i;

	if (g->nactive > 0 && bsearch(&g->self, g->active, g->nactive,
	    sizeof(*g->active), gates_key_qcmp) != NULL)
		return false;
	for (i = 0; i < g->noffered; i++)
		if (gates_key_cmp(g->offered[i], g->self) == 0)
			return false;
	return true;
}

static const struct depend_ops gates_depend_ops = {
	gates_depend_lookup, gates_singleton_free,
};

/* The job's dependency: SATISFIED (*d parsed, for singleton), or the
 * job waits (WAIT) or was ended (NEVER). A job that has been given an
 * allocation before passed its dependency then, for good: a restart or
 * a requeue does not wait again. */
static enum depend_result
gates_depend(struct gates *g, const struct job *job, struct depend *d)
{
	enum depend_result r;
	struct cerr err;
	char why[64];

	memset(d, 0, sizeof(*d));
	if (job->spec.dependency == NULL || job->attempt > 0)
		return DEPEND_SATISFIED;
	if (depend_parse(job->spec.dependency, d, &err) == -1) {
		/* Validated at submit: a row damaged since. */
		log_warnx("job %" PRIu64 ": dependency ignored: %s", job->id,
		    err.text);
		return DEPEND_SATISFIED;
	}
	g->self = job;
	r = depend_eval(d, job->array_id != 0, job->array_task,
	    &gates_depend_ops, g, why, sizeof(why));
	if (r == DEPEND_WAIT)
		jobs_set_pending_reason(g->cl->js, job->id, "Dependency");
	else if (r == DEPEND_NEVER) {
		/* The pass's list borrows the job, which stays in the table
		 * (ended): the caller skips it, as for any job a gate
		 * stops. Whatever depends on it is judged next pass. */
		if (jobs_depend_never(g->cl->js, job->id, why, g->now_ms,
		    &err) == -1)
			log_warnx("job %" PRIu64 ": %s", job->id, err.text);
		cluster_wake(g->cl);
	}
	if (r != DEPEND_SATISFIED)
		depend_clear(d);
	return r;
}

/* The throttled array's count, added when missing. NULL (ENOMEM). */
static struct gates_array *
gates_array_get(struct gates *g, uint64_t array_id)
{
	struct gates_array *v;
	size_t lo = 0, hi = g->narrays, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (g->arrays[mid].array_id < array_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < g->narrays && g->arrays[lo].array_id == array_id)
		return &g->arrays[lo];
	if ((v = reallocarray(g->arrays, g->narrays + 1, sizeof(*v))) == NULL)
		return NULL;
	g->arrays = v;
	memmove(&v[lo + 1], &v[lo], (g->narrays - lo) * sizeof(*v));
	v[lo] = (struct gates_array){ array_id, 0 };
	g->narrays++;
	return &v[lo];
}

bool
gates_block(struct gates *g, const struct job *job)
{
	struct gates_array *a = NULL;
	const struct job **o;
	struct depend d;

	if (job->hold != JOB_HOLD_NONE) {
		jobs_set_pending_reason(g->cl->js, job->id,
		    gates_hold_reason(job->hold));
		return true;
	}
	/* --begin: every tick runs a pass, so it starts within one of
	 * its time. */
	if (job->spec.begin_ms > g->now_ms) {
		jobs_set_pending_reason(g->cl->js, job->id, "BeginTime");
		return true;
	}
	if (gates_depend(g, job, &d) != DEPEND_SATISFIED)
		return true;
	/* %N: a task let through counts as running, since this pass may
	 * start it. Out of memory: it waits (never one too many). */
	if (job->array_max > 0 &&
	    ((a = gates_array_get(g, job->array_id)) == NULL ||
	    a->n >= job->array_max)) {
		jobs_set_pending_reason(g->cl->js, job->id,
		    "JobArrayTaskLimit");
		depend_clear(&d);
		return true;
	}
	if (d.singleton) {
		if ((o = reallocarray(g->offered, g->noffered + 1,
		    sizeof(*o))) == NULL) {
			depend_clear(&d);
			return true;
		}
		g->offered = o;
		o[g->noffered++] = job;
	}
	if (a != NULL)
		a->n++;
	depend_clear(&d);
	return false;
}
