/* Interactive allocations (salloc): a batch job whose own task only holds
 * the nodes while salloc runs a shell on the host it was submitted from.
 * The owner's salloc keeps it alive (alloc_keepalive, also by asking for
 * the step credential) and ends it when the shell exits (alloc_release);
 * a job whose keepalives stopped for the grace is ended on the tick
 * (alloc_tick). When each job was last heard of is kept in memory only:
 * a starting controller counts from its first tick. An interactive
 * allocation is never started again: a job that lost its run any other
 * way is ended. Domain code: time comes in as now. */
#ifndef COHORT_CONTROLLER_ALLOC_H
#define COHORT_CONTROLLER_ALLOC_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/job.h"

struct cluster;

/* [controller] interactive_grace's default. */
#define ALLOC_GRACE_DEFAULT_MS (5 * 60 * 1000)

/* Job id as its owner who may use it: *job (borrowed) when who owns it,
 * else -1 with ERR_NOT_FOUND or ERR_DENIED (nobody else, admins
 * included: the allocation is the owner's session). With running, the
 * job must be RUNNING too (ERR_CONFLICT). */
int alloc_job(struct cluster *cl, const struct peer *who, uint64_t id,
    bool running, const struct job **job, struct cerr *err);
/* alloc_job, and a RUNNING interactive job is heard of now. */
int alloc_keepalive(struct cluster *cl, const struct peer *who, uint64_t id,
    bool running, int64_t now_ms, const struct job **job, struct cerr *err);

/* The owner's shell ended with exit_code: a running batch job ends as
 * its script would have, COMPLETED for 0, else FAILED with the code, its
 * gang (and steps) stopped; one not running yet is cancelled; one that
 * ended already is left as it is. 0 with *state the job's state after,
 * or -1 with err (ERR_NOT_FOUND, ERR_DENIED, ERR_INVALID for a job that
 * is not a batch job). */
int alloc_release(struct cluster *cl, const struct peer *who, uint64_t id,
    int exit_code, int64_t now_ms, enum job_state *state, struct cerr *err);

/* Interactive jobs not heard of for the grace (cluster_opts
 * interactive_grace_ms) end TIMEOUT; those that lost their run end
 * CANCELLED. Called by cluster_tick. */
void alloc_tick(struct cluster *cl, int64_t now_ms);

/* What alloc_* keep in cl, freed (cluster_destroy). */
void alloc_destroy_all(struct cluster *cl);

#endif
