/* The third part of the store module (store.h): the runs of jobs for
 * `cohort usage`, and what retention deletes. The conventions are
 * store.c's: the SQL sits at the top, store_open prepares it once, and
 * every path that steps a statement resets it.
 *
 * A usage query is a user's request, not part of the loop's work: it
 * reads job_runs through the end_ms index, from the window's start on,
 * and lets SQLite do the grouping. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/controller/store/store_int.h"

#define DAY_MS "86400000"

/* The runs of a usage window: those that end after its start and begin
 * before its end, with the filters. ?1 since, ?2 until, ?3 user or NULL,
 * ?4 queue or NULL. */
#define USAGE_WHERE \
	"WHERE end_ms > ?1 AND start_ms < ?2 " \
	"AND (?3 IS NULL OR user = ?3) AND (?4 IS NULL OR queue = ?4)"

const char *const store_history_sql[S__COUNT] = {
	[S_RUN_INSERT] = "INSERT INTO job_runs (job_id, attempt, user, queue, "
	    "start_ms, end_ms, gpus, nodes, outcome, wasted_ms) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	/* ?5: 0 user, 1 queue, 2 outcome. A run's wasted part is its last
	 * wasted_ms: [end_ms - wasted_ms, end_ms), clipped like the run. */
	[S_USAGE_GROUP] = "SELECT CASE ?5 WHEN 0 THEN user WHEN 1 THEN queue "
	    "ELSE outcome END AS k, "
	    "sum(gpus * (min(end_ms, ?2) - max(start_ms, ?1))), "
	    "sum(gpus * max(0, min(end_ms, ?2) - "
	    "max(end_ms - wasted_ms, ?1))), count(*) "
	    "FROM job_runs " USAGE_WHERE " GROUP BY k ORDER BY k",
	/* Each run of the window clipped to it, then split at UTC
	 * midnights by a recursive step per further day it spans: the cost
	 * stays linear in the runs (a run of one day gives one row). */
	[S_USAGE_DAY] = "WITH RECURSIVE part(d, s, e, w, g) AS ("
	    "SELECT (max(start_ms, ?1) / " DAY_MS ") * " DAY_MS ", "
	    "max(start_ms, ?1), min(end_ms, ?2), end_ms - wasted_ms, gpus "
	    "FROM job_runs " USAGE_WHERE " "
	    "UNION ALL SELECT d + " DAY_MS ", s, e, w, g FROM part "
	    "WHERE d + " DAY_MS " < e) "
	    "SELECT d, sum(g * (min(e, d + " DAY_MS ") - max(s, d))), "
	    "sum(g * max(0, min(e, d + " DAY_MS ") - max(w, s, d))), "
	    "count(*) FROM part GROUP BY d ORDER BY d",
	[S_PURGE_RUNS] = "DELETE FROM job_runs WHERE job_id = ?1",
	[S_PURGE_EXITS] = "DELETE FROM task_exits WHERE job_id = ?1",
	[S_PURGE_STEPS] = "DELETE FROM steps WHERE job_id = ?1",
	[S_PURGE_PLACEMENTS] = "DELETE FROM job_placements WHERE job_id = ?1",
	[S_PURGE_JOB_EVENTS] = "DELETE FROM events WHERE job_id = ?1",
	[S_PURGE_JOB] = "DELETE FROM jobs WHERE id = ?1",
	[S_PURGE_EVENTS] = "DELETE FROM events WHERE id IN (SELECT id FROM "
	    "events WHERE time_ms < ?1 ORDER BY time_ms LIMIT ?2)",
	[S_STEP_PUT] = "INSERT OR REPLACE INTO steps (job_id, attempt, "
	    "step_id, name, state, node_fail, exit_code, reason, start_ms, "
	    "end_ms, nodelist, tasks_per_node, ntasks, gpus) VALUES (?1, ?2, "
	    "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
	/* The latest attempt that has steps; ?2 rows at most. */
	[S_STEPS_LIST] = "SELECT attempt, step_id, name, state, node_fail, "
	    "exit_code, reason, start_ms, end_ms, nodelist, tasks_per_node, "
	    "ntasks, gpus FROM steps WHERE job_id = ?1 AND attempt = "
	    "(SELECT max(attempt) FROM steps WHERE job_id = ?1) "
	    "ORDER BY step_id LIMIT ?2",
	/* One step of the same attempt. */
	[S_STEP_GET] = "SELECT attempt, step_id, name, state, node_fail, "
	    "exit_code, reason, start_ms, end_ms, nodelist, tasks_per_node, "
	    "ntasks, gpus FROM steps WHERE job_id = ?1 AND attempt = "
	    "(SELECT max(attempt) FROM steps WHERE job_id = ?1) "
	    "AND step_id = ?2",
	[S_STEPS_END_RUNNING] = "UPDATE steps SET state = ?3, node_fail = ?4, "
	    "reason = ?5, end_ms = ?6 WHERE job_id = ?1 AND attempt = ?2 AND "
	    "state = ?7",
	[S_STEPS_END_ALL] = "UPDATE steps SET state = ?1, reason = ?2, "
	    "end_ms = ?3 WHERE state = ?4",
	[S_SECRET_GET] = "SELECT value FROM secrets WHERE name = ?1",
};

int
store_run_insert(struct store *st, const struct store_run *r,
    struct cerr *err)
{
	struct binder b = { st->stmt[S_RUN_INSERT], 0, SQLITE_OK };
	char what[64];

	bind_int(&b, (int64_t)r->job_id);
	bind_int(&b, r->attempt);
	bind_text(&b, r->user);
	bind_text(&b, r->queue != NULL ? r->queue : "");
	bind_int(&b, r->start_ms);
	bind_int(&b, r->end_ms);
	bind_int(&b, r->gpus);
	bind_int(&b, r->nodes);
	bind_text(&b, r->outcome);
	bind_int(&b, (int64_t)r->wasted_ms);
	snprintf(what, sizeof(what), "record a run of job %llu",
	    (unsigned long long)r->job_id);
	return binder_step(st, &b, err, what);
}

int
store_usage(struct store *st, const struct store_usage_query *q,
    int (*cb)(const struct store_usage_row *row, void *arg), void *arg,
    struct cerr *err)
{
	bool by_day = q->by == STORE_USAGE_DAY;
	sqlite3_stmt *s = st->stmt[by_day ? S_USAGE_DAY : S_USAGE_GROUP];
	struct store_usage_row row;
	int rc, ret = 0;

	sqlite3_bind_int64(s, 1, q->since_ms);
	sqlite3_bind_int64(s, 2, q->until_ms);
	if (q->user != NULL)
		sqlite3_bind_text(s, 3, q->user, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 3);
	if (q->queue != NULL)
		sqlite3_bind_text(s, 4, q->queue, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 4);
	if (!by_day)
		sqlite3_bind_int(s, 5, q->by == STORE_USAGE_USER ? 0 :
		    q->by == STORE_USAGE_QUEUE ? 1 : 2);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		memset(&row, 0, sizeof(row));
		if (by_day)
			row.day_ms = sqlite3_column_int64(s, 0);
		else if ((row.key = (const char *)sqlite3_column_text(s,
		    0)) == NULL) {
			ret = db_fail(st, err, "usage");
			break;
		}
		row.gpu_ms = sqlite3_column_int64(s, 1);
		row.wasted_gpu_ms = sqlite3_column_int64(s, 2);
		row.runs = sqlite3_column_int64(s, 3);
		if (cb(&row, arg) == -1) {
			if (err != NULL && err->code == ERR_NONE)
				cerr_set(err, ERR_INTERNAL, "usage: stopped");
			ret = -1;
			break;
		}
	}
	if (ret == 0 && rc != SQLITE_DONE)
		ret = db_fail(st, err, "usage");
	stmt_done(s);
	return ret;
}

int
store_job_purge(struct store *st, uint64_t job_id, struct cerr *err)
{
	/* Children first: every other table names the job. */
	static const enum stmt_id order[] = { S_PURGE_RUNS, S_PURGE_EXITS,
	    S_PURGE_STEPS,
	    S_PURGE_PLACEMENTS, S_PURGE_JOB_EVENTS, S_PURGE_JOB };
	char what[64];
	size_t i;

	snprintf(what, sizeof(what), "purge job %llu",
	    (unsigned long long)job_id);
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		sqlite3_bind_int64(st->stmt[order[i]], 1, (int64_t)job_id);
		if (stmt_exec(st, order[i], err, what) == -1)
			return -1;
	}
	return 0;
}

int
store_events_purge(struct store *st, int64_t before_ms, int max, int *n,
    struct cerr *err)
{
	sqlite3_stmt *s = st->stmt[S_PURGE_EVENTS];

	*n = 0;
	sqlite3_bind_int64(s, 1, before_ms);
	sqlite3_bind_int64(s, 2, max);
	if (stmt_exec(st, S_PURGE_EVENTS, err, "purge events") == -1)
		return -1;
	*n = sqlite3_changes(st->db);
	return 0;
}

int
store_step_put(struct store *st, const struct store_step *s,
    struct cerr *err)
{
	struct binder b = { st->stmt[S_STEP_PUT], 0, SQLITE_OK };
	char what[80];

	bind_int(&b, (int64_t)s->job_id);
	bind_int(&b, s->attempt);
	bind_int(&b, s->step_id);
	bind_text(&b, s->name);
	bind_int(&b, s->state);
	bind_int(&b, s->node_fail);
	if (s->has_exit)
		bind_int(&b, s->exit_code);
	else
		bind_text(&b, NULL);
	bind_text(&b, s->reason != NULL ? s->reason : "");
	bind_int(&b, s->start_ms);
	bind_int(&b, s->end_ms);
	bind_text(&b, s->nodelist);
	bind_text(&b, s->tasks_per_node);
	bind_int(&b, s->ntasks);
	bind_int(&b, s->gpus);
	snprintf(what, sizeof(what), "record step %llu.%u",
	    (unsigned long long)s->job_id, s->step_id);
	return binder_step(st, &b, err, what);
}

static const char *
column_str(sqlite3_stmt *s, int col)
{
	const char *t = (const char *)sqlite3_column_text(s, col);

	return t != NULL ? t : "";
}

/* The rows of s (S_STEPS_LIST's columns) to cb. */
static int
store_steps_rows(struct store *st, sqlite3_stmt *s, uint64_t job_id,
    int (*cb)(const struct store_step *s, void *arg), void *arg,
    struct cerr *err)
{
	struct store_step row;
	int rc, ret = 0;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		memset(&row, 0, sizeof(row));
		row.job_id = job_id;
		row.attempt = (uint32_t)sqlite3_column_int64(s, 0);
		row.step_id = (uint32_t)sqlite3_column_int64(s, 1);
		row.name = column_str(s, 2);
		row.state = sqlite3_column_int(s, 3);
		row.node_fail = sqlite3_column_int(s, 4) != 0;
		row.has_exit = sqlite3_column_type(s, 5) != SQLITE_NULL;
		row.exit_code = sqlite3_column_int(s, 5);
		row.reason = column_str(s, 6);
		row.start_ms = sqlite3_column_int64(s, 7);
		row.end_ms = sqlite3_column_int64(s, 8);
		row.nodelist = column_str(s, 9);
		row.tasks_per_node = column_str(s, 10);
		row.ntasks = (uint32_t)sqlite3_column_int64(s, 11);
		row.gpus = (uint32_t)sqlite3_column_int64(s, 12);
		if (cb(&row, arg) == -1) {
			if (err != NULL && err->code == ERR_NONE)
				cerr_set(err, ERR_INTERNAL, "steps: stopped");
			ret = -1;
			break;
		}
	}
	if (ret == 0 && rc != SQLITE_DONE)
		ret = db_fail(st, err, "list steps");
	stmt_done(s);
	return ret;
}

int
store_steps_list(struct store *st, uint64_t job_id, size_t max,
    int (*cb)(const struct store_step *s, void *arg), void *arg,
    struct cerr *err)
{
	sqlite3_stmt *s = st->stmt[S_STEPS_LIST];

	sqlite3_bind_int64(s, 1, (int64_t)job_id);
	sqlite3_bind_int64(s, 2, (int64_t)max);
	return store_steps_rows(st, s, job_id, cb, arg, err);
}

int
store_step_get(struct store *st, uint64_t job_id, uint32_t step_id,
    int (*cb)(const struct store_step *s, void *arg), void *arg,
    struct cerr *err)
{
	sqlite3_stmt *s = st->stmt[S_STEP_GET];

	sqlite3_bind_int64(s, 1, (int64_t)job_id);
	sqlite3_bind_int64(s, 2, (int64_t)step_id);
	return store_steps_rows(st, s, job_id, cb, arg, err);
}

int
store_steps_end_running(struct store *st, uint64_t job_id, uint32_t attempt,
    int state, bool node_fail, const char *reason, int64_t end_ms,
    struct cerr *err)
{
	struct binder b = { st->stmt[S_STEPS_END_RUNNING], 0, SQLITE_OK };
	char what[80];

	bind_int(&b, (int64_t)job_id);
	bind_int(&b, attempt);
	bind_int(&b, state);
	bind_int(&b, node_fail);
	bind_text(&b, reason != NULL ? reason : "");
	bind_int(&b, end_ms);
	bind_int(&b, JOB_RUNNING);
	snprintf(what, sizeof(what), "end the steps of job %llu",
	    (unsigned long long)job_id);
	return binder_step(st, &b, err, what);
}

int
store_steps_end_all(struct store *st, int state, const char *reason,
    int64_t end_ms, struct cerr *err)
{
	struct binder b = { st->stmt[S_STEPS_END_ALL], 0, SQLITE_OK };

	bind_int(&b, state);
	bind_text(&b, reason);
	bind_int(&b, end_ms);
	bind_int(&b, JOB_RUNNING);
	return binder_step(st, &b, err, "end the steps left running");
}

int
store_secret(struct store *st, const char *name, uint8_t *buf, size_t len,
    struct cerr *err)
{
	sqlite3_stmt *s = st->stmt[S_SECRET_GET];
	int rc, ret = 0;

	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && sqlite3_column_bytes(s, 0) == (int)len)
		memcpy(buf, sqlite3_column_blob(s, 0), len);
	else if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		ret = cerr_set(err, ERR_NOT_FOUND, "no secret '%s' of %zu "
		    "bytes in the database", name, len);
	else
		ret = db_fail(st, err, "read a secret");
	stmt_done(s);
	return ret;
}
