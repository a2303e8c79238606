/* Slurm's totals and per-GPU amounts (-n, -G, --gpus-per-task,
 * --ntasks-per-gpu, --cpus-per-gpu, --mem-per-gpu) as Cohort's per-node
 * spec, which gives every node of a gang the same share: -N 2 -n 8 is 4
 * tasks per node, -G 8 -N 2 4 GPUs per node. What cannot be said per
 * node exactly (5 tasks over 2 nodes) is refused with the numbers, never
 * rounded. Pure: no I/O. */
#ifndef COHORT_CLIENT_PERNODE_H
#define COHORT_CLIENT_PERNODE_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/job.h"

/* What was asked, besides the spec itself. 0: not given. */
struct pernode {
	uint32_t ntasks;		/* -n: tasks in all */
	uint32_t gpus;			/* -G: GPUs in all */
	uint32_t gpus_per_task;
	uint32_t ntasks_per_gpu;
	uint32_t cpus_per_gpu;
	uint64_t mem_per_gpu_mb;
	/* Which of the spec's own fields were given (not defaults). */
	bool nodes_given;		/* -N, or a --nodelist's size */
	bool tasks_given;		/* --ntasks-per-node */
	bool gpn_given;			/* --gpus-per-node or --gres */
	bool cpt_given;			/* --cpus-per-task */
	bool mem_given;			/* --mem */
};

/* Apply p to spec: nodes, tasks_per_node, gpus_per_node (cpu_only),
 * cpus_per_task and mem_per_node_mb. The spec's GPU count is known when
 * it is a number or cpu_only (0); "all of a node's" is not a number.
 * Returns 0, or -1 with err (ERR_INVALID) naming the options and their
 * numbers; on -1 spec may be partly changed. */
int pernode_apply(const struct pernode *p, struct job_spec *spec,
    struct cerr *err);

#endif
