/* Goodput (docs/SPEC.md "Goodput"): each job's effective training time ratio
 * (ETTR) and the checkpoint interval that maximizes it. Domain code: pure
 * functions of the job and of `now`, no clock, no I/O. */
#ifndef COHORT_CONTROLLER_GOODPUT_H
#define COHORT_CONTROLLER_GOODPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/job.h"

/* The prior for a cluster with little history of its own: Llama 3's
 * pretraining saw 419 unexpected interruptions in 54 days on 2,048 nodes
 * of 8 GPUs, a failure per node every 6,335 hours. It weighs as much as
 * GOODPUT_PRIOR_FAILURES failures seen. */
#define GOODPUT_PRIOR_NODE_MTBF_H	6335.0
#define GOODPUT_PRIOR_FAILURES		1.0
/* Failures older than about this weigh less (exponential decay). */
#define GOODPUT_WINDOW_H		(30.0 * 24.0)
/* The checkpoint cost assumed when none was measured and the job gives
 * no --checkpoint-signal SECS. */
#define GOODPUT_DEFAULT_CKPT_S		60.0
/* A checkpoint the job says took longer than a day is no measure. */
#define GOODPUT_CKPT_COST_MAX_MS	(24u * 3600u * 1000u)
/* The advice a running job was given is renewed when it moves by this
 * fraction or more, and at least this often while it moves at all. */
#define GOODPUT_ADVICE_CHANGE		0.1
#define GOODPUT_ADVICE_PERIOD_MS	(3600LL * 1000)

/* Account job's time from gp.mark_ms to now_ms in its current phase and
 * the change to next's state: next->gp is updated (next is the version
 * of job being written, jobs.c's jobs_apply). A run that ends in a
 * restart or back in the queue loses its work since the last checkpoint
 * (up to now: what ran while the failure went unseen is lost too). */
void goodput_advance(const struct job *job, struct job *next,
    int64_t now_ms);

/* The controller asked for a checkpoint at asked_ms and LATEST, written
 * at written_ms, came at now_ms: the time between counts as checkpoint
 * time and is the job's checkpoint cost from now on. A LATEST written
 * before the ask measures nothing. */
void goodput_checkpoint(struct job *next, int64_t asked_ms,
    int64_t written_ms, int64_t now_ms);

/* The job reported that its checkpoint took cost_ms (CKPT_MS): it
 * counts as checkpoint time and is the job's cost from now on. */
void goodput_reported(struct job *next, uint32_t cost_ms);
/* The same for a checkpoint already written, whose time from the signal
 * (measured_ms; 0: none) counted: the report replaces it. */
void goodput_reported_late(struct job *next, uint64_t measured_ms,
    uint32_t cost_ms);

/* Whether a running job given advice sent_s at sent_ms should be given
 * now_s at now_ms: it changed by GOODPUT_ADVICE_CHANGE or more, or at all
 * and GOODPUT_ADVICE_PERIOD_MS has passed. Always for a first advice. */
bool goodput_advice_renew(uint32_t sent_s, int64_t sent_ms, uint32_t now_s,
    int64_t now_ms);

/* The split of job's wall time since its first start as of now_ms (its
 * current phase counted up to now): parts that add up exactly to the
 * wall time, ettr = productive / wall (1 for a job that has just
 * started, 0 for one that never ran). advice_s from job->ckpt_advice_s. */
void goodput_view(const struct job *job, int64_t now_ms,
    struct job_goodput_view *v);

/* Node failures over a window, cluster-wide: an exponentially decayed
 * count of failures and of node-hours in service, with the prior's
 * weight added. */
struct goodput_rates {
	double failures;		/* decayed */
	double exposure_h;		/* node-hours, decayed */
	unsigned nodes;			/* in service since at_ms */
	int64_t at_ms;			/* 0: nothing yet */
	double window_h;
};

void goodput_rates_init(struct goodput_rates *r, double window_h);
/* nodes are in service from now on (the time since the last call counts
 * with the count given then). */
void goodput_rates_tick(struct goodput_rates *r, unsigned nodes,
    int64_t now_ms);
/* A node failed (hardware: DOWN, health FAILED, a fail-job XID). */
void goodput_rates_failure(struct goodput_rates *r, int64_t now_ms);
/* One node's mean time between failures, in hours: (prior failures x
 * prior MTBF + node-hours) / (prior failures + failures). */
double goodput_node_mtbf_h(const struct goodput_rates *r);

/* The checkpoint interval (s) that maximizes expected goodput for a
 * checkpoint cost of c_s and a job MTBF of m_s, in Daly's higher-order
 * form: sqrt(2CM) (1 + sqrt(C/2M)/3 + C/18M) - C, or M when C >= 2M.
 * 0 for non-positive inputs. */
double goodput_interval_s(double c_s, double m_s);

/* The interval advised to job for its current size (its placement's
 * nodes, else the nodes it asks for) and cost (measured, else its
 * --checkpoint-signal SECS), in whole seconds (at least 1). */
uint32_t goodput_advice_s(const struct goodput_rates *r,
    const struct job *job);

#endif
