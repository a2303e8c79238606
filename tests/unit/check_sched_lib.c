/* Helpers shared by the scheduler core's Check suites (check_sched,
 * check_sched_queue, check_preempt): a small cluster, jobs, one pass. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check_sched.h"

void
cl_init(struct cl *c, size_t n, const char *topo_text)
{
	char err[256];
	size_t i, g;

	memset(c, 0, sizeof(*c));
	c->n = n;
	for (i = 0; i < n; i++) {
		snprintf(c->names[i], sizeof(c->names[i]), "n%03u",
		    (unsigned)i);
		c->nodes[i].name = c->names[i];
		c->nodes[i].up = true;
		c->nodes[i].gpu_model = H100;
		c->nodes[i].gpus = c->gpus[i];
		c->nodes[i].ngpus = GPN;
		for (g = 0; g < GPN; g++) {
			c->gpus[i][g].index = (uint32_t)g;
			c->gpus[i][g].nvlink = (int32_t)(g / 4);
			c->gpus[i][g].pcie = (int32_t)(g / 2);
			c->gpus[i][g].numa = (int32_t)(g / 4);
			c->gpus[i][g].near_nic = g % 2 == 0;
		}
	}
	if (topo_text != NULL) {
		c->topo = topo_parse(topo_text, strlen(topo_text), "test",
		    err, sizeof(err));
		ck_assert_msg(c->topo != NULL, "%s", err);
	}
}

void
cl_free(struct cl *c)
{
	topo_destroy(c->topo);
	c->topo = NULL;
}

/* Mark GPUs in mask of node i as held by job. */
void
busy(struct cl *c, size_t i, unsigned mask, uint64_t job)
{
	size_t g;

	for (g = 0; g < GPN; g++)
		if (mask >> g & 1)
			c->gpus[i][g].job = job;
}

struct sched_job
job(uint64_t id, uint32_t nodes, uint32_t g)
{
	struct sched_job j;

	memset(&j, 0, sizeof(j));
	j.id = id;
	j.priority = 100;
	j.submit = (int64_t)id;
	j.nodes_min = j.nodes_max = nodes;
	j.gpus_per_node = g;
	j.time_limit = 100;
	return j;
}

struct sched_result *
run(const struct cl *c, const struct sched_running *r, size_t nr,
    const struct sched_job *jobs, size_t nj, int64_t now)
{
	struct sched_input in;
	struct sched_result *res;

	memset(&in, 0, sizeof(in));
	in.now = now;
	in.topo = c->topo;
	in.nodes = c->nodes;
	in.nnodes = c->n;
	in.running = r;
	in.nrunning = nr;
	in.pending = jobs;
	in.npending = nj;
	in.config.default_limit = 300;
	res = sched_run(&in);
	ck_assert_ptr_nonnull(res);
	return res;
}

const struct sched_start *
started(const struct sched_result *res, uint64_t id)
{
	size_t i;

	for (i = 0; i < res->nstarts; i++)
		if (res->starts[i].job == id)
			return &res->starts[i];
	return NULL;
}

/* Bit i set when node i is in the start. */
uint64_t
nodeset(const struct sched_place *p, uint32_t n)
{
	uint64_t m = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		m |= 1ULL << p[i].node;
	return m;
}

unsigned
gpuset(const struct sched_place *p)
{
	unsigned m = 0;
	uint32_t i;

	for (i = 0; i < p->ngpus; i++)
		m |= 1u << p->gpus[i];
	return m;
}

struct sched_queue
queue_def(int32_t parent, uint32_t nominal)
{
	struct sched_queue q;
	size_t f;

	memset(&q, 0, sizeof(q));
	q.parent = parent;
	for (f = 0; f < SCHED_FLAVORS_MAX; f++)
		q.nominal[f] = SCHED_UNLIMITED;
	q.nominal[0] = nominal;
	q.borrow_limit = SCHED_UNLIMITED;
	q.lend_limit = SCHED_UNLIMITED;
	q.preempt = SCHED_PREEMPT_NEVER;
	return q;
}

struct sched_running
running(uint64_t id, uint32_t queue, int32_t priority, int64_t end)
{
	struct sched_running r;

	memset(&r, 0, sizeof(r));
	r.id = id;
	r.end = end;
	r.queue = queue;
	r.priority = priority;
	r.preemptible = true;
	return r;
}

struct sched_input
qinput(const struct cl *c, const struct sched_running *r, size_t nr,
    const struct sched_job *jobs, size_t nj, const struct sched_queue *q,
    size_t nq, int64_t now)
{
	struct sched_input in;

	memset(&in, 0, sizeof(in));
	in.now = now;
	in.topo = c->topo;
	in.nodes = c->nodes;
	in.nnodes = c->n;
	in.running = r;
	in.nrunning = nr;
	in.pending = jobs;
	in.npending = nj;
	in.config.default_limit = 300;
	in.queues = q;
	in.nqueues = nq;
	return in;
}

struct sched_result *
qrun(const struct sched_input *in)
{
	struct sched_result *res = sched_run(in);

	ck_assert_ptr_nonnull(res);
	return res;
}

const struct sched_preemption *
preempted(const struct sched_result *res, uint64_t id)
{
	size_t i;

	for (i = 0; i < res->npreempts; i++)
		if (res->preempts[i].job == id)
			return &res->preempts[i];
	return NULL;
}

bool
has_victim(const struct sched_preemption *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->nvictims; i++)
		if (p->victims[i] == id)
			return true;
	return false;
}
