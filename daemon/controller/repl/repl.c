/* The replicated store's engine: dqlite's VFS under SQLite, libraft over
 * repl_net.c, libuv pumped from libevent (docs/REPLICATION.md).
 *
 * One thread. libevent watches libuv's backend descriptor and its next
 * timer and runs uv_run(UV_RUN_NOWAIT) when either fires. A commit waits
 * in uv_run(UV_RUN_ONCE) until its entry is applied here, with the
 * libevent loop blocked meanwhile, as an fsync blocks it in single mode;
 * everything raft needs (the log's disk writes, the TLS streams) runs
 * inside libuv, so the wait never depends on libevent. The requests that
 * arrive meanwhile wait in their sockets and make up the next round's
 * transaction: one Raft entry per round, group commit as before. */
#include "config.h"

#include <sys/stat.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dqlite.h>
#include <event2/event.h>
#include <sqlite3.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "daemon/controller/repl/repl_int.h"

#define REPL_PAGE 4096
/* dqlite checkpoints a replica's WAL past 1,000 frames. */
#define REPL_CHECKPOINT_FRAMES 1000
#define REPL_PAGES_MAX (1u << 20)
/* No snapshot this soon after start (repl_log_settled). */
#define REPL_SNAPSHOT_HOLD_US (10 * 1000000ull)
/* A member's host that did not resolve is tried again this much later. */
#define REPL_MEMBERS_RETRY_US (10 * 1000000ull)

struct repl {
	struct event_base *base;
	uv_loop_t loop;
	struct raft_uv_transport transport;
	struct raft_io io;
	struct raft_fsm fsm;
	struct raft raft;
	sqlite3_vfs vfs;
	char vfs_name[32];
	sqlite3 *db;		/* for checkpoints; the store has its own */
	char address[REPL_ADDR_MAX];
	struct event *uv_ev, *uv_timer;
	/* Run outside uv_run: main's role callback (a new leader commits
	 * its migrations, and a commit runs uv_run itself; libuv's loop and
	 * libraft's apply loop are not reentrant), and a pump after a
	 * membership change. */
	struct event *role_ev, *pump_ev;
	bool role_due;		/* leading set, main not told yet */
	bool in_uv;		/* inside repl_pump's uv_run */
	repl_role_cb cb;
	void *cb_arg;
	unsigned election_ms;
	bool had_state;
	bool leading;		/* told main so */
	bool barrier_pending;
	bool in_flight;		/* a commit's frames polled, not applied */
	bool applied;		/* the in-flight entry's apply_cb ran */
	int apply_status;
	unsigned long frames_since_ckpt;
	unsigned long *pgno;	/* apply's page numbers */
	size_t npgno;
	struct repl_stats stats;
	uint64_t start_us;	/* monotonic, at repl_create */
	/* The configuration the Raft listener admits by (repl_members_sync);
	 * members_retry_us: 0, or when to resolve again. */
	raft_index members_index, members_uncommitted;
	uint64_t members_retry_us;
};

static const char *
repl_open_db(struct repl *r)
{
	static const char *const pragmas[] = {
		"PRAGMA page_size = 4096",
		"PRAGMA synchronous = OFF",
		"PRAGMA journal_mode = WAL",
		"PRAGMA wal_autocheckpoint = 0",
	};
	size_t i;

	if (sqlite3_open_v2(REPL_DB, &r->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, r->vfs_name) !=
	    SQLITE_OK)
		return "open";
	for (i = 0; i < sizeof(pragmas) / sizeof(pragmas[0]); i++)
		if (sqlite3_exec(r->db, pragmas[i], NULL, NULL, NULL) !=
		    SQLITE_OK)
			return pragmas[i];
	return NULL;
}

/* ---- libuv inside libevent ---- */

static void
repl_notice(struct repl *r);

static void
repl_pump(struct repl *r)
{
	struct timeval tv;
	int t;

	r->in_uv = true;
	uv_run(&r->loop, UV_RUN_NOWAIT);
	r->in_uv = false;
	repl_notice(r);
	t = uv_backend_timeout(&r->loop);
	if (t >= 0) {
		tv.tv_sec = t / 1000;
		tv.tv_usec = (t % 1000) * 1000;
		evtimer_add(r->uv_timer, &tv);
	}
}

static void
repl_uv_cb(evutil_socket_t fd, short what, void *arg)
{
	repl_pump(arg);
}

static void
repl_barrier_cb(struct raft_barrier *req, int status)
{
	struct repl *r = req->data;

	free(req);
	r->barrier_pending = false;
	if (status != 0) {
		log_info("replication: barrier failed (%s); waiting for the "
		    "next election", raft_strerror(status));
		return;
	}
	if (raft_state(&r->raft) != RAFT_LEADER || r->leading)
		return;
	r->leading = true;
	r->role_due = true;
	log_info("replication: leader in term %llu, log applied to index "
	    "%llu", (unsigned long long)r->raft.current_term,
	    (unsigned long long)raft_last_applied(&r->raft));
	event_active(r->role_ev, EV_TIMEOUT, 0);
}

static void
repl_role_ev_cb(evutil_socket_t fd, short what, void *arg)
{
	struct repl *r = arg;

	if (!r->role_due)
		return;
	r->role_due = false;
	/* Still leading: otherwise repl_notice has already told main. */
	if (r->leading)
		r->cb(r->cb_arg, true);
}

static void
repl_pump_cb(evutil_socket_t fd, short what, void *arg)
{
	repl_pump(arg);
}

/* The Raft listener admits the current configuration's members only
 * (repl_net_set_members). libraft 0.15 says nothing when a configuration
 * arrives (an entry, a snapshot, a change here): compare its indexes
 * after each run, and resolve the members' hosts only when they move. */
static void
repl_members_sync(struct repl *r)
{
	const struct raft *rf = &r->raft;

	if (rf->configuration_index == r->members_index &&
	    rf->configuration_uncommitted_index == r->members_uncommitted &&
	    (r->members_retry_us == 0 ||
	    clock_mono_us() < r->members_retry_us))
		return;
	r->members_index = rf->configuration_index;
	r->members_uncommitted = rf->configuration_uncommitted_index;
	r->members_retry_us = 0;
	if (repl_net_set_members(&r->transport, &rf->configuration) == -1)
		r->members_retry_us = clock_mono_us() + REPL_MEMBERS_RETRY_US;
}

/* libraft 0.15 has no state-change callback: look after each run. A new
 * leader first appends a barrier: its first transaction must be built on
 * every entry the old leader may have acknowledged (without it vfsraft
 * lost the last acknowledged row in 4 runs of 4). */
static void
repl_notice(struct repl *r)
{
	struct raft_barrier *b;
	int rc;

	repl_members_sync(r);
	if (raft_state(&r->raft) != RAFT_LEADER) {
		if (r->leading) {
			r->leading = false;
			r->role_due = false;
			log_warnx("replication: no longer the leader (term "
			    "%llu)", (unsigned long long)r->raft.current_term);
			r->cb(r->cb_arg, false);
		}
		return;
	}
	if (r->leading || r->barrier_pending)
		return;
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return;
	b->data = r;
	if ((rc = raft_barrier(&r->raft, b, repl_barrier_cb)) != 0) {
		log_info("replication: barrier: %s", raft_strerror(rc));
		free(b);
		return;
	}
	r->barrier_pending = true;
}

/* ---- the state machine ---- */

/* An entry: n (8 bytes LE), n page numbers (8 bytes LE each), n pages. */
static int
repl_fsm_apply(struct raft_fsm *f, const struct raft_buffer *buf,
    void **result)
{
	struct repl *r = f->data;
	const unsigned char *p = buf->base;
	uint64_t n, v;
	size_t k;

	*result = NULL;
	if (buf->len < 8)
		return RAFT_MALFORMED;
	memcpy(&n, p, 8);
	n = le64toh(n);
	if (n == 0 || n > REPL_PAGES_MAX ||
	    buf->len != 8 + n * 8 + n * REPL_PAGE)
		return RAFT_MALFORMED;
	if (n > r->npgno) {
		unsigned long *np = realloc(r->pgno, n * sizeof(*np));

		if (np == NULL)
			return RAFT_NOMEM;
		r->pgno = np;
		r->npgno = n;
	}
	for (k = 0; k < n; k++) {
		memcpy(&v, p + 8 + k * 8, 8);
		r->pgno[k] = (unsigned long)le64toh(v);
	}
	if (dqlite_vfs_apply(&r->vfs, REPL_DB, (unsigned)n, r->pgno,
	    (void *)(p + 8 + n * 8)) != 0) {
		log_warnx("replication: applying an entry of %llu pages "
		    "failed", (unsigned long long)n);
		return RAFT_IOERR;
	}
	/* Each replica checkpoints its own WAL, as dqlite does. */
	r->frames_since_ckpt += n;
	if (r->frames_since_ckpt >= REPL_CHECKPOINT_FRAMES) {
		int log = 0, done = 0;

		if (sqlite3_wal_checkpoint_v2(r->db, NULL,
		    SQLITE_CHECKPOINT_TRUNCATE, &log, &done) == SQLITE_OK)
			r->frames_since_ckpt = 0;
		else
			log_debug("replication: checkpoint: %s",
			    sqlite3_errmsg(r->db));
	}
	return 0;
}

/* Whether a snapshot can be taken without racing a truncation of the
 * log: a leader is known, and every entry past the commit index is of
 * the current term (so none of them conflicts with that leader's log).
 * libraft 0.15 lets a snapshot's barrier and a truncation's barrier
 * overlap (fixed upstream in 0.18: "UvBarrier: A barrier can have
 * multiple barrier requests"), and a replica restarted after SIGKILL
 * with entries of its old term crashed in removeSuffix/refsDecr in 4 of
 * about 10 t830 runs, never with snapshots off. */
static bool
repl_log_settled(struct repl *r)
{
	const struct raft_log *l = &r->raft.log;
	raft_index last = raft_last_index(&r->raft);
	raft_index first = r->raft.commit_index + 1;
	const char *addr = NULL;
	raft_id lid = 0;
	size_t pos;

	/* Every crash seen came within about a second of a restart,
	 * while the replica caught up (and still did with the term rule
	 * below: a CI run after it); none with snapshots off. */
	if (clock_mono_us() - r->start_us < REPL_SNAPSHOT_HOLD_US)
		return false;
	raft_leader(&r->raft, &lid, &addr);
	if (lid == 0)
		return false;
	if (last < first)
		return true;
	if (l->size == 0 || first <= l->offset)
		return false;
	pos = (l->front + (size_t)(first - l->offset - 1)) % l->size;
	return l->entries[pos].term == r->raft.current_term;
}

static int
repl_fsm_snapshot(struct raft_fsm *f, struct raft_buffer *bufs[],
    unsigned *n)
{
	struct repl *r = f->data;
	void *data;
	size_t len;

	/* As dqlite's own FSM: not while a commit's frames are polled and
	 * not yet applied. */
	if (r->in_flight)
		return RAFT_BUSY;
	if (!repl_log_settled(r)) {
		r->stats.snapshots_deferred++;
		return RAFT_BUSY;
	}
	if ((*bufs = raft_malloc(sizeof(**bufs))) == NULL)
		return RAFT_NOMEM;
	if (dqlite_vfs_snapshot(&r->vfs, REPL_DB, &data, &len) != 0) {
		raft_free(*bufs);
		return RAFT_IOERR;
	}
	(*bufs)[0].base = data;	/* malloc'ed by dqlite 1.11: raft_free */
	(*bufs)[0].len = len;
	*n = 1;
	return 0;
}

static int
repl_fsm_snapshot_finalize(struct raft_fsm *f, struct raft_buffer *bufs[],
    unsigned *n)
{
	unsigned k;

	for (k = 0; k < *n; k++)
		raft_free((*bufs)[k].base);
	raft_free(*bufs);
	*bufs = NULL;
	*n = 0;
	return 0;
}

/* Only a follower restores (a leader sends snapshots, it never takes
 * one); main has no store open then. */
static int
repl_fsm_restore(struct raft_fsm *f, struct raft_buffer *buf)
{
	struct repl *r = f->data;
	const char *what;
	int rc;

	sqlite3_close(r->db);
	r->db = NULL;
	rc = dqlite_vfs_restore(&r->vfs, REPL_DB, buf->base, buf->len);
	/* libraft 0.15 owns (and frees) the buffer when this fails. */
	if (rc == 0)
		raft_free(buf->base);
	if ((what = repl_open_db(r)) != NULL)
		log_warnx("replication: after restoring a snapshot: %s: %s",
		    what, sqlite3_errmsg(r->db));
	r->frames_since_ckpt = 0;
	if (rc != 0) {
		log_warnx("replication: a snapshot of %zu bytes did not "
		    "restore", (size_t)buf->len);
		return RAFT_IOERR;
	}
	log_info("replication: restored a snapshot of %zu bytes",
	    (size_t)buf->len);
	return 0;
}

/* ---- the leader's commits ---- */

static void
repl_apply_cb(struct raft_apply *req, int status, void *result)
{
	struct repl *r = req->data;

	free(req);
	r->applied = true;
	r->apply_status = status;
	/* Applied (or failed): the VFS holds no pending transaction any
	 * more, so libraft may snapshot right after this callback (it
	 * decides inside the same run). */
	r->in_flight = false;
}

int
repl_replicate(void *arg, struct cerr *err)
{
	struct repl *r = arg;
	dqlite_vfs_frame *frames;
	struct raft_buffer buf;
	struct raft_apply *req;
	unsigned n, k;
	unsigned char *p;
	uint64_t v, deadline, t0;
	int rc;

	/* A commit from inside a raft callback would run uv_run inside
	 * uv_run: everything that commits runs from libevent. */
	if (r->in_uv)
		fatalx("replication: a commit inside libuv's loop");
	if (dqlite_vfs_poll(&r->vfs, REPL_DB, &frames, &n) != 0)
		fatalx("replication: cannot read the commit's frames");
	if (n == 0)
		return 0;	/* a read-only transaction */
	buf.len = 8 + (size_t)n * 8 + (size_t)n * REPL_PAGE;
	if ((buf.base = raft_malloc(buf.len)) == NULL ||
	    (req = calloc(1, sizeof(*req))) == NULL)
		fatalx("replication: out of memory for an entry of %u pages",
		    n);
	p = buf.base;
	v = htole64(n);
	memcpy(p, &v, 8);
	for (k = 0; k < n; k++) {
		v = htole64(frames[k].page_number);
		memcpy(p + 8 + (size_t)k * 8, &v, 8);
		memcpy(p + 8 + (size_t)n * 8 + (size_t)k * REPL_PAGE,
		    frames[k].data, REPL_PAGE);
		sqlite3_free(frames[k].data);
	}
	sqlite3_free(frames);
	req->data = r;
	r->applied = false;
	if ((rc = raft_apply(&r->raft, req, &buf, 1, repl_apply_cb)) != 0) {
		raft_free(buf.base);
		free(req);
		dqlite_vfs_abort(&r->vfs, REPL_DB);
		log_warnx("replication: cannot propose a commit: %s",
		    raft_strerror(rc));
		r->leading = false;
		r->cb(r->cb_arg, false);
		fatalx("replication: the role callback returned");
	}
	r->in_flight = true;
	r->stats.entries++;
	r->stats.pages += n;
	t0 = clock_mono_us();
	/* A leader cut off from the majority steps down within about an
	 * election timeout, failing the entry; the deadline is only a
	 * guard against a wait that would never end. */
	deadline = clock_mono_us() + (uint64_t)r->election_ms * 10000;
	while (!r->applied && clock_mono_us() < deadline)
		uv_run(&r->loop, UV_RUN_ONCE);
	r->in_flight = false;
	r->stats.wait_us += clock_mono_us() - t0;
	if (!r->applied || r->apply_status != 0) {
		/* The outcome is unknown: a later leader may still commit
		 * the entry (vfsraft saw it). Nothing of it is acknowledged
		 * here; the process starts again as a follower. */
		if (!r->applied)
			dqlite_vfs_abort(&r->vfs, REPL_DB);
		log_warnx("replication: a commit was not replicated (%s); "
		    "its outcome is unknown", r->applied ?
		    raft_strerror(r->apply_status) : "timed out");
		r->leading = false;
		r->cb(r->cb_arg, false);
		fatalx("replication: the role callback returned");
	}
	(void)err;
	return 0;
}

/* ---- set-up ---- */

static bool
dir_has_log(const char *dir)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/metadata1", dir);
	if (access(path, F_OK) == 0)
		return true;
	snprintf(path, sizeof(path), "%s/metadata2", dir);
	return access(path, F_OK) == 0;
}

struct repl *
repl_create(struct event_base *base, const struct repl_opts *o,
    bool bootstrap, repl_role_cb cb, void *arg, struct cerr *err)
{
	struct raft_configuration conf;
	struct repl *r;
	const char *what;
	int rc;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	r->base = base;
	r->cb = cb;
	r->cb_arg = arg;
	r->start_us = clock_mono_us();
	r->election_ms = o->election_ms;
	if (snprintf(r->address, sizeof(r->address), "%s/%s",
	    o->raft_address, o->rpc_address) >= (int)sizeof(r->address)) {
		cerr_set(err, ERR_INVALID, "replication: addresses too long");
		goto fail;
	}
	if (mkdir(o->data_dir, 0700) == -1 && errno != EEXIST) {
		cerr_set(err, ERR_INTERNAL, "replication: data_dir %s: %s",
		    o->data_dir, strerror(errno));
		goto fail;
	}
	r->had_state = dir_has_log(o->data_dir);
	snprintf(r->vfs_name, sizeof(r->vfs_name), "cohort-%llu",
	    (unsigned long long)o->id);
	if (dqlite_vfs_init(&r->vfs, r->vfs_name) != 0 ||
	    sqlite3_vfs_register(&r->vfs, 0) != SQLITE_OK) {
		cerr_set(err, ERR_INTERNAL, "replication: cannot register "
		    "dqlite's VFS");
		goto fail;
	}
	if ((what = repl_open_db(r)) != NULL) {
		cerr_set(err, ERR_INTERNAL, "replication: database: %s: %s",
		    what, r->db != NULL ? sqlite3_errmsg(r->db) : "no memory");
		goto fail;
	}
	if (uv_loop_init(&r->loop) != 0 ||
	    repl_net_init(&r->transport, &r->loop, o->srv_ctx,
	    o->cli_ctx) == -1) {
		cerr_set(err, ERR_INTERNAL, "replication: cannot set up "
		    "libuv");
		goto fail;
	}
	r->fsm.version = 2;
	r->fsm.data = r;
	r->fsm.apply = repl_fsm_apply;
	r->fsm.snapshot = repl_fsm_snapshot;
	r->fsm.snapshot_finalize = repl_fsm_snapshot_finalize;
	r->fsm.restore = repl_fsm_restore;
	if ((rc = raft_uv_init(&r->io, &r->loop, o->data_dir,
	    &r->transport)) != 0) {
		cerr_set(err, ERR_INTERNAL, "replication: data_dir %s: %s",
		    o->data_dir, r->io.errmsg);
		goto fail;
	}
	if ((rc = raft_init(&r->raft, &r->io, &r->fsm, o->id,
	    r->address)) != 0) {
		cerr_set(err, ERR_INTERNAL, "replication: %s",
		    raft_strerror(rc));
		goto fail;
	}
	raft_set_election_timeout(&r->raft, o->election_ms);
	raft_set_heartbeat_timeout(&r->raft, o->heartbeat_ms);
	/* Pre-vote halved the failover in the prototypes (1.38 s median
	 * against 2.33 s) and keeps a returning partitioned replica from
	 * forcing an election. */
	raft_set_pre_vote(&r->raft, true);
	raft_set_snapshot_threshold(&r->raft, o->snapshot_threshold);
	raft_set_snapshot_trailing(&r->raft, o->snapshot_threshold / 4 + 1);
	if (bootstrap && !r->had_state) {
		raft_configuration_init(&conf);
		if (raft_configuration_add(&conf, o->id, r->address,
		    RAFT_VOTER) != 0 ||
		    (rc = raft_bootstrap(&r->raft, &conf)) != 0) {
			raft_configuration_close(&conf);
			cerr_set(err, ERR_INTERNAL, "replication: bootstrap: "
			    "%s", raft_errmsg(&r->raft));
			goto fail;
		}
		raft_configuration_close(&conf);
		log_info("replication: bootstrapped a new cluster in %s with "
		    "replica %llu (%s)", o->data_dir,
		    (unsigned long long)o->id, r->address);
	} else if (bootstrap)
		log_info("replication: %s already holds a Raft log; "
		    "--bootstrap does nothing", o->data_dir);
	if ((rc = raft_start(&r->raft)) != 0) {
		cerr_set(err, ERR_INTERNAL, "replication: start: %s",
		    raft_errmsg(&r->raft));
		goto fail;
	}
	r->uv_ev = event_new(base, uv_backend_fd(&r->loop),
	    EV_READ | EV_PERSIST, repl_uv_cb, r);
	r->uv_timer = evtimer_new(base, repl_uv_cb, r);
	r->role_ev = event_new(base, -1, 0, repl_role_ev_cb, r);
	r->pump_ev = event_new(base, -1, 0, repl_pump_cb, r);
	if (r->uv_ev == NULL || r->uv_timer == NULL || r->role_ev == NULL ||
	    r->pump_ev == NULL ||
	    event_add(r->uv_ev, NULL) == -1) {
		cerr_set(err, ERR_INTERNAL, "replication: cannot watch libuv");
		goto fail;
	}
	repl_pump(r);
	log_info("replication: replica %llu at %s, raft at %s, log in %s",
	    (unsigned long long)o->id, o->rpc_address, o->raft_address,
	    o->data_dir);
	return r;

fail:
	/* Set-up failures end the process (main's fatalx); what was made
	 * is left to the exit. */
	return NULL;
}

bool
repl_had_state(const struct repl *r)
{
	return r->had_state;
}

const char *
repl_vfs(const struct repl *r)
{
	return r->vfs_name;
}

bool
repl_is_leader(const struct repl *r)
{
	return r->leading;
}

const char *
repl_leader_rpc(struct repl *r, char *buf, size_t len)
{
	const char *addr = NULL;
	raft_id id = 0;

	raft_leader(&r->raft, &id, &addr);
	if (id == 0 || addr == NULL || id == r->raft.id)
		return NULL;
	if (repl_addr_split(addr, NULL, 0, buf, len) == -1)
		return NULL;
	return buf;
}

const char *
repl_role_name(enum repl_role role)
{
	switch (role) {
	case REPL_VOTER: return "voter";
	case REPL_STANDBY: return "standby";
	case REPL_SPARE: return "spare";
	}
	return "unknown";
}

int
repl_members(struct repl *r, struct repl_member **out, size_t *n)
{
	const struct raft_configuration *c = &r->raft.configuration;
	struct repl_member *m;
	const char *laddr = NULL;
	raft_id lid = 0;
	unsigned i;

	raft_leader(&r->raft, &lid, &laddr);
	if ((m = calloc(c->n + 1, sizeof(*m))) == NULL)
		return -1;
	for (i = 0; i < c->n; i++) {
		m[i].id = c->servers[i].id;
		if (repl_addr_split(c->servers[i].address, m[i].raft,
		    sizeof(m[i].raft), m[i].rpc, sizeof(m[i].rpc)) == -1)
			snprintf(m[i].rpc, sizeof(m[i].rpc), "%s",
			    c->servers[i].address);
		m[i].role = c->servers[i].role == RAFT_VOTER ? REPL_VOTER :
		    c->servers[i].role == RAFT_STANDBY ? REPL_STANDBY :
		    REPL_SPARE;
		m[i].leader = m[i].id == lid;
	}
	*out = m;
	*n = c->n;
	return 0;
}

void
repl_stats(struct repl *r, struct repl_stats *st)
{
	struct repl_net_stats ns;

	repl_net_stats(&r->transport, &ns);
	*st = r->stats;
	st->raft_refused = ns.refused;
	st->term = r->raft.current_term;
	st->commit_index = r->raft.commit_index;
}

unsigned
repl_drop_revoked(struct repl *r)
{
	unsigned n = repl_net_drop_revoked(&r->transport);

	/* Not inside uv_run (a signal's callback in libevent): run libuv
	 * soon, to finish the closes and let raft see its streams end. */
	if (n > 0)
		event_active(r->pump_ev, EV_TIMEOUT, 0);
	return n;
}

uint64_t
repl_term(struct repl *r)
{
	return r->raft.current_term;
}

uint64_t
repl_commit_index(struct repl *r)
{
	return r->raft.commit_index;
}

/* ---- membership changes ---- */

struct repl_change {
	struct raft_change change;
	struct raft_transfer transfer;
	struct repl *r;
	enum repl_op op;
	uint64_t id;
	void (*done)(void *, const struct cerr *);
	void *arg;
};

static void
repl_promote_cb(struct raft_change *req, int status)
{
	struct repl_change *c = req->data;

	if (status != 0)
		log_warnx("replication: replica %llu was not made a voter: "
		    "%s (cohort admin members add again)",
		    (unsigned long long)c->id, raft_strerror(status));
	else
		log_info("replication: replica %llu is a voter",
		    (unsigned long long)c->id);
	free(c);
}

static void
repl_change_cb(struct raft_change *req, int status)
{
	struct repl_change *c = req->data;
	struct cerr err;
	int rc;

	cerr_clear(&err);
	if (status != 0)
		cerr_set(&err, ERR_UNAVAILABLE, "the membership change did "
		    "not commit: %s", raft_strerror(status));
	c->done(c->arg, &err);
	if (status == 0 && c->op == REPL_ADD) {
		/* Promote once it has caught up (libraft runs the rounds). */
		log_info("replication: replica %llu added; promoting it to "
		    "voter once it has caught up", (unsigned long long)c->id);
		c->change.data = c;
		if ((rc = raft_assign(&c->r->raft, &c->change, c->id,
		    RAFT_VOTER, repl_promote_cb)) == 0) {
			event_active(c->r->pump_ev, EV_TIMEOUT, 0);
			return;
		}
		log_warnx("replication: cannot promote replica %llu: %s",
		    (unsigned long long)c->id, raft_strerror(rc));
	}
	free(c);
}

static void
repl_transfer_cb(struct raft_transfer *req)
{
	struct repl_change *c = req->data;
	struct cerr err;
	const char *addr;
	raft_id lid = 0;

	cerr_clear(&err);
	raft_leader(&c->r->raft, &lid, &addr);
	if (lid != c->id)
		cerr_set(&err, ERR_UNAVAILABLE, "replica %llu did not take "
		    "the leadership within the election timeout",
		    (unsigned long long)c->id);
	c->done(c->arg, &err);
	free(c);
}

int
repl_change(struct repl *r, enum repl_op op, uint64_t id, const char *rpc,
    const char *raft, void (*done)(void *, const struct cerr *), void *arg,
    struct cerr *err)
{
	struct repl_change *c;
	char whole[REPL_ADDR_MAX];
	int rc = 0;

	if (raft_state(&r->raft) != RAFT_LEADER)
		return cerr_set(err, ERR_NOT_LEADER, "not the leader");
	if (id == 0)
		return cerr_set(err, ERR_INVALID, "replica id 0 is not valid");
	if (op == REPL_ADD && snprintf(whole, sizeof(whole), "%s/%s", raft,
	    rpc) >= (int)sizeof(whole))
		return cerr_set(err, ERR_INVALID, "addresses too long");
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	c->r = r;
	c->op = op;
	c->id = id;
	c->done = done;
	c->arg = arg;
	c->change.data = c;
	c->transfer.data = c;
	switch (op) {
	case REPL_ADD:
		rc = raft_add(&r->raft, &c->change, id, whole, repl_change_cb);
		break;
	case REPL_REMOVE:
		rc = raft_remove(&r->raft, &c->change, id, repl_change_cb);
		break;
	case REPL_TRANSFER:
		rc = raft_transfer(&r->raft, &c->transfer, id,
		    repl_transfer_cb);
		break;
	}
	if (rc != 0) {
		free(c);
		return cerr_set(err, rc == RAFT_CANTCHANGE ? ERR_CONFLICT :
		    rc == RAFT_DUPLICATEID || rc == RAFT_DUPLICATEADDRESS ?
		    ERR_CONFLICT : rc == RAFT_NOTLEADER ? ERR_NOT_LEADER :
		    ERR_INVALID, "%s", raft_strerror(rc));
	}
	repl_pump(r);
	return 0;
}
