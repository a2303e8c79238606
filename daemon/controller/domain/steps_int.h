/* Shared by the files of job steps: steps.c (their life) and
 * steps_layout.c (where a step goes in its job's allocation). */
#ifndef COHORT_CONTROLLER_STEPS_INT_H
#define COHORT_CONTROLLER_STEPS_INT_H

#include <sys/queue.h>
#include <stdint.h>

#include "daemon/controller/domain/steps.h"

/* The steps of one job's attempt. */
struct step_job {
	uint64_t job_id;
	uint32_t attempt;
	uint32_t next_id;
	unsigned nrunning;
	unsigned nended;
	TAILQ_HEAD(, step) steps;	/* by id */
	TAILQ_ENTRY(step_job) entry;
};

/* The step's nodes, tasks and GPUs (s->nodes, nodenames, ntasks,
 * status, gpus) for r in job's allocation beside the running steps of
 * sj (NULL: none): 0, or -1 with err (ERR_BUSY: not now, ERR_INVALID:
 * never, ERR_INTERNAL). */
int steps_layout(const struct job *job, const struct step_job *sj,
    const struct step_req *r, struct step *s, struct cerr *err);

#endif
