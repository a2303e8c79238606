/* Binding a task to CPU cores next to its GPUs (--cpus-per-task). The
 * node's map of NUMA nodes to CPUs comes from the agent config
 * ([agent] numa_cpus, for simulated inventories whose NUMA nodes this
 * machine may not have) or from /sys/devices/system/node; the choice of
 * cores is a pure function of that map, the task's GPUs' NUMA nodes and
 * the cores other tasks of this node hold, so it is tested without a
 * machine of that shape. The agent computes the set before it forks the
 * task's supervisor; the task applies it with sched_setaffinity
 * (tasks_child.c). */
#ifndef COHORT_AGENT_CPUBIND_H
#define COHORT_AGENT_CPUBIND_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stddef.h>

/* NUMA nodes a map holds (the simulated inventory has at most 64). */
#define CPUBIND_MAX_NODES 64
/* The largest CPU number a list may name: a cpu_set_t's. */
#define CPUBIND_MAX_CPU (CPU_SETSIZE - 1)

struct cpubind_map {
	unsigned nnodes;
	int node[CPUBIND_MAX_NODES];		/* NUMA node ids, ascending */
	cpu_set_t cpus[CPUBIND_MAX_NODES];	/* each node's CPUs */
};

/* What a choice had to give up (cpubind_choose's *flags). */
enum {
	CPUBIND_REMOTE = 1,	/* some cores are on other NUMA nodes than
				 * the task's GPUs' */
	CPUBIND_SHARED = 2,	/* some cores are also another task's */
	CPUBIND_SHORT = 4,	/* the map has fewer CPUs than asked: the
				 * task gets all of them */
};

/* Parse a Linux CPU list ("0-3,8,10-11", as sysfs and taskset write
 * it) into *set. 0, or -1 with why: empty, a number above
 * CPUBIND_MAX_CPU, a range that runs backwards, anything else. */
int cpubind_list_parse(const char *s, cpu_set_t *set, char *why,
    size_t len);

/* Format set as a CPU list ("0-3,8"); "" for an empty set. 0, or -1
 * (ENOSPC) when buf is too small. */
int cpubind_list_format(const cpu_set_t *set, char *buf, size_t len);

/* Parse [agent] numa_cpus: NODE:LIST pairs separated by spaces
 * ("0:0-3 1:4-7"). Each node once, each CPU on one node only. 0, or -1
 * with why. */
int cpubind_map_parse(const char *spec, struct cpubind_map *m, char *why,
    size_t len);

/* The map sysfs describes under dir (/sys/devices/system/node: nodeN/
 * cpulist), less the CPUs not in allowed (the agent's own affinity:
 * a container or cpuset may hold fewer). Where dir lists no node (no
 * NUMA support), one node 0 with every allowed CPU. 0, or -1 with
 * errno when a cpulist cannot be read or parsed. */
int cpubind_map_sysfs(const char *dir, const cpu_set_t *allowed,
    struct cpubind_map *m);

/* Choose n cores for a task whose GPUs sit on the NUMA nodes numa[0..
 * nnuma-1] (-1 entries are unknown; none known, e.g. a CPU-only task:
 * every node is as near). Cores in used are other tasks'. In order of
 * preference: free cores of the task's NUMA nodes, taken in turn from
 * each (a task with GPUs on two nodes gets cores on both), lowest
 * first; then free cores of other nodes (CPUBIND_REMOTE); then cores
 * others hold (CPUBIND_SHARED). *out gets the set, *flags what was
 * given up (0: all local and free). 0, or -1 (EINVAL) for n = 0 or an
 * empty map. */
int cpubind_choose(const struct cpubind_map *m, const int *numa,
    size_t nnuma, unsigned n, const cpu_set_t *used, cpu_set_t *out,
    unsigned *flags);

#endif
