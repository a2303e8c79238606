/* Slurm's totals and per-GPU amounts as the per-node spec (see
 * pernode.h). The order is Slurm's own reading: nodes, then tasks per
 * node, then GPUs per node, then what follows from GPUs. */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>

#include "client/pernode.h"

/* Cohort gives every node of a gang the same share. */
#define SAME_SHARE "Cohort gives every node of a job the same number"

static int
too_many(struct cerr *err, const char *what)
{
	return cerr_set(err, ERR_INVALID, "%s: too large", what);
}

/* Nodes and tasks per node from -N, -n and --ntasks-per-node. */
static int
pernode_tasks(const struct pernode *p, struct job_spec *spec, uint64_t *t,
    bool *has_t, struct cerr *err)
{
	uint32_t n;

	if ((p->ntasks > 0 || p->gpus > 0) && p->nodes_given &&
	    spec->nodes_min != spec->nodes_max)
		return cerr_set(err, ERR_INVALID, "--%s %" PRIu32 ": a total "
		    "cannot be shared over a node range (%" PRIu32 "-%" PRIu32
		    "): give -N one number", p->ntasks > 0 ? "ntasks" : "gpus",
		    p->ntasks > 0 ? p->ntasks : p->gpus, spec->nodes_min,
		    spec->nodes_max);
	*t = spec->tasks_per_node;
	*has_t = p->tasks_given;
	if (p->ntasks == 0)
		return 0;
	/* -n with --ntasks-per-node and no -N: as many nodes as that. */
	if (!p->nodes_given && p->tasks_given) {
		if (*t == 0 || p->ntasks % *t != 0)
			return cerr_set(err, ERR_INVALID, "--ntasks %" PRIu32
			    " is not a multiple of --ntasks-per-node %" PRIu64
			    ": " SAME_SHARE " of tasks", p->ntasks, *t);
		spec->nodes_min = spec->nodes_max = p->ntasks / (uint32_t)*t;
		return 0;
	}
	if ((n = spec->nodes_min) == 0)
		return cerr_set(err, ERR_INVALID, "--ntasks %" PRIu32 " over "
		    "0 nodes", p->ntasks);
	if (p->ntasks % n != 0)
		return cerr_set(err, ERR_INVALID, "--ntasks %" PRIu32 " over "
		    "%" PRIu32 " nodes: " SAME_SHARE " of tasks, and %" PRIu32
		    " is not a multiple of %" PRIu32, p->ntasks, n, p->ntasks,
		    n);
	if (*has_t && *t != p->ntasks / n)
		return cerr_set(err, ERR_INVALID, "--ntasks %" PRIu32 " over "
		    "%" PRIu32 " nodes is %" PRIu32 " tasks per node, not "
		    "--ntasks-per-node %" PRIu64, p->ntasks, n, p->ntasks / n,
		    *t);
	*t = p->ntasks / n;
	*has_t = true;
	return 0;
}

/* GPUs per node from --gpus-per-node, -G, --gpus-per-task and
 * --ntasks-per-gpu; the last may set the tasks per node instead. */
static int
pernode_gpus(const struct pernode *p, const struct job_spec *spec,
    uint64_t *t, bool *has_t, uint64_t *g, bool *has_g, struct cerr *err)
{
	uint32_t n = spec->nodes_min;
	uint64_t v;

	*has_g = p->gpn_given && (spec->cpu_only || spec->gpus_per_node > 0);
	*g = *has_g && !spec->cpu_only ? spec->gpus_per_node : 0;
	if (p->gpn_given && !*has_g && (p->gpus > 0 || p->gpus_per_task > 0))
		return cerr_set(err, ERR_INVALID, "--gpus-per-node all and "
		    "--%s: give one", p->gpus > 0 ? "gpus" : "gpus-per-task");
	if (p->gpus > 0) {
		if (n == 0 || p->gpus % n != 0)
			return cerr_set(err, ERR_INVALID, "--gpus %" PRIu32
			    " over %" PRIu32 " nodes: " SAME_SHARE " of GPUs, "
			    "and %" PRIu32 " is not a multiple of %" PRIu32,
			    p->gpus, n, p->gpus, n);
		if (*has_g && *g != p->gpus / n)
			return cerr_set(err, ERR_INVALID, "--gpus %" PRIu32
			    " over %" PRIu32 " nodes is %" PRIu32 " GPUs per "
			    "node, not --gpus-per-node %" PRIu64, p->gpus, n,
			    p->gpus / n, *g);
		*g = p->gpus / n;
		*has_g = true;
	}
	if (p->gpus_per_task > 0) {
		if (p->ntasks_per_gpu > 0)
			return cerr_set(err, ERR_INVALID, "--gpus-per-task "
			    "and --ntasks-per-gpu: give one");
		v = (uint64_t)p->gpus_per_task * *t;
		if (*has_g && *g != v)
			return cerr_set(err, ERR_INVALID, "--gpus-per-task %"
			    PRIu32 " with %" PRIu64 " tasks per node is %"
			    PRIu64 " GPUs per node, not %" PRIu64 " (--%s)",
			    p->gpus_per_task, *t, v, *g, p->gpus > 0 ? "gpus" :
			    "gpus-per-node");
		*g = v;
		*has_g = true;
	}
	if (p->ntasks_per_gpu == 0)
		return 0;
	if (*has_g) {
		if (*g == 0)
			return cerr_set(err, ERR_INVALID, "--ntasks-per-gpu "
			    "%" PRIu32 " with no GPUs", p->ntasks_per_gpu);
		v = (uint64_t)p->ntasks_per_gpu * *g;
		if (*has_t && *t != v)
			return cerr_set(err, ERR_INVALID, "--ntasks-per-gpu %"
			    PRIu32 " with %" PRIu64 " GPUs per node is %" PRIu64
			    " tasks per node, not %" PRIu64, p->ntasks_per_gpu,
			    *g, v, *t);
		*t = v;
		*has_t = true;
	} else if (*has_t) {
		if (*t % p->ntasks_per_gpu != 0)
			return cerr_set(err, ERR_INVALID, "--ntasks-per-gpu %"
			    PRIu32 ": %" PRIu64 " tasks per node are not a "
			    "multiple of it", p->ntasks_per_gpu, *t);
		*g = *t / p->ntasks_per_gpu;
		*has_g = true;
	} else
		return cerr_set(err, ERR_INVALID, "--ntasks-per-gpu %" PRIu32
		    " needs a number of GPUs or of tasks (--gpus, "
		    "--gpus-per-node or --ntasks)", p->ntasks_per_gpu);
	return 0;
}

int
pernode_apply(const struct pernode *p, struct job_spec *spec,
    struct cerr *err)
{
	uint64_t t = 1, g = 0, c;
	bool has_t = false, has_g = false;

	if (pernode_tasks(p, spec, &t, &has_t, err) == -1 ||
	    pernode_gpus(p, spec, &t, &has_t, &g, &has_g, err) == -1)
		return -1;
	if (t > UINT32_MAX)
		return too_many(err, "tasks per node");
	if (g > UINT32_MAX)
		return too_many(err, "GPUs per node");
	spec->tasks_per_node = (uint32_t)t;
	if (p->gpus > 0 || p->gpus_per_task > 0 || p->ntasks_per_gpu > 0) {
		spec->gpus_per_node = (uint32_t)g;
		spec->cpu_only = g == 0;
	}
	if (p->cpus_per_gpu > 0) {
		if (!has_g || g == 0)
			return cerr_set(err, ERR_INVALID, "--cpus-per-gpu %"
			    PRIu32 " needs a number of GPUs (--gpus, "
			    "--gpus-per-node or --gpus-per-task)",
			    p->cpus_per_gpu);
		c = (uint64_t)p->cpus_per_gpu * g;
		if (t == 0 || c % t != 0)
			return cerr_set(err, ERR_INVALID, "--cpus-per-gpu %"
			    PRIu32 " with %" PRIu64 " GPUs and %" PRIu64
			    " tasks per node is %" PRIu64 "/%" PRIu64 " cores "
			    "per task: Cohort binds whole cores to each task",
			    p->cpus_per_gpu, g, t, c, t);
		c /= t;
		if (p->cpt_given && spec->cpus_per_task != c)
			return cerr_set(err, ERR_INVALID, "--cpus-per-gpu %"
			    PRIu32 " is %" PRIu64 " cores per task, not "
			    "--cpus-per-task %" PRIu32, p->cpus_per_gpu, c,
			    spec->cpus_per_task);
		if (c > JOB_CPUS_PER_NODE_MAX)
			return too_many(err, "--cpus-per-gpu");
		spec->cpus_per_task = (uint32_t)c;
	}
	if (p->mem_per_gpu_mb > 0) {
		if (p->mem_given)
			return cerr_set(err, ERR_INVALID, "--mem-per-gpu and "
			    "--mem: give one");
		if (!has_g || g == 0)
			return cerr_set(err, ERR_INVALID, "--mem-per-gpu needs "
			    "a number of GPUs (--gpus, --gpus-per-node or "
			    "--gpus-per-task)");
		if (p->mem_per_gpu_mb > JOB_MEM_PER_NODE_MB_MAX / g)
			return too_many(err, "--mem-per-gpu");
		spec->mem_per_node_mb = p->mem_per_gpu_mb * g;
	}
	return 0;
}
