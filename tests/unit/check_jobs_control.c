/* daemon/controller/domain/jobs_control.c against an in-memory store
 * (ctl_fixture.h): holds and who may release them, cancel filters, the
 * requeue check, updates of pending and running jobs for users and
 * admins (stored, and refused with the option named), and the back-off
 * of early failures in virtual time. In the controller domain
 * (tests/domain): a held job waits on free nodes and runs once released,
 * on the nodes an update gave it; a requeue checkpoints, stops and
 * resumes the job, no restart counted. */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/ctl_fixture.h"
#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/queues.h"
#include "daemon/controller/store/store_int.h"
#include "daemon/controller/store/txq.h"
#include "tests/domain/domain.h"

static const struct peer alice = { .name = "alice", .role = ROLE_USER };
static const struct peer bob = { .name = "bob", .role = ROLE_USER };
static const struct peer root = { .name = "root", .role = ROLE_ADMIN };

static uint64_t
pending(struct ctl *f, const char *user, int64_t now)
{
	struct job_spec spec;

	ctl_spec(&spec, 1, 1, 2);
	return ctl_submit(f, user, &spec, now);
}

START_TEST(test_hold_roles)
{
	struct ctl f;
	struct cerr err;
	uint64_t id;

	ctl_setup(&f, NULL);
	id = pending(&f, "alice", 1000);
	/* Another user may not hold it. */
	ck_assert_int_eq(jobs_hold(f.js, &bob, id, false, 2000, &err), -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	ck_assert_int_eq(jobs_get(f.js, id)->hold, JOB_HOLD_NONE);
	/* Its owner: JobHeldUser, once (a second hold changes nothing). */
	ck_assert_int_eq(jobs_hold(f.js, &alice, id, false, 2000, &err), 1);
	ck_assert_int_eq(jobs_get(f.js, id)->hold, JOB_HOLD_USER);
	ck_assert_int_eq(jobs_hold(f.js, &alice, id, false, 2000, &err), 0);
	/* An admin's hold is stronger, and the user's does not weaken it. */
	ck_assert_int_eq(jobs_hold(f.js, &root, id, false, 3000, &err), 1);
	ck_assert_int_eq(jobs_get(f.js, id)->hold, JOB_HOLD_ADMIN);
	ck_assert_int_eq(jobs_hold(f.js, &alice, id, false, 3000, &err), 0);
	ck_assert_int_eq(jobs_get(f.js, id)->hold, JOB_HOLD_ADMIN);
	ctl_flush(&f);
	/* Only an admin releases an admin's hold. */
	ck_assert_int_eq(jobs_hold(f.js, &alice, id, true, 4000, &err), -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	ck_assert_ptr_nonnull(strstr(err.text, "only an admin"));
	ck_assert_int_eq(jobs_get(f.js, id)->hold, JOB_HOLD_ADMIN);
	ck_assert_int_eq(jobs_hold(f.js, &root, id, true, 4000, &err), 1);
	ck_assert_int_eq(jobs_get(f.js, id)->hold, JOB_HOLD_NONE);
	/* Not held: nothing to release. */
	ck_assert_int_eq(jobs_hold(f.js, &alice, id, true, 4000, &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	/* The owner releases their own hold. */
	ck_assert_int_eq(jobs_hold(f.js, &alice, id, false, 5000, &err), 1);
	ck_assert_int_eq(jobs_hold(f.js, &alice, id, true, 5000, &err), 1);
	ctl_flush(&f);
	/* Events with the actor, and the hold stored. */
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM events WHERE "
	    "kind = 'hold'"), 3);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM events WHERE "
	    "kind = 'release' AND actor = 'root'"), 1);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM events WHERE "
	    "kind = 'hold' AND actor = 'root' AND detail = 'JobHeldAdmin'"),
	    1);
	ck_assert_int_eq(jobs_hold(f.js, &root, id, false, 6000, &err), 1);
	ctl_flush(&f);
	ctl_reload(&f);
	ck_assert_int_eq(jobs_get(f.js, id)->hold, JOB_HOLD_ADMIN);
	ck_assert_int_eq(jobs_hold(f.js, &alice, 999, false, 6000, &err), -1);
	ck_assert_int_eq(err.code, ERR_NOT_FOUND);
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_hold_pending_only)
{
	struct ctl f;
	struct cerr err;
	uint64_t run, launching;

	ctl_setup(&f, NULL);
	run = ctl_job_on(&f, 1, 2, true, 1000);
	launching = ctl_job_on(&f, 1, 2, false, 1000);
	ck_assert_int_eq(jobs_hold(f.js, &alice, run, false, 2000, &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ck_assert_ptr_nonnull(strstr(err.text, "RUNNING"));
	/* PENDING but holding its nodes (launching): no longer pending. */
	ck_assert_int_eq(jobs_hold(f.js, &alice, launching, false, 2000,
	    &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ck_assert_ptr_nonnull(strstr(err.text, "starting"));
	ck_assert_int_eq(jobs_get(f.js, run)->hold, JOB_HOLD_NONE);
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_hold_write_fails)
{
	struct ctl f;
	struct cerr err;
	uint64_t id;

	ctl_setup(&f, NULL);
	id = pending(&f, "alice", 1000);
	ctl_flush(&f);
	ctl_fail_writes(&f, "events", "INSERT");
	ck_assert_int_eq(jobs_hold(f.js, &alice, id, false, 2000, &err), -1);
	ck_assert_int_eq(jobs_get(f.js, id)->hold, JOB_HOLD_NONE);
	ctl_heal(&f);
	ctl_flush(&f);
	ctl_reload(&f);
	ck_assert_int_eq(jobs_get(f.js, id)->hold, JOB_HOLD_NONE);
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_update_pending)
{
	struct job_update u = { 0 };
	struct ctl f;
	struct cerr err;
	char ch[256];
	uint64_t id;

	ctl_setup(&f, NULL);
	id = pending(&f, "alice", 1000);
	ctl_flush(&f);
	u.has_nodes = true;
	u.nodes_min = u.nodes_max = 3;
	u.name = "renamed";
	u.has_time = true;
	u.time_limit_s = 7200;
	ck_assert_msg(jobs_update(f.js, &alice, id, &u, 2000, ch, sizeof(ch),
	    &err) == 0, "%s", err.text);
	ck_assert_ptr_nonnull(strstr(ch, "nodes 1:1->3:3"));
	ck_assert_ptr_nonnull(strstr(ch, "time_limit_s 0->7200"));
	ck_assert_ptr_nonnull(strstr(ch, "->renamed"));
	ctl_flush(&f);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM events WHERE "
	    "kind = 'update' AND actor = 'alice' AND detail LIKE "
	    "'%nodes 1:1->3:3%'"), 1);
	/* Stored: a restarted controller sees the new spec. */
	ctl_reload(&f);
	ck_assert_uint_eq(jobs_get(f.js, id)->spec.nodes_min, 3);
	ck_assert_uint_eq(jobs_get(f.js, id)->spec.nodes_max, 3);
	ck_assert_uint_eq(jobs_get(f.js, id)->spec.time_limit_s, 7200);
	ck_assert_str_eq(jobs_get(f.js, id)->spec.name, "renamed");
	/* Unset fields stay: priority untouched above. */
	ck_assert_int_eq(jobs_get(f.js, id)->spec.priority,
	    JOB_DEFAULT_PRIORITY);
	/* Validated as a submit: the option is named, nothing changes. */
	memset(&u, 0, sizeof(u));
	u.has_nodes = true;
	u.nodes_min = 4;
	u.nodes_max = 2;
	ck_assert_int_eq(jobs_update(f.js, &alice, id, &u, 3000, ch,
	    sizeof(ch), &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.text, "--nodes"));
	ck_assert_uint_eq(jobs_get(f.js, id)->spec.nodes_min, 3);
	/* A user may not raise a priority above the default; an admin
	 * may. */
	memset(&u, 0, sizeof(u));
	u.has_priority = true;
	u.priority = 500;
	ck_assert_int_eq(jobs_update(f.js, &alice, id, &u, 3000, ch,
	    sizeof(ch), &err), -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	ck_assert_ptr_nonnull(strstr(err.text, "--priority"));
	ck_assert_int_eq(jobs_update(f.js, &bob, id, &u, 3000, ch,
	    sizeof(ch), &err), -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	ck_assert_int_eq(jobs_update(f.js, &root, id, &u, 3000, ch,
	    sizeof(ch), &err), 0);
	ck_assert_int_eq(jobs_get(f.js, id)->spec.priority, 500);
	/* --gpus-per-node 0 as the CLI sends it: CPU only, stored; by its
	 * user, the priority an admin raised is not judged again. */
	memset(&u, 0, sizeof(u));
	u.has_gpus_per_node = u.has_cpu_only = u.cpu_only = true;
	u.gpus_per_node = 0;
	ck_assert_msg(jobs_update(f.js, &alice, id, &u, 3000, ch, sizeof(ch),
	    &err) == 0, "%s", err.text);
	ck_assert_ptr_nonnull(strstr(ch, "cpu_only no->yes"));
	ctl_flush(&f);
	ctl_reload(&f);
	ck_assert(jobs_get(f.js, id)->spec.cpu_only);
	ck_assert_uint_eq(jobs_get(f.js, id)->spec.gpus_per_node, 0);
	memset(&u, 0, sizeof(u));
	u.has_priority = true;
	u.priority = 500;
	/* Nothing to change: no event. */
	ck_assert_int_eq(jobs_update(f.js, &root, id, &u, 3000, ch,
	    sizeof(ch), &err), 0);
	ck_assert_str_eq(ch, "");
	ctl_flush(&f);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM events WHERE "
	    "kind = 'update'"), 3);
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_update_running)
{
	struct job_update u = { 0 };
	struct ctl f;
	struct cerr err;
	char ch[256];
	uint64_t id;

	ctl_setup(&f, NULL);
	id = ctl_job_on(&f, 1, 2, true, 1000);
	/* Give it a limit first: any limit is lower than none. */
	u.has_time = true;
	u.time_limit_s = 3600;
	ck_assert_int_eq(jobs_update(f.js, &alice, id, &u, 2000, ch,
	    sizeof(ch), &err), 0);
	ck_assert_uint_eq(jobs_get(f.js, id)->spec.time_limit_s, 3600);
	/* Down: its user may. */
	u.time_limit_s = 600;
	ck_assert_int_eq(jobs_update(f.js, &alice, id, &u, 2000, ch,
	    sizeof(ch), &err), 0);
	ck_assert_uint_eq(jobs_get(f.js, id)->spec.time_limit_s, 600);
	/* Up: refused for its user, taken from an admin. */
	u.time_limit_s = 1200;
	ck_assert_int_eq(jobs_update(f.js, &alice, id, &u, 2000, ch,
	    sizeof(ch), &err), -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	ck_assert_ptr_nonnull(strstr(err.text, "--time"));
	ck_assert_uint_eq(jobs_get(f.js, id)->spec.time_limit_s, 600);
	u.time_limit_s = 0;
	ck_assert_int_eq(jobs_update(f.js, &alice, id, &u, 2000, ch,
	    sizeof(ch), &err), -1);
	u.time_limit_s = 1200;
	ck_assert_int_eq(jobs_update(f.js, &root, id, &u, 2000, ch,
	    sizeof(ch), &err), 0);
	ck_assert_uint_eq(jobs_get(f.js, id)->spec.time_limit_s, 1200);
	/* Priority: down for the user, up only for an admin. */
	memset(&u, 0, sizeof(u));
	u.has_priority = true;
	u.priority = 50;
	ck_assert_int_eq(jobs_update(f.js, &alice, id, &u, 2000, ch,
	    sizeof(ch), &err), 0);
	u.priority = 60;
	ck_assert_int_eq(jobs_update(f.js, &alice, id, &u, 2000, ch,
	    sizeof(ch), &err), -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	ck_assert_int_eq(jobs_update(f.js, &root, id, &u, 2000, ch,
	    sizeof(ch), &err), 0);
	ck_assert_int_eq(jobs_get(f.js, id)->spec.priority, 60);
	/* Anything else: only while pending, named. */
	memset(&u, 0, sizeof(u));
	u.has_nodes = true;
	u.nodes_min = u.nodes_max = 2;
	ck_assert_int_eq(jobs_update(f.js, &root, id, &u, 2000, ch,
	    sizeof(ch), &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ck_assert_ptr_nonnull(strstr(err.text, "--nodes"));
	ck_assert_uint_eq(jobs_get(f.js, id)->spec.nodes_min, 1);
	ctl_flush(&f);
	ctl_reload(&f);
	ck_assert_uint_eq(jobs_get(f.js, id)->spec.time_limit_s, 1200);
	ck_assert_int_eq(jobs_get(f.js, id)->spec.priority, 60);
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_update_write_fails)
{
	struct job_update u = { 0 };
	struct ctl f;
	struct cerr err;
	char ch[256];
	uint64_t id;

	ctl_setup(&f, NULL);
	id = pending(&f, "alice", 1000);
	ctl_flush(&f);
	ctl_fail_writes(&f, "events", "INSERT");
	u.has_nodes = true;
	u.nodes_min = u.nodes_max = 2;
	ck_assert_int_eq(jobs_update(f.js, &alice, id, &u, 2000, ch,
	    sizeof(ch), &err), -1);
	ck_assert_uint_eq(jobs_get(f.js, id)->spec.nodes_min, 1);
	ctl_heal(&f);
	ctl_flush(&f);
	ctl_reload(&f);
	ck_assert_uint_eq(jobs_get(f.js, id)->spec.nodes_min, 1);
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_requeue_check)
{
	struct ctl f;
	struct cerr err;
	uint64_t run, pend;

	ctl_setup(&f, NULL);
	run = ctl_job_on(&f, 1, 2, true, 1000);
	pend = pending(&f, "alice", 1000);
	ck_assert_int_eq(jobs_requeue(f.js, &alice, pend, 2000, &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ck_assert_ptr_nonnull(strstr(err.text, "only a running job"));
	ck_assert_int_eq(jobs_requeue(f.js, &bob, run, 2000, &err), -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	ck_assert_int_eq(jobs_requeue(f.js, &root, run, 2000, &err), 0);
	ck_assert_int_eq(jobs_requeue(f.js, &alice, run, 2000, &err), 0);
	ctl_flush(&f);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM events WHERE "
	    "kind = 'requeue'"), 2);
	/* The stop itself is the preemption path's (cluster_requeue):
	 * requeued, it is no preemption and no restart. */
	ck_assert_int_eq(jobs_preempt(f.js, run, JOBS_REQUEUED_PREFIX "alice",
	    3000, 3000, NULL, &err), 0);
	ck_assert_int_eq(jobs_get(f.js, run)->state, JOB_PENDING);
	ck_assert_uint_eq(jobs_get(f.js, run)->preemptions, 0);
	ck_assert_uint_eq(jobs_get(f.js, run)->restarts, 0);
	ctl_flush(&f);
	ck_assert_int_eq(ctl_sql_int(&f, "SELECT count(*) FROM events WHERE "
	    "kind = 'requeued'"), 1);
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_select_filters)
{
	const enum job_state running[] = { JOB_RUNNING };
	struct jobs_select sel = { 0 };
	struct ctl f;
	uint64_t a1, a2, b1, ids[8];
	struct job_spec spec;
	bool more;
	size_t n;

	ctl_setup(&f, NULL);
	a1 = ctl_job_on(&f, 1, 2, true, 1000);	/* alice, RUNNING, "true" */
	a2 = pending(&f, "alice", 1000);
	ctl_spec(&spec, 1, 1, 2);
	free(spec.name);
	spec.name = strdup("other");
	b1 = ctl_submit(&f, "bob", &spec, 1000);
	/* A user's filters: their own jobs. */
	sel.name = "true";
	n = jobs_select(f.js, &alice, &sel, ids, 8, &more);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(ids[0], a1);
	ck_assert_uint_eq(ids[1], a2);
	sel.states = running;
	sel.nstates = 1;
	n = jobs_select(f.js, &alice, &sel, ids, 8, &more);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(ids[0], a1);
	/* Another user's jobs: none they may cancel. */
	memset(&sel, 0, sizeof(sel));
	sel.user = "bob";
	ck_assert_uint_eq(jobs_select(f.js, &alice, &sel, ids, 8, &more), 0);
	/* An admin's: everybody's, unless --user. */
	n = jobs_select(f.js, &root, &sel, ids, 8, &more);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(ids[0], b1);
	sel.user = NULL;
	sel.name = NULL;
	sel.nstates = 0;
	sel.states = NULL;
	sel.name = "other";
	ck_assert_uint_eq(jobs_select(f.js, &root, &sel, ids, 8, &more), 1);
	sel.name = NULL;
	sel.states = running;
	sel.nstates = 1;
	n = jobs_select(f.js, &root, &sel, ids, 1, &more);
	ck_assert_uint_eq(n, 1);
	ck_assert(!more);
	sel.states = NULL;
	sel.nstates = 0;
	sel.user = NULL;
	sel.name = NULL;
	/* The bound: more is said. */
	{
		struct jobs_select any = { .user = NULL };
		enum job_state live[] = { JOB_PENDING, JOB_RUNNING };

		any.states = live;
		any.nstates = 2;
		n = jobs_select(f.js, &root, &any, ids, 2, &more);
		ck_assert_uint_eq(n, 2);
		ck_assert(more);
	}
	ctl_teardown(&f);
}
END_TEST

/* Exit 1 of rank 0 of job id at now: the state after. */
static enum job_state
fail_at(struct ctl *f, uint64_t id, int64_t now)
{
	enum job_state st;
	struct cerr err;

	ck_assert_msg(jobs_task_exit(f->js, id, jobs_get(f->js, id)->attempt,
	    0, 1 << 8, "", now, &st, &err) == 0, "%s", err.text);
	ctl_flush(f);
	return st;
}

static void
run_again(struct ctl *f, uint64_t id, int64_t now)
{
	struct placement p = { .node = "node01", .node_rank = 0, .ngpus = 2,
	    .gpus = { 0, 1 } };
	struct cerr err;

	ck_assert_msg(jobs_allocate(f->js, id, &p, 1, now, &err) == 0, "%s",
	    err.text);
	ck_assert_msg(jobs_mark_running(f->js, id, now, &err) == 0, "%s",
	    err.text);
	ctl_flush(f);
}

START_TEST(test_early_fail_backoff)
{
	const struct job *job;
	struct job_spec spec;
	struct ctl f;
	int64_t now = 1000000, want = 1000;
	uint64_t id;
	int i;

	ctl_setup(&f, NULL);
	ctl_spec(&spec, 1, 1, 2);
	spec.max_restarts = 10;
	id = ctl_submit(&f, "alice", &spec, now);
	run_again(&f, id, now);
	/* Failing 2 s into each run: 1 s, 2 s, 4 s, 8 s. */
	for (i = 0; i < 4; i++, want *= 2) {
		now += 2000;
		ck_assert_int_eq(fail_at(&f, id, now), JOB_RESTARTING);
		job = jobs_get(f.js, id);
		ck_assert_int_eq(job->not_before_ms, now + want);
		ck_assert(jobs_backing_off(job, now + want - 1));
		ck_assert(!jobs_backing_off(job, now + want));
		ck_assert_msg(strstr(job->reason, "FailedEarly: rank 0 exited "
		    "with 1 after 2 s; retry in ") != NULL, "%s", job->reason);
		ck_assert_uint_eq(job->restarts, (unsigned)i + 1);
		now += want;
		run_again(&f, id, now);
	}
	/* A run past the window: the failure restarts at once and the
	 * back-off starts over. */
	now += JOBS_EARLY_FAIL_WINDOW_MS + 1000;
	ck_assert_int_eq(fail_at(&f, id, now), JOB_RESTARTING);
	job = jobs_get(f.js, id);
	ck_assert(!jobs_backing_off(job, now));
	ck_assert_ptr_null(strstr(job->reason, "FailedEarly"));
	run_again(&f, id, now);
	now += 500;
	ck_assert_int_eq(fail_at(&f, id, now), JOB_RESTARTING);
	ck_assert_int_eq(jobs_get(f.js, id)->not_before_ms, now + 1000);
	/* Restarts used up: FAILED all the same. */
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_early_fail_window_off)
{
	struct job_spec spec;
	struct ctl f;
	int64_t now = 1000000;
	uint64_t id;

	ctl_setup(&f, NULL);
	jobs_set_early_fail_window(f.js, 0);
	ctl_spec(&spec, 1, 1, 2);
	id = ctl_submit(&f, "alice", &spec, now);
	run_again(&f, id, now);
	ck_assert_int_eq(fail_at(&f, id, now + 100), JOB_RESTARTING);
	ck_assert(!jobs_backing_off(jobs_get(f.js, id), now + 100));
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_early_fail_gives_up)
{
	struct job_spec spec;
	struct ctl f;
	int64_t now = 1000000;
	uint64_t id;
	int i;

	ctl_setup(&f, NULL);
	ctl_spec(&spec, 1, 1, 2);
	spec.max_restarts = 2;
	id = ctl_submit(&f, "alice", &spec, now);
	for (i = 0; i < 2; i++) {
		run_again(&f, id, now);
		ck_assert_int_eq(fail_at(&f, id, now + 10), JOB_RESTARTING);
		now += 100000;
	}
	run_again(&f, id, now);
	ck_assert_int_eq(fail_at(&f, id, now + 10), JOB_FAILED);
	ck_assert_ptr_nonnull(strstr(jobs_get(f.js, id)->reason,
	    "max restarts (2) reached"));
	ck_assert_ptr_null(strstr(jobs_get(f.js, id)->reason, "retry"));
	/* Hardware (a node lost, an XID) fails over at once, early or
	 * not: jobs_fail_over sets no back-off. */
	ctl_teardown(&f);
}
END_TEST

START_TEST(test_hardware_failover_immediate)
{
	enum job_state st;
	struct cerr err;
	struct ctl f;
	uint64_t id;

	ctl_setup(&f, NULL);
	id = ctl_job_on(&f, 1, 2, true, 1000);
	ck_assert_int_eq(jobs_fail_over(f.js, id, "node node01 DOWN", true,
	    1500, 1500, &st, &err), 0);
	ck_assert_int_eq(st, JOB_RESTARTING);
	ck_assert(!jobs_backing_off(jobs_get(f.js, id), 1500));
	ctl_teardown(&f);
}
END_TEST

/* ---- The authorization matrix, with the target dimension ----
 *
 * Queues: ateam (users alice; admin ann), bteam (users bob, carol;
 * admin bob), cteam (users bob, carol; admin ann), each with a max_time
 * of one hour. Every cell is a fresh job of its owner in its queue (at a
 * priority root gave it, when above the default), then one request by
 * one caller; a refusal must leave the job as it was. The expected
 * answers are written out by hand, not derived from jobs_authz.c's
 * table. */

static struct queues *
three_queues(void)
{
	struct queue_def d[3];
	char *a_users[] = { "alice" }, *a_admins[] = { "ann" };
	char *bc_users[] = { "bob", "carol" }, *b_admins[] = { "bob" };
	struct queues *qs;
	struct cerr err;
	size_t i;

	ctl_queue_def(&d[0], "ateam", 8, a_users, 1, a_admins, 1);
	ctl_queue_def(&d[1], "bteam", 8, bc_users, 2, b_admins, 1);
	ctl_queue_def(&d[2], "cteam", 8, bc_users, 2, a_admins, 1);
	for (i = 0; i < 3; i++)
		d[i].max_time_s = 3600;
	qs = queues_create(d, 3, 3600000, &err);	/* copies d */
	ck_assert_msg(qs != NULL, "%s", err.text);
	return qs;
}

enum cell_act { C_UPDATE, C_CANCEL, C_HOLD, C_REQUEUE };

struct cell {
	const char *caller;	/* "root" is the cluster admin */
	const char *owner;
	const char *queue;	/* the job's queue */
	int32_t priority;	/* the job's, set by root; 0: the default */
	bool running;
	enum cell_act act;
	const char *to;		/* C_UPDATE: --queue, or NULL */
	int32_t new_priority;	/* C_UPDATE: --priority, or -1 */
	uint64_t new_time;	/* C_UPDATE: --time, or 0 */
	int want;		/* 0, or the refusal's code */
};

static const struct cell cells[] = {
	/* The finding: bob, admin of bteam only, carries his job into
	 * ateam (where he is no user) at the highest priority. */
	{ "bob", "bob", "bteam", 0, false, C_UPDATE, "ateam", 1000000, 0,
	  ERR_DENIED },
	{ "bob", "bob", "bteam", 0, false, C_UPDATE, "ateam", -1, 0,
	  ERR_DENIED },
	/* In his own queue he may raise it. */
	{ "bob", "bob", "bteam", 0, false, C_UPDATE, NULL, 1000000, 0, 0 },
	/* A priority granted in bteam does not travel to cteam, where bob
	 * is a user but no admin; lowered with the move, it does. */
	{ "bob", "bob", "bteam", 5000, false, C_UPDATE, "cteam", -1, 0,
	  ERR_DENIED },
	{ "bob", "bob", "bteam", 5000, false, C_UPDATE, "cteam", 5000, 0,
	  ERR_DENIED },
	{ "bob", "bob", "bteam", 5000, false, C_UPDATE, "cteam", 100, 0, 0 },
	/* bob may move carol's job within his rights only: out of bteam
	 * into cteam (where he is no admin) he may not. */
	{ "bob", "carol", "bteam", 0, false, C_UPDATE, "cteam", -1, 0,
	  ERR_DENIED },
	/* ann, admin of cteam only, has no rights on the job as it is. */
	{ "ann", "carol", "bteam", 0, false, C_UPDATE, "cteam", -1, 0,
	  ERR_DENIED },
	/* carol moves her own job where she is a user, not above the
	 * default priority. */
	{ "carol", "carol", "bteam", 0, false, C_UPDATE, "cteam", -1, 0, 0 },
	{ "carol", "carol", "bteam", 0, false, C_UPDATE, "cteam", 500, 0,
	  ERR_DENIED },
	{ "carol", "carol", "bteam", 0, false, C_UPDATE, "ateam", -1, 0,
	  ERR_DENIED },
	/* She may lower a priority an admin gave her, and keep it. */
	{ "carol", "carol", "bteam", 5000, false, C_UPDATE, NULL, 4000, 0, 0 },
	{ "carol", "carol", "bteam", 5000, false, C_UPDATE, NULL, 6000, 0,
	  ERR_DENIED },
	/* root places anyone's job in any queue, at any priority. */
	{ "root", "carol", "bteam", 0, false, C_UPDATE, "ateam", 1000000, 0,
	  0 },
	/* Another user, in or out of the target queue's admins. */
	{ "alice", "bob", "bteam", 0, false, C_UPDATE, NULL, 50, 0,
	  ERR_DENIED },
	{ "ann", "bob", "bteam", 0, false, C_UPDATE, "cteam", 50, 0,
	  ERR_DENIED },
	/* bob, admin of bteam, in bteam. */
	{ "bob", "carol", "bteam", 0, false, C_UPDATE, NULL, 9000, 0, 0 },
	{ "bob", "carol", "bteam", 0, false, C_CANCEL, NULL, -1, 0, 0 },
	{ "ann", "carol", "bteam", 0, false, C_CANCEL, NULL, -1, 0,
	  ERR_DENIED },
	{ "bob", "carol", "bteam", 0, false, C_HOLD, NULL, -1, 0,
	  ERR_DENIED },
	{ "carol", "carol", "bteam", 0, false, C_HOLD, NULL, -1, 0, 0 },
	/* Running jobs: the time limit and priority in place. */
	{ "carol", "carol", "bteam", 0, true, C_UPDATE, NULL, -1, 7200,
	  ERR_DENIED },
	{ "carol", "carol", "bteam", 0, true, C_UPDATE, NULL, -1, 600, 0 },
	{ "bob", "carol", "bteam", 0, true, C_UPDATE, NULL, -1, 3000, 0 },
	{ "bob", "carol", "bteam", 0, true, C_UPDATE, NULL, -1, 7200,
	  ERR_DENIED },
	{ "root", "carol", "bteam", 0, true, C_UPDATE, NULL, -1, 7200, 0 },
	{ "bob", "carol", "bteam", 0, true, C_UPDATE, NULL, 900, 0, 0 },
	{ "ann", "carol", "bteam", 0, true, C_UPDATE, NULL, 900, 0,
	  ERR_DENIED },
	{ "carol", "carol", "bteam", 0, true, C_UPDATE, NULL, 900, 0,
	  ERR_DENIED },
	{ "bob", "carol", "bteam", 0, true, C_REQUEUE, NULL, -1, 0, 0 },
	{ "ann", "carol", "bteam", 0, true, C_REQUEUE, NULL, -1, 0,
	  ERR_DENIED },
	{ "alice", "carol", "bteam", 0, true, C_CANCEL, NULL, -1, 0,
	  ERR_DENIED },
};

static struct peer
cell_peer(const char *name)
{
	struct peer p = { .role = ROLE_USER };

	snprintf(p.name, sizeof(p.name), "%s", name);
	if (strcmp(name, "root") == 0)
		p.role = ROLE_ADMIN;
	return p;
}

/* A job of c's owner in c's queue, at c's priority, pending (held) or
 * running on node01 (not held). */
static uint64_t
cell_job(struct ctl *f, const struct cell *c, int64_t now)
{
	struct peer owner = cell_peer(c->owner);
	struct job_update u = { 0 };
	struct placement place = { .node = "node01", .ngpus = 1 };
	struct job_spec spec;
	struct cerr err;
	char ch[256];
	uint64_t id;

	ctl_spec(&spec, 1, 1, 1);
	spec.queue = strdup(c->queue);
	spec.hold = !c->running;
	ck_assert_msg(jobs_submit(f->js, &owner, &spec, now, &id, &err) == 0,
	    "jobs_submit: %s", err.text);
	if (c->priority != 0) {
		u.has_priority = true;
		u.priority = c->priority;
		ck_assert_msg(jobs_update(f->js, &root, id, &u, now, ch,
		    sizeof(ch), &err) == 0, "%s", err.text);
	}
	if (c->running) {
		ck_assert_msg(jobs_allocate(f->js, id, &place, 1, now,
		    &err) == 0, "jobs_allocate: %s", err.text);
		ck_assert_msg(jobs_mark_running(f->js, id, now, &err) == 0,
		    "jobs_mark_running: %s", err.text);
	}
	return id;
}

static int
cell_run(struct ctl *f, const struct cell *c, uint64_t id, int64_t now,
    struct cerr *err)
{
	struct peer who = cell_peer(c->caller);
	struct job_update u = { 0 };
	enum job_state st;
	char ch[256];

	switch (c->act) {
	case C_CANCEL:
		return jobs_cancel(f->js, &who, id, now, &st, err);
	case C_HOLD:
		return jobs_hold(f->js, &who, id, false, now, err) == -1 ?
		    -1 : 0;
	case C_REQUEUE:
		return jobs_requeue(f->js, &who, id, now, err);
	case C_UPDATE:
		break;
	}
	u.queue = c->to;
	u.has_priority = c->new_priority >= 0;
	u.priority = c->new_priority;
	u.has_time = c->new_time != 0;
	u.time_limit_s = c->new_time;
	return jobs_update(f->js, &who, id, &u, now, ch, sizeof(ch), err);
}

START_TEST(test_authz_matrix)
{
	struct job_limits lim = { .script_max = 1024 * 1024 };
	struct queues *qs = three_queues();
	const struct job *job;
	struct cerr err;
	struct ctl f;
	char queue[32];
	int32_t prio;
	uint64_t id, time;
	enum job_state st;
	size_t i;
	int rc;

	ctl_setup(&f, NULL);
	jobs_destroy(f.js);
	f.js = jobs_create(f.st, f.q, &lim, qs, &err);
	ck_assert_msg(f.js != NULL, "%s", err.text);
	for (i = 0; i < sizeof(cells) / sizeof(cells[0]); i++) {
		id = cell_job(&f, &cells[i], 1000 + (int64_t)i);
		job = jobs_get(f.js, id);
		snprintf(queue, sizeof(queue), "%s", job->spec.queue);
		prio = job->spec.priority;
		time = job->spec.time_limit_s;
		st = job->state;
		cerr_clear(&err);
		rc = cell_run(&f, &cells[i], id, 1000 + (int64_t)i, &err);
		ck_assert_msg(cells[i].want == 0 ? rc == 0 : rc == -1 &&
		    (int)err.code == cells[i].want, "cell %zu (%s on %s's job in "
		    "%s): rc %d, code %d: %s", i, cells[i].caller,
		    cells[i].owner, cells[i].queue, rc, (int)err.code,
		    err.text);
		job = jobs_get(f.js, id);
		if (cells[i].want != 0) {
			ck_assert_str_eq(job->spec.queue, queue);
			ck_assert_int_eq(job->spec.priority, prio);
			ck_assert_uint_eq(job->spec.time_limit_s, time);
			ck_assert_int_eq(job->state, st);
		}
	}
	ctl_flush(&f);
	ctl_teardown(&f);
	queues_destroy(qs);
}
END_TEST

/* An array whose task was moved to another queue: an admin of the first
 * task's queue only may not cancel the whole array (every task is
 * judged), and nothing changes; its owner may. */
START_TEST(test_authz_array_tasks)
{
	struct job_limits lim = { .script_max = 1024 * 1024 };
	struct queues *qs = three_queues();
	struct peer carol = cell_peer("carol");
	struct job_update u = { 0 };
	struct job *const *t;
	struct job_spec spec;
	struct cerr err;
	struct ctl f;
	uint64_t id;
	char ch[256];
	size_t n;

	ctl_setup(&f, NULL);
	jobs_destroy(f.js);
	f.js = jobs_create(f.st, f.q, &lim, qs, &err);
	ck_assert_msg(f.js != NULL, "%s", err.text);
	ctl_spec(&spec, 1, 1, 1);
	spec.queue = strdup("bteam");
	spec.array = strdup("0-2");
	ck_assert_msg(jobs_submit(f.js, &carol, &spec, 1000, &id, &err) == 0,
	    "%s", err.text);
	ck_assert_uint_eq(jobs_array_tasks(f.js, id, &t), 3);
	u.queue = "cteam";
	ck_assert_msg(jobs_update(f.js, &carol, t[1]->id, &u, 1001, ch,
	    sizeof(ch), &err) == 0, "%s", err.text);
	/* bob administers bteam (tasks 0 and 2), not cteam (task 1). */
	ck_assert_int_eq(jobs_array_cancel(f.js, &bob, id, 1002, &n, &err),
	    -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	ck_assert_int_eq(t[0]->state, JOB_PENDING);
	ck_assert_int_eq(t[1]->state, JOB_PENDING);
	ck_assert_int_eq(jobs_array_cancel(f.js, &carol, id, 1003, &n, &err),
	    0);
	ck_assert_uint_eq(n, 3);
	ctl_flush(&f);
	ctl_teardown(&f);
	queues_destroy(qs);
}
END_TEST

static void
held_spec(struct job_spec *spec, void *arg)
{
	spec->hold = arg != NULL;
	spec->max_restarts = 0;
}

/* Every rank of id exits 0 (and the job is COMPLETED). */
static void
complete(struct domain *d, uint64_t id)
{
	const struct job *j = domain_job(d, id);
	struct cerr err;
	unsigned r, n = j->nplace;

	for (r = 0; r < n; r++)
		ck_assert_msg(domain_exit(d, domain_rank_node(j, r), id,
		    j->attempt, r, 0, &err) == 0, "%s", err.text);
	ck_assert_int_eq(domain_job(d, id)->state, JOB_COMPLETED);
}

/* On two free nodes: a job held at submit and one held after wait,
 * JobHeldUser; an admin's hold says JobHeldAdmin; released, each runs,
 * the second on the two nodes an update gave it while held. */
START_TEST(test_held_waits_on_free_nodes)
{
	struct job_update u = { 0 };
	struct domain d;
	struct cerr err;
	char ch[256];
	uint64_t h, j;

	ck_assert_msg(domain_open(&d, NULL, &err) == 0, "%s", err.text);
	ck_assert_int_eq(domain_add_nodes(&d, 2, 2, &err), 0);
	h = domain_submit(&d, "alice", 1, 1, held_spec, "hold", &err);
	j = domain_submit(&d, "alice", 1, 1, held_spec, NULL, &err);
	ck_assert(h != 0 && j != 0);
	ck_assert_int_eq(jobs_hold(d.js, &alice, j, false, d.now, &err), 1);
	domain_pass(&d);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, 0, 0), 0);
	ck_assert_str_eq(domain_job(&d, h)->reason, "JobHeldUser");
	ck_assert_str_eq(domain_job(&d, j)->reason, "JobHeldUser");
	ck_assert_int_eq(jobs_hold(d.js, &root, j, false, d.now, &err), 1);
	domain_advance(&d, 1000);
	domain_pass(&d);
	ck_assert_str_eq(domain_job(&d, j)->reason, "JobHeldAdmin");
	ck_assert_int_eq(jobs_hold(d.js, &alice, j, true, d.now, &err), -1);
	u.has_nodes = true;
	u.nodes_min = u.nodes_max = 2;
	ck_assert_msg(jobs_update(d.js, &alice, j, &u, d.now, ch, sizeof(ch),
	    &err) == 0, "%s", err.text);
	ck_assert_int_eq(jobs_hold(d.js, &alice, h, true, d.now, &err), 1);
	domain_pass(&d);
	domain_answer_launches(&d, NULL);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, 0, 0), 1);
	ck_assert_int_eq(domain_job(&d, h)->state, JOB_RUNNING);
	ck_assert_int_eq(domain_job(&d, j)->state, JOB_PENDING);
	complete(&d, h);
	ck_assert_int_eq(jobs_hold(d.js, &root, j, true, d.now, &err), 1);
	domain_pass(&d);
	domain_answer_launches(&d, NULL);
	ck_assert_int_eq(domain_job(&d, j)->state, JOB_RUNNING);
	ck_assert_uint_eq(domain_job(&d, j)->nplace, 2);
	complete(&d, j);
	domain_close(&d);
}
END_TEST

/* cohort requeue of a job with a checkpoint directory: its checkpoint
 * signal, stopped once a newer checkpoint is written, PENDING "Requeued
 * by alice", launched again from that checkpoint; neither a restart
 * nor a preemption. A pending job and another user's are refused. */
START_TEST(test_requeue_resumes_from_checkpoint)
{
	struct domain_spec o = { .checkpoint_dir = "/ckpt", .ckpt_secs = 20,
	    .max_restarts = -1 };
	const struct domain_cmd *c;
	struct domain d;
	struct cerr err;
	uint64_t q, p;
	size_t mark;

	ck_assert_msg(domain_open(&d, NULL, &err) == 0, "%s", err.text);
	ck_assert_int_eq(domain_add_nodes(&d, 2, 2, &err), 0);
	q = domain_submit(&d, "alice", 1, 2, domain_spec_apply, &o, &err);
	p = domain_submit(&d, "alice", 1, 2, held_spec, "hold", &err);
	ck_assert(q != 0 && p != 0);
	domain_pass(&d);
	domain_answer_launches(&d, NULL);
	ck_assert_int_eq(domain_job(&d, q)->state, JOB_RUNNING);
	domain_checkpoint(&d, domain_rank_node(domain_job(&d, q), 0), q, 1,
	    10, "/ckpt/10");
	domain_advance(&d, 5000);
	ck_assert_int_eq(cluster_requeue(d.cl, &alice, p, d.now, &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ck_assert_ptr_nonnull(strstr(err.text, "only a running job"));
	ck_assert_int_eq(cluster_requeue(d.cl, &bob, q, d.now, &err), -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	mark = d.ncmds;
	ck_assert_int_eq(cluster_requeue(d.cl, &alice, q, d.now, &err), 0);
	domain_commit(&d);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_SIGNAL, q, mark), 1);
	ck_assert_int_eq(domain_last(&d, DOMAIN_SIGNAL, q)->sig, SIGUSR1);
	ck_assert_int_eq(domain_job(&d, q)->state, JOB_RUNNING);
	/* Its newer checkpoint: stopped, PENDING. */
	domain_advance(&d, 1000);
	domain_checkpoint(&d, domain_rank_node(domain_job(&d, q), 0), q, 1,
	    11, "/ckpt/11");
	ck_assert_int_eq(domain_job(&d, q)->state, JOB_PENDING);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_STOP, q, mark), 1);
	ck_assert_str_eq(domain_job(&d, q)->reason,
	    "Requeued by alice (checkpoint written)");
	domain_settle(&d);
	ck_assert_int_eq(domain_job(&d, q)->state, JOB_RUNNING);
	c = domain_last(&d, DOMAIN_LAUNCH, q);
	ck_assert_str_eq(c->resume, "/ckpt/11");
	complete(&d, q);
	ck_assert_uint_eq(domain_job(&d, q)->restarts, 0);
	ck_assert_uint_eq(domain_job(&d, q)->preemptions, 0);
	ck_assert_int_eq(store_sql_int(d.st, "SELECT count(*) FROM events "
	    "WHERE kind IN ('requeue', 'requeued', 'preempt', 'restart')"), 2);
	ck_assert_int_eq(store_sql_int(d.st, "SELECT count(*) FROM events "
	    "WHERE kind = 'requeued' AND detail LIKE 'Requeued by alice "
	    "(checkpoint written); resumes from checkpoint step 11;%'"), 1);
	domain_close(&d);
}
END_TEST

static Suite *
jobs_control_suite(void)
{
	Suite *s = suite_create("jobs_control");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_hold_roles);
	tcase_add_test(tc, test_hold_pending_only);
	tcase_add_test(tc, test_hold_write_fails);
	tcase_add_test(tc, test_update_pending);
	tcase_add_test(tc, test_update_running);
	tcase_add_test(tc, test_update_write_fails);
	tcase_add_test(tc, test_requeue_check);
	tcase_add_test(tc, test_select_filters);
	tcase_add_test(tc, test_early_fail_backoff);
	tcase_add_test(tc, test_early_fail_window_off);
	tcase_add_test(tc, test_early_fail_gives_up);
	tcase_add_test(tc, test_hardware_failover_immediate);
	tcase_add_test(tc, test_authz_matrix);
	tcase_add_test(tc, test_authz_array_tasks);
	tcase_add_test(tc, test_held_waits_on_free_nodes);
	tcase_add_test(tc, test_requeue_resumes_from_checkpoint);
	suite_add_tcase(s, tc);
	return s;
}


int
main(void)
{
	SRunner *sr = srunner_create(jobs_control_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
