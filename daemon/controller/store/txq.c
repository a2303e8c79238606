/* Group commit on the event loop. The first write of a round opens a
 * transaction and activates the commit event; libevent runs it after the
 * callbacks already active in this round, so every request that arrived
 * while the previous commit was made durable shares this commit.
 *
 * With an event loop and a database that has a WAL of its own, the
 * commit does not wait for the disk: COMMIT returns with the WAL written
 * but not synced (store_commit_nosync), and one sync thread runs
 * fdatasync on the WAL while the loop reads, checks and inserts the next
 * batch. Each commit has a sequence number; its callbacks wait in a list
 * until a sync that started after that commit has returned. At most one
 * sync is in flight: commits made meanwhile are all covered by the next
 * one. The thread only syncs; SQLite and libevent stay on the loop.
 *
 * A sync that fails is fatal. After a failed fsync Linux may drop the
 * dirty pages and report the next fsync as a success (the problem
 * PostgreSQL met in 2018), so retrying could acknowledge a commit that
 * is not on disk; exiting leaves recovery to SQLite's own reading of the
 * WAL at the next start, which trusts only what reached the disk. */
#include "config.h"

#include <sys/queue.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/log.h"
#include "daemon/controller/store/store.h"
#include "daemon/controller/store/txq.h"

struct txq_item {
	txq_cb cb;
	void *arg;
	uint64_t seq;		/* the commit it waits for */
	bool ok;		/* that commit succeeded */
	STAILQ_ENTRY(txq_item) entry;
};

STAILQ_HEAD(txq_list, txq_item);

/* The sync thread and what it shares with the loop. */
struct txq_sync {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int pipe[2];		/* the thread tells the loop a sync is done */
	struct event *done_ev;
	/* Under mu. */
	bool request;		/* a sync is asked for */
	bool done;		/* it returned; error says how */
	bool stop;
	int fd;			/* the WAL, at the request */
	int error;		/* errno of fdatasync, or 0 */
	void (*hook)(void *);
	void *hook_arg;
	/* The loop's own. */
	bool busy;		/* between the request and its done */
	uint64_t busy_seq;	/* the last commit the sync in flight covers */
};

struct txq {
	struct store *st;
	struct event *ev;
	struct txq_list items;	/* joined the open transaction */
	struct txq_list waiting; /* committed, waiting for a sync, by seq */
	bool open;
	unsigned long commits;
	unsigned long syncs;
	uint64_t committed;	/* seq of the last commit */
	uint64_t synced;	/* every commit up to it is on disk */
	void (*on_abort)(void *);
	void *abort_arg;
	struct txq_sync *sync;	/* NULL: each commit syncs before it returns */
};

static void *
sync_main(void *arg)
{
	struct txq_sync *s = arg;
	void (*hook)(void *);
	void *hook_arg;
	int fd, error;
	ssize_t n;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (!s->request && !s->stop)
			pthread_cond_wait(&s->cv, &s->mu);
		if (!s->request)
			break;
		s->request = false;
		fd = s->fd;
		hook = s->hook;
		hook_arg = s->hook_arg;
		pthread_mutex_unlock(&s->mu);
		if (hook != NULL)
			hook(hook_arg);
		error = fdatasync(fd) == -1 ? errno : 0;
		pthread_mutex_lock(&s->mu);
		s->error = error;
		s->done = true;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		do
			n = write(s->pipe[1], "", 1);
		while (n == -1 && errno == EINTR);
		pthread_mutex_lock(&s->mu);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* Fatal, see the top of the file. */
static void
sync_failed(int error)
{
	errno = error;
	fatal("fdatasync of the WAL failed; exiting before anything that "
	    "waits for it is acknowledged");
}

/* Callbacks of every commit the last sync covered, in commit order. */
static void
run_synced(struct txq *q)
{
	struct txq_list done;
	struct txq_item *it;

	/* Detach first: a callback may defer or open the next batch. */
	STAILQ_INIT(&done);
	while ((it = STAILQ_FIRST(&q->waiting)) != NULL &&
	    it->seq <= q->synced) {
		STAILQ_REMOVE_HEAD(&q->waiting, entry);
		STAILQ_INSERT_TAIL(&done, it, entry);
	}
	while ((it = STAILQ_FIRST(&done)) != NULL) {
		STAILQ_REMOVE_HEAD(&done, entry);
		it->cb(it->arg, it->ok);
		free(it);
	}
}

/* Ask the thread to sync everything committed so far. */
static void
sync_start(struct txq *q)
{
	struct txq_sync *s = q->sync;
	int fd;

	/* Asked each time: SQLite owns the WAL and could reopen it. */
	if ((fd = store_wal_fd(q->st)) == -1) {
		/* No WAL of its own any more: its commits were durable. */
		q->synced = q->committed;
		return;
	}
	pthread_mutex_lock(&s->mu);
	s->fd = fd;
	s->request = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	s->busy = true;
	s->busy_seq = q->committed;
}

/* The sync in flight returned (the caller holds mu and saw done). */
static void
sync_finish(struct txq *q)
{
	struct txq_sync *s = q->sync;

	s->done = false;
	if (s->error != 0)
		sync_failed(s->error);
	s->busy = false;
	q->synced = s->busy_seq;
	q->syncs++;
}

static void
sync_done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct txq *q = arg;
	struct txq_sync *s = q->sync;
	char buf[64];
	bool done;

	while (read(fd, buf, sizeof(buf)) > 0)
		;
	pthread_mutex_lock(&s->mu);
	/* txq_flush may have taken this sync's result already. */
	if ((done = s->done))
		sync_finish(q);
	pthread_mutex_unlock(&s->mu);
	if (!done)
		return;
	/* The next sync starts before the replies go out. */
	if (q->committed > q->synced)
		sync_start(q);
	run_synced(q);
}

/* The thread blocks every signal: they are the loop's (libevent's
 * signal events), and a handler must not run on the thread that syncs. */
static int
sync_spawn(struct txq_sync *s)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&s->thread, NULL, sync_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

static struct txq_sync *
sync_create(struct txq *q, struct event_base *base)
{
	struct txq_sync *s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->pipe[0] = s->pipe[1] = -1;
	if (pthread_mutex_init(&s->mu, NULL) != 0) {
		free(s);
		return NULL;
	}
	if (pthread_cond_init(&s->cv, NULL) != 0) {
		pthread_mutex_destroy(&s->mu);
		free(s);
		return NULL;
	}
	if (pipe2(s->pipe, O_CLOEXEC | O_NONBLOCK) == -1 ||
	    (s->done_ev = event_new(base, s->pipe[0], EV_READ | EV_PERSIST,
	    sync_done_cb, q)) == NULL || event_add(s->done_ev, NULL) == -1 ||
	    sync_spawn(s) != 0) {
		if (s->done_ev != NULL)
			event_free(s->done_ev);
		s->done_ev = NULL;
		if (s->pipe[0] != -1)
			close(s->pipe[0]);
		if (s->pipe[1] != -1)
			close(s->pipe[1]);
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->mu);
		free(s);
		return NULL;
	}
	return s;
}

static void
sync_stop(struct txq_sync *s)
{
	if (s == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->thread, NULL);
	event_free(s->done_ev);
	close(s->pipe[0]);
	close(s->pipe[1]);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

static void txq_round(struct txq *q);

static void
txq_commit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct txq *q = arg;

	if (q->sync == NULL)
		txq_flush(q);
	else
		txq_round(q);
}

struct txq *
txq_create(struct event_base *base, struct store *st,
    void (*on_abort)(void *), void *arg)
{
	struct txq *q;

	if ((q = calloc(1, sizeof(*q))) == NULL)
		return NULL;
	q->st = st;
	q->on_abort = on_abort;
	q->abort_arg = arg;
	STAILQ_INIT(&q->items);
	STAILQ_INIT(&q->waiting);
	if (base == NULL)
		return q;
	if ((q->ev = event_new(base, -1, 0, txq_commit_cb, q)) == NULL)
		goto fail;
	if (store_wal_fd(st) != -1 && (q->sync = sync_create(q, base)) ==
	    NULL)
		goto fail;
	return q;

fail:
	if (q->ev != NULL)
		event_free(q->ev);
	free(q);
	return NULL;
}

void
txq_destroy(struct txq *q)
{
	if (q == NULL)
		return;
	txq_flush(q);
	sync_stop(q->sync);
	if (q->ev != NULL)
		event_free(q->ev);
	free(q);
}

int
txq_join(struct txq *q, struct cerr *err)
{
	if (q->open)
		return 0;
	if (store_begin(q->st, err) == -1)
		return -1;
	q->open = true;
	if (q->ev != NULL)
		event_active(q->ev, EV_TIMEOUT, 0);
	return 0;
}

int
txq_defer(struct txq *q, txq_cb cb, void *arg)
{
	struct txq_item *it;

	/* Nothing is waiting for a commit or a sync: what the caller wants
	 * to follow them is already durable. */
	if (!q->open && q->committed == q->synced) {
		cb(arg, true);
		return 0;
	}
	if ((it = malloc(sizeof(*it))) == NULL)
		return -1;
	it->cb = cb;
	it->arg = arg;
	it->ok = true;
	if (q->open)
		STAILQ_INSERT_TAIL(&q->items, it, entry);
	else {
		/* No transaction, but the last commit may not be on disk
		 * yet: what the caller shows may depend on it. */
		it->seq = q->committed;
		STAILQ_INSERT_TAIL(&q->waiting, it, entry);
	}
	return 0;
}

/* COMMIT the open transaction, and move its callbacks to the waiting
 * list under the commit's number. */
static void
commit_open(struct txq *q, bool sync)
{
	struct txq_item *it;
	struct cerr err;
	bool ok = true, owed;
	int rc;

	q->open = false;
	q->commits++;
	q->committed++;
	rc = sync ? store_commit(q->st, &err) :
	    store_commit_nosync(q->st, &owed, &err);
	if (rc == -1) {
		log_warnx("commit failed: %s", err.text);
		ok = false;
		if (q->on_abort != NULL)
			q->on_abort(q->abort_arg);
	}
	STAILQ_FOREACH(it, &q->items, entry) {
		it->seq = q->committed;
		it->ok = ok;
	}
	STAILQ_CONCAT(&q->waiting, &q->items);
}

/* The commit event with a sync thread: commit, and sync unless a sync
 * is in flight (its completion starts the next one). */
static void
txq_round(struct txq *q)
{
	if (!q->open)
		return;
	commit_open(q, false);
	if (q->sync->busy)
		return;
	sync_start(q);
	/* No WAL to sync: the commit was durable when it returned. */
	if (!q->sync->busy)
		run_synced(q);
}

/* Wait for the sync in flight, if any, and take its result. */
static void
sync_wait(struct txq *q)
{
	struct txq_sync *s = q->sync;

	if (!s->busy)
		return;
	pthread_mutex_lock(&s->mu);
	while (!s->done)
		pthread_cond_wait(&s->cv, &s->mu);
	sync_finish(q);
	pthread_mutex_unlock(&s->mu);
}

void
txq_flush(struct txq *q)
{
	int fd;

	if (q->open)
		commit_open(q, q->sync == NULL);
	if (q->sync == NULL)
		q->synced = q->committed;
	else {
		sync_wait(q);
		/* What was committed after that sync started, synced here:
		 * shutdown and tests want every callback run on return. */
		if (q->committed > q->synced) {
			if ((fd = store_wal_fd(q->st)) != -1 &&
			    fdatasync(fd) == -1)
				sync_failed(errno);
			q->synced = q->committed;
			q->syncs++;
		}
	}
	run_synced(q);
}

void
txq_set_sync_hook(struct txq *q, void (*hook)(void *), void *arg)
{
	if (q->sync == NULL)
		return;
	pthread_mutex_lock(&q->sync->mu);
	q->sync->hook = hook;
	q->sync->hook_arg = arg;
	pthread_mutex_unlock(&q->sync->mu);
}

bool
txq_async(const struct txq *q)
{
	return q->sync != NULL;
}

unsigned long
txq_commits(const struct txq *q)
{
	return q->commits;
}

unsigned long
txq_syncs(const struct txq *q)
{
	return q->syncs;
}
