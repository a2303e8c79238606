/* Group commit: writes of one loop round share a commit, callbacks run only
 * after it, and what they report is in the database. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <sqlite3.h>

#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/store/store.h"
#include "daemon/controller/store/txq.h"

struct fixture {
	char dir[64];
	char path[128];
	struct event_base *base;
	struct store *st;
	struct txq *q;
	int aborts;
};

static void
on_abort(void *arg)
{
	((struct fixture *)arg)->aborts++;
}

static void
setup(struct fixture *f)
{
	struct cerr err;

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/check_txq.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/t.db", f->dir);
	/* One event_base per test, created after Check forks. */
	f->base = event_base_new();
	f->st = store_open(f->path, &err);
	ck_assert_msg(f->st != NULL, "store_open: %s", err.text);
	f->q = txq_create(f->base, f->st, on_abort, f);
	ck_assert_ptr_nonnull(f->q);
}

static void
teardown(struct fixture *f)
{
	char cmd[200];

	txq_destroy(f->q);
	store_close(f->st);
	event_base_free(f->base);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	ck_assert_int_eq(system(cmd), 0);
}

static struct job *
make_job(uint64_t id)
{
	struct job *job = job_new();

	job->id = id;
	job->user = strdup("alice");
	job->state = JOB_PENDING;
	job->submit_ms = 1000 + id;
	strv_append(&job->spec.argv, &job->spec.argc, "true");
	job->spec.name = strdup("t");
	return job;
}

struct seen {
	int calls;
	int committed;
};

static void
count_cb(void *arg, bool committed)
{
	struct seen *s = arg;

	s->calls++;
	s->committed += committed;
}

static int
count_jobs(struct job *job, void *arg)
{
	(*(int *)arg)++;
	job_free(job);
	return 0;
}

START_TEST(test_one_commit_for_a_round)
{
	struct fixture f;
	struct seen seen = { 0 };
	struct cerr err;
	struct job *job;
	uint64_t id;
	int n = 0;

	setup(&f);
	for (id = 1; id <= 10; id++) {
		ck_assert_int_eq(txq_join(f.q, &err), 0);
		job = make_job(id);
		ck_assert_int_eq(store_job_insert(f.st, job, &err), 0);
		job_free(job);
		ck_assert_int_eq(txq_defer(f.q, count_cb, &seen), 0);
	}
	/* Nothing is acknowledged before the loop has run the commit. */
	ck_assert_int_eq(seen.calls, 0);
	ck_assert_uint_eq(txq_commits(f.q), 0);
	event_base_loop(f.base, EVLOOP_NONBLOCK);
	ck_assert_int_eq(seen.calls, 10);
	ck_assert_int_eq(seen.committed, 10);
	ck_assert_uint_eq(txq_commits(f.q), 1);
	ck_assert(!store_in_txn(f.st));
	ck_assert_int_eq(f.aborts, 0);

	/* Durable: a second connection to the file sees all ten. */
	store_close(f.st);
	f.st = store_open(f.path, &err);
	ck_assert_ptr_nonnull(f.st);
	ck_assert_int_eq(store_jobs_load(f.st, count_jobs, &n, &err), 0);
	ck_assert_int_eq(n, 10);
	txq_destroy(f.q);
	f.q = txq_create(f.base, f.st, on_abort, &f);
	teardown(&f);
}
END_TEST

START_TEST(test_defer_without_writes_runs_now)
{
	struct fixture f;
	struct seen seen = { 0 };

	setup(&f);
	ck_assert_int_eq(txq_defer(f.q, count_cb, &seen), 0);
	ck_assert_int_eq(seen.calls, 1);
	ck_assert_int_eq(seen.committed, 1);
	ck_assert_uint_eq(txq_commits(f.q), 0);
	teardown(&f);
}
END_TEST

START_TEST(test_failed_request_leaves_batch_intact)
{
	struct fixture f;
	struct seen seen = { 0 };
	struct cerr err;
	struct job *job;

	setup(&f);
	ck_assert_int_eq(txq_join(f.q, &err), 0);
	job = make_job(1);
	ck_assert_int_eq(store_job_insert(f.st, job, &err), 0);
	/* A second insert of the same id fails as a statement; the request
	 * undoes its own writes and the batch still commits. */
	ck_assert_int_eq(store_mark(f.st, &err), 0);
	ck_assert_int_eq(store_job_insert(f.st, job, &err), -1);
	ck_assert_int_eq(store_undo(f.st), 0);
	job_free(job);
	ck_assert_int_eq(txq_defer(f.q, count_cb, &seen), 0);
	txq_flush(f.q);
	ck_assert_int_eq(seen.committed, 1);
	ck_assert_int_eq(f.aborts, 0);
	teardown(&f);
}
END_TEST

START_TEST(test_flush_on_destroy)
{
	struct fixture f;
	struct seen seen = { 0 };
	struct cerr err;
	struct job *job;

	setup(&f);
	ck_assert_int_eq(txq_join(f.q, &err), 0);
	job = make_job(1);
	ck_assert_int_eq(store_job_insert(f.st, job, &err), 0);
	job_free(job);
	ck_assert_int_eq(txq_defer(f.q, count_cb, &seen), 0);
	txq_destroy(f.q);
	f.q = NULL;
	ck_assert_int_eq(seen.committed, 1);
	f.q = txq_create(f.base, f.st, on_abort, &f);
	teardown(&f);
}
END_TEST

/* Run sql on the database through a connection of the test's own. */
static void
side_sql(const struct fixture *f, const char *sql)
{
	sqlite3 *db;
	char *msg = NULL;

	ck_assert_int_eq(sqlite3_open(f->path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK,
	    "%s: %s", sql, msg != NULL ? msg : "?");
	sqlite3_close(db);
}

/* cohort node delete changes memory only once its rows are gone for
 * good: a commit that fails (here a deferred foreign key made by the
 * test onto the node's row) leaves the node in memory, as it is in the
 * database; a commit that works removes it from both. */
START_TEST(test_node_delete_waits_for_commit)
{
	struct fixture f;
	struct inventory inv;
	struct nodes *ns;
	struct node *n;
	struct cerr err;

	setup(&f);
	ns = nodes_create(f.st, f.q, 0, &err);
	ck_assert_msg(ns != NULL, "nodes_create: %s", err.text);
	memset(&inv, 0, sizeof(inv));
	snprintf(inv.source, sizeof(inv.source), "simulated");
	inv.ngpus = 1;
	ck_assert_int_eq(nodes_register(ns, "n1", "127.0.0.1", &inv, false,
	    7, 1000, &err), 0);
	txq_flush(f.q);
	nodes_disconnected(ns, 7);
	ck_assert_int_eq(nodes_check_timeouts(ns, 100000, 5000, NULL, NULL),
	    1);
	txq_flush(f.q);
	ck_assert_ptr_nonnull(n = nodes_get(ns, "n1"));
	ck_assert_int_eq(n->state, NODE_DOWN);

	side_sql(&f, "CREATE TABLE guard (node TEXT REFERENCES nodes(name) "
	    "DEFERRABLE INITIALLY DEFERRED); INSERT INTO guard VALUES ('n1')");
	ck_assert_int_eq(nodes_delete(ns, n, "admin", 200000, &err), 0);
	/* Not before the commit... */
	ck_assert_ptr_nonnull(nodes_get(ns, "n1"));
	txq_flush(f.q);
	ck_assert_int_eq(f.aborts, 1);
	/* ...nor after one that failed. */
	ck_assert_ptr_nonnull(n = nodes_get(ns, "n1"));

	side_sql(&f, "DELETE FROM guard");
	ck_assert_int_eq(nodes_delete(ns, n, "admin", 300000, &err), 0);
	ck_assert_ptr_nonnull(nodes_get(ns, "n1"));
	txq_flush(f.q);
	ck_assert_int_eq(f.aborts, 1);
	ck_assert_ptr_null(nodes_get(ns, "n1"));
	nodes_destroy(ns);
	/* The database agrees. */
	ns = nodes_create(f.st, f.q, 0, &err);
	ck_assert_ptr_nonnull(ns);
	ck_assert_ptr_null(nodes_get(ns, "n1"));
	nodes_destroy(ns);
	teardown(&f);
}
END_TEST

static Suite *
txq_suite(void)
{
	Suite *s = suite_create("txq");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_one_commit_for_a_round);
	tcase_add_test(tc, test_defer_without_writes_runs_now);
	tcase_add_test(tc, test_failed_request_leaves_batch_intact);
	tcase_add_test(tc, test_flush_on_destroy);
	tcase_add_test(tc, test_node_delete_waits_for_commit);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(txq_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
