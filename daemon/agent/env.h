/* The job environment contract of SPEC.md, built for one task. Pure: the
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

/* The GPUs of local task r out of t sharing gpus[0..n): a contiguous
 * equal share. Writes the share's offset and length. */
void env_task_gpus(size_t n, unsigned t, unsigned r, size_t *off,
    size_t *len);

#endif
