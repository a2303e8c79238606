/* The scheduler core's blocks (sched.h, "Blocks"): --segment N keeps
 * each segment of N consecutive ranks inside one block, --topology block
 * the whole gang, --topology-prefer block tries; other jobs go to the
 * best-fit block, then to as few blocks as possible, preferring blocks
 * under one switch; the reservation, restarts and preemption keep the
 * rules. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check_sched.h"

/* Three blocks of four nodes; the leaves do not follow the blocks, so
 * the tree alone would place differently. */
static const char *topo3 =
    "SwitchName=leaf0 Nodes=n[000-005]\n"
    "SwitchName=leaf1 Nodes=n[006-011]\n"
    "SwitchName=spine0 Switches=leaf[0-1]\n"
    "BlockName=b0 Nodes=n[000-003]\n"
    "BlockName=b1 Nodes=n[004-007]\n"
    "BlockName=b2 Nodes=n[008-011]\n";

static unsigned
blk(uint32_t node)
{
	return node / 4;
}

/* Each run of seg consecutive ranks sits in one block. */
static void
assert_segments(const struct sched_start *st, uint32_t seg)
{
	uint32_t k;

	for (k = 0; k < st->nnodes; k++)
		ck_assert_msg(blk(st->nodes[k].node) ==
		    blk(st->nodes[k - k % seg].node), "rank %u (node %u) is "
		    "not in the block of rank %u (node %u)", k,
		    st->nodes[k].node, k - k % seg,
		    st->nodes[k - k % seg].node);
}

START_TEST(test_segments_in_blocks)
{
	struct cl c;
	struct sched_job j;
	struct sched_result *res;
	const struct sched_start *st;

	cl_init(&c, 12, topo3);
	/* Free nodes per block: 3, 2, 3: no block holds 4. */
	busy(&c, 0, 0xff, 90);
	busy(&c, 4, 0xff, 91);
	busy(&c, 5, 0xff, 91);
	busy(&c, 8, 0xff, 92);
	j = job(1, 4, 8);
	j.segment = 2;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(st = started(res, 1));
	ck_assert_uint_eq(st->nnodes, 4);
	assert_segments(st, 2);
	/* The aggregated size 8 (b0 + b1) holds the two segments: that
	 * group, not the whole cluster. */
	ck_assert_uint_eq(nodeset(st->nodes, st->nnodes) & ~0xffu, 0);
	sched_result_free(res);
	/* Segments of 3 fit only b0 and b2. */
	j = job(2, 6, 8);
	j.segment = 3;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(st = started(res, 2));
	assert_segments(st, 3);
	ck_assert_uint_eq(nodeset(st->nodes, st->nnodes), 0x0e0e);
	sched_result_free(res);
	/* With n009 taken too only b0 holds a segment of 3: seven nodes
	 * are free, but not two segments. */
	busy(&c, 9, 0xff, 92);
	j = job(3, 6, 8);
	j.segment = 3;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_null(started(res, 3));
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_TOPOLOGY);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_one_block_best_fit)
{
	struct cl c;
	struct sched_job j[3];
	struct sched_result *res;
	const struct sched_start *st;

	cl_init(&c, 12, topo3);
	/* Free nodes per block: b0 3, b1 4, b2 2. */
	busy(&c, 0, 0xff, 90);
	busy(&c, 8, 0xff, 92);
	busy(&c, 9, 0xff, 92);
	j[0] = job(1, 2, 8);
	res = run(&c, NULL, 0, j, 1, 0);
	ck_assert_ptr_nonnull(st = started(res, 1));
	ck_assert_uint_eq(nodeset(st->nodes, st->nnodes), 0xc00);
	sched_result_free(res);
	j[0] = job(2, 3, 8);
	res = run(&c, NULL, 0, j, 1, 0);
	ck_assert_ptr_nonnull(st = started(res, 2));
	ck_assert_uint_eq(nodeset(st->nodes, st->nnodes), 0x00e);
	sched_result_free(res);
	/* In one pass: the 3-node gang takes b0, the 4-node one b1 whole,
	 * the 2-node one b2. */
	j[0] = job(3, 3, 8);
	j[1] = job(4, 4, 8);
	j[1].topo_mode = SCHED_TOPO_REQUIRED;
	j[1].topo_level = "block";
	j[2] = job(5, 2, 8);
	res = run(&c, NULL, 0, j, 3, 0);
	ck_assert_ptr_nonnull(st = started(res, 3));
	ck_assert_uint_eq(nodeset(st->nodes, st->nnodes), 0x00e);
	ck_assert_ptr_nonnull(st = started(res, 4));
	ck_assert_uint_eq(nodeset(st->nodes, st->nnodes), 0x0f0);
	ck_assert_ptr_nonnull(st = started(res, 5));
	ck_assert_uint_eq(nodeset(st->nodes, st->nnodes), 0xc00);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_required_vs_prefer)
{
	struct cl c;
	struct sched_job j[3];
	struct sched_result *res;
	const struct sched_start *st;

	cl_init(&c, 12, topo3);
	/* Three free nodes in each block. */
	busy(&c, 0, 0xff, 90);
	busy(&c, 4, 0xff, 91);
	busy(&c, 8, 0xff, 92);
	j[0] = job(1, 4, 8);
	j[0].topo_mode = SCHED_TOPO_REQUIRED;
	j[0].topo_level = "block";
	res = run(&c, NULL, 0, j, 1, 0);
	ck_assert_ptr_null(started(res, 1));
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_TOPOLOGY);
	sched_result_free(res);
	j[0].topo_mode = SCHED_TOPO_PREFERRED;
	res = run(&c, NULL, 0, j, 1, 0);
	ck_assert_ptr_nonnull(st = started(res, 1));
	ck_assert_uint_eq(st->nnodes, 4);
	sched_result_free(res);
	/* Three nodes: prefer finds one block. */
	j[0] = job(2, 3, 8);
	j[0].topo_mode = SCHED_TOPO_PREFERRED;
	j[0].topo_level = "BLOCK";
	res = run(&c, NULL, 0, j, 1, 0);
	ck_assert_ptr_nonnull(st = started(res, 2));
	ck_assert_uint_eq(blk(st->nodes[0].node), blk(st->nodes[2].node));
	sched_result_free(res);
	/* Five nodes in one block of four: never, and it holds nothing
	 * up (no reservation); a small job behind it starts. */
	j[0] = job(3, 5, 8);
	j[0].topo_mode = SCHED_TOPO_REQUIRED;
	j[0].topo_level = "block";
	j[1] = job(4, 1, 8);
	res = run(&c, NULL, 0, j, 2, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_TOPOLOGY);
	ck_assert(!res->has_resv);
	ck_assert_ptr_nonnull(started(res, 4));
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_backfill_block)
{
	struct cl c;
	struct sched_job j[3];
	struct sched_running r[2];
	struct sched_result *res;
	uint32_t k;

	cl_init(&c, 12, topo3);
	/* b0 waits for job 90 (ends at 50); b1 and b2 for 91 (1000). */
	busy(&c, 0, 0xff, 90);
	for (k = 4; k < 12; k++)
		busy(&c, k, 0xff, 91);
	memset(r, 0, sizeof(r));
	r[0].id = 90;
	r[0].end = 50;
	r[1].id = 91;
	r[1].end = 1000;
	j[0] = job(1, 4, 8);
	j[0].topo_mode = SCHED_TOPO_REQUIRED;
	j[0].topo_level = "block";
	j[0].priority = 200;
	j[1] = job(2, 1, 8);		/* ends at 100: after the start */
	j[2] = job(3, 1, 8);
	j[2].time_limit = 40;		/* ends before it */
	res = run(&c, r, 2, j, 3, 0);
	ck_assert(res->has_resv);
	ck_assert_uint_eq(res->resv.job, 1);
	ck_assert_int_eq(res->resv.start, 50);
	ck_assert_uint_eq(nodeset(res->resv.nodes, res->resv.nnodes), 0x00f);
	ck_assert_ptr_null(started(res, 2));
	ck_assert_int_eq(res->reasons[1], SCHED_REASON_PRIORITY);
	ck_assert_ptr_nonnull(started(res, 3));
	sched_result_free(res);
	/* Segments of 2 over b1 and b2 come back at 1000 only, though b0
	 * alone (4 nodes at 50) holds two segments of 2 when it frees. */
	j[0] = job(4, 6, 8);
	j[0].segment = 2;
	res = run(&c, r, 2, j, 1, 0);
	ck_assert(res->has_resv);
	ck_assert_int_eq(res->resv.start, 1000);
	sched_result_free(res);
	j[0] = job(5, 4, 8);
	j[0].segment = 2;
	res = run(&c, r, 2, j, 1, 0);
	ck_assert(res->has_resv);
	ck_assert_int_eq(res->resv.start, 50);
	ck_assert_uint_eq(nodeset(res->resv.nodes, res->resv.nnodes), 0x00f);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_restart_segment)
{
	struct cl c;
	struct sched_job j;
	struct sched_result *res;
	const struct sched_start *st;
	uint32_t prev[4] = { 0, 1, 4, 5 };

	cl_init(&c, 12, topo3);
	busy(&c, 6, 0xff, 91);
	busy(&c, 7, 0xff, 91);
	/* Node 1 is gone: the replacement in its block (n002/n003, also
	 * its leaf) keeps the segments; the other nodes stay at their
	 * ranks. */
	c.nodes[1].up = false;
	j = job(1, 4, 8);
	j.segment = 2;
	j.restarting = true;
	j.prev_nodes = prev;
	j.nprev = 4;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(st = started(res, 1));
	assert_segments(st, 2);
	ck_assert_uint_eq(st->nodes[0].node, 0);
	ck_assert_uint_eq(st->nodes[2].node, 4);
	ck_assert_uint_eq(st->nodes[3].node, 5);
	sched_result_free(res);
	/* Node 5 is gone: its leaf's replacement (n002) would put rank 3
	 * in b0 away from rank 2 in b1: placed afresh, segments whole. */
	c.nodes[1].up = true;
	c.nodes[5].up = false;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(st = started(res, 1));
	assert_segments(st, 2);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_segment_refused)
{
	struct cl c;
	struct sched_job j[2];
	struct sched_result *res;

	cl_init(&c, 12, topo3);
	j[0] = job(1, 4, 8);
	j[0].segment = 3;		/* 4 is no multiple of 3 */
	j[1] = job(2, 8, 8);
	j[1].segment = 8;		/* no block of 8 */
	res = run(&c, NULL, 0, j, 2, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_BAD_CONSTRAINTS);
	ck_assert_int_eq(res->reasons[1], SCHED_REASON_TOPOLOGY);
	ck_assert(!res->has_resv);
	sched_result_free(res);
	j[0] = job(3, 4, 8);
	j[0].segment = 2;
	j[0].topo_mode = SCHED_TOPO_REQUIRED;
	j[0].topo_level = "leaf";
	res = run(&c, NULL, 0, j, 1, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_BAD_CONSTRAINTS);
	sched_result_free(res);
	cl_free(&c);
	/* No blocks: a segment can never be met, "block" is no level. */
	cl_init(&c, 4, "SwitchName=l0 Nodes=n[000-003]\n");
	j[0] = job(4, 2, 8);
	j[0].segment = 2;
	j[1] = job(5, 2, 8);
	j[1].topo_mode = SCHED_TOPO_REQUIRED;
	j[1].topo_level = "block";
	res = run(&c, NULL, 0, j, 2, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_TOPOLOGY);
	ck_assert_int_eq(res->reasons[1], SCHED_REASON_TOPOLOGY);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* Blocks under one leaf go together before blocks that share only the
 * spine. */
START_TEST(test_blocks_under_switch)
{
	static const char *t =
	    "SwitchName=la Nodes=n[000-001],n[004-005]\n"
	    "SwitchName=lb Nodes=n[002-003],n[006-007]\n"
	    "SwitchName=sp Switches=la,lb\n"
	    "BlockName=b0 Nodes=n[000-001]\n"
	    "BlockName=b1 Nodes=n[002-003]\n"
	    "BlockName=b2 Nodes=n[004-005]\n"
	    "BlockName=b3 Nodes=n[006-007]\n"
	    "BlockSizes=2\n";
	struct cl c;
	struct sched_job j;
	struct sched_result *res;
	const struct sched_start *st;

	cl_init(&c, 8, t);
	j = job(1, 4, 8);
	j.segment = 2;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(st = started(res, 1));
	ck_assert_uint_eq(nodeset(st->nodes, st->nnodes), 0x33);
	sched_result_free(res);
	/* A plain 4-node gang, too. */
	j = job(2, 4, 8);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(st = started(res, 2));
	ck_assert_uint_eq(nodeset(st->nodes, st->nnodes), 0x33);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* Leaves that are blocks (the leaf keeps its nodes) next to one with a
 * block and nodes in none (split into pieces). */
START_TEST(test_leaf_blocks)
{
	static const char *t =
	    "SwitchName=l0 Nodes=n[000-003]\n"
	    "SwitchName=l1 Nodes=n[004-007]\n"
	    "SwitchName=l2 Nodes=n[008-011]\n"
	    "SwitchName=sp Switches=l[0-2]\n"
	    "BlockName=b0 Nodes=n[000-003]\n"
	    "BlockName=b1 Nodes=n[004-007]\n"
	    "BlockName=b2 Nodes=n[008-009]\n";
	struct cl c;
	struct sched_job j[4];
	struct sched_result *res;
	const struct sched_start *st;
	uint32_t k;

	cl_init(&c, 12, t);
	busy(&c, 0, 0xff, 90);
	/* Free: b0 3, b1 4, b2 2, and n010-011 in no block. */
	j[0] = job(1, 2, 8);
	j[1] = job(2, 3, 8);
	j[2] = job(3, 4, 8);
	j[2].topo_mode = SCHED_TOPO_REQUIRED;
	j[2].topo_level = "block";
	res = run(&c, NULL, 0, j, 3, 0);
	ck_assert_ptr_nonnull(st = started(res, 1));
	ck_assert_uint_eq(nodeset(st->nodes, st->nnodes), 0x300);
	ck_assert_ptr_nonnull(st = started(res, 2));
	ck_assert_uint_eq(nodeset(st->nodes, st->nnodes), 0x00e);
	ck_assert_ptr_nonnull(st = started(res, 3));
	ck_assert_uint_eq(nodeset(st->nodes, st->nnodes), 0x0f0);
	sched_result_free(res);
	/* Three segments of 2: b1 whole and one of b0 (the aggregated
	 * size 8 holds b0 and b1), ranks by block. */
	j[0] = job(4, 6, 8);
	j[0].segment = 2;
	res = run(&c, NULL, 0, j, 1, 0);
	ck_assert_ptr_nonnull(st = started(res, 4));
	ck_assert_uint_eq(nodeset(st->nodes, st->nnodes), 0x0f6);
	assert_segments(st, 2);
	sched_result_free(res);
	/* b0 and b1 full: a plain 3-node gang falls back to the tree
	 * (leaf l2, with the nodes in no block); two segments of 2 wait,
	 * though four nodes are free. */
	for (k = 1; k < 8; k++)
		busy(&c, k, 0xff, 90);
	j[0] = job(5, 3, 8);
	res = run(&c, NULL, 0, j, 1, 0);
	ck_assert_ptr_nonnull(st = started(res, 5));
	ck_assert_uint_eq(nodeset(st->nodes, st->nnodes) & ~0xf00u, 0);
	sched_result_free(res);
	j[0] = job(6, 4, 8);
	j[0].segment = 2;
	res = run(&c, NULL, 0, j, 1, 0);
	ck_assert_ptr_null(started(res, 6));
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_TOPOLOGY);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* Preemption frees one whole block for a --topology block job: not the
 * two jobs of least lost work, which sit in different blocks. */
START_TEST(test_preempt_block)
{
	static const char *t =
	    "BlockName=b0 Nodes=n[000-001]\n"
	    "BlockName=b1 Nodes=n[002-003]\n";
	struct cl c;
	struct sched_queue q[1];
	struct sched_running r[4];
	struct sched_job j;
	struct sched_input in;
	struct sched_result *res;
	const struct sched_preemption *p;
	static const uint64_t ids[4] = { 101, 103, 102, 104 };
	static const int64_t lost[4] = { 10, 500, 100, 600 };
	uint32_t k;

	cl_init(&c, 4, t);
	q[0] = queue_def(-1, SCHED_UNLIMITED);
	q[0].preempt = SCHED_PREEMPT_LOWER;
	for (k = 0; k < 4; k++) {
		busy(&c, k, 0xff, ids[k]);
		r[k] = running(ids[k], 0, 50, 1000);
		r[k].lost = lost[k];
	}
	j = job(1, 2, 8);
	j.topo_mode = SCHED_TOPO_REQUIRED;
	j.topo_level = "block";
	in = qinput(&c, r, 4, &j, 1, q, 1, 0);
	res = qrun(&in);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_PREEMPTING);
	ck_assert_ptr_nonnull(p = preempted(res, 1));
	ck_assert_uint_eq(p->nvictims, 2);
	ck_assert(has_victim(p, 101) && has_victim(p, 103));
	sched_result_free(res);
	/* Without the rule: the two of least lost work. */
	j.topo_mode = SCHED_TOPO_ANY;
	in = qinput(&c, r, 4, &j, 1, q, 1, 0);
	res = qrun(&in);
	ck_assert_ptr_nonnull(p = preempted(res, 1));
	ck_assert(p->nvictims == 2 && has_victim(p, 101) &&
	    has_victim(p, 102));
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* Elastic: the largest size in whole segments. */
START_TEST(test_segment_elastic)
{
	struct cl c;
	struct sched_job j;
	struct sched_result *res;
	const struct sched_start *st;

	cl_init(&c, 12, topo3);
	busy(&c, 0, 0xff, 90);
	busy(&c, 4, 0xff, 91);
	busy(&c, 8, 0xff, 92);
	/* 9 free nodes, 3 per block: segments of 2 give 6 at most. */
	j = job(1, 2, 8);
	j.nodes_max = 8;
	j.segment = 2;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(st = started(res, 1));
	ck_assert_uint_eq(st->nnodes, 6);
	assert_segments(st, 2);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("sched_block");
	TCase *tc = tcase_create("block");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_segments_in_blocks);
	tcase_add_test(tc, test_one_block_best_fit);
	tcase_add_test(tc, test_required_vs_prefer);
	tcase_add_test(tc, test_backfill_block);
	tcase_add_test(tc, test_restart_segment);
	tcase_add_test(tc, test_segment_refused);
	tcase_add_test(tc, test_blocks_under_switch);
	tcase_add_test(tc, test_segment_elastic);
	tcase_add_test(tc, test_leaf_blocks);
	tcase_add_test(tc, test_preempt_block);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
