#include "config.h"

#include <sys/queue.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/rpc/agentcmd.h"
#include "daemon/controller/domain/steps.h"
#include "daemon/controller/rpc/stepcred.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/wire.h"

/* Our request ids have the top bit set, so they can never be confused
 * with the ids an agent gives its own requests. */
#define AGENTCMD_ID_BIT (1ULL << 63)

enum cmd_kind {
	CMD_LAUNCH,
	CMD_PREPARE,		/* a launch with prepare_image: no expiry */
	CMD_READ_LOG,
	CMD_WRITE_STDIN,
};

struct cmd {
	uint64_t id;
	uint64_t conn_id;
	enum cmd_kind kind;
	int64_t sent_ms;
	outbox_done done;
	outbox_prepared prepared;
	outbox_log_done log_done;
	outbox_input_done input_done;
	void *arg;
	TAILQ_ENTRY(cmd) entry;
};

struct agentcmd {
	agentcmd_send_fn send;
	void *send_ctx;
	int64_t timeout_ms;
	uint64_t next_id;
	TAILQ_HEAD(, cmd) pending;
	struct stepcred *sc;		/* NULL: no step credentials */
};

void
agentcmd_set_stepcred(struct agentcmd *ac, struct stepcred *sc)
{
	ac->sc = sc;
}

struct agentcmd *
agentcmd_create(agentcmd_send_fn send, void *ctx, int64_t timeout_ms)
{
	struct agentcmd *ac;

	if ((ac = calloc(1, sizeof(*ac))) == NULL)
		return NULL;
	ac->send = send;
	ac->send_ctx = ctx;
	ac->timeout_ms = timeout_ms;
	TAILQ_INIT(&ac->pending);
	return ac;
}

static void
cmd_complete(struct agentcmd *ac, struct cmd *c, const struct cerr *err,
    const uint8_t *data, size_t len, int64_t now_ms)
{
	TAILQ_REMOVE(&ac->pending, c, entry);
	if (c->kind == CMD_PREPARE)
		c->prepared(c->arg, NULL, err, now_ms);
	else if (c->kind == CMD_READ_LOG)
		c->log_done(c->arg, data, len, err);
	else if (c->kind == CMD_WRITE_STDIN)
		c->input_done(c->arg, (uint32_t)len, err);
	else
		c->done(c->arg, err, now_ms);
	free(c);
}

static void
cmd_fail(struct agentcmd *ac, struct cmd *c, enum err_code code,
    const char *text, int64_t now_ms)
{
	struct cerr err;

	cerr_set(&err, code, "%s", text);
	cmd_complete(ac, c, &err, NULL, 0, now_ms);
}

void
agentcmd_destroy(struct agentcmd *ac)
{
	if (ac == NULL)
		return;
	while (!TAILQ_EMPTY(&ac->pending))
		cmd_fail(ac, TAILQ_FIRST(&ac->pending), ERR_UNAVAILABLE,
		    "the controller is shutting down", clock_now_ms());
	free(ac);
}

/* Send env on conn_id under a fresh id. 0, or -1 when the agent is not
 * connected. */
static int
agentcmd_send(struct agentcmd *ac, uint64_t conn_id,
    Cohort__V1__Envelope *env)
{
	env->id = AGENTCMD_ID_BIT | ++ac->next_id;
	return ac->send(ac->send_ctx, conn_id, env);
}

/* Track a command before sending it: once sent, its answer must find
 * it, so nothing that can fail comes after the send. */
static struct cmd *
agentcmd_track(struct agentcmd *ac, uint64_t conn_id, enum cmd_kind kind,
    int64_t now_ms, void *arg)
{
	struct cmd *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->conn_id = conn_id;
	c->kind = kind;
	c->sent_ms = now_ms;
	c->arg = arg;
	TAILQ_INSERT_TAIL(&ac->pending, c, entry);
	return c;
}

/* Send a tracked command; forget it when the send fails. */
static int
agentcmd_send_tracked(struct agentcmd *ac, struct cmd *c,
    Cohort__V1__Envelope *env)
{
	if (agentcmd_send(ac, c->conn_id, env) == -1) {
		TAILQ_REMOVE(&ac->pending, c, entry);
		free(c);
		return -1;
	}
	c->id = env->id;
	return 0;
}

size_t
agentcmd_pending(const struct agentcmd *ac)
{
	const struct cmd *c;
	size_t n = 0;

	TAILQ_FOREACH(c, &ac->pending, entry)
		n++;
	return n;
}

/* A step's part on this node (l->snode) as StepLaunch; the strings and
 * arrays are borrowed from the step, alive until the send returns. */
static void
agentcmd_step_fill(const struct launch_cmd *l, Cohort__V1__LaunchRequest *lr,
    Cohort__V1__StepLaunch *sl, uint32_t *tpn, Cohort__V1__Container *cbuf)
{
	const struct step *s = l->step;
	size_t i, n = s->nnodes;

	for (i = 0; i < n; i++)
		tpn[i] = s->nodes[i].ntasks;
	sl->step_id = s->id;
	sl->n_argv = s->argc;
	sl->argv = s->argv;
	sl->n_env = s->nenv;
	sl->env = s->env;
	sl->workdir = s->workdir;
	sl->n_nodelist = n;
	sl->nodelist = s->nodenames;
	sl->node_index = l->snode_index;
	sl->n_tasks_per_node = n;
	sl->tasks_per_node = tpn;
	sl->first_rank = l->snode->first_rank;
	sl->ntasks = s->ntasks;
	sl->n_gpus = l->snode->ngpus;
	sl->gpus = (uint32_t *)l->snode->gpus;
	sl->has_gpus_per_task = s->gpus_per_task > 0;
	sl->gpus_per_task = s->gpus_per_task;
	sl->has_cpus_per_task = s->cpus_per_task > 0;
	sl->cpus_per_task = s->cpus_per_task;
	sl->master_addr = (char *)l->step_master_addr;
	sl->master_port = s->master_port;
	sl->name = s->name;
	/* Unset without input, so that an older agent does what it did. */
	sl->has_stdin_pipe = s->input;
	sl->stdin_pipe = s->input;
	sl->has_pty = s->pty;
	sl->pty = s->pty;
	sl->has_rows = sl->has_cols = s->pty && s->rows > 0 && s->cols > 0;
	sl->rows = s->rows;
	sl->cols = s->cols;
	sl->container = wire_ctr_to_pb(&s->ctr, cbuf);
	lr->step = sl;
	/* Its tasks run on the job's GPUs of the node; the agent checks
	 * the step's are among them. */
}

/* A launch, or (prepared non-NULL) only its image's preparation. */
static int
agentcmd_launch_or_prepare(struct agentcmd *ac, uint64_t conn_id,
    const struct launch_cmd *l, int64_t now_ms, outbox_done cb,
    outbox_prepared prepared, void *arg)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__LaunchRequest lr = COHORT__V1__LAUNCH_REQUEST__INIT;
	Cohort__V1__StepLaunch sl = COHORT__V1__STEP_LAUNCH__INIT;
	Cohort__V1__JobSpec spec;
	Cohort__V1__Container ctr, sctr;
	uint8_t cred[STEPCRED_LEN];
	uint32_t *tpn = NULL;
	struct cmd *c;
	int rc;

	wire_spec_to_pb(&l->job->spec, &spec);
	spec.container = wire_ctr_to_pb(&l->job->spec.ctr, &ctr);
	lr.job_id = l->job->id;
	lr.restart = l->job->attempt;
	lr.has_restart_count = 1;
	lr.restart_count = l->job->restarts;
	lr.user = l->job->user;
	lr.spec = &spec;
	lr.node_rank = l->place->node_rank;
	lr.n_nodelist = l->nnodes;
	lr.nodelist = (char **)l->nodelist;
	lr.master_addr = (char *)l->master_addr;
	lr.master_port = l->master_port;
	lr.n_gpus = l->place->ngpus;
	lr.gpus = (uint32_t *)l->place->gpus;
	/* The next start resumes from the last checkpoint; rank 0's node
	 * watches for new ones. */
	if (l->job->has_ckpt)
		lr.resume_checkpoint = l->job->ckpt_path;
	lr.has_watch_checkpoints = 1;
	lr.watch_checkpoints = l->place->node_rank == 0 &&
	    l->job->spec.checkpoint_dir != NULL;
	if (l->job->ckpt_advice_s > 0) {
		lr.has_checkpoint_advice_s = 1;
		lr.checkpoint_advice_s = l->job->ckpt_advice_s;
	}
	if (l->job->array_id != 0) {
		lr.has_array_id = lr.has_array_task = 1;
		lr.array_id = l->job->array_id;
		lr.array_task = l->job->array_task;
	}
	if (l->step != NULL) {
		if ((tpn = calloc(l->step->nnodes, sizeof(*tpn))) == NULL)
			return -1;
		agentcmd_step_fill(l, &lr, &sl, tpn, &sctr);
	} else if (ac->sc != NULL && stepcred_make(ac->sc, l->job->id,
	    l->job->attempt, l->job->user, cred) == 0) {
		lr.has_step_cred = 1;
		lr.step_cred.data = cred;
		lr.step_cred.len = STEPCRED_LEN;
	}
	lr.has_prepare_image = lr.prepare_image = prepared != NULL;
	env.body_case = COHORT__V1__ENVELOPE__BODY_LAUNCH;
	env.launch = &lr;
	if ((c = agentcmd_track(ac, conn_id, prepared != NULL ? CMD_PREPARE :
	    CMD_LAUNCH, now_ms, arg)) == NULL) {
		free(tpn);
		return -1;
	}
	c->done = cb;
	c->prepared = prepared;
	rc = agentcmd_send_tracked(ac, c, &env);
	free(tpn);
	return rc;
}

int
agentcmd_launch(struct agentcmd *ac, uint64_t conn_id,
    const struct launch_cmd *l, int64_t now_ms, outbox_done cb, void *arg)
{
	return agentcmd_launch_or_prepare(ac, conn_id, l, now_ms, cb, NULL,
	    arg);
}

int
agentcmd_prepare(struct agentcmd *ac, uint64_t conn_id,
    const struct launch_cmd *l, int64_t now_ms, outbox_prepared cb,
    void *arg)
{
	if (cb == NULL || l->step != NULL)
		return -1;
	return agentcmd_launch_or_prepare(ac, conn_id, l, now_ms, NULL, cb,
	    arg);
}

/* The answer to a preparation: the image is ready. */
static void
agentcmd_prepared(struct agentcmd *ac, struct cmd *c,
    const Cohort__V1__LaunchReply *rep, int64_t now)
{
	struct image_ready r;

	memset(&r, 0, sizeof(r));
	if (rep->image != NULL) {
		r.ms = rep->image->has_ms && rep->image->ms <= INT64_MAX ?
		    (int64_t)rep->image->ms : 0;
		r.cached = rep->image->has_cached && rep->image->cached;
		/* Anything but a well-formed digest is not shown. */
		if (ctr_digest_valid(rep->image->digest))
			snprintf(r.digest, sizeof(r.digest), "%s",
			    rep->image->digest);
	}
	TAILQ_REMOVE(&ac->pending, c, entry);
	c->prepared(c->arg, &r, NULL, now);
	free(c);
}

int
agentcmd_stop(struct agentcmd *ac, uint64_t conn_id, uint64_t job_id, uint32_t attempt,
    const char *reason)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__StopRequest sr = COHORT__V1__STOP_REQUEST__INIT;

	sr.job_id = job_id;
	sr.restart = attempt;
	sr.reason = (char *)reason;
	env.body_case = COHORT__V1__ENVELOPE__BODY_STOP;
	env.stop = &sr;
	return agentcmd_send(ac, conn_id, &env);
}

int
agentcmd_signal(struct agentcmd *ac, uint64_t conn_id, uint64_t job_id, uint32_t attempt,
    int sig, int scope)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__SignalRequest sr = COHORT__V1__SIGNAL_REQUEST__INIT;

	sr.job_id = job_id;
	sr.restart = attempt;
	sr.signal = (uint32_t)sig;
	/* Unset for every task, so that an older agent does what it did. */
	sr.has_scope = scope != JOB_SIGNAL_ALL;
	sr.scope = (Cohort__V1__SignalScope)scope;
	env.body_case = COHORT__V1__ENVELOPE__BODY_SIGNAL;
	env.signal = &sr;
	return agentcmd_send(ac, conn_id, &env);
}

int
agentcmd_advise(struct agentcmd *ac, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, uint32_t advice_s)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__AdviceRequest ar = COHORT__V1__ADVICE_REQUEST__INIT;

	ar.job_id = job_id;
	ar.restart = attempt;
	ar.checkpoint_advice_s = advice_s;
	env.body_case = COHORT__V1__ENVELOPE__BODY_ADVICE;
	env.advice = &ar;
	return agentcmd_send(ac, conn_id, &env);
}

int
agentcmd_stop_step(struct agentcmd *ac, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, uint32_t step, const char *reason)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__StopRequest sr = COHORT__V1__STOP_REQUEST__INIT;

	sr.job_id = job_id;
	sr.restart = attempt;
	sr.reason = (char *)reason;
	sr.has_step_id = 1;
	sr.step_id = step;
	env.body_case = COHORT__V1__ENVELOPE__BODY_STOP;
	env.stop = &sr;
	return agentcmd_send(ac, conn_id, &env);
}

int
agentcmd_signal_step(struct agentcmd *ac, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, uint32_t step, int sig)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__SignalRequest sr = COHORT__V1__SIGNAL_REQUEST__INIT;

	sr.job_id = job_id;
	sr.restart = attempt;
	sr.signal = (uint32_t)sig;
	sr.has_step_id = 1;
	sr.step_id = step;
	env.body_case = COHORT__V1__ENVELOPE__BODY_SIGNAL;
	env.signal = &sr;
	return agentcmd_send(ac, conn_id, &env);
}

int
agentcmd_read_log(struct agentcmd *ac, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, int64_t step, unsigned rank, bool is_stderr,
    uint64_t offset, uint32_t max, int64_t now_ms, outbox_log_done cb,
    void *arg)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__ReadLogRequest rl = COHORT__V1__READ_LOG_REQUEST__INIT;
	struct cmd *c;

	rl.job_id = job_id;
	rl.restart = attempt;
	rl.rank = rank;
	rl.offset = offset;
	rl.max_bytes = max;
	/* Unset for stdout, so that an older agent reads what it did. */
	rl.has_stderr_stream = is_stderr;
	rl.stderr_stream = is_stderr;
	rl.has_step_id = step >= 0;
	rl.step_id = step >= 0 ? (uint32_t)step : 0;
	env.body_case = COHORT__V1__ENVELOPE__BODY_READ_LOG;
	env.read_log = &rl;
	c = agentcmd_track(ac, conn_id, CMD_READ_LOG, now_ms, arg);
	if (c == NULL)
		return -1;
	c->log_done = cb;
	return agentcmd_send_tracked(ac, c, &env);
}

int
agentcmd_write_stdin(struct agentcmd *ac, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, uint32_t step, unsigned rank,
    const struct step_input *in, int64_t now_ms, outbox_input_done cb,
    void *arg)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__WriteStdinRequest ws = COHORT__V1__WRITE_STDIN_REQUEST__INIT;
	struct cmd *c;

	ws.job_id = job_id;
	ws.restart = attempt;
	ws.step_id = step;
	ws.rank = rank;
	ws.offset = in->offset;
	ws.data.data = (uint8_t *)in->data;
	ws.data.len = in->len;
	ws.has_eof = in->eof;
	ws.eof = in->eof;
	ws.has_append = ws.append = in->append;
	ws.has_rows = ws.has_cols = in->rows > 0 && in->cols > 0;
	ws.rows = in->rows;
	ws.cols = in->cols;
	env.body_case = COHORT__V1__ENVELOPE__BODY_WRITE_STDIN;
	env.write_stdin = &ws;
	c = agentcmd_track(ac, conn_id, CMD_WRITE_STDIN, now_ms, arg);
	if (c == NULL)
		return -1;
	c->input_done = cb;
	return agentcmd_send_tracked(ac, c, &env);
}

bool
agentcmd_on_reply(struct agentcmd *ac, uint64_t conn_id,
    const Cohort__V1__Envelope *env)
{
	int64_t now = clock_now_ms();
	struct cmd *c;
	struct cerr err;

	if ((env->id & AGENTCMD_ID_BIT) == 0)
		return false;
	/* Stop and signal replies are not tracked: nothing waits. */
	if (env->body_case == COHORT__V1__ENVELOPE__BODY_STOP_REPLY ||
	    env->body_case == COHORT__V1__ENVELOPE__BODY_SIGNAL_REPLY)
		return true;
	TAILQ_FOREACH(c, &ac->pending, entry)
		if (c->id == env->id && c->conn_id == conn_id)
			break;
	if (c == NULL) {
		log_debug("reply %" PRIx64 " matches no pending command",
		    env->id);
		return true;
	}
	switch (env->body_case) {
	case COHORT__V1__ENVELOPE__BODY_ERROR:
		cerr_set(&err, wire_err_from_pb(env->error->code), "%s",
		    env->error->text);
		cmd_complete(ac, c, &err, NULL, 0, now);
		break;
	case COHORT__V1__ENVELOPE__BODY_LAUNCH_REPLY:
		if (c->kind == CMD_LAUNCH)
			cmd_complete(ac, c, NULL, NULL, 0, now);
		else if (c->kind == CMD_PREPARE)
			agentcmd_prepared(ac, c, env->launch_reply, now);
		else
			cmd_fail(ac, c, ERR_PROTOCOL, "mismatched reply", now);
		break;
	case COHORT__V1__ENVELOPE__BODY_READ_LOG_REPLY:
		if (c->kind == CMD_READ_LOG)
			cmd_complete(ac, c, NULL,
			    env->read_log_reply->data.data,
			    env->read_log_reply->data.len, now);
		else
			cmd_fail(ac, c, ERR_PROTOCOL, "mismatched reply", now);
		break;
	case COHORT__V1__ENVELOPE__BODY_WRITE_STDIN_REPLY:
		/* The count rides in len: the agent never takes more than
		 * it was given (64 KiB). */
		if (c->kind == CMD_WRITE_STDIN)
			cmd_complete(ac, c, NULL, NULL,
			    env->write_stdin_reply->accepted, now);
		else
			cmd_fail(ac, c, ERR_PROTOCOL, "mismatched reply", now);
		break;
	default:
		cmd_fail(ac, c, ERR_PROTOCOL, "unexpected reply", now);
	}
	return true;
}

void
agentcmd_conn_closed(struct agentcmd *ac, uint64_t conn_id)
{
	struct cmd *c, *next;

	for (c = TAILQ_FIRST(&ac->pending); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->conn_id == conn_id)
			cmd_fail(ac, c, ERR_UNAVAILABLE,
			    "the node's agent disconnected", clock_now_ms());
	}
}

void
agentcmd_expire(struct agentcmd *ac, int64_t now_ms)
{
	struct cmd *c, *next;

	for (c = TAILQ_FIRST(&ac->pending); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		/* An unpack takes what it takes; a node that is gone
		 * closes its connection, and that fails it. */
		if (c->kind != CMD_PREPARE && now_ms - c->sent_ms >
		    ac->timeout_ms)
			cmd_fail(ac, c, ERR_UNAVAILABLE,
			    "the node's agent did not answer in time", now_ms);
	}
}
