/* Refusing at submit what could never run: a job spec judged against every
 * node the controller knows (registered at some time and not deleted; DOWN
 * nodes count, since they may come back) and the topology. Pure: the
 * caller passes a snapshot, nothing is read or changed here.
 *
 * Refused (ERR_INVALID, the text names the limit): an unknown --gpu-type;
 * more --gpus-per-node than any node of that type has; --nodes (the
 * minimum, for an elastic job) above the nodes that could hold the job
 * (GPUs per node, type; exclusive: whole nodes with at least that many
 * GPUs; CPU-only: any node); an unknown --topology level, or a required
 * level no domain of which holds that many such nodes; --segment N on a
 * topology without blocks, or blocks that hold fewer than --nodes / N
 * segments of N such nodes; --topology block (required) when no block
 * holds --nodes such nodes; a --nodelist that
 * does not expand or names a node that does not exist; a --nodelist /
 * --exclude pair that leaves fewer than --nodes such nodes; a --constraint
 * that no node's features meet, a --gpu-memory that no node's every GPU
 * has, or either leaving fewer than --nodes such nodes; a
 * --cpus-per-task (x --tasks-per-node) or --mem-per-node that no node's
 * CPUs or memory hold, or that leaves fewer than --nodes such nodes. A
 * node that could hold the job is judged by what it has, not what is
 * free now.
 *
 * With no node known at all (a fresh cluster, agents not yet registered),
 * or while a node the topology names has never registered (a cluster
 * being brought up: its GPUs are unknown), nothing is judged: every spec
 * is accepted. The checks are the core's
 * BadConstraints / GpuType / Topology reasons (daemon/sched/sched.h),
 * moved to submit where the cluster makes them certain. */
#ifndef COHORT_FEASIBLE_H
#define COHORT_FEASIBLE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/job.h"

struct topo;

/* One known node, as the check needs it (borrowed strings). */
struct feasible_node {
	const char *name;
	const char *model;	/* GPU model; NULL: none reported */
	unsigned ngpus;
	const char *const *features;	/* configured and derived */
	size_t nfeatures;
	uint64_t gpu_memory_mb;	/* its smallest GPU's memory; 0: none */
	uint32_t ncpus;		/* CPUs (--cpus-per-task) */
	uint64_t memory_mb;	/* memory (--mem-per-node) */
};

struct feasible_input {
	const struct feasible_node *nodes;
	size_t nnodes;
	const struct topo *topo;	/* NULL: none configured */
};

/* 0 when spec could run on some subset of the nodes (or no node is
 * known); -1 with err (ERR_INVALID: which limit; ERR_INTERNAL: out of
 * memory) otherwise. spec is not changed. */
int	feasible_check(const struct feasible_input *in,
	    const struct job_spec *spec, struct cerr *err);

#endif
