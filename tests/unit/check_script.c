/* client/script.c: shell-like word splitting and the #COHORT header
 * block of batch scripts. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/script.h"
#include "lib/job.h"

#define MAXW 8

struct split_case {
	const char *in;
	const char *want[MAXW];	/* NULL-terminated */
};

static const struct split_case splits[] = {
	{ "", { NULL } },
	{ "   \t ", { NULL } },
	{ "a b  c", { "a", "b", "c", NULL } },
	{ "\t--time\t1h ", { "--time", "1h", NULL } },
	{ "'hello world'", { "hello world", NULL } },
	{ "'a\"b\\c'", { "a\"b\\c", NULL } },		/* nothing special in '' */
	{ "\"a b\" c", { "a b", "c", NULL } },
	{ "\"q\\\"q\"", { "q\"q", NULL } },		/* \" */
	{ "\"\\\\ \\$ \\`\"", { "\\ $ `", NULL } },	/* \\ \$ \` */
	{ "\"a\\nb\"", { "a\\nb", NULL } },		/* other \ kept */
	{ "a\\ b", { "a b", NULL } },			/* unquoted \ */
	{ "\\'x", { "'x", NULL } },
	{ "''", { "", NULL } },				/* an empty word */
	{ "a '' b", { "a", "", "b", NULL } },
	{ "\"\"", { "", NULL } },
	{ "a'b'\"c\"d", { "abcd", NULL } },		/* one word */
	{ "--env 'K=v w'", { "--env", "K=v w", NULL } },
	{ "--env=\"K=v w\"", { "--env=K=v w", NULL } },
	{ "a # comment 'unterminated", { "a", NULL } },
	{ "a#b", { "a#b", NULL } },			/* # inside a word */
	{ "'#' \"#\"", { "#", "#", NULL } },
	{ "x\r", { "x", NULL } },			/* CRLF line end */
};

static void
check_words(char **argv, size_t argc, const char *const *want,
    const char *in)
{
	size_t n = 0;

	while (want[n] != NULL)
		n++;
	ck_assert_msg(argc == n, "'%s': %zu words, want %zu", in, argc, n);
	for (n = 0; n < argc; n++)
		ck_assert_msg(strcmp(argv[n], want[n]) == 0,
		    "'%s': word %zu is '%s', want '%s'", in, n, argv[n],
		    want[n]);
	ck_assert_msg(argv[argc] == NULL, "'%s': vector not NULL-terminated",
	    in);
}

START_TEST(test_split)
{
	const struct split_case *c = &splits[_i];
	struct cerr err;
	char **argv = NULL;
	size_t argc = 99;

	cerr_clear(&err);
	ck_assert_msg(script_split(c->in, &argv, &argc, &err) == 0,
	    "'%s' refused: %s", c->in, err.text);
	check_words(argv, argc, c->want, c->in);
	strv_free(argv, argc);
}
END_TEST

struct bad_case {
	const char *in;
	const char *why;
};

static const struct bad_case bad_splits[] = {
	{ "'open", "unterminated single quote" },
	{ "a \"open", "unterminated double quote" },
	{ "\"a\\\"", "unterminated double quote" },	/* \" does not close */
	{ "a\\", "backslash at the end" },
};

START_TEST(test_split_bad)
{
	const struct bad_case *c = &bad_splits[_i];
	struct cerr err;
	char **argv = (char **)1;
	size_t argc = 99;

	cerr_clear(&err);
	ck_assert_int_eq(script_split(c->in, &argv, &argc, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_msg(strstr(err.text, c->why) != NULL, "'%s': '%s'", c->in,
	    err.text);
	ck_assert_ptr_null(argv);
	ck_assert_uint_eq(argc, 0);
}
END_TEST

struct opt_case {
	const char *name;
	const char *text;
	const char *want[MAXW];
};

static const struct opt_case opts[] = {
	{ "empty script", "", { NULL } },
	{ "no directives", "#!/bin/sh\necho hi\n", { NULL } },
	{ "basic", "#!/bin/bash\n#COHORT --nodes 2\n#COHORT --time 1h\n"
	    "echo\n", { "--nodes", "2", "--time", "1h", NULL } },
	{ "no shebang", "#COHORT --name x\ntrue\n", { "--name", "x", NULL } },
	{ "comments and blanks", "#!/bin/sh\n# about\n\n   \n#COHORT -a\n"
	    "  # indented comment\n#COHORT -b\nrun\n", { "-a", "-b", NULL } },
	{ "after code ignored", "#!/bin/sh\n#COHORT --a\necho\n#COHORT --b\n",
	    { "--a", NULL } },
	{ "indented code ends it", "#!/bin/sh\n  echo\n#COHORT --b\n",
	    { NULL } },
	{ "only the tag at column 0", "#!/bin/sh\n #COHORT --x\n#COHORT --y\n",
	    { "--y", NULL } },
	{ "tag needs a blank", "#!/bin/sh\n#COHORTS --x\n#COHORT\t--y\n",
	    { "--y", NULL } },
	{ "bare tag", "#!/bin/sh\n#COHORT\n#COHORT --z\n", { "--z", NULL } },
	{ "quoting", "#!/bin/sh\n#COHORT --env 'A=x y' --name \"n m\"\n",
	    { "--env", "A=x y", "--name", "n m", NULL } },
	{ "no trailing newline", "#!/bin/sh\n#COHORT --last", { "--last",
	    NULL } },
	{ "CRLF", "#!/bin/sh\r\n#COHORT --nodes 2\r\n\r\n#COHORT --e 'a b'\r\n"
	    "echo\r\n#COHORT --late\r\n", { "--nodes", "2", "--e", "a b",
	    NULL } },
	{ "shebang only on line 1", "#COHORT --a\n#!/bin/sh\n#COHORT --b\n",
	    { "--a", "--b", NULL } },
	{ "inline comment", "#!/bin/sh\n#COHORT --time 2h # two hours\n",
	    { "--time", "2h", NULL } },
	{ "bad quote after code is not read",
	    "#!/bin/sh\nx=1\n#COHORT 'open\n", { NULL } },
};

START_TEST(test_options)
{
	const struct opt_case *c = &opts[_i];
	struct cerr err;
	char **argv = NULL;
	size_t argc = 99;

	cerr_clear(&err);
	ck_assert_msg(script_options(c->text, strlen(c->text), &argv, &argc,
	    &err) == 0, "%s: refused: %s", c->name, err.text);
	check_words(argv, argc, c->want, c->name);
	strv_free(argv, argc);
}
END_TEST

static const struct bad_case bad_opts[] = {
	{ "#!/bin/sh\n#COHORT 'open\n", "line 2: unterminated single quote" },
	{ "#!/bin/sh\n# c\n\n#COHORT --ok\n#COHORT --env \"x\n",
	    "line 5: unterminated double quote" },
	{ "#COHORT a\\", "line 1: backslash at the end" },
	{ "#!/bin/sh\r\n#COHORT --x\r\n#COHORT 'y\r\n",
	    "line 3: unterminated single quote" },
};

START_TEST(test_options_bad)
{
	const struct bad_case *c = &bad_opts[_i];
	struct cerr err;
	char **argv = (char **)1;
	size_t argc = 99;

	cerr_clear(&err);
	ck_assert_int_eq(script_options(c->in, strlen(c->in), &argv, &argc,
	    &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_msg(strncmp(err.text, c->why, strlen(c->why)) == 0,
	    "got '%s', want '%s'", err.text, c->why);
	ck_assert_ptr_null(argv);
	ck_assert_uint_eq(argc, 0);
}
END_TEST

/* The text is a buffer with a length, not a C string: bytes past len
 * are not read, and a NUL inside a directive is refused. */
START_TEST(test_options_len)
{
	const char text[] = "#!/bin/sh\n#COHORT --a\n#COHORT --b\n";
	const char nul[] = "#!/bin/sh\n#COHORT --a\0b\n";
	struct cerr err;
	char **argv;
	size_t argc;

	ck_assert_int_eq(script_options(text, strlen("#!/bin/sh\n#COHORT --a"),
	    &argv, &argc, &err), 0);
	ck_assert_uint_eq(argc, 1);
	ck_assert_str_eq(argv[0], "--a");
	strv_free(argv, argc);

	ck_assert_int_eq(script_options(nul, sizeof(nul) - 1, &argv, &argc,
	    &err), -1);
	ck_assert_msg(strstr(err.text, "line 2") != NULL, "%s", err.text);
}
END_TEST

/* A long header: many lines and long words, to exercise the buffers. */
START_TEST(test_options_many)
{
	char *text = NULL, *word;
	size_t len = 0, argc, i;
	char **argv;
	struct cerr err;
	FILE *fp = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(fp);
	fputs("#!/bin/sh\n", fp);
	for (i = 0; i < 500; i++)
		fprintf(fp, "#COHORT --env K%zu='%0*d'\n", i, 300, (int)i);
	fputs("exec true\n", fp);
	fclose(fp);
	ck_assert_int_eq(script_options(text, len, &argv, &argc, &err), 0);
	ck_assert_uint_eq(argc, 1000);
	for (i = 0; i < 500; i++) {
		ck_assert_str_eq(argv[2 * i], "--env");
		word = argv[2 * i + 1];
		ck_assert_uint_eq(strlen(word), strlen("K=") +
		    (i >= 10) + (i >= 100) + 1 + 300);
	}
	strv_free(argv, argc);
	free(text);
}
END_TEST

static Suite *
script_suite(void)
{
	Suite *s = suite_create("script");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_split, 0,
	    sizeof(splits) / sizeof(splits[0]));
	tcase_add_loop_test(tc, test_split_bad, 0,
	    sizeof(bad_splits) / sizeof(bad_splits[0]));
	tcase_add_loop_test(tc, test_options, 0, sizeof(opts) / sizeof(opts[0]));
	tcase_add_loop_test(tc, test_options_bad, 0,
	    sizeof(bad_opts) / sizeof(bad_opts[0]));
	tcase_add_test(tc, test_options_len);
	tcase_add_test(tc, test_options_many);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(script_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
