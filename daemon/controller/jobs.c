#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs.h"
#include "lib/log.h"
#include "store.h"
#include "txq.h"

struct jobs {
	struct store *st;
	struct txq *q;
	struct job_limits limits;
	struct job **tab;	/* sorted by id: ids only grow */
	size_t n;
	size_t cap;
	uint64_t last_id;
};

static int
jobs_append(struct jobs *js, struct job *job)
{
	struct job **tab;
	size_t cap;

	if (js->n == js->cap) {
		cap = js->cap ? js->cap * 2 : 256;
		if ((tab = reallocarray(js->tab, cap, sizeof(*tab))) == NULL)
			return -1;
		js->tab = tab;
		js->cap = cap;
	}
	js->tab[js->n++] = job;
	return 0;
}

static int
jobs_load_cb(struct job *job, void *arg)
{
	struct jobs *js = arg;

	if (jobs_append(js, job) == -1) {
		job_free(job);
		return -1;
	}
	return 0;
}

static void
jobs_drop(struct jobs *js)
{
	size_t i;

	for (i = 0; i < js->n; i++)
		job_free(js->tab[i]);
	js->n = 0;
}

int
jobs_reload(struct jobs *js, struct cerr *err)
{
	jobs_drop(js);
	if (store_jobs_load(js->st, jobs_load_cb, js, err) == -1)
		return -1;
	return store_max_job_id(js->st, &js->last_id, err);
}

struct jobs *
jobs_create(struct store *st, struct txq *q, const struct job_limits *limits,
    struct cerr *err)
{
	struct jobs *js;

	if ((js = calloc(1, sizeof(*js))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	js->st = st;
	js->q = q;
	js->limits = *limits;
	if (jobs_reload(js, err) == -1) {
		jobs_destroy(js);
		return NULL;
	}
	return js;
}

void
jobs_destroy(struct jobs *js)
{
	if (js == NULL)
		return;
	jobs_drop(js);
	free(js->tab);
	free(js);
}

const struct job *
jobs_get(const struct jobs *js, uint64_t id)
{
	size_t lo = 0, hi = js->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (js->tab[mid]->id == id)
			return js->tab[mid];
		if (js->tab[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

size_t
jobs_count(const struct jobs *js)
{
	return js->n;
}

/* Write one request's rows inside the shared transaction: all of them,
 * or (store_undo) none. */
static int
jobs_write(struct jobs *js, const struct job *job, bool insert,
    int64_t now_ms, const char *kind, const char *actor, const char *detail,
    struct cerr *err)
{
	if (txq_join(js->q, err) == -1 || store_mark(js->st, err) == -1)
		return -1;
	if ((insert ? store_job_insert(js->st, job, err) :
	    store_job_update(js->st, job, err)) == -1 ||
	    store_event_append(js->st, now_ms, job->id, NULL, kind, actor,
	    detail, err) == -1 ||
	    store_keep(js->st, err) == -1) {
		store_undo(js->st);
		return -1;
	}
	return 0;
}

int
jobs_submit(struct jobs *js, const struct peer *who, struct job_spec *spec,
    int64_t now_ms, uint64_t *id, struct cerr *err)
{
	struct job *job;
	char detail[256];

	cerr_clear(err);
	if (job_spec_validate(spec, who->role, &js->limits, err) == -1) {
		job_spec_clear(spec);
		return -1;
	}
	if ((job = job_new()) == NULL ||
	    (job->user = strdup(who->name)) == NULL) {
		job_free(job);
		job_spec_clear(spec);
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	/* Move the spec in: the job owns its strings from here on. */
	job_spec_clear(&job->spec);
	job->spec = *spec;
	job_spec_init(spec);
	job->id = js->last_id + 1;
	job->state = JOB_PENDING;
	job->submit_ms = now_ms;
	snprintf(detail, sizeof(detail), "name=%s nodes=%u:%u gpus_per_node=%u",
	    job->spec.name, job->spec.nodes_min, job->spec.nodes_max,
	    job->spec.gpus_per_node);
	if (jobs_write(js, job, true, now_ms, "submit", who->name, detail,
	    err) == -1 || jobs_append(js, job) == -1) {
		if (err->code == ERR_NONE)
			cerr_set(err, ERR_INTERNAL, "out of memory");
		job_free(job);
		return -1;
	}
	js->last_id = job->id;
	*id = job->id;
	log_info("job %" PRIu64 ": submitted by %s (%s)", job->id, who->name,
	    job->spec.name);
	return 0;
}

int
jobs_cancel(struct jobs *js, const struct peer *who, uint64_t id,
    int64_t now_ms, enum job_state *state, struct cerr *err)
{
	struct job *job = (struct job *)jobs_get(js, id);
	struct job next;
	char *reason;

	if (job == NULL)
		return cerr_set(err, ERR_NOT_FOUND, "no job %" PRIu64, id);
	if (strcmp(job->user, who->name) != 0 && who->role != ROLE_ADMIN)
		return cerr_set(err, ERR_DENIED,
		    "job %" PRIu64 " belongs to %s; only its owner or an admin "
		    "may cancel it", id, job->user);
	if (job_state_is_final(job->state))
		return cerr_set(err, ERR_CONFLICT,
		    "job %" PRIu64 " already ended (%s)", id,
		    job_state_name(job->state));
	if ((reason = malloc(PEER_NAME_MAX + 32)) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	snprintf(reason, PEER_NAME_MAX + 32, "cancelled by %s", who->name);
	/* Write the new row first; the table changes only if it took. */
	next = *job;
	next.state = JOB_CANCELLED;
	next.reason = reason;
	next.end_ms = now_ms;
	if (jobs_write(js, &next, false, now_ms, "cancel", who->name, reason,
	    err) == -1) {
		free(reason);
		return -1;
	}
	free(job->reason);
	*job = next;
	*state = job->state;
	log_info("job %" PRIu64 ": cancelled by %s", id, who->name);
	return 0;
}

const struct job **
jobs_list(const struct jobs *js, const struct jobs_filter *f, size_t *n)
{
	const struct job **out;
	const struct job *job;
	size_t i;

	*n = 0;
	if (js->n == 0 || (out = calloc(js->n, sizeof(*out))) == NULL)
		return NULL;
	for (i = 0; i < js->n; i++) {
		job = js->tab[i];
		if (!f->all && !f->has_state && job_state_is_final(job->state))
			continue;
		if (f->has_state && job->state != f->state)
			continue;
		if (f->user != NULL && strcmp(job->user, f->user) != 0)
			continue;
		out[(*n)++] = job;
	}
	return out;
}
