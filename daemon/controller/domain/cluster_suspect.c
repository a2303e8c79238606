/* Where the cluster meets suspect.h: the failures it sees become evidence
 * against nodes, jobs that run fine elsewhere confirm their early
 * failures, and a node that crosses its threshold is drained with a
 * reason starting "suspect:". Domain code: no clock, no event loop. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/cluster_int.h"
#include "daemon/controller/domain/jobs.h"
#include "lib/log.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/suspect.h"

/* Jobs whose early failures are looked at per tick; the rest wait for
 * the next one. */
#define SUSPECT_TICK_JOBS 256

struct suspect_ctx {
	struct cluster *cl;
	int64_t now;
};

struct suspect *
cluster_suspect(const struct cluster *cl)
{
	return cl->o.suspect;
}

/* Drain node for its suspicion. A drain of an admin's stands (their
 * reason says more than ours; the suspicion still shows in cohort
 * nodes); one of the node's health or of the controller is relabelled,
 * staying a health drain where it was one. */
static void
cluster_suspect_drain(void *arg, const char *name, const char *reason)
{
	struct suspect_ctx *d = arg;
	struct cluster *cl = d->cl;
	struct node *n = nodes_get(cl->ns, name);
	struct cerr err;

	log_warnx("node %s: %s", name, reason);
	if (n == NULL)
		return;
	if (n->drained && strcmp(n->drain_actor, "health") != 0 &&
	    strcmp(n->drain_actor, "cohortd") != 0 &&
	    strcmp(n->drain_actor, SUSPECT_ACTOR) != 0)
		return;
	if (nodes_drain(cl->ns, n, reason, SUSPECT_ACTOR, n->drained &&
	    n->drain_health, d->now, &err) == -1)
		log_warnx("node %s: not drained: %s", name, err.text);
	cluster_wake(cl);
}

void
cluster_suspect_hw(struct cluster *cl, const char *node,
    enum suspect_kind kind, uint64_t job_id, const char *detail, int64_t now)
{
	struct suspect_ctx d = { cl, now };
	char reason[SUSPECT_REASON_MAX + 1];
	struct cerr err;
	int rc;

	if (cl->o.suspect == NULL)
		return;
	rc = suspect_hardware(cl->o.suspect, node, kind, job_id, detail, now,
	    reason, sizeof(reason), &err);
	if (rc == -1)
		log_warnx("node %s: %s evidence not saved: %s", node,
		    suspect_kind_name(kind), err.text);
	else if (rc == 1)
		cluster_suspect_drain(&d, node, reason);
}

bool
cluster_suspect_early(const struct cluster *cl, const struct job *job,
    int64_t now)
{
	return cl->o.suspect != NULL && jobs_ran_under(job, now,
	    suspect_get_opts(cl->o.suspect)->early_fail_ms);
}

/* The node names of job's placement into a new array (NULL: ENOMEM). */
static const char **
place_names(const struct job *job)
{
	const char **v;
	size_t i;

	if ((v = calloc(job->nplace + 1, sizeof(*v))) == NULL)
		return NULL;
	for (i = 0; i < job->nplace; i++)
		v[i] = job->place[i].node;
	return v;
}

/* job ran fine on its current placement. */
static void
cluster_suspect_ran(struct cluster *cl, const struct job *job, int64_t now)
{
	struct suspect_ctx d = { cl, now };
	const char **v;

	if ((v = place_names(job)) == NULL) {
		log_warnx("job %" PRIu64 ": out of memory: its early failures "
		    "are not confirmed", job->id);
		return;
	}
	suspect_job_ran(cl->o.suspect, job->id, v, job->nplace, now,
	    cluster_suspect_drain, &d);
	free(v);
}

void
cluster_suspect_exit(struct cluster *cl, const struct job *job,
    const char *node, bool early, enum job_state after, int64_t now)
{
	struct cerr err;
	char detail[64];

	if (cl->o.suspect == NULL || job == NULL)
		return;
	if (after == JOB_COMPLETED) {
		cluster_suspect_ran(cl, job, now);
		return;
	}
	if (job_state_is_final(after)) {
		/* It failed everywhere it went: its owner's bug. */
		suspect_job_lost(cl->o.suspect, job->id, now);
		return;
	}
	if (!early)
		return;
	snprintf(detail, sizeof(detail), "attempt %u", job->restarts);
	if (suspect_early(cl->o.suspect, node, job->id, job->user,
	    detail, now, &err) == -1)
		log_warnx("node %s: early failure of job %" PRIu64 " not "
		    "saved: %s", node, job->id, err.text);
}

void
cluster_suspect_tick(struct cluster *cl, int64_t now)
{
	const struct suspect_opts *o;
	uint64_t ids[SUSPECT_TICK_JOBS];
	const struct job *job;
	size_t i, n;

	if (cl->o.suspect == NULL)
		return;
	o = suspect_get_opts(cl->o.suspect);
	n = suspect_waiting_jobs(cl->o.suspect, ids, SUSPECT_TICK_JOBS);
	for (i = 0; i < n; i++) {
		job = jobs_get(cl->js, ids[i]);
		if (job == NULL || (job_state_is_final(job->state) &&
		    job->state != JOB_COMPLETED))
			suspect_job_lost(cl->o.suspect, ids[i], now);
		else if (job->state == JOB_COMPLETED || (job->state ==
		    JOB_RUNNING && job->start_ms > 0 &&
		    now - job->start_ms >= o->early_fail_ms))
			cluster_suspect_ran(cl, job, now);
	}
	suspect_expire(cl->o.suspect, now);
}

void
cluster_suspect_resumed(struct cluster *cl, const char *node, int64_t now)
{
	struct cerr err;

	if (cl->o.suspect != NULL &&
	    suspect_resume(cl->o.suspect, node, now, &err) == -1)
		log_warnx("node %s: suspicion not cleared: %s", node,
		    err.text);
}
