/* The connection to the controller. This file and lib/wire.c are the
 * agent's only protobuf users: requests are translated to the structs
 * of agent.h here and handed to the owner's operations (link.h). */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <openssl/err.h>

#include "daemon/agent/health.h"
#include "daemon/agent/link.h"
#include "lib/addrlist.h"
#include "lib/conf.h"
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
/* With replicas a round that found no leader is an election, which takes
 * one or two seconds: come back sooner than a restart would need. */
#define LINK_BACKOFF_MAX_REPLICAS_MS 2000
/* From one replica to the next within a round through the list. */
#define LINK_ROTATE_MS 50
#define LINK_MIN_HEARTBEAT_MS 100
#define LINK_LOG_CHUNK (1024 * 1024)
/* XID events carried by one heartbeat; more wait for the next. */
#define LINK_MAX_XIDS 64

enum link_state {
	LINK_STOPPED,		/* not started, or link_stop */
	LINK_IDLE,		/* waiting to retry */
	LINK_CONNECTING,	/* TCP + TLS */
	LINK_HELLO,		/* Hello sent */
	LINK_REGISTER,		/* Register sent */
	LINK_READY,
};

/* A preparation the controller asked for (LaunchRequest.prepare_image),
 * answered when the agent calls link_prepared: its request's id, on the
 * connection it came on. */
struct link_wait {
	uint64_t token;
	uint64_t id;
	uint64_t conn;
	TAILQ_ENTRY(link_wait) entry;
};

struct link {
	struct event_base *base;
	struct link_params p;
	SSL_CTX *ctx;
	const struct link_ops *ops;
	void *arg;
	struct bufferevent *bev;
	enum link_state state;
	/* One timer, by state: the retry when idle, the handshake's
	 * deadline while connecting, the next heartbeat when ready. */
	struct event *timer;
	uint64_t hb_ms;
	uint64_t conn;		/* counts the connections made ready */
	unsigned attempts;
	uint64_t next_id;
	unsigned seed;
	/* The controller's replicas (one for an unreplicated controller)
	 * and the walk through them to the leader (lib/addrlist.h). */
	struct addrlist list;
	struct addrlist_walk walk;
	struct addrlist_addr cur;	/* tried now, or next */
	char cur_text[ADDRLIST_ADDR_TEXT];
	TAILQ_HEAD(, link_wait) waits;
	uint64_t next_token;
};

static void link_connect(struct link *l);

static void link_log(struct link *l, enum link_log level, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));

static void
link_log(struct link *l, enum link_log level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (l->ops->log != NULL)
		l->ops->log(l->arg, level, buf);
	else if (level == LINK_LOG_WARN)
		log_warnx("%s", buf);
	else
		log_info("%s", buf);
}

static void
link_event(struct link *l, enum link_event ev)
{
	if (l->ops->event != NULL)
		l->ops->event(l->arg, ev);
}

static void
link_arm(struct link *l, uint64_t ms)
{
	struct timeval tv;

	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)((ms % 1000) * 1000);
	evtimer_add(l->timer, &tv);
}

static void
link_send(struct link *l, Cohort__V1__Envelope *env)
{
	if (l->bev == NULL)
		return;
	if (frame_write(bufferevent_get_output(l->bev), env,
	    LINK_MAX_FRAME) == -1)
		link_log(l, LINK_LOG_WARN, "cannot queue a '%s' message",
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

static void
link_drop(struct link *l)
{
	if (l->bev != NULL) {
		bufferevent_free(l->bev);
		l->bev = NULL;
	}
	evtimer_del(l->timer);
}

bool
link_next_addr(struct addrlist_walk *w, struct addrlist_addr *next)
{
	if (addrlist_walk_next(w, next))
		return true;
	addrlist_walk_round(w);
	addrlist_walk_next(w, next);	/* a list is never empty */
	return false;
}

int
link_follow(struct addrlist_walk *w, const char *leader, bool *listed,
    struct cerr *err)
{
	struct addrlist_addr a;
	struct cerr why;

	cerr_clear(&why);
	if (leader == NULL || leader[0] == '\0')
		return cerr_set(err, ERR_NOT_FOUND, "no leader named");
	if (addrlist_addr_parse(leader, &a, &why) == -1)
		return cerr_set(err, ERR_PROTOCOL, "leader address '%.80s': "
		    "%s", leader, why.text);
	if (!addrlist_walk_redirect(w, &a))
		return cerr_set(err, ERR_LIMIT, "%d redirects in a row",
		    ADDRLIST_MAX_REDIRECTS);
	*listed = addrlist_find(w->list, &a) >= 0;
	return 0;
}

/* Drop the connection and try the next replica: soon when the round
 * through the list goes on, else after a capped, jittered back-off. */
static void
link_reset(struct link *l, const char *why)
{
	unsigned shift = l->attempts < 10 ? l->attempts : 10;
	uint64_t ms = (uint64_t)LINK_BACKOFF_MIN_MS << shift;
	bool was_up = l->state > LINK_IDLE, same_round;
	char from[ADDRLIST_ADDR_TEXT];

	link_drop(l);
	snprintf(from, sizeof(from), "%s", l->cur_text);
	same_round = link_next_addr(&l->walk, &l->cur);
	addrlist_addr_format(&l->cur, l->cur_text, sizeof(l->cur_text));
	/* The same address again (one controller, or the leader whose
	 * connection just ended) waits as before there were lists. */
	if (same_round && strcmp(from, l->cur_text) != 0) {
		/* Another replica may be the leader: no back-off, only a
		 * little jitter. */
		ms = LINK_ROTATE_MS / 2 + (uint64_t)rand_r(&l->seed) %
		    (LINK_ROTATE_MS / 2 + 1);
	} else {
		if (ms > LINK_BACKOFF_MAX_MS)
			ms = LINK_BACKOFF_MAX_MS;
		if (l->list.n > 1 && ms > LINK_BACKOFF_MAX_REPLICAS_MS)
			ms = LINK_BACKOFF_MAX_REPLICAS_MS;
		/* Jitter in [ms/2, ms]: a restarted controller is not hit by
		 * every agent at the same instant. */
		ms = ms / 2 + (uint64_t)rand_r(&l->seed) % (ms / 2 + 1);
		l->attempts++;
	}
	l->state = LINK_IDLE;
	if (l->list.n > 1 || strcmp(from, l->cur_text) != 0)
		link_log(l, LINK_LOG_NOTICE, "controller link down (%s: %s); "
		    "retrying with %s in %" PRIu64 " ms", from, why,
		    l->cur_text, ms);
	else
		link_log(l, LINK_LOG_NOTICE, "controller link down (%s); "
		    "retrying in %" PRIu64 " ms", why, ms);
	link_arm(l, ms);
	if (was_up)
		link_event(l, LINK_EV_DOWN);
}

/* A replica that is not the leader refused us, naming the leader or
 * not: go there next (or on through the list). */
static void
link_not_leader(struct link *l, const Cohort__V1__Error *e)
{
	struct cerr why;
	bool listed = true;
	char text[sizeof(why.text) + 64];

	cerr_clear(&why);
	if (link_follow(&l->walk, e->leader, &listed, &why) == 0) {
		if (!listed)
			link_log(l, LINK_LOG_NOTICE, "controller %s names %s "
			    "as the leader, which is not in the configured "
			    "list; following it", l->cur_text, e->leader);
		snprintf(text, sizeof(text), "not the leader; the leader is "
		    "%.100s", e->leader);
	} else if (why.code == ERR_NOT_FOUND)
		snprintf(text, sizeof(text), "not the leader, no leader "
		    "known");
	else {
		link_log(l, LINK_LOG_WARN, "controller %s: not the leader, "
		    "and not followed: %s", l->cur_text, why.text);
		snprintf(text, sizeof(text), "not the leader");
	}
	link_reset(l, text);
}

/* Output the controller has not read, over the bound: it is stuck. */
static bool
link_stalled(struct link *l)
{
	size_t max = l->p.max_queued != 0 ? l->p.max_queued :
	    LINK_MAX_QUEUED;

	return l->bev != NULL &&
	    evbuffer_get_length(bufferevent_get_output(l->bev)) > max;
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
	*n = 0;
	if ((r = l->ops->tasks(l->arg, n)) == NULL || *n == 0) {
		free(r);
		*n = 0;
		return NULL;
	}
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
		ts[i].has_step_id = r[i].has_step;
		ts[i].step_id = r[i].step;
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

	if (l->ops->health == NULL || (h = l->ops->health(l->arg)) == NULL)
		return NULL;
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
	struct step_time *st;
	Cohort__V1__StepTimeReport *ste, **stp;
};

static void
link_hb_xids(struct link *l, struct link_hb_extra *x,
    Cohort__V1__Heartbeat *hb)
{
	size_t i, n;

	if (l->ops->take_xids == NULL ||
	    (n = l->ops->take_xids(l->arg, x->xids, LINK_MAX_XIDS)) == 0)
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

	if (l->ops->checkpoints == NULL ||
	    (x->ck = l->ops->checkpoints(l->arg, &n)) == NULL)
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
		x->cke[i].has_cost_ms = x->ck[i].cost_ms > 0;
		x->cke[i].cost_ms = x->ck[i].cost_ms;
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

	if (l->ops->progress == NULL ||
	    (x->pr = l->ops->progress(l->arg, &n)) == NULL)
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

/* Ranks' step times that changed since the last heartbeat. */
static void
link_hb_step_times(struct link *l, struct link_hb_extra *x,
    Cohort__V1__Heartbeat *hb)
{
	size_t i, n;

	if (l->ops->step_times == NULL ||
	    (x->st = l->ops->step_times(l->arg, &n)) == NULL)
		return;
	x->ste = calloc(n, sizeof(*x->ste));
	x->stp = calloc(n, sizeof(*x->stp));
	if (x->ste == NULL || x->stp == NULL)
		return;
	for (i = 0; i < n; i++) {
		cohort__v1__step_time_report__init(&x->ste[i]);
		x->ste[i].job_id = x->st[i].job_id;
		x->ste[i].restart = x->st[i].restart;
		x->ste[i].rank = x->st[i].rank;
		x->ste[i].step = x->st[i].step;
		x->ste[i].compute_ms = x->st[i].compute_ms;
		x->stp[i] = &x->ste[i];
	}
	hb->step_times = x->stp;
	hb->n_step_times = n;
}

static void
link_hb_extra_free(struct link_hb_extra *x)
{
	free(x->st);
	free(x->ste);
	free(x->stp);
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
	h.software = (char *)l->p.software;
	env.id = ++l->next_id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	l->state = LINK_HELLO;
	link_send(l, &env);
}

static void
link_send_register(struct link *l)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__RegisterRequest rr = COHORT__V1__REGISTER_REQUEST__INIT;
	Cohort__V1__Inventory inv;
	Cohort__V1__TaskStatus *buf;
	const struct inventory *in;
	struct link_health_pb *hp;
	struct cerr err;
	char why[sizeof(err.text) + 16];

	cerr_clear(&err);
	if ((in = l->ops->inventory(l->arg, &err)) == NULL) {
		snprintf(why, sizeof(why), "inventory: %s", err.text);
		link_reset(l, why);
		return;
	}
	if ((hp = malloc(sizeof(*hp))) == NULL) {
		link_reset(l, "out of memory");
		return;
	}
	if (wire_inventory_to_pb(in, &inv) == -1) {
		free(hp);
		link_reset(l, "out of memory");
		return;
	}
	rr.health = link_node_health(l, hp);
	rr.name = (char *)l->p.name;
	rr.address = (char *)l->p.address;
	rr.has_spare = 1;
	rr.spare = l->p.spare;
	rr.inventory = &inv;
	rr.tasks = link_task_statuses(l, &rr.n_tasks, &buf);
	env.id = ++l->next_id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_REGISTER;
	env.register_ = &rr;
	l->state = LINK_REGISTER;
	link_send(l, &env);
	link_task_statuses_free(rr.tasks, buf, rr.n_tasks);
	free(hp);
	wire_inventory_pb_release(&inv);
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
		link_log(l, LINK_LOG_WARN, "heartbeat: out of memory");
		return;
	}
	/* Ended tasks ride along until acknowledged: that is the retry of
	 * a TaskExit lost with a connection. */
	hb.tasks = link_task_statuses(l, &hb.n_tasks, &buf);
	hb.node_health = link_node_health(l, &x->health);
	link_hb_xids(l, x, &hb);
	link_hb_checkpoints(l, x, &hb);
	link_hb_progress(l, x, &hb);
	link_hb_step_times(l, x, &hb);
	env.id = ++l->next_id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	link_send(l, &env);
	link_task_statuses_free(hb.tasks, buf, hb.n_tasks);
	link_hb_extra_free(x);
}

/* The next beat: the first at a random point of the interval, then the
 * interval less up to 5%, so that the beats of many nodes stay spread
 * and none is late. */
static void
link_arm_heartbeat(struct link *l, bool first)
{
	uint64_t ms = l->hb_ms;

	if (first)
		ms = (uint64_t)rand_r(&l->seed) % (ms + 1);
	else
		ms -= (uint64_t)rand_r(&l->seed) % (ms / 20 + 1);
	link_arm(l, ms);
}

static void
link_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct link *l = arg;

	switch (l->state) {
	case LINK_STOPPED:
		return;
	case LINK_IDLE:
		link_connect(l);
		return;
	case LINK_CONNECTING:
	case LINK_HELLO:
	case LINK_REGISTER:
		link_reset(l, "no answer from the controller");
		return;
	case LINK_READY:
		if (link_stalled(l)) {
			link_reset(l, "controller does not read");
			return;
		}
		link_send_heartbeat(l);
		link_arm_heartbeat(l, false);
		return;
	}
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
	 * before it ended (or an XID that ended it) reaches the controller
	 * before the exit does: for owners that have such news. */
	if (l->ops->checkpoints != NULL || l->ops->take_xids != NULL ||
	    l->ops->progress != NULL)
		link_send_heartbeat(l);
	te.job_id = r->job_id;
	te.restart = r->restart;
	te.rank = r->rank;
	te.wait_status = r->wait_status;
	te.has_step_id = r->has_step;
	te.step_id = r->step;
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
link_launch_reply(struct link *l, uint64_t id, const struct launch *la)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__LaunchReply rep = COHORT__V1__LAUNCH_REPLY__INIT;

	rep.job_id = la->job_id;
	rep.restart = la->restart;
	env.id = id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_LAUNCH_REPLY;
	env.launch_reply = &rep;
	link_send(l, &env);
}

/* Prepare only the image of la's job: the answer follows when it is
 * ready (link_prepared). An agent with nothing to prepare (no prepare
 * operation) answers at once. */
static void
link_prepare(struct link *l, uint64_t id, const struct launch *la)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__LaunchReply rep = COHORT__V1__LAUNCH_REPLY__INIT;
	Cohort__V1__ImagePrepared img = COHORT__V1__IMAGE_PREPARED__INIT;
	struct link_wait *w;
	struct cerr err;

	if (l->ops->prepare == NULL) {
		rep.job_id = la->job_id;
		rep.restart = la->restart;
		rep.image = &img;
		env.id = id;
		env.body_case = COHORT__V1__ENVELOPE__BODY_LAUNCH_REPLY;
		env.launch_reply = &rep;
		link_send(l, &env);
		return;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		link_send_error(l, id, ERR_INTERNAL, "out of memory");
		return;
	}
	w->token = ++l->next_token;
	w->id = id;
	w->conn = l->conn;
	cerr_clear(&err);
	if (l->ops->prepare(l->arg, la, w->token, &err) == -1) {
		free(w);
		link_send_error(l, id, err.code, err.text);
		return;
	}
	TAILQ_INSERT_TAIL(&l->waits, w, entry);
}

void
link_prepared(void *arg, uint64_t token, const struct agent_prepared *r)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__LaunchReply rep = COHORT__V1__LAUNCH_REPLY__INIT;
	Cohort__V1__ImagePrepared img = COHORT__V1__IMAGE_PREPARED__INIT;
	struct link *l = arg;
	struct link_wait *w;
	uint64_t id;

	TAILQ_FOREACH(w, &l->waits, entry)
		if (w->token == token)
			break;
	if (w == NULL)
		return;
	TAILQ_REMOVE(&l->waits, w, entry);
	id = w->id;
	/* Asked on an earlier connection: that request failed with it. */
	if (w->conn != l->conn || l->state != LINK_READY) {
		free(w);
		return;
	}
	free(w);
	if (r->err != 0) {
		link_send_error(l, id, r->permanent ? ERR_NOT_FOUND :
		    ERR_UNAVAILABLE, r->why != NULL ? r->why : "the image "
		    "could not be prepared");
		return;
	}
	img.has_ms = img.has_cached = 1;
	img.ms = r->ms > 0 ? (uint64_t)r->ms : 0;
	img.cached = r->cached;
	if (r->digest != NULL && r->digest[0] != '\0')
		img.digest = (char *)r->digest;
	rep.job_id = r->job_id;
	rep.restart = r->restart;
	rep.image = &img;
	env.id = id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_LAUNCH_REPLY;
	env.launch_reply = &rep;
	link_send(l, &env);
}

static void
link_on_launch(struct link *l, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__LaunchRequest *lr = req->launch;
	const Cohort__V1__StepLaunch *sp = lr->step;
	struct step_launch sl = { 0 };
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
	la.ckpt_advice_s = lr->has_checkpoint_advice_s ?
	    lr->checkpoint_advice_s : 0;
	if (lr->has_array_id && lr->array_id != 0) {
		la.array_id = lr->array_id;
		la.array_task = lr->has_array_task ? lr->array_task : 0;
	}
	if (lr->has_step_cred) {
		la.step_cred = lr->step_cred.data != NULL ?
		    lr->step_cred.data : (const uint8_t *)"";
		la.step_cred_len = lr->step_cred.len;
	}
	/* Checked by the owner (agent_launch), as the rest of the step. */
	if (sp != NULL) {
		sl.step_id = sp->step_id;
		sl.argv = (const char *const *)sp->argv;
		sl.argc = sp->n_argv;
		sl.env = (const char *const *)sp->env;
		sl.nenv = sp->n_env;
		sl.workdir = sp->workdir;
		sl.nodelist = (const char *const *)sp->nodelist;
		sl.nnodes = sp->n_nodelist;
		sl.node_index = sp->node_index;
		sl.tasks_per_node = sp->tasks_per_node;
		sl.ntpn = sp->n_tasks_per_node;
		sl.first_rank = sp->first_rank;
		sl.ntasks = sp->ntasks;
		sl.gpus = sp->gpus;
		sl.ngpus = sp->n_gpus;
		sl.gpus_per_task = sp->has_gpus_per_task ? sp->gpus_per_task : 0;
		sl.cpus_per_task = sp->has_cpus_per_task ? sp->cpus_per_task : 0;
		sl.master_addr = sp->master_addr;
		sl.master_port = sp->master_port;
		sl.name = sp->name;
		sl.stdin_pipe = sp->has_stdin_pipe && sp->stdin_pipe;
		sl.pty = sl.stdin_pipe && sp->has_pty && sp->pty;
		sl.rows = sp->has_rows ? sp->rows : 0;
		sl.cols = sp->has_cols ? sp->cols : 0;
		if (sp->container != NULL) {
			/* Borrowed, as the rest: checked and copied by the
			 * owner (agent_launch). */
			sl.ctr.image = sp->container->image;
			sl.ctr.mounts = sp->container->mounts;
			sl.ctr.workdir = sp->container->workdir;
			sl.ctr.env = sp->container->env;
			sl.ctr.name = sp->container->name;
			sl.ctr.writable = sp->container->has_writable &&
			    sp->container->writable;
			sl.ctr.mount_home = sp->container->has_mount_home &&
			    sp->container->mount_home;
		}
		la.step = &sl;
	}
	if (lr->has_prepare_image && lr->prepare_image)
		link_prepare(l, req->id, &la);
	else if (l->ops->launch(l->arg, &la, &err) == -1)
		link_send_error(l, req->id, err.code, err.text);
	else
		link_launch_reply(l, req->id, &la);
	job_spec_clear(&spec);
}

static void
link_on_stop(struct link *l, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__StopRequest *sr = req->stop;
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__StopReply rep = COHORT__V1__STOP_REPLY__INIT;
	char st[32] = "";

	if (sr->has_step_id)
		snprintf(st, sizeof(st), " step %" PRIu32, sr->step_id);
	link_log(l, LINK_LOG_INFO, "job %" PRIu64 "%s: stop requested (%s)",
	    sr->job_id, st, sr->reason != NULL ? sr->reason : "no reason");
	if (l->ops->stop != NULL)
		l->ops->stop(l->arg, sr->job_id, sr->restart,
		    sr->has_step_id ? &sr->step_id : NULL);
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
	enum agent_scope scope = AGENT_SCOPE_ALL;
	unsigned n;

	if (sr->signal == 0 || sr->signal >= (uint32_t)NSIG) {
		link_send_error(l, req->id, ERR_INVALID, "signal: no such "
		    "signal");
		return;
	}
	if (sr->has_scope && sr->scope == COHORT__V1__SIGNAL_SCOPE__SIGNAL_BATCH)
		scope = AGENT_SCOPE_JOB;
	else if (sr->has_scope &&
	    sr->scope == COHORT__V1__SIGNAL_SCOPE__SIGNAL_STEPS)
		scope = AGENT_SCOPE_STEPS;
	else if (sr->has_scope &&
	    sr->scope != COHORT__V1__SIGNAL_SCOPE__SIGNAL_ALL) {
		link_send_error(l, req->id, ERR_INVALID, "signal: no such "
		    "scope");
		return;
	}
	n = l->ops->signal != NULL ? l->ops->signal(l->arg, sr->job_id,
	    sr->restart, sr->has_step_id ? &sr->step_id : NULL, scope,
	    (int)sr->signal) : 0;
	link_log(l, LINK_LOG_INFO, "job %" PRIu64 ": signal %u sent to %u "
	    "task%s", sr->job_id, sr->signal, n, n == 1 ? "" : "s");
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
	char text[160];
	uint8_t *buf;
	ssize_t n;
	bool err;

	if ((buf = malloc(max > 0 ? max : 1)) == NULL) {
		link_send_error(l, req->id, ERR_INTERNAL, "out of memory");
		return;
	}
	errno = ENOENT;
	err = rl->has_stderr_stream && rl->stderr_stream;
	n = l->ops->read_log != NULL ? l->ops->read_log(l->arg, rl->job_id,
	    rl->restart, rl->has_step_id ? &rl->step_id : NULL, rl->rank,
	    err, rl->offset, buf, max) : -1;
	if (n == -1) {
		snprintf(text, sizeof(text), "no %s of job %" PRIu64
		    " rank %u (attempt %" PRIu32 ") here: %s",
		    err ? "stderr log" : "log", rl->job_id, rl->rank,
		    rl->restart, strerror(errno));
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
link_on_write_stdin(struct link *l, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__WriteStdinRequest *w = req->write_stdin;
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__WriteStdinReply rep = COHORT__V1__WRITE_STDIN_REPLY__INIT;
	char text[200];
	ssize_t n;

	if (w->data.len > AGENT_STDIN_CHUNK) {
		link_send_error(l, req->id, ERR_INVALID, "write_stdin: more "
		    "than 64 KiB");
		return;
	}
	errno = ENOENT;
	/* The new window first: the keys that follow may redraw. */
	if (w->has_rows && w->has_cols && (l->ops->step_window == NULL ||
	    l->ops->step_window(l->arg, w->job_id, w->restart, w->step_id,
	    w->rank, w->rows, w->cols) == -1))
		n = -1;
	else if (w->has_append && w->append)
		n = l->ops->append_stdin != NULL ? l->ops->append_stdin(l->arg,
		    w->job_id, w->restart, w->step_id, w->rank, w->data.data,
		    w->data.len) : -1;
	else
		n = l->ops->write_stdin != NULL ? l->ops->write_stdin(l->arg,
		    w->job_id, w->restart, w->step_id, w->rank, w->offset,
		    w->data.data, w->data.len, w->has_eof && w->eof) : -1;
	if (n == -1) {
		snprintf(text, sizeof(text), "step %" PRIu64 ".%" PRIu32
		    " task %u (attempt %" PRIu32 ") here: %s", w->job_id,
		    w->step_id, w->rank, w->restart, errno == ENOTCONN ?
		    "its input is closed (it reads /dev/null, or the agent "
		    "restarted since it started, which it saw as EOF)" :
		    errno == EINVAL ? "input offset beyond what it took" :
		    errno == ENOTTY ? "it has no terminal here (not --pty, "
		    "or the agent restarted since it started)" :
		    strerror(errno));
		link_send_error(l, req->id, errno == ENOENT ? ERR_NOT_FOUND :
		    errno == ENOTCONN || errno == ENOTTY ? ERR_CONFLICT :
		    errno == EINVAL ?
		    ERR_INVALID : ERR_INTERNAL, text);
		return;
	}
	rep.accepted = (uint32_t)n;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_WRITE_STDIN_REPLY;
	env.write_stdin_reply = &rep;
	link_send(l, &env);
}

/* Registered: heartbeats at the controller's interval (or ours). */
static void
link_on_registered(struct link *l, const Cohort__V1__RegisterReply *rep)
{
	uint64_t ms = l->p.heartbeat_ms;

	if (!l->p.heartbeat_fixed && rep->heartbeat_ms != 0)
		ms = rep->heartbeat_ms;
	if (ms < LINK_MIN_HEARTBEAT_MS)
		ms = LINK_MIN_HEARTBEAT_MS;
	l->hb_ms = ms;
	evtimer_del(l->timer);
	link_arm_heartbeat(l, true);
	l->state = LINK_READY;
	l->conn++;
	l->attempts = 0;
	/* The leader: tried first when this connection ends, and the next
	 * round starts afresh. */
	addrlist_walk_found(&l->walk, &l->cur);
	addrlist_walk_round(&l->walk);
	if (l->list.n > 1)
		link_log(l, LINK_LOG_INFO, "registered with the controller "
		    "(%s) as %s", l->cur_text, l->p.name);
	else
		link_log(l, LINK_LOG_INFO, "registered with the controller as "
		    "%s", l->p.name);
	link_event(l, LINK_EV_READY);
}

static void
link_on_message(struct link *l, const Cohort__V1__Envelope *env)
{
	const Cohort__V1__TaskExitAck *ack;

	switch (env->body_case) {
	case COHORT__V1__ENVELOPE__BODY_HELLO_REPLY:
		if (l->state == LINK_HELLO)
			link_send_register(l);
		return;
	case COHORT__V1__ENVELOPE__BODY_REGISTER_REPLY:
		if (l->state == LINK_REGISTER)
			link_on_registered(l, env->register_reply);
		return;
	case COHORT__V1__ENVELOPE__BODY_ERROR:
		if (l->state != LINK_READY &&
		    wire_err_from_pb(env->error->code) == ERR_NOT_LEADER) {
			link_not_leader(l, env->error);
			return;
		}
		link_log(l, LINK_LOG_WARN, "controller: %s", env->error->text);
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
	case COHORT__V1__ENVELOPE__BODY_WRITE_STDIN:
		link_on_write_stdin(l, env);
		return;
	case COHORT__V1__ENVELOPE__BODY_SIGNAL:
		link_on_signal(l, env);
		return;
	case COHORT__V1__ENVELOPE__BODY_ADVICE:
		/* Not answered: the controller sends it again when the
		 * advice moves on. */
		if (env->advice->checkpoint_advice_s > 0 &&
		    l->ops->advise != NULL && l->ops->advise(l->arg,
		    env->advice->job_id, env->advice->restart,
		    env->advice->checkpoint_advice_s) == -1 &&
		    errno != ENOENT)
			link_log(l, LINK_LOG_WARN, "job %" PRIu64 ": "
			    "checkpoint advice not written: %s",
			    env->advice->job_id, strerror(errno));
		return;
	case COHORT__V1__ENVELOPE__BODY_TASK_EXIT_ACK:
		ack = env->task_exit_ack;
		l->ops->exit_acked(l->arg, ack->job_id, ack->restart,
		    ack->has_step_id ? &ack->step_id : NULL, ack->rank);
		return;
	default:
		link_log(l, LINK_LOG_WARN, "unexpected '%s' from the "
		    "controller", wire_body_name(env->body_case));
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
			if (link_stalled(l))
				link_reset(l, "controller does not read");
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
	    l->cur.host, buf, sizeof(buf)) == NULL)
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

	if (l->bev == NULL || l->state <= LINK_CONNECTING ||
	    (ssl = bufferevent_openssl_get_ssl(l->bev)) == NULL)
		return;
	if (tls_cert_recheck(l->ctx, SSL_get0_peer_certificate(ssl),
	    SSL_get_peer_cert_chain(ssl), &err) == 0)
		return;
	snprintf(why, sizeof(why), "certificate of controller %s: %s",
	    l->cur.host, err.text);
	link_log(l, LINK_LOG_WARN, "%s", why);
	link_reset(l, why);
}

/* The controller's address: the one given, or host resolved now. */
static int
link_resolve(struct link *l, struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints, *res;
	char port[8], why[300];
	int rc;

	/* The caller's resolution is of its one host and port. */
	if (l->p.addr != NULL && l->p.host != NULL &&
	    strcasecmp(l->cur.host, l->p.host) == 0 &&
	    l->cur.port == l->p.port) {
		memcpy(ss, l->p.addr, l->p.addrlen);
		*len = l->p.addrlen;
		return 0;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(port, sizeof(port), "%u", l->cur.port);
	/* Resolution blocks; controllers are named by address or in
	 * /etc/hosts in practice, and the agent has nothing else to do
	 * while disconnected but watch its tasks. */
	if ((rc = getaddrinfo(l->cur.host, port, &hints, &res)) != 0) {
		snprintf(why, sizeof(why), "%s: %s", l->cur.host,
		    gai_strerror(rc));
		link_reset(l, why);
		return -1;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static SSL *
link_ssl(struct link *l)
{
	SSL *ssl;
	char ebuf[256], why[300];

	if ((ssl = SSL_new(l->ctx)) == NULL ||
	    (l->p.cert != NULL && SSL_use_certificate(ssl, l->p.cert) != 1) ||
	    (l->p.key != NULL && SSL_use_PrivateKey(ssl, l->p.key) != 1) ||
	    tls_client_expect_host(ssl, l->cur.host) == -1) {
		SSL_free(ssl);
		snprintf(why, sizeof(why), "cannot set up TLS: %s",
		    tls_error_string(ebuf, sizeof(ebuf)));
		link_reset(l, why);
		return NULL;
	}
	return ssl;
}

static void
link_connect(struct link *l)
{
	struct sockaddr_storage ss;
	socklen_t len;
	SSL *ssl;

	/* The owner may hold attempts back (handshakes in flight). */
	if (l->ops->may_connect != NULL && !l->ops->may_connect(l->arg)) {
		link_arm(l, 20 + (uint64_t)rand_r(&l->seed) % 80);
		return;
	}
	l->state = LINK_CONNECTING;
	link_event(l, LINK_EV_CONNECTING);
	if (link_resolve(l, &ss, &len) == -1 || (ssl = link_ssl(l)) == NULL)
		return;
	/* On failure libevent has freed ssl (BEV_OPT_CLOSE_ON_FREE). */
	l->bev = bufferevent_openssl_socket_new(l->base, -1, ssl,
	    BUFFEREVENT_SSL_CONNECTING,
	    BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
	if (l->bev == NULL) {
		link_reset(l, "cannot set up TLS");
		return;
	}
	bufferevent_setcb(l->bev, link_read_cb, NULL, link_event_cb, l);
	bufferevent_enable(l->bev, EV_READ | EV_WRITE);
	link_arm(l, l->p.handshake_ms != 0 ? l->p.handshake_ms :
	    LINK_HANDSHAKE_MS);
	if (bufferevent_socket_connect(l->bev, (struct sockaddr *)&ss,
	    (int)len) == -1) {
		link_reset(l, "connect failed");
		return;
	}
	/* Small messages that expect no answer (a launch reply, a task's
	 * exit) must not wait for the controller's delayed ACK of the one
	 * before: 40 ms a dependency link, without it. */
	(void)setsockopt(bufferevent_getfd(l->bev), IPPROTO_TCP, TCP_NODELAY,
	    &(int){ 1 }, sizeof(int));
}

struct link *
link_create(struct event_base *base, const struct link_params *params,
    SSL_CTX *ctx, const struct link_ops *ops, void *arg, struct cerr *err)
{
	static unsigned created;
	struct link *l;

	if (ops->inventory == NULL || ops->tasks == NULL ||
	    ops->launch == NULL || ops->exit_acked == NULL) {
		cerr_set(err, ERR_INVALID, "link: operations missing");
		return NULL;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	TAILQ_INIT(&l->waits);
	if (params->controllers != NULL && params->controllers->n > 0)
		l->list = *params->controllers;
	else if (params->host != NULL && strlen(params->host) <
	    sizeof(l->list.a[0].host)) {
		snprintf(l->list.a[0].host, sizeof(l->list.a[0].host), "%s",
		    params->host);
		l->list.a[0].port = params->port;
		l->list.n = 1;
	} else {
		free(l);
		cerr_set(err, ERR_INVALID, "link: no controller address");
		return NULL;
	}
	addrlist_walk_init(&l->walk, &l->list, NULL);
	link_next_addr(&l->walk, &l->cur);
	addrlist_addr_format(&l->cur, l->cur_text, sizeof(l->cur_text));
	l->base = base;
	l->p = *params;
	l->ctx = ctx;
	l->ops = ops;
	l->arg = arg;
	l->state = LINK_STOPPED;
	/* Distinct per link: many links made in one second must not share
	 * their jitter. */
	l->seed = (unsigned)getpid() ^ (unsigned)time(NULL) ^
	    (++created * 2654435761u);
	if ((l->timer = evtimer_new(base, link_timer_cb, l)) == NULL) {
		cerr_set(err, ERR_INTERNAL, "cannot create a timer");
		free(l);
		return NULL;
	}
	return l;
}

void
link_start(struct link *l, uint64_t delay_ms)
{
	if (l->state != LINK_STOPPED && l->state != LINK_IDLE)
		return;
	evtimer_del(l->timer);
	l->attempts = 0;
	l->state = LINK_IDLE;
	if (delay_ms == 0)
		link_connect(l);
	else
		link_arm(l, delay_ms);
}

void
link_stop(struct link *l)
{
	link_drop(l);
	l->state = LINK_STOPPED;
}

bool
link_ready(const struct link *l)
{
	return l->state == LINK_READY;
}

void
link_destroy(struct link *l)
{
	struct link_wait *w;

	if (l == NULL)
		return;
	while ((w = TAILQ_FIRST(&l->waits)) != NULL) {
		TAILQ_REMOVE(&l->waits, w, entry);
		free(w);
	}
	if (l->bev != NULL)
		bufferevent_free(l->bev);
	event_free(l->timer);
	free(l);
}
