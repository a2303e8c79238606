/* Tests of daemon/controller/store.c against real database files in a
 * fresh temporary directory per test. The sqlite3 API is used directly
 * only to look at, or prepare, a database behind the store's back: an
 * old schema version, a newer one, a row deleted by hand. */
#include "config.h"

#include <check.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "daemon/controller/store.h"
#include "lib/job.h"
#include "sql/migrations.h"

static char tmpdir[64];
static char dbpath[128];

static void
setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_store.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(dbpath, sizeof(dbpath), "%s/cohort.db", tmpdir);
}

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *f)
{
	return remove(path);
}

static void
teardown(void)
{
	nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static struct store *
open_ok(void)
{
	struct cerr err = { 0 };
	struct store *st;

	st = store_open(dbpath, &err);
	ck_assert_msg(st != NULL, "store_open: %s", err.text);
	return st;
}

/* Run SQL on a separate connection, behind the store's back. */
static void
raw_exec(const char *sql)
{
	sqlite3 *db;
	char *msg = NULL;

	ck_assert_int_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK,
	    "%s: %s", sql, msg ? msg : "?");
	sqlite3_close(db);
}

static int64_t
raw_int(const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	int64_t v;

	ck_assert_int_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
	v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

static char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	ck_assert_ptr_nonnull(p);
	return p;
}

/* The smallest job the schema accepts. */
static struct job *
small_job(uint64_t id, const char *user)
{
	struct job *job;

	ck_assert_ptr_nonnull(job = job_new());
	job->id = id;
	job->user = xstrdup(user);
	job->spec.name = xstrdup("small");
	ck_assert_int_eq(strv_append(&job->spec.argv, &job->spec.argc,
	    "true"), 0);
	job->state = JOB_PENDING;
	job->submit_ms = 1000 + (int64_t)id;
	return job;
}

/* A job with every field of the spec and record set. */
static struct job *
full_job(uint64_t id)
{
	static const char script[] = "#!/bin/sh\n\001\377\000echo hi\n";
	static const char *const env[] = { "A=1", "EMPTY=", "PATH=/bin:/usr/bin" };
	static const char *const argv[] = { "torchrun", "--nproc", "8", "",
	    "train.py" };
	struct job *job;
	struct job_spec *sp;
	size_t i;

	ck_assert_ptr_nonnull(job = job_new());
	sp = &job->spec;
	job->id = id;
	job->user = xstrdup("alice");
	sp->name = xstrdup("train");
	sp->nodes_min = 2;
	sp->nodes_max = 4;
	sp->gpus_per_node = 8;
	sp->tasks_per_node = 8;
	sp->gpu_type = xstrdup("h100");
	sp->time_limit_s = 7200;
	sp->priority = 500;
	sp->topo_mode = TOPO_REQUIRED;
	sp->topo_level = xstrdup("leaf");
	sp->checkpoint_dir = xstrdup("/ckpt/train");
	sp->max_restarts = 5;
	sp->ckpt_signal = SIGUSR2;
	sp->ckpt_secs = 120;
	sp->hang_timeout_s = 900;
	for (i = 0; i < sizeof(env) / sizeof(env[0]); i++)
		ck_assert_int_eq(strv_append(&sp->env, &sp->nenv, env[i]), 0);
	sp->workdir = xstrdup("/home/alice");
	for (i = 0; i < sizeof(argv) / sizeof(argv[0]); i++)
		ck_assert_int_eq(strv_append(&sp->argv, &sp->argc, argv[i]), 0);
	sp->script_len = sizeof(script) - 1;
	ck_assert_ptr_nonnull(sp->script = malloc(sp->script_len + 1));
	memcpy(sp->script, script, sp->script_len + 1);
	sp->script_name = xstrdup("run.sh");
	job->state = JOB_RUNNING;
	free(job->reason);
	job->reason = xstrdup("started on n[1-2]");
	job->submit_ms = 1700000000123;
	job->start_ms = 1700000001456;
	job->end_ms = 1700000002789;
	job->restarts = 2;
	job->has_exit = true;
	job->exit_code = -3;
	return job;
}

static void
assert_str_eq_or_null(const char *a, const char *b, const char *field)
{
	if (a == NULL || b == NULL)
		ck_assert_msg(a == b, "%s: %s vs %s", field, a ? a : "NULL",
		    b ? b : "NULL");
	else
		ck_assert_msg(strcmp(a, b) == 0, "%s: '%s' vs '%s'", field, a,
		    b);
}

static void
assert_strv_eq(char **a, size_t na, char **b, size_t nb, const char *field)
{
	size_t i;

	ck_assert_msg(na == nb, "%s: %zu vs %zu strings", field, na, nb);
	for (i = 0; i < na; i++)
		assert_str_eq_or_null(a[i], b[i], field);
}

static void
assert_job_eq(const struct job *a, const struct job *b)
{
	const struct job_spec *x = &a->spec, *y = &b->spec;

	ck_assert_uint_eq(a->id, b->id);
	assert_str_eq_or_null(a->user, b->user, "user");
	assert_str_eq_or_null(x->name, y->name, "name");
	ck_assert_uint_eq(x->nodes_min, y->nodes_min);
	ck_assert_uint_eq(x->nodes_max, y->nodes_max);
	ck_assert_uint_eq(x->gpus_per_node, y->gpus_per_node);
	ck_assert_uint_eq(x->tasks_per_node, y->tasks_per_node);
	assert_str_eq_or_null(x->gpu_type, y->gpu_type, "gpu_type");
	ck_assert_uint_eq(x->time_limit_s, y->time_limit_s);
	ck_assert_int_eq(x->priority, y->priority);
	ck_assert_int_eq(x->topo_mode, y->topo_mode);
	assert_str_eq_or_null(x->topo_level, y->topo_level, "topo_level");
	assert_str_eq_or_null(x->checkpoint_dir, y->checkpoint_dir,
	    "checkpoint_dir");
	ck_assert_uint_eq(x->max_restarts, y->max_restarts);
	ck_assert_int_eq(x->ckpt_signal, y->ckpt_signal);
	ck_assert_uint_eq(x->ckpt_secs, y->ckpt_secs);
	ck_assert_uint_eq(x->hang_timeout_s, y->hang_timeout_s);
	assert_strv_eq(x->env, x->nenv, y->env, y->nenv, "env");
	assert_str_eq_or_null(x->workdir, y->workdir, "workdir");
	assert_strv_eq(x->argv, x->argc, y->argv, y->argc, "argv");
	ck_assert_msg((x->script == NULL) == (y->script == NULL), "script");
	ck_assert_uint_eq(x->script_len, y->script_len);
	if (x->script != NULL)
		ck_assert_mem_eq(x->script, y->script, x->script_len);
	assert_str_eq_or_null(x->script_name, y->script_name, "script_name");
	ck_assert_int_eq(a->state, b->state);
	assert_str_eq_or_null(a->reason, b->reason, "reason");
	ck_assert_int_eq(a->submit_ms, b->submit_ms);
	ck_assert_int_eq(a->start_ms, b->start_ms);
	ck_assert_int_eq(a->end_ms, b->end_ms);
	ck_assert_uint_eq(a->restarts, b->restarts);
	ck_assert_int_eq(a->has_exit, b->has_exit);
	if (a->has_exit)
		ck_assert_int_eq(a->exit_code, b->exit_code);
}

#define MAX_LOADED 16

struct loaded {
	struct job *job[MAX_LOADED];
	size_t n;
	size_t stop_after;	/* 0: never stop */
};

static int
collect_job(struct job *job, void *arg)
{
	struct loaded *l = arg;

	ck_assert_uint_lt(l->n, MAX_LOADED);
	l->job[l->n++] = job;
	return l->stop_after != 0 && l->n == l->stop_after ? -1 : 0;
}

static void
load_all(struct store *st, struct loaded *l)
{
	struct cerr err = { 0 };

	memset(l, 0, sizeof(*l));
	ck_assert_msg(store_jobs_load(st, collect_job, l, &err) == 0, "%s",
	    err.text);
}

static void
loaded_free(struct loaded *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		job_free(l->job[i]);
	l->n = 0;
}

static void
insert_ok(struct store *st, const struct job *job)
{
	struct cerr err = { 0 };

	ck_assert_msg(store_job_insert(st, job, &err) == 0, "%s", err.text);
}

static void
event_ok(struct store *st, int64_t t, uint64_t job_id, const char *node,
    const char *kind, const char *detail)
{
	struct cerr err = { 0 };

	ck_assert_msg(store_event_append(st, t, job_id, node, kind, "tester",
	    detail, &err) == 0, "%s", err.text);
}

/* Begin, insert a small job with its event, commit. */
static void
submit(struct store *st, uint64_t id)
{
	struct cerr err = { 0 };
	struct job *job = small_job(id, "bob");

	ck_assert_int_eq(store_begin(st, &err), 0);
	insert_ok(st, job);
	event_ok(st, job->submit_ms, id, NULL, "submit", NULL);
	ck_assert_msg(store_commit(st, &err) == 0, "%s", err.text);
	job_free(job);
}

#define MAX_EVENTS 16

struct events {
	size_t n;
	int64_t id[MAX_EVENTS];
	uint64_t job[MAX_EVENTS];
	char node[MAX_EVENTS][16];	/* "-" for none */
	char kind[MAX_EVENTS][16];
	char detail[MAX_EVENTS][32];
};

static int
collect_event(const struct store_event *ev, void *arg)
{
	struct events *e = arg;

	ck_assert_uint_lt(e->n, MAX_EVENTS);
	ck_assert_str_eq(ev->actor, "tester");
	e->id[e->n] = ev->id;
	e->job[e->n] = ev->job_id;
	snprintf(e->node[e->n], sizeof(e->node[0]), "%s",
	    ev->node ? ev->node : "-");
	snprintf(e->kind[e->n], sizeof(e->kind[0]), "%s", ev->kind);
	snprintf(e->detail[e->n], sizeof(e->detail[0]), "%s", ev->detail);
	e->n++;
	return 0;
}

static void
list_events(struct store *st, int64_t after, uint64_t job, const char *node,
    int limit, struct events *e)
{
	struct cerr err = { 0 };

	memset(e, 0, sizeof(*e));
	ck_assert_msg(store_events_list(st, after, job, node, limit,
	    collect_event, e, &err) == 0, "%s", err.text);
}

START_TEST(test_fresh_schema)
{
	struct store *st = open_ok();
	struct stat sb;

	ck_assert_int_eq(store_schema_version(), (int)migrations_count);
	ck_assert_int_ge(store_schema_version(), 2);
	ck_assert(!store_in_txn(st));
	store_close(st);
	ck_assert_int_eq(raw_int("PRAGMA user_version"),
	    store_schema_version());
	/* WAL is persistent: a fresh connection sees it. */
	ck_assert_int_eq(raw_int("SELECT journal_mode = 'wal' "
	    "FROM pragma_journal_mode"), 1);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM sqlite_schema "
	    "WHERE type = 'index' AND name = 'events_time_ms'"), 1);
	/* Scripts and environments are private to the daemon's user. */
	ck_assert_int_eq(stat(dbpath, &sb), 0);
	ck_assert_int_eq(sb.st_mode & 077, 0);
	/* Opening again is a no-op migration. */
	st = open_ok();
	store_close(st);
	ck_assert_int_eq(raw_int("PRAGMA user_version"),
	    store_schema_version());
}
END_TEST

START_TEST(test_job_round_trip)
{
	struct cerr err = { 0 };
	struct store *st = open_ok();
	struct job *full = full_job(12), *bare = small_job(13, "bob");
	struct job *empty = small_job(14, "carol");
	struct loaded l;

	/* bare: every optional NULL, no env. empty: an empty script is
	 * still a script. */
	empty->spec.script = xstrdup("");
	empty->spec.script_len = 0;
	ck_assert_int_eq(store_begin(st, &err), 0);
	ck_assert(store_in_txn(st));
	insert_ok(st, full);
	insert_ok(st, bare);
	insert_ok(st, empty);
	ck_assert_int_eq(store_commit(st, &err), 0);
	ck_assert(!store_in_txn(st));
	store_close(st);

	st = open_ok();
	load_all(st, &l);
	ck_assert_uint_eq(l.n, 3);
	assert_job_eq(l.job[0], full);
	assert_job_eq(l.job[1], bare);
	assert_job_eq(l.job[2], empty);
	ck_assert_ptr_null(l.job[1]->spec.script);
	ck_assert_ptr_null(l.job[1]->spec.gpu_type);
	ck_assert_uint_eq(l.job[1]->spec.nenv, 0);
	ck_assert(!l.job[1]->has_exit);
	ck_assert_ptr_nonnull(l.job[2]->spec.script);
	ck_assert_str_eq(l.job[1]->reason, "");
	loaded_free(&l);

	/* A callback that stops the load makes it fail. */
	memset(&l, 0, sizeof(l));
	l.stop_after = 2;
	ck_assert_int_eq(store_jobs_load(st, collect_job, &l, &err), -1);
	ck_assert_uint_eq(l.n, 2);
	loaded_free(&l);

	store_close(st);
	job_free(full);
	job_free(bare);
	job_free(empty);
}
END_TEST

START_TEST(test_job_insert_errors)
{
	struct cerr err = { 0 };
	struct store *st = open_ok();
	struct job *job = small_job(5, "bob");
	struct loaded l;

	submit(st, 5);
	ck_assert_int_eq(store_begin(st, &err), 0);
	/* The same id twice. */
	ck_assert_int_eq(store_job_insert(st, job, &err), -1);
	ck_assert_int_eq(err.code, ERR_INTERNAL);
	ck_assert_msg(strncmp(err.text, "insert job 5: ", 14) == 0, "%s",
	    err.text);
	/* A state the schema does not know. */
	job->id = 6;
	job->state = 0;
	cerr_clear(&err);
	ck_assert_int_eq(store_job_insert(st, job, &err), -1);
	ck_assert_msg(strstr(err.text, "CHECK") != NULL, "%s", err.text);
	/* The transaction survives statement errors. */
	ck_assert(store_in_txn(st));
	ck_assert_int_eq(store_commit(st, &err), 0);
	load_all(st, &l);
	ck_assert_uint_eq(l.n, 1);
	loaded_free(&l);
	store_close(st);
	job_free(job);
}
END_TEST

START_TEST(test_job_update)
{
	struct cerr err = { 0 };
	struct store *st = open_ok();
	struct job *job = full_job(3);
	struct loaded l;

	ck_assert_int_eq(store_begin(st, &err), 0);
	insert_ok(st, job);
	ck_assert_int_eq(store_commit(st, &err), 0);

	job->state = JOB_FAILED;
	free(job->reason);
	job->reason = xstrdup("node n2 DOWN");
	job->start_ms = 5;
	job->end_ms = 6;
	job->restarts = 4;
	job->has_exit = true;
	job->exit_code = 137;
	ck_assert_int_eq(store_begin(st, &err), 0);
	ck_assert_msg(store_job_update(st, job, &err) == 0, "%s", err.text);
	ck_assert_int_eq(store_commit(st, &err), 0);
	load_all(st, &l);
	ck_assert_uint_eq(l.n, 1);
	assert_job_eq(l.job[0], job);
	loaded_free(&l);

	/* And back to no exit code. */
	job->state = JOB_RESTARTING;
	job->has_exit = false;
	ck_assert_int_eq(store_begin(st, &err), 0);
	ck_assert_int_eq(store_job_update(st, job, &err), 0);
	ck_assert_int_eq(store_commit(st, &err), 0);
	load_all(st, &l);
	ck_assert(!l.job[0]->has_exit);
	ck_assert_int_eq(l.job[0]->state, JOB_RESTARTING);
	loaded_free(&l);

	job->id = 99;
	ck_assert_int_eq(store_begin(st, &err), 0);
	ck_assert_int_eq(store_job_update(st, job, &err), -1);
	ck_assert_int_eq(err.code, ERR_NOT_FOUND);
	ck_assert_msg(strstr(err.text, "99") != NULL, "%s", err.text);
	ck_assert_int_eq(store_rollback(st), 0);
	store_close(st);
	job_free(job);
}
END_TEST

START_TEST(test_events)
{
	struct cerr err = { 0 };
	struct store *st = open_ok();
	struct events e;
	int64_t third;

	submit(st, 1);		/* event 1: job 1 submit */
	submit(st, 2);		/* event 2: job 2 submit */
	ck_assert_int_eq(store_begin(st, &err), 0);
	event_ok(st, 3000, 1, "n2", "start", "on n2");
	event_ok(st, 3001, 0, "n1", "drain", "bad gpu");
	event_ok(st, 3002, 1, "n1", "end", "");
	event_ok(st, 3003, 2, "n1", "start", NULL);
	ck_assert_int_eq(store_commit(st, &err), 0);

	list_events(st, 0, 0, NULL, 0, &e);
	ck_assert_uint_eq(e.n, 6);
	ck_assert_int_lt(e.id[0], e.id[1]);
	ck_assert_int_lt(e.id[4], e.id[5]);
	ck_assert_str_eq(e.node[0], "-");
	ck_assert_uint_eq(e.job[3], 0);
	ck_assert_str_eq(e.detail[3], "bad gpu");
	ck_assert_str_eq(e.detail[5], "");
	third = e.id[2];

	list_events(st, 0, 1, NULL, 0, &e);
	ck_assert_uint_eq(e.n, 3);
	ck_assert_str_eq(e.kind[0], "submit");
	ck_assert_str_eq(e.kind[1], "start");
	ck_assert_str_eq(e.kind[2], "end");

	list_events(st, 0, 0, "n1", 0, &e);
	ck_assert_uint_eq(e.n, 3);
	ck_assert_str_eq(e.kind[0], "drain");
	ck_assert_uint_eq(e.job[2], 2);

	list_events(st, 0, 1, "n1", 0, &e);
	ck_assert_uint_eq(e.n, 1);
	ck_assert_str_eq(e.kind[0], "end");

	list_events(st, third, 0, NULL, 0, &e);
	ck_assert_uint_eq(e.n, 3);
	ck_assert_int_gt(e.id[0], third);

	list_events(st, 0, 0, NULL, 2, &e);
	ck_assert_uint_eq(e.n, 2);
	list_events(st, e.id[0], 1, NULL, 1, &e);
	ck_assert_uint_eq(e.n, 1);
	ck_assert_str_eq(e.kind[0], "start");

	list_events(st, 0, 0, "nowhere", 0, &e);
	ck_assert_uint_eq(e.n, 0);

	/* Foreign keys are on: an event cannot name an unknown job. */
	ck_assert_int_eq(store_begin(st, &err), 0);
	ck_assert_int_eq(store_event_append(st, 1, 42, NULL, "x", "tester",
	    NULL, &err), -1);
	ck_assert_msg(strstr(err.text, "append event") != NULL, "%s",
	    err.text);
	ck_assert_int_eq(store_rollback(st), 0);
	store_close(st);
}
END_TEST

START_TEST(test_rollback)
{
	struct cerr err = { 0 };
	struct store *st = open_ok();
	struct job *job = small_job(1, "bob"), *other = small_job(2, "bob");
	struct loaded l;
	struct events e;
	uint64_t max;

	submit(st, 1);
	ck_assert_int_eq(store_begin(st, &err), 0);
	insert_ok(st, other);
	event_ok(st, 5, 2, NULL, "submit", NULL);
	job->state = JOB_CANCELLED;
	ck_assert_int_eq(store_job_update(st, job, &err), 0);
	ck_assert_int_eq(store_rollback(st), 0);
	ck_assert(!store_in_txn(st));
	/* Nothing to roll back is not an error. */
	ck_assert_int_eq(store_rollback(st), 0);

	load_all(st, &l);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_int_eq(l.job[0]->state, JOB_PENDING);
	loaded_free(&l);
	list_events(st, 0, 0, NULL, 0, &e);
	ck_assert_uint_eq(e.n, 1);
	ck_assert_int_eq(store_max_job_id(st, &max, &err), 0);
	ck_assert_uint_eq(max, 1);

	/* A failed commit (here: none open) leaves no transaction. */
	ck_assert_int_eq(store_commit(st, &err), -1);
	ck_assert(!store_in_txn(st));

	/* Closing with a transaction open rolls it back. */
	ck_assert_int_eq(store_begin(st, &err), 0);
	insert_ok(st, other);
	store_close(st);
	st = open_ok();
	load_all(st, &l);
	ck_assert_uint_eq(l.n, 1);
	loaded_free(&l);
	store_close(st);
	job_free(job);
	job_free(other);
}
END_TEST

START_TEST(test_mark_undo)
{
	struct cerr err = { 0 };
	struct store *st = open_ok();
	struct job *j1 = small_job(1, "a"), *j2 = small_job(2, "b");
	struct job *j3 = small_job(3, "c");
	struct loaded l;
	struct events e;

	/* Marks belong inside a transaction. */
	ck_assert_int_eq(store_mark(st, &err), -1);
	ck_assert_int_eq(store_begin(st, &err), 0);

	ck_assert_int_eq(store_mark(st, &err), 0);
	ck_assert_int_eq(store_mark(st, &err), -1);	/* not nested */
	insert_ok(st, j1);
	event_ok(st, 1, 1, NULL, "submit", NULL);
	ck_assert_int_eq(store_keep(st, &err), 0);

	/* The second request writes, then fails on a duplicate id. */
	ck_assert_int_eq(store_mark(st, &err), 0);
	insert_ok(st, j2);
	event_ok(st, 2, 2, NULL, "submit", NULL);
	ck_assert_int_eq(store_job_insert(st, j1, &err), -1);
	ck_assert_int_eq(store_undo(st), 0);
	ck_assert(store_in_txn(st));

	ck_assert_int_eq(store_mark(st, &err), 0);
	insert_ok(st, j3);
	event_ok(st, 3, 3, NULL, "submit", NULL);
	ck_assert_int_eq(store_keep(st, &err), 0);
	ck_assert_int_eq(store_commit(st, &err), 0);

	load_all(st, &l);
	ck_assert_uint_eq(l.n, 2);
	ck_assert_uint_eq(l.job[0]->id, 1);
	ck_assert_uint_eq(l.job[1]->id, 3);
	loaded_free(&l);
	list_events(st, 0, 0, NULL, 0, &e);
	ck_assert_uint_eq(e.n, 2);
	ck_assert_uint_eq(e.job[0], 1);
	ck_assert_uint_eq(e.job[1], 3);
	store_close(st);
	job_free(j1);
	job_free(j2);
	job_free(j3);
}
END_TEST

START_TEST(test_max_job_id)
{
	struct cerr err = { 0 };
	struct store *st = open_ok();
	struct job *j5 = small_job(5, "a"), *j3 = small_job(3, "b");
	uint64_t max = 1234;

	ck_assert_int_eq(store_max_job_id(st, &max, &err), 0);
	ck_assert_uint_eq(max, 0);
	ck_assert_int_eq(store_begin(st, &err), 0);
	insert_ok(st, j5);
	insert_ok(st, j3);
	ck_assert_int_eq(store_commit(st, &err), 0);
	ck_assert_int_eq(store_max_job_id(st, &max, &err), 0);
	ck_assert_uint_eq(max, 5);
	store_close(st);

	/* The highest id is remembered after its row is gone. */
	raw_exec("DELETE FROM jobs WHERE id = 5");
	st = open_ok();
	ck_assert_int_eq(store_max_job_id(st, &max, &err), 0);
	ck_assert_uint_eq(max, 5);
	store_close(st);
	job_free(j5);
	job_free(j3);
}
END_TEST

START_TEST(test_migrate_old)
{
	struct cerr err = { 0 };
	struct store *st;
	struct loaded l;
	uint64_t max;
	sqlite3 *db;

	/* A database as the first release left it. */
	ck_assert_int_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, migrations[0].sql, NULL, NULL,
	    NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "PRAGMA user_version = 1; "
	    "INSERT INTO jobs (id, user, name, nodes_min, nodes_max, "
	    "gpus_per_node, tasks_per_node, time_limit_s, priority, "
	    "topo_mode, max_restarts, ckpt_signal, ckpt_secs, hang_timeout_s, "
	    "env, argv, state, submit_ms) VALUES (7, 'carol', 'old', 1, 1, "
	    "0, 1, 60, 100, 0, 3, 10, 60, 0, x'', "
	    "x'736c65657000313000', 'PENDING', 77)", NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(db);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM sqlite_schema "
	    "WHERE type = 'index' AND name = 'events_job_id'"), 0);

	st = open_ok();
	load_all(st, &l);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_uint_eq(l.job[0]->id, 7);
	ck_assert_str_eq(l.job[0]->user, "carol");
	ck_assert_uint_eq(l.job[0]->spec.argc, 2);
	ck_assert_str_eq(l.job[0]->spec.argv[0], "sleep");
	ck_assert_str_eq(l.job[0]->spec.argv[1], "10");
	ck_assert_int_eq(l.job[0]->state, JOB_PENDING);
	ck_assert_str_eq(l.job[0]->reason, "");
	loaded_free(&l);
	ck_assert_int_eq(store_max_job_id(st, &max, &err), 0);
	ck_assert_uint_eq(max, 7);
	store_close(st);
	ck_assert_int_eq(raw_int("PRAGMA user_version"),
	    store_schema_version());
	ck_assert_int_eq(raw_int("SELECT count(*) FROM sqlite_schema "
	    "WHERE type = 'index' AND name = 'events_job_id'"), 1);
}
END_TEST

START_TEST(test_refuse_newer)
{
	struct cerr err = { 0 };

	raw_exec("PRAGMA user_version = 99");
	ck_assert_ptr_null(store_open(dbpath, &err));
	ck_assert_int_eq(err.code, ERR_VERSION);
	ck_assert_msg(strstr(err.text, "newer") != NULL &&
	    strstr(err.text, "99") != NULL, "%s", err.text);
	/* Left as it was. */
	ck_assert_int_eq(raw_int("PRAGMA user_version"), 99);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM sqlite_schema"), 0);
}
END_TEST

START_TEST(test_refuse_not_database)
{
	static const char line[] = "this is not a database, only text\n";
	struct cerr err = { 0 };
	struct stat sb;
	FILE *f;
	int i;

	ck_assert_ptr_nonnull(f = fopen(dbpath, "w"));
	for (i = 0; i < 200; i++)
		fputs(line, f);
	ck_assert_int_eq(fclose(f), 0);

	ck_assert_ptr_null(store_open(dbpath, &err));
	ck_assert_int_eq(err.code, ERR_INTERNAL);
	ck_assert_msg(strstr(err.text, dbpath) != NULL &&
	    strstr(err.text, "not a database") != NULL, "%s", err.text);
	ck_assert_int_eq(stat(dbpath, &sb), 0);
	ck_assert_int_eq(sb.st_size, 200 * (sizeof(line) - 1));

	/* A directory where the file should be. */
	cerr_clear(&err);
	snprintf(dbpath, sizeof(dbpath), "%s", tmpdir);
	ck_assert_ptr_null(store_open(dbpath, &err));
	ck_assert_int_ne(err.text[0], '\0');
}
END_TEST

static Suite *
store_suite(void)
{
	Suite *s = suite_create("store");
	TCase *tc = tcase_create("store");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_fresh_schema);
	tcase_add_test(tc, test_job_round_trip);
	tcase_add_test(tc, test_job_insert_errors);
	tcase_add_test(tc, test_job_update);
	tcase_add_test(tc, test_events);
	tcase_add_test(tc, test_rollback);
	tcase_add_test(tc, test_mark_undo);
	tcase_add_test(tc, test_max_job_id);
	tcase_add_test(tc, test_migrate_old);
	tcase_add_test(tc, test_refuse_newer);
	tcase_add_test(tc, test_refuse_not_database);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(store_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
