/* Messages from agents: registration, heartbeats, task exits. An agent
 * speaks only for the node named in its certificate. */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "daemon/controller/domain/cluster.h"
#include "daemon/controller/domain/recovery.h"
#include "lib/log.h"
#include "lib/text.h"
#include "lib/wire.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/rpc/rpc_int.h"
#include "daemon/controller/rpc/server.h"

/* The task statuses of a message as project structs (malloc'd). */
static struct task_report *
rpc_reports(Cohort__V1__TaskStatus **ts, size_t n)
{
	struct task_report *r;
	size_t i;

	if ((r = calloc(n ? n : 1, sizeof(*r))) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		r[i].job_id = ts[i]->job_id;
		r[i].restart = ts[i]->restart;
		r[i].rank = ts[i]->rank;
		r[i].running = ts[i]->running;
		r[i].wait_status = ts[i]->wait_status;
		if (ts[i]->why != NULL) {
			snprintf(r[i].why, sizeof(r[i].why), "%s", ts[i]->why);
			text_sanitize(r[i].why);	/* shown in reasons */
		}
		r[i].permanent = ts[i]->has_permanent && ts[i]->permanent;
		r[i].has_step = ts[i]->has_step_id;
		r[i].step = ts[i]->step_id;
	}
	return r;
}

/* Record an ended task; the acknowledgement leaves after the commit, and
 * only then may the agent forget the task. An exit the node may not
 * report is answered with an error when it came alone (a TaskExit), and
 * not at all inside a list (a heartbeat must not make a reply per
 * entry); either way it is counted and the job stays as it was. */
static void
rpc_exit_and_ack(struct rpc *rpc, struct conn *c, uint64_t req_id,
    const struct task_report *r, bool alone)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__TaskExitAck ack = COHORT__V1__TASK_EXIT_ACK__INIT;
	struct cerr err;

	cerr_clear(&err);
	if (cluster_task_exit(rpc->cluster, server_conn_id(c), r,
	    clock_now_ms(), &err) == -1) {
		if (err.code != ERR_DENIED)
			log_warnx("job %" PRIu64 " rank %u: cannot record "
			    "exit: %s", r->job_id, r->rank, err.text);
		if (alone)
			rpc_error(rpc, c, req_id, err.code, err.text, false);
		return;
	}
	ack.job_id = r->job_id;
	ack.restart = r->restart;
	ack.rank = r->rank;
	ack.has_step_id = r->has_step;
	ack.step_id = r->step;
	env.id = req_id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_TASK_EXIT_ACK;
	env.task_exit_ack = &ack;
	rpc_send(rpc, c, &env, false);
}

static void
rpc_apply_health(struct rpc *rpc, struct conn *c,
    const Cohort__V1__NodeHealth *pb)
{
	struct node_health h;
	struct cerr err;

	if (wire_health_from_pb(pb, &h, &err) == -1) {
		log_warnx("conn %" PRIu64 ": %s", server_conn_id(c), err.text);
		return;
	}
	recovery_health(rpc->cluster, server_conn_id(c), &h, clock_now_ms());
}

/* The address other ranks reach a node at (MASTER_ADDR): empty (the
 * node's name is used), a host name or an IPv4/IPv6 literal. */
static bool
rpc_address_ok(const char *a)
{
	size_t n = a != NULL ? strlen(a) : 0;

	if (n > 253)
		return false;
	for (; a != NULL && *a != '\0'; a++)
		if (!isalnum((unsigned char)*a) && strchr(".-_:%", *a) == NULL)
			return false;
	return true;
}

void
rpc_register(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__RegisterRequest *rr = req->register_;
	const struct peer *p = server_conn_peer(c);
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__RegisterReply rep = COHORT__V1__REGISTER_REPLY__INIT;
	struct inventory inv;
	struct task_report *tasks;
	struct cerr err;
	char text[200];
	size_t i;

	cerr_clear(&err);
	cluster_reports_begin(rpc->cluster);
	if (strcmp(rr->name, p->name) != 0) {
		snprintf(text, sizeof(text), "agent certificate is for node "
		    "'%s'; it may not register as '%.64s'", p->name, rr->name);
		log_warnx("conn %" PRIu64 ": %s", server_conn_id(c), text);
		rpc_error(rpc, c, req->id, ERR_DENIED, text, true);
		return;
	}
	if (!rpc_address_ok(rr->address)) {
		snprintf(text, sizeof(text), "node %s: address '%.64s' is not a "
		    "host name or an IP address", p->name, rr->address);
		text_sanitize(text);
		rpc_error(rpc, c, req->id, ERR_INVALID, text, true);
		return;
	}
	if (wire_inventory_from_pb(rr->inventory, &inv, &err) == -1) {
		rpc_error(rpc, c, req->id, err.code, err.text, true);
		return;
	}
	/* Bounded before anything is copied: a registration listing more
	 * tasks than the node could hold is refused whole. */
	if (cluster_check_node(rpc->cluster, rr->name, clock_now_ms(),
	    &err) == -1 || cluster_check_lists(rpc->cluster, rr->name,
	    inv.ngpus, rr->n_tasks, clock_now_ms(), &err) == -1) {
		rpc_error(rpc, c, req->id, err.code, err.text, true);
		return;
	}
	if ((tasks = rpc_reports(rr->tasks, rr->n_tasks)) == NULL ||
	    cluster_register(rpc->cluster, server_conn_id(c), rr->name,
	    rr->address, &inv, rr->has_spare && rr->spare, tasks, rr->n_tasks,
	    clock_now_ms(), &err) == -1) {
		/* A refused node gets this answer and nothing else: no
		 * launch can reach a connection no node is bound to. */
		rpc_error(rpc, c, req->id, tasks == NULL ? ERR_INTERNAL :
		    err.code, tasks == NULL ? "out of memory" : err.text, true);
		free(tasks);
		return;
	}
	if (rr->health != NULL)
		rpc_apply_health(rpc, c, rr->health);
	rep.heartbeat_ms = rpc->heartbeat_ms;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_REGISTER_REPLY;
	env.register_reply = &rep;
	rpc_send(rpc, c, &env, false);
	for (i = 0; i < rr->n_tasks; i++)
		if (!tasks[i].running)
			rpc_exit_and_ack(rpc, c, req->id, &tasks[i], false);
	free(tasks);
}

/* What the agent watches for its jobs: checkpoints (rank 0's node),
 * progress files, fail-job XIDs. */
static void rpc_step_times(struct rpc *rpc, struct conn *c,
    const Cohort__V1__Heartbeat *hb, int64_t now);

static void
rpc_apply_reports(struct rpc *rpc, struct conn *c,
    const Cohort__V1__Heartbeat *hb)
{
	int64_t now = clock_now_ms();
	struct checkpoint_report *cks = NULL;
	struct xid_report *xids;
	size_t i, nx = 0, nck = 0;

	if (hb->n_checkpoints > 0 && (cks = calloc(hb->n_checkpoints,
	    sizeof(*cks))) == NULL)
		log_warnx("out of memory for %zu checkpoints",
		    hb->n_checkpoints);
	for (i = 0; cks != NULL && i < hb->n_checkpoints; i++) {
		const Cohort__V1__CheckpointReport *r = hb->checkpoints[i];

		if (strlen(r->path) == 0 || strlen(r->path) >= 4096)
			continue;
		cks[nck].job_id = r->job_id;
		cks[nck].attempt = r->restart;
		cks[nck].step = r->step;
		cks[nck].path = r->path;
		/* When the job wrote it, if the agent knows (and the clocks
		 * agree well enough): lost work counts from there. */
		cks[nck].time_ms = r->has_time_ms && r->time_ms > 0 &&
		    r->time_ms <= now ? r->time_ms : now;
		cks[nck].cost_ms = r->has_cost_ms ? r->cost_ms : 0;
		nck++;
	}
	recovery_checkpoints(rpc->cluster, server_conn_id(c), cks, nck, now);
	free(cks);
	for (i = 0; i < hb->n_progress; i++)
		recovery_progress(rpc->cluster, server_conn_id(c),
		    hb->progress[i]->job_id, hb->progress[i]->restart,
		    hb->progress[i]->changed_ms, now);
	rpc_step_times(rpc, c, hb, now);
	if (hb->n_xids == 0)
		return;
	/* The list is at most reports_tasks_max long (checked before). */
	if ((xids = calloc(hb->n_xids, sizeof(*xids))) == NULL) {
		log_warnx("out of memory for %zu XIDs", hb->n_xids);
		return;
	}
	for (i = 0; i < hb->n_xids; i++)
		if (strcmp(hb->xids[i]->action, "fail-job") == 0) {
			xids[nx].gpu = hb->xids[i]->gpu;
			xids[nx].xid = hb->xids[i]->xid;
			nx++;
		}
	recovery_xids(rpc->cluster, server_conn_id(c), xids, nx, now);
	free(xids);
}

/* Ranks' step times (the list is at most reports_tasks_max long:
 * checked before). */
static void
rpc_step_times(struct rpc *rpc, struct conn *c,
    const Cohort__V1__Heartbeat *hb, int64_t now)
{
	struct step_time_report *st;
	size_t i;

	if (hb->n_step_times == 0)
		return;
	if ((st = calloc(hb->n_step_times, sizeof(*st))) == NULL) {
		log_warnx("out of memory for %zu step times",
		    hb->n_step_times);
		return;
	}
	for (i = 0; i < hb->n_step_times; i++) {
		st[i].job_id = hb->step_times[i]->job_id;
		st[i].attempt = hb->step_times[i]->restart;
		st[i].rank = hb->step_times[i]->rank;
		st[i].step = hb->step_times[i]->step;
		st[i].compute_ms = hb->step_times[i]->compute_ms;
	}
	straggler_reports(rpc->cluster, server_conn_id(c), st,
	    hb->n_step_times, now);
	free(st);
}

/* Everything after registration must come from a registered node. */
static bool
rpc_registered(struct rpc *rpc, struct conn *c, uint64_t req_id)
{
	if (nodes_by_conn(rpc->nodes, server_conn_id(c)) != NULL)
		return true;
	rpc_error(rpc, c, req_id, ERR_PROTOCOL, "register first", true);
	return false;
}

void
rpc_heartbeat(struct rpc *rpc, struct conn *c,
    const Cohort__V1__Envelope *req)
{
	const Cohort__V1__Heartbeat *hb = req->heartbeat;
	struct task_report *tasks;
	struct node *n;
	struct cerr err;
	size_t i, longest;

	if (!rpc_registered(rpc, c, req->id))
		return;
	cluster_reports_begin(rpc->cluster);
	/* What no node could hold is refused whole, before any of it is
	 * copied or acted on (nor does it count as a sign of life). */
	n = nodes_by_conn(rpc->nodes, server_conn_id(c));
	longest = hb->n_tasks;
	if (hb->n_checkpoints > longest)
		longest = hb->n_checkpoints;
	if (hb->n_progress > longest)
		longest = hb->n_progress;
	if (hb->n_xids > longest)
		longest = hb->n_xids;
	if (hb->n_step_times > longest)
		longest = hb->n_step_times;
	cerr_clear(&err);
	if (cluster_check_lists(rpc->cluster, n->name, n->inv->ngpus, longest,
	    clock_now_ms(), &err) == -1) {
		rpc_error(rpc, c, req->id, err.code, err.text, false);
		return;
	}
	if ((tasks = rpc_reports(hb->tasks, hb->n_tasks)) == NULL)
		return;
	/* Checkpoints first: a task's exit in the same heartbeat may end
	 * the run the checkpoint belongs to. */
	rpc_apply_reports(rpc, c, hb);
	cluster_heartbeat(rpc->cluster, server_conn_id(c), tasks, hb->n_tasks,
	    clock_now_ms());
	if (hb->node_health != NULL)
		rpc_apply_health(rpc, c, hb->node_health);
	for (i = 0; i < hb->n_tasks; i++)
		if (!tasks[i].running)
			rpc_exit_and_ack(rpc, c, req->id, &tasks[i], false);
	free(tasks);
}

void
rpc_task_exit(struct rpc *rpc, struct conn *c,
    const Cohort__V1__Envelope *req)
{
	const Cohort__V1__TaskExit *te = req->task_exit;
	struct task_report r = { .job_id = te->job_id, .restart = te->restart,
	    .rank = te->rank, .wait_status = te->wait_status };

	if (te->why != NULL) {
		snprintf(r.why, sizeof(r.why), "%s", te->why);
		text_sanitize(r.why);
	}
	r.permanent = te->has_permanent && te->permanent;
	r.has_step = te->has_step_id;
	r.step = te->step_id;
	if (rpc_registered(rpc, c, req->id))
		rpc_exit_and_ack(rpc, c, req->id, &r, true);
}
