/* The start-failure path of daemon/controller/jobs.c: which refusals end
 * a job, the back-off of the others (1 s doubling to 5 min, reset once
 * the job runs), and a task that can never start failing its job at
 * once. Against a real store in a temporary directory. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "daemon/controller/jobs.h"
#include "daemon/controller/store.h"
#include "daemon/controller/txq.h"

struct fixture {
	char dir[64];
	char path[128];
	struct event_base *base;
	struct store *st;
	struct txq *q;
	struct jobs *js;
};

static void
on_abort(void *arg)
{
}

static void
setup(struct fixture *f)
{
	struct job_limits lim = { .script_max = 1024 * 1024 };
	struct cerr err;

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/check_jobs.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/t.db", f->dir);
	f->base = event_base_new();
	f->st = store_open(f->path, &err);
	ck_assert_msg(f->st != NULL, "store_open: %s", err.text);
	ck_assert_ptr_nonnull(f->q = txq_create(f->base, f->st, on_abort, f));
	f->js = jobs_create(f->st, f->q, &lim, &err);
	ck_assert_msg(f->js != NULL, "jobs_create: %s", err.text);
}

static void
teardown(struct fixture *f)
{
	char cmd[200];

	jobs_destroy(f->js);
	txq_destroy(f->q);
	store_close(f->st);
	event_base_free(f->base);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* A pending one-node job of alice's, allocated on node01. */
static uint64_t
submit_allocated(struct fixture *f, int64_t now)
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
	struct fixture f;
	struct cerr err;
	int64_t now = 1000000, want = 1000;
	uint64_t id;
	int i;

	setup(&f);
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
	teardown(&f);
}
END_TEST

START_TEST(test_retry_does_not_back_off)
{
	const struct job *job;
	struct fixture f;
	struct cerr err;
	uint64_t id;

	setup(&f);
	id = submit_allocated(&f, 5000);
	ck_assert_int_eq(jobs_start_failed(f.js, id, START_RETRY,
	    "the controller restarted while it was launching", 5000, &err), 0);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(job->state, JOB_PENDING);
	ck_assert(!jobs_backing_off(job, 5000));
	ck_assert_str_eq(job->reason, "the controller restarted while it was "
	    "launching");
	teardown(&f);
}
END_TEST

START_TEST(test_permanent_fails)
{
	const struct job *job;
	struct fixture f;
	struct cerr err;
	uint64_t id;

	setup(&f);
	id = submit_allocated(&f, 5000);
	ck_assert_int_eq(jobs_start_failed(f.js, id, START_PERMANENT,
	    "rank 0 on node01: refusing to run tasks as 'daemon' (uid 1)",
	    5000, &err), 0);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(job->state, JOB_FAILED);
	ck_assert_str_eq(job->reason, "rank 0 on node01: refusing to run "
	    "tasks as 'daemon' (uid 1)");
	ck_assert_uint_eq(job->restarts, 0);
	teardown(&f);
}
END_TEST

/* A task that could not start, permanently: FAILED with why, no
 * restart used, although max_restarts would allow three. */
START_TEST(test_task_cannot_start)
{
	enum job_state st;
	const struct job *job;
	struct fixture f;
	struct cerr err;
	uint64_t id;

	setup(&f);
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
	teardown(&f);
}
END_TEST

/* The same exit without "permanent" restarts, as before. */
START_TEST(test_task_exit_restarts)
{
	enum job_state st;
	const struct job *job;
	struct fixture f;
	struct cerr err;
	uint64_t id;

	setup(&f);
	id = submit_allocated(&f, 5000);
	ck_assert_int_eq(jobs_mark_running(f.js, id, 5001, &err), 0);
	job = jobs_get(f.js, id);
	ck_assert_int_eq(jobs_task_exit(f.js, id, job->attempt, 0, 127 << 8,
	    "cannot run 'x': Text file busy", 5002, &st, &err), 0);
	ck_assert_int_eq(st, JOB_RESTARTING);
	ck_assert_uint_eq(jobs_get(f.js, id)->restarts, 1);
	txq_flush(f.q);
	teardown(&f);
}
END_TEST

/* Checkpoints come faster than they are written (one a second at most);
 * one held back is still what the restart resumes from. */
START_TEST(test_checkpoint_held_back_then_failed_over)
{
	enum job_state st;
	const struct job *job;
	struct fixture f;
	struct cerr err;
	uint64_t id;
	uint32_t attempt;

	setup(&f);
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
	teardown(&f);
}
END_TEST

/* A checkpoint held back when the controller stops (or reloads) is
 * freed with its run: make check-valgrind fails this test on a leak. */
START_TEST(test_checkpoint_held_back_at_destroy)
{
	struct fixture f;
	struct cerr err;
	uint64_t id;
	uint32_t attempt;

	setup(&f);
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
	teardown(&f);
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
