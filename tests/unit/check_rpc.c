/* The RPC edge (daemon/controller/rpc/rpc*.c) under a unit suite: every
 * request of the dispatch table sent by every kind of identity, through
 * rpc_dispatch over the in-memory domain (tests/unit/rpc_fixture.h),
 * each cell in a copy of one world (a process of its own). The expected
 * outcomes are written out by hand below, not read from rpc.c's table:
 * a test that derives its answers from the code under test cannot fail.
 * A refused request must change nothing (jobs, nodes, steps, commands to
 * agents, events). The same matrix through real daemons and TLS is
 * tests/integration/t450-authz.sh; the domain's own rules (who may do
 * what to a job, by queue) are check_jobs_control's matrix. */
#include "config.h"

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/nodes.h"
#include "lib/frame.h"
#include "lib/wire.h"
#include "tests/unit/rpc_fixture.h"

#define STATE_MAX 8192

/* The columns: who sends. */
enum ident {
	ID_NONE,	/* no identity (no client certificate role) */
	ID_ALICE,	/* user, owner of the world's jobs */
	ID_BOB,		/* another user */
	ID_CAROL,	/* user, admin of queue ateam (not of bteam) */
	ID_OPS,		/* cluster admin */
	ID_AGENT,	/* the agent of the node running alice's job */
	ID_AGENT2,	/* the agent of another node */
	ID_CTL,		/* another controller replica */
	NIDS
};

static const char *const id_label[NIDS] = {
	"anon", "alice", "bob", "carol", "ops", "agent", "agent2", "ctl"
};

static struct conn *
ident_conn(struct rpcfix *f, enum ident id)
{
	switch (id) {
	case ID_NONE:
		return rpcfix_conn(f, "anon", ROLE_NONE, false);
	case ID_ALICE:
		return rpcfix_conn(f, "alice", ROLE_USER, true);
	case ID_BOB:
		return rpcfix_conn(f, "bob", ROLE_USER, true);
	case ID_CAROL:
		return rpcfix_conn(f, "carol", ROLE_USER, true);
	case ID_OPS:
		return rpcfix_conn(f, "ops", ROLE_ADMIN, true);
	case ID_AGENT:
		return rpcfix_conn(f, f->run_node, ROLE_AGENT, true);
	case ID_AGENT2:
		return rpcfix_conn(f, f->other_node, ROLE_AGENT, true);
	default:
		return rpcfix_conn(f, "ctl2", ROLE_CONTROLLER, true);
	}
}

/* One request and the storage its pointers use. */
struct req {
	Cohort__V1__Envelope env;
	Cohort__V1__Hello hello;
	Cohort__V1__SubmitRequest submit;
	Cohort__V1__JobSpec spec;
	Cohort__V1__ListJobsRequest list_jobs;
	Cohort__V1__GetJobRequest get_job;
	Cohort__V1__CancelRequest cancel;
	Cohort__V1__LogsRequest logs;
	Cohort__V1__ListNodesRequest list_nodes;
	Cohort__V1__GetNodeRequest get_node;
	Cohort__V1__DrainRequest drain;
	Cohort__V1__ResumeRequest resume;
	Cohort__V1__DeleteNodeRequest delete_node;
	Cohort__V1__EventsRequest events;
	Cohort__V1__QueuesRequest queues;
	Cohort__V1__HoldRequest hold;
	Cohort__V1__RequeueRequest requeue;
	Cohort__V1__UpdateRequest update;
	Cohort__V1__UsageRequest usage;
	Cohort__V1__StepCreateRequest step_create;
	Cohort__V1__StepStatusRequest step_status;
	Cohort__V1__StepSignalRequest step_signal;
	Cohort__V1__ListStepsRequest list_steps;
	Cohort__V1__AllocRequest alloc;
	Cohort__V1__StepInputRequest step_input;
	Cohort__V1__RegisterRequest register_;
	Cohort__V1__Inventory inv;
	bool inv_set;
	Cohort__V1__Heartbeat heartbeat;
	Cohort__V1__TaskExit task_exit;
	Cohort__V1__MembersRequest members;
	Cohort__V1__BackupRequest backup;
	Cohort__V1__Error error;
	Cohort__V1__HelloReply hello_reply;
	Cohort__V1__SubmitReply submit_reply;
	Cohort__V1__LaunchReply launch_reply;
	Cohort__V1__TaskExitAck task_exit_ack;
	uint64_t ids[1];
	char *strs[2];
	uint8_t cred[32];
	uint8_t data[4];
};

typedef void (*build_fn)(struct rpcfix *, const struct conn *, struct req *);

static void
req_init(struct req *r, Cohort__V1__Envelope__BodyCase body)
{
	memset(r, 0, sizeof(*r));
	cohort__v1__envelope__init(&r->env);
	r->env.id = 7;
	r->env.body_case = body;
}

static void
req_release(struct req *r)
{
	if (r->inv_set)
		wire_inventory_pb_release(&r->inv);
}

#define BODY(r, field, up) do {						\
	req_init((r), COHORT__V1__ENVELOPE__BODY_##up);			\
	(r)->env.field = &(r)->field;					\
} while (0)

static void
b_hello(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, hello, HELLO);
	cohort__v1__hello__init(&r->hello);
	r->hello.major = WIRE_MAJOR;
	r->hello.minor = WIRE_MINOR;
}

static void
b_submit_to(struct req *r, const char *queue)
{
	BODY(r, submit, SUBMIT);
	cohort__v1__submit_request__init(&r->submit);
	cohort__v1__job_spec__init(&r->spec);
	r->submit.spec = &r->spec;
	r->strs[0] = "true";
	r->spec.name = "m";
	r->spec.n_argv = 1;
	r->spec.argv = r->strs;
	r->spec.has_gpus_per_node = r->spec.has_nodes_min =
	    r->spec.has_nodes_max = r->spec.has_hold = 1;
	r->spec.gpus_per_node = r->spec.nodes_min = r->spec.nodes_max = 1;
	r->spec.hold = 1;
	r->spec.queue = (char *)queue;
}

static void
b_submit(struct rpcfix *f, const struct conn *c, struct req *r)
{
	b_submit_to(r, "ateam");
}

static void
b_submit_bteam(struct rpcfix *f, const struct conn *c, struct req *r)
{
	b_submit_to(r, "bteam");
}

static void
b_list_jobs(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, list_jobs, LIST_JOBS);
	cohort__v1__list_jobs_request__init(&r->list_jobs);
}

static void
b_get_job(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, get_job, GET_JOB);
	cohort__v1__get_job_request__init(&r->get_job);
	r->get_job.job_id = f->run;
}

static void
b_cancel_job(struct req *r, uint64_t id)
{
	BODY(r, cancel, CANCEL);
	cohort__v1__cancel_request__init(&r->cancel);
	r->cancel.job_id = id;
}

static void
b_cancel(struct rpcfix *f, const struct conn *c, struct req *r)
{
	b_cancel_job(r, f->run);
}

static void
b_cancel_bteam(struct rpcfix *f, const struct conn *c, struct req *r)
{
	b_cancel_job(r, f->bjob);
}

static void
b_logs(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, logs, LOGS);
	cohort__v1__logs_request__init(&r->logs);
	r->logs.job_id = f->run;
}

static void
b_list_nodes(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, list_nodes, LIST_NODES);
	cohort__v1__list_nodes_request__init(&r->list_nodes);
}

static void
b_get_node(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, get_node, GET_NODE);
	cohort__v1__get_node_request__init(&r->get_node);
	r->get_node.name = f->run_node;
}

static void
b_drain_node(struct req *r, char *node)
{
	BODY(r, drain, DRAIN);
	cohort__v1__drain_request__init(&r->drain);
	r->strs[0] = node;
	r->drain.n_nodes = 1;
	r->drain.nodes = r->strs;
	r->drain.reason = "authz";
}

static void
b_drain(struct rpcfix *f, const struct conn *c, struct req *r)
{
	b_drain_node(r, f->other_node);
}

/* Resume acts on a drained node: the admin drains it first. */
static void
b_resume(struct rpcfix *f, const struct conn *c, struct req *r)
{
	struct conn *ops = rpcfix_conn(f, "ops", ROLE_ADMIN, true);
	const Cohort__V1__Envelope *rep;

	b_drain_node(r, f->other_node);
	rep = rpcfix_call(f, ops, &r->env);
	ck_assert(rep != NULL &&
	    rep->body_case == COHORT__V1__ENVELOPE__BODY_DRAIN_REPLY);
	ck_assert(nodes_get(f->d.ns, f->other_node)->drained);
	BODY(r, resume, RESUME);
	cohort__v1__resume_request__init(&r->resume);
	r->strs[0] = f->other_node;
	r->resume.n_nodes = 1;
	r->resume.nodes = r->strs;
}

static void
b_delete_node(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, delete_node, DELETE_NODE);
	cohort__v1__delete_node_request__init(&r->delete_node);
	r->delete_node.name = "node03";
}

static void
b_events(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, events, EVENTS);
	cohort__v1__events_request__init(&r->events);
	r->events.has_limit = 1;
	r->events.limit = 5;
}

static void
b_queues(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, queues, QUEUES);
	cohort__v1__queues_request__init(&r->queues);
}

static void
b_hold_job(struct req *r, uint64_t id, bool release)
{
	BODY(r, hold, HOLD);
	cohort__v1__hold_request__init(&r->hold);
	r->ids[0] = id;
	r->hold.n_job_ids = 1;
	r->hold.job_ids = r->ids;
	r->hold.has_release = release;
	r->hold.release = release;
}

static void
b_hold(struct rpcfix *f, const struct conn *c, struct req *r)
{
	b_hold_job(r, f->pending, false);
}

static void
b_release(struct rpcfix *f, const struct conn *c, struct req *r)
{
	b_hold_job(r, f->bjob, true);
}

static void
b_requeue(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, requeue, REQUEUE);
	cohort__v1__requeue_request__init(&r->requeue);
	r->ids[0] = f->run;
	r->requeue.n_job_ids = 1;
	r->requeue.job_ids = r->ids;
}

static void
b_update_job(struct req *r, uint64_t id, int32_t priority, char *queue)
{
	BODY(r, update, UPDATE);
	cohort__v1__update_request__init(&r->update);
	r->update.job_id = id;
	r->update.has_priority = priority >= 0;
	r->update.priority = priority;
	r->update.queue = queue;
}

/* Lowered: no more than the owner may ask. */
static void
b_update(struct rpcfix *f, const struct conn *c, struct req *r)
{
	b_update_job(r, f->pending, 50, NULL);
}

static void
b_update_raise(struct rpcfix *f, const struct conn *c, struct req *r)
{
	b_update_job(r, f->pending, 500, NULL);
}

static void
b_update_move(struct rpcfix *f, const struct conn *c, struct req *r)
{
	b_update_job(r, f->pending, -1, "bteam");
}

static void
b_update_bteam(struct rpcfix *f, const struct conn *c, struct req *r)
{
	b_update_job(r, f->bjob, 50, NULL);
}

static void
b_usage(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, usage, USAGE);
	cohort__v1__usage_request__init(&r->usage);
}

/* A second step in alice's job, with alice's credential (sharing the
 * GPU of the step that runs). */
static void
b_step_create(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, step_create, STEP_CREATE);
	cohort__v1__step_create_request__init(&r->step_create);
	rpcfix_cred(f, r->cred);
	r->step_create.job_id = f->run;
	r->step_create.cred.data = r->cred;
	r->step_create.cred.len = sizeof(r->cred);
	r->strs[0] = "hostname";
	r->step_create.n_argv = 1;
	r->step_create.argv = r->strs;
	r->step_create.has_ntasks = r->step_create.has_overlap = 1;
	r->step_create.ntasks = 1;
	r->step_create.overlap = 1;
}

static void
b_step_status(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, step_status, STEP_STATUS);
	cohort__v1__step_status_request__init(&r->step_status);
	r->step_status.job_id = f->run;
	r->step_status.step_id = f->step;
}

static void
b_step_signal(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, step_signal, STEP_SIGNAL);
	cohort__v1__step_signal_request__init(&r->step_signal);
	r->step_signal.job_id = f->run;
	r->step_signal.step_id = f->step;
	r->step_signal.signal = 10;
}

static void
b_list_steps(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, list_steps, LIST_STEPS);
	cohort__v1__list_steps_request__init(&r->list_steps);
	r->ids[0] = f->run;
	r->list_steps.n_job_ids = 1;
	r->list_steps.job_ids = r->ids;
}

static void
b_alloc(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, alloc, ALLOC);
	cohort__v1__alloc_request__init(&r->alloc);
	r->alloc.job_id = f->run;
	r->alloc.op = COHORT__V1__ALLOC_REQUEST__OP__STATE;
}

static void
b_step_input(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, step_input, STEP_INPUT);
	cohort__v1__step_input_request__init(&r->step_input);
	r->step_input.job_id = f->run;
	r->step_input.step_id = f->step;
	r->data[0] = 'x';
	r->step_input.data.data = r->data;
	r->step_input.data.len = 1;
}

/* The sender's own name, with its node's inventory when it has one. */
static void
b_register(struct rpcfix *f, const struct conn *c, struct req *r)
{
	const struct node *n = nodes_get(f->d.ns, c->peer.name);
	struct node *model = nodes_get(f->d.ns, "node01");

	req_init(r, COHORT__V1__ENVELOPE__BODY_REGISTER);
	r->env.register_ = &r->register_;
	cohort__v1__register_request__init(&r->register_);
	r->register_.name = (char *)c->peer.name;
	ck_assert_int_eq(wire_inventory_to_pb(n != NULL ? n->inv : model->inv,
	    &r->inv), 0);
	r->inv_set = true;
	r->register_.inventory = &r->inv;
}

static void
b_heartbeat(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, heartbeat, HEARTBEAT);
	cohort__v1__heartbeat__init(&r->heartbeat);
}

/* Rank 0 of alice's running job ended well. */
static void
b_task_exit(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, task_exit, TASK_EXIT);
	cohort__v1__task_exit__init(&r->task_exit);
	r->task_exit.job_id = f->run;
	r->task_exit.restart = f->run_attempt;
	r->task_exit.rank = 0;
	r->task_exit.wait_status = 0;
}

static void
b_members(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, members, MEMBERS);
	cohort__v1__members_request__init(&r->members);
}

static void
b_backup(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, backup, BACKUP);
	cohort__v1__backup_request__init(&r->backup);
}

/* Replies nobody asked for. */
static void
b_error(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, error, ERROR);
	cohort__v1__error__init(&r->error);
	r->error.code = COHORT__V1__ERROR_CODE__ERROR_INTERNAL;
	r->error.text = "unasked";
}

static void
b_hello_reply(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, hello_reply, HELLO_REPLY);
	cohort__v1__hello_reply__init(&r->hello_reply);
	r->hello_reply.major = WIRE_MAJOR;
	r->hello_reply.identity = "x";
	r->hello_reply.role = "user";
}

static void
b_submit_reply(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, submit_reply, SUBMIT_REPLY);
	cohort__v1__submit_reply__init(&r->submit_reply);
	r->submit_reply.job_id = 1;
}

static void
b_launch_reply(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, launch_reply, LAUNCH_REPLY);
	cohort__v1__launch_reply__init(&r->launch_reply);
	r->launch_reply.job_id = f->run;
	r->launch_reply.restart = f->run_attempt;
}

static void
b_task_exit_ack(struct rpcfix *f, const struct conn *c, struct req *r)
{
	BODY(r, task_exit_ack, TASK_EXIT_ACK);
	cohort__v1__task_exit_ack__init(&r->task_exit_ack);
	r->task_exit_ack.job_id = f->run;
	r->task_exit_ack.restart = f->run_attempt;
}

/* The matrix. A cell is "ok" (the row's reply; for a row whose reply is
 * NOT_SET, no reply at all), or the error code the request is answered
 * with (for Hold, Requeue: the code of the one job's result inside the
 * reply), "+close" when the controller closes the connection after it. */
struct row {
	const char *name;
	build_fn build;
	Cohort__V1__Envelope__BodyCase ok;
	bool changes;		/* an allowed request changes the state */
	const char *want[NIDS];
};

#define R(x) COHORT__V1__ENVELOPE__BODY_##x
#define NOID "DENIED+close"	/* no identity: refused, closed */
#define PROTO "PROTOCOL+close"	/* a reply nobody asked for */
/* Columns: anon, alice, bob, carol, ops, agent, agent2, ctl. */
#define PEOPLE_OK \
	{ NOID, "ok", "ok", "ok", "ok", "DENIED", "DENIED", NOID }
#define ADMIN_OK \
	{ NOID, "DENIED", "DENIED", "DENIED", "ok", "DENIED", "DENIED", NOID }
/* Owner, queue admin (carol: of ateam) and admin; not another user. */
#define OWNER_QADMIN_ADMIN \
	{ NOID, "ok", "DENIED", "ok", "ok", "DENIED", "DENIED", NOID }
/* Owner and admin only. */
#define OWNER_ADMIN \
	{ NOID, "ok", "DENIED", "DENIED", "ok", "DENIED", "DENIED", NOID }
#define ALL_PROTO { PROTO, PROTO, PROTO, PROTO, PROTO, PROTO, PROTO, PROTO }

static const struct row rows[] = {
	{ "Hello", b_hello, R(HELLO_REPLY), false,
	  { NOID, "ok", "ok", "ok", "ok", "ok", "ok", "ok" } },
	/* Into ateam, whose users are alice, bob and carol. */
	{ "Submit", b_submit, R(SUBMIT_REPLY), true, PEOPLE_OK },
	/* Into bteam: carol is none of its users. */
	{ "Submit bteam", b_submit_bteam, R(SUBMIT_REPLY), true,
	  { NOID, "ok", "ok", "DENIED", "ok", "DENIED", "DENIED", NOID } },
	{ "ListJobs", b_list_jobs, R(LIST_JOBS_REPLY), false, PEOPLE_OK },
	/* Anyone sees a job (private fields withheld: test_private). */
	{ "GetJob", b_get_job, R(GET_JOB_REPLY), false, PEOPLE_OK },
	{ "Cancel", b_cancel, R(CANCEL_REPLY), true, OWNER_QADMIN_ADMIN },
	/* carol administers ateam, not bteam. */
	{ "Cancel bteam", b_cancel_bteam, R(CANCEL_REPLY), true, OWNER_ADMIN },
	/* Logs are private data: a queue's admin is not an admin. */
	{ "Logs", b_logs, R(LOGS_REPLY), false, OWNER_ADMIN },
	{ "ListNodes", b_list_nodes, R(LIST_NODES_REPLY), false, PEOPLE_OK },
	{ "GetNode", b_get_node, R(GET_NODE_REPLY), false, PEOPLE_OK },
	{ "Drain", b_drain, R(DRAIN_REPLY), true, ADMIN_OK },
	{ "Resume", b_resume, R(RESUME_REPLY), true, ADMIN_OK },
	{ "DeleteNode", b_delete_node, R(DELETE_NODE_REPLY), true, ADMIN_OK },
	{ "Events", b_events, R(EVENTS_REPLY), false, PEOPLE_OK },
	{ "Queues", b_queues, R(QUEUES_REPLY), false, PEOPLE_OK },
	/* Holding is its owner's or an admin's, not a queue admin's. */
	{ "Hold", b_hold, R(HOLD_REPLY), true, OWNER_ADMIN },
	{ "Release", b_release, R(HOLD_REPLY), true, OWNER_ADMIN },
	{ "Requeue", b_requeue, R(REQUEUE_REPLY), true, OWNER_QADMIN_ADMIN },
	{ "Update", b_update, R(UPDATE_REPLY), true, OWNER_QADMIN_ADMIN },
	/* Raising a priority: an admin, or an admin of the queue. */
	{ "Update raise", b_update_raise, R(UPDATE_REPLY), true,
	  { NOID, "DENIED", "DENIED", "ok", "ok", "DENIED", "DENIED", NOID } },
	/* Into bteam: carol is no admin there (she is one where it is). */
	{ "Update move", b_update_move, R(UPDATE_REPLY), true, OWNER_ADMIN },
	{ "Update bteam", b_update_bteam, R(UPDATE_REPLY), true, OWNER_ADMIN },
	{ "Usage", b_usage, R(USAGE_REPLY), false, PEOPLE_OK },
	/* Steps: the credential is alice's, and the owner's only. */
	{ "StepCreate", b_step_create, R(STEP_CREATE_REPLY), true,
	  { NOID, "ok", "DENIED", "DENIED", "DENIED", "DENIED", "DENIED",
	    NOID } },
	{ "StepStatus", b_step_status, R(STEP_STATUS_REPLY), false,
	  OWNER_ADMIN },
	{ "StepSignal", b_step_signal, R(STEP_SIGNAL_REPLY), true,
	  OWNER_ADMIN },
	/* Anyone lists steps (private fields withheld). */
	{ "ListSteps", b_list_steps, R(LIST_STEPS_REPLY), false, PEOPLE_OK },
	/* An allocation is its owner's alone. */
	{ "Alloc", b_alloc, R(ALLOC_REPLY), false,
	  { NOID, "ok", "DENIED", "DENIED", "DENIED", "DENIED", "DENIED",
	    NOID } },
	/* Input is the owner's alone, even for an admin; alice's passes
	 * the edge and the domain says the step takes none (it was
	 * started without srun -i). */
	{ "StepInput", b_step_input, R(STEP_INPUT_REPLY), false,
	  { NOID, "CONFLICT", "DENIED", "DENIED", "DENIED", "DENIED",
	    "DENIED", NOID } },
	{ "Register", b_register, R(REGISTER_REPLY), false,
	  { NOID, "DENIED", "DENIED", "DENIED", "DENIED", "ok", "ok", NOID } },
	{ "Heartbeat", b_heartbeat, R(_NOT_SET), false,
	  { NOID, "DENIED", "DENIED", "DENIED", "DENIED", "ok", "ok", NOID } },
	/* Only the node holding the rank in this attempt reports it. */
	{ "TaskExit", b_task_exit, R(TASK_EXIT_ACK), true,
	  { NOID, "DENIED", "DENIED", "DENIED", "DENIED", "ok", "DENIED",
	    NOID } },
	/* Not replicated: the request passes the edge and is refused as
	 * INVALID by the handler. */
	{ "Members", b_members, R(MEMBERS_REPLY), false,
	  { NOID, "DENIED", "DENIED", "DENIED", "INVALID", "DENIED", "DENIED",
	    "INVALID" } },
	{ "Backup", b_backup, R(BACKUP_REPLY), false,
	  { NOID, "DENIED", "DENIED", "DENIED", "ok", "DENIED", "DENIED",
	    "ok" } },
	{ "Error", b_error, R(_NOT_SET), false, ALL_PROTO },
	{ "HelloReply", b_hello_reply, R(_NOT_SET), false, ALL_PROTO },
	{ "SubmitReply", b_submit_reply, R(_NOT_SET), false, ALL_PROTO },
	{ "LaunchReply", b_launch_reply, R(_NOT_SET), false, ALL_PROTO },
	{ "TaskExitAck", b_task_exit_ack, R(_NOT_SET), false, ALL_PROTO },
};

static const char *const err_label[] = {
	"NONE", "INVALID", "DENIED", "NOT_FOUND", "CONFLICT", "INTERNAL",
	"PROTOCOL", "TOO_LARGE", "VERSION", "UNAVAILABLE", "LIMIT",
	"NOT_LEADER", "BUSY",
};

static const char *
err_name(Cohort__V1__ErrorCode pb)
{
	enum err_code code = wire_err_from_pb(pb);

	return (size_t)code < sizeof(err_label) / sizeof(err_label[0]) ?
	    err_label[code] : "?";
}

/* The one job result inside a reply that carries them, or NULL. */
static const Cohort__V1__JobResult *
one_result(const Cohort__V1__Envelope *r)
{
	size_t n = 0;
	Cohort__V1__JobResult **res = NULL;

	switch (r->body_case) {
	case COHORT__V1__ENVELOPE__BODY_HOLD_REPLY:
		n = r->hold_reply->n_results;
		res = r->hold_reply->results;
		break;
	case COHORT__V1__ENVELOPE__BODY_REQUEUE_REPLY:
		n = r->requeue_reply->n_results;
		res = r->requeue_reply->results;
		break;
	default:
		break;
	}
	return n == 1 ? res[0] : NULL;
}

/* What c was answered, as the matrix writes it. */
static void
outcome(const Cohort__V1__Envelope__BodyCase ok, const struct conn *c,
    const Cohort__V1__Envelope *r, char *buf, size_t len)
{
	const Cohort__V1__JobResult *jr;
	const char *what;

	if (r == NULL)
		what = ok == R(_NOT_SET) ? "ok" : "no reply";
	else if (r->body_case == R(ERROR))
		what = err_name(r->error->code);
	else if ((jr = one_result(r)) != NULL && jr->has_code)
		what = err_name(jr->code);
	else if (r->body_case == ok)
		what = "ok";
	else
		what = wire_body_name(r->body_case);
	snprintf(buf, len, "%s%s", what, c->closed ? "+close" : "");
}

/* What one cell saw, sent back from its process. */
struct cell {
	char got[64];
	bool same;		/* the state as it was */
	char text[256];		/* the error's text, if any */
};

/* Run row i as identity k in a copy of the world f: a child process, so
 * that each cell starts from the same world without building it again
 * (SQLite's schema and statements are most of a world's cost). The child
 * frees what it holds before it exits, so that under valgrind a leak of
 * the request's is its own. -1 when the child died. */
static int
run_cell(struct rpcfix *f, size_t i, size_t k, struct cell *out)
{
	static char before[STATE_MAX], after[STATE_MAX];
	const Cohort__V1__Envelope *rep;
	struct conn *c;
	struct req r;
	int p[2], status;
	ssize_t n;
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	fflush(NULL);
	if ((pid = fork()) == 0) {
		close(p[0]);
		memset(out, 0, sizeof(*out));
		c = ident_conn(f, (enum ident)k);
		rows[i].build(f, c, &r);
		rpcfix_state(f, before, sizeof(before));
		rep = rpcfix_call(f, c, &r.env);
		outcome(rows[i].ok, c, rep, out->got, sizeof(out->got));
		if (rep != NULL && rep->body_case == R(ERROR))
			snprintf(out->text, sizeof(out->text), "%s",
			    rep->error->text);
		rpcfix_state(f, after, sizeof(after));
		out->same = strcmp(before, after) == 0;
		req_release(&r);
		rpcfix_close(f);
		n = write(p[1], out, sizeof(*out));
		_exit(n == (ssize_t)sizeof(*out) ? 0 : 1);
	}
	ck_assert_int_ge(pid, 0);
	close(p[1]);
	n = read(p[0], out, sizeof(*out));
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return n == (ssize_t)sizeof(*out) && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* The matrix's world, built once in the runner (an unchecked fixture):
 * each cell runs in a copy of it. */
static struct rpcfix world;

static void
world_open(void)
{
	rpcfix_open(&world);
}

static void
world_close(void)
{
	rpcfix_close(&world);
}

/* Row _i of the matrix, every identity, each cell in a copy of the
 * world; every disagreement is listed before the test fails. */
START_TEST(test_matrix)
{
	const struct row *row = &rows[_i];
	char bad[4096] = "";
	size_t k, nbad = 0;
	struct cell cell;

	for (k = 0; k < NIDS; k++) {
		const char *want = row->want[k];
		bool ok = strcmp(want, "ok") == 0;

		if (run_cell(&world, (size_t)_i, k, &cell) == -1) {
			nbad++;
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
			    "  %s as %s: the cell's process died\n",
			    row->name, id_label[k]);
			continue;
		}
		if (strcmp(cell.got, want) == 0 && (ok || cell.same) &&
		    (!ok || !row->changes || !cell.same))
			continue;
		nbad++;
		snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
		    "  %s as %s: want %s, got %s%s%s%s%s%s\n", row->name,
		    id_label[k], want, cell.got, !ok && !cell.same ?
		    " (and the state changed)" : "", ok && row->changes &&
		    cell.same ? " (but nothing changed)" : "",
		    cell.text[0] ? " (" : "", cell.text,
		    cell.text[0] ? ")" : "");
	}
	ck_assert_msg(nbad == 0, "row %s: %zu of %d cells disagree:\n%s",
	    row->name, nbad, NIDS, bad);
}
END_TEST

/* ---- Beyond the matrix ------------------------------------------------ */

static char state0[STATE_MAX], state1[STATE_MAX];

/* The reply to r.env sent as (name, role) on a new connection, which
 * *cp names. */
static const Cohort__V1__Envelope *
send_as(struct rpcfix *f, const char *name, enum role role, struct req *r,
    struct conn **cp)
{
	struct conn *c = rpcfix_conn(f, name, role, true);

	if (cp != NULL)
		*cp = c;
	return rpcfix_call(f, c, &r->env);
}

/* rep is an Error of code; c closed or not as close says; the state as
 * state0 holds it. */
static void
assert_refused(struct rpcfix *f, const Cohort__V1__Envelope *rep,
    const struct conn *c, enum err_code code, bool close, const char *what)
{
	ck_assert_msg(rep != NULL && rep->body_case == R(ERROR), "%s: not "
	    "refused (%s)", what, rep == NULL ? "no reply" :
	    wire_body_name(rep->body_case));
	ck_assert_msg(wire_err_from_pb(rep->error->code) == code, "%s: %s, "
	    "not %s (%s)", what, err_name(rep->error->code), err_label[code],
	    rep->error->text);
	ck_assert_msg(rep->error->text != NULL && rep->error->text[0] != '\0',
	    "%s: an error without its reason", what);
	ck_assert_msg(c->closed == close, "%s: the connection %s", what,
	    c->closed ? "was closed" : "stays open");
	rpcfix_state(f, state1, sizeof(state1));
	ck_assert_msg(strcmp(state0, state1) == 0, "%s changed the state:\n"
	    "%s----\n%s", what, state0, state1);
}

/* Private fields (environment values, command line, working directory)
 * reach the owner and admins; another user and a queue's admin see the
 * job with them withheld and marked so, in GetJob and ListJobs alike;
 * a step's name and reason likewise in ListSteps. */
START_TEST(test_private)
{
	static const char *const who[] = { "alice", "ops", "bob", "carol" };
	static const enum role roles[] = { ROLE_USER, ROLE_ADMIN, ROLE_USER,
	    ROLE_USER };
	char *env[] = { "SECRET=hunter2" }, *argv[] = { "train", "--t0k" };
	const Cohort__V1__Envelope *rep;
	const Cohort__V1__Job *job;
	struct rpcfix f;
	struct req r;
	uint64_t id;
	size_t i, k;

	rpcfix_open(&f);
	b_submit(&f, NULL, &r);
	r.spec.n_env = 1;
	r.spec.env = env;
	r.spec.n_argv = 2;
	r.spec.argv = argv;
	r.spec.workdir = "/home/alice/w";
	rep = send_as(&f, "alice", ROLE_USER, &r, NULL);
	ck_assert(rep != NULL && rep->body_case == R(SUBMIT_REPLY));
	id = rep->submit_reply->job_id;
	for (i = 0; i < 4; i++) {
		bool mine = i < 2;

		b_get_job(&f, NULL, &r);
		r.get_job.job_id = id;
		rep = send_as(&f, who[i], roles[i], &r, NULL);
		ck_assert(rep != NULL && rep->body_case == R(GET_JOB_REPLY));
		job = rep->get_job_reply->job;
		ck_assert_msg(job->spec->n_env == (mine ? 1 : 0) &&
		    job->spec->n_argv == (mine ? 2 : 0) &&
		    (job->spec->workdir != NULL) == mine &&
		    (job->has_redacted && job->redacted) == !mine,
		    "GetJob as %s: env %zu, argv %zu", who[i],
		    job->spec->n_env, job->spec->n_argv);
		if (mine)
			ck_assert_str_eq(job->spec->env[0], "SECRET=hunter2");
		/* Public fields stay: whose it is, its state. */
		ck_assert_str_eq(job->user, "alice");

		b_list_jobs(&f, NULL, &r);
		rep = send_as(&f, who[i], roles[i], &r, NULL);
		ck_assert(rep != NULL &&
		    rep->body_case == R(LIST_JOBS_REPLY));
		for (k = 0; k < rep->list_jobs_reply->n_jobs; k++) {
			job = rep->list_jobs_reply->jobs[k];
			if (job->id != id)
				continue;
			ck_assert_msg(job->spec->n_env == (mine ? 1 : 0) &&
			    job->spec->n_argv == (mine ? 2 : 0),
			    "ListJobs as %s", who[i]);
			break;
		}
		ck_assert_uint_lt(k, rep->list_jobs_reply->n_jobs);

		b_list_steps(&f, NULL, &r);
		rep = send_as(&f, who[i], roles[i], &r, NULL);
		ck_assert(rep != NULL &&
		    rep->body_case == R(LIST_STEPS_REPLY));
		ck_assert_uint_eq(rep->list_steps_reply->n_steps, 1);
		ck_assert_msg((rep->list_steps_reply->steps[0]->name != NULL) ==
		    mine, "ListSteps as %s", who[i]);
	}
	rpcfix_close(&f);
}
END_TEST

/* A cancel by filter names the jobs the caller may cancel, no more: bob
 * naming alice selects none of hers; carol, admin of ateam, selects
 * alice's jobs there and not the one in bteam. */
START_TEST(test_cancel_filter)
{
	const Cohort__V1__Envelope *rep;
	const Cohort__V1__CancelReply *cr;
	struct rpcfix f;
	struct conn *c;
	struct req r;
	size_t i;

	rpcfix_open(&f);
	rpcfix_state(&f, state0, sizeof(state0));
	b_cancel_job(&r, 0);
	r.cancel.user = "alice";
	rep = send_as(&f, "bob", ROLE_USER, &r, &c);
	ck_assert(rep != NULL && rep->body_case == R(CANCEL_REPLY));
	cr = rep->cancel_reply;
	for (i = 0; i < cr->n_results; i++)
		ck_assert_msg(cr->results[i]->has_code, "bob cancelled job "
		    "%" PRIu64, cr->results[i]->job_id);
	rpcfix_state(&f, state1, sizeof(state1));
	ck_assert_str_eq(state0, state1);

	rep = send_as(&f, "carol", ROLE_USER, &r, &c);
	ck_assert(rep != NULL && rep->body_case == R(CANCEL_REPLY));
	cr = rep->cancel_reply;
	ck_assert_uint_eq(cr->n_results, 2);
	for (i = 0; i < cr->n_results; i++) {
		ck_assert(!cr->results[i]->has_code);
		ck_assert(cr->results[i]->job_id == f.run ||
		    cr->results[i]->job_id == f.pending);
	}
	ck_assert_int_eq(domain_job(&f.d, f.pending)->state, JOB_CANCELLED);
	ck_assert_int_eq(domain_job(&f.d, f.bjob)->state, JOB_PENDING);
	rpcfix_close(&f);
}
END_TEST

/* An admin's hold is the admins' to release: alice, whose job it is,
 * may not; ops may. */
START_TEST(test_admin_hold)
{
	const Cohort__V1__Envelope *rep;
	const Cohort__V1__JobResult *jr;
	struct rpcfix f;
	struct req r;

	rpcfix_open(&f);
	b_hold_job(&r, f.pending, false);
	rep = send_as(&f, "ops", ROLE_ADMIN, &r, NULL);
	ck_assert(rep != NULL && (jr = one_result(rep)) != NULL &&
	    !jr->has_code);
	ck_assert_int_eq(domain_job(&f.d, f.pending)->hold, JOB_HOLD_ADMIN);
	rpcfix_state(&f, state0, sizeof(state0));
	b_hold_job(&r, f.pending, true);
	rep = send_as(&f, "alice", ROLE_USER, &r, NULL);
	ck_assert(rep != NULL && (jr = one_result(rep)) != NULL &&
	    jr->has_code);
	ck_assert_str_eq(err_name(jr->code), "DENIED");
	rpcfix_state(&f, state1, sizeof(state1));
	ck_assert_str_eq(state0, state1);
	rep = send_as(&f, "ops", ROLE_ADMIN, &r, NULL);
	ck_assert(rep != NULL && (jr = one_result(rep)) != NULL &&
	    !jr->has_code);
	ck_assert_int_eq(domain_job(&f.d, f.pending)->hold, JOB_HOLD_NONE);
	rpcfix_close(&f);
}
END_TEST

/* A body sent by the wrong role reaches nothing: a user's TaskExit for
 * a rank of her own job, an agent's Submit and Cancel. */
START_TEST(test_wrong_role)
{
	const Cohort__V1__Envelope *rep;
	struct rpcfix f;
	struct conn *c;
	struct req r;

	rpcfix_open(&f);
	rpcfix_state(&f, state0, sizeof(state0));
	b_task_exit(&f, NULL, &r);
	rep = send_as(&f, "alice", ROLE_USER, &r, &c);
	assert_refused(&f, rep, c, ERR_DENIED, false, "alice's TaskExit");
	ck_assert_int_eq(domain_job(&f.d, f.run)->state, JOB_RUNNING);
	b_submit(&f, NULL, &r);
	rep = send_as(&f, f.run_node, ROLE_AGENT, &r, &c);
	assert_refused(&f, rep, c, ERR_DENIED, false, "an agent's Submit");
	b_cancel(&f, NULL, &r);
	rep = send_as(&f, f.run_node, ROLE_AGENT, &r, &c);
	assert_refused(&f, rep, c, ERR_DENIED, false, "an agent's Cancel");
	/* An agent speaks for its own node only. */
	c = rpcfix_conn(&f, f.other_node, ROLE_AGENT, true);
	b_register(&f, c, &r);
	r.register_.name = f.run_node;
	rep = rpcfix_call(&f, c, &r.env);
	assert_refused(&f, rep, c, ERR_DENIED, true,
	    "a Register under another node's name");
	req_release(&r);
	rpcfix_close(&f);
}
END_TEST

/* The Envelope with no body, a request before Hello, a Hello of another
 * major version: the peer is confused, and is closed. */
START_TEST(test_protocol)
{
	const Cohort__V1__Envelope *rep;
	struct rpcfix f;
	struct conn *c;
	struct req r;

	rpcfix_open(&f);
	rpcfix_state(&f, state0, sizeof(state0));
	req_init(&r, COHORT__V1__ENVELOPE__BODY__NOT_SET);
	rep = send_as(&f, "alice", ROLE_USER, &r, &c);
	assert_refused(&f, rep, c, ERR_PROTOCOL, true, "an empty envelope");
	ck_assert_uint_eq(rep->id, 7);

	c = rpcfix_conn(&f, "alice", ROLE_USER, false);
	b_submit(&f, NULL, &r);
	rep = rpcfix_call(&f, c, &r.env);
	assert_refused(&f, rep, c, ERR_PROTOCOL, true, "Submit before Hello");

	c = rpcfix_conn(&f, "alice", ROLE_USER, false);
	b_hello(&f, NULL, &r);
	r.hello.major = WIRE_MAJOR + 1;
	rep = rpcfix_call(&f, c, &r.env);
	assert_refused(&f, rep, c, ERR_VERSION, true, "Hello of major + 1");
	ck_assert(!c->hello);

	/* The same Hello at this major opens the session. */
	c = rpcfix_conn(&f, "alice", ROLE_USER, false);
	b_hello(&f, NULL, &r);
	rep = rpcfix_call(&f, c, &r.env);
	ck_assert(rep != NULL && rep->body_case == R(HELLO_REPLY));
	ck_assert(c->hello && !c->closed);
	ck_assert_str_eq(rep->hello_reply->identity, "alice");
	ck_assert_str_eq(rep->hello_reply->role, "user");
	ck_assert_uint_eq(rep->hello_reply->max_frame, f.max_frame);
	rpcfix_close(&f);
}
END_TEST

/* Strings that are not text (a NUL byte protobuf-c would cut the string
 * at; invalid UTF-8) are refused whole by the decoder, the request
 * answered INVALID with the field named, the connection kept. */
START_TEST(test_not_text)
{
	static const char *const bad[] = { "\0", "\xff" };
	const Cohort__V1__Envelope *rep;
	struct rpcfix f;
	struct conn *c;
	struct req r;
	uint8_t buf[512], *at;
	size_t len, i;
	bool undecodable;

	rpcfix_open(&f);
	rpcfix_state(&f, state0, sizeof(state0));
	for (i = 0; i < 2; i++) {
		b_submit(&f, NULL, &r);
		r.spec.name = "abcXdef";
		len = cohort__v1__envelope__get_packed_size(&r.env);
		ck_assert_uint_le(len, sizeof(buf));
		cohort__v1__envelope__pack(&r.env, buf);
		at = memmem(buf, len, "abcXdef", 7);
		ck_assert_ptr_nonnull(at);
		at[3] = (uint8_t)bad[i][0];
		c = rpcfix_conn(&f, "alice", ROLE_USER, true);
		rep = rpcfix_call_raw(&f, c, buf, len, &undecodable);
		ck_assert(!undecodable);
		assert_refused(&f, rep, c, ERR_INVALID, false, i == 0 ?
		    "a NUL in a job's name" : "a name that is not UTF-8");
		ck_assert_msg(strstr(rep->error->text, "name") != NULL, "%s",
		    rep->error->text);
	}
	rpcfix_close(&f);
}
END_TEST

/* Oversized fields: each refused with its limit, nothing changed, the
 * connection kept. */
START_TEST(test_oversized)
{
	static char name[JOB_NAME_MAX + 2], node[PEER_NAME_MAX + 2];
	static char user[PEER_NAME_MAX + 2];
	static uint8_t script[1024 * 1024 + 1], input[64 * 1024 + 1];
	static uint64_t ids[10001];
	const Cohort__V1__Envelope *rep;
	struct rpcfix f;
	struct conn *c;
	struct req r;

	rpcfix_open(&f);
	rpcfix_state(&f, state0, sizeof(state0));
	memset(name, 'n', sizeof(name) - 1);
	memset(node, 'x', sizeof(node) - 1);
	memset(user, 'u', sizeof(user) - 1);
	memset(script, '#', sizeof(script));

	b_submit(&f, NULL, &r);
	r.spec.name = name;
	rep = send_as(&f, "alice", ROLE_USER, &r, &c);
	assert_refused(&f, rep, c, ERR_INVALID, false, "a long job name");

	b_submit(&f, NULL, &r);
	r.spec.has_script = 1;
	r.spec.script.data = script;
	r.spec.script.len = sizeof(script);
	rep = send_as(&f, "alice", ROLE_USER, &r, &c);
	assert_refused(&f, rep, c, ERR_INVALID, false, "a script of "
	    "script_max + 1 bytes");

	b_delete_node(&f, NULL, &r);
	r.delete_node.name = node;
	rep = send_as(&f, "ops", ROLE_ADMIN, &r, &c);
	assert_refused(&f, rep, c, ERR_INVALID, false, "a long node name");

	b_usage(&f, NULL, &r);
	r.usage.user = user;
	rep = send_as(&f, "alice", ROLE_USER, &r, &c);
	assert_refused(&f, rep, c, ERR_INVALID, false, "a long user name");

	b_step_input(&f, NULL, &r);
	r.step_input.data.data = input;
	r.step_input.data.len = sizeof(input);
	rep = send_as(&f, "alice", ROLE_USER, &r, &c);
	assert_refused(&f, rep, c, ERR_INVALID, false, "64 KiB + 1 of input");

	b_hold(&f, NULL, &r);
	r.hold.n_job_ids = sizeof(ids) / sizeof(ids[0]);
	r.hold.job_ids = ids;
	rep = send_as(&f, "alice", ROLE_USER, &r, &c);
	assert_refused(&f, rep, c, ERR_TOO_LARGE, false, "10001 jobs held");

	b_cancel(&f, NULL, &r);
	r.cancel.job_id = 0;
	r.cancel.n_job_ids = sizeof(ids) / sizeof(ids[0]);
	r.cancel.job_ids = ids;
	rep = send_as(&f, "alice", ROLE_USER, &r, &c);
	assert_refused(&f, rep, c, ERR_TOO_LARGE, false,
	    "10001 jobs cancelled");

	b_drain_node(&r, "node[1-100000000]");
	rep = send_as(&f, "ops", ROLE_ADMIN, &r, &c);
	assert_refused(&f, rep, c, ERR_INVALID, false,
	    "a drain of 10^8 nodes");
	rpcfix_close(&f);
}
END_TEST

/* A replica that does not lead answers every identified request
 * NOT_LEADER, naming the leader when it knows it, and closes; no
 * identity is still refused first; nothing changes. */
START_TEST(test_not_leader)
{
	const Cohort__V1__Envelope *rep;
	struct rpcfix f;
	struct conn *c;
	struct req r;

	rpcfix_open(&f);
	rpcfix_state(&f, state0, sizeof(state0));
	/* Never called through: repl_leader_rpc is the fixture's. */
	f.rpc.repl = (struct repl *)&f;
	f.rpc.serving = false;

	b_submit(&f, NULL, &r);
	rep = send_as(&f, "alice", ROLE_USER, &r, &c);
	assert_refused(&f, rep, c, ERR_NOT_LEADER, true, "Submit, no leader");
	ck_assert_ptr_null(rep->error->leader);

	f.leader = "10.0.0.2:7000";
	b_cancel(&f, NULL, &r);
	rep = send_as(&f, "ops", ROLE_ADMIN, &r, &c);
	assert_refused(&f, rep, c, ERR_NOT_LEADER, true, "Cancel, a leader");
	ck_assert_str_eq(rep->error->leader, "10.0.0.2:7000");

	b_heartbeat(&f, NULL, &r);
	rep = send_as(&f, f.run_node, ROLE_AGENT, &r, &c);
	assert_refused(&f, rep, c, ERR_NOT_LEADER, true, "a heartbeat");

	b_hello(&f, NULL, &r);
	rep = send_as(&f, "bob", ROLE_USER, &r, &c);
	assert_refused(&f, rep, c, ERR_NOT_LEADER, true, "Hello");

	b_submit(&f, NULL, &r);
	c = rpcfix_conn(&f, "anon", ROLE_NONE, false);
	rep = rpcfix_call(&f, c, &r.env);
	assert_refused(&f, rep, c, ERR_DENIED, true, "no identity");

	/* Leading again, it serves. */
	f.rpc.repl = NULL;
	f.rpc.serving = true;
	b_get_job(&f, NULL, &r);
	rep = send_as(&f, "alice", ROLE_USER, &r, &c);
	ck_assert(rep != NULL && rep->body_case == R(GET_JOB_REPLY));
	rpcfix_close(&f);
}
END_TEST

/* A submit is judged against the nodes the controller knows
 * (feasible.c's rules are check_feasible's): what could never run is
 * refused with the limit it names and changes nothing; a DOWN node still
 * counts, and an elastic job is judged by its minimum. */
START_TEST(test_submit_feasible)
{
	const Cohort__V1__Envelope *rep;
	struct rpcfix f;
	struct conn *c;
	struct req r;

	rpcfix_open(&f);
	rpcfix_state(&f, state0, sizeof(state0));
	b_submit(&f, NULL, &r);
	r.spec.gpus_per_node = 16;
	rep = send_as(&f, "alice", ROLE_USER, &r, &c);
	assert_refused(&f, rep, c, ERR_INVALID, false, "16 GPUs a node");
	ck_assert_str_eq(rep->error->text, "--gpus-per-node 16: the largest "
	    "node has 4 GPUs (NVIDIA H100 80GB HBM3)");
	/* node01, node02 and node03 (DOWN) have 4 GPUs: 4 nodes never. */
	b_submit(&f, NULL, &r);
	r.spec.gpus_per_node = 4;
	r.spec.nodes_min = r.spec.nodes_max = 4;
	rep = send_as(&f, "alice", ROLE_USER, &r, &c);
	assert_refused(&f, rep, c, ERR_INVALID, false, "4 nodes");
	ck_assert_msg(strstr(rep->error->text, "--nodes 4: the cluster has "
	    "only 3 nodes with 4 or more GPUs") != NULL, "%s",
	    rep->error->text);
	b_submit(&f, NULL, &r);
	r.spec.gpu_type = "B300";
	rep = send_as(&f, "alice", ROLE_USER, &r, &c);
	assert_refused(&f, rep, c, ERR_INVALID, false, "B300");
	ck_assert_msg(strstr(rep->error->text, "no node has a GPU matching "
	    "'B300'; models here: NVIDIA H100 80GB HBM3") != NULL, "%s",
	    rep->error->text);
	/* Three nodes of 4, one of them DOWN; 3 to 8 nodes of 4. */
	b_submit(&f, NULL, &r);
	r.spec.gpus_per_node = 4;
	r.spec.nodes_min = r.spec.nodes_max = 3;
	rep = send_as(&f, "alice", ROLE_USER, &r, &c);
	ck_assert_msg(rep != NULL && rep->body_case == R(SUBMIT_REPLY),
	    "3 nodes with node03 DOWN: %s", rep == NULL ? "no reply" :
	    rep->body_case == R(ERROR) ? rep->error->text :
	    wire_body_name(rep->body_case));
	b_submit(&f, NULL, &r);
	r.spec.gpus_per_node = 4;
	r.spec.nodes_min = 3;
	r.spec.nodes_max = 8;
	rep = send_as(&f, "alice", ROLE_USER, &r, &c);
	ck_assert_msg(rep != NULL && rep->body_case == R(SUBMIT_REPLY),
	    "3:8 nodes: %s", rep == NULL ? "no reply" :
	    rep->body_case == R(ERROR) ? rep->error->text :
	    wire_body_name(rep->body_case));
	rpcfix_close(&f);
}
END_TEST

static Suite *
rpc_suite(void)
{
	Suite *s = suite_create("rpc");
	TCase *tc = tcase_create("matrix");

	/* A row per test: each within Check's timeout, under valgrind too. */
	tcase_add_unchecked_fixture(tc, world_open, world_close);
	tcase_add_loop_test(tc, test_matrix, 0,
	    (int)(sizeof(rows) / sizeof(rows[0])));
	suite_add_tcase(s, tc);
	tc = tcase_create("edge");
	tcase_add_test(tc, test_private);
	tcase_add_test(tc, test_cancel_filter);
	tcase_add_test(tc, test_admin_hold);
	tcase_add_test(tc, test_wrong_role);
	tcase_add_test(tc, test_protocol);
	tcase_add_test(tc, test_not_text);
	tcase_add_test(tc, test_oversized);
	tcase_add_test(tc, test_not_leader);
	tcase_add_test(tc, test_submit_feasible);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(rpc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
