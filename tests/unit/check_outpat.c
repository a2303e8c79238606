/* lib/outpat.c: every specifier of sbatch's filename pattern for an array
 * task and a plain job, zero padding, "%%", unknown specifiers and a '%'
 * at the end kept, the backslash escape, results that do not fit, and
 * which pattern each stream goes to. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/outpat.h"

static const struct outpat_vars task7 = {
	.job_id = 19, .array_id = 12, .array_task = 7, .rank = 3,
	.node_rank = 1, .node = "gpu002", .name = "sweep", .user = "alice",
};

static const struct outpat_vars plain = {
	.job_id = 42, .rank = 0, .node_rank = 0, .node = "n01",
	.name = "train", .user = "bob",
};

static void
assert_expands(const char *pat, const struct outpat_vars *v,
    const char *want)
{
	char buf[256];

	ck_assert_msg(outpat_expand(pat, v, buf, sizeof(buf)) == 0,
	    "'%s': %s", pat, strerror(errno));
	ck_assert_msg(strcmp(buf, want) == 0, "'%s' gives '%s', want '%s'",
	    pat, buf, want);
}

START_TEST(test_every_specifier)
{
	assert_expands("out-%j.txt", &task7, "out-19.txt");
	assert_expands("%A_%a.out", &task7, "12_7.out");
	assert_expands("r%t-n%n-%N", &task7, "r3-n1-gpu002");
	assert_expands("/scratch/%u/%x/%j", &task7, "/scratch/alice/sweep/19");
	assert_expands("100%%", &task7, "100%");
	assert_expands("%j%j", &plain, "4242");
	assert_expands("plain", &plain, "plain");
}
END_TEST

/* Not an array task: %A is the job id and %a Slurm's NO_VAL. */
START_TEST(test_not_an_array)
{
	assert_expands("%A_%a", &plain, "42_4294967294");
}
END_TEST

START_TEST(test_padding)
{
	assert_expands("%3t", &task7, "003");
	assert_expands("%5j", &task7, "00019");
	assert_expands("%1j", &task7, "19");
	assert_expands("%12j", &task7, "0000000019");	/* at most 10 */
	assert_expands("%4a-%2A", &task7, "0007-12");
	/* Ignored for names. */
	assert_expands("%4N.%3x.%2u", &task7, "gpu002.sweep.alice");
}
END_TEST

START_TEST(test_kept_as_written)
{
	assert_expands("a%qb", &plain, "a%qb");
	assert_expands("a%3qb", &plain, "a%3qb");
	assert_expands("end%", &plain, "end%");
	assert_expands("end%4", &plain, "end%4");
}
END_TEST

START_TEST(test_backslash)
{
	assert_expands("out\\%j.txt", &task7, "out%j.txt");
	assert_expands("a\\b%t", &task7, "ab%t");
}
END_TEST

START_TEST(test_errors)
{
	char buf[8];

	errno = 0;
	ck_assert_int_eq(outpat_expand("", &plain, buf, sizeof(buf)), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(outpat_expand(NULL, &plain, buf, sizeof(buf)), -1);
	ck_assert_int_eq(errno, EINVAL);
	/* %x of a job without a name gives nothing at all. */
	ck_assert_int_eq(outpat_expand("%x", &(struct outpat_vars){ 0 }, buf,
	    sizeof(buf)), -1);
	ck_assert_int_eq(errno, EINVAL);
	/* 7 characters and the NUL fit; 8 do not. */
	ck_assert_int_eq(outpat_expand("ou%j.tx", &plain, buf, sizeof(buf)),
	    0);
	ck_assert_str_eq(buf, "ou42.tx");
	ck_assert_int_eq(outpat_expand("out%j.tx", &plain, buf, sizeof(buf)),
	    -1);
	ck_assert_int_eq(errno, ENAMETOOLONG);
	ck_assert_int_eq(outpat_expand("%10j", &plain, buf, sizeof(buf)), -1);
	ck_assert_int_eq(errno, ENAMETOOLONG);
}
END_TEST

/* What a name varies with, read as outpat_expand reads it. */
START_TEST(test_varies)
{
	ck_assert_uint_eq(outpat_varies("out-%j-%x.txt"), 0);
	ck_assert_uint_eq(outpat_varies("o-%t"), OUTPAT_BY_RANK);
	ck_assert_uint_eq(outpat_varies("o-%03t"), OUTPAT_BY_RANK);
	ck_assert_uint_eq(outpat_varies("o-%N"), OUTPAT_BY_NODE);
	ck_assert_uint_eq(outpat_varies("o-%2n-%t"),
	    OUTPAT_BY_RANK | OUTPAT_BY_NODE);
	/* "%%t" is a '%' and a 't'; "%123t" a width of 12 and "3t". */
	ck_assert_uint_eq(outpat_varies("o-%%t"), 0);
	ck_assert_uint_eq(outpat_varies("o-%123t"), 0);
	ck_assert_uint_eq(outpat_varies("o-%t\\x"), 0);
	ck_assert_uint_eq(outpat_varies("o-%"), 0);
	ck_assert_uint_eq(outpat_varies(NULL), 0);
}
END_TEST

START_TEST(test_which_pattern)
{
	ck_assert_ptr_null(outpat_for(NULL, NULL, false));
	ck_assert_ptr_null(outpat_for(NULL, NULL, true));
	ck_assert_str_eq(outpat_for("o", NULL, false), "o");
	/* Without -e, stderr goes with stdout. */
	ck_assert_str_eq(outpat_for("o", NULL, true), "o");
	ck_assert_str_eq(outpat_for("o", "e", true), "e");
	/* -e alone: stdout stays in the spool. */
	ck_assert_ptr_null(outpat_for(NULL, "e", false));
	ck_assert_str_eq(outpat_for(NULL, "e", true), "e");
	ck_assert_ptr_null(outpat_for("", "", true));
}
END_TEST

static Suite *
outpat_suite(void)
{
	Suite *s = suite_create("outpat");
	TCase *tc = tcase_create("expand");

	tcase_add_test(tc, test_every_specifier);
	tcase_add_test(tc, test_not_an_array);
	tcase_add_test(tc, test_padding);
	tcase_add_test(tc, test_kept_as_written);
	tcase_add_test(tc, test_backslash);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_varies);
	tcase_add_test(tc, test_which_pattern);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(outpat_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
