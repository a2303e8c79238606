/* daemon/sched/: the scheduling policy, pinned case by case, then checked
 * over randomized runs that drive the core forward in virtual time:
 * invariants after every pass, reservations never delayed by backfill,
 * and the same decisions for the same seed. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sched/sched.h"
#include "daemon/sched/topo.h"

#define MAXN 160
#define GPN 8
#define H100 "NVIDIA H100 80GB HBM3"

/* Check records every passing ck_assert (a write each); the random runs
 * check millions of things, so they fail loudly but pass silently. */
#define CHECK(cond, ...) do {						\
	if (!(cond))							\
		ck_abort_msg(__VA_ARGS__);				\
} while (0)
#define A100 "NVIDIA A100-SXM4-40GB"

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

static void
cl_init(struct cl *c, size_t n, const char *topo_text)
{
	char err[256];
	size_t i, g;

	memset(c, 0, sizeof(*c));
	c->n = n;
	for (i = 0; i < n; i++) {
		snprintf(c->names[i], sizeof(c->names[i]), "n%03zu", i);
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

static void
cl_free(struct cl *c)
{
	topo_destroy(c->topo);
	c->topo = NULL;
}

/* Mark GPUs in mask of node i as held by job. */
static void
busy(struct cl *c, size_t i, unsigned mask, uint64_t job)
{
	size_t g;

	for (g = 0; g < GPN; g++)
		if (mask >> g & 1)
			c->gpus[i][g].job = job;
}

static struct sched_job
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

static struct sched_result *
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

static const struct sched_start *
started(const struct sched_result *res, uint64_t id)
{
	size_t i;

	for (i = 0; i < res->nstarts; i++)
		if (res->starts[i].job == id)
			return &res->starts[i];
	return NULL;
}

/* Bit i set when node i is in the start. */
static uint64_t
nodeset(const struct sched_place *p, uint32_t n)
{
	uint64_t m = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		m |= 1ULL << p[i].node;
	return m;
}

static unsigned
gpuset(const struct sched_place *p)
{
	unsigned m = 0;
	uint32_t i;

	for (i = 0; i < p->ngpus; i++)
		m |= 1u << p->gpus[i];
	return m;
}

static const char two_leaves[] =
    "SwitchName=leaf0 Nodes=n[000-003]\n"
    "SwitchName=leaf1 Nodes=n[004-007]\n"
    "SwitchName=spine0 Switches=leaf[0-1]\n";

static const char two_spines[] =
    "SwitchName=leaf0 Nodes=n[000-003]\n"
    "SwitchName=leaf1 Nodes=n[004-007]\n"
    "SwitchName=leaf2 Nodes=n[008-011]\n"
    "SwitchName=leaf3 Nodes=n[012-015]\n"
    "SwitchName=spine0 Switches=leaf[0-1]\n"
    "SwitchName=spine1 Switches=leaf[2-3]\n";

START_TEST(test_queue_order)
{
	struct cl c;
	struct sched_job j[5];
	struct sched_result *res;
	static const uint64_t want[] = { 3, 2, 4, 5, 6 };
	size_t i;

	cl_init(&c, 1, NULL);
	j[0] = job(5, 1, 1);		/* prio 100, submit 5, id 5 */
	j[0].submit = 5;
	j[1] = job(2, 1, 1);		/* restarting: before its peers */
	j[1].restarting = true;
	j[1].submit = 9;
	j[2] = job(3, 1, 1);		/* highest priority */
	j[2].priority = 200;
	j[2].submit = 10;
	j[3] = job(4, 1, 1);		/* submit 5 too: the lower id first */
	j[3].submit = 5;
	j[4] = job(6, 1, 1);
	j[4].submit = 6;
	res = run(&c, NULL, 0, j, 5, 0);
	ck_assert_uint_eq(res->nstarts, 5);
	for (i = 0; i < 5; i++) {
		ck_assert_uint_eq(res->starts[i].job, want[i]);
		ck_assert_int_eq(res->reasons[i], SCHED_REASON_NONE);
	}
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_one_leaf)
{
	struct cl c;
	struct sched_job j = job(1, 3, 0);
	struct sched_result *res;
	const struct sched_start *s;

	/* leaf0 has 2 free nodes, leaf1 4: the gang goes to leaf1 alone. */
	cl_init(&c, 8, two_leaves);
	busy(&c, 0, 0xff, 90);
	busy(&c, 1, 0xff, 90);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nnodes, 3);
	ck_assert_uint_eq(nodeset(s->nodes, 3) & 0x0f, 0);
	sched_result_free(res);
	/* leaf0 has 3 free, leaf1 4: best fit takes the fuller leaf0 and
	 * keeps leaf1 whole. */
	busy(&c, 1, 0xff, 0);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(nodeset(s->nodes, 3), 0x0e);
	ck_assert_uint_eq(s->nodes[0].ngpus, GPN);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_fewest_switches)
{
	struct cl c;
	struct sched_job j = job(1, 5, 0);
	struct sched_result *res;
	const struct sched_start *s;
	uint64_t m;

	/* Free nodes: leaf0 2, leaf1 2, leaf2 3, leaf3 3. Five nodes fit
	 * in spine1 alone (leaf2 + leaf3), never across spines. */
	cl_init(&c, 16, two_spines);
	busy(&c, 0, 0xff, 90);
	busy(&c, 1, 0xff, 90);
	busy(&c, 4, 0xff, 90);
	busy(&c, 5, 0xff, 90);
	busy(&c, 8, 0xff, 90);
	busy(&c, 12, 0xff, 90);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	m = nodeset(s->nodes, 5);
	ck_assert_uint_eq(m & 0xff, 0);
	ck_assert_uint_eq(__builtin_popcountll(m), 5);
	sched_result_free(res);
	/* Free: leaf0 1, leaf1 4, leaf2 3, leaf3 1 (all under one spine
	 * pair). A 5-node gang spans two leaves: leaf1 whole plus one node
	 * from the best-fit leaf (leaf0, in spine0), not three leaves. */
	cl_free(&c);
	cl_init(&c, 16, two_spines);
	busy(&c, 0, 0xff, 90);
	busy(&c, 1, 0xff, 90);
	busy(&c, 2, 0xff, 90);
	busy(&c, 8, 0xff, 90);
	busy(&c, 12, 0xff, 90);
	busy(&c, 13, 0xff, 90);
	busy(&c, 14, 0xff, 90);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(nodeset(s->nodes, 5), 0xf8);
	/* Rank order keeps each leaf's nodes together, in the order the
	 * leaves were taken. */
	ck_assert_uint_eq(s->nodes[0].node, 4);
	ck_assert_uint_eq(s->nodes[4].node, 3);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_topology_required)
{
	struct cl c;
	struct sched_job j = job(1, 3, 0);
	struct sched_running r = { 90, 50 };
	struct sched_result *res;
	const struct sched_start *s;

	/* Two free nodes per leaf: 3 nodes under one leaf wait. */
	cl_init(&c, 8, two_leaves);
	busy(&c, 0, 0xff, 90);
	busy(&c, 1, 0xff, 90);
	busy(&c, 4, 0x0f, 91);
	busy(&c, 5, 0xff, 91);
	j.topo_mode = SCHED_TOPO_REQUIRED;
	j.topo_level = "leaf";
	res = run(&c, &r, 1, &j, 1, 10);
	ck_assert_uint_eq(res->nstarts, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_TOPOLOGY);
	/* It holds the reservation: leaf0 when job 90 ends at 50. Job 91
	 * has no running entry, so it never ends. */
	ck_assert(res->has_resv);
	ck_assert_uint_eq(res->resv.job, 1);
	ck_assert_int_eq(res->resv.start, 50);
	ck_assert_uint_eq(nodeset(res->resv.nodes, 3) & ~0x0fULL, 0);
	sched_result_free(res);
	/* Preferred does not wait: it spans both leaves. */
	j.topo_mode = SCHED_TOPO_PREFERRED;
	res = run(&c, &r, 1, &j, 1, 10);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(nodeset(s->nodes, 3) & 0x33, 0);
	sched_result_free(res);
	/* Required spine is satisfied by the two leaves under spine0. */
	j.topo_mode = SCHED_TOPO_REQUIRED;
	j.topo_level = "spine";
	res = run(&c, &r, 1, &j, 1, 10);
	ck_assert_ptr_nonnull(started(res, 1));
	sched_result_free(res);
	/* Never possible: 5 nodes under one leaf of 4; an unknown level. */
	j = job(2, 5, 0);
	j.topo_mode = SCHED_TOPO_REQUIRED;
	j.topo_level = "leaf";
	res = run(&c, &r, 1, &j, 1, 10);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_TOPOLOGY);
	ck_assert(!res->has_resv);
	sched_result_free(res);
	j.topo_level = "rack";
	res = run(&c, &r, 1, &j, 1, 10);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_TOPOLOGY);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_preferred_level)
{
	struct cl c;
	struct sched_job j = job(1, 4, 0);
	struct sched_result *res;
	const struct sched_start *s;
	uint64_t m;

	/* Preferred spine with 4 nodes: no leaf holds it, spine0 does
	 * (2 + 2 free), spine1 has 3 free: the gang stays under spine0
	 * although 7 nodes are free in all. */
	cl_init(&c, 16, two_spines);
	busy(&c, 0, 0xff, 90);
	busy(&c, 1, 0xff, 90);
	busy(&c, 4, 0xff, 90);
	busy(&c, 5, 0xff, 90);
	busy(&c, 8, 0xff, 90);
	busy(&c, 9, 0xff, 90);
	busy(&c, 10, 0xff, 90);
	busy(&c, 12, 0xff, 90);
	busy(&c, 13, 0xff, 90);
	j.topo_mode = SCHED_TOPO_PREFERRED;
	j.topo_level = "spine";
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	m = nodeset(s->nodes, 4);
	ck_assert_uint_eq(m, 0xcc);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_nvlink_quad)
{
	struct cl c;
	struct sched_job j = job(1, 1, 4);
	struct sched_result *res;
	const struct sched_start *s;

	cl_init(&c, 1, NULL);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(gpuset(&s->nodes[0]), 0x0f);
	sched_result_free(res);
	/* GPU 1 taken: quad 0 cannot hold 4, quad 1 can. */
	busy(&c, 0, 0x02, 90);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(gpuset(&s->nodes[0]), 0xf0);
	sched_result_free(res);
	/* Two GPUs with GPU 1 taken: the partly used quad (best fit), and
	 * in it the PCIe pair that is whole (2, 3), not 0 with 2. */
	j.gpus_per_node = 2;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(gpuset(&s->nodes[0]), 0x0c);
	sched_result_free(res);
	/* Quads 0-1 and 4-5 taken partly: 4 free GPUs (2,3,6,7) in no one
	 * domain; the job still starts, spread over the fewest domains. */
	busy(&c, 0, 0x33, 90);
	j.gpus_per_node = 4;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(gpuset(&s->nodes[0]), 0xcc);
	sched_result_free(res);
	/* A single GPU goes near a NIC. */
	busy(&c, 0, 0xff, 0);
	busy(&c, 0, 0x01, 90);
	j.gpus_per_node = 1;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(gpuset(&s->nodes[0]) & 0x55, gpuset(&s->nodes[0]));
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_partly_used)
{
	struct cl c;
	struct sched_job j = job(1, 1, 4);
	struct sched_result *res;
	const struct sched_start *s;

	/* Node 1 has quad 1 in use: a 4-GPU job takes its free quad and
	 * leaves nodes 0 and 2 whole. */
	cl_init(&c, 3, two_leaves);
	busy(&c, 1, 0xf0, 90);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nodes[0].node, 1);
	ck_assert_uint_eq(gpuset(&s->nodes[0]), 0x0f);
	sched_result_free(res);
	/* One GPU: the node with the fewest free GPUs that still fits. */
	busy(&c, 2, 0x7e, 91);
	j.gpus_per_node = 1;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nodes[0].node, 2);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_gpu_type)
{
	struct cl c;
	struct sched_job j[2];
	struct sched_result *res;
	const struct sched_start *s;

	cl_init(&c, 4, NULL);
	c.nodes[0].gpu_model = A100;
	c.nodes[1].gpu_model = A100;
	j[0] = job(1, 2, 0);
	j[0].gpu_type = "h100";
	j[1] = job(2, 1, 0);
	j[1].gpu_type = "B200";
	res = run(&c, NULL, 0, j, 2, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(nodeset(s->nodes, 2), 0x0c);
	ck_assert_int_eq(res->reasons[1], SCHED_REASON_GPU_TYPE);
	sched_result_free(res);
	ck_assert(sched_gpu_type_match(H100, "H100"));
	ck_assert(sched_gpu_type_match(H100, "80gb hbm3"));
	ck_assert(!sched_gpu_type_match(A100, "H100"));
	ck_assert(!sched_gpu_type_match(NULL, "H100"));
	ck_assert(sched_gpu_type_match(NULL, NULL));
	cl_free(&c);
}
END_TEST

START_TEST(test_never_bad_nodes)
{
	struct cl c;
	struct sched_job j[2];
	struct sched_result *res;
	const struct sched_start *s;

	/* Of six nodes only node 5 is healthy and free of trouble. */
	cl_init(&c, 6, NULL);
	c.nodes[0].drained = true;
	c.nodes[1].up = false;
	c.nodes[2].health = SCHED_HEALTH_FAILED;
	c.gpus[3][2].health = SCHED_HEALTH_FAILED;	/* not whole */
	c.gpus[4][7].health = SCHED_HEALTH_DEGRADED;
	j[0] = job(1, 1, 0);
	j[1] = job(2, 2, 0);
	res = run(&c, NULL, 0, j, 2, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nodes[0].node, 5);
	ck_assert_ptr_null(started(res, 2));
	ck_assert_int_eq(res->reasons[1], SCHED_REASON_RESOURCES);
	/* Nothing running will free a node: no reservation can exist. */
	ck_assert(!res->has_resv);
	sched_result_free(res);
	/* Seven GPUs on three nodes: nodes 3 and 4 give their 7 OK GPUs,
	 * never the FAILED or DEGRADED one. */
	j[0] = job(1, 3, 7);
	res = run(&c, NULL, 0, j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(nodeset(s->nodes, 3), 0x38);
	ck_assert_uint_eq(gpuset(&s->nodes[0]), 0xfb);
	ck_assert_uint_eq(gpuset(&s->nodes[1]), 0x7f);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_bad_constraints)
{
	struct cl c;
	struct sched_job j[4];
	struct sched_result *res;

	cl_init(&c, 2, NULL);
	j[0] = job(1, 3, 0);		/* more nodes than exist */
	j[1] = job(2, 1, 9);		/* more GPUs than a node has */
	j[2] = job(3, 0, 1);		/* zero nodes */
	j[3] = job(4, 2, 1);
	j[3].nodes_max = 1;		/* min above max */
	res = run(&c, NULL, 0, j, 4, 0);
	ck_assert_uint_eq(res->nstarts, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_BAD_CONSTRAINTS);
	ck_assert_int_eq(res->reasons[1], SCHED_REASON_BAD_CONSTRAINTS);
	ck_assert_int_eq(res->reasons[2], SCHED_REASON_BAD_CONSTRAINTS);
	ck_assert_int_eq(res->reasons[3], SCHED_REASON_BAD_CONSTRAINTS);
	ck_assert(!res->has_resv);
	ck_assert_str_eq(sched_reason_name(res->reasons[0]),
	    "BadConstraints");
	sched_result_free(res);
	errno = 0;
	ck_assert_ptr_null(sched_run(NULL));
	ck_assert_int_eq(errno, EINVAL);
	cl_free(&c);
}
END_TEST

START_TEST(test_elastic)
{
	struct cl c;
	struct sched_job j = job(1, 2, 0);
	struct sched_result *res;
	const struct sched_start *s;

	cl_init(&c, 8, two_leaves);
	busy(&c, 0, 0xff, 90);
	busy(&c, 1, 0x01, 90);
	busy(&c, 4, 0xff, 90);
	j.nodes_max = 10;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nnodes, 5);
	sched_result_free(res);
	/* Required leaf: the largest one leaf holds (3, in leaf1). */
	j.topo_mode = SCHED_TOPO_REQUIRED;
	j.topo_level = "leaf";
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nnodes, 3);
	ck_assert_uint_eq(nodeset(s->nodes, 3), 0xe0);
	sched_result_free(res);
	/* Above its minimum only: 6 needed, 5 free: it waits. */
	j = job(1, 6, 0);
	j.nodes_max = 8;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_uint_eq(res->nstarts, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_RESOURCES);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_backfill)
{
	struct cl c;
	struct sched_job j[5];
	struct sched_running r = { 90, 100 };
	struct sched_result *res;
	const struct sched_start *s;

	/* Six nodes; job 90 holds 0-1 until 100. Job 1 needs 5 whole nodes:
	 * reserved at 100. Job 2 (limit 50) ends before: it may start on a
	 * reserved node. Job 3 (limit 500) may start only on the node
	 * outside the reservation; job 4 (limit 500, 2 nodes) cannot. */
	cl_init(&c, 6, NULL);
	busy(&c, 0, 0xff, 90);
	busy(&c, 1, 0xff, 90);
	j[0] = job(1, 5, 0);
	j[0].priority = 200;
	j[1] = job(2, 1, 0);
	j[1].time_limit = 50;
	j[2] = job(3, 1, 0);
	j[2].time_limit = 500;
	j[3] = job(4, 2, 0);
	j[3].time_limit = 500;
	j[4] = job(5, 1, 0);
	j[4].time_limit = 0;		/* default 300: after 100 */
	res = run(&c, &r, 1, j, 5, 0);
	ck_assert(res->has_resv);
	ck_assert_uint_eq(res->resv.job, 1);
	ck_assert_int_eq(res->resv.start, 100);
	ck_assert_uint_eq(res->resv.nnodes, 5);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_RESOURCES);
	ck_assert_ptr_nonnull(s = started(res, 2));
	ck_assert(s->backfill);
	ck_assert_int_eq(s->end, 50);
	ck_assert_ptr_nonnull(s = started(res, 3));
	ck_assert_uint_eq(nodeset(res->resv.nodes, 5) &
	    nodeset(s->nodes, 1), 0);
	ck_assert_ptr_null(started(res, 4));
	ck_assert_int_eq(res->reasons[3], SCHED_REASON_PRIORITY);
	/* No limit: the default (300) ends after 100, and the only
	 * unreserved node is taken. */
	ck_assert_ptr_null(started(res, 5));
	ck_assert_int_eq(res->reasons[4], SCHED_REASON_PRIORITY);
	ck_assert_uint_eq(res->stats.backfilled, 2);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_backfill_cap)
{
	struct cl c;
	struct sched_job j[5];
	struct sched_running r = { 90, 100 };
	struct sched_input in;
	struct sched_result *res;
	size_t k;

	cl_init(&c, 4, NULL);
	busy(&c, 0, 0xff, 90);
	j[0] = job(1, 4, 0);
	for (k = 1; k < 5; k++) {
		j[k] = job(k + 1, 1, 1);
		j[k].time_limit = 10;
	}
	memset(&in, 0, sizeof(in));
	in.nodes = c.nodes;
	in.nnodes = c.n;
	in.running = &r;
	in.nrunning = 1;
	in.pending = j;
	in.npending = 5;
	in.config.bf_max_job_test = 2;
	res = sched_run(&in);
	ck_assert_ptr_nonnull(res);
	ck_assert(res->has_resv);
	ck_assert_uint_eq(res->nstarts, 2);
	ck_assert_uint_eq(res->stats.tried, 3);
	ck_assert_int_eq(res->reasons[3], SCHED_REASON_PRIORITY);
	ck_assert_int_eq(res->reasons[4], SCHED_REASON_PRIORITY);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_unlisted)
{
	static const char one_leaf[] = "SwitchName=leaf0 Nodes=n[000-001]\n";
	struct cl c;
	struct sched_job j = job(1, 3, 0);
	struct sched_result *res;
	const struct sched_start *s;

	/* n002-n004 are not in the file: together they are one domain, so
	 * a required-leaf gang of 3 lands there and nowhere across. */
	cl_init(&c, 5, one_leaf);
	j.topo_mode = SCHED_TOPO_REQUIRED;
	j.topo_level = "leaf";
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(nodeset(s->nodes, 3), 0x1c);
	sched_result_free(res);
	/* Without any topology the cluster is one domain. */
	cl_free(&c);
	cl_init(&c, 5, NULL);
	j.nodes_min = j.nodes_max = 5;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(started(res, 1));
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* Leaves bigger than the core's internal chunks still act as one
 * domain: a required-leaf gang may span all of a leaf's nodes. */
START_TEST(test_big_leaf)
{
	static const char big[] =
	    "SwitchName=leaf0 Nodes=n[000-129]\n"
	    "SwitchName=leaf1 Nodes=n[130-149]\n"
	    "SwitchName=spine0 Switches=leaf[0-1]\n";
	struct cl *c = malloc(sizeof(*c));
	struct sched_job j[3];
	struct sched_result *res;
	const struct sched_start *s;
	uint32_t k;

	ck_assert_ptr_nonnull(c);
	cl_init(c, 150, big);
	j[0] = job(1, 100, 0);
	j[1] = job(2, 25, 0);
	j[2] = job(3, 21, 0);
	for (k = 0; k < 3; k++) {
		j[k].topo_mode = SCHED_TOPO_REQUIRED;
		j[k].topo_level = "leaf";
	}
	res = run(c, NULL, 0, j, 3, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	for (k = 0; k < 100; k++)
		ck_assert_uint_lt(s->nodes[k].node, 130);
	/* 30 left in leaf0, 20 in leaf1: 25 fit in leaf0 only. Then 21
	 * fit in the 25 free nodes, but under no one leaf. */
	ck_assert_ptr_nonnull(s = started(res, 2));
	for (k = 0; k < 25; k++)
		ck_assert_uint_lt(s->nodes[k].node, 130);
	ck_assert_ptr_null(started(res, 3));
	ck_assert_int_eq(res->reasons[2], SCHED_REASON_TOPOLOGY);
	sched_result_free(res);
	cl_free(c);
	/* No topology: 150 nodes are one domain. */
	cl_init(c, 150, NULL);
	j[0] = job(1, 150, 1);
	j[0].topo_mode = SCHED_TOPO_REQUIRED;
	j[0].topo_level = "leaf";
	res = run(c, NULL, 0, j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nnodes, 150);
	sched_result_free(res);
	cl_free(c);
	free(c);
}
END_TEST

/* ---- Randomized runs in virtual time. ---- */

#define SIM_JOBS 4096

struct simjob {
	struct sched_job spec;
	int64_t end;		/* limit-based, while running */
	int64_t real_end;	/* when it really ends (<= end) */
	int64_t promised;	/* earliest reservation start; -1: none */
	int state;		/* 0 unborn, 1 pending, 2 running, 3 done */
};

struct sim {
	struct cl c;
	struct simjob jobs[SIM_JOBS];
	size_t njobs;
	uint64_t rng;
	int64_t now;
	bool chaos;		/* node and GPU failures come and go */
	bool big;		/* 150 nodes, a leaf of 130 */
	struct sched_job pend[SIM_JOBS];
	size_t map[SIM_JOBS];
	struct sched_running runs[SIM_JOBS];
	uint64_t hash;
	size_t starts, resvs, backfills;
};

static const char sim_topo[] =
    "SwitchName=leaf0 Nodes=n[000-003]\n"
    "SwitchName=leaf1 Nodes=n[004-007]\n"
    "SwitchName=leaf2 Nodes=n[008-011]\n"
    "SwitchName=leaf3 Nodes=n[012-015]\n"
    "SwitchName=spine0 Switches=leaf[0-1]\n"
    "SwitchName=spine1 Switches=leaf[2-3]\n";
#define SIM_NODES 18		/* two nodes outside the file */

static const char sim_big_topo[] =
    "SwitchName=leaf0 Nodes=n[000-129]\n"
    "SwitchName=leaf1 Nodes=n[130-147]\n"
    "SwitchName=spine0 Switches=leaf[0-1]\n";
#define SIM_BIG_NODES 150	/* two nodes outside the file */

static uint64_t
rnd(struct sim *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return s->rng;
}

static uint32_t
pick(struct sim *s, uint32_t n)
{
	return (uint32_t)(rnd(s) % n);
}

static void
mix(struct sim *s, uint64_t v)
{
	s->hash = (s->hash ^ v) * 1099511628211ULL;
}

static void
sim_add_job(struct sim *s, int32_t priority)
{
	static const uint32_t gs[] = { 0, 1, 1, 2, 4, 4, 8 };
	static const char *const levels[] = { "leaf", "spine" };
	struct simjob *j;

	if (s->njobs == SIM_JOBS)
		return;
	j = &s->jobs[s->njobs];
	memset(j, 0, sizeof(*j));
	j->spec.id = s->njobs + 1;
	j->spec.priority = priority;
	j->spec.submit = s->now;
	j->spec.nodes_min = 1 + pick(s, pick(s, 4) == 0 ? (s->big ? 60 : 8) :
	    3);
	j->spec.nodes_max = j->spec.nodes_min + (pick(s, 5) == 0 ?
	    pick(s, 4) : 0);
	j->spec.gpus_per_node = gs[pick(s, 7)];
	if (pick(s, 8) == 0)
		j->spec.gpu_type = pick(s, 2) ? "h100" : "A100";
	j->spec.topo_mode = (enum sched_topo_mode)pick(s, 3);
	j->spec.topo_level = levels[pick(s, 2)];
	j->spec.time_limit = pick(s, 6) == 0 ? 0 : 10 + pick(s, 400);
	j->promised = -1;
	j->state = 1;
	s->njobs++;
}

static void
sim_init(struct sim *s, uint64_t seed, bool chaos, bool big)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	s->big = big;
	if (big) {
		cl_init(&s->c, SIM_BIG_NODES, sim_big_topo);
		for (i = 130; i < 148; i++)
			s->c.nodes[i].gpu_model = A100;
	} else {
		cl_init(&s->c, SIM_NODES, sim_topo);
		for (i = 12; i < 16; i++)
			s->c.nodes[i].gpu_model = A100;
	}
	s->rng = seed * 2654435761ULL + 1;
	s->chaos = chaos;
	s->hash = 1469598103934665603ULL;
	for (i = 0; i < (big ? 200 : 40); i++)
		sim_add_job(s, (int32_t)(100 + pick(s, 3) * 10));
	for (i = 0; i < s->njobs; i++)
		if (pick(s, 10) == 0)
			s->jobs[i].spec.restarting = true;
}

/* The level-L domain of node i: its leaf's ancestor at L, computed from
 * the topology independently of the core. */
static int32_t
domain_of(const struct cl *c, uint32_t i, unsigned L)
{
	int32_t sw = topo_node_leaf(c->topo, c->names[i]), p;

	if (sw < 0)
		return -1000;	/* the unlisted domain */
	while ((p = topo_switch_parent(c->topo, (size_t)sw)) >= 0 &&
	    topo_switch_level(c->topo, (size_t)p) <= L)
		sw = p;
	return sw;
}

static bool
node_ok(const struct cl *c, uint32_t i, const struct sched_job *jb)
{
	const struct sched_node *n = &c->nodes[i];

	return n->up && !n->drained && n->health != SCHED_HEALTH_FAILED &&
	    sched_gpu_type_match(n->gpu_model, jb->gpu_type);
}

/* Check one placement against the cluster as the test sees it. */
static void
check_place(struct sim *s, const struct sched_job *jb, uint32_t nn,
    const struct sched_place *pl, bool now)
{
	const struct cl *c = &s->c;
	uint8_t seen[MAXN] = { 0 };
	uint32_t k, g, want;
	const struct sched_gpu *gp;
	int lv;

	CHECK(nn >= jb->nodes_min && nn <= jb->nodes_max, "job %llu: %u nodes",
	    (unsigned long long)jb->id, nn);
	for (k = 0; k < nn; k++) {
		CHECK(pl[k].node < c->n, "node %u out of range", pl[k].node);
		CHECK(!seen[pl[k].node], "node twice");
		seen[pl[k].node] = 1;
		CHECK(node_ok(c, pl[k].node, jb),
		    "job %llu on unfit node %u",
		    (unsigned long long)jb->id, pl[k].node);
		want = jb->gpus_per_node ? jb->gpus_per_node : GPN;
		CHECK(pl[k].ngpus == want, "job %llu: %u GPUs on node %u, "
		    "want %u", (unsigned long long)jb->id, pl[k].ngpus,
		    pl[k].node, want);
		for (g = 0; g < pl[k].ngpus; g++) {
			CHECK(pl[k].gpus[g] < GPN, "GPU %u", pl[k].gpus[g]);
			CHECK(g == 0 || pl[k].gpus[g] > pl[k].gpus[g - 1],
			    "GPUs not ascending");
			gp = &c->gpus[pl[k].node][pl[k].gpus[g]];
			CHECK(gp->health == SCHED_HEALTH_OK, "unhealthy GPU %u "
			    "on node %u", pl[k].gpus[g], pl[k].node);
			if (now)
				CHECK(gp->job == 0, "GPU allocated "
				    "twice: node %u GPU %u to %llu and %llu",
				    pl[k].node, pl[k].gpus[g],
				    (unsigned long long)gp->job,
				    (unsigned long long)jb->id);
		}
		if (jb->topo_mode == SCHED_TOPO_REQUIRED) {
			lv = topo_level_index(c->topo, jb->topo_level);
			CHECK(domain_of(c, pl[k].node, (unsigned)lv) ==
			    domain_of(c, pl[0].node, (unsigned)lv),
			    "job %llu spans %s domains",
			    (unsigned long long)jb->id, jb->topo_level);
		}
	}
}

static void
sim_pass(struct sim *s)
{
	struct sched_job *pend = s->pend;
	size_t *map = s->map, np = 0, nr = 0, i, k, g;
	struct sched_running *runs = s->runs;
	struct sched_result *res;
	const struct sched_start *st;
	struct simjob *j;

	for (i = 0; i < s->njobs; i++) {
		if (s->jobs[i].state == 1) {
			map[np] = i;
			pend[np++] = s->jobs[i].spec;
		} else if (s->jobs[i].state == 2) {
			runs[nr].id = s->jobs[i].spec.id;
			runs[nr++].end = s->jobs[i].end;
		}
	}
	res = run(&s->c, runs, nr, pend, np, s->now);
	for (k = 0; k < res->nstarts; k++) {
		st = &res->starts[k];
		j = &s->jobs[map[st->pending]];
		CHECK(j->spec.id == st->job, "start names the wrong job");
		CHECK(res->reasons[st->pending] == SCHED_REASON_NONE,
		    "a started job has a reason");
		check_place(s, &j->spec, st->nnodes, st->nodes, true);
		/* Apply at once, so a GPU given twice in one pass shows. */
		for (i = 0; i < st->nnodes; i++)
			for (g = 0; g < st->nodes[i].ngpus; g++)
				s->c.gpus[st->nodes[i].node]
				    [st->nodes[i].gpus[g]].job = st->job;
		if (!s->chaos && j->promised >= 0)
			CHECK(s->now <= j->promised, "job %llu "
			    "promised %lld started %lld",
			    (unsigned long long)st->job,
			    (long long)j->promised, (long long)s->now);
		j->state = 2;
		j->end = st->end;
		CHECK(st->end == s->now + (j->spec.time_limit ?
		    j->spec.time_limit : 300), "end %lld", (long long)st->end);
		j->real_end = s->now + 1 + (int64_t)pick(s,
		    (uint32_t)(st->end - s->now));
		s->starts++;
		s->backfills += st->backfill;
		mix(s, st->job);
		for (i = 0; i < st->nnodes; i++)
			mix(s, (uint64_t)st->nodes[i].node << 32 |
			    gpuset(&st->nodes[i]));
	}
	for (k = 0; k < np; k++)
		if (s->jobs[map[k]].state == 1)
			CHECK(res->reasons[k] != SCHED_REASON_NONE,
			    "a waiting job without a reason");
	if (res->has_resv) {
		j = &s->jobs[map[res->resv.pending]];
		CHECK(j->state == 1, "reservation for a job not pending");
		CHECK(res->resv.start >= s->now, "reservation in the past");
		check_place(s, &j->spec, res->resv.nnodes, res->resv.nodes,
		    false);
		/* Backfill may never push a promise later. */
		if (!s->chaos && j->promised >= 0)
			CHECK(res->resv.start <= j->promised, "job %llu "
			    "promised %lld, now reserved at %lld",
			    (unsigned long long)res->resv.job,
			    (long long)j->promised,
			    (long long)res->resv.start);
		if (j->promised < 0 || res->resv.start < j->promised)
			j->promised = res->resv.start;
		s->resvs++;
		mix(s, res->resv.job ^ (uint64_t)res->resv.start << 20);
	}
	sched_result_free(res);
}

static void
sim_chaos(struct sim *s)
{
	uint32_t i = pick(s, (uint32_t)s->c.n);

	switch (pick(s, 6)) {
	case 0:
		s->c.nodes[i].drained = !s->c.nodes[i].drained;
		break;
	case 1:
		s->c.nodes[i].up = !s->c.nodes[i].up;
		break;
	case 2:
		s->c.nodes[i].health = s->c.nodes[i].health ==
		    SCHED_HEALTH_OK ? SCHED_HEALTH_FAILED : SCHED_HEALTH_OK;
		break;
	case 3:
		s->c.gpus[i][pick(s, GPN)].health = (enum sched_health)
		    pick(s, 3);
		break;
	default:
		break;
	}
}

/* Advance to the next event: a job's real end or an arrival. */
static void
sim_step(struct sim *s)
{
	int64_t next = s->now + 1 + (int64_t)pick(s, 60);
	size_t i, n, g;
	struct simjob *j;

	for (i = 0; i < s->njobs; i++)
		if (s->jobs[i].state == 2 && s->jobs[i].real_end < next)
			next = s->jobs[i].real_end;
	s->now = next;
	for (i = 0; i < s->njobs; i++) {
		j = &s->jobs[i];
		if (j->state != 2 || j->real_end > s->now)
			continue;
		j->state = 3;
		for (n = 0; n < s->c.n; n++)
			for (g = 0; g < GPN; g++)
				if (s->c.gpus[n][g].job == j->spec.id)
					s->c.gpus[n][g].job = 0;
	}
	/* Newcomers queue behind everyone (same low priority, later
	 * submit), so they may not take a promise away. */
	if (pick(s, 3) == 0)
		sim_add_job(s, 100);
	if (s->chaos && pick(s, 2) == 0)
		sim_chaos(s);
}

static uint64_t
sim_run(uint64_t seed, bool chaos, bool big, size_t steps, struct sim *s)
{
	size_t i;

	sim_init(s, seed, chaos, big);
	for (i = 0; i < steps; i++) {
		sim_pass(s);
		sim_step(s);
	}
	cl_free(&s->c);
	return s->hash;
}

/* Thousands of passes with nodes and GPUs failing and coming back: no
 * GPU given twice, no partial gang, nothing on a bad node (checked in
 * sim_pass after every pass). */
START_TEST(test_random_invariants)
{
	struct sim *s = malloc(sizeof(*s));

	ck_assert_ptr_nonnull(s);
	sim_run(7 + (uint64_t)_i, true, _i == 2, _i == 2 ? 800 : 2500, s);
	ck_assert_uint_gt(s->starts, 200);
	ck_assert_uint_gt(s->resvs, 50);
	ck_assert_uint_gt(s->backfills, 10);
	free(s);
}
END_TEST

/* Many random workloads without failures: a job never starts later than
 * the first reservation it was given, and later passes never move it
 * back. */
START_TEST(test_backfill_never_delays)
{
	struct sim *s = malloc(sizeof(*s));
	size_t i, kept = 0;

	ck_assert_ptr_nonnull(s);
	sim_run(1000 + (uint64_t)_i, false, _i % 8 == 7, 400, s);
	for (i = 0; i < s->njobs; i++)
		if (s->jobs[i].promised >= 0 && s->jobs[i].state >= 2)
			kept++;
	ck_assert_uint_gt(kept, 3);
	ck_assert_uint_gt(s->backfills, 0);
	free(s);
}
END_TEST

START_TEST(test_deterministic)
{
	struct sim *s = malloc(sizeof(*s));
	uint64_t a, b, c;

	ck_assert_ptr_nonnull(s);
	a = sim_run(42, true, false, 600, s);
	b = sim_run(42, true, false, 600, s);
	c = sim_run(43, true, false, 600, s);
	ck_assert_uint_eq(a, b);
	ck_assert_uint_ne(a, c);
	free(s);
}
END_TEST

static Suite *
sched_suite(void)
{
	Suite *s = suite_create("sched");
	TCase *tc = tcase_create("policy");
	TCase *tr = tcase_create("random");

	tcase_add_test(tc, test_queue_order);
	tcase_add_test(tc, test_one_leaf);
	tcase_add_test(tc, test_fewest_switches);
	tcase_add_test(tc, test_topology_required);
	tcase_add_test(tc, test_preferred_level);
	tcase_add_test(tc, test_nvlink_quad);
	tcase_add_test(tc, test_partly_used);
	tcase_add_test(tc, test_gpu_type);
	tcase_add_test(tc, test_never_bad_nodes);
	tcase_add_test(tc, test_bad_constraints);
	tcase_add_test(tc, test_elastic);
	tcase_add_test(tc, test_backfill);
	tcase_add_test(tc, test_backfill_cap);
	tcase_add_test(tc, test_unlisted);
	tcase_add_test(tc, test_big_leaf);
	suite_add_tcase(s, tc);
	tcase_add_loop_test(tr, test_random_invariants, 0, 3);
	tcase_add_loop_test(tr, test_backfill_never_delays, 0, 40);
	tcase_add_test(tr, test_deterministic);
	suite_add_tcase(s, tr);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(sched_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
