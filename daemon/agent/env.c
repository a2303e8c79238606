/* The job environment contract of docs/SPEC.md ("Job environment"), built for
 * one task out of what the agent knows about the start. Nothing here
 * reads the process environment: the caller passes the target user's
 * base variables, so the result is the same wherever it is built. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agent/env.h"
#include "lib/array.h"
#include "lib/hostlist.h"
#include "lib/job.h"

/* A growing envp in which a later "K=V" replaces an earlier one with the
 * same K, so that the order of env_build's layers decides who wins and
 * the result holds each name once. */
struct envv {
	char **v;
	size_t n;
};

static size_t
env_keylen(const char *kv)
{
	const char *eq = strchr(kv, '=');

	return eq == NULL ? 0 : (size_t)(eq - kv);
}

/* Take ownership of kv (a malloc'd "K=V") and append it to e; a later
 * one of the same name wins (envv_dedup). Appending, not looking for the
 * name, keeps each task's environment linear in the job's variables
 * (up to JOB_ENV_LIMIT of them, for each of up to
 * JOB_TASKS_PER_NODE_LIMIT tasks). */
static int
envv_put_owned(struct envv *e, char *kv)
{
	char **nv;

	/* Room for kv and the terminating NULL execve wants. */
	if ((nv = reallocarray(e->v, e->n + 2, sizeof(*nv))) == NULL) {
		free(kv);
		return -1;
	}
	nv[e->n++] = kv;
	nv[e->n] = NULL;
	e->v = nv;
	return 0;
}

struct envkey {
	const char *kv;
	size_t klen, pos;
};

static int
envkey_cmp(const void *a, const void *b)
{
	const struct envkey *x = a, *y = b;
	size_t n = x->klen < y->klen ? x->klen : y->klen;
	int c = memcmp(x->kv, y->kv, n);

	if (c != 0)
		return c;
	if (x->klen != y->klen)
		return x->klen < y->klen ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Keep the last of each name where the first of it stood, as putting
 * them one by one over each other did: sorted, O(n log n). */
static int
envv_dedup(struct envv *e)
{
	struct envkey *k;
	size_t i, o;

	if (e->n < 2)
		return 0;
	if ((k = calloc(e->n, sizeof(*k))) == NULL)
		return -1;
	for (i = 0; i < e->n; i++) {
		k[i].kv = e->v[i];
		k[i].klen = env_keylen(e->v[i]);
		k[i].pos = i;
	}
	qsort(k, e->n, sizeof(*k), envkey_cmp);
	for (i = 0; i + 1 < e->n; i++) {
		if (k[i].klen != k[i + 1].klen ||
		    memcmp(k[i].kv, k[i + 1].kv, k[i].klen) != 0)
			continue;
		/* The later one takes the earlier one's place. */
		free(e->v[k[i].pos]);
		e->v[k[i].pos] = e->v[k[i + 1].pos];
		e->v[k[i + 1].pos] = NULL;
		k[i + 1].pos = k[i].pos;
	}
	free(k);
	for (i = o = 0; i < e->n; i++)
		if (e->v[i] != NULL)
			e->v[o++] = e->v[i];
	e->n = o;
	e->v[o] = NULL;
	return 0;
}

/* Copy a layer of "K=V" strings given by the base system or the job. An
 * entry without a name is refused rather than passed on, as execve would
 * hand the task something that is not a variable. */
static int
envv_put_layer(struct envv *e, const char *const *kv, size_t n,
    const char *what, struct cerr *err)
{
	size_t i;
	char *copy;

	for (i = 0; i < n; i++) {
		if (kv[i] == NULL || env_keylen(kv[i]) == 0)
			return cerr_set(err, ERR_INVALID,
			    "%s environment entry '%s' is not NAME=VALUE",
			    what, kv[i] == NULL ? "(null)" : kv[i]);
		if ((copy = strdup(kv[i])) == NULL ||
		    envv_put_owned(e, copy) == -1)
			return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	return 0;
}

static int
envv_set(struct envv *e, const char *key, const char *val)
{
	char *kv;

	if (asprintf(&kv, "%s=%s", key, val == NULL ? "" : val) == -1)
		return -1;
	return envv_put_owned(e, kv);
}

static int
envv_setu(struct envv *e, const char *key, uint64_t val)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, val);
	return envv_set(e, key, buf);
}

/* Join n strings (or unsigned numbers, when strs is NULL) with commas
 * into a malloc'd string; "" for n == 0. */
static char *
join(const char *const *strs, const unsigned *nums, size_t n)
{
	char *s = NULL;
	size_t len = 0, i;
	FILE *f;

	if ((f = open_memstream(&s, &len)) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (i > 0)
			fputc(',', f);
		if (strs != NULL)
			fputs(strs[i], f);
		else
			fprintf(f, "%u", nums[i]);
	}
	if (fclose(f) == EOF) {
		free(s);
		return NULL;
	}
	return s;
}

/* Drop every variable whose name starts with prefix. */
static void
envv_unset_prefix(struct envv *e, const char *prefix)
{
	size_t i = 0, plen = strlen(prefix);

	while (i < e->n) {
		if (strncmp(e->v[i], prefix, plen) != 0) {
			i++;
			continue;
		}
		free(e->v[i]);
		memmove(&e->v[i], &e->v[i + 1], (e->n - i) * sizeof(*e->v));
		e->n--;
	}
}

/* Whether e holds a variable named key. */
static bool
envv_has(const struct envv *e, const char *key)
{
	size_t i, klen = strlen(key);

	for (i = 0; i < e->n; i++)
		if (env_keylen(e->v[i]) == klen &&
		    strncmp(e->v[i], key, klen) == 0)
			return true;
	return false;
}

/* The task's NICs: COHORT_TASK_NIC, and NCCL_IB_HCA unless the job set
 * it. The names of the GPUs gpus[off..off+len), each once, in GPU order
 * (two GPUs on one NIC name it once). NCCL reads a bare name as a
 * prefix (mlx5_1 would take mlx5_10 too); a leading '=' makes the list
 * exact names. No NIC known: neither, and no COHORT_TASK_NIC the job's
 * env brought from elsewhere. */
static int
env_put_nics(struct envv *e, const struct task_env *te, size_t off,
    size_t len)
{
	const char *names[64], *nm;
	size_t n = 0, i, k;
	char *list, *hca;
	int rc;

	envv_unset_prefix(e, "COHORT_TASK_NIC=");
	for (i = off; te->gpu_nics != NULL && i < off + len; i++) {
		if ((nm = te->gpu_nics[i]) == NULL || nm[0] == '\0')
			continue;
		for (k = 0; k < n; k++)
			if (strcmp(names[k], nm) == 0)
				break;
		if (k == n && n < sizeof(names) / sizeof(names[0]))
			names[n++] = nm;
	}
	if (n == 0)
		return 0;
	if ((list = join(names, NULL, n)) == NULL)
		return -1;
	rc = envv_set(e, "COHORT_TASK_NIC", list);
	if (rc == 0 && !envv_has(e, "NCCL_IB_HCA")) {
		if (asprintf(&hca, "=%s", list) == -1)
			rc = -1;
		else {
			rc = envv_set(e, "NCCL_IB_HCA", hca);
			free(hca);
		}
	}
	free(list);
	return rc;
}

/* An array task's variables, Cohort's and Slurm's. The job's env may
 * hold some from where it was submitted (inside another array task):
 * they are not this task's, whatever this one sets. */
static int
env_put_array(struct envv *e, const struct task_env *te)
{
	struct array_spec a = { 0 };
	struct cerr err;
	int rc = -1;

	envv_unset_prefix(e, "COHORT_ARRAY_");
	envv_unset_prefix(e, "SLURM_ARRAY_");
	if (te->array_id == 0)
		return 0;
	if (envv_setu(e, "COHORT_ARRAY_JOB_ID", te->array_id) == -1 ||
	    envv_setu(e, "COHORT_ARRAY_TASK_ID", te->array_task) == -1 ||
	    envv_setu(e, "SLURM_ARRAY_JOB_ID", te->array_id) == -1 ||
	    envv_setu(e, "SLURM_ARRAY_TASK_ID", te->array_task) == -1)
		return -1;
	/* The spec as the controller accepted it (lib/array.h); one it
	 * would not have accepted says nothing more. */
	if (te->array_spec == NULL ||
	    array_parse(te->array_spec, &a, &err) == -1)
		return 0;
	if (envv_setu(e, "SLURM_ARRAY_TASK_COUNT", a.n) == -1 ||
	    envv_setu(e, "SLURM_ARRAY_TASK_MIN", a.min) == -1 ||
	    envv_setu(e, "SLURM_ARRAY_TASK_MAX", a.max) == -1)
		goto out;
	/* Only when the indices are evenly spaced, as Slurm. */
	if ((a.n == 1 || a.step > 0) && envv_setu(e,
	    "SLURM_ARRAY_TASK_STEP", a.n == 1 ? 1 : a.step) == -1)
		goto out;
	rc = 0;
out:
	array_spec_clear(&a);
	return rc;
}

/* The value of the variable key in e, the last one (the one that wins
 * envv_dedup), or NULL. */
static const char *
envv_get(const struct envv *e, const char *key)
{
	size_t i, klen = strlen(key);

	for (i = e->n; i > 0; i--)
		if (env_keylen(e->v[i - 1]) == klen &&
		    strncmp(e->v[i - 1], key, klen) == 0)
			return e->v[i - 1] + klen + 1;
	return NULL;
}

/* The job's nodes as Slurm's compressed hostlist ("node[01-02]"), but
 * in rank order rather than sorted, so that the n-th name of its
 * expansion (scontrol show hostnames) is node rank n: a recipe that
 * takes the head node from it agrees with RANK 0. A name hostlists
 * cannot hold (never a node name the agent accepts) leaves the comma
 * list, which is a hostlist too. */
static char *
env_hostlist(const struct task_env *te)
{
	char *s;

	s = hostlist_compress_ordered((char *const *)te->nodelist,
	    te->nnodes);
	if (s == NULL && errno == EINVAL)
		s = join(te->nodelist, NULL, te->nnodes);
	return s;
}

/* The variables of Slurm's that describe this job's allocation and are
 * set only when there is something to say: one the job's env brought
 * (an explicit --env, or a job submitted from inside another) is not
 * this job's. */
static const char *const slurm_optional[] = {
	"SLURM_CPUS_PER_TASK=", "SLURM_JOB_PARTITION=", "SLURM_SUBMIT_HOST=",
	"SLURM_JOB_GPUS=", "SLURM_STEP_GPUS=", "SLURM_JOB_USER=",
	"SLURM_JOB_UID=", "SLURM_CLUSTER_NAME=",
};

/* What Slurm sets beyond the job's shape. The tasks are Slurm's step 0
 * in effect (Cohort has no steps: each task is what srun would start in
 * the first step), so the SLURM_STEP_* names repeat the job's. The
 * GPUs are this node's, as CUDA_VISIBLE_DEVICES numbers them, all of
 * them whatever the task's share: Slurm's SLURM_JOB_GPUS are the job's
 * on the node. */
static int
env_put_slurm_more(struct envv *e, const struct task_env *te,
    const char *nodes, const char *tasks, size_t ngpus)
{
	const char *user;
	char *gpus;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(slurm_optional) / sizeof(*slurm_optional); i++)
		envv_unset_prefix(e, slurm_optional[i]);
	if (envv_set(e, "SLURMD_NODENAME", te->nodelist[te->node_rank]) == -1 ||
	    envv_setu(e, "SLURM_STEP_ID", 0) == -1 ||
	    envv_setu(e, "SLURM_STEPID", 0) == -1 ||
	    envv_set(e, "SLURM_STEP_NODELIST", nodes) == -1 ||
	    envv_setu(e, "SLURM_STEP_NUM_NODES", te->nnodes) == -1 ||
	    envv_setu(e, "SLURM_STEP_NUM_TASKS",
	    (uint64_t)te->nnodes * te->tasks_per_node) == -1 ||
	    envv_set(e, "SLURM_STEP_TASKS_PER_NODE", tasks) == -1)
		return -1;
	if ((te->cluster_name != NULL &&
	    envv_set(e, "SLURM_CLUSTER_NAME", te->cluster_name) == -1) ||
	    (te->partition != NULL &&
	    envv_set(e, "SLURM_JOB_PARTITION", te->partition) == -1) ||
	    (te->submit_host != NULL &&
	    envv_set(e, "SLURM_SUBMIT_HOST", te->submit_host) == -1) ||
	    (te->cpus_per_task > 0 &&
	    envv_setu(e, "SLURM_CPUS_PER_TASK", te->cpus_per_task) == -1) ||
	    (te->has_uid && envv_setu(e, "SLURM_JOB_UID", te->uid) == -1))
		return -1;
	/* The account's name, as USER (env_put_identity put it back). */
	if ((user = envv_get(e, "USER")) != NULL &&
	    envv_set(e, "SLURM_JOB_USER", user) == -1)
		return -1;
	if (ngpus == 0)
		return 0;
	if ((gpus = join(NULL, te->gpus, ngpus)) == NULL)
		return -1;
	rc = envv_set(e, "SLURM_JOB_GPUS", gpus) == -1 ||
	    envv_set(e, "SLURM_STEP_GPUS", gpus) == -1 ? -1 : 0;
	free(gpus);
	return rc;
}

/* Slurm's names for what Cohort already says, so that scripts written
 * for sbatch run unchanged. */
static int
env_put_slurm(struct envv *e, const struct task_env *te, size_t ngpus)
{
	uint64_t tpn = te->tasks_per_node;
	char tasks[48], *nodes;
	int rc = -1;

	if ((nodes = env_hostlist(te)) == NULL)
		return -1;
	if (te->nnodes > 1)
		snprintf(tasks, sizeof(tasks), "%" PRIu64 "(x%u)", tpn,
		    te->nnodes);
	else
		snprintf(tasks, sizeof(tasks), "%" PRIu64, tpn);
	if (envv_setu(e, "SLURM_JOB_ID", te->job_id) == -1 ||
	    envv_setu(e, "SLURM_JOBID", te->job_id) == -1 ||
	    envv_set(e, "SLURM_JOB_NAME", te->job_name) == -1 ||
	    envv_setu(e, "SLURM_NNODES", te->nnodes) == -1 ||
	    envv_setu(e, "SLURM_JOB_NUM_NODES", te->nnodes) == -1 ||
	    envv_setu(e, "SLURM_NODEID", te->node_rank) == -1 ||
	    envv_setu(e, "SLURM_PROCID",
	    te->node_rank * tpn + te->local_rank) == -1 ||
	    envv_setu(e, "SLURM_LOCALID", te->local_rank) == -1 ||
	    envv_setu(e, "SLURM_NTASKS", te->nnodes * tpn) == -1 ||
	    envv_setu(e, "SLURM_NPROCS", te->nnodes * tpn) == -1 ||
	    envv_setu(e, "SLURM_NTASKS_PER_NODE", tpn) == -1 ||
	    envv_set(e, "SLURM_TASKS_PER_NODE", tasks) == -1 ||
	    envv_set(e, "SLURM_JOB_NODELIST", nodes) == -1 ||
	    envv_set(e, "SLURM_NODELIST", nodes) == -1 ||
	    envv_setu(e, "SLURM_RESTART_COUNT", te->restart_count) == -1 ||
	    envv_setu(e, "SLURM_GPUS_ON_NODE", ngpus) == -1)
		goto out;
	/* Scripts "cd $SLURM_SUBMIT_DIR": the job starts in its workdir,
	 * which is where cohort submit ran unless --workdir said else. */
	if (te->workdir != NULL &&
	    envv_set(e, "SLURM_SUBMIT_DIR", te->workdir) == -1)
		goto out;
	rc = env_put_slurm_more(e, te, nodes, tasks, ngpus);
out:
	free(nodes);
	return rc;
}

/* Is dir one of the directories of the PATH value path? */
static bool
env_path_has(const char *path, const char *dir, size_t dlen)
{
	const char *p, *next;

	for (p = path;; p = next + 1) {
		next = strchr(p, ':');
		if (strncmp(p, dir, dlen) == 0 &&
		    (p[dlen] == ':' || p[dlen] == '\0'))
			return true;
		if (next == NULL)
			return false;
	}
}

/* Slurm's commands first on PATH, so that a script finds scontrol and
 * squeue whatever PATH its environment brought (none, with --export
 * NONE: the account's). A PATH that has the directory already (the
 * submitter's, or a job submitted from inside another) is kept as it
 * is: the order its owner chose (a venv first) wins. */
static int
env_put_path(struct envv *e, const char *dir)
{
	const char *path;
	size_t dlen;
	char *kv;

	if (dir == NULL)
		return 0;
	dlen = strlen(dir);
	if ((path = envv_get(e, "PATH")) == NULL || path[0] == '\0')
		return envv_set(e, "PATH", dir);
	if (env_path_has(path, dir, dlen))
		return 0;
	if (asprintf(&kv, "PATH=%s:%s", dir, path) == -1)
		return -1;
	/* Appended after the old one, which envv_dedup then drops. */
	return envv_put_owned(e, kv);
}

static int
env_check(const struct task_env *te, struct cerr *err)
{
	unsigned i;

	if (te->nnodes == 0 || te->node_rank >= te->nnodes)
		return cerr_set(err, ERR_INVALID,
		    "node rank %u out of range for %u nodes", te->node_rank,
		    te->nnodes);
	if (te->tasks_per_node == 0 || te->local_rank >= te->tasks_per_node)
		return cerr_set(err, ERR_INVALID,
		    "local rank %u out of range for %u tasks per node",
		    te->local_rank, te->tasks_per_node);
	if (te->nodelist == NULL)
		return cerr_set(err, ERR_INVALID, "no node list");
	for (i = 0; i < te->nnodes; i++)
		if (te->nodelist[i] == NULL)
			return cerr_set(err, ERR_INVALID,
			    "node list lacks rank %u", i);
	if (te->ngpus > 0 && te->gpus == NULL)
		return cerr_set(err, ERR_INVALID, "no GPU list");
	return 0;
}

/* Cohort's own variables, set last so that they win over the base and
 * the job's env (a job cannot lie to itself about its rank). */
static int
env_put_cohort(struct envv *e, const struct task_env *te, bool nics)
{
	uint64_t tpn = te->tasks_per_node;
	char *nodes = NULL, *gpus = NULL;
	size_t off, len, ngpus = te->cpu_only ? 0 : te->ngpus;
	int rc = -1;

	/* A batch script is the node's one task: all of its GPUs. */
	if (te->batch) {
		off = 0;
		len = ngpus;
	} else
		env_task_gpus(ngpus, te->tasks_per_node, te->local_rank, &off,
		    &len);
	if ((nodes = join(te->nodelist, NULL, te->nnodes)) == NULL ||
	    (gpus = join(NULL, len > 0 ? te->gpus + off : NULL, len)) == NULL)
		goto out;
	if (envv_setu(e, "COHORT_JOB_ID", te->job_id) == -1 ||
	    envv_set(e, "COHORT_JOB_NAME", te->job_name) == -1 ||
	    envv_setu(e, "COHORT_NNODES", te->nnodes) == -1 ||
	    envv_setu(e, "COHORT_NODE_RANK", te->node_rank) == -1 ||
	    envv_set(e, "COHORT_NODELIST", nodes) == -1 ||
	    envv_setu(e, "COHORT_RESTART_COUNT", te->restart_count) == -1 ||
	    envv_set(e, "COHORT_CHECKPOINT_DIR", te->checkpoint_dir) == -1 ||
	    envv_set(e, "COHORT_RESUME_CHECKPOINT",
	    te->resume_checkpoint) == -1 ||
	    envv_set(e, "COHORT_PROGRESS_FILE", te->progress_file) == -1 ||
	    (te->advice_file != NULL && envv_set(e,
	    "COHORT_CHECKPOINT_ADVICE_FILE", te->advice_file) == -1) ||
	    envv_setu(e, "COHORT_TASKS_PER_NODE", tpn) == -1 ||
	    envv_set(e, "MASTER_ADDR", te->master_addr) == -1 ||
	    envv_setu(e, "MASTER_PORT", te->master_port) == -1 ||
	    envv_setu(e, "NNODES", te->nnodes) == -1 ||
	    envv_setu(e, "NODE_RANK", te->node_rank) == -1 ||
	    envv_setu(e, "WORLD_SIZE", te->nnodes * tpn) == -1 ||
	    envv_setu(e, "RANK", te->node_rank * tpn + te->local_rank) == -1 ||
	    envv_setu(e, "LOCAL_RANK", te->local_rank) == -1 ||
	    envv_setu(e, "LOCAL_WORLD_SIZE", tpn) == -1 ||
	    /* Indices are NVML's, which number GPUs by PCI bus; make
	     * CUDA number them the same way. */
	    envv_set(e, "CUDA_DEVICE_ORDER", "PCI_BUS_ID") == -1 ||
	    envv_set(e, "CUDA_VISIBLE_DEVICES", gpus) == -1)
		goto out;
	/* A CPU-only task sees no GPU: "" above hides them from CUDA, and
	 * "void" from the NVIDIA container runtime, which would otherwise
	 * honour a value the submitter's environment brought. */
	if (te->cpu_only &&
	    envv_set(e, "NVIDIA_VISIBLE_DEVICES", "void") == -1)
		goto out;
	if (env_put_array(e, te) == -1 ||
	    env_put_slurm(e, te, ngpus) == -1 ||
	    (nics && env_put_nics(e, te, off, len) == -1))
		goto out;
	/* Slurm's batch step has no step variables; srun sets its own. */
	if (te->batch) {
		envv_unset_prefix(e, "SLURM_STEP_");
		envv_unset_prefix(e, "SLURM_STEPID=");
	}
	/* Where the task may write "STEP COMPUTE_MS" (straggler
	 * detection); never a file an env named. */
	envv_unset_prefix(e, "COHORT_STEP_FILE=");
	if (te->step_dir != NULL) {
		char sf[4096 + 16];

		snprintf(sf, sizeof(sf), "%s/%u", te->step_dir,
		    te->node_rank * te->tasks_per_node + te->local_rank);
		if (envv_set(e, "COHORT_STEP_FILE", sf) == -1)
			goto out;
	}
	/* Only the job's own credential: never one an env brought. */
	envv_unset_prefix(e, "COHORT_STEP_CRED=");
	if (te->step_cred_file != NULL &&
	    envv_set(e, "COHORT_STEP_CRED", te->step_cred_file) == -1)
		goto out;
	rc = 0;
out:
	free(nodes);
	free(gpus);
	return rc;
}

/* HOME, USER and LOGNAME of the base layer again, over the job's: the
 * submitter's name the account it submitted from, which need not be the
 * one the task runs as (user_map), and a HOME the task's account cannot
 * write breaks every tool that keeps a cache there. sbatch would keep
 * the submitter's; Slurm never runs a job as another account. */
static int
env_put_identity(struct envv *e, const struct task_env *te,
    struct cerr *err)
{
	static const char *const keys[] = { "HOME", "USER", "LOGNAME" };
	size_t i, k, klen;
	char *copy;

	for (i = 0; i < te->nbase_env; i++) {
		klen = env_keylen(te->base_env[i]);
		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (klen == strlen(keys[k]) &&
			    strncmp(te->base_env[i], keys[k], klen) == 0)
				break;
		if (k == sizeof(keys) / sizeof(keys[0]))
			continue;
		if ((copy = strdup(te->base_env[i])) == NULL ||
		    envv_put_owned(e, copy) == -1)
			return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	return 0;
}

int
env_build(const struct task_env *te, char ***envp, size_t *n,
    struct cerr *err)
{
	struct envv e = { NULL, 0 };

	*envp = NULL;
	*n = 0;
	if (env_check(te, err) == -1)
		return -1;
	if (envv_put_layer(&e, te->base_env, te->nbase_env, "base",
	    err) == -1 ||
	    envv_put_layer(&e, te->user_env, te->nuser_env, "job", err) == -1 ||
	    env_put_identity(&e, te, err) == -1)
		goto fail;
	if (env_put_cohort(&e, te, true) == -1 || envv_dedup(&e) == -1 ||
	    env_put_path(&e, te->slurm_commands) == -1 ||
	    envv_dedup(&e) == -1) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto fail;
	}
	*envp = e.v;
	*n = e.n;
	return 0;
fail:
	strv_free(e.v, e.n);
	return -1;
}

char *
env_tasks_compress(const unsigned *counts, size_t n)
{
	char *s = NULL;
	size_t len = 0, i, run;
	FILE *f;

	if ((f = open_memstream(&s, &len)) == NULL)
		return NULL;
	for (i = 0; i < n; i += run) {
		for (run = 1; i + run < n && counts[i + run] == counts[i];
		    run++)
			;
		fprintf(f, "%s%u", i > 0 ? "," : "", counts[i]);
		if (run > 1)
			fprintf(f, "(x%zu)", run);
	}
	if (fclose(f) == EOF) {
		free(s);
		return NULL;
	}
	return s;
}

static int
env_step_check(const struct step_env *se, struct cerr *err)
{
	size_t i;

	if (se->nnodes == 0 || se->nodelist == NULL ||
	    se->tasks_per_node == NULL || se->node_index >= se->nnodes)
		return cerr_set(err, ERR_INVALID, "step %u: node index %u out "
		    "of range for %zu nodes", se->step_id, se->node_index,
		    se->nnodes);
	for (i = 0; i < se->nnodes; i++)
		if (se->nodelist[i] == NULL)
			return cerr_set(err, ERR_INVALID, "step %u: node "
			    "list lacks index %zu", se->step_id, i);
	if (se->local_rank >= se->tasks_per_node[se->node_index])
		return cerr_set(err, ERR_INVALID, "step %u: local rank %u out "
		    "of range for %u tasks here", se->step_id, se->local_rank,
		    se->tasks_per_node[se->node_index]);
	if (se->ngpus > 0 && se->gpus == NULL)
		return cerr_set(err, ERR_INVALID, "step %u: no GPU list",
		    se->step_id);
	return 0;
}

/* The step task's GPUs: all of the step's here, or its slice. */
static void
env_step_gpus(const struct step_env *se, size_t *off, size_t *len)
{
	size_t n = se->gpus_per_task;

	*off = 0;
	*len = se->ngpus;
	if (n == 0)
		return;
	*off = (size_t)se->local_rank * n;
	if (*off >= se->ngpus) {
		*off = se->ngpus;
		*len = 0;
	} else
		*len = se->ngpus - *off < n ? se->ngpus - *off : n;
}

/* What srun sets for a step's task, over the job's. */
static int
env_put_step(struct envv *e, const struct task_env *te,
    const struct step_env *se)
{
	unsigned here = se->tasks_per_node[se->node_index];
	char *nodes, *tasks = NULL, *gpus = NULL;
	struct task_env nic = *te;
	size_t off, len;
	int rc = -1;

	nodes = hostlist_compress_ordered((char *const *)se->nodelist,
	    se->nnodes);
	if (nodes == NULL && errno == EINVAL)
		nodes = join(se->nodelist, NULL, se->nnodes);
	env_step_gpus(se, &off, &len);
	if (nodes == NULL ||
	    (tasks = env_tasks_compress(se->tasks_per_node,
	    se->nnodes)) == NULL ||
	    (gpus = join(NULL, len > 0 ? se->gpus + off : NULL, len)) == NULL)
		goto out;
	envv_unset_prefix(e, "SLURM_STEP_GPUS=");
	if (envv_setu(e, "SLURM_STEP_ID", se->step_id) == -1 ||
	    envv_setu(e, "SLURM_STEPID", se->step_id) == -1 ||
	    envv_set(e, "SLURM_STEP_NODELIST", nodes) == -1 ||
	    envv_setu(e, "SLURM_STEP_NUM_NODES", se->nnodes) == -1 ||
	    envv_setu(e, "SLURM_STEP_NUM_TASKS", se->ntasks) == -1 ||
	    envv_set(e, "SLURM_STEP_TASKS_PER_NODE", tasks) == -1 ||
	    envv_setu(e, "SLURM_NTASKS", se->ntasks) == -1 ||
	    envv_setu(e, "SLURM_NPROCS", se->ntasks) == -1 ||
	    envv_setu(e, "SLURM_PROCID",
	    (uint64_t)se->first_rank + se->local_rank) == -1 ||
	    envv_setu(e, "SLURM_LOCALID", se->local_rank) == -1 ||
	    envv_setu(e, "SLURM_NODEID", se->node_index) == -1 ||
	    envv_set(e, "SLURMD_NODENAME", se->nodelist[se->node_index]) == -1 ||
	    envv_set(e, "CUDA_VISIBLE_DEVICES", gpus) == -1 ||
	    (len > 0 && envv_set(e, "SLURM_STEP_GPUS", gpus) == -1) ||
	    envv_setu(e, "SLURM_GPUS_ON_NODE", se->ngpus) == -1 ||
	    (se->cpus_per_task > 0 && envv_setu(e, "SLURM_CPUS_PER_TASK",
	    se->cpus_per_task) == -1) ||
	    envv_setu(e, "RANK", (uint64_t)se->first_rank +
	    se->local_rank) == -1 ||
	    envv_setu(e, "WORLD_SIZE", se->ntasks) == -1 ||
	    envv_setu(e, "LOCAL_RANK", se->local_rank) == -1 ||
	    envv_setu(e, "LOCAL_WORLD_SIZE", here) == -1 ||
	    envv_setu(e, "NNODES", se->nnodes) == -1 ||
	    envv_setu(e, "NODE_RANK", se->node_index) == -1 ||
	    envv_set(e, "MASTER_ADDR", se->master_addr) == -1 ||
	    envv_setu(e, "MASTER_PORT", se->master_port) == -1)
		goto out;
	/* The NICs of the task's GPUs, not of the job's task 0's. */
	nic.gpus = se->gpus;
	nic.ngpus = se->ngpus;
	nic.gpu_nics = se->gpu_nics;
	rc = env_put_nics(e, &nic, off, len);
out:
	free(nodes);
	free(tasks);
	free(gpus);
	return rc;
}

int
env_build_step(const struct task_env *te, const struct step_env *se,
    char ***envp, size_t *n, struct cerr *err)
{
	struct envv e = { NULL, 0 };
	struct task_env job = *te;

	*envp = NULL;
	*n = 0;
	/* The job's variables as its first task here has them. */
	job.local_rank = 0;
	job.batch = false;
	if (env_check(&job, err) == -1 || env_step_check(se, err) == -1)
		return -1;
	if (envv_put_layer(&e, te->base_env, te->nbase_env, "base",
	    err) == -1 ||
	    (se->nenv > 0 ? envv_put_layer(&e, se->env, se->nenv, "step",
	    err) : envv_put_layer(&e, te->user_env, te->nuser_env, "job",
	    err)) == -1 ||
	    env_put_identity(&e, te, err) == -1)
		goto fail;
	if (env_put_cohort(&e, &job, false) == -1 ||
	    env_put_step(&e, te, se) == -1 || envv_dedup(&e) == -1 ||
	    env_put_path(&e, te->slurm_commands) == -1 ||
	    envv_dedup(&e) == -1) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto fail;
	}
	*envp = e.v;
	*n = e.n;
	return 0;
fail:
	strv_free(e.v, e.n);
	return -1;
}

/* Shares are contiguous and as equal as they can be: with n GPUs and t
 * tasks each task gets n / t, and the first n % t tasks get one more, so
 * 6 GPUs over 4 tasks give 2, 2, 1, 1. A task past the end (or with
 * more tasks than GPUs, a task beyond the n-th) gets an empty share. */
void
env_task_gpus(size_t n, unsigned t, unsigned r, size_t *off, size_t *len)
{
	size_t base, extra;

	if (t == 0)
		t = 1;
	if (r >= t) {
		*off = n;
		*len = 0;
		return;
	}
	base = n / t;
	extra = n % t;
	if (r < extra) {
		*off = r * (base + 1);
		*len = base + 1;
	} else {
		*off = extra * (base + 1) + (r - extra) * base;
		*len = base;
	}
}
