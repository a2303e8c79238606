/* The job environment contract of SPEC.md, built for one task. Pure: the
 * caller passes everything, nothing is read from the process. */
#ifndef COHORT_AGENT_ENV_H
#define COHORT_AGENT_ENV_H

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
	const char *checkpoint_dir;	/* NULL: none */
	const char *resume_checkpoint;	/* NULL or "": first start */
	const char *progress_file;
	const char *const *user_env;	/* the job's "K=V", or NULL */
	size_t nuser_env;
	const char *const *base_env;	/* HOME, USER, PATH... of the target
					 * user, "K=V", or NULL */
	size_t nbase_env;
};

/* Build a NULL-terminated envp (malloc'd vector of malloc'd strings;
 * free with strv_free(envp, n)). Order: base, then the job's env, then
 * Cohort's variables, which win over both. 0, or -1 with err. */
int env_build(const struct task_env *te, char ***envp, size_t *n,
    struct cerr *err);

/* The GPUs of local task r out of t sharing gpus[0..n): a contiguous
 * equal share. Writes the share's offset and length. */
void env_task_gpus(size_t n, unsigned t, unsigned r, size_t *off,
    size_t *len);

#endif
