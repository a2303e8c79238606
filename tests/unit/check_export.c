/* client/export.c: --export ALL|NONE|VAR[,VAR=value...], the filter of
 * what never travels, --env on top, and the environment limits. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/export.h"
#include "lib/job.h"

/* A submitter's environment with something of every kind. */
static char *const session[] = {
	"PATH=/home/a/venv/bin:/usr/bin",
	"VIRTUAL_ENV=/home/a/venv",
	"LD_LIBRARY_PATH=/opt/cuda/lib64",
	"TERM=xterm-256color",
	"FOO=from-env",
	"SSH_AUTH_SOCK=/tmp/ssh-x/agent.1",
	"SSH_CONNECTION=1.2.3.4 5 6.7.8.9 22",
	"DISPLAY=:0",
	"WAYLAND_DISPLAY=wayland-0",
	"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus",
	"XDG_RUNTIME_DIR=/run/user/1000",
	"XDG_SESSION_ID=3",
	"XDG_CONFIG_HOME=/home/a/.config",
	"KRB5CCNAME=FILE:/tmp/krb5cc_1000",
	"COHORT_SERVER=ctl:7000",
	"SLURM_JOB_ID=77",
	"SLURMD_NODENAME=n1",
	"PWD=/home/a",
	"OLDPWD=/",
	"SHLVL=2",
	"_=/usr/bin/cohort",
	"HOME=/Users/a",
	"USER=a",
	"RANK=3",
	"CUDA_VISIBLE_DEVICES=0",
	"MASTER_ADDR=10.0.0.1",
	"BASH_FUNC_module%%=() {  eval $(lmod bash \"$@\")\n}",
	"1BAD=x",
	"LATIN=caf\xe9",
	NULL,
};

static const char *
get(char **env, size_t n, const char *key)
{
	size_t i, k = strlen(key);

	for (i = 0; i < n; i++)
		if (strncmp(env[i], key, k) == 0 && env[i][k] == '=')
			return env[i] + k + 1;
	return NULL;
}

static size_t
count(char **env, size_t n, const char *key)
{
	size_t i, k = strlen(key), c = 0;

	for (i = 0; i < n; i++)
		if (strncmp(env[i], key, k) == 0 && env[i][k] == '=')
			c++;
	return c;
}

static void
build_ok(const char *mode, char *const *extra, size_t nextra, char ***env,
    size_t *n, struct export_note *note)
{
	struct cerr err;

	cerr_clear(&err);
	ck_assert_msg(export_build(mode, session, extra, nextra, env, n, note,
	    &err) == 0, "%s: %s", mode ? mode : "(default)", err.text);
	ck_assert_ptr_nonnull(*env);
	ck_assert_ptr_null((*env)[*n]);
}

START_TEST(test_all_filters)
{
	static const char *const gone[] = { "SSH_AUTH_SOCK", "SSH_CONNECTION",
	    "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS",
	    "XDG_RUNTIME_DIR", "XDG_SESSION_ID", "KRB5CCNAME",
	    "COHORT_SERVER", "SLURM_JOB_ID", "SLURMD_NODENAME", "PWD",
	    "OLDPWD", "SHLVL", "_", "HOME", "USER", "RANK",
	    "CUDA_VISIBLE_DEVICES", "MASTER_ADDR", "BASH_FUNC_module%%",
	    "1BAD", "LATIN" };
	struct export_note note;
	const char *modes[] = { NULL, "ALL" };
	char **env;
	size_t n, i, m;

	for (m = 0; m < 2; m++) {
		build_ok(modes[m], NULL, 0, &env, &n, &note);
		ck_assert_str_eq(get(env, n, "PATH"),
		    "/home/a/venv/bin:/usr/bin");
		ck_assert_str_eq(get(env, n, "VIRTUAL_ENV"), "/home/a/venv");
		ck_assert_str_eq(get(env, n, "LD_LIBRARY_PATH"),
		    "/opt/cuda/lib64");
		ck_assert_str_eq(get(env, n, "TERM"), "xterm-256color");
		ck_assert_str_eq(get(env, n, "XDG_CONFIG_HOME"),
		    "/home/a/.config");
		for (i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
			ck_assert_msg(get(env, n, gone[i]) == NULL,
			    "%s travelled", gone[i]);
		ck_assert_uint_eq(n, 6);	/* + FOO */
		/* The value that is not UTF-8 is said, not lost unseen. */
		ck_assert_uint_eq(note.nskipped, 1);
		ck_assert_str_eq(note.names, "LATIN");
		strv_free(env, n);
	}
}
END_TEST

START_TEST(test_none)
{
	char *extra[] = { "A=1", "B=2" };
	char **env;
	size_t n;

	build_ok("NONE", NULL, 0, &env, &n, NULL);
	ck_assert_uint_eq(n, 0);
	strv_free(env, n);
	build_ok("none", extra, 2, &env, &n, NULL);	/* as sbatch */
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(env[0], "A=1");
	ck_assert_str_eq(env[1], "B=2");
	strv_free(env, n);
}
END_TEST

START_TEST(test_list)
{
	char **env;
	size_t n;

	/* Only those named, values from the environment or the list; a
	 * name that is not set is nothing to send. */
	build_ok("VIRTUAL_ENV,FOO=bar,NOT_SET", NULL, 0, &env, &n, NULL);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(env[0], "VIRTUAL_ENV=/home/a/venv");
	ck_assert_str_eq(env[1], "FOO=bar");
	strv_free(env, n);
	/* A name listed travels even if ALL would leave it out. */
	build_ok("DISPLAY", NULL, 0, &env, &n, NULL);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(env[0], "DISPLAY=:0");
	strv_free(env, n);
	/* A value may hold '=' and be empty. */
	build_ok("X=a=b,Y=", NULL, 0, &env, &n, NULL);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(get(env, n, "X"), "a=b");
	ck_assert_str_eq(get(env, n, "Y"), "");
	strv_free(env, n);
}
END_TEST

START_TEST(test_all_plus)
{
	char *extra[] = { "FOO=from-flag", "PATH=/x" };
	char **env;
	size_t n, m;
	const char *modes[] = { "ALL,FOO=bar", "FOO=bar,ALL" };

	/* The explicit value wins over the environment wherever ALL
	 * stands, and --env wins over both; each name once. */
	for (m = 0; m < 2; m++) {
		build_ok(modes[m], NULL, 0, &env, &n, NULL);
		ck_assert_str_eq(get(env, n, "FOO"), "bar");
		ck_assert_uint_eq(count(env, n, "FOO"), 1);
		ck_assert_ptr_nonnull(get(env, n, "VIRTUAL_ENV"));
		ck_assert_ptr_null(get(env, n, "SSH_AUTH_SOCK"));
		strv_free(env, n);
		build_ok(modes[m], extra, 2, &env, &n, NULL);
		ck_assert_str_eq(get(env, n, "FOO"), "from-flag");
		ck_assert_str_eq(get(env, n, "PATH"), "/x");
		ck_assert_uint_eq(count(env, n, "FOO"), 1);
		ck_assert_uint_eq(count(env, n, "PATH"), 1);
		strv_free(env, n);
	}
}
END_TEST

static const struct {
	const char *mode;
	const char *want;
} bad[] = {
	{ "", "empty item" },
	{ "A,,B", "empty item" },
	{ "A,", "empty item" },
	{ "NONE,A", "NONE stands alone" },
	{ "1X", "'1X' is not a variable name" },
	{ "A-B=1", "'A-B' is not a variable name" },
	{ "=v", "'' is not a variable name" },
	{ "COHORT_X=1", "COHORT_* variables are set by Cohort" },
	{ "COHORT_SERVER", "COHORT_* variables" },
	{ "all,none", "NONE stands alone" },
	{ "LATIN", "--export LATIN: its value is not valid UTF-8" },
	{ "ALL,X=\xff", "--export X: its value is not valid UTF-8" },
	{ "X=1,Y=\xc3", "--export Y: its value is not valid UTF-8" },
};

START_TEST(test_bad)
{
	struct cerr err;
	char **env = (char **)1;
	size_t n = 7;

	cerr_clear(&err);
	ck_assert_int_eq(export_build(bad[_i].mode, session, NULL, 0, &env,
	    &n, NULL, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_msg(strstr(err.text, bad[_i].want) != NULL,
	    "'%s': '%s' lacks '%s'", bad[_i].mode, err.text, bad[_i].want);
	ck_assert_ptr_null(env);
	ck_assert_uint_eq(n, 0);
}
END_TEST

/* An environment of count variables of size bytes each (NULL-ended). */
static char **
big_env(size_t nvars, size_t size)
{
	char **v = calloc(nvars + 1, sizeof(*v));
	size_t i;

	ck_assert_ptr_nonnull(v);
	for (i = 0; i < nvars; i++) {
		ck_assert_ptr_nonnull(v[i] = malloc(size + 1));
		snprintf(v[i], size + 1, "V%06zu=", i);
		memset(v[i] + 8, 'x', size - 8);
		v[i][size] = '\0';
	}
	return v;
}

START_TEST(test_limits)
{
	struct cerr err;
	char **envp, **env, *one[] = { "EXTRA=1" };
	size_t n;

	/* Too many variables: refused with the count and the way out. */
	envp = big_env(JOB_ENV_LIMIT + 1, 16);
	cerr_clear(&err);
	ck_assert_int_eq(export_build(NULL, envp, NULL, 0, &env, &n, NULL,
	    &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "1025 variables"));
	ck_assert_ptr_nonnull(strstr(err.text, "--export NONE"));
	/* The same environment is fine with a list or NONE. */
	ck_assert_int_eq(export_build("V000001", envp, NULL, 0, &env, &n,
	    NULL, &err), 0);
	ck_assert_uint_eq(n, 1);
	strv_free(env, n);
	strv_free(envp, JOB_ENV_LIMIT + 1);

	/* Exactly at the count limit passes; one --env more does not. */
	envp = big_env(JOB_ENV_LIMIT, 16);
	ck_assert_int_eq(export_build(NULL, envp, NULL, 0, &env, &n, NULL,
	    &err), 0);
	ck_assert_uint_eq(n, JOB_ENV_LIMIT);
	strv_free(env, n);
	ck_assert_int_eq(export_build(NULL, envp, one, 1, &env, &n, NULL,
	    &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "1025 variables"));
	ck_assert_ptr_nonnull(strstr(err.text, "--export NONE"));
	strv_free(envp, JOB_ENV_LIMIT);

	/* Too many bytes: 300 variables of 1000 bytes. */
	envp = big_env(300, 1000);
	ck_assert_int_eq(export_build(NULL, envp, NULL, 0, &env, &n, NULL,
	    &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "300 variables"));
	ck_assert_ptr_nonnull(strstr(err.text, "300300 bytes"));
	strv_free(envp, 300);
}
END_TEST

static Suite *
export_suite(void)
{
	Suite *s = suite_create("export");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_all_filters);
	tcase_add_test(tc, test_none);
	tcase_add_test(tc, test_list);
	tcase_add_test(tc, test_all_plus);
	tcase_add_loop_test(tc, test_bad, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_limits);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(export_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
