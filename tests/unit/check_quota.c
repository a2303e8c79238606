/* Per-user limits: the token bucket and pending cap of quota.c (with the
 * clock passed in), and the pending counts jobs.c keeps across every
 * state change and a reload from the database. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/quota.h"
#include "daemon/controller/store/store.h"
#include "daemon/controller/store/txq.h"

/* ---- quota.c alone ---- */

START_TEST(test_bucket_burst_then_rate)
{
	struct quota_opts o = { .max_pending = 0, .rate = 10, .burst = 5 };
	struct quota *q = quota_create(&o);
	struct quota_stats st;
	struct cerr err;
	int64_t now = 1000000;
	int i;

	ck_assert_ptr_nonnull(q);
	/* A full bucket: the burst goes through at one instant. */
	for (i = 0; i < 5; i++) {
		ck_assert_int_eq(quota_submit_check(q, "alice", now, &err), 0);
		quota_submit_take(q, "alice", now);
	}
	cerr_clear(&err);
	ck_assert_int_eq(quota_submit_check(q, "alice", now, &err), -1);
	ck_assert_int_eq(err.code, ERR_LIMIT);
	ck_assert_msg(strstr(err.text, "alice") != NULL &&
	    strstr(err.text, "limit of 10 per second") != NULL &&
	    strstr(err.text, "retry in 100 ms") != NULL, "%s", err.text);
	/* Another user has a bucket of their own. */
	ck_assert_int_eq(quota_submit_check(q, "bob", now, &err), 0);
	/* 99 ms later still empty; at 100 ms (10/s) one token is back. */
	ck_assert_int_eq(quota_submit_check(q, "alice", now + 99, &err), -1);
	ck_assert_int_eq(quota_submit_check(q, "alice", now + 100, &err), 0);
	quota_submit_take(q, "alice", now + 100);
	ck_assert_int_eq(quota_submit_check(q, "alice", now + 100, &err), -1);
	/* A long pause refills to the burst, never beyond it. */
	now += 3600 * 1000;
	for (i = 0; i < 5; i++) {
		ck_assert_int_eq(quota_submit_check(q, "alice", now, &err), 0);
		quota_submit_take(q, "alice", now);
	}
	ck_assert_int_eq(quota_submit_check(q, "alice", now, &err), -1);
	quota_stats(q, &st);
	ck_assert_uint_eq(st.refused_rate, 4);
	ck_assert_uint_eq(st.refused_pending, 0);
	quota_destroy(q);
}
END_TEST

START_TEST(test_bucket_check_takes_nothing)
{
	struct quota_opts o = { .rate = 1, .burst = 2 };
	struct quota *q = quota_create(&o);
	struct cerr err;
	int i;

	/* Checks without takes (submits that then failed validation or the
	 * database) use up nothing. */
	for (i = 0; i < 100; i++)
		ck_assert_int_eq(quota_submit_check(q, "alice", 5000, &err), 0);
	quota_submit_take(q, "alice", 5000);
	quota_submit_take(q, "alice", 5000);
	ck_assert_int_eq(quota_submit_check(q, "alice", 5000, &err), -1);
	/* A clock stepped back neither refills nor breaks the bucket. */
	ck_assert_int_eq(quota_submit_check(q, "alice", 1000, &err), -1);
	ck_assert_int_eq(quota_submit_check(q, "alice", 1999, &err), -1);
	ck_assert_int_eq(quota_submit_check(q, "alice", 2000, &err), 0);
	quota_destroy(q);
}
END_TEST

START_TEST(test_no_rate_no_limit)
{
	struct quota_opts o = { 0 };
	struct quota *q = quota_create(&o);
	struct cerr err;
	int i;

	for (i = 0; i < 100000; i++) {
		ck_assert_int_eq(quota_submit_check(q, "alice", 7, &err), 0);
		quota_submit_take(q, "alice", 7);
		ck_assert_int_eq(quota_pending_add(q, "alice", 1), 0);
	}
	ck_assert_uint_eq(quota_pending(q, "alice"), 100000);
	quota_destroy(q);
}
END_TEST

/* SIGHUP: new limits apply to the next submit; counts stay. */
START_TEST(test_set_opts)
{
	struct quota *q = quota_create(&(struct quota_opts){ .max_pending = 1,
	    .rate = 10, .burst = 5 });
	struct cerr err;

	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(quota_pending_add(q, "alice", 1), 0);
	ck_assert_int_eq(quota_submit_check(q, "alice", 0, &err), -1);
	quota_set_opts(q, &(struct quota_opts){ .max_pending = 2, .rate = 10,
	    .burst = 1 });
	ck_assert_uint_eq(quota_pending(q, "alice"), 1);
	ck_assert_int_eq(quota_submit_check(q, "alice", 0, &err), 0);
	quota_submit_take(q, "alice", 0);
	/* The bucket was cut to the new burst of 1: empty now. */
	ck_assert_int_eq(quota_submit_check(q, "alice", 0, &err), -1);
	ck_assert_msg(strstr(err.text, "per second") != NULL, "%s", err.text);
	quota_destroy(q);
}
END_TEST

START_TEST(test_pending_cap)
{
	struct quota_opts o = { .max_pending = 3 };
	struct quota *q = quota_create(&o);
	struct quota_stats st;
	struct cerr err;
	int i;

	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(quota_submit_check(q, "alice", 0, &err), 0);
		ck_assert_int_eq(quota_pending_add(q, "alice", 1), 0);
	}
	cerr_clear(&err);
	ck_assert_int_eq(quota_submit_check(q, "alice", 0, &err), -1);
	ck_assert_int_eq(err.code, ERR_LIMIT);
	ck_assert_str_eq(err.text, "alice has 3 pending jobs, the limit is 3 "
	    "(max_pending_per_user); submit more once some have started or "
	    "ended");
	ck_assert_int_eq(quota_submit_check(q, "bob", 0, &err), 0);
	ck_assert_int_eq(quota_pending_add(q, "alice", -1), 0);
	ck_assert_int_eq(quota_submit_check(q, "alice", 0, &err), 0);
	/* Never below zero, and a user never counted stays at zero. */
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(quota_pending_add(q, "alice", -1), 0);
	ck_assert_uint_eq(quota_pending(q, "alice"), 0);
	ck_assert_int_eq(quota_pending_add(q, "carol", -1), 0);
	ck_assert_uint_eq(quota_pending(q, "carol"), 0);
	ck_assert_int_eq(quota_pending_add(q, "bob", 1), 0);
	quota_pending_reset(q);
	ck_assert_uint_eq(quota_pending(q, "bob"), 0);
	quota_stats(q, &st);
	ck_assert_uint_eq(st.refused_pending, 1);
	quota_destroy(q);
}
END_TEST

START_TEST(test_many_users_sorted)
{
	struct quota_opts o = { .max_pending = 2 };
	struct quota *q = quota_create(&o);
	char name[32];
	int i;

	/* Users arrive in any order; each keeps their own count. */
	for (i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "u%d", (i * 7919) % 500);
		ck_assert_int_eq(quota_pending_add(q, name, 1), 0);
		ck_assert_int_eq(quota_pending_add(q, name, 1), 0);
	}
	for (i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "u%d", i);
		ck_assert_uint_eq(quota_pending(q, name), 2);
	}
	quota_destroy(q);
}
END_TEST

/* ---- jobs.c: the counts through the job lifecycle ---- */

struct fixture {
	char dir[64];
	char path[128];
	struct event_base *base;
	struct store *st;
	struct txq *q;
	struct jobs *js;
	struct job_limits lim;
};

static void
on_abort(void *arg)
{
}

static void
setup(struct fixture *f, uint32_t max_pending)
{
	struct cerr err;

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/check_quota.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/t.db", f->dir);
	f->base = event_base_new();
	f->st = store_open(f->path, &err);
	ck_assert_msg(f->st != NULL, "store_open: %s", err.text);
	f->q = txq_create(f->base, f->st, on_abort, f);
	ck_assert_ptr_nonnull(f->q);
	f->lim.script_max = 1 << 20;
	f->lim.max_pending_per_user = max_pending;
	f->js = jobs_create(f->st, f->q, &f->lim, NULL, &err);
	ck_assert_msg(f->js != NULL, "jobs_create: %s", err.text);
}

static void
commit(struct fixture *f)
{
	event_base_loop(f->base, EVLOOP_NONBLOCK);
	ck_assert(!store_in_txn(f->st));
}

static void
teardown(struct fixture *f)
{
	char cmd[200];

	jobs_destroy(f->js);
	txq_destroy(f->q);
	store_close(f->st);
	event_base_free(f->base);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	ck_assert_int_eq(system(cmd), 0);
}

static int
submit(struct fixture *f, const char *user, enum role role, uint64_t *id,
    struct cerr *err)
{
	struct peer who;
	struct job_spec spec;

	memset(&who, 0, sizeof(who));
	snprintf(who.name, sizeof(who.name), "%s", user);
	who.role = role;
	job_spec_init(&spec);
	strv_append(&spec.argv, &spec.argc, "true");
	cerr_clear(err);
	return jobs_submit(f->js, &who, &spec, 1000, id, err);
}

static uint64_t
submit_ok(struct fixture *f, const char *user)
{
	struct cerr err;
	uint64_t id = 0;

	ck_assert_msg(submit(f, user, ROLE_USER, &id, &err) == 0, "%s",
	    err.text);
	return id;
}

static void
allocate(struct fixture *f, uint64_t id)
{
	struct placement p;
	struct cerr err;

	memset(&p, 0, sizeof(p));
	snprintf(p.node, sizeof(p.node), "node01");
	p.ngpus = 1;
	ck_assert_msg(jobs_allocate(f->js, id, &p, 1, 2000, &err) == 0, "%s",
	    err.text);
}

START_TEST(test_jobs_pending_lifecycle)
{
	struct fixture f;
	struct peer alice = { "alice", ROLE_USER };
	enum job_state state;
	struct cerr err;
	uint64_t a1, a2, a3, b1, id;

	setup(&f, 3);
	a1 = submit_ok(&f, "alice");
	a2 = submit_ok(&f, "alice");
	a3 = submit_ok(&f, "alice");
	b1 = submit_ok(&f, "bob");
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 3);
	ck_assert_uint_eq(jobs_pending_of(f.js, "bob"), 1);
	/* The fourth is refused with ERR_LIMIT and changes nothing. */
	ck_assert_int_eq(submit(&f, "alice", ROLE_USER, &id, &err), -1);
	ck_assert_int_eq(err.code, ERR_LIMIT);
	ck_assert_msg(strstr(err.text, "alice has 3 pending jobs, the limit "
	    "is 3") != NULL, "%s", err.text);
	ck_assert_uint_eq(jobs_count(f.js), 4);
	/* Admins are held to it too. */
	ck_assert_int_eq(submit(&f, "alice", ROLE_ADMIN, &id, &err), -1);
	ck_assert_int_eq(err.code, ERR_LIMIT);
	/* An invalid spec is refused as invalid, not as a limit. */
	{
		struct peer who = { "alice", ROLE_USER };
		struct job_spec spec;

		job_spec_init(&spec);
		spec.nodes_min = spec.nodes_max = 0;
		cerr_clear(&err);
		ck_assert_int_eq(jobs_submit(f.js, &who, &spec, 1000, &id,
		    &err), -1);
		ck_assert_int_eq(err.code, ERR_INVALID);
	}

	/* Launching keeps it pending; running does not count. */
	allocate(&f, a1);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 3);
	ck_assert_int_eq(jobs_mark_running(f.js, a1, 3000, &err), 0);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 2);
	ck_assert_int_eq(submit(&f, "alice", ROLE_USER, &id, &err), 0);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 3);
	/* A failed task: RESTARTING waits again, so it counts again. */
	ck_assert_int_eq(jobs_task_exit(f.js, a1, 1, 0, 1 << 8, "", 4000,
	    &state, &err), 0);
	ck_assert_int_eq(state, JOB_RESTARTING);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 4);
	ck_assert_int_eq(submit(&f, "alice", ROLE_USER, &id, &err), -1);
	/* A start that failed for good ends it: FAILED. */
	allocate(&f, a1);
	ck_assert_int_eq(jobs_start_failed(f.js, a1, START_PERMANENT, "no such user",
	    5000, &err), 0);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 3);
	/* A transient start failure keeps it pending. */
	allocate(&f, a2);
	ck_assert_int_eq(jobs_start_failed(f.js, a2, START_TRANSIENT, "busy", 5000,
	    &err), 0);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 3);
	/* Cancel and end: one fewer each. */
	ck_assert_int_eq(jobs_cancel(f.js, &alice, a2, 6000, &state, &err), 0);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 2);
	ck_assert_int_eq(jobs_end(f.js, a3, JOB_TIMEOUT, "limit", 6000, &err),
	    0);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 1);
	/* Cancelling bob's as alice is refused and changes nothing. */
	ck_assert_int_eq(jobs_cancel(f.js, &alice, b1, 6000, &state, &err),
	    -1);
	ck_assert_uint_eq(jobs_pending_of(f.js, "bob"), 1);

	/* The database holds the same: a reload counts the same. */
	commit(&f);
	ck_assert_int_eq(jobs_reload(f.js, &err), 0);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 1);
	ck_assert_uint_eq(jobs_pending_of(f.js, "bob"), 1);
	teardown(&f);
}
END_TEST

START_TEST(test_jobs_pending_survives_restart)
{
	struct fixture f;
	struct cerr err;
	uint64_t id;
	int i;

	setup(&f, 5);
	for (i = 0; i < 5; i++)
		submit_ok(&f, "alice");
	commit(&f);
	/* A new controller on the same database: same count, same limit. */
	jobs_destroy(f.js);
	f.js = jobs_create(f.st, f.q, &f.lim, NULL, &err);
	ck_assert_ptr_nonnull(f.js);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 5);
	ck_assert_int_eq(submit(&f, "alice", ROLE_USER, &id, &err), -1);
	ck_assert_int_eq(err.code, ERR_LIMIT);
	ck_assert_int_eq(submit(&f, "bob", ROLE_USER, &id, &err), 0);
	teardown(&f);
}
END_TEST

START_TEST(test_jobs_rate_in_submit)
{
	struct fixture f;
	struct cerr err;
	uint64_t id;
	int i;

	setup(&f, 0);
	jobs_destroy(f.js);
	f.lim.submit_rate = 1;
	f.lim.submit_burst = 3;
	f.js = jobs_create(f.st, f.q, &f.lim, NULL, &err);
	ck_assert_ptr_nonnull(f.js);
	/* submit() passes the same time: a burst of 3, then refused. */
	for (i = 0; i < 3; i++)
		submit_ok(&f, "alice");
	ck_assert_int_eq(submit(&f, "alice", ROLE_USER, &id, &err), -1);
	ck_assert_int_eq(err.code, ERR_LIMIT);
	ck_assert_uint_eq(jobs_count(f.js), 3);
	ck_assert_uint_eq(jobs_pending_of(f.js, "alice"), 3);
	submit_ok(&f, "bob");
	teardown(&f);
}
END_TEST

START_TEST(test_jobs_page)
{
	struct fixture f;
	struct jobs_filter all = { .all = true }, bob = { .all = true,
	    .user = "bob" };
	const struct job *out[4];
	struct cerr err;
	enum job_state state;
	struct peer alice = { "alice", ROLE_USER };
	uint64_t next;
	bool more;
	size_t n;
	int i;

	setup(&f, 0);
	for (i = 1; i <= 10; i++)
		submit_ok(&f, i % 3 == 0 ? "bob" : "alice");
	/* Pages of 4: 1-4, 5-8, 9-10. */
	n = jobs_page(f.js, &all, 0, out, 4, 0, &more, &next);
	ck_assert_uint_eq(n, 4);
	ck_assert(more);
	ck_assert_uint_eq(out[0]->id, 1);
	ck_assert_uint_eq(out[3]->id, 4);
	n = jobs_page(f.js, &all, 4, out, 4, 0, &more, &next);
	ck_assert_uint_eq(n, 4);
	ck_assert(more);
	ck_assert_uint_eq(out[0]->id, 5);
	n = jobs_page(f.js, &all, 8, out, 4, 0, &more, &next);
	ck_assert_uint_eq(n, 2);
	ck_assert(!more);
	ck_assert_uint_eq(out[1]->id, 10);
	/* An exactly full last page says no more. */
	n = jobs_page(f.js, &all, 6, out, 4, 0, &more, &next);
	ck_assert_uint_eq(n, 4);
	ck_assert(!more);
	/* A cursor between ids or past the end. */
	n = jobs_page(f.js, &all, 100, out, 4, 0, &more, &next);
	ck_assert_uint_eq(n, 0);
	ck_assert(!more);
	/* Filters: bob's are 3, 6, 9. */
	n = jobs_page(f.js, &bob, 0, out, 2, 0, &more, &next);
	ck_assert_uint_eq(n, 2);
	ck_assert(more);
	ck_assert_uint_eq(out[1]->id, 6);
	n = jobs_page(f.js, &bob, 6, out, 2, 0, &more, &next);
	ck_assert_uint_eq(n, 1);
	ck_assert(!more);
	ck_assert_uint_eq(out[0]->id, 9);
	/* Without all, ended jobs are passed over. */
	ck_assert_int_eq(jobs_cancel(f.js, &alice, 1, 2000, &state, &err), 0);
	all.all = false;
	n = jobs_page(f.js, &all, 0, out, 1, 0, &more, &next);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(out[0]->id, 2);
	teardown(&f);
}
END_TEST

/* A filter that matches little examines at most scan jobs a page: an
 * empty page with more to come, whose cursor is the last job examined;
 * following it reaches every match, and the end. */
START_TEST(test_jobs_page_scan_bound)
{
	struct fixture f;
	struct jobs_filter nobody = { .all = true, .user = "nobody" },
	    bob = { .all = true, .user = "bob" }, all = { .all = true };
	const struct job *out[4];
	uint64_t next, after;
	bool more;
	size_t n, pages, found;
	int i;

	setup(&f, 0);
	for (i = 1; i <= 25; i++)
		submit_ok(&f, i == 23 ? "bob" : "alice");
	n = jobs_page(f.js, &nobody, 0, out, 4, 10, &more, &next);
	ck_assert_uint_eq(n, 0);
	ck_assert(more);
	ck_assert_uint_eq(next, 10);
	n = jobs_page(f.js, &nobody, 10, out, 4, 10, &more, &next);
	ck_assert_uint_eq(n, 0);
	ck_assert(more);
	ck_assert_uint_eq(next, 20);
	/* The last 5: examined, none match, the end. */
	n = jobs_page(f.js, &nobody, 20, out, 4, 10, &more, &next);
	ck_assert_uint_eq(n, 0);
	ck_assert(!more);
	/* bob's one job (23) is found by following the cursor. */
	after = 0;
	pages = found = 0;
	do {
		n = jobs_page(f.js, &bob, after, out, 4, 10, &more, &next);
		if (n > 0) {
			ck_assert_uint_eq(n, 1);
			ck_assert_uint_eq(out[0]->id, 23);
		}
		found += n;
		ck_assert(!more || next > after);
		after = next;
		ck_assert_uint_lt(++pages, 10);
	} while (more);
	ck_assert_uint_eq(found, 1);
	ck_assert_uint_eq(pages, 3);
	/* A full page before the bound: the cursor is its last job. */
	n = jobs_page(f.js, &all, 0, out, 4, 10, &more, &next);
	ck_assert_uint_eq(n, 4);
	ck_assert(more);
	ck_assert_uint_eq(next, 4);
	teardown(&f);
}
END_TEST

static Suite *
quota_suite(void)
{
	Suite *s = suite_create("quota");
	TCase *tc = tcase_create("quota");
	TCase *tj = tcase_create("jobs");

	tcase_add_test(tc, test_bucket_burst_then_rate);
	tcase_add_test(tc, test_bucket_check_takes_nothing);
	tcase_add_test(tc, test_no_rate_no_limit);
	tcase_add_test(tc, test_pending_cap);
	tcase_add_test(tc, test_many_users_sorted);
	tcase_add_test(tc, test_set_opts);
	suite_add_tcase(s, tc);
	tcase_add_test(tj, test_jobs_pending_lifecycle);
	tcase_add_test(tj, test_jobs_pending_survives_restart);
	tcase_add_test(tj, test_jobs_rate_in_submit);
	tcase_add_test(tj, test_jobs_page);
	tcase_add_test(tj, test_jobs_page_scan_bound);
	suite_add_tcase(s, tj);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(quota_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
