/* daemon/controller/domain/reports.c and lib/ratelim.c: which agent reports
 * count (only the node holding the rank in the current attempt; rank 0's
 * node for checkpoints), the bound on list lengths, and the log budget. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/reports.h"
#include "lib/job.h"
#include "lib/inventory.h"
#include "lib/log.h"
#include "lib/ratelim.h"

/* Running job 7, attempt 3, on a (node_rank 0) and b (node_rank 1), two
 * tasks per node. */
static struct job *
running_job(void)
{
	struct placement p[2];
	struct job *j = job_new();

	ck_assert_ptr_nonnull(j);
	memset(p, 0, sizeof(p));
	snprintf(p[0].node, sizeof(p[0].node), "b");
	p[0].node_rank = 1;
	snprintf(p[1].node, sizeof(p[1].node), "a");
	p[1].node_rank = 0;
	ck_assert_int_eq(job_set_placement(j, p, 2), 0);
	j->id = 7;
	j->attempt = 3;
	j->state = JOB_RUNNING;
	j->spec.tasks_per_node = 2;
	return j;
}

START_TEST(test_judge_tasks)
{
	struct job *j = running_job();
	enum report_kind k;

	for (k = REPORT_TASK_EXIT; k <= REPORT_TASK_RUNNING; k++) {
		ck_assert_int_eq(reports_judge(j, "a", k, 3, 0), REPORT_ACCEPT);
		ck_assert_int_eq(reports_judge(j, "a", k, 3, 1), REPORT_ACCEPT);
		ck_assert_int_eq(reports_judge(j, "b", k, 3, 2), REPORT_ACCEPT);
		ck_assert_int_eq(reports_judge(j, "b", k, 3, 3), REPORT_ACCEPT);
		/* Another node's rank, a rank out of range, a stranger. */
		ck_assert_int_eq(reports_judge(j, "b", k, 3, 0),
		    REPORT_FOREIGN);
		ck_assert_int_eq(reports_judge(j, "a", k, 3, 2),
		    REPORT_FOREIGN);
		ck_assert_int_eq(reports_judge(j, "a", k, 3, 4),
		    REPORT_FOREIGN);
		ck_assert_int_eq(reports_judge(j, "c", k, 3, 0),
		    REPORT_FOREIGN);
		/* Other attempts, older or newer, change nothing. */
		ck_assert_int_eq(reports_judge(j, "c", k, 2, 0), REPORT_STALE);
		ck_assert_int_eq(reports_judge(j, "a", k, 4, 0), REPORT_STALE);
		/* Nor does a job the controller does not have. */
		ck_assert_int_eq(reports_judge(NULL, "a", k, 3, 0),
		    REPORT_STALE);
	}
	job_free(j);
}
END_TEST

START_TEST(test_judge_ended_jobs)
{
	struct job *j = running_job();

	/* An ended job keeps its last placement: nothing can change it. */
	j->state = JOB_COMPLETED;
	ck_assert_int_eq(reports_judge(j, "a", REPORT_TASK_EXIT, 3, 0),
	    REPORT_STALE);
	ck_assert_int_eq(reports_judge(j, "c", REPORT_TASK_EXIT, 3, 0),
	    REPORT_STALE);
	ck_assert_int_eq(reports_judge(j, "a", REPORT_CHECKPOINT, 3, 0),
	    REPORT_STALE);
	/* A job waiting to restart holds nothing. */
	j->state = JOB_RESTARTING;
	ck_assert_int_eq(job_set_placement(j, NULL, 0), 0);
	ck_assert_int_eq(reports_judge(j, "a", REPORT_TASK_EXIT, 3, 0),
	    REPORT_STALE);
	ck_assert_int_eq(reports_judge(j, "a", REPORT_PROGRESS, 3, 0),
	    REPORT_STALE);
	job_free(j);
}
END_TEST

START_TEST(test_judge_checkpoint_progress)
{
	struct job *j = running_job();

	/* Checkpoints from rank 0's node only, whatever rank is given. */
	ck_assert_int_eq(reports_judge(j, "a", REPORT_CHECKPOINT, 3, 5),
	    REPORT_ACCEPT);
	ck_assert_int_eq(reports_judge(j, "b", REPORT_CHECKPOINT, 3, 0),
	    REPORT_FOREIGN);
	ck_assert_int_eq(reports_judge(j, "c", REPORT_CHECKPOINT, 3, 0),
	    REPORT_FOREIGN);
	ck_assert_int_eq(reports_judge(j, "b", REPORT_CHECKPOINT, 2, 0),
	    REPORT_STALE);
	/* Progress from any node of the job. */
	ck_assert_int_eq(reports_judge(j, "a", REPORT_PROGRESS, 3, 0),
	    REPORT_ACCEPT);
	ck_assert_int_eq(reports_judge(j, "b", REPORT_PROGRESS, 3, 0),
	    REPORT_ACCEPT);
	ck_assert_int_eq(reports_judge(j, "c", REPORT_PROGRESS, 3, 0),
	    REPORT_FOREIGN);
	job_free(j);
}
END_TEST

START_TEST(test_tasks_max)
{
	ck_assert_uint_eq(reports_tasks_max(0), REPORTS_TASKS_FLOOR);
	ck_assert_uint_eq(reports_tasks_max(1), REPORTS_TASKS_FLOOR);
	ck_assert_uint_eq(reports_tasks_max(8), 8 * JOB_TASKS_PER_NODE_LIMIT);
	ck_assert_uint_eq(reports_tasks_max(64),
	    64 * JOB_TASKS_PER_NODE_LIMIT);
	/* 100,000 made-up tasks are more than any node may list. */
	ck_assert_uint_lt(reports_tasks_max(INV_MAX_GPUS), 100000);
}
END_TEST

START_TEST(test_kind_names)
{
	ck_assert_str_eq(report_kind_name(REPORT_TASK_EXIT), "task_exit");
	ck_assert_str_eq(report_kind_name(REPORT_REGISTER), "register");
	ck_assert_str_eq(report_kind_name(REPORT_KINDS), "unknown");
}
END_TEST

START_TEST(test_ratelim)
{
	struct ratelim rl = RATELIM_INIT;
	unsigned long left = 99;
	int i, allowed = 0;

	ck_assert(ratelim_allow(&rl, 1000, 3, 10000, &left));
	ck_assert_uint_eq(left, 0);
	for (i = 0; i < 1000; i++)
		allowed += ratelim_allow(&rl, 1000 + i, 3, 10000, &left);
	/* Two more in the first window; the rest are counted. */
	ck_assert_int_eq(allowed, 2);
	ck_assert(!ratelim_allow(&rl, 10999, 3, 10000, NULL));
	/* A new window: the first line says how many were left out. */
	ck_assert(ratelim_allow(&rl, 11000, 3, 10000, &left));
	ck_assert_uint_eq(left, 999);
	ck_assert(ratelim_allow(&rl, 11001, 3, 10000, &left));
	ck_assert_uint_eq(left, 0);
	/* A clock that went back starts a window too. */
	ck_assert(ratelim_allow(&rl, 11002, 3, 10000, &left));
	ck_assert(!ratelim_allow(&rl, 11003, 3, 10000, &left));
	ck_assert(ratelim_allow(&rl, 500, 3, 10000, &left));
	ck_assert_uint_eq(left, 1);
}
END_TEST

START_TEST(test_reject_counts)
{
	struct reports r;
	struct ratelim node_log = RATELIM_INIT;
	int i;

	memset(&r, 0, sizeof(r));
	for (i = 0; i < 100; i++)
		reports_reject(&r, &node_log, "b", REPORT_TASK_EXIT, 5000,
		    "job 7 attempt 3 rank 0 runs elsewhere");
	reports_reject(&r, NULL, "evil", REPORT_REGISTER, 5000, "unknown");
	ck_assert_uint_eq(r.rejected[REPORT_TASK_EXIT], 100);
	ck_assert_uint_eq(r.rejected[REPORT_REGISTER], 1);
	ck_assert_uint_eq(r.rejected[REPORT_CHECKPOINT], 0);
	/* Logged within the node's budget; the rest counted there. */
	ck_assert_uint_eq(node_log.used, REPORTS_LOG_BURST);
	ck_assert_uint_eq(node_log.suppressed, 100 - REPORTS_LOG_BURST);
	ck_assert_uint_eq(r.unregistered_log.used, 1);
}
END_TEST

static Suite *
reports_suite(void)
{
	Suite *s = suite_create("reports");
	TCase *tc = tcase_create("judge");

	tcase_add_test(tc, test_judge_tasks);
	tcase_add_test(tc, test_judge_ended_jobs);
	tcase_add_test(tc, test_judge_checkpoint_progress);
	tcase_add_test(tc, test_tasks_max);
	tcase_add_test(tc, test_kind_names);
	suite_add_tcase(s, tc);
	tc = tcase_create("budget");
	tcase_add_test(tc, test_ratelim);
	tcase_add_test(tc, test_reject_counts);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(reports_suite());
	int failed;

	log_init("check_reports", true, false);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
