/* lib/histogram.c: bucket edges (le is "less or equal"), cumulative
 * counts, the default bounds of a zeroed histogram, bad bounds refused,
 * merging, and the exposition lines in the format's order (_bucket by
 * increasing le ending with +Inf = _count, then _sum and _count). */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/histogram.h"

static const double b3[] = { 0.1, 1, 10 };

START_TEST(test_edges)
{
	struct histogram h;

	ck_assert_int_eq(histogram_init(&h, b3, 3), 0);
	histogram_observe(&h, 0.1);	/* on a bound: that bucket */
	histogram_observe(&h, 0.1000001);
	histogram_observe(&h, 1);
	histogram_observe(&h, 10.5);	/* above all: +Inf only */
	histogram_observe(&h, -3);	/* a clock that went back: 0 */
	histogram_observe(&h, NAN);	/* ignored */
	ck_assert_uint_eq(h.count, 5);
	ck_assert_uint_eq(histogram_cumulative(&h, 0), 2);
	ck_assert_uint_eq(histogram_cumulative(&h, 1), 4);
	ck_assert_uint_eq(histogram_cumulative(&h, 2), 4);
	ck_assert_uint_eq(histogram_cumulative(&h, 3), 5);
	ck_assert(fabs(h.sum - (0.1 + 0.1000001 + 1 + 10.5)) < 1e-9);
}
END_TEST

START_TEST(test_zeroed_is_default)
{
	struct histogram h;
	size_t i;

	memset(&h, 0, sizeof(h));
	ck_assert_uint_eq(histogram_nbounds(&h), HISTOGRAM_LATENCY_N);
	ck_assert(HISTOGRAM_LATENCY_N <= HISTOGRAM_MAX_BOUNDS);
	for (i = 1; i < HISTOGRAM_LATENCY_N; i++)
		ck_assert(HISTOGRAM_LATENCY[i] > HISTOGRAM_LATENCY[i - 1]);
	histogram_observe(&h, 0.0003);	/* between 0.00025 and 0.0005 */
	ck_assert_uint_eq(histogram_cumulative(&h, 1), 0);
	ck_assert_uint_eq(histogram_cumulative(&h, 2), 1);
	ck_assert_uint_eq(histogram_cumulative(&h, HISTOGRAM_LATENCY_N), 1);
}
END_TEST

START_TEST(test_bad_bounds)
{
	static const double down[] = { 1, 0.5 };
	static const double same[] = { 1, 1 };
	static const double inf[] = { 1, INFINITY };
	double many[HISTOGRAM_MAX_BOUNDS + 1];
	struct histogram h;
	size_t i;

	memset(&h, 0x5a, sizeof(h));
	errno = 0;
	ck_assert_int_eq(histogram_init(&h, down, 2), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(histogram_init(&h, same, 2), -1);
	ck_assert_int_eq(histogram_init(&h, inf, 2), -1);
	ck_assert_int_eq(histogram_init(&h, b3, 0), -1);
	ck_assert_int_eq(histogram_init(&h, NULL, 3), -1);
	for (i = 0; i <= HISTOGRAM_MAX_BOUNDS; i++)
		many[i] = (double)i;
	ck_assert_int_eq(histogram_init(&h, many, HISTOGRAM_MAX_BOUNDS + 1),
	    -1);
	/* Refused: h untouched. */
	ck_assert_uint_eq(h.count, 0x5a5a5a5a5a5a5a5aull);
	ck_assert_int_eq(histogram_init(&h, many, HISTOGRAM_MAX_BOUNDS), 0);
}
END_TEST

START_TEST(test_merge)
{
	static const double other[] = { 0.1, 2, 10 };
	struct histogram a, b, c;

	ck_assert_int_eq(histogram_init(&a, b3, 3), 0);
	ck_assert_int_eq(histogram_init(&b, b3, 3), 0);
	ck_assert_int_eq(histogram_init(&c, other, 3), 0);
	histogram_observe(&a, 0.5);
	histogram_observe(&b, 0.05);
	histogram_observe(&b, 50);
	ck_assert_int_eq(histogram_merge(&a, &b), 0);
	ck_assert_uint_eq(a.count, 3);
	ck_assert_uint_eq(histogram_cumulative(&a, 0), 1);
	ck_assert_uint_eq(histogram_cumulative(&a, 1), 2);
	ck_assert_int_eq(histogram_merge(&a, &c), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_uint_eq(a.count, 3);
}
END_TEST

struct lines {
	char text[16][600];
	int n;
};

static void
collect(void *arg, const char *text)
{
	struct lines *l = arg;

	ck_assert_int_lt(l->n, 16);
	snprintf(l->text[l->n++], sizeof(l->text[0]), "%s", text);
}

START_TEST(test_lines)
{
	static const double b2[] = { 0.00025, 1 };
	struct histogram h;
	struct lines l = { .n = 0 };
	char big[600];

	ck_assert_int_eq(histogram_init(&h, b2, 2), 0);
	histogram_observe(&h, 0.0001);
	histogram_observe(&h, 3);
	ck_assert_int_eq(histogram_lines(&h, "x_seconds", "type=\"submit\"",
	    collect, &l), 0);
	ck_assert_int_eq(l.n, 5);
	ck_assert_str_eq(l.text[0],
	    "x_seconds_bucket{type=\"submit\",le=\"0.00025\"} 1");
	ck_assert_str_eq(l.text[1],
	    "x_seconds_bucket{type=\"submit\",le=\"1\"} 1");
	ck_assert_str_eq(l.text[2],
	    "x_seconds_bucket{type=\"submit\",le=\"+Inf\"} 2");
	ck_assert_str_eq(l.text[3], "x_seconds_sum{type=\"submit\"} 3.000100");
	ck_assert_str_eq(l.text[4], "x_seconds_count{type=\"submit\"} 2");
	l.n = 0;
	ck_assert_int_eq(histogram_lines(&h, "y", "", collect, &l), 0);
	ck_assert_str_eq(l.text[0], "y_bucket{le=\"0.00025\"} 1");
	ck_assert_str_eq(l.text[3], "y_sum 3.000100");
	ck_assert_str_eq(l.text[4], "y_count 2");
	/* Too long for a line: refused, nothing emitted. */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	l.n = 0;
	ck_assert_int_eq(histogram_lines(&h, big, "", collect, &l), -1);
	ck_assert_int_eq(errno, ENAMETOOLONG);
	ck_assert_int_eq(l.n, 0);
}
END_TEST

static Suite *
histogram_suite(void)
{
	Suite *s = suite_create("histogram");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_edges);
	tcase_add_test(tc, test_zeroed_is_default);
	tcase_add_test(tc, test_bad_bounds);
	tcase_add_test(tc, test_merge);
	tcase_add_test(tc, test_lines);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(histogram_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
