/* daemon/agent/taskout.c: the output files of each task of a 2-node x
 * 2-task job, expanded for its rank and node; which rank truncates a
 * file that several share; appending on later attempts. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agent/taskout.h"
#include "lib/outpat.h"

/* Every expansion taskout makes is counted (linked with
 * -Wl,--wrap=outpat_expand). */
int __real_outpat_expand(const char *, const struct outpat_vars *, char *,
    size_t);
int __wrap_outpat_expand(const char *, const struct outpat_vars *, char *,
    size_t);
static unsigned long expansions;

int
__wrap_outpat_expand(const char *pat, const struct outpat_vars *v, char *buf,
    size_t len)
{
	expansions++;
	return __real_outpat_expand(pat, v, buf, len);
}

static const char *const nodes[] = { "n01", "n02" };

static struct job_spec spec;
static struct launch l;

static void
setup(const char *out, const char *err, uint32_t restart)
{
	memset(&spec, 0, sizeof(spec));
	spec.name = "train";
	spec.tasks_per_node = 2;
	spec.output = (char *)out;
	spec.error = (char *)err;
	memset(&l, 0, sizeof(l));
	l.job_id = 42;
	l.restart = restart;
	l.user = "alice";
	l.spec = &spec;
	l.nodelist = nodes;
	l.nnodes = 2;
}

static void
files(unsigned rank, struct taskout *o)
{
	struct cerr err;

	ck_assert_msg(taskout_files(&l, rank, o, &err) == 0, "%s", err.text);
}

START_TEST(test_spool_only)
{
	struct taskout o;

	setup(NULL, NULL, 1);
	files(3, &o);
	ck_assert_str_eq(o.out, "");
	ck_assert_str_eq(o.err, "");
	ck_assert(!o.out_trunc && !o.err_trunc);
}
END_TEST

/* One file per rank: each truncates it on the first attempt only. */
START_TEST(test_per_rank)
{
	struct taskout o;
	unsigned r;

	setup("out-%j-%t.txt", "/e/%u-%N-%n-%t.err", 1);
	for (r = 0; r < 4; r++) {
		files(r, &o);
		ck_assert(o.out_trunc && o.err_trunc);
	}
	files(3, &o);
	ck_assert_str_eq(o.out, "out-42-3.txt");
	ck_assert_str_eq(o.err, "/e/alice-n02-1-3.err");
	setup("out-%j-%t.txt", "/e/%u-%N-%n-%t.err", 2);
	files(0, &o);
	ck_assert(!o.out_trunc && !o.err_trunc);
}
END_TEST

/* A file several ranks share is truncated by the lowest of them only:
 * one for the job, one per node. */
START_TEST(test_shared)
{
	struct taskout o;

	setup("out-%j.txt", "err-%N.txt", 1);
	files(0, &o);
	ck_assert(o.out_trunc && o.err_trunc);
	files(1, &o);
	ck_assert(!o.out_trunc && !o.err_trunc);
	files(2, &o);
	ck_assert_str_eq(o.err, "err-n02.txt");
	ck_assert(!o.out_trunc && o.err_trunc);
	files(3, &o);
	ck_assert(!o.out_trunc && !o.err_trunc);
}
END_TEST

/* -o alone: stderr to the same file; -e alone: stdout in the spool. */
START_TEST(test_one_pattern)
{
	struct taskout o;

	setup("o-%t", NULL, 1);
	files(1, &o);
	ck_assert_str_eq(o.out, "o-1");
	ck_assert_str_eq(o.err, "o-1");
	setup(NULL, "e-%t", 1);
	files(1, &o);
	ck_assert_str_eq(o.out, "");
	ck_assert_str_eq(o.err, "e-1");
	ck_assert(o.err_trunc);
}
END_TEST

/* The work per task does not grow with the ranks: the last of 1,024
 * ranks on the last of 512 nodes expands its two names once each, not
 * once per lower rank (which, for a 4 KiB pattern, blocked the agent
 * for tens of seconds). Also a name of a node's ranks is truncated by
 * the node's first rank there. */
START_TEST(test_linear)
{
	static const char *many[512];
	static char names[512][8];
	struct taskout o;
	unsigned r, i;

	for (i = 0; i < 512; i++) {
		snprintf(names[i], sizeof(names[i]), "n%03u", i);
		many[i] = names[i];
	}
	setup("/o/%t-%n.out", "/e/%N.err", 1);
	spec.tasks_per_node = 1024;
	l.nodelist = many;
	l.nnodes = 512;
	for (r = 511 * 1024; r < 512 * 1024; r += 1023) {
		expansions = 0;
		files(r, &o);
		ck_assert_uint_le(expansions, 2);
		ck_assert(o.out_trunc);
		ck_assert(o.err_trunc == (r % 1024 == 0));
	}
	ck_assert_str_eq(o.out, "/o/524287-511.out");
	ck_assert_str_eq(o.err, "/e/n511.err");
}
END_TEST

START_TEST(test_bad_pattern)
{
	struct taskout o;
	struct cerr err;

	setup("%x", NULL, 1);
	spec.name = NULL;
	ck_assert_int_eq(taskout_files(&l, 0, &o, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.text, "'%x'"));
}
END_TEST

static Suite *
taskout_suite(void)
{
	Suite *s = suite_create("taskout");
	TCase *tc = tcase_create("files");

	tcase_add_test(tc, test_spool_only);
	tcase_add_test(tc, test_per_rank);
	tcase_add_test(tc, test_shared);
	tcase_add_test(tc, test_one_pattern);
	tcase_add_test(tc, test_linear);
	tcase_add_test(tc, test_bad_pattern);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(taskout_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
