/* Suspect nodes (daemon/controller/domain/suspect.c, cluster_suspect.c) in
 * virtual time on the real domain (tests/domain/domain.h): early
 * failures of different jobs that then run fine elsewhere drain the
 * node they failed on, a job failing everywhere drains nothing,
 * hardware failures across a resume (lemons), the sliding window,
 * exemption, resume, placement of restarts, and a controller restart. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/recovery.h"
#include "daemon/controller/domain/suspect.h"
#include "daemon/controller/store/store.h"
#include "tests/domain/domain.h"

#define EXIT(code) ((code) << 8)
/* The early-fail window of these tests: short, so that a run outlasts
 * it without the nodes' heartbeats being overdue (10 s). */
#define WINDOW_MS 5000

static struct domain D;
static const struct peer admin = { "root", ROLE_ADMIN };
static struct suspect_opts SO;

static void
open_with(const struct suspect_opts *so)
{
	struct cerr err;

	ck_assert_msg(domain_open_suspect(&D, NULL, so, &err) == 0,
	    "domain_open: %s", err.text);
	jobs_set_early_fail_window(D.js, WINDOW_MS);
	ck_assert_msg(domain_add_nodes(&D, 4, 4, &err) == 0, "add nodes: %s",
	    err.text);
}

static void
setup(void)
{
	suspect_opts_default(&SO);
	SO.early_fail_ms = WINDOW_MS;
	open_with(&SO);
}

static void
teardown(void)
{
	domain_close(&D);
}

/* Heartbeats from every node listing the tasks of the running jobs
 * there (rank 0 of one-node jobs), then a tick. */
static void
beat(void)
{
	struct task_report r[8];
	const struct job *job;
	size_t i, k, n;
	uint64_t id;

	for (i = 0; i < D.nnodes; i++) {
		if (D.nodes[i].conn_id == 0)
			continue;
		n = 0;
		for (id = 1; id < 64 && n < 8; id++) {
			job = domain_job(&D, id);
			if (job == NULL || job->state != JOB_RUNNING)
				continue;
			for (k = 0; k < job->nplace; k++)
				if (strcmp(job->place[k].node,
				    D.nodes[i].name) == 0) {
					memset(&r[n], 0, sizeof(r[n]));
					r[n].job_id = id;
					r[n].restart = job->attempt;
					r[n].rank = (unsigned)k;
					r[n++].running = true;
				}
		}
		domain_heartbeat(&D, D.nodes[i].name, r, n);
	}
	domain_tick(&D);
}

/* Time passes in 2 s steps with heartbeats. */
static void
pass_time(int64_t ms)
{
	int64_t t;

	for (t = 0; t < ms; t += 2000) {
		domain_advance(&D, 2000);
		beat();
	}
}

static uint64_t
submit(const char *user, unsigned nodes, int max_restarts)
{
	struct domain_spec o = { .max_restarts = max_restarts };
	struct cerr err;
	uint64_t id;

	id = domain_submit(&D, user, nodes, 4, domain_spec_apply, &o, &err);
	ck_assert_msg(id != 0, "submit: %s", err.text);
	return id;
}

/* Start what waits (the old tasks gone), every launch answered. */
static void
settle(void)
{
	domain_advance(&D, 1000);
	domain_settle(&D);
	beat();
}

static const char *
node_of(uint64_t id)
{
	const struct job *job = domain_job(&D, id);

	ck_assert_int_eq(job->state, JOB_RUNNING);
	return job->place[0].node;
}

/* Rank 0 of job id fails 1 s into its run, on the node it runs on;
 * returns that node (static). */
static const char *
fail_early(uint64_t id)
{
	static char node[PEER_NAME_MAX + 1];
	const struct job *job = domain_job(&D, id);
	struct cerr err;

	snprintf(node, sizeof(node), "%s", node_of(id));
	domain_advance(&D, 1000);
	ck_assert_int_eq(domain_exit(&D, node, id, job->attempt, 0, EXIT(1),
	    &err), 0);
	/* The back-off of early failures: 1 s, 2 s, 4 s, ... */
	domain_advance(&D, 8000);
	beat();
	settle();
	return node;
}

static void
complete(uint64_t id)
{
	const struct job *job = domain_job(&D, id);
	struct cerr err;

	domain_advance(&D, 1000);
	ck_assert_int_eq(domain_exit(&D, node_of(id), id, job->attempt, 0, 0,
	    &err), 0);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_COMPLETED);
	settle();
}

static const struct node *
node(const char *name)
{
	return nodes_get(D.ns, name);
}

static uint32_t
score(const char *name)
{
	return suspect_score(D.sus, name, D.now);
}

/* A job of user that fails early on the node it lands on and then
 * completes elsewhere; the node it failed on. */
static const char *
black_hole_job(const char *user, uint64_t *idp)
{
	static char bad[PEER_NAME_MAX + 1];
	uint64_t id = submit(user, 1, 3);

	settle();
	snprintf(bad, sizeof(bad), "%s", fail_early(id));
	ck_assert_str_ne(node_of(id), bad);
	complete(id);
	if (idp != NULL)
		*idp = id;
	return bad;
}

/* ---- Black holes ------------------------------------------------------ */

/* Three distinct jobs (two users) fail early on the always-free node
 * and complete elsewhere: it is drained, the reason naming them. */
START_TEST(test_three_jobs_drain)
{
	uint64_t a, b, c;
	char want[32];
	const char *bad;

	bad = black_hole_job("alice", &a);
	ck_assert_str_eq(bad, "node01");
	ck_assert_uint_eq(score("node01"), 1);
	ck_assert(!node("node01")->drained);
	ck_assert_str_eq(black_hole_job("bob", &b), "node01");
	ck_assert(!node("node01")->drained);
	ck_assert_uint_eq(score("node01"), 2);
	ck_assert_str_eq(black_hole_job("alice", &c), "node01");
	ck_assert(node("node01")->drained);
	ck_assert_str_eq(node("node01")->drain_actor, SUSPECT_ACTOR);
	ck_assert(strncmp(node("node01")->drain_reason, SUSPECT_PREFIX,
	    strlen(SUSPECT_PREFIX)) == 0);
	snprintf(want, sizeof(want), "job %llu (alice)", (unsigned long long)a);
	ck_assert_ptr_nonnull(strstr(node("node01")->drain_reason, want));
	snprintf(want, sizeof(want), "job %llu (bob)", (unsigned long long)b);
	ck_assert_ptr_nonnull(strstr(node("node01")->drain_reason, want));
	snprintf(want, sizeof(want), "job %llu (alice)", (unsigned long long)c);
	ck_assert_ptr_nonnull(strstr(node("node01")->drain_reason, want));
	ck_assert_uint_eq(score("node01"), 3);
	ck_assert_uint_eq(suspect_crossings(D.sus), 1);
	/* The nodes the jobs ran fine on are not suspected. */
	ck_assert_uint_eq(score("node02"), 0);
	ck_assert(!node("node02")->drained);
}
END_TEST

/* Three jobs of one user that fail their first try (wherever they land)
 * and then run: evidence, but no drain; one more user's makes it. A
 * tenant alone can never drain a node, by mistake or on purpose. */
START_TEST(test_one_user_never_drains)
{
	ck_assert_str_eq(black_hole_job("alice", NULL), "node01");
	ck_assert_str_eq(black_hole_job("alice", NULL), "node01");
	ck_assert_str_eq(black_hole_job("alice", NULL), "node01");
	ck_assert_str_eq(black_hole_job("alice", NULL), "node01");
	ck_assert_uint_eq(score("node01"), 4);
	ck_assert(!node("node01")->drained);
	ck_assert_str_eq(black_hole_job("bob", NULL), "node01");
	ck_assert(node("node01")->drained);
}
END_TEST

/* One job failing early on three nodes and then running fine on a
 * fourth: a point against each, no drain. */
START_TEST(test_one_job_three_nodes)
{
	uint64_t id = submit("alice", 1, 5);
	char seen[3][PEER_NAME_MAX + 1];
	int i;

	settle();
	for (i = 0; i < 3; i++)
		snprintf(seen[i], sizeof(seen[i]), "%s", fail_early(id));
	ck_assert_str_ne(seen[0], seen[1]);
	ck_assert_str_ne(seen[1], seen[2]);
	ck_assert_str_ne(seen[0], seen[2]);
	complete(id);
	for (i = 0; i < 3; i++) {
		ck_assert_uint_eq(score(seen[i]), 1);
		ck_assert(!node(seen[i])->drained);
	}
	ck_assert_uint_eq(suspect_crossings(D.sus), 0);
}
END_TEST

/* A user's job that fails everywhere (three of them) is the user's bug:
 * nothing counts against any node. */
START_TEST(test_fails_everywhere)
{
	uint64_t id;
	size_t i;
	int k;

	for (k = 0; k < 3; k++) {
		id = submit("carol", 1, 3);
		settle();
		while (domain_job(&D, id)->state == JOB_RUNNING)
			fail_early(id);
		ck_assert_int_eq(domain_job(&D, id)->state, JOB_FAILED);
	}
	pass_time(10000);
	for (i = 0; i < D.nnodes; i++) {
		ck_assert_uint_eq(score(D.nodes[i].name), 0);
		ck_assert(!node(D.nodes[i].name)->drained);
		ck_assert(!suspect_recent(D.sus, D.nodes[i].name, D.now) ||
		    suspect_get(D.sus, D.nodes[i].name)->nev == 0);
	}
	ck_assert_uint_eq(suspect_crossings(D.sus), 0);
}
END_TEST

/* An early failure confirmed by the job outlasting the window on
 * another node, without completing. */
START_TEST(test_outlasting_the_window)
{
	uint64_t id = submit("alice", 1, 3);
	const char *bad;

	settle();
	bad = fail_early(id);
	ck_assert_uint_eq(score(bad), 0);
	ck_assert(suspect_failed_here(D.sus, id, bad));
	pass_time(WINDOW_MS + 2000);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	ck_assert_uint_eq(score(bad), 1);
	ck_assert(!suspect_failed_here(D.sus, id, bad));
}
END_TEST

/* The window slides: two confirmed jobs that age out of early_period do
 * not add up with a third. */
START_TEST(test_window_slides)
{
	domain_close(&D);
	suspect_opts_default(&SO);
	SO.early_fail_ms = WINDOW_MS;
	SO.early_period_ms = 60000;
	open_with(&SO);
	ck_assert_str_eq(black_hole_job("alice", NULL), "node01");
	ck_assert_str_eq(black_hole_job("bob", NULL), "node01");
	ck_assert_uint_eq(score("node01"), 2);
	pass_time(62000);
	ck_assert_uint_eq(score("node01"), 0);
	ck_assert_str_eq(black_hole_job("alice", NULL), "node01");
	ck_assert(!node("node01")->drained);
	ck_assert_uint_eq(score("node01"), 1);
	ck_assert_str_eq(black_hole_job("bob", NULL), "node01");
	ck_assert_str_eq(black_hole_job("dave", NULL), "node01");
	ck_assert(node("node01")->drained);
}
END_TEST

/* ---- Lemons ----------------------------------------------------------- */

/* A health failure drains the node; repaired and resumed, it fails
 * again within days: drained as a suspect, the reason naming both. */
START_TEST(test_hardware_after_resume)
{
	struct cerr err;

	domain_health(&D, "node03", HEALTH_FAILED, -1, "xid=79 fell off bus");
	ck_assert(node("node03")->drained);
	ck_assert_str_eq(node("node03")->drain_actor, "health");
	ck_assert_uint_eq(score("node03"), 1);
	pass_time(4000);
	domain_health(&D, "node03", HEALTH_OK, -1, "");
	ck_assert_int_eq(recovery_resume(D.cl, &admin, "node03", D.now, &err),
	    0);
	domain_commit(&D);
	ck_assert(!node("node03")->drained);
	/* The score counts since the resume; the lemon rule looks across. */
	ck_assert_uint_eq(score("node03"), 0);
	pass_time(30 * 60 * 1000);
	domain_health(&D, "node03", HEALTH_FAILED, -1, "xid=79 again");
	ck_assert(node("node03")->drained);
	ck_assert_str_eq(node("node03")->drain_actor, SUSPECT_ACTOR);
	ck_assert(node("node03")->drain_health);
	ck_assert_ptr_nonnull(strstr(node("node03")->drain_reason,
	    "2 hardware failures within 72 h across a resume"));
	ck_assert_ptr_nonnull(strstr(node("node03")->drain_reason,
	    "xid=79 fell off bus"));
	ck_assert_uint_eq(suspect_crossings(D.sus), 1);
}
END_TEST

/* Slow ranks named on a node raise its score and make it recent for
 * placement, however many: slowness never drains (a rank can be slow
 * for its own job's reasons), and a resume clears it. */
START_TEST(test_slow_scores_never_drains)
{
	char reason[SUSPECT_REASON_MAX + 1];
	struct cerr err;
	int k;

	for (k = 0; k < 5; k++) {
		ck_assert_int_eq(suspect_hardware(D.sus, "node02",
		    SUSPECT_SLOW, 7, "rank 3 2.0× its peers", D.now, reason,
		    sizeof(reason), &err), 0);
		pass_time(60 * 1000);
	}
	ck_assert_uint_eq(score("node02"), 5);
	ck_assert(suspect_recent(D.sus, "node02", D.now));
	ck_assert(!node("node02")->drained);
	ck_assert_uint_eq(suspect_crossings(D.sus), 0);
	/* One hardware failure on top: still below the lemon rule's 2. */
	domain_health(&D, "node02", HEALTH_FAILED, -1, "xid=79");
	ck_assert_str_eq(node("node02")->drain_actor, "health");
	ck_assert_uint_eq(suspect_crossings(D.sus), 0);
	pass_time(4000);
	domain_health(&D, "node02", HEALTH_OK, -1, "");
	ck_assert_int_eq(recovery_resume(D.cl, &admin, "node02", D.now, &err),
	    0);
	domain_commit(&D);
	ck_assert_uint_eq(score("node02"), 0);
	ck_assert(!suspect_recent(D.sus, "node02", D.now));
}
END_TEST

/* A lemon's failures before a resume still count for the lemon rule;
 * a slow rank named there after the resume does not drain it, and slow
 * ranks, however many, never push a failure out of the node's record:
 * its next failure is the second and drains it. */
START_TEST(test_slow_never_drains_a_resumed_lemon)
{
	char reason[SUSPECT_REASON_MAX + 1];
	struct cerr err;
	int k;

	ck_assert_int_eq(suspect_hardware(D.sus, "node03", SUSPECT_XID, 0,
	    "xid=79", D.now, reason, sizeof(reason), &err), 0);
	for (k = 0; k < 2 * SUSPECT_EVIDENCE_MAX; k++)
		ck_assert_int_eq(suspect_hardware(D.sus, "node03",
		    SUSPECT_SLOW, (uint64_t)k + 1, "rank 0 2.0× its peers",
		    D.now, reason, sizeof(reason), &err), 0);
	pass_time(30 * 60 * 1000);
	ck_assert_int_eq(suspect_hardware(D.sus, "node03", SUSPECT_XID, 0,
	    "xid=79 again", D.now, reason, sizeof(reason), &err), 1);
	ck_assert_ptr_nonnull(strstr(reason, "2 hardware failures"));
	/* Repaired and resumed: both failures stay for the lemon rule. */
	ck_assert_int_eq(suspect_resume(D.sus, "node03", D.now, &err), 0);
	pass_time(1000);
	ck_assert_int_eq(suspect_hardware(D.sus, "node03", SUSPECT_SLOW, 99,
	    "rank 1 1.8× its peers", D.now, reason, sizeof(reason), &err), 0);
}
END_TEST

/* One incident seen twice (a FAILED verdict, then the node DOWN) is one
 * failure, and failures older than the period do not count. */
START_TEST(test_hardware_incidents_and_period)
{
	domain_close(&D);
	suspect_opts_default(&SO);
	SO.early_fail_ms = WINDOW_MS;
	SO.hardware_period_ms = 3600 * 1000;
	open_with(&SO);
	domain_health(&D, "node02", HEALTH_FAILED, 1, "gpu 1 ecc");
	domain_disconnect(&D, "node02");
	pass_time(20000);
	ck_assert_int_eq(node("node02")->state, NODE_DOWN);
	ck_assert(!node("node02")->drained);
	ck_assert_uint_eq(score("node02"), 1);
	ck_assert_uint_eq(suspect_get(D.sus, "node02")->nev, 2);
	ck_assert_uint_eq(suspect_crossings(D.sus), 0);
}
END_TEST

/* ---- Admin ------------------------------------------------------------ */

/* An exempt node is scored but never drained; resume --no-exempt. */
START_TEST(test_exempt)
{
	struct cerr err;

	ck_assert_int_eq(suspect_exempt(D.sus, "node01", true, D.now, &err),
	    0);
	domain_commit(&D);
	ck_assert_str_eq(black_hole_job("alice", NULL), "node01");
	ck_assert_str_eq(black_hole_job("bob", NULL), "node01");
	ck_assert_str_eq(black_hole_job("alice", NULL), "node01");
	ck_assert(!node("node01")->drained);
	ck_assert_uint_eq(score("node01"), 3);
	ck_assert(suspect_get(D.sus, "node01")->exempt);
	ck_assert_uint_eq(suspect_crossings(D.sus), 0);
	/* Placement still sees its failures for restarts. */
	ck_assert(suspect_recent(D.sus, "node01", D.now));
	ck_assert_int_eq(suspect_exempt(D.sus, "node01", false, D.now, &err),
	    0);
	ck_assert(!suspect_get(D.sus, "node01")->exempt);
}
END_TEST

/* cohort resume clears the suspicion: undrained, score 0, the reason
 * gone; new evidence starts from nothing. */
START_TEST(test_resume_clears)
{
	struct cerr err;

	black_hole_job("alice", NULL);
	black_hole_job("bob", NULL);
	black_hole_job("alice", NULL);
	ck_assert(node("node01")->drained);
	ck_assert_str_ne(suspect_get(D.sus, "node01")->reason, "");
	ck_assert_int_eq(recovery_resume(D.cl, &admin, "node01", D.now, &err),
	    0);
	domain_commit(&D);
	ck_assert(!node("node01")->drained);
	ck_assert_uint_eq(score("node01"), 0);
	ck_assert_str_eq(suspect_get(D.sus, "node01")->reason, "");
	ck_assert(!suspect_recent(D.sus, "node01", D.now));
	ck_assert_str_eq(black_hole_job("alice", NULL), "node01");
	ck_assert(!node("node01")->drained);
	ck_assert_uint_eq(score("node01"), 1);
}
END_TEST

/* ---- Placement -------------------------------------------------------- */

/* A restart after an early failure does not keep the node it failed on,
 * and of the free nodes takes one without recent failures, where a
 * fresh small job takes the node order as before. */
START_TEST(test_restart_prefers_clean)
{
	uint64_t hw, id;

	/* node01 and node02 have failures on record; node03 none. */
	domain_health(&D, "node02", HEALTH_FAILED, 2, "gpu 2 ecc");
	domain_health(&D, "node02", HEALTH_OK, -1, "");
	ck_assert(suspect_recent(D.sus, "node02", D.now));
	id = submit("alice", 1, 3);
	settle();
	ck_assert_str_eq(node_of(id), "node01");
	ck_assert_str_eq(fail_early(id), "node01");
	/* Not node01 (its own failure), not node02 (recent failure). */
	ck_assert_str_eq(node_of(id), "node03");
	/* A fresh small job is placed as before: node01 first. */
	hw = submit("bob", 1, 3);
	settle();
	ck_assert_str_eq(node_of(hw), "node01");
}
END_TEST

struct ev_count {
	const char *kind;
	unsigned n;
};

static int
ev_count_cb(const struct store_event *ev, void *arg)
{
	struct ev_count *c = arg;

	c->n += strcmp(ev->kind, c->kind) == 0;
	return 0;
}

/* The node a restart leaves out (its early failure) is allowed again
 * when every other node is busy: the restart runs there rather than
 * wait, and says so. */
START_TEST(test_restart_takes_the_node_back_rather_than_wait)
{
	uint64_t id, other[3];
	struct ev_count c = { "avoid-lifted", 0 };
	struct cerr err;
	size_t i;

	id = submit("alice", 1, 3);
	settle();
	ck_assert_str_eq(node_of(id), "node01");
	for (i = 0; i < 3; i++)
		other[i] = submit("bob", 1, 3);
	settle();
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(domain_job(&D, other[i])->state, JOB_RUNNING);
	ck_assert_str_eq(fail_early(id), "node01");
	ck_assert_str_eq(node_of(id), "node01");
	ck_assert_int_eq(store_events_list(D.st, 0, id, NULL, "avoid-lifted",
	    0, 0, ev_count_cb, &c, &err), 0);
	ck_assert_uint_eq(c.n, 1);
}
END_TEST

/* Large gangs take suspect nodes last too. */
START_TEST(test_large_gang_prefers_clean)
{
	uint64_t id;

	domain_close(&D);
	suspect_opts_default(&SO);
	SO.early_fail_ms = WINDOW_MS;
	SO.large_gang_nodes = 2;
	open_with(&SO);
	domain_health(&D, "node01", HEALTH_FAILED, 0, "gpu 0 ecc");
	domain_health(&D, "node01", HEALTH_OK, -1, "");
	id = submit("alice", 2, 3);
	settle();
	ck_assert_ptr_null(job_node_placement(domain_job(&D, id), "node01"));
}
END_TEST

/* A 2-node job whose rank 0 fails early in every run, wherever it is,
 * under the lowest thresholds (one job, one user drains): its restarts
 * move (placement and the restart rule for repeated early failures),
 * and still no node is drained or scored: its failures were never
 * confirmed by a run that went fine. */
START_TEST(test_gang_fails_everywhere_lowest_thresholds)
{
	uint64_t id;
	size_t i;

	domain_close(&D);
	suspect_opts_default(&SO);
	SO.early_fail_ms = WINDOW_MS;
	SO.early_jobs = 1;
	SO.early_users = 1;
	open_with(&SO);
	id = submit("carol", 2, 3);
	settle();
	while (domain_job(&D, id)->state == JOB_RUNNING) {
		fail_early(id);
		for (i = 0; i < D.nnodes; i++)
			ck_assert(!node(D.nodes[i].name)->drained);
	}
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_FAILED);
	pass_time(10000);
	for (i = 0; i < D.nnodes; i++) {
		ck_assert_uint_eq(score(D.nodes[i].name), 0);
		ck_assert(!node(D.nodes[i].name)->drained);
	}
	ck_assert_uint_eq(suspect_crossings(D.sus), 0);
}
END_TEST

/* ---- Durability ------------------------------------------------------- */

/* Evidence, waiting early failures and exemptions survive a controller
 * restart; a waiting one is still confirmed after it. */
START_TEST(test_survives_restart)
{
	struct cerr err;
	uint64_t id;
	const char *bad;

	black_hole_job("alice", NULL);
	black_hole_job("bob", NULL);
	ck_assert_int_eq(suspect_exempt(D.sus, "node04", true, D.now, &err),
	    0);
	id = submit("alice", 1, 3);
	settle();
	bad = fail_early(id);
	ck_assert_str_eq(bad, "node01");
	domain_commit(&D);
	ck_assert_int_eq(domain_restart(&D, &err), 0);
	ck_assert_uint_eq(score("node01"), 2);
	ck_assert(suspect_failed_here(D.sus, id, "node01"));
	ck_assert(suspect_get(D.sus, "node04")->exempt);
	/* The job completes elsewhere after the restart: the third. */
	ck_assert_uint_eq(domain_reconnect(&D, "node01", NULL, 0, &err) != 0,
	    1);
	ck_assert_uint_eq(domain_reconnect(&D, "node02", NULL, 0, &err) != 0,
	    1);
	ck_assert_uint_eq(domain_reconnect(&D, "node03", NULL, 0, &err) != 0,
	    1);
	ck_assert_uint_eq(domain_reconnect(&D, "node04", NULL, 0, &err) != 0,
	    1);
	settle();
	if (domain_job(&D, id)->state != JOB_RUNNING)
		settle();
	complete(id);
	ck_assert(node("node01")->drained);
	ck_assert(strncmp(node("node01")->drain_reason, SUSPECT_PREFIX,
	    strlen(SUSPECT_PREFIX)) == 0);
}
END_TEST

static Suite *
suspect_suite(void)
{
	Suite *s = suite_create("suspect");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_three_jobs_drain);
	tcase_add_test(tc, test_one_user_never_drains);
	tcase_add_test(tc, test_one_job_three_nodes);
	tcase_add_test(tc, test_fails_everywhere);
	tcase_add_test(tc, test_outlasting_the_window);
	tcase_add_test(tc, test_window_slides);
	tcase_add_test(tc, test_hardware_after_resume);
	tcase_add_test(tc, test_hardware_incidents_and_period);
	tcase_add_test(tc, test_slow_scores_never_drains);
	tcase_add_test(tc, test_slow_never_drains_a_resumed_lemon);
	tcase_add_test(tc, test_exempt);
	tcase_add_test(tc, test_resume_clears);
	tcase_add_test(tc, test_restart_prefers_clean);
	tcase_add_test(tc, test_restart_takes_the_node_back_rather_than_wait);
	tcase_add_test(tc, test_large_gang_prefers_clean);
	tcase_add_test(tc, test_gang_fails_everywhere_lowest_thresholds);
	tcase_add_test(tc, test_survives_restart);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(suspect_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
