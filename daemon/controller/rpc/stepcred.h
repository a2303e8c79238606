/* Step credentials: what proves that an srun runs inside its job. The
 * launch of a job's own tasks carries HMAC-SHA256(step_key, job id,
 * attempt, user) to every node of the job; the agent keeps it where only
 * the job's user can read it (COHORT_STEP_CRED), and srun sends it back
 * with StepCreateRequest. step_key is a secret of the database
 * (migration 017), so every replica and a restored backup have it, and a
 * credential is worth nothing once its attempt has ended. An edge
 * module: OpenSSL here, the store for the key, nothing of the domain. */
#ifndef COHORT_CONTROLLER_STEPCRED_H
#define COHORT_CONTROLLER_STEPCRED_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

#define STEPCRED_LEN 32

struct store;
struct stepcred;

/* The key is read from st when first needed (a replica that joined
 * empty has it once the leader's database reached it). */
struct stepcred *stepcred_create(struct store *st);
void stepcred_destroy(struct stepcred *sc);

/* The credential of (job, attempt, user) into out: 0, or -1 with err
 * (the key cannot be read). */
int stepcred_make(struct stepcred *sc, uint64_t job_id, uint32_t attempt,
    const char *user, uint8_t out[STEPCRED_LEN]);
/* Whether cred (len bytes) is that credential, compared in constant
 * time: 0, or -1 with err (ERR_DENIED). */
int stepcred_check(struct stepcred *sc, uint64_t job_id, uint32_t attempt,
    const char *user, const uint8_t *cred, size_t len, struct cerr *err);

#endif
