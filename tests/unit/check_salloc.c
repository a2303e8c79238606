/* salloc's options and its shell's environment (client/salloc_args.c),
 * without a controller: what salloc takes of sbatch's options, what it
 * refuses, and the SLURM_* variables the shell gets. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "client/salloc_args.h"
#include "client/script_sbatch.h"
#include "lib/job.h"

/* salloc's command line words through sbatch's parser and salloc's. */
static int
parse(char **words, size_t n, struct salloc_self *s, size_t *rest,
    struct cerr *err)
{
	struct script_sbatch_opt *v;
	size_t nv;
	int rc;

	cerr_clear(err);
	ck_assert_int_eq(script_sbatch_parse(words, n, rest, &v, &nv, err), 0);
	rc = salloc_self_parse(v, nv, s, err);
	script_sbatch_free(v, nv);
	return rc;
}

START_TEST(test_options_taken)
{
	char *w[] = { "-N", "2", "--gpus-per-node", "1", "-n", "4",
	    "--no-shell", "-Q", "sh", "-c", "exit 3" };
	struct salloc_self s;
	struct cerr err;
	size_t rest;

	ck_assert_int_eq(parse(w, 11, &s, &rest, &err), 0);
	ck_assert(s.no_shell);
	ck_assert(s.quiet);
	ck_assert_uint_eq(s.ntasks, 4);
	ck_assert_uint_eq(rest, 8);	/* the command */
}
END_TEST

START_TEST(test_options_refused)
{
	char *wrap[] = { "--wrap", "true" };
	char *arr[] = { "--array", "1-3" };
	char *out[] = { "-o", "x.out" };
	char *mem[] = { "--mem-per-cpu", "1G" };
	char *bad[] = { "--bogus" };
	char *req[] = { "--requeue" };
	struct salloc_self s;
	struct cerr err;
	size_t rest;

	ck_assert_int_eq(parse(wrap, 2, &s, &rest, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "--wrap"));
	ck_assert_int_eq(parse(arr, 2, &s, &rest, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "not an salloc option"));
	ck_assert_int_eq(parse(out, 2, &s, &rest, &err), -1);
	ck_assert_int_eq(parse(req, 1, &s, &rest, &err), -1);
	/* sbatch's refusals are salloc's. */
	ck_assert_int_eq(parse(mem, 2, &s, &rest, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "--mem-per-cpu"));
	ck_assert_int_eq(parse(bad, 1, &s, &rest, &err), -1);
}
END_TEST

static const char *
get(char **env, const char *name)
{
	size_t len = strlen(name), i;

	for (i = 0; env[i] != NULL; i++)
		if (strncmp(env[i], name, len) == 0 && env[i][len] == '=')
			return env[i] + len + 1;
	return NULL;
}

START_TEST(test_env)
{
	char *base[] = { "HOME=/home/a", "PATH=/usr/bin:/bin",
	    "SLURM_JOB_ID=7", "SLURM_STEP_ID=0", "SLURM_CONF=/etc/s.conf",
	    NULL };
	struct salloc_env_in in = {
		.job_id = 42, .job_name = "sh", .nodelist = "node[01-02]",
		.nnodes = 2, .tasks_per_node = 1, .ntasks = 0,
		.partition = "gpu", .submit_dir = "/home/a/w",
		.submit_host = "login1", .cluster = "cohort",
		.cred_path = "/tmp/cohort-salloc-x", .slurm_dir = "/opt/slurm",
	};
	char **env;
	size_t n, i, njobid = 0;

	ck_assert_int_eq(salloc_env(base, &in, &env, &n), 0);
	ck_assert_str_eq(get(env, "SLURM_JOB_ID"), "42");
	ck_assert_str_eq(get(env, "SLURM_JOBID"), "42");
	ck_assert_str_eq(get(env, "SLURM_JOB_NODELIST"), "node[01-02]");
	ck_assert_str_eq(get(env, "SLURM_NODELIST"), "node[01-02]");
	ck_assert_str_eq(get(env, "SLURM_NNODES"), "2");
	ck_assert_str_eq(get(env, "SLURM_JOB_NUM_NODES"), "2");
	ck_assert_str_eq(get(env, "SLURM_TASKS_PER_NODE"), "1(x2)");
	ck_assert_ptr_null(get(env, "SLURM_NTASKS"));
	ck_assert_str_eq(get(env, "SLURM_JOB_PARTITION"), "gpu");
	ck_assert_str_eq(get(env, "SLURM_SUBMIT_DIR"), "/home/a/w");
	ck_assert_str_eq(get(env, "SLURM_SUBMIT_HOST"), "login1");
	ck_assert_str_eq(get(env, "SLURM_CLUSTER_NAME"), "cohort");
	ck_assert_str_eq(get(env, "COHORT_STEP_CRED"),
	    "/tmp/cohort-salloc-x");
	ck_assert_str_eq(get(env, "PATH"), "/opt/slurm:/usr/bin:/bin");
	ck_assert_str_eq(get(env, "HOME"), "/home/a");
	ck_assert_str_eq(get(env, "SLURM_CONF"), "/etc/s.conf");
	/* An enclosing job's variables do not leak in. */
	ck_assert_ptr_null(get(env, "SLURM_STEP_ID"));
	for (i = 0; i < n; i++)
		njobid += strncmp(env[i], "SLURM_JOB_ID=", 13) == 0;
	ck_assert_uint_eq(njobid, 1);
	ck_assert_ptr_null(env[n]);
	strv_free(env, n);

	in.ntasks = 4;
	in.nnodes = 1;
	in.tasks_per_node = 4;
	in.partition = NULL;
	in.slurm_dir = NULL;
	ck_assert_int_eq(salloc_env(base, &in, &env, &n), 0);
	ck_assert_str_eq(get(env, "SLURM_NTASKS"), "4");
	ck_assert_str_eq(get(env, "SLURM_TASKS_PER_NODE"), "4");
	ck_assert_ptr_null(get(env, "SLURM_JOB_PARTITION"));
	ck_assert_str_eq(get(env, "PATH"), "/usr/bin:/bin");
	strv_free(env, n);
}
END_TEST

static Suite *
salloc_suite(void)
{
	Suite *s = suite_create("salloc");
	TCase *tc = tcase_create("salloc");

	tcase_add_test(tc, test_options_taken);
	tcase_add_test(tc, test_options_refused);
	tcase_add_test(tc, test_env);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(salloc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
