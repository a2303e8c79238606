/* Shared by the scheduler core's Check suite: check_sched.c (the policy
 * case by case, and main) and check_sched_sim.c (randomized runs). */
#ifndef COHORT_CHECK_SCHED_H
#define COHORT_CHECK_SCHED_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/sched/sched.h"
#include "daemon/sched/topo.h"

#define MAXN 160
#define GPN 8
#define H100 "NVIDIA H100 80GB HBM3"
#define A100 "NVIDIA A100-SXM4-40GB"

/* Check records every passing ck_assert (a write each); the random runs
 * check millions of things, so they fail loudly but pass silently. */
#define CHECK(cond, ...) do {						\
	if (!(cond))							\
		ck_abort_msg(__VA_ARGS__);				\
} while (0)

/* A small cluster: nodes n000, n001, … of 8 GPUs in two NVLink quads
 * (0-3, 4-7), PCIe switches of two GPUs, NUMA halves, a NIC next to
 * every even GPU. */
struct cl {
	struct sched_node nodes[MAXN];
	struct sched_gpu gpus[MAXN][GPN];
	char names[MAXN][16];
	size_t n;
	struct topo *topo;
};

void	cl_init(struct cl *, size_t n, const char *topo_text);
void	cl_free(struct cl *);
/* Mark GPUs in mask of node i as held by job. */
void	busy(struct cl *, size_t i, unsigned mask, uint64_t job);
/* A job of priority 100, submitted at its id, limit 100 s. */
struct sched_job job(uint64_t id, uint32_t nodes, uint32_t g);
/* One pass (default limit 300 s); never NULL. */
struct sched_result *run(const struct cl *, const struct sched_running *,
	    size_t nr, const struct sched_job *, size_t nj, int64_t now);
const struct sched_start *started(const struct sched_result *, uint64_t id);
/* Bit i set when node i is in the placement. */
uint64_t nodeset(const struct sched_place *, uint32_t n);
/* Bit g set when GPU index g is in the place. */
unsigned gpuset(const struct sched_place *);

/* Queues (check_sched_lib.c): a queue with nominal[0] = nominal, every
 * other flavor unlimited, no borrow or lend limit, never preempting; a
 * preemptible running job of lost 0, start 0; an input with queues the
 * caller completes; one pass (never NULL). */
struct sched_queue queue_def(int32_t parent, uint32_t nominal);
struct sched_running running(uint64_t id, uint32_t queue, int32_t priority,
	    int64_t end);
struct sched_input qinput(const struct cl *, const struct sched_running *,
	    size_t nr, const struct sched_job *, size_t nj,
	    const struct sched_queue *, size_t nq, int64_t now);
struct sched_result *qrun(const struct sched_input *);
const struct sched_preemption *preempted(const struct sched_result *,
	    uint64_t id);
bool	has_victim(const struct sched_preemption *, uint64_t id);

/* check_sched_sim.c */
TCase	*sched_sim_tcase(void);

#endif
