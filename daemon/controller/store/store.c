/* The controller's database, the single source of truth
 * (docs/ARCHITECTURE.md, "Invariants").
 * Every SQL statement of the project lives at the top of this file or of
 * store_nodes.c (nodes, placements, task exits) and is prepared once, at
 * open, with SQLITE_PREPARE_PERSISTENT; every path that
 * steps a statement resets it and clears its bindings, so no statement is
 * ever left holding a read transaction or a pointer into a caller's
 * memory. The schema comes from sql/migrations/, embedded at build time
 * and applied in order by PRAGMA user_version. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "daemon/controller/store/store_int.h"
#include "sql/migrations.h"

/* Milliseconds a writer waits for another connection's lock (a second
 * cohortd by mistake, or the sqlite3 shell) before giving up. */
#define STORE_BUSY_TIMEOUT_MS 5000

/* The savepoint of one request inside a shared transaction. Savepoints
 * are not nested (store.h), so one fixed name is enough. */
#define SAVEPOINT_NAME "store_request"

/* The job columns, in the order store_job_insert binds them and
 * job_from_row reads them. */
#define JOB_COLUMNS \
	"id, user, name, nodes_min, nodes_max, gpus_per_node, " \
	"tasks_per_node, gpu_type, time_limit_s, priority, topo_mode, " \
	"topo_level, checkpoint_dir, max_restarts, ckpt_signal, ckpt_secs, " \
	"hang_timeout_s, env, workdir, argv, script, script_name, state, " \
	"reason, submit_ms, start_ms, end_ms, restarts, exit_code, attempt, " \
	"ckpt_step, ckpt_path, ckpt_ms, last_failure_ms, last_restart_ms, " \
	"lost_work_ms, queue, service, array_spec, dependency, output, " \
	"error, nodelist, exclude, cpu_only, exclusive, array_id, " \
	"array_task, array_max, hold, gpu_ms, wasted_gpu_ms, " \
	"constraint_expr, gpu_memory_mb, cpus_per_task, mem_per_node_mb, " \
	"segment, idem_key, idem_fp, umask, submit_host, batch, signal_scope, " \
	"begin_ms, gp_first_start_ms, gp_mark_ms, gp_run_ms, gp_lost_ms, " \
	"gp_restart_ms, gp_wait_ms, gp_ckpt_ms, gp_ckpt_cost_ms, mail_type, " \
	"mail_user, on_straggler, interactive, ctr_image, ctr_mounts, " \
	"ctr_workdir, ctr_env, ctr_name, ctr_flags"

#define EVENT_COLUMNS "id, time_ms, job_id, node, kind, actor, detail"
/* Every events form filters by kind too; ?6 NULL: any kind. */
#define EVENTS_KIND "AND (?6 IS NULL OR kind = ?6) "

/* The statements of this file (the enum is in store_int.h; those of
 * store_nodes.c stay NULL here). The events queries come in four forms,
 * one per filter combination, so each can use its index; a negative LIMIT
 * means none. */
static const char *const stmt_sql[S__COUNT] = {
	[S_BEGIN] = "BEGIN IMMEDIATE",
	[S_COMMIT] = "COMMIT",
	[S_ROLLBACK] = "ROLLBACK",
	[S_SAVEPOINT] = "SAVEPOINT " SAVEPOINT_NAME,
	[S_RELEASE] = "RELEASE " SAVEPOINT_NAME,
	[S_ROLLBACK_TO] = "ROLLBACK TO " SAVEPOINT_NAME,
	[S_JOB_INSERT] = "INSERT INTO jobs (" JOB_COLUMNS ") VALUES ("
	    "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
	    "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
	    "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
	    "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
	    "?, ?, ?, ?, ?, ?)",
	[S_MAX_JOB_ID_BUMP] = "UPDATE counters SET value = max(value, ?1) "
	    "WHERE name = 'max_job_id'",
	[S_JOB_UPDATE] = "UPDATE jobs SET state = ?2, reason = ?3, "
	    "start_ms = ?4, end_ms = ?5, restarts = ?6, exit_code = ?7, "
	    "attempt = ?8, ckpt_step = ?9, ckpt_path = ?10, ckpt_ms = ?11, "
	    "last_failure_ms = ?12, last_restart_ms = ?13, lost_work_ms = ?14, "
	    "hold = ?15, gpu_ms = ?16, wasted_gpu_ms = ?17, "
	    "gp_first_start_ms = ?18, gp_mark_ms = ?19, gp_run_ms = ?20, "
	    "gp_lost_ms = ?21, gp_restart_ms = ?22, gp_wait_ms = ?23, "
	    "gp_ckpt_ms = ?24, gp_ckpt_cost_ms = ?25 "
	    "WHERE id = ?1",
	/* cohort update: the spec columns a pending job may change. */
	[S_JOB_UPDATE_SPEC] = "UPDATE jobs SET name = ?2, nodes_min = ?3, "
	    "nodes_max = ?4, gpus_per_node = ?5, tasks_per_node = ?6, "
	    "gpu_type = ?7, time_limit_s = ?8, priority = ?9, "
	    "max_restarts = ?10, queue = ?11, cpu_only = ?12 WHERE id = ?1",
	[S_EVENT_INSERT] = "INSERT INTO events "
	    "(time_ms, job_id, node, kind, actor, detail) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[S_JOBS_LOAD] = "SELECT " JOB_COLUMNS " FROM jobs ORDER BY id",
	/* The jobs' own maximum covers rows written without the counter
	 * (by hand, or by a future migration). */
	[S_MAX_JOB_ID] = "SELECT max("
	    "(SELECT value FROM counters WHERE name = 'max_job_id'), "
	    "(SELECT coalesce(max(id), 0) FROM jobs))",
	[S_EVENTS_ANY] = "SELECT " EVENT_COLUMNS " FROM events "
	    "WHERE id > ?1 AND time_ms >= ?5 " EVENTS_KIND
	    "ORDER BY id LIMIT ?4",
	[S_EVENTS_JOB] = "SELECT " EVENT_COLUMNS " FROM events "
	    "WHERE id > ?1 AND job_id = ?2 AND time_ms >= ?5 " EVENTS_KIND
	    "ORDER BY id LIMIT ?4",
	[S_EVENTS_NODE] = "SELECT " EVENT_COLUMNS " FROM events "
	    "WHERE id > ?1 AND node = ?3 AND time_ms >= ?5 " EVENTS_KIND
	    "ORDER BY id LIMIT ?4",
	[S_EVENTS_JOB_NODE] = "SELECT " EVENT_COLUMNS " FROM events "
	    "WHERE id > ?1 AND job_id = ?2 AND node = ?3 AND time_ms >= ?5 "
	    EVENTS_KIND "ORDER BY id LIMIT ?4",
	/* The rowid's maximum: one step down the table's b-tree. */
	[S_EVENTS_LAST_ID] = "SELECT coalesce(max(id), 0) FROM events",
};

/* The helpers below declared in store_int.h are shared with
 * store_nodes.c. */
int
db_fail(struct store *st, struct cerr *err, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	cerr_set(err, ERR_INTERNAL, "%s: %s", what, sqlite3_errmsg(st->db));
	errno = EIO;
	return -1;
}

void
stmt_done(sqlite3_stmt *s)
{
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
}

int
stmt_exec(struct store *st, enum stmt_id id, struct cerr *err,
    const char *what)
{
	sqlite3_stmt *s = st->stmt[id];
	int rc;

	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE)
		db_fail(st, err, "%s", what);
	stmt_done(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

void
bind_int(struct binder *b, int64_t v)
{
	b->col++;
	if (b->rc == SQLITE_OK)
		b->rc = sqlite3_bind_int64(b->s, b->col, v);
}

void
bind_text(struct binder *b, const char *v)
{
	b->col++;
	if (b->rc == SQLITE_OK)
		b->rc = sqlite3_bind_text(b->s, b->col, v, -1, SQLITE_STATIC);
}

/* NULL binds SQL NULL; a non-NULL v with len 0 is an empty blob. */
static void
bind_blob(struct binder *b, const void *v, size_t len)
{
	b->col++;
	if (b->rc == SQLITE_OK)
		b->rc = sqlite3_bind_blob64(b->s, b->col, v, len,
		    SQLITE_STATIC);
}

/* A string vector as one blob: each string followed by a NUL byte. */
static void
bind_strv(struct binder *b, char *const *v, size_t n)
{
	size_t i, len, total = 0;
	char *buf, *p;

	b->col++;
	if (b->rc != SQLITE_OK)
		return;
	for (i = 0; i < n; i++)
		total += strlen(v[i]) + 1;
	if (total == 0) {
		b->rc = sqlite3_bind_zeroblob(b->s, b->col, 0);
		return;
	}
	if ((buf = malloc(total)) == NULL) {
		b->rc = SQLITE_NOMEM;
		return;
	}
	for (p = buf, i = 0; i < n; i++) {
		len = strlen(v[i]) + 1;
		memcpy(p, v[i], len);
		p += len;
	}
	/* SQLite calls free even when the bind fails. */
	b->rc = sqlite3_bind_blob64(b->s, b->col, buf, total, free);
}

/* A failed bind is reported with its own code, not the connection's. */
int
binder_step(struct store *st, struct binder *b, struct cerr *err,
    const char *what)
{
	int rc;

	if (b->rc != SQLITE_OK) {
		stmt_done(b->s);
		errno = EIO;
		return cerr_set(err, ERR_INTERNAL, "%s: %s", what,
		    sqlite3_errstr(b->rc));
	}
	rc = sqlite3_step(b->s);
	if (rc != SQLITE_DONE)
		db_fail(st, err, "%s", what);
	stmt_done(b->s);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Sequential reading of a row, remembering the first failure: a
 * malformed value or an allocation that failed. */
struct reader {
	sqlite3_stmt *s;
	int col;
	const char *bad;	/* NULL, or what went wrong */
};

static int64_t
read_int(struct reader *r)
{
	return sqlite3_column_int64(r->s, r->col++);
}

/* Replace *dst with a copy of the column, NULL for SQL NULL. */
static void
read_text(struct reader *r, char **dst)
{
	const unsigned char *v;
	int col = r->col++;

	free(*dst);
	*dst = NULL;
	if (sqlite3_column_type(r->s, col) == SQLITE_NULL)
		return;
	v = sqlite3_column_text(r->s, col);
	if (v == NULL || (*dst = strdup((const char *)v)) == NULL)
		r->bad = "out of memory";
}

/* Replace *dst with a copy of a blob column and a NUL after it, so text
 * stays usable as a C string; NULL for SQL NULL. */
static void
read_blob(struct reader *r, char **dst, size_t *len)
{
	const void *v;
	int col = r->col++;
	int n;

	free(*dst);
	*dst = NULL;
	*len = 0;
	if (sqlite3_column_type(r->s, col) == SQLITE_NULL)
		return;
	v = sqlite3_column_blob(r->s, col);
	n = sqlite3_column_bytes(r->s, col);
	if ((*dst = malloc((size_t)n + 1)) == NULL) {
		r->bad = "out of memory";
		return;
	}
	if (n > 0)
		memcpy(*dst, v, (size_t)n);
	(*dst)[n] = '\0';
	*len = (size_t)n;
}

/* Append the strings of a NUL-separated blob to the vector *v. */
static void
read_strv(struct reader *r, char ***v, size_t *n)
{
	const char *p, *end, *nul;
	int col = r->col++;
	int len;

	p = sqlite3_column_blob(r->s, col);
	len = sqlite3_column_bytes(r->s, col);
	if (len == 0)
		return;
	if (p == NULL || p[len - 1] != '\0') {
		r->bad = "malformed string list";
		return;
	}
	for (end = p + len; p < end; p = nul + 1) {
		nul = memchr(p, '\0', (size_t)(end - p));
		if (strv_append(v, n, p) == -1) {
			r->bad = "out of memory";
			return;
		}
	}
}

int
store_schema_version(void)
{
	return (int)migrations_count;
}

/* Run one pragma or statement with no result worth keeping. */
static int
exec_sql(struct store *st, const char *sql, struct cerr *err,
    const char *what)
{
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(st, err, "database %s: %s", st->path, what);
	return 0;
}

/* Read a pragma that returns one integer. */
static int
pragma_int(struct store *st, const char *sql, int64_t *v, struct cerr *err)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return db_fail(st, err, "database %s: %s", st->path, sql);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int64(s, 0);
	else
		db_fail(st, err, "database %s: %s", st->path, sql);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* Refuse a schema this binary does not know: a newer cohortd wrote it,
 * and running an older one against it could lose what it added. */
static int
check_version(struct store *st, int64_t version, struct cerr *err)
{
	errno = EPROTO;
	if (version > (int64_t)migrations_count)
		return cerr_set(err, ERR_VERSION, "database %s has schema "
		    "version %lld, newer than this cohortd (%zu); upgrade "
		    "cohortd", st->path, (long long)version, migrations_count);
	if (version < 0)
		return cerr_set(err, ERR_VERSION, "database %s has invalid "
		    "schema version %lld", st->path, (long long)version);
	return 0;
}

/* Switch to WAL and make sure it took: SQLite quietly keeps another mode
 * where WAL is impossible (an in-memory database, some file systems), and
 * our durability and concurrency reasoning assumes WAL. */
static int
set_wal(struct store *st, struct cerr *err)
{
	sqlite3_stmt *s;
	const unsigned char *mode;
	int rc, ok = 0;

	/* An in-memory database (unit tests, the goodput simulator) has
	 * no journal file to put in WAL mode. */
	if (strcmp(st->path, ":memory:") == 0)
		return 0;
	if (sqlite3_prepare_v2(st->db, "PRAGMA journal_mode = WAL", -1, &s,
	    NULL) != SQLITE_OK)
		return db_fail(st, err, "database %s: set journal mode",
		    st->path);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		db_fail(st, err, "database %s: set journal mode", st->path);
	} else if ((mode = sqlite3_column_text(s, 0)) == NULL ||
	    strcasecmp((const char *)mode, "wal") != 0) {
		cerr_set(err, ERR_INTERNAL, "database %s: journal mode is %s, "
		    "not wal", st->path, mode ? (const char *)mode : "unknown");
		errno = EIO;
	} else
		ok = 1;
	sqlite3_finalize(s);
	return ok ? 0 : -1;
}

/* Bring the schema up to date, one migration per transaction. The version
 * is read again inside each transaction (BEGIN IMMEDIATE holds the write
 * lock), so two processes opening the same file cannot both apply a step. */
static int
migrate(struct store *st, struct cerr *err)
{
	char sql[64];
	int64_t version;
	const struct migration *m;

	for (;;) {
		if (exec_sql(st, "BEGIN IMMEDIATE", err, "begin migration") ==
		    -1)
			return -1;
		if (pragma_int(st, "PRAGMA user_version", &version, err) == -1)
			goto fail;
		if (check_version(st, version, err) == -1)
			goto fail;
		if (version == (int64_t)migrations_count)
			break;
		m = &migrations[version];
		if (sqlite3_exec(st->db, m->sql, NULL, NULL, NULL) !=
		    SQLITE_OK) {
			db_fail(st, err, "database %s: migration %s", st->path,
			    m->name);
			goto fail;
		}
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
		    m->version);
		if (exec_sql(st, sql, err, "set user_version") == -1 ||
		    exec_sql(st, "COMMIT", err, "commit migration") == -1 ||
		    (st->commit_hook != NULL &&
		    st->commit_hook(st->commit_arg, err) == -1))
			goto fail;
	}
	if (exec_sql(st, "COMMIT", err, "end migration") == -1)
		return -1;
	return st->commit_hook != NULL ? st->commit_hook(st->commit_arg, err) :
	    0;

fail:
	if (!sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

/* The database holds users' environments and scripts: create it readable
 * by the owner only. SQLite gives the -wal and -shm files the same mode. */
static int
create_private(const char *path, struct cerr *err)
{
	int fd;

	if (strcmp(path, ":memory:") == 0)
		return 0;
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1) {
		int saved = errno;

		cerr_set(err, ERR_INTERNAL, "database %s: %s", path,
		    strerror(saved));
		errno = saved;
		return -1;
	}
	close(fd);
	return 0;
}

static struct store *store_open_with(struct store *st, const char *path,
    struct cerr *err);

struct store *
store_open(const char *path, struct cerr *err)
{
	struct store *st;

	if ((st = calloc(1, sizeof(*st))) == NULL ||
	    (st->path = strdup(path)) == NULL) {
		free(st);
		cerr_set(err, ERR_INTERNAL, "database %s: out of memory", path);
		errno = ENOMEM;
		return NULL;
	}
	return store_open_with(st, path, err);
}

struct store *
store_open_replicated(const char *name, const char *vfs,
    int (*commit)(void *, struct cerr *), void *arg, const char *restore,
    struct cerr *err)
{
	struct store *st;

	if ((st = calloc(1, sizeof(*st))) == NULL ||
	    (st->path = strdup(name)) == NULL) {
		free(st);
		cerr_set(err, ERR_INTERNAL, "database %s: out of memory", name);
		errno = ENOMEM;
		return NULL;
	}
	st->vfs = vfs;
	st->commit_hook = commit;
	st->commit_arg = arg;
	st->restore = restore;
	return store_open_with(st, name, err);
}

/* The settings of a database on dqlite's VFS: its page size, and no
 * checkpoints or fsync of SQLite's own (repl.c checkpoints; the Raft log
 * is what is durable). */
static int
set_replicated(struct store *st, struct cerr *err)
{
	return exec_sql(st, "PRAGMA page_size = 4096", err, "set page size") ==
	    -1 || exec_sql(st, "PRAGMA synchronous = OFF", err,
	    "set synchronous") == -1 || set_wal(st, err) == -1 ||
	    exec_sql(st, "PRAGMA wal_autocheckpoint = 0", err,
	    "set wal_autocheckpoint") == -1 ? -1 : 0;
}

/* A new replicated cluster's database starts as a backup: every page of
 * file, copied in one transaction (so one Raft entry, the size of the
 * database), then migrated as any older database is. Only into an empty
 * database. */
static int
restore_from(struct store *st, int64_t *version, struct cerr *err)
{
	sqlite3 *src = NULL;
	sqlite3_backup *b;
	int rc;

	if (*version != 0)
		return cerr_set(err, ERR_CONFLICT, "cannot restore %s: the "
		    "replicated database is not empty (schema version "
		    "%lld); --restore goes with --bootstrap of a new "
		    "cluster", st->restore, (long long)*version);
	if (sqlite3_open_v2(st->restore, &src, SQLITE_OPEN_READONLY |
	    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		cerr_set(err, ERR_INVALID, "cannot open backup %s: %s",
		    st->restore, src != NULL ? sqlite3_errmsg(src) :
		    "out of memory");
		sqlite3_close(src);
		return -1;
	}
	if ((b = sqlite3_backup_init(st->db, "main", src, "main")) == NULL) {
		db_fail(st, err, "restore %s", st->restore);
		sqlite3_close(src);
		return -1;
	}
	rc = sqlite3_backup_step(b, -1);
	sqlite3_backup_finish(b);
	sqlite3_close(src);
	if (rc != SQLITE_DONE)
		return cerr_set(err, ERR_INTERNAL, "restore %s: %s",
		    st->restore, sqlite3_errstr(rc));
	if (st->commit_hook(st->commit_arg, err) == -1 ||
	    pragma_int(st, "PRAGMA user_version", version, err) == -1 ||
	    check_version(st, *version, err) == -1)
		return -1;
	if (*version == 0)
		return cerr_set(err, ERR_INVALID, "%s is not a cohortd "
		    "database (schema version 0)", st->restore);
	return 0;
}

static struct store *
store_open_with(struct store *st, const char *path, struct cerr *err)
{
	const char *sql;
	int64_t version;
	int i, rc, saved;

	if (st->vfs == NULL && create_private(path, err) == -1)
		goto fail;
	rc = sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
	    st->vfs != NULL ? st->vfs : store_wal_vfs());
	if (rc != SQLITE_OK) {
		if (st->db == NULL) {
			cerr_set(err, ERR_INTERNAL, "open database %s: %s",
			    path, sqlite3_errstr(rc));
			errno = ENOMEM;
		} else
			db_fail(st, err, "open database %s", path);
		goto fail;
	}
	sqlite3_extended_result_codes(st->db, 1);
	store_wal_attach(st);
	if (sqlite3_busy_timeout(st->db, STORE_BUSY_TIMEOUT_MS) != SQLITE_OK) {
		db_fail(st, err, "database %s: busy timeout", path);
		goto fail;
	}
	/* Read the version before anything writes to the file, so a database
	 * that is refused (newer, or not a database) is left as it was;
	 * migrate() checks again under the write lock. */
	if (pragma_int(st, "PRAGMA user_version", &version, err) == -1 ||
	    check_version(st, version, err) == -1 ||
	    (st->vfs != NULL ? set_replicated(st, err) == -1 :
	    set_wal(st, err) == -1 ||
	    exec_sql(st, "PRAGMA synchronous = FULL", err,
	    "set synchronous") == -1) ||
	    (st->restore != NULL && restore_from(st, &version, err) == -1) ||
	    exec_sql(st, "PRAGMA foreign_keys = ON", err,
	    "enable foreign keys") == -1 ||
	    migrate(st, err) == -1)
		goto fail;

	for (i = 0; i < S__COUNT; i++) {
		sql = stmt_sql[i] != NULL ? stmt_sql[i] :
		    store_nodes_sql[i] != NULL ? store_nodes_sql[i] :
		    store_history_sql[i];
		if (sql == NULL || (stmt_sql[i] != NULL) +
		    (store_nodes_sql[i] != NULL) +
		    (store_history_sql[i] != NULL) > 1) {
			/* A slip in the tables of the two files. */
			cerr_set(err, ERR_INTERNAL, "database %s: statement "
			    "%d has %s SQL", path, i, sql ? "two" : "no");
			errno = EINVAL;
			goto fail;
		}
		if (sqlite3_prepare_v3(st->db, sql, -1,
		    SQLITE_PREPARE_PERSISTENT, &st->stmt[i], NULL) !=
		    SQLITE_OK) {
			db_fail(st, err, "database %s: prepare \"%.60s\"",
			    path, sql);
			goto fail;
		}
	}
	return st;

fail:
	saved = errno;
	store_close(st);
	errno = saved;
	return NULL;
}

void
store_close(struct store *st)
{
	int i;

	if (st == NULL)
		return;
	if (st->db != NULL && !sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	for (i = 0; i < S__COUNT; i++)
		sqlite3_finalize(st->stmt[i]);
	sqlite3_close(st->db);
	free(st->path);
	free(st);
}

int
store_begin(struct store *st, struct cerr *err)
{
	st->marked = false;
	return stmt_exec(st, S_BEGIN, err, "begin transaction");
}

int
store_commit(struct store *st, struct cerr *err)
{
	st->marked = false;
	if (stmt_exec(st, S_COMMIT, err, "commit") == 0)
		return st->commit_hook != NULL ?
		    st->commit_hook(st->commit_arg, err) : 0;
	/* A COMMIT that failed (SQLITE_BUSY, an I/O error) may leave the
	 * transaction open; callers assume it is gone. */
	store_rollback(st);
	return -1;
}

int
store_rollback(struct store *st)
{
	st->marked = false;
	/* An error such as SQLITE_FULL may already have rolled back. */
	if (sqlite3_get_autocommit(st->db))
		return 0;
	if (stmt_exec(st, S_ROLLBACK, NULL, "rollback") == -1) {
		errno = EIO;
		return -1;
	}
	return 0;
}

bool
store_in_txn(const struct store *st)
{
	return sqlite3_get_autocommit(st->db) == 0;
}

int
store_mark(struct store *st, struct cerr *err)
{
	/* Outside BEGIN a SAVEPOINT would open a deferred transaction of
	 * its own, which the group commit would never see. */
	if (!store_in_txn(st) || st->marked) {
		errno = EINVAL;
		return cerr_set(err, ERR_INTERNAL, "savepoint: %s",
		    st->marked ? "already marked" : "no transaction");
	}
	if (stmt_exec(st, S_SAVEPOINT, err, "savepoint") == -1)
		return -1;
	st->marked = true;
	return 0;
}

int
store_keep(struct store *st, struct cerr *err)
{
	if (!st->marked) {
		errno = EINVAL;
		return cerr_set(err, ERR_INTERNAL, "release savepoint: none");
	}
	st->marked = false;
	return stmt_exec(st, S_RELEASE, err, "release savepoint");
}

int
store_undo(struct store *st)
{
	int rc;

	if (!st->marked) {
		errno = EINVAL;
		return -1;
	}
	st->marked = false;
	rc = stmt_exec(st, S_ROLLBACK_TO, NULL, "rollback to savepoint");
	if (stmt_exec(st, S_RELEASE, NULL, "release savepoint") == -1)
		rc = -1;
	if (rc == -1)
		errno = EIO;
	return rc;
}

/* The recovery columns, shared by insert and update (same order). */
static void
bind_recovery(struct binder *b, const struct job *job)
{
	if (job->has_ckpt) {
		bind_int(b, (int64_t)job->ckpt_step);
		bind_text(b, job->ckpt_path != NULL ? job->ckpt_path : "");
	} else {
		bind_text(b, NULL);
		bind_text(b, NULL);
	}
	bind_int(b, job->ckpt_ms);
	bind_int(b, job->last_failure_ms);
	bind_int(b, job->last_restart_ms);
	bind_int(b, (int64_t)job->lost_work_ms);
}

/* The hold and accounting columns, shared by insert and update. */
static void
bind_accounting(struct binder *b, const struct job *job)
{
	bind_int(b, job->hold);
	bind_int(b, (int64_t)job->gpu_ms);
	bind_int(b, (int64_t)job->wasted_gpu_ms);
}

/* The goodput columns, shared by insert and update (same order). */
static void
bind_goodput(struct binder *b, const struct job *job)
{
	const struct job_goodput *gp = &job->gp;

	bind_int(b, gp->first_start_ms);
	bind_int(b, gp->mark_ms);
	bind_int(b, (int64_t)gp->run_ms);
	bind_int(b, (int64_t)gp->lost_ms);
	bind_int(b, (int64_t)gp->restart_ms);
	bind_int(b, (int64_t)gp->wait_ms);
	bind_int(b, (int64_t)gp->ckpt_ms);
	bind_int(b, (int64_t)gp->ckpt_cost_ms);
}

int
store_job_insert(struct store *st, const struct job *job, struct cerr *err)
{
	const struct job_spec *sp = &job->spec;
	struct binder b = { st->stmt[S_JOB_INSERT], 0, SQLITE_OK };
	char what[64];

	bind_int(&b, (int64_t)job->id);
	bind_text(&b, job->user);
	bind_text(&b, sp->name);
	bind_int(&b, sp->nodes_min);
	bind_int(&b, sp->nodes_max);
	bind_int(&b, sp->gpus_per_node);
	bind_int(&b, sp->tasks_per_node);
	bind_text(&b, sp->gpu_type);
	bind_int(&b, (int64_t)sp->time_limit_s);
	bind_int(&b, sp->priority);
	bind_int(&b, sp->topo_mode);
	bind_text(&b, sp->topo_level);
	bind_text(&b, sp->checkpoint_dir);
	bind_int(&b, sp->max_restarts);
	bind_int(&b, sp->ckpt_signal);
	bind_int(&b, sp->ckpt_secs);
	bind_int(&b, (int64_t)sp->hang_timeout_s);
	bind_strv(&b, sp->env, sp->nenv);
	bind_text(&b, sp->workdir);
	bind_strv(&b, sp->argv, sp->argc);
	bind_blob(&b, sp->script, sp->script_len);
	bind_text(&b, sp->script_name);
	bind_text(&b, job_state_name(job->state));
	bind_text(&b, job->reason != NULL ? job->reason : "");
	bind_int(&b, job->submit_ms);
	bind_int(&b, job->start_ms);
	bind_int(&b, job->end_ms);
	bind_int(&b, job->restarts);
	if (job->has_exit)
		bind_int(&b, job->exit_code);
	else
		bind_text(&b, NULL);
	bind_int(&b, job->attempt);
	bind_recovery(&b, job);
	bind_text(&b, sp->queue);
	bind_int(&b, sp->service ? 1 : 0);
	bind_text(&b, sp->array);
	bind_text(&b, sp->dependency);
	bind_text(&b, sp->output);
	bind_text(&b, sp->error);
	bind_text(&b, sp->nodelist);
	bind_text(&b, sp->exclude);
	bind_int(&b, sp->cpu_only ? 1 : 0);
	bind_int(&b, sp->exclusive ? 1 : 0);
	bind_int(&b, (int64_t)job->array_id);
	bind_int(&b, job->array_task);
	bind_int(&b, job->array_max);
	bind_accounting(&b, job);
	bind_text(&b, sp->constraint);
	bind_int(&b, (int64_t)sp->gpu_memory_mb);
	bind_int(&b, (int64_t)sp->cpus_per_task);
	bind_int(&b, (int64_t)sp->mem_per_node_mb);
	bind_int(&b, (int64_t)sp->segment);
	bind_text(&b, sp->idem_key);
	bind_blob(&b, sp->has_idem_fp ? sp->idem_fp : NULL,
	    sp->has_idem_fp ? JOB_IDEM_FP_LEN : 0);
	if (sp->has_umask)
		bind_int(&b, sp->umask);
	else
		bind_text(&b, NULL);
	bind_text(&b, sp->submit_host);
	bind_int(&b, sp->batch);
	bind_int(&b, sp->signal_scope);
	bind_int(&b, sp->begin_ms);
	bind_goodput(&b, job);
	bind_int(&b, sp->mail_type);
	bind_text(&b, sp->mail_user);
	bind_int(&b, sp->on_straggler);
	bind_int(&b, sp->interactive);
	bind_text(&b, sp->ctr.image);
	bind_text(&b, sp->ctr.mounts);
	bind_text(&b, sp->ctr.workdir);
	bind_text(&b, sp->ctr.env);
	bind_text(&b, sp->ctr.name);
	bind_int(&b, (sp->ctr.writable ? 1 : 0) | (sp->ctr.mount_home ? 2 : 0));

	snprintf(what, sizeof(what), "insert job %llu",
	    (unsigned long long)job->id);
	if (binder_step(st, &b, err, what) == -1)
		return -1;
	/* Same transaction as the row, so the two cannot disagree. */
	sqlite3_bind_int64(st->stmt[S_MAX_JOB_ID_BUMP], 1, (int64_t)job->id);
	return stmt_exec(st, S_MAX_JOB_ID_BUMP, err, what);
}

int
store_job_update(struct store *st, const struct job *job, struct cerr *err)
{
	struct binder b = { st->stmt[S_JOB_UPDATE], 0, SQLITE_OK };
	char what[64];

	bind_int(&b, (int64_t)job->id);
	bind_text(&b, job_state_name(job->state));
	bind_text(&b, job->reason != NULL ? job->reason : "");
	bind_int(&b, job->start_ms);
	bind_int(&b, job->end_ms);
	bind_int(&b, job->restarts);
	if (job->has_exit)
		bind_int(&b, job->exit_code);
	else
		bind_text(&b, NULL);
	bind_int(&b, job->attempt);
	bind_recovery(&b, job);
	bind_accounting(&b, job);
	bind_goodput(&b, job);

	snprintf(what, sizeof(what), "update job %llu",
	    (unsigned long long)job->id);
	if (binder_step(st, &b, err, what) == -1)
		return -1;
	if (sqlite3_changes(st->db) == 0) {
		errno = ENOENT;
		return cerr_set(err, ERR_NOT_FOUND, "update job %llu: no such "
		    "job", (unsigned long long)job->id);
	}
	return 0;
}

int
store_job_update_spec(struct store *st, const struct job *job,
    struct cerr *err)
{
	const struct job_spec *sp = &job->spec;
	struct binder b = { st->stmt[S_JOB_UPDATE_SPEC], 0, SQLITE_OK };
	char what[64];

	bind_int(&b, (int64_t)job->id);
	bind_text(&b, sp->name);
	bind_int(&b, sp->nodes_min);
	bind_int(&b, sp->nodes_max);
	bind_int(&b, sp->gpus_per_node);
	bind_int(&b, sp->tasks_per_node);
	bind_text(&b, sp->gpu_type);
	bind_int(&b, (int64_t)sp->time_limit_s);
	bind_int(&b, sp->priority);
	bind_int(&b, sp->max_restarts);
	bind_text(&b, sp->queue);
	bind_int(&b, sp->cpu_only ? 1 : 0);

	snprintf(what, sizeof(what), "update the spec of job %llu",
	    (unsigned long long)job->id);
	if (binder_step(st, &b, err, what) == -1)
		return -1;
	if (sqlite3_changes(st->db) == 0) {
		errno = ENOENT;
		return cerr_set(err, ERR_NOT_FOUND, "update job %llu: no such "
		    "job", (unsigned long long)job->id);
	}
	return 0;
}

int
store_event_append(struct store *st, int64_t time_ms, uint64_t job_id,
    const char *node, const char *kind, const char *actor, const char *detail,
    struct cerr *err)
{
	struct binder b = { st->stmt[S_EVENT_INSERT], 0, SQLITE_OK };
	char what[96];

	bind_int(&b, time_ms);
	if (job_id != 0)
		bind_int(&b, (int64_t)job_id);
	else
		bind_text(&b, NULL);
	bind_text(&b, node);
	bind_text(&b, kind);
	bind_text(&b, actor);
	bind_text(&b, detail != NULL ? detail : "");

	snprintf(what, sizeof(what), "append event %.32s%s%.0llu",
	    kind != NULL ? kind : "", job_id != 0 ? " of job " : "",
	    (unsigned long long)job_id);
	return binder_step(st, &b, err, what);
}

/* Build a job from a row of S_JOBS_LOAD. NULL with err set. */
static struct job *
job_from_row(sqlite3_stmt *s, struct cerr *err)
{
	struct reader r = { s, 0, NULL };
	struct job *job;
	struct job_spec *sp;
	char *state = NULL, *fp = NULL;
	size_t fplen;
	int64_t hold, ctr_flags;

	if ((job = job_new()) == NULL) {
		cerr_set(err, ERR_INTERNAL, "load jobs: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	sp = &job->spec;
	job->id = (uint64_t)read_int(&r);
	read_text(&r, &job->user);
	read_text(&r, &sp->name);
	sp->nodes_min = (uint32_t)read_int(&r);
	sp->nodes_max = (uint32_t)read_int(&r);
	sp->gpus_per_node = (uint32_t)read_int(&r);
	sp->tasks_per_node = (uint32_t)read_int(&r);
	read_text(&r, &sp->gpu_type);
	sp->time_limit_s = (uint64_t)read_int(&r);
	sp->priority = (int32_t)read_int(&r);
	sp->topo_mode = (enum topo_mode)read_int(&r);
	read_text(&r, &sp->topo_level);
	read_text(&r, &sp->checkpoint_dir);
	sp->max_restarts = (uint32_t)read_int(&r);
	sp->ckpt_signal = (int)read_int(&r);
	sp->ckpt_secs = (uint32_t)read_int(&r);
	sp->hang_timeout_s = (uint64_t)read_int(&r);
	read_strv(&r, &sp->env, &sp->nenv);
	read_text(&r, &sp->workdir);
	read_strv(&r, &sp->argv, &sp->argc);
	read_blob(&r, &sp->script, &sp->script_len);
	read_text(&r, &sp->script_name);
	read_text(&r, &state);
	read_text(&r, &job->reason);
	job->submit_ms = read_int(&r);
	job->start_ms = read_int(&r);
	job->end_ms = read_int(&r);
	job->restarts = (uint32_t)read_int(&r);
	job->has_exit = sqlite3_column_type(s, r.col) != SQLITE_NULL;
	job->exit_code = (int32_t)read_int(&r);
	job->attempt = (uint32_t)read_int(&r);
	job->has_ckpt = sqlite3_column_type(s, r.col) != SQLITE_NULL;
	job->ckpt_step = (uint64_t)read_int(&r);
	read_text(&r, &job->ckpt_path);
	job->ckpt_ms = read_int(&r);
	job->last_failure_ms = read_int(&r);
	job->last_restart_ms = read_int(&r);
	job->lost_work_ms = (uint64_t)read_int(&r);
	read_text(&r, &sp->queue);
	sp->service = read_int(&r) != 0;
	read_text(&r, &sp->array);
	read_text(&r, &sp->dependency);
	read_text(&r, &sp->output);
	read_text(&r, &sp->error);
	read_text(&r, &sp->nodelist);
	read_text(&r, &sp->exclude);
	sp->cpu_only = read_int(&r) != 0;
	sp->exclusive = read_int(&r) != 0;
	job->array_id = (uint64_t)read_int(&r);
	job->array_task = (uint32_t)read_int(&r);
	job->array_max = (uint32_t)read_int(&r);
	hold = read_int(&r);
	job->hold = hold == JOB_HOLD_ADMIN ? JOB_HOLD_ADMIN :
	    hold == JOB_HOLD_USER ? JOB_HOLD_USER : JOB_HOLD_NONE;
	job->gpu_ms = (uint64_t)read_int(&r);
	job->wasted_gpu_ms = (uint64_t)read_int(&r);
	read_text(&r, &sp->constraint);
	sp->gpu_memory_mb = (uint64_t)read_int(&r);
	sp->cpus_per_task = (uint32_t)read_int(&r);
	sp->mem_per_node_mb = (uint64_t)read_int(&r);
	sp->segment = (uint32_t)read_int(&r);
	read_text(&r, &sp->idem_key);
	/* Not JOB_IDEM_FP_LEN bytes (edited by hand): as if none, so the
	 * key alone decides, as for jobs made before fingerprints. */
	read_blob(&r, &fp, &fplen);
	if (fp != NULL && fplen == JOB_IDEM_FP_LEN) {
		memcpy(sp->idem_fp, fp, JOB_IDEM_FP_LEN);
		sp->has_idem_fp = true;
	}
	free(fp);
	/* NULL: not given, and the agent's default applies. */
	sp->has_umask = sqlite3_column_type(s, r.col) != SQLITE_NULL;
	sp->umask = (uint32_t)read_int(&r);
	read_text(&r, &sp->submit_host);
	sp->batch = read_int(&r) != 0;
	sp->signal_scope = (int)read_int(&r);
	sp->begin_ms = read_int(&r);
	job->gp.first_start_ms = read_int(&r);
	job->gp.mark_ms = read_int(&r);
	job->gp.run_ms = (uint64_t)read_int(&r);
	job->gp.lost_ms = (uint64_t)read_int(&r);
	job->gp.restart_ms = (uint64_t)read_int(&r);
	job->gp.wait_ms = (uint64_t)read_int(&r);
	job->gp.ckpt_ms = (uint64_t)read_int(&r);
	job->gp.ckpt_cost_ms = (uint64_t)read_int(&r);
	sp->mail_type = (uint32_t)read_int(&r);
	read_text(&r, &sp->mail_user);
	sp->on_straggler = (int)read_int(&r);
	sp->interactive = read_int(&r) != 0;
	read_text(&r, &sp->ctr.image);
	read_text(&r, &sp->ctr.mounts);
	read_text(&r, &sp->ctr.workdir);
	read_text(&r, &sp->ctr.env);
	read_text(&r, &sp->ctr.name);
	ctr_flags = read_int(&r);
	sp->ctr.writable = (ctr_flags & 1) != 0;
	sp->ctr.mount_home = (ctr_flags & 2) != 0;

	if (r.bad == NULL && job->reason == NULL &&
	    (job->reason = strdup("")) == NULL)
		r.bad = "out of memory";
	if (r.bad == NULL && (state == NULL ||
	    job_state_parse(state, &job->state) == -1))
		r.bad = "unknown state";
	free(state);
	if (r.bad != NULL) {
		cerr_set(err, ERR_INTERNAL, "load job %llu: %s",
		    (unsigned long long)job->id, r.bad);
		errno = strcmp(r.bad, "out of memory") == 0 ? ENOMEM : EIO;
		job_free(job);
		return NULL;
	}
	return job;
}

int
store_jobs_load(struct store *st, int (*cb)(struct job *job, void *arg),
    void *arg, struct cerr *err)
{
	sqlite3_stmt *s = st->stmt[S_JOBS_LOAD];
	struct store_nodes_scan ps;
	struct job *job;
	int rc, ret = 0;

	store_nodes_scan_begin(st, &ps);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if ((job = job_from_row(s, err)) == NULL) {
			ret = -1;
			break;
		}
		if (store_nodes_scan_fill(st, &ps, job, err) == -1) {
			job_free(job);
			ret = -1;
			break;
		}
		if (cb(job, arg) == -1) {
			/* Keep the callback's own error if it left one. */
			if (err != NULL && err->code == ERR_NONE)
				cerr_set(err, ERR_INTERNAL, "load jobs: "
				    "stopped at job %llu",
				    (unsigned long long)job->id);
			ret = -1;
			break;
		}
	}
	if (ret == 0 && rc != SQLITE_DONE)
		ret = db_fail(st, err, "load jobs");
	stmt_done(s);
	store_nodes_scan_end(&ps);
	return ret;
}

int
store_max_job_id(struct store *st, uint64_t *id, struct cerr *err)
{
	sqlite3_stmt *s = st->stmt[S_MAX_JOB_ID];
	int rc;

	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*id = (uint64_t)sqlite3_column_int64(s, 0);
	else
		db_fail(st, err, "read max job id");
	stmt_done(s);
	return rc == SQLITE_ROW ? 0 : -1;
}

int
store_job_id_bump(struct store *st, uint64_t id, struct cerr *err)
{
	char what[64];

	snprintf(what, sizeof(what), "reserve job id %llu",
	    (unsigned long long)id);
	sqlite3_bind_int64(st->stmt[S_MAX_JOB_ID_BUMP], 1, (int64_t)id);
	return stmt_exec(st, S_MAX_JOB_ID_BUMP, err, what);
}

int
store_events_last_id(struct store *st, int64_t *id, struct cerr *err)
{
	sqlite3_stmt *s = st->stmt[S_EVENTS_LAST_ID];
	int rc;

	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(s, 0);
	else
		db_fail(st, err, "read the last event id");
	stmt_done(s);
	return rc == SQLITE_ROW ? 0 : -1;
}

int
store_events_list(struct store *st, int64_t after_id, uint64_t job_id,
    const char *node, const char *kind, int64_t since_ms, int limit,
    int (*cb)(const struct store_event *ev, void *arg), void *arg,
    struct cerr *err)
{
	struct store_event ev;
	sqlite3_stmt *s;
	enum stmt_id id;
	int rc, ret = 0;

	if (job_id != 0)
		id = node != NULL ? S_EVENTS_JOB_NODE : S_EVENTS_JOB;
	else
		id = node != NULL ? S_EVENTS_NODE : S_EVENTS_ANY;
	s = st->stmt[id];
	/* Parameters a form does not use are simply not bound. */
	sqlite3_bind_int64(s, 1, after_id);
	if (job_id != 0)
		sqlite3_bind_int64(s, 2, (int64_t)job_id);
	if (node != NULL)
		sqlite3_bind_text(s, 3, node, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, limit > 0 ? limit : -1);
	sqlite3_bind_int64(s, 5, since_ms);
	/* Always bound: a binding outlives the statement's reset. */
	if (kind != NULL)
		sqlite3_bind_text(s, 6, kind, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 6);

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		ev.id = sqlite3_column_int64(s, 0);
		ev.time_ms = sqlite3_column_int64(s, 1);
		ev.job_id = (uint64_t)sqlite3_column_int64(s, 2);
		ev.node = (const char *)sqlite3_column_text(s, 3);
		ev.kind = (const char *)sqlite3_column_text(s, 4);
		ev.actor = (const char *)sqlite3_column_text(s, 5);
		ev.detail = (const char *)sqlite3_column_text(s, 6);
		if (ev.kind == NULL || ev.actor == NULL || ev.detail == NULL) {
			/* NOT NULL columns: only an allocation failure. */
			ret = db_fail(st, err, "list events");
			break;
		}
		if (cb(&ev, arg) == -1) {
			if (err != NULL && err->code == ERR_NONE)
				cerr_set(err, ERR_INTERNAL, "list events: "
				    "stopped at event %lld",
				    (long long)ev.id);
			ret = -1;
			break;
		}
	}
	if (ret == 0 && rc != SQLITE_DONE)
		ret = db_fail(st, err, "list events");
	stmt_done(s);
	return ret;
}
