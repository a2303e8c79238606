/* daemon/controller/domain/jobs_array.c and jobs_depend.c against an in-memory
 * store (ctl_fixture.h): an array's submit records every task or none
 * (a row refused half-way leaves nothing, in memory or on disk), with
 * consecutive ids from the array's; per-user limits count each task;
 * cancelling the array is one write for all its unfinished tasks;
 * listing by array; and a dependency's jobs must exist and be the
 * submitter's. In the controller domain (tests/domain), in virtual
 * time: a bad spec leaves nothing, %N on more free GPUs than N runs the
 * array to its end never more than N at once, and a task cancelled
 * leaves the rest waiting until the array is cancelled, by its owner
 * only. */
#include "config.h"

#include <check.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/ctl_fixture.h"
#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/store/store_int.h"
#include "daemon/controller/store/txq.h"
#include "lib/depend.h"
#include "tests/domain/domain.h"

static const struct peer alice = { .name = "alice", .role = ROLE_USER };
static const struct peer bob = { .name = "bob", .role = ROLE_USER };
static const struct peer ops = { .name = "ops", .role = ROLE_ADMIN };

static int
submit_array(struct ctl *f, const struct peer *who, const char *array,
    const char *dep, uint64_t *id, struct cerr *err)
{
	struct job_spec spec;

	ctl_spec(&spec, 1, 1, 1);
	if (array != NULL)
		spec.array = strdup(array);
	if (dep != NULL)
		spec.dependency = strdup(dep);
	cerr_clear(err);
	return jobs_submit(f->js, who, &spec, 1000, id, err);
}

START_TEST(test_array_submit)
{
	struct job *const *t;
	struct ctl f;
	struct cerr err;
	uint64_t id, one;
	size_t n, i;

	ctl_setup(&f, NULL);
	ck_assert_int_eq(submit_array(&f, &alice, NULL, NULL, &one, &err), 0);
	ck_assert_msg(submit_array(&f, &alice, "1,3,5-9%2", NULL, &id,
	    &err) == 0, "%s", err.text);
	ck_assert_uint_eq(id, one + 1);
	ck_assert_uint_eq(jobs_count(f.js), 8);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 8);
	ck_assert(ctl_logged("array of 7 tasks"));
	txq_flush(f.q);
	ctl_reload(&f);
	n = jobs_array_tasks(f.js, id, &t);
	ck_assert_uint_eq(n, 7);
	for (i = 0; i < n; i++) {
		ck_assert_uint_eq(t[i]->id, id + i);
		ck_assert_uint_eq(t[i]->array_id, id);
		ck_assert_uint_eq(t[i]->array_max, 2);
		ck_assert_str_eq(t[i]->spec.array, "1,3,5-9%2");
		ck_assert_int_eq(t[i]->state, JOB_PENDING);
	}
	ck_assert_uint_eq(t[0]->array_task, 1);
	ck_assert_uint_eq(t[1]->array_task, 3);
	ck_assert_uint_eq(t[6]->array_task, 9);
	ck_assert_ptr_eq(jobs_array_task(f.js, id, 5), t[2]);
	ck_assert_ptr_null(jobs_array_task(f.js, id, 4));
	/* Neither a plain job nor a task's own id is an array's id. */
	ck_assert_uint_eq(jobs_array_tasks(f.js, one, &t), 0);
	ck_assert_uint_eq(jobs_array_tasks(f.js, id + 1, &t), 0);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM events WHERE "
	    "kind = 'submit' AND detail LIKE '% array=2_%'"), 7);
	/* 100,000 copies of an 8 KiB script: refused, not stored. */
	{
		struct job_spec big;

		ctl_spec(&big, 1, 1, 1);
		big.array = strdup("0-99999");
		big.script_len = 8192;
		big.script = malloc(big.script_len + 1);
		memset(big.script, '#', big.script_len);
		big.script[big.script_len] = '\0';
		memcpy(big.script, "#!/bin/sh\n", 10);
		ck_assert_int_eq(jobs_submit(f.js, &alice, &big, 1000, &one,
		    &err), -1);
		ck_assert_int_eq(err.code, ERR_INVALID);
		ck_assert_msg(strstr(err.text, "more than 256 MiB") != NULL,
		    "%s", err.text);
		ck_assert_uint_eq(jobs_count(f.js), 8);
	}
	/* The next submit follows the array's last id. */
	ck_assert_int_eq(submit_array(&f, &alice, NULL, NULL, &one, &err), 0);
	ck_assert_uint_eq(one, id + 7);
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_array_all_or_none)
{
	struct ctl f;
	struct cerr err;
	uint64_t id;

	ctl_setup(&f, NULL);
	/* The fifth task's row is refused: none of the array stays. */
	ck_assert_int_eq(sqlite3_exec(f.st->db, "CREATE TEMP TRIGGER half "
	    "BEFORE INSERT ON main.jobs WHEN NEW.id = 5 BEGIN SELECT "
	    "RAISE(ABORT, 'injected'); END", NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(submit_array(&f, &alice, "0-9", NULL, &id, &err), -1);
	ck_assert_uint_eq(jobs_count(f.js), 0);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 0);
	txq_flush(f.q);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM jobs"), 0);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM events"), 0);
	ck_assert_int_eq(sqlite3_exec(f.st->db, "DROP TRIGGER temp.half",
	    NULL, NULL, NULL), SQLITE_OK);
	/* Out of memory for a task: nothing either. */
	ctl_fail_calloc(3);
	ck_assert_int_eq(submit_array(&f, &alice, "0-9", NULL, &id, &err), -1);
	ck_assert_int_eq(err.code, ERR_INTERNAL);
	ck_assert_uint_eq(jobs_count(f.js), 0);
	ctl_fail_calloc(0);
	ck_assert_int_eq(submit_array(&f, &alice, "0-9", NULL, &id, &err), 0);
	ck_assert_uint_eq(id, 1);
	ck_assert_uint_eq(jobs_count(f.js), 10);
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_array_limits)
{
	struct job_limits lim = { .script_max = 1024,
	    .max_pending_per_user = 10 };
	struct ctl f;
	struct cerr err;
	uint64_t id;

	ctl_setup(&f, &lim);
	ck_assert_int_eq(submit_array(&f, &alice, "0-5", NULL, &id, &err), 0);
	/* 6 + 5 > 10: the whole array is refused. */
	ck_assert_int_eq(submit_array(&f, &alice, "0-4", NULL, &id, &err), -1);
	ck_assert_int_eq(err.code, ERR_LIMIT);
	ck_assert_msg(strstr(err.text, "an array of 5 tasks would make 11") !=
	    NULL, "%s", err.text);
	ck_assert_uint_eq(jobs_count(f.js), 6);
	ck_assert_int_eq(submit_array(&f, &alice, "0-3", NULL, &id, &err), 0);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 10);
	/* Bad specs never reach the table. */
	ck_assert_int_eq(submit_array(&f, &bob, "3-1", NULL, &id, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_msg(strstr(err.text, "--array") != NULL, "%s", err.text);
	ck_assert_uint_eq(jobs_count(f.js), 10);
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_array_cancel)
{
	struct job *const *t;
	struct jobs_filter lf = { .all = true };
	const struct job *page[16];
	struct ctl f;
	struct cerr err;
	uint64_t id, other, next;
	size_t n, i;
	bool more;

	ctl_setup(&f, NULL);
	ck_assert_int_eq(submit_array(&f, &alice, "0-4", NULL, &id, &err), 0);
	ck_assert_int_eq(submit_array(&f, &alice, NULL, NULL, &other, &err),
	    0);
	ck_assert_int_eq(jobs_end(f.js, id + 1, JOB_FAILED, "x", 1001, &err),
	    0);
	ck_assert_int_eq(jobs_array_cancel(f.js, &bob, id, 1002, &n, &err),
	    -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	ck_assert_int_eq(jobs_array_cancel(f.js, &alice, id + 2, 1002, &n,
	    &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_int_eq(jobs_array_cancel(f.js, &alice, 99, 1002, &n, &err),
	    -1);
	ck_assert_int_eq(err.code, ERR_NOT_FOUND);
	/* A write refused: no task changes. */
	ctl_fail_writes(&f, "events", "INSERT");
	ck_assert_int_eq(jobs_array_cancel(f.js, &alice, id, 1003, &n, &err),
	    -1);
	ctl_heal(&f);
	jobs_array_tasks(f.js, id, &t);
	ck_assert_int_eq(t[0]->state, JOB_PENDING);
	ck_assert_int_eq(t[4]->state, JOB_PENDING);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 5);
	ck_assert_int_eq(jobs_array_cancel(f.js, &ops, id, 1004, &n, &err), 0);
	ck_assert_uint_eq(n, 4);
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(t[i]->state, i == 1 ? JOB_FAILED :
		    JOB_CANCELLED);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 1);
	ck_assert_int_eq(jobs_array_cancel(f.js, &alice, id, 1005, &n, &err),
	    -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	txq_flush(f.q);
	ctl_reload(&f);
	ck_assert_int_eq(jobs_get(f.js, id + 4)->state, JOB_CANCELLED);
	ck_assert_int_eq(jobs_get(f.js, other)->state, JOB_PENDING);
	/* Listing by array: its tasks only, in pages. */
	lf.array_id = id;
	n = jobs_page(f.js, &lf, 0, page, 3, 0, &more, &next);
	ck_assert_uint_eq(n, 3);
	ck_assert(more);
	ck_assert_uint_eq(page[0]->id, id);
	n = jobs_page(f.js, &lf, next, page, 16, 0, &more, &next);
	ck_assert_uint_eq(n, 2);
	ck_assert(!more);
	ck_assert_uint_eq(page[1]->id, id + 4);
	lf.array_id = other;
	ck_assert_uint_eq(jobs_page(f.js, &lf, 0, page, 16, 0, &more, &next),
	    0);
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_depend_submit)
{
	struct depend_status st;
	struct ctl f;
	struct cerr err;
	uint64_t a, arr, id;

	ctl_setup(&f, NULL);
	ck_assert_int_eq(submit_array(&f, &alice, NULL, NULL, &a, &err), 0);
	ck_assert_int_eq(submit_array(&f, &alice, "0-2", NULL, &arr, &err), 0);
	ck_assert_int_eq(submit_array(&f, &alice, NULL, "afterok:99", &id,
	    &err), -1);
	ck_assert_int_eq(err.code, ERR_NOT_FOUND);
	ck_assert_str_eq(err.text, "--dependency afterok:99: no job 99");
	ck_assert_int_eq(submit_array(&f, &bob, NULL, "afterany:1", &id,
	    &err), -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	ck_assert_int_eq(submit_array(&f, &alice, NULL, "afterok:1_0", &id,
	    &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_int_eq(submit_array(&f, &alice, "0-1", "aftercorr:1", &id,
	    &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_int_eq(submit_array(&f, &alice, NULL, "afterok:2_7", &id,
	    &err), -1);
	ck_assert_int_eq(err.code, ERR_NOT_FOUND);
	ck_assert_uint_eq(jobs_count(f.js), 4);
	ck_assert_int_eq(submit_array(&f, &alice, NULL, "afterok:1:2_2", &id,
	    &err), 0);
	ck_assert_int_eq(submit_array(&f, &ops, "0-2", "aftercorr:2", &id,
	    &err), 0);
	/* Stored with the job: a restarted controller still waits. */
	txq_flush(f.q);
	ctl_reload(&f);
	ck_assert_str_eq(jobs_get(f.js, id + 2)->spec.dependency,
	    "aftercorr:2");
	ck_assert_str_eq(jobs_get(f.js, id - 1)->spec.dependency,
	    "afterok:1:2_2");
	/* What the gate is told. */
	ck_assert_int_eq(jobs_end(f.js, arr + 1, JOB_COMPLETED, "", 1001,
	    &err), 0);
	ck_assert_int_eq(jobs_depend_lookup(f.js, arr, false, 0, &st), 0);
	ck_assert_uint_eq(st.n, 3);
	ck_assert_uint_eq(st.ended, 1);
	ck_assert_uint_eq(st.ok, 1);
	ck_assert_int_eq(jobs_depend_lookup(f.js, arr, true, 1, &st), 0);
	ck_assert_uint_eq(st.n, 1);
	ck_assert_uint_eq(st.ok, 1);
	ck_assert_int_eq(jobs_depend_lookup(f.js, arr + 1, false, 0, &st), 0);
	ck_assert_uint_eq(st.n, 1);
	ck_assert_int_eq(jobs_depend_lookup(f.js, 99, false, 0, &st), -1);
	/* Never: cancelled with the reason, and an event saying why. */
	ck_assert_int_eq(jobs_depend_never(f.js, a, "afterok:7", 1002, &err),
	    0);
	ck_assert_int_eq(jobs_get(f.js, a)->state, JOB_CANCELLED);
	ck_assert_str_eq(jobs_get(f.js, a)->reason, JOBS_DEPEND_NEVER);
	txq_flush(f.q);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM events WHERE "
	    "kind = 'dependency' AND detail = 'DependencyNeverSatisfied: "
	    "afterok:7 can never hold'"), 1);
	ctl_teardown(&f);
}
END_TEST


/* What the controller refuses at submit: nothing of the array is kept,
 * and the message names --array. */
START_TEST(test_array_bad_specs)
{
	const char *bad[] = { "5-1", "1,1", "0-9:0", "x", "0-100000",
	    "0-3%0" };
	struct ctl f;
	struct cerr err;
	uint64_t id;
	size_t i;

	ctl_setup(&f, NULL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(submit_array(&f, &alice, bad[i], NULL, &id,
		    &err) == -1, "--array %s taken", bad[i]);
		ck_assert_int_eq(err.code, ERR_INVALID);
		ck_assert_msg(strstr(err.text, "--array") != NULL, "%s: %s",
		    bad[i], err.text);
	}
	ck_assert_uint_eq(jobs_count(f.js), 0);
	txq_flush(f.q);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM jobs"), 0);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM events"), 0);
	ctl_teardown(&f);
}
END_TEST

struct array_opt {
	const char *array;
	const char *dep;		/* NULL: none */
};

static void
array_spec(struct job_spec *spec, void *arg)
{
	const struct array_opt *o = arg;

	spec->array = strdup(o->array);
	if (o->dep != NULL)
		spec->dependency = strdup(o->dep);
	spec->max_restarts = 0;
}

/* 0-5%2 on four free GPUs, each round of tasks ending a second after
 * it started: two at a time to the end, the rest JobArrayTaskLimit,
 * every task COMPLETED with its index, and no three tasks' runs
 * overlapping. */
START_TEST(test_array_throttle_to_the_end)
{
	struct domain d;
	struct cerr err;
	const struct job *t[6];
	uint64_t a;
	struct array_opt o = { "0-5%2", NULL };
	unsigned i, k, running, rounds = 0;

	ck_assert_msg(domain_open(&d, NULL, &err) == 0, "%s", err.text);
	ck_assert_int_eq(domain_add_nodes(&d, 4, 1, &err), 0);
	a = domain_submit(&d, "alice", 1, 1, array_spec, &o, &err);
	ck_assert_msg(a != 0, "%s", err.text);
	for (;;) {
		domain_pass(&d);
		domain_answer_launches(&d, NULL);
		running = 0;
		for (i = 0; i < 6; i++) {
			t[i] = domain_job(&d, a + i);
			if (t[i]->state == JOB_RUNNING)
				running++;
			else if (t[i]->state == JOB_PENDING)
				ck_assert_str_eq(t[i]->reason,
				    "JobArrayTaskLimit");
		}
		if (running == 0)
			break;
		/* Two GPUs stay free; the limit holds it to two. */
		ck_assert_uint_eq(running, 2);
		rounds++;
		domain_advance(&d, 1000);
		for (i = 0; i < 6; i++)
			if (t[i]->state == JOB_RUNNING)
				ck_assert_msg(domain_exit(&d,
				    domain_rank_node(t[i], 0), t[i]->id,
				    t[i]->attempt, 0, 0, &err) == 0, "%s",
				    err.text);
	}
	ck_assert_uint_eq(rounds, 3);
	for (i = 0; i < 6; i++) {
		ck_assert_int_eq(t[i]->state, JOB_COMPLETED);
		ck_assert_uint_eq(t[i]->array_id, a);
		ck_assert_uint_eq(t[i]->array_task, i);
		running = 0;
		for (k = 0; k < 6; k++)
			if (t[k]->start_ms <= t[i]->start_ms &&
			    t[i]->start_ms < t[k]->end_ms)
				running++;
		ck_assert_uint_le(running, 2);
	}
	domain_close(&d);
}
END_TEST

/* An array waiting on a dependency: one task cancelled by its owner
 * leaves the others PENDING; another user may cancel none; the array
 * cancelled ends the rest, and once nothing is left a second cancel is
 * refused. */
START_TEST(test_array_cancel_task_then_rest)
{
	struct domain d;
	struct cerr err;
	enum job_state st;
	uint64_t blk, b;
	size_t n;
	unsigned i;
	char dep[64];
	struct array_opt o = { "0-9", NULL };

	ck_assert_msg(domain_open(&d, NULL, &err) == 0, "%s", err.text);
	ck_assert_int_eq(domain_add_nodes(&d, 4, 1, &err), 0);
	blk = domain_submit(&d, "alice", 1, 1, NULL, NULL, &err);
	ck_assert_msg(blk != 0, "%s", err.text);
	domain_pass(&d);
	domain_answer_launches(&d, NULL);
	ck_assert_int_eq(domain_job(&d, blk)->state, JOB_RUNNING);
	snprintf(dep, sizeof(dep), "afterok:%" PRIu64, blk);
	o.dep = dep;
	b = domain_submit(&d, "alice", 1, 1, array_spec, &o, &err);
	ck_assert_msg(b != 0, "%s", err.text);
	domain_pass(&d);
	for (i = 0; i < 10; i++) {
		ck_assert_int_eq(domain_job(&d, b + i)->state, JOB_PENDING);
		ck_assert_str_eq(domain_job(&d, b + i)->reason, "Dependency");
	}
	ck_assert_int_eq(cluster_cancel(d.cl, &alice, b + 3, d.now, &st,
	    &err), 0);
	domain_commit(&d);
	ck_assert_int_eq(domain_job(&d, b + 3)->state, JOB_CANCELLED);
	domain_pass(&d);
	for (i = 0; i < 10; i++)
		if (i != 3) {
			ck_assert_int_eq(domain_job(&d, b + i)->state,
			    JOB_PENDING);
			ck_assert_str_eq(domain_job(&d, b + i)->reason,
			    "Dependency");
		}
	/* Not bob's: refused, task by task and whole. */
	ck_assert_int_eq(cluster_cancel(d.cl, &bob, b, d.now, &st, &err), -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	ck_assert_msg(strstr(err.text, "belongs to alice") != NULL, "%s",
	    err.text);
	ck_assert_int_eq(cluster_cancel_array(d.cl, &bob, b, d.now, &n, &err),
	    -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	domain_commit(&d);
	ck_assert_int_eq(domain_job(&d, b)->state, JOB_PENDING);
	ck_assert_int_eq(cluster_cancel_array(d.cl, &alice, b, d.now,
	    &n, &err), 0);
	domain_commit(&d);
	ck_assert_uint_eq(n, 9);
	for (i = 0; i < 10; i++)
		ck_assert_int_eq(domain_job(&d, b + i)->state, JOB_CANCELLED);
	ck_assert_int_eq(cluster_cancel_array(d.cl, &alice, b, d.now,
	    &n, &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	/* The blocker runs on, untouched. */
	ck_assert_int_eq(domain_job(&d, blk)->state, JOB_RUNNING);
	domain_close(&d);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("jobs_array");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_array_submit);
	tcase_add_test(tc, test_array_all_or_none);
	tcase_add_test(tc, test_array_limits);
	tcase_add_test(tc, test_array_cancel);
	tcase_add_test(tc, test_depend_submit);
	tcase_add_test(tc, test_array_bad_specs);
	tcase_add_test(tc, test_array_throttle_to_the_end);
	tcase_add_test(tc, test_array_cancel_task_then_rest);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
