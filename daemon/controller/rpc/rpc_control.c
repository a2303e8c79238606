/* Requests that act on existing jobs: cancel (one job, several,
 * or those a filter matches), hold and release, requeue, update. A
 * request naming several jobs handles each in turn inside the one shared
 * transaction (one commit for all: txq), and answers one result per job,
 * so that a refusal of one does not stop the rest. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/cluster.h"
#include "daemon/controller/domain/jobs.h"
#include "lib/clock.h"
#include "lib/wire.h"
#include "daemon/controller/rpc/rpc_int.h"
#include "daemon/controller/rpc/server.h"

/* Jobs one request may name, or a filter may select: the rest is the
 * client's to send again (CancelReply.more). */
#define RPC_CONTROL_MAX 10000

#define RPC_RESULT_TEXT 520

/* Results of one request, and the texts they point to. */
struct rpc_results {
	Cohort__V1__JobResult *res;
	Cohort__V1__JobResult **ptrs;
	char (*text)[RPC_RESULT_TEXT];
	size_t n;
};

static int
rpc_results_new(struct rpc_results *r, size_t n)
{
	memset(r, 0, sizeof(*r));
	if ((r->res = calloc(n + 1, sizeof(*r->res))) == NULL ||
	    (r->ptrs = calloc(n + 1, sizeof(*r->ptrs))) == NULL ||
	    (r->text = calloc(n + 1, sizeof(*r->text))) == NULL) {
		free(r->res);
		free(r->ptrs);
		return -1;
	}
	return 0;
}

static void
rpc_results_free(struct rpc_results *r)
{
	free(r->res);
	free(r->ptrs);
	free(r->text);
}

/* One more result: done (err NULL; text may be NULL) or refused. */
static void
rpc_results_add(struct rpc_results *r, struct rpc *rpc, uint64_t id,
    const struct cerr *err, const char *text)
{
	Cohort__V1__JobResult *p = &r->res[r->n];
	const struct job *job = jobs_get(rpc->jobs, id);

	cohort__v1__job_result__init(p);
	p->job_id = id;
	if (err != NULL) {
		p->has_code = 1;
		p->code = wire_err_to_pb(err->code);
		text = err->text;
	}
	if (text != NULL) {
		snprintf(r->text[r->n], RPC_RESULT_TEXT, "%s", text);
		p->text = r->text[r->n];
	}
	if (job != NULL) {
		p->has_state = 1;
		p->state = wire_state_to_pb(job->state);
	}
	r->ptrs[r->n] = p;
	r->n++;
}

static bool
rpc_control_count_ok(struct rpc *rpc, struct conn *c,
    const Cohort__V1__Envelope *req, size_t n)
{
	char text[128];

	if (n == 0) {
		rpc_error(rpc, c, req->id, ERR_INVALID, "no job named", false);
		return false;
	}
	if (n > RPC_CONTROL_MAX) {
		snprintf(text, sizeof(text), "%zu jobs in one request; at most "
		    "%d", n, RPC_CONTROL_MAX);
		rpc_error(rpc, c, req->id, ERR_TOO_LARGE, text, false);
		return false;
	}
	return true;
}

static void
rpc_nomem(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	rpc_error(rpc, c, req->id, ERR_INTERNAL, "out of memory", false);
}

void
rpc_hold(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__HoldRequest *hr = req->hold;
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__HoldReply reply = COHORT__V1__HOLD_REPLY__INIT;
	bool release = hr->has_release && hr->release;
	struct rpc_results r;
	struct cerr err;
	int64_t now = clock_now_ms();
	size_t i;
	int rc;

	if (!rpc_control_count_ok(rpc, c, req, hr->n_job_ids))
		return;
	if (rpc_results_new(&r, hr->n_job_ids) == -1) {
		rpc_nomem(rpc, c, req);
		return;
	}
	for (i = 0; i < hr->n_job_ids; i++) {
		rc = jobs_hold(rpc->jobs, server_conn_peer(c), hr->job_ids[i],
		    release, now, &err);
		rpc_results_add(&r, rpc, hr->job_ids[i], rc == -1 ? &err : NULL,
		    rc == 0 ? "already held" : release ? "released" : "held");
	}
	/* A released job may start now: the pass must run. */
	cluster_changed(rpc->cluster);
	reply.n_results = r.n;
	reply.results = r.ptrs;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_HOLD_REPLY;
	env.hold_reply = &reply;
	rpc_send(rpc, c, &env, false);
	rpc_results_free(&r);
}

void
rpc_requeue(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__RequeueRequest *rr = req->requeue;
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__RequeueReply reply = COHORT__V1__REQUEUE_REPLY__INIT;
	struct rpc_results r;
	struct cerr err;
	int64_t now = clock_now_ms();
	size_t i;
	int rc;

	if (!rpc_control_count_ok(rpc, c, req, rr->n_job_ids))
		return;
	if (rpc_results_new(&r, rr->n_job_ids) == -1) {
		rpc_nomem(rpc, c, req);
		return;
	}
	for (i = 0; i < rr->n_job_ids; i++) {
		cerr_clear(&err);
		rc = cluster_requeue(rpc->cluster, server_conn_peer(c),
		    rr->job_ids[i], now, &err);
		rpc_results_add(&r, rpc, rr->job_ids[i], rc == -1 ? &err : NULL,
		    "requeued");
	}
	reply.n_results = r.n;
	reply.results = r.ptrs;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_REQUEUE_REPLY;
	env.requeue_reply = &reply;
	rpc_send(rpc, c, &env, false);
	rpc_results_free(&r);
}

void
rpc_update(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__UpdateRequest *ur = req->update;
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__UpdateReply reply = COHORT__V1__UPDATE_REPLY__INIT;
	struct job_update u = { 0 };
	char changes[1024];
	struct cerr err;

	u.has_time = ur->has_time_limit_s;
	u.time_limit_s = ur->time_limit_s;
	u.has_priority = ur->has_priority;
	u.priority = ur->priority;
	u.name = ur->name;
	/* --nodes N sends both; one alone keeps the other's value only if
	 * that stays consistent (job_spec_validate checks). */
	if (ur->has_nodes_min || ur->has_nodes_max) {
		const struct job *job = jobs_get(rpc->jobs, ur->job_id);

		u.has_nodes = true;
		u.nodes_min = ur->has_nodes_min ? ur->nodes_min :
		    job != NULL ? job->spec.nodes_min : 1;
		u.nodes_max = ur->has_nodes_max ? ur->nodes_max :
		    job != NULL ? job->spec.nodes_max : u.nodes_min;
	}
	u.has_gpus_per_node = ur->has_gpus_per_node;
	u.gpus_per_node = ur->gpus_per_node;
	u.has_tasks_per_node = ur->has_tasks_per_node;
	u.tasks_per_node = ur->tasks_per_node;
	u.gpu_type = ur->gpu_type;
	u.queue = ur->queue;
	u.has_cpu_only = ur->has_cpu_only;
	u.cpu_only = ur->cpu_only;
	u.has_max_restarts = ur->has_max_restarts;
	u.max_restarts = ur->max_restarts;
	cerr_clear(&err);
	if (jobs_update(rpc->jobs, server_conn_peer(c), ur->job_id, &u,
	    clock_now_ms(), changes, sizeof(changes), &err) == -1) {
		rpc_error(rpc, c, req->id, err.code, err.text, false);
		return;
	}
	if (changes[0] != '\0')
		cluster_changed(rpc->cluster);
	reply.job_id = ur->job_id;
	reply.changes = changes;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_UPDATE_REPLY;
	env.update_reply = &reply;
	rpc_send(rpc, c, &env, false);
}

/* The jobs a cancel names, or those its filters select: a malloc'd
 * array of *n ids, or NULL after replying with the error. */
static uint64_t *
rpc_cancel_ids(struct rpc *rpc, struct conn *c,
    const Cohort__V1__Envelope *req, size_t *n, bool *more)
{
	const Cohort__V1__CancelRequest *cr = req->cancel;
	enum job_state states[16];
	struct jobs_select sel = { 0 };
	uint64_t *ids;
	size_t i;

	*more = false;
	if (cr->n_job_ids > 0 || cr->job_id != 0) {
		*n = cr->n_job_ids + (cr->job_id != 0);
		if (!rpc_control_count_ok(rpc, c, req, *n))
			return NULL;
		if ((ids = calloc(*n, sizeof(*ids))) == NULL) {
			rpc_nomem(rpc, c, req);
			return NULL;
		}
		i = 0;
		if (cr->job_id != 0)
			ids[i++] = cr->job_id;
		memcpy(ids + i, cr->job_ids, cr->n_job_ids * sizeof(*ids));
		return ids;
	}
	if (cr->user == NULL && cr->n_states == 0 && cr->name == NULL) {
		rpc_error(rpc, c, req->id, ERR_INVALID, "cancel: name jobs, "
		    "or filters (user, states, name)", false);
		return NULL;
	}
	if (cr->n_states > sizeof(states) / sizeof(states[0])) {
		rpc_error(rpc, c, req->id, ERR_INVALID, "cancel: too many "
		    "states in the filter", false);
		return NULL;
	}
	for (i = 0; i < cr->n_states; i++)
		if (wire_state_from_pb(cr->states[i], &states[i]) == -1) {
			rpc_error(rpc, c, req->id, ERR_INVALID, "cancel: "
			    "unknown job state in filter", false);
			return NULL;
		}
	sel.user = cr->user;
	sel.name = cr->name;
	sel.states = states;
	sel.nstates = cr->n_states;
	if ((ids = calloc(RPC_CONTROL_MAX, sizeof(*ids))) == NULL) {
		rpc_nomem(rpc, c, req);
		return NULL;
	}
	*n = jobs_select(rpc->jobs, server_conn_peer(c), &sel, ids,
	    RPC_CONTROL_MAX, more);
	return ids;
}

void
rpc_cancel(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__CancelRequest *cr = req->cancel;
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__CancelReply reply = COHORT__V1__CANCEL_REPLY__INIT;
	enum job_state state = JOB_CANCELLED;
	struct rpc_results r;
	struct cerr err;
	int64_t now = clock_now_ms();
	uint64_t *ids;
	size_t i, n;
	bool more, many = cr->n_job_ids > 0 || cr->job_id == 0;
	int rc;

	/* One job, or a whole array (every unfinished
	 * task in one write): its error is the reply. */
	if (!many) {
		cerr_clear(&err);
		if (cr->has_array && cr->array ?
		    cluster_cancel_array(rpc->cluster, server_conn_peer(c),
		    cr->job_id, now, &n, &err) == -1 :
		    cluster_cancel(rpc->cluster, server_conn_peer(c),
		    cr->job_id, now, &state, &err) == -1) {
			rpc_error(rpc, c, req->id, err.code, err.text, false);
			return;
		}
		reply.job_id = cr->job_id;
		reply.state = wire_state_to_pb(state);
		goto send;
	}
	if ((ids = rpc_cancel_ids(rpc, c, req, &n, &more)) == NULL)
		return;
	if (rpc_results_new(&r, n) == -1) {
		free(ids);
		rpc_nomem(rpc, c, req);
		return;
	}
	for (i = 0; i < n; i++) {
		cerr_clear(&err);
		rc = cluster_cancel(rpc->cluster, server_conn_peer(c), ids[i],
		    now, &state, &err);
		rpc_results_add(&r, rpc, ids[i], rc == -1 ? &err : NULL,
		    "cancelled");
	}
	reply.job_id = n > 0 ? ids[0] : 0;
	reply.state = wire_state_to_pb(JOB_CANCELLED);
	reply.n_results = r.n;
	reply.results = r.ptrs;
	reply.has_more = 1;
	reply.more = more;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_CANCEL_REPLY;
	env.cancel_reply = &reply;
	rpc_send(rpc, c, &env, false);
	rpc_results_free(&r);
	free(ids);
	return;
send:
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_CANCEL_REPLY;
	env.cancel_reply = &reply;
	rpc_send(rpc, c, &env, false);
}
