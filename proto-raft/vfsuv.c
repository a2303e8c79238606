/* Option (b) for real: one process per replica, libraft on raft_uv (TCP on
 * loopback, the log on disk with fsync), SQLite on dqlite's VFS, and the
 * whole of it driven from a libevent loop in ONE thread: libuv's backend
 * fd (an epoll fd) is watched by libevent, and uv_run(UV_RUN_NOWAIT) is
 * called when it is readable or when libuv's next timer is due. Raft
 * callbacks, the FSM's dqlite_vfs_apply and SQLite all run on the libevent
 * thread, as store.c and txq.c would; libuv's own thread pool does the
 * disk writes.
 *
 *   vfsuv ID DIR ROWS_PER_TXN   (env: PRE_VOTE=1, CKPT=N, SNAP=N,
 *                                 RELAY=1)
 *
 * Members: ids 1-3 on 127.0.0.1:29101-29103, all bootstrapped with the
 * same configuration. The leader commits ROWS_PER_TXN-row transactions back
 * to back, one Raft entry in flight at a time, appends each acknowledged
 * seq to DIR/acks, and prints a rate every second and the wall-clock time
 * of its first acknowledgement after it became leader. SIGTERM: print the
 * row count and check the acks files of all members (the "acks" files in
 * DIR's sibling directories n1, n2, n3). */
#include <sys/stat.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <uv.h>
#include <dqlite.h>
#include <raft.h>
#include <raft/uv.h>
#include <sqlite3.h>

#include "proto-raft/relay.h"

#define PAGE 4096
#define DB "cohort.db"

static struct event_base *base;
static struct event *uv_ev, *uv_timer, *work_ev, *tick_ev, *term_ev;
static uv_loop_t loop;
static struct raft_uv_transport transport;
static struct raft_io io;
static struct raft_fsm fsm;
static struct raft raft;
static sqlite3_vfs vfs;
static sqlite3 *db;
static const char *dir;
static unsigned id;
static int rows_per_txn;
static int in_flight, in_flight_rows, barrier_wait, acks_fd = -1;
static unsigned long acked, acked_sec, seq_next;
static int was_leader, stopped;
static unsigned long snapshots;
static struct event *stop_ev;
static double leader_since;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double
wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
exec(const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "%u: %s: %s\n", id, sql, err);
		exit(1);
	}
}

static void
open_db(void)
{
	if (sqlite3_open_v2(DB, &db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE, "dq") != SQLITE_OK)
		exit(1);
	exec("PRAGMA page_size=4096");
	exec("PRAGMA synchronous=OFF");
	exec("PRAGMA journal_mode=WAL");
	exec("PRAGMA wal_autocheckpoint=0");
}

static int64_t
query_int(const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* ---- libuv inside libevent ---- */
static void
uv_pump(void)
{
	struct timeval tv;
	int t;

	uv_run(&loop, UV_RUN_NOWAIT);
	t = uv_backend_timeout(&loop);
	if (t >= 0) {
		tv.tv_sec = t / 1000;
		tv.tv_usec = (t % 1000) * 1000;
		evtimer_add(uv_timer, &tv);
	}
}

static void
uv_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd; (void)what; (void)arg;
	uv_pump();
}

/* ---- the FSM ---- */
static int
fsm_apply(struct raft_fsm *f, const struct raft_buffer *buf, void **result)
{
	const uint64_t *w = buf->base;
	uint64_t n = w[0];
	static unsigned long pgno[65536];

	(void)f;
	for (uint64_t k = 0; k < n; k++)
		pgno[k] = (unsigned long)w[1 + k];
	if (dqlite_vfs_apply(&vfs, DB, (unsigned)n, pgno,
	    (void *)(w + 1 + n)) != 0) {
		fprintf(stderr, "%u: dqlite_vfs_apply failed\n", id);
		return RAFT_IOERR;
	}
	*result = NULL;
	/* CKPT=N: checkpoint this replica's WAL every N entries, as dqlite
	 * does past its threshold (1,000 frames); each replica does its
	 * own. */
	static unsigned long n_applied;
	static long every = -1;
	if (every < 0)
		every = getenv("CKPT") != NULL ? atol(getenv("CKPT")) : 0;
	if (every > 0 && ++n_applied % (unsigned long)every == 0) {
		int log = 0, done = 0;
		if (sqlite3_wal_checkpoint_v2(db, NULL,
		    SQLITE_CHECKPOINT_TRUNCATE, &log, &done) != SQLITE_OK)
			fprintf(stderr, "%u: checkpoint: %s\n", id,
			    sqlite3_errmsg(db));
	}
	return 0;
}

static int
fsm_snapshot(struct raft_fsm *f, struct raft_buffer *bufs[], unsigned *n)
{
	void *data;
	size_t len;

	(void)f;
	/* As dqlite's own FSM: no snapshot while a write transaction's
	 * frames are polled but not yet applied. */
	if (in_flight && getenv("SNAP_ANYTIME") == NULL)
		return RAFT_BUSY;
	if (dqlite_vfs_snapshot(&vfs, DB, &data, &len) != 0)
		return RAFT_IOERR;
	snapshots++;
	*bufs = raft_malloc(sizeof(**bufs));
	(*bufs)[0].base = data;	/* malloc'ed by dqlite 1.11 */
	(*bufs)[0].len = len;
	*n = 1;
	return 0;
}

static int
fsm_snapshot_finalize(struct raft_fsm *f, struct raft_buffer *bufs[],
    unsigned *n)
{
	(void)f;
	for (unsigned k = 0; k < *n; k++)
		raft_free((*bufs)[k].base);
	raft_free(*bufs);
	*n = 0;
	return 0;
}

static int
fsm_restore(struct raft_fsm *f, struct raft_buffer *buf)
{
	int rc;

	(void)f;
	sqlite3_close(db);
	rc = dqlite_vfs_restore(&vfs, DB, buf->base, buf->len);
	raft_free(buf->base);
	open_db();
	return rc == 0 ? 0 : RAFT_IOERR;
}

/* ---- the leader's writes: one entry in flight, as txq would ---- */
static void
apply_cb(struct raft_apply *req, int status, void *result)
{
	(void)result;
	free(req);
	in_flight = 0;
	if (status != 0) {
		/* Leadership lost before commit: the outcome is unknown to
		 * the client (it may still commit under the next leader). */
		dqlite_vfs_abort(&vfs, DB);
		fprintf(stderr, "%u: apply failed: %s\n", id,
		    raft_strerror(status));
		return;
	}
	for (int j = 0; j < in_flight_rows; j++) {
		char line[32];
		int l = snprintf(line, sizeof(line), "%lu\n",
		    seq_next - (unsigned long)rows_per_txn + (unsigned long)j);
		if (write(acks_fd, line, (size_t)l) != l)
			exit(1);
	}
	if (in_flight_rows == 0) {
		event_active(work_ev, EV_TIMEOUT, 0);
		return;
	}
	if (acked == 0)
		printf("%u: FIRST_ACK %.3f (%.3f s after becoming leader)\n",
		    id, wall_s(), now_s() - leader_since);
	acked += (unsigned long)rows_per_txn;
	acked_sec++;
	event_active(work_ev, EV_TIMEOUT, 0);
}

static void
barrier_cb(struct raft_barrier *req, int status)
{
	free(req);
	barrier_wait = 0;
	if (status == 0)
		event_active(work_ev, EV_TIMEOUT, 0);
}

static void
work_cb(evutil_socket_t fd, short what, void *arg)
{
	dqlite_vfs_frame *frames;
	unsigned n;
	char sql[256];

	(void)fd; (void)what; (void)arg;
	if (raft_state(&raft) != RAFT_LEADER || in_flight || barrier_wait ||
	    stopped)
		return;
	if (raft_last_applied(&raft) < raft_last_index(&raft)) {
		struct raft_barrier *b = malloc(sizeof(*b));
		barrier_wait = 1;
		if (raft_barrier(&raft, b, barrier_cb) != 0) {
			free(b);
			barrier_wait = 0;
		}
		uv_pump();
		return;
	}
	/* One transaction: two autocommit statements would be two commits,
	 * and the second finds the WAL write lock still held by the first
	 * (polled, not applied) and fails with SQLITE_BUSY (seen). */
	exec("BEGIN; CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, "
	    "node INTEGER, seq INTEGER, pad TEXT); "
	    "CREATE INDEX IF NOT EXISTS t_seq ON t (seq); COMMIT");
	if (dqlite_vfs_poll(&vfs, DB, &frames, &n) == 0 && n > 0) {
		/* The first leader's DDL: replicate it like any commit (no
		 * rows to acknowledge). */
		in_flight_rows = 0;
		goto replicate;
	}
	in_flight_rows = rows_per_txn;
	exec("BEGIN IMMEDIATE");
	for (int j = 0; j < rows_per_txn; j++) {
		snprintf(sql, sizeof(sql), "INSERT INTO t (node, seq, pad) "
		    "VALUES (%u, %lu, 'job-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx')",
		    id, seq_next++);
		exec(sql);
	}
	exec("COMMIT");
	if (dqlite_vfs_poll(&vfs, DB, &frames, &n) != 0 || n == 0) {
		fprintf(stderr, "%u: nothing polled\n", id);
		exit(1);
	}
replicate:;
	struct raft_buffer buf;
	buf.len = 8 * (1 + n) + (size_t)n * PAGE;
	buf.base = raft_malloc(buf.len);
	uint64_t *w = buf.base;
	w[0] = n;
	for (unsigned j = 0; j < n; j++) {
		w[1 + j] = frames[j].page_number;
		memcpy((char *)(w + 1 + n) + (size_t)j * PAGE, frames[j].data,
		    PAGE);
		sqlite3_free(frames[j].data);
	}
	sqlite3_free(frames);
	struct raft_apply *req = malloc(sizeof(*req));
	if (raft_apply(&raft, req, &buf, 1, apply_cb) != 0) {
		raft_free(buf.base);
		free(req);
		dqlite_vfs_abort(&vfs, DB);
		return;
	}
	in_flight = 1;
	uv_pump();
}

/* Every 10 ms: notice leadership (cohortd would use raft's state-change
 * callback where the libraft version has one); every second: the rate. */
static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	static unsigned ticks;

	(void)fd; (void)what; (void)arg;
	int leader = raft_state(&raft) == RAFT_LEADER;
	if (leader && !was_leader) {
		leader_since = now_s();
		printf("%u: LEADER at %.3f\n", id, wall_s());
		/* Unique across members and leaderships (restarts too). */
		seq_next = (unsigned long)(wall_s() * 1000) * 100 + id;
	}
	if (++ticks % 100 == 0) {
		if (leader && acked_sec > 0)
			printf("%u: %lu commits/s, %lu rows/s\n", id,
			    acked_sec, acked_sec * (unsigned long)rows_per_txn);
		acked_sec = 0;
	}
	was_leader = leader;
	fflush(stdout);
	event_active(work_ev, EV_TIMEOUT, 0);
}

/* SIGUSR1: stop writing, so followers learn the last commit index. */
static void
stop_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd; (void)what; (void)arg;
	stopped = 1;
}

/* Every acknowledged seq of every member present exactly once. */
static void
term_cb(evutil_socket_t fd, short what, void *arg)
{
	glob_t g;
	char pat[512], q[128];
	long acks = 0, missing = 0;

	(void)fd; (void)what; (void)arg;
	snprintf(pat, sizeof(pat), "%s/../n*/acks", dir);
	if (glob(pat, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			FILE *f = fopen(g.gl_pathv[i], "r");
			unsigned long s;
			while (f != NULL && fscanf(f, "%lu", &s) == 1) {
				acks++;
				snprintf(q, sizeof(q),
				    "SELECT count(*) FROM t WHERE seq=%lu", s);
				if (query_int(q) != 1) {
					missing++;
					printf("%u: seq %lu of %s: %lld rows\n",
					    id, s, g.gl_pathv[i],
					    (long long)query_int(q));
				}
			}
			if (f != NULL)
				fclose(f);
		}
		globfree(&g);
	}
	if (getenv("RELAY") != NULL)
		printf("%u: relayed connections %lu (%s)\n", id,
		    relay_connections(&transport), relay_mode(&transport));
	printf("%u: FINAL rows %lld, acknowledged %ld, acknowledged not "
	    "present exactly once %ld, applied index %llu, %lu snapshots\n", id,
	    (long long)query_int("SELECT count(*) FROM t"), acks, missing,
	    (unsigned long long)raft_last_applied(&raft), snapshots);
	fflush(stdout);
	exit(0);
}

int
main(int argc, char **argv)
{
	char addr[32], path[512];
	struct raft_configuration conf;
	int rc;

	if (argc < 4)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	id = (unsigned)atoi(argv[1]);
	dir = argv[2];
	rows_per_txn = atoi(argv[3]);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", 29100 + id);
	snprintf(path, sizeof(path), "%s/acks", dir);
	acks_fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (dqlite_vfs_init(&vfs, "dq") != 0 ||
	    sqlite3_vfs_register(&vfs, 0) != SQLITE_OK)
		return 1;
	open_db();
	base = event_base_new();
	if (uv_loop_init(&loop) != 0)
		return 1;
	fsm.version = 2;
	fsm.apply = fsm_apply;
	fsm.snapshot = fsm_snapshot;
	fsm.snapshot_finalize = fsm_snapshot_finalize;
	fsm.restore = fsm_restore;
	/* RELAY=1: raft's streams carried by libevent (relay.c). */
	if ((rc = getenv("RELAY") != NULL ?
	    relay_transport_init(&transport, &loop, base) :
	    raft_uv_tcp_init(&transport, &loop)) != 0 ||
	    (rc = raft_uv_init(&io, &loop, dir, &transport)) != 0 ||
	    (rc = raft_init(&raft, &io, &fsm, id, addr)) != 0) {
		fprintf(stderr, "init: %d\n", rc);
		return 1;
	}
	/* dqlite's figures for a 50 ms latency (dqnode 50). */
	raft_set_heartbeat_timeout(&raft, 75);
	raft_set_election_timeout(&raft, 750);
	if (getenv("PRE_VOTE") != NULL)
		raft_set_pre_vote(&raft, true);
	raft_set_snapshot_threshold(&raft, getenv("SNAP") != NULL ?
	    (unsigned)atoi(getenv("SNAP")) : 1024);
	raft_set_snapshot_trailing(&raft, 256);
	raft_configuration_init(&conf);
	for (unsigned i = 1; i <= 3; i++) {
		char a[32];
		snprintf(a, sizeof(a), "127.0.0.1:%u", 29100 + i);
		raft_configuration_add(&conf, i, a, RAFT_VOTER);
	}
	rc = raft_bootstrap(&raft, &conf);
	if (rc != 0 && rc != RAFT_CANTBOOTSTRAP) {
		fprintf(stderr, "bootstrap: %s\n", raft_strerror(rc));
		return 1;
	}
	raft_configuration_close(&conf);
	if ((rc = raft_start(&raft)) != 0) {
		fprintf(stderr, "start: %s\n", raft_errmsg(&raft));
		return 1;
	}
	uv_ev = event_new(base, uv_backend_fd(&loop), EV_READ | EV_PERSIST,
	    uv_cb, NULL);
	uv_timer = evtimer_new(base, uv_cb, NULL);
	work_ev = event_new(base, -1, 0, work_cb, NULL);
	tick_ev = event_new(base, -1, EV_PERSIST, tick_cb, NULL);
	term_ev = evsignal_new(base, SIGTERM, term_cb, NULL);
	stop_ev = evsignal_new(base, SIGUSR1, stop_cb, NULL);
	event_add(stop_ev, NULL);
	struct timeval sec = { 0, 10000 };
	event_add(uv_ev, NULL);
	event_add(tick_ev, &sec);
	event_add(term_ev, NULL);
	uv_pump();
	printf("%u: started on %s\n", id, addr);
	fflush(stdout);
	event_base_dispatch(base);
	return 0;
}
