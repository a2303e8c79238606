/* The allocation request salloc and srun --jobid share: one
 * AllocRequest (op, exit code for a release) over c. */
#ifndef COHORT_CLIENT_SALLOC_H
#define COHORT_CLIENT_SALLOC_H

#include <stdbool.h>
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

/* spec, as its options made it, turned into an allocation's
 * (interactive: kept while salloc is heard from): a batch job whose
 * script only holds the nodes, never started again. Its argv must be
 * empty. 0, or an exit code after saying why. */
int salloc_hold_spec(struct job_spec *spec, bool interactive);

struct salloc_how {
	const char *argv0;	/* the program's: where Slurm's commands are */
	uint32_t ntasks;	/* -n, for SLURM_NTASKS; 0: not given */
	bool quiet;		/* none of salloc's own lines */
	bool no_shell;		/* the allocation only, no command */
};
/* salloc's session for spec (salloc_hold_spec): submit, wait for the
 * start, then cmd here with the allocation's SLURM_* and its step
 * credential, kept alive while cmd runs and released with its exit
 * code, which is returned (or an exit code after saying why). */
struct output_conn_flags;
int salloc_session(const struct cconn_opts *opts,
    const struct output_conn_flags *cf, const struct job_spec *spec,
    char **cmd, const struct salloc_how *how);

#endif
