/* Goodput (daemon/controller/domain/goodput.c) in virtual time: each job's
 * wall time since its first start split into productive, lost, restart,
 * wait and checkpoint time, kept across a controller restart; and the
 * checkpoint interval advised (Young/Daly) from the cluster's failures
 * and the job's size. On the real domain with an in-memory store and a
 * recording outbox (tests/domain/domain.h). */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/goodput.h"
#include "daemon/controller/domain/jobs.h"
#include "tests/domain/domain.h"

static struct domain D;
static const struct peer admin = { "root", ROLE_ADMIN };

static void
setup(void)
{
	struct cerr err;

	ck_assert_msg(domain_open(&D, NULL, &err) == 0, "domain_open: %s",
	    err.text);
	ck_assert_msg(domain_add_nodes(&D, 4, 4, &err) == 0, "add nodes: %s",
	    err.text);
}

static void
teardown(void)
{
	domain_close(&D);
}

static uint64_t
run_spec(unsigned nodes, struct domain_spec *o)
{
	struct cerr err;
	uint64_t id;

	id = domain_submit(&D, "alice", nodes, 0,
	    o != NULL ? domain_spec_apply : NULL, o, &err);
	ck_assert_msg(id != 0, "submit: %s", err.text);
	domain_pass(&D);
	domain_answer_launches(&D, NULL);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	return id;
}

static struct job_goodput_view
view(uint64_t id)
{
	struct job_goodput_view v;

	goodput_view(domain_job(&D, id), D.now, &v);
	return v;
}

/* The parts add up to the wall time since the first start, exactly. */
static void
assert_adds_up(uint64_t id, int64_t first_start)
{
	struct job_goodput_view v = view(id);
	uint64_t sum = v.productive_ms + v.lost_ms + v.restart_ms +
	    v.wait_ms + v.ckpt_ms;

	ck_assert_msg(sum == (uint64_t)(D.now - first_start),
	    "parts %llu + %llu + %llu + %llu + %llu != wall %lld",
	    (unsigned long long)v.productive_ms,
	    (unsigned long long)v.lost_ms, (unsigned long long)v.restart_ms,
	    (unsigned long long)v.wait_ms, (unsigned long long)v.ckpt_ms,
	    (long long)(D.now - first_start));
}

static struct domain_spec ckpt = { .checkpoint_dir = "/ckpt",
    .ckpt_secs = 30 };

/* A job that only runs: all productive, ETTR 1. */
START_TEST(test_running_is_productive)
{
	struct job_goodput_view v;
	int64_t t0;
	uint64_t id;

	id = run_spec(1, NULL);
	t0 = D.now;
	ck_assert_int_eq(domain_job(&D, id)->gp.first_start_ms, t0);
	domain_run_for(&D, 60000, 10000);
	v = view(id);
	ck_assert_uint_eq(v.productive_ms, 60000);
	ck_assert(v.ettr == 1.0);
	assert_adds_up(id, t0);
}
END_TEST

/* Restarted once after a GPU failure: the work since the checkpoint is
 * lost, failure seen to running again is restart time, and ETTR is
 * strictly between 0 and 1; the parts add up, also once it completed. */
START_TEST(test_restart_once)
{
	const struct job *job;
	struct job_goodput_view v;
	char r0[PEER_NAME_MAX + 1];
	int64_t t0;
	uint64_t id;

	id = run_spec(2, &ckpt);
	t0 = D.now;
	job = domain_job(&D, id);
	snprintf(r0, sizeof(r0), "%s", domain_rank_node(job, 0));
	domain_advance(&D, 10000);
	domain_checkpoint(&D, r0, id, 1, 10, "/ckpt/10");
	domain_advance(&D, 4000);
	/* 4 s since the checkpoint are lost. */
	domain_health(&D, r0, HEALTH_FAILED, 0, "xid=79");
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RESTARTING);
	domain_advance(&D, 1500);
	domain_settle(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	ck_assert_uint_eq(domain_job(&D, id)->restarts, 1);
	domain_advance(&D, 20000);
	v = view(id);
	ck_assert_uint_eq(v.lost_ms, 4000);
	ck_assert_uint_eq(v.restart_ms, 1500);
	ck_assert_uint_eq(v.wait_ms, 0);
	ck_assert_uint_eq(v.productive_ms, 30000);
	ck_assert(v.ettr > 0 && v.ettr < 1);
	assert_adds_up(id, t0);
	/* It ends: the wall time stops with it. */
	job = domain_job(&D, id);
	ck_assert_int_eq(domain_exit(&D, domain_rank_node(job, 0), id,
	    job->attempt, 0, 0, NULL), 0);
	ck_assert_int_eq(domain_exit(&D, domain_rank_node(job, 1), id,
	    job->attempt, 1, 0, NULL), 0);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_COMPLETED);
	v = view(id);
	domain_advance(&D, 60000);
	ck_assert_uint_eq(view(id).productive_ms, v.productive_ms);
	ck_assert(view(id).ettr == v.ettr);
}
END_TEST

static struct domain_spec low = { .checkpoint_dir = "/ckpt",
    .ckpt_secs = 30, .priority = -1 };

/* Requeued (the preemption path): back to PENDING, the time stopped and
 * not placed is wait, not restart; the checkpoint the controller asked
 * for is timed (signal to LATEST) and counted as checkpoint time. */
START_TEST(test_requeue_waits_and_times_the_checkpoint)
{
	const struct job *job;
	struct job_goodput_view v;
	char r0[PEER_NAME_MAX + 1];
	struct cerr err;
	enum job_state st;
	int64_t t0;
	uint64_t id, other;

	id = run_spec(4, &low);
	t0 = D.now;
	job = domain_job(&D, id);
	snprintf(r0, sizeof(r0), "%s", domain_rank_node(job, 0));
	domain_advance(&D, 10000);
	ck_assert_msg(cluster_requeue(D.cl, &admin, id, D.now, &err) == 0,
	    "requeue: %s", err.text);
	domain_commit(&D);
	domain_advance(&D, 3000);
	domain_checkpoint(&D, r0, id, 1, 5, "/ckpt/5");
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_PENDING);
	ck_assert_uint_eq(job->gp.ckpt_cost_ms, 3000);
	/* Another job, of a higher priority, takes the whole cluster
	 * meanwhile: it waits. */
	other = domain_submit(&D, "alice", 4, 0, NULL, NULL, &err);
	ck_assert_msg(other != 0, "submit: %s", err.text);
	domain_settle(&D);
	ck_assert_int_eq(domain_job(&D, other)->state, JOB_RUNNING);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_PENDING);
	domain_advance(&D, 7000);
	job = domain_job(&D, other);
	ck_assert_int_eq(cluster_cancel(D.cl, &admin, other, D.now, &st,
	    &err), 0);
	domain_commit(&D);
	domain_settle(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	domain_advance(&D, 5000);
	v = view(id);
	ck_assert_uint_eq(v.ckpt_ms, 3000);
	ck_assert_uint_eq(v.wait_ms, 7000);
	ck_assert_uint_eq(v.restart_ms, 0);
	ck_assert_uint_eq(v.lost_ms, 0);
	ck_assert_uint_eq(v.productive_ms, 15000);
	ck_assert(v.ettr > 0 && v.ettr < 1);
	assert_adds_up(id, t0);
}
END_TEST

/* The split is stored with the job: a controller restart keeps it and
 * goes on from it. */
START_TEST(test_kept_across_controller_restart)
{
	const struct job *job;
	struct job_goodput_view before, after;
	struct cerr err;
	char r0[PEER_NAME_MAX + 1];
	int64_t t0;
	uint64_t id;

	id = run_spec(1, &ckpt);
	t0 = D.now;
	job = domain_job(&D, id);
	snprintf(r0, sizeof(r0), "%s", domain_rank_node(job, 0));
	domain_advance(&D, 5000);
	domain_health(&D, r0, HEALTH_FAILED, 0, "xid=79");
	domain_advance(&D, 1000);
	domain_settle(&D);
	domain_advance(&D, 2000);
	before = view(id);
	ck_assert_uint_gt(before.lost_ms, 0);
	ck_assert_msg(domain_restart(&D, &err) == 0, "restart: %s", err.text);
	after = view(id);
	ck_assert_uint_eq(after.lost_ms, before.lost_ms);
	ck_assert_uint_eq(after.restart_ms, before.restart_ms);
	ck_assert_uint_eq(after.productive_ms, before.productive_ms);
	assert_adds_up(id, t0);
}
END_TEST

/* Daly's interval on known inputs, Young's as its first term. */
START_TEST(test_interval_formula)
{
	/* C = 1, M = 50: sqrt(100) (1 + 0.1/3 + 0.01/9) - 1. */
	ck_assert(fabs(goodput_interval_s(1, 50) -
	    (10 * (1 + 0.1 / 3 + 0.01 / 9) - 1)) < 1e-9);
	/* A checkpoint as long as twice the MTBF: checkpoint every MTBF. */
	ck_assert(goodput_interval_s(100, 50) == 50);
	ck_assert(goodput_interval_s(0, 50) == 0);
	ck_assert(goodput_interval_s(10, 0) == 0);
	/* Young's sqrt(2CM) within a percent for C << M. */
	ck_assert(fabs(goodput_interval_s(60, 3.6e6) /
	    sqrt(2 * 60 * 3.6e6) - 1) < 0.01);
}
END_TEST

/* A new cluster gets the prior (a failure per node every 6,335 h); its
 * own failures shorten the MTBF and old ones fade over the window. */
START_TEST(test_rates_prior_and_history)
{
	struct goodput_rates r;
	double m0, m1, m2;
	int64_t t = 1000;
	int i;

	goodput_rates_init(&r, 24.0 * 30);
	goodput_rates_tick(&r, 100, t);
	m0 = goodput_node_mtbf_h(&r);
	ck_assert(fabs(m0 - GOODPUT_PRIOR_NODE_MTBF_H) < 1e-9);
	/* 10 failures within an hour on 100 nodes. */
	for (i = 0; i < 10; i++)
		goodput_rates_failure(&r, t += 360000);
	m1 = goodput_node_mtbf_h(&r);
	ck_assert(m1 < m0 / 5);
	/* A year without failures: back towards the prior. */
	goodput_rates_tick(&r, 100, t += 365LL * 24 * 3600 * 1000);
	m2 = goodput_node_mtbf_h(&r);
	ck_assert(m2 > m1 * 5);
}
END_TEST

/* The advice: from the prior and the job's --checkpoint-signal SECS
 * before any checkpoint was timed, from the measured cost after; it
 * shrinks with the job's size as 1/sqrt(nodes); it reaches the agent in
 * the launch. */
START_TEST(test_advice_size_cost_and_launch)
{
	struct domain_spec o = { .checkpoint_dir = "/ckpt", .ckpt_secs = 60 };
	const struct domain_cmd *c;
	const struct job *j1, *j4;
	double m = GOODPUT_PRIOR_NODE_MTBF_H * 3600;
	enum job_state st;
	uint64_t a, b;

	a = run_spec(1, &o);
	j1 = domain_job(&D, a);
	ck_assert_uint_eq(j1->ckpt_advice_s,
	    (uint32_t)ceil(goodput_interval_s(60, m)));
	c = domain_last(&D, DOMAIN_LAUNCH, a);
	ck_assert_uint_eq(c->advice_s, j1->ckpt_advice_s);
	ck_assert_int_eq(cluster_cancel(D.cl, &admin, a, D.now, &st, NULL),
	    0);
	domain_commit(&D);
	domain_settle(&D);
	b = run_spec(4, &o);
	j4 = domain_job(&D, b);
	ck_assert_uint_eq(j4->ckpt_advice_s,
	    (uint32_t)ceil(goodput_interval_s(60, m / 4)));
	/* Four times the nodes: about half the interval. */
	ck_assert(fabs((double)j4->ckpt_advice_s /
	    (double)domain_job(&D, a)->ckpt_advice_s - 0.5) < 0.01);
	/* A checkpoint timed at 2 s: the next tick advises from it. */
	{
		struct goodput_rates prior;
		struct job tmp = *j4;

		goodput_rates_init(&prior, GOODPUT_WINDOW_H);
		tmp.gp.ckpt_cost_ms = 2000;
		ck_assert_uint_eq(goodput_advice_s(&prior, &tmp),
		    (uint32_t)ceil(goodput_interval_s(2, m / 4)));
	}
}
END_TEST

/* The job reports its checkpoint's cost (CKPT_MS, beside LATEST): it is
 * the job's cost and its checkpoint time, preferred to the time from the
 * signal; one beyond a day is no measure, and the signal's time counts. */
START_TEST(test_reported_cost)
{
	const struct job *job;
	char r0[PEER_NAME_MAX + 1];
	struct cerr err;
	uint64_t id;

	id = run_spec(2, &ckpt);
	job = domain_job(&D, id);
	snprintf(r0, sizeof(r0), "%s", domain_rank_node(job, 0));
	domain_advance(&D, 10000);
	domain_checkpoint_cost(&D, r0, id, 1, 10, "/ckpt/10", 1500);
	job = domain_job(&D, id);
	ck_assert_uint_eq(job->gp.ckpt_cost_ms, 1500);
	ck_assert_uint_eq(view(id).ckpt_ms, 1500);
	/* Asked at the requeue, written 3 s later, reported as 800 ms:
	 * the job's word. */
	domain_advance(&D, 10000);
	ck_assert_msg(cluster_requeue(D.cl, &admin, id, D.now, &err) == 0,
	    "requeue: %s", err.text);
	domain_commit(&D);
	domain_advance(&D, 3000);
	domain_checkpoint_cost(&D, r0, id, 1, 20, "/ckpt/20", 800);
	job = domain_job(&D, id);
	ck_assert_uint_eq(job->gp.ckpt_cost_ms, 800);
	ck_assert_uint_eq(job->gp.ckpt_ms, 2300);
	domain_settle(&D);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	/* A cost beyond a day is refused: the next requeue's LATEST is
	 * timed from its signal instead. */
	snprintf(r0, sizeof(r0), "%s", domain_rank_node(job, 0));
	domain_advance(&D, 10000);
	ck_assert_msg(cluster_requeue(D.cl, &admin, id, D.now, &err) == 0,
	    "requeue: %s", err.text);
	domain_commit(&D);
	domain_advance(&D, 2000);
	domain_checkpoint_cost(&D, r0, id, job->attempt, 30, "/ckpt/30",
	    GOODPUT_CKPT_COST_MAX_MS + 1);
	job = domain_job(&D, id);
	ck_assert_uint_eq(job->gp.ckpt_cost_ms, 2000);
	ck_assert_uint_eq(job->gp.ckpt_ms, 4300);
}
END_TEST

/* A cost the job reports after its LATEST (CKPT_MS renamed later, seen
 * at a later look) still counts, once. */
START_TEST(test_reported_cost_late)
{
	const struct job *job;
	char r0[PEER_NAME_MAX + 1];
	uint64_t id;

	id = run_spec(2, &ckpt);
	job = domain_job(&D, id);
	snprintf(r0, sizeof(r0), "%s", domain_rank_node(job, 0));
	domain_advance(&D, 10000);
	domain_checkpoint(&D, r0, id, 1, 10, "/ckpt/10");
	job = domain_job(&D, id);
	ck_assert_uint_eq(job->gp.ckpt_cost_ms, 0);
	domain_advance(&D, 1000);
	domain_checkpoint_cost(&D, r0, id, 1, 10, "/ckpt/10", 1500);
	domain_checkpoint_cost(&D, r0, id, 1, 10, "/ckpt/10", 1500);
	job = domain_job(&D, id);
	ck_assert_uint_eq(job->gp.ckpt_cost_ms, 1500);
	ck_assert_uint_eq(job->gp.ckpt_ms, 1500);
	/* A second report of it changes nothing; the next checkpoint's
	 * cost, with its LATEST, counts as before. */
	domain_checkpoint_cost(&D, r0, id, 1, 10, "/ckpt/10", 900);
	job = domain_job(&D, id);
	ck_assert_uint_eq(job->gp.ckpt_ms, 1500);
	domain_advance(&D, 60000);
	domain_checkpoint_cost(&D, r0, id, 1, 20, "/ckpt/20", 800);
	job = domain_job(&D, id);
	ck_assert_uint_eq(job->gp.ckpt_cost_ms, 800);
	ck_assert_uint_eq(job->gp.ckpt_ms, 2300);
}
END_TEST

/* When the advice is renewed: a first always, a move of 10% or more at
 * once, a smaller one after the period, no change never. */
START_TEST(test_advice_renew_rule)
{
	int64_t t = 1000000;

	ck_assert(goodput_advice_renew(0, 0, 600, t));
	ck_assert(!goodput_advice_renew(600, t, 600, t + 10 *
	    GOODPUT_ADVICE_PERIOD_MS));
	ck_assert(!goodput_advice_renew(600, t, 0, t));
	ck_assert(goodput_advice_renew(600, t, 660, t));
	ck_assert(goodput_advice_renew(600, t, 540, t));
	ck_assert(!goodput_advice_renew(600, t, 659, t));
	ck_assert(!goodput_advice_renew(600, t, 541, t +
	    GOODPUT_ADVICE_PERIOD_MS - 1));
	ck_assert(goodput_advice_renew(600, t, 541, t +
	    GOODPUT_ADVICE_PERIOD_MS));
}
END_TEST

/* Number of advice messages to job id's nodes since from, each giving
 * what the job now holds. */
static size_t
advised(uint64_t id, size_t from)
{
	size_t i, n = 0;

	for (i = from; i < D.ncmds; i++) {
		if (D.cmds[i].kind != DOMAIN_ADVISE || D.cmds[i].job_id != id)
			continue;
		ck_assert_uint_eq(D.cmds[i].advice_s,
		    domain_job(&D, id)->ckpt_advice_s);
		n++;
	}
	return n;
}

/* A running job's nodes are given new advice when its measured cost or
 * the cluster's failures move it materially, each node once, and not at
 * every tick; the job's checkpoint_advice_s follows. */
START_TEST(test_advice_refreshed_while_running)
{
	struct domain_spec o = { .checkpoint_dir = "/ckpt", .ckpt_secs = 60 };
	double m = GOODPUT_PRIOR_NODE_MTBF_H * 3600;
	const struct job *job;
	char r0[PEER_NAME_MAX + 1], other[PEER_NAME_MAX + 1];
	uint32_t before;
	size_t mark;
	unsigned i;
	uint64_t id;

	id = run_spec(2, &o);
	job = domain_job(&D, id);
	ck_assert_uint_eq(job->ckpt_advice_s,
	    (uint32_t)ceil(goodput_interval_s(60, m / 2)));
	snprintf(r0, sizeof(r0), "%s", domain_rank_node(job, 0));
	mark = D.ncmds;
	domain_run_for(&D, 30000, 5000);
	ck_assert_uint_eq(advised(id, mark), 0);
	/* Reported at 2 s: the advice falls by far more than 10%. */
	domain_checkpoint_cost(&D, r0, id, 1, 10, "/ckpt/10", 2000);
	mark = D.ncmds;
	domain_tick(&D);
	domain_commit(&D);
	job = domain_job(&D, id);
	ck_assert_uint_eq(job->ckpt_advice_s,
	    (uint32_t)ceil(goodput_interval_s(2, m / 2)));
	ck_assert_uint_eq(advised(id, mark), 2);
	ck_assert(domain_last(&D, DOMAIN_ADVISE, id)->attempt == job->attempt);
	/* Nothing moved: nothing more is sent. */
	mark = D.ncmds;
	domain_run_for(&D, 30000, 5000);
	ck_assert_uint_eq(advised(id, mark), 0);
	/* A node outside the job fails: the cluster's failure rate
	 * doubles (one failure on the prior's one), the advice shrinks
	 * by about sqrt(2), and the job's nodes are told. */
	other[0] = '\0';
	for (i = 1; i <= 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "node%02u", i);
		if (strcmp(name, domain_rank_node(job, 0)) != 0 &&
		    strcmp(name, domain_rank_node(job, 1)) != 0) {
			snprintf(other, sizeof(other), "%s", name);
			break;
		}
	}
	ck_assert(other[0] != '\0');
	before = job->ckpt_advice_s;
	domain_health(&D, other, HEALTH_FAILED, 0, "xid=79");
	mark = D.ncmds;
	domain_tick(&D);
	domain_commit(&D);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert(job->ckpt_advice_s < before * 0.8);
	ck_assert_uint_eq(advised(id, mark), 2);
}
END_TEST

static Suite *
goodput_suite(void)
{
	Suite *s = suite_create("goodput");
	TCase *tc = tcase_create("goodput");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_running_is_productive);
	tcase_add_test(tc, test_restart_once);
	tcase_add_test(tc, test_requeue_waits_and_times_the_checkpoint);
	tcase_add_test(tc, test_kept_across_controller_restart);
	tcase_add_test(tc, test_interval_formula);
	tcase_add_test(tc, test_rates_prior_and_history);
	tcase_add_test(tc, test_advice_size_cost_and_launch);
	tcase_add_test(tc, test_reported_cost);
	tcase_add_test(tc, test_reported_cost_late);
	tcase_add_test(tc, test_advice_renew_rule);
	tcase_add_test(tc, test_advice_refreshed_while_running);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(goodput_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
