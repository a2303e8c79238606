/* daemon/sched/squota.c and the queue-aware order of sched.c: quota
 * admission (borrowing, borrow and lend limits, nested queues, flavors,
 * the root's cap), the order (within nominal before borrowing, shares,
 * starvation), QueueQuota and its queue, and bad queue input. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check_sched.h"
#include "daemon/sched/sched_int.h"

static size_t
nstarted(const struct sched_result *res)
{
	return res->nstarts;
}

/* Jobs 1 .. n of queue q, one node and g GPUs each. */
static void
jobs_of(struct sched_job *j, size_t n, uint32_t q, uint32_t g)
{
	size_t k;

	for (k = 0; k < n; k++) {
		j[k] = job(k + 1, 1, g);
		j[k].queue = q;
	}
}

/* Queue A may use B's unused nominal; B's guarantee (nominal - lend
 * limit) is never lent. */
START_TEST(test_borrow_sibling)
{
	struct cl c;
	struct sched_queue q[2];
	struct sched_job j[4];
	struct sched_input in;
	struct sched_result *res;

	cl_init(&c, 4, NULL);
	q[0] = queue_def(-1, 16);
	q[1] = queue_def(-1, 16);
	jobs_of(j, 4, 0, 8);
	in = qinput(&c, NULL, 0, j, 4, q, 2, 0);
	res = qrun(&in);
	ck_assert_uint_eq(nstarted(res), 4);
	ck_assert_uint_eq(res->quota_queue[3], UINT32_MAX);
	sched_result_free(res);
	/* B keeps 8: A gets 16 + 8. */
	q[1].lend_limit = 8;
	res = qrun(&in);
	ck_assert_uint_eq(nstarted(res), 3);
	ck_assert_ptr_null(started(res, 4));
	ck_assert_int_eq(res->reasons[3], SCHED_REASON_QUEUE_QUOTA);
	ck_assert_uint_eq(res->quota_queue[3], 0);
	sched_result_free(res);
	/* B lends nothing: A stays at its nominal. */
	q[1].lend_limit = 0;
	res = qrun(&in);
	ck_assert_uint_eq(nstarted(res), 2);
	ck_assert_int_eq(res->reasons[2], SCHED_REASON_QUEUE_QUOTA);
	ck_assert_int_eq(res->reasons[3], SCHED_REASON_QUEUE_QUOTA);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_borrow_limit)
{
	struct cl c;
	struct sched_queue q[2];
	struct sched_job j[6];
	struct sched_input in;
	struct sched_result *res;

	cl_init(&c, 4, NULL);
	q[0] = queue_def(-1, 16);
	q[0].borrow_limit = 4;
	q[1] = queue_def(-1, 16);
	jobs_of(j, 6, 0, 4);
	in = qinput(&c, NULL, 0, j, 6, q, 2, 0);
	res = qrun(&in);
	ck_assert_uint_eq(nstarted(res), 5);
	ck_assert_ptr_null(started(res, 6));
	ck_assert_int_eq(res->reasons[5], SCHED_REASON_QUEUE_QUOTA);
	ck_assert_uint_eq(res->quota_queue[5], 0);
	sched_result_free(res);
	/* Running jobs count: one of A holding 8 leaves room for 3. */
	{
		struct sched_running r = running(100, 0, 100, 1000);

		busy(&c, 0, 0xff, 100);
		in = qinput(&c, &r, 1, j, 6, q, 2, 0);
		res = qrun(&in);
		ck_assert_uint_eq(nstarted(res), 3);
		sched_result_free(res);
		/* Unlisted, the holder counts in no queue. */
		in = qinput(&c, NULL, 0, j, 6, q, 2, 0);
		res = qrun(&in);
		ck_assert_uint_eq(nstarted(res), 5);
		sched_result_free(res);
	}
	cl_free(&c);
}
END_TEST

/* org (24, no borrowing) > team (16) > proj (8, borrows up to 8), and a
 * sibling of org; each level's limit in turn. */
START_TEST(test_nested)
{
	struct cl c;
	struct sched_queue q[4];
	struct sched_job j[8];
	struct sched_input in;
	struct sched_result *res;
	size_t k;

	cl_init(&c, 4, NULL);
	q[0] = queue_def(-1, 24);
	q[0].borrow_limit = 0;
	q[1] = queue_def(0, 16);
	q[1].borrow_limit = 0;
	q[2] = queue_def(1, 8);
	q[2].borrow_limit = 8;
	q[3] = queue_def(-1, 8);
	jobs_of(j, 8, 2, 4);
	in = qinput(&c, NULL, 0, j, 8, q, 4, 0);
	res = qrun(&in);
	ck_assert_uint_eq(nstarted(res), 4);
	ck_assert_uint_eq(res->quota_queue[4], 2);
	sched_result_free(res);
	q[2].borrow_limit = SCHED_UNLIMITED;
	res = qrun(&in);
	ck_assert_uint_eq(nstarted(res), 4);
	ck_assert_uint_eq(res->quota_queue[4], 1);
	sched_result_free(res);
	q[1].borrow_limit = SCHED_UNLIMITED;
	res = qrun(&in);
	ck_assert_uint_eq(nstarted(res), 6);
	for (k = 6; k < 8; k++) {
		ck_assert_int_eq(res->reasons[k], SCHED_REASON_QUEUE_QUOTA);
		ck_assert_uint_eq(res->quota_queue[k], 0);
	}
	sched_result_free(res);
	q[0].borrow_limit = SCHED_UNLIMITED;
	res = qrun(&in);
	ck_assert_uint_eq(nstarted(res), 8);
	sched_result_free(res);
	/* The sibling keeps its 8: the root holds 24 for org. */
	q[3].lend_limit = 0;
	res = qrun(&in);
	ck_assert_uint_eq(nstarted(res), 6);
	ck_assert_uint_eq(res->quota_queue[6], 0);
	sched_result_free(res);
	/* An inner queue without a nominal takes its children's sum. */
	q[3].lend_limit = SCHED_UNLIMITED;
	q[1].nominal[0] = SCHED_UNLIMITED;
	q[1].borrow_limit = 4;
	q[0].nominal[0] = SCHED_UNLIMITED;
	res = qrun(&in);
	ck_assert_uint_eq(nstarted(res), 3);
	ck_assert_uint_eq(res->quota_queue[3], 1);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* A quota on H100s only; A100s stay unlimited. */
START_TEST(test_flavors)
{
	static const char *const fl[] = { NULL, "H100", "A100" };
	struct cl c;
	struct sched_queue q[1];
	struct sched_job j[4];
	struct sched_input in;
	struct sched_result *res;

	cl_init(&c, 4, NULL);
	c.nodes[2].gpu_model = A100;
	c.nodes[3].gpu_model = A100;
	q[0] = queue_def(-1, SCHED_UNLIMITED);
	q[0].nominal[1] = 8;
	q[0].borrow_limit = 0;
	jobs_of(j, 4, 0, 8);
	j[0].gpu_type = j[1].gpu_type = "h100";
	j[2].gpu_type = j[3].gpu_type = "a100";
	in = qinput(&c, NULL, 0, j, 4, q, 1, 0);
	in.flavors = fl;
	in.nflavors = 3;
	res = qrun(&in);
	ck_assert_ptr_nonnull(started(res, 1));
	ck_assert_ptr_null(started(res, 2));
	ck_assert_int_eq(res->reasons[1], SCHED_REASON_QUEUE_QUOTA);
	ck_assert_uint_eq(res->quota_queue[1], 0);
	ck_assert_ptr_nonnull(started(res, 3));
	ck_assert_ptr_nonnull(started(res, 4));
	sched_result_free(res);
	/* Flavor 0 only: nothing limits it. */
	in.nflavors = 0;
	res = qrun(&in);
	ck_assert_uint_eq(nstarted(res), 4);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* GPUs a running job holds on a drained node count in its queue's usage
 * and in the root's cap alike: the free node is still given out. */
START_TEST(test_root_cap_drained)
{
	struct cl c;
	struct sched_queue q[1];
	struct sched_job j[1];
	struct sched_running r = running(100, 0, 100, 1000);
	struct sched_input in;
	struct sched_result *res;

	cl_init(&c, 3, NULL);
	busy(&c, 0, 0xff, 100);
	busy(&c, 2, 0xff, 100);
	c.nodes[2].drained = true;
	q[0] = queue_def(-1, SCHED_UNLIMITED);
	jobs_of(j, 1, 0, 8);
	in = qinput(&c, &r, 1, j, 1, q, 1, 0);
	res = qrun(&in);
	ck_assert_uint_eq(nstarted(res), 1);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* The root holds the GPUs of eligible nodes: with one node down, A's
 * guarantee of 16 leaves B 8, although B is within its nominal. */
START_TEST(test_root_cap)
{
	struct cl c;
	struct sched_queue q[2];
	struct sched_job j[2];
	struct sched_input in;
	struct sched_result *res;

	cl_init(&c, 4, NULL);
	q[0] = queue_def(-1, 16);
	q[0].lend_limit = 0;
	q[1] = queue_def(-1, 16);
	jobs_of(j, 2, 1, 8);
	in = qinput(&c, NULL, 0, j, 2, q, 2, 0);
	res = qrun(&in);
	ck_assert_uint_eq(nstarted(res), 2);
	sched_result_free(res);
	c.nodes[3].up = false;
	res = qrun(&in);
	ck_assert_uint_eq(nstarted(res), 1);
	ck_assert_int_eq(res->reasons[1], SCHED_REASON_QUEUE_QUOTA);
	ck_assert_uint_eq(res->quota_queue[1], 1);
	sched_result_free(res);
	/* A job of A inside its guarantee takes nothing more from the
	 * root: with all nodes up, A's 8 and B's 16 fit. */
	c.nodes[3].up = true;
	{
		struct sched_job k[3];

		jobs_of(k, 3, 1, 8);
		k[0].queue = 0;
		in = qinput(&c, NULL, 0, k, 3, q, 2, 0);
		res = qrun(&in);
		ck_assert_uint_eq(nstarted(res), 3);
		sched_result_free(res);
	}
	cl_free(&c);
}
END_TEST

/* A whole-node job counts the GPUs it gets. */
START_TEST(test_whole_node)
{
	struct cl c;
	struct sched_queue q[2];
	struct sched_job j[1];
	struct sched_running r = running(100, 1, 100, 1000);
	struct sched_input in;
	struct sched_result *res;
	const struct sched_start *s;

	cl_init(&c, 4, NULL);
	c.nodes[3].ngpus = 4;
	q[0] = queue_def(-1, 6);
	q[0].borrow_limit = 0;
	q[1] = queue_def(-1, SCHED_UNLIMITED);
	j[0] = job(1, 1, 0);
	/* Only the 4-GPU node is free (an unlisted job holds the rest). */
	busy(&c, 0, 0xff, 999);
	busy(&c, 1, 0xff, 999);
	busy(&c, 2, 0xff, 999);
	in = qinput(&c, NULL, 0, j, 1, q, 2, 0);
	res = qrun(&in);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nodes[0].node, 3);
	ck_assert_uint_eq(s->nodes[0].ngpus, 4);
	sched_result_free(res);
	/* Only an 8-GPU node is free: 8 > 6. */
	busy(&c, 0, 0xff, 0);
	busy(&c, 3, 0xf, 100);
	in = qinput(&c, &r, 1, j, 1, q, 2, 0);
	res = qrun(&in);
	ck_assert_uint_eq(nstarted(res), 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_QUEUE_QUOTA);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* Within nominal before borrowing, with each queue's jobs added up in
 * the base order; borrowers by queue share, then user share. */
START_TEST(test_order_nominal)
{
	struct cl c;
	struct sched_queue q[2];
	struct sched_job j[4];
	struct sched_running r = running(100, 0, 100, 1000);
	struct sched_input in;
	struct sched_result *res;

	/* A already uses its 8: B's later job goes first. */
	cl_init(&c, 2, NULL);
	busy(&c, 0, 0xff, 100);
	q[0] = queue_def(-1, 8);
	q[1] = queue_def(-1, 8);
	j[0] = job(1, 1, 8);
	j[1] = job(2, 1, 8);
	j[1].queue = 1;
	in = qinput(&c, &r, 1, j, 2, q, 2, 0);
	res = qrun(&in);
	ck_assert_ptr_nonnull(started(res, 2));
	ck_assert_ptr_null(started(res, 1));
	sched_result_free(res);
	/* Without queues: plain FIFO. */
	in.nqueues = 0;
	res = qrun(&in);
	ck_assert_ptr_nonnull(started(res, 1));
	sched_result_free(res);
	cl_free(&c);

	/* A (16) has three jobs of 8: the third borrows, and goes after
	 * B's job that is within. */
	cl_init(&c, 3, NULL);
	q[0] = queue_def(-1, 16);
	j[0] = job(1, 1, 8);
	j[1] = job(2, 1, 8);
	j[2] = job(3, 1, 8);
	j[3] = job(4, 1, 8);
	j[3].queue = 1;
	in = qinput(&c, NULL, 0, j, 4, q, 2, 0);
	res = qrun(&in);
	ck_assert_ptr_nonnull(started(res, 1));
	ck_assert_ptr_nonnull(started(res, 2));
	ck_assert_ptr_nonnull(started(res, 4));
	ck_assert_ptr_null(started(res, 3));
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_order_share)
{
	struct cl c;
	struct sched_queue q[2];
	struct sched_job j[2];
	struct sched_input in;
	struct sched_result *res;

	cl_init(&c, 1, NULL);
	q[0] = queue_def(-1, 0);
	q[1] = queue_def(-1, 0);
	q[0].share = 5;
	q[1].share = 1;
	j[0] = job(1, 1, 8);
	j[1] = job(2, 1, 8);
	j[1].queue = 1;
	in = qinput(&c, NULL, 0, j, 2, q, 2, 0);
	res = qrun(&in);
	ck_assert_ptr_nonnull(started(res, 2));
	sched_result_free(res);
	q[0].share = 0;
	res = qrun(&in);
	ck_assert_ptr_nonnull(started(res, 1));
	sched_result_free(res);
	/* One queue: the user with the smaller share goes first... */
	j[1].queue = 0;
	j[0].user_share = 10;
	j[1].user_share = 2;
	res = qrun(&in);
	ck_assert_ptr_nonnull(started(res, 2));
	sched_result_free(res);
	/* ...but only among borrowers: within nominal, FIFO. */
	q[0].nominal[0] = 100;
	res = qrun(&in);
	ck_assert_ptr_nonnull(started(res, 1));
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* A two-node gang behind a stream of short jobs (shortest estimate
 * first, no aging: it would wait forever). Once it has waited starve_s
 * it goes first, even from a borrowing queue, and takes the
 * reservation; the short jobs, ending after it, cannot pass it. */
START_TEST(test_starve)
{
	struct cl c;
	struct sched_queue q[2];
	struct sched_job j[3];
	struct sched_running r = running(100, 1, 100, 50);
	struct sched_input in;
	struct sched_result *res;

	cl_init(&c, 2, NULL);
	busy(&c, 0, 0xff, 100);
	q[0] = queue_def(-1, 0);
	q[1] = queue_def(-1, SCHED_UNLIMITED);
	j[0] = job(1, 2, 0);
	j[0].submit = 0;
	j[0].time_limit = 1000;
	j[1] = job(2, 1, 8);
	j[2] = job(3, 1, 8);
	j[1].queue = j[2].queue = 1;
	j[1].submit = j[2].submit = 5;
	in = qinput(&c, &r, 1, j, 3, q, 2, 10);
	in.config.order = SCHED_ORDER_ESTIMATE;
	res = qrun(&in);
	ck_assert_ptr_nonnull(started(res, 2));
	ck_assert(res->has_resv);
	ck_assert_uint_eq(res->resv.job, 3);
	sched_result_free(res);
	in.config.starve_s = 5;
	res = qrun(&in);
	ck_assert_uint_eq(res->nstarts, 0);
	ck_assert(res->has_resv);
	ck_assert_uint_eq(res->resv.job, 1);
	ck_assert_int_eq(res->resv.start, 50);
	ck_assert_int_eq(res->reasons[1], SCHED_REASON_PRIORITY);
	sched_result_free(res);
	/* Not yet starved at now = 5. */
	in.now = 5;
	res = qrun(&in);
	ck_assert_ptr_nonnull(started(res, 2));
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* starve_s bounds the wait without queues too (the controller's default
 * configuration): the gang behind the stream of short jobs goes first
 * once it has waited that long. */
START_TEST(test_starve_no_queues)
{
	struct cl c;
	struct sched_job j[3];
	struct sched_running r = running(100, 0, 100, 50);
	struct sched_input in;
	struct sched_result *res;

	cl_init(&c, 2, NULL);
	busy(&c, 0, 0xff, 100);
	j[0] = job(1, 2, 0);
	j[0].submit = 0;
	j[0].time_limit = 1000;
	j[1] = job(2, 1, 8);
	j[2] = job(3, 1, 8);
	j[1].submit = j[2].submit = 5;
	in = qinput(&c, &r, 1, j, 3, NULL, 0, 10);
	in.config.order = SCHED_ORDER_ESTIMATE;
	res = qrun(&in);
	ck_assert_ptr_nonnull(started(res, 2));
	ck_assert_uint_eq(res->resv.job, 3);
	sched_result_free(res);
	in.config.starve_s = 5;
	res = qrun(&in);
	ck_assert_uint_eq(res->nstarts, 0);
	ck_assert(res->has_resv);
	ck_assert_uint_eq(res->resv.job, 1);
	sched_result_free(res);
	/* Only gangs of 16 GPUs or more starve: the 2 whole 8-GPU nodes
	 * do; with a bar of 17 they do not. */
	in.config.starve_min_gpus = 16;
	res = qrun(&in);
	ck_assert_uint_eq(res->resv.job, 1);
	sched_result_free(res);
	in.config.starve_min_gpus = 17;
	res = qrun(&in);
	ck_assert_ptr_nonnull(started(res, 2));
	ck_assert_uint_eq(res->resv.job, 3);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* A job over its quota waits with QueueQuota and its queue, and leaves
 * the reservation to the next job blocked by resources. */
START_TEST(test_quota_no_resv)
{
	struct cl c;
	struct sched_queue q[2];
	struct sched_job j[2];
	struct sched_running r = running(100, 0, 100, 1000);
	struct sched_input in;
	struct sched_result *res;

	cl_init(&c, 3, NULL);
	busy(&c, 0, 0xff, 100);
	q[0] = queue_def(-1, 8);
	q[0].borrow_limit = 0;
	q[1] = queue_def(-1, SCHED_UNLIMITED);
	j[0] = job(1, 1, 8);
	j[0].priority = 200;
	j[1] = job(2, 3, 0);
	j[1].queue = 1;
	in = qinput(&c, &r, 1, j, 2, q, 2, 0);
	res = qrun(&in);
	ck_assert_uint_eq(res->nstarts, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_QUEUE_QUOTA);
	ck_assert_uint_eq(res->quota_queue[0], 0);
	ck_assert_str_eq(sched_reason_name(res->reasons[0]), "QueueQuota");
	ck_assert_int_eq(res->reasons[1], SCHED_REASON_RESOURCES);
	ck_assert_uint_eq(res->quota_queue[1], UINT32_MAX);
	ck_assert(res->has_resv);
	ck_assert_uint_eq(res->resv.job, 2);
	sched_result_free(res);
	/* Not tried (beyond bf_max_job_test, or behind a blocked job in
	 * strict order): over its quota whatever the placement. */
	{
		struct sched_job k[3];

		k[0] = job(1, 3, 0);
		k[0].queue = 1;
		k[1] = job(2, 3, 0);
		k[1].queue = 1;
		k[2] = job(3, 1, 8);
		in = qinput(&c, &r, 1, k, 3, q, 2, 0);
		in.config.bf_max_job_test = 1;
		res = qrun(&in);
		ck_assert_int_eq(res->reasons[2], SCHED_REASON_QUEUE_QUOTA);
		ck_assert_uint_eq(res->quota_queue[2], 0);
		sched_result_free(res);
		in.config.bf_max_job_test = 0;
		in.config.no_backfill = true;
		res = qrun(&in);
		ck_assert_int_eq(res->reasons[1], SCHED_REASON_RESOURCES);
		ck_assert_int_eq(res->reasons[2], SCHED_REASON_QUEUE_QUOTA);
		sched_result_free(res);
		in = qinput(&c, &r, 1, j, 2, q, 2, 0);
	}
	/* Strict order: the quota-blocked job blocks nothing either. */
	j[1] = job(2, 1, 8);
	j[1].queue = 1;
	in.config.no_backfill = true;
	res = qrun(&in);
	ck_assert_ptr_nonnull(started(res, 2));
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* An elastic job takes the largest size its quota allows; a restart
 * that keeps its nodes is checked as kept. */
START_TEST(test_elastic_restart)
{
	static const uint32_t prev[2] = { 2, 3 };
	struct cl c;
	struct sched_queue q[1];
	struct sched_job j[1];
	struct sched_input in;
	struct sched_result *res;
	const struct sched_start *s;

	cl_init(&c, 4, NULL);
	q[0] = queue_def(-1, 16);
	q[0].borrow_limit = 4;
	j[0] = job(1, 1, 8);
	j[0].nodes_max = 4;
	in = qinput(&c, NULL, 0, j, 1, q, 1, 0);
	res = qrun(&in);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nnodes, 2);
	sched_result_free(res);
	/* Even the minimum is too much. */
	j[0].nodes_min = 3;
	res = qrun(&in);
	ck_assert_uint_eq(res->nstarts, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_QUEUE_QUOTA);
	sched_result_free(res);
	j[0] = job(1, 2, 8);
	j[0].restarting = true;
	j[0].prev_nodes = prev;
	j[0].nprev = 2;
	res = qrun(&in);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(nodeset(s->nodes, 2), 0xc);
	sched_result_free(res);
	q[0].borrow_limit = 0;
	q[0].nominal[0] = 8;
	res = qrun(&in);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_QUEUE_QUOTA);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* A restarting elastic gang whose kept nodes are more than its quota
 * allows is placed afresh at the size that fits, not left waiting. */
START_TEST(test_elastic_restart_over_quota)
{
	static const uint32_t prev[3] = { 1, 2, 3 };
	struct cl c;
	struct sched_queue q[1];
	struct sched_job j[1];
	struct sched_input in;
	struct sched_result *res;
	const struct sched_start *s;

	cl_init(&c, 4, NULL);
	q[0] = queue_def(-1, 16);
	q[0].borrow_limit = 0;
	j[0] = job(1, 1, 8);
	j[0].nodes_max = 3;
	j[0].restarting = true;
	j[0].prev_nodes = prev;
	j[0].nprev = 3;
	in = qinput(&c, NULL, 0, j, 1, q, 1, 0);
	res = qrun(&in);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nnodes, 2);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_einval)
{
	static const char *const fl[SCHED_FLAVORS_MAX + 1] = { NULL };
	struct cl c;
	struct sched_queue q[2];
	struct sched_job j[1];
	struct sched_running r = running(100, 0, 100, 1000);
	struct sched_input in;
	struct sched_result *res;

	cl_init(&c, 2, NULL);
	q[0] = queue_def(-1, 8);
	q[1] = queue_def(0, 8);
	j[0] = job(1, 1, 8);
	in = qinput(&c, &r, 1, j, 1, q, 2, 0);
	res = qrun(&in);
	sched_result_free(res);
#define BAD(stmt, undo) do {						\
	stmt;								\
	errno = 0;							\
	ck_assert_ptr_null(sched_run(&in));				\
	ck_assert_int_eq(errno, EINVAL);				\
	undo;								\
} while (0)
	BAD(j[0].queue = 2, j[0].queue = 0);
	BAD(r.queue = 2, r.queue = 0);
	BAD(q[1].parent = 2, q[1].parent = 0);
	BAD(q[1].parent = -2, q[1].parent = 0);
	BAD(q[0].parent = 1, q[0].parent = -1);
	BAD(q[1].parent = 1, q[1].parent = 0);
	BAD((in.flavors = fl, in.nflavors = SCHED_FLAVORS_MAX + 1),
	    in.nflavors = 0);
	BAD(in.queues = NULL, in.queues = q);
#undef BAD
	res = qrun(&in);
	ck_assert_uint_eq(res->nstarts, 1);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* Without queues the new fields change nothing. */
START_TEST(test_no_queues_same)
{
	struct cl c;
	struct sched_job a[5], b[5];
	struct sched_running r[2];
	struct sched_input ia, ib;
	struct sched_result *ra, *rb;
	size_t k, n;

	cl_init(&c, 4, NULL);
	busy(&c, 0, 0x0f, 100);
	busy(&c, 1, 0xff, 101);
	r[0] = running(100, 0, 100, 40);
	r[1] = running(101, 0, 100, 90);
	memset(r, 0, sizeof(r));
	r[0].id = 100;
	r[0].end = 40;
	r[1].id = 101;
	r[1].end = 90;
	a[0] = job(1, 3, 0);
	a[0].submit = 50;
	a[1] = job(2, 1, 4);
	a[2] = job(3, 1, 8);
	a[3] = job(4, 2, 2);
	a[4] = job(5, 1, 1);
	a[4].submit = 100;
	memcpy(b, a, sizeof(a));
	for (k = 0; k < 5; k++) {
		b[k].queue = (uint32_t)k + 3;
		b[k].user_share = 10 - k;
		b[k].preempting = k % 2 == 0;
	}
	ia = qinput(&c, r, 2, a, 5, NULL, 0, 200);
	ib = ia;
	ib.pending = b;
	ib.config.preempt_max_jobs = 3;
	ra = qrun(&ia);
	rb = qrun(&ib);
	ck_assert_uint_eq(ra->nstarts, rb->nstarts);
	ck_assert_uint_gt(ra->nstarts, 0);
	for (k = 0; k < ra->nstarts; k++) {
		ck_assert_uint_eq(ra->starts[k].job, rb->starts[k].job);
		ck_assert_uint_eq(ra->starts[k].nnodes, rb->starts[k].nnodes);
		for (n = 0; n < ra->starts[k].nnodes; n++)
			ck_assert_uint_eq(ra->starts[k].nodes[n].node,
			    rb->starts[k].nodes[n].node);
	}
	for (k = 0; k < 5; k++)
		ck_assert_int_eq(ra->reasons[k], rb->reasons[k]);
	ck_assert_int_eq(ra->has_resv, rb->has_resv);
	ck_assert_uint_eq(ra->resv.job, rb->resv.job);
	ck_assert_ptr_null(rb->quota_queue);
	ck_assert_uint_eq(rb->npreempts, 0);
	sched_result_free(ra);
	sched_result_free(rb);
	cl_free(&c);
}
END_TEST

/* The queue order's radix sort against a stable comparison sort, on
 * each of its ways: keys and positions in one word, keys in one word
 * beside the positions, and key by key (bits: the width of each key's
 * random part). */
static const struct rrec *rs_recs;

static int
rs_cmp(const void *x, const void *y)
{
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	int k;

	for (k = 0; k < RSORT_KEYS; k++)
		if (rs_recs[i].k[k] != rs_recs[j].k[k])
			return rs_recs[i].k[k] < rs_recs[j].k[k] ? -1 : 1;
	return i < j ? -1 : i > j;
}

static void
rs_check(size_t n, int bits, uint64_t base)
{
	struct rrec *a = calloc(n + 1, sizeof(*a));
	struct rpair *scratch = calloc(RSORT_SCRATCH(n), sizeof(*scratch));
	size_t *got = calloc(n + 1, sizeof(*got));
	size_t *want = calloc(n + 1, sizeof(*want));
	size_t i;
	int k;

	ck_assert(a != NULL && scratch != NULL && got != NULL && want != NULL);
	for (i = 0; i < n; i++) {
		for (k = 0; k < RSORT_KEYS; k++) {
			uint64_t r = (uint64_t)random() << 33 ^
			    (uint64_t)random() << 11 ^ (uint64_t)random();

			a[i].k[k] = base + (bits >= 64 ? r :
			    r & ((UINT64_C(1) << bits) - 1));
		}
		want[i] = i;
	}
	rs_recs = a;
	qsort(want, n, sizeof(*want), rs_cmp);
	rsort(a, n, got, scratch);
	for (i = 0; i < n; i++)
		CHECK(got[i] == want[i], "n %zu bits %d: position %zu is %zu, "
		    "not %zu", n, bits, i, got[i], want[i]);
	free(a);
	free(scratch);
	free(got);
	free(want);
}

START_TEST(test_rsort)
{
	srandom(7);
	rs_check(0, 4, 0);
	rs_check(1, 4, 5);
	rs_check(5000, 0, 99);		/* every record equal */
	rs_check(5000, 3, 1000);	/* few values: many ties */
	rs_check(5000, 12, 0);		/* 48 bits and 13 of position */
	rs_check(5000, 15, 1);		/* 60 bits: one word, positions apart */
	rs_check(5000, 40, 7);		/* key by key */
	rs_check(3000, 64, 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("sched_queue");
	TCase *tc = tcase_create("quota");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_borrow_sibling);
	tcase_add_test(tc, test_borrow_limit);
	tcase_add_test(tc, test_nested);
	tcase_add_test(tc, test_flavors);
	tcase_add_test(tc, test_root_cap);
	tcase_add_test(tc, test_whole_node);
	tcase_add_test(tc, test_order_nominal);
	tcase_add_test(tc, test_order_share);
	tcase_add_test(tc, test_starve);
	tcase_add_test(tc, test_root_cap_drained);
	tcase_add_test(tc, test_starve_no_queues);
	tcase_add_test(tc, test_quota_no_resv);
	tcase_add_test(tc, test_elastic_restart);
	tcase_add_test(tc, test_elastic_restart_over_quota);
	tcase_add_test(tc, test_einval);
	tcase_add_test(tc, test_no_queues_same);
	tcase_add_test(tc, test_rsort);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
