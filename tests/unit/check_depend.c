/* lib/depend.c: --dependency specs and their evaluation against a
 * table of jobs given through the lookup callback. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/depend.h"

enum { PEND, RUN, OK, BAD };

/* The jobs the callback knows: 1-3 plain, 10 an array of tasks 0-2. */
struct fake {
	int state[4];		/* jobs 1, 2, 3 (index 0 unused) */
	int task[3];		/* array 10's tasks 0, 1, 2 */
	bool single_free;
	int lookups;
};

static void
add(struct depend_status *st, int s)
{
	st->n++;
	st->started += s != PEND;
	st->ended += s == OK || s == BAD;
	st->ok += s == OK;
}

static int
fake_lookup(void *arg, uint64_t id, bool has_task, uint32_t task,
    struct depend_status *st)
{
	struct fake *f = arg;
	int i;

	f->lookups++;
	if (id >= 1 && id <= 3 && !has_task) {
		add(st, f->state[id]);
		return 0;
	}
	if (id != 10)
		return -1;
	if (has_task) {
		if (task < 3)
			add(st, f->task[task]);
		return 0;
	}
	for (i = 0; i < 3; i++)
		add(st, f->task[i]);
	return 0;
}

static bool
fake_single(void *arg)
{
	return ((struct fake *)arg)->single_free;
}

static const struct depend_ops ops = { fake_lookup, fake_single };

static enum depend_result
eval(const char *s, struct fake *f, bool is_task, uint32_t task, char *why)
{
	struct depend d;
	struct cerr err;
	enum depend_result r;

	ck_assert_msg(depend_parse(s, &d, &err) == 0, "'%s': %s", s, err.text);
	r = depend_eval(&d, is_task, task, &ops, f, why, 64);
	depend_clear(&d);
	return r;
}

START_TEST(test_parse)
{
	struct depend d;
	struct cerr err;

	ck_assert_int_eq(depend_parse("afterok:12:13_7,singleton", &d, &err),
	    0);
	ck_assert_uint_eq(d.n, 3);
	ck_assert(!d.any);
	ck_assert(d.singleton);
	ck_assert_int_eq(d.items[0].type, DEPEND_AFTEROK);
	ck_assert_uint_eq(d.items[0].id, 12);
	ck_assert(!d.items[0].has_task);
	ck_assert_uint_eq(d.items[1].id, 13);
	ck_assert(d.items[1].has_task);
	ck_assert_uint_eq(d.items[1].task, 7);
	ck_assert_int_eq(d.items[2].type, DEPEND_SINGLETON);
	depend_clear(&d);
	ck_assert_int_eq(depend_parse("after:1?afterany:2?AFTERNOTOK:3", &d,
	    &err), 0);
	ck_assert(d.any);
	ck_assert_uint_eq(d.n, 3);
	ck_assert_int_eq(d.items[2].type, DEPEND_AFTERNOTOK);
	depend_clear(&d);
}
END_TEST

static void
refused(const char *s, const char *needle)
{
	struct depend d;
	struct cerr err;

	ck_assert_msg(depend_parse(s, &d, &err) == -1, "'%s' accepted", s);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_msg(strstr(err.text, "--dependency") != NULL, "%s",
	    err.text);
	ck_assert_msg(strstr(err.text, needle) != NULL, "'%s': '%s' lacks "
	    "'%s'", s, err.text, needle);
	ck_assert_ptr_null(d.items);
}

START_TEST(test_refused)
{
	char big[5000];

	refused("", "empty");
	refused("afterok", "needs a job id");
	refused("afterok:", "needs a job id");
	refused("afterok:x", "'x' is not a job id");
	refused("afterok:1::2", "'' is not a job id");
	refused("afterok:0", "'0' is not a job id");
	refused("afterok:1_", "'1_' is not a job id");
	refused("afterok:1_2_3", "not a job id");
	refused("afterok:1+5", "not a job id");
	refused("afterok:99999999999999999999", "not a job id");
	refused("before:1", "unknown type 'before'");
	refused("afterok:1,", "empty element");
	refused("afterok:1,afterok:2?afterok:3", "not both");
	refused("singleton:1", "singleton takes no job ids");
	refused("aftercorr:5_1", "whole array");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	refused(big, "longer than");
}
END_TEST

START_TEST(test_eval)
{
	struct fake f = { .state = { 0, PEND, PEND, PEND },
	    .task = { PEND, PEND, PEND }, .single_free = true };
	char why[64];

	ck_assert_int_eq(eval("afterok:1", &f, false, 0, why), DEPEND_WAIT);
	ck_assert_str_eq(why, "afterok:1");
	ck_assert_int_eq(eval("after:1", &f, false, 0, why), DEPEND_WAIT);
	f.state[1] = RUN;
	ck_assert_int_eq(eval("after:1", &f, false, 0, why),
	    DEPEND_SATISFIED);
	ck_assert_str_eq(why, "");
	ck_assert_int_eq(eval("afterany:1", &f, false, 0, why), DEPEND_WAIT);
	f.state[1] = OK;
	ck_assert_int_eq(eval("afterok:1", &f, false, 0, why),
	    DEPEND_SATISFIED);
	ck_assert_int_eq(eval("afterany:1", &f, false, 0, why),
	    DEPEND_SATISFIED);
	ck_assert_int_eq(eval("afternotok:1", &f, false, 0, why),
	    DEPEND_NEVER);
	ck_assert_str_eq(why, "afternotok:1");
	f.state[2] = BAD;
	ck_assert_int_eq(eval("afterok:1:2", &f, false, 0, why), DEPEND_NEVER);
	ck_assert_str_eq(why, "afterok:2");
	ck_assert_int_eq(eval("afternotok:2", &f, false, 0, why),
	    DEPEND_SATISFIED);
	/* ',': all; '?': any. */
	ck_assert_int_eq(eval("afterok:1,afterok:3", &f, false, 0, why),
	    DEPEND_WAIT);
	ck_assert_str_eq(why, "afterok:3");
	ck_assert_int_eq(eval("afterok:2?afterok:3", &f, false, 0, why),
	    DEPEND_WAIT);
	ck_assert_int_eq(eval("afterok:2?afterok:1", &f, false, 0, why),
	    DEPEND_SATISFIED);
	f.state[3] = BAD;
	ck_assert_int_eq(eval("afterok:2?afterok:3", &f, false, 0, why),
	    DEPEND_NEVER);
	/* A job no longer known holds (Slurm clears it). */
	ck_assert_int_eq(eval("afterok:7", &f, false, 0, why),
	    DEPEND_SATISFIED);
	/* singleton asks the callback. */
	ck_assert_int_eq(eval("singleton", &f, false, 0, why),
	    DEPEND_SATISFIED);
	f.single_free = false;
	ck_assert_int_eq(eval("singleton", &f, false, 0, why), DEPEND_WAIT);
	ck_assert_str_eq(why, "singleton");
	ck_assert_int_eq(eval("afterok:1,singleton", &f, false, 0, why),
	    DEPEND_WAIT);
}
END_TEST

START_TEST(test_arrays)
{
	struct fake f = { .task = { OK, RUN, PEND } };
	char why[64];

	/* A whole array: every task. */
	ck_assert_int_eq(eval("afterok:10", &f, false, 0, why), DEPEND_WAIT);
	ck_assert_int_eq(eval("after:10", &f, false, 0, why), DEPEND_WAIT);
	ck_assert_int_eq(eval("afterok:10_0", &f, false, 0, why),
	    DEPEND_SATISFIED);
	ck_assert_int_eq(eval("afterok:10_1", &f, false, 0, why),
	    DEPEND_WAIT);
	/* aftercorr: the task of the same index. */
	ck_assert_int_eq(eval("aftercorr:10", &f, true, 0, why),
	    DEPEND_SATISFIED);
	ck_assert_int_eq(eval("aftercorr:10", &f, true, 1, why), DEPEND_WAIT);
	/* ... and a task the other array lacks has nothing to wait for. */
	ck_assert_int_eq(eval("aftercorr:10", &f, true, 5, why),
	    DEPEND_SATISFIED);
	f.task[1] = BAD;
	f.task[2] = OK;
	ck_assert_int_eq(eval("aftercorr:10", &f, true, 1, why),
	    DEPEND_NEVER);
	ck_assert_int_eq(eval("aftercorr:10", &f, true, 2, why),
	    DEPEND_SATISFIED);
	ck_assert_int_eq(eval("afterok:10", &f, false, 0, why), DEPEND_NEVER);
	/* afternotok on an array: all ended, one of them failed. */
	ck_assert_int_eq(eval("afternotok:10", &f, false, 0, why),
	    DEPEND_SATISFIED);
	ck_assert_int_eq(eval("afterany:10", &f, false, 0, why),
	    DEPEND_SATISFIED);
	f.task[1] = OK;
	ck_assert_int_eq(eval("afternotok:10", &f, false, 0, why),
	    DEPEND_NEVER);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("depend");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_eval);
	tcase_add_test(tc, test_arrays);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
