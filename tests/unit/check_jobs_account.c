/* History in the jobs module (jobs_account.c, jobs_retention.c) against an
 * in-memory store (ctl_fixture.h), in virtual time: the GPU time of every
 * kind of run end (completion, failure, restart with lost work,
 * preemption, cancel, time limit) on the job and as a job_runs row in
 * the same savepoint; usage by user, queue, state and day over windows,
 * runs going on included; retention that purges old finished jobs and
 * events in bounded batches and keeps everything else; the expected
 * start kept in memory; and the listing's history filters. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/unit/ctl_fixture.h"
#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/store/txq.h"

#define S 1000
#define T0 (INT64_C(1000) * 86400 * 1000 + 12 * 3600 * S) /* a noon */

/* Submit a job of user (queue q, NULL: none; idempotency key key, NULL:
 * none) on n nodes x gpn GPUs at now, allocated and RUNNING; its id. */
static uint64_t
run_job_key(struct ctl *c, const char *user, const char *q,
    const char *key, unsigned n, unsigned gpn, uint32_t max_restarts,
    int64_t now)
{
	struct placement place[8];
	struct job_spec spec;
	struct cerr err;
	uint64_t id;
	unsigned i, g;

	ctl_spec(&spec, n, n, gpn);
	spec.max_restarts = max_restarts;
	if (q != NULL)
		spec.queue = strdup(q);
	if (key != NULL)
		spec.idem_key = strdup(key);
	id = ctl_submit(c, user, &spec, now);
	memset(place, 0, sizeof(place));
	for (i = 0; i < n; i++) {
		snprintf(place[i].node, sizeof(place[i].node), "node%02u",
		    i + 1);
		place[i].node_rank = i;
		place[i].ngpus = gpn;
		for (g = 0; g < gpn; g++)
			place[i].gpus[g] = g;
	}
	ck_assert_msg(jobs_allocate(c->js, id, place, n, now, &err) == 0,
	    "%s", err.text);
	ck_assert_msg(jobs_mark_running(c->js, id, now, &err) == 0, "%s",
	    err.text);
	ctl_flush(c);
	return id;
}

static uint64_t
run_job(struct ctl *c, const char *user, const char *q, unsigned n,
    unsigned gpn, uint32_t max_restarts, int64_t now)
{
	return run_job_key(c, user, q, NULL, n, gpn, max_restarts, now);
}

/* Every rank of job id's current attempt exits with status. */
static enum job_state
exit_all(struct ctl *c, uint64_t id, int status, int64_t now)
{
	const struct job *job = jobs_get(c->js, id);
	enum job_state st = job->state;
	uint32_t attempt = job->attempt;
	size_t i, n = job->nplace;
	struct cerr err;

	for (i = 0; i < n; i++) {
		ck_assert_msg(jobs_task_exit(c->js, id, attempt, (unsigned)i,
		    status, NULL, now, &st, &err) == 0, "%s", err.text);
		if (status != 0)
			break;
	}
	ctl_flush(c);
	return st;
}

static int64_t
runs_where(struct ctl *c, const char *cond)
{
	char sql[256];

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM job_runs WHERE %s",
	    cond);
	return ctl_sql_int(c, sql);
}

START_TEST(test_completed_counts_gpus_times_run)
{
	struct ctl f;
	const struct job *job;
	uint64_t id;

	ctl_setup(&f, NULL);
	id = run_job(&f, "alice", NULL, 2, 4, 3, T0);
	/* Nothing counts before the run ends. */
	ck_assert_uint_eq(jobs_get(f.js, id)->gpu_ms, 0);
	ck_assert_int_eq(exit_all(&f, id, 0, T0 + 10 * S), JOB_COMPLETED);
	job = jobs_get(f.js, id);
	ck_assert_uint_eq(job->gpu_ms, 8 * 10 * S);
	ck_assert_uint_eq(job->wasted_gpu_ms, 0);
	ck_assert_int_eq(runs_where(&f, "outcome = 'COMPLETED' AND gpus = 8 "
	    "AND nodes = 2 AND end_ms - start_ms = 10000 AND wasted_ms = 0 "
	    "AND user = 'alice'"), 1);
	/* Stored with the row: a restarted controller has it. */
	ctl_reload(&f);
	ck_assert_uint_eq(jobs_get(f.js, id)->gpu_ms, 8 * 10 * S);
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_failed_run_is_all_wasted)
{
	struct ctl f;
	const struct job *job;
	uint64_t id;

	ctl_setup(&f, NULL);
	id = run_job(&f, "alice", NULL, 1, 2, 0, T0);
	ck_assert_int_eq(exit_all(&f, id, 1 << 8, T0 + 30 * S), JOB_FAILED);
	job = jobs_get(f.js, id);
	ck_assert_uint_eq(job->gpu_ms, 2 * 30 * S);
	ck_assert_uint_eq(job->wasted_gpu_ms, 2 * 30 * S);
	ck_assert_int_eq(runs_where(&f, "outcome = 'FAILED' AND "
	    "wasted_ms = 30000"), 1);
	ctl_teardown(&f);
}
END_TEST

/* A restart loses the work since the checkpoint; the next run adds its
 * own time: two rows, the sums on the job. */
START_TEST(test_restart_loses_since_checkpoint)
{
	struct placement p = { .node = "node02", .node_rank = 0, .ngpus = 4,
	    .gpus = { 0, 1, 2, 3 } };
	struct ctl f;
	struct cerr err;
	const struct job *job;
	uint64_t id;

	ctl_setup(&f, NULL);
	id = run_job(&f, "alice", NULL, 1, 4, 3, T0);
	ck_assert_int_eq(jobs_checkpoint(f.js, id, jobs_get(f.js, id)->attempt,
	    7, "/ckpt/7", T0 + 4 * S, T0 + 4 * S, &err), 1);
	ctl_flush(&f);
	/* A checkpoint is no end of the run. */
	ck_assert_uint_eq(jobs_get(f.js, id)->gpu_ms, 0);
	ck_assert_int_eq(runs_where(&f, "1"), 0);
	ck_assert_int_eq(exit_all(&f, id, 1 << 8, T0 + 10 * S),
	    JOB_RESTARTING);
	job = jobs_get(f.js, id);
	ck_assert_uint_eq(job->lost_work_ms, 6 * S);
	ck_assert_uint_eq(job->gpu_ms, 4 * 10 * S);
	ck_assert_uint_eq(job->wasted_gpu_ms, 4 * 6 * S);
	ck_assert_int_eq(runs_where(&f, "outcome = 'RESTARTING' AND "
	    "wasted_ms = 6000"), 1);
	ck_assert_int_eq(jobs_allocate(f.js, id, &p, 1, T0 + 11 * S, &err),
	    0);
	ck_assert_int_eq(jobs_mark_running(f.js, id, T0 + 12 * S, &err), 0);
	ctl_flush(&f);
	ck_assert_int_eq(exit_all(&f, id, 0, T0 + 17 * S), JOB_COMPLETED);
	job = jobs_get(f.js, id);
	ck_assert_uint_eq(job->gpu_ms, 4 * 15 * S);
	ck_assert_uint_eq(job->wasted_gpu_ms, 4 * 6 * S);
	ck_assert_int_eq(runs_where(&f, "job_id > 0"), 2);
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_preempt_cancel_timeout)
{
	struct ctl f;
	struct cerr err;
	struct peer alice = { .name = "alice", .role = ROLE_USER };
	enum job_state st;
	uint64_t a, b, c, lost;

	ctl_setup(&f, NULL);
	a = run_job(&f, "alice", NULL, 1, 1, 3, T0);
	b = run_job(&f, "alice", NULL, 1, 2, 3, T0);
	c = run_job(&f, "alice", NULL, 1, 3, 3, T0);
	ck_assert_int_eq(jobs_preempt(f.js, a, "Preempted by 9 of q",
	    T0 + 5 * S, T0 + 5 * S, &lost, &err), 0);
	ck_assert_int_eq(jobs_cancel(f.js, &alice, b, T0 + 7 * S, &st, &err),
	    0);
	ck_assert_int_eq(jobs_end(f.js, c, JOB_TIMEOUT, "time limit",
	    T0 + 9 * S, &err), 0);
	ctl_flush(&f);
	ck_assert_uint_eq(lost, 5 * S);
	ck_assert_uint_eq(jobs_get(f.js, a)->gpu_ms, 5 * S);
	ck_assert_uint_eq(jobs_get(f.js, a)->wasted_gpu_ms, 5 * S);
	ck_assert_uint_eq(jobs_get(f.js, b)->gpu_ms, 2 * 7 * S);
	ck_assert_uint_eq(jobs_get(f.js, b)->wasted_gpu_ms, 0);
	ck_assert_uint_eq(jobs_get(f.js, c)->gpu_ms, 3 * 9 * S);
	ck_assert_int_eq(runs_where(&f, "outcome = 'PREEMPTED'"), 1);
	ck_assert_int_eq(runs_where(&f, "outcome = 'CANCELLED'"), 1);
	ck_assert_int_eq(runs_where(&f, "outcome = 'TIMEOUT'"), 1);
	/* A job that never ran used nothing. */
	ck_assert_int_eq(jobs_end(f.js, a, JOB_CANCELLED, "x", T0 + 20 * S,
	    &err), 0);
	ctl_flush(&f);
	ck_assert_uint_eq(jobs_get(f.js, a)->gpu_ms, 5 * S);
	ck_assert_int_eq(runs_where(&f, "1"), 3);
	ctl_teardown(&f);
}
END_TEST

/* The run's row is written in the savepoint of the change that ends it:
 * a refused row refuses the change, and the job is as it was. */
START_TEST(test_run_row_failure_changes_nothing)
{
	struct ctl f;
	struct cerr err;
	const struct job *job;
	uint64_t id;

	ctl_setup(&f, NULL);
	id = run_job(&f, "alice", NULL, 1, 2, 3, T0);
	ctl_fail_writes(&f, "job_runs", "INSERT");
	ck_assert_int_eq(jobs_end(f.js, id, JOB_TIMEOUT, "limit", T0 + S,
	    &err), -1);
	ctl_heal(&f);
	ctl_flush(&f);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_uint_eq(job->gpu_ms, 0);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM jobs WHERE "
	    "state = 'RUNNING' AND gpu_ms = 0"), 1);
	/* Then it goes through once the database takes it. */
	ck_assert_int_eq(jobs_end(f.js, id, JOB_TIMEOUT, "limit", T0 + 2 * S,
	    &err), 0);
	ctl_flush(&f);
	ck_assert_uint_eq(jobs_get(f.js, id)->gpu_ms, 2 * 2 * S);
	ck_assert_int_eq(runs_where(&f, "1"), 1);
	ctl_teardown(&f);
}
END_TEST

/* Find the row of key (or day) in rows; NULL when absent. */
static const struct jobs_usage_row *
row_of(const struct jobs_usage_row *rows, size_t n, const char *key,
    int64_t day)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(rows[i].key, key) == 0 && rows[i].day_ms == day)
			return &rows[i];
	return NULL;
}

START_TEST(test_usage_groups_and_windows)
{
	struct jobs_usage_query q = { 0 };
	struct jobs_usage_row *rows;
	const struct jobs_usage_row *r;
	struct ctl f;
	struct cerr err;
	int64_t day = T0 - 12 * 3600 * S, now;
	uint64_t a, b, c;
	size_t n;

	ctl_setup(&f, NULL);
	/* alice: 4 GPUs 1 h, completed; bob: 2 GPUs 30 min, failed, in
	 * queue research; alice: 1 GPU from 23:00 to 01:00 next day. */
	a = run_job(&f, "alice", "teama", 1, 4, 3, T0);
	ck_assert_int_eq(exit_all(&f, a, 0, T0 + 3600 * S), JOB_COMPLETED);
	b = run_job(&f, "bob", "research", 1, 2, 0, T0);
	ck_assert_int_eq(exit_all(&f, b, 1 << 8, T0 + 1800 * S), JOB_FAILED);
	c = run_job(&f, "alice", "teama", 1, 1, 3, T0 + 11 * 3600 * S);
	ck_assert_int_eq(exit_all(&f, c, 0, T0 + 13 * 3600 * S),
	    JOB_COMPLETED);
	now = T0 + 20 * 3600 * S;

	q.since_ms = 0;
	q.until_ms = now;
	q.by = JOBS_USAGE_USER;
	ck_assert_msg(jobs_account_usage(f.js, &q, now, &rows, &n, &err) == 0,
	    "%s", err.text);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(rows[0].key, "alice");
	ck_assert_uint_eq(rows[0].gpu_ms, (4 + 2) * 3600 * S);
	ck_assert_uint_eq(rows[0].runs, 2);
	ck_assert_str_eq(rows[1].key, "bob");
	ck_assert_uint_eq(rows[1].gpu_ms, 2 * 1800 * S);
	ck_assert_uint_eq(rows[1].wasted_gpu_ms, 2 * 1800 * S);
	free(rows);

	q.by = JOBS_USAGE_STATE;
	ck_assert_int_eq(jobs_account_usage(f.js, &q, now, &rows, &n, &err),
	    0);
	ck_assert_ptr_nonnull(r = row_of(rows, n, "FAILED", 0));
	ck_assert_uint_eq(r->wasted_gpu_ms, 2 * 1800 * S);
	ck_assert_ptr_nonnull(r = row_of(rows, n, "COMPLETED", 0));
	ck_assert_uint_eq(r->wasted_gpu_ms, 0);
	free(rows);

	/* By UTC day: the run across midnight is split at it. */
	q.by = JOBS_USAGE_DAY;
	ck_assert_int_eq(jobs_account_usage(f.js, &q, now, &rows, &n, &err),
	    0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(rows[0].day_ms, day);
	ck_assert_uint_eq(rows[0].gpu_ms, (4 + 1 + 1) * 3600 * S);
	ck_assert_int_eq(rows[1].day_ms, day + 86400 * S);
	ck_assert_uint_eq(rows[1].gpu_ms, 1 * 3600 * S);
	free(rows);

	/* A window clips: [T0 + 30 min, T0 + 11 h 30). */
	q.by = JOBS_USAGE_QUEUE;
	q.since_ms = T0 + 1800 * S;
	q.until_ms = T0 + 11 * 3600 * S + 1800 * S;
	ck_assert_int_eq(jobs_account_usage(f.js, &q, now, &rows, &n, &err),
	    0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(rows[0].key, "teama");
	ck_assert_uint_eq(rows[0].gpu_ms, 4 * 1800 * S + 1800 * S);
	free(rows);

	/* A filter, and a run going on counted up to now. */
	(void)run_job(&f, "bob", "research", 2, 8, 3, now - 600 * S);
	q.since_ms = 0;
	q.until_ms = now + 3600 * S;
	q.user = "bob";
	q.by = JOBS_USAGE_STATE;
	ck_assert_int_eq(jobs_account_usage(f.js, &q, now, &rows, &n, &err),
	    0);
	ck_assert_uint_eq(n, 2);
	ck_assert_ptr_nonnull(r = row_of(rows, n, "RUNNING", 0));
	ck_assert_uint_eq(r->gpu_ms, 16 * 600 * S);
	ck_assert_ptr_null(row_of(rows, n, "COMPLETED", 0));
	free(rows);

	/* A window that ends before it starts is refused. */
	q.since_ms = now;
	q.until_ms = now;
	ck_assert_int_eq(jobs_account_usage(f.js, &q, now, &rows, &n, &err),
	    -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ctl_teardown(&f);
}
END_TEST

/* Old finished jobs go with their rows; recent ones, and any job not
 * finished, stay; a batch holds at most JOBS_PURGE_JOBS_MAX; ids go on
 * growing. */
START_TEST(test_retention_purges_in_batches)
{
	const int64_t day = 86400 * S, old = 250;
	struct job_spec spec;
	struct ctl f;
	struct cerr err;
	size_t nj, ne, left;
	uint64_t id, pending, recent, running, last = 0;
	int64_t now = T0 + 100 * day, i;
	struct timespec t0, t1;

	ctl_setup(&f, NULL);
	for (i = 0; i < old; i++) {
		/* The first holds a key, which it gives up with its row. */
		id = run_job_key(&f, "alice", NULL, i == 0 ? "gone" : NULL, 1,
		    1, 3, T0 + i * S);
		ck_assert_int_eq(exit_all(&f, id, 0, T0 + i * S + S),
		    JOB_COMPLETED);
	}
	ctl_spec(&spec, 1, 1, 1);
	pending = ctl_submit(&f, "alice", &spec, T0);	/* waits 100 days */
	running = run_job(&f, "bob", NULL, 1, 1, 3, T0);
	recent = run_job(&f, "bob", NULL, 1, 1, 3, now - 2 * day);
	ck_assert_int_eq(exit_all(&f, recent, 0, now - day), JOB_COMPLETED);
	ctl_flush(&f);
	ck_assert_int_gt(ctl_sql_int(&f, "SELECT count(*) FROM events"),
	    3 * old);

	jobs_retention_set(f.js, 30 * day, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(jobs_retention_purge(f.js, now, &nj, &ne, &err), 0);
	ctl_flush(&f);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("retention: a batch of %zu jobs (with their rows) and its "
	    "commit: %.1f ms\n", nj, (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	ck_assert_uint_eq(nj, JOBS_PURGE_JOBS_MAX);
	ck_assert_uint_eq(ne, 0);
	ck_assert_uint_eq(jobs_count(f.js), old + 3 - JOBS_PURGE_JOBS_MAX);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM jobs"),
	    old + 3 - JOBS_PURGE_JOBS_MAX);
	/* The tick goes on while batches come back full. */
	for (left = 10; left > 0 && jobs_count(f.js) > 3; left--) {
		jobs_retention_tick(f.js, now);
		ctl_flush(&f);
	}
	ck_assert_uint_eq(jobs_count(f.js), 3);
	ck_assert_ptr_nonnull(jobs_get(f.js, pending));
	ck_assert_ptr_nonnull(jobs_get(f.js, running));
	ck_assert_ptr_nonnull(jobs_get(f.js, recent));
	/* The purged job's key is free again: a submit with it is a new
	 * job (the fourth left). */
	ctl_spec(&spec, 1, 1, 1);
	spec.idem_key = strdup("gone");
	ck_assert_uint_eq(ctl_submit(&f, "alice", &spec, now), old + 4);
	/* Nothing names a purged job any more. */
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM job_runs"), 1);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM task_exits "
	    "WHERE job_id <= 250"), 0);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM "
	    "job_placements WHERE job_id <= 250"), 0);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM events "
	    "WHERE job_id <= 250"), 0);
	/* The table is what the database holds, and ids are not reused. */
	ctl_reload(&f);
	ck_assert_uint_eq(jobs_count(f.js), 4);
	ctl_spec(&spec, 1, 1, 1);
	id = ctl_submit(&f, "alice", &spec, now);
	ck_assert_uint_gt(id, recent);
	last = id;
	ck_assert_uint_eq(last, old + 5);
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_event_retention_bounded)
{
	const int64_t day = 86400 * S;
	struct job_spec spec;
	struct ctl f;
	struct cerr err;
	size_t nj, ne;
	int64_t i, before;

	ctl_setup(&f, NULL);
	for (i = 0; i < 700; i++) {
		ctl_spec(&spec, 1, 1, 1);
		(void)ctl_submit(&f, "alice", &spec, T0 + i);
	}
	ctl_flush(&f);
	before = ctl_sql_int(&f, "SELECT count(*) FROM events");
	jobs_retention_set(f.js, 0, 7 * day);
	/* Not old enough yet: nothing goes. */
	ck_assert_int_eq(jobs_retention_purge(f.js, T0 + 6 * day, &nj, &ne,
	    &err), 0);
	ck_assert_uint_eq(ne, 0);
	ck_assert_int_eq(jobs_retention_purge(f.js, T0 + 8 * day, &nj, &ne,
	    &err), 0);
	ctl_flush(&f);
	ck_assert_uint_eq(nj, 0);
	ck_assert_uint_eq(ne, JOBS_PURGE_EVENTS_MAX);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM events"),
	    before - JOBS_PURGE_EVENTS_MAX);
	/* The oldest went first. */
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT min(time_ms) FROM events"),
	    T0 + JOBS_PURGE_EVENTS_MAX);
	/* Pending jobs are not finished: they all stay. */
	ck_assert_uint_eq(jobs_count(f.js), 700);
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_expected_start_in_memory)
{
	struct job_spec spec;
	struct ctl f;
	struct cerr err;
	uint64_t id, r;

	ctl_setup(&f, NULL);
	ctl_spec(&spec, 1, 1, 1);
	id = ctl_submit(&f, "alice", &spec, T0);
	r = run_job(&f, "bob", NULL, 1, 1, 3, T0);
	jobs_set_expected_start(f.js, id, T0 + 3600 * S);
	jobs_set_expected_start(f.js, r, T0 + 3600 * S);
	ck_assert_int_eq(jobs_get(f.js, id)->expected_start_ms,
	    T0 + 3600 * S);
	/* Only a job that waits has one. */
	ck_assert_int_eq(jobs_get(f.js, r)->expected_start_ms, 0);
	/* A reason without a start (the next pass says) clears it. */
	jobs_set_pending_reason(f.js, id, "Priority");
	ck_assert_int_eq(jobs_get(f.js, id)->expected_start_ms, 0);
	jobs_set_expected_start(f.js, id, T0 + 60 * S);
	/* So does any change of state. */
	ck_assert_int_eq(jobs_end(f.js, id, JOB_CANCELLED, "x", T0 + S, &err),
	    0);
	ctl_flush(&f);
	ck_assert_int_eq(jobs_get(f.js, id)->expected_start_ms, 0);
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_list_history_filters)
{
	const struct job *out[16];
	struct jobs_filter flt;
	struct job_spec spec;
	struct ctl f;
	uint64_t done, failed, pend, next;
	size_t n;
	bool more;

	ctl_setup(&f, NULL);
	done = run_job(&f, "alice", NULL, 1, 1, 3, T0);
	ck_assert_int_eq(exit_all(&f, done, 0, T0 + 10 * S), JOB_COMPLETED);
	failed = run_job(&f, "alice", NULL, 1, 1, 0, T0 + 20 * S);
	ck_assert_int_eq(exit_all(&f, failed, 1 << 8, T0 + 30 * S),
	    JOB_FAILED);
	ctl_spec(&spec, 1, 1, 1);
	free(spec.name);
	spec.name = strdup("waiter");
	pend = ctl_submit(&f, "alice", &spec, T0 + 40 * S);

	memset(&flt, 0, sizeof(flt));
	flt.states = 1u << JOB_COMPLETED | 1u << JOB_FAILED;
	n = jobs_page(f.js, &flt, 0, out, 16, 0, &more, &next);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(out[0]->id, done);
	ck_assert_uint_eq(out[1]->id, failed);

	/* The window: not ended before since, submitted before until. */
	memset(&flt, 0, sizeof(flt));
	flt.all = true;
	flt.since_ms = T0 + 15 * S;
	n = jobs_page(f.js, &flt, 0, out, 16, 0, &more, &next);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(out[0]->id, failed);
	ck_assert_uint_eq(out[1]->id, pend);
	flt.until_ms = T0 + 35 * S;
	n = jobs_page(f.js, &flt, 0, out, 16, 0, &more, &next);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(out[0]->id, failed);

	memset(&flt, 0, sizeof(flt));
	flt.all = true;
	flt.name = "waiter";
	n = jobs_page(f.js, &flt, 0, out, 16, 0, &more, &next);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(out[0]->id, pend);
	ctl_teardown(&f);
}
END_TEST

static Suite *
jobs_account_suite(void)
{
	Suite *s = suite_create("jobs_account");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_completed_counts_gpus_times_run);
	tcase_add_test(tc, test_failed_run_is_all_wasted);
	tcase_add_test(tc, test_restart_loses_since_checkpoint);
	tcase_add_test(tc, test_preempt_cancel_timeout);
	tcase_add_test(tc, test_run_row_failure_changes_nothing);
	tcase_add_test(tc, test_usage_groups_and_windows);
	tcase_add_test(tc, test_retention_purges_in_batches);
	tcase_add_test(tc, test_event_retention_bounded);
	tcase_add_test(tc, test_expected_start_in_memory);
	tcase_add_test(tc, test_list_history_filters);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(jobs_account_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
