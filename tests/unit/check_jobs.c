/* daemon/controller/domain/jobs.c against an in-memory store (ctl_fixture.h):
 * the start-failure path (which refusals end a job, the back-off of the
 * others, a task that can never start), states and transitions, submit
 * validation and limits, attempts and restarts, fail over with kept
 * nodes, checkpoints and their 1/s bound, time bookkeeping, exits,
 * elastic resize, cancel, listing and paging; and for every change, that
 * a write the database refuses (or memory that runs out) leaves the
 * table as the database has it, with no log line claiming otherwise. */
#include "config.h"

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>

#include "tests/unit/ctl_fixture.h"
#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/jobs_int.h"
#include "daemon/controller/domain/queues.h"
#include "daemon/controller/domain/quota.h"
#include "daemon/controller/store/txq.h"
#include "lib/fnv.h"

/* A pending one-node job of alice's, allocated on node01. */
static uint64_t
submit_allocated(struct ctl *f, int64_t now)
{
	struct peer alice = { .name = "alice", .role = ROLE_USER };
	struct placement p = { .node = "node01", .node_rank = 0 };
	struct job_spec spec;
	struct cerr err;
	uint64_t id;

	job_spec_init(&spec);
	ck_assert_int_eq(strv_append(&spec.argv, &spec.argc, "true"), 0);
	ck_assert_msg(jobs_submit(f->js, &alice, &spec, now, &id, &err) == 0,
	    "%s", err.text);
	ck_assert_msg(jobs_allocate(f->js, id, &p, 1, now, &err) == 0, "%s",
	    err.text);
	txq_flush(f->q);
	return id;
}

START_TEST(test_backoff_arithmetic)
{
	int64_t b = 0, want[] = { 1000, 2000, 4000, 8000, 16000, 32000,
	    64000, 128000, 256000, 300000, 300000 };
	size_t i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		b = jobs_backoff_next(b);
		ck_assert_int_eq(b, want[i]);
	}
	ck_assert_int_eq(jobs_backoff_next(-5), JOBS_BACKOFF_MIN_MS);
	ck_assert_int_eq(jobs_backoff_next(INT64_MAX), JOBS_BACKOFF_MAX_MS);
	ck_assert_int_eq(jobs_backoff_next(299999), JOBS_BACKOFF_MAX_MS);
}
END_TEST

START_TEST(test_failure_class)
{
	/* The job's own doing: its user, its spec. */
	ck_assert_int_eq(jobs_start_failure_class(ERR_INVALID),
	    START_PERMANENT);
	ck_assert_int_eq(jobs_start_failure_class(ERR_DENIED),
	    START_PERMANENT);
	ck_assert_int_eq(jobs_start_failure_class(ERR_NOT_FOUND),
	    START_PERMANENT);
	/* The node's or the network's: may pass. */
	ck_assert_int_eq(jobs_start_failure_class(ERR_UNAVAILABLE),
	    START_TRANSIENT);
	ck_assert_int_eq(jobs_start_failure_class(ERR_INTERNAL),
	    START_TRANSIENT);
	ck_assert_int_eq(jobs_start_failure_class(ERR_LIMIT),
	    START_TRANSIENT);
	ck_assert_int_eq(jobs_start_failure_class(ERR_CONFLICT),
	    START_TRANSIENT);
	ck_assert_int_eq(jobs_start_failure_class(ERR_PROTOCOL),
	    START_TRANSIENT);
}
END_TEST

START_TEST(test_transient_backs_off)
{
	struct placement p = { .node = "node01", .node_rank = 0 };
	const struct job *job;
	struct ctl f;
	struct cerr err;
	int64_t now = 1000000, want = 1000;
	uint64_t id;
	int i;

	ctl_setup(&f, NULL);
	id = submit_allocated(&f, now);
	for (i = 0; i < 4; i++, want *= 2) {
		ck_assert_int_eq(jobs_start_failed(f.js, id, START_TRANSIENT,
		    "rank 0 on node01: cannot create the spool", now, &err), 0);
		txq_flush(f.q);
		job = jobs_get(f.js, id);
		ck_assert_int_eq(job->state, JOB_PENDING);
		ck_assert(!jobs_is_active(job));
		ck_assert_ptr_nonnull(strstr(job->reason, "StartBackoff: rank 0 "
		    "on node01: cannot create the spool; retry in "));
		ck_assert_int_eq(job->not_before_ms, now + want);
		ck_assert(jobs_backing_off(job, now + want - 1));
		ck_assert(!jobs_backing_off(job, now + want));
		now += want;
		ck_assert_int_eq(jobs_allocate(f.js, id, &p, 1, now, &err), 0);
	}
	ck_assert_str_eq(jobs_get(f.js, id)->reason, "Launching");
	/* It ran: the next failure starts from 1 s again. */
	ck_assert_int_eq(jobs_mark_running(f.js, id, now, &err), 0);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(job->backoff_ms, 0);
	ck_assert(!jobs_backing_off(job, now));
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_retry_does_not_back_off)
{
	const struct job *job;
	struct ctl f;
	struct cerr err;
	uint64_t id;

	ctl_setup(&f, NULL);
	id = submit_allocated(&f, 5000);
	ck_assert_int_eq(jobs_start_failed(f.js, id, START_RETRY,
	    "the controller restarted while it was launching", 5000, &err), 0);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(job->state, JOB_PENDING);
	ck_assert(!jobs_backing_off(job, 5000));
	ck_assert_str_eq(job->reason, "the controller restarted while it was "
	    "launching");
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_permanent_fails)
{
	const struct job *job;
	struct ctl f;
	struct cerr err;
	uint64_t id;

	ctl_setup(&f, NULL);
	id = submit_allocated(&f, 5000);
	ck_assert_int_eq(jobs_start_failed(f.js, id, START_PERMANENT,
	    "rank 0 on node01: refusing to run tasks as 'daemon' (uid 1)",
	    5000, &err), 0);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(job->state, JOB_FAILED);
	ck_assert_str_eq(job->reason, "rank 0 on node01: refusing to run "
	    "tasks as 'daemon' (uid 1)");
	ck_assert_uint_eq(job->restarts, 0);
	ctl_teardown(&f);
}
END_TEST

/* A task that could not start, permanently: FAILED with why, no
 * restart used, although max_restarts would allow three. */
START_TEST(test_task_cannot_start)
{
	enum job_state st;
	const struct job *job;
	struct ctl f;
	struct cerr err;
	uint64_t id;

	ctl_setup(&f, NULL);
	id = submit_allocated(&f, 5000);
	ck_assert_int_eq(jobs_mark_running(f.js, id, 5001, &err), 0);
	job = jobs_get(f.js, id);
	ck_assert_uint_eq(job->spec.max_restarts, 3);
	ck_assert_msg(jobs_task_start_failed(f.js, id, job->attempt, 0,
	    127 << 8, "cannot run 'nosuchcmd': No such file or directory",
	    5002, &st, &err) == 0, "%s", err.text);
	ck_assert_int_eq(st, JOB_FAILED);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(job->state, JOB_FAILED);
	ck_assert_uint_eq(job->restarts, 0);
	ck_assert_str_eq(job->reason, "rank 0 could not start: cannot run "
	    "'nosuchcmd': No such file or directory");
	ck_assert_int_eq(job->exit_code, 127);
	/* The same report again (a heartbeat's retry) changes nothing. */
	ck_assert_int_eq(jobs_task_start_failed(f.js, id, job->attempt, 0,
	    127 << 8, "x", 5003, &st, &err), 0);
	ck_assert_int_eq(st, JOB_FAILED);
	txq_flush(f.q);
	ctl_teardown(&f);
}
END_TEST

/* The same exit without "permanent" restarts, as before. */
START_TEST(test_task_exit_restarts)
{
	enum job_state st;
	const struct job *job;
	struct ctl f;
	struct cerr err;
	uint64_t id;

	ctl_setup(&f, NULL);
	id = submit_allocated(&f, 5000);
	ck_assert_int_eq(jobs_mark_running(f.js, id, 5001, &err), 0);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(jobs_task_exit(f.js, id, job->attempt, 0, 127 << 8,
	    "cannot run 'x': Text file busy", 5002, &st, &err), 0);
	ck_assert_int_eq(st, JOB_RESTARTING);
	ck_assert_uint_eq(jobs_get(f.js, id)->restarts, 1);
	txq_flush(f.q);
	ctl_teardown(&f);
}
END_TEST

/* Checkpoints come faster than they are written (one a second at most);
 * one held back is still what the restart resumes from. */
START_TEST(test_checkpoint_held_back_then_failed_over)
{
	enum job_state st;
	const struct job *job;
	struct ctl f;
	struct cerr err;
	uint64_t id;
	uint32_t attempt;

	ctl_setup(&f, NULL);
	id = submit_allocated(&f, 5000);
	ck_assert_int_eq(jobs_mark_running(f.js, id, 5001, &err), 0);
	attempt = jobs_get(f.js, id)->attempt;
	ck_assert_int_eq(jobs_checkpoint(f.js, id, attempt, 10, "/ck/10",
	    6000, 6000, &err), 1);
	/* 300 ms later: held back, not written. */
	ck_assert_int_eq(jobs_checkpoint(f.js, id, attempt, 20, "/ck/20",
	    6300, 6300, &err), 0);
	job = jobs_get(f.js, id);
	ck_assert_uint_eq(job->ckpt_step, 10);
	/* The run fails: the held-back one is written first. */
	ck_assert_int_eq(jobs_task_exit(f.js, id, attempt, 0, 1 << 8, "",
	    6400, &st, &err), 0);
	ck_assert_int_eq(st, JOB_RESTARTING);
	job = jobs_get(f.js, id);
	ck_assert_uint_eq(job->ckpt_step, 20);
	ck_assert_str_eq(job->ckpt_path, "/ck/20");
	txq_flush(f.q);
	/* And it is what the database holds. */
	ck_assert_int_eq(jobs_reload(f.js, &err), 0);
	ck_assert_uint_eq(jobs_get(f.js, id)->ckpt_step, 20);
	ctl_teardown(&f);
}
END_TEST

/* ---- A write the database refuses changes nothing ---- */

/* The fail over of a 2-node gang whose write fails: no counter, no kept
 * gang, no placement change, no "RESTARTING" line; written, the restart
 * keeps the old gang (prev_place) for the next placement. */
START_TEST(test_fail_over_write_fails)
{
	enum job_state st;
	const struct job *job;
	struct ctl f;
	struct cerr err;
	uint64_t id;

	ctl_setup(&f, NULL);
	id = ctl_job_on(&f, 2, 4, true, 10000);
	ctl_fail_writes(&f, "events", "INSERT");
	ctl_log_clear();
	ck_assert_int_eq(jobs_fail_over(f.js, id, "node node02 went DOWN",
	    true, 15000, 15000, &st, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "injected"));
	ck_assert_int_eq(st, JOB_RUNNING);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_uint_eq(job->restarts, 0);
	ck_assert_uint_eq(job->lost_work_ms, 0);
	ck_assert_int_eq(job->last_failure_ms, 0);
	ck_assert_uint_eq(job->nprev, 0);
	ck_assert_ptr_null(job->prev_place);
	ck_assert_uint_eq(job->nplace, 2);
	ck_assert_str_eq(job->reason, "");
	ck_assert(jobs_is_active(job));
	ck_assert_msg(!ctl_logged("RESTARTING"), "%s", ctl_log());
	/* Nothing of it reached the database either. */
	ctl_heal(&f);
	ctl_reload(&f);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_uint_eq(job->restarts, 0);
	ck_assert_uint_eq(job->nplace, 2);

	ck_assert_int_eq(jobs_fail_over(f.js, id, "node node02 went DOWN",
	    true, 15000, 15000, &st, &err), 0);
	ck_assert_int_eq(st, JOB_RESTARTING);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(job->state, JOB_RESTARTING);
	ck_assert_uint_eq(job->restarts, 1);
	ck_assert_uint_eq(job->lost_work_ms, 5000);
	ck_assert_int_eq(job->last_failure_ms, 15000);
	ck_assert_uint_eq(job->nplace, 0);
	ck_assert(!jobs_is_active(job));
	ck_assert_uint_eq(job->nprev, 2);
	ck_assert_str_eq(job->prev_place[0].node, "node01");
	ck_assert_str_eq(job->prev_place[1].node, "node02");
	ck_assert_str_eq(job->reason, "node node02 went DOWN");
	ck_assert(ctl_logged("RESTARTING (restart 1 of 3, 5000 ms of work "
	    "lost): node node02 went DOWN"));
	ctl_reload(&f);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(job->state, JOB_RESTARTING);
	ck_assert_uint_eq(job->restarts, 1);
	ck_assert_uint_eq(job->lost_work_ms, 5000);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM events WHERE "
	    "kind = 'restart'"), 1);
	ctl_teardown(&f);
}
END_TEST

/* Its restarts used up, a refused write leaves it RUNNING, with no
 * "FAILED" line; written, FAILED keeps its last allocation on record. */
START_TEST(test_fail_over_give_up_write_fails)
{
	struct job_spec spec;
	struct placement p = { .node = "node01", .ngpus = 1 };
	enum job_state st;
	const struct job *job;
	struct ctl f;
	struct cerr err;
	uint64_t id;

	ctl_setup(&f, NULL);
	ctl_spec(&spec, 1, 1, 1);
	spec.max_restarts = 0;
	id = ctl_submit(&f, "alice", &spec, 1000);
	ck_assert_int_eq(jobs_allocate(f.js, id, &p, 1, 1000, &err), 0);
	ck_assert_int_eq(jobs_mark_running(f.js, id, 2000, &err), 0);
	ctl_flush(&f);
	ctl_fail_writes(&f, "jobs", "UPDATE");
	ctl_log_clear();
	ck_assert_int_eq(jobs_fail_over(f.js, id, "gpu 0 xid=79", true, 3000,
	    3000, &st, &err), -1);
	ck_assert_int_eq(st, JOB_RUNNING);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_uint_eq(job->lost_work_ms, 0);
	ck_assert_int_eq(job->last_failure_ms, 0);
	ck_assert_msg(!ctl_logged("FAILED"), "%s", ctl_log());
	ctl_heal(&f);
	ck_assert_int_eq(jobs_fail_over(f.js, id, "gpu 0 xid=79", true, 3000,
	    3000, &st, &err), 0);
	ck_assert_int_eq(st, JOB_FAILED);
	job = jobs_get(f.js, id);
	ck_assert_str_eq(job->reason, "max restarts (0) reached; last "
	    "failure: gpu 0 xid=79");
	ck_assert_uint_eq(job->lost_work_ms, 1000);
	ck_assert_int_eq(job->end_ms, 3000);
	ck_assert_uint_eq(job->nplace, 1);
	ck_assert(ctl_logged("FAILED: max restarts"));
	/* Ended: another failure is refused. */
	ck_assert_int_eq(jobs_fail_over(f.js, id, "again", true, 4000, 4000,
	    &st, &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ctl_teardown(&f);
}
END_TEST

/* The rank tracking of a new attempt cannot be had (its flags' calloc
 * fails): the allocation is not recorded either, neither in memory nor
 * in the database, instead of a job left "Launching" that the pass was
 * told had failed (it would hold its GPUs and never launch). */
START_TEST(test_allocate_without_memory_changes_nothing)
{
	struct job_spec spec;
	struct placement p[2] = { { .node = "node01", .node_rank = 0 },
	    { .node = "node02", .node_rank = 1 } };
	const struct job *job;
	struct ctl f;
	struct cerr err;
	uint64_t id;

	ctl_setup(&f, NULL);
	ctl_spec(&spec, 2, 2, 0);
	id = ctl_submit(&f, "alice", &spec, 1000);
	ctl_flush(&f);
	/* 1: the placement's copy, 2: the run's rank flags. */
	ctl_fail_calloc(2);
	ck_assert_int_eq(jobs_allocate(f.js, id, p, 2, 1000, &err), -1);
	ck_assert_int_eq(err.code, ERR_INTERNAL);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(job->state, JOB_PENDING);
	ck_assert_uint_eq(job->nplace, 0);
	ck_assert_uint_eq(job->attempt, 0);
	ck_assert_str_ne(job->reason, "Launching");
	ck_assert(!jobs_is_active(job));
	ctl_reload(&f);
	job = jobs_get(f.js, id);
	ck_assert_uint_eq(job->nplace, 0);
	ck_assert_uint_eq(job->attempt, 0);
	/* A write refused: the attempt is not used up either. */
	ctl_fail_writes(&f, "job_placements", "INSERT");
	ck_assert_int_eq(jobs_allocate(f.js, id, p, 2, 1000, &err), -1);
	ck_assert_uint_eq(jobs_get(f.js, id)->attempt, 0);
	ck_assert_uint_eq(jobs_get(f.js, id)->nplace, 0);
	ctl_heal(&f);
	ck_assert_int_eq(jobs_allocate(f.js, id, p, 2, 1000, &err), 0);
	job = jobs_get(f.js, id);
	ck_assert_uint_eq(job->attempt, 1);
	ck_assert_uint_eq(job->nplace, 2);
	ck_assert_str_eq(job->reason, "Launching");
	ctl_teardown(&f);
}
END_TEST

/* A restart that runs again, refused: last_restart_ms untouched and no
 * "RUNNING" line; written: set, and the back-off is reset. */
START_TEST(test_mark_running_write_fails)
{
	struct placement p = { .node = "node03", .ngpus = 1 };
	enum job_state st;
	const struct job *job;
	struct ctl f;
	struct cerr err;
	uint64_t id;

	ctl_setup(&f, NULL);
	id = ctl_job_on(&f, 1, 1, true, 1000);
	ck_assert_int_eq(jobs_fail_over(f.js, id, "x", true, 2000, 2000, &st,
	    &err), 0);
	ck_assert_int_eq(jobs_allocate(f.js, id, &p, 1, 2100, &err), 0);
	ck_assert_int_eq(jobs_start_failed(f.js, id, START_TRANSIENT, "busy",
	    2200, &err), 0);
	ck_assert_int_eq(jobs_get(f.js, id)->state, JOB_RESTARTING);
	ck_assert_int_eq(jobs_get(f.js, id)->backoff_ms, 1000);
	ck_assert_int_eq(jobs_allocate(f.js, id, &p, 1, 3200, &err), 0);
	ctl_flush(&f);
	ctl_fail_writes(&f, "events", "INSERT");
	ctl_log_clear();
	ck_assert_int_eq(jobs_mark_running(f.js, id, 3300, &err), -1);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(job->state, JOB_RESTARTING);
	ck_assert_int_eq(job->last_restart_ms, 0);
	ck_assert_int_eq(job->backoff_ms, 1000);
	ck_assert_msg(!ctl_logged("RUNNING"), "%s", ctl_log());
	ctl_heal(&f);
	ck_assert_int_eq(jobs_mark_running(f.js, id, 3300, &err), 0);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_int_eq(job->last_restart_ms, 3300);
	ck_assert_int_eq(job->start_ms, 3300);
	ck_assert_int_eq(job->backoff_ms, 0);
	ck_assert(ctl_logged("RUNNING on 1 node(s)"));
	ctl_reload(&f);
	ck_assert_int_eq(jobs_get(f.js, id)->last_restart_ms, 3300);
	ctl_teardown(&f);
}
END_TEST

/* The last rank's exit 0 whose COMPLETED cannot be written: the job
 * runs on with no exit recorded, and the agent's repeat of the exit
 * completes it (it is not taken for an exit already counted). */
START_TEST(test_last_exit_write_fails)
{
	enum job_state st;
	const struct job *job;
	struct ctl f;
	struct cerr err;
	uint64_t id;

	ctl_setup(&f, NULL);
	id = ctl_job_on(&f, 2, 1, true, 1000);
	ck_assert_int_eq(jobs_task_exit(f.js, id, 1, 0, 0, "", 2000, &st,
	    &err), 0);
	ck_assert_int_eq(st, JOB_RUNNING);
	ctl_fail_writes(&f, "jobs", "UPDATE");
	ck_assert_int_eq(jobs_task_exit(f.js, id, 1, 1, 0, "", 2001, &st,
	    &err), -1);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert(!job->has_exit);
	ck_assert_msg(!ctl_logged("COMPLETED"), "%s", ctl_log());
	ctl_heal(&f);
	ck_assert_int_eq(jobs_task_exit(f.js, id, 1, 1, 0, "", 2002, &st,
	    &err), 0);
	ck_assert_int_eq(st, JOB_COMPLETED);
	job = jobs_get(f.js, id);
	ck_assert(job->has_exit);
	ck_assert_int_eq(job->exit_code, 0);
	ck_assert_int_eq(job->end_ms, 2002);
	ck_assert(ctl_logged("COMPLETED"));
	ctl_teardown(&f);
}
END_TEST

/* A failed rank whose restart cannot be written: no exit code, no
 * restart used; the repeat restarts the job. */
START_TEST(test_failed_exit_write_fails)
{
	enum job_state st;
	const struct job *job;
	struct ctl f;
	struct cerr err;
	uint64_t id;

	ctl_setup(&f, NULL);
	/* At once: the early-failure back-off is check_jobs_control's. */
	jobs_set_early_fail_window(f.js, 0);
	id = ctl_job_on(&f, 1, 1, true, 1000);
	ctl_fail_writes(&f, "events", "INSERT");
	ck_assert_int_eq(jobs_task_exit(f.js, id, 1, 0, 3 << 8, "", 2000, &st,
	    &err), -1);
	ck_assert_int_eq(st, JOB_RUNNING);
	job = jobs_get(f.js, id);
	ck_assert(!job->has_exit);
	ck_assert_uint_eq(job->restarts, 0);
	ctl_heal(&f);
	ck_assert_int_eq(jobs_task_exit(f.js, id, 1, 0, 3 << 8, "", 2001, &st,
	    &err), 0);
	ck_assert_int_eq(st, JOB_RESTARTING);
	job = jobs_get(f.js, id);
	ck_assert(job->has_exit);
	ck_assert_int_eq(job->exit_code, 3);
	ck_assert_uint_eq(job->restarts, 1);
	ck_assert_str_eq(job->reason, "rank 0 exited with 3");
	ctl_reload(&f);
	ck_assert_int_eq(jobs_get(f.js, id)->exit_code, 3);
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_task_start_failed_write_fails)
{
	enum job_state st;
	const struct job *job;
	struct ctl f;
	struct cerr err;
	uint64_t id;

	ctl_setup(&f, NULL);
	id = ctl_job_on(&f, 1, 1, true, 1000);
	ctl_fail_writes(&f, "jobs", "UPDATE");
	ctl_log_clear();
	ck_assert_int_eq(jobs_task_start_failed(f.js, id, 1, 0, 127 << 8,
	    "no such workdir", 2000, &st, &err), -1);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert(!job->has_exit);
	ck_assert_msg(!ctl_logged("FAILED"), "%s", ctl_log());
	ctl_heal(&f);
	ck_assert_int_eq(jobs_task_start_failed(f.js, id, 1, 0, 127 << 8,
	    "", 2001, &st, &err), 0);
	ck_assert_int_eq(st, JOB_FAILED);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(job->exit_code, 127);
	ck_assert_str_eq(job->reason, "rank 0 could not start: no reason "
	    "given");
	ck_assert(ctl_logged("FAILED: rank 0 could not start"));
	ctl_teardown(&f);
}
END_TEST

/* The 257th job needs a larger table; without memory for it the submit
 * fails and no row is committed for it (it used to be written first and
 * committed although the client was told it failed). */
START_TEST(test_submit_table_full_writes_no_row)
{
	struct job_spec spec;
	struct peer alice = { .name = "alice", .role = ROLE_USER };
	struct ctl f;
	struct cerr err;
	uint64_t id = 0;
	int i;

	ctl_setup(&f, NULL);
	for (i = 0; i < 256; i++) {
		ctl_spec(&spec, 1, 1, 1);
		ctl_submit(&f, "alice", &spec, 1000 + i);
	}
	ctl_flush(&f);
	ctl_spec(&spec, 1, 1, 1);
	ctl_fail_reallocarray(1);
	ck_assert_int_eq(jobs_submit(f.js, &alice, &spec, 5000, &id, &err), -1);
	ck_assert_int_eq(err.code, ERR_INTERNAL);
	ck_assert_uint_eq(jobs_count(f.js), 256);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 256);
	ctl_flush(&f);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM jobs"), 256);
	/* The next one gets the id that one would have had. */
	ctl_spec(&spec, 1, 1, 1);
	ck_assert_uint_eq(ctl_submit(&f, "alice", &spec, 5001), 257);
	ctl_teardown(&f);
}
END_TEST

/* Refused writes of the other transitions: nothing changes, and the
 * line that says it changed is not written. */
START_TEST(test_end_resize_start_failed_write_fails)
{
	struct ctl f;
	struct cerr err;
	uint64_t id, id2;

	ctl_setup(&f, NULL);
	id = ctl_job_on(&f, 1, 1, true, 1000);
	ctl_fail_writes(&f, "events", "INSERT");
	ctl_log_clear();
	ck_assert_int_eq(jobs_end(f.js, id, JOB_TIMEOUT, "time limit of 60 s "
	    "reached", 61000, &err), -1);
	ck_assert_int_eq(jobs_begin_resize(f.js, id, "growing", 61000, &err),
	    -1);
	ck_assert_int_eq(jobs_get(f.js, id)->state, JOB_RUNNING);
	ck_assert_int_eq(jobs_get(f.js, id)->end_ms, 0);
	ck_assert_msg(!ctl_logged("TIMEOUT") && !ctl_logged("RESIZING"), "%s",
	    ctl_log());
	ctl_heal(&f);
	id2 = ctl_job_on(&f, 1, 1, false, 1000);
	ctl_fail_writes(&f, "events", "INSERT");
	ctl_log_clear();
	ck_assert_int_eq(jobs_start_failed(f.js, id2, START_TRANSIENT,
	    "busy", 2000, &err), -1);
	ck_assert_int_eq(jobs_start_failed(f.js, id2, START_PERMANENT,
	    "no user", 2000, &err), -1);
	ck_assert_msg(!ctl_logged("start failed"), "%s", ctl_log());
	ck_assert_int_eq(jobs_get(f.js, id2)->backoff_ms, 0);
	ck_assert_int_eq(jobs_get(f.js, id2)->not_before_ms, 0);
	ck_assert_uint_eq(jobs_get(f.js, id2)->nplace, 1);
	ctl_heal(&f);
	ck_assert_int_eq(jobs_end(f.js, id, JOB_TIMEOUT, "time limit of 60 s "
	    "reached", 61000, &err), 0);
	ck_assert(ctl_logged("TIMEOUT: time limit of 60 s reached"));
	ck_assert_int_eq(jobs_get(f.js, id)->end_ms, 61000);
	ctl_teardown(&f);
}
END_TEST

/* Every allocation of a fail over failing in turn: each attempt fails
 * whole (the job as it was), until one has all it needs. */
START_TEST(test_fail_over_each_allocation_fails)
{
	enum job_state st;
	const struct job *job;
	struct ctl f;
	struct cerr err;
	uint64_t id;
	int nth, rc;

	ctl_setup(&f, NULL);
	id = ctl_job_on(&f, 3, 2, true, 1000);
	for (nth = 1; nth < 20; nth++) {
		ctl_fail_calloc(nth);
		rc = jobs_fail_over(f.js, id, "cause", true, 2000, 2000, &st,
		    &err);
		ctl_fail_calloc(0);
		if (rc == 0)
			break;
		job = jobs_get(f.js, id);
		ck_assert_int_eq(job->state, JOB_RUNNING);
		ck_assert_uint_eq(job->restarts, 0);
		ck_assert_uint_eq(job->nprev, 0);
		ck_assert_uint_eq(job->nplace, 3);
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_int_gt(nth, 1);
	job = jobs_get(f.js, id);
	ck_assert_uint_eq(job->nprev, 3);
	ck_assert_uint_eq(job->restarts, 1);
	ctl_teardown(&f);
}
END_TEST

/* ---- Lists that tell "none" from "no memory" ---- */

START_TEST(test_active_and_list_tell_enomem)
{
	struct jobs_filter all = { .all = true };
	const struct job **v = (const struct job **)&v;
	struct ctl f;
	size_t n = 99;
	uint64_t a, b;

	ctl_setup(&f, NULL);
	/* An empty table: 0, none. */
	ck_assert_int_eq(jobs_active(f.js, &v, &n), 0);
	ck_assert_ptr_null(v);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(jobs_list(f.js, &all, &v, &n), 0);
	ck_assert_uint_eq(n, 0);
	a = ctl_job_on(&f, 1, 1, true, 1000);
	b = ctl_job_on(&f, 1, 1, false, 1000);
	ck_assert_int_eq(jobs_active(f.js, &v, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(v[0]->id, a);
	ck_assert_uint_eq(v[1]->id, b);
	free(v);
	/* Out of memory: -1 and ENOMEM, never "no jobs". */
	ctl_fail_calloc(1);
	errno = 0;
	n = 99;
	ck_assert_int_eq(jobs_active(f.js, &v, &n), -1);
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert_ptr_null(v);
	ck_assert_uint_eq(n, 0);
	ctl_fail_calloc(1);
	errno = 0;
	ck_assert_int_eq(jobs_list(f.js, &all, &v, &n), -1);
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert_ptr_null(v);
	ck_assert_uint_eq(n, 0);
	ctl_teardown(&f);
}
END_TEST

/* ---- States, transitions, validation, limits ---- */

START_TEST(test_submit_validates_and_records)
{
	struct job_spec spec;
	struct peer alice = { .name = "alice", .role = ROLE_USER };
	const struct job *job;
	struct ctl f;
	struct cerr err;
	uint64_t id = 0;

	ctl_setup(&f, NULL);
	/* No command: refused, nothing recorded, the spec freed. */
	job_spec_init(&spec);
	ck_assert_int_eq(jobs_submit(f.js, &alice, &spec, 1000, &id, &err),
	    -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_uint_eq(jobs_count(f.js), 0);
	ctl_spec(&spec, 4, 2, 1);
	ck_assert_int_eq(jobs_submit(f.js, &alice, &spec, 1000, &id, &err),
	    -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_uint_eq(jobs_count(f.js), 0);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 0);
	/* A good one. */
	ctl_spec(&spec, 1, 2, 4);
	spec.name = strdup("train");
	ck_assert_int_eq(jobs_submit(f.js, &alice, &spec, 1234, &id, &err), 0);
	ck_assert_uint_eq(id, 1);
	ck_assert_ptr_null(spec.argv);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(job->state, JOB_PENDING);
	ck_assert_str_eq(job->user, "alice");
	ck_assert_int_eq(job->submit_ms, 1234);
	ck_assert_uint_eq(job->spec.nodes_max, 2);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 1);
	ck_assert_ptr_null(jobs_get(f.js, 2));
	ck_assert_ptr_null(jobs_get(f.js, 0));
	ck_assert(ctl_logged("job 1: submitted by alice (train)"));
	ctl_reload(&f);
	ck_assert_str_eq(jobs_get(f.js, 1)->spec.name, "train");
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM events WHERE "
	    "kind = 'submit' AND detail = 'name=train nodes=1:2 "
	    "gpus_per_node=4'"), 1);
	ctl_teardown(&f);
}
END_TEST

/* The key map (jobs_keys.c) through growth and removals: every key that
 * is in is found, with its job; every removed one is not; users keep
 * their own keys apart. Removal shifts the probe chains back, so a
 * removal in the middle of a chain must leave the rest findable. */
START_TEST(test_keys_map)
{
	enum { N = 1500 };
	static struct job jobs[N];
	static char keys[N][16];
	struct jobs_keys k = { 0 };
	size_t i;

	for (i = 0; i < N; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%zu", i / 2);
		jobs[i].id = i + 1;
		jobs[i].user = i % 2 ? "bob" : "alice";
		jobs[i].spec.idem_key = keys[i];
		ck_assert_int_eq(jobs_keys_reserve(&k, 1), 0);
		jobs_keys_add(&k, &jobs[i]);
	}
	ck_assert_uint_eq(k.n, N);
	ck_assert_uint_le(k.n * 2, k.cap);
	for (i = 0; i < N; i++)
		ck_assert_ptr_eq(jobs_keys_find(&k, jobs[i].user, keys[i]),
		    &jobs[i]);
	ck_assert_ptr_null(jobs_keys_find(&k, "carol", "k1"));
	ck_assert_ptr_null(jobs_keys_find(&k, "alice", "k100000"));
	/* Remove every third, and one twice (nothing happens). */
	for (i = 0; i < N; i += 3)
		jobs_keys_remove(&k, &jobs[i]);
	jobs_keys_remove(&k, &jobs[0]);
	ck_assert_uint_eq(k.n, N - (N + 2) / 3);
	for (i = 0; i < N; i++) {
		if (i % 3 == 0)
			ck_assert_ptr_null(jobs_keys_find(&k, jobs[i].user,
			    keys[i]));
		else
			ck_assert_ptr_eq(jobs_keys_find(&k, jobs[i].user,
			    keys[i]), &jobs[i]);
	}
	/* A job without a key is neither added nor removed. */
	jobs[0].spec.idem_key = NULL;
	jobs_keys_add(&k, &jobs[0]);
	jobs_keys_remove(&k, &jobs[0]);
	ck_assert_uint_eq(k.n, N - (N + 2) / 3);
	jobs_keys_clear(&k);
	ck_assert_ptr_null(jobs_keys_find(&k, "bob", "k1"));
}
END_TEST

/* Keys chosen to collide: a user who makes 500 keys that an unkeyed
 * FNV-1a would send to one home slot of the map's 2048 gets no long probe
 * run (with FNV-1a here, the run is all 500: every submit would walk
 * it). */
START_TEST(test_keys_map_chosen_collisions)
{
	enum { N = 500, CAP = 2048 };
	static struct job jobs[N];
	static char keys[N][24];
	struct jobs_keys k = { 0 };
	uint64_t h, want = 0, tries = 0;
	size_t i, run, longest = 0;

	ck_assert_int_eq(jobs_keys_reserve(&k, CAP / 2), 0);
	ck_assert_uint_eq(k.cap, CAP);
	for (i = 0; i < N; i++) {
		do {
			snprintf(keys[i], sizeof(keys[i]), "m%" PRIu64, tries++);
			h = fnv64_str(fnv64(FNV64_BASIS, "mallory", 8), keys[i]);
		} while ((h & (CAP - 1)) != want);
		jobs[i].id = i + 1;
		jobs[i].user = "mallory";
		jobs[i].spec.idem_key = keys[i];
		jobs_keys_add(&k, &jobs[i]);
	}
	for (i = 0, run = 0; i < 2 * CAP; i++) {
		run = k.v[i % CAP] != NULL ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	/* At a quarter full, a run of 64 from a random hash is beyond odds. */
	ck_assert_uint_lt(longest, 64);
	for (i = 0; i < N; i++)
		ck_assert_ptr_eq(jobs_keys_find(&k, "mallory", keys[i]), &jobs[i]);
	jobs_keys_clear(&k);
}
END_TEST

/* Idempotent submits: a key makes one job per user; asked
 * again (jobs_submit_existing) it answers that job, whatever the limits
 * say now, also after a reload; jobs_submit refuses it; another user's
 * key is another's; an array keeps it on its first task; a malformed
 * key is refused before the store is asked. */
START_TEST(test_submit_idempotency_key)
{
	struct job_limits lim = { .script_max = 1024,
	    .max_pending_per_user = 4, .submit_rate = 1000,
	    .submit_burst = 1000 };
	struct peer alice = { .name = "alice", .role = ROLE_USER };
	struct peer bob = { .name = "bob", .role = ROLE_USER };
	struct peer carol = { .name = "carol", .role = ROLE_USER };
	struct job_spec spec;
	struct ctl f;
	struct cerr err;
	char want[64];
	uint64_t id = 0, a, b, arr;
	size_t n;

	ctl_setup(&f, &lim);
	ctl_spec(&spec, 1, 1, 1);
	spec.idem_key = strdup("run-42:step.3_a");
	ck_assert_int_eq(jobs_submit_existing(f.js, &alice, &spec, &id, &err),
	    0);
	a = ctl_submit(&f, "alice", &spec, 1000);
	ck_assert_str_eq(jobs_get(f.js, a)->spec.idem_key, "run-42:step.3_a");
	/* Sent again: that job, nothing new; jobs_submit refuses it. */
	ctl_spec(&spec, 1, 1, 1);
	spec.idem_key = strdup("run-42:step.3_a");
	ck_assert_int_eq(jobs_submit_existing(f.js, &alice, &spec, &id, &err),
	    1);
	ck_assert_uint_eq(id, a);
	ck_assert_int_eq(jobs_submit(f.js, &alice, &spec, 1001, &id, &err),
	    -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ck_assert_ptr_nonnull(strstr(err.text, "already the key of job 1"));
	ck_assert_ptr_null(spec.idem_key);
	ck_assert_uint_eq(jobs_count(f.js), 1);
	/* Bob's key of the same name is his own job. */
	ctl_spec(&spec, 1, 1, 1);
	spec.idem_key = strdup("run-42:step.3_a");
	ck_assert_int_eq(jobs_submit_existing(f.js, &bob, &spec, &id, &err),
	    0);
	b = ctl_submit(&f, "bob", &spec, 1002);
	ck_assert_uint_ne(b, a);
	/* An array: its first task holds the key. */
	ctl_spec(&spec, 1, 1, 1);
	spec.array = strdup("0-2");
	spec.idem_key = strdup("sweep");
	arr = ctl_submit(&f, "carol", &spec, 1003);
	ck_assert_str_eq(jobs_get(f.js, arr)->spec.idem_key, "sweep");
	ck_assert_ptr_null(jobs_get(f.js, arr + 1)->spec.idem_key);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM jobs WHERE "
	    "idem_key = 'sweep'"), 1);
	/* Its key held, a second array or job is refused by the store's
	 * unique index, named as the conflict it is, and leaves nothing. */
	n = jobs_count(f.js);
	ctl_spec(&spec, 1, 1, 1);
	spec.array = strdup("5");
	spec.idem_key = strdup("sweep");
	ck_assert_int_eq(jobs_submit(f.js, &carol, &spec, 1004, &id, &err),
	    -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	snprintf(want, sizeof(want), "already the key of job %" PRIu64, arr);
	ck_assert_msg(strstr(err.text, want) != NULL, "%s", err.text);
	ctl_spec(&spec, 1, 1, 1);
	spec.idem_key = strdup("sweep");
	ck_assert_int_eq(jobs_submit(f.js, &carol, &spec, 1004, &id, &err),
	    -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ck_assert_msg(strstr(err.text, want) != NULL, "%s", err.text);
	ck_assert_uint_eq(jobs_count(f.js), n);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM jobs"),
	    (int)n);
	/* The next submit takes the next id: none was used up. */
	ctl_spec(&spec, 1, 1, 1);
	ck_assert_uint_eq(ctl_submit(&f, "carol", &spec, 1005), arr + 3);
	/* Malformed: refused with the option's name, nothing asked. */
	ctl_spec(&spec, 1, 1, 1);
	spec.idem_key = strdup("a b");
	ck_assert_int_eq(jobs_submit_existing(f.js, &alice, &spec, &id, &err),
	    -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.text, "--idempotency-key"));
	ck_assert_int_eq(jobs_submit(f.js, &alice, &spec, 1004, &id, &err),
	    -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ctl_spec(&spec, 1, 1, 1);
	spec.idem_key = calloc(JOB_IDEM_KEY_MAX + 2, 1);
	memset(spec.idem_key, 'k', JOB_IDEM_KEY_MAX + 1);
	ck_assert_int_eq(jobs_submit_existing(f.js, &alice, &spec, &id, &err),
	    -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	spec.idem_key[JOB_IDEM_KEY_MAX] = '\0';
	ck_assert_int_eq(jobs_submit_existing(f.js, &alice, &spec, &id, &err),
	    0);
	job_spec_clear(&spec);
	/* A restarted (or new leading) controller answers the same. */
	ctl_reload(&f);
	ck_assert_str_eq(jobs_get(f.js, a)->spec.idem_key, "run-42:step.3_a");
	ctl_spec(&spec, 1, 1, 1);
	spec.idem_key = strdup("run-42:step.3_a");
	id = 0;
	ck_assert_int_eq(jobs_submit_existing(f.js, &alice, &spec, &id, &err),
	    1);
	ck_assert_uint_eq(id, a);
	ck_assert_int_eq(jobs_submit_existing(f.js, &bob, &spec, &id, &err),
	    1);
	ck_assert_uint_eq(id, b);
	job_spec_clear(&spec);
	ctl_teardown(&f);
}
END_TEST

/* spec, keyed, with a fingerprint filled with byte (none when 0). */
static void
keyed_spec(struct job_spec *spec, const char *key, unsigned char byte)
{
	ctl_spec(spec, 1, 1, 1);
	spec->idem_key = strdup(key);
	spec->has_idem_fp = byte != 0;
	memset(spec->idem_fp, byte, JOB_IDEM_FP_LEN);
}

/* A key sent again with another request (another fingerprint) is
 * refused, naming the job; the same request, or one without a
 * fingerprint on either side (older jobs), gets the job. The
 * fingerprint outlives a restart and belongs to an array's first task. */
START_TEST(test_submit_idempotency_fingerprint)
{
	struct job_limits lim = { .script_max = 1024,
	    .max_pending_per_user = 10, .submit_rate = 1000,
	    .submit_burst = 1000 };
	struct peer alice = { .name = "alice", .role = ROLE_USER };
	struct job_spec spec;
	struct ctl f;
	struct cerr err;
	char want[64];
	uint64_t id, a, old, arr;
	int round;

	ctl_setup(&f, &lim);
	keyed_spec(&spec, "step-1", 0xa1);
	a = ctl_submit(&f, "alice", &spec, 1000);
	ck_assert_int_eq(jobs_get(f.js, a)->spec.has_idem_fp, true);
	keyed_spec(&spec, "step-0", 0);
	old = ctl_submit(&f, "alice", &spec, 1001);
	keyed_spec(&spec, "sweep", 0xc3);
	spec.array = strdup("0-1");
	arr = ctl_submit(&f, "alice", &spec, 1002);
	ck_assert_int_eq(jobs_get(f.js, arr)->spec.has_idem_fp, true);
	ck_assert_int_eq(jobs_get(f.js, arr + 1)->spec.has_idem_fp, false);
	snprintf(want, sizeof(want), "was used for job %" PRIu64, a);
	for (round = 0; round < 2; round++) {
		/* The same request: that job. */
		keyed_spec(&spec, "step-1", 0xa1);
		id = 0;
		ck_assert_int_eq(jobs_submit_existing(f.js, &alice, &spec,
		    &id, &err), 1);
		ck_assert_uint_eq(id, a);
		job_spec_clear(&spec);
		/* Another request: refused, nothing made. */
		keyed_spec(&spec, "step-1", 0xa2);
		ck_assert_int_eq(jobs_submit_existing(f.js, &alice, &spec,
		    &id, &err), -1);
		ck_assert_int_eq(err.code, ERR_CONFLICT);
		ck_assert_msg(strstr(err.text, want) != NULL, "%s", err.text);
		ck_assert_ptr_nonnull(strstr(err.text, "step-1"));
		job_spec_clear(&spec);
		/* No fingerprint sent: the key decides. */
		keyed_spec(&spec, "step-1", 0);
		ck_assert_int_eq(jobs_submit_existing(f.js, &alice, &spec,
		    &id, &err), 1);
		ck_assert_uint_eq(id, a);
		job_spec_clear(&spec);
		/* A job without one (made before fingerprints): too. */
		keyed_spec(&spec, "step-0", 0x55);
		ck_assert_int_eq(jobs_submit_existing(f.js, &alice, &spec,
		    &id, &err), 1);
		ck_assert_uint_eq(id, old);
		job_spec_clear(&spec);
		/* An array's, on its first task. */
		keyed_spec(&spec, "sweep", 0xc4);
		spec.array = strdup("0-1");
		ck_assert_int_eq(jobs_submit_existing(f.js, &alice, &spec,
		    &id, &err), -1);
		ck_assert_int_eq(err.code, ERR_CONFLICT);
		job_spec_clear(&spec);
		keyed_spec(&spec, "sweep", 0xc3);
		spec.array = strdup("0-1");
		ck_assert_int_eq(jobs_submit_existing(f.js, &alice, &spec,
		    &id, &err), 1);
		ck_assert_uint_eq(id, arr);
		job_spec_clear(&spec);
		/* From the store, as a restarted controller has it. */
		ctl_reload(&f);
	}
	ck_assert_uint_eq(jobs_count(f.js), 4);
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_submit_limits)
{
	struct job_limits lim = { .script_max = 1024,
	    .max_pending_per_user = 2, .submit_rate = 1000,
	    .submit_burst = 1000 };
	struct job_spec spec;
	struct peer bob = { .name = "bob", .role = ROLE_USER };
	struct quota_stats qs;
	struct ctl f;
	struct cerr err;
	uint64_t id, a;

	ctl_setup(&f, &lim);
	ctl_spec(&spec, 1, 1, 1);
	a = ctl_submit(&f, "bob", &spec, 1000);
	ctl_spec(&spec, 1, 1, 1);
	ctl_submit(&f, "bob", &spec, 1001);
	ctl_spec(&spec, 1, 1, 1);
	ck_assert_int_eq(jobs_submit(f.js, &bob, &spec, 1002, &id, &err), -1);
	ck_assert_int_eq(err.code, ERR_LIMIT);
	jobs_quota_stats(f.js, &qs);
	ck_assert_uint_eq(qs.refused_pending, 1);
	/* Another user is not held to bob's count. */
	ctl_spec(&spec, 1, 1, 1);
	ctl_submit(&f, "carol", &spec, 1003);
	/* One of bob's ends: room for one more. */
	ck_assert_int_eq(jobs_end(f.js, a, JOB_CANCELLED, "x", 1004, &err), 0);
	ck_assert_uint_eq(jobs_pending_of(f.js, "bob"), 1);
	ctl_spec(&spec, 1, 1, 1);
	ck_assert_int_eq(jobs_submit(f.js, &bob, &spec, 1005, &id, &err), 0);
	/* The counts are rebuilt at load. */
	ctl_reload(&f);
	ck_assert_uint_eq(jobs_pending_of(f.js, "bob"), 2);
	ck_assert_uint_eq(jobs_pending_of(f.js, "carol"), 1);
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_cancel)
{
	struct peer alice = { .name = "alice", .role = ROLE_USER };
	struct peer bob = { .name = "bob", .role = ROLE_USER };
	struct peer root = { .name = "root", .role = ROLE_ADMIN };
	struct job_spec spec;
	enum job_state st;
	const struct job *job;
	struct ctl f;
	struct cerr err;
	uint64_t pend, run;

	ctl_setup(&f, NULL);
	ctl_spec(&spec, 1, 1, 1);
	pend = ctl_submit(&f, "alice", &spec, 1000);
	run = ctl_job_on(&f, 1, 1, true, 1000);
	ck_assert_int_eq(jobs_cancel(f.js, &alice, 99, 2000, &st, &err), -1);
	ck_assert_int_eq(err.code, ERR_NOT_FOUND);
	ck_assert_int_eq(jobs_cancel(f.js, &bob, pend, 2000, &st, &err), -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	ck_assert_ptr_nonnull(strstr(err.text, "belongs to alice"));
	ck_assert_int_eq(jobs_cancel(f.js, &alice, pend, 2000, &st, &err), 0);
	ck_assert_int_eq(st, JOB_CANCELLED);
	job = jobs_get(f.js, pend);
	ck_assert_str_eq(job->reason, "cancelled by alice");
	ck_assert_int_eq(job->end_ms, 2000);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 0);
	ck_assert_int_eq(jobs_cancel(f.js, &alice, pend, 2001, &st, &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	/* An admin may cancel anyone's; a running job ends at once too (the
	 * caller stops its gang). */
	ck_assert_int_eq(jobs_cancel(f.js, &root, run, 3000, &st, &err), 0);
	ck_assert_int_eq(st, JOB_CANCELLED);
	ck_assert(!jobs_is_active(jobs_get(f.js, run)));
	ck_assert(ctl_logged("cancelled by root"));
	ctl_reload(&f);
	ck_assert_int_eq(jobs_get(f.js, run)->state, JOB_CANCELLED);
	ctl_teardown(&f);
}
END_TEST

/* Which transitions are refused, and what a refused one says. */
START_TEST(test_transitions_refused)
{
	struct placement p = { .node = "node01", .ngpus = 1 };
	struct job_spec spec;
	enum job_state st;
	struct ctl f;
	struct cerr err;
	uint64_t pend, run, done;

	ctl_setup(&f, NULL);
	ctl_spec(&spec, 1, 1, 1);
	pend = ctl_submit(&f, "alice", &spec, 1000);
	run = ctl_job_on(&f, 1, 1, true, 1000);
	done = ctl_job_on(&f, 1, 1, true, 1000);
	ck_assert_int_eq(jobs_end(f.js, done, JOB_CANCELLED, "x", 1500, &err),
	    0);
	/* Unknown ids. */
	ck_assert_int_eq(jobs_allocate(f.js, 77, &p, 1, 2000, &err), -1);
	ck_assert_int_eq(err.code, ERR_NOT_FOUND);
	ck_assert_int_eq(jobs_mark_running(f.js, 77, 2000, &err), -1);
	ck_assert_int_eq(jobs_start_failed(f.js, 77, START_RETRY, "x", 2000,
	    &err), -1);
	ck_assert_int_eq(jobs_end(f.js, 77, JOB_FAILED, "x", 2000, &err), -1);
	ck_assert_int_eq(jobs_fail_over(f.js, 77, "x", true, 2000, 2000, &st,
	    &err), -1);
	ck_assert_int_eq(jobs_begin_resize(f.js, 77, "x", 2000, &err), -1);
	ck_assert_int_eq(jobs_task_exit(f.js, 77, 1, 0, 0, "", 2000, &st,
	    &err), -1);
	ck_assert_int_eq(err.code, ERR_NOT_FOUND);
	/* A running job is not allocated again; a pending one does not
	 * run before it is allocated; an ended one does not end again. */
	ck_assert_int_eq(jobs_allocate(f.js, run, &p, 1, 2000, &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ck_assert_int_eq(jobs_mark_running(f.js, pend, 2000, &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ck_assert_int_eq(jobs_end(f.js, done, JOB_FAILED, "x", 2000, &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ck_assert_int_eq(jobs_begin_resize(f.js, pend, "x", 2000, &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ck_assert_int_eq(jobs_mark_running(f.js, done, 2000, &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ctl_teardown(&f);
}
END_TEST

/* Attempts and restarts: every allocation is a new attempt; a failure
 * counts against max_restarts, a planned move does not; the work since
 * the later of the start and the last checkpoint is lost. */
START_TEST(test_attempts_restarts_lost_work)
{
	struct placement p2[2] = { { .node = "node02", .node_rank = 0,
	    .ngpus = 2 }, { .node = "node05", .node_rank = 1, .ngpus = 2 } };
	enum job_state st;
	const struct job *job;
	struct ctl f;
	struct cerr err;
	uint64_t id;

	ctl_setup(&f, NULL);
	id = ctl_job_on(&f, 2, 2, true, 10000);
	job = jobs_get(f.js, id);
	ck_assert_uint_eq(job->attempt, 1);
	ck_assert_int_eq(job->start_ms, 10000);
	/* A checkpoint at 14 s: a failure at 20 s loses 6 s. */
	ck_assert_int_eq(jobs_checkpoint(f.js, id, 1, 100, "/ck/100", 14000,
	    14000, &err), 1);
	ck_assert_int_eq(jobs_fail_over(f.js, id, "node node01 went DOWN",
	    true, 20000, 20100, &st, &err), 0);
	job = jobs_get(f.js, id);
	ck_assert_uint_eq(job->lost_work_ms, 6000);
	ck_assert_uint_eq(job->restarts, 1);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 1);
	/* Restarting, it is placed again (a new attempt) keeping node02. */
	ck_assert_int_eq(jobs_allocate(f.js, id, p2, 2, 21000, &err), 0);
	job = jobs_get(f.js, id);
	ck_assert_uint_eq(job->attempt, 2);
	ck_assert_int_eq(job->state, JOB_RESTARTING);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 1);
	ck_assert_int_eq(jobs_mark_running(f.js, id, 22000, &err), 0);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 0);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(job->start_ms, 22000);
	ck_assert_int_eq(job->last_restart_ms, 22000);
	/* A planned move (drain --now) does not count; the work since the
	 * restart's start is lost (its checkpoint is older). */
	ck_assert_int_eq(jobs_fail_over(f.js, id, "node node02 drained",
	    false, 25000, 25000, &st, &err), 0);
	job = jobs_get(f.js, id);
	ck_assert_uint_eq(job->restarts, 1);
	ck_assert_uint_eq(job->lost_work_ms, 6000 + 3000);
	ck_assert_str_eq(job->prev_place[0].node, "node02");
	ck_assert_str_eq(job->prev_place[1].node, "node05");
	/* A failure of a job that is not running loses nothing more. */
	ck_assert_int_eq(jobs_fail_over(f.js, id, "again", true, 26000, 26000,
	    &st, &err), 0);
	ck_assert_uint_eq(jobs_get(f.js, id)->lost_work_ms, 9000);
	ck_assert_uint_eq(jobs_get(f.js, id)->restarts, 2);
	/* Not placed, it keeps the gang it remembered. */
	ck_assert_uint_eq(jobs_get(f.js, id)->nprev, 2);
	ctl_reload(&f);
	job = jobs_get(f.js, id);
	ck_assert_uint_eq(job->attempt, 2);
	ck_assert_uint_eq(job->restarts, 2);
	ck_assert_uint_eq(job->lost_work_ms, 9000);
	ck_assert_str_eq(job->ckpt_path, "/ck/100");
	ctl_teardown(&f);
}
END_TEST

/* Exits: every rank of every node (tasks_per_node), once each; those of
 * another attempt or of an ended job are recorded and change nothing;
 * a signal names the signal; the rank tracking survives a reload. */
START_TEST(test_exits)
{
	struct job_spec spec;
	struct placement p[2] = { { .node = "node01", .node_rank = 0 },
	    { .node = "node02", .node_rank = 1 } };
	enum job_state st;
	struct ctl f;
	struct cerr err;
	uint64_t id, k;
	unsigned r;

	ctl_setup(&f, NULL);
	/* At once: the early-failure back-off is check_jobs_control's. */
	jobs_set_early_fail_window(f.js, 0);
	ctl_spec(&spec, 2, 2, 0);
	spec.tasks_per_node = 2;
	id = ctl_submit(&f, "alice", &spec, 1000);
	ck_assert_int_eq(jobs_allocate(f.js, id, p, 2, 1000, &err), 0);
	ck_assert_int_eq(jobs_mark_running(f.js, id, 1000, &err), 0);
	ck_assert_int_eq(jobs_task_exit(f.js, id, 1, 0, 0, "", 2000, &st,
	    &err), 0);
	ck_assert_int_eq(st, JOB_RUNNING);
	/* Again (a retry), another attempt's, a rank out of range. */
	ck_assert_int_eq(jobs_task_exit(f.js, id, 1, 0, 0, "", 2001, &st,
	    &err), 0);
	ck_assert_int_eq(jobs_task_exit(f.js, id, 7, 1, 0, "", 2001, &st,
	    &err), 0);
	ck_assert_int_eq(jobs_task_exit(f.js, id, 1, 9, 1 << 8, "", 2001, &st,
	    &err), 0);
	ck_assert_int_eq(st, JOB_RUNNING);
	ck_assert_int_eq(jobs_task_exit(f.js, id, 1, 1, 0, "", 2002, &st,
	    &err), 0);
	/* What a restarted controller knows: ranks 0 and 1 are done. */
	ctl_reload(&f);
	ck_assert_int_eq(jobs_task_exit(f.js, id, 1, 2, 0, "", 2003, &st,
	    &err), 0);
	ck_assert_int_eq(st, JOB_RUNNING);
	ck_assert_int_eq(jobs_task_exit(f.js, id, 1, 3, 0, "", 2004, &st,
	    &err), 0);
	ck_assert_int_eq(st, JOB_COMPLETED);
	ck_assert_int_eq(jobs_get(f.js, id)->exit_code, 0);
	/* After the end: recorded, nothing changes. */
	ck_assert_int_eq(jobs_task_exit(f.js, id, 1, 3, 9, "", 2005, &st,
	    &err), 0);
	ck_assert_int_eq(st, JOB_COMPLETED);
	ctl_flush(&f);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM task_exits"),
	    6);

	/* Killed by a signal; 127 without a why points at the logs. */
	k = ctl_job_on(&f, 1, 1, true, 3000);
	ck_assert_int_eq(jobs_task_exit(f.js, k, 1, 0, SIGKILL, "", 3100, &st,
	    &err), 0);
	ck_assert_int_eq(st, JOB_RESTARTING);
	ck_assert_str_eq(jobs_get(f.js, k)->reason, "rank 0 killed by signal "
	    "9");
	ck_assert_int_eq(jobs_get(f.js, k)->exit_code, 128 + SIGKILL);
	k = ctl_job_on(&f, 1, 1, true, 3000);
	ck_assert_int_eq(jobs_task_exit(f.js, k, 1, 0, 127 << 8, NULL, 3100,
	    &st, &err), 0);
	ck_assert_ptr_nonnull(strstr(jobs_get(f.js, k)->reason, "could not be "
	    "started; see cohort logs"));
	k = ctl_job_on(&f, 1, 1, true, 3000);
	ck_assert_int_eq(jobs_task_start_failed(f.js, k, 1, 0, SIGTERM, "x",
	    3100, &st, &err), 0);
	ck_assert_int_eq(jobs_get(f.js, k)->exit_code, 128 + SIGTERM);
	for (r = 0; r < 2; r++)
		ck_assert_int_eq(jobs_task_start_failed(f.js, k, 1, r, 0, "x",
		    3200, &st, &err), 0);
	ctl_teardown(&f);
}
END_TEST

/* Checkpoints: written once per (step, path), for the current attempt
 * of an active job only, at most one a second; one held back is written
 * by the next report after the second, or before the run fails over. */
START_TEST(test_checkpoints)
{
	enum job_state st;
	const struct job *job;
	struct ctl f;
	struct cerr err;
	uint64_t id, pend;

	ctl_setup(&f, NULL);
	id = ctl_job_on(&f, 1, 1, true, 1000);
	ck_assert_int_eq(jobs_checkpoint(f.js, id, 1, 10, "/c/10", 1500, 1500,
	    &err), 1);
	/* The same again; another attempt's; an unknown job's. */
	ck_assert_int_eq(jobs_checkpoint(f.js, id, 1, 10, "/c/10", 1500, 2600,
	    &err), 0);
	ck_assert_int_eq(jobs_checkpoint(f.js, id, 2, 11, "/c/11", 1500, 2600,
	    &err), 0);
	ck_assert_int_eq(jobs_checkpoint(f.js, 99, 1, 11, "/c/11", 1500, 2600,
	    &err), 0);
	/* Within the second: held back, twice (the newer wins). */
	ck_assert_int_eq(jobs_checkpoint(f.js, id, 1, 11, "/c/11", 1600, 1600,
	    &err), 0);
	ck_assert_int_eq(jobs_checkpoint(f.js, id, 1, 12, "/c/12", 1700, 1700,
	    &err), 0);
	job = jobs_get(f.js, id);
	ck_assert_uint_eq(job->ckpt_step, 10);
	/* A second on: the new report is written. */
	ck_assert_int_eq(jobs_checkpoint(f.js, id, 1, 13, "/c/13", 2500, 2500,
	    &err), 1);
	job = jobs_get(f.js, id);
	ck_assert_uint_eq(job->ckpt_step, 13);
	ck_assert_int_eq(job->ckpt_ms, 2500);
	ck_assert(ctl_logged("checkpoint step=13 path=/c/13"));
	/* Events are every user's to read: the step, not the path. */
	ctl_flush(&f);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM events WHERE "
	    "kind = 'checkpoint' AND detail = 'step=13'"), 1);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM events WHERE "
	    "detail LIKE '%/c/%'"), 0);
	/* A write refused: not recorded, and -1. */
	ctl_fail_writes(&f, "jobs", "UPDATE");
	ck_assert_int_eq(jobs_checkpoint(f.js, id, 1, 14, "/c/14", 4000, 4000,
	    &err), -1);
	ck_assert_uint_eq(jobs_get(f.js, id)->ckpt_step, 13);
	ctl_heal(&f);
	/* Held back, then the same one is written anyway: the flush before
	 * a fail over has nothing left to write. */
	ck_assert_int_eq(jobs_checkpoint(f.js, id, 1, 14, "/c/14", 4000, 4000,
	    &err), 1);
	ck_assert_int_eq(jobs_checkpoint(f.js, id, 1, 15, "/c/15", 4100, 4100,
	    &err), 0);
	ck_assert_int_eq(jobs_checkpoint(f.js, id, 1, 14, "/c/14b", 4200,
	    5100, &err), 1);
	ck_assert_int_eq(jobs_fail_over(f.js, id, "x", true, 6000, 6000, &st,
	    &err), 0);
	ck_assert_str_eq(jobs_get(f.js, id)->ckpt_path, "/c/14b");
	/* Not active: ignored. */
	ck_assert_int_eq(jobs_checkpoint(f.js, id, 1, 20, "/c/20", 7000, 7000,
	    &err), 0);
	ctl_flush(&f);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM events WHERE "
	    "kind = 'checkpoint'"), 4);
	/* A held-back one that equals the current is simply dropped. */
	pend = ctl_job_on(&f, 1, 1, true, 10000);
	ck_assert_int_eq(jobs_checkpoint(f.js, pend, 1, 1, "/p/1", 10000,
	    10000, &err), 1);
	ck_assert_int_eq(jobs_checkpoint(f.js, pend, 1, 1, "/p/1", 10000,
	    10100, &err), 0);
	ck_assert_int_eq(jobs_end(f.js, pend, JOB_CANCELLED, "x", 10200,
	    &err), 0);
	ctl_teardown(&f);
}
END_TEST

/* Progress (memory only) for the current attempt; none before. */
START_TEST(test_progress_and_pending_reason)
{
	struct job_spec spec;
	struct ctl f;
	uint64_t id, pend;

	ctl_setup(&f, NULL);
	id = ctl_job_on(&f, 1, 1, true, 1000);
	ck_assert_int_eq(jobs_last_progress(f.js, id), 0);
	jobs_progress(f.js, id, 1, 5000);
	jobs_progress(f.js, id, 1, 4000);
	jobs_progress(f.js, id, 2, 9000);
	jobs_progress(f.js, 99, 1, 9000);
	ck_assert_int_eq(jobs_last_progress(f.js, id), 5000);
	ck_assert_int_eq(jobs_last_progress(f.js, 99), 0);
	/* A pending job's reason is kept in memory; others' are not. */
	ctl_spec(&spec, 1, 1, 1);
	pend = ctl_submit(&f, "alice", &spec, 1000);
	jobs_set_pending_reason(f.js, pend, "Resources");
	ck_assert_str_eq(jobs_get(f.js, pend)->reason, "Resources");
	jobs_set_pending_reason(f.js, pend, "Resources");
	jobs_set_pending_reason(f.js, id, "Priority");
	jobs_set_pending_reason(f.js, 99, "Priority");
	ck_assert_str_eq(jobs_get(f.js, id)->reason, "");
	ctl_teardown(&f);
}
END_TEST

/* Elastic: RESIZING from RUNNING only; the move that follows is not a
 * failure (not counted) but the work since the last checkpoint is. */
START_TEST(test_resize_bookkeeping)
{
	enum job_state st;
	const struct job *job;
	struct ctl f;
	struct cerr err;
	uint64_t id;

	ctl_setup(&f, NULL);
	id = ctl_job_on(&f, 2, 1, true, 1000);
	ck_assert_int_eq(jobs_begin_resize(f.js, id, "growing from 2 toward 4 "
	    "nodes", 5000, &err), 0);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(job->state, JOB_RESIZING);
	ck_assert(jobs_is_active(job));
	ck_assert(ctl_logged("RESIZING: growing from 2 toward 4 nodes"));
	ck_assert_int_eq(jobs_begin_resize(f.js, id, "again", 5000, &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ck_assert_int_eq(jobs_fail_over(f.js, id, "resize", false, 6000, 6000,
	    &st, &err), 0);
	ck_assert_int_eq(st, JOB_RESTARTING);
	job = jobs_get(f.js, id);
	ck_assert_uint_eq(job->restarts, 0);
	ck_assert_uint_eq(job->lost_work_ms, 5000);
	ck_assert_uint_eq(job->nprev, 2);
	ctl_teardown(&f);
}
END_TEST

/* Listing and paging: the filter (ended jobs, a user, a state), id
 * order, the page bound, the scan bound and the cursor. */
START_TEST(test_list_and_page)
{
	struct jobs_filter live = { .all = false }, all = { .all = true };
	struct jobs_filter bobs = { .all = true, .user = "bob" };
	struct jobs_filter running = { .has_state = true,
	    .state = JOB_RUNNING };
	const struct job **v, *page[4];
	struct job_spec spec;
	struct ctl f;
	struct cerr err;
	uint64_t next;
	size_t n, i;
	bool more;

	ctl_setup(&f, NULL);
	/* 1..10: bob has the even ones; 3 ended; 5 runs. */
	for (i = 1; i <= 10; i++) {
		ctl_spec(&spec, 1, 1, 1);
		ctl_submit(&f, i % 2 ? "alice" : "bob", &spec, 1000);
	}
	ck_assert_int_eq(jobs_end(f.js, 3, JOB_CANCELLED, "x", 2000, &err), 0);
	ck_assert_int_eq(jobs_allocate(f.js, 5, &(struct placement){
	    .node = "node01" }, 1, 2000, &err), 0);
	ck_assert_int_eq(jobs_mark_running(f.js, 5, 2000, &err), 0);
	ck_assert_uint_eq(jobs_count(f.js), 10);
	ck_assert_int_eq(jobs_list(f.js, &live, &v, &n), 0);
	ck_assert_uint_eq(n, 9);
	for (i = 1; i < n; i++)
		ck_assert_uint_lt(v[i - 1]->id, v[i]->id);
	free(v);
	ck_assert_int_eq(jobs_list(f.js, &all, &v, &n), 0);
	ck_assert_uint_eq(n, 10);
	free(v);
	ck_assert_int_eq(jobs_list(f.js, &bobs, &v, &n), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(v[0]->id, 2);
	free(v);
	ck_assert_int_eq(jobs_list(f.js, &running, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(v[0]->id, 5);
	free(v);
	/* A state filter shows ended jobs of that state. */
	running.state = JOB_CANCELLED;
	ck_assert_int_eq(jobs_list(f.js, &running, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(v[0]->id, 3);
	free(v);

	/* Pages of 4 of the live jobs: 1 2 4 5 | 6 7 8 9 | 10. */
	n = jobs_page(f.js, &live, 0, page, 4, 0, &more, &next);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(page[2]->id, 4);
	ck_assert(more);
	ck_assert_uint_eq(next, 5);
	n = jobs_page(f.js, &live, next, page, 4, 0, &more, &next);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(page[0]->id, 6);
	ck_assert(more);
	ck_assert_uint_eq(next, 9);
	n = jobs_page(f.js, &live, next, page, 4, 0, &more, &next);
	ck_assert_uint_eq(n, 1);
	ck_assert(!more);
	ck_assert_uint_eq(next, 10);
	/* Bob's, examining at most 3 jobs a page: the cursor goes on
	 * after the last examined even when the page is empty. */
	n = jobs_page(f.js, &bobs, 0, page, 4, 3, &more, &next);
	ck_assert_uint_eq(n, 1);
	ck_assert(more);
	ck_assert_uint_eq(next, 3);
	bobs.user = "nobody";
	n = jobs_page(f.js, &bobs, 0, page, 4, 3, &more, &next);
	ck_assert_uint_eq(n, 0);
	ck_assert(more);
	ck_assert_uint_eq(next, 3);
	n = jobs_page(f.js, &bobs, 9, page, 4, 3, &more, &next);
	ck_assert_uint_eq(n, 0);
	ck_assert(!more);
	ck_assert_uint_eq(next, 9);
	/* Past the end. */
	n = jobs_page(f.js, &all, 10, page, 4, 0, &more, &next);
	ck_assert_uint_eq(n, 0);
	ck_assert(!more);
	ctl_teardown(&f);
}
END_TEST

/* A checkpoint held back when the controller stops (or reloads) is
 * freed with its run: make check-valgrind fails this test on a leak. */
START_TEST(test_checkpoint_held_back_at_destroy)
{
	struct ctl f;
	struct cerr err;
	uint64_t id;
	uint32_t attempt;

	ctl_setup(&f, NULL);
	id = submit_allocated(&f, 5000);
	ck_assert_int_eq(jobs_mark_running(f.js, id, 5001, &err), 0);
	attempt = jobs_get(f.js, id)->attempt;
	ck_assert_int_eq(jobs_checkpoint(f.js, id, attempt, 10, "/ck/10",
	    6000, 6000, &err), 1);
	ck_assert_int_eq(jobs_checkpoint(f.js, id, attempt, 20, "/ck/20",
	    6300, 6300, &err), 0);
	ck_assert_uint_eq(jobs_get(f.js, id)->ckpt_step, 10);
	txq_flush(f.q);
	/* A reload drops the runs (and the one held back)... */
	ck_assert_int_eq(jobs_reload(f.js, &err), 0);
	ck_assert_int_eq(jobs_checkpoint(f.js, id, attempt, 30, "/ck/30",
	    6400, 6400, &err), 1);
	/* ...and so does the end, with another held back. */
	ck_assert_int_eq(jobs_checkpoint(f.js, id, attempt, 40, "/ck/40",
	    6500, 6500, &err), 0);
	txq_flush(f.q);
	ctl_teardown(&f);
}
END_TEST

/* team-a: alice, admin bob, at most 4 GPUs a job; team-b: bob. */
static struct queues *
two_queues(void)
{
	struct queue_def d[2];
	char *a_users[] = { "alice" }, *a_admins[] = { "bob" };
	char *b_users[] = { "bob" };
	struct queues *qs;
	struct cerr err;

	ctl_queue_def(&d[0], "team-a", 4, a_users, 1, a_admins, 1);
	d[0].max_gpus_per_job = 4;
	ctl_queue_def(&d[1], "team-b", 4, b_users, 1, NULL, 0);
	qs = queues_create(d, 2, 3600000, &err);	/* copies d */
	ck_assert_msg(qs != NULL, "%s", err.text);
	return qs;
}

/* Submits go through queues_admit before anything is written; a queue's
 * admins may cancel its jobs and raise priorities in it. */
START_TEST(test_submit_queues)
{
	struct peer alice = { "alice", ROLE_USER }, bob = { "bob", ROLE_USER };
	struct job_limits lim = { .script_max = 1024 * 1024 };
	struct queues *qs = two_queues();
	struct job_spec s;
	enum job_state st;
	struct cerr err;
	uint64_t a1, b1, id;
	struct ctl c;

	ctl_setup(&c, NULL);
	jobs_destroy(c.js);
	c.js = jobs_create(c.st, c.q, &lim, qs, &err);
	ck_assert_msg(c.js != NULL, "%s", err.text);

	/* Refusals store nothing, and no event. */
	ctl_spec(&s, 1, 1, 1);
	s.queue = strdup("team-b");
	ck_assert_int_eq(jobs_submit(c.js, &alice, &s, 10, &id, &err), -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	ck_assert_str_eq(err.text, "--queue: alice may not submit to queue "
	    "team-b (not among its users)");
	ctl_spec(&s, 2, 2, 4);
	ck_assert_int_eq(jobs_submit(c.js, &alice, &s, 10, &id, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ctl_spec(&s, 1, 1, 1);
	s.priority = 500;
	ck_assert_int_eq(jobs_submit(c.js, &alice, &s, 10, &id, &err), -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	ctl_flush(&c);
	ck_assert_int_eq(ctl_sql_int(&c, "SELECT count(*) FROM jobs"), 0);
	ck_assert_int_eq(ctl_sql_int(&c, "SELECT count(*) FROM events"), 0);
	ck_assert_uint_eq(jobs_count(c.js), 0);

	/* The default queue is stored with the job, and kept on reload. */
	ctl_spec(&s, 1, 1, 2);
	ck_assert_int_eq(jobs_submit(c.js, &alice, &s, 10, &a1, &err), 0);
	ctl_spec(&s, 1, 1, 2);
	s.priority = 500;	/* bob administers team-a */
	s.queue = strdup("team-a");
	ck_assert_int_eq(jobs_submit(c.js, &bob, &s, 11, &id, &err), 0);
	ctl_spec(&s, 1, 1, 1);
	s.queue = strdup("team-b");
	ck_assert_int_eq(jobs_submit(c.js, &bob, &s, 12, &b1, &err), 0);
	ctl_flush(&c);
	ctl_reload(&c);
	ck_assert_str_eq(jobs_get(c.js, a1)->spec.queue, "team-a");
	ck_assert_int_eq(jobs_get(c.js, id)->spec.priority, 500);
	ck_assert_str_eq(jobs_get(c.js, b1)->spec.queue, "team-b");

	/* Cancel: bob, team-a's admin, cancels alice's job; alice may not
	 * cancel bob's in team-b. */
	ck_assert_int_eq(jobs_cancel(c.js, &alice, b1, 20, &st, &err), -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	ck_assert_int_eq(jobs_get(c.js, b1)->state, JOB_PENDING);
	ck_assert_int_eq(jobs_cancel(c.js, &bob, a1, 20, &st, &err), 0);
	ck_assert_int_eq(st, JOB_CANCELLED);
	ctl_flush(&c);
	ctl_teardown(&c);
	queues_destroy(qs);
}
END_TEST

static Suite *
jobs_suite(void)
{
	Suite *s = suite_create("jobs");
	TCase *tc = tcase_create("start_failures");

	tcase_add_test(tc, test_backoff_arithmetic);
	tcase_add_test(tc, test_failure_class);
	tcase_add_test(tc, test_transient_backs_off);
	tcase_add_test(tc, test_retry_does_not_back_off);
	tcase_add_test(tc, test_permanent_fails);
	tcase_add_test(tc, test_task_cannot_start);
	tcase_add_test(tc, test_task_exit_restarts);
	tcase_add_test(tc, test_checkpoint_held_back_then_failed_over);
	tcase_add_test(tc, test_checkpoint_held_back_at_destroy);
	suite_add_tcase(s, tc);

	tc = tcase_create("refused_writes");
	tcase_add_test(tc, test_fail_over_write_fails);
	tcase_add_test(tc, test_fail_over_give_up_write_fails);
	tcase_add_test(tc, test_allocate_without_memory_changes_nothing);
	tcase_add_test(tc, test_mark_running_write_fails);
	tcase_add_test(tc, test_last_exit_write_fails);
	tcase_add_test(tc, test_failed_exit_write_fails);
	tcase_add_test(tc, test_task_start_failed_write_fails);
	tcase_add_test(tc, test_submit_table_full_writes_no_row);
	tcase_add_test(tc, test_end_resize_start_failed_write_fails);
	tcase_add_test(tc, test_fail_over_each_allocation_fails);
	tcase_add_test(tc, test_active_and_list_tell_enomem);
	suite_add_tcase(s, tc);

	tc = tcase_create("lifecycle");
	tcase_add_test(tc, test_submit_validates_and_records);
	tcase_add_test(tc, test_submit_limits);
	tcase_add_test(tc, test_submit_idempotency_key);
	tcase_add_test(tc, test_keys_map);
	tcase_add_test(tc, test_keys_map_chosen_collisions);
	tcase_add_test(tc, test_submit_idempotency_fingerprint);
	tcase_add_test(tc, test_cancel);
	tcase_add_test(tc, test_transitions_refused);
	tcase_add_test(tc, test_attempts_restarts_lost_work);
	tcase_add_test(tc, test_exits);
	tcase_add_test(tc, test_checkpoints);
	tcase_add_test(tc, test_progress_and_pending_reason);
	tcase_add_test(tc, test_resize_bookkeeping);
	tcase_add_test(tc, test_list_and_page);
	tcase_add_test(tc, test_submit_queues);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(jobs_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
