/* lib/constraint.c: matching, precedence, parentheses and every refusal
 * with its column. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/constraint.h"

static const char *const node[] = { "fp64", "ib", "a100" };
#define NNODE (sizeof(node) / sizeof(*node))

static const struct {
	const char *expr;
	int want;
} matches[] = {
	{ "fp64", 1 },
	{ "nvl72", 0 },
	{ "fp64&ib", 1 },
	{ "fp64 & nvl72", 0 },
	{ "nvl72|ib", 1 },
	{ "nvl72|x", 0 },
	/* '&' binds tighter: x | (fp64 & ib), not (x | fp64) & nope. */
	{ "x|fp64&ib", 1 },
	{ "fp64|x&nope", 1 },
	{ "(fp64|x)&nope", 0 },
	{ "nope&x|ib", 1 },
	{ "nope&(x|ib)", 0 },
	{ "((fp64))", 1 },
	{ " ( a100 | x ) & ( ib ) ", 1 },
	{ "fp6", 0 },		/* whole names only */
	{ "FP64", 0 },		/* names compare exactly */
	{ "a.b_c-d", 0 },
};

START_TEST(test_match)
{
	ck_assert_msg(constraint_parse(matches[_i].expr, NULL, 0) == 0, "%s",
	    matches[_i].expr);
	ck_assert_int_eq(constraint_match(matches[_i].expr, node, NNODE),
	    matches[_i].want);
}
END_TEST

static const struct {
	const char *expr;
	const char *want;	/* start of the message */
} bads[] = {
	{ "", "at column 1: expected a feature name" },
	{ "fp64&", "at column 6: expected a feature name" },
	{ "|ib", "at column 1: expected a feature name, not '|'" },
	{ "fp64&&ib", "at column 6: expected a feature name, not '&'" },
	{ "fp64 ib", "at column 6: expected & or |, not 'i'" },
	{ "(fp64", "at column 6: missing ')'" },
	{ "fp64)", "at column 5: unmatched ')'" },
	{ "()", "at column 2: expected a feature name, not ')'" },
	{ "[fp64|ib]", "at column 1: Slurm's [...] matching OR is not" },
	{ "fp64*2", "at column 5: Slurm's feature counts (*N) are not" },
	{ "fp64,ib", "at column 5: ',' is not an operator" },
	{ "fp64$", "at column 5: expected & or |, not '$'" },
	{ "fp\001", "at column 3: expected & or |, not byte 0x01" },
	{ "a&xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
	    "at column 3: feature name longer than 64" },
};

START_TEST(test_bad)
{
	char err[256] = "";

	errno = 0;
	ck_assert_int_eq(constraint_parse(bads[_i].expr, err, sizeof(err)),
	    -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strncmp(err, bads[_i].want, strlen(bads[_i].want)) == 0,
	    "'%s': got '%s', want '%s...'", bads[_i].expr, err, bads[_i].want);
	ck_assert_int_eq(constraint_match(bads[_i].expr, node, NNODE), -1);
}
END_TEST

START_TEST(test_depth)
{
	char expr[200], err[128];
	int i;

	for (i = 0; i < 40; i++)
		expr[i] = '(';
	strcpy(expr + 40, "a");
	for (i = 0; i < 40; i++)
		strcat(expr, ")");
	ck_assert_int_eq(constraint_parse(expr, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "nest too deep"));
	/* 32 levels are fine. */
	memset(expr, '(', 32);
	strcpy(expr + 32, "a");
	for (i = 0; i < 32; i++)
		strcat(expr, ")");
	ck_assert_int_eq(constraint_parse(expr, err, sizeof(err)), 0);
}
END_TEST

START_TEST(test_names)
{
	ck_assert(constraint_name_ok("fp64"));
	ck_assert(constraint_name_ok("a.b_c-D9"));
	ck_assert(!constraint_name_ok(""));
	ck_assert(!constraint_name_ok("a b"));
	ck_assert(!constraint_name_ok("a&b"));
	ck_assert(constraint_name_ok(
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"));
	ck_assert(!constraint_name_ok(
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"));
}
END_TEST

static int
collect(const char *name, size_t len, void *arg)
{
	strncat(arg, name, len);
	strcat(arg, " ");
	return 0;
}

static int
stop_at_ib(const char *name, size_t len, void *arg)
{
	(void)arg;
	return len == 2 && memcmp(name, "ib", 2) == 0 ? 7 : 0;
}

START_TEST(test_each_name)
{
	char buf[128] = "";

	ck_assert_int_eq(constraint_names("(fp64|ib)&x", collect, buf), 0);
	ck_assert_str_eq(buf, "fp64 ib x ");
	ck_assert_int_eq(constraint_names("fp64|ib&x", stop_at_ib, NULL), 7);
}
END_TEST

static Suite *
constraint_suite(void)
{
	Suite *s = suite_create("constraint");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_match, 0,
	    sizeof(matches) / sizeof(*matches));
	tcase_add_loop_test(tc, test_bad, 0, sizeof(bads) / sizeof(*bads));
	tcase_add_test(tc, test_depth);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_each_name);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(constraint_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
