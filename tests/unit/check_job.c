/* lib/job.c: spec defaults, copies, names, and every validation rule with
 * one spec it accepts and one it refuses, the refusal naming the option. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/duration.h"
#include "lib/job.h"

/* The library's strchr calls, counted (-Wl,--wrap=strchr): a key of
 * "KEY=VALUE" is found with one, so their number is the --env work. */
static size_t strchr_calls;

char	*__real_strchr(const char *, int);
char	*__wrap_strchr(const char *, int);

char *
__wrap_strchr(const char *s, int c)
{
	strchr_calls++;
	return __real_strchr(s, c);
}

/* A valid spec to start every case from: "python3 train.py". */
static void
spec_base(struct job_spec *s)
{
	size_t n = 0;

	job_spec_init(s);
	ck_assert_int_eq(strv_append(&s->argv, &n, "/usr/bin/python3"), 0);
	ck_assert_int_eq(strv_append(&s->argv, &n, "train.py"), 0);
	s->argc = n;
}

static void
set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = v == NULL ? NULL : strdup(v);
	ck_assert(v == NULL || *dst != NULL);
}

/* A string of n copies of c. */
static char *
str_rep(char c, size_t n)
{
	char *s = malloc(n + 1);

	ck_assert_ptr_nonnull(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

static void
set_rep(char **dst, const char *prefix, char c, size_t n)
{
	char *r = str_rep(c, n), *s;

	ck_assert_int_ne(asprintf(&s, "%s%s", prefix, r), -1);
	free(r);
	free(*dst);
	*dst = s;
}

static void
set_script(struct job_spec *s, const char *text, size_t len)
{
	free(s->script);
	s->script = malloc(len + 1);
	ck_assert_ptr_nonnull(s->script);
	memcpy(s->script, text, len);
	s->script[len] = '\0';
	s->script_len = len;
}

static void
env_add(struct job_spec *s, const char *kv)
{
	ck_assert_int_eq(strv_append(&s->env, &s->nenv, kv), 0);
}

/* Replace argv with one command and argc-1 copies of "x". */
static void
argv_many(struct job_spec *s, size_t argc)
{
	size_t i;

	strv_free(s->argv, s->argc);
	s->argv = NULL;
	s->argc = 0;
	for (i = 0; i < argc; i++)
		ck_assert_int_eq(strv_append(&s->argv, &s->argc,
		    i == 0 ? "cmd" : "x"), 0);
}

/* One case: a change to the base spec, the role submitting, and what
 * validation must say (code ERR_NONE: accepted). */
struct vcase {
	const char *what;
	void (*mutate)(struct job_spec *);
	enum role role;
	enum err_code code;
	const char *needle;	/* substring of the error text */
};

#define MUT(name, body)                                                        \
	static void mut_##name(struct job_spec *s) { body; }

MUT(none, (void)s)
MUT(no_argv, argv_many(s, 0))
MUT(empty_argv0, set_str(&s->argv[0], ""))
MUT(argc_max, argv_many(s, JOB_ARGC_LIMIT))
MUT(argc_over, argv_many(s, JOB_ARGC_LIMIT + 1))
MUT(argv_bytes_max, set_rep(&s->argv[1], "", 'a',
    JOB_ARGV_BYTES_LIMIT - sizeof("/usr/bin/python3") - 1))
MUT(argv_bytes_over, set_rep(&s->argv[1], "", 'a',
    JOB_ARGV_BYTES_LIMIT - sizeof("/usr/bin/python3")))
MUT(argv_newline, set_str(&s->argv[1], "line1\nline2"))
MUT(script_ok, set_script(s, "#!/bin/sh\necho hi\n", 18); argv_many(s, 0))
MUT(script_min, set_script(s, "#!", 2))
MUT(script_short, set_script(s, "#", 1))
MUT(script_empty, set_script(s, "", 0))
MUT(script_noshebang, set_script(s, "echo hi\n", 8))
MUT(script_nul, set_script(s, "#!/bin/sh\n\0echo\n", 16))
MUT(script_big, {
	char *t = str_rep('x', JOB_SCRIPT_DEFAULT_MAX + 1);
	t[0] = '#'; t[1] = '!';
	set_script(s, t, JOB_SCRIPT_DEFAULT_MAX + 1);
	free(t);
})
MUT(script_at_max, {
	char *t = str_rep('x', JOB_SCRIPT_DEFAULT_MAX);
	t[0] = '#'; t[1] = '!';
	set_script(s, t, JOB_SCRIPT_DEFAULT_MAX);
	free(t);
})
MUT(script_name_ok, set_script(s, "#!", 2);
    set_str(&s->script_name, "train.sbatch"))
MUT(script_name_slash, set_script(s, "#!", 2);
    set_str(&s->script_name, "a/b.sh"))
MUT(script_name_empty, set_script(s, "#!", 2);
    set_str(&s->script_name, ""))
MUT(script_name_255, set_script(s, "#!", 2);
    set_rep(&s->script_name, "", 'n', 255))
MUT(script_name_256, set_script(s, "#!", 2);
    set_rep(&s->script_name, "", 'n', 256))
MUT(name_ok, set_str(&s->name, "llama-70b pretrain"))
MUT(name_utf8, set_str(&s->name, "r\xc3\xa9sum\xc3\xa9 \xe6\x97\xa5"))
MUT(name_128, set_rep(&s->name, "", 'n', JOB_NAME_MAX))
MUT(name_129, set_rep(&s->name, "", 'n', JOB_NAME_MAX + 1))
MUT(name_tab, set_str(&s->name, "a\tb"))
MUT(name_newline, set_str(&s->name, "a\nb"))
MUT(name_del, set_str(&s->name, "a\x7f"))
MUT(name_bad_utf8, set_str(&s->name, "a\xff"))
MUT(name_overlong, set_str(&s->name, "\xc0\xaf"))
MUT(name_c1, set_str(&s->name, "a\xc2\x85"))
MUT(nodes_elastic, s->nodes_min = 2; s->nodes_max = 4)
MUT(nodes_limit, s->nodes_min = s->nodes_max = JOB_NODES_LIMIT)
MUT(nodes_zero, s->nodes_min = 0)
MUT(nodes_over, s->nodes_min = s->nodes_max = JOB_NODES_LIMIT + 1)
MUT(nodes_inverted, s->nodes_min = 4; s->nodes_max = 2)
MUT(nodes_max_over, s->nodes_max = JOB_NODES_LIMIT + 1)
MUT(gpus_limit, s->gpus_per_node = JOB_GPUS_PER_NODE_LIMIT)
MUT(gpus_over, s->gpus_per_node = JOB_GPUS_PER_NODE_LIMIT + 1)
MUT(tasks_even, s->gpus_per_node = 8; s->tasks_per_node = 4)
MUT(tasks_all_gpus, s->gpus_per_node = 0; s->tasks_per_node = 3)
MUT(tasks_zero, s->tasks_per_node = 0)
MUT(tasks_over, s->tasks_per_node = JOB_TASKS_PER_NODE_LIMIT + 1)
MUT(tasks_uneven, s->gpus_per_node = 8; s->tasks_per_node = 3)
MUT(gpu_type_ok, set_str(&s->gpu_type, "A100-SXM4_80GB.v2"))
MUT(gpu_type_64, set_rep(&s->gpu_type, "", 'H', 64))
MUT(gpu_type_65, set_rep(&s->gpu_type, "", 'H', 65))
MUT(gpu_type_empty, set_str(&s->gpu_type, ""))
MUT(gpu_type_space, set_str(&s->gpu_type, "H 100"))
MUT(time_max, s->time_limit_s = DURATION_MAX_S)
MUT(time_over, s->time_limit_s = DURATION_MAX_S + 1)
MUT(hang_max, s->hang_timeout_s = DURATION_MAX_S)
MUT(hang_over, s->hang_timeout_s = DURATION_MAX_S + 1)
MUT(hang_useless, s->time_limit_s = 60; s->hang_timeout_s = 3600)
MUT(prio_zero, s->priority = 0)
MUT(prio_default, s->priority = JOB_DEFAULT_PRIORITY)
MUT(prio_raise, s->priority = JOB_DEFAULT_PRIORITY + 1)
MUT(prio_max, s->priority = JOB_PRIORITY_MAX)
MUT(prio_over, s->priority = JOB_PRIORITY_MAX + 1)
MUT(prio_negative, s->priority = -1)
MUT(topo_required, s->topo_mode = TOPO_REQUIRED;
    set_str(&s->topo_level, "leaf"))
MUT(topo_preferred, s->topo_mode = TOPO_PREFERRED;
    set_str(&s->topo_level, "spine_0-a"))
MUT(topo_any_level, set_str(&s->topo_level, "leaf"))
MUT(topo_no_level, s->topo_mode = TOPO_REQUIRED)
MUT(topo_bad_level, s->topo_mode = TOPO_PREFERRED;
    set_str(&s->topo_level, "leaf.0"))
MUT(topo_64, s->topo_mode = TOPO_REQUIRED;
    set_rep(&s->topo_level, "", 'l', 64))
MUT(topo_65, s->topo_mode = TOPO_REQUIRED;
    set_rep(&s->topo_level, "", 'l', 65))
MUT(topo_bad_mode, s->topo_mode = (enum topo_mode)7;
    set_str(&s->topo_level, "leaf"))
MUT(queue_ok, set_str(&s->queue, "team-a.gpu_1"))
MUT(queue_64, set_rep(&s->queue, "", 'q', 64))
MUT(queue_65, set_rep(&s->queue, "", 'q', 65))
MUT(queue_slash, set_str(&s->queue, "a/b"))
MUT(queue_empty, set_str(&s->queue, ""))
MUT(queue_newline, set_str(&s->queue, "a\nb"))
MUT(service_ok, s->service = true)
MUT(service_time, s->service = true; s->time_limit_s = 3600)
MUT(ckdir_ok, set_str(&s->checkpoint_dir, "/scratch/ckpt"))
MUT(ckdir_relative, set_str(&s->checkpoint_dir, "ckpt"))
MUT(ckdir_empty, set_str(&s->checkpoint_dir, ""))
MUT(ckdir_newline, set_str(&s->checkpoint_dir, "/a\nb"))
MUT(ckdir_max, set_rep(&s->checkpoint_dir, "/", 'd', JOB_PATH_MAX - 1))
MUT(ckdir_long, set_rep(&s->checkpoint_dir, "/", 'd', JOB_PATH_MAX))
MUT(workdir_ok, set_str(&s->workdir, "/home/alice"))
MUT(workdir_relative, set_str(&s->workdir, "alice"))
MUT(workdir_newline, set_str(&s->workdir, "/a\n"))
MUT(workdir_long, set_rep(&s->workdir, "/", 'd', JOB_PATH_MAX))
MUT(restarts_max, s->max_restarts = JOB_MAX_RESTARTS_LIMIT)
MUT(restarts_over, s->max_restarts = JOB_MAX_RESTARTS_LIMIT + 1)
MUT(sig_term, s->ckpt_signal = SIGTERM)
MUT(sig_64, s->ckpt_signal = 64)
MUT(sig_zero, s->ckpt_signal = 0)
MUT(sig_65, s->ckpt_signal = 65)
MUT(sig_kill, s->ckpt_signal = SIGKILL)
MUT(sig_stop, s->ckpt_signal = SIGSTOP)
MUT(ckpt_secs_max, s->ckpt_secs = 86400)
MUT(ckpt_secs_over, s->ckpt_secs = 86401)
MUT(env_ok, env_add(s, "A=1"); env_add(s, "_x9="); env_add(s, "P=a=b"))
MUT(env_key_255, {
	char *kv = str_rep('K', 257);
	kv[255] = '=';
	env_add(s, kv);
	free(kv);
})
MUT(env_key_256, {
	char *kv = str_rep('K', 258);
	kv[256] = '=';
	env_add(s, kv);
	free(kv);
})
MUT(env_digit, env_add(s, "1A=x"))
MUT(env_dash, env_add(s, "A-B=x"))
MUT(env_noeq, env_add(s, "NOEQ"))
MUT(env_nokey, env_add(s, "=x"))
MUT(env_reserved, env_add(s, "COHORT_JOB_ID=5"))
MUT(env_max, {
	size_t i;
	for (i = 0; i < JOB_ENV_LIMIT; i++)
		env_add(s, "A=1");
})
MUT(env_many, {
	size_t i;
	for (i = 0; i < JOB_ENV_LIMIT + 1; i++)
		env_add(s, "A=1");
})
MUT(env_bytes, {
	char *kv = str_rep('v', JOB_ENV_BYTES_LIMIT);
	kv[0] = 'K';
	kv[1] = '=';
	env_add(s, kv);
	free(kv);
})

static const struct vcase vcases[] = {
	{ "base", mut_none, ROLE_USER, ERR_NONE, NULL },
	{ "no command", mut_no_argv, ROLE_USER, ERR_INVALID, "no command" },
	{ "empty command", mut_empty_argv0, ROLE_USER, ERR_INVALID,
	    "no command: give one after --, or a script" },
	{ "argc at limit", mut_argc_max, ROLE_USER, ERR_NONE, NULL },
	{ "argc over", mut_argc_over, ROLE_USER, ERR_INVALID, "command:" },
	{ "argv bytes at limit", mut_argv_bytes_max, ROLE_USER, ERR_NONE,
	    NULL },
	{ "argv bytes over", mut_argv_bytes_over, ROLE_USER, ERR_INVALID,
	    "command:" },
	{ "newline in argument", mut_argv_newline, ROLE_USER, ERR_NONE,
	    NULL },
	{ "script", mut_script_ok, ROLE_USER, ERR_NONE, NULL },
	{ "script #!", mut_script_min, ROLE_USER, ERR_NONE, NULL },
	{ "script too short", mut_script_short, ROLE_USER, ERR_INVALID,
	    "script: first line must be an interpreter line (#!...)" },
	{ "script empty", mut_script_empty, ROLE_USER, ERR_INVALID,
	    "script:" },
	{ "script without #!", mut_script_noshebang, ROLE_USER, ERR_INVALID,
	    "script: first line must be an interpreter line (#!...)" },
	{ "script with NUL", mut_script_nul, ROLE_USER, ERR_INVALID,
	    "script: contains a NUL byte" },
	{ "script at default max", mut_script_at_max, ROLE_USER, ERR_NONE,
	    NULL },
	{ "script over default max", mut_script_big, ROLE_USER, ERR_INVALID,
	    "script:" },
	{ "script name", mut_script_name_ok, ROLE_USER, ERR_NONE, NULL },
	{ "script name with /", mut_script_name_slash, ROLE_USER,
	    ERR_INVALID, "script: file name 'a/b.sh' contains '/'" },
	{ "script name empty", mut_script_name_empty, ROLE_USER, ERR_INVALID,
	    "script: empty file name" },
	{ "script name 255", mut_script_name_255, ROLE_USER, ERR_NONE, NULL },
	{ "script name 256", mut_script_name_256, ROLE_USER, ERR_INVALID,
	    "script: file name longer" },
	{ "name", mut_name_ok, ROLE_USER, ERR_NONE, NULL },
	{ "name UTF-8", mut_name_utf8, ROLE_USER, ERR_NONE, NULL },
	{ "name 128", mut_name_128, ROLE_USER, ERR_NONE, NULL },
	{ "name 129", mut_name_129, ROLE_USER, ERR_INVALID, "--name:" },
	{ "name tab", mut_name_tab, ROLE_USER, ERR_INVALID, "--name:" },
	{ "name newline", mut_name_newline, ROLE_USER, ERR_INVALID,
	    "--name:" },
	{ "name DEL", mut_name_del, ROLE_USER, ERR_INVALID, "--name:" },
	{ "name bad UTF-8", mut_name_bad_utf8, ROLE_USER, ERR_INVALID,
	    "--name:" },
	{ "name overlong UTF-8", mut_name_overlong, ROLE_USER, ERR_INVALID,
	    "--name:" },
	{ "name C1 control", mut_name_c1, ROLE_USER, ERR_INVALID, "--name:" },
	{ "elastic nodes", mut_nodes_elastic, ROLE_USER, ERR_NONE, NULL },
	{ "nodes at limit", mut_nodes_limit, ROLE_USER, ERR_NONE, NULL },
	{ "nodes 0", mut_nodes_zero, ROLE_USER, ERR_INVALID, "--nodes:" },
	{ "nodes over", mut_nodes_over, ROLE_USER, ERR_INVALID, "--nodes:" },
	{ "nodes inverted", mut_nodes_inverted, ROLE_USER, ERR_INVALID,
	    "--nodes: minimum 4 is above maximum 2" },
	{ "nodes max over", mut_nodes_max_over, ROLE_USER, ERR_INVALID,
	    "--nodes:" },
	{ "gpus at limit", mut_gpus_limit, ROLE_USER, ERR_NONE, NULL },
	{ "gpus over", mut_gpus_over, ROLE_USER, ERR_INVALID,
	    "--gpus-per-node:" },
	{ "tasks share evenly", mut_tasks_even, ROLE_USER, ERR_NONE, NULL },
	{ "tasks on all GPUs", mut_tasks_all_gpus, ROLE_USER, ERR_NONE, NULL },
	{ "tasks 0", mut_tasks_zero, ROLE_USER, ERR_INVALID,
	    "--tasks-per-node:" },
	{ "tasks over", mut_tasks_over, ROLE_USER, ERR_INVALID,
	    "--tasks-per-node:" },
	{ "tasks uneven", mut_tasks_uneven, ROLE_USER, ERR_INVALID,
	    "--tasks-per-node: 3 tasks cannot share 8 GPUs evenly" },
	{ "gpu type", mut_gpu_type_ok, ROLE_USER, ERR_NONE, NULL },
	{ "gpu type 64", mut_gpu_type_64, ROLE_USER, ERR_NONE, NULL },
	{ "gpu type 65", mut_gpu_type_65, ROLE_USER, ERR_INVALID,
	    "--gpu-type:" },
	{ "gpu type empty", mut_gpu_type_empty, ROLE_USER, ERR_INVALID,
	    "--gpu-type:" },
	{ "gpu type space", mut_gpu_type_space, ROLE_USER, ERR_INVALID,
	    "--gpu-type: 'H 100'" },
	{ "time at limit", mut_time_max, ROLE_USER, ERR_NONE, NULL },
	{ "time over", mut_time_over, ROLE_USER, ERR_INVALID, "--time:" },
	{ "hang at limit", mut_hang_max, ROLE_USER, ERR_NONE, NULL },
	{ "hang over", mut_hang_over, ROLE_USER, ERR_INVALID,
	    "--hang-timeout:" },
	{ "hang above time", mut_hang_useless, ROLE_USER, ERR_NONE, NULL },
	{ "priority 0", mut_prio_zero, ROLE_USER, ERR_NONE, NULL },
	{ "priority default", mut_prio_default, ROLE_USER, ERR_NONE, NULL },
	{ "user raises priority", mut_prio_raise, ROLE_USER, ERR_DENIED,
	    "--priority: users may only lower their priority (at most 100)" },
	{ "admin raises priority", mut_prio_raise, ROLE_ADMIN, ERR_NONE,
	    NULL },
	{ "admin priority max", mut_prio_max, ROLE_ADMIN, ERR_NONE, NULL },
	{ "priority over", mut_prio_over, ROLE_ADMIN, ERR_INVALID,
	    "--priority:" },
	{ "priority negative", mut_prio_negative, ROLE_USER, ERR_INVALID,
	    "--priority:" },
	{ "topology", mut_topo_required, ROLE_USER, ERR_NONE, NULL },
	{ "topology prefer", mut_topo_preferred, ROLE_USER, ERR_NONE, NULL },
	{ "topology 64", mut_topo_64, ROLE_USER, ERR_NONE, NULL },
	{ "level without mode", mut_topo_any_level, ROLE_USER, ERR_INVALID,
	    "--topology:" },
	{ "mode without level", mut_topo_no_level, ROLE_USER, ERR_INVALID,
	    "--topology:" },
	{ "bad level", mut_topo_bad_level, ROLE_USER, ERR_INVALID,
	    "--topology-prefer: 'leaf.0'" },
	{ "level 65", mut_topo_65, ROLE_USER, ERR_INVALID, "--topology:" },
	{ "bad mode", mut_topo_bad_mode, ROLE_USER, ERR_INVALID,
	    "--topology: unknown mode 7" },
	{ "queue", mut_queue_ok, ROLE_USER, ERR_NONE, NULL },
	{ "queue 64", mut_queue_64, ROLE_USER, ERR_NONE, NULL },
	{ "queue 65", mut_queue_65, ROLE_USER, ERR_INVALID,
	    "--queue: longer than 64 characters" },
	{ "queue slash", mut_queue_slash, ROLE_USER, ERR_INVALID,
	    "--queue: 'a/b' may only contain letters, digits, '.', '_' and "
	    "'-'" },
	{ "queue empty", mut_queue_empty, ROLE_USER, ERR_INVALID,
	    "--queue:" },
	{ "queue newline", mut_queue_newline, ROLE_USER, ERR_INVALID,
	    "--queue: control character" },
	{ "service", mut_service_ok, ROLE_USER, ERR_NONE, NULL },
	{ "service with time", mut_service_time, ROLE_USER, ERR_INVALID,
	    "--service: a service has no time limit" },
	{ "checkpoint dir", mut_ckdir_ok, ROLE_USER, ERR_NONE, NULL },
	{ "checkpoint dir relative", mut_ckdir_relative, ROLE_USER,
	    ERR_INVALID, "--checkpoint-dir: 'ckpt' is not an absolute path" },
	{ "checkpoint dir empty", mut_ckdir_empty, ROLE_USER, ERR_INVALID,
	    "--checkpoint-dir:" },
	{ "checkpoint dir newline", mut_ckdir_newline, ROLE_USER,
	    ERR_INVALID, "--checkpoint-dir:" },
	{ "checkpoint dir at max", mut_ckdir_max, ROLE_USER, ERR_NONE, NULL },
	{ "checkpoint dir long", mut_ckdir_long, ROLE_USER, ERR_INVALID,
	    "--checkpoint-dir:" },
	{ "workdir", mut_workdir_ok, ROLE_USER, ERR_NONE, NULL },
	{ "workdir relative", mut_workdir_relative, ROLE_USER, ERR_INVALID,
	    "--workdir:" },
	{ "workdir newline", mut_workdir_newline, ROLE_USER, ERR_INVALID,
	    "--workdir:" },
	{ "workdir long", mut_workdir_long, ROLE_USER, ERR_INVALID,
	    "--workdir:" },
	{ "restarts at limit", mut_restarts_max, ROLE_USER, ERR_NONE, NULL },
	{ "restarts over", mut_restarts_over, ROLE_USER, ERR_INVALID,
	    "--max-restarts:" },
	{ "signal TERM", mut_sig_term, ROLE_USER, ERR_NONE, NULL },
	{ "signal 64", mut_sig_64, ROLE_USER, ERR_NONE, NULL },
	{ "signal 0", mut_sig_zero, ROLE_USER, ERR_INVALID,
	    "--checkpoint-signal:" },
	{ "signal 65", mut_sig_65, ROLE_USER, ERR_INVALID,
	    "--checkpoint-signal:" },
	{ "signal KILL", mut_sig_kill, ROLE_USER, ERR_INVALID,
	    "--checkpoint-signal: SIGKILL cannot be caught" },
	{ "signal STOP", mut_sig_stop, ROLE_USER, ERR_INVALID,
	    "--checkpoint-signal: SIGSTOP cannot be caught" },
	{ "checkpoint secs max", mut_ckpt_secs_max, ROLE_USER, ERR_NONE,
	    NULL },
	{ "checkpoint secs over", mut_ckpt_secs_over, ROLE_USER, ERR_INVALID,
	    "--checkpoint-signal:" },
	{ "env", mut_env_ok, ROLE_USER, ERR_NONE, NULL },
	{ "env key 255", mut_env_key_255, ROLE_USER, ERR_NONE, NULL },
	{ "env key 256", mut_env_key_256, ROLE_USER, ERR_INVALID, "--env" },
	{ "env key digit", mut_env_digit, ROLE_USER, ERR_INVALID,
	    "--env 1A: not a valid variable name" },
	{ "env key dash", mut_env_dash, ROLE_USER, ERR_INVALID,
	    "--env A-B:" },
	{ "env without =", mut_env_noeq, ROLE_USER, ERR_INVALID,
	    "--env NOEQ: expected KEY=VALUE" },
	{ "env without key", mut_env_nokey, ROLE_USER, ERR_INVALID,
	    "--env:" },
	{ "env reserved", mut_env_reserved, ROLE_USER, ERR_INVALID,
	    "--env COHORT_JOB_ID: COHORT_* variables are set by Cohort" },
	{ "env at count limit", mut_env_max, ROLE_USER, ERR_NONE, NULL },
	{ "env too many", mut_env_many, ROLE_USER, ERR_INVALID, "--env:" },
	{ "env too large", mut_env_bytes, ROLE_USER, ERR_INVALID, "--env:" },
};

START_TEST(test_validate_case)
{
	const struct vcase *c = &vcases[_i];
	struct job_spec s;
	struct cerr err;
	int rc;

	spec_base(&s);
	c->mutate(&s);
	cerr_set(&err, ERR_INTERNAL, "stale");
	rc = job_spec_validate(&s, c->role, NULL, &err);
	if (c->code == ERR_NONE) {
		ck_assert_msg(rc == 0, "%s: refused: %s", c->what, err.text);
		ck_assert_int_eq(err.code, ERR_NONE);
		ck_assert_ptr_nonnull(s.name);
	} else {
		ck_assert_msg(rc == -1, "%s: accepted", c->what);
		ck_assert_msg(err.code == c->code, "%s: code %d, text '%s'",
		    c->what, err.code, err.text);
		ck_assert_msg(strstr(err.text, c->needle) != NULL,
		    "%s: '%s' does not contain '%s'", c->what, err.text,
		    c->needle);
	}
	job_spec_clear(&s);
}
END_TEST

START_TEST(test_validate_script_limit)
{
	struct job_limits lim = { .script_max = 64 };
	struct job_spec s;
	struct cerr err;
	char text[65];

	memset(text, 'x', sizeof(text));
	text[0] = '#';
	text[1] = '!';
	spec_base(&s);
	set_script(&s, text, 64);
	ck_assert_int_eq(job_spec_validate(&s, ROLE_USER, &lim, &err), 0);
	set_script(&s, text, 65);
	ck_assert_int_eq(job_spec_validate(&s, ROLE_USER, &lim, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_str_eq(err.text, "script: 65 bytes, at most 64 are allowed");
	job_spec_clear(&s);
}
END_TEST

static void
check_derived(void (*setup)(struct job_spec *), const char *want)
{
	struct job_spec s;
	struct cerr err;

	spec_base(&s);
	setup(&s);
	ck_assert_msg(job_spec_validate(&s, ROLE_USER, NULL, &err) == 0, "%s",
	    err.text);
	ck_assert_str_eq(s.name, want);
	job_spec_clear(&s);
}

MUT(argv0_path, set_str(&s->argv[0], "/opt/bin/train.sh"))
MUT(argv0_dir, set_str(&s->argv[0], "tools/run/"))
MUT(argv0_root, set_str(&s->argv[0], "/"))
MUT(argv0_plain, set_str(&s->argv[0], "torchrun"))
MUT(argv0_ctrl, set_str(&s->argv[0], "a\tb\x01"))	/* argv is free text */
MUT(argv0_long, set_rep(&s->argv[0], "/bin/", 'z', 300))
MUT(argv0_long_utf8, {
	/* 127 ASCII bytes then a 2-byte character: the cut must not split
	 * the character. */
	char *a = str_rep('a', 127);
	char *v;
	ck_assert_int_ne(asprintf(&v, "%s\xc3\xa9", a), -1);
	free(a);
	free(s->argv[0]);
	s->argv[0] = v;
})
MUT(name_empty, set_str(&s->name, ""))
MUT(script_unnamed, set_script(s, "#!", 2))

START_TEST(test_name_derived)
{
	char *z = str_rep('z', JOB_NAME_MAX), *a = str_rep('a', 127);

	check_derived(mut_none, "python3");
	check_derived(mut_argv0_path, "train.sh");
	check_derived(mut_argv0_dir, "run");
	check_derived(mut_argv0_root, "/");
	check_derived(mut_argv0_plain, "torchrun");
	check_derived(mut_argv0_ctrl, "a?b?");
	check_derived(mut_argv0_long, z);
	check_derived(mut_argv0_long_utf8, a);
	check_derived(mut_name_empty, "python3");
	check_derived(mut_script_name_ok, "train.sbatch");
	check_derived(mut_script_unnamed, "script");
	check_derived(mut_name_ok, "llama-70b pretrain");
	free(z);
	free(a);
}
END_TEST

/* A refused spec comes back as it went in: no name filled in, no --env
 * dropped. */
START_TEST(test_validate_no_side_effects)
{
	struct job_spec s;
	struct cerr err;

	spec_base(&s);
	env_add(&s, "A=1");
	env_add(&s, "A=2");
	s.nodes_min = 0;
	ck_assert_int_eq(job_spec_validate(&s, ROLE_USER, NULL, &err), -1);
	ck_assert_ptr_null(s.name);
	ck_assert_uint_eq(s.nenv, 2);
	job_spec_clear(&s);
}
END_TEST

START_TEST(test_env_dedup)
{
	struct job_spec s;
	struct cerr err;

	spec_base(&s);
	env_add(&s, "A=1");
	env_add(&s, "B=2");
	env_add(&s, "AB=x");
	env_add(&s, "A=3");
	env_add(&s, "B=4");
	env_add(&s, "A=5");
	ck_assert_int_eq(job_spec_validate(&s, ROLE_USER, NULL, &err), 0);
	ck_assert_uint_eq(s.nenv, 3);
	ck_assert_str_eq(s.env[0], "AB=x");
	ck_assert_str_eq(s.env[1], "B=4");
	ck_assert_str_eq(s.env[2], "A=5");
	ck_assert_ptr_null(s.env[3]);
	job_spec_clear(&s);
}
END_TEST

/* JOB_ENV_LIMIT distinct variables, and one given twice: the duplicate
 * goes, and finding it costs a few key look-ups per variable, not one per
 * pair (half a million). */
START_TEST(test_env_dedup_linear)
{
	struct job_spec s;
	struct cerr err;
	char kv[32];
	size_t i;

	spec_base(&s);
	for (i = 0; i + 1 < JOB_ENV_LIMIT; i++) {
		snprintf(kv, sizeof(kv), "V%zu=%zu", i, i);
		env_add(&s, kv);
	}
	env_add(&s, "V7=last");
	strchr_calls = 0;
	ck_assert_int_eq(job_spec_validate(&s, ROLE_USER, NULL, &err), 0);
	ck_assert_uint_le(strchr_calls, 4 * JOB_ENV_LIMIT);
	ck_assert_uint_eq(s.nenv, JOB_ENV_LIMIT - 1);
	ck_assert_str_eq(s.env[0], "V0=0");
	ck_assert_str_eq(s.env[6], "V6=6");
	ck_assert_str_eq(s.env[7], "V8=8");
	ck_assert_str_eq(s.env[JOB_ENV_LIMIT - 2], "V7=last");
	ck_assert_ptr_null(s.env[JOB_ENV_LIMIT - 1]);
	job_spec_clear(&s);
}
END_TEST

START_TEST(test_init_defaults)
{
	struct job_spec s;

	memset(&s, 0xa5, sizeof(s));
	job_spec_init(&s);
	ck_assert_ptr_null(s.name);
	ck_assert_uint_eq(s.nodes_min, 1);
	ck_assert_uint_eq(s.nodes_max, 1);
	ck_assert_uint_eq(s.gpus_per_node, 0);
	ck_assert_uint_eq(s.tasks_per_node, 1);
	ck_assert_ptr_null(s.gpu_type);
	ck_assert_uint_eq(s.time_limit_s, 0);
	ck_assert_int_eq(s.priority, JOB_DEFAULT_PRIORITY);
	ck_assert_int_eq(s.topo_mode, TOPO_ANY);
	ck_assert_ptr_null(s.topo_level);
	ck_assert_ptr_null(s.checkpoint_dir);
	ck_assert_uint_eq(s.max_restarts, JOB_DEFAULT_MAX_RESTARTS);
	ck_assert_int_eq(s.ckpt_signal, SIGUSR1);
	ck_assert_uint_eq(s.ckpt_secs, JOB_DEFAULT_CKPT_SECS);
	ck_assert_uint_eq(s.hang_timeout_s, 0);
	ck_assert_ptr_null(s.env);
	ck_assert_uint_eq(s.nenv, 0);
	ck_assert_ptr_null(s.workdir);
	ck_assert_ptr_null(s.argv);
	ck_assert_uint_eq(s.argc, 0);
	ck_assert_ptr_null(s.script);
	ck_assert_uint_eq(s.script_len, 0);
	ck_assert_ptr_null(s.script_name);
}
END_TEST

static void
spec_full(struct job_spec *s)
{
	spec_base(s);
	set_str(&s->name, "full");
	s->nodes_min = 2;
	s->nodes_max = 8;
	s->gpus_per_node = 8;
	s->tasks_per_node = 8;
	set_str(&s->gpu_type, "H100");
	s->time_limit_s = 3600;
	s->priority = 7;
	s->topo_mode = TOPO_PREFERRED;
	set_str(&s->topo_level, "leaf");
	set_str(&s->checkpoint_dir, "/ckpt");
	s->max_restarts = 9;
	s->ckpt_signal = SIGTERM;
	s->ckpt_secs = 120;
	s->hang_timeout_s = 600;
	env_add(s, "A=1");
	env_add(s, "B=2");
	set_str(&s->workdir, "/work");
	set_script(s, "#!/bin/sh\n\0x", 12);
	set_str(&s->script_name, "run.sh");
}

START_TEST(test_clear)
{
	struct job_spec s;

	spec_full(&s);
	job_spec_clear(&s);
	ck_assert_ptr_null(s.name);
	ck_assert_ptr_null(s.argv);
	ck_assert_ptr_null(s.env);
	ck_assert_ptr_null(s.script);
	ck_assert_uint_eq(s.script_len, 0);
	ck_assert_uint_eq(s.nodes_min, 1);
	ck_assert_int_eq(s.priority, JOB_DEFAULT_PRIORITY);
	/* Clearing twice is harmless. */
	job_spec_clear(&s);
}
END_TEST

START_TEST(test_copy)
{
	struct job_spec s, d;

	spec_full(&s);
	ck_assert_int_eq(job_spec_copy(&d, &s), 0);
	ck_assert_str_eq(d.name, "full");
	ck_assert_ptr_ne(d.name, s.name);
	ck_assert_uint_eq(d.nodes_min, 2);
	ck_assert_uint_eq(d.nodes_max, 8);
	ck_assert_uint_eq(d.gpus_per_node, 8);
	ck_assert_str_eq(d.gpu_type, "H100");
	ck_assert_ptr_ne(d.gpu_type, s.gpu_type);
	ck_assert_uint_eq(d.time_limit_s, 3600);
	ck_assert_int_eq(d.priority, 7);
	ck_assert_int_eq(d.topo_mode, TOPO_PREFERRED);
	ck_assert_str_eq(d.topo_level, "leaf");
	ck_assert_str_eq(d.checkpoint_dir, "/ckpt");
	ck_assert_uint_eq(d.max_restarts, 9);
	ck_assert_int_eq(d.ckpt_signal, SIGTERM);
	ck_assert_uint_eq(d.ckpt_secs, 120);
	ck_assert_uint_eq(d.hang_timeout_s, 600);
	ck_assert_uint_eq(d.nenv, 2);
	ck_assert_ptr_ne(d.env, s.env);
	ck_assert_ptr_ne(d.env[0], s.env[0]);
	ck_assert_str_eq(d.env[1], "B=2");
	ck_assert_ptr_null(d.env[2]);
	ck_assert_str_eq(d.workdir, "/work");
	ck_assert_uint_eq(d.argc, 2);
	ck_assert_str_eq(d.argv[1], "train.py");
	ck_assert_ptr_null(d.argv[2]);
	ck_assert_uint_eq(d.script_len, 12);
	ck_assert_ptr_ne(d.script, s.script);
	ck_assert_mem_eq(d.script, "#!/bin/sh\n\0x", 12);
	ck_assert_int_eq(d.script[12], '\0');
	ck_assert_str_eq(d.script_name, "run.sh");

	/* The copy owns its memory: the source can go first. */
	job_spec_clear(&s);
	ck_assert_str_eq(d.name, "full");
	ck_assert_str_eq(d.env[0], "A=1");
	job_spec_clear(&d);
}
END_TEST

START_TEST(test_copy_empty)
{
	struct job_spec s, d;

	job_spec_init(&s);
	ck_assert_int_eq(job_spec_copy(&d, &s), 0);
	ck_assert_ptr_null(d.name);
	ck_assert_ptr_null(d.argv);
	ck_assert_ptr_null(d.script);
	ck_assert_uint_eq(d.nodes_min, 1);
	job_spec_clear(&d);
}
END_TEST

START_TEST(test_strv)
{
	char **v = NULL;
	size_t n = 0;

	ck_assert_int_eq(strv_append(&v, &n, "a"), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(v[0], "a");
	ck_assert_ptr_null(v[1]);
	ck_assert_int_eq(strv_append(&v, &n, ""), 0);
	ck_assert_int_eq(strv_append(&v, &n, "c"), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(v[1], "");
	ck_assert_str_eq(v[2], "c");
	ck_assert_ptr_null(v[3]);
	strv_free(v, n);
	strv_free(NULL, 0);
}
END_TEST

START_TEST(test_state_names)
{
	static const char *const names[] = { "PENDING", "RUNNING",
		"RESTARTING", "RESIZING", "COMPLETED", "FAILED", "CANCELLED",
		"TIMEOUT" };
	enum job_state st, got;
	char lower[32];
	size_t i;

	for (st = JOB_PENDING, i = 0; st <= JOB_TIMEOUT; st++, i++) {
		ck_assert_str_eq(job_state_name(st), names[i]);
		ck_assert_int_eq(job_state_parse(names[i], &got), 0);
		ck_assert_int_eq(got, st);
		for (size_t j = 0; j <= strlen(names[i]); j++)
			lower[j] = (char)(names[i][j] | (names[i][j] ? 0x20 : 0));
		ck_assert_int_eq(job_state_parse(lower, &got), 0);
		ck_assert_int_eq(got, st);
	}
	ck_assert_int_eq(job_state_parse("Running", &got), 0);
	ck_assert_int_eq(got, JOB_RUNNING);
	ck_assert_str_eq(job_state_name((enum job_state)0), "UNKNOWN");
	ck_assert_str_eq(job_state_name((enum job_state)99), "UNKNOWN");
	errno = 0;
	ck_assert_int_eq(job_state_parse("RUN", &got), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(job_state_parse("", &got), -1);
	ck_assert_int_eq(job_state_parse("UNKNOWN", &got), -1);
}
END_TEST

START_TEST(test_state_final)
{
	ck_assert(!job_state_is_final(JOB_PENDING));
	ck_assert(!job_state_is_final(JOB_RUNNING));
	ck_assert(!job_state_is_final(JOB_RESTARTING));
	ck_assert(!job_state_is_final(JOB_RESIZING));
	ck_assert(job_state_is_final(JOB_COMPLETED));
	ck_assert(job_state_is_final(JOB_FAILED));
	ck_assert(job_state_is_final(JOB_CANCELLED));
	ck_assert(job_state_is_final(JOB_TIMEOUT));
}
END_TEST

START_TEST(test_roles)
{
	ck_assert_str_eq(role_name(ROLE_USER), "user");
	ck_assert_str_eq(role_name(ROLE_ADMIN), "admin");
	ck_assert_str_eq(role_name(ROLE_AGENT), "agent");
	ck_assert_str_eq(role_name(ROLE_CONTROLLER), "controller");
	ck_assert_str_eq(role_name(ROLE_NONE), "none");
	ck_assert_str_eq(role_name((enum role)42), "none");
	ck_assert_int_eq(role_parse("user"), ROLE_USER);
	ck_assert_int_eq(role_parse("admin"), ROLE_ADMIN);
	ck_assert_int_eq(role_parse("agent"), ROLE_AGENT);
	ck_assert_int_eq(role_parse("controller"), ROLE_CONTROLLER);
	ck_assert_int_eq(role_parse("root"), ROLE_NONE);
	ck_assert_int_eq(role_parse(""), ROLE_NONE);
	ck_assert_int_eq(role_parse(NULL), ROLE_NONE);
	/* A role comes from a certificate: no lenient spellings. */
	ck_assert_int_eq(role_parse("Admin"), ROLE_NONE);
}
END_TEST

START_TEST(test_job_new_free)
{
	struct job *j = job_new();

	ck_assert_ptr_nonnull(j);
	ck_assert_ptr_nonnull(j->reason);
	ck_assert_str_eq(j->reason, "");
	ck_assert_uint_eq(j->spec.nodes_min, 1);
	ck_assert_uint_eq(j->id, 0);
	j->user = strdup("alice");
	spec_base(&j->spec);
	job_free(j);
	job_free(NULL);
}
END_TEST


/* ---- where ranks live ---- */

/* A job of three nodes, two tasks each, placed out of rank order. */
static struct job *
placed_job(void)
{
	struct placement p[3];
	struct job *j = job_new();

	ck_assert_ptr_nonnull(j);
	memset(p, 0, sizeof(p));
	snprintf(p[0].node, sizeof(p[0].node), "gpu02");
	p[0].node_rank = 1;
	snprintf(p[1].node, sizeof(p[1].node), "gpu01");
	p[1].node_rank = 0;
	snprintf(p[2].node, sizeof(p[2].node), "gpu03");
	p[2].node_rank = 2;
	ck_assert_int_eq(job_set_placement(j, p, 3), 0);
	j->spec.tasks_per_node = 2;
	return j;
}

START_TEST(test_rank_on_node)
{
	struct job *j = placed_job();

	/* Global rank r: node_rank r / 2. */
	ck_assert(job_rank_on_node(j, 0, "gpu01"));
	ck_assert(job_rank_on_node(j, 1, "gpu01"));
	ck_assert(job_rank_on_node(j, 2, "gpu02"));
	ck_assert(job_rank_on_node(j, 3, "gpu02"));
	ck_assert(job_rank_on_node(j, 4, "gpu03"));
	ck_assert(job_rank_on_node(j, 5, "gpu03"));
	ck_assert(!job_rank_on_node(j, 0, "gpu02"));
	ck_assert(!job_rank_on_node(j, 2, "gpu01"));
	ck_assert(!job_rank_on_node(j, 4, "gpu01"));
	/* Out of range, also far out (no wrap onto a real rank). */
	ck_assert(!job_rank_on_node(j, 6, "gpu03"));
	ck_assert(!job_rank_on_node(j, 6, "gpu04"));
	ck_assert(!job_rank_on_node(j, 0xffffffffu, "gpu01"));
	/* A node of no part of it, and a name only its prefix matches. */
	ck_assert(!job_rank_on_node(j, 0, "gpu0"));
	ck_assert(!job_rank_on_node(j, 0, ""));
	ck_assert_ptr_null(job_node_placement(j, "gpu04"));
	ck_assert_uint_eq(job_node_placement(j, "gpu03")->node_rank, 2);
	job_free(j);
}
END_TEST

START_TEST(test_rank_on_node_in_order)
{
	struct placement p[4];
	struct job *j = job_new();
	unsigned i;

	ck_assert_ptr_nonnull(j);
	memset(p, 0, sizeof(p));
	for (i = 0; i < 4; i++) {
		snprintf(p[i].node, sizeof(p[i].node), "n%u", i);
		p[i].node_rank = i;
	}
	ck_assert_int_eq(job_set_placement(j, p, 4), 0);
	j->spec.tasks_per_node = 8;
	for (i = 0; i < 32; i++) {
		char want[8];

		snprintf(want, sizeof(want), "n%u", i / 8);
		ck_assert(job_rank_on_node(j, i, want));
		ck_assert(!job_rank_on_node(j, i, i < 8 ? "n1" : "n0"));
	}
	ck_assert(!job_rank_on_node(j, 32, "n3"));
	job_free(j);
}
END_TEST

START_TEST(test_rank_on_node_unplaced)
{
	struct job *j = job_new();

	ck_assert_ptr_nonnull(j);
	ck_assert(!job_rank_on_node(j, 0, "gpu01"));
	ck_assert_ptr_null(job_node_placement(j, "gpu01"));
	/* tasks_per_node 0 is read as 1, never a division by zero. */
	job_free(j);
	j = placed_job();
	j->spec.tasks_per_node = 0;
	ck_assert(job_rank_on_node(j, 1, "gpu02"));
	ck_assert(!job_rank_on_node(j, 3, "gpu03"));
	job_free(j);
}
END_TEST

/* The daily workflow's submission fields (not arrays or dependencies): output
 * patterns, node lists, CPU-only and exclusive jobs, holds. */
MUT(out_ok, set_str(&s->output, "logs/%x-%j_%A_%a.r%t.n%n.%N.%u.100%%.out"))
MUT(out_abs, set_str(&s->output, "/scratch/%u/%j.out"))
MUT(err_ok, set_str(&s->error, "%j.err"))
MUT(out_empty, set_str(&s->output, ""))
MUT(out_dir, set_str(&s->output, "logs/"))
MUT(out_lone, set_str(&s->output, "out%"))
MUT(out_step, set_str(&s->output, "%J.out"))
MUT(out_pad, set_str(&s->output, "%4t.out"))
MUT(out_unknown, set_str(&s->output, "%q.out"))
MUT(err_unknown, set_str(&s->error, "%s.err"))
MUT(out_ctrl, set_str(&s->output, "a\tb"))
MUT(out_max, set_rep(&s->output, "/", 'o', JOB_PATH_MAX - 1))
MUT(out_long, set_rep(&s->output, "/", 'o', JOB_PATH_MAX))
MUT(nl_ok, set_str(&s->nodelist, "gpu[01-02]"); s->nodes_min = 2;
    s->nodes_max = 2)
MUT(nl_dup, set_str(&s->nodelist, "gpu01,gpu[01-01],gpu01"))
MUT(nl_over, set_str(&s->nodelist, "gpu[01-03]"); s->nodes_min = 2;
    s->nodes_max = 2)
MUT(nl_elastic, set_str(&s->nodelist, "gpu[01-03]"); s->nodes_min = 1;
    s->nodes_max = 4)
MUT(nl_bad, set_str(&s->nodelist, "gpu[01-"))
MUT(nl_empty, set_str(&s->nodelist, ""))
MUT(nl_huge, set_str(&s->nodelist, "n[0-999999]"))
MUT(nl_name, set_str(&s->nodelist, "gpu@01"))
MUT(nl_long, set_rep(&s->nodelist, "n", 'x', PEER_NAME_MAX))
MUT(x_ok, set_str(&s->exclude, "gpu[01-16],login1"))
MUT(x_bad, set_str(&s->exclude, "gpu[3-1]"))
MUT(x_big_ok, set_str(&s->exclude, "n[1-100000]"))
MUT(x_huge, set_str(&s->exclude, "n[0-100000]"))
MUT(x_both, set_str(&s->nodelist, "gpu02"); set_str(&s->exclude,
    "gpu[01-03]"))
MUT(c_ok, set_str(&s->constraint, "fp64&(ib|roce)"))
MUT(c_bad, set_str(&s->constraint, "fp64|"))
MUT(c_bracket, set_str(&s->constraint, "[a|b]"))
MUT(c_ctrl, set_str(&s->constraint, "fp64\001"))
MUT(gm_ok, s->gpu_memory_mb = 80 * 1024)
MUT(gm_cpu, s->gpu_memory_mb = 80 * 1024; s->cpu_only = true;
    s->gpus_per_node = 0)
MUT(gm_huge, s->gpu_memory_mb = JOB_GPU_MEMORY_MB_MAX + 1)
MUT(cpt_ok, s->cpus_per_task = 128; s->tasks_per_node = 8)
MUT(cpt_big, s->cpus_per_task = 129; s->tasks_per_node = 8)
MUT(mem_ok, s->mem_per_node_mb = JOB_MEM_PER_NODE_MB_MAX)
MUT(mem_big, s->mem_per_node_mb = JOB_MEM_PER_NODE_MB_MAX + 1)
MUT(seg_ok, s->nodes_min = s->nodes_max = 4; s->segment = 2)
MUT(seg_odd, s->nodes_min = s->nodes_max = 3; s->segment = 2)
MUT(seg_elastic, s->nodes_min = 2; s->nodes_max = 5; s->segment = 2)
MUT(seg_elastic_ok, s->nodes_min = 2; s->nodes_max = 6; s->segment = 2)
MUT(seg_leaf, s->nodes_min = s->nodes_max = 2; s->segment = 2;
    s->topo_mode = TOPO_REQUIRED; set_str(&s->topo_level, "leaf"))
MUT(seg_block, s->nodes_min = s->nodes_max = 4; s->segment = 2;
    s->topo_mode = TOPO_REQUIRED; set_str(&s->topo_level, "Block"))
MUT(seg_prefer_leaf, s->nodes_min = s->nodes_max = 4; s->segment = 2;
    s->topo_mode = TOPO_PREFERRED; set_str(&s->topo_level, "leaf"))
MUT(seg_cpu, s->segment = 1; s->cpu_only = true; s->gpus_per_node = 0)
MUT(seg_huge, s->segment = 100001)
MUT(cpu_ok, s->cpu_only = true; s->tasks_per_node = 4)
MUT(cpu_gpus, s->cpu_only = true; s->gpus_per_node = 2)
MUT(cpu_type, s->cpu_only = true; set_str(&s->gpu_type, "H100"))
MUT(excl_ok, s->exclusive = true)
MUT(excl_gpus, s->exclusive = true; s->gpus_per_node = 4)
MUT(excl_cpu, s->exclusive = true; s->cpu_only = true)
MUT(hold_ok, s->hold = true)
MUT(key_ok, set_str(&s->idem_key, "run-42:step.3_A"))
MUT(key_space, set_str(&s->idem_key, "run 42"))
MUT(key_empty, set_str(&s->idem_key, ""))
MUT(key_long, set_str(&s->idem_key, "0123456789012345678901234567890123456789"
    "01234567890123456789012345"))
MUT(umask_ok, s->has_umask = true; s->umask = 0777)
MUT(umask_zero, s->has_umask = true; s->umask = 0)
MUT(umask_big, s->has_umask = true; s->umask = 01000)
MUT(umask_unset, s->has_umask = false; s->umask = 01000)
MUT(host_ok, set_str(&s->submit_host, "login-01.cluster_a.example"))
MUT(host_space, set_str(&s->submit_host, "login 01"))
MUT(host_dash, set_str(&s->submit_host, "-login"))
MUT(host_empty, set_str(&s->submit_host, ""))

static const struct vcase wcases[] = {
	{ "output escapes", mut_out_ok, ROLE_USER, ERR_NONE, NULL },
	{ "output absolute", mut_out_abs, ROLE_USER, ERR_NONE, NULL },
	{ "error", mut_err_ok, ROLE_USER, ERR_NONE, NULL },
	{ "output empty", mut_out_empty, ROLE_USER, ERR_INVALID,
	    "--output: an empty file name" },
	{ "output directory", mut_out_dir, ROLE_USER, ERR_INVALID,
	    "--output: 'logs/' names a directory" },
	{ "output lone %", mut_out_lone, ROLE_USER, ERR_INVALID,
	    "--output: a lone '%' at the end" },
	{ "output job step", mut_out_step, ROLE_USER, ERR_INVALID,
	    "'%J' is not supported by Cohort (Cohort has no job steps" },
	{ "output padding", mut_out_pad, ROLE_USER, ERR_INVALID,
	    "'%4' is not supported by Cohort (no zero padding" },
	{ "output unknown", mut_out_unknown, ROLE_USER, ERR_INVALID,
	    "--output: '%q' is not supported" },
	{ "error step", mut_err_unknown, ROLE_USER, ERR_INVALID,
	    "--error: '%s' is not supported" },
	{ "output control", mut_out_ctrl, ROLE_USER, ERR_INVALID,
	    "--output: control character" },
	{ "output at max", mut_out_max, ROLE_USER, ERR_NONE, NULL },
	{ "output long", mut_out_long, ROLE_USER, ERR_INVALID,
	    "--output: longer than" },
	{ "nodelist", mut_nl_ok, ROLE_USER, ERR_NONE, NULL },
	{ "nodelist duplicates", mut_nl_dup, ROLE_USER, ERR_NONE, NULL },
	/* The nodes the job may use: a list longer than the gang is fine. */
	{ "nodelist over nodes", mut_nl_over, ROLE_USER, ERR_NONE, NULL },
	{ "nodelist elastic", mut_nl_elastic, ROLE_USER, ERR_NONE, NULL },
	{ "nodelist malformed", mut_nl_bad, ROLE_USER, ERR_INVALID,
	    "--nodelist: " },
	{ "nodelist empty", mut_nl_empty, ROLE_USER, ERR_INVALID,
	    "--nodelist: an empty list" },
	{ "nodelist huge", mut_nl_huge, ROLE_USER, ERR_INVALID,
	    "--nodelist: names more than 100000 nodes" },
	{ "nodelist not a name", mut_nl_name, ROLE_USER, ERR_INVALID,
	    "--nodelist: 'gpu@01' is not a node name" },
	{ "nodelist name long", mut_nl_long, ROLE_USER, ERR_INVALID,
	    "is not a node name" },
	{ "exclude", mut_x_ok, ROLE_USER, ERR_NONE, NULL },
	{ "exclude malformed", mut_x_bad, ROLE_USER, ERR_INVALID,
	    "--exclude: " },
	{ "exclude at the limit", mut_x_big_ok, ROLE_USER, ERR_NONE, NULL },
	{ "exclude huge", mut_x_huge, ROLE_USER, ERR_INVALID,
	    "--exclude: names more than 100000 nodes" },
	/* --exclude takes nodes out of --nodelist. */
	{ "nodelist and exclude", mut_x_both, ROLE_USER, ERR_NONE, NULL },
	{ "constraint", mut_c_ok, ROLE_USER, ERR_NONE, NULL },
	{ "constraint malformed", mut_c_bad, ROLE_USER, ERR_INVALID,
	    "--constraint 'fp64|': at column 6: expected a feature name" },
	{ "constraint matching OR", mut_c_bracket, ROLE_USER, ERR_INVALID,
	    "matching OR is not supported" },
	{ "constraint control char", mut_c_ctrl, ROLE_USER, ERR_INVALID,
	    "--constraint" },
	{ "gpu memory", mut_gm_ok, ROLE_USER, ERR_NONE, NULL },
	{ "gpu memory cpu only", mut_gm_cpu, ROLE_USER, ERR_INVALID,
	    "--gpu-memory: a CPU-only job" },
	{ "gpu memory huge", mut_gm_huge, ROLE_USER, ERR_INVALID,
	    "--gpu-memory: at most 1048576 GiB" },
	{ "cpus per task", mut_cpt_ok, ROLE_USER, ERR_NONE, NULL },
	{ "cpus per task too many", mut_cpt_big, ROLE_USER, ERR_INVALID,
	    "--cpus-per-task 129: with 8 tasks per node that is more than "
	    "1024 cores on a node" },
	{ "mem per node", mut_mem_ok, ROLE_USER, ERR_NONE, NULL },
	{ "mem per node huge", mut_mem_big, ROLE_USER, ERR_INVALID,
	    "--mem-per-node: at most 1024T" },
	{ "cpu only", mut_cpu_ok, ROLE_USER, ERR_NONE, NULL },
	{ "cpu only with gpus", mut_cpu_gpus, ROLE_USER, ERR_INVALID,
	    "--gpus-per-node: a CPU-only job asks for 0 GPUs, not 2" },
	{ "cpu only with a type", mut_cpu_type, ROLE_USER, ERR_INVALID,
	    "--gpu-type: a CPU-only job" },
	{ "segment", mut_seg_ok, ROLE_USER, ERR_NONE, NULL },
	{ "segment not dividing", mut_seg_odd, ROLE_USER, ERR_INVALID,
	    "--segment: 3 nodes are not a multiple of the segment size 2" },
	{ "segment elastic", mut_seg_elastic, ROLE_USER, ERR_INVALID,
	    "--segment: --nodes 2-5: both bounds must be multiples of the "
	    "segment size 2" },
	{ "segment elastic ok", mut_seg_elastic_ok, ROLE_USER, ERR_NONE,
	    NULL },
	{ "segment in a leaf", mut_seg_leaf, ROLE_USER, ERR_INVALID,
	    "--segment: cannot be combined with --topology leaf" },
	{ "segment in a block", mut_seg_block, ROLE_USER, ERR_NONE, NULL },
	{ "segment preferring a leaf", mut_seg_prefer_leaf, ROLE_USER,
	    ERR_NONE, NULL },
	{ "segment cpu only", mut_seg_cpu, ROLE_USER, ERR_INVALID,
	    "--segment: a CPU-only job" },
	{ "segment huge", mut_seg_huge, ROLE_USER, ERR_INVALID,
	    "--segment: 100001 is above the limit of 100000" },
	{ "exclusive", mut_excl_ok, ROLE_USER, ERR_NONE, NULL },
	/* Whole nodes of at least that many GPUs; or holding nodes
	 * without a GPU. */
	{ "exclusive with gpus", mut_excl_gpus, ROLE_USER, ERR_NONE, NULL },
	{ "exclusive cpu only", mut_excl_cpu, ROLE_USER, ERR_NONE, NULL },
	{ "hold", mut_hold_ok, ROLE_USER, ERR_NONE, NULL },
	{ "idempotency key", mut_key_ok, ROLE_USER, ERR_NONE, NULL },
	{ "idempotency key with a space", mut_key_space, ROLE_USER,
	    ERR_INVALID, "--idempotency-key: 'run 42' may only contain "
	    "letters, digits, '.', '_', ':' and '-'" },
	{ "idempotency key empty", mut_key_empty, ROLE_USER, ERR_INVALID,
	    "--idempotency-key: empty value" },
	{ "idempotency key too long", mut_key_long, ROLE_USER, ERR_INVALID,
	    "--idempotency-key: longer than 64 characters" },
	/* The submitter's umask: the permission bits, nothing more; not
	 * given is not checked (the agent's default applies). */
	{ "umask 0777", mut_umask_ok, ROLE_USER, ERR_NONE, NULL },
	{ "umask 0", mut_umask_zero, ROLE_USER, ERR_NONE, NULL },
	{ "umask above 0777", mut_umask_big, ROLE_USER, ERR_INVALID,
	    "umask: 01000 is not a file mode mask (at most 0777)" },
	{ "umask not given", mut_umask_unset, ROLE_USER, ERR_NONE, NULL },
	/* The submit host: a host name, which scripts put in commands. */
	{ "submit host", mut_host_ok, ROLE_USER, ERR_NONE, NULL },
	{ "submit host with a space", mut_host_space, ROLE_USER, ERR_INVALID,
	    "submit host: 'login 01' may only contain letters, digits, '.', "
	    "'_' and '-'" },
	{ "submit host like an option", mut_host_dash, ROLE_USER,
	    ERR_INVALID, "submit host: '-login' does not start with a letter "
	    "or digit" },
	{ "submit host empty", mut_host_empty, ROLE_USER, ERR_INVALID,
	    "submit host: empty value" },
};

START_TEST(test_validate_workflow)
{
	const struct vcase *c = &wcases[_i];
	struct job_spec s, before;
	struct cerr err;
	int rc;

	spec_base(&s);
	c->mutate(&s);
	ck_assert_int_eq(job_spec_copy(&before, &s), 0);
	cerr_set(&err, ERR_INTERNAL, "stale");
	rc = job_spec_validate(&s, c->role, NULL, &err);
	if (c->code == ERR_NONE) {
		ck_assert_msg(rc == 0, "%s: refused: %s", c->what, err.text);
	} else {
		ck_assert_msg(rc == -1, "%s: accepted", c->what);
		ck_assert_msg(err.code == c->code, "%s: code %d, text '%s'",
		    c->what, err.code, err.text);
		ck_assert_msg(strstr(err.text, c->needle) != NULL,
		    "%s: '%s' does not contain '%s'", c->what, err.text,
		    c->needle);
		/* Refused: the spec is as it came (the same strings). */
		ck_assert_str_eq(s.output ? s.output : "-",
		    before.output ? before.output : "-");
		ck_assert_str_eq(s.nodelist ? s.nodelist : "-",
		    before.nodelist ? before.nodelist : "-");
		ck_assert_ptr_null(s.name);
	}
	job_spec_clear(&before);
	job_spec_clear(&s);
}
END_TEST

static Suite *
job_suite(void)
{
	Suite *s = suite_create("job");
	TCase *tc;

	tc = tcase_create("spec");
	tcase_add_test(tc, test_init_defaults);
	tcase_add_test(tc, test_clear);
	tcase_add_test(tc, test_copy);
	tcase_add_test(tc, test_copy_empty);
	tcase_add_test(tc, test_strv);
	tcase_add_test(tc, test_job_new_free);
	suite_add_tcase(s, tc);

	tc = tcase_create("validate");
	tcase_add_loop_test(tc, test_validate_case, 0,
	    sizeof(vcases) / sizeof(vcases[0]));
	tcase_add_test(tc, test_validate_script_limit);
	tcase_add_test(tc, test_name_derived);
	tcase_add_test(tc, test_validate_no_side_effects);
	tcase_add_test(tc, test_env_dedup);
	tcase_add_test(tc, test_env_dedup_linear);
	suite_add_tcase(s, tc);

	tc = tcase_create("names");
	tcase_add_test(tc, test_state_names);
	tcase_add_test(tc, test_state_final);
	tcase_add_test(tc, test_roles);
	suite_add_tcase(s, tc);

	tc = tcase_create("ranks");
	tcase_add_test(tc, test_rank_on_node);
	tcase_add_test(tc, test_rank_on_node_in_order);
	tcase_add_test(tc, test_rank_on_node_unplaced);
	suite_add_tcase(s, tc);

	tc = tcase_create("workflow");
	tcase_add_loop_test(tc, test_validate_workflow, 0,
	    sizeof(wcases) / sizeof(wcases[0]));
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(job_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
