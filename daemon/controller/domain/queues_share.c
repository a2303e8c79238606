/* The queues' fair share (queues.h). Each queue keeps the decayed GPU-milliseconds used by its
 * subtree, and each leaf the same per user, as (value, time of value):
 * read at now, a value is value * 2^(-(now - time) / half_life), so
 * decaying is lazy and exact whatever the charging rate. A queue's share
 * key, among its siblings S (the queue included), is
 *   key(q) = 10^6 * (u(q) / sum_S u) / (w(q) / sum_S w)
 * its part of the siblings' usage over its part of their weights: 10^6
 * for a queue that used exactly its share, 0 for one that used nothing
 * (and for all of them when none used anything). Siblings compare by it
 * as by u / w; the normalisation makes keys of queues at different
 * places of the tree comparable as "how far over its share". Users of a
 * queue all weigh 1: key(user) = 10^6 * u(user) * n / sum u, n the
 * users that have used the queue. The displayed factor is Slurm's
 * 2^(-key / 10^6): 1 unused, 0.5 at its share. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/queues.h"
#include "daemon/controller/domain/queues_int.h"
#include "lib/slot.h"

static double
queues_decay(const struct queues *qs, double v, int64_t at_ms, int64_t now_ms)
{
	if (v == 0 || qs->half_life_ms <= 0 || now_ms <= at_ms)
		return v;
	return v * exp2(-(double)(now_ms - at_ms) / (double)qs->half_life_ms);
}

static const char *
queues_user_name(const void *base, size_t i)
{
	return ((const struct quser *)base)[i].name;
}

/* Index of user in q's sorted users, or where it would go (*found). */
static size_t
queues_user_slot(const struct qnode *qn, const char *user, bool *found)
{
	return slot_find(qn->users, qn->nqusers, queues_user_name, user,
	    found);
}

/* Add gpu_ms used at now_ms to a decayed value kept as of *at: both are
 * brought to the later of the two times, so use charged out of order (a
 * restart's rebuild goes by job id, not by end) decays as it should. */
static void
queues_add(const struct queues *qs, double *usage, int64_t *at,
    double gpu_ms, int64_t now_ms)
{
	int64_t t = now_ms > *at ? now_ms : *at;

	*usage = queues_decay(qs, *usage, *at, t) +
	    queues_decay(qs, gpu_ms, now_ms, t);
	*at = t;
}

int
queues_charge(struct queues *qs, size_t q, const char *user, double gpu_ms,
    int64_t now_ms)
{
	struct qnode *qn;
	struct quser *u;
	bool found;
	size_t slot;
	int p;

	if (q >= qs->n || user == NULL || !(gpu_ms >= 0)) {
		errno = EINVAL;
		return -1;
	}
	qn = &qs->q[q];
	slot = queues_user_slot(qn, user, &found);
	if (!found) {
		char *name = strdup(user);

		if (name == NULL || (u = reallocarray(qn->users,
		    qn->nqusers + 1, sizeof(*u))) == NULL) {
			free(name);
			errno = ENOMEM;
			return -1;
		}
		qn->users = u;
		memmove(&u[slot + 1], &u[slot],
		    (qn->nqusers - slot) * sizeof(*u));
		u[slot] = (struct quser){ .name = name, .at_ms = now_ms };
		qn->nqusers++;
	}
	u = &qn->users[slot];
	queues_add(qs, &u->usage, &u->at_ms, gpu_ms, now_ms);
	for (p = (int)q; p != -1; p = qs->q[p].parent)
		queues_add(qs, &qs->q[p].usage, &qs->q[p].at_ms, gpu_ms,
		    now_ms);
	return 0;
}

int
queues_rebuild(struct queues *qs, const struct job *const *jobs, size_t n,
    int64_t now_ms)
{
	const struct job *j;
	uint32_t gpus;
	int64_t end;
	size_t i;
	int q;

	for (i = 0; i < n; i++) {
		j = jobs[i];
		if (j->start_ms <= 0 || j->user == NULL ||
		    (q = queues_job_queue(qs, j)) == -1)
			continue;
		gpus = job_gpus(j);
		end = job_state_is_final(j->state) && j->end_ms > 0 ?
		    j->end_ms : now_ms;
		if (gpus == 0 || end <= j->start_ms)
			continue;
		if (queues_charge(qs, (size_t)q, j->user,
		    (double)gpus * (double)(end - j->start_ms), end) == -1)
			return -1;
	}
	return 0;
}

static double
queues_usage(const struct queues *qs, size_t q, int64_t now_ms)
{
	return queues_decay(qs, qs->q[q].usage, qs->q[q].at_ms, now_ms);
}

/* q's usage and weight parts among its siblings: key = uq / wq. */
static double
queues_ratio(const struct queues *qs, size_t q, int64_t now_ms)
{
	double usum = 0, wsum = 0, u;
	size_t i;

	for (i = 0; i < qs->n; i++)
		if (qs->q[i].parent == qs->q[q].parent) {
			usum += queues_usage(qs, i, now_ms);
			wsum += qs->q[i].def.weight;
		}
	u = queues_usage(qs, q, now_ms);
	if (usum <= 0 || u <= 0)
		return 0;
	return (u / usum) / ((double)qs->q[q].def.weight / wsum);
}

static uint64_t
queues_key(double ratio)
{
	double k = ratio * QUEUES_KEY_UNIT;

	if (!(k > 0))
		return 0;
	if (k >= 1.8e19)
		return UINT64_MAX;
	return (uint64_t)llround(k);
}

uint64_t
queues_share(const struct queues *qs, size_t q, int64_t now_ms)
{
	if (q >= qs->n)
		return 0;
	return queues_key(queues_ratio(qs, q, now_ms));
}

uint64_t
queues_user_share(const struct queues *qs, size_t q, const char *user,
    int64_t now_ms)
{
	const struct qnode *qn;
	double sum = 0, u;
	bool found;
	size_t i, slot;

	if (q >= qs->n || user == NULL)
		return 0;
	qn = &qs->q[q];
	slot = queues_user_slot(qn, user, &found);
	if (!found)
		return 0;
	for (i = 0; i < qn->nqusers; i++)
		sum += queues_decay(qs, qn->users[i].usage, qn->users[i].at_ms,
		    now_ms);
	u = queues_decay(qs, qn->users[slot].usage, qn->users[slot].at_ms,
	    now_ms);
	if (sum <= 0)
		return 0;
	return queues_key(u * (double)qn->nqusers / sum);
}

double
queues_factor(const struct queues *qs, size_t q, int64_t now_ms)
{
	if (q >= qs->n)
		return 1;
	return exp2(-queues_ratio(qs, q, now_ms));
}
