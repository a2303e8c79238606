/* The job environment contract of docs/SPEC.md, built for one task. Pure: the
 * caller passes everything, nothing is read from the process. */
#ifndef COHORT_AGENT_ENV_H
#define COHORT_AGENT_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

struct task_env {
	uint64_t job_id;
	const char *job_name;
	uint32_t restart_count;
	unsigned nnodes;
	unsigned node_rank;
	const char *const *nodelist;	/* nnodes names, rank order */
	const char *master_addr;	/* address of node rank 0 */
	unsigned master_port;
	unsigned tasks_per_node;
	unsigned local_rank;
	const unsigned *gpus;		/* this node's allocated GPU indices */
	size_t ngpus;			/* (the task gets its equal share) */
	/* The name of each of gpus[]' nearest NIC ("mlx5_0"; NULL or "":
	 * unknown), in the same order; NULL: none known. */
	const char *const *gpu_nics;
	const char *checkpoint_dir;	/* NULL: none */
	const char *resume_checkpoint;	/* NULL or "": first start */
	const char *progress_file;
	const char *advice_file;	/* COHORT_CHECKPOINT_ADVICE_FILE;
					 * NULL: none */
	/* The start's directory of step files: the task's is DIR/RANK
	 * (COHORT_STEP_FILE); NULL: none (a job step's tasks). */
	const char *step_dir;
	const char *const *user_env;	/* the job's "K=V", or NULL */
	size_t nuser_env;
	const char *const *base_env;	/* HOME, USER, PATH... of the target
					 * user, "K=V", or NULL */
	size_t nbase_env;
	/* An array task (LaunchRequest.array_id/array_task): array_id 0
	 * when the job is not one. array_spec is the array as submitted
	 * ("0-99:4%8", "1,3,5-9"), or NULL. */
	uint64_t array_id;
	uint32_t array_task;
	const char *array_spec;
	bool cpu_only;			/* no GPU, whatever gpus says */
	const char *workdir;		/* the job's; NULL: not given */
	/* What Slurm's variables say beyond the above (NULL or 0: not
	 * set). */
	const char *partition;		/* the job's queue */
	const char *submit_host;	/* the host it was submitted from */
	const char *cluster_name;
	unsigned cpus_per_task;		/* --cpus-per-task */
	bool has_uid;
	uint32_t uid;			/* the account the task runs as */
	/* The directory of Slurm's commands, put first on PATH; NULL:
	 * PATH is left as the layers make it. */
	const char *slurm_commands;
	/* A batch job's script (JobSpec.batch): one task, rank 0, which
	 * sees every GPU of the node's share of the job and, as Slurm's
	 * batch step, no SLURM_STEP_* variable. */
	bool batch;
	/* The job's step credential file (COHORT_STEP_CRED); NULL: none. */
	const char *step_cred_file;
};

/* One task of a job step (srun) on this node, for env_build_step. */
struct step_env {
	uint32_t step_id;
	/* srun's environment as --export left it ("K=V"); nenv 0
	 * (--export=NONE): the job's env layers instead. */
	const char *const *env;
	size_t nenv;
	const char *const *nodelist;	/* the step's nodes */
	size_t nnodes;
	unsigned node_index;		/* this node's index in nodelist */
	const unsigned *tasks_per_node;	/* nnodes counts */
	unsigned ntasks;		/* all the step's tasks */
	unsigned first_rank;		/* SLURM_PROCID of local task 0 */
	unsigned local_rank;		/* this task's */
	const unsigned *gpus;		/* the step's GPUs on this node */
	size_t ngpus;
	/* 0: every task sees all of gpus; else local task i gets
	 * gpus[i*n .. i*n+n-1]. */
	unsigned gpus_per_task;
	/* The name of each of gpus[]' nearest NIC, as task_env's; NULL:
	 * none known. */
	const char *const *gpu_nics;
	unsigned cpus_per_task;		/* 0: the job's */
	const char *master_addr;	/* the step's rendezvous */
	unsigned master_port;
};

/* Build a NULL-terminated envp (malloc'd vector of malloc'd strings;
 * free with strv_free(envp, n)). Layers, each winning over the one
 * before:
 *   1. base: the account's HOME, USER, LOGNAME, SHELL, PATH;
 *   2. the job's env (--env, and the submitter's with --export), so that
 *      a venv's or conda's PATH, VIRTUAL_ENV, CONDA_*, LD_LIBRARY_PATH,
 *      PYTHONPATH reach the job, as with sbatch;
 *   3. HOME, USER and LOGNAME of the base again: they are the account's
 *      the task runs as, which the agent may have mapped to another one
 *      (sbatch would keep the submitter's);
 *   4. Cohort's variables (COHORT_*, the torchrun names, MASTER_*,
 *      CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES for a CPU-only job,
 *      and Slurm's SLURM_* names for scripts written for sbatch, with
 *      SLURM_JOB_USER the base's USER);
 *      COHORT_TASK_NIC, the NICs of the task's GPUs (gpu_nics: names in
 *      GPU order, each once, comma-separated), and NCCL_IB_HCA, the same
 *      for NCCL as exact names ("=mlx5_0,mlx5_1"), unless the job's env
 *      sets NCCL_IB_HCA itself: a user's choice of HCAs stands.
 * Last, slurm_commands goes first on the PATH the layers made (once:
 * a PATH that starts with it already is kept).
 * 0, or -1 with err. */
int env_build(const struct task_env *te, char ***envp, size_t *n,
    struct cerr *err);

/* The environment of one task of a job step: te describes the job's
 * start on this node as for env_build (its local_rank is ignored), se
 * the step. Layers: the account's base; srun's environment (se->env)
 * or, when it is empty, the job's env; the account's identity; the
 * job's Cohort and Slurm variables as env_build sets them; then the
 * step's own, which win: SLURM_STEP_ID/SLURM_STEPID,
 * SLURM_STEP_NODELIST (compressed, in the step's order),
 * SLURM_STEP_NUM_NODES, SLURM_STEP_NUM_TASKS, SLURM_STEP_TASKS_PER_NODE
 * ("2(x3),1"), SLURM_NTASKS and SLURM_NPROCS (the step's), SLURM_PROCID,
 * SLURM_LOCALID, SLURM_NODEID (node_index), SLURMD_NODENAME,
 * SLURM_CPUS_PER_TASK (when se's > 0), CUDA_VISIBLE_DEVICES and
 * SLURM_STEP_GPUS (the task's GPUs; none: CUDA_VISIBLE_DEVICES="" and
 * no SLURM_STEP_GPUS), SLURM_GPUS_ON_NODE (the step's here), RANK,
 * WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, NNODES, NODE_RANK,
 * MASTER_ADDR, MASTER_PORT (the step's rendezvous), COHORT_TASK_NIC and
 * NCCL_IB_HCA of the task's GPUs; last, slurm_commands on PATH. 0, or
 * -1 with err (ERR_INVALID: se inconsistent, or an env entry that is
 * not NAME=VALUE). */
int env_build_step(const struct task_env *te, const struct step_env *se,
    char ***envp, size_t *n, struct cerr *err);

/* Slurm's compressed count list of tasks_per_node: equal neighbours
 * as "C(xN)", joined by commas ("2(x3),1"). A malloc'd string ("" for
 * n 0), or NULL (ENOMEM). */
char *env_tasks_compress(const unsigned *counts, size_t n);

/* The GPUs of local task r out of t sharing gpus[0..n): a contiguous
 * equal share. Writes the share's offset and length. */
void env_task_gpus(size_t n, unsigned t, unsigned r, size_t *off,
    size_t *len);

#endif
