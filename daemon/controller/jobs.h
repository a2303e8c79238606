/* The controller's jobs: the in-memory table rebuilt from the database at
 * start, and every change to it. A change is written to the store inside
 * the shared transaction (txq) together with its event row, then applied
 * in memory; the caller acknowledges it only after the commit (rpc.c sends
 * replies through txq_defer). If a commit fails, the table is reloaded
 * from the database, which holds exactly what was committed. */
#ifndef COHORT_CONTROLLER_JOBS_H
#define COHORT_CONTROLLER_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/job.h"

struct store;
struct txq;
struct jobs;

/* Load every job from st. NULL with err set on failure. */
struct jobs *jobs_create(struct store *st, struct txq *q,
    const struct job_limits *limits, struct cerr *err);
void jobs_destroy(struct jobs *js);
/* Drop the table and load it again from the store. 0 or -1. */
int jobs_reload(struct jobs *js, struct cerr *err);

/* Validate spec for who, and record a new PENDING job owned by who.
 * Takes ownership of *spec's contents (left cleared) on success and on
 * failure. Returns 0 with *id set, or -1 with err (ERR_INVALID,
 * ERR_DENIED, ERR_INTERNAL). */
int jobs_submit(struct jobs *js, const struct peer *who,
    struct job_spec *spec, int64_t now_ms, uint64_t *id, struct cerr *err);

/* Cancel job id on behalf of who: its owner or an admin. A pending job
 * becomes CANCELLED at once. Returns 0 with *state set to the job's new
 * state, or -1 with err (ERR_NOT_FOUND, ERR_DENIED, ERR_CONFLICT when
 * the job has already ended, ERR_INTERNAL). */
int jobs_cancel(struct jobs *js, const struct peer *who, uint64_t id,
    int64_t now_ms, enum job_state *state, struct cerr *err);

/* The job with this id, or NULL. Borrowed. */
const struct job *jobs_get(const struct jobs *js, uint64_t id);

struct jobs_filter {
	bool all;		/* include ended jobs */
	const char *user;	/* NULL: any */
	bool has_state;
	enum job_state state;
};

/* Jobs matching f, in id order, as a malloc'd array of borrowed
 * pointers (the caller frees the array only). NULL with *n = 0 when
 * none match or on ENOMEM (errno tells). */
const struct job **jobs_list(const struct jobs *js,
    const struct jobs_filter *f, size_t *n);

size_t jobs_count(const struct jobs *js);

#endif
