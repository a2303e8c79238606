/* What `cohort queues` shows (queues.h, queues_report). A queue's
 * effective nominal is its gpus, or (inner queue without gpus) the sum
 * of its children's finite nominals, or
 * none. used: the GPUs held by running jobs of its subtree (a job's
 * placement summed); borrowed: used beyond a finite nominal; lent: at
 * each parent P, the children's borrowed GPUs are taken first from what
 * their siblings may lend (unused nominal, at most lend_limit), shared
 * among the lenders in proportion to what each may lend (largest
 * remainder, ties in file order); the rest (from_above) comes from P's
 * own nominal not given to children, or from what P itself borrows; at
 * the top, from the cluster's GPUs outside every nominal. So at every
 * parent sum(borrowed of children) = sum(lent of children) + from_above.
 * pending: GPUs asked by waiting jobs, nodes_min * gpus_per_node; a
 * whole-node job (gpus_per_node 0) counts the GPUs of the cluster's
 * largest node per node (its size is known only once placed). Jobs of a
 * queue no longer configured are in no row. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/queues.h"
#include "daemon/controller/domain/queues_int.h"

static uint32_t
queues_add32(uint32_t a, uint64_t b)
{
	uint64_t s = (uint64_t)a + b;

	return s >= SCHED_UNLIMITED ? SCHED_UNLIMITED - 1 : (uint32_t)s;
}

/* Subtree sums: each job added to its queue and every ancestor. */
static void
queues_count_jobs(const struct queues *qs, const struct job *const *jobs,
    size_t n, bool running, uint32_t node_gpus, struct queue_row *rows)
{
	uint64_t g;
	size_t i;
	int q;

	for (i = 0; i < n; i++) {
		if ((q = queues_job_queue(qs, jobs[i])) == -1)
			continue;
		/* CPU-only: no GPU; exclusive: whole nodes. */
		g = running ? job_gpus(jobs[i]) :
		    jobs[i]->spec.cpu_only && !jobs[i]->spec.exclusive ? 0 :
		    (uint64_t)jobs[i]->spec.nodes_min *
		    (jobs[i]->spec.gpus_per_node > 0 &&
		    !jobs[i]->spec.exclusive ?
		    jobs[i]->spec.gpus_per_node : node_gpus);
		for (; q != -1; q = qs->q[q].parent) {
			if (running) {
				rows[q].used = queues_add32(rows[q].used, g);
				rows[q].running_jobs++;
			} else {
				rows[q].pending = queues_add32(rows[q].pending,
				    g);
				rows[q].pending_jobs++;
			}
		}
	}
}

/* Effective nominals, children before parents (reverse depth-first). */
static void
queues_effective_nominal(const struct queues *qs, struct queue_row *rows)
{
	uint64_t sum;
	bool any;
	size_t k, i, c;

	for (k = qs->n; k-- > 0;) {
		i = qs->order[k];
		rows[i].nominal = qs->q[i].def.gpus;
		if (rows[i].nominal != SCHED_UNLIMITED)
			continue;
		sum = 0;
		any = false;
		for (c = 0; c < qs->n; c++)
			if (qs->q[c].parent == (int)i &&
			    rows[c].nominal != SCHED_UNLIMITED) {
				sum += rows[c].nominal;
				any = true;
			}
		if (any)
			rows[i].nominal = sum >= SCHED_UNLIMITED ?
			    SCHED_UNLIMITED - 1 : (uint32_t)sum;
	}
}

static uint32_t
queues_lendable(const struct queues *qs, size_t i, const struct queue_row *r)
{
	uint32_t unused, lim = qs->q[i].def.lend_limit;

	if (r->nominal == SCHED_UNLIMITED || r->used >= r->nominal)
		return 0;
	unused = r->nominal - r->used;
	return lim != SCHED_UNLIMITED && lim < unused ? lim : unused;
}

/* At the children of parent (-1: top): lent and from_above; can is
 * scratch for qs->n values. */
static void
queues_attribute(const struct queues *qs, int parent, struct queue_row *rows,
    uint32_t *from_above, uint64_t *can)
{
	uint64_t borrowed = 0, lendable = 0, lent, given = 0;
	size_t i, best;
	double frac, bestfrac;

	memset(can, 0, qs->n * sizeof(*can));
	for (i = 0; i < qs->n; i++)
		if (qs->q[i].parent == parent) {
			borrowed += rows[i].borrowed;
			can[i] = queues_lendable(qs, i, &rows[i]);
			lendable += can[i];
		}
	lent = borrowed < lendable ? borrowed : lendable;
	for (i = 0; i < qs->n && lent > 0; i++)
		if (qs->q[i].parent == parent) {
			rows[i].lent = (uint32_t)(lent * can[i] / lendable);
			given += rows[i].lent;
		}
	/* Largest remainder: one more GPU each to the biggest fractions. */
	while (given < lent) {
		best = qs->n;
		bestfrac = -1;
		for (i = 0; i < qs->n; i++) {
			if (qs->q[i].parent != parent || rows[i].lent >= can[i])
				continue;
			frac = (double)(lent * can[i] % lendable) / lendable;
			if (frac > bestfrac) {
				bestfrac = frac;
				best = i;
			}
		}
		if (best == qs->n)
			break;
		rows[best].lent++;
		can[best] = rows[best].lent;	/* at most one extra each */
		given++;
	}
	if (from_above != NULL)
		*from_above = (uint32_t)(borrowed - given);
}

int
queues_report(const struct queues *qs, const struct job *const *active,
    size_t nactive, const struct job *const *waiting, size_t nwaiting,
    uint32_t node_gpus, int64_t now_ms, struct queue_row **rowsp, size_t *n)
{
	struct queue_row *rows, *out;
	uint64_t *can;
	size_t i;

	*rowsp = NULL;
	*n = 0;
	rows = calloc(qs->n, sizeof(*rows));
	out = calloc(qs->n, sizeof(*out));
	can = calloc(qs->n, sizeof(*can));
	if (rows == NULL || out == NULL || can == NULL) {
		free(rows);
		free(out);
		free(can);
		errno = ENOMEM;
		return -1;
	}
	queues_count_jobs(qs, active, nactive, true, node_gpus, rows);
	queues_count_jobs(qs, waiting, nwaiting, false, node_gpus, rows);
	queues_effective_nominal(qs, rows);
	for (i = 0; i < qs->n; i++)
		if (rows[i].nominal != SCHED_UNLIMITED &&
		    rows[i].used > rows[i].nominal)
			rows[i].borrowed = rows[i].used - rows[i].nominal;
	queues_attribute(qs, -1, rows, NULL, can);
	for (i = 0; i < qs->n; i++)
		if (qs->q[i].nchildren > 0)
			queues_attribute(qs, (int)i, rows,
			    &rows[i].from_above, can);
	free(can);
	/* Rows in depth-first order. */
	for (i = 0; i < qs->n; i++) {
		size_t q = qs->order[i];
		const struct qnode *qn = &qs->q[q];

		out[i] = rows[q];
		snprintf(out[i].name, sizeof(out[i].name), "%s", qn->def.name);
		snprintf(out[i].parent, sizeof(out[i].parent), "%s",
		    qn->parent == -1 ? "" : qs->q[qn->parent].def.name);
		out[i].depth = qn->depth;
		out[i].weight = qn->def.weight;
		out[i].factor = queues_factor(qs, q, now_ms);
	}
	free(rows);
	rows = out;
	*rowsp = rows;
	*n = qs->n;
	return 0;
}

int
queues_report_live(const struct queues *qs, const struct job *const *live,
    size_t nlive, uint32_t node_gpus, int64_t now_ms, struct queue_row **rows,
    size_t *n)
{
	const struct job **active = NULL, **waiting = NULL;
	size_t i, na = 0, nw = 0;
	int rc = -1;

	if (nlive > 0 && ((active = calloc(nlive, sizeof(*active))) == NULL ||
	    (waiting = calloc(nlive, sizeof(*waiting))) == NULL)) {
		errno = ENOMEM;
		goto out;
	}
	for (i = 0; i < nlive; i++) {
		if (jobs_is_active(live[i]))
			active[na++] = live[i];
		else if (live[i]->state == JOB_PENDING ||
		    live[i]->state == JOB_RESTARTING)
			waiting[nw++] = live[i];
	}
	rc = queues_report(qs, active, na, waiting, nw, node_gpus, now_ms,
	    rows, n);
out:
	free(active);
	free(waiting);
	return rc;
}
