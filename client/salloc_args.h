/* salloc's command line and its shell's environment, without I/O: what
 * salloc takes of sbatch's options (script_sbatch.h) and refuses, and
 * the SLURM_* variables the shell gets (client/slurm_salloc.c). */
#ifndef COHORT_CLIENT_SALLOC_ARGS_H
#define COHORT_CLIENT_SALLOC_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client/script_sbatch.h"
#include "lib/err.h"

/* What salloc's own options asked. */
struct salloc_self {
	bool help, version, quiet, no_shell;
	uint32_t ntasks;	/* -n given, else 0: for SLURM_NTASKS */
};

/* salloc's options from sbatch's parse of them (v[0..n)): its own into
 * *s; 0, or -1 with err (ERR_INVALID, the first refusal: an option
 * sbatch takes that salloc has not (--wrap, --array, -o...), or one of
 * sbatch's refusals). Warnings are left to the caller. */
int salloc_self_parse(const struct script_sbatch_opt *v, size_t n,
    struct salloc_self *s, struct cerr *err);

/* The allocation, as the shell is told of it. */
struct salloc_env_in {
	uint64_t job_id;
	const char *job_name;
	const char *nodelist;	/* compressed hostlist, rank order */
	unsigned nnodes;
	unsigned tasks_per_node;
	uint32_t ntasks;	/* 0: not given, SLURM_NTASKS unset */
	const char *partition;	/* NULL: unset */
	const char *submit_dir;
	const char *submit_host;	/* NULL: unset */
	const char *cluster;
	const char *cred_path;	/* COHORT_STEP_CRED */
	const char *slurm_dir;	/* put first on PATH; NULL: PATH as is */
};

/* base (NULL-terminated) with the allocation's variables set over it
 * (and any SLURM_JOB_*, SLURM_STEP_* of an enclosing job removed): a
 * NULL-terminated malloc'd array of *n malloc'd strings, free with
 * strv_free. 0, or -1 (ENOMEM). */
int salloc_env(char *const *base, const struct salloc_env_in *in,
    char ***out, size_t *n);

#endif
