/* client/script.c: shell-like word splitting and the #COHORT header
 * block of batch scripts. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/commands.h"
#include "client/pernode.h"
#include "client/script.h"
#include "client/script_sbatch.h"
#include "client/submit.h"
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
	{ { "--container-image=oci:/img:v1", "--container-writable",
	    "--no-container-mount-home", NULL },
	    { "container-image", "oci:/img:v1", "container-writable", "",
	    "no-container-mount-home", "", NULL } },
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
	/* Slurm's totals and per-GPU amounts reach the submit options of
	 * the same names (pernode.h makes them per node). */
	{ { "-n", "8", "-G", "h100:4", "--gpus-per-task=1", NULL },
	    { "ntasks", "8", "gpus", "h100:4", "gpus-per-task", "1", NULL } },
	{ { "--ntasks-per-gpu=2", "--cpus-per-gpu", "4",
	    "--mem-per-gpu=10G", NULL }, { "ntasks-per-gpu", "2",
	    "cpus-per-gpu", "4", "mem-per-gpu", "10G", NULL } },
	/* sbatch's unique abbreviations, of sbatch's names: --ntasks is
	 * never a prefix of --ntasks-per-node, nor --gpus of
	 * --gpus-per-node. */
	{ { "--ntasks=4", "--gpus=2", "--job=x", "--ntasks-per-n=2", NULL },
	    { "ntasks", "4", "gpus", "2", "name", "x", "ntasks-per-node", "2",
	    NULL } },
	{ { "--cpus-per-g=4", "--part", "p1", "--tasks-per-node=3", NULL },
	    { "cpus-per-gpu", "4", "queue", "p1", "ntasks-per-node", "3",
	    NULL } },
	/* Short flags clustered, the last taking the rest as its value. */
	{ { "-HN2", NULL }, { "hold", "", "nodes", "2", NULL } },
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
	ck_assert_msg(script_sbatch_parse((char *const *)c->words, nw, NULL,
	    &o, &n, &err) == 0, "case %d: %s", _i, err.text);
	for (i = 0; c->want[2 * i] != NULL; i++) {
		ck_assert_msg(i < n, "case %d: only %zu options", _i, n);
		ck_assert_msg(o[i].kind == SBATCH_MAP, "case %d: option %zu "
		    "not mapped: %s", _i, i, o[i].text);
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
	    { "--mem-per-cpu: not supported by Cohort (Cohort limits "
	    "memory per node: use --mem", NULL } },
	{ { "--wckey=proj", NULL }, { "--wckey: not supported "
	    "by Cohort (Cohort has no accounting", NULL } },
	{ { "-M", "c2", NULL }, { "-M: not supported", NULL } },
	{ { "--reservation=maint", NULL }, { "--reservation: not supported",
	    NULL } },
	{ { "--nice=10", NULL }, { "--priority", NULL } },
	{ { "--test-only", NULL }, { "--test-only: not supported", NULL } },
	{ { "--frobnicate", NULL }, { "--frobnicate: not an sbatch option",
	    NULL } },
	/* Ambiguous to sbatch: --tim is --time or --time-min, --nt one of
	 * the --ntasks options. */
	{ { "--tim=10", NULL }, { "--tim: ambiguous", NULL } },
	{ { "--nt=2", NULL }, { "--nt: ambiguous", NULL } },
	{ { "-Z", NULL }, { "-Z: not an sbatch option", NULL } },
	{ { "--exclusive=user", NULL }, { "--exclusive: not "
	    "supported by Cohort (only without a value)", NULL } },
	{ { "--requeue=expedite", NULL }, { "--requeue: not supported",
	    NULL } },
	{ { "--hold=1", NULL }, { "--hold: takes no value", NULL } },
	{ { "--partition=a,b", NULL }, { "a job goes to one queue", NULL } },
	{ { "-w", "./nodes.txt", NULL }, { "a file of node names", NULL } },
	{ { "-N", NULL }, { "-N: missing argument", NULL } },
	{ { "--time", NULL }, { "--time: missing argument", NULL } },
	{ { "train.py", NULL }, { "'train.py': not an option", NULL } },
	{ { "-N", "2", "extra", NULL }, { "'extra': not an option", NULL } },
};

/* Each case's first refusal says want[0]. */
START_TEST(test_sbatch_bad)
{
	const struct sbatch_case *c = &sbatch_bad[_i];
	struct script_sbatch_opt *o;
	struct cerr err;
	size_t nw = 0, n, i;

	while (c->words[nw] != NULL)
		nw++;
	cerr_clear(&err);
	ck_assert_int_eq(script_sbatch_parse((char *const *)c->words, nw,
	    NULL, &o, &n, &err), 0);
	for (i = 0; i < n && o[i].kind != SBATCH_REFUSE; i++)
		;
	ck_assert_msg(i < n, "'%s...': not refused", c->words[0]);
	ck_assert_msg(strstr(o[i].text, c->want[0]) != NULL,
	    "'%s...': '%s' lacks '%s'", c->words[0], o[i].text, c->want[0]);
	script_sbatch_free(o, n);
}
END_TEST

/* One line's refusals are all told, with what it accepts around them; a
 * warning for what changes nothing; reading stops at an unknown option,
 * whose value cannot be told from the next option. */
START_TEST(test_sbatch_collect)
{
	const char *words[] = { "--mem-per-cpu=1G", "-N", "2", "--reservation",
	    "p", "--comment=hi", "--hint=nomultithread", "--bogus", "x", "-N",
	    "3" };
	static const enum script_sbatch_kind want[] = { SBATCH_REFUSE,
	    SBATCH_MAP, SBATCH_REFUSE, SBATCH_WARN, SBATCH_WARN,
	    SBATCH_REFUSE };
	struct script_sbatch_opt *o;
	struct cerr err;
	size_t n, i;

	cerr_clear(&err);
	ck_assert_int_eq(script_sbatch_parse((char *const *)words,
	    sizeof(words) / sizeof(words[0]), NULL, &o, &n, &err), 0);
	ck_assert_uint_eq(n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < n; i++)
		ck_assert_msg(o[i].kind == want[i], "option %zu (%s) is %d",
		    i, o[i].orig, (int)o[i].kind);
	ck_assert_ptr_nonnull(strstr(o[3].text, "--comment: accepted"));
	ck_assert_ptr_nonnull(strstr(o[4].text, "--hint: accepted"));
	script_sbatch_free(o, n);
}

/* Mail is Cohort's too: both options map, their values left to the
 * submit command's checks. */
START_TEST(test_sbatch_mail)
{
	const char *words[] = { "--mail-type=BEGIN,end", "--mail-user",
	    "x@example.org" };
	struct script_sbatch_opt *o;
	struct cerr err;
	size_t n;

	cerr_clear(&err);
	ck_assert_int_eq(script_sbatch_parse((char *const *)words, 3, NULL,
	    &o, &n, &err), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(o[0].kind, SBATCH_MAP);
	ck_assert_str_eq(o[0].name, "mail-type");
	ck_assert_str_eq(o[0].value, "BEGIN,end");
	ck_assert_int_eq(o[1].kind, SBATCH_MAP);
	ck_assert_str_eq(o[1].name, "mail-user");
	ck_assert_str_eq(o[1].value, "x@example.org");
	script_sbatch_free(o, n);
}
END_TEST

/* sbatch's command line: the options end at the script, or after "--";
 * sbatch's own options are left to it. */
START_TEST(test_sbatch_cmdline)
{
	const char *w1[] = { "--parsable", "-n", "4", "job.sh", "-N", "9" };
	const char *w2[] = { "-W", "--", "-job.sh" };
	struct script_sbatch_opt *o;
	struct cerr err;
	size_t n, rest;

	cerr_clear(&err);
	ck_assert_int_eq(script_sbatch_parse((char *const *)w1, 6, &rest, &o,
	    &n, &err), 0);
	ck_assert_uint_eq(rest, 3);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(o[0].kind, SBATCH_SELF);
	ck_assert_str_eq(o[0].name, "parsable");
	ck_assert_str_eq(o[1].name, "ntasks");
	script_sbatch_free(o, n);
	ck_assert_int_eq(script_sbatch_parse((char *const *)w2, 3, &rest, &o,
	    &n, &err), 0);
	ck_assert_uint_eq(rest, 2);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(o[0].name, "wait");
	script_sbatch_free(o, n);
}
END_TEST

/* Slurm's totals made per node. The spec starts as sbatch's (one node,
 * one task, no GPU) unless a case gives its fields. */
struct pernode_case {
	struct pernode p;
	uint32_t nodes, tasks, gpus;	/* given spec fields (0: default) */
	bool all_gpus;			/* the spec's GPUs: all of a node's */
	uint32_t want_nodes, want_tasks, want_gpus, want_cpt;
	uint64_t want_mem;
	const char *why;		/* refused with this, or NULL */
};

static const struct pernode_case pernode_cases[] = {
	/* -N 2 -n 8: 4 tasks per node. */
	{ { .ntasks = 8, .nodes_given = true }, 2, 0, 0, false,
	    2, 4, 0, 0, 0, NULL },
	/* -n 4 alone: one node, 4 tasks. */
	{ { .ntasks = 4 }, 0, 0, 0, false, 1, 4, 0, 0, 0, NULL },
	/* -n 8 --ntasks-per-node 4: 2 nodes. */
	{ { .ntasks = 8, .tasks_given = true }, 0, 4, 0, false,
	    2, 4, 0, 0, 0, NULL },
	/* -G 8 -N 2: 4 GPUs per node. */
	{ { .gpus = 8, .nodes_given = true }, 2, 0, 0, false,
	    2, 1, 4, 0, 0, NULL },
	/* --gpus-per-task 1 --ntasks-per-node 4: 4 GPUs per node. */
	{ { .gpus_per_task = 1, .tasks_given = true }, 0, 4, 0, false,
	    1, 4, 4, 0, 0, NULL },
	/* -N 2 -n 8 --gpus-per-task 2: 8 GPUs per node. */
	{ { .ntasks = 8, .gpus_per_task = 2, .nodes_given = true }, 2, 0, 0,
	    false, 2, 4, 8, 0, 0, NULL },
	/* --gpus-per-node 4 --ntasks-per-gpu 2: 8 tasks per node. */
	{ { .ntasks_per_gpu = 2, .gpn_given = true }, 0, 0, 4, false,
	    1, 8, 4, 0, 0, NULL },
	/* -n 8 --ntasks-per-gpu 2: 4 GPUs. */
	{ { .ntasks = 8, .ntasks_per_gpu = 2 }, 0, 0, 0, false,
	    1, 8, 4, 0, 0, NULL },
	/* --cpus-per-gpu 6 with 2 GPUs per task: 12 cores per task. */
	{ { .gpus_per_task = 2, .cpus_per_gpu = 6, .tasks_given = true }, 0,
	    2, 0, false, 1, 2, 4, 12, 0, NULL },
	/* --mem-per-gpu 10G with -G 4: 40G per node. */
	{ { .gpus = 4, .mem_per_gpu_mb = 10240 }, 0, 0, 0, false,
	    1, 1, 4, 0, 40960, NULL },
	/* Not expressible per node: refused with the numbers. */
	{ { .ntasks = 5, .nodes_given = true }, 2, 0, 0, false, 0, 0, 0, 0,
	    0, "--ntasks 5 over 2 nodes" },
	{ { .ntasks = 8, .tasks_given = true, .nodes_given = true }, 2, 2, 0,
	    false, 0, 0, 0, 0, 0, "is 4 tasks per node, not "
	    "--ntasks-per-node 2" },
	{ { .gpus = 6, .nodes_given = true }, 4, 0, 0, false, 0, 0, 0, 0, 0,
	    "--gpus 6 over 4 nodes" },
	{ { .gpus = 8, .gpn_given = true, .nodes_given = true }, 2, 0, 2,
	    false, 0, 0, 0, 0, 0, "is 4 GPUs per node, not --gpus-per-node "
	    "2" },
	{ { .ntasks = 7, .tasks_given = true }, 0, 2, 0, false, 0, 0, 0, 0, 0,
	    "--ntasks 7 is not a multiple of --ntasks-per-node 2" },
	{ { .cpus_per_gpu = 4 }, 0, 0, 0, false, 0, 0, 0, 0, 0,
	    "--cpus-per-gpu 4 needs a number of GPUs" },
	{ { .cpus_per_gpu = 3, .gpus = 1, .tasks_given = true }, 0, 2, 0,
	    false, 0, 0, 0, 0, 0, "3/2 cores per task" },
	{ { .mem_per_gpu_mb = 1024, .gpus = 2, .mem_given = true }, 0, 0, 0,
	    false, 0, 0, 0, 0, 0, "--mem-per-gpu and --mem" },
	{ { .mem_per_gpu_mb = 1024 }, 0, 0, 0, true, 0, 0, 0, 0, 0,
	    "--mem-per-gpu needs a number of GPUs" },
	{ { .gpus = 4, .nodes_given = true }, 0, 0, 0, false, 0, 0, 0, 0, 0,
	    "over 0 nodes" },
};

START_TEST(test_pernode)
{
	const struct pernode_case *c = &pernode_cases[_i];
	struct job_spec spec;
	struct cerr err;
	int rc;

	job_spec_init(&spec);
	spec.cpu_only = !c->all_gpus;
	if (c->p.nodes_given)
		spec.nodes_min = spec.nodes_max = c->nodes;
	if (c->tasks > 0)
		spec.tasks_per_node = c->tasks;
	if (c->gpus > 0) {
		spec.gpus_per_node = c->gpus;
		spec.cpu_only = false;
	}
	cerr_clear(&err);
	rc = pernode_apply(&c->p, &spec, &err);
	if (c->why != NULL) {
		ck_assert_int_eq(rc, -1);
		ck_assert_msg(strstr(err.text, c->why) != NULL,
		    "case %d: '%s' lacks '%s'", _i, err.text, c->why);
	} else {
		ck_assert_msg(rc == 0, "case %d: %s", _i, err.text);
		ck_assert_uint_eq(spec.nodes_min, c->want_nodes);
		ck_assert_uint_eq(spec.nodes_max, c->want_nodes);
		ck_assert_uint_eq(spec.tasks_per_node, c->want_tasks);
		ck_assert_uint_eq(spec.gpus_per_node, c->want_gpus);
		ck_assert(spec.cpu_only == (c->want_gpus == 0));
		ck_assert_uint_eq(spec.cpus_per_task, c->want_cpt);
		ck_assert_uint_eq(spec.mem_per_node_mb, c->want_mem);
	}
	job_spec_clear(&spec);
}
END_TEST

/* What fn writes on stderr while it runs, into buf. */
static void
capture_stderr(char *buf, size_t len, void (*fn)(void *), void *arg)
{
	FILE *tmp = tmpfile();
	int saved = dup(2);
	size_t n;

	ck_assert_ptr_nonnull(tmp);
	fflush(stderr);
	dup2(fileno(tmp), 2);
	fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, len - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
}

struct sbatch_run {
	const char *script;
	int rc;
	struct job_spec spec;
};

static void
run_sbatch(void *arg)
{
	struct sbatch_run *r = arg;

	job_spec_init(&r->spec);
	r->spec.script = strdup(r->script);
	r->spec.script_len = strlen(r->script);
	r->rc = submit_prepare_sbatch(&r->spec, "job.sh", NULL, 0, NULL, 0);
}

/* A script's refusals are told all at once, each with FILE:LINE, and
 * nothing is built. */
START_TEST(test_sbatch_refusals)
{
	struct sbatch_run r = { "#!/bin/sh\n"
	    "#SBATCH --mem-per-cpu=4G\n"
	    "#SBATCH -N 2 --reservation=p\n"
	    "# a comment\n"
	    "#SBATCH --time=1:75 --comment=x\n"
	    "true\n", -1, { 0 } };
	char out[4096];

	capture_stderr(out, sizeof(out), run_sbatch, &r);
	ck_assert_int_eq(r.rc, EXIT_USAGE);
	ck_assert_msg(strstr(out, "job.sh:2: #SBATCH --mem-per-cpu: not "
	    "supported") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "job.sh:3: #SBATCH --reservation: not "
	    "supported") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "job.sh:5: #SBATCH --time: invalid "
	    "duration") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "job.sh:5: warning: #SBATCH --comment: "
	    "accepted") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "3 options refused") != NULL, "%s", out);
	ck_assert_ptr_null(r.spec.script);
	job_spec_clear(&r.spec);
}
END_TEST

/* sbatch's defaults are Slurm's: one node, one task, no GPU, no rerun
 * after a failure, slurm-%j.out; the lines' totals are made per node. */
START_TEST(test_sbatch_defaults)
{
	struct sbatch_run r = { "#!/bin/sh\ntrue\n", -1, { 0 } };
	struct sbatch_run r2 = { "#!/bin/sh\n#SBATCH -N 2 -n 4 -G 4\n"
	    "#SBATCH --array=0-3 --requeue\ntrue\n", -1, { 0 } };
	char out[4096];

	capture_stderr(out, sizeof(out), run_sbatch, &r);
	ck_assert_msg(r.rc == 0, "%s", out);
	ck_assert_uint_eq(r.spec.nodes_min, 1);
	ck_assert_uint_eq(r.spec.tasks_per_node, 1);
	ck_assert(r.spec.cpu_only);
	ck_assert_uint_eq(r.spec.max_restarts, 0);
	ck_assert_str_eq(r.spec.output, "slurm-%j.out");
	job_spec_clear(&r.spec);
	capture_stderr(out, sizeof(out), run_sbatch, &r2);
	ck_assert_msg(r2.rc == 0, "%s", out);
	ck_assert_uint_eq(r2.spec.nodes_min, 2);
	ck_assert_uint_eq(r2.spec.tasks_per_node, 2);
	ck_assert_uint_eq(r2.spec.gpus_per_node, 2);
	ck_assert(!r2.spec.cpu_only);
	ck_assert_uint_eq(r2.spec.max_restarts, JOB_DEFAULT_MAX_RESTARTS);
	ck_assert_str_eq(r2.spec.output, "slurm-%A_%a.out");
	job_spec_clear(&r2.spec);
}
END_TEST

struct submit_run {
	const char *argv[16];
	int rc;
	struct job_spec spec;
};

static void
run_submit(void *arg)
{
	struct submit_run *r = arg;
	struct output_conn_flags cf;
	char **words;
	size_t nwords;
	int argc = 0;

	while (r->argv[argc] != NULL)
		argc++;
	job_spec_init(&r->spec);
	r->rc = submit_prepare(argc, (char **)r->argv, &r->spec, &cf, &words,
	    &nwords);
	strv_free(words, nwords);
}

/* cohort submit: --ntasks and --gpus are Slurm's, never prefixes of the
 * per-node options; no long option may be abbreviated; -p is the
 * queue. */
START_TEST(test_submit_slurm_meanings)
{
	struct submit_run ok = { { "submit", "-N", "2", "--ntasks", "4",
	    "--gpus=4", "-p", "q1", "--", "true", NULL }, -1, { 0 } };
	struct submit_run abbr = { { "submit", "--ntasks-per-n", "4", "--",
	    "true", NULL }, -1, { 0 } };
	struct submit_run abbr2 = { { "submit", "--gpus-per-n=2", "--",
	    "true", NULL }, -1, { 0 } };
	char out[4096];

	capture_stderr(out, sizeof(out), run_submit, &ok);
	ck_assert_msg(ok.rc == 0, "%s", out);
	ck_assert_uint_eq(ok.spec.nodes_min, 2);
	ck_assert_uint_eq(ok.spec.tasks_per_node, 2);
	ck_assert_uint_eq(ok.spec.gpus_per_node, 2);
	ck_assert_str_eq(ok.spec.queue, "q1");
	job_spec_clear(&ok.spec);
	capture_stderr(out, sizeof(out), run_submit, &abbr);
	ck_assert_int_eq(abbr.rc, EXIT_USAGE);
	ck_assert_msg(strstr(out, "--ntasks-per-n: unknown option") != NULL, "%s",
	    out);
	job_spec_clear(&abbr.spec);
	capture_stderr(out, sizeof(out), run_submit, &abbr2);
	ck_assert_int_eq(abbr2.rc, EXIT_USAGE);
	ck_assert_msg(strstr(out, "--gpus-per-n: unknown option") != NULL,
	    "%s", out);
	job_spec_clear(&abbr2.spec);
}
END_TEST


/* The Pyxis options on cohort submit's command line and in a script's
 * #SBATCH and #COHORT lines: each lands in the spec, each bad value is
 * refused naming its option. */
START_TEST(test_submit_container)
{
	struct submit_run ok = { { "submit", "--container-image",
	    "oci:/srv/img:v2", "--container-mounts=/data:/data:ro,/scratch",
	    "--container-workdir=/work", "--container-writable",
	    "--container-env=A,B_2", "--container-mount-home",
	    "--container-name=setup", "--", "true", NULL }, -1, { 0 } };
	static const struct { const char *opt, *want; } bad[] = {
		{ "--container-image=img.sqsh", "--container-image: "
		    "'img.sqsh': the image's path must be absolute" },
		{ "--container-image=oci:rel/dir", "must be absolute" },
		{ "--container-image=nvcr.io#nvidia/pytorch", "a registry's "
		    "image is docker://[REGISTRY#]IMAGE[:TAG]" },
		{ "--container-image=/a/../b.sqsh", "without '.' or '..'" },
		{ "--container-mounts=/a", NULL },
		{ "--container-mounts=/a:b", "--container-mounts: '/a:b': "
		    "SRC and DST must be absolute" },
		{ "--container-mounts=/a:/b:ro+bogus", "unknown flag 'bogus'" },
		{ "--container-mounts=/a:/b:ro:x", "expected SRC:DST[:FLAGS]" },
		{ "--container-mounts=/a:/b:ro+rw", "both ro and rw" },
		{ "--container-mounts=/a:/", "over the image's root" },
		{ "--container-mounts=/a,,/b", "an empty entry" },
		{ "--container-workdir=work", "must be an absolute path" },
		{ "--container-env=A,1B", "'1B' is not a variable name" },
		{ "--container-name=a/b", "letters, digits" },
		{ "--container-save=/x.sqsh", "--container-save: not "
		    "supported: Cohort does not write images back" },
	};
	char out[4096], path[] = "/tmp/check_script_ctrXXXXXX";
	const char *script = "#!/bin/sh\n"
	    "#SBATCH --container-image=/srv/pt.sqsh\n"
	    "#COHORT --container-mounts=/ckpt:/ckpt:rw\n"
	    "true\n";
	size_t i;
	int fd;

	capture_stderr(out, sizeof(out), run_submit, &ok);
	ck_assert_msg(ok.rc == 0, "%s", out);
	ck_assert_str_eq(ok.spec.ctr.image, "oci:/srv/img:v2");
	ck_assert_str_eq(ok.spec.ctr.mounts, "/data:/data:ro,/scratch");
	ck_assert_str_eq(ok.spec.ctr.workdir, "/work");
	ck_assert_str_eq(ok.spec.ctr.env, "A,B_2");
	ck_assert_str_eq(ok.spec.ctr.name, "setup");
	ck_assert(ok.spec.ctr.writable);
	ck_assert(ok.spec.ctr.mount_home);
	job_spec_clear(&ok.spec);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct submit_run r = { { "submit", "--container-image=/i.sqsh",
		    bad[i].opt, "--", "true", NULL }, -1, { 0 } };

		capture_stderr(out, sizeof(out), run_submit, &r);
		if (bad[i].want == NULL) {
			/* SRC alone: SRC:SRC. */
			ck_assert_msg(r.rc == 0, "%s: %s", bad[i].opt, out);
		} else {
			ck_assert_msg(r.rc == EXIT_USAGE, "%s: accepted",
			    bad[i].opt);
			ck_assert_msg(strstr(out, bad[i].want) != NULL,
			    "%s: '%s' lacks '%s'", bad[i].opt, out,
			    bad[i].want);
		}
		job_spec_clear(&r.spec);
	}

	/* A script's lines; the command line's --container-readonly wins
	 * over nothing and keeps the image read only. */
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, script, strlen(script)),
	    (ssize_t)strlen(script));
	close(fd);
	{
		struct submit_run sr = { { "submit", "--container-readonly",
		    path, NULL }, -1, { 0 } };

		capture_stderr(out, sizeof(out), run_submit, &sr);
		unlink(path);
		ck_assert_msg(sr.rc == 0, "%s", out);
		ck_assert_str_eq(sr.spec.ctr.image, "/srv/pt.sqsh");
		ck_assert_str_eq(sr.spec.ctr.mounts, "/ckpt:/ckpt:rw");
		ck_assert(!sr.spec.ctr.writable);
		job_spec_clear(&sr.spec);
	}
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
	tcase_add_test(tc, test_sbatch_collect);
	tcase_add_test(tc, test_sbatch_mail);
	tcase_add_loop_test(tc, test_pernode, 0,
	    sizeof(pernode_cases) / sizeof(pernode_cases[0]));
	tcase_add_test(tc, test_sbatch_refusals);
	tcase_add_test(tc, test_sbatch_defaults);
	tcase_add_test(tc, test_submit_slurm_meanings);
	tcase_add_test(tc, test_submit_container);
	tcase_add_test(tc, test_sbatch_cmdline);
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
