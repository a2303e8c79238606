/* The gates a waiting job passes before a scheduling pass sees it: a
 * hold (cohort hold, --hold), its --begin time, and the job's
 * dependencies and array limits. A job a gate stops is left out of the pass with its pending
 * reason set (JobHeldUser, JobHeldAdmin, Dependency, ...); a gate may
 * also end a job that can never pass (DependencyNeverSatisfied).
 * Domain code, part of the cluster (no clock, no I/O). */
#ifndef COHORT_CONTROLLER_GATES_H
#define COHORT_CONTROLLER_GATES_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/job.h"

struct cluster;
struct gates;

/* The gates of one pass over the waiting jobs, at now_ms: whatever they
 * count once per pass is counted here. NULL (ENOMEM): the caller skips
 * the pass and tries again. */
struct gates *gates_begin(struct cluster *cl, int64_t now_ms);
/* True when job (PENDING or RESTARTING, holding nothing) must wait: its
 * reason is set, and it is not offered to the scheduler this pass. */
bool gates_block(struct gates *g, const struct job *job);
void gates_end(struct gates *g);

/* The reason a job waits while held. */
const char *gates_hold_reason(enum job_hold hold);

#endif
