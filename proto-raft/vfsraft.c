/* Option (b) of issue 15: the application keeps its own sqlite3 connection,
 * opened on dqlite's VFS, and replicates each commit's WAL frames as one
 * libraft entry. Three servers in one process on raft_fixture (libraft's
 * in-memory I/O and network, simulated time): every step is a function
 * call, so what is measured is the CPU cost per commit on the loop's
 * thread, not network or fsync latency (dqbench measures those).
 *
 *   vfsraft [ROWS_PER_TXN [TXNS]]    (NO_BARRIER=1: skip the barrier, to
 *                                     see the lost write it prevents)
 *
 * Each server i: a dqlite VFS "vfs<i>" registered with SQLite, one
 * connection to "cohort.db" on it, and a raft_fsm whose apply calls
 * dqlite_vfs_apply on that VFS. The leader's write: BEGIN, the INSERTs,
 * COMMIT (sqlite3_step returns DONE, the frames are held by the VFS, the
 * WAL write lock stays taken), dqlite_vfs_poll, encode, raft_apply; once
 * the entry is committed, the leader's own apply releases the lock and
 * the acknowledgement may go. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dqlite.h>
#include <raft.h>
#include <raft/fixture.h>
#include <sqlite3.h>

#define N 3
#define PAGE 4096
#define DB "cohort.db"

struct server {
	int i;
	char vfsname[16];
	sqlite3_vfs vfs;
	sqlite3 *db;
	struct raft_fsm fsm;
	unsigned long applied, snapshots, restores;
};

static struct server sv[N];
static struct raft_fixture F;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "%s: %s\n", sql, err);
		exit(1);
	}
}

/* What dqlite itself does when it opens a connection on its VFS. */
static void
open_db(struct server *s)
{
	if (sqlite3_open_v2(DB, &s->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE, s->vfsname) != SQLITE_OK) {
		fprintf(stderr, "open: %s\n", sqlite3_errmsg(s->db));
		exit(1);
	}
	sqlite3_extended_result_codes(s->db, 1);
	exec(s->db, "PRAGMA page_size=4096");
	exec(s->db, "PRAGMA synchronous=OFF");
	exec(s->db, "PRAGMA journal_mode=WAL");
	exec(s->db, "PRAGMA wal_autocheckpoint=0");
}

static int64_t
count_rows(struct server *s, const char *where)
{
	sqlite3_stmt *st;
	int64_t v = -1;
	char q[256];

	snprintf(q, sizeof(q), "SELECT count(*) FROM t %s", where);
	if (sqlite3_prepare_v2(s->db, q, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Entry: n, n page numbers, n pages (8-byte words, as dqlite's own). */
static int
fsm_apply(struct raft_fsm *fsm, const struct raft_buffer *buf, void **result)
{
	struct server *s = fsm->data;
	const uint64_t *w = buf->base;
	uint64_t n = w[0];
	unsigned long pgno[4096];
	int rc;

	for (uint64_t k = 0; k < n; k++)
		pgno[k] = (unsigned long)w[1 + k];
	rc = dqlite_vfs_apply(&s->vfs, DB, (unsigned)n, pgno,
	    (void *)(w + 1 + n));
	if (rc != 0) {
		fprintf(stderr, "server %d: dqlite_vfs_apply: %d\n", s->i, rc);
		return RAFT_IOERR;
	}
	s->applied++;
	*result = NULL;
	return 0;
}

/* Snapshot: the database and WAL as dqlite_vfs_snapshot gives them. */
static int
fsm_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[], unsigned *n)
{
	struct server *s = fsm->data;
	void *data;
	size_t len;

	if (dqlite_vfs_snapshot(&s->vfs, DB, &data, &len) != 0)
		return RAFT_IOERR;
	/* dqlite 1.11 allocates it with malloc, not sqlite3_malloc
	 * (sqlite3_free on it aborts): it can go to raft as it is. */
	*bufs = raft_malloc(sizeof(**bufs));
	(*bufs)[0].base = data;
	(*bufs)[0].len = len;
	*n = 1;
	s->snapshots++;
	return 0;
}

static int
fsm_snapshot_finalize(struct raft_fsm *fsm, struct raft_buffer *bufs[],
    unsigned *n)
{
	(void)fsm;
	for (unsigned k = 0; k < *n; k++)
		raft_free((*bufs)[k].base);
	raft_free(*bufs);
	*bufs = NULL;
	*n = 0;
	return 0;
}

static int
fsm_restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
	struct server *s = fsm->data;
	int rc;

	/* dqlite closes its connections to the file before a restore. */
	sqlite3_close(s->db);
	s->db = NULL;
	rc = dqlite_vfs_restore(&s->vfs, DB, buf->base, buf->len);
	raft_free(buf->base);
	open_db(s);
	s->restores++;
	return rc == 0 ? 0 : RAFT_IOERR;
}

static int applied_ok;
static int use_barrier = 1, barrier_nr;

static void
apply_cb(struct raft_apply *req, int status, void *result)
{
	(void)result;
	applied_ok = status == 0 ? 1 : -1;
	free(req);
}

static int barrier_ok;

static void
barrier_cb(struct raft_barrier *req, int status)
{
	barrier_ok = status == 0 ? 1 : -1;
	free(req);
}

/* A new leader may hold committed entries it has not applied yet (the old
 * leader died before telling it the commit index): writing before they
 * are applied builds the transaction on stale pages, and when the log is
 * applied in order the new frames overwrite the old entry's rows (seen:
 * the last row acknowledged by the old leader vanished). dqlite itself
 * runs a raft_barrier first; so must cohortd, before it loads its state
 * after an election. */
static int
barrier(struct raft *r)
{
	struct raft_barrier *req;

	if (raft_last_applied(r) >= raft_last_index(r))
		return 0;
	req = malloc(sizeof(*req));
	barrier_ok = 0;
	if (raft_barrier(r, req, barrier_cb) != 0) {
		free(req);
		return -1;
	}
	for (int steps = 0; barrier_ok == 0 && steps < 100000; steps++)
		raft_fixture_step(&F);
	barrier_nr++;
	return barrier_ok == 1 ? 0 : -1;
}

/* One write transaction of k rows on the leader, replicated. Returns 0
 * once committed (and applied on the leader), -1 if the entry failed. */
static int
write_txn(int leader, int phase, int first, int k, double *cpu_sql,
    double *cpu_raft)
{
	struct server *s = &sv[leader];
	struct raft *r = raft_fixture_get(&F, (unsigned)leader);
	dqlite_vfs_frame *frames;
	unsigned n;
	char sql[256];
	double t0 = now_s();

	if (use_barrier && barrier(r) != 0)
		return -1;
	exec(s->db, "BEGIN IMMEDIATE");
	for (int j = 0; j < k; j++) {
		snprintf(sql, sizeof(sql), "INSERT INTO t (phase, seq, pad) "
		    "VALUES (%d, %d, 'job-%d-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx')",
		    phase, first + j, first + j);
		exec(s->db, sql);
	}
	exec(s->db, "COMMIT");
	if (dqlite_vfs_poll(&s->vfs, DB, &frames, &n) != 0) {
		fprintf(stderr, "poll failed\n");
		exit(1);
	}
	double t1 = now_s();
	if (n == 0) {
		fprintf(stderr, "txn at seq %d: no frames polled\n", first);
		return 0;
	}
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
	applied_ok = 0;
	int rc = raft_apply(r, req, &buf, 1, apply_cb);
	if (rc != 0) {
		/* Not the leader any more: give the write lock back. */
		raft_free(buf.base);
		free(req);
		dqlite_vfs_abort(&s->vfs, DB);
		return -1;
	}
	/* Run the simulated cluster until our entry is committed. */
	for (int steps = 0; applied_ok == 0 && steps < 100000; steps++)
		raft_fixture_step(&F);
	double t2 = now_s();
	*cpu_sql += t1 - t0;
	*cpu_raft += t2 - t1;
	if (applied_ok != 1) {
		dqlite_vfs_abort(&s->vfs, DB);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	int k = argc > 1 ? atoi(argv[1]) : 1;
	if (getenv("NO_BARRIER") != NULL)
		use_barrier = 0;
	int txns = argc > 2 ? atoi(argv[2]) : 2000;
	struct raft_configuration conf;
	double cpu_sql = 0, cpu_raft = 0, t0;
	int leader, seq = 0, acked = 0;

	if (raft_fixture_initialize(&F) != 0)
		return 1;
	for (int i = 0; i < N; i++) {
		struct server *s = &sv[i];
		s->i = i;
		snprintf(s->vfsname, sizeof(s->vfsname), "vfs%d", i);
		if (dqlite_vfs_init(&s->vfs, s->vfsname) != 0 ||
		    sqlite3_vfs_register(&s->vfs, 0) != SQLITE_OK)
			return 1;
		open_db(s);
		s->fsm.version = 2;
		s->fsm.data = s;
		s->fsm.apply = fsm_apply;
		s->fsm.snapshot = fsm_snapshot;
		s->fsm.snapshot_finalize = fsm_snapshot_finalize;
		s->fsm.restore = fsm_restore;
		if (raft_fixture_grow(&F, &s->fsm) != 0)
			return 1;
		struct raft *r = raft_fixture_get(&F, (unsigned)i);
		raft_set_snapshot_threshold(r, 256);
		raft_set_snapshot_trailing(r, 64);
	}
	raft_configuration_init(&conf);
	if (raft_fixture_configuration(&F, N, &conf) != 0 ||
	    raft_fixture_bootstrap(&F, &conf) != 0 ||
	    raft_fixture_start(&F) != 0)
		return 1;
	raft_configuration_close(&conf);
	raft_fixture_elect(&F, 0);
	leader = (int)raft_fixture_leader_index(&F);
	printf("leader: server %d\n", leader);

	/* The schema goes through the same path: one DDL commit. */
	{
		dqlite_vfs_frame *fr;
		unsigned n;
		exec(sv[leader].db, "CREATE TABLE t (id INTEGER PRIMARY KEY, "
		    "phase INTEGER, seq INTEGER, pad TEXT)");
		dqlite_vfs_poll(&sv[leader].vfs, DB, &fr, &n);
		struct raft_buffer buf;
		buf.len = 8 * (1 + n) + (size_t)n * PAGE;
		buf.base = raft_malloc(buf.len);
		uint64_t *w = buf.base;
		w[0] = n;
		for (unsigned j = 0; j < n; j++) {
			w[1 + j] = fr[j].page_number;
			memcpy((char *)(w + 1 + n) + (size_t)j * PAGE,
			    fr[j].data, PAGE);
			sqlite3_free(fr[j].data);
		}
		sqlite3_free(fr);
		struct raft_apply *req = malloc(sizeof(*req));
		applied_ok = 0;
		raft_apply(raft_fixture_get(&F, (unsigned)leader), req, &buf, 1,
		    apply_cb);
		while (applied_ok == 0)
			raft_fixture_step(&F);
	}

	t0 = now_s();
	for (int x = 0; x < txns; x++, seq += k)
		if (write_txn(leader, 1, seq, k, &cpu_sql, &cpu_raft) == 0)
			acked += k;
	double dt = now_s() - t0;
	printf("%d txns of %d rows: %.3f s wall, %.0f commits/s, "
	    "per commit %.1f us SQL+poll, %.1f us raft+apply x3 (simulated "
	    "I/O)\n", txns, k, dt, txns / dt, cpu_sql / txns * 1e6,
	    cpu_raft / txns * 1e6);

	/* Failover: kill the leader, let the fixture elect another. */
	raft_fixture_kill(&F, (unsigned)leader);
	raft_time tk = raft_fixture_time(&F);
	if (!raft_fixture_step_until_has_no_leader(&F, 60000) ||
	    !raft_fixture_step_until_has_leader(&F, 60000)) {
		printf("no new leader\n");
		return 1;
	}
	int old = leader;
	leader = (int)raft_fixture_leader_index(&F);
	printf("killed server %d; server %d leads after %llu ms of "
	    "simulated time\n", old, leader,
	    (unsigned long long)(raft_fixture_time(&F) - tk));
	/* The new leader's connection writes on top of what it applied. */
	for (int x = 0; x < 100; x++, seq += k)
		if (write_txn(leader, 2, seq, k, &cpu_sql, &cpu_raft) == 0)
			acked += k;
	/* Partition: cut the new leader off from both others. Does it step
	 * down by itself, and when? Does a write on it get acknowledged? */
	{
		int iso = leader;
		raft_time tp = raft_fixture_time(&F);
		for (int j = 0; j < N; j++)
			if (j != iso) {
				raft_fixture_disconnect(&F, (unsigned)iso,
				    (unsigned)j);
				raft_fixture_disconnect(&F, (unsigned)j,
				    (unsigned)iso);
			}
		int before = acked;
		if (write_txn(iso, 3, seq, k, &cpu_sql, &cpu_raft) == 0)
			acked += k;
		seq += k;
		bool down = raft_fixture_step_until_state_is(&F,
		    (unsigned)iso, RAFT_FOLLOWER, 60000);
		printf("partition: isolated leader %d %s after %llu ms "
		    "(simulated; election timeout %u ms); its write %s\n",
		    iso, down ? "stepped down" : "did NOT step down",
		    (unsigned long long)(raft_fixture_time(&F) - tp),
		    raft_fixture_get(&F, (unsigned)iso)->election_timeout,
		    acked > before ? "WAS ACKNOWLEDGED" : "failed");
		for (int j = 0; j < N; j++)
			if (j != iso) {
				raft_fixture_reconnect(&F, (unsigned)iso,
				    (unsigned)j);
				raft_fixture_reconnect(&F, (unsigned)j,
				    (unsigned)iso);
			}
		raft_fixture_step_until_has_leader(&F, 60000);
		leader = (int)raft_fixture_leader_index(&F);
		printf("healed: server %d leads\n", leader);
		for (int x = 0; x < 10; x++, seq += k)
			if (write_txn(leader, 4, seq, k, &cpu_sql,
			    &cpu_raft) == 0)
				acked += k;
	}
	raft_fixture_revive(&F, (unsigned)old);
	raft_fixture_step_until_applied(&F, N, raft_last_index(
	    raft_fixture_get(&F, (unsigned)leader)), 60000);
	printf("acknowledged rows: %d (barriers run: %d%s)\n", acked,
	    barrier_nr, use_barrier ? "" : ", NO_BARRIER set");
	{
		int64_t sum = count_rows(&sv[0], "x") ;
		(void)sum;
		sqlite3_stmt *st;
		sqlite3_prepare_v2(sv[0].db, "SELECT sum(seq), min(id), max(id), max(seq) FROM t WHERE phase=1", -1, &st, NULL);
		sqlite3_step(st);
		printf("  phase 1: sum(seq) %lld (all: %lld) min id %lld max id %lld max seq %lld\n",
		    (long long)sqlite3_column_int64(st, 0),
		    (long long)((int64_t)txns * k * (txns * k - 1) / 2),
		    (long long)sqlite3_column_int64(st, 1),
		    (long long)sqlite3_column_int64(st, 2),
		    (long long)sqlite3_column_int64(st, 3));
		sqlite3_finalize(st);
	}
	for (int i = 0; i < N; i++)
		printf("  server %d: %lld rows (phase 1 %lld, phase 2 %lld, "
		    "max seq %lld), %lu entries applied, "
		    "%lu snapshots, %lu restores\n", i,
		    (long long)count_rows(&sv[i], ""),
		    (long long)count_rows(&sv[i], "WHERE phase=1"),
		    (long long)count_rows(&sv[i], "WHERE phase=2"),
		    (long long)count_rows(&sv[i], "WHERE seq < 2000"),
		    sv[i].applied,
		    sv[i].snapshots, sv[i].restores);
	return 0;
}
