/* The scheduler core's node constraints (sched.h): the node filter of
 * --nodelist / --exclude (starts, reasons, the reservation, restarts),
 * CPU-only jobs (no GPU, shared nodes, never blocking GPU jobs) and
 * exclusive jobs (whole nodes, alone). */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check_sched.h"

static const char *topo2 =
    "SwitchName=leaf0 Nodes=n[000-003]\n"
    "SwitchName=leaf1 Nodes=n[004-007]\n"
    "SwitchName=spine0 Switches=leaf[0-1]\n";

/* Only the allowed nodes are used, though others are free and better. */
START_TEST(test_filter_only_allowed)
{
	struct cl c;
	uint8_t ok[8] = { 0, 0, 0, 0, 0, 1, 0, 1 };
	struct sched_job j[2];
	struct sched_result *res;
	const struct sched_start *st;

	cl_init(&c, 8, topo2);
	j[0] = job(1, 1, 8);
	j[0].node_ok = ok;
	j[1] = job(2, 2, 2);
	j[1].node_ok = ok;
	res = run(&c, NULL, 0, j, 2, 0);
	ck_assert_ptr_nonnull(st = started(res, 1));
	ck_assert(nodeset(st->nodes, st->nnodes) == (1u << 5) ||
	    nodeset(st->nodes, st->nnodes) == (1u << 7));
	/* Job 2 needs both allowed nodes: node 5 or 7 has 8 busy GPUs. */
	ck_assert_ptr_null(started(res, 2));
	ck_assert_int_eq(res->reasons[1], SCHED_REASON_RESOURCES);
	sched_result_free(res);
	/* Alone, the 2-node gang is exactly the allowed nodes. */
	res = run(&c, NULL, 0, &j[1], 1, 0);
	ck_assert_ptr_nonnull(st = started(res, 2));
	ck_assert_uint_eq(nodeset(st->nodes, st->nnodes), 0xa0);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* A filter leaving fewer nodes than the gang: BadConstraints, and the
 * job blocks nothing. A filter that leaves only busy nodes: Resources,
 * with a reservation on allowed nodes only. */
START_TEST(test_filter_reasons)
{
	struct cl c;
	uint8_t ok[4] = { 1, 1, 0, 0 };
	struct sched_job j[2];
	struct sched_running r[2];
	struct sched_result *res;
	uint32_t k;

	cl_init(&c, 4, NULL);
	j[0] = job(1, 3, 8);
	j[0].node_ok = ok;
	j[1] = job(2, 1, 8);
	res = run(&c, NULL, 0, j, 2, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_BAD_CONSTRAINTS);
	ck_assert_ptr_nonnull(started(res, 2));
	sched_result_free(res);
	/* Nodes 0 and 1 busy until 50 and 90; 2 and 3 free. */
	busy(&c, 0, 0xff, 100);
	busy(&c, 1, 0xff, 101);
	memset(r, 0, sizeof(r));
	r[0].id = 100;
	r[0].end = 50;
	r[1].id = 101;
	r[1].end = 90;
	j[0] = job(1, 2, 4);
	j[0].node_ok = ok;
	res = run(&c, r, 2, j, 1, 0);
	ck_assert_ptr_null(started(res, 1));
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_RESOURCES);
	ck_assert(res->has_resv);
	ck_assert_int_eq(res->resv.start, 90);
	for (k = 0; k < res->resv.nnodes; k++)
		ck_assert_uint_lt(res->resv.nodes[k].node, 2);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* The cheap reason of a job that is not tried counts allowed nodes
 * only: free nodes outside its filter do not make it Priority. */
START_TEST(test_filter_cheap_reason)
{
	struct cl c;
	uint8_t ok[4] = { 1, 0, 0, 0 };
	struct sched_job j[3];
	struct sched_input in;
	struct sched_result *res;

	cl_init(&c, 4, NULL);
	busy(&c, 0, 0xff, 100);
	busy(&c, 1, 0xff, 100);
	j[0] = job(1, 4, 8);	/* blocked: waits for node 0 and 1 */
	j[1] = job(2, 1, 8);	/* would fit node 2 or 3 */
	j[2] = job(3, 1, 8);
	j[2].node_ok = ok;	/* node 0 only: busy */
	memset(&in, 0, sizeof(in));
	in.nodes = c.nodes;
	in.nnodes = c.n;
	in.pending = j;
	in.npending = 3;
	in.config.no_backfill = true;
	ck_assert_ptr_nonnull(res = sched_run(&in));
	ck_assert_int_eq(res->reasons[1], SCHED_REASON_PRIORITY);
	ck_assert_int_eq(res->reasons[2], SCHED_REASON_RESOURCES);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* A restart keeps none of its previous nodes that the filter leaves
 * out, though they are free. */
START_TEST(test_filter_restart)
{
	struct cl c;
	uint8_t ok[4] = { 0, 1, 1, 1 };
	uint32_t prev[2] = { 0, 1 };
	struct sched_job j;
	struct sched_result *res;
	const struct sched_start *st;

	cl_init(&c, 4, NULL);
	j = job(1, 2, 8);
	j.restarting = true;
	j.prev_nodes = prev;
	j.nprev = 2;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(st = started(res, 1));
	ck_assert_uint_eq(nodeset(st->nodes, st->nnodes), 0x3);
	sched_result_free(res);
	j.node_ok = ok;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(st = started(res, 1));
	ck_assert_uint_eq(st->nodes[1].node, 1);	/* kept at rank 1 */
	ck_assert(!(nodeset(st->nodes, st->nnodes) & 1));
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* CPU-only jobs run where every GPU is busy, hold no GPU, share a node,
 * and run on a node without GPUs. */
START_TEST(test_cpu_only)
{
	struct cl c;
	struct sched_job j[3];
	struct sched_result *res;
	const struct sched_start *st;
	size_t k;

	cl_init(&c, 2, NULL);
	busy(&c, 0, 0xff, 100);
	busy(&c, 1, 0xff, 101);
	for (k = 0; k < 3; k++) {
		j[k] = job(k + 1, 1, 0);
		j[k].cpu_only = true;
	}
	j[2].nodes_min = j[2].nodes_max = 2;
	res = run(&c, NULL, 0, j, 3, 0);
	ck_assert_uint_eq(res->nstarts, 3);
	for (k = 0; k < 3; k++) {
		ck_assert_ptr_nonnull(st = started(res, k + 1));
		ck_assert_uint_eq(st->nodes[0].ngpus, 0);
	}
	ck_assert_uint_eq(nodeset(started(res, 3)->nodes, 2), 0x3);
	sched_result_free(res);
	/* Down or drained: not used; a node without GPUs is. */
	c.nodes[0].up = false;
	c.nodes[1].ngpus = 0;
	res = run(&c, NULL, 0, j, 1, 0);
	ck_assert_ptr_nonnull(st = started(res, 1));
	ck_assert_uint_eq(st->nodes[0].node, 1);
	sched_result_free(res);
	c.nodes[1].drained = true;
	res = run(&c, NULL, 0, j, 1, 0);
	ck_assert_ptr_null(started(res, 1));
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_RESOURCES);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* A CPU-only job blocks no GPU job, a whole-node one included, in the
 * same pass or from an earlier one (sched_node.cpu_jobs); it prefers
 * the node with fewer free GPUs. */
START_TEST(test_cpu_never_blocks_gpu)
{
	struct cl c;
	struct sched_job j[2];
	struct sched_result *res;
	const struct sched_start *st;

	cl_init(&c, 2, NULL);
	j[0] = job(1, 1, 0);
	j[0].cpu_only = true;
	j[1] = job(2, 2, 0);	/* whole nodes */
	res = run(&c, NULL, 0, j, 2, 0);
	ck_assert_ptr_nonnull(started(res, 1));
	ck_assert_ptr_nonnull(st = started(res, 2));
	ck_assert_uint_eq(st->nodes[0].ngpus, 8);
	sched_result_free(res);
	c.nodes[0].cpu_jobs = 3;
	c.nodes[1].cpu_jobs = 1;
	res = run(&c, NULL, 0, &j[1], 1, 0);
	ck_assert_ptr_nonnull(started(res, 2));
	sched_result_free(res);
	cl_free(&c);
	/* Fewest free GPUs first: node 1 has 6. */
	cl_init(&c, 2, NULL);
	busy(&c, 1, 0x3, 100);
	res = run(&c, NULL, 0, j, 1, 0);
	ck_assert_ptr_nonnull(st = started(res, 1));
	ck_assert_uint_eq(st->nodes[0].node, 1);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* An exclusive job takes whole nodes (every GPU, however few it asks),
 * never where a CPU-only job runs; nothing else joins it. */
START_TEST(test_exclusive)
{
	struct cl c;
	struct sched_job j[3];
	struct sched_result *res;
	const struct sched_start *st;

	cl_init(&c, 2, NULL);
	c.nodes[0].cpu_jobs = 1;
	j[0] = job(1, 1, 2);
	j[0].exclusive = true;
	res = run(&c, NULL, 0, j, 1, 0);
	ck_assert_ptr_nonnull(st = started(res, 1));
	ck_assert_uint_eq(st->nodes[0].node, 1);
	ck_assert_uint_eq(st->nodes[0].ngpus, 8);
	sched_result_free(res);
	/* Every node runs a CPU-only job: it waits. */
	c.nodes[1].cpu_jobs = 2;
	res = run(&c, NULL, 0, j, 1, 0);
	ck_assert_ptr_null(started(res, 1));
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_RESOURCES);
	sched_result_free(res);
	/* A node with one GPU busy is not whole. */
	c.nodes[0].cpu_jobs = c.nodes[1].cpu_jobs = 0;
	busy(&c, 0, 0x1, 100);
	busy(&c, 1, 0x1, 101);
	res = run(&c, NULL, 0, j, 1, 0);
	ck_assert_ptr_null(started(res, 1));
	sched_result_free(res);
	cl_free(&c);
	/* In one pass, on one node: an exclusive job first keeps the
	 * CPU-only job and the GPU job off; a CPU-only job first keeps the
	 * exclusive job off. */
	cl_init(&c, 1, NULL);
	j[0] = job(1, 1, 0);
	j[0].exclusive = true;
	j[1] = job(2, 1, 0);
	j[1].cpu_only = true;
	j[2] = job(3, 1, 1);
	res = run(&c, NULL, 0, j, 3, 0);
	ck_assert_uint_eq(res->nstarts, 1);
	ck_assert_ptr_nonnull(started(res, 1));
	ck_assert_int_eq(res->reasons[1], SCHED_REASON_RESOURCES);
	sched_result_free(res);
	j[0].submit = 10;
	res = run(&c, NULL, 0, j, 3, 0);
	ck_assert_ptr_nonnull(started(res, 2));
	ck_assert_ptr_nonnull(started(res, 3));
	ck_assert_ptr_null(started(res, 1));
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* A node an exclusive job holds (sched_node.exclusive) takes no
 * CPU-only job, even with GPUs nobody holds; an exclusive CPU-only job
 * gets no GPU but keeps GPU jobs off its node in the same pass. */
START_TEST(test_exclusive_held)
{
	struct cl c;
	struct sched_job j[2];
	struct sched_result *res;
	const struct sched_start *st;

	cl_init(&c, 2, NULL);
	c.nodes[0].exclusive = true;
	j[0] = job(1, 1, 0);
	j[0].cpu_only = true;
	j[1] = job(2, 1, 1);
	c.nodes[1].up = false;
	res = run(&c, NULL, 0, j, 2, 0);
	ck_assert_uint_eq(res->nstarts, 0);
	sched_result_free(res);
	c.nodes[0].exclusive = false;
	j[0].exclusive = true;
	res = run(&c, NULL, 0, j, 2, 0);
	ck_assert_ptr_nonnull(st = started(res, 1));
	ck_assert_uint_eq(st->nodes[0].ngpus, 0);
	ck_assert_ptr_null(started(res, 2));
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* An exclusive job asks nodes with at least gpus_per_node GPUs; the
 * filter and the cluster's nodes decide BadConstraints. */
START_TEST(test_exclusive_bad)
{
	struct cl c;
	struct sched_job j;
	struct sched_result *res;

	cl_init(&c, 2, NULL);
	j = job(1, 1, 16);
	j.exclusive = true;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_BAD_CONSTRAINTS);
	sched_result_free(res);
	j = job(1, 3, 0);
	j.cpu_only = true;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_BAD_CONSTRAINTS);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

static uint64_t
xs(uint64_t *r)
{
	*r ^= *r << 13;
	*r ^= *r >> 7;
	*r ^= *r << 17;
	return *r;
}

/* A filter acts as if the nodes it leaves out were down: for random
 * filters (short lists and short exclusions, both ways of counting),
 * random busy GPUs and jobs, the same start on the same nodes and GPUs.
 * The reasons differ (a down node may come back), so only starts are
 * compared. */
START_TEST(test_filter_as_down)
{
	static const char *topo =
	    "SwitchName=leaf0 Nodes=n[000-019]\n"
	    "SwitchName=leaf1 Nodes=n[020-039]\n"
	    "SwitchName=spine0 Switches=leaf[0-1]\n";
	struct cl c, d;
	uint8_t ok[40];
	uint64_t rng = 88172645463325252ULL;
	struct sched_job j;
	struct sched_result *a, *b;
	size_t i, k, it;

	for (it = 0; it < 400; it++) {
		cl_init(&c, 40, topo);
		cl_init(&d, 40, topo);
		for (i = 0; i < 40; i++) {
			unsigned m = (unsigned)(xs(&rng) & 0xff);

			m &= (unsigned)(xs(&rng) & 0xff);

			busy(&c, i, m, 1000 + i);
			busy(&d, i, m, 1000 + i);
			/* Half the time most nodes out, else a few. */
			ok[i] = it % 2 == 0 ? xs(&rng) % 5 == 0 : xs(&rng) % 6 != 0;
			d.nodes[i].up = ok[i] != 0;
		}
		j = job(1, 1 + (uint32_t)(xs(&rng) % 4), (uint32_t)(xs(&rng) % 9));
		if (xs(&rng) % 3 == 0) {
			j.topo_mode = SCHED_TOPO_REQUIRED;
			j.topo_level = "leaf";
		}
		j.node_ok = ok;
		a = run(&c, NULL, 0, &j, 1, 0);
		j.node_ok = NULL;
		b = run(&d, NULL, 0, &j, 1, 0);
		CHECK(a->nstarts == b->nstarts, "iteration %zu: %zu vs %zu "
		    "starts", it, a->nstarts, b->nstarts);
		if (a->nstarts == 1) {
			CHECK(a->starts[0].nnodes == b->starts[0].nnodes,
			    "iteration %zu: sizes", it);
			for (k = 0; k < a->starts[0].nnodes; k++) {
				CHECK(a->starts[0].nodes[k].node ==
				    b->starts[0].nodes[k].node,
				    "iteration %zu: rank %zu", it, k);
				CHECK(gpuset(&a->starts[0].nodes[k]) ==
				    gpuset(&b->starts[0].nodes[k]),
				    "iteration %zu: GPUs", it);
			}
		}
		sched_result_free(a);
		sched_result_free(b);
		cl_free(&c);
		cl_free(&d);
	}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("sched_nodes");
	TCase *tc = tcase_create("nodes");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_filter_only_allowed);
	tcase_add_test(tc, test_filter_reasons);
	tcase_add_test(tc, test_filter_cheap_reason);
	tcase_add_test(tc, test_filter_restart);
	tcase_add_test(tc, test_cpu_only);
	tcase_add_test(tc, test_cpu_never_blocks_gpu);
	tcase_add_test(tc, test_exclusive);
	tcase_add_test(tc, test_exclusive_held);
	tcase_add_test(tc, test_exclusive_bad);
	tcase_add_test(tc, test_filter_as_down);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
