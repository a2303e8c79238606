/* The second half of the store module (store.h): nodes with their
 * inventory, the placement of each job, and the exits of its tasks. The
 * conventions are store.c's: the SQL sits at the top, store_open prepares
 * it once, and every path that steps a statement resets it.
 *
 * What is read back is checked as strictly as what is written, since the
 * rows fill fixed-size arrays: a row that does not fit (a string too
 * long, too many GPUs, a malformed GPU list) fails the load with
 * ERR_INTERNAL naming the node or the job, never truncates or overflows. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/store/store_int.h"

#define NODE_COLUMNS \
	"name, address, state, reason, since_ms, source, ncpus, memory_mb, " \
	"features"

#define GPU_COLUMNS \
	"idx, uuid, model, memory_mb, numa_node, pci_bus_id, pcie_switch, " \
	"nvlink_domain, nvlink_peers, nic, nic_name"

/* GPU indices, in inventories and placements, are below this: bit i of
 * nvlink_peers names GPU i, so no larger index can be linked. */
#define GPU_INDEX_LIMIT INV_MAX_GPUS

/* Room for PLACE_MAX_GPUS indices below GPU_INDEX_LIMIT, comma-separated. */
#define GPUS_TEXT_MAX (PLACE_MAX_GPUS * 4)

/* An UPSERT, not INSERT OR REPLACE: a REPLACE deletes the old row first,
 * which cascades to its GPU rows and counts as a delete for any trigger
 * or foreign key added later. The GPU rows are replaced as a whole. */
const char *const store_nodes_sql[S__COUNT] = {
	[S_NODE_UPSERT] = "INSERT INTO nodes (" NODE_COLUMNS ") "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
	    "ON CONFLICT (name) DO UPDATE SET address = excluded.address, "
	    "state = excluded.state, reason = excluded.reason, "
	    "since_ms = excluded.since_ms, source = excluded.source, "
	    "ncpus = excluded.ncpus, memory_mb = excluded.memory_mb, "
	    "features = excluded.features",
	[S_NODE_GPUS_DELETE] = "DELETE FROM node_gpus WHERE node = ?1",
	[S_NODE_GPU_INSERT] = "INSERT INTO node_gpus (node, " GPU_COLUMNS
	    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
	[S_NODE_SET_STATE] = "UPDATE nodes SET state = ?2, reason = ?3, "
	    "since_ms = ?4 WHERE name = ?1",
	[S_NODES_LOAD] = "SELECT " NODE_COLUMNS " FROM nodes ORDER BY name",
	[S_NODE_GPUS_LOAD] = "SELECT " GPU_COLUMNS " FROM node_gpus "
	    "WHERE node = ?1 ORDER BY idx",
	[S_PLACEMENT_DELETE] = "DELETE FROM job_placements WHERE job_id = ?1",
	[S_PLACEMENT_INSERT] = "INSERT INTO job_placements "
	    "(job_id, node_rank, node, gpus) VALUES (?1, ?2, ?3, ?4)",
	[S_PLACEMENTS_LOAD] = "SELECT job_id, node_rank, node, gpus "
	    "FROM job_placements ORDER BY job_id, node_rank",
	/* Agents re-send an exit until it is acknowledged: the first
	 * record stands. */
	[S_TASK_EXIT_INSERT] = "INSERT INTO task_exits "
	    "(job_id, restart, rank, wait_status, time_ms) "
	    "VALUES (?1, ?2, ?3, ?4, ?5) "
	    "ON CONFLICT (job_id, restart, rank) DO NOTHING",
	[S_TASK_EXITS_LOAD] = "SELECT rank, wait_status FROM task_exits "
	    "WHERE job_id = ?1 AND restart = ?2 ORDER BY rank",
	[S_DRAIN_UPSERT] = "INSERT INTO node_drains "
	    "(node, reason, actor, time_ms, from_health) "
	    "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (node) DO UPDATE SET "
	    "reason = ?2, actor = ?3, time_ms = ?4, from_health = ?5",
	[S_DRAIN_DELETE] = "DELETE FROM node_drains WHERE node = ?1",
	[S_DRAINS_LOAD] = "SELECT node, reason, actor, time_ms, from_health "
	    "FROM node_drains ORDER BY node",
	/* Its GPU rows go by cascade; placements of jobs that ran there
	 * stay, as history. */
	[S_NODE_DELETE] = "DELETE FROM nodes WHERE name = ?1",
	/* Suspect nodes (sql/migrations/020_suspect.sql). */
	[S_SUSPECT_UPSERT] = "INSERT INTO node_suspects "
	    "(node, exempt, cleared_ms, reason, drained_ms) "
	    "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (node) DO UPDATE SET "
	    "exempt = ?2, cleared_ms = ?3, reason = ?4, drained_ms = ?5",
	[S_EVIDENCE_DELETE] = "DELETE FROM node_evidence WHERE node = ?1",
	[S_EVIDENCE_INSERT] = "INSERT INTO node_evidence "
	    "(node, seq, time_ms, kind, job_id, user, confirmed, detail) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[S_SUSPECTS_LOAD] = "SELECT node, exempt, cleared_ms, reason, "
	    "drained_ms FROM node_suspects ORDER BY node",
	[S_EVIDENCE_LOAD] = "SELECT node, seq, time_ms, kind, job_id, user, "
	    "confirmed, detail FROM node_evidence ORDER BY node, seq",
};

/* Refuse an argument that the store cannot write faithfully. Always
 * returns -1. */
static int
bad_arg(struct cerr *err, const char *what, const char *why)
{
	errno = EINVAL;
	return cerr_set(err, ERR_INTERNAL, "%s: %s", what, why);
}

/* The same for a row that cannot be read back: the database is corrupt
 * (or was edited by hand). Always returns -1. */
static int
bad_row(struct cerr *err, const char *what, const char *why)
{
	errno = EIO;
	return cerr_set(err, ERR_INTERNAL, "%s: %s", what, why);
}

/* Whether a fixed-size string field holds its terminating NUL. */
static bool
fits(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

/* Copy a text column into a fixed-size array. -1 when it does not fit or
 * holds a NUL byte (or SQLite ran out of memory converting it). */
static int
column_copy(sqlite3_stmt *s, int col, char *dst, size_t size)
{
	const unsigned char *v = sqlite3_column_text(s, col);
	int n = sqlite3_column_bytes(s, col);

	if (v == NULL || n < 0 || (size_t)n >= size ||
	    memchr(v, '\0', (size_t)n) != NULL)
		return -1;
	memcpy(dst, v, (size_t)n);
	dst[n] = '\0';
	return 0;
}

/* An integer column that must fit an unsigned. */
static int
column_uint(sqlite3_stmt *s, int col, unsigned *v)
{
	int64_t x = sqlite3_column_int64(s, col);

	if (x < 0 || x > UINT_MAX)
		return -1;
	*v = (unsigned)x;
	return 0;
}

/* Check what store_node_put is given before writing any of it, so that
 * only an I/O error can fail it half-way. */
static int
check_node(const struct store_node *n, const struct inventory *inv,
    const char *what, struct cerr *err)
{
	const struct gpu_info *g;
	unsigned i, j;

	if (n->name == NULL || n->name[0] == '\0')
		return bad_arg(err, what, "no name");
	if (n->state == NULL)
		return bad_arg(err, what, "no state");
	if (!fits(inv->source, sizeof(inv->source)))
		return bad_arg(err, what, "source not terminated");
	if (inv->ngpus > INV_MAX_GPUS)
		return bad_arg(err, what, "too many GPUs");
	if (inv->nfeatures > INV_MAX_FEATURES)
		return bad_arg(err, what, "too many features");
	for (i = 0; i < inv->nfeatures; i++)
		if (!fits(inv->features[i], sizeof(inv->features[i])))
			return bad_arg(err, what, "feature not terminated");
	for (i = 0; i < inv->ngpus; i++) {
		g = &inv->gpus[i];
		if (!fits(g->uuid, sizeof(g->uuid)) ||
		    !fits(g->model, sizeof(g->model)) ||
		    !fits(g->pci_bus_id, sizeof(g->pci_bus_id)))
			return bad_arg(err, what, "GPU text not terminated");
		if (g->index >= GPU_INDEX_LIMIT)
			return bad_arg(err, what, "GPU index out of range");
		for (j = 0; j < i; j++)
			if (inv->gpus[j].index == g->index)
				return bad_arg(err, what, "GPU index twice");
	}
	return 0;
}

int
store_node_put(struct store *st, const struct store_node *n,
    const struct inventory *inv, struct cerr *err)
{
	static const struct inventory none;
	struct binder b;
	const struct gpu_info *g;
	char what[128], features[INV_FEATURES_TEXT_MAX];
	unsigned i;

	snprintf(what, sizeof(what), "put node %.64s",
	    n->name != NULL ? n->name : "(null)");
	if (inv == NULL)
		inv = &none;
	if (check_node(n, inv, what, err) == -1)
		return -1;

	b = (struct binder){ st->stmt[S_NODE_UPSERT], 0, SQLITE_OK };
	bind_text(&b, n->name);
	bind_text(&b, n->address != NULL ? n->address : "");
	bind_text(&b, n->state);
	bind_text(&b, n->reason != NULL ? n->reason : "");
	bind_int(&b, n->since_ms);
	bind_text(&b, inv->source);
	bind_int(&b, inv->ncpus);
	bind_int(&b, (int64_t)inv->memory_mb);
	inventory_features_format(inv, features, sizeof(features));
	bind_text(&b, features);
	if (binder_step(st, &b, err, what) == -1)
		return -1;

	sqlite3_bind_text(st->stmt[S_NODE_GPUS_DELETE], 1, n->name, -1,
	    SQLITE_STATIC);
	if (stmt_exec(st, S_NODE_GPUS_DELETE, err, what) == -1)
		return -1;

	for (i = 0; i < inv->ngpus; i++) {
		g = &inv->gpus[i];
		b = (struct binder){ st->stmt[S_NODE_GPU_INSERT], 0,
		    SQLITE_OK };
		bind_text(&b, n->name);
		bind_int(&b, g->index);
		bind_text(&b, g->uuid);
		bind_text(&b, g->model);
		bind_int(&b, (int64_t)g->memory_mb);
		bind_int(&b, g->numa_node);
		bind_text(&b, g->pci_bus_id);
		bind_int(&b, g->pcie_switch);
		bind_int(&b, g->nvlink_domain);
		/* The bit pattern: bit 63 makes it negative, and back. */
		bind_int(&b, (int64_t)g->nvlink_peers);
		bind_int(&b, g->nic);
		bind_text(&b, g->nic_name);
		if (binder_step(st, &b, err, what) == -1)
			return -1;
	}
	return 0;
}

int
store_node_set_state(struct store *st, const char *name, const char *state,
    const char *reason, int64_t since_ms, struct cerr *err)
{
	struct binder b = { st->stmt[S_NODE_SET_STATE], 0, SQLITE_OK };
	char what[128];

	snprintf(what, sizeof(what), "set state of node %.64s",
	    name != NULL ? name : "(null)");
	if (name == NULL || state == NULL)
		return bad_arg(err, what, "no name or state");
	bind_text(&b, name);
	bind_text(&b, state);
	bind_text(&b, reason != NULL ? reason : "");
	bind_int(&b, since_ms);
	if (binder_step(st, &b, err, what) == -1)
		return -1;
	if (sqlite3_changes(st->db) == 0) {
		errno = ENOENT;
		return cerr_set(err, ERR_NOT_FOUND, "%s: no such node", what);
	}
	return 0;
}

/* Read one row of S_NODE_GPUS_LOAD into g. NULL, or what is wrong. */
static const char *
gpu_from_row(sqlite3_stmt *s, struct gpu_info *g)
{
	memset(g, 0, sizeof(*g));
	if (column_uint(s, 0, &g->index) == -1 ||
	    g->index >= GPU_INDEX_LIMIT)
		return "GPU index out of range";
	if (column_copy(s, 1, g->uuid, sizeof(g->uuid)) == -1)
		return "bad GPU uuid";
	if (column_copy(s, 2, g->model, sizeof(g->model)) == -1)
		return "bad GPU model";
	g->memory_mb = (uint64_t)sqlite3_column_int64(s, 3);
	g->numa_node = sqlite3_column_int(s, 4);
	if (column_copy(s, 5, g->pci_bus_id, sizeof(g->pci_bus_id)) == -1)
		return "bad GPU PCI bus id";
	g->pcie_switch = sqlite3_column_int(s, 6);
	g->nvlink_domain = sqlite3_column_int(s, 7);
	g->nvlink_peers = (uint64_t)sqlite3_column_int64(s, 8);
	g->nic = sqlite3_column_int(s, 9);
	if (column_copy(s, 10, g->nic_name, sizeof(g->nic_name)) == -1 ||
	    (g->nic_name[0] != '\0' && !inventory_nic_name_ok(g->nic_name)))
		return "bad GPU NIC name";
	/* Not kept: whether the NIC shares the GPU's PCIe switch. The
	 * agent says it again when it connects, and no job is placed on a
	 * node before; until then, as before agents said it. */
	g->nic_near = g->nic >= 0;
	return NULL;
}

/* Fill inv with the GPUs of node name (and nothing else). */
static int
load_gpus(struct store *st, const char *name, struct inventory *inv,
    struct cerr *err)
{
	sqlite3_stmt *s = st->stmt[S_NODE_GPUS_LOAD];
	const char *bad = NULL;
	char what[128];
	int rc;

	snprintf(what, sizeof(what), "load node %.64s", name);
	inv->ngpus = 0;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (inv->ngpus == INV_MAX_GPUS)
			bad = "too many GPUs";
		else
			bad = gpu_from_row(s, &inv->gpus[inv->ngpus++]);
		if (bad != NULL)
			break;
	}
	if (bad != NULL)
		bad_row(err, what, bad);
	else if (rc != SQLITE_DONE)
		db_fail(st, err, "%s", what);
	stmt_done(s);
	return bad == NULL && rc == SQLITE_DONE ? 0 : -1;
}

int
store_nodes_load(struct store *st,
    int (*cb)(const struct store_node *n, const struct inventory *inv,
    void *arg), void *arg, struct cerr *err)
{
	sqlite3_stmt *s = st->stmt[S_NODES_LOAD];
	struct store_node n;
	struct inventory *inv;
	char what[128], why[160];
	int rc, ret = 0;

	/* About 15 KiB: better not on the stack of a callback. */
	if ((inv = malloc(sizeof(*inv))) == NULL) {
		errno = ENOMEM;
		return cerr_set(err, ERR_INTERNAL, "load nodes: out of "
		    "memory");
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		memset(inv, 0, sizeof(*inv));
		n.name = (const char *)sqlite3_column_text(s, 0);
		n.address = (const char *)sqlite3_column_text(s, 1);
		n.state = (const char *)sqlite3_column_text(s, 2);
		n.reason = (const char *)sqlite3_column_text(s, 3);
		n.since_ms = sqlite3_column_int64(s, 4);
		if (n.name == NULL || n.address == NULL || n.state == NULL ||
		    n.reason == NULL) {
			/* NOT NULL columns: only an allocation failure. */
			ret = db_fail(st, err, "load nodes");
			break;
		}
		snprintf(what, sizeof(what), "load node %.64s", n.name);
		if (column_copy(s, 5, inv->source, sizeof(inv->source)) ==
		    -1) {
			ret = bad_row(err, what, "bad source");
			break;
		}
		if (column_uint(s, 6, &inv->ncpus) == -1) {
			ret = bad_row(err, what, "bad ncpus");
			break;
		}
		inv->memory_mb = (uint64_t)sqlite3_column_int64(s, 7);
		if (sqlite3_column_text(s, 8) == NULL ||
		    inventory_set_features(inv, (const char *)
		    sqlite3_column_text(s, 8), why, sizeof(why)) == -1) {
			ret = bad_row(err, what, "bad features");
			break;
		}
		if (load_gpus(st, n.name, inv, err) == -1) {
			ret = -1;
			break;
		}
		if (cb(&n, inv, arg) == -1) {
			if (err != NULL && err->code == ERR_NONE)
				cerr_set(err, ERR_INTERNAL, "load nodes: "
				    "stopped at node %.64s", n.name);
			ret = -1;
			break;
		}
	}
	if (ret == 0 && rc != SQLITE_DONE)
		ret = db_fail(st, err, "load nodes");
	stmt_done(s);
	free(inv);
	return ret;
}

/* Write p's GPU indices as "0,1,7" into buf ("" for none). */
static void
gpus_format(const struct placement *p, char *buf, size_t size)
{
	size_t len = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; i < p->ngpus && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%u",
		    i > 0 ? "," : "", p->gpus[i]);
}

/* Parse what gpus_format writes, and nothing else: decimal indices
 * without sign, space or leading zero, each below GPU_INDEX_LIMIT, one
 * comma between two, at most PLACE_MAX_GPUS. 0 or -1. */
static int
gpus_parse(const char *s, struct placement *p)
{
	unsigned v;

	p->ngpus = 0;
	if (*s == '\0')
		return 0;
	for (;;) {
		if (*s < '0' || *s > '9' || (*s == '0' && s[1] >= '0' &&
		    s[1] <= '9'))
			return -1;
		for (v = 0; *s >= '0' && *s <= '9'; s++) {
			v = v * 10 + (unsigned)(*s - '0');
			if (v >= GPU_INDEX_LIMIT)
				return -1;
		}
		if (p->ngpus == PLACE_MAX_GPUS)
			return -1;
		p->gpus[p->ngpus++] = v;
		if (*s == '\0')
			return 0;
		if (*s++ != ',')
			return -1;
	}
}

int
store_job_placement(struct store *st, uint64_t job_id,
    const struct placement *place, size_t n, struct cerr *err)
{
	const struct placement *p;
	struct binder b;
	char what[128], gpus[GPUS_TEXT_MAX];
	size_t i;
	unsigned j;

	snprintf(what, sizeof(what), "set placement of job %llu",
	    (unsigned long long)job_id);
	for (i = 0; i < n; i++) {
		p = &place[i];
		if (!fits(p->node, sizeof(p->node)) || p->node[0] == '\0')
			return bad_arg(err, what, "bad node name");
		if (p->ngpus > PLACE_MAX_GPUS)
			return bad_arg(err, what, "too many GPUs");
		for (j = 0; j < p->ngpus; j++)
			if (p->gpus[j] >= GPU_INDEX_LIMIT)
				return bad_arg(err, what,
				    "GPU index out of range");
	}

	sqlite3_bind_int64(st->stmt[S_PLACEMENT_DELETE], 1, (int64_t)job_id);
	if (stmt_exec(st, S_PLACEMENT_DELETE, err, what) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		p = &place[i];
		gpus_format(p, gpus, sizeof(gpus));
		b = (struct binder){ st->stmt[S_PLACEMENT_INSERT], 0,
		    SQLITE_OK };
		bind_int(&b, (int64_t)job_id);
		bind_int(&b, p->node_rank);
		bind_text(&b, p->node);
		bind_text(&b, gpus);
		if (binder_step(st, &b, err, what) == -1)
			return -1;
	}
	return 0;
}

void
store_nodes_scan_begin(struct store *st, struct store_nodes_scan *ps)
{
	ps->s = st->stmt[S_PLACEMENTS_LOAD];
	ps->buf = NULL;
	ps->cap = 0;
	ps->rc = sqlite3_step(ps->s);
}

/* Read one row of S_PLACEMENTS_LOAD into p. NULL, or what is wrong. */
static const char *
store_nodes_place_row(sqlite3_stmt *s, struct placement *p)
{
	const unsigned char *gpus;

	memset(p, 0, sizeof(*p));
	if (column_uint(s, 1, &p->node_rank) == -1)
		return "bad node rank";
	if (column_copy(s, 2, p->node, sizeof(p->node)) == -1 ||
	    p->node[0] == '\0')
		return "bad node name";
	gpus = sqlite3_column_text(s, 3);
	if (gpus == NULL || strlen((const char *)gpus) !=
	    (size_t)sqlite3_column_bytes(s, 3) ||
	    gpus_parse((const char *)gpus, p) == -1)
		return "bad GPU list";
	return NULL;
}

int
store_nodes_scan_fill(struct store *st, struct store_nodes_scan *ps,
    struct job *job, struct cerr *err)
{
	struct placement *grown;
	const unsigned char *node;
	const char *bad;
	char what[160];
	size_t n = 0;
	uint64_t id;

	for (; ps->rc == SQLITE_ROW; ps->rc = sqlite3_step(ps->s)) {
		id = (uint64_t)sqlite3_column_int64(ps->s, 0);
		if (id > job->id)
			break;
		if (id < job->id)
			continue;
		if (n == ps->cap) {
			grown = reallocarray(ps->buf, ps->cap ? ps->cap * 2 : 8,
			    sizeof(*ps->buf));
			if (grown == NULL) {
				errno = ENOMEM;
				return cerr_set(err, ERR_INTERNAL, "load job "
				    "%llu: out of memory",
				    (unsigned long long)job->id);
			}
			ps->buf = grown;
			ps->cap = ps->cap ? ps->cap * 2 : 8;
		}
		if ((bad = store_nodes_place_row(ps->s, &ps->buf[n])) != NULL) {
			node = sqlite3_column_text(ps->s, 2);
			snprintf(what, sizeof(what), "load job %llu: "
			    "placement on node %.64s",
			    (unsigned long long)job->id,
			    node != NULL ? (const char *)node : "?");
			return bad_row(err, what, bad);
		}
		n++;
	}
	/* The step may have failed before other calls on the connection
	 * (the jobs' scan), so its own code, not sqlite3_errmsg. */
	if (ps->rc != SQLITE_ROW && ps->rc != SQLITE_DONE) {
		errno = EIO;
		return cerr_set(err, ERR_INTERNAL, "load placement of job "
		    "%llu: %s", (unsigned long long)job->id,
		    sqlite3_errstr(ps->rc));
	}
	if (n > 0 && job_set_placement(job, ps->buf, n) == -1) {
		errno = ENOMEM;
		return cerr_set(err, ERR_INTERNAL, "load job %llu: out of "
		    "memory", (unsigned long long)job->id);
	}
	return 0;
}

void
store_nodes_scan_end(struct store_nodes_scan *ps)
{
	stmt_done(ps->s);
	free(ps->buf);
	ps->buf = NULL;
	ps->cap = 0;
}

int
store_task_exit(struct store *st, uint64_t job_id, uint32_t restart,
    unsigned rank, int wait_status, int64_t time_ms, struct cerr *err)
{
	struct binder b = { st->stmt[S_TASK_EXIT_INSERT], 0, SQLITE_OK };
	char what[96];

	bind_int(&b, (int64_t)job_id);
	bind_int(&b, restart);
	bind_int(&b, rank);
	bind_int(&b, wait_status);
	bind_int(&b, time_ms);
	snprintf(what, sizeof(what), "record exit of job %llu restart %u "
	    "rank %u", (unsigned long long)job_id, restart, rank);
	return binder_step(st, &b, err, what);
}

int
store_task_exits_load(struct store *st, uint64_t job_id, uint32_t restart,
    int (*cb)(unsigned rank, int wait_status, void *arg), void *arg,
    struct cerr *err)
{
	sqlite3_stmt *s = st->stmt[S_TASK_EXITS_LOAD];
	unsigned rank;
	int rc, ret = 0;

	sqlite3_bind_int64(s, 1, (int64_t)job_id);
	sqlite3_bind_int64(s, 2, restart);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (column_uint(s, 0, &rank) == -1) {
			char what[64];

			snprintf(what, sizeof(what), "load exits of job %llu",
			    (unsigned long long)job_id);
			ret = bad_row(err, what, "bad rank");
			break;
		}
		if (cb(rank, sqlite3_column_int(s, 1), arg) == -1) {
			if (err != NULL && err->code == ERR_NONE)
				cerr_set(err, ERR_INTERNAL, "load exits of "
				    "job %llu: stopped at rank %u",
				    (unsigned long long)job_id, rank);
			ret = -1;
			break;
		}
	}
	if (ret == 0 && rc != SQLITE_DONE)
		ret = db_fail(st, err, "load exits of job %llu",
		    (unsigned long long)job_id);
	stmt_done(s);
	return ret;
}

int
store_node_drain(struct store *st, const struct store_drain *d,
    struct cerr *err)
{
	struct binder b = { st->stmt[S_DRAIN_UPSERT], 0, SQLITE_OK };
	char what[96];

	bind_text(&b, d->node);
	bind_text(&b, d->reason);
	bind_text(&b, d->actor);
	bind_int(&b, d->time_ms);
	bind_int(&b, d->from_health ? 1 : 0);
	snprintf(what, sizeof(what), "drain node %.64s", d->node);
	return binder_step(st, &b, err, what);
}

int
store_node_undrain(struct store *st, const char *node, struct cerr *err)
{
	char what[96];

	sqlite3_bind_text(st->stmt[S_DRAIN_DELETE], 1, node, -1,
	    SQLITE_TRANSIENT);
	snprintf(what, sizeof(what), "resume node %.64s", node);
	return stmt_exec(st, S_DRAIN_DELETE, err, what);
}

int
store_node_delete(struct store *st, const char *name, struct cerr *err)
{
	char what[96];

	snprintf(what, sizeof(what), "delete node %.64s", name);
	if (store_node_undrain(st, name, err) == -1)
		return -1;
	sqlite3_bind_text(st->stmt[S_NODE_DELETE], 1, name, -1,
	    SQLITE_TRANSIENT);
	if (stmt_exec(st, S_NODE_DELETE, err, what) == -1)
		return -1;
	if (sqlite3_changes(st->db) == 0)
		return cerr_set(err, ERR_NOT_FOUND, "no node '%.64s'", name);
	return 0;
}

int
store_drains_load(struct store *st,
    int (*cb)(const struct store_drain *d, void *arg), void *arg,
    struct cerr *err)
{
	sqlite3_stmt *s = st->stmt[S_DRAINS_LOAD];
	struct store_drain d;
	int rc, ret = 0;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		d.node = (const char *)sqlite3_column_text(s, 0);
		d.reason = (const char *)sqlite3_column_text(s, 1);
		d.actor = (const char *)sqlite3_column_text(s, 2);
		d.time_ms = sqlite3_column_int64(s, 3);
		d.from_health = sqlite3_column_int(s, 4) != 0;
		if (d.node == NULL || d.reason == NULL || d.actor == NULL) {
			ret = db_fail(st, err, "load drains");
			break;
		}
		if (cb(&d, arg) == -1) {
			if (err != NULL && err->code == ERR_NONE)
				cerr_set(err, ERR_INTERNAL, "load drains: "
				    "stopped at node %.64s", d.node);
			ret = -1;
			break;
		}
	}
	if (ret == 0 && rc != SQLITE_DONE)
		ret = db_fail(st, err, "load drains");
	stmt_done(s);
	return ret;
}

int
store_suspect_put(struct store *st, const struct store_suspect *s,
    const struct store_evidence *ev, size_t n, struct cerr *err)
{
	struct binder b = { st->stmt[S_SUSPECT_UPSERT], 0, SQLITE_OK };
	char what[96];
	size_t i;

	snprintf(what, sizeof(what), "suspicion of node %.64s", s->node);
	bind_text(&b, s->node);
	bind_int(&b, s->exempt ? 1 : 0);
	bind_int(&b, s->cleared_ms);
	bind_text(&b, s->reason);
	bind_int(&b, s->drained_ms);
	if (binder_step(st, &b, err, what) == -1)
		return -1;
	sqlite3_bind_text(st->stmt[S_EVIDENCE_DELETE], 1, s->node, -1,
	    SQLITE_TRANSIENT);
	if (stmt_exec(st, S_EVIDENCE_DELETE, err, what) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		b = (struct binder){ st->stmt[S_EVIDENCE_INSERT], 0,
		    SQLITE_OK };
		bind_text(&b, s->node);
		bind_int(&b, ev[i].seq);
		bind_int(&b, ev[i].time_ms);
		bind_text(&b, ev[i].kind);
		bind_int(&b, (int64_t)ev[i].job_id);
		bind_text(&b, ev[i].user);
		bind_int(&b, ev[i].confirmed ? 1 : 0);
		bind_text(&b, ev[i].detail);
		if (binder_step(st, &b, err, what) == -1)
			return -1;
	}
	return 0;
}

int
store_suspects_load(struct store *st,
    int (*cb)(const struct store_suspect *s, void *arg),
    int (*evidence_cb)(const struct store_evidence *e, void *arg),
    void *arg, struct cerr *err)
{
	sqlite3_stmt *s = st->stmt[S_SUSPECTS_LOAD];
	struct store_suspect x;
	struct store_evidence e;
	int rc, ret = 0;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		x.node = (const char *)sqlite3_column_text(s, 0);
		x.exempt = sqlite3_column_int(s, 1) != 0;
		x.cleared_ms = sqlite3_column_int64(s, 2);
		x.reason = (const char *)sqlite3_column_text(s, 3);
		x.drained_ms = sqlite3_column_int64(s, 4);
		if (x.node == NULL || x.reason == NULL) {
			ret = db_fail(st, err, "load suspects");
			break;
		}
		if (cb(&x, arg) == -1) {
			ret = bad_row(err, "load suspects", x.node);
			break;
		}
	}
	if (ret == 0 && rc != SQLITE_DONE)
		ret = db_fail(st, err, "load suspects");
	stmt_done(s);
	if (ret == -1)
		return -1;
	s = st->stmt[S_EVIDENCE_LOAD];
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		e.node = (const char *)sqlite3_column_text(s, 0);
		e.seq = (uint32_t)sqlite3_column_int64(s, 1);
		e.time_ms = sqlite3_column_int64(s, 2);
		e.kind = (const char *)sqlite3_column_text(s, 3);
		e.job_id = (uint64_t)sqlite3_column_int64(s, 4);
		e.user = (const char *)sqlite3_column_text(s, 5);
		e.confirmed = sqlite3_column_int(s, 6) != 0;
		e.detail = (const char *)sqlite3_column_text(s, 7);
		if (e.node == NULL || e.kind == NULL || e.user == NULL ||
		    e.detail == NULL) {
			ret = db_fail(st, err, "load evidence");
			break;
		}
		if (evidence_cb(&e, arg) == -1) {
			ret = bad_row(err, "load evidence", e.node);
			break;
		}
	}
	if (ret == 0 && rc != SQLITE_DONE)
		ret = db_fail(st, err, "load evidence");
	stmt_done(s);
	return ret;
}
