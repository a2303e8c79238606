/* Interactive allocations (daemon/controller/domain/alloc.c) in virtual time:
 * salloc's keepalives and the grace after which the controller ends the
 * job, a job that is not interactive never ended by it, the release that
 * ends it as the shell did, and nobody but the owner using it. On the
 * real domain with an in-memory store (tests/domain/domain.h). */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/alloc.h"
#include "daemon/controller/domain/cluster.h"
#include "daemon/controller/domain/jobs.h"
#include "tests/domain/domain.h"

#define GRACE_MS 60000

static struct domain D;
static const struct peer alice = { "alice", ROLE_USER };
static const struct peer bob = { "bob", ROLE_USER };
static const struct peer root = { "root", ROLE_ADMIN };

static void
setup(void)
{
	/* Nodes never time out here: only the grace ends anything. */
	struct cluster_opts o = {
		.node_timeout_ms = 24LL * 3600 * 1000,
		.heartbeat_ms = 2000,
		.stop_timeout_ms = 60000,
		.accept_unknown_nodes = true,
		.interactive_grace_ms = GRACE_MS,
	};
	struct cerr err;

	ck_assert_msg(domain_open(&D, &o, &err) == 0, "domain_open: %s",
	    err.text);
	ck_assert(domain_add_node(&D, "node01", 4, false, &err) != 0);
	ck_assert(domain_add_node(&D, "node02", 4, false, &err) != 0);
}

static void
teardown(void)
{
	domain_close(&D);
}

static void
alloc_spec(struct job_spec *spec, void *arg)
{
	spec->batch = true;
	spec->interactive = *(bool *)arg;
	spec->max_restarts = 0;
	spec->time_limit_s = 7 * 24 * 3600;
}

/* A running job of alice's on both nodes: salloc's or --no-shell's. */
static uint64_t
run_alloc(bool interactive)
{
	struct cerr err;
	uint64_t id;

	id = domain_submit(&D, "alice", 2, 1, alloc_spec, &interactive, &err);
	ck_assert_msg(id != 0, "submit: %s", err.text);
	domain_pass(&D);
	domain_answer_launches(&D, NULL);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	return id;
}

static void
keepalive(uint64_t id)
{
	const struct job *job;
	struct cerr err;

	ck_assert_msg(alloc_keepalive(D.cl, &alice, id, true, D.now, &job,
	    &err) == 0, "keepalive: %s", err.text);
	domain_commit(&D);
}

/* Not heard of for the grace: TIMEOUT, its gang stopped; a moment
 * before, still running. */
START_TEST(test_grace_ends)
{
	uint64_t id = run_alloc(true);
	size_t mark;

	keepalive(id);
	domain_advance(&D, GRACE_MS - 1);
	domain_tick(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	mark = D.ncmds;
	domain_advance(&D, 1);
	domain_tick(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_TIMEOUT);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, id, mark), 2);
}
END_TEST

/* Kept alive, it runs on for many graces. */
START_TEST(test_kept_alive)
{
	uint64_t id = run_alloc(true);
	int i;

	for (i = 0; i < 20; i++) {
		domain_advance(&D, GRACE_MS / 2);
		keepalive(id);
		domain_tick(&D);
		ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	}
}
END_TEST

/* Never heard of at all (a controller that started since): the grace
 * counts from the first tick that saw it run. */
START_TEST(test_grace_from_first_tick)
{
	uint64_t id = run_alloc(true);

	domain_advance(&D, 10 * GRACE_MS);
	domain_tick(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	domain_advance(&D, GRACE_MS);
	domain_tick(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_TIMEOUT);
}
END_TEST

/* salloc --no-shell's job is no interactive one: never ended by it. */
START_TEST(test_not_interactive_kept)
{
	uint64_t id = run_alloc(false);
	int i;

	for (i = 0; i < 10; i++) {
		domain_advance(&D, GRACE_MS);
		domain_tick(&D);
	}
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
}
END_TEST

/* The shell's exit 0: COMPLETED, every node told to stop. */
START_TEST(test_release_completed)
{
	uint64_t id = run_alloc(true);
	enum job_state st;
	struct cerr err;
	size_t mark = D.ncmds;

	ck_assert_int_eq(alloc_release(D.cl, &alice, id, 0, D.now, &st,
	    &err), 0);
	domain_commit(&D);
	ck_assert_int_eq(st, JOB_COMPLETED);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_COMPLETED);
	ck_assert_uint_eq(domain_count(&D, DOMAIN_STOP, id, mark), 2);
	/* Released twice (a retry): as it is. */
	ck_assert_int_eq(alloc_release(D.cl, &alice, id, 5, D.now, &st,
	    &err), 0);
	ck_assert_int_eq(st, JOB_COMPLETED);
}
END_TEST

/* Any other code: FAILED with it, not restarted. */
START_TEST(test_release_failed)
{
	uint64_t id = run_alloc(true);
	enum job_state st;
	struct cerr err;

	ck_assert_int_eq(alloc_release(D.cl, &alice, id, 3, D.now, &st,
	    &err), 0);
	domain_commit(&D);
	ck_assert_int_eq(st, JOB_FAILED);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_FAILED);
	ck_assert(domain_job(&D, id)->has_exit);
	ck_assert_int_eq(domain_job(&D, id)->exit_code, 3);
	domain_advance(&D, 10 * GRACE_MS);
	domain_pass(&D);
	domain_tick(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_FAILED);
}
END_TEST

/* Given up while pending: cancelled. */
START_TEST(test_release_pending)
{
	bool interactive = true;
	enum job_state st;
	struct cerr err;
	uint64_t id;

	id = domain_submit(&D, "alice", 3, 1, alloc_spec, &interactive, &err);
	ck_assert(id != 0);
	domain_pass(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_PENDING);
	ck_assert_int_eq(alloc_release(D.cl, &alice, id, 1, D.now, &st,
	    &err), 0);
	domain_commit(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_CANCELLED);
}
END_TEST

/* Only the owner: not another user, not an admin; nothing changes. The
 * credential's request needs the job running. */
START_TEST(test_owner_only)
{
	uint64_t id = run_alloc(true);
	const struct job *job;
	enum job_state st;
	struct cerr err;

	cerr_clear(&err);
	ck_assert_int_eq(alloc_keepalive(D.cl, &bob, id, true, D.now, &job,
	    &err), -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	cerr_clear(&err);
	ck_assert_int_eq(alloc_release(D.cl, &bob, id, 0, D.now, &st, &err),
	    -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	cerr_clear(&err);
	ck_assert_int_eq(alloc_release(D.cl, &root, id, 0, D.now, &st, &err),
	    -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	cerr_clear(&err);
	ck_assert_int_eq(alloc_job(D.cl, &alice, 999, false, &job, &err), -1);
	ck_assert_int_eq(err.code, ERR_NOT_FOUND);
	domain_commit(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	/* bob's keepalives keep nothing alive. */
	domain_advance(&D, GRACE_MS);
	domain_tick(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_RUNNING);
	domain_advance(&D, GRACE_MS);
	(void)alloc_keepalive(D.cl, &bob, id, true, D.now, &job, &err);
	domain_tick(&D);
	ck_assert_int_eq(domain_job(&D, id)->state, JOB_TIMEOUT);
	cerr_clear(&err);
	ck_assert_int_eq(alloc_keepalive(D.cl, &alice, id, true, D.now, &job,
	    &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
}
END_TEST

/* An interactive spec must be a batch job that is never restarted. */
START_TEST(test_spec_checked)
{
	struct job_spec s;
	struct cerr err;
	char *argv[] = { "/bin/true", NULL };

	job_spec_init(&s);
	ck_assert_int_eq(strv_append(&s.argv, &s.argc, argv[0]), 0);
	s.interactive = true;
	s.max_restarts = 0;
	ck_assert_int_eq(job_spec_validate(&s, ROLE_USER, NULL, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	job_spec_clear(&s);
}
END_TEST

static Suite *
alloc_suite(void)
{
	Suite *s = suite_create("alloc");
	TCase *tc = tcase_create("alloc");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_grace_ends);
	tcase_add_test(tc, test_kept_alive);
	tcase_add_test(tc, test_grace_from_first_tick);
	tcase_add_test(tc, test_not_interactive_kept);
	tcase_add_test(tc, test_release_completed);
	tcase_add_test(tc, test_release_failed);
	tcase_add_test(tc, test_release_pending);
	tcase_add_test(tc, test_owner_only);
	tcase_add_test(tc, test_spec_checked);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(alloc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
