/* Preemptions the scheduling pass decided (daemon/sched/sched.h, "Queues,
 * quotas and preemption"): each victim follows the checkpoint contract
 * (recovery_preempt: its signal, a newer LATEST or the grace, stop,
 * PENDING), and the preemptor is remembered until it starts so that the
 * next passes order it first and it gets the GPUs its victims free. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/cluster_int.h"
#include "daemon/controller/domain/jobs.h"
#include "lib/log.h"
#include "daemon/controller/domain/placement.h"
#include "daemon/controller/domain/queues.h"

/* A preemptor that has not started this long after its victims' grace
 * and stop_timeout chooses again. */
#define PREEMPTION_SLACK_MS 10000

static const char *
preemption_queue_name(const struct job *job)
{
	return job->spec.queue != NULL ? job->spec.queue : QUEUE_DEFAULT_NAME;
}

/* The grace a victim gets: its --checkpoint-signal SECS, capped by its
 * queue's preempt_grace. */
static uint32_t
preemption_grace(const struct cluster *cl, const struct job *job)
{
	const struct queue_def *d;
	uint32_t secs = job->spec.ckpt_secs;
	int q;

	if (cl->o.queues == NULL ||
	    (q = queues_job_queue(cl->o.queues, job)) < 0)
		return secs;
	d = queues_def(cl->o.queues, (size_t)q);
	if (d->preempt_grace_s > 0 && d->preempt_grace_s < secs)
		secs = (uint32_t)d->preempt_grace_s;
	return secs;
}

static struct preemption *
preemption_find(const struct cluster *cl, uint64_t job_id)
{
	struct preemption *p;

	TAILQ_FOREACH(p, &cl->preemptions, entry)
		if (p->job_id == job_id)
			return p;
	return NULL;
}

void
preemption_apply(struct cluster *cl, const struct placement_preemption *pp,
    int64_t now)
{
	const struct job *by = jobs_get(cl->js, pp->job_id), *v;
	struct preemption *p;
	uint32_t grace, longest = 0;
	char cause[256];
	size_t i;

	if (by == NULL)
		return;
	snprintf(cause, sizeof(cause), "%s%" PRIu64 " of %s",
	    JOBS_PREEMPTED_PREFIX, by->id, preemption_queue_name(by));
	for (i = 0; i < pp->nvictims; i++) {
		if ((v = jobs_get(cl->js, pp->victims[i])) == NULL ||
		    !jobs_is_active(v) || recovery_evacuating(cl, v->id))
			continue;
		grace = preemption_grace(cl, v);
		if (grace > longest)
			longest = grace;
		log_info("job %" PRIu64 " (queue %s) preempts job %" PRIu64
		    " (queue %s): %u s to checkpoint", by->id,
		    preemption_queue_name(by), v->id,
		    preemption_queue_name(v), grace);
		recovery_preempt(cl, v, cause, grace, now);
	}
	preemption_forget(cl, by->id);
	if ((p = calloc(1, sizeof(*p))) == NULL ||
	    (p->victims = calloc(pp->nvictims + 1,
	    sizeof(*p->victims))) == NULL) {
		/* It is not ordered first: the GPUs may go to another job,
		 * and it chooses again later. */
		free(p);
		log_warnx("job %" PRIu64 ": out of memory to record its "
		    "preemption", by->id);
		return;
	}
	p->job_id = by->id;
	memcpy(p->victims, pp->victims, pp->nvictims * sizeof(*p->victims));
	p->nvictims = pp->nvictims;
	TAILQ_INSERT_TAIL(&cl->preemptions, p, entry);
	p->deadline_ms = now + (int64_t)longest * 1000 +
	    cl->o.stop_timeout_ms + PREEMPTION_SLACK_MS;
}

int
preemption_ids(const struct cluster *cl, uint64_t **ids, size_t *n)
{
	const struct preemption *p;
	size_t k = 0;

	*n = 0;
	TAILQ_FOREACH(p, &cl->preemptions, entry)
		k++;
	if ((*ids = calloc(k + 1, sizeof(**ids))) == NULL)
		return -1;
	TAILQ_FOREACH(p, &cl->preemptions, entry)
		(*ids)[(*n)++] = p->job_id;
	qsort(*ids, *n, sizeof(**ids), job_id_cmp);
	return 0;
}

static void
preemption_free(struct cluster *cl, struct preemption *p)
{
	TAILQ_REMOVE(&cl->preemptions, p, entry);
	free(p->victims);
	free(p);
}

void
preemption_forget(struct cluster *cl, uint64_t job_id)
{
	struct preemption *p;

	if ((p = preemption_find(cl, job_id)) != NULL)
		preemption_free(cl, p);
}

static bool
preemption_victims_gone(const struct cluster *cl, const struct preemption *p)
{
	const struct job *v;
	size_t i;

	for (i = 0; i < p->nvictims; i++)
		if ((v = jobs_get(cl->js, p->victims[i])) != NULL &&
		    jobs_is_active(v))
			return false;
	return true;
}

void
preemption_after_pass(struct cluster *cl)
{
	struct preemption *p, *next;

	for (p = TAILQ_FIRST(&cl->preemptions); p != NULL; p = next) {
		next = TAILQ_NEXT(p, entry);
		if (!preemption_victims_gone(cl, p))
			continue;
		if (p->victims_gone) {
			log_info("job %" PRIu64 ": the GPUs its preemptions "
			    "freed went elsewhere; it may preempt again",
			    p->job_id);
			preemption_free(cl, p);
		} else
			p->victims_gone = true;
	}
}

/* Preemptors that no longer wait (started, cancelled) or waited past
 * their deadline are forgotten. */
void
preemption_tick(struct cluster *cl, int64_t now)
{
	struct preemption *p, *next;
	const struct job *job;

	for (p = TAILQ_FIRST(&cl->preemptions); p != NULL; p = next) {
		next = TAILQ_NEXT(p, entry);
		job = jobs_get(cl->js, p->job_id);
		if (job != NULL && now < p->deadline_ms &&
		    !jobs_is_active(job) && (job->state == JOB_PENDING ||
		    job->state == JOB_RESTARTING))
			continue;
		preemption_free(cl, p);
	}
}

void
preemption_destroy_all(struct cluster *cl)
{
	while (!TAILQ_EMPTY(&cl->preemptions))
		preemption_free(cl, TAILQ_FIRST(&cl->preemptions));
}
