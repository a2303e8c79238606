/* lib/duration.c: every accepted form, every refusal, and the format. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/duration.h"

struct good {
	const char *in;
	uint64_t secs;
};

static const struct good goods[] = {
	{ "0", 0 },
	{ "90s", 90 },
	{ "0s", 0 },
	{ "30m", 1800 },
	{ "2h", 7200 },
	{ "3d", 3 * 86400 },
	{ "5", 300 },			/* a bare number is minutes */
	{ "90", 5400 },
	{ "1:30", 90 },			/* MM:SS */
	{ "90:00", 5400 },		/* the leading field is unbounded */
	{ "01:02:03", 3723 },		/* HH:MM:SS */
	{ "100:00:00", 360000 },
	{ "1-0", 86400 },		/* D-HH */
	{ "1-02", 93600 },
	{ "1-02:03", 93780 },		/* D-HH:MM */
	{ "1-00:00:00", 86400 },	/* D-HH:MM:SS */
	{ "2-23:59:59", 2 * 86400 + 86399 },
	{ "36600d", DURATION_MAX_S },	/* exactly the limit */
};

static const char *const bads[] = {
	"", "s", "m", "-5", "+5", " 5", "5 ", "5 m", "1.5h", "1h30m", "5x",
	"5M", "1:", ":1", "1::2", "1:2:3:4", "1:60", "1:00:60", "1:60:00",
	"1-", "-1-2", "1-24", "1-2:60", "1-2:3:60", "1-2:3:4:5", "1-2-3",
	"1d2", "abc", "0x10", "1--2", "99999999999999999999999x",
};

START_TEST(test_parse_good)
{
	uint64_t secs = 12345;

	ck_assert_msg(duration_parse(goods[_i].in, &secs) == 0,
	    "'%s' refused", goods[_i].in);
	ck_assert_uint_eq(secs, goods[_i].secs);
}
END_TEST

START_TEST(test_parse_bad)
{
	uint64_t secs = 12345;

	errno = 0;
	ck_assert_msg(duration_parse(bads[_i], &secs) == -1,
	    "'%s' accepted", bads[_i]);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_uint_eq(secs, 12345);
}
END_TEST

START_TEST(test_parse_null)
{
	uint64_t secs;

	errno = 0;
	ck_assert_int_eq(duration_parse(NULL, &secs), -1);
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(test_parse_range)
{
	static const char *const big[] = {
		"36601d", "3162240001s", "52704001m", "878401h",
		"52704001", "878401:00:00", "36601-00", "36600-00:00:01",
		"99999999999999999999999s", "99999999999999999999999",
		"18446744073709551616s",
	};
	uint64_t secs;
	size_t i;

	for (i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		errno = 0;
		ck_assert_msg(duration_parse(big[i], &secs) == -1,
		    "'%s' accepted", big[i]);
		ck_assert_msg(errno == ERANGE, "'%s': errno %d", big[i], errno);
	}
}
END_TEST

START_TEST(test_format)
{
	char buf[64];

	ck_assert_str_eq(duration_format(0, buf, sizeof(buf)), "00:00:00");
	ck_assert_str_eq(duration_format(59, buf, sizeof(buf)), "00:00:59");
	ck_assert_str_eq(duration_format(3723, buf, sizeof(buf)), "01:02:03");
	ck_assert_str_eq(duration_format(86399, buf, sizeof(buf)),
	    "23:59:59");
	ck_assert_str_eq(duration_format(86400, buf, sizeof(buf)),
	    "1-00:00:00");
	ck_assert_str_eq(duration_format(93784, buf, sizeof(buf)),
	    "1-02:03:04");
	ck_assert_str_eq(duration_format(DURATION_MAX_S, buf, sizeof(buf)),
	    "36600-00:00:00");
	/* A short buffer is cut, never overrun. */
	ck_assert_str_eq(duration_format(3723, buf, 3), "01");
}
END_TEST

/* What duration_format writes, duration_parse reads back. */
START_TEST(test_round_trip)
{
	static const uint64_t v[] = { 0, 1, 59, 60, 3599, 3600, 86399, 86400,
		93784, 1000000, DURATION_MAX_S };
	char buf[64];
	uint64_t secs;
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		duration_format(v[i], buf, sizeof(buf));
		ck_assert_msg(duration_parse(buf, &secs) == 0, "'%s'", buf);
		ck_assert_uint_eq(secs, v[i]);
	}
}
END_TEST

static Suite *
duration_suite(void)
{
	Suite *s = suite_create("duration");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_parse_good, 0,
	    sizeof(goods) / sizeof(goods[0]));
	tcase_add_loop_test(tc, test_parse_bad, 0,
	    sizeof(bads) / sizeof(bads[0]));
	tcase_add_test(tc, test_parse_null);
	tcase_add_test(tc, test_parse_range);
	tcase_add_test(tc, test_format);
	tcase_add_test(tc, test_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(duration_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
