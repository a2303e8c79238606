/* Job arrays (sbatch --array): one submit records a job per task, in
 * one transaction and with consecutive ids, the first of which is the
 * array's id; cancelling the array cancels its unfinished tasks, again
 * all or none. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/jobs_int.h"
#include "lib/array.h"
#include "lib/log.h"
#include "daemon/controller/domain/queues.h"
#include "daemon/controller/domain/quota.h"
#include "daemon/controller/store/store.h"
#include "daemon/controller/store/txq.h"

/* What an array's copies of its spec may take at most, summed over its
 * tasks (each task owns a full copy, in memory and in its row): a big
 * script times many tasks is refused rather than filling the disk. */
#define JOBS_ARRAY_SPEC_BYTES_MAX ((size_t)256 * 1024 * 1024)

/* Where job id is, or would go, in the table. */
static size_t
jobs_array_index(const struct jobs *js, uint64_t id)
{
	size_t lo = 0, hi = js->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (js->tab[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t
jobs_array_tasks(const struct jobs *js, uint64_t array_id,
    struct job *const **tasks)
{
	size_t k = jobs_array_index(js, array_id), n = 0;

	*tasks = NULL;
	if (k == js->n || js->tab[k]->id != array_id ||
	    js->tab[k]->array_id != array_id)
		return 0;
	/* The tasks have consecutive ids from the array's: they are
	 * neighbours in the table. */
	while (k + n < js->n && js->tab[k + n]->array_id == array_id)
		n++;
	*tasks = js->tab + k;
	return n;
}

const struct job *
jobs_array_task(const struct jobs *js, uint64_t array_id, uint32_t task)
{
	struct job *const *t;
	size_t n, lo = 0, hi, mid;

	/* The tasks are in index order too (ids were given in it). */
	hi = n = jobs_array_tasks(js, array_id, &t);
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (t[mid]->array_task < task)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && t[lo]->array_task == task ? t[lo] : NULL;
}

/* The bytes of spec that each task copies. */
static size_t
jobs_array_spec_bytes(const struct job_spec *spec)
{
	size_t i, b = spec->script_len + 1024;

	for (i = 0; i < spec->argc; i++)
		b += strlen(spec->argv[i]) + 1;
	for (i = 0; i < spec->nenv; i++)
		b += strlen(spec->env[i]) + 1;
	return b;
}

/* Room in the table for n more jobs, so that adding them once written
 * cannot fail. 0 or -1 (ENOMEM). */
static int
jobs_array_reserve(struct jobs *js, size_t n)
{
	struct job **tab;
	size_t cap = js->cap ? js->cap : 256;

	while (cap < js->n + n)
		cap *= 2;
	if (cap == js->cap)
		return 0;
	if ((tab = reallocarray(js->tab, cap, sizeof(*tab))) == NULL)
		return -1;
	js->tab = tab;
	js->cap = cap;
	return 0;
}

/* The array's jobs, made in memory: v[i] is task a->idx[i]. */
static int
jobs_array_make(struct jobs *js, const struct peer *who,
    const struct job_spec *spec, const struct array_spec *a,
    int64_t now_ms, struct job **v)
{
	struct job *job;
	size_t i;

	for (i = 0; i < a->n; i++) {
		if ((v[i] = job = job_new()) == NULL ||
		    (job->user = strdup(who->name)) == NULL)
			return -1;
		job_spec_clear(&job->spec);
		if (job_spec_copy(&job->spec, spec) == -1)
			return -1;
		/* The key names the array: its first task keeps it (one
		 * job per user and key in the store). */
		if (i > 0) {
			free(job->spec.idem_key);
			job->spec.idem_key = NULL;
			job->spec.has_idem_fp = false;
		}
		job->id = js->last_id + 1 + i;
		job->state = JOB_PENDING;
		job->submit_ms = now_ms;
		if (job->spec.hold)
			job->hold = JOB_HOLD_USER;
		job->array_id = js->last_id + 1;
		job->array_task = a->idx[i];
		job->array_max = a->throttle;
	}
	return 0;
}

/* Write every task's row and event under one savepoint. */
static int
jobs_array_write(struct jobs *js, const struct peer *who, struct job **v,
    size_t n, int64_t now_ms, struct cerr *err)
{
	char detail[256];
	size_t i;

	if (txq_join(js->q, err) == -1 || store_mark(js->st, err) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		snprintf(detail, sizeof(detail), "name=%s array=%" PRIu64
		    "_%u nodes=%u:%u gpus_per_node=%u%s%s", v[i]->spec.name,
		    v[i]->array_id, v[i]->array_task, v[i]->spec.nodes_min,
		    v[i]->spec.nodes_max, v[i]->spec.gpus_per_node,
		    v[i]->spec.queue != NULL ? " queue=" : "",
		    v[i]->spec.queue != NULL ? v[i]->spec.queue : "");
		if (jobs_write_rows(js, v[i], true, now_ms, "submit",
		    who->name, detail, err) == -1) {
			store_undo(js->st);
			return -1;
		}
	}
	if (store_keep(js->st, err) == -1) {
		store_undo(js->st);
		return -1;
	}
	return 0;
}

int
jobs_array_submit(struct jobs *js, const struct peer *who,
    struct job_spec *spec, int64_t now_ms, uint64_t *id, struct cerr *err)
{
	struct array_spec a;
	struct job **v = NULL;
	uint32_t max = js->limits.max_pending_per_user, have;
	size_t i;
	int rc = -1;

	if (array_parse(spec->array, &a, err) == -1) {
		job_spec_clear(spec);
		return -1;
	}
	/* The whole array is admitted or none of it: every task counts
	 * toward max_pending_per_user. */
	have = jobs_pending_of(js, who->name);
	if (max > 0 && have + a.n > max) {
		cerr_set(err, ERR_LIMIT, "%s has %u pending jobs; an array of "
		    "%zu tasks would make %zu, above the limit of %u "
		    "(max_pending_per_user): submit a smaller array, or once "
		    "some have started or ended", who->name, have, a.n,
		    (size_t)have + a.n, max);
		goto out;
	}
	if (jobs_array_spec_bytes(spec) > JOBS_ARRAY_SPEC_BYTES_MAX / a.n) {
		cerr_set(err, ERR_INVALID, "--array: %zu tasks each copying "
		    "a %zu-byte job (script, arguments, environment) would "
		    "take more than %zu MiB: use fewer tasks or a smaller "
		    "script", a.n, jobs_array_spec_bytes(spec),
		    JOBS_ARRAY_SPEC_BYTES_MAX >> 20);
		goto out;
	}
	if ((v = calloc(a.n, sizeof(*v))) == NULL ||
	    jobs_array_reserve(js, a.n) == -1 ||
	    jobs_keys_reserve(&js->keys, 1) == -1 ||
	    jobs_array_make(js, who, spec, &a, now_ms, v) == -1) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto out;
	}
	if (jobs_array_write(js, who, v, a.n, now_ms, err) == -1)
		goto out;
	for (i = 0; i < a.n; i++) {
		js->tab[js->n++] = v[i];
		jobs_keys_add(&js->keys, v[i]);	/* the first task's key */
	}
	js->last_id += a.n;
	/* The entry exists since quota_submit_check: this cannot fail. One
	 * submit, as far as the rate is concerned. */
	quota_pending_add(js->quota, who->name, (int)a.n);
	quota_submit_take(js->quota, who->name, now_ms);
	*id = v[0]->id;
	log_info("job %" PRIu64 ": array of %zu tasks (%s) submitted by %s "
	    "(%s)", v[0]->id, a.n, spec->array, who->name, v[0]->spec.name);
	free(v);
	v = NULL;
	rc = 0;
out:
	for (i = 0; v != NULL && i < a.n; i++)
		job_free(v[i]);
	free(v);
	array_spec_clear(&a);
	job_spec_clear(spec);
	return rc;
}

int
jobs_array_cancel(struct jobs *js, const struct peer *who,
    uint64_t array_id, int64_t now_ms, size_t *ncancelled, struct cerr *err)
{
	struct job *const *t, *next = NULL;
	const struct job *job;
	char reason[PEER_NAME_MAX + 32];
	size_t n, i, k = 0, live = 0;

	*ncancelled = 0;
	if ((n = jobs_array_tasks(js, array_id, &t)) == 0) {
		if ((job = jobs_get(js, array_id)) == NULL)
			return cerr_set(err, ERR_NOT_FOUND, "no job %" PRIu64,
			    array_id);
		if (job->array_id != 0)
			return cerr_set(err, ERR_INVALID, "job %" PRIu64 " is "
			    "task %" PRIu64 "_%u, not an array: cancel %" PRIu64
			    " for the whole array", array_id, job->array_id,
			    job->array_task, job->array_id);
		return cerr_set(err, ERR_INVALID, "job %" PRIu64 " is not an "
		    "array", array_id);
	}
	/* Every task, not the first: a task moved to another queue has
	 * that queue's admins. All or nothing. */
	for (i = 0; i < n; i++)
		if (!job_state_is_final(t[i]->state) || i == 0) {
			if (jobs_authorize(js, who, t[i], JOBS_ACT_CANCEL, NULL,
			    err) == -1)
				return -1;
			live += !job_state_is_final(t[i]->state);
		}
	if (live == 0)
		return cerr_set(err, ERR_CONFLICT, "array %" PRIu64 " already "
		    "ended (all %zu tasks)", array_id, n);
	if ((next = calloc(live, sizeof(*next))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	snprintf(reason, sizeof(reason), "cancelled by %s", who->name);
	if (txq_join(js->q, err) == -1 || store_mark(js->st, err) == -1) {
		free(next);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (job_state_is_final(t[i]->state))
			continue;
		if (jobs_next(t[i], JOB_CANCELLED, reason, NULL, 0, now_ms,
		    &next[k], err) == -1)
			goto undo;
		k++;
		/* A running task's run ends here: its GPU time, and the
		 * run's row, written with the task's. */
		jobs_account_end(js, t[i], &next[k - 1], now_ms);
		if (jobs_write_rows(js, &next[k - 1], false, now_ms, "cancel",
		    who->name, reason, err) == -1)
			goto undo;
	}
	if (store_keep(js->st, err) == -1)
		goto undo;
	for (i = 0, k = 0; i < n; i++)
		if (!job_state_is_final(t[i]->state))
			jobs_install(js, t[i], &next[k++], now_ms);
	free(next);
	*ncancelled = live;
	log_info("job %" PRIu64 ": array cancelled by %s (%zu tasks)",
	    array_id, who->name, live);
	return 0;
undo:
	store_undo(js->st);
	for (i = 0, live = 0; i < n && live < k; i++)
		if (!job_state_is_final(t[i]->state))
			jobs_next_discard(t[i], &next[live++]);
	free(next);
	return -1;
}
