/* Where pending jobs start: the controller's side of scheduling. It turns
 * the controller's nodes and jobs into decisions (start job J on exactly
 * these nodes and GPUs) and a pending reason for every job that waits.
 * The decisions are the caller's to commit and launch. */
#ifndef COHORT_CONTROLLER_PLACEMENT_H
#define COHORT_CONTROLLER_PLACEMENT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/job.h"

struct node;
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
};

struct placement_start {
	uint64_t job_id;
	struct placement *place;	/* node_rank order */
	size_t nplace;
};

struct placement_reason {
	uint64_t job_id;
	char reason[64];
};

struct placement_result {
	struct placement_start *starts;
	size_t nstarts;
	struct placement_reason *reasons;
	size_t nreasons;
	size_t backfilled;		/* starts that backfilled */
};

/* Decide. 0, or -1 (ENOMEM) with res empty. */
int placement_decide(const struct placement_input *in,
    struct placement_result *res);
void placement_result_free(struct placement_result *res);

#endif
