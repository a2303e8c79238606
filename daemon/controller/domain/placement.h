/* Where pending jobs start: the controller's side of scheduling. It turns
 * the controller's nodes and jobs into decisions (start job J on exactly
 * these nodes and GPUs) and a pending reason for every job that waits.
 * The decisions are the caller's to commit and launch. */
#ifndef COHORT_CONTROLLER_PLACEMENT_H
#define COHORT_CONTROLLER_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/job.h"

struct node;
struct queues;
struct suspect;
struct topo;

struct placement_input {
	struct node *const *nodes;	/* with gpu_job[] up to date */
	size_t nnodes;
	const struct job **active;	/* jobs holding GPUs */
	size_t nactive;
	const struct job **pending;	/* PENDING jobs, any order */
	size_t npending;
	const struct topo *topo;	/* NULL: one flat domain */
	int64_t now_ms;
	uint64_t default_limit_s;
	/* The queue policy: enum sched_order and its aging (thousandths);
	 * zero: FIFO order. */
	int queue_order;
	uint32_t queue_aging;
	int64_t starve_s;		/* sched_config.starve_s */
	uint32_t starve_min_gpus;	/* sched_config.starve_min_gpus */
	/* Queues (queues.h); NULL or not configured: one unlimited queue,
	 * nothing preempted. */
	const struct queues *queues;
	/* Sorted job ids: preemptors whose victims are stopping, and
	 * active jobs that may not be preempted now (already being
	 * checkpointed to move or to be preempted). */
	const uint64_t *preempting;
	size_t npreempting;
	const uint64_t *busy;
	size_t nbusy;
	/* Failures attributed to nodes (suspect.h); NULL: none. Nodes with
	 * recent ones come last for restarts and large gangs, and a
	 * restart does not keep a node its job failed early on. */
	const struct suspect *suspect;
	/* Sorted ids of restarting jobs placed anywhere this pass: the
	 * nodes they would leave out (above, and job.avoid) are allowed
	 * again, for a restart that could not start without them. */
	const uint64_t *unavoid;
	size_t nunavoid;
};

struct placement_start {
	uint64_t job_id;
	struct placement *place;	/* node_rank order */
	size_t nplace;
};

struct placement_reason {
	uint64_t job_id;
	const struct job *job;	/* in->pending's pointer to it */
	char reason[160];
	int64_t start_ms;	/* expected start (the reservation); 0: none */
};

/* Start job_id once victims[0 .. n) are checkpointed and stopped. */
struct placement_preemption {
	uint64_t job_id;
	uint64_t *victims;
	size_t nvictims;
};

struct placement_result {
	struct placement_start *starts;
	size_t nstarts;
	struct placement_reason *reasons;
	size_t nreasons;
	size_t backfilled;		/* starts that backfilled */
	struct placement_preemption *preempts;
	size_t npreempts;
};

/* Whether job, restarting, leaves nodes out in this input (job.avoid,
 * or nodes it failed early on). */
bool placement_avoids(const struct placement_input *in,
    const struct job *job);

/* Decide. 0, or -1 (ENOMEM) with res empty. */
int placement_decide(const struct placement_input *in,
    struct placement_result *res);
void placement_result_free(struct placement_result *res);

#endif
