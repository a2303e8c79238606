/* Queues, preemption and services in the controller's domain
 * (daemon/controller/domain/preemption.c, recovery.c's checkpoint path,
 * jobs.c's jobs_preempt and services) in virtual time, on the real domain with an
 * in-memory store and a recording outbox (tests/domain/domain.h). The
 * choice of victims is the scheduler core's (tests/unit/check_preempt.c);
 * here: what happens to them and to the job they make room for. */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/queues.h"
#include "tests/domain/domain.h"

static struct domain D;
static struct queues *Q;

#define EXIT(code) ((code) << 8)

/* Two queues of 4 GPUs each on 4 nodes of 2 GPUs; a's jobs may not be
 * preempted before min_runtime_a seconds; b reclaims (and c, a's
 * sibling for services, preempts by priority). */
static void
open_with(uint64_t min_runtime_a, enum sched_preempt preempt_a)
{
	struct queue_def defs[2];
	struct cluster_opts o;
	struct cerr err;
	unsigned i;

	memset(defs, 0, sizeof(defs));
	defs[0].name = "a";
	defs[1].name = "b";
	for (i = 0; i < 2; i++) {
		defs[i].gpus = 4;
		defs[i].borrow_limit = SCHED_UNLIMITED;
		defs[i].lend_limit = SCHED_UNLIMITED;
		defs[i].weight = 1;
		defs[i].preempt = SCHED_PREEMPT_BORROWERS;
	}
	defs[0].min_runtime_s = min_runtime_a;
	defs[0].preempt = preempt_a;
	Q = queues_create(defs, 2, QUEUES_DEFAULT_HALF_LIFE_MS, &err);
	ck_assert_msg(Q != NULL, "queues_create: %s", err.text);
	memset(&o, 0, sizeof(o));
	o.node_timeout_ms = 10000;
	o.stop_timeout_ms = 60000;
	o.heartbeat_ms = 2000;
	o.accept_unknown_nodes = true;
	o.queues = Q;
	ck_assert_msg(domain_open(&D, &o, &err) == 0, "domain_open: %s",
	    err.text);
	ck_assert_msg(domain_add_nodes(&D, 4, 2, &err) == 0, "add nodes: %s",
	    err.text);
}

static void
setup(void)
{
	open_with(0, SCHED_PREEMPT_BORROWERS);
}

static void
teardown(void)
{
	domain_close(&D);
	queues_destroy(Q);
	Q = NULL;
}

static uint64_t
submit_as(const char *user, unsigned nodes, unsigned gpus,
    struct domain_spec *o)
{
	struct cerr err;
	uint64_t id;

	id = domain_submit(&D, user, nodes, gpus, domain_spec_apply, o, &err);
	ck_assert_msg(id != 0, "submit: %s", err.text);
	return id;
}

static const struct job *
job(uint64_t id)
{
	return domain_job(&D, id);
}

/* A's 8-GPU job borrows b's idle quota and runs. */
static uint64_t
borrower(struct domain_spec *o)
{
	uint64_t id = submit_as("alice", 4, 2, o);

	domain_pass(&D);
	domain_answer_launches(&D, NULL);
	ck_assert_int_eq(job(id)->state, JOB_RUNNING);
	return id;
}

/* B reclaims its quota: the borrower is signalled, checkpoints, is
 * requeued PENDING with who preempted it, uncounted, and B's job starts
 * on the GPUs it freed; the borrower resumes from its checkpoint later. */
START_TEST(test_reclaim_with_checkpoint)
{
	struct domain_spec oa = { .queue = "a", .checkpoint_dir = "/ckpt",
	    .ckpt_secs = 30 };
	struct domain_spec ob = { .queue = "b" };
	const struct domain_cmd *c;
	struct cluster_stats cs;
	uint64_t a, b;
	size_t mark;

	a = borrower(&oa);
	domain_checkpoint(&D, domain_rank_node(job(a), 0), a, 1, 10,
	    "/ckpt/10");
	domain_advance(&D, 60000);
	mark = D.ncmds;
	b = submit_as("bob", 2, 2, &ob);
	domain_pass(&D);
	/* Every node of the victim gets its checkpoint signal; b waits. */
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, a, mark), 4);
	c = domain_last(&D, DOMAIN_SIGNAL, a);
	ck_assert_int_eq(c->sig, SIGUSR1);
	ck_assert_int_eq(job(a)->state, JOB_RUNNING);
	ck_assert_msg(strncmp(job(b)->reason, "Preempting", 10) == 0,
	    "reason %s", job(b)->reason);
	/* A second pass does not preempt again. */
	domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, a, mark), 4);
	/* The checkpoint arrives: stopped and requeued. */
	domain_advance(&D, 2000);
	domain_checkpoint(&D, domain_rank_node(job(a), 0), a, 1, 11,
	    "/ckpt/11");
	ck_assert_int_eq(job(a)->state, JOB_PENDING);
	ck_assert_msg(strstr(job(a)->reason, "Preempted by ") != NULL &&
	    strstr(job(a)->reason, " of b") != NULL, "reason %s",
	    job(a)->reason);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, a, mark), 4);
	ck_assert_uint_eq(job(a)->restarts, 0);
	ck_assert_uint_eq(job(a)->preemptions, 1);
	ck_assert_uint_eq(job(a)->ckpt_step, 11);
	/* Nothing was lost beyond the checkpoint just written. */
	ck_assert_uint_lt(job(a)->lost_work_ms, 1000);
	domain_settle(&D);
	ck_assert_int_eq(job(b)->state, JOB_RUNNING);
	ck_assert_uint_eq(job(b)->nplace, 2);
	/* a's job still says why it waits, and that it was preempted. */
	ck_assert_int_eq(job(a)->state, JOB_PENDING);
	ck_assert_msg(strstr(job(a)->reason, "Preempted by ") != NULL,
	    "reason %s", job(a)->reason);
	cluster_stats(D.cl, &cs);
	ck_assert_uint_eq(cs.preemptions, 1);
	/* b's job ends: a's resumes from its checkpoint. */
	ck_assert_int_eq(domain_exit(&D, domain_rank_node(job(b), 0), b,
	    job(b)->attempt, 0, EXIT(0), NULL), 0);
	ck_assert_int_eq(domain_exit(&D, domain_rank_node(job(b), 1), b,
	    job(b)->attempt, 1, EXIT(0), NULL), 0);
	ck_assert_int_eq(job(b)->state, JOB_COMPLETED);
	domain_settle(&D);
	ck_assert_int_eq(job(a)->state, JOB_RUNNING);
	c = domain_last(&D, DOMAIN_LAUNCH, a);
	ck_assert_str_eq(c->resume, "/ckpt/11");
}
END_TEST

/* No checkpoint before the grace: stopped at the grace, the work since
 * the last checkpoint counted as lost. */
START_TEST(test_reclaim_at_grace)
{
	struct domain_spec oa = { .queue = "a", .checkpoint_dir = "/ckpt",
	    .ckpt_secs = 20 };
	struct domain_spec ob = { .queue = "b" };
	uint64_t a, b;
	int64_t t;

	a = borrower(&oa);
	domain_run_for(&D, 100000, 2000);
	b = submit_as("bob", 1, 2, &ob);
	domain_pass(&D);
	for (t = 0; t < 19000; t += 1000) {
		domain_run_for(&D, 1000, 1000);
		ck_assert_int_eq(job(a)->state, JOB_RUNNING);
	}
	domain_run_for(&D, 1500, 1500);
	ck_assert_int_eq(job(a)->state, JOB_PENDING);
	ck_assert_uint_ge(job(a)->lost_work_ms, 100000);
	domain_settle(&D);
	ck_assert_int_eq(job(b)->state, JOB_RUNNING);
}
END_TEST

/* A job without a checkpoint directory gets no signal (its default
 * action could kill it); it runs until the grace and starts over. */
START_TEST(test_reclaim_no_checkpoint_dir)
{
	struct domain_spec oa = { .queue = "a", .ckpt_secs = 5 };
	struct domain_spec ob = { .queue = "b" };
	uint64_t a, b;
	size_t mark;

	a = borrower(&oa);
	domain_run_for(&D, 30000, 2000);
	mark = D.ncmds;
	b = submit_as("bob", 2, 2, &ob);
	domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, a, mark), 0);
	ck_assert_int_eq(job(a)->state, JOB_RUNNING);
	domain_run_for(&D, 6000, 2000);
	ck_assert_int_eq(job(a)->state, JOB_PENDING);
	ck_assert_uint_ge(job(a)->lost_work_ms, 30000);
	domain_settle(&D);
	ck_assert_int_eq(job(b)->state, JOB_RUNNING);
}
END_TEST

/* min_runtime: a borrower that has not run that long is not preempted;
 * once it has, it is. */
START_TEST(test_min_runtime)
{
	struct domain_spec oa = { .queue = "a", .checkpoint_dir = "/ckpt",
	    .ckpt_secs = 10 };
	struct domain_spec ob = { .queue = "b" };
	uint64_t a, b;
	size_t mark;

	teardown();
	open_with(600, SCHED_PREEMPT_BORROWERS);
	a = borrower(&oa);
	domain_advance(&D, 60000);
	mark = D.ncmds;
	b = submit_as("bob", 2, 2, &ob);
	domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, a, mark), 0);
	ck_assert_msg(strncmp(job(b)->reason, "Preempting", 10) != 0,
	    "reason %s", job(b)->reason);
	domain_advance(&D, 541000);
	domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, a, mark), 4);
}
END_TEST

/* A job within its nominal quota that would not fit even with every
 * borrower gone preempts nobody. */
START_TEST(test_never_for_nothing)
{
	struct domain_spec oa = { .queue = "a", .checkpoint_dir = "/ckpt" };
	struct domain_spec ob = { .queue = "b" };
	uint64_t a, b;
	size_t mark;

	a = borrower(&oa);
	domain_advance(&D, 60000);
	mark = D.ncmds;
	/* 5 nodes: the cluster has 4. */
	b = submit_as("bob", 5, 1, &ob);
	domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, a, mark), 0);
	ck_assert_int_eq(job(a)->state, JOB_RUNNING);
	ck_assert_int_eq(job(b)->state, JOB_PENDING);
}
END_TEST

/* The preemptor is ordered first once its victims stop: a job submitted
 * before it, of another queue, does not take the freed GPUs. */
START_TEST(test_preemptor_gets_the_gpus)
{
	struct domain_spec oa = { .queue = "a", .checkpoint_dir = "/ckpt",
	    .ckpt_secs = 10 };
	struct domain_spec ob = { .queue = "b" };
	uint64_t a, early, b;

	a = borrower(&oa);
	domain_advance(&D, 60000);
	/* Another of a's jobs, as big, waits: older than b's, and a may
	 * borrow the whole cluster while b uses nothing. */
	early = submit_as("alice", 4, 2, &oa);
	domain_pass(&D);
	domain_advance(&D, 1000);
	b = submit_as("bob", 2, 2, &ob);
	domain_pass(&D);
	domain_advance(&D, 1000);
	domain_checkpoint(&D, domain_rank_node(job(a), 0), a, 1, 3,
	    "/ckpt/3");
	ck_assert_int_eq(job(a)->state, JOB_PENDING);
	domain_settle(&D);
	ck_assert_int_eq(job(b)->state, JOB_RUNNING);
	ck_assert_int_eq(job(early)->state, JOB_PENDING);
	ck_assert_int_eq(job(a)->state, JOB_PENDING);
}
END_TEST

/* A job of higher priority takes the GPUs a preemptor's victims freed:
 * the preemptor does not wait for its deadline but chooses again at the
 * next passes (here: the job that took them, which borrows). */
START_TEST(test_preemptor_outrun)
{
	struct domain_spec oa = { .queue = "a", .checkpoint_dir = "/ckpt",
	    .ckpt_secs = 30, .priority = 40 };
	struct domain_spec oc = { .queue = "a", .checkpoint_dir = "/ckpt" };
	struct domain_spec ob = { .queue = "b", .priority = 50 };
	uint64_t a, b, c;
	size_t mark;
	int i;

	a = borrower(&oa);
	domain_advance(&D, 60000);
	b = submit_as("bob", 2, 2, &ob);
	domain_pass(&D);
	ck_assert_msg(strncmp(job(b)->reason, "Preempting", 10) == 0,
	    "reason %s", job(b)->reason);
	/* Of a higher priority than b's, and a may borrow it all. */
	c = submit_as("alice", 4, 2, &oc);
	domain_advance(&D, 1000);
	domain_checkpoint(&D, domain_rank_node(job(a), 0), a, 1, 3,
	    "/ckpt/3");
	ck_assert_int_eq(job(a)->state, JOB_PENDING);
	domain_settle(&D);
	ck_assert_msg(job(c)->state == JOB_RUNNING, "c: %s; b: %s",
	    job(c)->reason, job(b)->reason);
	ck_assert_int_eq(job(b)->state, JOB_PENDING);
	mark = D.ncmds;
	for (i = 0; i < 3 && domain_count(&D, DOMAIN_SIGNAL, c, mark) == 0;
	    i++)
		domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, c, mark), 4);
	ck_assert_msg(strncmp(job(b)->reason, "Preempting", 10) == 0,
	    "reason %s", job(b)->reason);
}
END_TEST

/* A service of a queue that preempts by priority takes the place of a
 * lower-priority training job of its queue; its exits (0 included)
 * restart it with a growing back-off, never counted. */
START_TEST(test_service)
{
	struct domain_spec train = { .queue = "a", .priority = 10,
	    .checkpoint_dir = "/ckpt", .ckpt_secs = 5 };
	struct domain_spec svc = { .queue = "a", .service = true };
	uint64_t t, s;
	size_t mark;
	int64_t first;

	teardown();
	open_with(0, SCHED_PREEMPT_BOTH);
	t = submit_as("alice", 4, 2, &train);
	domain_pass(&D);
	domain_answer_launches(&D, NULL);
	ck_assert_int_eq(job(t)->state, JOB_RUNNING);
	domain_advance(&D, 10000);
	mark = D.ncmds;
	s = submit_as("alice", 2, 2, &svc);
	domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_SIGNAL, t, mark), 4);
	domain_checkpoint(&D, domain_rank_node(job(t), 0), t, 1, 4,
	    "/ckpt/4");
	ck_assert_int_eq(job(t)->state, JOB_PENDING);
	domain_settle(&D);
	ck_assert_int_eq(job(s)->state, JOB_RUNNING);
	/* The service exits 0 at once: restarted after a back-off. */
	domain_advance(&D, 1000);
	ck_assert_int_eq(domain_exit(&D, domain_rank_node(job(s), 0), s,
	    job(s)->attempt, 0, EXIT(0), NULL), 0);
	ck_assert_int_eq(job(s)->state, JOB_RESTARTING);
	ck_assert_uint_eq(job(s)->restarts, 0);
	first = job(s)->backoff_ms;
	ck_assert_int_ge(first, JOBS_BACKOFF_MIN_MS);
	/* Meanwhile the trainer may use the GPUs; the service takes them
	 * back once its back-off is over. */
	domain_settle(&D);
	ck_assert_int_eq(job(s)->state, JOB_RESTARTING);
	ck_assert_int_eq(job(t)->state, JOB_RUNNING);
	domain_advance(&D, first);
	domain_settle(&D);
	domain_checkpoint(&D, domain_rank_node(job(t), 0), t, job(t)->attempt,
	    5, "/ckpt/5");
	ck_assert_int_eq(job(t)->state, JOB_PENDING);
	domain_settle(&D);
	ck_assert_int_eq(job(s)->state, JOB_RUNNING);
	ck_assert_uint_eq(job(t)->preemptions, 2);
	/* It fails again soon: the back-off doubles. */
	ck_assert_int_eq(domain_exit(&D, domain_rank_node(job(s), 1), s,
	    job(s)->attempt, 1, EXIT(3), NULL), 0);
	ck_assert_int_eq(job(s)->state, JOB_RESTARTING);
	ck_assert_int_eq(job(s)->backoff_ms, 2 * first);
	ck_assert_uint_eq(job(s)->restarts, 0);
}
END_TEST

/* Fair share between two queues that own no GPUs (everything they use
 * is borrowed): x has used the cluster, y has not. Its factor falls
 * below y's while it runs; when both wait for the same GPUs, y's job
 * goes first though x's was submitted first with the same limit, and
 * x's runs after it. */
START_TEST(test_fair_share_order)
{
	struct domain_spec hold = { .queue = "x", .time_limit_s = 600 };
	struct domain_spec xs = { .queue = "x", .time_limit_s = 600 };
	struct domain_spec ys = { .queue = "y", .time_limit_s = 600 };
	struct queue_def defs[2];
	struct cluster_opts o;
	struct cerr err;
	char name[16];
	uint64_t h, first, second;
	int x, y;
	unsigned i;

	teardown();
	memset(defs, 0, sizeof(defs));
	defs[0].name = "x";
	defs[1].name = "y";
	for (i = 0; i < 2; i++) {
		defs[i].gpus = 0;
		defs[i].borrow_limit = SCHED_UNLIMITED;
		defs[i].lend_limit = SCHED_UNLIMITED;
		defs[i].weight = 1;
		defs[i].preempt = SCHED_PREEMPT_BORROWERS;
	}
	Q = queues_create(defs, 2, QUEUES_DEFAULT_HALF_LIFE_MS, &err);
	ck_assert_msg(Q != NULL, "queues_create: %s", err.text);
	memset(&o, 0, sizeof(o));
	o.node_timeout_ms = 10000;
	o.stop_timeout_ms = 60000;
	o.heartbeat_ms = 2000;
	o.accept_unknown_nodes = true;
	o.queues = Q;
	ck_assert_msg(domain_open(&D, &o, &err) == 0, "domain_open: %s",
	    err.text);
	for (i = 1; i <= 2; i++) {
		snprintf(name, sizeof(name), "node%02u", i);
		ck_assert(domain_add_node(&D, name, 2, false, &err) != 0);
	}
	x = queues_find(Q, "x");
	y = queues_find(Q, "y");
	ck_assert(x >= 0 && y >= 0);
	h = submit_as("alice", 2, 2, &hold);
	domain_pass(&D);
	domain_answer_launches(&D, NULL);
	ck_assert_int_eq(job(h)->state, JOB_RUNNING);
	domain_run_for(&D, 60000, 1000);
	ck_assert_msg(queues_factor(Q, (size_t)x, D.now) <
	    queues_factor(Q, (size_t)y, D.now), "x %f, y %f",
	    queues_factor(Q, (size_t)x, D.now),
	    queues_factor(Q, (size_t)y, D.now));
	first = submit_as("alice", 2, 2, &xs);
	second = submit_as("bob", 2, 2, &ys);
	domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, first, 0), 0);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, second, 0), 0);
	ck_assert_int_eq(job(h)->state, JOB_RUNNING);
	ck_assert_int_eq(domain_exit(&D, domain_rank_node(job(h), 0), h, 1,
	    0, 0, &err), 0);
	ck_assert_int_eq(domain_exit(&D, domain_rank_node(job(h), 1), h, 1,
	    1, 0, &err), 0);
	ck_assert_int_eq(job(h)->state, JOB_COMPLETED);
	domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, second, 0), 2);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, first, 0), 0);
	domain_answer_launches(&D, NULL);
	domain_advance(&D, 1000);
	ck_assert_int_eq(domain_exit(&D, domain_rank_node(job(second), 0),
	    second, 1, 0, 0, &err), 0);
	ck_assert_int_eq(domain_exit(&D, domain_rank_node(job(second), 1),
	    second, 1, 1, 0, &err), 0);
	domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, first, 0), 2);
}
END_TEST

static Suite *
preemption_suite(void)
{
	Suite *s = suite_create("preemption");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_reclaim_with_checkpoint);
	tcase_add_test(tc, test_reclaim_at_grace);
	tcase_add_test(tc, test_reclaim_no_checkpoint_dir);
	tcase_add_test(tc, test_min_runtime);
	tcase_add_test(tc, test_never_for_nothing);
	tcase_add_test(tc, test_preemptor_gets_the_gpus);
	tcase_add_test(tc, test_preemptor_outrun);
	tcase_add_test(tc, test_service);
	tcase_add_test(tc, test_fair_share_order);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(preemption_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
