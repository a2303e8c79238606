/* The controller's nodes: the table rebuilt from the database at start,
 * registrations (inventory, address), heartbeats (kept in memory, not one
 * commit each), and UP/DOWN transitions, each persisted with its event.
 * GPU allocations are not stored here twice: they are derived from the
 * running jobs' placements (nodes_set_allocations). */
#ifndef COHORT_CONTROLLER_NODES_H
#define COHORT_CONTROLLER_NODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/features.h"
#include "lib/inventory.h"
#include "lib/job.h"
#include "lib/ratelim.h"

struct store;
struct txq;
struct nodes;

enum node_state {
	NODE_DOWN = 0,
	NODE_UP,
};

struct node {
	char name[PEER_NAME_MAX + 1];
	char *address;			/* never NULL */
	enum node_state state;
	char *reason;			/* never NULL */
	int64_t since_ms;		/* when it entered its state */
	int64_t last_heartbeat_ms;	/* in memory only */
	uint64_t conn_id;		/* the agent's connection; 0: none */
	/* Never NULL; sized to its GPUs (inventory_dup: about 4.4 KiB at
	 * 8 GPUs instead of 20 KiB), so never copied whole. */
	struct inventory *inv;
	/* What inv implies (lib/features.h), beside inv.features, the
	 * configured ones: computed here whenever inv is set (registration,
	 * load), never stored, so the controller's rule is the one rule. */
	struct features_derived derived;
	uint64_t gpu_job[INV_MAX_GPUS];	/* allocated to; 0: free */
	/* Jobs that hold the node but maybe no GPU (as gpu_job[], from
	 * the allocations): CPU-only jobs on it, and whether an exclusive
	 * job holds it. */
	uint32_t cpu_jobs;
	bool exclusive;
	/* The latest verdict (memory only); never NULL; sized to its
	 * entries (inventory_health_dup), so never copied whole. */
	struct node_health *health;
	bool spare;			/* hot spare: replacements only */
	bool drained;			/* no new work */
	bool drain_health;		/* drained by its health */
	char *drain_reason;		/* never NULL */
	char *drain_actor;		/* never NULL */
	int64_t drain_ms;
	/* Log budgets for what the controller refuses from this agent
	 * (reports.h) and for the tasks it tells it to stop. */
	struct ratelim report_log;
	struct ratelim stop_log;
	/* For a DOWN or UP that could not be written: retried at every
	 * check or heartbeat, said once a minute. */
	struct ratelim state_log;
};

/* Nodes loaded from the store wait for their agents until now_ms plus a
 * grace before they may be timed out. */
struct nodes *nodes_create(struct store *st, struct txq *q, int64_t now_ms,
    struct cerr *err);
void nodes_destroy(struct nodes *ns);

/* An agent registered on connection conn_id: store its inventory and
 * address, mark it UP. 0, or -1 with err. */
int nodes_register(struct nodes *ns, const char *name, const char *address,
    const struct inventory *inv, bool spare, uint64_t conn_id,
    int64_t now_ms, struct cerr *err);
/* A heartbeat from the node on conn_id; unknown connections are ignored. */
struct node *nodes_heartbeat(struct nodes *ns, uint64_t conn_id,
    int64_t now_ms);
/* The connection went away; the node stays UP until its heartbeats are
 * overdue (a controller restart must not take nodes down). */
void nodes_disconnected(struct nodes *ns, uint64_t conn_id);
/* Mark DOWN every UP node whose last heartbeat is older than timeout_ms.
 * Calls cb for each node that went down. Returns how many did. */
int nodes_check_timeouts(struct nodes *ns, int64_t now_ms,
    int64_t timeout_ms, void (*cb)(struct node *n, void *arg), void *arg);

struct node *nodes_get(struct nodes *ns, const char *name);
/* n's configured then derived features into v[0..FEATURES_MAX)
 * (borrowed); how many. What --constraint matches. */
size_t node_features(const struct node *n, const char **v);
struct node *nodes_by_conn(struct nodes *ns, uint64_t conn_id);
/* All nodes, by name; borrowed array of *n entries. */
struct node **nodes_all(struct nodes *ns, size_t *n);
/* The GPUs of the largest node: what a whole-node job counts per node
 * (cohort queues, the per-queue metrics). */
uint32_t nodes_max_gpus(struct nodes *ns);

/* Recompute every node's gpu_job[] from the placements of the given
 * jobs (those holding resources). */
void nodes_set_allocations(struct nodes *ns, const struct job *const *jobs,
    size_t njobs);
/* Add one job's placement to its nodes' gpu_job[] (a start within a
 * pass, without recomputing every node). */
void nodes_add_allocation(struct nodes *ns, const struct job *job);

/* Drain a node (no new work), recording who, why and when; from_health
 * marks a drain that a resume may clear only once the node reports
 * healthy. Draining a drained node replaces the reason. 0 or -1. */
int nodes_drain(struct nodes *ns, struct node *n, const char *reason,
    const char *actor, bool from_health, int64_t now_ms, struct cerr *err);
/* Drain v[0..n) (distinct nodes) all or none: every node is judged
 * first, then the drain rows and their events are written in one
 * savepoint. Without force, a node already drained with another reason
 * is ERR_CONFLICT (the text names its reason, who and when) and nothing
 * changes; with the same reason it is left as it is. With force the
 * reason, actor and time are replaced; a health drain stays one (resume
 * still waits for a healthy report). *changed: how many were written.
 * 0 or -1 with err. */
int nodes_drain_many(struct nodes *ns, struct node *const *v, size_t n,
    const char *reason, const char *actor, bool from_health, bool force,
    int64_t now_ms, size_t *changed, struct cerr *err);
/* Undo a drain. ERR_CONFLICT when the drain came from health and the node
 * does not report healthy now. A node not drained is fine. */
int nodes_resume(struct nodes *ns, struct node *n, const char *actor,
    int64_t now_ms, struct cerr *err);
/* Resume v[0..n) all or none: ERR_CONFLICT, nothing changed, when any is
 * a health drain that cannot be cleared yet; the rest in one savepoint.
 * *changed: how many were drained. 0 or -1 with err. */
int nodes_resume_many(struct nodes *ns, struct node *const *v, size_t n,
    const char *actor, int64_t now_ms, size_t *changed, struct cerr *err);
/* Remove a node that is DOWN with no agent connected (ERR_CONFLICT
 * otherwise) from the store, with a node-delete event, in the open
 * transaction; it leaves memory (n is freed) once that commits, and
 * stays if the commit fails or its agent registered again meanwhile.
 * The caller makes sure no job holds it. 0 or -1. */
int nodes_delete(struct nodes *ns, struct node *n, const char *actor,
    int64_t now_ms, struct cerr *err);
/* Record the node's health verdict; an event when it changes. Returns
 * true when it changed. */
bool nodes_set_health(struct nodes *ns, struct node *n,
    const struct node_health *h, int64_t now_ms);
/* "", "DRAINING" (jobs still run there) or "DRAINED" (empty). */
const char *node_drain_state(const struct node *n);
/* The health of GPU i (OK unless the latest verdict says otherwise). */
enum health_state node_gpu_health(const struct node *n, unsigned i);

const char *node_state_name(enum node_state state);
unsigned node_gpus_free(const struct node *n);
/* GPUs new work cannot get besides those jobs hold: every GPU of a DOWN
 * node; on an UP one, those no job holds of a drained node, and FAILED
 * ones no job holds. */
unsigned node_gpus_unavailable(const struct node *n);

#endif
