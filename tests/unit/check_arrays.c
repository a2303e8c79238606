/* client/arrays.c and client/jobref.c's pure parts: an array's pending
 * tasks fold into one row per reason, in the listing's order; running
 * tasks and plain jobs keep theirs; job references parse as scancel's. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "client/arrays.h"
#include "client/jobref.h"

static struct job *
mk(uint64_t id, uint64_t array_id, uint32_t task, enum job_state st,
    bool placed, const char *reason)
{
	struct job *j = job_new();

	ck_assert_ptr_nonnull(j);
	j->id = id;
	j->array_id = array_id;
	j->array_task = task;
	j->array_max = array_id != 0 ? 2 : 0;
	j->state = st;
	j->nplace = placed ? 1 : 0;
	free(j->reason);
	j->reason = strdup(reason);
	return j;
}

START_TEST(test_fold)
{
	struct job *v[9];
	struct arrays_row *rows;
	size_t n, i;
	const char *want[] = { "1", "2_0", "2_[1-2,4%2]", "2_3", "2_5", "8",
	    "9_0" };

	v[0] = mk(1, 0, 0, JOB_RUNNING, true, "");
	v[1] = mk(2, 2, 0, JOB_RUNNING, true, "");
	v[2] = mk(3, 2, 1, JOB_PENDING, false, "JobArrayTaskLimit");
	v[3] = mk(4, 2, 2, JOB_PENDING, false, "JobArrayTaskLimit");
	/* Launching: it holds an allocation, a row of its own. */
	v[4] = mk(5, 2, 3, JOB_PENDING, true, "Launching");
	v[5] = mk(6, 2, 4, JOB_PENDING, false, "JobArrayTaskLimit");
	v[6] = mk(7, 2, 5, JOB_PENDING, false, "Dependency");
	v[7] = mk(8, 0, 0, JOB_PENDING, false, "Resources");
	v[8] = mk(9, 9, 0, JOB_PENDING, false, "Dependency");
	ck_assert_int_eq(arrays_fold((const struct job *const *)v, 9, &rows,
	    &n), 0);
	/* A fold of one task is shown as that task. */
	ck_assert_uint_eq(n, 7);
	for (i = 0; i < n; i++)
		ck_assert_str_eq(rows[i].id, want[i]);
	ck_assert_uint_eq(rows[2].ntasks, 3);
	ck_assert_ptr_eq(rows[2].job, v[2]);
	arrays_rows_free(rows, n);
	ck_assert_int_eq(arrays_fold(NULL, 0, &rows, &n), 0);
	ck_assert_uint_eq(n, 0);
	for (i = 0; i < 9; i++)
		job_free(v[i]);
}
END_TEST

START_TEST(test_jobref)
{
	struct jobref r;
	struct cerr err;
	char buf[JOBREF_LEN];
	struct job *j;
	const char *bad[] = { "", "0", "x", "12_", "12_x", "12-3", "12_[]",
	    "12_[1-3%2]", "12_[3-1]", "12_1_2", "_3",
	    "99999999999999999999", NULL };
	size_t i;

	ck_assert_int_eq(jobref_parse("12", &r, &err), 0);
	ck_assert_uint_eq(r.id, 12);
	ck_assert(!r.has_tasks);
	jobref_clear(&r);
	ck_assert_int_eq(jobref_parse("12_7", &r, &err), 0);
	ck_assert(r.has_tasks);
	ck_assert_uint_eq(r.ntasks, 1);
	ck_assert_uint_eq(r.tasks[0], 7);
	jobref_clear(&r);
	ck_assert_int_eq(jobref_parse("12_[5,1-3]", &r, &err), 0);
	ck_assert_uint_eq(r.ntasks, 4);
	ck_assert_uint_eq(r.tasks[0], 1);
	ck_assert_uint_eq(r.tasks[3], 5);
	jobref_clear(&r);
	for (i = 0; bad[i] != NULL; i++) {
		ck_assert_msg(jobref_parse(bad[i], &r, &err) == -1, "'%s'",
		    bad[i]);
		ck_assert_int_eq(err.code, ERR_INVALID);
		ck_assert_ptr_nonnull(strstr(err.text, "invalid job"));
	}
	j = mk(19, 12, 7, JOB_PENDING, false, "");
	ck_assert_str_eq(jobref_format(j, buf, sizeof(buf)), "12_7");
	j->array_id = 0;
	ck_assert_str_eq(jobref_format(j, buf, sizeof(buf)), "19");
	job_free(j);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("arrays");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_fold);
	tcase_add_test(tc, test_jobref);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
