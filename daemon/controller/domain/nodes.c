#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/log.h"
#include "lib/slot.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/store/store.h"
#include "daemon/controller/store/txq.h"

/* Longer than the agents' capped reconnect back-off (link.c). */
#define NODES_RESTART_GRACE_MS 10000

struct nodes {
	struct store *st;
	struct txq *q;
	struct node **tab;	/* sorted by name */
	size_t n;
	size_t cap;
	int64_t loaded_ms;
	/* conn_id -> node, a direct-mapped cache checked on every use (a
	 * stale slot costs one scan, never a wrong answer): every message
	 * from an agent looks its node up, and a scan per heartbeat made a
	 * 10,000-node cluster spend 85% of the controller's CPU here. */
	struct node **byconn;
	size_t byconn_mask;	/* slots - 1 */
};

const char *
node_state_name(enum node_state state)
{
	return state == NODE_UP ? "UP" : "DOWN";
}

unsigned
node_gpus_free(const struct node *n)
{
	unsigned i, free_gpus = 0;

	for (i = 0; i < n->inv->ngpus; i++)
		if (n->gpu_job[i] == 0)
			free_gpus++;
	return free_gpus;
}

unsigned
node_gpus_unavailable(const struct node *n)
{
	unsigned i, k = 0;

	if (n->state != NODE_UP)
		return n->inv->ngpus;
	for (i = 0; i < n->inv->ngpus && i < INV_MAX_GPUS; i++)
		if (n->gpu_job[i] == 0 && (n->drained ||
		    node_gpu_health(n, i) == HEALTH_FAILED))
			k++;
	return k;
}

static void
node_free(struct node *n)
{
	if (n == NULL)
		return;
	free(n->address);
	free(n->reason);
	free(n->drain_reason);
	free(n->drain_actor);
	free(n->inv);
	free(n->health);
	free(n);
}

static const char *
nodes_name_at(const void *base, size_t i)
{
	return ((struct node *const *)base)[i]->name;
}

static size_t
nodes_index(const struct nodes *ns, const char *name, bool *found)
{
	return slot_find(ns->tab, ns->n, nodes_name_at, name, found);
}

/* A node with empty strings, in no table; NULL (ENOMEM). */
static struct node *
node_new(const char *name)
{
	struct node *n;

	if ((n = calloc(1, sizeof(*n))) == NULL)
		return NULL;
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->address = strdup("");
	n->reason = strdup("");
	n->drain_reason = strdup("");
	n->drain_actor = strdup("");
	/* No GPUs and no verdict yet: a header each. */
	n->inv = calloc(1, inventory_size(0));
	n->health = calloc(1, inventory_health_size(0));
	if (n->address == NULL || n->reason == NULL ||
	    n->drain_reason == NULL || n->drain_actor == NULL ||
	    n->inv == NULL || n->health == NULL) {
		node_free(n);
		return NULL;
	}
	return n;
}

/* Room for one more node in the table. 0 or -1 (ENOMEM). */
static int
nodes_reserve(struct nodes *ns)
{
	struct node **tab;
	size_t cap;

	if (ns->n < ns->cap)
		return 0;
	cap = ns->cap ? ns->cap * 2 : 64;
	if ((tab = reallocarray(ns->tab, cap, sizeof(*tab))) == NULL)
		return -1;
	ns->tab = tab;
	ns->cap = cap;
	return 0;
}

/* Put n at index at (from nodes_index), with room reserved. */
static void
nodes_place(struct nodes *ns, size_t at, struct node *n)
{
	memmove(&ns->tab[at + 1], &ns->tab[at], (ns->n - at) *
	    sizeof(*ns->tab));
	ns->tab[at] = n;
	ns->n++;
}

/* The node called name, added (empty) when new; NULL (ENOMEM). */
static struct node *
nodes_insert(struct nodes *ns, const char *name)
{
	struct node *n;
	size_t at;
	bool found;

	at = nodes_index(ns, name, &found);
	if (found)
		return ns->tab[at];
	if (nodes_reserve(ns) == -1 || (n = node_new(name)) == NULL)
		return NULL;
	nodes_place(ns, at, n);
	return n;
}

static int
node_set_str(char **dst, const char *s)
{
	char *copy;

	if ((copy = strdup(s != NULL ? s : "")) == NULL)
		return -1;
	free(*dst);
	*dst = copy;
	return 0;
}

static int
nodes_load_cb(const struct store_node *sn, const struct inventory *inv,
    void *arg)
{
	struct nodes *ns = arg;
	struct node *n;
	struct inventory *copy;

	if ((n = nodes_insert(ns, sn->name)) == NULL ||
	    node_set_str(&n->address, sn->address) == -1 ||
	    node_set_str(&n->reason, sn->reason) == -1 ||
	    (copy = inventory_dup(inv)) == NULL)
		return -1;
	n->state = strcmp(sn->state, "UP") == 0 ? NODE_UP : NODE_DOWN;
	n->since_ms = sn->since_ms;
	free(n->inv);
	n->inv = copy;
	features_derive(n->inv, &n->derived);
	/* A restarted controller gives every node a full timeout, plus the
	 * agents' longest reconnect back-off, before calling it DOWN. */
	n->last_heartbeat_ms = ns->loaded_ms + NODES_RESTART_GRACE_MS;
	return 0;
}

static int
nodes_load_drain_cb(const struct store_drain *d, void *arg)
{
	struct nodes *ns = arg;
	struct node *n = nodes_get(ns, d->node);

	if (n == NULL)
		return 0;
	n->drained = true;
	n->drain_health = d->from_health;
	n->drain_ms = d->time_ms;
	if (node_set_str(&n->drain_reason, d->reason) == -1 ||
	    node_set_str(&n->drain_actor, d->actor) == -1)
		return -1;
	return 0;
}

struct nodes *
nodes_create(struct store *st, struct txq *q, int64_t now_ms,
    struct cerr *err)
{
	struct nodes *ns;

	if ((ns = calloc(1, sizeof(*ns))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	ns->st = st;
	ns->q = q;
	ns->loaded_ms = now_ms;
	if (store_nodes_load(st, nodes_load_cb, ns, err) == -1 ||
	    store_drains_load(st, nodes_load_drain_cb, ns, err) == -1) {
		nodes_destroy(ns);
		return NULL;
	}
	return ns;
}

void
nodes_destroy(struct nodes *ns)
{
	size_t i;

	if (ns == NULL)
		return;
	for (i = 0; i < ns->n; i++)
		node_free(ns->tab[i]);
	free(ns->tab);
	free(ns->byconn);
	free(ns);
}

struct node *
nodes_get(struct nodes *ns, const char *name)
{
	bool found;
	size_t at = nodes_index(ns, name, &found);

	return found ? ns->tab[at] : NULL;
}

size_t
node_features(const struct node *n, const char **v)
{
	return features_list(n->inv, &n->derived, v);
}

static size_t
nodes_conn_slot(const struct nodes *ns, uint64_t conn_id)
{
	return (size_t)((conn_id * 0x9E3779B97F4A7C15ULL) >> 20) &
	    ns->byconn_mask;
}

struct node *
nodes_by_conn(struct nodes *ns, uint64_t conn_id)
{
	struct node *n;
	size_t i, want;

	if (conn_id == 0)
		return NULL;
	/* Four slots per node; rebuilt empty when the nodes outgrow it. */
	want = 64;
	while (want < ns->n * 4)
		want *= 2;
	if (ns->byconn == NULL || ns->byconn_mask + 1 < want) {
		struct node **t = calloc(want, sizeof(*t));

		if (t != NULL) {
			free(ns->byconn);
			ns->byconn = t;
			ns->byconn_mask = want - 1;
		}
	}
	if (ns->byconn != NULL) {
		n = ns->byconn[nodes_conn_slot(ns, conn_id)];
		if (n != NULL && n->conn_id == conn_id)
			return n;
	}
	for (i = 0; i < ns->n; i++)
		if (ns->tab[i]->conn_id == conn_id) {
			if (ns->byconn != NULL)
				ns->byconn[nodes_conn_slot(ns, conn_id)] =
				    ns->tab[i];
			return ns->tab[i];
		}
	return NULL;
}

struct node **
nodes_all(struct nodes *ns, size_t *n)
{
	*n = ns->n;
	return ns->tab;
}

uint32_t
nodes_max_gpus(struct nodes *ns)
{
	uint32_t most = 0;
	size_t i;

	for (i = 0; i < ns->n; i++)
		if (ns->tab[i]->inv->ngpus > most)
			most = ns->tab[i]->inv->ngpus;
	return most;
}

/* Persist a node's row and an event, inside the shared transaction. */
static int
nodes_write(struct nodes *ns, const struct node *n, bool with_inventory,
    int64_t now_ms, const char *kind, const char *detail, struct cerr *err)
{
	struct store_node sn = { n->name, n->address,
	    node_state_name(n->state), n->reason, n->since_ms };

	if (txq_join(ns->q, err) == -1 || store_mark(ns->st, err) == -1)
		return -1;
	if ((with_inventory ? store_node_put(ns->st, &sn, n->inv, err) :
	    store_node_set_state(ns->st, n->name, sn.state, n->reason,
	    n->since_ms, err)) == -1 ||
	    store_event_append(ns->st, now_ms, 0, n->name, kind, n->name,
	    detail, err) == -1 ||
	    store_keep(ns->st, err) == -1) {
		store_undo(ns->st);
		return -1;
	}
	return 0;
}

/* A state change of n that could not be written (err), within its
 * budget: a database that refuses every write must not make each
 * heartbeat a log line. */
static void
nodes_state_unwritten(struct node *n, const char *state, int64_t now_ms,
    const struct cerr *err)
{
	unsigned long left = 0;

	if (!ratelim_allow(&n->state_log, now_ms, 1, 60000, &left))
		return;
	if (left > 0)
		log_warnx("node %s: cannot record %s (%lu more tries not "
		    "logged): %s", n->name, state, left, err->text);
	else
		log_warnx("node %s: cannot record %s: %s", n->name, state,
		    err->text);
}

/* Write a copy of n in state with reason (detail for the event), and make
 * it the node only once that took. 0, or -1 with err and n as it was. */
static int
nodes_set_state(struct nodes *ns, struct node *n, enum node_state state,
    const char *reason, const char *detail, int64_t now_ms,
    const char *kind, struct cerr *err)
{
	struct node next = *n;
	char *r;

	if ((r = strdup(reason)) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	next.state = state;
	next.since_ms = now_ms;
	next.reason = r;
	if (nodes_write(ns, &next, false, now_ms, kind, detail, err) == -1) {
		free(r);
		return -1;
	}
	free(n->reason);
	*n = next;
	return 0;
}

int
nodes_register(struct nodes *ns, const char *name, const char *address,
    const struct inventory *inv, bool spare, uint64_t conn_id,
    int64_t now_ms, struct cerr *err)
{
	struct node *n, *old, next;
	struct inventory *copy = NULL;
	char detail[160], *addr = NULL, *reason = NULL;
	bool found;
	size_t at;

	/* Everything is prepared in a copy (and a new node outside the
	 * table), written, and only then made the node: a registration that
	 * fails leaves the table as the database has it. */
	at = nodes_index(ns, name, &found);
	n = found ? ns->tab[at] : NULL;
	if ((!found && (nodes_reserve(ns) == -1 ||
	    (n = node_new(name)) == NULL)) ||
	    (addr = strdup(address != NULL && address[0] ? address :
	    name)) == NULL ||
	    (copy = inventory_dup(inv)) == NULL ||
	    (n->state != NODE_UP && (reason = strdup("")) == NULL)) {
		free(addr);
		free(copy);
		if (!found)
			node_free(n);
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	next = *n;
	next.address = addr;
	if (n->state != NODE_UP) {
		next.since_ms = now_ms;
		next.reason = reason;
	}
	next.state = NODE_UP;
	/* Slots beyond the GPUs it has are never cleared by a pass: clear
	 * them now, so that GPUs it has again start free. */
	if (inv->ngpus < INV_MAX_GPUS)
		memset(&next.gpu_job[inv->ngpus], 0, sizeof(next.gpu_job[0]) *
		    (INV_MAX_GPUS - inv->ngpus));
	next.inv = copy;
	features_derive(next.inv, &next.derived);
	next.spare = spare;
	next.conn_id = conn_id;
	next.last_heartbeat_ms = now_ms;
	snprintf(detail, sizeof(detail), "address=%s gpus=%u source=%s",
	    next.address, inv->ngpus, inv->source);
	if (nodes_write(ns, &next, true, now_ms, "node-register", detail,
	    err) == -1) {
		free(addr);
		free(copy);
		free(reason);
		if (!found)
			node_free(n);
		return -1;
	}
	/* A second connection for the same node replaces the first. */
	if ((old = nodes_by_conn(ns, conn_id)) != NULL && old != n)
		old->conn_id = 0;
	free(n->address);
	free(n->inv);
	if (reason != NULL)
		free(n->reason);
	*n = next;
	if (!found)
		nodes_place(ns, at, n);
	log_info("node %s: registered (%u GPUs, %s)", name, inv->ngpus,
	    n->address);
	return 0;
}

struct node *
nodes_heartbeat(struct nodes *ns, uint64_t conn_id, int64_t now_ms)
{
	struct node *n = nodes_by_conn(ns, conn_id);
	struct cerr err;

	if (n == NULL)
		return NULL;
	n->last_heartbeat_ms = now_ms;
	/* Declared DOWN while its connection lived on (a stalled controller,
	 * a slow network): its heartbeats say it is back. Its jobs have
	 * moved on; tasks of their old attempts are stopped by the caller.
	 * If that cannot be written it stays DOWN, as the database says,
	 * and the next heartbeat tries again. */
	if (n->state == NODE_DOWN) {
		if (nodes_set_state(ns, n, NODE_UP, "", "heartbeats resumed",
		    now_ms, "node-up", &err) == -1)
			nodes_state_unwritten(n, "UP", now_ms, &err);
		else
			log_info("node %s: UP again (heartbeats resumed)",
			    n->name);
	}
	return n;
}

void
nodes_disconnected(struct nodes *ns, uint64_t conn_id)
{
	struct node *n = nodes_by_conn(ns, conn_id);

	if (n != NULL) {
		log_info("node %s: agent disconnected", n->name);
		n->conn_id = 0;
	}
}

int
nodes_check_timeouts(struct nodes *ns, int64_t now_ms, int64_t timeout_ms,
    void (*cb)(struct node *n, void *arg), void *arg)
{
	struct cerr err;
	struct node *n;
	char reason[128];
	size_t i;
	int down = 0;

	for (i = 0; i < ns->n; i++) {
		n = ns->tab[i];
		if (n->state != NODE_UP ||
		    now_ms - n->last_heartbeat_ms <= timeout_ms)
			continue;
		snprintf(reason, sizeof(reason),
		    "no heartbeat for %lld ms (node_timeout %lld ms)",
		    (long long)(now_ms - n->last_heartbeat_ms),
		    (long long)timeout_ms);
		/* Not written: it stays UP, as the database says, and the
		 * next check tries again (its jobs move once it is DOWN). */
		if (nodes_set_state(ns, n, NODE_DOWN, reason, reason, now_ms,
		    "node-down", &err) == -1) {
			nodes_state_unwritten(n, "DOWN", now_ms, &err);
			continue;
		}
		log_warnx("node %s: DOWN: %s", n->name, reason);
		down++;
		if (cb != NULL)
			cb(n, arg);
	}
	return down;
}

void
nodes_add_allocation(struct nodes *ns, const struct job *job)
{
	const struct placement *p;
	struct node *n;
	size_t j, g;

	for (j = 0; j < job->nplace; j++) {
		p = &job->place[j];
		if ((n = nodes_get(ns, p->node)) == NULL)
			continue;
		if (job->spec.exclusive)
			n->exclusive = true;
		else if (job->spec.cpu_only)
			n->cpu_jobs++;
		for (g = 0; g < p->ngpus; g++)
			if (p->gpus[g] < n->inv->ngpus &&
			    p->gpus[g] < INV_MAX_GPUS)
				n->gpu_job[p->gpus[g]] = job->id;
	}
}

void
nodes_set_allocations(struct nodes *ns, const struct job *const *jobs,
    size_t njobs)
{
	struct node *n;
	size_t i;

	/* Only the GPUs a node has are ever read: clearing all 64 slots of
	 * every node touched 5 MB a pass at 10,000 nodes. */
	for (i = 0; i < ns->n; i++) {
		n = ns->tab[i];
		n->cpu_jobs = 0;
		n->exclusive = false;
		memset(n->gpu_job, 0, sizeof(n->gpu_job[0]) *
		    (n->inv->ngpus < INV_MAX_GPUS ? n->inv->ngpus :
		    INV_MAX_GPUS));
	}
	for (i = 0; i < njobs; i++)
		nodes_add_allocation(ns, jobs[i]);
}

const char *
node_drain_state(const struct node *n)
{
	unsigned i;

	if (!n->drained)
		return "";
	/* A CPU-only job holds the node, not a GPU. */
	if (n->cpu_jobs > 0 || n->exclusive)
		return "DRAINING";
	for (i = 0; i < n->inv->ngpus; i++)
		if (n->gpu_job[i] != 0)
			return "DRAINING";
	return "DRAINED";
}

enum health_state
node_gpu_health(const struct node *n, unsigned i)
{
	unsigned k;

	for (k = 0; k < n->health->ngpus; k++)
		if (n->health->gpus[k].index == i)
			return n->health->gpus[k].health;
	return HEALTH_OK;
}

/* "2026-12-01T18:04:05Z" for ms since the epoch. */
static void
nodes_time_utc(int64_t ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "%lld ms", (long long)ms);
}

/* Is draining n with reason a change? Without force a different reason
 * on a drained node is ERR_CONFLICT naming the drain in place (-1); the
 * same one is nothing to do (0). 1: write it. */
static int
nodes_drain_judge(const struct node *n, const char *reason, bool force,
    struct cerr *err)
{
	char when[32];

	if (!n->drained || force)
		return 1;
	if (strcmp(n->drain_reason, reason) == 0)
		return 0;
	nodes_time_utc(n->drain_ms, when, sizeof(when));
	return cerr_set(err, ERR_CONFLICT, "node %s is already drained by %s "
	    "at %s: '%s'; nothing changed (add --force to replace the "
	    "reason)", n->name, n->drain_actor, when, n->drain_reason);
}

/* A health drain is cleared only once the node reports healthy: 0, or
 * ERR_CONFLICT (-1). */
static int
nodes_resume_judge(const struct node *n, struct cerr *err)
{
	if (!n->drained || !n->drain_health || (n->state == NODE_UP &&
	    n->health->health == HEALTH_OK && n->health->ngpus == 0))
		return 0;
	return cerr_set(err, ERR_CONFLICT, "node %s was drained for "
	    "its health (%s) and does not report healthy yet (%s%s%s)",
	    n->name, n->drain_reason,
	    n->state != NODE_UP ? "DOWN" : health_name(n->health->health),
	    n->health->reason[0] ? ": " : "", n->health->reason);
}

/* Write the drain rows (drain) or their removal of v[i] where write[i],
 * each with its event, in one savepoint: all or none. */
static int
nodes_write_drains(struct nodes *ns, struct node *const *v, size_t n,
    const bool *write, bool drain, const char *reason, const char *actor,
    bool from_health, int64_t now_ms, struct cerr *err)
{
	struct store_drain d;
	size_t i;

	if (txq_join(ns->q, err) == -1 || store_mark(ns->st, err) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		if (!write[i])
			continue;
		d.node = v[i]->name;
		d.reason = reason;
		d.actor = actor;
		d.time_ms = now_ms;
		/* A health drain stays one when an admin re-drains. */
		d.from_health = from_health || (v[i]->drained &&
		    v[i]->drain_health);
		if ((drain ? store_node_drain(ns->st, &d, err) :
		    store_node_undrain(ns->st, v[i]->name, err)) == -1 ||
		    store_event_append(ns->st, now_ms, 0, v[i]->name,
		    drain ? "drain" : "resume", actor, drain ? reason : "",
		    err) == -1)
			goto undo;
	}
	if (store_keep(ns->st, err) == -1)
		goto undo;
	return 0;
undo:
	store_undo(ns->st);
	return -1;
}

int
nodes_drain_many(struct nodes *ns, struct node *const *v, size_t n,
    const char *reason, const char *actor, bool from_health, bool force,
    int64_t now_ms, size_t *changed, struct cerr *err)
{
	char **rs = NULL, **as = NULL;
	bool *write = NULL;
	size_t i, nw = 0;
	int rc = -1, j;

	*changed = 0;
	if ((write = calloc(n + 1, sizeof(*write))) == NULL ||
	    (rs = calloc(n + 1, sizeof(*rs))) == NULL ||
	    (as = calloc(n + 1, sizeof(*as))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto out;
	}
	/* Judge every node before writing any. */
	for (i = 0; i < n; i++) {
		if ((j = nodes_drain_judge(v[i], reason, force, err)) == -1)
			goto out;
		write[i] = j == 1;
		if (write[i] && ((rs[i] = strdup(reason)) == NULL ||
		    (as[i] = strdup(actor)) == NULL)) {
			cerr_set(err, ERR_INTERNAL, "out of memory");
			goto out;
		}
		nw += write[i];
	}
	if (nw > 0 && nodes_write_drains(ns, v, n, write, true, reason, actor,
	    from_health, now_ms, err) == -1)
		goto out;
	for (i = 0; i < n; i++) {
		if (!write[i])
			continue;
		free(v[i]->drain_reason);
		free(v[i]->drain_actor);
		v[i]->drain_reason = rs[i];
		v[i]->drain_actor = as[i];
		rs[i] = as[i] = NULL;
		v[i]->drain_health = from_health || (v[i]->drained &&
		    v[i]->drain_health);
		v[i]->drained = true;
		v[i]->drain_ms = now_ms;
		log_info("node %s: drained by %s: %s", v[i]->name, actor,
		    reason);
	}
	*changed = nw;
	rc = 0;
out:
	for (i = 0; rs != NULL && as != NULL && i < n; i++) {
		free(rs[i]);
		free(as[i]);
	}
	free(rs);
	free(as);
	free(write);
	return rc;
}

int
nodes_drain(struct nodes *ns, struct node *n, const char *reason,
    const char *actor, bool from_health, int64_t now_ms, struct cerr *err)
{
	size_t changed;

	return nodes_drain_many(ns, &n, 1, reason, actor, from_health, true,
	    now_ms, &changed, err);
}

/* A deleted node's rows are gone once this runs with committed: only
 * then does it leave memory (a failed commit leaves both as they were;
 * the controller reloads jobs on abort, not nodes). */
struct nodes_deletion {
	struct nodes *ns;
	char name[PEER_NAME_MAX + 1];
	char actor[PEER_NAME_MAX + 1];
};

static void
nodes_delete_cb(void *arg, bool committed)
{
	struct nodes_deletion *d = arg;
	struct nodes *ns = d->ns;
	struct node *n;
	bool found;
	size_t at, i;

	at = nodes_index(ns, d->name, &found);
	n = found ? ns->tab[at] : NULL;
	if (!committed) {
		log_warnx("node %s: not deleted: the change could not be saved",
		    d->name);
	} else if (n != NULL && (n->state != NODE_DOWN || n->conn_id != 0)) {
		/* Its agent registered again before the commit, writing its
		 * row back: it stays. */
		log_info("node %s: deleted by %s, but it registered again",
		    d->name, d->actor);
	} else if (n != NULL) {
		/* No cached connection slot may point at it any more. */
		for (i = 0; ns->byconn != NULL && i <= ns->byconn_mask; i++)
			if (ns->byconn[i] == n)
				ns->byconn[i] = NULL;
		memmove(&ns->tab[at], &ns->tab[at + 1],
		    (ns->n - at - 1) * sizeof(*ns->tab));
		ns->n--;
		node_free(n);
		log_info("node %s: deleted by %s", d->name, d->actor);
	}
	free(d);
}

int
nodes_delete(struct nodes *ns, struct node *n, const char *actor,
    int64_t now_ms, struct cerr *err)
{
	struct nodes_deletion *d;
	bool found;
	size_t at;

	if (n->state != NODE_DOWN || n->conn_id != 0)
		return cerr_set(err, ERR_CONFLICT, "node %s is %s; only a DOWN "
		    "node without an agent connected can be deleted", n->name,
		    n->state != NODE_DOWN ? node_state_name(n->state) :
		    "DOWN but its agent is still connected");
	at = nodes_index(ns, n->name, &found);
	if (!found || ns->tab[at] != n)
		return cerr_set(err, ERR_NOT_FOUND, "no node '%s'", n->name);
	if ((d = calloc(1, sizeof(*d))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	d->ns = ns;
	snprintf(d->name, sizeof(d->name), "%s", n->name);
	snprintf(d->actor, sizeof(d->actor), "%s", actor);
	if (txq_join(ns->q, err) == -1 || store_mark(ns->st, err) == -1) {
		free(d);
		return -1;
	}
	if (store_node_delete(ns->st, n->name, err) == -1 ||
	    store_event_append(ns->st, now_ms, 0, n->name, "node-delete",
	    actor, "", err) == -1 || store_keep(ns->st, err) == -1) {
		store_undo(ns->st);
		free(d);
		return -1;
	}
	/* Memory follows once the commit is known (before the reply, which
	 * is deferred after this). Without memory for that (the rows are
	 * already written), it follows at once, as it used to. */
	if (txq_defer(ns->q, nodes_delete_cb, d) == -1)
		nodes_delete_cb(d, true);
	return 0;
}

int
nodes_resume_many(struct nodes *ns, struct node *const *v, size_t n,
    const char *actor, int64_t now_ms, size_t *changed, struct cerr *err)
{
	bool *write;
	size_t i, nw = 0;

	*changed = 0;
	for (i = 0; i < n; i++)
		if (nodes_resume_judge(v[i], err) == -1)
			return -1;
	if ((write = calloc(n + 1, sizeof(*write))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	for (i = 0; i < n; i++)
		nw += (write[i] = v[i]->drained);
	if (nw > 0 && nodes_write_drains(ns, v, n, write, false, "", actor,
	    false, now_ms, err) == -1) {
		free(write);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (!write[i])
			continue;
		v[i]->drained = false;
		v[i]->drain_health = false;
		node_set_str(&v[i]->drain_reason, "");
		log_info("node %s: resumed by %s", v[i]->name, actor);
	}
	free(write);
	*changed = nw;
	return 0;
}

int
nodes_resume(struct nodes *ns, struct node *n, const char *actor,
    int64_t now_ms, struct cerr *err)
{
	size_t changed;

	return nodes_resume_many(ns, &n, 1, actor, now_ms, &changed, err);
}

/* One line naming what is not OK, for events and reasons. */
static void
health_summary(const struct node_health *h, char *buf, size_t len)
{
	size_t off;
	unsigned i;

	off = (size_t)snprintf(buf, len, "%s%s%s", health_name(h->health),
	    h->reason[0] ? ": " : "", h->reason);
	for (i = 0; i < h->ngpus && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "; gpu %u %s%s%s",
		    h->gpus[i].index, health_name(h->gpus[i].health),
		    h->gpus[i].reason[0] ? " " : "", h->gpus[i].reason);
}

bool
nodes_set_health(struct nodes *ns, struct node *n, const struct node_health *h,
    int64_t now_ms)
{
	char before[512], after[512];
	struct node_health *copy;
	struct cerr err;

	health_summary(n->health, before, sizeof(before));
	health_summary(h, after, sizeof(after));
	/* Sized to its entries: a few bytes for a healthy node instead of
	 * room for 64 GPU verdicts. The same size is overwritten in place;
	 * without memory the old verdict stays (and is said). */
	if (h->ngpus <= INV_MAX_GPUS && h->ngpus == n->health->ngpus)
		memcpy(n->health, h, inventory_health_size(h->ngpus));
	else if ((copy = inventory_health_dup(h)) != NULL) {
		free(n->health);
		n->health = copy;
	} else {
		log_warnx("node %s: cannot keep its health: %s", n->name,
		    strerror(errno));
		return false;
	}
	if (strcmp(before, after) == 0)
		return false;
	log_info("node %s: health %s", n->name, after);
	if (txq_join(ns->q, &err) == -1 ||
	    store_event_append(ns->st, now_ms, 0, n->name, "health", n->name,
	    after, &err) == -1)
		log_warnx("node %s: cannot record health: %s", n->name,
		    err.text);
	return true;
}
