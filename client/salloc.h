/* The allocation request salloc and srun --jobid share: one
 * AllocRequest (op, exit code for a release) over c. */
#ifndef COHORT_CLIENT_SALLOC_H
#define COHORT_CLIENT_SALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "client/conn.h"
#include "lib/job.h"

enum salloc_op {
	SALLOC_CRED = 1,
	SALLOC_KEEPALIVE = 2,
	SALLOC_RELEASE = 3,
	SALLOC_STATE = 4,
};

/* 0 with *state (and for SALLOC_CRED the credential in cred[0..*credlen),
 * cred holding credmax bytes), or -1 with err: the controller's error
 * (its code), or the call's. */
int salloc_call(struct cconn *c, uint64_t job_id, enum salloc_op op,
    int exit_code, enum job_state *state, uint8_t *cred, size_t credmax,
    size_t *credlen, struct cerr *err);

#endif
