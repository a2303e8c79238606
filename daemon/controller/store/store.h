/* The only module that includes sqlite3.h. It owns the database: opens it
 * (WAL, synchronous=FULL, foreign keys, busy timeout), applies the
 * numbered migrations of sql/migrations/ by PRAGMA user_version, refuses a
 * database newer than this binary, and prepares every statement once.
 *
 * Writes happen inside a transaction the caller opens with store_begin and
 * closes with store_commit (or store_rollback); the group commit of
 * daemon/controller/store/txq.c shares one transaction among concurrent
 * requests. Every function returns 0, or -1 with err set when it takes one
 * (ERR_INTERNAL with SQLite's message), else with errno set (EIO). */
#ifndef COHORT_STORE_H
#define COHORT_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/inventory.h"
#include "lib/job.h"

struct store;

/* The schema version this binary writes (the number of migrations). */
int store_schema_version(void);

/* Open (creating if needed) and migrate the database at path, in WAL
 * mode; ":memory:" (the unit tests' store) is a private in-memory
 * database. */
struct store *store_open(const char *path, struct cerr *err);
/* The replicated store (repl.h): REPL_DB on the VFS named vfs, with
 * dqlite's settings (4 KiB pages, WAL without checkpoints or fsync: the
 * Raft log is the durability), and commit(arg) run after every COMMIT
 * that wrote, migrations' too, so that nothing counts as committed
 * before a quorum has it. With restore (a cohortd --backup file) an
 * empty database is first filled from it (cohortd --bootstrap
 * --restore FILE); a database that is not empty is refused. */
struct store *store_open_replicated(const char *name, const char *vfs,
    int (*commit)(void *arg, struct cerr *err), void *arg,
    const char *restore, struct cerr *err);
/* Finalize statements and close; accepts NULL. An open transaction is
 * rolled back. */
void store_close(struct store *st);

/* BEGIN IMMEDIATE / COMMIT / ROLLBACK. store_commit returns -1 when the
 * commit failed; the transaction is then rolled back. */
int store_begin(struct store *st, struct cerr *err);
int store_commit(struct store *st, struct cerr *err);
int store_rollback(struct store *st);
bool store_in_txn(const struct store *st);

/* COMMIT without waiting for the WAL to reach the disk: the commit is
 * visible to readers but not yet durable, and nothing that depends on it
 * may leave the process before fdatasync(store_wal_fd(st)) returned 0 in
 * a call that started after this one. *owed says whether a sync was
 * skipped. A WAL restart's header and checkpoints keep their own syncs.
 * On a store without a WAL of its own (in memory, replicated) this is
 * store_commit, and *owed is false. 0 or -1 as store_commit. */
int store_commit_nosync(struct store *st, bool *owed, struct cerr *err);
/* A descriptor of the WAL file that another thread may fdatasync (it
 * stays open until store_close), or -1: the database has none of its
 * own (in memory, replicated), and commits are durable when they return. */
int store_wal_fd(struct store *st);

/* One request's writes inside the shared transaction: store_mark starts
 * them (SAVEPOINT), store_keep ends them (RELEASE), store_undo discards
 * them (ROLLBACK TO + RELEASE), so a failing request leaves the others'
 * writes intact. Not nested. */
int store_mark(struct store *st, struct cerr *err);
int store_keep(struct store *st, struct cerr *err);
int store_undo(struct store *st);

/* Insert a new job (all of job, including job->id, chosen by the caller).
 * Inside a transaction. */
int store_job_insert(struct store *st, const struct job *job,
    struct cerr *err);
/* Write a job's state, reason, start/end times, restarts and exit code.
 * Inside a transaction. ERR_NOT_FOUND if no such job. */
int store_job_update(struct store *st, const struct job *job,
    struct cerr *err);
/* Write the spec columns cohort update may change (name, nodes, GPUs and
 * tasks per node, GPU type, time limit, priority, max restarts, queue,
 * cpu_only). Inside a transaction. ERR_NOT_FOUND if no such job. */
int store_job_update_spec(struct store *st, const struct job *job,
    struct cerr *err);

/* Append an event. job_id 0 and node NULL mean "none". Inside a
 * transaction. */
int store_event_append(struct store *st, int64_t time_ms, uint64_t job_id,
    const char *node, const char *kind, const char *actor, const char *detail,
    struct cerr *err);

/* Call cb for every job, in id order. cb takes ownership of job and
 * returns 0 to go on, -1 to stop (store_jobs_load then returns -1). */
int store_jobs_load(struct store *st,
    int (*cb)(struct job *job, void *arg), void *arg, struct cerr *err);

/* The highest job id ever used (0 when none). Ids are never reused, even
 * across restarts, so this also accounts for removed jobs. */
int store_max_job_id(struct store *st, uint64_t *id, struct cerr *err);
/* Raise the highest job id ever used to at least id (never lowers it),
 * inside the current transaction. */
int store_job_id_bump(struct store *st, uint64_t id, struct cerr *err);

struct store_event {
	int64_t id;
	int64_t time_ms;
	uint64_t job_id;	/* 0: none */
	const char *node;	/* NULL: none */
	const char *kind;
	const char *actor;
	const char *detail;
};

/* Call cb for each event with id > after_id and time_ms >= since_ms,
 * filtered by job (0: any), node (NULL: any) and kind (NULL: any),
 * oldest first, at most limit (<= 0: no limit). Strings are borrowed
 * for the duration of the call; cb returns -1 to stop (then this
 * returns -1). */
int store_events_list(struct store *st, int64_t after_id, uint64_t job_id,
    const char *node, const char *kind, int64_t since_ms, int limit,
    int (*cb)(const struct store_event *ev, void *arg), void *arg,
    struct cerr *err);
/* The id of the latest event (0: none), so that a reader wanting the
 * last N lists after id - N (ids are dense at the new end: retention
 * removes the oldest). 0, or -1 with err. */
int store_events_last_id(struct store *st, int64_t *id, struct cerr *err);

/* ---- Nodes, placements and task exits (store_nodes.c) ---------------- */

struct store_node {
	const char *name;
	const char *address;	/* "" when none */
	const char *state;	/* "UP" or "DOWN" */
	const char *reason;	/* "" when none */
	int64_t since_ms;	/* when it entered that state */
};

/* Insert or replace a node with its inventory (its GPU rows are replaced
 * as a whole). Inside a transaction. */
int store_node_put(struct store *st, const struct store_node *n,
    const struct inventory *inv, struct cerr *err);
/* Change a node's state and reason. ERR_NOT_FOUND if unknown. Inside a
 * transaction. */
int store_node_set_state(struct store *st, const char *name,
    const char *state, const char *reason, int64_t since_ms,
    struct cerr *err);
/* Call cb for every node, by name; the pointers are borrowed for the
 * call. cb returns 0 to go on, -1 to stop. */
int store_nodes_load(struct store *st,
    int (*cb)(const struct store_node *n, const struct inventory *inv,
    void *arg), void *arg, struct cerr *err);

/* Replace the placement of a job (n == 0 clears it). Inside a
 * transaction. */
int store_job_placement(struct store *st, uint64_t job_id,
    const struct placement *place, size_t n, struct cerr *err);
/* store_jobs_load fills each job's place/nplace from the same table. */

/* A job step's record (sacct's J.S rows), written when it starts and
 * again when it ends (store_step_put replaces the row). Strings are
 * borrowed. */
struct store_step {
	uint64_t job_id;
	uint32_t attempt;
	uint32_t step_id;
	const char *name;
	int state;			/* enum job_state */
	bool node_fail;
	bool has_exit;
	int32_t exit_code;
	const char *reason;
	int64_t start_ms, end_ms;	/* end_ms 0: running */
	const char *nodelist;		/* "a,b": the step's nodes in order */
	const char *tasks_per_node;	/* "2,2" */
	uint32_t ntasks, gpus;
};
/* Inside a transaction. */
int store_step_put(struct store *st, const struct store_step *s,
    struct cerr *err);
/* The steps of job_id's latest attempt that has any, by id, at most max:
 * cb gets each with strings borrowed until it returns (-1 from cb stops
 * with its err). */
int store_steps_list(struct store *st, uint64_t job_id, size_t max,
    int (*cb)(const struct store_step *s, void *arg), void *arg,
    struct cerr *err);
/* Step step_id of that attempt, as store_steps_list gives it: cb is
 * called once, or not at all when there is no such row. */
int store_step_get(struct store *st, uint64_t job_id, uint32_t step_id,
    int (*cb)(const struct store_step *s, void *arg), void *arg,
    struct cerr *err);
/* End the steps of (job, attempt) still recorded as running (a
 * controller that restarted does not know them): inside a transaction. */
int store_steps_end_running(struct store *st, uint64_t job_id,
    uint32_t attempt, int state, bool node_fail, const char *reason,
    int64_t end_ms, struct cerr *err);
/* End every step still recorded as running (a controller starting: it
 * knows none of them), inside a transaction. */
int store_steps_end_all(struct store *st, int state, const char *reason,
    int64_t end_ms, struct cerr *err);
/* The secret called name, exactly len bytes, into buf: 0, or -1 with
 * err (ERR_NOT_FOUND: none, or not len bytes). */
int store_secret(struct store *st, const char *name, uint8_t *buf,
    size_t len, struct cerr *err);

/* Record that a task of (job, restart) ended. Recording the same rank
 * twice keeps the first record and is not an error (agents re-send until
 * acknowledged). Inside a transaction. */
int store_task_exit(struct store *st, uint64_t job_id, uint32_t restart,
    unsigned rank, int wait_status, int64_t time_ms, struct cerr *err);
/* Call cb for every recorded exit of (job, restart), by rank. */
int store_task_exits_load(struct store *st, uint64_t job_id,
    uint32_t restart,
    int (*cb)(unsigned rank, int wait_status, void *arg), void *arg,
    struct cerr *err);

/* ---- Drains (store_nodes.c) ------------------------------------------ */

struct store_drain {
	const char *node;
	const char *reason;
	const char *actor;	/* who drained it (a user, or "health") */
	int64_t time_ms;
	bool from_health;	/* needs a healthy report before resume */
};

/* Record (or replace) a node's drain. Inside a transaction. */
int store_node_drain(struct store *st, const struct store_drain *d,
    struct cerr *err);
/* Clear a node's drain; no drain is fine. Inside a transaction. */
int store_node_undrain(struct store *st, const char *node, struct cerr *err);
/* Remove a node with its inventory and its drain. ERR_NOT_FOUND if
 * unknown. Inside a transaction. */
int store_node_delete(struct store *st, const char *name, struct cerr *err);
/* Call cb for every drained node, by name (borrowed strings). */
int store_drains_load(struct store *st,
    int (*cb)(const struct store_drain *d, void *arg), void *arg,
    struct cerr *err);

/* ---- Suspect nodes (store_nodes.c; suspect.h) ------------------------ */

/* A node's suspicion (strings borrowed). */
struct store_suspect {
	const char *node;
	bool exempt;
	int64_t cleared_ms;
	const char *reason;	/* "" when none */
	int64_t drained_ms;
};

/* One piece of evidence against a node (strings borrowed). */
struct store_evidence {
	const char *node;
	uint32_t seq;
	int64_t time_ms;
	const char *kind;
	uint64_t job_id;
	const char *user;
	bool confirmed;
	const char *detail;
};

/* Replace node s->node's suspicion and its evidence ev[0..n) as a whole.
 * Inside a transaction. */
int store_suspect_put(struct store *st, const struct store_suspect *s,
    const struct store_evidence *ev, size_t n, struct cerr *err);
/* Call cb for every suspicion by node, then (evidence_cb) every piece of
 * evidence by node and seq; strings borrowed for the call. */
int store_suspects_load(struct store *st,
    int (*cb)(const struct store_suspect *s, void *arg),
    int (*evidence_cb)(const struct store_evidence *e, void *arg),
    void *arg, struct cerr *err);

/* ---- Runs, usage and retention (store_history.c) ---------------------- */

/* One run of a job (sql/migrations/008_runs.sql): from start_ms to end_ms
 * holding gpus GPUs on nodes nodes, ended by outcome; the last wasted_ms
 * of it were lost (wasted_ms <= end_ms - start_ms). Strings borrowed. */
struct store_run {
	uint64_t job_id;
	uint32_t attempt;
	const char *user;
	const char *queue;
	int64_t start_ms;
	int64_t end_ms;
	uint32_t gpus;
	uint32_t nodes;
	const char *outcome;
	uint64_t wasted_ms;
};

/* Record a run. Inside a transaction (the one that ends the run). */
int store_run_insert(struct store *st, const struct store_run *r,
    struct cerr *err);

enum store_usage_by {
	STORE_USAGE_USER,
	STORE_USAGE_QUEUE,
	STORE_USAGE_STATE,	/* the run's outcome */
	STORE_USAGE_DAY,	/* UTC days */
};

/* The window [since_ms, until_ms) and the filters of a usage query
 * (user, queue: NULL for any). */
struct store_usage_query {
	int64_t since_ms;
	int64_t until_ms;
	const char *user;
	const char *queue;
	enum store_usage_by by;
};

/* One group: key (borrowed for the callback; NULL by day) or day_ms (the
 * UTC midnight starting it); the GPU-milliseconds of its runs within the
 * window, of which wasted, and how many runs touched it. */
struct store_usage_row {
	const char *key;
	int64_t day_ms;
	int64_t gpu_ms;
	int64_t wasted_gpu_ms;
	int64_t runs;
};

/* Call cb for each group of the runs overlapping q's window, by key (or
 * day), each run clipped to the window (and, by day, split at UTC
 * midnights); its wasted part is the overlap of its last wasted_ms with
 * them. A read: no transaction needed. Costs one index range scan of the
 * runs that end after since_ms (plus a row per extra day a run spans).
 * cb returns -1 to stop (then this returns -1). */
int store_usage(struct store *st, const struct store_usage_query *q,
    int (*cb)(const struct store_usage_row *row, void *arg), void *arg,
    struct cerr *err);

/* Delete a job with everything that names it: its runs, task exits,
 * placement and events, then its row (max_job_id keeps its id used).
 * Inside a transaction. */
int store_job_purge(struct store *st, uint64_t job_id, struct cerr *err);
/* Delete at most max events older than before_ms, oldest first; *n is
 * how many went. Inside a transaction. */
int store_events_purge(struct store *st, int64_t before_ms, int max,
    int *n, struct cerr *err);

/* ---- Backup (store_backup.c) ------------------------------------------ */

/* Replace an existing file (else it is refused). */
#define STORE_BACKUP_FORCE 0x1

/* What a backup wrote, read back from the copy. */
struct store_backup_info {
	int64_t schema;		/* its PRAGMA user_version */
	int64_t jobs;		/* rows of jobs, nodes and events */
	int64_t nodes;
	int64_t events;
	uint64_t max_job_id;	/* the highest id ever handed out */
	uint64_t bytes;		/* the size of the file */
};

/* Copy the database at db_path, which a cohortd may have open and be
 * writing, to file: one consistent snapshot (one read transaction on a
 * read-only connection, copied with SQLite's online backup API), written
 * to file.tmp (mode 0600), checked (PRAGMA integrity_check, the schema
 * version, the tables), fsynced, then renamed to file and the directory
 * fsynced; *info (may be NULL) describes the copy. An existing file is
 * refused without STORE_BACKUP_FORCE, and always when it is the database
 * itself; so is a database of a newer schema than this binary's, or none.
 * Returns 0, or -1 with err set (ERR_CONFLICT: file or file.tmp exists;
 * ERR_VERSION: schema; ERR_NOT_FOUND: no database; ERR_INTERNAL: I/O or
 * SQLite) and nothing left behind: file is untouched, file.tmp removed.
 * Never writes to db_path. Blocking: for the command line, not the loop. */
int store_backup(const char *db_path, const char *file, unsigned flags,
    struct store_backup_info *info, struct cerr *err);
/* The open database as one image (sqlite3_serialize: every page as of
 * now, consistent); free it with store_image_free. 0 or -1. */
int store_image(struct store *st, unsigned char **img, size_t *len,
    struct cerr *err);
void store_image_free(unsigned char *img);
/* store_backup's writing half for an image made elsewhere (a replicated
 * leader's store_image): to file.tmp, fsynced, checked, then named file
 * as store_backup does. */
int store_backup_image(const unsigned char *img, size_t len,
    const char *file, unsigned flags, struct store_backup_info *info,
    struct cerr *err);

#endif
