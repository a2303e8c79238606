/* lib/hostlist.c: expansions, compressions, limits and every refusal. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hostlist.h"

/* Expand expr and join the names with spaces. */
static char *
joined(const char *expr, size_t max)
{
	char **names, err[256], *out;
	size_t n, i, len = 1;

	ck_assert_msg(hostlist_expand(expr, max, &names, &n, err,
	    sizeof(err)) == 0, "'%s': %s", expr, err);
	for (i = 0; i < n; i++)
		len += strlen(names[i]) + 1;
	out = calloc(1, len);
	ck_assert_ptr_nonnull(out);
	for (i = 0; i < n; i++) {
		if (i > 0)
			strcat(out, " ");
		strcat(out, names[i]);
	}
	hostlist_free(names, n);
	return out;
}

struct good {
	const char *in;
	const char *out;
};

static const struct good goods[] = {
	{ "gpu1", "gpu1" },
	{ "gpu[1-3]", "gpu1 gpu2 gpu3" },
	{ "gpu[001-003,040]", "gpu001 gpu002 gpu003 gpu040" },
	{ "node[01-02],login1", "node01 node02 login1" },
	{ "n[8-10]", "n8 n9 n10" },
	{ "n[098-101]", "n098 n099 n100 n101" },
	{ "r[1-2]-n[1-2]", "r1-n1 r1-n2 r2-n1 r2-n2" },
	{ "[1-2]x", "1x 2x" },
	{ "a,b,a", "a b a" },
	{ "leaf[0-1]", "leaf0 leaf1" },
	{ "gpu[5]", "gpu5" },
	{ "x[0-0]y", "x0y" },
};

START_TEST(test_expand)
{
	char *got = joined(goods[_i].in, 1000);

	ck_assert_str_eq(got, goods[_i].out);
	free(got);
}
END_TEST

struct bad {
	const char *in;
	const char *msg;	/* a part of the error text */
};

static const struct bad bads[] = {
	{ "", "empty list" },
	{ "a,,b", "empty name" },
	{ "a,", "empty name" },
	{ ",a", "empty name" },
	{ "gpu[1-3", "missing ']'" },
	{ "gpu1-3]", "']' without '['" },
	{ "gpu[]", "empty brackets" },
	{ "gpu[[1]]", "nested '['" },
	{ "gpu[3-1]", "runs backwards" },
	{ "gpu[a-b]", "expected a number" },
	{ "gpu[1-]", "after '-'" },
	{ "gpu[1,]", "empty element" },
	{ "gpu[1x]", "unexpected 'x'" },
	{ "gpu[9999999999]", "expected a number" },
	{ "gpu 1", "space" },
};

START_TEST(test_expand_bad)
{
	char **names = (char **)0x1, err[256];
	size_t n = 77;

	errno = 0;
	ck_assert_msg(hostlist_expand(bads[_i].in, 1000, &names, &n, err,
	    sizeof(err)) == -1, "'%s' accepted", bads[_i].in);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(err, bads[_i].msg) != NULL, "'%s': got '%s'",
	    bads[_i].in, err);
	ck_assert_msg(strncmp(err, "hostlist \"", 10) == 0, "%s", err);
	/* Nothing is handed back on failure. */
	ck_assert_ptr_eq(names, (char **)0x1);
	ck_assert_uint_eq(n, 77);
}
END_TEST

START_TEST(test_expand_limit)
{
	char **names, err[256];
	size_t n;

	ck_assert_int_eq(hostlist_expand("n[1-10]", 10, &names, &n, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(n, 10);
	hostlist_free(names, n);
	errno = 0;
	ck_assert_int_eq(hostlist_expand("n[1-11]", 10, &names, &n, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(errno, E2BIG);
	ck_assert_ptr_nonnull(strstr(err, "more than 10 names"));
	/* A product that overflows any counter is refused before
	 * anything is allocated. */
	errno = 0;
	ck_assert_int_eq(hostlist_expand("a[0-999999999]b[0-999999999]"
	    "c[0-999999999]", 1000000, &names, &n, err, sizeof(err)), -1);
	ck_assert_int_eq(errno, E2BIG);
	errno = 0;
	ck_assert_int_eq(hostlist_expand("a[1-5],b[1-6]", 10, &names, &n,
	    NULL, 0), -1);
	ck_assert_int_eq(errno, E2BIG);
}
END_TEST

START_TEST(test_expand_long_name)
{
	char expr[400], **names, err[256];
	size_t n;

	memset(expr, 'x', 250);
	strcpy(expr + 250, "[100000-100001]");
	errno = 0;
	ck_assert_int_eq(hostlist_expand(expr, 10, &names, &n, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "longer than"));
}
END_TEST

static char *
compressed(const char *const *names, size_t n)
{
	char *s = hostlist_compress((char *const *)names, n);

	ck_assert_ptr_nonnull(s);
	return s;
}

START_TEST(test_compress)
{
	static const char *const a[] = { "gpu003", "gpu001", "gpu002",
	    "gpu040" };
	static const char *const b[] = { "node01", "login1", "node02",
	    "node01" };
	static const char *const c[] = { "n8", "n9", "n10", "n12" };
	static const char *const d[] = { "n098", "n099", "n100" };
	static const char *const e[] = { "solo" };
	static const char *const f[] = { "gpu7" };
	static const char *const g[] = { "n1", "n01" };
	char *s;

	s = compressed(a, 4);
	ck_assert_str_eq(s, "gpu[001-003,040]");
	free(s);
	s = compressed(b, 4);
	ck_assert_str_eq(s, "login1,node[01-02]");
	free(s);
	s = compressed(c, 4);
	ck_assert_str_eq(s, "n[8-10,12]");
	free(s);
	s = compressed(d, 3);
	ck_assert_str_eq(s, "n[098-100]");
	free(s);
	s = compressed(e, 1);
	ck_assert_str_eq(s, "solo");
	free(s);
	s = compressed(f, 1);
	ck_assert_str_eq(s, "gpu7");
	free(s);
	s = compressed(g, 2);
	ck_assert_str_eq(s, "n[1,01]");
	free(s);
	s = compressed(NULL, 0);
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

/* In order: a job's nodes in rank order keep it, so that the n-th name
 * expanded is node rank n; only neighbours are grouped. */
START_TEST(test_compress_ordered)
{
	static const struct {
		const char *names[6];
		size_t n;
		const char *want;
	} c[] = {
		{ { "node01", "node02" }, 2, "node[01-02]" },
		{ { "gpu003", "gpu001", "gpu002", "gpu040" }, 4,
		    "gpu[003,001-002,040]" },
		{ { "node02", "login1", "node01", "node02" }, 4,
		    "node02,login1,node[01-02]" },
		{ { "n9", "n10", "n8" }, 3, "n[9-10,8]" },
		{ { "n099", "n100", "n1", "n01" }, 4, "n[099-100,1,01]" },
		{ { "solo" }, 1, "solo" },
		{ { "r1-n2", "r1-n1" }, 2, "r1-n[2,1]" },
	};
	char **again, *s, err[256];
	size_t i, k, m;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		s = hostlist_compress_ordered((char *const *)c[i].names,
		    c[i].n);
		ck_assert_ptr_nonnull(s);
		ck_assert_str_eq(s, c[i].want);
		ck_assert_int_eq(hostlist_expand(s, 100, &again, &m, err,
		    sizeof(err)), 0);
		ck_assert_uint_eq(m, c[i].n);
		for (k = 0; k < m; k++)
			ck_assert_msg(strcmp(again[k], c[i].names[k]) == 0,
			    "'%s' expands to %s at %zu, not %s", s, again[k],
			    k, c[i].names[k]);
		hostlist_free(again, m);
		free(s);
	}
	s = hostlist_compress_ordered(NULL, 0);
	ck_assert_str_eq(s, "");
	free(s);
	errno = 0;
	ck_assert_ptr_null(hostlist_compress_ordered(
	    (char *const *)c[0].names, 3));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(test_compress_bad)
{
	static const char *const a[] = { "ok", "bad[1]" };
	static const char *const b[] = { "" };
	static const char *const c[] = { "a,b" };

	errno = 0;
	ck_assert_ptr_null(hostlist_compress((char *const *)a, 2));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(hostlist_compress((char *const *)b, 1));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(hostlist_compress((char *const *)c, 1));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* Compressing any expansion and expanding it again gives the same set. */
START_TEST(test_round_trip)
{
	static const char *const exprs[] = {
		"gpu[001-128]", "n[1-20,25,30-31],login[1-2],x",
		"r[1-3]-n[08-11]", "a9,a10,a011,a12",
	};
	char **names, **again, *s, err[256];
	size_t n, m, i, k;

	for (i = 0; i < sizeof(exprs) / sizeof(*exprs); i++) {
		ck_assert_int_eq(hostlist_expand(exprs[i], 10000, &names, &n,
		    err, sizeof(err)), 0);
		s = hostlist_compress(names, n);
		ck_assert_ptr_nonnull(s);
		ck_assert_int_eq(hostlist_expand(s, 10000, &again, &m, err,
		    sizeof(err)), 0);
		ck_assert_uint_eq(m, n);
		for (k = 0; k < n; k++) {
			size_t q;
			int found = 0;

			for (q = 0; q < m && !found; q++)
				found = strcmp(names[k], again[q]) == 0;
			ck_assert_msg(found, "%s lost in '%s'", names[k], s);
		}
		hostlist_free(names, n);
		hostlist_free(again, m);
		free(s);
	}
}
END_TEST

/* Several node arguments (cohort drain 'node[03-04]' node01,node03): one
 * sorted set; the bound counts them all; an empty or malformed one fails
 * the whole. */
START_TEST(test_expand_args)
{
	char *args[] = { "node[03-04]", "node01,node03", "gpu7" };
	char *big[] = { "a[1-6]", "b[1-5]" };
	char *empty[] = { "node01", "" };
	char *bad[] = { "node01", "node[1-" };
	char *huge[] = { "n[1-999999999]" };
	char **names, err[256];
	size_t n;

	ck_assert_int_eq(hostlist_expand_args(args, 3, 100, &names, &n, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_str_eq(names[0], "gpu7");
	ck_assert_str_eq(names[1], "node01");
	ck_assert_str_eq(names[2], "node03");
	ck_assert_str_eq(names[3], "node04");
	hostlist_free(names, n);
	/* 11 names with duplicates counted: over 10 in all. */
	ck_assert_int_eq(hostlist_expand_args(big, 2, 10, &names, &n, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(errno, E2BIG);
	ck_assert_ptr_null(names);
	ck_assert_msg(strstr(err, "b[1-5]") != NULL &&
	    strstr(err, "more than 10 names with the others") != NULL, "%s",
	    err);
	ck_assert_int_eq(hostlist_expand_args(big, 2, 11, &names, &n, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(n, 11);
	hostlist_free(names, n);
	ck_assert_int_eq(hostlist_expand_args(empty, 2, 10, &names, &n, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(err, "empty") != NULL, "%s", err);
	ck_assert_int_eq(hostlist_expand_args(bad, 2, 10, &names, &n, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(err, "node[1-") != NULL, "%s", err);
	ck_assert_ptr_null(names);
	ck_assert_uint_eq(n, 0);
	/* A huge range is refused before anything is allocated. */
	ck_assert_int_eq(hostlist_expand_args(huge, 1, HOSTLIST_NODES_MAX,
	    &names, &n, err, sizeof(err)), -1);
	ck_assert_int_eq(errno, E2BIG);
}
END_TEST

static Suite *
hostlist_suite(void)
{
	Suite *s = suite_create("hostlist");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_expand, 0, sizeof(goods) / sizeof(*goods));
	tcase_add_loop_test(tc, test_expand_bad, 0,
	    sizeof(bads) / sizeof(*bads));
	tcase_add_test(tc, test_expand_limit);
	tcase_add_test(tc, test_expand_long_name);
	tcase_add_test(tc, test_compress);
	tcase_add_test(tc, test_compress_ordered);
	tcase_add_test(tc, test_compress_bad);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_expand_args);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(hostlist_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
