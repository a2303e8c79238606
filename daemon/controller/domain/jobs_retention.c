/* Retention: finished jobs older than job_retention (by end time) leave
 * the table and the database with everything that names them (runs,
 * task exits, placement, events), and events older than event_retention
 * go too, in small batches inside the shared transaction, so that a
 * backlog (a controller started after a long stop, a lowered retention)
 * never stalls the loop: each tick removes at most JOBS_PURGE_JOBS_MAX
 * jobs and JOBS_PURGE_EVENTS_MAX events, and comes back at the next tick
 * while a batch was full. Ids are never reused: counters.max_job_id
 * keeps the highest one. The usage of purged jobs is gone with their
 * runs, as with sacct after slurmdbd's purge. */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/jobs_int.h"
#include "lib/log.h"
#include "daemon/controller/store/store.h"
#include "daemon/controller/store/txq.h"

void
jobs_retention_set(struct jobs *js, int64_t job_ms, int64_t event_ms)
{
	js->job_retention_ms = job_ms > 0 ? job_ms : 0;
	js->event_retention_ms = event_ms > 0 ? event_ms : 0;
	js->purge_next_ms = 0;
}

/* Is job finished for longer than the retention at now? */
static bool
jobs_retention_old(const struct jobs *js, const struct job *job,
    int64_t now_ms)
{
	return js->job_retention_ms > 0 && job_state_is_final(job->state) &&
	    job->end_ms > 0 && job->end_ms < now_ms - js->job_retention_ms;
}

/* Remove the jobs at the given table positions (increasing), keeping the
 * table in id order. */
static void
jobs_retention_drop(struct jobs *js, const size_t *pos, size_t n)
{
	size_t i, k = 0, w = pos[0];

	for (i = pos[0]; i < js->n; i++) {
		if (k < n && i == pos[k]) {
			jobs_keys_remove(&js->keys, js->tab[i]);
			job_free(js->tab[i]);
			k++;
			continue;
		}
		js->tab[w++] = js->tab[i];
	}
	js->n = w;
}

int
jobs_retention_purge(struct jobs *js, int64_t now_ms, size_t *njobs,
    size_t *nevents, struct cerr *err)
{
	size_t pos[JOBS_PURGE_JOBS_MAX];
	size_t i, n = 0;
	int ev = 0;

	*njobs = 0;
	*nevents = 0;
	if (js->job_retention_ms == 0 && js->event_retention_ms == 0)
		return 0;
	/* The table is in id order, and old jobs are mostly at its front:
	 * a backlog is found early in the scan. */
	for (i = 0; i < js->n && n < JOBS_PURGE_JOBS_MAX; i++)
		if (jobs_retention_old(js, js->tab[i], now_ms))
			pos[n++] = i;
	if (n == 0 && js->event_retention_ms == 0)
		return 0;
	if (txq_join(js->q, err) == -1 || store_mark(js->st, err) == -1)
		return -1;
	for (i = 0; i < n; i++)
		if (store_job_purge(js->st, js->tab[pos[i]]->id, err) == -1)
			goto undo;
	if (js->event_retention_ms > 0 && store_events_purge(js->st,
	    now_ms - js->event_retention_ms, JOBS_PURGE_EVENTS_MAX, &ev,
	    err) == -1)
		goto undo;
	if (store_keep(js->st, err) == -1)
		goto undo;
	if (n > 0) {
		log_info("retention: purged %zu job(s) ended before %" PRId64
		    " ms (jobs %" PRIu64 "..%" PRIu64 ")", n,
		    now_ms - js->job_retention_ms, js->tab[pos[0]]->id,
		    js->tab[pos[n - 1]]->id);
		jobs_retention_drop(js, pos, n);
	}
	*njobs = n;
	*nevents = (size_t)ev;
	return 0;
undo:
	store_undo(js->st);
	return -1;
}

void
jobs_retention_tick(struct jobs *js, int64_t now_ms)
{
	struct cerr err;
	size_t nj, ne;

	if (now_ms < js->purge_next_ms)
		return;
	cerr_clear(&err);
	if (jobs_retention_purge(js, now_ms, &nj, &ne, &err) == -1) {
		log_warnx("retention: %s", err.text);
		js->purge_next_ms = now_ms + JOBS_PURGE_INTERVAL_MS;
		return;
	}
	/* A full batch leaves more: the next tick goes on. */
	js->purge_next_ms = nj == JOBS_PURGE_JOBS_MAX ||
	    ne == JOBS_PURGE_EVENTS_MAX ? now_ms :
	    now_ms + JOBS_PURGE_INTERVAL_MS;
}
