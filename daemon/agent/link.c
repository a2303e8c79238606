/* The connection to the controller. This file and lib/wire.c are the
 * agent's only protobuf users: requests are translated to agent.c's
 * structs here. */
#include "config.h"

#include <sys/socket.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <openssl/err.h>

#include "daemon/agent/agent_config.h"
#include "daemon/agent/health.h"
#include "daemon/agent/link.h"
#include "lib/frame.h"
#include "lib/log.h"
#include "lib/text.h"
#include "lib/tls.h"
#include "lib/wire.h"

/* Launch requests carry the job's script (up to the controller's
 * max_script), so allow more than the controller's default. */
#define LINK_MAX_FRAME (16u * 1024 * 1024)
#define LINK_BACKOFF_MIN_MS 250
/* Capped low: after a controller restart every agent must be back well
 * within the controller's node_timeout grace (see nodes.c). */
#define LINK_BACKOFF_MAX_MS 5000
#define LINK_LOG_CHUNK (1024 * 1024)
/* XID events carried by one heartbeat; more wait for the next. */
#define LINK_MAX_XIDS 64

enum link_state {
	LINK_IDLE,		/* waiting to retry */
	LINK_CONNECTING,	/* TCP + TLS */
	LINK_HELLO,		/* Hello sent */
	LINK_REGISTER,		/* Register sent */
	LINK_READY,
};

struct link {
	struct event_base *base;
	const struct agent_config *cfg;
	SSL_CTX *ctx;
	const struct inventory *inv;
	struct agent *agent;
	struct health *health;		/* NULL: none */
	struct bufferevent *bev;
	enum link_state state;
	struct event *retry_ev;
	struct event *hb_ev;
	unsigned attempts;
	uint64_t next_id;
	unsigned seed;
};

static void link_connect(struct link *l);

static void
link_send(struct link *l, Cohort__V1__Envelope *env)
{
	if (l->bev == NULL)
		return;
	if (frame_write(bufferevent_get_output(l->bev), env,
	    LINK_MAX_FRAME) == -1)
		log_warn("cannot queue a '%s' message",
		    wire_body_name(env->body_case));
}

static void
link_send_error(struct link *l, uint64_t id, enum err_code code,
    const char *text)
{
	Cohort__V1__Envelope env;
	Cohort__V1__Error e;

	wire_error(&env, &e, id, code, text);
	link_send(l, &env);
}

/* Drop the connection and retry after a capped, jittered back-off. */
static void
link_reset(struct link *l, const char *why)
{
	unsigned shift = l->attempts < 10 ? l->attempts : 10;
	uint64_t ms = (uint64_t)LINK_BACKOFF_MIN_MS << shift;
	struct timeval tv;

	if (l->bev != NULL) {
		bufferevent_free(l->bev);
		l->bev = NULL;
	}
	evtimer_del(l->hb_ev);
	if (ms > LINK_BACKOFF_MAX_MS)
		ms = LINK_BACKOFF_MAX_MS;
	/* Jitter in [ms/2, ms]: a restarted controller is not hit by every
	 * agent at the same instant. */
	ms = ms / 2 + (uint64_t)rand_r(&l->seed) % (ms / 2 + 1);
	l->attempts++;
	l->state = LINK_IDLE;
	log_info("controller link down (%s); retrying in %" PRIu64 " ms", why,
	    ms);
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(l->retry_ev, &tv);
}

static void
link_task_statuses_free(Cohort__V1__TaskStatus **ptrs,
    Cohort__V1__TaskStatus *ts, size_t n)
{
	size_t i;

	for (i = 0; ts != NULL && i < n; i++)
		free(ts[i].why);
	free(ts);
	free(ptrs);
}

static Cohort__V1__TaskStatus **
link_task_statuses(struct link *l, size_t *n, Cohort__V1__TaskStatus **buf)
{
	struct task_report *r;
	Cohort__V1__TaskStatus *ts, **ptrs;
	size_t i;

	*buf = NULL;
	if (l->agent == NULL || (r = agent_tasks(l->agent, n)) == NULL)
		return NULL;
	ts = calloc(*n, sizeof(*ts));
	ptrs = calloc(*n, sizeof(*ptrs));
	if (ts == NULL || ptrs == NULL) {
		free(ts);
		free(ptrs);
		free(r);
		*n = 0;
		return NULL;
	}
	for (i = 0; i < *n; i++) {
		cohort__v1__task_status__init(&ts[i]);
		ts[i].job_id = r[i].job_id;
		ts[i].restart = r[i].restart;
		ts[i].rank = r[i].rank;
		ts[i].running = r[i].running;
		ts[i].has_wait_status = !r[i].running;
		ts[i].wait_status = r[i].wait_status;
		/* Copied: r goes before the message is packed. */
		if (!r[i].running && r[i].why[0] != '\0') {
			if ((ts[i].why = strdup(r[i].why)) != NULL)
				text_sanitize(ts[i].why);	/* or refused */
			ts[i].has_permanent = r[i].permanent;
			ts[i].permanent = r[i].permanent;
		}
		ptrs[i] = &ts[i];
	}
	free(r);
	*buf = ts;
	return ptrs;
}

/* A node_health as NodeHealth, in storage the caller provides; strings
 * are borrowed from h. */
struct link_health_pb {
	Cohort__V1__NodeHealth nh;
	Cohort__V1__GpuHealth g[INV_MAX_GPUS];
	Cohort__V1__GpuHealth *gp[INV_MAX_GPUS];
};

static Cohort__V1__Health
link_health_to_pb(enum health_state h)
{
	switch (h) {
	case HEALTH_OK:
		return COHORT__V1__HEALTH__HEALTH_OK;
	case HEALTH_DEGRADED:
		return COHORT__V1__HEALTH__HEALTH_DEGRADED;
	case HEALTH_FAILED:
		return COHORT__V1__HEALTH__HEALTH_FAILED;
	}
	return COHORT__V1__HEALTH__HEALTH_UNSPECIFIED;
}

/* NULL when the agent has no health to tell. */
static Cohort__V1__NodeHealth *
link_node_health(struct link *l, struct link_health_pb *pb)
{
	const struct node_health *h;
	unsigned i;

	if (l->health == NULL)
		return NULL;
	h = health_current(l->health);
	cohort__v1__node_health__init(&pb->nh);
	pb->nh.health = link_health_to_pb(h->health);
	pb->nh.reason = h->reason[0] != '\0' ? (char *)h->reason : NULL;
	pb->nh.has_checked_ms = h->checked_ms != 0;
	pb->nh.checked_ms = h->checked_ms;
	for (i = 0; i < h->ngpus && i < INV_MAX_GPUS; i++) {
		cohort__v1__gpu_health__init(&pb->g[i]);
		pb->g[i].index = h->gpus[i].index;
		pb->g[i].health = link_health_to_pb(h->gpus[i].health);
		pb->g[i].reason = h->gpus[i].reason[0] != '\0' ?
		    (char *)h->gpus[i].reason : NULL;
		pb->gp[i] = &pb->g[i];
	}
	pb->nh.n_gpus = i;
	pb->nh.gpus = i > 0 ? pb->gp : NULL;
	return &pb->nh;
}

/* What a heartbeat carries besides the tasks, in storage of its own. */
struct link_hb_extra {
	struct link_health_pb health;
	struct xid_event xids[LINK_MAX_XIDS];
	Cohort__V1__XidEvent xe[LINK_MAX_XIDS];
	Cohort__V1__XidEvent *xp[LINK_MAX_XIDS];
	struct ckpt_report *ck;
	Cohort__V1__CheckpointReport *cke, **ckp;
	struct progress_report *pr;
	Cohort__V1__ProgressReport *pre, **prp;
};

static void
link_hb_xids(struct link *l, struct link_hb_extra *x,
    Cohort__V1__Heartbeat *hb)
{
	size_t i, n;

	if (l->health == NULL ||
	    (n = health_nvml_take_xids(l->health, x->xids, LINK_MAX_XIDS)) == 0)
		return;
	for (i = 0; i < n; i++) {
		cohort__v1__xid_event__init(&x->xe[i]);
		x->xe[i].gpu = x->xids[i].gpu;
		x->xe[i].xid = x->xids[i].xid;
		x->xe[i].action = x->xids[i].action == XID_DRAIN ? "drain" :
		    "fail-job";
		x->xe[i].has_time_ms = true;
		x->xe[i].time_ms = x->xids[i].time_ms;
		x->xp[i] = &x->xe[i];
	}
	hb->xids = x->xp;
	hb->n_xids = n;
}

static void
link_hb_checkpoints(struct link *l, struct link_hb_extra *x,
    Cohort__V1__Heartbeat *hb)
{
	size_t i, n;

	if ((x->ck = agent_checkpoints(l->agent, &n)) == NULL)
		return;
	x->cke = calloc(n, sizeof(*x->cke));
	x->ckp = calloc(n, sizeof(*x->ckp));
	if (x->cke == NULL || x->ckp == NULL)
		return;
	for (i = 0; i < n; i++) {
		cohort__v1__checkpoint_report__init(&x->cke[i]);
		x->cke[i].job_id = x->ck[i].job_id;
		x->cke[i].restart = x->ck[i].restart;
		x->cke[i].step = x->ck[i].step;
		x->cke[i].path = (char *)x->ck[i].path;
		x->cke[i].has_time_ms = true;
		x->cke[i].time_ms = x->ck[i].time_ms;
		x->ckp[i] = &x->cke[i];
	}
	hb->checkpoints = x->ckp;
	hb->n_checkpoints = n;
}

static void
link_hb_progress(struct link *l, struct link_hb_extra *x,
    Cohort__V1__Heartbeat *hb)
{
	size_t i, n;

	if ((x->pr = agent_progress(l->agent, &n)) == NULL)
		return;
	x->pre = calloc(n, sizeof(*x->pre));
	x->prp = calloc(n, sizeof(*x->prp));
	if (x->pre == NULL || x->prp == NULL)
		return;
	for (i = 0; i < n; i++) {
		cohort__v1__progress_report__init(&x->pre[i]);
		x->pre[i].job_id = x->pr[i].job_id;
		x->pre[i].restart = x->pr[i].restart;
		x->pre[i].changed_ms = x->pr[i].changed_ms;
		x->prp[i] = &x->pre[i];
	}
	hb->progress = x->prp;
	hb->n_progress = n;
}

static void
link_hb_extra_free(struct link_hb_extra *x)
{
	free(x->ck);
	free(x->cke);
	free(x->ckp);
	free(x->pr);
	free(x->pre);
	free(x->prp);
	free(x);
}

static void
link_send_hello(struct link *l)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__Hello h = COHORT__V1__HELLO__INIT;

	h.major = WIRE_MAJOR;
	h.minor = WIRE_MINOR;
	h.software = "cohort-agent " PACKAGE_VERSION;
	env.id = ++l->next_id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	link_send(l, &env);
	l->state = LINK_HELLO;
}

static void
link_send_register(struct link *l)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__RegisterRequest rr = COHORT__V1__REGISTER_REQUEST__INIT;
	Cohort__V1__Inventory inv;
	Cohort__V1__TaskStatus *buf;
	struct link_health_pb *hp;

	if ((hp = malloc(sizeof(*hp))) == NULL) {
		link_reset(l, "out of memory");
		return;
	}
	if (wire_inventory_to_pb(l->inv, &inv) == -1) {
		free(hp);
		link_reset(l, "out of memory");
		return;
	}
	rr.health = link_node_health(l, hp);
	rr.name = l->cfg->name;
	rr.address = l->cfg->address;
	rr.has_spare = 1;
	rr.spare = l->cfg->spare;
	rr.inventory = &inv;
	rr.tasks = link_task_statuses(l, &rr.n_tasks, &buf);
	env.id = ++l->next_id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_REGISTER;
	env.register_ = &rr;
	link_send(l, &env);
	link_task_statuses_free(rr.tasks, buf, rr.n_tasks);
	free(hp);
	wire_inventory_pb_release(&inv);
	l->state = LINK_REGISTER;
}

/* Tasks, health, XIDs not yet sent, the latest checkpoint of every
 * watched job (the controller ignores one it has) and progress. */
static void
link_send_heartbeat(struct link *l)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__Heartbeat hb = COHORT__V1__HEARTBEAT__INIT;
	Cohort__V1__TaskStatus *buf;
	struct link_hb_extra *x;

	if (l->state != LINK_READY || l->bev == NULL)
		return;
	if ((x = calloc(1, sizeof(*x))) == NULL) {
		log_warnx("heartbeat: out of memory");
		return;
	}
	/* Ended tasks ride along until acknowledged: that is the retry of
	 * a TaskExit lost with a connection. */
	hb.tasks = link_task_statuses(l, &hb.n_tasks, &buf);
	hb.node_health = link_node_health(l, &x->health);
	link_hb_xids(l, x, &hb);
	link_hb_checkpoints(l, x, &hb);
	link_hb_progress(l, x, &hb);
	env.id = ++l->next_id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	link_send(l, &env);
	link_task_statuses_free(hb.tasks, buf, hb.n_tasks);
	link_hb_extra_free(x);
}

static void
link_heartbeat_cb(evutil_socket_t fd, short what, void *arg)
{
	link_send_heartbeat(arg);
}

void
link_checkpoint_seen(void *arg)
{
	link_send_heartbeat(arg);
}

void
link_health_changed(const struct node_health *h, void *arg)
{
	/* Now rather than at the next beat: a failure is news. */
	link_send_heartbeat(arg);
}

void
link_task_exited(const struct task_report *r, void *arg)
{
	struct link *l = arg;
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__TaskExit te = COHORT__V1__TASK_EXIT__INIT;
	char why[sizeof(r->why)];

	if (l->state != LINK_READY)
		return;
	/* A heartbeat first, so that a checkpoint the job wrote just
	 * before it ended reaches the controller before the exit does. */
	link_send_heartbeat(l);
	te.job_id = r->job_id;
	te.restart = r->restart;
	te.rank = r->rank;
	te.wait_status = r->wait_status;
	/* A string that is not text would have the whole message refused
	 * (lib/wirecheck.c): a cut UTF-8 sequence becomes '?'. */
	if (r->why[0] != '\0') {
		snprintf(why, sizeof(why), "%s", r->why);
		text_sanitize(why);
		te.why = why;
		te.has_permanent = r->permanent;
		te.permanent = r->permanent;
	}
	env.id = ++l->next_id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_TASK_EXIT;
	env.task_exit = &te;
	link_send(l, &env);
}

static void
link_on_launch(struct link *l, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__LaunchRequest *lr = req->launch;
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__LaunchReply rep = COHORT__V1__LAUNCH_REPLY__INIT;
	struct job_spec spec;
	struct launch la = { 0 };
	struct cerr err;

	cerr_clear(&err);
	if (lr->n_gpus > PLACE_MAX_GPUS || lr->n_nodelist == 0 ||
	    lr->node_rank >= lr->n_nodelist) {
		link_send_error(l, req->id, ERR_INVALID,
		    "launch: inconsistent placement");
		return;
	}
	if (wire_spec_from_pb(lr->spec, &spec, &err) == -1) {
		link_send_error(l, req->id, err.code, err.text);
		return;
	}
	la.job_id = lr->job_id;
	la.restart = lr->restart;
	la.restart_count = lr->restart_count;
	la.user = lr->user;
	la.spec = &spec;
	la.node_rank = lr->node_rank;
	la.nodelist = (const char *const *)lr->nodelist;
	la.nnodes = lr->n_nodelist;
	la.master_addr = lr->master_addr;
	la.master_port = lr->master_port;
	la.gpus = lr->gpus;
	la.ngpus = lr->n_gpus;
	la.resume_checkpoint = lr->resume_checkpoint;
	la.watch_checkpoints = lr->has_watch_checkpoints &&
	    lr->watch_checkpoints;
	if (agent_launch(l->agent, &la, &err) == -1) {
		link_send_error(l, req->id, err.code, err.text);
	} else {
		rep.job_id = lr->job_id;
		rep.restart = lr->restart;
		env.id = req->id;
		env.body_case = COHORT__V1__ENVELOPE__BODY_LAUNCH_REPLY;
		env.launch_reply = &rep;
		link_send(l, &env);
	}
	job_spec_clear(&spec);
}

static void
link_on_stop(struct link *l, const Cohort__V1__Envelope *req)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__StopReply rep = COHORT__V1__STOP_REPLY__INIT;

	log_info("job %" PRIu64 ": stop requested (%s)", req->stop->job_id,
	    req->stop->reason != NULL ? req->stop->reason : "no reason");
	agent_stop(l->agent, req->stop->job_id, req->stop->restart);
	rep.job_id = req->stop->job_id;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_STOP_REPLY;
	env.stop_reply = &rep;
	link_send(l, &env);
}

static void
link_on_signal(struct link *l, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__SignalRequest *sr = req->signal;
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__SignalReply rep = COHORT__V1__SIGNAL_REPLY__INIT;
	unsigned n;

	if (sr->signal == 0 || sr->signal >= (uint32_t)NSIG) {
		link_send_error(l, req->id, ERR_INVALID, "signal: no such "
		    "signal");
		return;
	}
	n = agent_signal(l->agent, sr->job_id, sr->restart, (int)sr->signal);
	log_info("job %" PRIu64 ": signal %u sent to %u task%s", sr->job_id,
	    sr->signal, n, n == 1 ? "" : "s");
	rep.job_id = sr->job_id;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_SIGNAL_REPLY;
	env.signal_reply = &rep;
	link_send(l, &env);
}

static void
link_on_read_log(struct link *l, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__ReadLogRequest *rl = req->read_log;
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__ReadLogReply rep = COHORT__V1__READ_LOG_REPLY__INIT;
	size_t max = rl->max_bytes < LINK_LOG_CHUNK ? rl->max_bytes :
	    LINK_LOG_CHUNK;
	char text[128];
	uint8_t *buf;
	ssize_t n;

	if ((buf = malloc(max > 0 ? max : 1)) == NULL) {
		link_send_error(l, req->id, ERR_INTERNAL, "out of memory");
		return;
	}
	n = agent_read_log(l->agent, rl->job_id, rl->restart, rl->rank,
	    rl->offset, buf, max);
	if (n == -1) {
		snprintf(text, sizeof(text), "no log for job %" PRIu64
		    " rank %u here: %s", rl->job_id, rl->rank,
		    strerror(errno));
		link_send_error(l, req->id, ERR_NOT_FOUND, text);
	} else {
		rep.data.data = buf;
		rep.data.len = (size_t)n;
		env.id = req->id;
		env.body_case = COHORT__V1__ENVELOPE__BODY_READ_LOG_REPLY;
		env.read_log_reply = &rep;
		link_send(l, &env);
	}
	free(buf);
}

static void
link_on_message(struct link *l, const Cohort__V1__Envelope *env)
{
	switch (env->body_case) {
	case COHORT__V1__ENVELOPE__BODY_HELLO_REPLY:
		if (l->state == LINK_HELLO)
			link_send_register(l);
		return;
	case COHORT__V1__ENVELOPE__BODY_REGISTER_REPLY:
		if (l->state == LINK_REGISTER) {
			struct timeval tv;
			uint64_t ms = env->register_reply->heartbeat_ms;

			if (ms == 0)
				ms = l->cfg->heartbeat_ms;
			tv.tv_sec = ms / 1000;
			tv.tv_usec = (ms % 1000) * 1000;
			evtimer_del(l->hb_ev);
			event_add(l->hb_ev, &tv);
			l->state = LINK_READY;
			l->attempts = 0;
			log_info("registered with the controller as %s",
			    l->cfg->name);
		}
		return;
	case COHORT__V1__ENVELOPE__BODY_ERROR:
		log_warnx("controller: %s", env->error->text);
		/* Refused before we were registered: nothing to do on this
		 * connection but to try again later. */
		if (l->state != LINK_READY)
			link_reset(l, "refused");
		return;
	case COHORT__V1__ENVELOPE__BODY_LAUNCH:
		link_on_launch(l, env);
		return;
	case COHORT__V1__ENVELOPE__BODY_STOP:
		link_on_stop(l, env);
		return;
	case COHORT__V1__ENVELOPE__BODY_READ_LOG:
		link_on_read_log(l, env);
		return;
	case COHORT__V1__ENVELOPE__BODY_SIGNAL:
		link_on_signal(l, env);
		return;
	case COHORT__V1__ENVELOPE__BODY_TASK_EXIT_ACK:
		agent_exit_acked(l->agent, env->task_exit_ack->job_id,
		    env->task_exit_ack->restart, env->task_exit_ack->rank);
		return;
	default:
		log_warnx("unexpected '%s' from the controller",
		    wire_body_name(env->body_case));
		link_send_error(l, env->id, ERR_PROTOCOL, "unexpected message");
	}
}

static void
link_read_cb(struct bufferevent *bev, void *arg)
{
	struct link *l = arg;
	Cohort__V1__Envelope *env;

	while (l->bev == bev) {
		switch (frame_read(bufferevent_get_input(bev), LINK_MAX_FRAME,
		    &env)) {
		case FRAME_NEED:
			return;
		case FRAME_OK:
			link_on_message(l, env);
			frame_free(env);
			break;
		case FRAME_TOO_LARGE:
			link_reset(l, "oversized frame from the controller");
			return;
		case FRAME_BAD:
			link_reset(l, "undecodable frame from the controller");
			return;
		}
	}
}

static void
link_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct link *l = arg;
	char buf[256];

	if (what & BEV_EVENT_CONNECTED) {
		link_send_hello(l);
		return;
	}
	/* A refused server certificate (its role, the CRL) says more than
	 * OpenSSL's "certificate verify failed". */
	if (tls_server_verify_error(bufferevent_openssl_get_ssl(bev),
	    l->cfg->controller_host, buf, sizeof(buf)) == NULL)
		tls_bufferevent_error(bev, what, buf, sizeof(buf));
	ERR_clear_error();
	link_reset(l, buf);
}

void
link_recheck(struct link *l)
{
	SSL *ssl;
	struct cerr err;
	char why[sizeof(err.text) + CONF_HOST_MAX + 64];

	if (l->bev == NULL || l->state == LINK_IDLE ||
	    l->state == LINK_CONNECTING ||
	    (ssl = bufferevent_openssl_get_ssl(l->bev)) == NULL)
		return;
	if (tls_cert_recheck(l->ctx, SSL_get0_peer_certificate(ssl),
	    SSL_get_peer_cert_chain(ssl), &err) == 0)
		return;
	snprintf(why, sizeof(why), "certificate of controller %s: %s",
	    l->cfg->controller_host, err.text);
	log_warnx("%s", why);
	link_reset(l, why);
}

static void
link_connect(struct link *l)
{
	struct addrinfo hints, *res;
	char port[8];
	SSL *ssl;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(port, sizeof(port), "%u", l->cfg->controller_port);
	/* Resolution blocks; controllers are named by address or in
	 * /etc/hosts in practice, and the agent has nothing else to do
	 * while disconnected but watch its tasks. */
	if ((rc = getaddrinfo(l->cfg->controller_host, port, &hints,
	    &res)) != 0) {
		link_reset(l, gai_strerror(rc));
		return;
	}
	if ((ssl = SSL_new(l->ctx)) == NULL ||
	    tls_client_expect_host(ssl, l->cfg->controller_host) == -1) {
		SSL_free(ssl);
		freeaddrinfo(res);
		link_reset(l, "cannot set up TLS");
		return;
	}
	l->bev = bufferevent_openssl_socket_new(l->base, -1, ssl,
	    BUFFEREVENT_SSL_CONNECTING,
	    BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
	if (l->bev == NULL) {
		freeaddrinfo(res);
		link_reset(l, "cannot set up TLS");
		return;
	}
	bufferevent_setcb(l->bev, link_read_cb, NULL, link_event_cb, l);
	bufferevent_enable(l->bev, EV_READ | EV_WRITE);
	l->state = LINK_CONNECTING;
	rc = bufferevent_socket_connect(l->bev, res->ai_addr,
	    (int)res->ai_addrlen);
	freeaddrinfo(res);
	if (rc == -1)
		link_reset(l, "connect failed");
}

static void
link_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	link_connect(arg);
}

struct link *
link_create(struct event_base *base, const struct agent_config *cfg,
    SSL_CTX *ctx, const struct inventory *inv, struct cerr *err)
{
	struct link *l;

	if ((l = calloc(1, sizeof(*l))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	l->base = base;
	l->cfg = cfg;
	l->ctx = ctx;
	l->inv = inv;
	l->seed = (unsigned)getpid() ^ (unsigned)time(NULL);
	l->retry_ev = evtimer_new(base, link_retry_cb, l);
	l->hb_ev = event_new(base, -1, EV_PERSIST, link_heartbeat_cb, l);
	if (l->retry_ev == NULL || l->hb_ev == NULL) {
		cerr_set(err, ERR_INTERNAL, "cannot create timers");
		link_destroy(l);
		return NULL;
	}
	return l;
}

void
link_set_health(struct link *l, struct health *hl)
{
	l->health = hl;
}

void
link_set_agent(struct link *l, struct agent *a)
{
	l->agent = a;
	link_connect(l);
}

void
link_destroy(struct link *l)
{
	if (l == NULL)
		return;
	if (l->bev != NULL)
		bufferevent_free(l->bev);
	if (l->retry_ev != NULL)
		event_free(l->retry_ev);
	if (l->hb_ev != NULL)
		event_free(l->hb_ev);
	free(l);
}
