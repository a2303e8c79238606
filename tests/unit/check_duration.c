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

/* --begin, against a fixed "now" in UTC (TZ set in main). */
START_TEST(test_begin)
{
	/* 2026-12-07 10:30:00 UTC */
	const time_t now = 1796639400;
	static const struct { const char *s; time_t want; } ok[] = {
		{ "now", 1796639400 },
		{ "now+60", 1796639460 },
		{ "now+90s", 1796639490 },
		{ "now+2minutes", 1796639520 },
		{ "now+1h", 1796643000 },
		{ "now+1hour", 1796643000 },
		{ "now+1d", 1796725800 },
		{ "now+1w", 1797244200 },
		{ "16:00", 1796659200 },		/* today */
		{ "09:15:30", 1796721330 },		/* passed: tomorrow */
		{ "teatime", 1796659200 },
		{ "noon", 1796644800 },
		{ "midnight", 1796688000 },
		{ "tomorrow", 1796688000 },
		{ "today", 1796639400 },
		{ "2026-12-24", 1798070400 },
		{ "2026-12-24T08:00", 1798099200 },
		{ "2026-12-24T08:00:05", 1798099205 },
	};
	static const char *const bad[] = {
		"", "later", "now+", "now-5", "now+5x", "now+1hh", "25:00",
		"12:60", "2026-02-30", "2026-13-01", "2026-12-24T", "12:00pm",
		"2026-12-24 08:00", "now+99999999999999999999",
	};
	time_t at;
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ck_assert_msg(duration_parse_begin(ok[i].s, now, &at) == 0,
		    "'%s' refused", ok[i].s);
		ck_assert_msg(at == ok[i].want, "'%s': %lld, want %lld",
		    ok[i].s, (long long)at, (long long)ok[i].want);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(duration_parse_begin(bad[i], now, &at) == -1,
		    "'%s' taken", bad[i]);
	ck_assert_int_eq(duration_parse_begin(NULL, now, &at), -1);
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
	tcase_add_test(tc, test_begin);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(duration_suite());
	int failed;

	setenv("TZ", "UTC", 1);
	tzset();
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
