/* Tests of daemon/controller/store/store.c and store_nodes.c against real
 * database files in a fresh temporary directory per test. The sqlite3
 * API is used directly only to look at, or prepare, a database behind the
 * store's back: an old schema version, a newer one, a row deleted or
 * corrupted by hand. */
#include "config.h"

#include <check.h>
#include <stdbool.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "daemon/controller/store/store.h"
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
	sp->queue = xstrdup("team-a");
	sp->service = true;
	sp->constraint = xstrdup("(fp64|ib)&nvl72");
	sp->gpu_memory_mb = 80 * 1024;
	sp->cpus_per_task = 6;
	sp->mem_per_node_mb = 3 * 1024;
	sp->segment = 18;
	sp->idem_key = xstrdup("c-0123456789abcdef");
	sp->has_idem_fp = true;
	for (i = 0; i < JOB_IDEM_FP_LEN; i++)
		sp->idem_fp[i] = (unsigned char)(0xf0 ^ i);
	sp->has_umask = true;
	sp->umask = 027;
	sp->submit_host = xstrdup("login01.example");
	sp->mail_type = JOB_MAIL_END | JOB_MAIL_FAIL;
	sp->mail_user = xstrdup("x@example.org");
	sp->ctr.image = xstrdup("/srv/img.sqsh");
	sp->ctr.mounts = xstrdup("/a:/b:ro,/c");
	sp->ctr.mount_home = true;
	sp->batch = true;
	sp->signal_scope = JOB_SIGNAL_BATCH;
	sp->begin_ms = 1700000000999;
	sp->on_straggler = JOB_STRAGGLER_REPLACE;
	sp->interactive = true;
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
	assert_str_eq_or_null(x->queue, y->queue, "queue");
	ck_assert_int_eq(x->service, y->service);
	assert_str_eq_or_null(x->constraint, y->constraint, "constraint");
	ck_assert_uint_eq(x->gpu_memory_mb, y->gpu_memory_mb);
	ck_assert_uint_eq(x->cpus_per_task, y->cpus_per_task);
	ck_assert_uint_eq(x->mem_per_node_mb, y->mem_per_node_mb);
	ck_assert_uint_eq(x->segment, y->segment);
	assert_str_eq_or_null(x->idem_key, y->idem_key, "idem_key");
	ck_assert_int_eq(x->has_idem_fp, y->has_idem_fp);
	ck_assert_mem_eq(x->idem_fp, y->idem_fp, JOB_IDEM_FP_LEN);
	ck_assert_int_eq(x->has_umask, y->has_umask);
	ck_assert_uint_eq(x->umask, y->umask);
	assert_str_eq_or_null(x->submit_host, y->submit_host, "submit_host");
	ck_assert_uint_eq(x->mail_type, y->mail_type);
	assert_str_eq_or_null(x->mail_user, y->mail_user, "mail_user");
	assert_str_eq_or_null(x->ctr.image, y->ctr.image, "ctr.image");
	assert_str_eq_or_null(x->ctr.mounts, y->ctr.mounts, "ctr.mounts");
	assert_str_eq_or_null(x->ctr.workdir, y->ctr.workdir, "ctr.workdir");
	ck_assert(x->ctr.writable == y->ctr.writable);
	ck_assert(x->ctr.mount_home == y->ctr.mount_home);
	ck_assert_int_eq(x->batch, y->batch);
	ck_assert_int_eq(x->signal_scope, y->signal_scope);
	ck_assert_int_eq(x->begin_ms, y->begin_ms);
	ck_assert_int_eq(x->on_straggler, y->on_straggler);
	ck_assert_int_eq(x->interactive, y->interactive);
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
list_events_kind(struct store *st, int64_t after, uint64_t job,
    const char *node, const char *kind, int limit, struct events *e)
{
	struct cerr err = { 0 };

	memset(e, 0, sizeof(*e));
	ck_assert_msg(store_events_list(st, after, job, node, kind, 0, limit,
	    collect_event, e, &err) == 0, "%s", err.text);
}

static void
list_events(struct store *st, int64_t after, uint64_t job, const char *node,
    int limit, struct events *e)
{
	list_events_kind(st, after, job, node, NULL, limit, e);
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

	/* bare: every optional NULL, no env, no umask (as a job stored
	 * before the column). empty: an empty script is still a script,
	 * and a umask of 0 is one given. */
	empty->spec.script = xstrdup("");
	empty->spec.script_len = 0;
	empty->spec.has_umask = true;
	empty->spec.umask = 0;
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
	ck_assert(!l.job[1]->spec.has_umask);
	ck_assert(l.job[2]->spec.has_umask);
	ck_assert_uint_eq(l.job[0]->spec.umask, 027);
	ck_assert_str_eq(l.job[0]->spec.submit_host, "login01.example");
	ck_assert_ptr_null(l.job[1]->spec.submit_host);
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

	/* By kind, in every form; a kind filter does not stick to the
	 * statement for the next listing without one. */
	list_events_kind(st, 0, 0, NULL, "start", 0, &e);
	ck_assert_uint_eq(e.n, 2);
	list_events_kind(st, 0, 1, NULL, "start", 0, &e);
	ck_assert_uint_eq(e.n, 1);
	ck_assert_str_eq(e.detail[0], "on n2");
	list_events_kind(st, 0, 0, "n1", "start", 0, &e);
	ck_assert_uint_eq(e.n, 1);
	ck_assert_uint_eq(e.job[0], 2);
	list_events_kind(st, 0, 1, "n1", "start", 0, &e);
	ck_assert_uint_eq(e.n, 0);
	list_events_kind(st, 0, 1, NULL, "preempt", 0, &e);
	ck_assert_uint_eq(e.n, 0);
	list_events(st, 0, 1, NULL, 0, &e);
	ck_assert_uint_eq(e.n, 3);

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
	/* Before queues: no queue, not a service. */
	ck_assert_ptr_null(l.job[0]->spec.queue);
	ck_assert(!l.job[0]->spec.service);
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

/* ---- Nodes, placements and task exits ---------------------------------- */

/* An inventory with every field set, distinct per GPU. */
static void
fill_inventory(struct inventory *inv, unsigned ngpus)
{
	struct gpu_info *g;
	unsigned i;

	memset(inv, 0, sizeof(*inv));
	snprintf(inv->source, sizeof(inv->source), "nvml");
	inv->ncpus = 224;
	inv->memory_mb = UINT64_C(2063000);
	inv->ngpus = ngpus;
	for (i = 0; i < ngpus; i++) {
		g = &inv->gpus[i];
		/* Not in index order, to see the load sort them. */
		g->index = ngpus - 1 - i;
		snprintf(g->uuid, sizeof(g->uuid),
		    "GPU-1a2b3c4d-0000-1111-2222-%012u", g->index);
		snprintf(g->model, sizeof(g->model), "NVIDIA H100 80GB HBM3");
		g->memory_mb = 81559 + g->index;
		g->numa_node = g->index < 4 ? 0 : 1;
		snprintf(g->pci_bus_id, sizeof(g->pci_bus_id),
		    "00000000:%02X:00.0", 0x18 + g->index * 0x10);
		g->pcie_switch = (int)g->index / 2;
		g->nvlink_domain = g->index == 3 ? -1 : 7;
		/* All the others, and bit 63 for the sign bit of the int64. */
		g->nvlink_peers = (((UINT64_C(1) << ngpus) - 1) &
		    ~(UINT64_C(1) << g->index)) | (UINT64_C(1) << 63);
		g->nic = g->index == 5 ? -1 : (int)g->index / 2;
		if (g->nic >= 0)
			snprintf(g->nic_name, sizeof(g->nic_name), "mlx5_%d",
			    g->nic);
		g->nic_near = g->nic >= 0;
	}
}

static const struct gpu_info *
gpu_by_index(const struct inventory *inv, unsigned index)
{
	unsigned i;

	for (i = 0; i < inv->ngpus; i++)
		if (inv->gpus[i].index == index)
			return &inv->gpus[i];
	ck_abort_msg("no GPU %u", index);
	return NULL;
}

/* b as loaded (GPUs by index) against a as put (any order). */
static void
assert_inv_eq(const struct inventory *a, const struct inventory *b)
{
	const struct gpu_info *x, *y;
	unsigned i;

	ck_assert_str_eq(a->source, b->source);
	ck_assert_uint_eq(a->ncpus, b->ncpus);
	ck_assert_uint_eq(a->memory_mb, b->memory_mb);
	ck_assert_uint_eq(a->ngpus, b->ngpus);
	ck_assert_uint_eq(a->nfeatures, b->nfeatures);
	for (i = 0; i < b->nfeatures; i++)
		ck_assert_str_eq(a->features[i], b->features[i]);
	for (i = 0; i < b->ngpus; i++) {
		y = &b->gpus[i];
		if (i > 0)
			ck_assert_uint_lt(b->gpus[i - 1].index, y->index);
		x = gpu_by_index(a, y->index);
		ck_assert_str_eq(x->uuid, y->uuid);
		ck_assert_str_eq(x->model, y->model);
		ck_assert_uint_eq(x->memory_mb, y->memory_mb);
		ck_assert_int_eq(x->numa_node, y->numa_node);
		ck_assert_str_eq(x->pci_bus_id, y->pci_bus_id);
		ck_assert_int_eq(x->pcie_switch, y->pcie_switch);
		ck_assert_int_eq(x->nvlink_domain, y->nvlink_domain);
		ck_assert_msg(x->nvlink_peers == y->nvlink_peers,
		    "nvlink_peers %llx vs %llx",
		    (unsigned long long)x->nvlink_peers,
		    (unsigned long long)y->nvlink_peers);
		ck_assert_int_eq(x->nic, y->nic);
		ck_assert_str_eq(x->nic_name, y->nic_name);
		ck_assert_int_eq(x->nic_near, y->nic_near);
	}
}

#define MAX_NODES 4

struct nodes {
	size_t n;
	char name[MAX_NODES][16];
	char address[MAX_NODES][32];
	char state[MAX_NODES][8];
	char reason[MAX_NODES][32];
	int64_t since_ms[MAX_NODES];
	struct inventory inv[MAX_NODES];
};

static int
collect_node(const struct store_node *n, const struct inventory *inv,
    void *arg)
{
	struct nodes *l = arg;

	ck_assert_uint_lt(l->n, MAX_NODES);
	snprintf(l->name[l->n], sizeof(l->name[0]), "%s", n->name);
	snprintf(l->address[l->n], sizeof(l->address[0]), "%s", n->address);
	snprintf(l->state[l->n], sizeof(l->state[0]), "%s", n->state);
	snprintf(l->reason[l->n], sizeof(l->reason[0]), "%s", n->reason);
	l->since_ms[l->n] = n->since_ms;
	l->inv[l->n] = *inv;
	l->n++;
	return 0;
}

static struct nodes *
load_nodes(struct store *st)
{
	struct cerr err = { 0 };
	struct nodes *l;

	ck_assert_ptr_nonnull(l = calloc(1, sizeof(*l)));
	ck_assert_msg(store_nodes_load(st, collect_node, l, &err) == 0, "%s",
	    err.text);
	return l;
}

static void
put_node(struct store *st, const char *name, const char *address,
    const char *state, int64_t since, const struct inventory *inv)
{
	struct cerr err = { 0 };
	struct store_node n = { name, address, state, "", since };

	ck_assert_int_eq(store_begin(st, &err), 0);
	ck_assert_msg(store_node_put(st, &n, inv, &err) == 0, "%s", err.text);
	ck_assert_msg(store_commit(st, &err) == 0, "%s", err.text);
}

START_TEST(test_node_round_trip)
{
	struct store *st = open_ok();
	struct inventory *eight, *four;
	struct nodes *l;

	ck_assert_ptr_nonnull(eight = calloc(1, sizeof(*eight)));
	ck_assert_ptr_nonnull(four = calloc(1, sizeof(*four)));
	fill_inventory(eight, 8);
	fill_inventory(four, 4);
	snprintf(four->source, sizeof(four->source), "simulated");
	four->ncpus = 16;
	ck_assert_int_eq(inventory_set_features(four, "fp64,ib", NULL, 0), 0);

	put_node(st, "n2", "10.0.0.2:7070", "UP", 1000, eight);
	put_node(st, "n1", "", "DOWN", 999, four);
	store_close(st);

	st = open_ok();
	l = load_nodes(st);
	ck_assert_uint_eq(l->n, 2);
	ck_assert_str_eq(l->name[0], "n1");
	ck_assert_str_eq(l->address[0], "");
	ck_assert_str_eq(l->state[0], "DOWN");
	ck_assert_int_eq(l->since_ms[0], 999);
	assert_inv_eq(four, &l->inv[0]);
	ck_assert_str_eq(l->name[1], "n2");
	ck_assert_str_eq(l->address[1], "10.0.0.2:7070");
	ck_assert_str_eq(l->state[1], "UP");
	ck_assert_str_eq(l->reason[1], "");
	ck_assert_int_eq(l->since_ms[1], 1000);
	assert_inv_eq(eight, &l->inv[1]);
	ck_assert_uint_eq(l->inv[1].gpus[7].index, 7);
	ck_assert(l->inv[1].gpus[0].nvlink_peers >> 63);
	free(l);

	/* Put again: the row is updated and the GPUs replaced, 8 -> 4. */
	put_node(st, "n2", "10.0.0.22:7070", "UP", 2000, four);
	l = load_nodes(st);
	ck_assert_uint_eq(l->n, 2);
	ck_assert_str_eq(l->address[1], "10.0.0.22:7070");
	ck_assert_int_eq(l->since_ms[1], 2000);
	assert_inv_eq(four, &l->inv[1]);
	free(l);
	store_close(st);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM node_gpus "
	    "WHERE node = 'n2'"), 4);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM nodes"), 2);
	free(eight);
	free(four);
}
END_TEST

START_TEST(test_node_errors)
{
	struct cerr err = { 0 };
	struct store *st = open_ok();
	struct store_node n = { "n1", "", "UP", "", 1 };
	struct inventory *inv;
	struct nodes *l;

	ck_assert_ptr_nonnull(inv = calloc(1, sizeof(*inv)));
	fill_inventory(inv, 2);
	ck_assert_int_eq(store_begin(st, &err), 0);
	/* Two GPUs with one index: refused before anything is written. */
	inv->gpus[1].index = inv->gpus[0].index;
	ck_assert_int_eq(store_node_put(st, &n, inv, &err), -1);
	ck_assert_int_eq(err.code, ERR_INTERNAL);
	ck_assert_msg(strstr(err.text, "n1") != NULL, "%s", err.text);
	inv->gpus[1].index = 64;
	cerr_clear(&err);
	ck_assert_int_eq(store_node_put(st, &n, inv, &err), -1);
	inv->gpus[1].index = 0;
	inv->ngpus = INV_MAX_GPUS + 1;
	cerr_clear(&err);
	ck_assert_int_eq(store_node_put(st, &n, inv, &err), -1);
	/* A state the schema does not know. */
	fill_inventory(inv, 2);
	n.state = "SIDEWAYS";
	cerr_clear(&err);
	ck_assert_int_eq(store_node_put(st, &n, inv, &err), -1);
	ck_assert_msg(strstr(err.text, "CHECK") != NULL, "%s", err.text);
	ck_assert(store_in_txn(st));
	ck_assert_int_eq(store_commit(st, &err), 0);
	l = load_nodes(st);
	ck_assert_uint_eq(l->n, 0);
	free(l);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM node_gpus"), 0);

	/* A row too long for the struct fails the load, naming the node. */
	n.state = "UP";
	put_node(st, "n1", "", "UP", 1, inv);
	raw_exec("UPDATE node_gpus SET model = printf('%.200c', 'x') "
	    "WHERE idx = 1");
	cerr_clear(&err);
	ck_assert_ptr_nonnull(l = calloc(1, sizeof(*l)));
	ck_assert_int_eq(store_nodes_load(st, collect_node, l, &err), -1);
	ck_assert_int_eq(err.code, ERR_INTERNAL);
	ck_assert_msg(strstr(err.text, "n1") != NULL &&
	    strstr(err.text, "model") != NULL, "%s", err.text);
	ck_assert_uint_eq(l->n, 0);
	free(l);
	store_close(st);
	free(inv);
}
END_TEST

START_TEST(test_node_delete)
{
	struct cerr err = { 0 };
	struct store *st = open_ok();
	struct store_drain d = { "n1", "bad fan", "ops", 30, false };
	struct inventory *inv;
	struct nodes *l;

	ck_assert_ptr_nonnull(inv = calloc(1, sizeof(*inv)));
	fill_inventory(inv, 4);
	put_node(st, "n1", "h1:1", "DOWN", 10, inv);
	put_node(st, "n2", "h2:1", "UP", 10, inv);
	ck_assert_int_eq(store_begin(st, &err), 0);
	ck_assert_msg(store_node_drain(st, &d, &err) == 0, "%s", err.text);
	ck_assert_msg(store_node_delete(st, "n1", &err) == 0, "%s", err.text);
	/* Unknown: ERR_NOT_FOUND, naming it. */
	ck_assert_int_eq(store_node_delete(st, "n9", &err), -1);
	ck_assert_int_eq(err.code, ERR_NOT_FOUND);
	ck_assert_msg(strstr(err.text, "n9") != NULL, "%s", err.text);
	ck_assert_int_eq(store_commit(st, &err), 0);
	store_close(st);

	/* Gone with its GPUs and its drain; the other node stays whole. */
	st = open_ok();
	l = load_nodes(st);
	ck_assert_uint_eq(l->n, 1);
	ck_assert_str_eq(l->name[0], "n2");
	assert_inv_eq(inv, &l->inv[0]);
	free(l);
	store_close(st);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM node_gpus "
	    "WHERE node = 'n1'"), 0);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM node_gpus"), 4);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM node_drains"), 0);
	free(inv);
}
END_TEST

START_TEST(test_node_set_state)
{
	struct cerr err = { 0 };
	struct store *st = open_ok();
	struct inventory *inv;
	struct nodes *l;

	ck_assert_ptr_nonnull(inv = calloc(1, sizeof(*inv)));
	fill_inventory(inv, 8);
	put_node(st, "n1", "h1:1", "UP", 10, inv);

	ck_assert_int_eq(store_begin(st, &err), 0);
	ck_assert_msg(store_node_set_state(st, "n1", "DOWN", "xid 79", 20,
	    &err) == 0, "%s", err.text);
	ck_assert_int_eq(store_node_set_state(st, "n9", "DOWN", "", 20,
	    &err), -1);
	ck_assert_int_eq(err.code, ERR_NOT_FOUND);
	ck_assert_msg(strstr(err.text, "n9") != NULL, "%s", err.text);
	cerr_clear(&err);
	ck_assert_int_eq(store_node_set_state(st, "n1", "LOST", "", 21,
	    &err), -1);
	ck_assert_int_eq(err.code, ERR_INTERNAL);
	ck_assert_int_eq(store_commit(st, &err), 0);

	l = load_nodes(st);
	ck_assert_uint_eq(l->n, 1);
	ck_assert_str_eq(l->state[0], "DOWN");
	ck_assert_str_eq(l->reason[0], "xid 79");
	ck_assert_int_eq(l->since_ms[0], 20);
	ck_assert_str_eq(l->address[0], "h1:1");
	/* The inventory is untouched. */
	assert_inv_eq(inv, &l->inv[0]);
	free(l);
	store_close(st);
	free(inv);
}
END_TEST

static void
set_place(struct placement *p, const char *node, unsigned rank,
    unsigned first, unsigned ngpus)
{
	unsigned i;

	memset(p, 0, sizeof(*p));
	snprintf(p->node, sizeof(p->node), "%s", node);
	p->node_rank = rank;
	p->ngpus = ngpus;
	for (i = 0; i < ngpus; i++)
		p->gpus[i] = first + i;
}

static void
placement_ok(struct store *st, uint64_t job, const struct placement *p,
    size_t n)
{
	struct cerr err = { 0 };

	ck_assert_int_eq(store_begin(st, &err), 0);
	ck_assert_msg(store_job_placement(st, job, p, n, &err) == 0, "%s",
	    err.text);
	ck_assert_msg(store_commit(st, &err) == 0, "%s", err.text);
}

START_TEST(test_placement)
{
	struct cerr err = { 0 };
	struct store *st = open_ok();
	struct placement p[3];
	struct loaded l;

	submit(st, 1);
	submit(st, 2);
	submit(st, 3);
	submit(st, 4);
	/* Given out of rank order; loaded in rank order. */
	set_place(&p[0], "n7", 1, 4, 4);
	set_place(&p[1], "n3", 0, 0, 4);
	placement_ok(st, 1, p, 2);
	set_place(&p[0], "n5", 0, 0, 8);
	placement_ok(st, 2, p, 1);
	set_place(&p[0], "cpu-only", 0, 0, 0);
	set_place(&p[1], "n63", 1, 63, 1);
	placement_ok(st, 3, p, 2);
	store_close(st);

	st = open_ok();
	load_all(st, &l);
	ck_assert_uint_eq(l.n, 4);
	ck_assert_uint_eq(l.job[0]->nplace, 2);
	ck_assert_str_eq(l.job[0]->place[0].node, "n3");
	ck_assert_uint_eq(l.job[0]->place[0].node_rank, 0);
	ck_assert_uint_eq(l.job[0]->place[0].ngpus, 4);
	ck_assert_uint_eq(l.job[0]->place[0].gpus[3], 3);
	ck_assert_str_eq(l.job[0]->place[1].node, "n7");
	ck_assert_uint_eq(l.job[0]->place[1].node_rank, 1);
	ck_assert_uint_eq(l.job[0]->place[1].ngpus, 4);
	ck_assert_uint_eq(l.job[0]->place[1].gpus[0], 4);
	ck_assert_uint_eq(l.job[0]->place[1].gpus[3], 7);
	ck_assert_uint_eq(l.job[1]->nplace, 1);
	ck_assert_uint_eq(l.job[1]->place[0].ngpus, 8);
	ck_assert_uint_eq(l.job[2]->nplace, 2);
	ck_assert_str_eq(l.job[2]->place[0].node, "cpu-only");
	ck_assert_uint_eq(l.job[2]->place[0].ngpus, 0);
	ck_assert_uint_eq(l.job[2]->place[1].gpus[0], 63);
	ck_assert_uint_eq(l.job[3]->nplace, 0);
	ck_assert_ptr_null(l.job[3]->place);
	loaded_free(&l);
	ck_assert_int_eq(raw_int("SELECT gpus = '4,5,6,7' FROM job_placements "
	    "WHERE job_id = 1 AND node_rank = 1"), 1);

	/* Replace job 1's, clear job 3's. */
	set_place(&p[0], "n9", 0, 2, 2);
	placement_ok(st, 1, p, 1);
	placement_ok(st, 3, NULL, 0);
	load_all(st, &l);
	ck_assert_uint_eq(l.job[0]->nplace, 1);
	ck_assert_str_eq(l.job[0]->place[0].node, "n9");
	ck_assert_uint_eq(l.job[0]->place[0].gpus[1], 3);
	ck_assert_uint_eq(l.job[1]->nplace, 1);
	ck_assert_uint_eq(l.job[2]->nplace, 0);
	loaded_free(&l);

	/* An unknown job; a GPU index out of range; a node name too long. */
	ck_assert_int_eq(store_begin(st, &err), 0);
	ck_assert_int_eq(store_job_placement(st, 42, p, 1, &err), -1);
	ck_assert_msg(strstr(err.text, "job 42") != NULL, "%s", err.text);
	p[0].gpus[0] = 64;
	cerr_clear(&err);
	ck_assert_int_eq(store_job_placement(st, 1, p, 1, &err), -1);
	ck_assert_int_eq(err.code, ERR_INTERNAL);
	set_place(&p[0], "n9", 0, 0, 1);
	memset(p[0].node, 'x', sizeof(p[0].node));
	cerr_clear(&err);
	ck_assert_int_eq(store_job_placement(st, 1, p, 1, &err), -1);
	ck_assert_int_eq(store_commit(st, &err), 0);
	load_all(st, &l);
	ck_assert_uint_eq(l.job[0]->nplace, 1);
	ck_assert_str_eq(l.job[0]->place[0].node, "n9");
	loaded_free(&l);

	/* The rows of a job removed by hand are skipped by the merge. */
	raw_exec("DELETE FROM jobs WHERE id = 1");
	load_all(st, &l);
	ck_assert_uint_eq(l.n, 3);
	ck_assert_uint_eq(l.job[0]->id, 2);
	ck_assert_uint_eq(l.job[0]->nplace, 1);
	ck_assert_str_eq(l.job[0]->place[0].node, "n5");
	loaded_free(&l);
	store_close(st);
}
END_TEST

START_TEST(test_placement_corrupt)
{
	static const char *const bad[] = { "1,,2", "1,", ",1", "01", "-1",
	    " 1", "1 ", "64", "99999999999", "1;2", "a" };
	char sql[128];
	struct cerr err = { 0 };
	struct store *st = open_ok();
	struct placement p;
	struct loaded l;
	size_t i;

	submit(st, 1);
	submit(st, 2);
	set_place(&p, "n4", 0, 0, 2);
	placement_ok(st, 2, &p, 1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(sql, sizeof(sql), "UPDATE job_placements SET gpus = "
		    "'%s' WHERE job_id = 2", bad[i]);
		raw_exec(sql);
		memset(&l, 0, sizeof(l));
		cerr_clear(&err);
		ck_assert_msg(store_jobs_load(st, collect_job, &l, &err) == -1,
		    "'%s' accepted", bad[i]);
		ck_assert_int_eq(err.code, ERR_INTERNAL);
		ck_assert_msg(strstr(err.text, "job 2") != NULL &&
		    strstr(err.text, "n4") != NULL, "%s", err.text);
		/* Job 1 came before the bad row. */
		ck_assert_uint_eq(l.n, 1);
		loaded_free(&l);
	}
	/* 64 indices is the most a placement holds. */
	raw_exec("UPDATE job_placements SET gpus = (WITH RECURSIVE "
	    "c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 63) "
	    "SELECT group_concat(i, ',') FROM c) WHERE job_id = 2");
	load_all(st, &l);
	ck_assert_uint_eq(l.job[1]->place[0].ngpus, PLACE_MAX_GPUS);
	ck_assert_uint_eq(l.job[1]->place[0].gpus[63], 63);
	loaded_free(&l);
	raw_exec("UPDATE job_placements SET gpus = gpus || ',0' "
	    "WHERE job_id = 2");
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(store_jobs_load(st, collect_job, &l, &err), -1);
	loaded_free(&l);
	store_close(st);
}
END_TEST

#define MAX_EXITS 8

struct exits {
	size_t n;
	unsigned rank[MAX_EXITS];
	int status[MAX_EXITS];
	size_t stop_after;	/* 0: never */
};

static int
collect_exit(unsigned rank, int wait_status, void *arg)
{
	struct exits *e = arg;

	ck_assert_uint_lt(e->n, MAX_EXITS);
	e->rank[e->n] = rank;
	e->status[e->n] = wait_status;
	e->n++;
	return e->stop_after != 0 && e->n == e->stop_after ? -1 : 0;
}

static void
load_exits(struct store *st, uint64_t job, uint32_t restart,
    struct exits *e)
{
	struct cerr err = { 0 };

	memset(e, 0, sizeof(*e));
	ck_assert_msg(store_task_exits_load(st, job, restart, collect_exit, e,
	    &err) == 0, "%s", err.text);
}

START_TEST(test_task_exits)
{
	struct cerr err = { 0 };
	struct store *st = open_ok();
	struct exits e;

	submit(st, 1);
	submit(st, 2);
	ck_assert_int_eq(store_begin(st, &err), 0);
	ck_assert_int_eq(store_task_exit(st, 1, 0, 3, 256, 100, &err), 0);
	ck_assert_int_eq(store_task_exit(st, 1, 0, 0, 0, 101, &err), 0);
	/* A re-sent exit: the first record stands, and it is no error. */
	ck_assert_msg(store_task_exit(st, 1, 0, 3, 9, 102, &err) == 0, "%s",
	    err.text);
	ck_assert_int_eq(store_task_exit(st, 1, 1, 0, 15, 103, &err), 0);
	ck_assert_int_eq(store_task_exit(st, 2, 0, 0, 134, 104, &err), 0);
	ck_assert_int_eq(store_commit(st, &err), 0);
	ck_assert_int_eq(raw_int("SELECT time_ms FROM task_exits WHERE "
	    "job_id = 1 AND restart = 0 AND rank = 3"), 100);

	load_exits(st, 1, 0, &e);
	ck_assert_uint_eq(e.n, 2);
	ck_assert_uint_eq(e.rank[0], 0);
	ck_assert_int_eq(e.status[0], 0);
	ck_assert_uint_eq(e.rank[1], 3);
	ck_assert_int_eq(e.status[1], 256);
	load_exits(st, 1, 1, &e);
	ck_assert_uint_eq(e.n, 1);
	ck_assert_int_eq(e.status[0], 15);
	load_exits(st, 2, 0, &e);
	ck_assert_uint_eq(e.n, 1);
	ck_assert_int_eq(e.status[0], 134);
	load_exits(st, 1, 2, &e);
	ck_assert_uint_eq(e.n, 0);

	/* A callback that stops the load makes it fail. */
	memset(&e, 0, sizeof(e));
	e.stop_after = 1;
	ck_assert_int_eq(store_task_exits_load(st, 1, 0, collect_exit, &e,
	    &err), -1);
	ck_assert_uint_eq(e.n, 1);

	/* An unknown job. */
	ck_assert_int_eq(store_begin(st, &err), 0);
	cerr_clear(&err);
	ck_assert_int_eq(store_task_exit(st, 9, 0, 0, 0, 1, &err), -1);
	ck_assert_msg(strstr(err.text, "job 9") != NULL, "%s", err.text);
	ck_assert_int_eq(store_rollback(st), 0);
	store_close(st);
}
END_TEST

START_TEST(test_migrate_v2)
{
	struct store *st;
	struct placement p;
	struct inventory *inv;
	struct loaded l;
	struct exits e;
	struct nodes *nl;
	sqlite3 *db;

	/* A database as the second release left it, with a job. */
	ck_assert_int_ge(migrations_count, 3);
	ck_assert_int_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, migrations[0].sql, NULL, NULL,
	    NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, migrations[1].sql, NULL, NULL,
	    NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "PRAGMA user_version = 2; "
	    "INSERT INTO jobs (id, user, name, nodes_min, nodes_max, "
	    "gpus_per_node, tasks_per_node, time_limit_s, priority, "
	    "topo_mode, max_restarts, ckpt_signal, ckpt_secs, hang_timeout_s, "
	    "env, argv, state, submit_ms, start_ms) VALUES (7, 'carol', "
	    "'old', 1, 1, 8, 1, 60, 100, 0, 3, 10, 60, 0, x'', "
	    "x'736c65657000313000', 'RUNNING', 77, 78)", NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(db);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM sqlite_schema "
	    "WHERE name = 'nodes'"), 0);

	st = open_ok();
	ck_assert_int_eq(raw_int("PRAGMA user_version"),
	    store_schema_version());
	load_all(st, &l);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_uint_eq(l.job[0]->id, 7);
	ck_assert_str_eq(l.job[0]->user, "carol");
	ck_assert_uint_eq(l.job[0]->spec.gpus_per_node, 8);
	ck_assert_str_eq(l.job[0]->spec.argv[1], "10");
	ck_assert_int_eq(l.job[0]->state, JOB_RUNNING);
	ck_assert_int_eq(l.job[0]->start_ms, 78);
	ck_assert_uint_eq(l.job[0]->nplace, 0);
	loaded_free(&l);

	/* The new tables work with the old job. */
	ck_assert_ptr_nonnull(inv = calloc(1, sizeof(*inv)));
	fill_inventory(inv, 8);
	put_node(st, "n1", "", "UP", 5, inv);
	set_place(&p, "n1", 0, 0, 8);
	placement_ok(st, 7, &p, 1);
	load_all(st, &l);
	ck_assert_uint_eq(l.job[0]->nplace, 1);
	ck_assert_uint_eq(l.job[0]->place[0].ngpus, 8);
	loaded_free(&l);
	nl = load_nodes(st);
	ck_assert_uint_eq(nl->n, 1);
	assert_inv_eq(inv, &nl->inv[0]);
	free(nl);
	load_exits(st, 7, 0, &e);
	ck_assert_uint_eq(e.n, 0);
	store_close(st);
	free(inv);
}
END_TEST

/* ---- Runs, usage and retention (store_history.c) ---- */

struct usage_got {
	char key[16][16];
	int64_t day[64];
	int64_t gpu[64];
	int64_t wasted[64];
	int64_t runs[64];
	size_t n;
};

static int
usage_collect(const struct store_usage_row *r, void *arg)
{
	struct usage_got *g = arg;

	ck_assert_uint_lt(g->n, 64);
	if (r->key != NULL && g->n < 16)
		snprintf(g->key[g->n], sizeof(g->key[0]), "%s", r->key);
	g->day[g->n] = r->day_ms;
	g->gpu[g->n] = r->gpu_ms;
	g->wasted[g->n] = r->wasted_gpu_ms;
	g->runs[g->n] = r->runs;
	g->n++;
	return 0;
}

static double
elapsed_ms(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) * 1e3 +
	    (double)(b.tv_nsec - a->tv_nsec) / 1e6;
}

#define RUNS_DAY (86400 * INT64_C(1000))
#define RUNS_BASE (20000 * RUNS_DAY)
/* Run i of n: job i % 1000 + 1 of user u(job % 10), evenly over 30 days
 * (every 25.92 s for 100k), an hour long on 1 + i % 8 GPUs; odd runs
 * FAILED with their last 10 minutes wasted. */
#define RUN_START(i, n) (RUNS_BASE + (int64_t)(i) * (30 * RUNS_DAY / (n)))
#define RUN_LEN (3600 * INT64_C(1000))

/* 100k runs; 10k under valgrind (tests/valgrind-run says), which checks
 * memory, not what the queries cost at size. */
static size_t
runs_n(void)
{
	return getenv("COHORT_UNDER_VALGRIND") != NULL ? 10000 : 100000;
}

/* 100k runs grouped by user, state and day: the sums are right, a day's
 * share is its clipped part, and what the queries cost is printed. */
START_TEST(test_usage_runs)
{
	static const char *users[10] = { "u0", "u1", "u2", "u3", "u4", "u5",
	    "u6", "u7", "u8", "u9" };
	struct store_usage_query q = { 0 };
	struct cerr err = { 0 };
	struct store *st = open_ok();
	struct store_run r;
	struct usage_got g;
	struct timespec t0;
	struct job *job;
	int64_t total = 0, wasted = 0, by_user[10] = { 0 }, day3 = 0, s, e;
	int64_t d3 = RUNS_BASE + 3 * RUNS_DAY, sum;
	size_t i, n = runs_n();

	ck_assert_int_eq(store_begin(st, &err), 0);
	for (i = 1; i <= 1000; i++) {
		job = small_job(i, users[i % 10]);
		insert_ok(st, job);
		job_free(job);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		memset(&r, 0, sizeof(r));
		r.job_id = i % 1000 + 1;
		r.attempt = (uint32_t)(i / 1000);
		r.user = users[r.job_id % 10];
		r.queue = "default";
		r.start_ms = RUN_START(i, n);
		r.end_ms = r.start_ms + RUN_LEN;
		r.gpus = 1 + i % 8;
		r.nodes = 1;
		r.outcome = i % 2 ? "FAILED" : "COMPLETED";
		r.wasted_ms = i % 2 ? 600000 : 0;
		ck_assert_msg(store_run_insert(st, &r, &err) == 0, "%s",
		    err.text);
		total += r.gpus * RUN_LEN;
		wasted += r.gpus * (int64_t)r.wasted_ms;
		by_user[r.job_id % 10] += r.gpus * RUN_LEN;
		s = r.start_ms > d3 ? r.start_ms : d3;
		e = r.end_ms < d3 + RUNS_DAY ? r.end_ms : d3 + RUNS_DAY;
		if (e > s)
			day3 += r.gpus * (e - s);
	}
	ck_assert_int_eq(store_commit(st, &err), 0);
	printf("usage: %zu runs inserted in %.0f ms\n", n, elapsed_ms(&t0));

	q.since_ms = 0;
	q.until_ms = RUNS_BASE + 40 * RUNS_DAY;
	q.by = STORE_USAGE_USER;
	memset(&g, 0, sizeof(g));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_msg(store_usage(st, &q, usage_collect, &g, &err) == 0, "%s",
	    err.text);
	printf("usage: by user over %zu runs: %.1f ms\n", n, elapsed_ms(&t0));
	ck_assert_uint_eq(g.n, 10);
	for (i = 0, sum = 0; i < 10; i++) {
		ck_assert_str_eq(g.key[i], users[i]);
		ck_assert_int_eq(g.gpu[i], by_user[i]);
		ck_assert_int_eq(g.runs[i], (int64_t)n / 10);
		sum += g.wasted[i];
	}
	ck_assert_int_eq(sum, wasted);

	q.by = STORE_USAGE_STATE;
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(store_usage(st, &q, usage_collect, &g, &err), 0);
	ck_assert_uint_eq(g.n, 2);
	ck_assert_str_eq(g.key[0], "COMPLETED");
	ck_assert_int_eq(g.wasted[0], 0);
	ck_assert_str_eq(g.key[1], "FAILED");
	ck_assert_int_eq(g.wasted[1], wasted);

	q.by = STORE_USAGE_DAY;
	memset(&g, 0, sizeof(g));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(store_usage(st, &q, usage_collect, &g, &err), 0);
	printf("usage: by day over %zu runs: %.1f ms\n", n, elapsed_ms(&t0));
	ck_assert_uint_eq(g.n, 31);	/* the last runs end on day 31 */
	for (i = 0, sum = 0; i < g.n; i++)
		sum += g.gpu[i];
	ck_assert_int_eq(sum, total);	/* splitting keeps every ms */
	ck_assert_int_eq(g.day[3], d3);
	ck_assert_int_eq(g.gpu[3], day3);

	/* A one-day window reads only what overlaps it. */
	q.since_ms = d3;
	q.until_ms = d3 + RUNS_DAY;
	q.by = STORE_USAGE_USER;
	q.user = "u3";
	memset(&g, 0, sizeof(g));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(store_usage(st, &q, usage_collect, &g, &err), 0);
	printf("usage: one day, one user: %.1f ms\n", elapsed_ms(&t0));
	ck_assert_uint_eq(g.n, 1);
	ck_assert_str_eq(g.key[0], "u3");

	/* A purge takes a job's runs with it. */
	ck_assert_int_eq(store_begin(st, &err), 0);
	event_ok(st, 5, 3, NULL, "submit", NULL);
	ck_assert_msg(store_job_purge(st, 3, &err) == 0, "%s", err.text);
	ck_assert_int_eq(store_commit(st, &err), 0);
	store_close(st);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM job_runs"),
	    (int64_t)(n - n / 1000));
	ck_assert_int_eq(raw_int("SELECT count(*) FROM jobs WHERE id = 3"),
	    0);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM events WHERE "
	    "job_id = 3"), 0);
	/* The id stays used. */
	ck_assert_int_eq(raw_int("SELECT value FROM counters WHERE "
	    "name = 'max_job_id'"), 1000);
}
END_TEST

/* ---- store_backup ---------------------------------------------------- */

static void
path_in_tmp(char *buf, size_t len, const char *name)
{
	ck_assert_int_lt(snprintf(buf, len, "%s/%s", tmpdir, name), (int)len);
}

static bool
exists(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) == 0;
}

/* The names in tmpdir, but for the database and its -wal and -shm. */
static int
others_in_tmp(void)
{
	char path[256];
	static const char *const names[] = { "backup.db", "backup.db.tmp",
	    "backup.db.tmp-journal", "backup.db.tmp-wal",
	    "backup.db.tmp-shm" };
	size_t i;
	int n = 0;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		path_in_tmp(path, sizeof(path), names[i]);
		n += exists(path);
	}
	return n;
}

/* A backup of an open store holds what was committed, not what a write
 * transaction still has open (the controller's next group commit), and
 * reopens as a store with every field. */
START_TEST(test_backup)
{
	struct store *st = open_ok(), *copy;
	struct store_backup_info info;
	struct cerr err = { 0 };
	struct inventory *inv;
	struct loaded l;
	struct nodes *nl;
	struct job *full = full_job(3), *late = small_job(4, "carol");
	char bpath[256], tmp[256];
	struct stat sb;
	uint64_t max;

	ck_assert_ptr_nonnull(inv = calloc(1, sizeof(*inv)));
	fill_inventory(inv, 8);
	submit(st, 1);
	submit(st, 2);
	ck_assert_int_eq(store_begin(st, &err), 0);
	insert_ok(st, full);
	ck_assert_msg(store_commit(st, &err) == 0, "%s", err.text);
	put_node(st, "n1", "10.0.0.1:7070", "UP", 1000, inv);
	/* Job 4 is written but not committed while the copy is taken. */
	ck_assert_int_eq(store_begin(st, &err), 0);
	insert_ok(st, late);

	path_in_tmp(bpath, sizeof(bpath), "backup.db");
	path_in_tmp(tmp, sizeof(tmp), "backup.db.tmp");
	ck_assert_msg(store_backup(dbpath, bpath, 0, &info, &err) == 0, "%s",
	    err.text);
	ck_assert_msg(store_commit(st, &err) == 0, "%s", err.text);
	ck_assert_int_eq(info.jobs, 3);
	ck_assert_int_eq(info.nodes, 1);
	ck_assert_int_eq(info.events, 2);
	ck_assert_uint_eq(info.max_job_id, 3);
	ck_assert_int_eq(info.schema, store_schema_version());
	ck_assert_int_eq(stat(bpath, &sb), 0);
	ck_assert_uint_eq(info.bytes, (uint64_t)sb.st_size);
	ck_assert_uint_gt(info.bytes, 0);
	ck_assert_int_eq(sb.st_mode & 0777, 0600);
	ck_assert(!exists(tmp));

	/* The copy opens as a store and has them, the node too. */
	copy = store_open(bpath, &err);
	ck_assert_msg(copy != NULL, "store_open of the copy: %s", err.text);
	load_all(copy, &l);
	ck_assert_uint_eq(l.n, 3);
	ck_assert_uint_eq(l.job[0]->id, 1);
	ck_assert_uint_eq(l.job[1]->id, 2);
	assert_job_eq(full, l.job[2]);
	loaded_free(&l);
	nl = load_nodes(copy);
	ck_assert_uint_eq(nl->n, 1);
	ck_assert_str_eq(nl->name[0], "n1");
	assert_inv_eq(inv, &nl->inv[0]);
	free(nl);
	ck_assert_int_eq(store_max_job_id(copy, &max, &err), 0);
	ck_assert_uint_eq(max, 3);
	store_close(copy);

	/* The database goes on as it was: job 4 committed there. */
	load_all(st, &l);
	ck_assert_uint_eq(l.n, 4);
	loaded_free(&l);
	store_close(st);
	job_free(full);
	job_free(late);
	free(inv);
}
END_TEST

/* What is refused, and that a refusal or failure leaves nothing behind
 * and the database as it was. */
START_TEST(test_backup_refused)
{
	struct store *st = open_ok();
	struct store_backup_info info;
	struct cerr err = { 0 };
	char bpath[256], tmp[256], bad[512], ro[256];
	FILE *f;

	submit(st, 1);
	path_in_tmp(bpath, sizeof(bpath), "backup.db");
	path_in_tmp(tmp, sizeof(tmp), "backup.db.tmp");

	/* An existing file: refused and untouched; --force replaces it. */
	ck_assert_ptr_nonnull(f = fopen(bpath, "w"));
	fputs("keep me", f);
	fclose(f);
	ck_assert_int_eq(store_backup(dbpath, bpath, 0, &info, &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ck_assert_msg(strstr(err.text, "exists; give --force") != NULL, "%s",
	    err.text);
	ck_assert_int_eq(info.bytes, 0);
	ck_assert_ptr_nonnull(f = fopen(bpath, "r"));
	ck_assert_ptr_nonnull(fgets(bad, sizeof(bad), f));
	fclose(f);
	ck_assert_str_eq(bad, "keep me");
	ck_assert(!exists(tmp));
	ck_assert_msg(store_backup(dbpath, bpath, STORE_BACKUP_FORCE, &info,
	    &err) == 0, "%s", err.text);
	ck_assert_int_eq(info.jobs, 1);

	/* The database itself, even with force. */
	ck_assert_int_eq(store_backup(dbpath, dbpath, STORE_BACKUP_FORCE,
	    &info, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	/* Nor the files SQLite keeps beside it (the live WAL), by name
	 * even when absent, nor a name whose temporary copy would be the
	 * database (a database called X.tmp, backed up to X). */
	snprintf(bad, sizeof(bad), "%s-wal", dbpath);
	ck_assert_int_eq(store_backup(dbpath, bad, STORE_BACKUP_FORCE,
	    &info, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	snprintf(bad, sizeof(bad), "%s-journal", dbpath);
	ck_assert_int_eq(store_backup(dbpath, bad, STORE_BACKUP_FORCE,
	    &info, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert(!exists(bad));
	{
		/* A database named X.tmp backed up to X, with --force: the
		 * copy's temporary name is the database. */
		char t2[512], x[512];

		snprintf(x, sizeof(x), "%s.x", dbpath);
		snprintf(t2, sizeof(t2), "%s.tmp", x);
		ck_assert_int_eq(link(dbpath, t2), 0);
		ck_assert_int_eq(store_backup(t2, x, STORE_BACKUP_FORCE,
		    &info, &err), -1);
		ck_assert_int_eq(err.code, ERR_INVALID);
		ck_assert(exists(t2));
		ck_assert_int_eq(unlink(t2), 0);
	}
	ck_assert_int_eq(unlink(bpath), 0);

	/* A tmp file of another backup: refused, and left to it. */
	ck_assert_ptr_nonnull(f = fopen(tmp, "w"));
	fclose(f);
	ck_assert_int_eq(store_backup(dbpath, bpath, 0, &info, &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ck_assert(exists(tmp));
	ck_assert(!exists(bpath));
	ck_assert_int_eq(unlink(tmp), 0);

	/* A directory that cannot take the file. */
	snprintf(bad, sizeof(bad), "%s/backup.db", dbpath);	/* ENOTDIR */
	ck_assert_int_eq(store_backup(dbpath, bad, 0, &info, &err), -1);
	ck_assert_int_eq(err.code, ERR_INTERNAL);
	ck_assert_msg(strstr(err.text, "Not a directory") != NULL, "%s",
	    err.text);
	if (geteuid() != 0) {
		path_in_tmp(ro, sizeof(ro), "ro");
		ck_assert_int_eq(mkdir(ro, 0500), 0);
		snprintf(bad, sizeof(bad), "%s/backup.db", ro);
		ck_assert_int_eq(store_backup(dbpath, bad, 0, &info, &err),
		    -1);
		ck_assert_msg(strstr(err.text, "Permission denied") != NULL,
		    "%s", err.text);
		ck_assert_int_eq(rmdir(ro), 0);	/* empty */
	}
	ck_assert_int_eq(others_in_tmp(), 0);

	/* No database: an error, and no database created either. */
	path_in_tmp(bad, sizeof(bad), "none.db");
	ck_assert_int_eq(store_backup(bad, bpath, 0, &info, &err), -1);
	ck_assert_int_eq(err.code, ERR_NOT_FOUND);
	ck_assert(!exists(bad));
	ck_assert_int_eq(others_in_tmp(), 0);

	/* A database newer than this binary. */
	store_close(st);
	raw_exec("PRAGMA user_version = 999");
	ck_assert_int_eq(store_backup(dbpath, bpath, 0, &info, &err), -1);
	ck_assert_int_eq(err.code, ERR_VERSION);
	ck_assert_int_eq(others_in_tmp(), 0);
	ck_assert_int_eq(raw_int("PRAGMA user_version"), 999);
}
END_TEST

/* A copy that fails its check is not published: a page of the events
 * table, which the copy's snapshot read does not touch, is made garbage
 * behind SQLite's back; the backup copies it, integrity_check finds it,
 * and file.tmp is removed. */
START_TEST(test_backup_corrupt)
{
	struct store *st = open_ok();
	struct store_backup_info info;
	struct cerr err = { 0 };
	char bpath[256];
	int64_t root, psize;
	uint8_t junk[64];
	FILE *f;
	int i;

	for (i = 1; i <= 3; i++)
		submit(st, (uint64_t)i);
	store_close(st);	/* checkpointed: every page in the file */
	root = raw_int("SELECT rootpage FROM sqlite_schema WHERE "
	    "name = 'events'");
	psize = raw_int("PRAGMA page_size");
	ck_assert_int_gt(root, 1);
	memset(junk, 0xff, sizeof(junk));
	ck_assert_ptr_nonnull(f = fopen(dbpath, "r+"));
	ck_assert_int_eq(fseek(f, (long)((root - 1) * psize), SEEK_SET), 0);
	ck_assert_uint_eq(fwrite(junk, 1, sizeof(junk), f), sizeof(junk));
	ck_assert_int_eq(fclose(f), 0);

	path_in_tmp(bpath, sizeof(bpath), "backup.db");
	ck_assert_int_eq(store_backup(dbpath, bpath, 0, &info, &err), -1);
	ck_assert_msg(strstr(err.text, "fails its integrity check") != NULL,
	    "%s", err.text);
	ck_assert_int_eq(others_in_tmp(), 0);
}
END_TEST

static Suite *
store_suite(void)
{
	Suite *s = suite_create("store");
	TCase *tc = tcase_create("store");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);	/* test_usage_runs: 100k runs, under ASan on a loaded CI machine more than 20 s */
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
	tcase_add_test(tc, test_node_round_trip);
	tcase_add_test(tc, test_node_errors);
	tcase_add_test(tc, test_node_set_state);
	tcase_add_test(tc, test_node_delete);
	tcase_add_test(tc, test_placement);
	tcase_add_test(tc, test_placement_corrupt);
	tcase_add_test(tc, test_task_exits);
	tcase_add_test(tc, test_migrate_v2);
	tcase_add_test(tc, test_usage_runs);
	tcase_add_test(tc, test_backup);
	tcase_add_test(tc, test_backup_refused);
	tcase_add_test(tc, test_backup_corrupt);
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
