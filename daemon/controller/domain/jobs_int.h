/* The jobs table's insides, shared by the files of the jobs module
 * (jobs.c: the table and the lifecycle; jobs_*.c: one role each). Not for
 * the rest of the controller, which goes through jobs.h. */
#ifndef COHORT_CONTROLLER_JOBS_INT_H
#define COHORT_CONTROLLER_JOBS_INT_H

#include "daemon/controller/domain/jobs.h"
#include "lib/siphash.h"

/* Which ranks of an active job's current attempt have ended. */
struct run {
	uint64_t job_id;
	uint32_t attempt;
	size_t nranks;
	size_t ndone;
	uint8_t *done;		/* one flag per rank */
	bool failed;
	int64_t progress_ms;	/* latest progress file change seen */
	int64_t ckpt_set_ms;	/* when its checkpoint was last updated */
	/* The newest checkpoint reported within JOBS_CKPT_MIN_INTERVAL_MS
	 * of the last one written: written at the next report after it, or
	 * before the run fails over (its restart must resume from it: the
	 * job may have removed the older one). */
	char *pend_path;	/* NULL: none */
	uint64_t pend_step;
	int64_t pend_written_ms;
	/* When the controller sent the checkpoint signal (0: not asked):
	 * the next LATEST measures the job's checkpoint cost. */
	int64_t ckpt_asked_ms;
	/* The cost the job reported for its checkpoint at cost_step (0:
	 * none): preferred to the time from the signal. */
	uint64_t cost_step;
	uint32_t cost_ms;
	/* The checkpoint last written in this run and the time it counted
	 * from the signal (measured_ms; 0: none): a cost the job reports
	 * for it only after it was written replaces that, once (priced). */
	bool written;
	uint64_t written_step;
	uint64_t measured_ms;
	bool priced;
};

/* The run that the change being written ends (jobs_account.c): set by
 * jobs_account_end for the version jobs_apply writes, written with the
 * job's row by jobs_write (jobs_account_write), then cleared. */
struct jobs_ended_run {
	bool set;
	uint64_t job_id;
	uint32_t attempt;
	const char *user;	/* borrowed from the job */
	const char *queue;	/* borrowed; NULL: the default queue */
	int64_t start_ms;
	int64_t end_ms;
	uint32_t gpus;
	uint32_t nodes;
	const char *outcome;	/* static */
	uint64_t wasted_ms;
};

/* The jobs that hold an idempotency key, by user and key (jobs_keys.c):
 * job pointers, open addressing, at most half full. */
struct jobs_keys {
	struct job **v;
	size_t cap;		/* 0, or a power of two */
	size_t n;
	uint8_t seed[SIPHASH_KEY_LEN];	/* the hash's key, drawn when v is */
};

struct jobs {
	struct store *st;
	struct run *runs;
	size_t nruns;
	struct txq *q;
	struct job_limits limits;
	struct quota *quota;	/* per-user waiting jobs and submit rate */
	struct queues *queues;	/* borrowed; NULL: no queue checks */
	struct job **tab;	/* sorted by id: ids only grow */
	size_t n;
	size_t cap;
	struct jobs_keys keys;	/* the jobs of tab that hold a key */
	uint64_t last_id;
	int64_t early_fail_ms;	/* jobs_set_early_fail_window */
	struct jobs_ended_run ended;	/* jobs_account.c */
	/* Retention (jobs_retention.c): 0 keeps forever. */
	int64_t job_retention_ms;
	int64_t event_retention_ms;
	int64_t purge_next_ms;		/* the next look for old rows */
	/* Where mail about changes goes (jobs_set_outbox); NULL: none. */
	const struct outbox *out;
};

/* Room for one more job in the table and its key (jobs_append cannot
 * fail after it). 0 or -1 (ENOMEM). */
int jobs_reserve(struct jobs *js);
int jobs_append(struct jobs *js, struct job *job);
/* The job with id, or NULL with err ERR_NOT_FOUND. */
struct job *jobs_find(struct jobs *js, uint64_t id, struct cerr *err);
/* Jobs that count toward max_pending_per_user (PENDING, RESTARTING). */
bool jobs_waiting(enum job_state s);

/* Submit of a spec with --array (validated and admitted by
 * jobs_submit): one job per task, as jobs_submit's contract says; *id is
 * the array's (its first task's). */
int jobs_array_submit(struct jobs *js, const struct peer *who,
    struct job_spec *spec, int64_t now_ms, uint64_t *id, struct cerr *err);
/* At submit: every job spec's --dependency names exists, is who's own
 * (or who is an admin), and is an array where it must be one. 0, or -1
 * with err (ERR_INVALID, ERR_NOT_FOUND, ERR_DENIED). */
int jobs_depend_check(const struct jobs *js, const struct peer *who,
    const struct job_spec *spec, struct cerr *err);

/* Write one request's rows inside the shared transaction (the job's row,
 * inserted or updated with its placement, and an event): all of them, or
 * (store_undo) none. */
int jobs_write(struct jobs *js, const struct job *job, bool insert,
    int64_t now_ms, const char *kind, const char *actor, const char *detail,
    struct cerr *err);
/* jobs_write's rows without its savepoint, for a change of many jobs
 * that must be written all or none (jobs_array.c: the caller holds the
 * savepoint, store_mark). 0 or -1 with err. */
int jobs_write_rows(struct jobs *js, const struct job *job, bool insert,
    int64_t now_ms, const char *kind, const char *actor, const char *detail,
    struct cerr *err);
/* Room for more keys (jobs_keys_add cannot fail after it). 0 or -1
 * (ENOMEM). */
int jobs_keys_reserve(struct jobs_keys *k, size_t more);
/* The job of user that holds key, or NULL. */
const struct job *jobs_keys_find(const struct jobs_keys *k, const char *user,
    const char *key);
/* Add job, which stays at its address while it is in the table (nothing
 * when it holds no key); jobs_keys_reserve made room. */
void jobs_keys_add(struct jobs_keys *k, struct job *job);
/* Remove job (before it leaves the table). */
void jobs_keys_remove(struct jobs_keys *k, const struct job *job);
void jobs_keys_clear(struct jobs_keys *k);
/* Make next, whose rows are written, the job (jobs_apply's second half:
 * what job no longer shares freed, the quota's counts kept, the mail
 * its change asks for handed to the outbox, mail.c). */
void jobs_install(struct jobs *js, struct job *job, struct job *next,
    int64_t now_ms);
/* The next version of job, as a shallow copy: state with reason (a copy
 * of its own) and, when next_place is non-NULL, that placement (copied;
 * n may be 0 to clear it); start_ms and end_ms follow the state. The
 * caller may change more of next, then hands it to jobs_apply. 0, or -1
 * with err and nothing allocated. */
int jobs_next(const struct job *job, enum job_state state,
    const char *reason, const struct placement *next_place, size_t n,
    int64_t now_ms, struct job *next, struct cerr *err);
/* Free what next owns that job does not. */
void jobs_next_discard(const struct job *job, struct job *next);
/* Write next (row, placement, an event), and only once that took make
 * it the job. 0, or -1 with err, next discarded and job as it was. */
int jobs_apply(struct jobs *js, struct job *job, struct job *next,
    int64_t now_ms, const char *kind, const char *actor, const char *detail,
    struct cerr *err);
/* Move job to state with reason through jobs_next and jobs_apply. */
int jobs_transition(struct jobs *js, struct job *job, enum job_state state,
    const char *reason, int64_t now_ms, const char *kind, const char *actor,
    const struct placement *next_place, size_t n, struct cerr *err);

/* What a request does to a job, as jobs_authz.c's table names it. */
enum jobs_act {
	JOBS_ACT_CANCEL,
	JOBS_ACT_HOLD,
	JOBS_ACT_RELEASE,
	JOBS_ACT_RELEASE_ADMIN,		/* the release of an admin's hold */
	JOBS_ACT_REQUEUE,
	JOBS_ACT_UPDATE,		/* any field of the spec */
	JOBS_ACT_RAISE_PRIORITY,	/* above the default, or above its own */
	JOBS_ACT_RAISE_TIME,		/* a running job's time limit up */
	JOBS_ACT_PASS_QUEUE_LIMITS,	/* above its queue's max_time */
	JOBS_ACT_DEPEND_ON,		/* a --dependency naming the job */
	JOBS_ACT_N
};
/* May who do act to job, which would then be in queue to_queue (NULL:
 * where it is)? The table asks for rights on the job as it is (owner,
 * cluster admin, admin of its queue) and on the job as it would be (the
 * same, with the admins of to_queue). jobs_authorize says why not:
 * 0, or -1 with err (ERR_DENIED, naming the job's owner, the caller,
 * the act and who may). */
bool jobs_may(const struct jobs *js, const struct peer *who,
    const struct job *job, enum jobs_act act, const char *to_queue);
int jobs_authorize(const struct jobs *js, const struct peer *who,
    const struct job *job, enum jobs_act act, const char *to_queue,
    struct cerr *err);


/* jobs_control.c: the back-off of job's task that failed at now_ms, by
 * the window: > 0 (and *ran_ms how long its run lasted) when it failed
 * early, 0 when its run outlasted the window (or there is none). */
int64_t jobs_early_backoff(const struct jobs *js, const struct job *job,
    int64_t now_ms, int64_t *ran_ms);
/* ---- Accounting (jobs_account.c) ---- */

/* Is job in a run (RUNNING or RESIZING, started, holding GPUs)? */
bool jobs_account_in_run(const struct job *job);
/* job becomes next at now_ms: when that ends job's run, add its GPU time
 * (GPUs held x run time) to next->gpu_ms, its wasted part (the work
 * next->lost_work_ms gained, or the whole run when next is FAILED) to
 * next->wasted_gpu_ms, and keep the run for jobs_account_write. Else
 * clear what was kept. Cannot fail. */
void jobs_account_end(struct jobs *js, const struct job *job,
    struct job *next, int64_t now_ms);
/* Write the run kept for job (if any) inside jobs_write's savepoint, and
 * forget it either way. 0, or -1 with err. */
int jobs_account_write(struct jobs *js, const struct job *job,
    struct cerr *err);

#endif
