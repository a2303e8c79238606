#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "daemon/controller/domain/goodput.h"
#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/jobs_int.h"
#include "lib/log.h"
#include "daemon/controller/domain/mail.h"
#include "daemon/controller/domain/queues.h"
#include "daemon/controller/domain/quota.h"
#include "daemon/controller/store/store.h"
#include "daemon/controller/store/txq.h"

static int jobs_ckpt_write(struct jobs *, struct job *, struct run *,
    uint64_t, const char *, int64_t, int64_t, struct cerr *);
static void jobs_ckpt_flush(struct jobs *, struct job *, int64_t);

/* Room for one more job in the table. 0 or -1 (ENOMEM). */
int
jobs_reserve(struct jobs *js)
{
	struct job **tab;
	size_t cap;

	if (jobs_keys_reserve(&js->keys, 1) == -1)
		return -1;
	if (js->n < js->cap)
		return 0;
	cap = js->cap ? js->cap * 2 : 256;
	if ((tab = reallocarray(js->tab, cap, sizeof(*tab))) == NULL)
		return -1;
	js->tab = tab;
	js->cap = cap;
	return 0;
}

int
jobs_append(struct jobs *js, struct job *job)
{
	if (jobs_reserve(js) == -1)
		return -1;
	js->tab[js->n++] = job;
	jobs_keys_add(&js->keys, job);
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

	jobs_keys_clear(&js->keys);
	for (i = 0; i < js->n; i++)
		job_free(js->tab[i]);
	js->n = 0;
	for (i = 0; i < js->nruns; i++) {
		free(js->runs[i].done);
		free(js->runs[i].pend_path);
	}
	free(js->runs);
	js->runs = NULL;
	js->nruns = 0;
}

/* Jobs that count toward a user's max_pending_per_user: those waiting
 * for a start (a launching job is still PENDING). */
bool
jobs_waiting(enum job_state s)
{
	return s == JOB_PENDING || s == JOB_RESTARTING;
}

bool
jobs_is_active(const struct job *job)
{
	return job->nplace > 0 && !job_state_is_final(job->state);
}

static struct run *
jobs_run(struct jobs *js, const struct job *job)
{
	struct run *r;
	size_t i;

	for (i = 0; i < js->nruns; i++)
		if (js->runs[i].job_id == job->id)
			return &js->runs[i];
	if ((r = reallocarray(js->runs, js->nruns + 1, sizeof(*r))) == NULL)
		return NULL;
	js->runs = r;
	r = &js->runs[js->nruns];
	memset(r, 0, sizeof(*r));
	r->job_id = job->id;
	r->attempt = job->attempt;
	r->nranks = job_nranks(job);
	if ((r->done = calloc(r->nranks ? r->nranks : 1, 1)) == NULL)
		return NULL;
	js->nruns++;
	return r;
}

static void
jobs_run_drop(struct jobs *js, uint64_t id)
{
	size_t i;

	for (i = 0; i < js->nruns; i++) {
		if (js->runs[i].job_id != id)
			continue;
		free(js->runs[i].done);
		free(js->runs[i].pend_path);
		js->runs[i] = js->runs[--js->nruns];
		return;
	}
}

/* Room for one more run and its rank flags, taken before a write so
 * that installing the run once the write took cannot fail. The flags, or
 * NULL (ENOMEM). */
static uint8_t *
jobs_run_reserve(struct jobs *js, size_t nranks)
{
	struct run *r;

	if ((r = reallocarray(js->runs, js->nruns + 1, sizeof(*r))) == NULL)
		return NULL;
	js->runs = r;
	return calloc(nranks ? nranks : 1, 1);
}

/* The run of job's current attempt, with done from jobs_run_reserve,
 * replacing the one it had. */
static void
jobs_run_install(struct jobs *js, const struct job *job, uint8_t *done)
{
	struct run *r;

	jobs_run_drop(js, job->id);
	r = &js->runs[js->nruns++];
	memset(r, 0, sizeof(*r));
	r->job_id = job->id;
	r->attempt = job->attempt;
	r->nranks = job_nranks(job);
	r->done = done;
}

static void
jobs_run_mark(struct run *r, unsigned rank)
{
	r->done[rank] = 1;
	r->ndone++;
}

static int
jobs_run_exit_cb(unsigned rank, int wait_status, void *arg)
{
	struct run *r = arg;

	if (rank < r->nranks && !r->done[rank]) {
		r->done[rank] = 1;
		r->ndone++;
		if (wait_status != 0)
			r->failed = true;
	}
	return 0;
}

/* Rebuild the rank tracking of active jobs from the recorded exits. */
static int
jobs_load_runs(struct jobs *js, struct cerr *err)
{
	struct run *r;
	size_t i;

	for (i = 0; i < js->n; i++) {
		if (!jobs_is_active(js->tab[i]))
			continue;
		if ((r = jobs_run(js, js->tab[i])) == NULL)
			return cerr_set(err, ERR_INTERNAL, "out of memory");
		if (store_task_exits_load(js->st, r->job_id, r->attempt,
		    jobs_run_exit_cb, r, err) == -1)
			return -1;
	}
	return 0;
}

/* Count every user's waiting jobs afresh (at load): from here on each
 * state change keeps the counts. */
static int
jobs_count_waiting(struct jobs *js, struct cerr *err)
{
	size_t i;

	quota_pending_reset(js->quota);
	for (i = 0; i < js->n; i++)
		if (jobs_waiting(js->tab[i]->state) &&
		    quota_pending_add(js->quota, js->tab[i]->user, 1) == -1)
			return cerr_set(err, ERR_INTERNAL, "out of memory");
	return 0;
}

int
jobs_reload(struct jobs *js, struct cerr *err)
{
	jobs_drop(js);
	if (store_jobs_load(js->st, jobs_load_cb, js, err) == -1 ||
	    jobs_load_runs(js, err) == -1 || jobs_count_waiting(js, err) == -1)
		return -1;
	return store_max_job_id(js->st, &js->last_id, err);
}

int
jobs_note_foreign_id(struct jobs *js, uint64_t id, struct cerr *err)
{
	if (id <= js->last_id || id - js->last_id > JOBS_FOREIGN_ID_SLACK)
		return 0;
	if (txq_join(js->q, err) == -1 || store_mark(js->st, err) == -1)
		return -1;
	if (store_job_id_bump(js->st, id, err) == -1 ||
	    store_keep(js->st, err) == -1) {
		store_undo(js->st);
		return -1;
	}
	log_warnx("job %" PRIu64 " runs on a node but is not in the database "
	    "(restored from an older copy?): ids up to it are not given out "
	    "again", id);
	js->last_id = id;
	return 0;
}

struct jobs *
jobs_create(struct store *st, struct txq *q, const struct job_limits *limits,
    struct queues *qs, struct cerr *err)
{
	struct jobs *js;

	if ((js = calloc(1, sizeof(*js))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	js->st = st;
	js->q = q;
	js->queues = qs;
	js->limits = *limits;
	js->early_fail_ms = JOBS_EARLY_FAIL_WINDOW_MS;
	if ((js->quota = quota_create(&(struct quota_opts){
	    .max_pending = limits->max_pending_per_user,
	    .rate = limits->submit_rate,
	    .burst = limits->submit_burst })) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		jobs_destroy(js);
		return NULL;
	}
	if (jobs_reload(js, err) == -1) {
		jobs_destroy(js);
		return NULL;
	}
	return js;
}

void
jobs_set_limits(struct jobs *js, const struct job_limits *limits)
{
	js->limits = *limits;
	quota_set_opts(js->quota, &(struct quota_opts){
	    .max_pending = limits->max_pending_per_user,
	    .rate = limits->submit_rate,
	    .burst = limits->submit_burst });
}

void
jobs_destroy(struct jobs *js)
{
	if (js == NULL)
		return;
	jobs_drop(js);
	quota_destroy(js->quota);
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
int
jobs_write_rows(struct jobs *js, const struct job *job, bool insert,
    int64_t now_ms, const char *kind, const char *actor, const char *detail,
    struct cerr *err)
{
	if ((insert ? store_job_insert(js->st, job, err) :
	    store_job_update(js->st, job, err)) == -1 ||
	    (!insert && store_job_placement(js->st, job->id, job->place,
	    job->nplace, err) == -1) ||
	    store_event_append(js->st, now_ms, job->id, NULL, kind, actor,
	    detail, err) == -1 || jobs_account_write(js, job, err) == -1)
		return -1;
	return 0;
}

int
jobs_write(struct jobs *js, const struct job *job, bool insert,
    int64_t now_ms, const char *kind, const char *actor, const char *detail,
    struct cerr *err)
{
	if (txq_join(js->q, err) == -1 || store_mark(js->st, err) == -1)
		return -1;
	if (jobs_write_rows(js, job, insert, now_ms, kind, actor, detail,
	    err) == -1 || store_keep(js->st, err) == -1) {
		store_undo(js->st);
		return -1;
	}
	return 0;
}

int
jobs_submit_existing(struct jobs *js, const struct peer *who,
    const struct job_spec *spec, uint64_t *id, struct cerr *err)
{
	const struct job *job;

	if (spec->idem_key == NULL)
		return 0;
	if (job_idem_key_check(spec->idem_key, err) == -1)
		return -1;
	if ((job = jobs_keys_find(&js->keys, who->name, spec->idem_key)) ==
	    NULL)
		return 0;
	/* The key is the request's name: the same key with another
	 * request is a mistake (two steps of a workflow given one key),
	 * and answering with this job would hide it. Jobs made before
	 * fingerprints, and callers without one, match on the key. */
	if (spec->has_idem_fp && job->spec.has_idem_fp &&
	    memcmp(spec->idem_fp, job->spec.idem_fp, JOB_IDEM_FP_LEN) != 0)
		return cerr_set(err, ERR_CONFLICT, "--idempotency-key '%s' "
		    "was used for job %" PRIu64 ", which asked for something "
		    "else (command, script or options; the environment does "
		    "not count): use another key for another request",
		    spec->idem_key, job->id);
	*id = job->id;
	return 1;
}

/* A key the user's jobs already hold is refused (ERR_CONFLICT): callers
 * that want the earlier job instead ask jobs_submit_existing first, as
 * rpc_submit does. */
int
jobs_submit(struct jobs *js, const struct peer *who, struct job_spec *spec,
    int64_t now_ms, uint64_t *id, struct cerr *err)
{
	const struct job *held;
	struct job *job;
	char detail[256];

	cerr_clear(err);
	/* Admins are held to the same limits: they submit as themselves,
	 * and a runaway script is as likely from them. With queues, a
	 * raised priority is the queue's to allow (its admins may), so
	 * queues_admit checks it rather than job_spec_validate. */
	if (job_spec_validate(spec, js->queues != NULL ?
	    who->role | ROLE_ADMIN : who->role, &js->limits, err) == -1 ||
	    (js->queues != NULL &&
	    queues_admit(js->queues, who, spec, err) == -1) ||
	    quota_submit_check(js->quota, who->name, now_ms, err) == -1 ||
	    jobs_depend_check(js, who, spec, err) == -1) {
		job_spec_clear(spec);
		return -1;
	}
	if (spec->idem_key != NULL && (held = jobs_keys_find(&js->keys,
	    who->name, spec->idem_key)) != NULL) {
		cerr_set(err, ERR_CONFLICT, "--idempotency-key '%s': already "
		    "the key of job %" PRIu64, spec->idem_key, held->id);
		job_spec_clear(spec);
		return -1;
	}
	if (spec->array != NULL)
		return jobs_array_submit(js, who, spec, now_ms, id, err);
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
	if (job->spec.hold)
		job->hold = JOB_HOLD_USER;
	snprintf(detail, sizeof(detail), "name=%s nodes=%u:%u gpus_per_node=%u"
	    "%s%s%s", job->spec.name, job->spec.nodes_min, job->spec.nodes_max,
	    job->spec.gpus_per_node, job->spec.queue != NULL ? " queue=" : "",
	    job->spec.queue != NULL ? job->spec.queue : "",
	    job->spec.service ? " service" : "");
	/* Room in the table first: a row written and then not added
	 * would be committed for a submit that answered an error. */
	if (jobs_reserve(js) == -1) {
		job_free(job);
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	if (jobs_write(js, job, true, now_ms, "submit", who->name, detail,
	    err) == -1) {
		job_free(job);
		return -1;
	}
	jobs_append(js, job);
	js->last_id = job->id;
	/* The entry exists since quota_submit_check: this cannot fail. */
	quota_pending_add(js->quota, job->user, 1);
	quota_submit_take(js->quota, job->user, now_ms);
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
	char reason[PEER_NAME_MAX + 32];

	if (job == NULL)
		return cerr_set(err, ERR_NOT_FOUND, "no job %" PRIu64, id);
	if (jobs_authorize(js, who, job, JOBS_ACT_CANCEL, NULL, err) == -1)
		return -1;
	if (job_state_is_final(job->state))
		return cerr_set(err, ERR_CONFLICT,
		    "job %" PRIu64 " already ended (%s)", id,
		    job_state_name(job->state));
	snprintf(reason, sizeof(reason), "cancelled by %s", who->name);
	if (jobs_transition(js, job, JOB_CANCELLED, reason, now_ms, "cancel",
	    who->name, NULL, 0, err) == -1)
		return -1;
	*state = job->state;
	log_info("job %" PRIu64 ": cancelled by %s", id, who->name);
	return 0;
}

/* The next version of job, as a shallow copy: state with reason (a copy
 * of its own) and, when next_place is non-NULL, that placement (copied;
 * n may be 0 to clear it); start_ms and end_ms follow the state. The
 * caller may change more of next, then hands it to jobs_apply. 0, or -1
 * with err and nothing allocated. */
int
jobs_next(const struct job *job, enum job_state state, const char *reason,
    const struct placement *next_place, size_t n, int64_t now_ms,
    struct job *next, struct cerr *err)
{
	struct placement *copy = NULL;
	char *r;

	if ((r = strdup(reason)) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	if (next_place != NULL && n > 0) {
		if ((copy = calloc(n, sizeof(*copy))) == NULL) {
			free(r);
			return cerr_set(err, ERR_INTERNAL, "out of memory");
		}
		memcpy(copy, next_place, n * sizeof(*copy));
	}
	*next = *job;
	next->state = state;
	next->reason = r;
	next->expected_start_ms = 0;	/* the next pass says again */
	if (next_place != NULL) {
		next->place = copy;
		next->nplace = n;
	}
	if (state == JOB_RUNNING && job->state != JOB_RUNNING)
		next->start_ms = now_ms;
	if (job_state_is_final(state))
		next->end_ms = now_ms;
	return 0;
}

/* Free what next owns that job does not: a next that was not applied,
 * or (swapped) what the job it replaced no longer shares with it. */
void
jobs_next_discard(const struct job *job, struct job *next)
{
	if (next->reason != job->reason)
		free(next->reason);
	if (next->place != job->place)
		free(next->place);
	if (next->prev_place != job->prev_place)
		free(next->prev_place);
	if (next->avoid != job->avoid)
		free(next->avoid);
	if (next->ckpt_path != job->ckpt_path)
		free(next->ckpt_path);
}

/* Write next (the job's row, its placement and an event with kind, actor
 * and detail), and only once that took make it the job. 0, or -1 with
 * err, next discarded and job as it was: the table keeps matching the
 * database whatever fails. */
int
jobs_apply(struct jobs *js, struct job *job, struct job *next,
    int64_t now_ms, const char *kind, const char *actor, const char *detail,
    struct cerr *err)
{
	jobs_account_end(js, job, next, now_ms);
	if (jobs_write(js, next, false, now_ms, kind, actor, detail,
	    err) == -1) {
		jobs_next_discard(job, next);
		return -1;
	}
	jobs_install(js, job, next, now_ms);
	return 0;
}

void
jobs_install(struct jobs *js, struct job *job, struct job *next,
    int64_t now_ms)
{
	enum job_state from = job->state;

	/* What job owns and next no longer shares goes. */
	jobs_next_discard(next, job);
	/* The owner has an entry since the job was submitted or loaded. */
	if (jobs_waiting(job->state) != jobs_waiting(next->state))
		quota_pending_add(js->quota, job->user,
		    jobs_waiting(next->state) ? 1 : -1);
	*job = *next;
	if (!jobs_is_active(job))
		jobs_run_drop(js, job->id);
	mail_transition(js->out, from, job, now_ms);
}

void
jobs_set_outbox(struct jobs *js, const struct outbox *out)
{
	js->out = out;
}

/* Move job to state with reason, writing the row (and its placement) and
 * an event first; the table changes only if the writes took. next_place
 * replaces the placement when non-NULL (n may be 0 to clear it). */
int
jobs_transition(struct jobs *js, struct job *job, enum job_state state,
    const char *reason, int64_t now_ms, const char *kind, const char *actor,
    const struct placement *next_place, size_t n, struct cerr *err)
{
	struct job next;

	if (jobs_next(job, state, reason, next_place, n, now_ms, &next,
	    err) == -1)
		return -1;
	return jobs_apply(js, job, &next, now_ms, kind, actor, reason, err);
}

struct job *
jobs_find(struct jobs *js, uint64_t id, struct cerr *err)
{
	struct job *job = (struct job *)jobs_get(js, id);

	if (job == NULL)
		cerr_set(err, ERR_NOT_FOUND, "no job %" PRIu64, id);
	return job;
}

int
jobs_allocate(struct jobs *js, uint64_t id, const struct placement *place,
    size_t n, int64_t now_ms, struct cerr *err)
{
	struct job *job, next;
	uint8_t *done;

	if ((job = jobs_find(js, id, err)) == NULL)
		return -1;
	if (job->state != JOB_PENDING && job->state != JOB_RESTARTING)
		return cerr_set(err, ERR_CONFLICT, "job %" PRIu64 " is %s",
		    id, job_state_name(job->state));
	if (jobs_next(job, job->state, "Launching", place, n, now_ms, &next,
	    err) == -1)
		return -1;
	/* A new attempt: agents key their work on it, so a start that
	 * failed half-way can never be mistaken for this one. */
	next.attempt++;
	/* Its rank tracking is ready before the write, so that a job
	 * recorded as launching always has it. */
	if ((done = jobs_run_reserve(js, job_nranks(&next))) == NULL) {
		jobs_next_discard(job, &next);
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	if (jobs_apply(js, job, &next, now_ms, "allocate", "cohortd",
	    "Launching", err) == -1) {
		free(done);
		return -1;
	}
	jobs_run_install(js, job, done);
	return 0;
}

int
jobs_mark_running(struct jobs *js, uint64_t id, int64_t now_ms,
    struct cerr *err)
{
	struct job *job, next;

	if ((job = jobs_find(js, id, err)) == NULL)
		return -1;
	if (!jobs_is_active(job))
		return cerr_set(err, ERR_CONFLICT, "job %" PRIu64 " is %s",
		    id, job_state_name(job->state));
	if (jobs_next(job, JOB_RUNNING, "", NULL, 0, now_ms, &next,
	    err) == -1)
		return -1;
	if (job->state == JOB_RESTARTING)
		next.last_restart_ms = now_ms;
	/* It started: the next failure to start backs off from 1 s (a
	 * service's back-off carries over until it has run a while). */
	if (!job->spec.service)
		next.backoff_ms = 0;
	next.not_before_ms = 0;
	if (jobs_apply(js, job, &next, now_ms, "running", "cohortd", "",
	    err) == -1)
		return -1;
	log_info("job %" PRIu64 ": RUNNING on %zu node(s)", id, job->nplace);
	return 0;
}

enum start_failure
jobs_start_failure_class(enum err_code code)
{
	switch (code) {
	case ERR_INVALID:
	case ERR_DENIED:
	case ERR_NOT_FOUND:
		return START_PERMANENT;
	default:
		return START_TRANSIENT;
	}
}

int64_t
jobs_backoff_next(int64_t prev_ms)
{
	if (prev_ms < JOBS_BACKOFF_MIN_MS)
		return JOBS_BACKOFF_MIN_MS;
	if (prev_ms >= JOBS_BACKOFF_MAX_MS / 2)
		return JOBS_BACKOFF_MAX_MS;
	return prev_ms * 2;
}

bool
jobs_backing_off(const struct job *job, int64_t now_ms)
{
	return job->not_before_ms > now_ms;
}

int
jobs_start_failed(struct jobs *js, uint64_t id, enum start_failure how,
    const char *reason, int64_t now_ms, struct cerr *err)
{
	struct job *job, next;
	const char *why = reason;
	char text[800];
	int64_t backoff;

	if ((job = jobs_find(js, id, err)) == NULL)
		return -1;
	if (how == START_PERMANENT) {
		if (jobs_transition(js, job, JOB_FAILED, reason, now_ms,
		    "start-failed", "cohortd", NULL, 0, err) == -1)
			return -1;
		log_warnx("job %" PRIu64 ": start failed: %s", id, why);
		return 0;
	}
	backoff = how == START_TRANSIENT ? jobs_backoff_next(job->backoff_ms) :
	    0;
	if (backoff > 0) {
		snprintf(text, sizeof(text), "StartBackoff: %s; retry in %"
		    PRId64 " s", reason, backoff / 1000);
		reason = text;
	}
	/* A restarting job keeps its place at the head of the queue. */
	if (jobs_next(job, job->state == JOB_RESTARTING ? JOB_RESTARTING :
	    JOB_PENDING, reason, job->place, 0, now_ms, &next, err) == -1)
		return -1;
	if (backoff > 0) {
		next.backoff_ms = backoff;
		next.not_before_ms = now_ms + backoff;
	}
	if (jobs_apply(js, job, &next, now_ms, "start-failed", "cohortd",
	    reason, err) == -1)
		return -1;
	log_warnx("job %" PRIu64 ": start failed: %s", id, why);
	return 0;
}

/* Record a task's end (kept for the agent's acknowledgement whatever it
 * means for the job). 1 when it is news for the job's current run (*jobp
 * and *runp say where; the caller marks the rank done once what it means
 * is written, so that an exit whose consequence could not be written is
 * news again when the agent repeats it), 0 when it changes nothing, -1
 * with err. */
static int
jobs_record_exit(struct jobs *js, uint64_t id, uint32_t restart,
    unsigned rank, int wait_status, int64_t now_ms, struct job **jobp,
    struct run **runp, enum job_state *state, struct cerr *err)
{
	struct job *job;
	struct run *r;

	if ((job = jobs_find(js, id, err)) == NULL)
		return -1;
	*state = job->state;
	if (txq_join(js->q, err) == -1 ||
	    store_task_exit(js->st, id, restart, rank, wait_status, now_ms,
	    err) == -1)
		return -1;
	if (!jobs_is_active(job) || restart != job->attempt ||
	    (r = jobs_run(js, job)) == NULL || rank >= r->nranks ||
	    r->done[rank])
		return 0;
	*jobp = job;
	*runp = r;
	return 1;
}

static int jobs_fail_over_job(struct jobs *, struct job *, const char *,
    bool, int64_t, int64_t, const int32_t *, int64_t, enum job_state *,
    struct cerr *);
static int jobs_service_exit(struct jobs *, struct job *, unsigned, int,
    int64_t, enum job_state *, struct cerr *);

int
jobs_task_exit(struct jobs *js, uint64_t id, uint32_t restart,
    unsigned rank, int wait_status, const char *why, int64_t now_ms,
    enum job_state *state, struct cerr *err)
{
	struct job *job, next;
	struct run *r;
	char reason[400], cause[480], task[32];
	int32_t code;
	int64_t backoff, ran;
	int rc;

	if ((rc = jobs_record_exit(js, id, restart, rank, wait_status, now_ms,
	    &job, &r, state, err)) != 1)
		return rc;
	if (job->spec.service)
		return jobs_service_exit(js, job, rank, wait_status, now_ms,
		    state, err);
	if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) {
		if (r->ndone + 1 < r->nranks) {
			jobs_run_mark(r, rank);
			return 0;
		}
		if (jobs_next(job, JOB_COMPLETED, "", NULL, 0, now_ms, &next,
		    err) == -1)
			return -1;
		next.has_exit = true;
		next.exit_code = 0;
		/* Its run goes with the transition. */
		if (jobs_apply(js, job, &next, now_ms, "completed", "cohortd",
		    "", err) == -1)
			return -1;
		log_info("job %" PRIu64 ": COMPLETED", id);
		*state = job->state;
		return 0;
	}
	if (job->spec.batch)
		snprintf(task, sizeof(task), "the batch script");
	else
		snprintf(task, sizeof(task), "rank %u", rank);
	if (WIFEXITED(wait_status)) {
		code = WEXITSTATUS(wait_status);
		/* 127 is the supervisor's "could not run it" (with the
		 * agent's why) or the shell's "not found" (in the log). */
		if (why != NULL && why[0] != '\0')
			snprintf(reason, sizeof(reason), "%s could not start: "
			    "%s", task, why);
		else
			snprintf(reason, sizeof(reason), "%s exited with %d%s",
			    task, code, code == 127 ? " (the command could not "
			    "be started; see cohort logs --stderr)" : "");
	} else {
		code = 128 + WTERMSIG(wait_status);
		snprintf(reason, sizeof(reason), "%s killed by signal %d",
		    task, WTERMSIG(wait_status));
	}
	/* A failed task fails the gang: restart it (or FAILED once its
	 * restarts are used up), after a back-off when it failed early
	 * (jobs_early_backoff). Its run goes with the transition. */
	/* The last failure it may have ends it: nothing to retry. */
	backoff = job->restarts < job->spec.max_restarts ?
	    jobs_early_backoff(js, job, now_ms, &ran) : 0;
	if (backoff > 0) {
		snprintf(cause, sizeof(cause), "FailedEarly: %s after %" PRId64
		    " s; retry in %" PRId64 " s", reason, ran / 1000,
		    backoff / 1000);
		rc = jobs_fail_over_job(js, job, cause, true, now_ms, now_ms,
		    &code, backoff, state, err);
	} else
		rc = jobs_fail_over_job(js, job, reason, true, now_ms, now_ms,
		    &code, 0, state, err);
	/* Memory only: the next early failure doubles it, a failure
	 * after a longer run starts over. */
	if (rc == 0)
		job->early_backoff_ms = backoff;
	return rc;
}

/* A service's task ended (exit 0 included): the gang restarts, not
 * counted, after a back-off that doubles while it keeps ending within
 * JOBS_SERVICE_STABLE_MS of its start and starts over from the minimum
 * once it ran longer. */
static int
jobs_service_exit(struct jobs *js, struct job *job, unsigned rank,
    int wait_status, int64_t now_ms, enum job_state *state,
    struct cerr *err)
{
	char reason[400];
	int32_t code;
	int64_t backoff;

	code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) :
	    128 + WTERMSIG(wait_status);
	backoff = job->start_ms > 0 && now_ms - job->start_ms >=
	    JOBS_SERVICE_STABLE_MS ? JOBS_BACKOFF_MIN_MS :
	    jobs_backoff_next(job->backoff_ms);
	if (WIFEXITED(wait_status))
		snprintf(reason, sizeof(reason), "service: rank %u exited "
		    "with %d; restart in %" PRId64 " s", rank, code,
		    backoff / 1000);
	else
		snprintf(reason, sizeof(reason), "service: rank %u killed by "
		    "signal %d; restart in %" PRId64 " s", rank,
		    WTERMSIG(wait_status), backoff / 1000);
	return jobs_fail_over_job(js, job, reason, false, now_ms, now_ms,
	    &code, backoff, state, err);
}

int
jobs_task_start_failed(struct jobs *js, uint64_t id, uint32_t restart,
    unsigned rank, int wait_status, const char *why, int64_t now_ms,
    enum job_state *state, struct cerr *err)
{
	struct job *job, next;
	struct run *r;
	char reason[400];
	int rc;

	if ((rc = jobs_record_exit(js, id, restart, rank, wait_status, now_ms,
	    &job, &r, state, err)) != 1)
		return rc;
	snprintf(reason, sizeof(reason), "rank %u could not start: %s", rank,
	    why != NULL && why[0] != '\0' ? why : "no reason given");
	if (jobs_next(job, JOB_FAILED, reason, NULL, 0, now_ms, &next,
	    err) == -1)
		return -1;
	next.has_exit = true;
	next.exit_code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) :
	    128 + WTERMSIG(wait_status);
	if (jobs_apply(js, job, &next, now_ms, "start-failed", "cohortd",
	    reason, err) == -1)
		return -1;
	log_warnx("job %" PRIu64 ": FAILED: %s", id, reason);
	*state = job->state;
	return 0;
}

int
jobs_end(struct jobs *js, uint64_t id, enum job_state state,
    const char *reason, int64_t now_ms, struct cerr *err)
{
	struct job *job;

	if ((job = jobs_find(js, id, err)) == NULL)
		return -1;
	if (job_state_is_final(job->state))
		return cerr_set(err, ERR_CONFLICT, "job %" PRIu64
		    " already ended (%s)", id, job_state_name(job->state));
	if (jobs_transition(js, job, state, reason, now_ms,
	    job_state_name(state), "cohortd", NULL, 0, err) == -1)
		return -1;
	log_info("job %" PRIu64 ": %s: %s", id, job_state_name(state), reason);
	return 0;
}

/* Set the reason of a job known to be pending (jobs_set_pending_reason's
 * checks done). */
static void
jobs_reason_set(struct job *job, const char *reason)
{
	char text[400];
	size_t keep;
	char *r;

	job->expected_start_ms = 0;	/* jobs_set_expected_start follows */
	/* A preempted (or requeued) job says so until it runs again:
	 * "Preempted by 12 of teamb; Resources". The first letter first:
	 * this runs for every pending job in every pass. */
	if ((job->reason[0] == JOBS_PREEMPTED_PREFIX[0] &&
	    strncmp(job->reason, JOBS_PREEMPTED_PREFIX,
	    strlen(JOBS_PREEMPTED_PREFIX)) == 0) ||
	    (job->reason[0] == JOBS_REQUEUED_PREFIX[0] &&
	    strncmp(job->reason, JOBS_REQUEUED_PREFIX,
	    strlen(JOBS_REQUEUED_PREFIX)) == 0)) {
		keep = strcspn(job->reason, ";");
		snprintf(text, sizeof(text), "%.*s; %s", (int)keep,
		    job->reason, reason);
		reason = text;
	}
	if (strcmp(job->reason, reason) == 0 || (r = strdup(reason)) == NULL)
		return;
	free(job->reason);
	job->reason = r;
}

void
jobs_set_pending_reason(struct jobs *js, uint64_t id, const char *reason)
{
	struct job *job = (struct job *)jobs_get(js, id);

	if (job == NULL || job->state != JOB_PENDING || jobs_is_active(job))
		return;
	jobs_reason_set(job, reason);
}

void
jobs_set_launch_reason(struct jobs *js, uint64_t id, const char *reason)
{
	struct job *job = (struct job *)jobs_get(js, id);

	if (job == NULL || !jobs_is_active(job) ||
	    (job->state != JOB_PENDING && job->state != JOB_RESTARTING))
		return;
	jobs_reason_set(job, reason);
}

void
jobs_set_image_digest(struct jobs *js, uint64_t id, const char *digest)
{
	struct job *job = (struct job *)jobs_get(js, id);

	if (job == NULL || !ctr_digest_valid(digest))
		return;
	snprintf(job->image_digest, sizeof(job->image_digest), "%s", digest);
}

void
jobs_set_waiting(struct jobs *js, const struct job *cjob, const char *reason,
    int64_t start_ms)
{
	struct job *job = (struct job *)cjob;

	if (job->state != JOB_PENDING || jobs_is_active(job))
		return;
	jobs_reason_set(job, reason);
	job->expected_start_ms = start_ms > 0 ? start_ms : 0;
}

int
jobs_fail_over(struct jobs *js, uint64_t id, const char *cause, bool counted,
    int64_t failure_ms, int64_t now_ms, enum job_state *state,
    struct cerr *err)
{
	struct job *job;

	if ((job = jobs_find(js, id, err)) == NULL)
		return -1;
	if (job_state_is_final(job->state))
		return cerr_set(err, ERR_CONFLICT, "job %" PRIu64
		    " already ended (%s)", id, job_state_name(job->state));
	return jobs_fail_over_job(js, job, cause, counted, failure_ms, now_ms,
	    NULL, 0, state, err);
}

int
jobs_preempt(struct jobs *js, uint64_t id, const char *cause,
    int64_t failure_ms, int64_t now_ms, uint64_t *lost_ms, struct cerr *err)
{
	struct job *job, next;
	char detail[600];
	uint64_t lost;
	bool requeue = strncmp(cause, JOBS_REQUEUED_PREFIX,
	    strlen(JOBS_REQUEUED_PREFIX)) == 0;

	if ((job = jobs_find(js, id, err)) == NULL)
		return -1;
	if (!jobs_is_active(job))
		return cerr_set(err, ERR_CONFLICT, "job %" PRIu64 " is %s",
		    id, job_state_name(job->state));
	jobs_ckpt_flush(js, job, now_ms);
	lost = job_unsaved_ms(job, failure_ms);
	/* Back to the queue, its allocation released and no nodes kept:
	 * they are the preemptor's now. */
	if (jobs_next(job, JOB_PENDING, cause, job->place, 0, now_ms, &next,
	    err) == -1)
		return -1;
	next.lost_work_ms += lost;
	/* cohort requeue takes the same path, and is no preemption. */
	if (!requeue)
		next.preemptions++;
	if (job->has_ckpt)
		snprintf(detail, sizeof(detail), "%s; resumes from checkpoint "
		    "step %" PRIu64 "; %" PRIu64 " s of work lost", cause,
		    job->ckpt_step, lost / 1000);
	else
		snprintf(detail, sizeof(detail), "%s; no checkpoint, restarts "
		    "from the beginning; %" PRIu64 " s of work lost", cause,
		    lost / 1000);
	if (jobs_apply(js, job, &next, now_ms, requeue ? "requeued" :
	    "preempt", "cohortd", detail, err) == -1)
		return -1;
	log_info("job %" PRIu64 ": PENDING: %s", id, detail);
	if (lost_ms != NULL)
		*lost_ms = lost;
	return 0;
}

/* jobs_fail_over of job, recording exit_code (a failed task's) when not
 * NULL, restarting it not before now + backoff (0: at once; a service).
 * Every change is made in a copy that becomes the job only once it is
 * written: on -1 the job is as it was (the checkpoint held back may have
 * been written: it is true either way). */
static int
jobs_fail_over_job(struct jobs *js, struct job *job, const char *cause,
    bool counted, int64_t failure_ms, int64_t now_ms,
    const int32_t *exit_code, int64_t backoff, enum job_state *state,
    struct cerr *err)
{
	struct job next;
	struct placement *prev;
	char reason[320];
	uint64_t lost;
	bool give_up;

	*state = job->state;
	jobs_ckpt_flush(js, job, now_ms);
	/* Work since the last checkpoint of this run is lost. */
	lost = job_unsaved_ms(job, failure_ms);
	give_up = counted && job->restarts >= job->spec.max_restarts;
	if (give_up)
		snprintf(reason, sizeof(reason), "max restarts (%u) reached; "
		    "last failure: %s", job->spec.max_restarts, cause);
	else
		snprintf(reason, sizeof(reason), "%s", cause);
	/* A restart releases the allocation (the next pass places it
	 * again); a job that fails keeps it on record as its last. */
	if (jobs_next(job, give_up ? JOB_FAILED : JOB_RESTARTING, reason,
	    give_up ? NULL : job->place, 0, now_ms, &next, err) == -1)
		return -1;
	next.lost_work_ms += lost;
	next.last_failure_ms = failure_ms;
	if (exit_code != NULL) {
		next.has_exit = true;
		next.exit_code = *exit_code;
	}
	if (backoff > 0) {
		next.backoff_ms = backoff;
		next.not_before_ms = now_ms + backoff;
	}
	if (!give_up) {
		next.restarts += counted ? 1 : 0;
		/* Remember the gang: the next placement keeps its healthy
		 * nodes. */
		if (job->nplace > 0) {
			if ((prev = calloc(job->nplace, sizeof(*prev))) ==
			    NULL) {
				jobs_next_discard(job, &next);
				return cerr_set(err, ERR_INTERNAL,
				    "out of memory");
			}
			memcpy(prev, job->place, job->nplace * sizeof(*prev));
			next.prev_place = prev;
			next.nprev = job->nplace;
		}
	}
	if (jobs_apply(js, job, &next, now_ms, give_up ? "failed" : "restart",
	    "cohortd", reason, err) == -1)
		return -1;
	*state = job->state;
	if (give_up)
		log_warnx("job %" PRIu64 ": FAILED: %s", job->id, reason);
	else
		log_warnx("job %" PRIu64 ": RESTARTING (restart %u of %u, %"
		    PRIu64 " ms of work lost): %s", job->id, job->restarts,
		    job->spec.max_restarts, lost, cause);
	return 0;
}

int
jobs_begin_resize(struct jobs *js, uint64_t id, const char *why,
    int64_t now_ms, struct cerr *err)
{
	struct job *job;

	if ((job = jobs_find(js, id, err)) == NULL)
		return -1;
	if (job->state != JOB_RUNNING)
		return cerr_set(err, ERR_CONFLICT, "job %" PRIu64 " is %s",
		    id, job_state_name(job->state));
	if (jobs_transition(js, job, JOB_RESIZING, why, now_ms, "resize",
	    "cohortd", NULL, 0, err) == -1)
		return -1;
	log_info("job %" PRIu64 ": RESIZING: %s", id, why);
	return 0;
}


int
jobs_checkpoint(struct jobs *js, uint64_t id, uint32_t attempt, uint64_t step,
    const char *path, int64_t written_ms, int64_t now_ms, struct cerr *err)
{
	struct job *job = (struct job *)jobs_get(js, id);
	struct run *r;
	char *p;

	if (job == NULL || job->attempt != attempt || !jobs_is_active(job))
		return 0;
	if (job->has_ckpt && job->ckpt_step == step &&
	    strcmp(job->ckpt_path, path) == 0)
		return 0;
	r = jobs_run(js, job);
	if (r != NULL && r->ckpt_set_ms != 0 && now_ms >= r->ckpt_set_ms &&
	    now_ms - r->ckpt_set_ms < JOBS_CKPT_MIN_INTERVAL_MS) {
		/* Too soon to write: kept for later (jobs_ckpt_flush). */
		if ((p = strdup(path)) == NULL)
			return cerr_set(err, ERR_INTERNAL, "out of memory");
		free(r->pend_path);
		r->pend_path = p;
		r->pend_step = step;
		r->pend_written_ms = written_ms;
		return 0;
	}
	return jobs_ckpt_write(js, job, r, step, path, written_ms, now_ms,
	    err);
}

/* Write checkpoint (step, path) of job's current run r (may be NULL):
 * 1, or -1 with err (nothing changed). */
static int
jobs_ckpt_write(struct jobs *js, struct job *job, struct run *r,
    uint64_t step, const char *path, int64_t written_ms, int64_t now_ms,
    struct cerr *err)
{
	struct job next;
	char detail[32];
	uint64_t measured;
	bool priced;
	char *p;

	if ((p = strdup(path)) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	next = *job;
	next.has_ckpt = true;
	next.ckpt_step = step;
	next.ckpt_path = p;
	next.ckpt_ms = written_ms;
	priced = r != NULL && r->cost_ms != 0 && r->cost_step == step;
	if (priced)
		goodput_reported(&next, r->cost_ms);
	else if (r != NULL && r->ckpt_asked_ms != 0)
		goodput_checkpoint(&next, r->ckpt_asked_ms, written_ms, now_ms);
	measured = next.gp.ckpt_ms - job->gp.ckpt_ms;
	/* Events are every user's to read; the path is private data
	 * (cohort show gives it to the job's owner and admins). */
	snprintf(detail, sizeof(detail), "step=%" PRIu64, step);
	if (jobs_apply(js, job, &next, now_ms, "checkpoint", "cohortd",
	    detail, err) == -1)
		return -1;
	if (r != NULL) {
		r->ckpt_set_ms = now_ms;
		r->ckpt_asked_ms = 0;
		r->cost_ms = 0;
		r->written = true;
		r->written_step = step;
		r->measured_ms = priced ? 0 : measured;
		r->priced = priced;
		free(r->pend_path);
		r->pend_path = NULL;
	}
	/* path may have been r->pend_path, freed above: the job's copy. */
	log_info("job %" PRIu64 ": checkpoint step=%" PRIu64 " path=%s",
	    job->id, step, p);
	return 1;
}

/* The job reported the cost of the checkpoint r last wrote only after
 * it was written (CKPT_MS renamed after LATEST): it replaces the time
 * counted from the signal, once per checkpoint. */
static void
jobs_ckpt_cost_late(struct jobs *js, struct job *job, struct run *r,
    uint32_t cost_ms, int64_t now_ms)
{
	struct job next;
	struct cerr err;
	char detail[48];

	if (r->priced)
		return;
	next = *job;
	goodput_reported_late(&next, r->measured_ms, cost_ms);
	snprintf(detail, sizeof(detail), "step=%" PRIu64 " cost_ms=%" PRIu32,
	    r->written_step, cost_ms);
	if (jobs_apply(js, job, &next, now_ms, "checkpoint", "cohortd",
	    detail, &err) == -1) {
		log_warnx("job %" PRIu64 ": %s", job->id, err.text);
		return;
	}
	r->priced = true;
	r->measured_ms = 0;
}

void
jobs_ckpt_cost(struct jobs *js, uint64_t id, uint32_t attempt,
    uint64_t step, uint32_t cost_ms, int64_t now_ms)
{
	const struct job *job = jobs_get(js, id);
	struct run *r;

	if (job == NULL || job->attempt != attempt || !jobs_is_active(job) ||
	    (r = jobs_run(js, job)) == NULL || cost_ms == 0 ||
	    cost_ms > GOODPUT_CKPT_COST_MAX_MS)
		return;
	if (r->written && r->written_step == step && job->has_ckpt &&
	    job->ckpt_step == step) {
		jobs_ckpt_cost_late(js, (struct job *)job, r, cost_ms, now_ms);
		return;
	}
	r->cost_step = step;
	r->cost_ms = cost_ms;
}

void
jobs_ckpt_asked(struct jobs *js, uint64_t id, uint32_t attempt,
    int64_t now_ms)
{
	const struct job *job = jobs_get(js, id);
	struct run *r;

	if (job == NULL || job->attempt != attempt || !jobs_is_active(job) ||
	    (r = jobs_run(js, job)) == NULL)
		return;
	if (r->ckpt_asked_ms == 0)
		r->ckpt_asked_ms = now_ms;
}

/* A checkpoint held back by the interval is written now, before the run
 * it belongs to ends. */
static void
jobs_ckpt_flush(struct jobs *js, struct job *job, int64_t now_ms)
{
	struct run *r = jobs_run(js, job);
	struct cerr err;

	if (r == NULL || r->pend_path == NULL)
		return;
	if (job->has_ckpt && job->ckpt_step == r->pend_step &&
	    strcmp(job->ckpt_path, r->pend_path) == 0) {
		free(r->pend_path);
		r->pend_path = NULL;
		return;
	}
	if (jobs_ckpt_write(js, job, r, r->pend_step, r->pend_path,
	    r->pend_written_ms, now_ms, &err) == -1)
		log_warnx("job %" PRIu64 ": %s", job->id, err.text);
}

void
jobs_progress(struct jobs *js, uint64_t id, uint32_t attempt,
    int64_t changed_ms)
{
	const struct job *job = jobs_get(js, id);
	struct run *r;

	if (job == NULL || job->attempt != attempt || !jobs_is_active(job) ||
	    (r = jobs_run(js, job)) == NULL)
		return;
	if (changed_ms > r->progress_ms)
		r->progress_ms = changed_ms;
}

int
jobs_event(struct jobs *js, uint64_t id, const char *node, const char *kind,
    const char *actor, const char *detail, int64_t now_ms, struct cerr *err)
{
	if (txq_join(js->q, err) == -1 || store_mark(js->st, err) == -1)
		return -1;
	if (store_event_append(js->st, now_ms, id, node, kind, actor, detail,
	    err) == -1 || store_keep(js->st, err) == -1) {
		store_undo(js->st);
		return -1;
	}
	return 0;
}

/* Whether the comma list has name. */
static bool
list_has(const char *list, const char *name)
{
	size_t len = strlen(name);
	const char *p;

	for (p = list; p != NULL; p = strchr(p, ','), p = p ? p + 1 : p)
		if (strncmp(p, name, len) == 0 && (p[len] == ',' ||
		    p[len] == '\0'))
			return true;
	return false;
}

int
jobs_avoid_node(struct jobs *js, uint64_t id, const char *node)
{
	struct job *job = (struct job *)jobs_get(js, id);
	unsigned n = job != NULL ? jobs_avoiding(job) : 0;
	size_t len;
	char *v;

	if (job == NULL)
		return -1;
	if (n > 0 && list_has(job->avoid, node))
		return 0;
	if (n == JOB_AVOID_MAX)
		return -1;
	len = (n > 0 ? strlen(job->avoid) + 1 : 0) + strlen(node) + 1;
	if ((v = malloc(len)) == NULL)
		return -1;
	snprintf(v, len, "%s%s%s", n > 0 ? job->avoid : "", n > 0 ? "," : "",
	    node);
	free(job->avoid);
	job->avoid = v;
	job->avoid_attempt = job->attempt;
	return 0;
}

bool
jobs_avoids(const struct job *job, const char *node)
{
	return jobs_avoiding(job) > 0 && list_has(job->avoid, node);
}

unsigned
jobs_avoiding(const struct job *job)
{
	unsigned n = 1;
	const char *p;

	if (job->avoid == NULL || job->avoid_attempt != job->attempt)
		return 0;
	for (p = job->avoid; (p = strchr(p, ',')) != NULL; p++)
		n++;
	return n;
}

int64_t
jobs_last_progress(const struct jobs *js, uint64_t id)
{
	size_t i;

	for (i = 0; i < js->nruns; i++)
		if (js->runs[i].job_id == id)
			return js->runs[i].progress_ms;
	return 0;
}

bool
jobs_rank_ended(const struct jobs *js, const struct job *job, unsigned rank)
{
	size_t i;

	for (i = 0; i < js->nruns; i++)
		if (js->runs[i].job_id == job->id)
			return js->runs[i].attempt == job->attempt &&
			    rank < js->runs[i].nranks && js->runs[i].done[rank];
	return false;
}

int
jobs_active(const struct jobs *js, const struct job ***out, size_t *n)
{
	const struct job **v;
	size_t i;

	*out = NULL;
	*n = 0;
	if (js->n == 0)
		return 0;
	if ((v = calloc(js->n, sizeof(*v))) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < js->n; i++)
		if (jobs_is_active(js->tab[i]))
			v[(*n)++] = js->tab[i];
	*out = v;
	return 0;
}

static bool
jobs_match(const struct job *job, const struct jobs_filter *f)
{
	if (!f->all && !f->has_state && f->states == 0 &&
	    job_state_is_final(job->state))
		return false;
	if ((f->has_state && job->state != f->state) || (f->states != 0 &&
	    !(f->states & (1u << job->state))))
		return false;
	/* The window, as sacct -S/-E: submitted before its end, not ended
	 * before its start. */
	if ((f->until_ms > 0 && job->submit_ms >= f->until_ms) ||
	    (f->since_ms > 0 && job->end_ms > 0 && job->end_ms < f->since_ms))
		return false;
	if (f->name != NULL && strcmp(job->spec.name, f->name) != 0)
		return false;
	if (f->array_id != 0 && job->array_id != f->array_id)
		return false;
	return f->user == NULL || strcmp(job->user, f->user) == 0;
}

size_t
jobs_page(const struct jobs *js, const struct jobs_filter *f,
    uint64_t after_id, const struct job **out, size_t max, size_t scan,
    bool *more, uint64_t *next)
{
	size_t lo = 0, hi = js->n, mid, n = 0, seen = 0;

	/* An array's tasks have ids from the array's on. */
	if (f->array_id != 0 && after_id < f->array_id - 1)
		after_id = f->array_id - 1;
	/* The table is in id order: start past after_id, stop one match
	 * after the page is full, or once scan jobs were examined. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (js->tab[mid]->id <= after_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	*more = false;
	*next = after_id;
	for (; lo < js->n; lo++) {
		if (scan > 0 && seen == scan) {
			/* Stopped short: go on after the last one examined. */
			*more = true;
			*next = js->tab[lo - 1]->id;
			break;
		}
		/* ... which are neighbours: past them, nothing matches. */
		if (f->array_id != 0 && js->tab[lo]->array_id != f->array_id)
			break;
		seen++;
		if (!jobs_match(js->tab[lo], f))
			continue;
		if (n == max) {
			*more = true;
			break;
		}
		out[n++] = js->tab[lo];
		*next = js->tab[lo]->id;
	}
	return n;
}

int
jobs_list(const struct jobs *js, const struct jobs_filter *f,
    const struct job ***out, size_t *n)
{
	const struct job **v;
	size_t i;

	*out = NULL;
	*n = 0;
	if (js->n == 0)
		return 0;
	if ((v = calloc(js->n, sizeof(*v))) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < js->n; i++)
		if (jobs_match(js->tab[i], f))
			v[(*n)++] = js->tab[i];
	*out = v;
	return 0;
}

uint32_t
jobs_pending_of(const struct jobs *js, const char *user)
{
	return quota_pending(js->quota, user);
}

void
jobs_quota_stats(const struct jobs *js, struct quota_stats *st)
{
	quota_stats(js->quota, st);
}
