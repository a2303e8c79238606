/* Nodes as users see them, and task logs fetched through the agents. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/hostlist.h"
#include "daemon/controller/domain/cluster.h"
#include "daemon/controller/domain/recovery.h"
#include "daemon/sched/topo.h"
#include "daemon/controller/domain/jobs.h"
#include "lib/log.h"
#include "lib/text.h"
#include "lib/wire.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/rpc/rpc_int.h"
#include "daemon/controller/rpc/server.h"
#include "daemon/controller/domain/steps.h"
#include "daemon/controller/store/store.h"
#include "daemon/controller/domain/suspect.h"

#define LOGS_MAX (1024u * 1024)
/* Jobs one node lists: one per GPU, and this many CPU-only jobs (which
 * hold no GPU) besides. */
#define RPC_NODE_CPU_JOBS 64
#define RPC_NODE_JOBS (INV_MAX_GPUS + RPC_NODE_CPU_JOBS)

/* The CPU-only jobs on n (gpu_job[] does not name them), after the jobs
 * already in jobs[0 .. pb->n_jobs); at most RPC_NODE_CPU_JOBS. Only for
 * a node that has some, so other nodes cost nothing. */
static void
rpc_node_cpu_jobs(const struct rpc *rpc, const struct node *n,
    Cohort__V1__Node *pb, uint64_t *jobs)
{
	const struct job **active;
	size_t i, na, room = pb->n_jobs + RPC_NODE_CPU_JOBS;

	if ((n->cpu_jobs == 0 && !n->exclusive) ||
	    jobs_active(rpc->jobs, &active, &na) == -1)
		return;
	for (i = 0; i < na && pb->n_jobs < room; i++)
		if (active[i]->spec.cpu_only &&
		    job_node_placement(active[i], n->name) != NULL)
			jobs[pb->n_jobs++] = active[i]->id;
	free(active);
}

/* Its NVLink block and torus coordinate, from the topology. */
static void
rpc_node_place(const struct rpc *rpc, const struct node *n,
    Cohort__V1__Node *pb)
{
	const struct topo_torus *tt;
	uint32_t c[3];
	int32_t b;

	if (rpc->topo == NULL)
		return;
	if ((b = topo_node_block(rpc->topo, n->name)) >= 0)
		pb->block = (char *)topo_block_name(rpc->topo, (size_t)b);
	if ((tt = topo_torus(rpc->topo)) != NULL &&
	    topo_torus_coord(tt, n->name, c) == 0) {
		pb->has_torus_x = pb->has_torus_y = pb->has_torus_z = 1;
		pb->torus_x = c[0];
		pb->torus_y = c[1];
		pb->torus_z = c[2];
	}
}

/* The failures attributed to n (suspect.h): borrowed strings. */
static void
rpc_node_suspect(const struct rpc *rpc, const struct node *n,
    Cohort__V1__Node *pb)
{
	struct suspect *s = rpc->cluster != NULL ?
	    cluster_suspect(rpc->cluster) : NULL;
	const struct suspect_node *sn = suspect_get(s, n->name);

	if (s == NULL)
		return;
	pb->has_suspect_score = pb->has_suspect_exempt = 1;
	pb->suspect_score = suspect_score(s, n->name, clock_now_ms());
	pb->suspect_exempt = sn != NULL && sn->exempt;
	if (sn == NULL)
		return;
	if (sn->reason[0] != '\0')
		pb->suspect_reason = (char *)sn->reason;
	if (sn->text[0] != '\0')
		pb->suspect_evidence = (char *)sn->text;
}

/* Fill pb from n; jobs[] (max RPC_NODE_JOBS) receives the distinct jobs
 * on it, derived[] (FEATURES_DERIVED_MAX) its derived features. Release
 * the inventory with wire_inventory_pb_release. */
static int
rpc_node_to_pb(const struct rpc *rpc, const struct node *n,
    Cohort__V1__Node *pb, Cohort__V1__Inventory *inv, uint64_t *jobs,
    char **derived)
{
	unsigned i, k;
	int32_t leaf;

	cohort__v1__node__init(pb);
	if (wire_inventory_to_pb(n->inv, inv) == -1)
		return -1;
	pb->name = (char *)n->name;
	pb->state = (char *)node_state_name(n->state);
	pb->drain = (char *)node_drain_state(n);
	/* A drain's reason says more than the UP/DOWN one. */
	pb->reason = n->drained ? n->drain_reason : n->reason;
	pb->address = n->address;
	pb->inventory = inv;
	/* The configured features travel in the inventory; these are the
	 * controller's, by its rule (lib/features.h). */
	for (i = 0; i < n->derived.n && i < FEATURES_DERIVED_MAX; i++)
		derived[i] = (char *)n->derived.v[i];
	pb->n_derived_features = i;
	pb->derived_features = derived;
	pb->has_last_heartbeat_ms = pb->has_since_ms = 1;
	pb->last_heartbeat_ms = n->last_heartbeat_ms;
	pb->since_ms = n->since_ms;
	pb->has_spare = 1;
	pb->spare = n->spare;
	pb->has_gpus_total = pb->has_gpus_free = 1;
	pb->gpus_total = n->inv->ngpus;
	pb->gpus_free = node_gpus_free(n);
	pb->has_gpus_unavailable = 1;
	pb->gpus_unavailable = node_gpus_unavailable(n);
	if (n->drained) {
		pb->drain_actor = n->drain_actor;
		pb->has_drain_time_ms = pb->has_drain_health = 1;
		pb->drain_time_ms = n->drain_ms;
		pb->drain_health = n->drain_health;
	}
	/* What a DOWN node last reported is not known to hold: its health
	 * and its GPUs' are left unset (UNKNOWN). */
	pb->has_health = n->state == NODE_UP;
	pb->health = n->health->health == HEALTH_FAILED ?
	    COHORT__V1__HEALTH__HEALTH_FAILED :
	    n->health->health == HEALTH_DEGRADED ?
	    COHORT__V1__HEALTH__HEALTH_DEGRADED : COHORT__V1__HEALTH__HEALTH_OK;
	leaf = rpc->topo != NULL ? topo_node_leaf(rpc->topo, n->name) : -1;
	if (leaf >= 0)
		pb->switch_name = (char *)topo_switch_name(rpc->topo,
		    (size_t)leaf);
	rpc_node_place(rpc, n, pb);
	rpc_node_suspect(rpc, n, pb);
	for (i = 0; i < n->inv->ngpus; i++) {
		inv->gpus[i]->has_health = n->state == NODE_UP;
		inv->gpus[i]->health = node_gpu_health(n, i) ==
		    HEALTH_FAILED ? COHORT__V1__HEALTH__HEALTH_FAILED :
		    node_gpu_health(n, i) == HEALTH_DEGRADED ?
		    COHORT__V1__HEALTH__HEALTH_DEGRADED :
		    COHORT__V1__HEALTH__HEALTH_OK;
		inv->gpus[i]->has_job_id = n->gpu_job[i] != 0;
		inv->gpus[i]->job_id = n->gpu_job[i];
		if (n->gpu_job[i] == 0)
			continue;
		for (k = 0; k < pb->n_jobs; k++)
			if (jobs[k] == n->gpu_job[i])
				break;
		if (k == pb->n_jobs)
			jobs[pb->n_jobs++] = n->gpu_job[i];
	}
	rpc_node_cpu_jobs(rpc, n, pb, jobs);
	pb->jobs = jobs;
	return 0;
}

/* The first of all[0..n) (sorted by name) that sorts after name. */
static size_t
rpc_nodes_after(struct node *const *all, size_t n, const char *name)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (strcmp(all[mid]->name, name) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The nodes lr->names (hostlists) name that exist and sort after
 * lr->after_name, by name, into a new array of *n; names that match no
 * node are left for the client to report. NULL after an error reply (a
 * malformed or oversized list). */
static struct node **
rpc_nodes_pick(struct rpc *rpc, struct conn *c, uint64_t id,
    const Cohort__V1__ListNodesRequest *lr, size_t *n)
{
	struct node **v, *nd;
	char **names, why[256];
	size_t i, count;

	why[0] = '\0';
	if (hostlist_expand_args(lr->names, lr->n_names, HOSTLIST_NODES_MAX,
	    &names, &count, why, sizeof(why)) == -1) {
		rpc_error(rpc, c, id, errno == ENOMEM ? ERR_INTERNAL :
		    ERR_INVALID, errno == ENOMEM ? "out of memory" : why[0] ?
		    why : "names: not a hostlist", false);
		return NULL;
	}
	if ((v = calloc(count + 1, sizeof(*v))) == NULL) {
		hostlist_free(names, count);
		rpc_error(rpc, c, id, ERR_INTERNAL, "out of memory", false);
		return NULL;
	}
	*n = 0;
	for (i = 0; i < count; i++)
		if ((lr->after_name == NULL ||
		    strcmp(names[i], lr->after_name) > 0) &&
		    (nd = nodes_get(rpc->nodes, names[i])) != NULL)
			v[(*n)++] = nd;
	hostlist_free(names, count);
	return v;
}

void
rpc_list_nodes(struct rpc *rpc, struct conn *c,
    const Cohort__V1__Envelope *req)
{
	const Cohort__V1__ListNodesRequest *lr = req->list_nodes;
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__ListNodesReply rep = COHORT__V1__LIST_NODES_REPLY__INIT;
	Cohort__V1__Node *pbs = NULL, **ptrs = NULL;
	Cohort__V1__Inventory *invs = NULL;
	uint64_t (*jobs)[RPC_NODE_JOBS] = NULL;
	char *(*derived)[FEATURES_DERIVED_MAX] = NULL;
	struct node **all, **sel, **named = NULL;
	size_t i, n, total, first, max, sz, bytes = 0, done = 0;

	all = nodes_all(rpc->nodes, &total);
	first = lr->after_name != NULL ?
	    rpc_nodes_after(all, total, lr->after_name) : 0;
	sel = all + first;
	total -= first;
	if (lr->n_names > 0) {
		if ((named = rpc_nodes_pick(rpc, c, req->id, lr, &total)) ==
		    NULL)
			return;
		sel = named;
	}
	max = rpc_page_max(rpc, lr->has_limit, lr->limit);
	n = total < max ? total : max;
	if (n > 0 && ((pbs = calloc(n, sizeof(*pbs))) == NULL ||
	    (ptrs = calloc(n, sizeof(*ptrs))) == NULL ||
	    (invs = calloc(n, sizeof(*invs))) == NULL ||
	    (jobs = calloc(n, sizeof(*jobs))) == NULL ||
	    (derived = calloc(n, sizeof(*derived))) == NULL))
		goto nomem;
	for (done = 0; done < n; done++) {
		if (rpc_node_to_pb(rpc, sel[done], &pbs[done],
		    &invs[done], jobs[done], derived[done]) == -1)
			goto nomem;
		sz = protobuf_c_message_get_packed_size(&pbs[done].base);
		if (done > 0 && bytes + sz > RPC_PAGE_BYTES) {
			wire_inventory_pb_release(&invs[done]);
			break;
		}
		bytes += sz;
		ptrs[done] = &pbs[done];
	}
	rep.n_nodes = done;
	rep.nodes = ptrs;
	rep.has_has_more = 1;
	rep.has_more = done < total;
	rep.next_after = done > 0 ? sel[done - 1]->name : NULL;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_LIST_NODES_REPLY;
	env.list_nodes_reply = &rep;
	rpc_send(rpc, c, &env, false);
	goto out;
nomem:
	rpc_error(rpc, c, req->id, ERR_INTERNAL, "out of memory", false);
out:
	for (i = 0; i < done; i++)
		wire_inventory_pb_release(&invs[i]);
	free(jobs);
	free(derived);
	free(invs);
	free(ptrs);
	free(pbs);
	free(named);
}

void
rpc_get_node(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__GetNodeReply rep = COHORT__V1__GET_NODE_REPLY__INIT;
	Cohort__V1__Node pb;
	Cohort__V1__Inventory inv;
	uint64_t jobs[RPC_NODE_JOBS];
	char *derived[FEATURES_DERIVED_MAX];
	struct node *n;
	char text[128];

	if ((n = nodes_get(rpc->nodes, req->get_node->name)) == NULL) {
		snprintf(text, sizeof(text), "no node '%.64s'",
		    req->get_node->name);
		rpc_error(rpc, c, req->id, ERR_NOT_FOUND, text, false);
		return;
	}
	if (rpc_node_to_pb(rpc, n, &pb, &inv, jobs, derived) == -1) {
		rpc_error(rpc, c, req->id, ERR_INTERNAL, "out of memory", false);
		return;
	}
	rep.node = &pb;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_GET_NODE_REPLY;
	env.get_node_reply = &rep;
	rpc_send(rpc, c, &env, false);
	wire_inventory_pb_release(&inv);
}

/* A logs request waiting for the agent's answer. From the moment it is
 * forwarded, the largest answer it can bring is reserved on the
 * connection (conn_reserve): it counts toward max_requests_in_flight and
 * the output limit, so a client that pipelines reads and does not read
 * the answers stops being read instead of having them all queued. */
struct logs_wait {
	struct rpc *rpc;
	struct logs_wait *next, *prev;	/* rpc->logs_waits */
	uint64_t conn_id;
	uint64_t req_id;
	uint64_t job_id;
	uint64_t offset;
	/* What is read: its attempt is set to the one read before the
	 * agent is asked, so the answer can say which. */
	struct log_read r;
	size_t reserved;	/* on the connection, if it still exists */
	struct rpc_timing timing;	/* the request's, for its latency */
};

/* Agent log reads one connection may have outstanding: more are refused
 * (ERR_LIMIT) until an answer comes. cohort logs needs one at a time,
 * and 16 answers of 1 MiB fill the output limit anyway. */
#define RPC_LOGS_PER_CONN 16
/* A LogsReply's bytes besides the data (ids, offset, flags, framing). */
#define RPC_LOGS_OVERHEAD 64

static unsigned
rpc_logs_outstanding(const struct rpc *rpc, uint64_t cid)
{
	const struct logs_wait *w;
	unsigned n = 0;

	for (w = rpc->logs_waits; w != NULL; w = w->next)
		if (w->conn_id == cid)
			n++;
	return n;
}

/* Unlink w and give its reservation back to its connection, if that is
 * still open (a closed one is never touched: it is looked up by id). */
static void
rpc_logs_wait_free(struct logs_wait *w)
{
	struct rpc *rpc = w->rpc;
	struct conn *c;

	if (w->prev != NULL)
		w->prev->next = w->next;
	else
		rpc->logs_waits = w->next;
	if (w->next != NULL)
		w->next->prev = w->prev;
	if (w->reserved > 0 && rpc->srv != NULL &&
	    (c = server_conn(rpc->srv, w->conn_id)) != NULL)
		server_conn_release(c, w->reserved);
	free(w);
}

/* Free w and send env (or an error when text is not NULL) as the reply to
 * the logs request w waited for, timed as that request. */
static void
rpc_logs_done_send(struct rpc *rpc, struct logs_wait *w, uint64_t cid,
    const Cohort__V1__Envelope *env, enum err_code code, const char *text)
{
	struct rpc_timing saved = rpc_timing_swap(rpc, w->timing);

	rpc_logs_wait_free(w);
	if (text != NULL)
		rpc_error_to(rpc, cid, env->id, code, text);
	else
		rpc_send_to(rpc, cid, env);
	rpc_timing_swap(rpc, saved);
}

static void
rpc_logs_done(void *arg, const uint8_t *data, size_t len,
    const struct cerr *err)
{
	struct logs_wait *w = arg;
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__LogsReply rep = COHORT__V1__LOGS_REPLY__INIT;
	const struct job *job = jobs_get(w->rpc->jobs, w->job_id);
	struct rpc *rpc = w->rpc;
	uint64_t cid = w->conn_id;
	char text[sizeof(err->text) + PEER_NAME_MAX];

	/* The reply reserves its real size itself (rpc_send_to). */
	if (err != NULL) {
		env.id = w->req_id;
		/* An earlier attempt is asked of the node that runs the rank
		 * now; that attempt may have run elsewhere. */
		if (err->code == ERR_NOT_FOUND && job != NULL &&
		    w->r.attempt < job->attempt)
			snprintf(text, sizeof(text), "job %" PRIu64 " rank %u: "
			    "node %s has no log of attempt %" PRIu32 " (the "
			    "rank may have run elsewhere then: a job's "
			    "earlier runs are looked for where it ran before "
			    "its last restart, or where it runs now)",
			    w->job_id, w->r.rank, w->r.node, w->r.attempt);
		else
			snprintf(text, sizeof(text), "%s", err->text);
		rpc_logs_done_send(rpc, w, cid, &env, err->code, text);
		return;
	}
	rep.data.data = (uint8_t *)data;
	rep.data.len = len;
	rep.next_offset = w->offset + len;
	rep.has_attempt = 1;
	rep.attempt = w->r.attempt;
	/* No more will come once the job has ended and nothing was left
	 * (nor will an earlier attempt's log grow). */
	rep.finished = len == 0 && job != NULL &&
	    (job_state_is_final(job->state) ||
	    w->r.attempt < job->attempt);
	/* A step's log is whole once the step has ended. */
	if (w->r.has_step && len == 0 && job != NULL && !rep.finished) {
		const struct step *s = steps_get(rpc->cluster, w->job_id,
		    w->r.step);

		rep.finished = s == NULL || s->state != JOB_RUNNING;
	}
	env.id = w->req_id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_LOGS_REPLY;
	env.logs_reply = &rep;
	rpc_logs_done_send(rpc, w, cid, &env, ERR_NONE, NULL);
}

void
rpc_logs(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__LogsRequest *lr = req->logs;
	const struct job *job;
	struct logs_wait *w;
	struct cerr err;
	uint32_t max = LOGS_MAX;
	char text[PEER_NAME_MAX + 96];

	cerr_clear(&err);
	/* Output is private data; a job that does not exist is left to
	 * cluster_read_log to report. */
	if ((job = jobs_get(rpc->jobs, lr->job_id)) != NULL &&
	    !rpc_may_see_private(rpc, server_conn_peer(c), job)) {
		snprintf(text, sizeof(text), "job %" PRIu64 " belongs to %s; "
		    "its logs are shown only to its owner and admins",
		    lr->job_id, job->user);
		rpc_error(rpc, c, req->id, ERR_DENIED, text, false);
		return;
	}
	if (rpc_logs_outstanding(rpc, server_conn_id(c)) >= RPC_LOGS_PER_CONN) {
		snprintf(text, sizeof(text), "%d log reads are already in "
		    "progress on this connection; wait for their answers",
		    RPC_LOGS_PER_CONN);
		rpc_error(rpc, c, req->id, ERR_LIMIT, text, false);
		return;
	}
	if (lr->has_max_bytes && lr->max_bytes > 0 && lr->max_bytes < max)
		max = lr->max_bytes;
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		rpc_error(rpc, c, req->id, ERR_INTERNAL, "out of memory", false);
		return;
	}
	w->rpc = rpc;
	w->conn_id = server_conn_id(c);
	w->req_id = req->id;
	w->job_id = lr->job_id;
	w->offset = lr->has_offset ? lr->offset : 0;
	w->timing = rpc_timing_take(rpc);
	w->reserved = (size_t)max + RPC_LOGS_OVERHEAD;
	server_conn_reserve(c, w->reserved);
	if ((w->next = rpc->logs_waits) != NULL)
		w->next->prev = w;
	rpc->logs_waits = w;
	/* Unset stream and attempt: stdout of the latest, as before. */
	w->r.job_id = lr->job_id;
	w->r.rank = lr->has_rank ? lr->rank : 0;
	w->r.attempt = lr->has_attempt ? lr->attempt : 0;
	w->r.is_stderr = lr->has_stderr_stream && lr->stderr_stream;
	w->r.has_step = lr->has_step_id;
	w->r.step = lr->step_id;
	w->r.offset = w->offset;
	w->r.max = max;
	if (cluster_read_log(rpc->cluster, &w->r, clock_now_ms(),
	    rpc_logs_done, w, &err) == -1) {
		rpc_timing_swap(rpc, w->timing);
		rpc_logs_wait_free(w);
		rpc_error(rpc, c, req->id, err.code, err.text, false);
	}
}

/* Does the hostlist expr name name? */
static bool
rpc_expr_names(const char *expr, const char *name)
{
	char **v;
	size_t n, i;
	bool found = false;

	if (hostlist_expand(expr, HOSTLIST_NODES_MAX, &v, &n, NULL, 0) == -1)
		return false;
	for (i = 0; i < n && !found; i++)
		found = strcmp(v[i], name) == 0;
	hostlist_free(v, n);
	return found;
}

/* The names the request's hostlists expand to, each a known node; or
 * an error reply (a malformed or oversized list, or nodes that do not
 * exist, which are named with the expression that named them). NULL
 * after replying. */
static char **
rpc_nodes_named(struct rpc *rpc, struct conn *c, uint64_t id,
    char *const *exprs, size_t nexpr, size_t *n)
{
	char **names, **unknown, *list, why[256], text[400];
	const char *from = NULL, *shown;
	size_t i, k, nu = 0;
	bool cite;

	why[0] = '\0';
	if (hostlist_expand_args(exprs, nexpr, HOSTLIST_NODES_MAX, &names, n,
	    why, sizeof(why)) == -1) {
		if (errno == ENOMEM)
			rpc_error(rpc, c, id, ERR_INTERNAL, "out of memory",
			    false);
		else
			rpc_error(rpc, c, id, ERR_INVALID, why[0] ? why :
			    "not a hostlist (e.g. node[01-04],gpu7)", false);
		return NULL;
	}
	if (*n == 0) {
		rpc_error(rpc, c, id, ERR_INVALID, "no node named", false);
		return NULL;
	}
	if ((unknown = calloc(*n, sizeof(*unknown))) == NULL) {
		hostlist_free(names, *n);
		rpc_error(rpc, c, id, ERR_INTERNAL, "out of memory", false);
		return NULL;
	}
	for (i = 0; i < *n; i++)
		if (nodes_get(rpc->nodes, names[i]) == NULL)
			unknown[nu++] = names[i];
	if (nu == 0) {
		free(unknown);
		return names;
	}
	/* Which argument named the first one, to say where it came from. */
	for (k = 0; k < nexpr && from == NULL; k++)
		if (rpc_expr_names(exprs[k], unknown[0]))
			from = exprs[k];
	list = hostlist_compress(unknown, nu);
	shown = list != NULL ? list : unknown[0];
	cite = from != NULL && strcmp(from, shown) != 0;
	snprintf(text, sizeof(text), "no such node%s: %.200s%s%.120s%s; "
	    "nothing changed", nu == 1 ? "" : "s", shown,
	    cite ? " (named by '" : "", cite ? from : "", cite ? "')" : "");
	free(list);
	free(unknown);
	hostlist_free(names, *n);
	rpc_error(rpc, c, id, ERR_NOT_FOUND, text, false);
	return NULL;
}

/* cohort resume --exempt / --no-exempt, after the resume took. */
static int
rpc_nodes_exempt(struct rpc *rpc, const char *who, char *const *names,
    size_t n, bool on, struct cerr *err)
{
	struct suspect *s = rpc->cluster != NULL ?
	    cluster_suspect(rpc->cluster) : NULL;
	size_t i;

	if (s == NULL)
		return cerr_set(err, ERR_UNAVAILABLE, "this controller keeps "
		    "no suspicion of nodes");
	for (i = 0; i < n; i++) {
		if (suspect_exempt(s, names[i], on, clock_now_ms(), err) == -1)
			return -1;
		log_info("node %s: %s suspect drains by %s", names[i],
		    on ? "exempt from" : "no longer exempt from", who);
	}
	return 0;
}

/* drain and resume: every node the hostlists name must exist, and the
 * change is made on all of them or none (recovery_drain_nodes). */
static void
rpc_nodes_op(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req,
    bool drain)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__DrainReply drep = COHORT__V1__DRAIN_REPLY__INIT;
	Cohort__V1__ResumeReply rrep = COHORT__V1__RESUME_REPLY__INIT;
	const Cohort__V1__DrainRequest *dr = req->drain;
	char **exprs = drain ? dr->nodes : req->resume->nodes;
	size_t nexpr = drain ? dr->n_nodes : req->resume->n_nodes;
	char **names;
	size_t n, changed;
	struct cerr err;
	int rc;

	cerr_clear(&err);
	if (nexpr == 0) {
		rpc_error(rpc, c, req->id, ERR_INVALID, "no node named", false);
		return;
	}
	if (drain && (dr->reason[0] == '\0' || strlen(dr->reason) > 200)) {
		rpc_error(rpc, c, req->id, ERR_INVALID,
		    "--reason: give a reason of 1 to 200 characters", false);
		return;
	}
	/* Reasons are shown in tables and logs: one line, no escapes. */
	if (drain && text_check_name("--reason", dr->reason, &err) == -1) {
		rpc_error(rpc, c, req->id, err.code, err.text, false);
		return;
	}
	if ((names = rpc_nodes_named(rpc, c, req->id, exprs, nexpr, &n)) ==
	    NULL)
		return;
	if (drain)
		rc = recovery_drain_nodes(rpc->cluster, server_conn_peer(c),
		    names, n, dr->reason, dr->has_now && dr->now,
		    dr->has_force && dr->force, clock_now_ms(), &changed,
		    &err);
	else {
		rc = recovery_resume_nodes(rpc->cluster, server_conn_peer(c),
		    names, n, clock_now_ms(), &changed, &err);
		if (rc == 0 && req->resume->has_suspect_exempt)
			rc = rpc_nodes_exempt(rpc,
			    server_conn_peer(c)->name, names, n,
			    req->resume->suspect_exempt, &err);
	}
	if (rc == -1) {
		rpc_error(rpc, c, req->id, err.code, err.text, false);
		hostlist_free(names, n);
		return;
	}
	/* The reply names them as asked: 65,536 long names expanded would
	 * not fit a frame. */
	env.id = req->id;
	if (drain) {
		drep.n_nodes = nexpr;
		drep.nodes = exprs;
		env.body_case = COHORT__V1__ENVELOPE__BODY_DRAIN_REPLY;
		env.drain_reply = &drep;
	} else {
		rrep.n_nodes = nexpr;
		rrep.nodes = exprs;
		env.body_case = COHORT__V1__ENVELOPE__BODY_RESUME_REPLY;
		env.resume_reply = &rrep;
	}
	rpc_send(rpc, c, &env, false);
	hostlist_free(names, n);
}

void
rpc_drain(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	rpc_nodes_op(rpc, c, req, true);
}

void
rpc_resume(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	rpc_nodes_op(rpc, c, req, false);
}

void
rpc_delete_node(struct rpc *rpc, struct conn *c,
    const Cohort__V1__Envelope *req)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__DeleteNodeReply rep = COHORT__V1__DELETE_NODE_REPLY__INIT;
	char name[PEER_NAME_MAX + 1];
	struct cerr err;

	cerr_clear(&err);
	if (strlen(req->delete_node->name) > PEER_NAME_MAX) {
		rpc_error(rpc, c, req->id, ERR_INVALID, "node name too long",
		    false);
		return;
	}
	snprintf(name, sizeof(name), "%s", req->delete_node->name);
	if (cluster_delete_node(rpc->cluster, server_conn_peer(c), name,
	    clock_now_ms(), &err) == -1) {
		rpc_error(rpc, c, req->id, err.code, err.text, false);
		return;
	}
	rep.name = name;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_DELETE_NODE_REPLY;
	env.delete_node_reply = &rep;
	rpc_send(rpc, c, &env, false);
}


struct events_acc {
	Cohort__V1__Event *ev;
	char **strs;		/* copies, freed after the reply is packed */
	size_t n;
	size_t nstrs;
	int64_t since_ms;
};

static char *
events_keep(struct events_acc *a, const char *s)
{
	char *copy;

	if (s == NULL || (copy = strdup(s)) == NULL)
		return NULL;
	a->strs[a->nstrs++] = copy;
	return copy;
}

static int
events_cb(const struct store_event *e, void *arg)
{
	struct events_acc *a = arg;
	Cohort__V1__Event *ev = &a->ev[a->n];

	cohort__v1__event__init(ev);
	ev->id = e->id;
	ev->time_ms = e->time_ms;
	ev->has_job_id = e->job_id != 0;
	ev->job_id = e->job_id;
	ev->node = events_keep(a, e->node);
	ev->kind = events_keep(a, e->kind);
	ev->actor = events_keep(a, e->actor);
	ev->detail = events_keep(a, e->detail);
	if (ev->kind == NULL || ev->actor == NULL)
		return -1;
	a->n++;
	return 0;
}

void
rpc_events(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__EventsRequest *er = req->events;
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__EventsReply rep = COHORT__V1__EVENTS_REPLY__INIT;
	struct events_acc a = { 0 };
	Cohort__V1__Event **ptrs = NULL;
	struct cerr err;
	size_t i, limit, bytes = 0;

	cerr_clear(&err);
	limit = rpc_page_max(rpc, er->has_limit, er->limit);
	a.since_ms = er->has_since_ms ? er->since_ms : 0;
	/* One more than the page: whether it comes tells has_more. */
	a.ev = calloc(limit + 1, sizeof(*a.ev));
	a.strs = calloc((limit + 1) * 4, sizeof(*a.strs));
	if (a.ev == NULL || a.strs == NULL ||
	    store_events_list(rpc->store, er->has_after_id ? er->after_id : 0,
	    er->has_job_id ? er->job_id : 0, er->node, er->kind, a.since_ms,
	    (int)limit + 1, events_cb, &a, &err) == -1 ||
	    (a.n > 0 && (ptrs = calloc(a.n, sizeof(*ptrs))) == NULL)) {
		rpc_error(rpc, c, req->id, ERR_INTERNAL,
		    err.code != ERR_NONE ? err.text : "out of memory", false);
		goto out;
	}
	rep.has_has_more = 1;
	rep.has_more = a.n > limit;
	/* A page also stops at a few MiB (details can be long). */
	for (i = 0; i < a.n && i < limit; i++) {
		bytes += protobuf_c_message_get_packed_size(&a.ev[i].base);
		if (i > 0 && bytes > RPC_PAGE_BYTES) {
			rep.has_more = true;
			break;
		}
		ptrs[i] = &a.ev[i];
	}
	rep.n_events = i;
	rep.events = ptrs;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_EVENTS_REPLY;
	env.events_reply = &rep;
	rpc_send(rpc, c, &env, false);
out:
	for (i = 0; i < a.nstrs; i++)
		free(a.strs[i]);
	free(a.strs);
	free(a.ev);
	free(ptrs);
}
