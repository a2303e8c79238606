/* Internals shared by the files of the store module, store.c (open,
 * transactions, jobs, events), store_nodes.c (nodes, placements, task
 * exits) and store_history.c (runs, usage, retention). Included by those
 * files only, so that sqlite3.h stays
 * private to the module; everything else uses store.h. */
#ifndef COHORT_STORE_INT_H
#define COHORT_STORE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

#include "daemon/controller/store/store.h"

/* Every statement of the module. Each file owns the SQL of its own ids
 * in a table indexed by this enum (stmt_sql in store.c, store_nodes_sql
 * in store_nodes.c); store_open prepares all of them. */
enum stmt_id {
	/* store.c */
	S_BEGIN,
	S_COMMIT,
	S_ROLLBACK,
	S_SAVEPOINT,
	S_RELEASE,
	S_ROLLBACK_TO,
	S_JOB_INSERT,
	S_MAX_JOB_ID_BUMP,
	S_JOB_UPDATE,
	S_EVENT_INSERT,
	S_JOBS_LOAD,
	S_MAX_JOB_ID,
	S_EVENTS_ANY,
	S_EVENTS_JOB,
	S_EVENTS_NODE,
	S_EVENTS_JOB_NODE,
	S_JOB_UPDATE_SPEC,
	S_EVENTS_LAST_ID,
	/* store_nodes.c */
	S_NODE_UPSERT,
	S_NODE_GPUS_DELETE,
	S_NODE_GPU_INSERT,
	S_NODE_SET_STATE,
	S_NODES_LOAD,
	S_NODE_GPUS_LOAD,
	S_PLACEMENT_DELETE,
	S_PLACEMENT_INSERT,
	S_PLACEMENTS_LOAD,
	S_TASK_EXIT_INSERT,
	S_TASK_EXITS_LOAD,
	S_DRAIN_UPSERT,
	S_DRAIN_DELETE,
	S_DRAINS_LOAD,
	S_NODE_DELETE,
	S_SUSPECT_UPSERT,
	S_EVIDENCE_DELETE,
	S_EVIDENCE_INSERT,
	S_SUSPECTS_LOAD,
	S_EVIDENCE_LOAD,
	/* store_history.c */
	S_RUN_INSERT,
	S_USAGE_GROUP,
	S_USAGE_DAY,
	S_PURGE_RUNS,
	S_PURGE_EXITS,
	S_PURGE_PLACEMENTS,
	S_PURGE_JOB_EVENTS,
	S_PURGE_JOB,
	S_PURGE_EVENTS,
	S_STEP_PUT,
	S_STEPS_LIST,
	S_STEP_GET,
	S_STEPS_END_RUNNING,
	S_STEPS_END_ALL,
	S_PURGE_STEPS,
	S_SECRET_GET,
	S__COUNT
};

/* The SQL of store_nodes.c's ids; NULL for the others. */
extern const char *const store_nodes_sql[S__COUNT];
/* The SQL of store_history.c's ids; NULL for the others. */
extern const char *const store_history_sql[S__COUNT];

struct store {
	sqlite3 *db;
	char *path;
	sqlite3_stmt *stmt[S__COUNT];
	bool marked;		/* inside store_mark .. store_keep/undo */
	/* Replicated: the VFS, and the hook after each COMMIT. */
	const char *vfs;
	int (*commit_hook)(void *arg, struct cerr *err);
	void *commit_arg;
	const char *restore;	/* a backup to start a new cluster from */
	bool checkpoint_due;	/* the WAL crossed the threshold in a commit
				 * whose syncs were deferred */
};

/* SQLite's default threshold of automatic checkpoints, in WAL frames. */
#define STORE_WAL_CHECKPOINT_FRAMES 1000

/* store_wal.c: the VFS shim that lets a commit defer the WAL's sync. */
/* The name of the shim VFS, registered on first use. */
const char *store_wal_vfs(void);
/* Take over automatic checkpoints of a database opened on the shim, so
 * that none runs while syncs are deferred. */
void store_wal_attach(struct store *st);

/* Fill err with what was being done and SQLite's message; errno EIO.
 * Always returns -1. */
int db_fail(struct store *st, struct cerr *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Put a statement back to its initial state: not active, no bindings. */
void stmt_done(sqlite3_stmt *s);
/* Step a statement that returns no rows, then reset it. 0 or -1 with err
 * set. */
int stmt_exec(struct store *st, enum stmt_id id, struct cerr *err,
    const char *what);

/* Sequential binding that remembers the first failure, so a long list of
 * columns reads as a list and is checked once by binder_step. */
struct binder {
	sqlite3_stmt *s;
	int col;
	int rc;
};

void bind_int(struct binder *b, int64_t v);
/* NULL binds SQL NULL. The text is not copied: it must outlive the step,
 * and every path clears the bindings right after it. */
void bind_text(struct binder *b, const char *v);
/* Step the statement bound through b (no rows expected), then reset it.
 * 0 or -1 with err set. */
int binder_step(struct store *st, struct binder *b, struct cerr *err,
    const char *what);

/* store_jobs_load reads the placements in one ordered scan beside its
 * scan of the jobs (both by job id), rather than one query per job. */
struct store_nodes_scan {
	sqlite3_stmt *s;
	int rc;			/* of the last step */
	struct placement *buf;	/* one job's rows, before the copy */
	size_t cap;
};

/* Start the scan (it steps to the first row). */
void store_nodes_scan_begin(struct store *st, struct store_nodes_scan *ps);
/* Give job the placement rows of job->id; rows of lower ids (of no
 * loaded job) are skipped. Call in increasing id order. 0, or -1 with
 * err set (a corrupt row, a failed step, ENOMEM). */
int store_nodes_scan_fill(struct store *st, struct store_nodes_scan *ps,
    struct job *job, struct cerr *err);
/* Reset the statement and free the buffer. */
void store_nodes_scan_end(struct store_nodes_scan *ps);

#endif
