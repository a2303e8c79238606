/* daemon/sched/preempt.c: which running jobs a blocked job names as
 * victims (whole gangs, least lost work first, only GPUs it can use,
 * pruned), and when it names none. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check_sched.h"

static const char two_leaves[] =
    "SwitchName=leaf0 Nodes=n[000-003]\n"
    "SwitchName=leaf1 Nodes=n[004-007]\n"
    "SwitchName=spine0 Switches=leaf[0-1]\n";

/* Four busy nodes of one LOWER queue: 101 holds nodes 0-1 (lost 500),
 * 102 node 2 (lost 100), 103 node 3 (lost 10), all at priority 50. */
struct four {
	struct cl c;
	struct sched_queue q[1];
	struct sched_running r[3];
};

static void
four_init(struct four *f)
{
	cl_init(&f->c, 4, NULL);
	busy(&f->c, 0, 0xff, 101);
	busy(&f->c, 1, 0xff, 101);
	busy(&f->c, 2, 0xff, 102);
	busy(&f->c, 3, 0xff, 103);
	f->q[0] = queue_def(-1, SCHED_UNLIMITED);
	f->q[0].preempt = SCHED_PREEMPT_LOWER;
	f->r[0] = running(101, 0, 50, 1000);
	f->r[0].lost = 500;
	f->r[1] = running(102, 0, 50, 1000);
	f->r[1].lost = 100;
	f->r[2] = running(103, 0, 50, 1000);
	f->r[2].lost = 10;
}

static struct sched_job
hjob(uint64_t id, uint32_t nodes)
{
	struct sched_job j = job(id, nodes, 0);

	j.priority = 100;
	return j;
}

static struct sched_result *
four_run(struct four *f, const struct sched_job *j, size_t nj,
    uint32_t max)
{
	struct sched_input in = qinput(&f->c, f->r, 3, j, nj, f->q, 1, 0);

	in.config.preempt_max_jobs = max;
	return qrun(&in);
}

START_TEST(test_least_lost_whole)
{
	struct four f;
	struct sched_job j[1];
	struct sched_result *res;
	const struct sched_preemption *p;

	four_init(&f);
	j[0] = hjob(1, 1);
	res = four_run(&f, j, 1, 0);
	ck_assert_uint_eq(res->nstarts, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_PREEMPTING);
	ck_assert_str_eq(sched_reason_name(res->reasons[0]), "Preempting");
	ck_assert_uint_eq(res->npreempts, 1);
	ck_assert_ptr_nonnull(p = preempted(res, 1));
	ck_assert_uint_eq(p->pending, 0);
	ck_assert_uint_eq(p->nvictims, 1);
	ck_assert(has_victim(p, 103));
	ck_assert_uint_eq(res->stats.preempt_tried, 1);
	sched_result_free(res);
	j[0] = hjob(1, 2);
	res = four_run(&f, j, 1, 0);
	ck_assert_ptr_nonnull(p = preempted(res, 1));
	ck_assert_uint_eq(p->nvictims, 2);
	ck_assert(has_victim(p, 103) && has_victim(p, 102));
	sched_result_free(res);
	/* Three nodes: 103, 102, then the gang 101 (two nodes) whole; 102
	 * is not needed then and is dropped. */
	j[0] = hjob(1, 3);
	res = four_run(&f, j, 1, 0);
	ck_assert_ptr_nonnull(p = preempted(res, 1));
	ck_assert_uint_eq(p->nvictims, 2);
	ck_assert(has_victim(p, 103) && has_victim(p, 101));
	sched_result_free(res);
	cl_free(&f.c);
}
END_TEST

/* Past its min_runtime or not: preemptible false is never a victim. */
START_TEST(test_not_preemptible)
{
	struct four f;
	struct sched_job j[1];
	struct sched_result *res;
	const struct sched_preemption *p;

	four_init(&f);
	f.r[2].preemptible = false;
	j[0] = hjob(1, 1);
	res = four_run(&f, j, 1, 0);
	ck_assert_ptr_nonnull(p = preempted(res, 1));
	ck_assert_uint_eq(p->nvictims, 1);
	ck_assert(has_victim(p, 102));
	sched_result_free(res);
	cl_free(&f.c);
}
END_TEST

/* With every candidate gone the job would still not fit: nothing. */
START_TEST(test_never_useless)
{
	struct four f;
	struct sched_job j[1];
	struct sched_result *res;

	four_init(&f);
	f.r[2].preemptible = false;
	j[0] = hjob(1, 4);
	res = four_run(&f, j, 1, 0);
	ck_assert_uint_eq(res->npreempts, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_RESOURCES);
	sched_result_free(res);
	cl_free(&f.c);
}
END_TEST

/* Two planners never share a victim; at most preempt_max_jobs plan. */
START_TEST(test_two_planners)
{
	struct four f;
	struct sched_job j[2];
	struct sched_result *res;
	const struct sched_preemption *p;

	four_init(&f);
	j[0] = hjob(1, 1);
	j[1] = hjob(2, 1);
	res = four_run(&f, j, 2, 0);
	ck_assert_uint_eq(res->npreempts, 2);
	ck_assert_ptr_nonnull(p = preempted(res, 1));
	ck_assert_uint_eq(p->nvictims, 1);
	ck_assert(has_victim(p, 103));
	ck_assert_ptr_nonnull(p = preempted(res, 2));
	ck_assert_uint_eq(p->nvictims, 1);
	ck_assert(has_victim(p, 102));
	sched_result_free(res);
	res = four_run(&f, j, 2, 1);
	ck_assert_uint_eq(res->npreempts, 1);
	ck_assert_int_eq(res->reasons[1], SCHED_REASON_RESOURCES);
	sched_result_free(res);
	/* One candidate only: the second planner finds none left. */
	f.r[1].preemptible = false;
	f.r[0].preemptible = false;
	res = four_run(&f, j, 2, 0);
	ck_assert_uint_eq(res->npreempts, 1);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_PREEMPTING);
	ck_assert_int_eq(res->reasons[1], SCHED_REASON_RESOURCES);
	sched_result_free(res);
	cl_free(&f.c);
}
END_TEST

/* A job whose victims are stopping plans nothing more. */
START_TEST(test_preempting_plans_nothing)
{
	struct four f;
	struct sched_job j[1];
	struct sched_result *res;

	four_init(&f);
	j[0] = hjob(1, 1);
	j[0].preempting = true;
	res = four_run(&f, j, 1, 0);
	ck_assert_uint_eq(res->npreempts, 0);
	ck_assert_uint_eq(res->stats.preempt_tried, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_PREEMPTING);
	ck_assert(!res->has_resv);
	sched_result_free(res);
	/* Once the GPUs are free it starts, first. */
	busy(&f.c, 3, 0xff, 0);
	res = four_run(&f, j, 1, 0);
	ck_assert_ptr_nonnull(started(res, 1));
	sched_result_free(res);
	cl_free(&f.c);
}
END_TEST

/* --topology leaf: victims in the other leaf are not chosen, even with
 * the least lost work. */
START_TEST(test_required_leaf)
{
	struct cl c;
	struct sched_queue q[1];
	struct sched_running r[8];
	struct sched_job j[1];
	struct sched_input in;
	struct sched_result *res;
	const struct sched_preemption *p;
	static const int64_t lost[8] = { 1, 1000, 1001, 1002, 2, 3, 1003,
	    1004 };
	size_t i;

	cl_init(&c, 8, two_leaves);
	q[0] = queue_def(-1, SCHED_UNLIMITED);
	q[0].preempt = SCHED_PREEMPT_LOWER;
	for (i = 0; i < 8; i++) {
		busy(&c, i, 0xff, 200 + i);
		r[i] = running(200 + i, 0, 50, 1000);
		r[i].lost = lost[i];
	}
	j[0] = hjob(1, 2);
	j[0].topo_mode = SCHED_TOPO_REQUIRED;
	j[0].topo_level = "leaf";
	in = qinput(&c, r, 8, j, 1, q, 1, 0);
	res = qrun(&in);
	ck_assert_ptr_nonnull(p = preempted(res, 1));
	ck_assert_uint_eq(p->nvictims, 2);
	ck_assert(has_victim(p, 204) && has_victim(p, 205));
	sched_result_free(res);
	/* Anywhere: the two with the least lost work. */
	j[0].topo_mode = SCHED_TOPO_ANY;
	res = qrun(&in);
	ck_assert_ptr_nonnull(p = preempted(res, 1));
	ck_assert_uint_eq(p->nvictims, 2);
	ck_assert(has_victim(p, 200) && has_victim(p, 204));
	sched_result_free(res);
	/* Only GPUs it could use: an A100 job passes over H100 nodes. */
	c.nodes[7].gpu_model = A100;
	j[0] = hjob(1, 1);
	j[0].gpu_type = "A100";
	res = qrun(&in);
	ck_assert_ptr_nonnull(p = preempted(res, 1));
	ck_assert_uint_eq(p->nvictims, 1);
	ck_assert(has_victim(p, 207));
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* LOWER: only lower-priority jobs of the same queue. */
START_TEST(test_lower_only)
{
	struct cl c;
	struct sched_queue q[2];
	struct sched_running r[3];
	struct sched_job j[1];
	struct sched_input in;
	struct sched_result *res;
	const struct sched_preemption *p;

	cl_init(&c, 3, NULL);
	q[0] = queue_def(-1, SCHED_UNLIMITED);
	q[1] = queue_def(-1, SCHED_UNLIMITED);
	q[0].preempt = q[1].preempt = SCHED_PREEMPT_LOWER;
	busy(&c, 0, 0xff, 301);
	busy(&c, 1, 0xff, 302);
	busy(&c, 2, 0xff, 303);
	r[0] = running(301, 1, 10, 1000);	/* other queue */
	r[1] = running(302, 0, 100, 1000);	/* same priority */
	r[2] = running(303, 0, 50, 1000);
	r[2].lost = 100;
	j[0] = hjob(1, 1);
	in = qinput(&c, r, 3, j, 1, q, 2, 0);
	res = qrun(&in);
	ck_assert_ptr_nonnull(p = preempted(res, 1));
	ck_assert_uint_eq(p->nvictims, 1);
	ck_assert(has_victim(p, 303));
	sched_result_free(res);
	/* NEVER: nothing. */
	q[0].preempt = SCHED_PREEMPT_NEVER;
	res = qrun(&in);
	ck_assert_uint_eq(res->npreempts, 0);
	ck_assert_uint_eq(res->stats.preempt_tried, 0);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* BORROWERS: jobs of queues beyond their nominal, and only while the
 * preemptor stays within its own. A (16) runs 8 on node 0. */
START_TEST(test_borrowers)
{
	struct cl c;
	struct sched_queue q[3];
	struct sched_running r[4];
	struct sched_job j[1];
	struct sched_input in;
	struct sched_result *res;
	const struct sched_preemption *p;
	size_t i;

	cl_init(&c, 4, NULL);
	q[0] = queue_def(-1, 16);
	q[0].preempt = SCHED_PREEMPT_BORROWERS;
	q[1] = queue_def(-1, 16);
	q[2] = queue_def(-1, 0);
	for (i = 0; i < 4; i++)
		busy(&c, i, 0xff, 400 + i);
	r[0] = running(400, 0, 100, 1000);
	r[1] = running(401, 1, 100, 1000);
	r[2] = running(402, 1, 100, 1000);
	r[3] = running(403, 1, 100, 1000);
	r[1].lost = 30;
	r[2].lost = 20;
	r[3].lost = 10;
	j[0] = job(1, 1, 8);
	in = qinput(&c, r, 4, j, 1, q, 3, 0);
	/* B uses 24 of 16: its least-lost job goes. */
	res = qrun(&in);
	ck_assert_ptr_nonnull(p = preempted(res, 1));
	ck_assert_uint_eq(p->nvictims, 1);
	ck_assert(has_victim(p, 403));
	sched_result_free(res);
	/* 16 more would take A to 24, beyond its nominal: nothing. */
	j[0] = job(1, 2, 8);
	res = qrun(&in);
	ck_assert_uint_eq(res->npreempts, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_RESOURCES);
	sched_result_free(res);
	/* B at its nominal lends nothing back; C (nominal 0) borrows. */
	j[0] = job(1, 1, 8);
	r[3].queue = 2;
	r[3].lost = 1000;
	r[1].lost = 0;
	res = qrun(&in);
	ck_assert_ptr_nonnull(p = preempted(res, 1));
	ck_assert_uint_eq(p->nvictims, 1);
	ck_assert(has_victim(p, 403));
	sched_result_free(res);
	/* A borrower is reclaimed only while it borrows: with A empty
	 * (an unlisted job holds node 0), 16 for A would take B below its
	 * nominal after the first victim; nothing is stopped. */
	busy(&c, 0, 0xff, 999);
	r[3].queue = 1;
	r[1].lost = 30;
	r[3].lost = 10;
	in = qinput(&c, r + 1, 3, j, 1, q, 3, 0);
	j[0] = job(1, 2, 8);
	res = qrun(&in);
	ck_assert_uint_eq(res->npreempts, 0);
	sched_result_free(res);
	/* One node is what B borrows: that one goes. */
	j[0] = job(1, 1, 8);
	res = qrun(&in);
	ck_assert_ptr_nonnull(p = preempted(res, 1));
	ck_assert_uint_eq(p->nvictims, 1);
	ck_assert(has_victim(p, 403));
	sched_result_free(res);
	/* LOWER alone would not touch other queues. */
	q[0].preempt = SCHED_PREEMPT_LOWER;
	res = qrun(&in);
	ck_assert_uint_eq(res->npreempts, 0);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* BORROWERS in a tree: org (16) = teamA (8) + teamB (8), and other.
 * Borrowing is judged below the lowest queue the two share, and the
 * preemptor must stay within nominal below it too. */
START_TEST(test_borrowers_nested)
{
	struct cl c;
	struct sched_queue q[4];
	struct sched_running r[4];
	struct sched_job j[1];
	struct sched_input in;
	struct sched_result *res;
	const struct sched_preemption *p;
	size_t i;

	cl_init(&c, 4, NULL);
	q[0] = queue_def(-1, 16);
	q[1] = queue_def(0, 8);
	q[1].preempt = SCHED_PREEMPT_BORROWERS;
	q[2] = queue_def(0, 8);
	q[3] = queue_def(-1, 16);
	for (i = 0; i < 4; i++)
		busy(&c, i, 0xff, 800 + i);
	r[0] = running(800, 2, 100, 1000);
	r[0].lost = 50;
	r[1] = running(801, 2, 100, 1000);
	r[1].lost = 60;
	r[2] = running(802, 3, 100, 1000);
	r[3] = running(803, 3, 100, 1000);
	j[0] = job(1, 1, 8);
	j[0].queue = 1;
	/* teamB borrows teamA's 8 inside org; other is at its nominal. */
	in = qinput(&c, r, 4, j, 1, q, 4, 0);
	res = qrun(&in);
	ck_assert_ptr_nonnull(p = preempted(res, 1));
	ck_assert_uint_eq(p->nvictims, 1);
	ck_assert(has_victim(p, 800));
	sched_result_free(res);
	/* other borrows (nominal 8), but org would pass its 16 with
	 * teamB's 16 and A's 8: other's jobs are not reclaimable. */
	q[3].nominal[0] = 8;
	res = qrun(&in);
	ck_assert_ptr_nonnull(p = preempted(res, 1));
	ck_assert(has_victim(p, 800));
	sched_result_free(res);
	/* teamB within its 8 (the other node's holder is unlisted): org
	 * stays within with A's 8, so other's borrowed GPUs come back. */
	busy(&c, 1, 0xff, 999);
	{
		struct sched_running rr[3] = { r[0], r[2], r[3] };

		in = qinput(&c, rr, 3, j, 1, q, 4, 0);
		res = qrun(&in);
		ck_assert_ptr_nonnull(p = preempted(res, 1));
		ck_assert_uint_eq(p->nvictims, 1);
		ck_assert(has_victim(p, 802) || has_victim(p, 803));
		sched_result_free(res);
	}
	/* org over its nominal by its own jobs, teamB within its 8: teamB
	 * does not borrow below org, so nothing is reclaimable. */
	{
		struct sched_running rr[4] = { r[0], r[1], r[2], r[3] };

		busy(&c, 1, 0xff, 801);
		rr[1].queue = 0;
		rr[2].queue = 0;
		rr[3].queue = 3;
		q[3].nominal[0] = 16;
		in = qinput(&c, rr, 4, j, 1, q, 4, 0);
		res = qrun(&in);
		ck_assert_uint_eq(res->npreempts, 0);
		sched_result_free(res);
	}
	cl_free(&c);
}
END_TEST

/* Over its quota with free GPUs: stopping a lower-priority job of its
 * own queue brings it under. */
START_TEST(test_quota_lower)
{
	struct cl c;
	struct sched_queue q[1];
	struct sched_running r[1];
	struct sched_job j[1];
	struct sched_input in;
	struct sched_result *res;
	const struct sched_preemption *p;

	cl_init(&c, 2, NULL);
	q[0] = queue_def(-1, 8);
	q[0].borrow_limit = 0;
	q[0].preempt = SCHED_PREEMPT_LOWER;
	busy(&c, 0, 0xff, 500);
	r[0] = running(500, 0, 50, 1000);
	j[0] = hjob(1, 1);
	in = qinput(&c, r, 1, j, 1, q, 1, 0);
	res = qrun(&in);
	ck_assert_ptr_nonnull(p = preempted(res, 1));
	ck_assert(has_victim(p, 500));
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_PREEMPTING);
	sched_result_free(res);
	r[0].priority = 100;
	res = qrun(&in);
	ck_assert_uint_eq(res->npreempts, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_QUEUE_QUOTA);
	ck_assert_uint_eq(res->quota_queue[0], 0);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* Over its quota, an A100 job stops the A100 holder, not the H100 one
 * with less lost work whose GPUs it could not use. */
START_TEST(test_quota_usable)
{
	struct cl c;
	struct sched_queue q[1];
	struct sched_running r[2];
	struct sched_job j[1];
	struct sched_input in;
	struct sched_result *res;
	const struct sched_preemption *p;

	cl_init(&c, 3, NULL);
	c.nodes[1].gpu_model = A100;
	c.nodes[2].gpu_model = A100;
	q[0] = queue_def(-1, 16);
	q[0].borrow_limit = 0;
	q[0].preempt = SCHED_PREEMPT_LOWER;
	busy(&c, 0, 0xff, 600);
	busy(&c, 1, 0xff, 601);
	r[0] = running(600, 0, 50, 1000);
	r[1] = running(601, 0, 50, 1000);
	r[1].lost = 10;
	j[0] = hjob(1, 1);
	j[0].gpu_type = "A100";
	in = qinput(&c, r, 2, j, 1, q, 1, 0);
	res = qrun(&in);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_PREEMPTING);
	ck_assert_ptr_nonnull(p = preempted(res, 1));
	ck_assert_uint_eq(p->nvictims, 1);
	ck_assert(has_victim(p, 601));
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* After the reservation, a job ending after its start frees only
 * unreserved nodes: those are the ones it may start on. */
START_TEST(test_respects_resv)
{
	struct cl c;
	struct sched_queue q[2];
	struct sched_running r[3];
	struct sched_job j[2];
	struct sched_input in;
	struct sched_result *res;
	const struct sched_preemption *p;
	size_t i;

	cl_init(&c, 3, NULL);
	q[0] = queue_def(-1, SCHED_UNLIMITED);
	q[0].preempt = SCHED_PREEMPT_LOWER;
	q[1] = queue_def(-1, SCHED_UNLIMITED);
	for (i = 0; i < 3; i++) {
		busy(&c, i, 0xff, 700 + i);
		r[i] = running(700 + i, 0, 50, i < 2 ? 1000 : 2000);
	}
	r[2].lost = 100;
	j[0] = hjob(1, 2);
	j[0].queue = 1;
	j[0].priority = 200;
	j[1] = hjob(2, 1);
	j[1].time_limit = 5000;
	in = qinput(&c, r, 3, j, 2, q, 2, 0);
	res = qrun(&in);
	ck_assert(res->has_resv);
	ck_assert_uint_eq(res->resv.job, 1);
	ck_assert_uint_eq(nodeset(res->resv.nodes, 2), 0x3);
	ck_assert_ptr_nonnull(p = preempted(res, 2));
	ck_assert_uint_eq(p->nvictims, 1);
	ck_assert(has_victim(p, 702));
	sched_result_free(res);
	/* Ending before the reservation, it may use any node. */
	j[1].time_limit = 100;
	res = qrun(&in);
	ck_assert_ptr_nonnull(p = preempted(res, 2));
	ck_assert(has_victim(p, 700));
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* Randomized: a small tree of queues with random limits and policies,
 * a busy cluster, random pending jobs. After each pass: the same input
 * gives the same result; every queue on a started job's path is within
 * its cap, and every parent (the root included) holds its children's
 * max(usage, guarantee); victims are distinct, preemptible, allowed by
 * the policy; and a lone planner starts once its victims are gone. */
#define RQ 4
#define RN 12

struct rnd_case {
	struct cl c;
	struct sched_queue q[RQ];
	struct sched_running r[RN * 2];
	size_t nr;
	struct sched_job j[10];
	size_t nj;
};

static uint64_t
xr(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static const char rnd_topo[] =
    "SwitchName=leaf0 Nodes=n[000-003]\n"
    "SwitchName=leaf1 Nodes=n[004-007]\n"
    "SwitchName=leaf2 Nodes=n[008-011]\n"
    "SwitchName=spine0 Switches=leaf[0-2]\n";

static void
rnd_case(struct rnd_case *k, uint64_t *sd)
{
	size_t i, n;
	uint32_t nom;

	cl_init(&k->c, RN, rnd_topo);
	for (i = 0; i < RQ; i++) {
		nom = (uint32_t)(xr(sd) % 49);
		k->q[i] = queue_def(i == 1 || i == 2 ? 0 : -1, nom);
		if (xr(sd) % 2)
			k->q[i].borrow_limit = (uint32_t)(xr(sd) % 17);
		if (xr(sd) % 3 == 0)
			k->q[i].lend_limit = (uint32_t)(xr(sd) % (nom + 1));
		k->q[i].preempt = (enum sched_preempt)(xr(sd) % 4);
		k->q[i].share = xr(sd) % 3;
	}
	k->nr = 0;
	for (i = 0; i < RN; i++) {
		n = xr(sd) % 4;
		if (n == 0)
			continue;
		k->r[k->nr] = running(1000 + k->nr, (uint32_t)(xr(sd) % RQ),
		    (int32_t)(xr(sd) % 3) * 50, 100 + (int64_t)(xr(sd) % 500));
		k->r[k->nr].lost = (int64_t)(xr(sd) % 5);
		k->r[k->nr].start = (int64_t)(xr(sd) % 5);
		k->r[k->nr].preemptible = xr(sd) % 4 != 0;
		busy(&k->c, i, n == 1 ? 0x0f : 0xff, k->r[k->nr].id);
		if (n == 3 && i + 1 < RN)	/* a two-node gang */
			busy(&k->c, ++i, 0xff, k->r[k->nr].id);
		k->nr++;
	}
	k->nj = 1 + xr(sd) % 8;
	for (i = 0; i < k->nj; i++) {
		static const uint32_t g[] = { 0, 2, 4, 8 };

		k->j[i] = job(i + 1, 1 + (uint32_t)(xr(sd) % 3),
		    g[xr(sd) % 4]);
		k->j[i].queue = (uint32_t)(xr(sd) % RQ);
		k->j[i].priority = (int32_t)(xr(sd) % 3) * 50;
		if (xr(sd) % 4 == 0) {
			k->j[i].topo_mode = SCHED_TOPO_REQUIRED;
			k->j[i].topo_level = "leaf";
		}
	}
}

static uint64_t
nom_of(const struct sched_queue *q, uint64_t x)
{
	(void)q;
	return x == SCHED_UNLIMITED ? UINT64_MAX : x;
}

/* Final usage per queue (subtree), flavor 0, from the GPUs of the
 * listed running jobs and the starts. */
static void
usage(const struct rnd_case *k, const struct sched_result *res,
    uint64_t *u, uint64_t *own)
{
	size_t i, g, x, q;

	memset(u, 0, RQ * sizeof(*u));
	memset(own, 0, RQ * sizeof(*own));
	for (i = 0; i < k->c.n; i++)
		for (g = 0; g < GPN; g++)
			for (x = 0; x < k->nr; x++)
				if (k->c.gpus[i][g].job == k->r[x].id)
					own[k->r[x].queue]++;
	for (x = 0; x < res->nstarts; x++)
		for (i = 0; i < res->starts[x].nnodes; i++)
			own[k->j[res->starts[x].pending].queue] +=
			    res->starts[x].nodes[i].ngpus;
	for (q = 0; q < RQ; q++)
		u[q] = own[q];
	u[0] += own[1] + own[2];
}

static void
check_case(const struct rnd_case *k, const struct sched_result *res,
    uint32_t max)
{
	uint64_t u[RQ], own[RQ], cap, gq[RQ], sum;
	size_t x, v, w, y, q;
	const struct sched_running *vr;
	const struct sched_job *pj;
	bool on_path[RQ] = { false };

	usage(k, res, u, own);
	for (q = 0; q < RQ; q++) {
		uint64_t n = nom_of(&k->q[q], k->q[q].nominal[0]);

		gq[q] = k->q[q].lend_limit == SCHED_UNLIMITED ? 0 :
		    n - k->q[q].lend_limit;
	}
	for (x = 0; x < res->nstarts; x++) {
		q = k->j[res->starts[x].pending].queue;
		on_path[q] = true;
		if (q == 1 || q == 2)
			on_path[0] = true;
	}
	for (q = 0; q < RQ; q++) {
		if (!on_path[q])
			continue;
		cap = k->q[q].borrow_limit == SCHED_UNLIMITED ? UINT64_MAX :
		    (uint64_t)k->q[q].nominal[0] + k->q[q].borrow_limit;
		CHECK(u[q] <= cap, "queue %zu uses %llu of cap %llu", q,
		    (unsigned long long)u[q], (unsigned long long)cap);
	}
	if (on_path[0]) {
		sum = own[0] + (u[1] > gq[1] ? u[1] : gq[1]) +
		    (u[2] > gq[2] ? u[2] : gq[2]);
		cap = k->q[0].borrow_limit == SCHED_UNLIMITED ? UINT64_MAX :
		    (uint64_t)k->q[0].nominal[0] + k->q[0].borrow_limit;
		CHECK(sum <= cap, "queue 0 children hold %llu of %llu",
		    (unsigned long long)sum, (unsigned long long)cap);
	}
	if (res->nstarts > 0) {
		sum = (u[0] > gq[0] ? u[0] : gq[0]) +
		    (u[3] > gq[3] ? u[3] : gq[3]);
		CHECK(sum <= RN * GPN, "root holds %llu",
		    (unsigned long long)sum);
	}
	CHECK(res->npreempts <= max, "%zu planners", res->npreempts);
	for (x = 0; x < res->npreempts; x++) {
		pj = &k->j[res->preempts[x].pending];
		CHECK(res->reasons[res->preempts[x].pending] ==
		    SCHED_REASON_PREEMPTING, "planner's reason");
		CHECK(k->q[pj->queue].preempt != SCHED_PREEMPT_NEVER,
		    "a NEVER queue preempts");
		CHECK(res->preempts[x].nvictims > 0, "no victims");
		for (v = 0; v < res->preempts[x].nvictims; v++) {
			vr = NULL;
			for (y = 0; y < k->nr; y++)
				if (k->r[y].id == res->preempts[x].victims[v])
					vr = &k->r[y];
			CHECK(vr != NULL && vr->preemptible, "bad victim");
			if (k->q[pj->queue].preempt == SCHED_PREEMPT_LOWER)
				CHECK(vr->queue == pj->queue &&
				    vr->priority < pj->priority,
				    "LOWER took another queue's job");
			if (k->q[pj->queue].preempt ==
			    SCHED_PREEMPT_BORROWERS)
				CHECK(vr->queue != pj->queue,
				    "BORROWERS took its own queue's job");
			for (w = 0; w <= x; w++)
				for (y = 0; y < res->preempts[w].nvictims;
				    y++)
					CHECK((w == x && y == v) ||
					    res->preempts[w].victims[y] !=
					    vr->id, "victim shared");
		}
	}
}

static bool
same(const struct sched_result *a, const struct sched_result *b, size_t nj)
{
	size_t x, v;

	if (a->nstarts != b->nstarts || a->npreempts != b->npreempts)
		return false;
	for (x = 0; x < a->nstarts; x++)
		if (a->starts[x].job != b->starts[x].job ||
		    nodeset(a->starts[x].nodes, a->starts[x].nnodes) !=
		    nodeset(b->starts[x].nodes, b->starts[x].nnodes))
			return false;
	for (x = 0; x < nj; x++)
		if (a->reasons[x] != b->reasons[x] ||
		    a->quota_queue[x] != b->quota_queue[x])
			return false;
	for (x = 0; x < a->npreempts; x++) {
		if (a->preempts[x].nvictims != b->preempts[x].nvictims)
			return false;
		for (v = 0; v < a->preempts[x].nvictims; v++)
			if (a->preempts[x].victims[v] !=
			    b->preempts[x].victims[v])
				return false;
	}
	return true;
}

START_TEST(test_random)
{
	static struct rnd_case k;
	struct sched_input in;
	struct sched_result *res, *again;
	uint64_t sd = 0x9e3779b97f4a7c15ULL;
	size_t it, v, y, i, g, planned = 0, started_alone = 0;
	uint32_t max;

	for (it = 0; it < 1500; it++) {
		rnd_case(&k, &sd);
		max = (uint32_t)(xr(&sd) % 3);
		in = qinput(&k.c, k.r, k.nr, k.j, k.nj, k.q, RQ, 0);
		in.config.preempt_max_jobs = max;
		res = qrun(&in);
		again = qrun(&in);
		CHECK(same(res, again, k.nj), "case %zu: not deterministic",
		    it);
		check_case(&k, res, max == 0 ? SCHED_PREEMPT_MAX_JOBS : max);
		sched_result_free(again);
		sched_result_free(res);
		/* The first job alone: once its victims stop, it starts. */
		in.npending = 1;
		res = qrun(&in);
		if (res->npreempts == 1) {
			planned++;
			for (v = 0; v < res->preempts[0].nvictims; v++) {
				for (i = 0; i < k.c.n; i++)
					for (g = 0; g < GPN; g++)
						if (k.c.gpus[i][g].job ==
						    res->preempts[0].victims[v])
							k.c.gpus[i][g].job = 0;
				for (y = 0; y < k.nr; y++)
					if (k.r[y].id ==
					    res->preempts[0].victims[v])
						k.r[y] = k.r[--k.nr];
			}
			k.j[0].preempting = true;
			in.nrunning = k.nr;
			again = qrun(&in);
			CHECK(again->nstarts == 1, "case %zu: planner did not "
			    "start (reason %d)", it, again->reasons[0]);
			started_alone += again->nstarts;
			sched_result_free(again);
		}
		sched_result_free(res);
		cl_free(&k.c);
	}
	/* The cases must exercise preemption at all. */
	ck_assert_uint_gt(planned, 40);
	ck_assert_uint_eq(started_alone, planned);
}
END_TEST

/* The free GPUs a planned placement counts on are held for the pass:
 * a later job that would fit on them does not take them (it would leave
 * the preemptor unable to start once its victims stop). */
START_TEST(test_plan_holds_free)
{
	struct cl c;
	struct sched_queue q[1];
	struct sched_running r = running(101, 0, 10, 1000);
	struct sched_job j[2];
	struct sched_input in;
	struct sched_result *res;

	cl_init(&c, 2, NULL);
	busy(&c, 1, 0xff, 101);
	q[0] = queue_def(-1, SCHED_UNLIMITED);
	q[0].preempt = SCHED_PREEMPT_LOWER;
	j[0] = hjob(1, 2);
	j[1] = job(2, 1, 8);
	j[1].priority = 50;
	in = qinput(&c, &r, 1, j, 2, q, 1, 0);
	res = qrun(&in);
	ck_assert_ptr_nonnull(preempted(res, 1));
	ck_assert_ptr_null(started(res, 2));
	ck_assert_uint_eq(res->nstarts, 0);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* Searches for victims are bounded per pass even when none succeeds:
 * every job here has a candidate (101) but would not fit even with it
 * gone (102 may not be preempted). */
START_TEST(test_tries_bounded)
{
	struct cl c;
	struct sched_queue q[1];
	struct sched_running r[2] = { running(101, 0, 10, 1000),
	    running(102, 0, 10, 1000) };
	struct sched_job j[100];
	struct sched_input in;
	struct sched_result *res;
	size_t k;

	cl_init(&c, 2, NULL);
	busy(&c, 0, 0xff, 101);
	busy(&c, 1, 0xff, 102);
	r[1].preemptible = false;
	q[0] = queue_def(-1, SCHED_UNLIMITED);
	q[0].preempt = SCHED_PREEMPT_LOWER;
	for (k = 0; k < 100; k++)
		j[k] = hjob(k + 1, 2);
	in = qinput(&c, r, 2, j, 100, q, 1, 0);
	res = qrun(&in);
	ck_assert_uint_eq(res->npreempts, 0);
	ck_assert_uint_gt(res->stats.preempt_tried, 0);
	ck_assert_uint_le(res->stats.preempt_tried, SCHED_PREEMPT_MAX_TRIES);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("preempt");
	TCase *tc = tcase_create("victims");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_least_lost_whole);
	tcase_add_test(tc, test_not_preemptible);
	tcase_add_test(tc, test_never_useless);
	tcase_add_test(tc, test_two_planners);
	tcase_add_test(tc, test_preempting_plans_nothing);
	tcase_add_test(tc, test_required_leaf);
	tcase_add_test(tc, test_lower_only);
	tcase_add_test(tc, test_borrowers);
	tcase_add_test(tc, test_borrowers_nested);
	tcase_add_test(tc, test_quota_lower);
	tcase_add_test(tc, test_quota_usable);
	tcase_add_test(tc, test_respects_resv);
	tcase_add_test(tc, test_random);
	tcase_add_test(tc, test_plan_holds_free);
	tcase_add_test(tc, test_tries_bounded);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
