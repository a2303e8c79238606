/* daemon/agent/env.c: every variable of docs/SPEC.md's job environment for one
 * task of a 2-node x 4-task job, Cohort's variables winning over the
 * job's and the base's, GPU shares that do not divide evenly, no GPUs. */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agent/env.h"
#include "lib/job.h"

static const char *const nodes[] = { "gpu001", "gpu002" };
static const unsigned gpus8[] = { 0, 1, 2, 3, 4, 5, 6, 7 };

/* Node rank 1, local rank 2 of a 2 x 4 job holding 8 GPUs there. */
static void
te_base(struct task_env *te)
{
	memset(te, 0, sizeof(*te));
	te->job_id = 1234;
	te->job_name = "train";
	te->restart_count = 2;
	te->nnodes = 2;
	te->node_rank = 1;
	te->nodelist = nodes;
	te->master_addr = "10.0.0.1";
	te->master_port = 29500;
	te->tasks_per_node = 4;
	te->local_rank = 2;
	te->gpus = gpus8;
	te->ngpus = 8;
	te->checkpoint_dir = "/ckpt/1234";
	te->resume_checkpoint = "/ckpt/1234/step-100";
	te->progress_file = "/spool/jobs/1234.2/progress";
}

/* The value of key in envp, asserting it appears exactly once. */
static const char *
get(char **envp, size_t n, const char *key)
{
	const char *found = NULL;
	size_t i, klen = strlen(key);

	ck_assert_ptr_null(envp[n]);
	for (i = 0; i < n; i++) {
		if (strncmp(envp[i], key, klen) == 0 && envp[i][klen] == '=') {
			ck_assert_msg(found == NULL, "%s appears twice", key);
			found = envp[i] + klen + 1;
		}
	}
	return found;
}

static void
assert_var(char **envp, size_t n, const char *key, const char *want)
{
	const char *v = get(envp, n, key);

	ck_assert_msg(v != NULL, "%s is missing", key);
	ck_assert_msg(strcmp(v, want) == 0, "%s is '%s', want '%s'", key, v,
	    want);
}

START_TEST(test_every_variable)
{
	struct task_env te;
	struct cerr err;
	char **envp;
	size_t n;

	te_base(&te);
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "COHORT_JOB_ID", "1234");
	assert_var(envp, n, "COHORT_JOB_NAME", "train");
	assert_var(envp, n, "COHORT_NNODES", "2");
	assert_var(envp, n, "COHORT_NODE_RANK", "1");
	assert_var(envp, n, "COHORT_NODELIST", "gpu001,gpu002");
	assert_var(envp, n, "COHORT_RESTART_COUNT", "2");
	assert_var(envp, n, "COHORT_CHECKPOINT_DIR", "/ckpt/1234");
	assert_var(envp, n, "COHORT_RESUME_CHECKPOINT", "/ckpt/1234/step-100");
	assert_var(envp, n, "COHORT_PROGRESS_FILE",
	    "/spool/jobs/1234.2/progress");
	assert_var(envp, n, "COHORT_TASKS_PER_NODE", "4");
	assert_var(envp, n, "MASTER_ADDR", "10.0.0.1");
	assert_var(envp, n, "MASTER_PORT", "29500");
	assert_var(envp, n, "NNODES", "2");
	assert_var(envp, n, "NODE_RANK", "1");
	assert_var(envp, n, "WORLD_SIZE", "8");
	assert_var(envp, n, "RANK", "6");
	assert_var(envp, n, "LOCAL_RANK", "2");
	assert_var(envp, n, "LOCAL_WORLD_SIZE", "4");
	assert_var(envp, n, "CUDA_VISIBLE_DEVICES", "4,5");
	assert_var(envp, n, "CUDA_DEVICE_ORDER", "PCI_BUS_ID");
	/* Cohort's 20, the 16 SLURM_* names, SLURMD_NODENAME, the 6 of
	 * step 0 and the 2 of this node's GPUs. */
	ck_assert_uint_eq(n, 20 + 16 + 1 + 6 + 2);
	strv_free(envp, n);
}
END_TEST

/* Node-local indices come from the allocation, not from the position. */
START_TEST(test_gpu_indices_from_allocation)
{
	static const unsigned odd[] = { 1, 3, 5, 7 };
	struct task_env te;
	struct cerr err;
	char **envp;
	size_t n;

	te_base(&te);
	te.gpus = odd;
	te.ngpus = 4;
	te.tasks_per_node = 2;
	te.local_rank = 1;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "CUDA_VISIBLE_DEVICES", "5,7");
	assert_var(envp, n, "RANK", "3");
	assert_var(envp, n, "WORLD_SIZE", "4");
	strv_free(envp, n);
}
END_TEST

START_TEST(test_first_start_and_no_checkpoint)
{
	struct task_env te;
	struct cerr err;
	char **envp;
	size_t n;

	te_base(&te);
	te.checkpoint_dir = NULL;
	te.resume_checkpoint = NULL;
	te.job_name = NULL;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "COHORT_CHECKPOINT_DIR", "");
	assert_var(envp, n, "COHORT_RESUME_CHECKPOINT", "");
	assert_var(envp, n, "COHORT_JOB_NAME", "");
	strv_free(envp, n);
}
END_TEST

/* base < job < Cohort; each name appears once, in its first place. */
START_TEST(test_override)
{
	static const char *const base[] = { "HOME=/home/alice",
	    "PATH=/usr/bin:/bin", "USER=alice", "RANK=99" };
	static const char *const user[] = { "PATH=/opt/bin:/usr/bin",
	    "COHORT_JOB_ID=7", "MASTER_ADDR=evil", "MASTER_PORT=1",
	    "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "OMP_NUM_THREADS=8",
	    "EMPTY=", "OMP_NUM_THREADS=4" };
	struct task_env te;
	struct cerr err;
	char **envp;
	size_t n;

	te_base(&te);
	te.base_env = base;
	te.nbase_env = 4;
	te.user_env = user;
	te.nuser_env = 8;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "HOME", "/home/alice");
	assert_var(envp, n, "USER", "alice");
	assert_var(envp, n, "PATH", "/opt/bin:/usr/bin");
	assert_var(envp, n, "OMP_NUM_THREADS", "4");
	assert_var(envp, n, "EMPTY", "");
	assert_var(envp, n, "COHORT_JOB_ID", "1234");
	assert_var(envp, n, "MASTER_ADDR", "10.0.0.1");
	assert_var(envp, n, "MASTER_PORT", "29500");
	assert_var(envp, n, "CUDA_VISIBLE_DEVICES", "4,5");
	assert_var(envp, n, "RANK", "6");
	/* HOME, PATH, USER, OMP_NUM_THREADS, EMPTY, Cohort's 20, the 16
	 * SLURM_* names, SLURMD_NODENAME, the 6 of step 0, the 2 of the
	 * node's GPUs and SLURM_JOB_USER. */
	ck_assert_uint_eq(n, 5 + 20 + 16 + 1 + 6 + 2 + 1);
	ck_assert_str_eq(envp[0], "HOME=/home/alice");
	ck_assert_str_eq(envp[1], "PATH=/opt/bin:/usr/bin");
	strv_free(envp, n);
}
END_TEST

START_TEST(test_bad_entries)
{
	static const char *const noeq[] = { "JUSTANAME" };
	static const char *const noname[] = { "=value" };
	struct task_env te;
	struct cerr err;
	char **envp;
	size_t n;

	te_base(&te);
	te.user_env = noeq;
	te.nuser_env = 1;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.text, "JUSTANAME"));
	ck_assert_ptr_null(envp);
	te.user_env = noname;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), -1);

	te_base(&te);
	te.local_rank = 4;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	te_base(&te);
	te.node_rank = 2;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), -1);
	te_base(&te);
	te.tasks_per_node = 0;
	te.local_rank = 0;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), -1);
}
END_TEST

START_TEST(test_no_gpus)
{
	struct task_env te;
	struct cerr err;
	char **envp;
	size_t n;

	te_base(&te);
	te.gpus = NULL;
	te.ngpus = 0;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	/* Set and empty, so that a CPU job sees no GPU at all. */
	assert_var(envp, n, "CUDA_VISIBLE_DEVICES", "");
	strv_free(envp, n);
}
END_TEST

START_TEST(test_uneven_shares)
{
	static const unsigned gpus6[] = { 0, 1, 2, 3, 4, 5 };
	static const char *const want[] = { "0,1", "2,3", "4", "5" };
	struct task_env te;
	struct cerr err;
	char **envp;
	size_t n;
	unsigned r;

	te_base(&te);
	te.gpus = gpus6;
	te.ngpus = 6;
	for (r = 0; r < 4; r++) {
		te.local_rank = r;
		ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
		assert_var(envp, n, "CUDA_VISIBLE_DEVICES", want[r]);
		strv_free(envp, n);
	}
	/* More tasks than GPUs: the last ones get none. */
	te.ngpus = 2;
	te.local_rank = 3;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "CUDA_VISIBLE_DEVICES", "");
	strv_free(envp, n);
}
END_TEST

/* Every split covers the GPUs exactly once, in order, evenly. */
START_TEST(test_task_gpus_cover)
{
	size_t n, off, len, next, lo, hi;
	unsigned t, r;

	for (n = 0; n <= 16; n++) {
		for (t = 1; t <= 9; t++) {
			next = 0;
			lo = SIZE_MAX;
			hi = 0;
			for (r = 0; r < t; r++) {
				env_task_gpus(n, t, r, &off, &len);
				ck_assert_uint_eq(off, next);
				next = off + len;
				lo = len < lo ? len : lo;
				hi = len > hi ? len : hi;
			}
			ck_assert_uint_eq(next, n);
			ck_assert_uint_le(hi - lo, 1);
		}
	}
	env_task_gpus(8, 4, 4, &off, &len);
	ck_assert_uint_eq(len, 0);
	env_task_gpus(8, 0, 0, &off, &len);
	ck_assert_uint_eq(off, 0);
	ck_assert_uint_eq(len, 8);
}
END_TEST

/* The value of key in envp, or NULL when it is not there. */
static const char *
maybe(char **envp, size_t n, const char *key)
{
	return get(envp, n, key);
}

/* Slurm's names, for scripts written for sbatch: the same facts as
 * Cohort's, and Cohort's to set (the job's env cannot change them). */
START_TEST(test_slurm_names)
{
	static const char *const user[] = { "SLURM_JOB_ID=9",
	    "SLURM_PROCID=0" };
	struct task_env te;
	struct cerr err;
	char **envp;
	size_t n;

	te_base(&te);
	te.user_env = user;
	te.nuser_env = 2;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "SLURM_JOB_ID", "1234");
	assert_var(envp, n, "SLURM_JOBID", "1234");
	assert_var(envp, n, "SLURM_JOB_NAME", "train");
	assert_var(envp, n, "SLURM_NNODES", "2");
	assert_var(envp, n, "SLURM_JOB_NUM_NODES", "2");
	assert_var(envp, n, "SLURM_NODEID", "1");
	assert_var(envp, n, "SLURM_PROCID", "6");
	assert_var(envp, n, "SLURM_LOCALID", "2");
	assert_var(envp, n, "SLURM_NTASKS", "8");
	assert_var(envp, n, "SLURM_NPROCS", "8");
	assert_var(envp, n, "SLURM_NTASKS_PER_NODE", "4");
	assert_var(envp, n, "SLURM_TASKS_PER_NODE", "4(x2)");
	assert_var(envp, n, "SLURM_JOB_NODELIST", "gpu[001-002]");
	assert_var(envp, n, "SLURM_NODELIST", "gpu[001-002]");
	assert_var(envp, n, "SLURM_RESTART_COUNT", "2");
	assert_var(envp, n, "SLURM_GPUS_ON_NODE", "8");
	ck_assert_ptr_null(maybe(envp, n, "SLURM_SUBMIT_DIR"));
	/* Not an array task. */
	ck_assert_ptr_null(maybe(envp, n, "SLURM_ARRAY_TASK_ID"));
	ck_assert_ptr_null(maybe(envp, n, "COHORT_ARRAY_TASK_ID"));
	ck_assert_ptr_null(maybe(envp, n, "COHORT_ARRAY_JOB_ID"));
	strv_free(envp, n);

	te.nnodes = 1;
	te.node_rank = 0;
	te.workdir = "/home/alice/run";
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "SLURM_TASKS_PER_NODE", "4");
	assert_var(envp, n, "SLURM_SUBMIT_DIR", "/home/alice/run");
	assert_var(envp, n, "SLURM_PROCID", "2");
	strv_free(envp, n);
}
END_TEST

/* What a Slurm script looks for beyond the job's shape: this node's
 * name, step 0, the partition, the submit host, the cluster, the
 * CPUs per task, the account and its uid, this node's GPUs; none of
 * the optional ones when there is nothing to say, and never the job
 * env's. */
START_TEST(test_slurm_more)
{
	static const char *const base[] = { "USER=alice",
	    "PATH=/usr/bin:/bin" };
	static const char *const user[] = { "USER=al",
	    "SLURM_CPUS_PER_TASK=64", "SLURM_JOB_GPUS=0,1,2,3,4,5,6,7",
	    "SLURM_SUBMIT_HOST=elsewhere", "SLURM_STEP_ID=5",
	    "SLURM_JOB_UID=0" };
	static const unsigned odd[] = { 1, 3, 5, 7 };
	struct task_env te;
	struct cerr err;
	char **envp;
	size_t n;

	te_base(&te);
	te.gpus = odd;
	te.ngpus = 4;
	te.base_env = base;
	te.nbase_env = 2;
	te.partition = "team-a";
	te.submit_host = "login01.example";
	te.cluster_name = "east";
	te.cpus_per_task = 6;
	te.has_uid = true;
	te.uid = 1001;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "SLURMD_NODENAME", "gpu002");
	assert_var(envp, n, "SLURM_STEP_ID", "0");
	assert_var(envp, n, "SLURM_STEPID", "0");
	assert_var(envp, n, "SLURM_STEP_NODELIST", "gpu[001-002]");
	assert_var(envp, n, "SLURM_STEP_NUM_NODES", "2");
	assert_var(envp, n, "SLURM_STEP_NUM_TASKS", "8");
	assert_var(envp, n, "SLURM_STEP_TASKS_PER_NODE", "4(x2)");
	assert_var(envp, n, "SLURM_JOB_PARTITION", "team-a");
	assert_var(envp, n, "SLURM_SUBMIT_HOST", "login01.example");
	assert_var(envp, n, "SLURM_CLUSTER_NAME", "east");
	assert_var(envp, n, "SLURM_CPUS_PER_TASK", "6");
	assert_var(envp, n, "SLURM_JOB_USER", "alice");
	assert_var(envp, n, "SLURM_JOB_UID", "1001");
	/* The node's GPUs, all of them, as CUDA numbers them; the task's
	 * share is CUDA_VISIBLE_DEVICES. */
	assert_var(envp, n, "SLURM_JOB_GPUS", "1,3,5,7");
	assert_var(envp, n, "SLURM_STEP_GPUS", "1,3,5,7");
	assert_var(envp, n, "CUDA_VISIBLE_DEVICES", "5");
	strv_free(envp, n);

	/* Nothing to say: the optional ones are not set, and those the
	 * job's env brought are gone. */
	te_base(&te);
	te.ngpus = 0;
	te.user_env = user;
	te.nuser_env = 6;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	ck_assert_ptr_null(maybe(envp, n, "SLURM_JOB_PARTITION"));
	ck_assert_ptr_null(maybe(envp, n, "SLURM_SUBMIT_HOST"));
	ck_assert_ptr_null(maybe(envp, n, "SLURM_CLUSTER_NAME"));
	ck_assert_ptr_null(maybe(envp, n, "SLURM_CPUS_PER_TASK"));
	ck_assert_ptr_null(maybe(envp, n, "SLURM_JOB_UID"));
	ck_assert_ptr_null(maybe(envp, n, "SLURM_JOB_GPUS"));
	ck_assert_ptr_null(maybe(envp, n, "SLURM_STEP_GPUS"));
	assert_var(envp, n, "SLURM_STEP_ID", "0");
	/* No account USER in the base: the USER the task has. */
	assert_var(envp, n, "SLURM_JOB_USER", "al");
	strv_free(envp, n);
}
END_TEST

/* SLURM_JOB_NODELIST keeps rank order, compressed: the n-th name of
 * its expansion is node rank n, as scontrol show hostnames gives it. */
START_TEST(test_slurm_nodelist_order)
{
	static const char *const three[] = { "node03", "node01", "node02" };
	static const char *const mixed[] = { "a9", "b1", "a10" };
	struct task_env te;
	struct cerr err;
	char **envp;
	size_t n;

	te_base(&te);
	te.nodelist = three;
	te.nnodes = 3;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "SLURM_JOB_NODELIST", "node[03,01-02]");
	assert_var(envp, n, "SLURM_NODELIST", "node[03,01-02]");
	assert_var(envp, n, "SLURMD_NODENAME", "node01");
	assert_var(envp, n, "COHORT_NODELIST", "node03,node01,node02");
	strv_free(envp, n);
	te.nodelist = mixed;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "SLURM_JOB_NODELIST", "a9,b1,a10");
	strv_free(envp, n);
}
END_TEST

/* Slurm's commands first on PATH: over the job's PATH, over the
 * account's, once; none asked, PATH as the layers made it. */
START_TEST(test_slurm_path)
{
	static const char *const base[] = { "PATH=/usr/bin:/bin" };
	static const char *const venv[] = { "PATH=/venv/bin:/usr/bin" };
	static const char *const again[] = {
	    "PATH=/opt/cohort/slurm:/usr/bin" };
	static const char *const prefix[] = {
	    "PATH=/opt/cohort/slurmx:/usr/bin" };
	static const char *const later[] = {
	    "PATH=/venv/bin:/opt/cohort/slurm:/usr/bin" };
	struct task_env te;
	struct cerr err;
	char **envp;
	size_t n;

	te_base(&te);
	te.base_env = base;
	te.nbase_env = 1;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "PATH", "/usr/bin:/bin");
	strv_free(envp, n);
	te.slurm_commands = "/opt/cohort/slurm";
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "PATH", "/opt/cohort/slurm:/usr/bin:/bin");
	/* In the place PATH had: the first. */
	ck_assert_str_eq(envp[0], "PATH=/opt/cohort/slurm:/usr/bin:/bin");
	strv_free(envp, n);
	te.user_env = venv;
	te.nuser_env = 1;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "PATH", "/opt/cohort/slurm:/venv/bin:/usr/bin");
	strv_free(envp, n);
	te.user_env = again;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "PATH", "/opt/cohort/slurm:/usr/bin");
	strv_free(envp, n);
	te.user_env = prefix;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "PATH",
	    "/opt/cohort/slurm:/opt/cohort/slurmx:/usr/bin");
	strv_free(envp, n);
	/* Already there, after a venv: the submitter's order stays. */
	te.user_env = later;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "PATH", "/venv/bin:/opt/cohort/slurm:/usr/bin");
	strv_free(envp, n);
	/* No PATH anywhere: the directory alone. */
	te.base_env = NULL;
	te.nbase_env = 0;
	te.user_env = NULL;
	te.nuser_env = 0;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "PATH", "/opt/cohort/slurm");
	strv_free(envp, n);
}
END_TEST

/* An array task's variables, with the array's bounds from its spec. */
static void
assert_array(const char *spec, const char *count, const char *min,
    const char *max, const char *step)
{
	static const char *const user[] = { "COHORT_ARRAY_TASK_ID=99",
	    "SLURM_ARRAY_TASK_COUNT=1" };
	const char *const want[4] = { count, min, max, step };
	static const char *const keys[4] = { "SLURM_ARRAY_TASK_COUNT",
	    "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX",
	    "SLURM_ARRAY_TASK_STEP" };
	struct task_env te;
	struct cerr err;
	char **envp;
	size_t n, i;
	const char *v;

	te_base(&te);
	te.array_id = 1200;
	te.array_task = 8;
	te.array_spec = spec;
	te.user_env = user;
	te.nuser_env = 2;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "COHORT_ARRAY_JOB_ID", "1200");
	assert_var(envp, n, "COHORT_ARRAY_TASK_ID", "8");
	assert_var(envp, n, "SLURM_ARRAY_JOB_ID", "1200");
	assert_var(envp, n, "SLURM_ARRAY_TASK_ID", "8");
	assert_var(envp, n, "COHORT_JOB_ID", "1234");
	for (i = 0; i < 4; i++) {
		v = maybe(envp, n, keys[i]);
		if (want[i] == NULL)
			ck_assert_msg(v == NULL, "'%s': %s is '%s', want none",
			    spec, keys[i], v);
		else
			ck_assert_msg(v != NULL && strcmp(v, want[i]) == 0,
			    "'%s': %s is '%s', want '%s'", spec, keys[i],
			    v != NULL ? v : "(none)", want[i]);
	}
	strv_free(envp, n);
}

START_TEST(test_array_task)
{
	assert_array("0-99:4%8", "25", "0", "96", "4");
	assert_array("0-99", "100", "0", "99", "1");
	assert_array("8", "1", "8", "8", "1");
	assert_array("0-10:5", "3", "0", "10", "5");
	assert_array("0-9:4", "3", "0", "8", "4");
	/* Uneven: no step, as the indices have none. */
	assert_array("1,3,5-9", "7", "1", "9", NULL);
	assert_array("0-8:2,10", "6", "0", "10", "2");
	/* Items in any order; a spec the controller refuses (an index
	 * given twice) says nothing beyond the ids. */
	assert_array("9,1", "2", "1", "9", "8");
	assert_array("1-5,3-7%2", NULL, NULL, NULL, NULL);
	/* Not a spec the agent understands: the ids alone. */
	assert_array("a-b", NULL, NULL, NULL, NULL);
	assert_array("5-1", NULL, NULL, NULL, NULL);
	assert_array("1-5:0", NULL, NULL, NULL, NULL);
	assert_array("1,", NULL, NULL, NULL, NULL);
	assert_array("", NULL, NULL, NULL, NULL);
	assert_array(NULL, NULL, NULL, NULL, NULL);
	/* More tasks than an array may have (the controller refuses it). */
	assert_array("0-150000", NULL, NULL, NULL, NULL);
}
END_TEST

/* A CPU-only task sees no GPU, whatever the allocation or the job's
 * env say; a GPU job's NVIDIA_VISIBLE_DEVICES is left to the job. */
START_TEST(test_cpu_only)
{
	static const char *const user[] = { "CUDA_VISIBLE_DEVICES=0",
	    "NVIDIA_VISIBLE_DEVICES=all" };
	struct task_env te;
	struct cerr err;
	char **envp;
	size_t n;

	te_base(&te);
	te.cpu_only = true;
	te.user_env = user;
	te.nuser_env = 2;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "CUDA_VISIBLE_DEVICES", "");
	assert_var(envp, n, "NVIDIA_VISIBLE_DEVICES", "void");
	assert_var(envp, n, "SLURM_GPUS_ON_NODE", "0");
	ck_assert_ptr_null(maybe(envp, n, "SLURM_JOB_GPUS"));
	ck_assert_ptr_null(maybe(envp, n, "SLURM_STEP_GPUS"));
	strv_free(envp, n);

	te.cpu_only = false;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "CUDA_VISIBLE_DEVICES", "4,5");
	assert_var(envp, n, "NVIDIA_VISIBLE_DEVICES", "all");
	strv_free(envp, n);
}
END_TEST

/* The submitter's environment (--export ALL) wins over the account's
 * defaults, so that an activated venv or conda works; HOME, USER and
 * LOGNAME stay the account's the task runs as; Cohort's stay Cohort's. */
START_TEST(test_submitter_env)
{
	static const char *const base[] = { "HOME=/home/alice",
	    "USER=alice", "LOGNAME=alice", "SHELL=/bin/sh",
	    "PATH=/usr/local/bin:/usr/bin:/bin" };
	static const char *const user[] = {
	    "PATH=/home/al/venv/bin:/usr/bin:/bin",
	    "VIRTUAL_ENV=/home/al/venv", "CONDA_PREFIX=/opt/conda/envs/t",
	    "CONDA_DEFAULT_ENV=t", "LD_LIBRARY_PATH=/opt/cuda/lib64",
	    "PYTHONPATH=/home/al/src", "HOME=/home/al", "USER=al",
	    "LOGNAME=al", "WORLD_SIZE=1", "RANK=0", "MASTER_PORT=1",
	    "COHORT_NODE_RANK=0" };
	struct task_env te;
	struct cerr err;
	char **envp;
	size_t n;

	te_base(&te);
	te.base_env = base;
	te.nbase_env = 5;
	te.user_env = user;
	te.nuser_env = 13;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "PATH", "/home/al/venv/bin:/usr/bin:/bin");
	assert_var(envp, n, "VIRTUAL_ENV", "/home/al/venv");
	assert_var(envp, n, "CONDA_PREFIX", "/opt/conda/envs/t");
	assert_var(envp, n, "CONDA_DEFAULT_ENV", "t");
	assert_var(envp, n, "LD_LIBRARY_PATH", "/opt/cuda/lib64");
	assert_var(envp, n, "PYTHONPATH", "/home/al/src");
	assert_var(envp, n, "HOME", "/home/alice");
	assert_var(envp, n, "SHELL", "/bin/sh");
	assert_var(envp, n, "USER", "alice");
	assert_var(envp, n, "LOGNAME", "alice");
	assert_var(envp, n, "WORLD_SIZE", "8");
	assert_var(envp, n, "RANK", "6");
	assert_var(envp, n, "MASTER_PORT", "29500");
	assert_var(envp, n, "COHORT_NODE_RANK", "1");
	strv_free(envp, n);
}
END_TEST

/* COHORT_TASK_NIC and NCCL_IB_HCA: the NICs of the task's own GPUs, in
 * GPU order, each once; NCCL's as exact names; a job's own NCCL_IB_HCA
 * stands; none without NIC names, and a COHORT_TASK_NIC the job brought
 * is dropped. */
START_TEST(test_task_nics)
{
	/* Local rank 2 of 4 gets GPUs 4 and 5 of the 8. */
	static const char *const nics8[] = { "mlx5_0", "mlx5_0", "mlx5_1",
		"mlx5_1", "mlx5_3", "mlx5_2", NULL, "" };
	static const char *const user[] = { "NCCL_IB_HCA=mlx5_9",
		"COHORT_TASK_NIC=stale" };
	static const char *const stale[] = { "COHORT_TASK_NIC=stale" };
	struct task_env te;
	struct cerr err;
	char **envp;
	size_t n;

	te_base(&te);
	te.gpu_nics = nics8;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "COHORT_TASK_NIC", "mlx5_3,mlx5_2");
	assert_var(envp, n, "NCCL_IB_HCA", "=mlx5_3,mlx5_2");
	strv_free(envp, n);

	/* Two GPUs on one NIC name it once. */
	te.local_rank = 0;
	te.tasks_per_node = 1;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "COHORT_TASK_NIC", "mlx5_0,mlx5_1,mlx5_3,mlx5_2");
	strv_free(envp, n);

	/* The user's NCCL_IB_HCA is kept; COHORT_TASK_NIC is Cohort's. */
	te_base(&te);
	te.gpu_nics = nics8;
	te.user_env = user;
	te.nuser_env = 2;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "NCCL_IB_HCA", "mlx5_9");
	assert_var(envp, n, "COHORT_TASK_NIC", "mlx5_3,mlx5_2");
	strv_free(envp, n);

	/* GPUs without NIC names (rank 3: GPUs 6 and 7), no names at all,
	 * a CPU-only task: neither variable. */
	te_base(&te);
	te.gpu_nics = nics8;
	te.local_rank = 3;
	te.user_env = stale;
	te.nuser_env = 1;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	ck_assert_ptr_null(get(envp, n, "COHORT_TASK_NIC"));
	ck_assert_ptr_null(get(envp, n, "NCCL_IB_HCA"));
	strv_free(envp, n);
	te.gpu_nics = NULL;
	te.local_rank = 0;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	ck_assert_ptr_null(get(envp, n, "COHORT_TASK_NIC"));
	ck_assert_ptr_null(get(envp, n, "NCCL_IB_HCA"));
	strv_free(envp, n);
	te.gpu_nics = nics8;
	te.cpu_only = true;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	ck_assert_ptr_null(get(envp, n, "COHORT_TASK_NIC"));
	ck_assert_ptr_null(get(envp, n, "NCCL_IB_HCA"));
	strv_free(envp, n);
}
END_TEST

/* A batch script: rank 0, all of the node's GPUs, no step variables,
 * whatever the job's env brought; the job's shape stays. */
START_TEST(test_batch_script)
{
	const char *const user[] = { "SLURM_STEP_ID=3", "SLURM_STEPID=3",
	    "COHORT_STEP_CRED=/elsewhere" };
	struct task_env te;
	struct cerr err;
	char **envp;
	size_t n;

	te_base(&te);
	te.node_rank = 0;
	te.local_rank = 0;
	te.batch = true;
	te.user_env = user;
	te.nuser_env = 3;
	te.step_cred_file = "/spool/jobs/1234.2/step-cred";
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	assert_var(envp, n, "SLURM_PROCID", "0");
	assert_var(envp, n, "SLURM_LOCALID", "0");
	assert_var(envp, n, "SLURM_NODEID", "0");
	assert_var(envp, n, "SLURM_NTASKS", "8");
	assert_var(envp, n, "SLURM_TASKS_PER_NODE", "4(x2)");
	assert_var(envp, n, "CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7");
	assert_var(envp, n, "SLURM_JOB_GPUS", "0,1,2,3,4,5,6,7");
	assert_var(envp, n, "SLURM_GPUS_ON_NODE", "8");
	assert_var(envp, n, "COHORT_STEP_CRED", "/spool/jobs/1234.2/step-cred");
	ck_assert_ptr_null(get(envp, n, "SLURM_STEP_ID"));
	ck_assert_ptr_null(get(envp, n, "SLURM_STEPID"));
	ck_assert_ptr_null(get(envp, n, "SLURM_STEP_NODELIST"));
	ck_assert_ptr_null(get(envp, n, "SLURM_STEP_GPUS"));
	ck_assert_ptr_null(get(envp, n, "SLURM_STEP_NUM_TASKS"));
	strv_free(envp, n);
	/* Without a credential, none from the job's env either. */
	te.step_cred_file = NULL;
	ck_assert_int_eq(env_build(&te, &envp, &n, &err), 0);
	ck_assert_ptr_null(get(envp, n, "COHORT_STEP_CRED"));
	strv_free(envp, n);
}
END_TEST

START_TEST(test_tasks_compress)
{
	const unsigned c[] = { 2, 2, 2, 1, 4, 4 };
	char *s;

	ck_assert_ptr_nonnull(s = env_tasks_compress(c, 6));
	ck_assert_str_eq(s, "2(x3),1,4(x2)");
	free(s);
	ck_assert_ptr_nonnull(s = env_tasks_compress(c + 3, 1));
	ck_assert_str_eq(s, "1");
	free(s);
	ck_assert_ptr_nonnull(s = env_tasks_compress(c, 0));
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

static const char *const snodes[] = { "gpu002", "gpu007", "gpu008" };
static const unsigned stpn[] = { 2, 2, 1 };
static const unsigned sgpus[] = { 6, 4, 5, 7 };

/* Local task 1 of step 4 on gpu002 (index 0): 2, 2 and 1 tasks on three
 * nodes, one GPU each. */
static void
se_base(struct step_env *se)
{
	memset(se, 0, sizeof(*se));
	se->step_id = 4;
	se->nodelist = snodes;
	se->nnodes = 3;
	se->node_index = 0;
	se->tasks_per_node = stpn;
	se->ntasks = 5;
	se->first_rank = 0;
	se->local_rank = 1;
	se->gpus = sgpus;
	se->ngpus = 4;
	se->gpus_per_task = 1;
	se->master_addr = "10.0.0.2";
	se->master_port = 6000;
}

START_TEST(test_step_every_variable)
{
	const char *const srun[] = { "FROM_SRUN=yes", "SLURM_NTASKS=99",
	    "PATH=/srun/bin", "RANK=42" };
	struct task_env te;
	struct step_env se;
	struct cerr err;
	char **envp;
	size_t n;

	te_base(&te);
	te.batch = true;
	te.slurm_commands = "/opt/slurm/bin";
	te.step_cred_file = "/spool/c";
	se_base(&se);
	se.env = srun;
	se.nenv = 4;
	se.cpus_per_task = 3;
	ck_assert_int_eq(env_build_step(&te, &se, &envp, &n, &err), 0);
	assert_var(envp, n, "FROM_SRUN", "yes");
	assert_var(envp, n, "PATH", "/opt/slurm/bin:/srun/bin");
	assert_var(envp, n, "SLURM_JOB_ID", "1234");
	assert_var(envp, n, "SLURM_STEP_ID", "4");
	assert_var(envp, n, "SLURM_STEPID", "4");
	assert_var(envp, n, "SLURM_STEP_NODELIST", "gpu[002,007-008]");
	assert_var(envp, n, "SLURM_STEP_NUM_NODES", "3");
	assert_var(envp, n, "SLURM_STEP_NUM_TASKS", "5");
	assert_var(envp, n, "SLURM_STEP_TASKS_PER_NODE", "2(x2),1");
	assert_var(envp, n, "SLURM_NNODES", "2");
	assert_var(envp, n, "SLURM_JOB_NUM_NODES", "2");
	assert_var(envp, n, "SLURM_NTASKS", "5");
	assert_var(envp, n, "SLURM_NPROCS", "5");
	assert_var(envp, n, "SLURM_PROCID", "1");
	assert_var(envp, n, "SLURM_LOCALID", "1");
	assert_var(envp, n, "SLURM_NODEID", "0");
	assert_var(envp, n, "SLURMD_NODENAME", "gpu002");
	assert_var(envp, n, "SLURM_CPUS_PER_TASK", "3");
	assert_var(envp, n, "CUDA_VISIBLE_DEVICES", "4");
	assert_var(envp, n, "SLURM_STEP_GPUS", "4");
	assert_var(envp, n, "SLURM_JOB_GPUS", "0,1,2,3,4,5,6,7");
	assert_var(envp, n, "SLURM_GPUS_ON_NODE", "4");
	assert_var(envp, n, "RANK", "1");
	assert_var(envp, n, "WORLD_SIZE", "5");
	assert_var(envp, n, "LOCAL_RANK", "1");
	assert_var(envp, n, "LOCAL_WORLD_SIZE", "2");
	assert_var(envp, n, "MASTER_ADDR", "10.0.0.2");
	assert_var(envp, n, "MASTER_PORT", "6000");
	assert_var(envp, n, "COHORT_STEP_CRED", "/spool/c");
	assert_var(envp, n, "COHORT_JOB_ID", "1234");
	strv_free(envp, n);

	/* Node index 2 (ranks from 4), every GPU for each task; without
	 * srun's env, the job's own. */
	se.env = NULL;
	se.nenv = 0;
	se.node_index = 2;
	se.first_rank = 4;
	se.local_rank = 0;
	se.gpus_per_task = 0;
	se.cpus_per_task = 0;
	ck_assert_int_eq(env_build_step(&te, &se, &envp, &n, &err), 0);
	ck_assert_ptr_null(get(envp, n, "FROM_SRUN"));
	assert_var(envp, n, "SLURM_PROCID", "4");
	assert_var(envp, n, "SLURM_NODEID", "2");
	assert_var(envp, n, "SLURMD_NODENAME", "gpu008");
	assert_var(envp, n, "CUDA_VISIBLE_DEVICES", "6,4,5,7");
	assert_var(envp, n, "SLURM_STEP_GPUS", "6,4,5,7");
	assert_var(envp, n, "LOCAL_WORLD_SIZE", "1");
	strv_free(envp, n);

	/* A step without GPUs: CUDA sees none, as a job's task without. */
	se.ngpus = 0;
	ck_assert_int_eq(env_build_step(&te, &se, &envp, &n, &err), 0);
	assert_var(envp, n, "CUDA_VISIBLE_DEVICES", "");
	ck_assert_ptr_null(get(envp, n, "SLURM_STEP_GPUS"));
	assert_var(envp, n, "SLURM_GPUS_ON_NODE", "0");
	strv_free(envp, n);
}
END_TEST

START_TEST(test_step_bad)
{
	const char *const bad[] = { "=nokey" };
	struct task_env te;
	struct step_env se;
	struct cerr err;
	char **envp;
	size_t n;

	te_base(&te);
	se_base(&se);
	se.node_index = 3;
	ck_assert_int_eq(env_build_step(&te, &se, &envp, &n, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	se_base(&se);
	se.local_rank = 2;
	ck_assert_int_eq(env_build_step(&te, &se, &envp, &n, &err), -1);
	se_base(&se);
	se.env = bad;
	se.nenv = 1;
	ck_assert_int_eq(env_build_step(&te, &se, &envp, &n, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
}
END_TEST

static Suite *
env_suite(void)
{
	Suite *s = suite_create("env");
	TCase *tc;

	tc = tcase_create("build");
	tcase_add_test(tc, test_every_variable);
	tcase_add_test(tc, test_gpu_indices_from_allocation);
	tcase_add_test(tc, test_first_start_and_no_checkpoint);
	tcase_add_test(tc, test_override);
	tcase_add_test(tc, test_bad_entries);
	tcase_add_test(tc, test_slurm_names);
	tcase_add_test(tc, test_slurm_more);
	tcase_add_test(tc, test_slurm_nodelist_order);
	tcase_add_test(tc, test_slurm_path);
	tcase_add_test(tc, test_array_task);
	tcase_add_test(tc, test_cpu_only);
	tcase_add_test(tc, test_submitter_env);
	tcase_add_test(tc, test_task_nics);
	suite_add_tcase(s, tc);

	tc = tcase_create("gpus");
	tcase_add_test(tc, test_no_gpus);
	tcase_add_test(tc, test_uneven_shares);
	tcase_add_test(tc, test_task_gpus_cover);
	tcase_add_test(tc, test_batch_script);
	tcase_add_test(tc, test_tasks_compress);
	tcase_add_test(tc, test_step_every_variable);
	tcase_add_test(tc, test_step_bad);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(env_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
