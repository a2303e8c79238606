/* The fourth part of the store module (store.h): `cohortd --backup`, a
 * consistent copy of a database that a running cohortd may be writing.
 *
 * Why the online backup API and not VACUUM INTO: both copy one snapshot,
 * but the backup API copies pages as they are (cost: the file's size, no
 * index rebuilt), in bounded steps, and leaves the file's structure as the
 * controller wrote it; VACUUM INTO rebuilds every table and index (CPU in
 * proportion to rows times indexes) for a smaller file nobody asked for.
 * The source is opened read-only and one read transaction is held across
 * every step: in WAL mode a reader never blocks the controller's writers,
 * and a held snapshot keeps the backup from restarting each time the
 * controller commits (which, with a commit per loop round, would never
 * end). The price is that the controller's checkpoints cannot reset the
 * WAL until the copy is done: it grows by what is written meanwhile.
 *
 * The copy is written to FILE.tmp, checked, fsynced and only then given
 * its name, so FILE is never a half-written database; without --force the
 * name is given by link(2), which fails if FILE appeared meanwhile. */
#include "config.h"

#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "daemon/controller/store/store.h"
#include "daemon/controller/store/store_int.h"
#include "sql/migrations.h"

/* Pages per backup step (4 MiB at the default 4 KiB page): each step
 * holds the destination's lock only, so this bounds nothing the
 * controller waits on; it bounds the work between two checks of an error
 * and of the busy retries. */
#define BACKUP_STEP_PAGES 1024
/* How long to retry a step that finds a lock (only an odd reader of the
 * copy could hold one), and the source's busy timeout. */
#define BACKUP_BUSY_MS 5000

/* The names of the tmp file and the files SQLite may put beside it. */
static const char *const tmp_sidecars[] = { "", "-journal", "-wal",
    "-shm" };

static int
fail_sqlite(sqlite3 *db, struct cerr *err, const char *what,
    const char *path)
{
	cerr_set(err, ERR_INTERNAL, "%s %s: %s", what, path,
	    db != NULL ? sqlite3_errmsg(db) : "out of memory");
	errno = EIO;
	return -1;
}

static int
fail_errno(struct cerr *err, const char *what, const char *path)
{
	int saved = errno;

	cerr_set(err, ERR_INTERNAL, "%s %s: %s", what, path, strerror(saved));
	errno = saved;
	return -1;
}

/* Read one integer (the first column of the first row) of sql. */
static int
query_int(sqlite3 *db, const char *sql, int64_t *v)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return -1;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* The schema this binary can vouch for: one of its own migrations. */
static int
check_schema(int64_t version, const char *path, struct cerr *err)
{
	errno = EPROTO;
	if (version > (int64_t)migrations_count)
		return cerr_set(err, ERR_VERSION, "database %s has schema "
		    "version %lld, newer than this cohortd (%zu): back it up "
		    "with the cohortd that wrote it", path, (long long)version,
		    migrations_count);
	if (version <= 0)
		return cerr_set(err, ERR_VERSION, "%s is not a cohortd "
		    "database (schema version %lld)", path,
		    (long long)version);
	return 0;
}

static int
fsync_path(const char *path, int flags)
{
	int fd, rc;

	if ((fd = open(path, flags | O_CLOEXEC)) == -1)
		return -1;
	rc = fsync(fd);
	if (rc == -1) {
		int saved = errno;

		close(fd);
		errno = saved;
		return -1;
	}
	return close(fd);
}

/* fsync the directory holding path, so that the new name survives a
 * crash as well as the data. */
static int
fsync_dir_of(const char *path)
{
	char *copy, *dir;
	int rc;

	if ((copy = strdup(path)) == NULL)
		return -1;
	dir = dirname(copy);
	rc = fsync_path(dir, O_RDONLY | O_DIRECTORY);
	free(copy);
	return rc;
}

static void
remove_tmp(const char *tmp)
{
	char side[4096];
	size_t i;

	for (i = 0; i < sizeof(tmp_sidecars) / sizeof(tmp_sidecars[0]); i++)
		if (snprintf(side, sizeof(side), "%s%s", tmp,
		    tmp_sidecars[i]) < (int)sizeof(side))
			unlink(side);
}

/* Copy the snapshot: src holds its read transaction. */
/* Create tmp (mode 0600: the database holds users' scripts), refusing
 * one another backup is writing unless flags has STORE_BACKUP_FORCE. The
 * descriptor, or -1 with err set. */
static int
create_tmp(const char *tmp, unsigned flags, struct cerr *err)
{
	int fd, saved;

	if (flags & STORE_BACKUP_FORCE)
		remove_tmp(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600)) == -1) {
		saved = errno;
		if (saved == EEXIST)
			cerr_set(err, ERR_CONFLICT, "%s exists: another backup "
			    "is writing it; remove it, or give --force", tmp);
		else
			cerr_set(err, ERR_INTERNAL, "create %s: %s", tmp,
			    strerror(saved));
		errno = saved;
	}
	return fd;
}

static int
copy_pages(sqlite3 *src, const char *tmp, struct cerr *err)
{
	sqlite3 *dst = NULL;
	sqlite3_backup *b;
	int rc, waited = 0;

	rc = sqlite3_open_v2(tmp, &dst, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX, NULL);
	/* No journal: a failed copy is deleted, not rolled back; the file
	 * is fsynced by hand once complete. */
	if (rc != SQLITE_OK ||
	    sqlite3_exec(dst, "PRAGMA journal_mode = OFF; "
	    "PRAGMA synchronous = OFF", NULL, NULL, NULL) != SQLITE_OK) {
		fail_sqlite(dst, err, "open", tmp);
		sqlite3_close(dst);
		return -1;
	}
	if ((b = sqlite3_backup_init(dst, "main", src, "main")) == NULL) {
		fail_sqlite(dst, err, "start backup to", tmp);
		sqlite3_close(dst);
		return -1;
	}
	for (;;) {
		rc = sqlite3_backup_step(b, BACKUP_STEP_PAGES);
		if (rc == SQLITE_OK)
			continue;
		if ((rc == SQLITE_BUSY || rc == SQLITE_LOCKED) &&
		    waited < BACKUP_BUSY_MS) {
			sqlite3_sleep(10);
			waited += 10;
			continue;
		}
		break;
	}
	sqlite3_backup_finish(b);
	if (rc != SQLITE_DONE) {
		cerr_set(err, ERR_INTERNAL, "copy to %s: %s", tmp,
		    sqlite3_errstr(rc));
		sqlite3_close(dst);
		errno = EIO;
		return -1;
	}
	if (sqlite3_close(dst) != SQLITE_OK)
		return fail_sqlite(dst, err, "close", tmp);
	return 0;
}

/* Open the written copy afresh and check it as a restore would find it:
 * every page and index consistent, the schema the source had, the tables
 * cohortd needs. Fills info. */
static int
verify_copy(const char *tmp, int64_t schema, struct store_backup_info *info,
    struct cerr *err)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	const unsigned char *msg;
	int64_t v;
	int ok = -1;

	if (sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		fail_sqlite(db, err, "open the copy", tmp);
		goto out;
	}
	if (sqlite3_prepare_v2(db, "PRAGMA integrity_check(1)", -1, &s,
	    NULL) != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW) {
		fail_sqlite(db, err, "check the copy", tmp);
		goto out;
	}
	msg = sqlite3_column_text(s, 0);
	if (msg == NULL || strcmp((const char *)msg, "ok") != 0) {
		cerr_set(err, ERR_INTERNAL, "the copy %s fails its integrity "
		    "check: %s", tmp, msg != NULL ? (const char *)msg : "?");
		errno = EIO;
		goto out;
	}
	if (query_int(db, "PRAGMA user_version", &v) == -1) {
		fail_sqlite(db, err, "read the schema version of", tmp);
		goto out;
	}
	if (schema >= 0 && v != schema) {
		cerr_set(err, ERR_INTERNAL, "the copy %s has schema version "
		    "%lld, the database %lld", tmp, (long long)v,
		    (long long)schema);
		errno = EIO;
		goto out;
	}
	info->schema = v;
	if (query_int(db, "SELECT count(*) FROM jobs", &info->jobs) == -1 ||
	    query_int(db, "SELECT count(*) FROM nodes", &info->nodes) == -1 ||
	    query_int(db, "SELECT count(*) FROM events", &info->events) ==
	    -1 || query_int(db, "SELECT max("
	    "(SELECT value FROM counters WHERE name = 'max_job_id'), "
	    "(SELECT coalesce(max(id), 0) FROM jobs))", &v) == -1) {
		fail_sqlite(db, err, "count the rows of", tmp);
		goto out;
	}
	info->max_job_id = v > 0 ? (uint64_t)v : 0;
	ok = 0;
out:
	sqlite3_finalize(s);
	sqlite3_close(db);
	return ok;
}

/* Give tmp the name file: rename(2) with force, else link(2), which
 * refuses a file that appeared since the first check. A file system
 * without hard links falls back to a check and a rename. */
static int
publish(const char *tmp, const char *file, unsigned flags, struct cerr *err)
{
	struct stat sb;

	if (flags & STORE_BACKUP_FORCE) {
		if (rename(tmp, file) == -1)
			return fail_errno(err, "rename to", file);
		return 0;
	}
	if (link(tmp, file) == 0) {
		unlink(tmp);
		return 0;
	}
	if (errno == EEXIST) {
		cerr_set(err, ERR_CONFLICT, "%s was created meanwhile; give "
		    "--force to replace it", file);
		errno = EEXIST;
		return -1;
	}
	if (errno != EPERM && errno != EOPNOTSUPP && errno != EMLINK &&
	    errno != ENOSYS)
		return fail_errno(err, "link to", file);
	if (lstat(file, &sb) == 0) {
		cerr_set(err, ERR_CONFLICT, "%s was created meanwhile; give "
		    "--force to replace it", file);
		errno = EEXIST;
		return -1;
	}
	if (rename(tmp, file) == -1)
		return fail_errno(err, "rename to", file);
	return 0;
}

/* The checks before anything is written: the database is there and is
 * not file, and file is free (or may be replaced). */
/* The directory entry a path names: its directory's device and inode,
 * and its last component. -1 when the directory cannot be read. */
struct dirent_id {
	dev_t dev;
	ino_t ino;
	char name[256];
};

static int
dirent_id(const char *path, struct dirent_id *id)
{
	char dir[4096], base[4096];
	struct stat st;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir) ||
	    snprintf(base, sizeof(base), "%s", path) >= (int)sizeof(base)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (stat(dirname(dir), &st) == -1)
		return -1;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	snprintf(id->name, sizeof(id->name), "%s", basename(base));
	return 0;
}

/* Does path name the database or one of the files SQLite keeps beside
 * it (-wal, -shm, -journal), by name in the same directory or as the
 * same file? Writing or removing any of them would corrupt or lose the
 * live database. */
static bool
names_db_file(const char *db_path, const char *path)
{
	static const char *const side[] = { "", "-wal", "-shm", "-journal" };
	struct dirent_id p, d;
	struct stat ps, ds;
	char name[4096];
	size_t i;

	if (dirent_id(path, &p) == -1)
		return false;
	for (i = 0; i < sizeof(side) / sizeof(side[0]); i++) {
		if (snprintf(name, sizeof(name), "%s%s", db_path, side[i]) >=
		    (int)sizeof(name) || dirent_id(name, &d) == -1)
			continue;
		if (p.dev == d.dev && p.ino == d.ino &&
		    strcmp(p.name, d.name) == 0)
			return true;
		if (stat(path, &ps) == 0 && stat(name, &ds) == 0 &&
		    ps.st_dev == ds.st_dev && ps.st_ino == ds.st_ino)
			return true;
	}
	return false;
}

static int
check_paths(const char *db_path, const char *file, const char *tmp,
    unsigned flags, struct cerr *err)
{
	char side[4096];
	struct stat db, f;
	size_t i;

	if (stat(db_path, &db) == -1) {
		int saved = errno;

		cerr_set(err, saved == ENOENT ? ERR_NOT_FOUND : ERR_INTERNAL,
		    "database %s: %s", db_path, strerror(saved));
		errno = saved;
		return -1;
	}
	/* The backup, its temporary copy and the files beside that copy
	 * are written or removed: none may be the database's. */
	if (names_db_file(db_path, file)) {
		errno = EINVAL;
		return cerr_set(err, ERR_INVALID, "%s is the database or a "
		    "file SQLite keeps beside it", file);
	}
	for (i = 0; i < sizeof(tmp_sidecars) / sizeof(tmp_sidecars[0]); i++)
		if (snprintf(side, sizeof(side), "%s%s", tmp,
		    tmp_sidecars[i]) >= (int)sizeof(side) ||
		    names_db_file(db_path, side)) {
			errno = EINVAL;
			return cerr_set(err, ERR_INVALID, "%s would be written "
			    "or removed while making %s, and it is the "
			    "database or a file beside it", side, file);
		}
	if (stat(file, &f) == 0) {
		if (S_ISDIR(f.st_mode)) {
			errno = EISDIR;
			return cerr_set(err, ERR_INVALID, "%s is a directory; "
			    "name the backup file", file);
		}
		if (!(flags & STORE_BACKUP_FORCE)) {
			errno = EEXIST;
			return cerr_set(err, ERR_CONFLICT, "%s exists; give "
			    "--force to replace it", file);
		}
	} else if (errno != ENOENT)
		return fail_errno(err, "backup file", file);
	if (!(flags & STORE_BACKUP_FORCE) && lstat(tmp, &f) == 0) {
		errno = EEXIST;
		return cerr_set(err, ERR_CONFLICT, "%s exists: another backup "
		    "is writing it, or one was interrupted; remove it, or "
		    "give --force", tmp);
	}
	return 0;
}

int
store_backup(const char *db_path, const char *file, unsigned flags,
    struct store_backup_info *info, struct cerr *err)
{
	struct store_backup_info local;
	struct stat sb;
	sqlite3 *src = NULL;
	char tmp[4096];
	int64_t schema;
	int fd, saved, created = 0;

	if (info == NULL)
		info = &local;
	memset(info, 0, sizeof(*info));
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", file) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return cerr_set(err, ERR_INVALID, "%s: name too long", file);
	}
	if (check_paths(db_path, file, tmp, flags, err) == -1)
		return -1;

	/* The snapshot: a read-only connection, so that nothing here can
	 * write to the live database, and a read transaction opened before
	 * the copy starts and held until it ends. */
	if (sqlite3_open_v2(db_path, &src, SQLITE_OPEN_READONLY |
	    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		fail_sqlite(src, err, "open database", db_path);
		goto fail;
	}
	sqlite3_busy_timeout(src, BACKUP_BUSY_MS);
	if (sqlite3_exec(src, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
	    query_int(src, "PRAGMA user_version", &schema) == -1) {
		fail_sqlite(src, err, "read database", db_path);
		goto fail;
	}
	if (check_schema(schema, db_path, err) == -1)
		goto fail;
	/* A cohortd database has its jobs table from the first migration;
	 * the read also pins the snapshot. */
	if (query_int(src, "SELECT count(*) FROM jobs", &info->jobs) == -1) {
		fail_sqlite(src, err, "read the jobs of", db_path);
		goto fail;
	}

	if ((fd = create_tmp(tmp, flags, err)) == -1)
		goto fail;
	created = 1;
	close(fd);
	if (copy_pages(src, tmp, err) == -1)
		goto fail;
	sqlite3_exec(src, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(src);
	src = NULL;

	if (fsync_path(tmp, O_RDONLY) == -1) {
		fail_errno(err, "fsync", tmp);
		goto fail;
	}
	if (verify_copy(tmp, schema, info, err) == -1)
		goto fail;
	if (publish(tmp, file, flags, err) == -1)
		goto fail;
	created = 0;
	if (fsync_dir_of(file) == -1)
		return fail_errno(err, "fsync the directory of", file);
	if (stat(file, &sb) == 0)
		info->bytes = (uint64_t)sb.st_size;
	return 0;

fail:
	saved = errno;
	if (src != NULL) {
		sqlite3_exec(src, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close(src);
	}
	if (created)
		remove_tmp(tmp);
	errno = saved;
	return -1;
}

int
store_image(struct store *st, unsigned char **img, size_t *len,
    struct cerr *err)
{
	sqlite3_int64 sz = 0;

	if ((*img = sqlite3_serialize(st->db, "main", &sz, 0)) == NULL)
		return fail_sqlite(st->db, err, "serialize database",
		    st->path);
	*len = (size_t)sz;
	return 0;
}

void
store_image_free(unsigned char *img)
{
	sqlite3_free(img);
}

int
store_backup_image(const unsigned char *img, size_t len, const char *file,
    unsigned flags, struct store_backup_info *info, struct cerr *err)
{
	struct store_backup_info local;
	struct stat sb;
	char tmp[4096];
	size_t off = 0;
	ssize_t w;
	int fd, saved;

	if (info == NULL)
		info = &local;
	memset(info, 0, sizeof(*info));
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", file) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return cerr_set(err, ERR_INVALID, "%s: name too long", file);
	}
	if (!(flags & STORE_BACKUP_FORCE) && lstat(file, &sb) == 0) {
		errno = EEXIST;
		return cerr_set(err, ERR_CONFLICT, "%s exists; give --force "
		    "to replace it", file);
	}
	if ((fd = create_tmp(tmp, flags, err)) == -1)
		return -1;
	while (off < len) {
		if ((w = write(fd, img + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			fail_errno(err, "write", tmp);
			goto fail;
		}
		off += (size_t)w;
	}
	if (fsync(fd) == -1 || close(fd) == -1) {
		fd = -1;
		fail_errno(err, "fsync", tmp);
		goto fail;
	}
	fd = -1;
	if (verify_copy(tmp, -1, info, err) == -1 ||
	    check_schema(info->schema, file, err) == -1 ||
	    publish(tmp, file, flags, err) == -1)
		goto fail;
	if (fsync_dir_of(file) == -1)
		return fail_errno(err, "fsync the directory of", file);
	if (stat(file, &sb) == 0)
		info->bytes = (uint64_t)sb.st_size;
	return 0;

fail:
	saved = errno;
	if (fd >= 0)
		close(fd);
	remove_tmp(tmp);
	errno = saved;
	return -1;
}
