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
struct queues;

/* Load every job from st. qs (borrowed; may be NULL: no queue checks,
 * for tests) is the queue tree submits are admitted to (queues_admit)
 * and whose admins may cancel the queue's jobs. NULL with err set on
 * failure. */
struct jobs *jobs_create(struct store *st, struct txq *q,
    const struct job_limits *limits, struct queues *qs, struct cerr *err);
void jobs_destroy(struct jobs *js);
/* Drop the table and load it again from the store. 0 or -1. */
int jobs_reload(struct jobs *js, struct cerr *err);

/* Validate spec for who, admit it to its queue (queues_admit: the queue
 * resolved and stored in the spec, its limits checked) and record a new
 * PENDING job owned by who. Takes ownership of *spec's contents (left
 * cleared) on success and on failure. Returns 0 with *id set, or -1 with
 * err (ERR_INVALID, ERR_DENIED, ERR_NOT_FOUND for an unknown queue,
 * ERR_LIMIT when who has max_pending_per_user jobs waiting or submits
 * faster than submit_rate, ERR_INTERNAL). */
int jobs_submit(struct jobs *js, const struct peer *who,
    struct job_spec *spec, int64_t now_ms, uint64_t *id, struct cerr *err);
/* Idempotent submits: is spec's idempotency key (if any) that of one of
 * who's jobs? 1 with *id (the job, or the array's first task, that the
 * first submit with the key made), 0 when not (jobs_submit makes it),
 * -1 with err (ERR_INVALID: a malformed key; ERR_CONFLICT: the key's
 * job was made by another request, by their idem_fp). Asked before
 * jobs_submit, and before any limit that a first submit passed: a submit
 * sent again after a lost reply is answered as the first one was.
 * jobs_submit refuses a key already held with ERR_CONFLICT. */
int jobs_submit_existing(struct jobs *js, const struct peer *who,
    const struct job_spec *spec, uint64_t *id, struct cerr *err);

/* Job steps' records (jobs_account.c): a step's row (store_step_put)
 * in the current group commit; the rows of (job, attempt) still marked
 * running ended; the steps of a job's latest attempt as recorded
 * (sacct), at most max. 0, or -1 with err. */
struct store_step;
int jobs_step_record(struct jobs *js, const struct store_step *s,
    struct cerr *err);
int jobs_steps_end_running(struct jobs *js, uint64_t job_id,
    uint32_t attempt, bool node_fail, const char *reason, int64_t now_ms,
    struct cerr *err);
/* A controller starting knows no running step: those recorded as
 * running end (FAILED, saying so), their tasks are stopped as agents
 * report them. */
int jobs_steps_orphaned(struct jobs *js, int64_t now_ms, struct cerr *err);
int jobs_steps_list(struct jobs *js, uint64_t job_id, size_t max,
    int (*cb)(const struct store_step *s, void *arg), void *arg,
    struct cerr *err);
/* One step of them (store_step_get): cb once, or not when none. */
int jobs_step_get(struct jobs *js, uint64_t job_id, uint32_t step_id,
    int (*cb)(const struct store_step *s, void *arg), void *arg,
    struct cerr *err);

/* Cancel job id on behalf of who: its owner, an admin, or an admin of
 * the job's queue (queues_is_admin). A pending job
 * becomes CANCELLED at once. Returns 0 with *state set to the job's new
 * state, or -1 with err (ERR_NOT_FOUND, ERR_DENIED, ERR_CONFLICT when
 * the job has already ended, ERR_INTERNAL). */
int jobs_cancel(struct jobs *js, const struct peer *who, uint64_t id,
    int64_t now_ms, enum job_state *state, struct cerr *err);

/* ---- Control of existing jobs (jobs_control.c) ---- */

/* Hold (release false) or release job id for who. Only a waiting job
 * (PENDING or RESTARTING, holding nothing) may be held or released. Its
 * owner holds with JOB_HOLD_USER and may release only that; an admin
 * holds with JOB_HOLD_ADMIN and releases either. Returns 1 when the hold
 * changed (a "hold" or "release" event with who as the actor), 0 when
 * there was nothing to change (holding a job already held as strongly),
 * or -1 with err: ERR_NOT_FOUND, ERR_DENIED (another user's job; a
 * user releasing an admin's hold), ERR_CONFLICT (not waiting, or a
 * release of a job not held), ERR_INTERNAL. */
int jobs_hold(struct jobs *js, const struct peer *who, uint64_t id,
    bool release, int64_t now_ms, struct cerr *err);

/* May who requeue job id (its owner, an admin, an admin of its queue)?
 * It must be RUNNING. 0 with a "requeue" event written (actor who), the
 * caller then checkpoints and stops it (the preemption path), or -1 with
 * err: ERR_NOT_FOUND, ERR_DENIED, ERR_CONFLICT (not running: a pending
 * job has nothing to requeue). */
int jobs_requeue(struct jobs *js, const struct peer *who, uint64_t id,
    int64_t now_ms, struct cerr *err);
/* How a requeued job's preemption cause begins ("Requeued by alice"). */
#define JOBS_REQUEUED_PREFIX "Requeued by "

/* What cohort update changes; a field not set stays as it is. */
struct job_update {
	bool has_time;
	uint64_t time_limit_s;
	bool has_priority;
	int32_t priority;
	const char *name;		/* NULL: unchanged */
	bool has_nodes;
	uint32_t nodes_min, nodes_max;
	bool has_gpus_per_node;
	uint32_t gpus_per_node;
	bool has_tasks_per_node;
	uint32_t tasks_per_node;
	const char *gpu_type;		/* NULL: unchanged */
	const char *queue;		/* NULL: unchanged */
	bool has_max_restarts;
	uint32_t max_restarts;
	bool has_cpu_only;
	bool cpu_only;
};

/* Change job id's spec for who (its owner, an admin, an admin of its
 * queue). A PENDING job holding nothing may change any field; the new
 * spec is validated as a submit would be (job_spec_validate, then the
 * queue's admission for the job's owner). Any other live job only its
 * time limit and priority, which its owner may only lower and admins
 * may also raise. One "update" event lists old->new; changes (len
 * bytes) says the same for the reply. 0 (also when nothing changed:
 * no event then), or -1 with err naming the option: ERR_INVALID,
 * ERR_DENIED, ERR_NOT_FOUND, ERR_CONFLICT (ended, or a field a running
 * job cannot change), ERR_INTERNAL. */
int jobs_update(struct jobs *js, const struct peer *who, uint64_t id,
    const struct job_update *u, int64_t now_ms, char *changes, size_t len,
    struct cerr *err);

/* cohort cancel's filters (scancel --user, --state, --name): every field
 * set must match. */
struct jobs_select {
	const char *user;	/* NULL: any (a user: their own jobs) */
	const enum job_state *states;	/* nstates 0: any live state */
	size_t nstates;
	const char *name;	/* NULL: any */
};
/* The live jobs matching sel that who may cancel (their own; any as an
 * admin or an admin of the job's queue), in id order: at most max ids
 * into ids[], *more set when more match. Returns how many. One scan of
 * the table. */
size_t jobs_select(const struct jobs *js, const struct peer *who,
    const struct jobs_select *sel, uint64_t *ids, size_t max, bool *more);

/* Early failures (docs/SPEC.md, --max-restarts): a task that fails within
 * window_ms of its run's start (for a reason not the hardware's: those
 * come through jobs_fail_over) restarts after a back-off; 0: at once.
 * jobs_create sets JOBS_EARLY_FAIL_WINDOW_MS. */
#define JOBS_EARLY_FAIL_WINDOW_MS 60000
void jobs_set_early_fail_window(struct jobs *js, int64_t window_ms);
/* Has job's run started less than window_ms ago (window_ms > 0), a
 * task failing now being an early failure? A service's exits are not
 * failures: never. The one test of "early" the back-off, the restarts
 * and the suspect code share, each with its own window. */
bool jobs_ran_under(const struct job *job, int64_t now_ms,
    int64_t window_ms);
/* jobs_ran_under with the controller's early_fail_window. */
bool jobs_failed_early(const struct jobs *js, const struct job *job,
    int64_t now_ms);
/* The run of job id's current attempt failed early, its failing rank on
 * node: remembered (memory only), and true when the run before it (the
 * attempt just before) failed early on that same node too. */
bool jobs_early_again(struct jobs *js, uint64_t id, const char *node);
/* The outbox (borrowed: it outlives js, or is set again) that receives
 * the mail of every change of a job (mail.c); NULL: none, the default.
 * cluster_create sets its own. */
struct outbox;
void jobs_set_outbox(struct jobs *js, const struct outbox *out);
/* ---- Arrays and dependencies (jobs_array.c, jobs_depend.c) ---- */

/* The tasks of array array_id (the id of its first task): *tasks points
 * at them in the table (borrowed, valid until the table changes), in id
 * and index order. Returns how many; 0 (*tasks NULL) when array_id is
 * not an array's id. O(log n). */
size_t jobs_array_tasks(const struct jobs *js, uint64_t array_id,
    struct job *const **tasks);
/* The task of array_id with index task, or NULL. */
const struct job *jobs_array_task(const struct jobs *js, uint64_t array_id,
    uint32_t task);
/* Cancel every unfinished task of array array_id on behalf of who (as
 * jobs_cancel: owner, admin, queue admin), all in one write or none.
 * 0 with *ncancelled, or -1 with err: ERR_NOT_FOUND, ERR_INVALID (not
 * an array's id), ERR_DENIED, ERR_CONFLICT (every task has ended). The
 * caller stops the gangs of the tasks that held an allocation. */
int jobs_array_cancel(struct jobs *js, const struct peer *who,
    uint64_t array_id, int64_t now_ms, size_t *ncancelled, struct cerr *err);

struct depend_status;

/* What became of the jobs a dependency item names (lib/depend.h's
 * lookup): job id (an array's id: all its tasks), or task of array id
 * when has_task. 0, or -1 when there is no job id. */
int jobs_depend_lookup(const struct jobs *js, uint64_t id, bool has_task,
    uint32_t task, struct depend_status *st);
/* The reason of a job whose dependency can never hold (as Slurm's). */
#define JOBS_DEPEND_NEVER "DependencyNeverSatisfied"
/* Cancel waiting job id, whose dependency can never hold (why: the item
 * that cannot, "afterok:12"), with reason JOBS_DEPEND_NEVER and a
 * "dependency" event, as Slurm's kill_invalid_depend. 0 or -1 with err. */
int jobs_depend_never(struct jobs *js, uint64_t id, const char *why,
    int64_t now_ms, struct cerr *err);

/* ---- Lifecycle, driven by the scheduler and the agents (cluster.c) ---- */

/* The scheduler placed pending job id on place[0..n): record the
 * allocation; the job stays PENDING with reason "Launching" until every
 * node has started its tasks. */
int jobs_allocate(struct jobs *js, uint64_t id, const struct placement *place,
    size_t n, int64_t now_ms, struct cerr *err);
/* Every node has started its tasks: RUNNING. */
int jobs_mark_running(struct jobs *js, uint64_t id, int64_t now_ms,
    struct cerr *err);
/* How a start failed, for what happens next. */
enum start_failure {
	START_RETRY,		/* not the job's doing (the controller
				 * restarted): place it again at once */
	START_TRANSIENT,	/* may pass (node unreachable, timed out,
				 * busy, a node-side error): back off */
	START_PERMANENT,	/* never works as given (user missing or
				 * refused, bad spec): FAILED */
};

/* Back-off bounds of START_TRANSIENT: 1 s, doubling, at most 5 min. */
#define JOBS_BACKOFF_MIN_MS 1000
#define JOBS_BACKOFF_MAX_MS (5 * 60 * 1000)

/* The class of a start a node refused with code: ERR_INVALID,
 * ERR_DENIED and ERR_NOT_FOUND are the job's (its user, its spec):
 * permanent; anything else may pass. */
enum start_failure jobs_start_failure_class(enum err_code code);
/* The back-off after one that lasted prev_ms (0: none yet). */
int64_t jobs_backoff_next(int64_t prev_ms);

/* A start failed: the allocation released and, by how:
 *   START_PERMANENT  FAILED with reason;
 *   START_TRANSIENT  back to PENDING (a restarting job: RESTARTING) with
 *                    "StartBackoff: REASON; retry in N s", not placed
 *                    again before now + the next back-off;
 *   START_RETRY      back to PENDING (RESTARTING) with reason. */
int jobs_start_failed(struct jobs *js, uint64_t id, enum start_failure how,
    const char *reason, int64_t now_ms, struct cerr *err);
/* True while the job's start back-off runs (the pass skips it). */
bool jobs_backing_off(const struct job *job, int64_t now_ms);
/* A task of (id, restart) ended with wait_status; why, when not empty, is
 * the agent's word on why it could not start. Recorded once per rank.
 * *state is the job's state afterwards: RESTARTING (or FAILED once its
 * restarts are used up) when this task failed — the caller stops the
 * rest of the gang — COMPLETED when it was the last and every task
 * exited 0, else unchanged. Exits of other attempts or of jobs that no
 * longer run are recorded and change nothing. */
int jobs_task_exit(struct jobs *js, uint64_t id, uint32_t restart,
    unsigned rank, int wait_status, const char *why, int64_t now_ms,
    enum job_state *state, struct cerr *err);
/* As jobs_task_exit, for a task whose start failed permanently (why
 * says how: no such command or workdir): the job is FAILED at once,
 * its restarts untouched, instead of restarting a gang that cannot
 * start. */
int jobs_task_start_failed(struct jobs *js, uint64_t id, uint32_t restart,
    unsigned rank, int wait_status, const char *why, int64_t now_ms,
    enum job_state *state, struct cerr *err);
/* End an active job as state (TIMEOUT, CANCELLED, FAILED) with reason. */
int jobs_end(struct jobs *js, uint64_t id, enum job_state state,
    const char *reason, int64_t now_ms, struct cerr *err);

/* The job lost its gang (a node DOWN or FAILED, a failed task, a hang, a
 * drain): restart it from its last checkpoint. It becomes RESTARTING
 * (ahead of pending work of its priority) with its allocation released,
 * unless counted and its max_restarts are used up: then FAILED with
 * cause. Planned moves (drain --now, a DEGRADED node) pass counted false.
 * failure_ms is when the failure was seen: the work since the last
 * checkpoint is added to lost_work_ms. *state is the new state. */
int jobs_fail_over(struct jobs *js, uint64_t id, const char *cause,
    bool counted, int64_t failure_ms, int64_t now_ms, enum job_state *state,
    struct cerr *err);
/* Job id (holding an allocation) was preempted for another: back to
 * PENDING with reason cause ("Preempted by JOB of QUEUE"), its allocation
 * released and no node kept, its restarts untouched; the work since its
 * last checkpoint at failure_ms is added to lost_work_ms (and to *lost_ms
 * when not NULL); a "preempt" event says which checkpoint it resumes
 * from and what was lost. */
int jobs_preempt(struct jobs *js, uint64_t id, const char *cause,
    int64_t failure_ms, int64_t now_ms, uint64_t *lost_ms, struct cerr *err);
/* How a preempted job's reason begins. */
#define JOBS_PREEMPTED_PREFIX "Preempted by "
/* A service ending within this long of its start backs off further. */
#define JOBS_SERVICE_STABLE_MS (10 * 60 * 1000)
/* A running elastic job starts changing size: RESIZING until its gang is
 * stopped and placed again. */
int jobs_begin_resize(struct jobs *js, uint64_t id, const char *why,
    int64_t now_ms, struct cerr *err);
/* Rank 0's agent reported LATEST = (step, path) for attempt, written at
 * written_ms. Returns 1 when it is new (stored, with an event), 0 when
 * already known, for another attempt, or within JOBS_CKPT_MIN_INTERVAL_MS
 * of the job's last update (a later heartbeat repeats it), -1 with err. */
int jobs_checkpoint(struct jobs *js, uint64_t id, uint32_t attempt,
    uint64_t step, const char *path, int64_t written_ms, int64_t now_ms,
    struct cerr *err);
/* A job's checkpoint is written (a row, an event, a log line) at most
 * this often, whatever its agent reports. */
#define JOBS_CKPT_MIN_INTERVAL_MS 1000
/* A node saw the job's progress file change at changed_ms (memory). */
void jobs_progress(struct jobs *js, uint64_t id, uint32_t attempt,
    int64_t changed_ms);
/* The latest progress seen for the job's current attempt; 0: none. */
int64_t jobs_last_progress(const struct jobs *js, uint64_t id);
/* An event about job id (and node, may be NULL) that changes no row,
 * in the shared transaction. 0, or -1 with err and nothing written. */
int jobs_event(struct jobs *js, uint64_t id, const char *node,
    const char *kind, const char *actor, const char *detail, int64_t now_ms,
    struct cerr *err);
/* The restart after the job's current attempt leaves node out, with any
 * other node already left out for it (job.avoid; memory). 0, or -1:
 * JOB_AVOID_MAX nodes are left out already, or no memory. */
int jobs_avoid_node(struct jobs *js, uint64_t id, const char *node);
/* How many nodes the restart after job's current attempt leaves out. */
unsigned jobs_avoiding(const struct job *job);
/* Whether that restart leaves node out. */
bool jobs_avoids(const struct job *job, const char *node);

/* Why a pending job waits (Resources, Priority, ...): kept in memory only,
 * since a pass recomputes it; no commit per pass. */
void jobs_set_pending_reason(struct jobs *js, uint64_t id,
    const char *reason);
/* Why a job holding its allocation is not RUNNING yet ("ImagePull: 1 of 2
 * nodes ready"): in memory only, as the pending reason; nothing for a job
 * not launching (no allocation, or not PENDING or RESTARTING). */
void jobs_set_launch_reason(struct jobs *js, uint64_t id, const char *reason);
/* What job id's container image is known by (a node prepared it):
 * memory only; digest not "sha256:HEX" is ignored. */
void jobs_set_image_digest(struct jobs *js, uint64_t id, const char *digest);
/* Both of a pass's verdicts for a job of js it listed as pending (the
 * pointer from jobs_list, valid through the pass): jobs_set_pending_reason
 * and then jobs_set_expected_start, without looking the job up twice. */
void jobs_set_waiting(struct jobs *js, const struct job *job,
    const char *reason, int64_t start_ms);

/* Has rank of job's current attempt reported its exit? */
bool jobs_rank_ended(const struct jobs *js, const struct job *job,
    unsigned rank);
/* Jobs that hold an allocation (launching or running), in id order:
 * *out is a malloc'd array of *n borrowed pointers (NULL when the table
 * is empty; the caller frees the array only). 0, or -1 with errno ENOMEM
 * and *out NULL, *n 0: then nobody knows which jobs hold GPUs, and the
 * caller must not act as if none did (a pass skips and runs again). */
int jobs_active(const struct jobs *js, const struct job ***out, size_t *n);
/* True when the job holds an allocation. */
bool jobs_is_active(const struct job *job);

/* The job with this id, or NULL. Borrowed. */
const struct job *jobs_get(const struct jobs *js, uint64_t id);

struct jobs_filter {
	bool all;		/* include ended jobs */
	const char *user;	/* NULL: any */
	bool has_state;
	enum job_state state;
	/* History. states: any of these (bit 1 << state; 0: no
	 * such filter; ended states included when named). name: the job's
	 * exact name (NULL: any). since_ms/until_ms (0: open), as sacct's
	 * -S/-E: the jobs that existed in the window, submitted before
	 * until_ms and not ended before since_ms. */
	unsigned states;
	const char *name;
	int64_t since_ms;
	int64_t until_ms;
	uint64_t array_id;	/* the tasks of this array only; 0: any */
};

/* Jobs matching f, in id order, as jobs_active: 0 with *out (may be
 * NULL when none match) and *n, or -1 with errno ENOMEM, *out NULL and
 * *n 0, which the caller must not take for "none". */
int jobs_list(const struct jobs *js, const struct jobs_filter *f,
    const struct job ***out, size_t *n);

/* One page of jobs matching f: those with an id above after_id, in id
 * order, at most max of them into out[] (borrowed pointers), examining
 * at most scan jobs (0: no bound). *more tells whether more may match
 * after *next, the cursor for the next page: the last job returned, or,
 * when the scan bound stopped the page (possibly empty), the last job
 * examined; it is above after_id whenever *more is set. Returns how
 * many. Costs O(log n) plus at most scan jobs, without allocating. */
size_t jobs_page(const struct jobs *js, const struct jobs_filter *f,
    uint64_t after_id, const struct job **out, size_t max, size_t scan,
    bool *more, uint64_t *next);
/* Jobs one ListJobs request examines at most, per item its page may
 * hold: a filter that matches little cannot make a request scan the
 * whole table (the client follows the cursor instead). */
#define JOBS_PAGE_SCAN_PER_ITEM 10

size_t jobs_count(const struct jobs *js);

/* An agent reports a task of job id, which this controller has no record
 * of: one acknowledged by a controller whose database was then restored
 * from an older backup. Its id must never be handed out again, so the
 * id counter is raised to it (durably, with the loop round's commit).
 * Ids at or below the highest known are left as they are, and so are
 * ids more than JOBS_FOREIGN_ID_SLACK above it (a lying agent cannot use
 * up the id space; tests use such an id for a report no job matches).
 * 0, or -1 with err when the store fails. */
#define JOBS_FOREIGN_ID_SLACK 100000000ULL
int jobs_note_foreign_id(struct jobs *js, uint64_t id, struct cerr *err);

/* ---- Per-user limits (quota.h) ---- */

struct quota_stats;

/* user's jobs that wait for a start (PENDING or RESTARTING): the count
 * max_pending_per_user is checked against, kept at every change. */
uint32_t jobs_pending_of(const struct jobs *js, const char *user);
/* New limits (SIGHUP): the script size and per-user limits apply to the
 * next submits; the pending counts stay. */
void jobs_set_limits(struct jobs *js, const struct job_limits *limits);
/* Submits refused by the limits so far. */
void jobs_quota_stats(const struct jobs *js, struct quota_stats *st);

/* ---- History, usage and expected starts (jobs_account.c) ---- */

enum jobs_usage_by {
	JOBS_USAGE_USER,
	JOBS_USAGE_QUEUE,
	JOBS_USAGE_STATE,	/* what ended each run; RUNNING for a run
				 * going on */
	JOBS_USAGE_DAY,		/* UTC days */
};

/* GPU time used in [since_ms, until_ms), of user and queue (NULL: any),
 * grouped by. */
struct jobs_usage_query {
	int64_t since_ms;
	int64_t until_ms;
	const char *user;
	const char *queue;
	enum jobs_usage_by by;
};

#define JOBS_USAGE_KEY_MAX 64
/* The most groups one answer holds: the window is to be narrowed. */
#define JOBS_USAGE_ROWS_MAX 10000

struct jobs_usage_row {
	char key[JOBS_USAGE_KEY_MAX + 1]; /* user, queue or outcome; "" by
					 * day */
	int64_t day_ms;			/* by day: its UTC midnight */
	uint64_t gpu_ms;
	uint64_t wasted_gpu_ms;
	uint64_t runs;			/* runs that touched the group */
};

/* The usage of q: the recorded runs (store_usage) and the runs going on
 * at now_ms, clipped to the window, in key (or day) order. 0 with *rows
 * (malloc'd, NULL when none) and *n, or -1 with err (ERR_LIMIT past
 * JOBS_USAGE_ROWS_MAX groups, ERR_INTERNAL). */
int jobs_account_usage(struct jobs *js, const struct jobs_usage_query *q,
    int64_t now_ms, struct jobs_usage_row **rows, size_t *n,
    struct cerr *err);

/* The controller sent job id's attempt its checkpoint signal at now_ms:
 * the next checkpoint of that attempt measures the job's checkpoint cost
 * (goodput.h). A second ask before it keeps the first. */
void jobs_ckpt_asked(struct jobs *js, uint64_t id, uint32_t attempt,
    int64_t now_ms);
/* Job id's attempt reported that its checkpoint at step took cost_ms
 * (CKPT_MS): when that checkpoint is written, this is its cost and its
 * checkpoint time, rather than the time from the signal; when it was
 * written already (the report came later than LATEST), it replaces that
 * time at now_ms, once. A cost of 0 or above GOODPUT_CKPT_COST_MAX_MS
 * is no report. */
void jobs_ckpt_cost(struct jobs *js, uint64_t id, uint32_t attempt,
    uint64_t step, uint32_t cost_ms, int64_t now_ms);
/* The checkpoint interval advised to job id at now_ms (memory, like its
 * expected start; 0: none). */
void jobs_set_ckpt_advice(struct jobs *js, uint64_t id, uint32_t advice_s,
    int64_t now_ms);

/* When the scheduler expects pending job id to start (its reservation:
 * sched_result.resv), in memory like its pending reason; 0: unknown.
 * Any change of state, and a reason set without it, clears it. */
void jobs_set_expected_start(struct jobs *js, uint64_t id,
    int64_t start_ms);

/* ---- Retention (jobs_retention.c) ---- */

/* Finished jobs whose end is older than job_ms, and events older than
 * event_ms, are purged (0: kept forever). */
void jobs_retention_set(struct jobs *js, int64_t job_ms, int64_t event_ms);
/* A purge removes at most this many jobs (each with its runs, exits,
 * placement and events) and this many other events per call. */
#define JOBS_PURGE_JOBS_MAX 100
#define JOBS_PURGE_EVENTS_MAX 500
/* How often the tick looks for old rows while none are left over. */
#define JOBS_PURGE_INTERVAL_MS (60 * 1000)
/* One bounded purge at now_ms, inside the shared transaction: *njobs
 * jobs and *nevents events went (the table and the database alike).
 * 0, or -1 with err (nothing purged). */
int jobs_retention_purge(struct jobs *js, int64_t now_ms, size_t *njobs,
    size_t *nevents, struct cerr *err);
/* From the tick: purge when due (every JOBS_PURGE_INTERVAL_MS, or at once
 * while a batch came back full); failures are logged. */
void jobs_retention_tick(struct jobs *js, int64_t now_ms);

#endif
