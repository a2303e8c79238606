/* The torus and Dragonfly+ statements (daemon/sched/topo_torus.c) and
 * placement on a torus (daemon/sched/torus.c): coordinates, refusals
 * with FILE:LINE, compact boxes, wrap-around, the best-fit position,
 * required against preferred, a reservation, and Dragonfly+ groups as
 * levels of the switch tree. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check_sched.h"

static struct topo *
parse(const char *text)
{
	char err[512];
	struct topo *t = topo_parse(text, strlen(text), "topo.conf", err,
	    sizeof(err));

	ck_assert_msg(t != NULL, "refused: %s", err);
	return t;
}

static void
refused(const char *text, const char *want)
{
	char err[512];
	struct topo *t = topo_parse(text, strlen(text), "topo.conf", err,
	    sizeof(err));

	ck_assert_msg(t == NULL, "accepted: %s", text);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(err, want) != NULL, "got \"%s\", want \"%s\"",
	    err, want);
}

static void
coord_is(const struct topo *t, const char *node, uint32_t x, uint32_t y,
    uint32_t z)
{
	uint32_t c[3];

	ck_assert_int_eq(topo_torus_coord(topo_torus(t), node, c), 0);
	ck_assert_msg(c[0] == x && c[1] == y && c[2] == z, "%s at %u,%u,%u",
	    node, c[0], c[1], c[2]);
}

START_TEST(test_torus_syntax)
{
	struct topo *t;
	uint32_t d[3], c[3];
	bool w[3];

	t = parse("# a torus\nTorusName=t0 Dims=2x2x3 Wrap=yes,no,yes "
	    "Nodes=n[000-009]\nNodeCoord=n010 Coord=1,0,0\n");
	ck_assert_int_eq(topo_torus_dims(topo_torus(t), d, w), 3);
	ck_assert(d[0] == 2 && d[1] == 2 && d[2] == 3);
	ck_assert(w[0] && !w[1] && w[2]);
	ck_assert_uint_eq(topo_torus_nnodes(topo_torus(t)), 11);
	/* x fastest, skipping the cell NodeCoord= took. */
	coord_is(t, "n000", 0, 0, 0);
	coord_is(t, "n010", 1, 0, 0);
	coord_is(t, "n001", 0, 1, 0);
	coord_is(t, "n002", 1, 1, 0);
	coord_is(t, "n003", 0, 0, 1);
	coord_is(t, "n009", 0, 1, 2);
	ck_assert_int_eq(topo_torus_coord(topo_torus(t), "n011", c), -1);
	ck_assert_uint_eq(topo_height(t), 0);
	topo_destroy(t);

	/* A ring; Wrap=no once for every dimension. */
	t = parse("TorusName=r Dims=8 Wrap=no Nodes=n[000-007]\n");
	ck_assert_int_eq(topo_torus_dims(topo_torus(t), d, w), 1);
	ck_assert(d[0] == 8 && d[1] == 1 && d[2] == 1 && !w[0]);
	coord_is(t, "n007", 7, 0, 0);
	topo_destroy(t);

	/* No torus at all. */
	t = parse("SwitchName=s0 Nodes=n[000-003]\n");
	ck_assert_ptr_null(topo_torus(t));
	topo_destroy(t);
}
END_TEST

START_TEST(test_torus_refused)
{
	refused("TorusName=t Dims=2x2 Nodes=n[000-004]\n",
	    "topo.conf:1: torus t: 5 nodes but Dims= holds 4");
	refused("TorusName=t Dims=2x2\nNodeCoord=a Coord=0,2\n",
	    "topo.conf:2: Coord= of a is outside Dims=");
	refused("TorusName=t Dims=2x2\nNodeCoord=a Coord=0,1\n"
	    "NodeCoord=b Coord=0,1\n", "topo.conf:3: b and a (line 2) are "
	    "both at that coordinate");
	refused("TorusName=t Dims=2x2\nNodeCoord=a Coord=0,1\n"
	    "NodeCoord=a Coord=1,1\n", "topo.conf:3: node a given twice");
	refused("TorusName=t Dims=2x2 Nodes=a,b\nNodeCoord=a Coord=1,1\n",
	    "node a given twice");
	refused("TorusName=t Dims=4 Nodes=a,b,a\n", "topo.conf:1: node a "
	    "listed twice in Nodes=");
	refused("\nNodeCoord=a Coord=0\n", "topo.conf:2: NodeCoord= without "
	    "a TorusName= line");
	refused("TorusName=t Dims=4\nTorusName=u Dims=4\n", "topo.conf:2: a "
	    "second TorusName=");
	refused("TorusName=t Dims=4x0\n", "topo.conf:1: Dims=4x0");
	refused("TorusName=t Dims=2x2x2x2\n", "Dims=2x2x2x2");
	refused("TorusName=t\n", "torus t has no Dims=");
	refused("TorusName=t Dims=4x4 Wrap=yes,no,yes\n", "Wrap=yes,no,yes");
	refused("TorusName=t Dims=4x4\nNodeCoord=a Coord=1\n",
	    "topo.conf:2: Coord= of a has 1 numbers but torus t has 2");
	refused("TorusName=t Dims=4 Speed=1\n", "unknown key \"Speed\"");
	refused("TorusName=t Dims=4 Dims=5\n", "Dims= given twice");
	refused("NodeCoord=a\nTorusName=t Dims=4\n", "topo.conf:1: "
	    "NodeCoord=a has no Coord=");
}
END_TEST

START_TEST(test_dragonfly_syntax)
{
	struct topo *t;

	t = parse("GroupName=g0 Nodes=n[000-007] NodesPerRouter=4\n"
	    "GroupName=g1 Nodes=n[008-010]\n");
	ck_assert_uint_eq(topo_nswitches(t), 5);
	ck_assert_str_eq(topo_switch_name(t, 0), "g0-r0");
	ck_assert_str_eq(topo_switch_name(t, 2), "g0");
	ck_assert_int_eq(topo_switch_parent(t, 0), 2);
	ck_assert_int_eq(topo_switch_parent(t, 1), 2);
	ck_assert_int_eq(topo_node_leaf(t, "n005"), 1);
	ck_assert_int_eq(topo_node_leaf(t, "n009"), 3);
	ck_assert_uint_eq(topo_height(t), 2);
	ck_assert_int_eq(topo_level_index(t, "router"), 0);
	ck_assert_int_eq(topo_level_index(t, "group"), 1);
	ck_assert_int_eq(topo_level_index(t, "leaf"), -1);
	topo_destroy(t);

	refused("SwitchName=s Nodes=a\nGroupName=g Nodes=b\n",
	    "topo.conf:2: GroupName= in a file with SwitchName= (line 1)");
	refused("GroupName=g Nodes=b\nSwitchName=s Nodes=a\n",
	    "topo.conf:2: SwitchName= in a file with GroupName= (line 1)");
	refused("GroupName=g Nodes=a,b\nGroupName=h Nodes=b\n",
	    "topo.conf:2: node b is already under switch g-r0");
	refused("GroupName=g\n", "topo.conf:1: group g has no Nodes=");
	refused("GroupName=g Nodes=a NodesPerRouter=0\n", "NodesPerRouter=0");
	refused("GroupName=g Nodes=a\nGroupName=g Nodes=b\n",
	    "topo.conf:2: switch g-r0 already defined");
}
END_TEST

/* Whole-node jobs (gpus 0) keep these tests about nodes. */
static void
hold(struct cl *c, size_t i, uint64_t job)
{
	busy(c, i, 0xff, job);
}

static uint32_t
coord_x(const struct cl *c, uint32_t node, int k)
{
	uint32_t co[3];

	ck_assert_int_eq(topo_torus_coord(topo_torus(c->topo),
	    c->names[node], co), 0);
	return co[k];
}

START_TEST(test_torus_compact_box)
{
	struct cl c;
	struct sched_job j = job(1, 8, 0);
	struct sched_result *res;
	const struct sched_start *s;
	uint32_t k, lo[3] = { 9, 9, 9 }, hi[3] = { 0, 0, 0 }, v;
	int d;

	cl_init(&c, 64, "TorusName=t Dims=4x4x4 Nodes=n[000-063]\n");
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nnodes, 8);
	for (k = 0; k < 8; k++)
		for (d = 0; d < 3; d++) {
			v = coord_x(&c, s->nodes[k].node, d);
			lo[d] = v < lo[d] ? v : lo[d];
			hi[d] = v > hi[d] ? v : hi[d];
		}
	/* A 2x2x2 cube (3 hops across), not a 4x2 slab, at the origin;
	 * ranks along x first. */
	for (d = 0; d < 3; d++)
		ck_assert_msg(lo[d] == 0 && hi[d] == 1, "dim %d: %u-%u", d,
		    lo[d], hi[d]);
	ck_assert_uint_eq(s->nodes[0].node, 0);
	ck_assert_uint_eq(s->nodes[1].node, 1);
	ck_assert_uint_eq(s->nodes[2].node, 4);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_torus_wrap)
{
	struct cl c;
	struct sched_job j = job(1, 4, 0);
	struct sched_result *res;
	const struct sched_start *s;
	size_t i;

	/* A ring of 8 with 2-5 busy: the free box wraps, 6,7,0,1. */
	cl_init(&c, 8, "TorusName=r Dims=8 Nodes=n[000-007]\n");
	for (i = 2; i <= 5; i++)
		hold(&c, i, 99);
	j.topo_mode = SCHED_TOPO_REQUIRED;
	j.topo_level = "torus";
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nodes[0].node, 6);
	ck_assert_uint_eq(s->nodes[1].node, 7);
	ck_assert_uint_eq(s->nodes[2].node, 0);
	ck_assert_uint_eq(s->nodes[3].node, 1);
	sched_result_free(res);
	cl_free(&c);

	/* Without wrap-around the two halves are 7 hops apart: it waits. */
	cl_init(&c, 8, "TorusName=r Dims=8 Wrap=no Nodes=n[000-007]\n");
	for (i = 2; i <= 5; i++)
		hold(&c, i, 99);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_null(started(res, 1));
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_TOPOLOGY);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_torus_best_fit)
{
	struct cl c;
	struct sched_job j = job(1, 2, 0);
	struct sched_result *res;
	const struct sched_start *s;
	size_t i;

	/* Free 0-2 and 4-5: the pair fills the hole 4-5 and leaves the
	 * three together, rather than taking the lowest pair 0-1. */
	cl_init(&c, 16, "TorusName=r Dims=16 Wrap=no Nodes=n[000-015]\n");
	hold(&c, 3, 99);
	for (i = 6; i < 16; i++)
		hold(&c, i, 99);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nodes[0].node, 4);
	ck_assert_uint_eq(s->nodes[1].node, 5);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_torus_required_preferred)
{
	struct cl c;
	struct sched_job j[2];
	struct sched_result *res;
	const struct sched_start *s;
	uint32_t x, y, z, i;

	/* A 2x2x2 cube with the odd-parity cells busy: every 2x2 face has
	 * two free nodes, so no compact box holds 4. */
	cl_init(&c, 8, "TorusName=t Dims=2x2x2 Nodes=n[000-007]\n");
	for (i = 0; i < 8; i++) {
		x = i % 2;
		y = i / 2 % 2;
		z = i / 4;
		if ((x + y + z) % 2 == 1)
			hold(&c, i, 99);
	}
	j[0] = job(1, 4, 0);
	j[0].topo_mode = SCHED_TOPO_REQUIRED;
	j[0].topo_level = "torus";
	res = run(&c, NULL, 0, j, 1, 0);
	ck_assert_ptr_null(started(res, 1));
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_TOPOLOGY);
	sched_result_free(res);
	j[0].topo_mode = SCHED_TOPO_PREFERRED;
	res = run(&c, NULL, 0, j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nnodes, 4);
	sched_result_free(res);
	/* The default on a torus: boxes first, then anywhere. */
	j[0].topo_mode = SCHED_TOPO_ANY;
	res = run(&c, NULL, 0, j, 1, 0);
	ck_assert_ptr_nonnull(started(res, 1));
	sched_result_free(res);
	cl_free(&c);

	/* --topology torus where there is none: Topology. */
	cl_init(&c, 8, NULL);
	j[0].topo_mode = SCHED_TOPO_REQUIRED;
	res = run(&c, NULL, 0, j, 1, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_TOPOLOGY);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_torus_elastic)
{
	struct cl c;
	struct sched_job j = job(1, 2, 0);
	struct sched_result *res;
	const struct sched_start *s;
	size_t i;

	/* Free 0-2 and 10 of a line of 16: four free nodes, but no box of
	 * fewer than 8 cells holds four; an elastic 2-4 gang that requires
	 * a box starts on the three. */
	cl_init(&c, 16, "TorusName=r Dims=16 Wrap=no Nodes=n[000-015]\n");
	for (i = 3; i < 16; i++)
		if (i != 10)
			hold(&c, i, 99);
	j.nodes_max = 4;
	j.topo_mode = SCHED_TOPO_REQUIRED;
	j.topo_level = "torus";
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nnodes, 3);
	ck_assert_uint_eq(nodeset(s->nodes, s->nnodes), 0x7);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_torus_reservation)
{
	struct cl c;
	struct sched_running r[2] = { { .id = 50, .end = 50 },
	    { .id = 100, .end = 100 } };
	struct sched_job j = job(1, 4, 0);
	struct sched_result *res;
	size_t i;

	/* Every third node ends at 50, the rest at 100: at 50 six nodes
	 * are free but no box of fewer than 8 cells holds 4 of them, so a
	 * required box is reserved at 100; a preferred gang at 50. */
	cl_init(&c, 16, "TorusName=r Dims=16 Wrap=no Nodes=n[000-015]\n");
	for (i = 0; i < 16; i++)
		hold(&c, i, i % 3 == 0 ? 50 : 100);
	j.topo_mode = SCHED_TOPO_REQUIRED;
	j.topo_level = "torus";
	res = run(&c, r, 2, &j, 1, 0);
	ck_assert(res->has_resv);
	ck_assert_int_eq(res->resv.start, 100);
	ck_assert_uint_eq(res->resv.nnodes, 4);
	sched_result_free(res);
	j.topo_mode = SCHED_TOPO_PREFERRED;
	res = run(&c, r, 2, &j, 1, 0);
	ck_assert(res->has_resv);
	ck_assert_int_eq(res->resv.start, 50);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_dragonfly_groups)
{
	struct cl c;
	struct sched_job j = job(1, 9, 0);
	struct sched_result *res;
	const struct sched_start *s;
	uint64_t set;
	size_t i;

	/* Free: g0 6 of 8 (3 on each router), g1 3, g2 4 (on one
	 * router). */
	cl_init(&c, 24, "GroupName=g0 Nodes=n[000-007] NodesPerRouter=4\n"
	    "GroupName=g1 Nodes=n[008-015] NodesPerRouter=4\n"
	    "GroupName=g2 Nodes=n[016-023] NodesPerRouter=4\n");
	hold(&c, 0, 99);
	hold(&c, 4, 99);
	for (i = 8; i < 13; i++)
		hold(&c, i, 99);
	for (i = 16; i < 20; i++)
		hold(&c, i, 99);
	/* 9 nodes: the fewest groups, g0 whole and the best fit for the
	 * last three (g1, 3 free) rather than g2. */
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	set = nodeset(s->nodes, s->nnodes);
	ck_assert_uint_eq(set & 0xff, 0xee);
	ck_assert_uint_eq(set & 0xff00, 0xe000);
	ck_assert_uint_eq(set & 0xff0000, 0);
	sched_result_free(res);
	/* --topology group: one group or wait. */
	j.nodes_min = j.nodes_max = 8;
	j.topo_mode = SCHED_TOPO_REQUIRED;
	j.topo_level = "group";
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_null(started(res, 1));
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_TOPOLOGY);
	sched_result_free(res);
	/* 4: the one router that holds them (a level below the group). */
	j.nodes_min = j.nodes_max = 4;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(nodeset(s->nodes, s->nnodes), 0xf00000);
	sched_result_free(res);
	/* --topology-prefer group with no room in one group spreads. */
	j.nodes_min = j.nodes_max = 8;
	j.topo_mode = SCHED_TOPO_PREFERRED;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(started(res, 1));
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* Review finding: a "no box for n, so none for more" shortcut hid a box
 * that exists: on a line of 16 with only
 * nodes 0, 1, 4, 7 and 8 up, no box of 4 to 7 cells holds 4 of them,
 * but the 9-cell box 0-8 holds 5. Job 1 (4 nodes) fails first and
 * gets no reservation (the down nodes never come back in the replay),
 * so the state is unchanged and job 2 (5 nodes) is not searched: it
 * waits, pass after pass, though it fits now. */
START_TEST(test_torus_fail_cache_hides_box)
{
	struct cl c;
	struct sched_job j[2];
	struct sched_result *res;
	size_t i;

	cl_init(&c, 16, "TorusName=r Dims=16 Wrap=no Nodes=n[000-015]\n");
	for (i = 0; i < 16; i++)
		c.nodes[i].up = i == 0 || i == 1 || i == 4 || i == 7 || i == 8;
	j[0] = job(1, 4, 8);
	j[1] = job(2, 5, 8);
	for (i = 0; i < 2; i++) {
		j[i].topo_mode = SCHED_TOPO_REQUIRED;
		j[i].topo_level = "torus";
	}
	/* Alone, job 2 starts on the five. */
	res = run(&c, NULL, 0, &j[1], 1, 0);
	ck_assert_ptr_nonnull(started(res, 2));
	sched_result_free(res);
	/* Behind job 1 it waits. */
	res = run(&c, NULL, 0, j, 2, 0);
	ck_assert_ptr_null(started(res, 1));
	ck_assert_msg(started(res, 2) != NULL, "job 2 waits: %s (job 1: %s)",
	    sched_reason_name(res->reasons[1]),
	    sched_reason_name(res->reasons[0]));
	sched_result_free(res);
	cl_free(&c);

	/* The common case: the nodes are busy, not down, and an earlier
	 * job holds the reservation; both box jobs would backfill (they
	 * end at 100, the reservation starts at 1000). */
	{
		struct sched_job k[3];
		struct sched_running r = { .id = 99, .end = 1000 };

		cl_init(&c, 16, "TorusName=r Dims=16 Wrap=no "
		    "Nodes=n[000-015]\n");
		for (i = 0; i < 16; i++)
			if (!(i == 0 || i == 1 || i == 4 || i == 7 || i == 8))
				busy(&c, i, 0xff, 99);
		k[0] = job(10, 16, 8);
		k[0].priority = 200;
		k[1] = j[0];
		k[2] = j[1];
		res = run(&c, &r, 1, &k[2], 1, 0);
		ck_assert_ptr_nonnull(started(res, 2));
		sched_result_free(res);
		res = run(&c, &r, 1, k, 3, 0);
		ck_assert(res->has_resv && res->resv.job == 10);
		ck_assert_msg(started(res, 2) != NULL, "behind a reservation, "
		    "job 2 waits: %s", sched_reason_name(res->reasons[2]));
		sched_result_free(res);
		cl_free(&c);
	}
}
END_TEST

/* Ring of 16 (no wrap), every node running a one-node preemptible job
 * of queue 1 (nominal one node, so it borrows 15); job 1 of queue 0
 * (within nominal) needs a 12-node box. With victims 0..14 gone 15
 * nodes are free and a 12-cell box holds 12: the job can preempt. The
 * doubling search tests at 1, 2, 4, 8 victims (too few), skips 9..15,
 * and the 16th candidate is skipped (queue 1 no longer borrows), so
 * the nv == nc test never runs: nothing is preempted. */
START_TEST(test_torus_preempt_last_skipped)
{
	struct cl c;
	struct sched_queue q[2];
	struct sched_running r[16];
	struct sched_job j;
	struct sched_input in;
	struct sched_result *res;
	const struct sched_preemption *p;
	size_t i;

	for (int torus = 0; torus <= 1; torus++) {
		cl_init(&c, 16, torus ? "TorusName=r Dims=16 Wrap=no "
		    "Nodes=n[000-015]\n" : NULL);
		for (i = 0; i < 16; i++) {
			busy(&c, i, 0xff, 100 + i);
			r[i] = running(100 + i, 1, 0, 1000);
			r[i].lost = (int64_t)i;
		}
		q[0] = queue_def(-1, 128);
		q[0].preempt = SCHED_PREEMPT_BORROWERS;
		q[1] = queue_def(-1, 8);
		j = job(1, 12, 8);
		j.queue = 0;
		if (torus) {
			j.topo_mode = SCHED_TOPO_REQUIRED;
			j.topo_level = "torus";
		}
		in = qinput(&c, r, 16, &j, 1, q, 2, 0);
		res = qrun(&in);
		p = preempted(res, 1);
		ck_assert_msg(p != NULL, "%s: no preemption, reason %s",
		    torus ? "torus box" : "tree",
		    sched_reason_name(res->reasons[0]));
		ck_assert_uint_eq(p->nvictims, 12);
		sched_result_free(res);
		cl_free(&c);
	}
}
END_TEST

/* Review finding: dropping unneeded victims of a required box cost a
 * box search per victim. A line of 64, every node running a one-node
 * job of a borrowing queue, least lost work scattered (stride 37): an
 * 8-node box is planned with 8 victims and a bounded number of box
 * searches (doubling, bisection, one drop of the victims off the box,
 * at most SCHED_PREEMPT_BOX_DROPS single drops), not one per victim. */
START_TEST(test_torus_preempt_searches_bounded)
{
	struct cl c;
	struct sched_queue q[2];
	struct sched_running r[64];
	struct sched_job j;
	struct sched_input in;
	struct sched_result *res;
	const struct sched_preemption *p;
	size_t i;

	cl_init(&c, 64, "TorusName=r Dims=64 Wrap=no Nodes=n[000-063]\n");
	for (i = 0; i < 64; i++) {
		busy(&c, i, 0xff, 100 + i);
		r[i] = running(100 + i, 1, 0, 1000);
		r[i].lost = (int64_t)((i * 37) % 64);
	}
	q[0] = queue_def(-1, 512);
	q[0].preempt = SCHED_PREEMPT_BORROWERS;
	q[1] = queue_def(-1, 8);
	j = job(1, 8, 8);
	j.queue = 0;
	j.topo_mode = SCHED_TOPO_REQUIRED;
	j.topo_level = "torus";
	in = qinput(&c, r, 64, &j, 1, q, 2, 0);
	res = qrun(&in);
	ck_assert_ptr_nonnull(p = preempted(res, 1));
	ck_assert_uint_eq(p->nvictims, 8);
	ck_assert_msg(res->stats.torus_searches <= 2 * 7 + 14,
	    "%zu box searches for 64 candidates",
	    res->stats.torus_searches);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* Review finding: every pending job that requires a box cost a full
 * box search, bounded only by bf_max_job_test once a reservation
 * exists. A line of 150 with every third node free: no box holds a gang
 * of 2 to 49 (the shapes are shorter than 2n), though the count does.
 * The pass stops at SCHED_TORUS_SEARCHES_MAX searches; the jobs after
 * get the cheap count's reason. */
START_TEST(test_torus_searches_budget)
{
	struct cl c;
	struct sched_job j[48];
	struct sched_result *res;
	size_t i;

	cl_init(&c, 150, "TorusName=r Dims=150 Wrap=no Nodes=n[000-149]\n");
	for (i = 0; i < 150; i++)
		if (i % 3 != 0)
			busy(&c, i, 0xff, 99);
	for (i = 0; i < 48; i++) {
		j[i] = job(1 + i, 2 + (uint32_t)i, 8);
		j[i].priority = 1000 - (int64_t)i;
		j[i].topo_mode = SCHED_TOPO_REQUIRED;
		j[i].topo_level = "torus";
	}
	res = run(&c, NULL, 0, j, 48, 0);
	ck_assert_uint_eq(res->nstarts, 0);
	ck_assert_msg(res->stats.torus_searches <= SCHED_TORUS_SEARCHES_MAX +
	    2, "%zu box searches for 48 jobs", res->stats.torus_searches);
	ck_assert_int_eq(res->reasons[47], SCHED_REASON_PRIORITY);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* Review finding: GroupName= expanded its Nodes= with a bound of its
 * own (TOPO_NODES_MAX per line), so each line of a small file cost up to
 * a million names before the file was refused. The bound is now the
 * file's running total: 600,000 + 600,000 names is refused at line 2,
 * before line 3 (malformed) is read and before any later line is
 * expanded. */
START_TEST(test_group_lines_bounded)
{
	static const char text[] =
	    "GroupName=g0 Nodes=a[0000001-0600000]\n"
	    "GroupName=g1 Nodes=b[0000001-0600000]\n"
	    "GroupName=g2 Bogus=1\n"
	    "GroupName=g3 Nodes=c[0000001-1000000]\n";
	char err[256];

	ck_assert_ptr_null(topo_parse(text, strlen(text), "big.conf", err,
	    sizeof(err)));
	ck_assert_msg(strncmp(err, "big.conf:2: more than 1000000 nodes",
	    35) == 0, "%s", err);
}
END_TEST

/* A topology with blocks and a torus (sched.h, "Torus"): a job without
 * --topology tries the blocks first, as on a topology of blocks alone
 * (an 8-node gang takes the two 4-node blocks at the ends of a line of
 * 32, not a compact box); a gang the blocks cannot hold goes into a
 * torus box, not to the tree's placement (10 nodes with 1, 3, 5, 7, 9
 * busy: the box 10-19, where the tree takes 0, 2, 4, ...);
 * --topology torus ignores the blocks. */
START_TEST(test_blocks_and_torus)
{
	static const char topo[] = "TorusName=r Dims=32 Wrap=no "
	    "Nodes=n[000-031]\nBlockName=b0 Nodes=n[000-003]\n"
	    "BlockName=b1 Nodes=n[028-031]\n";
	struct cl c;
	struct sched_job j = job(1, 8, 8);
	struct sched_result *res;
	const struct sched_start *s;
	uint64_t m;
	size_t i;

	cl_init(&c, 32, topo);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(nodeset(s->nodes, s->nnodes), 0xf000000fULL);
	sched_result_free(res);
	j.topo_mode = SCHED_TOPO_REQUIRED;
	j.topo_level = "torus";
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	m = nodeset(s->nodes, s->nnodes);
	ck_assert_int_eq(63 - __builtin_clzll(m) - __builtin_ctzll(m) + 1, 8);
	sched_result_free(res);
	cl_free(&c);

	cl_init(&c, 32, topo);
	for (i = 1; i < 10; i += 2)
		busy(&c, i, 0xff, 99);
	j = job(1, 10, 8);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(nodeset(s->nodes, s->nnodes), 0xffc00ULL);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("torus");
	TCase *tc = tcase_create("torus");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_torus_syntax);
	tcase_add_test(tc, test_torus_refused);
	tcase_add_test(tc, test_dragonfly_syntax);
	tcase_add_test(tc, test_torus_compact_box);
	tcase_add_test(tc, test_torus_wrap);
	tcase_add_test(tc, test_torus_best_fit);
	tcase_add_test(tc, test_torus_required_preferred);
	tcase_add_test(tc, test_torus_elastic);
	tcase_add_test(tc, test_torus_reservation);
	tcase_add_test(tc, test_dragonfly_groups);
	tcase_add_test(tc, test_torus_fail_cache_hides_box);
	tcase_add_test(tc, test_torus_preempt_last_skipped);
	tcase_add_test(tc, test_torus_preempt_searches_bounded);
	tcase_add_test(tc, test_torus_searches_budget);
	tcase_add_test(tc, test_group_lines_bounded);
	tcase_add_test(tc, test_blocks_and_torus);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
