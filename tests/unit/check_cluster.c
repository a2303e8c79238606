/* The controller's orchestration (daemon/controller/cluster.c, gang.c)
 * in virtual time: passes, gang launches all or nothing, restarts that
 * wait for their old tasks, and tasks that will not stop. On the real
 * domain with an in-memory store and a recording outbox
 * (tests/domain/domain.h). */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/jobs.h"
#include "daemon/controller/nodes.h"
#include "daemon/controller/recovery.h"
#include "tests/domain/domain.h"

static struct domain D;
static const struct peer alice = { "alice", ROLE_USER };
static enum job_state st;

static void
setup(void)
{
	struct cerr err;
	char name[16];
	int i;

	ck_assert_msg(domain_open(&D, NULL, &err) == 0, "domain_open: %s",
	    err.text);
	for (i = 1; i <= 4; i++) {
		snprintf(name, sizeof(name), "node%02d", i);
		ck_assert_msg(domain_add_node(&D, name, 4, false, &err) != 0,
		    "add %s: %s", name, err.text);
	}
}

static void
teardown(void)
{
	domain_close(&D);
}

static const char *
rank_node(const struct job *job, unsigned rank)
{
	size_t i;

	for (i = 0; i < job->nplace; i++)
		if (job->place[i].node_rank == rank)
			return job->place[i].node;
	return NULL;
}

/* A 2-node job: placed, launched on both nodes, RUNNING once both
 * answered. */
static uint64_t
start_job(unsigned nodes)
{
	struct cerr err;
	uint64_t id;

	id = domain_submit(&D, "alice", nodes, 0, NULL, NULL, &err);
	ck_assert_msg(id != 0, "submit: %s", err.text);
	domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, 0), nodes);
	domain_answer_launches(&D, NULL);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	return id;
}

START_TEST(test_gang_all_or_nothing)
{
	struct cerr refused;
	const struct job *job;
	uint64_t id;
	size_t i;

	id = domain_submit(&D, "alice", 2, 0, NULL, NULL, &refused);
	ck_assert_uint_ne(id, 0);
	domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, 0), 2);
	/* The first node refuses (transiently): both are told to stop, the
	 * job backs off without its allocation. */
	cerr_set(&refused, ERR_UNAVAILABLE, "busy");
	for (i = 0; i < D.ncmds; i++)
		if (D.cmds[i].kind == DOMAIN_LAUNCH) {
			D.cmds[i].answered = true;
			D.cmds[i].done(D.cmds[i].arg, &refused, D.now);
			break;
		}
	domain_commit(&D);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_PENDING);
	ck_assert_uint_eq(job->nplace, 0);
	ck_assert(jobs_backing_off(job, D.now));
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, id, 0), 2);
	/* The other node's late success changes nothing. */
	domain_answer_launches(&D, NULL);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_PENDING);
}
END_TEST

/* The finding: a restart used to launch on its kept node while
 * the old tasks still ran there; it now waits for their exit, holding
 * its nodes, and nothing submitted later takes them. */
START_TEST(test_restart_waits_for_old_tasks)
{
	struct node_health h;
	const struct job *job;
	char kept[PEER_NAME_MAX + 1], lost[PEER_NAME_MAX + 1];
	uint64_t id, later;
	size_t mark;
	struct cerr err;

	id = start_job(2);
	job = domain_job(&D, id);
	snprintf(kept, sizeof(kept), "%s", rank_node(job, 0));
	snprintf(lost, sizeof(lost), "%s", rank_node(job, 1));
	/* rank 1's node fails. */
	memset(&h, 0, sizeof(h));
	h.health = HEALTH_FAILED;
	snprintf(h.reason, sizeof(h.reason), "test");
	mark = D.ncmds;
	recovery_health(D.cl, domain_conn(&D, lost), &h, D.now);
	domain_commit(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RESTARTING);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, id, mark), 2);
	/* The pass places the restart on its kept node and a replacement,
	 * but sends nothing while the old rank 0 runs there. */
	domain_pass(&D);
	job = domain_job(&D, id);
	ck_assert_uint_eq(job->nplace, 2);
	ck_assert_str_eq(rank_node(job, 0), kept);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, mark), 0);
	/* A later 2-node job finds no room. */
	later = domain_submit(&D, "bob", 2, 0, NULL, NULL, &err);
	ck_assert_uint_ne(later, 0);
	domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, later, 0), 0);
	ck_assert_uint_eq(domain_job(&D, later)->nplace, 0);
	/* The old rank 0 exits: the restart goes at once. */
	domain_advance(&D, 50);
	ck_assert_int_eq(domain_exit(&D, kept, id, 1, 0, 15, &err), 0);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, mark), 2);
	domain_answer_launches(&D, NULL);
	job = domain_job(&D, id);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	ck_assert_uint_eq(job->restarts, 1);
}
END_TEST

/* A heartbeat that no longer lists the old tasks counts as their exit. */
START_TEST(test_heartbeat_ends_stopping)
{
	const struct job *job;
	char node[PEER_NAME_MAX + 1];
	struct cerr err;
	uint64_t id;
	size_t mark;

	id = start_job(1);
	job = domain_job(&D, id);
	snprintf(node, sizeof(node), "%s", rank_node(job, 0));
	ck_assert_int_eq(cluster_cancel(D.cl, &alice, id, D.now, &st, &err),
	    0);
	domain_commit(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, id, 0), 1);
	/* A 4-GPU job on that node waits while the cancelled task runs. */
	mark = D.ncmds;
	id = domain_submit(&D, "bob", 4, 0, NULL, NULL, &err);
	domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, mark), 0);
	domain_heartbeat(&D, node, NULL, 0);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, mark), 4);
}
END_TEST

/* Found by tests/bench/goodput: a rank that fails (exit 1) restarts the
 * job; the rest of the gang used to go on running, unstopped, and the
 * restart launched beside it on the same GPUs at once. Now the other
 * rank is told to stop and the restart waits for its exit. */
START_TEST(test_failed_rank_stops_gang)
{
	const struct job *job;
	char r0[PEER_NAME_MAX + 1], r1[PEER_NAME_MAX + 1];
	struct cerr err;
	uint64_t id;
	size_t mark, i, stops;

	id = start_job(2);
	job = domain_job(&D, id);
	snprintf(r0, sizeof(r0), "%s", rank_node(job, 0));
	snprintf(r1, sizeof(r1), "%s", rank_node(job, 1));
	mark = D.ncmds;
	ck_assert_int_eq(domain_exit(&D, r1, id, 1, 1, 1 << 8, &err), 0);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RESTARTING);
	for (i = mark, stops = 0; i < D.ncmds; i++)
		stops += D.cmds[i].kind == DOMAIN_STOP &&
		    strcmp(D.cmds[i].node, r0) == 0;
	ck_assert_uint_eq(stops, 1);
	/* The restart keeps both nodes and waits for rank 0's exit. */
	domain_pass(&D);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, mark), 0);
	ck_assert_int_eq(domain_exit(&D, r0, id, 1, 0, 15, &err), 0);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, id, mark), 2);
}
END_TEST

/* Heartbeats from every node; node `busy` lists (job, attempt) rank 0
 * as still running. */
static void
alive(const char *busy, uint64_t job, uint32_t attempt)
{
	struct task_report r;
	size_t i;

	memset(&r, 0, sizeof(r));
	r.job_id = job;
	r.restart = attempt;
	r.running = true;
	for (i = 0; i < D.nnodes; i++)
		domain_heartbeat(&D, D.nodes[i].name, &r,
		    strcmp(D.nodes[i].name, busy) == 0 ? 1 : 0);
}

/* Tasks still there after stop_timeout drain their node, and the launch
 * that waited for them gives its allocation back. */
START_TEST(test_unkillable_drains_node)
{
	const struct job *job;
	const struct node *n;
	char node[PEER_NAME_MAX + 1];
	struct cerr err;
	uint64_t id, next, small;
	size_t mark;

	id = start_job(1);
	job = domain_job(&D, id);
	snprintf(node, sizeof(node), "%s", rank_node(job, 0));
	ck_assert_int_eq(cluster_cancel(D.cl, &alice, id, D.now, &st, &err),
	    0);
	domain_commit(&D);
	/* A job of all 4 nodes waits for the cancelled task. */
	mark = D.ncmds;
	next = domain_submit(&D, "bob", 4, 0, NULL, NULL, &err);
	domain_pass(&D);
	ck_assert_uint_eq(domain_job(&D, next)->nplace, 4);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, next, mark), 0);
	/* The task stays (heartbeats list it) up to stop_timeout. */
	domain_advance(&D, 59000);
	alive(node, id, 1);
	domain_tick(&D);
	ck_assert(!nodes_get(D.ns, node)->drained);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, next, mark), 0);
	domain_advance(&D, 1000);
	alive(node, id, 1);
	domain_tick(&D);
	n = nodes_get(D.ns, node);
	ck_assert(n->drained);
	ck_assert_msg(strstr(n->drain_reason, "did not stop") != NULL,
	    "reason %s", n->drain_reason);
	/* The waiting job gave its nodes back without launching; it
	 * cannot fit on the 3 left, a 3-node job can, at once. */
	job = domain_job(&D, next);
	ck_assert_int_eq(job->state, JOB_PENDING);
	ck_assert_uint_eq(job->nplace, 0);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, next, mark), 0);
	small = domain_submit(&D, "bob", 3, 0, NULL, NULL, &err);
	domain_pass(&D);
	job = domain_job(&D, small);
	ck_assert_uint_eq(job->nplace, 3);
	ck_assert_ptr_null(job_node_placement(job, node));
	ck_assert_uint_eq(domain_count(&D, DOMAIN_LAUNCH, small, mark), 3);
}
END_TEST

static Suite *
cluster_suite(void)
{
	Suite *s = suite_create("cluster");
	TCase *tc = tcase_create("gangs");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_gang_all_or_nothing);
	tcase_add_test(tc, test_restart_waits_for_old_tasks);
	tcase_add_test(tc, test_heartbeat_ends_stopping);
	tcase_add_test(tc, test_unkillable_drains_node);
	tcase_add_test(tc, test_failed_rank_stops_gang);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(cluster_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
