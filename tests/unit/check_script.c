/* client/script.c: shell-like word splitting and the #COHORT header
 * block of batch scripts. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/script.h"
#include "client/script_sbatch.h"
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

/* #COHORT and #SBATCH lines, in order, with their line numbers. */
START_TEST(test_lines)
{
	const char text[] = "#!/bin/bash\n#SBATCH -N 2 # two\n#COHORT --x\n"
	    "# c\n#SBATCHX -t 1\n#SBATCH\t--time=1:00\n\n#SBATCH\n"
	    "echo\n#SBATCH --late\n";
	struct script_line *l;
	struct cerr err;
	size_t n;

	cerr_clear(&err);
	ck_assert_int_eq(script_lines(text, strlen(text), &l, &n, &err), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(l[0].tag, SCRIPT_TAG_SBATCH);
	ck_assert_uint_eq(l[0].lineno, 2);
	ck_assert_uint_eq(l[0].argc, 2);
	ck_assert_str_eq(l[0].argv[0], "-N");
	ck_assert_str_eq(l[0].argv[1], "2");
	ck_assert_int_eq(l[1].tag, SCRIPT_TAG_COHORT);
	ck_assert_uint_eq(l[1].lineno, 3);
	ck_assert_int_eq(l[2].tag, SCRIPT_TAG_SBATCH);
	ck_assert_uint_eq(l[2].lineno, 6);
	ck_assert_str_eq(l[2].argv[0], "--time=1:00");
	ck_assert_uint_eq(l[3].lineno, 8);
	ck_assert_uint_eq(l[3].argc, 0);
	script_lines_free(l, n);

	/* A quoting error in an #SBATCH line names its line. */
	ck_assert_int_eq(script_lines("#!/bin/sh\n#SBATCH -J 'x\n", 22, &l, &n,
	    &err), -1);
	ck_assert_str_eq(err.text, "line 2: unterminated single quote");
	/* script_options still reads #COHORT lines only. */
	{
		char **argv;
		size_t argc;

		ck_assert_int_eq(script_options(text, strlen(text), &argv,
		    &argc, &err), 0);
		ck_assert_uint_eq(argc, 1);
		ck_assert_str_eq(argv[0], "--x");
		strv_free(argv, argc);
	}
}
END_TEST

#define MAXO 6

struct sbatch_case {
	const char *words[MAXW];	/* NULL-terminated */
	const char *want[2 * MAXO + 1];	/* name, value ("" for none)... */
};

static const struct sbatch_case sbatch_ok[] = {
	{ { "--mem=4G", "-c", "8", NULL },
	    { "mem-per-node", "4G", "cpus-per-task", "8", NULL } },
	{ { "--mem", "512", "--cpus-per-task=2", NULL },
	    { "mem-per-node", "512", "cpus-per-task", "2", NULL } },
	{ { "-N", "2", NULL }, { "nodes", "2", NULL } },
	{ { "-N2", NULL }, { "nodes", "2", NULL } },
	{ { "--nodes=2-4", NULL }, { "nodes", "2:4", NULL } },
	{ { "--nodes", "3", NULL }, { "nodes", "3", NULL } },
	{ { "-t", "1-00:00:00", "-J", "train", NULL },
	    { "time", "1-00:00:00", "name", "train", NULL } },
	{ { "--time=30", "--job-name=a b", NULL },
	    { "time", "30", "name", "a b", NULL } },
	{ { "--ntasks-per-node=8", "--gpus-per-node=a100:4", NULL },
	    { "ntasks-per-node", "8", "gpus-per-node", "a100:4", NULL } },
	{ { "--gres=gpu:8", NULL }, { "gres", "gpu:8", NULL } },
	{ { "-o", "%x-%j.out", "-e%x-%j.err", NULL },
	    { "output", "%x-%j.out", "error", "%x-%j.err", NULL } },
	{ { "-a", "0-9%2", "-d", "afterok:12", NULL },
	    { "array", "0-9%2", "dependency", "afterok:12", NULL } },
	{ { "--signal=B:USR1@90", "--export=ALL,X=1", NULL },
	    { "signal", "B:USR1@90", "export", "ALL,X=1", NULL } },
	{ { "--requeue", "--no-requeue", "--exclusive", "-H", "--hold", NULL },
	    { "requeue", "", "no-requeue", "", "exclusive", "", "hold", "",
	    "hold", "", NULL } },
	{ { "-w", "gpu[01-02]", "--exclude=gpu07", NULL },
	    { "nodelist", "gpu[01-02]", "exclude", "gpu07", NULL } },
	{ { "-D", "/scratch/run", "-p", "research", NULL },
	    { "chdir", "/scratch/run", "queue", "research", NULL } },
	{ { "--partition=gpu", NULL }, { "queue", "gpu", NULL } },
	{ { "-C", "fp64&ib", "--constraint=a|b", NULL },
	    { "constraint", "fp64&ib", "constraint", "a|b", NULL } },
	{ { NULL }, { NULL } },
};

START_TEST(test_sbatch_ok)
{
	const struct sbatch_case *c = &sbatch_ok[_i];
	struct script_sbatch_opt *o;
	struct cerr err;
	size_t nw = 0, n, i;

	while (c->words[nw] != NULL)
		nw++;
	cerr_clear(&err);
	ck_assert_msg(script_sbatch_parse((char *const *)c->words, nw, &o, &n,
	    &err) == 0, "case %d: %s", _i, err.text);
	for (i = 0; c->want[2 * i] != NULL; i++) {
		ck_assert_msg(i < n, "case %d: only %zu options", _i, n);
		ck_assert_str_eq(o[i].name, c->want[2 * i]);
		if (c->want[2 * i + 1][0] == '\0')
			ck_assert_ptr_null(o[i].value);
		else
			ck_assert_str_eq(o[i].value, c->want[2 * i + 1]);
	}
	ck_assert_uint_eq(n, i);
	script_sbatch_free(o, n);
}
END_TEST

static const struct sbatch_case sbatch_bad[] = {
	{ { "--mem-per-cpu=4G", NULL },
	    { "#SBATCH --mem-per-cpu: not supported by Cohort (Cohort limits "
	    "memory per node: use --mem)", NULL } },
	{ { "--mem-per-gpu", "4G", NULL },
	    { "#SBATCH --mem-per-gpu: not supported", NULL } },
	{ { "--cpus-per-gpu=8", NULL }, { "#SBATCH --cpus-per-gpu: not "
	    "supported by Cohort (Cohort binds cores per task: use "
	    "--cpus-per-task)", NULL } },
	{ { "--account=proj", NULL }, { "#SBATCH --account: not supported "
	    "by Cohort (Cohort has no accounts", NULL } },
	{ { "-A", "proj", NULL }, { "#SBATCH -A: not supported", NULL } },
	{ { "--ntasks=16", NULL }, { "#SBATCH --ntasks: not supported by "
	    "Cohort (give -N and --ntasks-per-node", NULL } },
	{ { "--qos=high", NULL }, { "#SBATCH --qos: not supported", NULL } },
	{ { "--nice=10", NULL }, { "--priority", NULL } },
	{ { "--mail-type=END", NULL }, { "Cohort sends no mail", NULL } },
	{ { "--mail-user=a@b", NULL }, { "#SBATCH --mail-user:", NULL } },
	{ { "--frobnicate", NULL }, { "#SBATCH --frobnicate: not supported "
	    "by Cohort (see cohort submit --help", NULL } },
	{ { "--tim=10", NULL }, { "#SBATCH --tim: not supported", NULL } },
	{ { "-Z", NULL }, { "#SBATCH -Z: not supported", NULL } },
	{ { "--exclusive=user", NULL }, { "#SBATCH --exclusive: not "
	    "supported by Cohort with a value", NULL } },
	{ { "--hold=1", NULL }, { "#SBATCH --hold: not supported", NULL } },
	{ { "--partition=a,b", NULL }, { "a job goes to one queue", NULL } },
	{ { "-w", "./nodes.txt", NULL }, { "a file of node names", NULL } },
	{ { "-N", NULL }, { "#SBATCH -N: missing argument", NULL } },
	{ { "--time", NULL }, { "#SBATCH --time: missing argument", NULL } },
	{ { "train.py", NULL }, { "#SBATCH: unexpected argument 'train.py'",
	    NULL } },
	{ { "-N", "2", "extra", NULL }, { "unexpected argument 'extra'",
	    NULL } },
};

START_TEST(test_sbatch_bad)
{
	const struct sbatch_case *c = &sbatch_bad[_i];
	struct script_sbatch_opt *o = (void *)1;
	struct cerr err;
	size_t nw = 0, n = 9;

	while (c->words[nw] != NULL)
		nw++;
	cerr_clear(&err);
	ck_assert_int_eq(script_sbatch_parse((char *const *)c->words, nw, &o,
	    &n, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_msg(strstr(err.text, c->want[0]) != NULL,
	    "'%s...': '%s' lacks '%s'", c->words[0], err.text, c->want[0]);
	ck_assert_ptr_null(o);
	ck_assert_uint_eq(n, 0);
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
	tcase_add_test(tc, test_lines);
	tcase_add_loop_test(tc, test_sbatch_ok, 0,
	    sizeof(sbatch_ok) / sizeof(sbatch_ok[0]));
	tcase_add_loop_test(tc, test_sbatch_bad, 0,
	    sizeof(sbatch_bad) / sizeof(sbatch_bad[0]));
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
