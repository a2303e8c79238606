/* lib/array.c: --array specs, their bounds and refusals, and the
 * collapsed form cohort jobs shows. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"

/* Parse s, which must be accepted, and format it back. */
static void
roundtrip(const char *s, const char *want, size_t n, uint32_t step,
    uint32_t throttle)
{
	struct array_spec a;
	struct cerr err;
	char buf[256];

	ck_assert_msg(array_parse(s, &a, &err) == 0, "'%s': %s", s, err.text);
	ck_assert_uint_eq(a.n, n);
	ck_assert_uint_eq(a.step, step);
	ck_assert_uint_eq(a.throttle, throttle);
	ck_assert_uint_eq(a.min, a.idx[0]);
	ck_assert_uint_eq(a.max, a.idx[a.n - 1]);
	ck_assert_uint_lt(array_format(a.idx, a.n, buf, sizeof(buf)),
	    sizeof(buf));
	ck_assert_str_eq(buf, want);
	array_spec_clear(&a);
}

START_TEST(test_good)
{
	roundtrip("0-99", "0-99", 100, 1, 0);
	roundtrip("1,3,5-9", "1,3,5-9", 7, 0, 0);
	roundtrip("0-99:4", "0-96:4", 25, 4, 0);
	roundtrip("0-99%8", "0-99", 100, 1, 8);
	roundtrip("1,3,5-9%2", "1,3,5-9", 7, 0, 2);
	roundtrip("7", "7", 1, 0, 0);
	roundtrip("9,1,5", "1-9:4", 3, 4, 0);
	roundtrip("9,1", "1,9", 2, 8, 0);
	roundtrip("0-4,10-12", "0-4,10-12", 8, 0, 0);
	roundtrip("3-3", "3", 1, 0, 0);
	roundtrip("4000000", "4000000", 1, 0, 0);
	roundtrip("0-99999", "0-99999", 100000, 1, 0);
	roundtrip("0-5%2", "0-5", 6, 1, 2);
}
END_TEST

static void
refused(const char *s, const char *needle)
{
	struct array_spec a;
	struct cerr err;

	cerr_clear(&err);
	ck_assert_msg(array_parse(s, &a, &err) == -1, "'%s' accepted", s);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_msg(strstr(err.text, "--array") != NULL, "%s", err.text);
	ck_assert_msg(strstr(err.text, needle) != NULL, "'%s': '%s' lacks "
	    "'%s'", s, err.text, needle);
	ck_assert_ptr_null(a.idx);
	ck_assert_uint_eq(a.n, 0);
}

START_TEST(test_refused)
{
	refused("", "empty");
	refused(",", "empty item");
	refused("1,", "empty item");
	refused("1,,2", "empty item");
	refused("%4", "empty item");
	refused("5-1", "goes down");
	refused("1,1", "given twice");
	refused("0-9,5", "index 5 is given twice");
	refused("0-10:0", "step of 0");
	refused("5:2", "a step needs a range");
	refused("a", "unexpected 'a'");
	refused("-1", "unexpected '-'");
	refused("1-", "unexpected");
	refused("1 ", "unexpected ' '");
	refused("0-9%", "limit after %");
	refused("0-9%x", "limit after %");
	refused("0-9%0", "%0");
	refused("0-9%2%3", "limit after %");
	refused("0-9%2,3", "limit after %");
	refused("4000001", "above the largest");
	refused("99999999999999999999", "above the largest");
	refused("0-100000", "more than 100000 tasks");
	refused("0-4000000", "more than 100000 tasks");
	refused("0-50000,50001-100001", "more than 100000 tasks");
}
END_TEST

START_TEST(test_format)
{
	uint32_t v[] = { 8, 9, 10, 11 }, w[] = { 1, 2, 4, 6, 8, 20 };
	char buf[64], small[8];
	size_t need;

	array_format(v, 4, buf, sizeof(buf));
	ck_assert_str_eq(buf, "8-11");
	array_format(v, 1, buf, sizeof(buf));
	ck_assert_str_eq(buf, "8");
	array_format(w, 6, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1-2,4-8:2,20");
	array_format(v, 0, buf, sizeof(buf));
	ck_assert_str_eq(buf, "");
	/* Too small: the length it needs, and "..." where it was cut. */
	need = array_format(w, 6, small, sizeof(small));
	ck_assert_uint_eq(need, strlen("1-2,4-8:2,20"));
	ck_assert_str_eq(small, "1-2,...");
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("array");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_good);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_format);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
