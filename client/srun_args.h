/* What srun needs that is pure, and so tested on its own: reading its
 * command line as Slurm's srun reads it (one table of every srun option:
 * long options and their unique abbreviations, --opt=value and --opt
 * value, short options and clusters, the options ending at the first
 * word that is not one), the rank labels of -l, the node a rank runs on,
 * the -o/-e file patterns, and the step credential's text. No I/O. */
#ifndef COHORT_CLIENT_SRUN_ARGS_H
#define COHORT_CLIENT_SRUN_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/container.h"
#include "lib/err.h"

/* What srun's command line asked. Strings are borrowed from argv. */
struct srun_args {
	uint32_t nodes;			/* -N; 0: as the tasks need */
	uint32_t ntasks;		/* -n; 0: not given */
	uint32_t ntasks_per_node;
	uint32_t cpus_per_task;		/* -c */
	uint32_t gpus_per_task;
	uint32_t gpus_per_node;		/* --gpus-per-node, --gres=gpu:N */
	uint32_t gpus;			/* -G */
	bool no_gpus;			/* -G 0, --gres=none */
	bool exclusive, overlap;
	bool label, unbuffered, kill_on_bad_exit, quiet;
	bool help, usage, version;
	bool no_input;			/* -i none: tasks read /dev/null;
					 * else task 0 reads srun's stdin */
	bool pty;			/* --pty: task 0 on a terminal */
	int verbose;			/* -v's, counted */
	const char *nodelist;		/* -w */
	const char *exclude;		/* -x */
	const char *export_mode;	/* --export; NULL: ALL */
	const char *name;		/* -J */
	const char *chdir;		/* -D */
	const char *output;		/* -o pattern */
	const char *error;		/* -e pattern */
	uint64_t jobid;			/* --jobid; 0: not given */
	struct job_container ctr;	/* --container-* (Pyxis's), the
					 * strings borrowed from argv; image
					 * NULL: the job's container */
	int cmd;			/* argv index of the command; argc
					 * when there is none */
};

/* Read argv[1..argc) (argv[0] is srun's name). Returns 0 with *a filled
 * (a->cmd the index of the first word of the command), or -1 with err
 * (ERR_INVALID) saying which option and why: one srun knows but Cohort
 * cannot honour ("--pty is not supported: ..."), one srun does not know,
 * an ambiguous abbreviation, a missing or bad value. Nothing is ignored
 * silently. */
int srun_args_parse(int argc, char *const *argv, struct srun_args *a,
    struct cerr *err);

/* The width of -l's task ids: the digits of the highest, ntasks - 1
 * (at least 1). srun prints "%*u: " with it. */
int srun_label_width(uint32_t ntasks);

/* The index into a step's node list of the node task rank runs on, with
 * the tasks given to the nodes in blocks (tasks_per_node[i] on node i,
 * in order); -1 when rank is beyond them. */
int srun_rank_node(const uint32_t *tasks_per_node, size_t nnodes,
    uint32_t rank);

/* What a file pattern's escapes stand for. */
struct srun_pat_vars {
	uint64_t job_id;
	uint32_t step_id;
	uint32_t task;		/* %t */
	uint32_t node_index;	/* %n: within the step */
	const char *node;	/* %N */
};

/* Expand -o/-e pattern pat into buf: %t the task, %n the node index,
 * %N the node's name, %j the job, %s the step, %J job.step, %% a '%';
 * a number between '%' and the letter zero-pads to that width (%3t:
 * 007). Returns 0; -1 with err (ERR_INVALID) for another escape or a
 * result longer than len - 1. *per_task (may be NULL) is set when the
 * name depends on the task or its node (%t %n %N), so that each task
 * has its own file. */
int srun_pattern(const char *pat, const struct srun_pat_vars *v, char *buf,
    size_t len, bool *per_task, struct cerr *err);

/* Decode the step credential's text (lowercase hex, an optional final
 * newline) into out (at most outlen bytes). The length, or -1 with err
 * (ERR_INVALID) when it is not that. */
int srun_cred_decode(const char *text, size_t len, uint8_t *out,
    size_t outlen, struct cerr *err);

/* The ranks [from, to] as srun names them: "task 3" or "tasks 0-3".
 * Returns buf. */
char *srun_task_range(uint32_t from, uint32_t to, char *buf, size_t len);

#endif
