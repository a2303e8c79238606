/* A VFS shim over the default unix VFS that lets a commit leave the sync
 * of the WAL to someone else (txq's sync thread). Only the WAL file is
 * wrapped; the database file and everything else are the real VFS's
 * files. While deferral is on (store_commit_nosync, around its COMMIT
 * alone) a sync of the WAL is recorded as owed instead of done, with one
 * exception: the sync that follows a rewrite of the WAL header (at the
 * start of the file, when the WAL restarts after a checkpoint). SQLite
 * needs that one on disk before any frame after it, or an out-of-order
 * write after a restart can corrupt what the database already held; it
 * stays real. Every other sync (checkpoints, migrations, any write
 * outside the group commit) goes through as SQLite asked. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/controller/store/store_int.h"

#define WAL_VFS_NAME "cohort-wal"

struct wal_file {
	sqlite3_file base;
	int fd;			/* our own descriptor of the -wal file */
	bool defer;		/* syncs are owed, not done */
	bool owed;		/* a sync was skipped since the last take */
	bool header;		/* the header was rewritten, not yet synced */
	sqlite3_file *real;	/* follows this struct in the same block */
};

static sqlite3_vfs wal_vfs;
static sqlite3_vfs *real_vfs;

#define REAL(f) (((struct wal_file *)(f))->real)

static int
wal_close(sqlite3_file *f)
{
	struct wal_file *w = (struct wal_file *)f;
	int rc;

	rc = w->real->pMethods != NULL ? w->real->pMethods->xClose(w->real) :
	    SQLITE_OK;
	if (w->fd != -1)
		close(w->fd);
	w->fd = -1;
	return rc;
}

static int
wal_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
	return REAL(f)->pMethods->xRead(REAL(f), buf, n, off);
}

static int
wal_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
	/* The WAL header is the first 32 bytes; frames follow it. */
	if (off == 0)
		((struct wal_file *)f)->header = true;
	return REAL(f)->pMethods->xWrite(REAL(f), buf, n, off);
}

static int
wal_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	return REAL(f)->pMethods->xTruncate(REAL(f), size);
}

static int
wal_sync(sqlite3_file *f, int flags)
{
	struct wal_file *w = (struct wal_file *)f;

	if (w->defer && !w->header) {
		w->owed = true;
		return SQLITE_OK;
	}
	w->header = false;
	return w->real->pMethods->xSync(w->real, flags);
}

static int
wal_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return REAL(f)->pMethods->xFileSize(REAL(f), size);
}

static int
wal_lock(sqlite3_file *f, int lock)
{
	return REAL(f)->pMethods->xLock(REAL(f), lock);
}

static int
wal_unlock(sqlite3_file *f, int lock)
{
	return REAL(f)->pMethods->xUnlock(REAL(f), lock);
}

static int
wal_check_reserved(sqlite3_file *f, int *out)
{
	return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}

static int
wal_file_control(sqlite3_file *f, int op, void *arg)
{
	return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}

static int
wal_sector_size(sqlite3_file *f)
{
	return REAL(f)->pMethods->xSectorSize(REAL(f));
}

static int
wal_device(sqlite3_file *f)
{
	return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}

static int
wal_shm_map(sqlite3_file *f, int pg, int sz, int extend, void volatile **p)
{
	return REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, extend, p);
}

static int
wal_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
	return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}

static void
wal_shm_barrier(sqlite3_file *f)
{
	REAL(f)->pMethods->xShmBarrier(REAL(f));
}

static int
wal_shm_unmap(sqlite3_file *f, int del)
{
	return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}

static int
wal_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **p)
{
	return REAL(f)->pMethods->xFetch(REAL(f), off, n, p);
}

static int
wal_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	return REAL(f)->pMethods->xUnfetch(REAL(f), off, p);
}

static const sqlite3_io_methods wal_methods = {
	3, wal_close, wal_read, wal_write, wal_truncate, wal_sync,
	wal_file_size, wal_lock, wal_unlock, wal_check_reserved,
	wal_file_control, wal_sector_size, wal_device, wal_shm_map,
	wal_shm_lock, wal_shm_barrier, wal_shm_unmap, wal_fetch, wal_unfetch
};

static int
wal_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags,
    int *out)
{
	struct wal_file *w = (struct wal_file *)f;
	int rc;

	/* Anything but a WAL is the real VFS's file, in our block. */
	if (!(flags & SQLITE_OPEN_WAL))
		return real_vfs->xOpen(real_vfs, name, f, flags, out);
	memset(w, 0, sizeof(*w));
	w->fd = -1;
	w->real = (sqlite3_file *)(w + 1);
	rc = real_vfs->xOpen(real_vfs, name, w->real, flags, out);
	if (rc != SQLITE_OK)
		return rc;
	/* The sync thread's own descriptor: fdatasync acts on the file,
	 * whichever descriptor names it, and SQLite's stays SQLite's. */
	if ((w->fd = open(name, O_RDWR | O_CLOEXEC)) == -1) {
		if (w->real->pMethods != NULL)
			w->real->pMethods->xClose(w->real);
		return SQLITE_CANTOPEN;
	}
	/* Ours are version 3, as the unix VFS's files are: every method
	 * SQLite may call passes through. */
	w->base.pMethods = &wal_methods;
	return SQLITE_OK;
}

static void
wal_vfs_init(void)
{
	real_vfs = sqlite3_vfs_find(NULL);
	wal_vfs = *real_vfs;
	wal_vfs.zName = WAL_VFS_NAME;
	wal_vfs.pNext = NULL;
	wal_vfs.szOsFile = (int)sizeof(struct wal_file) + real_vfs->szOsFile;
	wal_vfs.xOpen = wal_open;
	sqlite3_vfs_register(&wal_vfs, 0);
}

const char *
store_wal_vfs(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, wal_vfs_init);
	return WAL_VFS_NAME;
}

/* The WAL of st, if it is one of ours (a file database not replicated,
 * in WAL mode and opened). */
static struct wal_file *
wal_of(struct store *st)
{
	sqlite3_file *f = NULL;

	if (st->vfs != NULL || sqlite3_file_control(st->db, "main",
	    SQLITE_FCNTL_JOURNAL_POINTER, &f) != SQLITE_OK || f == NULL ||
	    f->pMethods != &wal_methods)
		return NULL;
	return (struct wal_file *)f;
}

int
store_wal_fd(struct store *st)
{
	struct wal_file *w = wal_of(st);

	return w != NULL ? w->fd : -1;
}

/* SQLite's automatic checkpoint runs inside the COMMIT that crosses
 * its threshold, where deferral would skip the checkpoint's sync of the
 * WAL before pages are copied into the database. This hook replaces it:
 * outside deferral it checkpoints as SQLite's would; inside, it leaves
 * the checkpoint to store_commit_nosync, after deferral is off. */
static int
wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
	struct store *st = arg;
	struct wal_file *w = wal_of(st);

	if (frames < STORE_WAL_CHECKPOINT_FRAMES)
		return SQLITE_OK;
	if (w != NULL && w->defer) {
		st->checkpoint_due = true;
		return SQLITE_OK;
	}
	st->checkpoint_due = false;
	sqlite3_wal_checkpoint(db, name);
	return SQLITE_OK;
}

void
store_wal_attach(struct store *st)
{
	if (st->vfs == NULL)
		sqlite3_wal_hook(st->db, wal_hook, st);
}

int
store_commit_nosync(struct store *st, bool *owed, struct cerr *err)
{
	struct wal_file *w = wal_of(st);
	int rc;

	if (w == NULL) {
		*owed = false;
		return store_commit(st, err);
	}
	w->defer = true;
	rc = store_commit(st, err);
	w->defer = false;
	*owed = w->owed;
	w->owed = false;
	if (st->checkpoint_due) {
		/* With syncs on: the WAL before the copy, the database
		 * before the WAL may restart. */
		st->checkpoint_due = false;
		sqlite3_wal_checkpoint(st->db, "main");
	}
	return rc;
}
