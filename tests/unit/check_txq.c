/* Group commit: writes of one loop round share a commit, callbacks run only
 * after it, and what they report is in the database. */
#include "config.h"

#include <sys/stat.h>
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
	const struct txq *q;	/* if set: */
	unsigned long syncs;	/* txq_syncs at the last call */
};

static void
count_cb(void *arg, bool committed)
{
	struct seen *s = arg;

	s->calls++;
	s->committed += committed;
	if (s->q != NULL)
		s->syncs = txq_syncs(s->q);
}

/* Run the loop until *v reaches want: the sync thread's answer comes
 * through the loop. Bounded, so a sync that never ends fails the test. */
static void
loop_until(struct fixture *f, const int *v, int want)
{
	int i;

	for (i = 0; i < 1000 && *v < want; i++) {
		event_base_loop(f->base, EVLOOP_NONBLOCK);
		if (*v < want)
			usleep(10000);
	}
}

/* A sync thread held at each sync until the test lets it go. */
struct gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int started;		/* syncs that reached the hook */
	int allowed;		/* syncs the test let through */
};

static void
gate_hook(void *arg)
{
	struct gate *g = arg;

	pthread_mutex_lock(&g->mu);
	g->started++;
	pthread_cond_broadcast(&g->cv);
	while (g->allowed < g->started)
		pthread_cond_wait(&g->cv, &g->mu);
	pthread_mutex_unlock(&g->mu);
}

static void
gate_init(struct gate *g)
{
	memset(g, 0, sizeof(*g));
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
}

/* Wait (bounded) until n syncs reached the hook; returns how many did. */
static int
gate_wait_started(struct gate *g, int n)
{
	struct timespec ts;
	int started;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	pthread_mutex_lock(&g->mu);
	while (g->started < n && pthread_cond_timedwait(&g->cv, &g->mu,
	    &ts) == 0)
		;
	started = g->started;
	pthread_mutex_unlock(&g->mu);
	return started;
}

static void
gate_allow(struct gate *g, int n)
{
	pthread_mutex_lock(&g->mu);
	g->allowed = n;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

static int
gate_started(struct gate *g)
{
	int n;

	pthread_mutex_lock(&g->mu);
	n = g->started;
	pthread_mutex_unlock(&g->mu);
	return n;
}

/* One request of a batch: a job row and a callback. */
static void
submit(struct fixture *f, uint64_t id, struct seen *seen)
{
	struct cerr err;
	struct job *job;

	ck_assert_int_eq(txq_join(f->q, &err), 0);
	job = make_job(id);
	ck_assert_int_eq(store_job_insert(f->st, job, &err), 0);
	job_free(job);
	ck_assert_int_eq(txq_defer(f->q, count_cb, seen), 0);
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
	ck_assert(txq_async(f.q));
	/* ...and its sync, on the sync thread. */
	loop_until(&f, &seen.calls, 10);
	ck_assert_int_eq(seen.calls, 10);
	ck_assert_uint_eq(txq_syncs(f.q), 1);
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

/* The sync of the WAL runs off the loop while the loop commits the next
 * batch; a batch's callbacks wait for a sync that started after its
 * commit, and a commit made while a sync is in flight waits for the next
 * one. */
START_TEST(test_callbacks_wait_for_their_sync)
{
	struct fixture f;
	struct seen one = { 0 }, two = { 0 }, read = { 0 };
	struct gate g;

	setup(&f);
	gate_init(&g);
	txq_set_sync_hook(f.q, gate_hook, &g);
	one.q = two.q = read.q = f.q;

	submit(&f, 1, &one);
	event_base_loop(f.base, EVLOOP_NONBLOCK);
	ck_assert_uint_eq(txq_commits(f.q), 1);
	ck_assert_int_eq(gate_wait_started(&g, 1), 1);
	/* Committed, its sync held: not acknowledged. */
	ck_assert_int_eq(one.calls, 0);

	/* The next batch commits while that sync is in flight. */
	submit(&f, 2, &two);
	event_base_loop(f.base, EVLOOP_NONBLOCK);
	ck_assert_uint_eq(txq_commits(f.q), 2);
	ck_assert(!store_in_txn(f.st));
	/* A read outside any transaction waits for the last commit. */
	ck_assert_int_eq(txq_defer(f.q, count_cb, &read), 0);
	event_base_loop(f.base, EVLOOP_NONBLOCK);
	ck_assert_int_eq(one.calls + two.calls + read.calls, 0);
	/* At most one sync in flight. */
	ck_assert_int_eq(gate_started(&g), 1);

	/* The first sync returns: the first batch only, after it. */
	gate_allow(&g, 1);
	loop_until(&f, &one.calls, 1);
	ck_assert_int_eq(one.calls, 1);
	ck_assert_int_eq(one.committed, 1);
	ck_assert_uint_eq(one.syncs, 1);
	ck_assert_int_eq(two.calls, 0);
	ck_assert_int_eq(read.calls, 0);

	/* The second batch needs a sync of its own, started by now. */
	ck_assert_int_eq(gate_wait_started(&g, 2), 2);
	ck_assert_int_eq(two.calls, 0);
	gate_allow(&g, 2);
	loop_until(&f, &read.calls, 1);
	ck_assert_int_eq(two.calls, 1);
	ck_assert_uint_eq(two.syncs, 2);
	ck_assert_int_eq(read.calls, 1);
	ck_assert_uint_eq(read.syncs, 2);
	ck_assert_uint_eq(txq_syncs(f.q), 2);
	/* Nothing waits: a read is answered at once. */
	read.calls = 0;
	ck_assert_int_eq(txq_defer(f.q, count_cb, &read), 0);
	ck_assert_int_eq(read.calls, 1);
	gate_allow(&g, 1000);
	teardown(&f);
}
END_TEST

/* txq_flush (shutdown) waits for the sync in flight, syncs what came
 * after it, and runs every callback before it returns. */
START_TEST(test_flush_waits_for_sync_in_flight)
{
	struct fixture f;
	struct seen one = { 0 }, two = { 0 };
	struct gate g;

	setup(&f);
	gate_init(&g);
	txq_set_sync_hook(f.q, gate_hook, &g);
	one.q = two.q = f.q;
	submit(&f, 1, &one);
	event_base_loop(f.base, EVLOOP_NONBLOCK);
	ck_assert_int_eq(gate_wait_started(&g, 1), 1);
	submit(&f, 2, &two);
	ck_assert_int_eq(one.calls + two.calls, 0);
	/* Let the held sync go only now: flush must wait for it. */
	gate_allow(&g, 1000);
	txq_flush(f.q);
	ck_assert_int_eq(one.committed, 1);
	ck_assert_int_eq(two.committed, 1);
	ck_assert_uint_eq(one.syncs, 2);
	ck_assert_uint_eq(txq_commits(f.q), 2);
	/* The thread's own sync and the flush's. */
	ck_assert_uint_eq(txq_syncs(f.q), 2);
	/* The thread's late word through the pipe changes nothing. */
	event_base_loop(f.base, EVLOOP_NONBLOCK);
	ck_assert_int_eq(one.calls, 1);
	ck_assert_int_eq(two.calls, 1);
	teardown(&f);
}
END_TEST

/* A failed sync is fatal before anything waiting for it runs: here the
 * sync thread's descriptor of the WAL is swapped for a pipe, which
 * fdatasync refuses (EINVAL). The test exits 1 (fatal) or fails: a
 * callback that ran exits 3, a loop that went on returns 0. */
static void
never_cb(void *arg, bool committed)
{
	_exit(3);
}

static void
break_fd_hook(void *arg)
{
	int p[2], fd = *(int *)arg;

	if (pipe(p) == 0)
		dup2(p[0], fd);
}

START_TEST(test_failed_sync_is_fatal)
{
	struct fixture f;
	struct cerr err;
	struct job *job;
	int fd, i;

	setup(&f);
	ck_assert_int_ne(fd = store_wal_fd(f.st), -1);
	txq_set_sync_hook(f.q, break_fd_hook, &fd);
	ck_assert_int_eq(txq_join(f.q, &err), 0);
	job = make_job(1);
	ck_assert_int_eq(store_job_insert(f.st, job, &err), 0);
	job_free(job);
	ck_assert_int_eq(txq_defer(f.q, never_cb, NULL), 0);
	for (i = 0; i < 1000; i++) {
		event_base_loop(f.base, EVLOOP_NONBLOCK);
		usleep(10000);
	}
}
END_TEST

/* With no event loop (unit tests, the goodput simulator) each commit
 * syncs as it returns: no thread, deterministic. */
START_TEST(test_no_loop_stays_synchronous)
{
	struct fixture f;
	struct seen seen = { 0 };
	struct txq *q;
	struct cerr err;
	struct job *job;

	setup(&f);
	txq_destroy(f.q);
	ck_assert_ptr_nonnull(q = txq_create(NULL, f.st, on_abort, &f));
	f.q = q;
	ck_assert(!txq_async(q));
	ck_assert_int_eq(txq_join(q, &err), 0);
	job = make_job(1);
	ck_assert_int_eq(store_job_insert(f.st, job, &err), 0);
	job_free(job);
	ck_assert_int_eq(txq_defer(q, count_cb, &seen), 0);
	ck_assert_int_eq(seen.calls, 0);
	txq_flush(q);
	ck_assert_int_eq(seen.committed, 1);
	ck_assert_uint_eq(txq_syncs(q), 0);
	teardown(&f);
}
END_TEST

/* Commits whose syncs are deferred still get checkpoints (with their
 * syncs): the WAL is copied into the database once it passes SQLite's
 * threshold, and every row is there after a reopen. */
START_TEST(test_checkpoint_with_deferred_syncs)
{
	struct fixture f;
	struct seen seen = { 0 };
	struct cerr err;
	struct stat sb0, sb1;
	uint64_t id;
	int n = 0;

	setup(&f);
	ck_assert_int_eq(stat(f.path, &sb0), 0);
	/* One commit per job: each is at least two WAL frames. */
	for (id = 1; id <= 600; id++) {
		submit(&f, id, &seen);
		event_base_loop(f.base, EVLOOP_NONBLOCK);
	}
	txq_flush(f.q);
	ck_assert_int_eq(seen.committed, 600);
	ck_assert_int_eq(stat(f.path, &sb1), 0);
	ck_assert_msg(sb1.st_size > sb0.st_size, "no checkpoint: database "
	    "%lld bytes, was %lld", (long long)sb1.st_size,
	    (long long)sb0.st_size);
	txq_destroy(f.q);
	f.q = NULL;
	store_close(f.st);
	f.st = store_open(f.path, &err);
	ck_assert_ptr_nonnull(f.st);
	ck_assert_int_eq(store_jobs_load(f.st, count_jobs, &n, &err), 0);
	ck_assert_int_eq(n, 600);
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
	tcase_add_test(tc, test_callbacks_wait_for_their_sync);
	tcase_add_test(tc, test_flush_waits_for_sync_in_flight);
	tcase_add_test(tc, test_no_loop_stays_synchronous);
	tcase_add_test(tc, test_checkpoint_with_deferred_syncs);
	tcase_add_exit_test(tc, test_failed_sync_is_fatal, 1);
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
