/* Job steps at the RPC edge (srun, sacct, squeue -s, scancel J.S):
 * StepCreate, StepStatus, StepSignal, ListSteps and StepInput, decoded,
 * checked and
 * handed to the domain (steps.h). The step credential is checked here
 * (stepcred.h), before the domain sees the request. */
#include "config.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "daemon/controller/domain/cluster.h"
#include "daemon/controller/domain/jobs.h"
#include "lib/clock.h"
#include "lib/text.h"
#include "lib/wire.h"
#include "daemon/controller/rpc/rpc_int.h"
#include "daemon/controller/rpc/server.h"
#include "daemon/controller/rpc/stepcred.h"
#include "daemon/controller/domain/steps.h"
#include "daemon/controller/store/store.h"

/* ListSteps: at most this many steps per job in a reply. */
#define RPC_STEPS_PER_JOB 1000
/* ... and this many jobs per request. */
#define RPC_STEPS_JOBS_MAX 256

/* A Step message and the arrays it points to. */
struct rpc_step {
	Cohort__V1__Step pb;
	char **nodes;
	uint32_t *tpn;
	int32_t *status;
	char *name, *reason;	/* NULL unless the caller may see them */
};

static void
rpc_step_free(struct rpc_step *r)
{
	size_t i;

	for (i = 0; r->nodes != NULL && i < r->pb.n_nodelist; i++)
		free(r->nodes[i]);
	free(r->nodes);
	free(r->tpn);
	free(r->status);
	free(r->name);
	free(r->reason);
	free(r->pb.user);
}

static void
rpc_step_head(struct rpc_step *r, uint64_t job_id, uint32_t step_id,
    uint32_t attempt, int state, bool node_fail, bool has_exit,
    int32_t exit_code, int64_t start_ms, int64_t end_ms, uint32_t ntasks,
    uint32_t gpus)
{
	enum job_state st = (enum job_state)state;

	cohort__v1__step__init(&r->pb);
	r->pb.job_id = job_id;
	r->pb.step_id = step_id;
	r->pb.has_attempt = 1;
	r->pb.attempt = attempt;
	r->pb.state = wire_state_to_pb(st);
	r->pb.has_node_fail = node_fail;
	r->pb.node_fail = node_fail;
	r->pb.has_exit_code = has_exit;
	r->pb.exit_code = exit_code;
	r->pb.has_start_time_ms = 1;
	r->pb.start_time_ms = start_ms;
	r->pb.has_end_time_ms = end_ms > 0;
	r->pb.end_time_ms = end_ms;
	r->pb.has_ntasks = 1;
	r->pb.ntasks = ntasks;
	r->pb.has_gpus = 1;
	r->pb.gpus = gpus;
}

/* A step in memory as a message: 0, or -1 (out of memory). */
static int
rpc_step_live(struct rpc_step *r, const struct step *s, bool private)
{
	size_t i;

	memset(r, 0, sizeof(*r));
	rpc_step_head(r, s->job_id, s->id, s->attempt, s->state, s->node_fail,
	    s->has_exit, s->exit_code, s->start_ms, s->end_ms, s->ntasks,
	    s->gpus);
	if ((r->nodes = calloc(s->nnodes + 1, sizeof(*r->nodes))) == NULL ||
	    (r->tpn = calloc(s->nnodes + 1, sizeof(*r->tpn))) == NULL ||
	    (r->status = calloc(s->ntasks + 1, sizeof(*r->status))) == NULL ||
	    (r->pb.user = strdup(s->user)) == NULL)
		return -1;
	for (i = 0; i < s->nnodes; i++) {
		if ((r->nodes[i] = strdup(s->nodenames[i])) == NULL)
			return -1;
		r->pb.n_nodelist++;
		r->tpn[i] = s->nodes[i].ntasks;
	}
	r->pb.nodelist = r->nodes;
	r->pb.n_tasks_per_node = s->nnodes;
	r->pb.tasks_per_node = r->tpn;
	for (i = 0; i < s->ntasks; i++)
		r->status[i] = s->status[i];
	r->pb.n_task_status = s->ntasks;
	r->pb.task_status = r->status;
	r->pb.has_input = r->pb.input = s->input;
	r->pb.has_pty = r->pb.pty = s->pty;
	if (private && ((r->pb.name = r->name = strdup(s->name)) == NULL ||
	    (r->pb.reason = r->reason = strdup(s->reason)) == NULL))
		return -1;
	return 0;
}

/* Split "a,b" into r's nodelist and "2,1" into its tasks_per_node. */
static int
rpc_step_lists(struct rpc_step *r, const char *nodes, const char *tpn)
{
	size_t n = 1, i = 0;
	const char *p;
	char *copy, *tok, *save = NULL;

	for (p = nodes; *p != '\0'; p++)
		n += *p == ',';
	if ((r->nodes = calloc(n + 1, sizeof(*r->nodes))) == NULL ||
	    (r->tpn = calloc(n + 1, sizeof(*r->tpn))) == NULL ||
	    (copy = strdup(nodes)) == NULL)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok != NULL && i < n;
	    tok = strtok_r(NULL, ",", &save))
		if ((r->nodes[i++] = strdup(tok)) == NULL)
			break;
	free(copy);
	r->pb.n_nodelist = i;
	r->pb.nodelist = r->nodes;
	for (i = 0, p = tpn; i < r->pb.n_nodelist && *p != '\0'; i++) {
		r->tpn[i] = (uint32_t)strtoul(p, (char **)&p, 10);
		if (*p == ',')
			p++;
	}
	r->pb.n_tasks_per_node = i;
	r->pb.tasks_per_node = r->tpn;
	return 0;
}

/* ---- StepCreate --------------------------------------------------- */

static int
rpc_step_req(const Cohort__V1__StepCreateRequest *q, struct step_req *r,
    struct cerr *err)
{
	struct job_spec check;

	memset(r, 0, sizeof(*r));
	memset(&check, 0, sizeof(check));
	check.argv = q->argv;
	check.argc = q->n_argv;
	check.env = q->env;
	check.nenv = q->n_env;
	check.workdir = q->workdir;
	check.name = q->name;
	if (job_step_check(&check, err) == -1)
		return -1;
	if ((q->nodelist != NULL && strlen(q->nodelist) > 65536) ||
	    (q->exclude != NULL && strlen(q->exclude) > 65536))
		return cerr_set(err, ERR_INVALID, "a step's node list is "
		    "longer than 64 KiB");
	if ((q->nodelist != NULL && text_check_name("--nodelist",
	    q->nodelist, err) == -1) || (q->exclude != NULL &&
	    text_check_name("--exclude", q->exclude, err) == -1))
		return -1;
	r->job_id = q->job_id;
	r->name = q->name;
	r->argv = q->argv;
	r->argc = q->n_argv;
	r->env = q->env;
	r->nenv = q->n_env;
	r->workdir = q->workdir;
	r->nodes = q->has_nodes ? q->nodes : 0;
	r->ntasks = q->has_ntasks ? q->ntasks : 0;
	r->ntasks_per_node = q->has_ntasks_per_node ? q->ntasks_per_node : 0;
	r->nodelist = q->nodelist != NULL && q->nodelist[0] != '\0' ?
	    q->nodelist : NULL;
	r->exclude = q->exclude != NULL && q->exclude[0] != '\0' ?
	    q->exclude : NULL;
	r->cpus_per_task = q->has_cpus_per_task ? q->cpus_per_task : 0;
	r->gpus_per_task = q->has_gpus_per_task ? q->gpus_per_task : 0;
	r->gpus_per_node = q->has_gpus_per_node ? q->gpus_per_node : 0;
	r->gpus = q->has_gpus ? q->gpus : 0;
	r->no_gpus = q->has_no_gpus && q->no_gpus;
	r->overlap = q->has_overlap && q->overlap;
	r->exclusive = q->has_exclusive && q->exclusive;
	r->kill_on_bad_exit = q->has_kill_on_bad_exit && q->kill_on_bad_exit;
	r->input = q->has_input && q->input;
	r->pty = q->has_pty && q->pty;
	if (r->pty && !r->input)
		return cerr_set(err, ERR_INVALID, "--pty needs the step's "
		    "input (not with -i none)");
	if ((q->has_rows && q->rows > UINT16_MAX) ||
	    (q->has_cols && q->cols > UINT16_MAX))
		return cerr_set(err, ERR_INVALID, "a window of %u x %u is "
		    "not a terminal's", q->rows, q->cols);
	r->rows = q->has_rows ? (uint16_t)q->rows : 0;
	r->cols = q->has_cols ? (uint16_t)q->cols : 0;
	if (q->container != NULL) {
		r->ctr.image = q->container->image;
		r->ctr.mounts = q->container->mounts;
		r->ctr.workdir = q->container->workdir;
		r->ctr.env = q->container->env;
		r->ctr.name = q->container->name;
		r->ctr.writable = q->container->has_writable &&
		    q->container->writable;
		r->ctr.mount_home = q->container->has_mount_home &&
		    q->container->mount_home;
		if (ctr_validate(&r->ctr, err) == -1)
			return -1;
	}
	return 0;
}

void
rpc_step_create(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__StepCreateRequest *q = req->step_create;
	const struct peer *who = server_conn_peer(c);
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__StepCreateReply rep = COHORT__V1__STEP_CREATE_REPLY__INIT;
	const struct job *job = jobs_get(rpc->jobs, q->job_id);
	const struct step *s;
	struct rpc_step rs;
	struct step_req r;
	struct cerr err;

	cerr_clear(&err);
	if (job == NULL) {
		rpc_error(rpc, c, req->id, ERR_NOT_FOUND, "no such job", false);
		return;
	}
	/* The credential first: without it, nothing about the job is
	 * told (its state, its allocation). */
	if (rpc->stepcred == NULL || stepcred_check(rpc->stepcred, job->id,
	    job->attempt, who->name, q->cred.data, q->cred.len, &err) == -1 ||
	    strcmp(who->name, job->user) != 0) {
		if (err.code == ERR_NONE)
			cerr_set(&err, ERR_DENIED, "only job %" PRIu64 "'s "
			    "owner, inside the job, may start steps in it",
			    job->id);
		rpc_error(rpc, c, req->id, err.code, err.text, false);
		return;
	}
	if (rpc_step_req(q, &r, &err) == -1 ||
	    steps_create(rpc->cluster, who, &r, clock_now_ms(), &s,
	    &err) == -1) {
		rpc_error(rpc, c, req->id, err.code, err.text, false);
		return;
	}
	if (rpc_step_live(&rs, s, true) == -1) {
		rpc_step_free(&rs);
		rpc_error(rpc, c, req->id, ERR_INTERNAL, "out of memory",
		    false);
		return;
	}
	rep.step = &rs.pb;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_STEP_CREATE_REPLY;
	env.step_create_reply = &rep;
	rpc_send(rpc, c, &env, false);
	rpc_step_free(&rs);
}

/* ---- StepStatus, ListSteps -------------------------------------------- */

struct rpc_steps_list {
	struct rpc_step *tab;
	size_t n, cap;
	bool private;
};

static int
rpc_steps_row(const struct store_step *s, void *arg)
{
	struct rpc_steps_list *l = arg;
	struct rpc_step *r, *tab;
	size_t cap;

	if (l->n == l->cap) {
		cap = l->cap ? l->cap * 2 : 16;
		if ((tab = reallocarray(l->tab, cap, sizeof(*tab))) == NULL)
			return -1;
		l->tab = tab;
		l->cap = cap;
	}
	r = &l->tab[l->n++];
	memset(r, 0, sizeof(*r));
	rpc_step_head(r, s->job_id, s->step_id, s->attempt, s->state,
	    s->node_fail, s->has_exit, s->exit_code, s->start_ms, s->end_ms,
	    s->ntasks, s->gpus);
	if (rpc_step_lists(r, s->nodelist, s->tasks_per_node) == -1)
		return -1;
	if (l->private && ((r->pb.name = r->name = strdup(s->name)) == NULL ||
	    (r->pb.reason = r->reason = strdup(s->reason)) == NULL))
		return -1;
	return 0;
}

static void
rpc_steps_list_free(struct rpc_steps_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		rpc_step_free(&l->tab[i]);
	free(l->tab);
}

/* The live step where the job's current run still has it (its task
 * states), else its record. */
static int
rpc_steps_of(struct rpc *rpc, const struct job *job, bool private,
    struct rpc_steps_list *l, struct cerr *err)
{
	const struct step *s;
	size_t i, from = l->n;

	l->private = private;
	if (jobs_steps_list(rpc->jobs, job->id, RPC_STEPS_PER_JOB,
	    rpc_steps_row, l, err) == -1)
		return -1;
	for (i = from; i < l->n; i++) {
		if (l->tab[i].pb.attempt != job->attempt ||
		    (s = steps_get(rpc->cluster, job->id,
		    l->tab[i].pb.step_id)) == NULL)
			continue;
		rpc_step_free(&l->tab[i]);
		if (rpc_step_live(&l->tab[i], s, private) == -1)
			return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	return 0;
}

/* Answer a status request for (job, step) on conn_id: the one step
 * asked for (srun asks every round), live while its job's run has it,
 * else its record. (Listing the job's steps instead cost a round as
 * much as the job has steps, and missed those beyond the list.) */
static void
rpc_step_status_send(struct rpc *rpc, uint64_t conn_id, uint64_t req_id,
    uint64_t job_id, uint32_t step_id)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__StepStatusReply rep = COHORT__V1__STEP_STATUS_REPLY__INIT;
	struct rpc_steps_list l = { 0 };
	const struct step *s;
	struct cerr err;

	cerr_clear(&err);
	l.private = true;
	if ((s = steps_get(rpc->cluster, job_id, step_id)) != NULL) {
		if ((l.tab = calloc(1, sizeof(*l.tab))) == NULL)
			cerr_set(&err, ERR_INTERNAL, "out of memory");
		else {
			l.n = 1;
			if (rpc_step_live(&l.tab[0], s, true) == -1)
				cerr_set(&err, ERR_INTERNAL, "out of memory");
		}
	} else
		jobs_step_get(rpc->jobs, job_id, step_id, rpc_steps_row, &l,
		    &err);
	if (err.code == ERR_NONE && l.n == 0)
		cerr_set(&err, ERR_NOT_FOUND, "no such step of the job's "
		    "latest run");
	if (err.code != ERR_NONE) {
		rpc_steps_list_free(&l);
		rpc_error_to(rpc, conn_id, req_id, err.code, err.text);
		return;
	}
	rep.step = &l.tab[0].pb;
	env.id = req_id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_STEP_STATUS_REPLY;
	env.step_status_reply = &rep;
	rpc_send_to(rpc, conn_id, &env);
	rpc_steps_list_free(&l);
}

/* ---- Waiting for a step's end (StepStatusRequest.wait_ms) ---- */

/* The longest wait, and how many may wait at once in all and on one
 * connection: beyond them a request is answered at once. */
#define RPC_STEP_WAIT_MAX_MS 1000
#define RPC_STEP_WAITS_MAX 4096
#define RPC_STEP_WAITS_PER_CONN 32

struct step_wait {
	struct rpc *rpc;
	struct step_wait *next, *prev;	/* rpc->step_waits */
	uint64_t conn_id, req_id, job_id;
	uint32_t step_id;
	struct event *timer;
	struct rpc_timing timing;
};

static void
rpc_step_wait_answer(struct step_wait *w)
{
	struct rpc *rpc = w->rpc;
	struct rpc_timing saved;

	if (w->prev != NULL)
		w->prev->next = w->next;
	else
		rpc->step_waits = w->next;
	if (w->next != NULL)
		w->next->prev = w->prev;
	rpc->nstep_waits--;
	event_free(w->timer);
	saved = rpc_timing_swap(rpc, w->timing);
	rpc_step_status_send(rpc, w->conn_id, w->req_id, w->job_id,
	    w->step_id);
	rpc_timing_swap(rpc, saved);
	free(w);
}

static void
rpc_step_wait_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	rpc_step_wait_answer(arg);
}

void
rpc_steps_ended(void *arg, uint64_t job_id, uint32_t step)
{
	struct rpc *rpc = arg;
	struct step_wait *w, *next;

	for (w = rpc->step_waits; w != NULL; w = next) {
		next = w->next;
		if (w->job_id == job_id && w->step_id == step)
			rpc_step_wait_answer(w);
	}
}

void
rpc_steps_waits_free(struct rpc *rpc)
{
	while (rpc->step_waits != NULL)
		rpc_step_wait_answer(rpc->step_waits);
}

/* Park the request until its running step ends or ms pass: 0, or -1
 * when it cannot wait (the caller answers at once). */
static int
rpc_step_wait(struct rpc *rpc, struct conn *c, uint64_t req_id,
    uint64_t job_id, uint32_t step_id, uint32_t ms)
{
	struct timeval tv;
	struct step_wait *w;
	uint64_t cid = server_conn_id(c);
	size_t mine = 0;

	if (rpc->base == NULL || rpc->nstep_waits >= RPC_STEP_WAITS_MAX)
		return -1;
	for (w = rpc->step_waits; w != NULL; w = w->next)
		mine += w->conn_id == cid;
	if (mine >= RPC_STEP_WAITS_PER_CONN ||
	    (w = calloc(1, sizeof(*w))) == NULL)
		return -1;
	if ((w->timer = evtimer_new(rpc->base, rpc_step_wait_cb, w)) == NULL) {
		free(w);
		return -1;
	}
	if (ms > RPC_STEP_WAIT_MAX_MS)
		ms = RPC_STEP_WAIT_MAX_MS;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	if (evtimer_add(w->timer, &tv) == -1) {
		event_free(w->timer);
		free(w);
		return -1;
	}
	w->rpc = rpc;
	w->conn_id = cid;
	w->req_id = req_id;
	w->job_id = job_id;
	w->step_id = step_id;
	w->timing = rpc_timing_take(rpc);
	if ((w->next = rpc->step_waits) != NULL)
		w->next->prev = w;
	rpc->step_waits = w;
	rpc->nstep_waits++;
	return 0;
}

void
rpc_step_status(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__StepStatusRequest *q = req->step_status;
	const struct step *s;
	struct cerr err;

	cerr_clear(&err);
	if (steps_may(rpc->cluster, server_conn_peer(c), q->job_id,
	    &err) == -1) {
		rpc_error(rpc, c, req->id, err.code, err.text, false);
		return;
	}
	/* Someone follows it: an interactive session is not silent. */
	steps_heard(rpc->cluster, q->job_id, q->step_id, clock_now_ms());
	/* A running step asked with wait_ms: answered when it ends (or at
	 * the wait's end), not polled for. */
	if (q->has_wait_ms && q->wait_ms > 0 &&
	    (s = steps_get(rpc->cluster, q->job_id, q->step_id)) != NULL &&
	    s->state == JOB_RUNNING && rpc_step_wait(rpc, c, req->id,
	    q->job_id, q->step_id, q->wait_ms) == 0)
		return;
	rpc_step_status_send(rpc, server_conn_id(c), req->id, q->job_id,
	    q->step_id);
}

void
rpc_list_steps(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__ListStepsRequest *q = req->list_steps;
	const struct peer *who = server_conn_peer(c);
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__ListStepsReply rep = COHORT__V1__LIST_STEPS_REPLY__INIT;
	struct rpc_steps_list l = { 0 };
	Cohort__V1__Step **ptrs = NULL;
	const struct job **active = NULL;
	const struct job *job;
	size_t i, n;
	struct cerr err;
	bool mine;

	cerr_clear(&err);
	if (q->n_job_ids > RPC_STEPS_JOBS_MAX) {
		rpc_error(rpc, c, req->id, ERR_INVALID, "at most 256 jobs per "
		    "request", false);
		return;
	}
	n = q->n_job_ids;
	if (n == 0 && jobs_active(rpc->jobs, &active, &n) == -1) {
		rpc_error(rpc, c, req->id, ERR_INTERNAL, "out of memory",
		    false);
		return;
	}
	/* Every job's steps may be seen, as its row is; their names
	 * (commands) and reasons only by whom may see its private data. */
	for (i = 0; i < n && err.code == ERR_NONE; i++) {
		job = active != NULL ? active[i] : jobs_get(rpc->jobs,
		    q->job_ids[i]);
		if (job == NULL || (active != NULL && !job->spec.batch))
			continue;
		mine = rpc_may_see_private(rpc, who, job);
		rpc_steps_of(rpc, job, mine, &l, &err);
	}
	free(active);
	if (err.code != ERR_NONE || (ptrs = calloc(l.n + 1,
	    sizeof(*ptrs))) == NULL) {
		rpc_steps_list_free(&l);
		rpc_error(rpc, c, req->id, err.code != ERR_NONE ? err.code :
		    ERR_INTERNAL, err.code != ERR_NONE ? err.text :
		    "out of memory", false);
		return;
	}
	for (i = 0; i < l.n; i++)
		ptrs[i] = &l.tab[i].pb;
	rep.n_steps = l.n;
	rep.steps = ptrs;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_LIST_STEPS_REPLY;
	env.list_steps_reply = &rep;
	rpc_send(rpc, c, &env, false);
	free(ptrs);
	rpc_steps_list_free(&l);
}

/* ---- StepSignal ---------------------------------------------------- */

void
rpc_step_signal(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__StepSignalRequest *q = req->step_signal;
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__StepSignalReply rep = COHORT__V1__STEP_SIGNAL_REPLY__INIT;
	struct cerr err;

	cerr_clear(&err);
	if (q->signal == 0 || q->signal >= 65) {
		rpc_error(rpc, c, req->id, ERR_INVALID, "not a signal number",
		    false);
		return;
	}
	if (steps_signal(rpc->cluster, server_conn_peer(c), q->job_id,
	    q->step_id, (int)q->signal, clock_now_ms(), &err) == -1) {
		rpc_error(rpc, c, req->id, err.code, err.text, false);
		return;
	}
	rep.step_id = q->step_id;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_STEP_SIGNAL_REPLY;
	env.step_signal_reply = &rep;
	rpc_send(rpc, c, &env, false);
}

/* ---- StepInput ----------------------------------------------------- */

/* srun's input waiting for the agent of its task 0 to take it. */
struct input_wait {
	struct rpc *rpc;
	struct input_wait *next, *prev;	/* rpc->input_waits */
	uint64_t conn_id;
	uint64_t req_id;
	uint64_t offset;
	size_t len;
	struct rpc_timing timing;	/* the request's, for its latency */
};

/* Input writes one connection may have outstanding: srun sends one at a
 * time, and a user's sruns share the mux connection. */
#define RPC_INPUT_PER_CONN 16
/* The most one StepInput carries (the agent's AGENT_STDIN_CHUNK). */
#define RPC_INPUT_MAX (64 * 1024)

static unsigned
rpc_input_outstanding(const struct rpc *rpc, uint64_t cid)
{
	const struct input_wait *w;
	unsigned n = 0;

	for (w = rpc->input_waits; w != NULL; w = w->next)
		if (w->conn_id == cid)
			n++;
	return n;
}

static void
rpc_input_wait_free(struct input_wait *w)
{
	if (w->prev != NULL)
		w->prev->next = w->next;
	else
		w->rpc->input_waits = w->next;
	if (w->next != NULL)
		w->next->prev = w->prev;
	free(w);
}

static void
rpc_input_done(void *arg, uint32_t accepted, const struct cerr *err)
{
	struct input_wait *w = arg;
	struct rpc *rpc = w->rpc;
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__StepInputReply rep = COHORT__V1__STEP_INPUT_REPLY__INIT;
	struct rpc_timing saved = rpc_timing_swap(rpc, w->timing);
	uint64_t cid = w->conn_id;

	env.id = w->req_id;
	if (err != NULL) {
		rpc_input_wait_free(w);
		rpc_error_to(rpc, cid, env.id, err->code, err->text);
	} else {
		rep.next_offset = w->offset + (accepted <= w->len ? accepted :
		    w->len);
		rpc_input_wait_free(w);
		env.body_case = COHORT__V1__ENVELOPE__BODY_STEP_INPUT_REPLY;
		env.step_input_reply = &rep;
		rpc_send_to(rpc, cid, &env);
	}
	rpc_timing_swap(rpc, saved);
}

/* The request's input as the domain takes it: an appended chunk (an
 * attached terminal's) carries no end, and a window is both sizes of a
 * terminal's or neither. */
static int
rpc_input_check(const Cohort__V1__StepInputRequest *q, struct step_input *in,
    struct cerr *err)
{
	memset(in, 0, sizeof(*in));
	in->offset = q->offset;
	in->data = q->data.data;
	in->len = q->data.len;
	in->eof = q->has_eof && q->eof;
	in->append = q->has_append && q->append;
	if (in->append && in->eof)
		return cerr_set(err, ERR_INVALID, "an attached terminal's "
		    "input does not end the step's");
	if (q->has_rows != q->has_cols || (q->has_rows && (q->rows == 0 ||
	    q->cols == 0 || q->rows > UINT16_MAX || q->cols > UINT16_MAX)))
		return cerr_set(err, ERR_INVALID, "a window needs rows and "
		    "columns, 1 to 65535 each");
	in->rows = q->has_rows ? (uint16_t)q->rows : 0;
	in->cols = q->has_cols ? (uint16_t)q->cols : 0;
	return 0;
}

void
rpc_step_input(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__StepInputRequest *q = req->step_input;
	const struct peer *who = server_conn_peer(c);
	const struct job *job;
	struct step_input in;
	struct input_wait *w;
	struct cerr err;
	char text[160];

	cerr_clear(&err);
	/* The owner's srun only: input is the owner's to give, even for
	 * an admin. */
	if ((job = jobs_get(rpc->jobs, q->job_id)) == NULL) {
		snprintf(text, sizeof(text), "no job %" PRIu64, q->job_id);
		rpc_error(rpc, c, req->id, ERR_NOT_FOUND, text, false);
		return;
	}
	if (strcmp(who->name, job->user) != 0) {
		snprintf(text, sizeof(text), "job %" PRIu64 " is not yours; "
		    "only its owner may send its steps input", q->job_id);
		rpc_error(rpc, c, req->id, ERR_DENIED, text, false);
		return;
	}
	if (q->data.len > RPC_INPUT_MAX) {
		rpc_error(rpc, c, req->id, ERR_INVALID, "at most 64 KiB of "
		    "input per request", false);
		return;
	}
	if (rpc_input_check(q, &in, &err) == -1) {
		rpc_error(rpc, c, req->id, err.code, err.text, false);
		return;
	}
	if (rpc_input_outstanding(rpc, server_conn_id(c)) >=
	    RPC_INPUT_PER_CONN) {
		snprintf(text, sizeof(text), "%d input writes are already in "
		    "progress on this connection; wait for their answers",
		    RPC_INPUT_PER_CONN);
		rpc_error(rpc, c, req->id, ERR_LIMIT, text, false);
		return;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		rpc_error(rpc, c, req->id, ERR_INTERNAL, "out of memory", false);
		return;
	}
	w->rpc = rpc;
	w->conn_id = server_conn_id(c);
	w->req_id = req->id;
	w->offset = q->offset;
	w->len = q->data.len;
	w->timing = rpc_timing_take(rpc);
	if ((w->next = rpc->input_waits) != NULL)
		w->next->prev = w;
	rpc->input_waits = w;
	if (cluster_step_input(rpc->cluster, q->job_id, q->step_id, &in,
	    clock_now_ms(), rpc_input_done, w, &err) == -1) {
		rpc_timing_swap(rpc, w->timing);
		rpc_input_wait_free(w);
		rpc_error(rpc, c, req->id, err.code, err.text, false);
	}
}
