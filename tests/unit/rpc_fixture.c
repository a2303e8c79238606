#include "config.h"

#include <check.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/queues.h"
#include "daemon/controller/domain/steps.h"
#include "daemon/controller/rpc/agentcmd.h"
#include "daemon/controller/rpc/rpc_int.h"
#include "daemon/controller/rpc/server.h"
#include "daemon/controller/rpc/stepcred.h"
#include "daemon/controller/store/store.h"
#include "lib/frame.h"
#include "lib/wire.h"
#include "tests/unit/rpc_fixture.h"

/* The --wrap functions have no context argument: the one open fixture. */
static struct rpcfix *cur;

/* ---- The server's connection calls (linked with --wrap) ------------- */

struct conn *__wrap_server_conn(struct server *, uint64_t);
uint64_t __wrap_server_conn_id(const struct conn *);
const struct peer *__wrap_server_conn_peer(const struct conn *);
bool __wrap_server_conn_hello_done(const struct conn *);
void __wrap_server_conn_set_hello_done(struct conn *);
void __wrap_server_conn_set_registered(struct conn *);
int __wrap_server_conn_send_frame(struct conn *, const uint8_t *, size_t);
int __wrap_server_conn_send(struct conn *, const Cohort__V1__Envelope *);
void __wrap_server_conn_send_error(struct conn *, uint64_t, enum err_code,
    const char *);
void __wrap_server_conn_reserve(struct conn *, size_t);
void __wrap_server_conn_release(struct conn *, size_t);
void __wrap_server_conn_close(struct conn *);
size_t __wrap_server_max_frame(const struct server *);
int64_t __wrap_clock_now_ms(void);
const char *__wrap_repl_leader_rpc(struct repl *, char *, size_t);

struct conn *
__wrap_server_conn(struct server *srv, uint64_t id)
{
	size_t i;

	ck_assert_ptr_eq(srv, (struct server *)cur);
	for (i = 0; i < cur->nconns; i++)
		if (cur->conns[i].id == id && !cur->conns[i].closed)
			return &cur->conns[i];
	return NULL;
}

uint64_t
__wrap_server_conn_id(const struct conn *c)
{
	return c->id;
}

const struct peer *
__wrap_server_conn_peer(const struct conn *c)
{
	return &c->peer;
}

bool
__wrap_server_conn_hello_done(const struct conn *c)
{
	return c->hello;
}

void
__wrap_server_conn_set_hello_done(struct conn *c)
{
	c->hello = true;
}

void
__wrap_server_conn_set_registered(struct conn *c)
{
	c->registered = true;
}

/* Keep a reply (a packed envelope) as the peer would read it. */
static int
rpcfix_keep(struct conn *c, const uint8_t *body, size_t len)
{
	Cohort__V1__Envelope *env;

	ck_assert_msg(!c->closed, "conn %" PRIu64 ": a reply after close",
	    c->id);
	env = cohort__v1__envelope__unpack(NULL, len, body);
	ck_assert_msg(env != NULL, "conn %" PRIu64 ": a reply that does "
	    "not decode", c->id);
	ck_assert_msg(c->nreplies < RPCFIX_REPLIES, "conn %" PRIu64 ": more "
	    "than %d replies", c->id, RPCFIX_REPLIES);
	c->replies[c->nreplies++] = env;
	return 0;
}

int
__wrap_server_conn_send_frame(struct conn *c, const uint8_t *frame,
    size_t len)
{
	ck_assert_uint_ge(len, FRAME_HDR);
	ck_assert_uint_eq(frame_header_len(frame), len - FRAME_HDR);
	return rpcfix_keep(c, frame + FRAME_HDR, len - FRAME_HDR);
}

int
__wrap_server_conn_send(struct conn *c, const Cohort__V1__Envelope *env)
{
	uint8_t *frame;
	size_t len;
	int rc;

	frame = frame_pack(env, FRAME_DEFAULT_MAX, &len);
	ck_assert_ptr_nonnull(frame);
	rc = __wrap_server_conn_send_frame(c, frame, len);
	free(frame);
	return rc;
}

void
__wrap_server_conn_send_error(struct conn *c, uint64_t req_id,
    enum err_code code, const char *text)
{
	Cohort__V1__Envelope env;
	Cohort__V1__Error e;

	wire_error(&env, &e, req_id, code, text);
	__wrap_server_conn_send(c, &env);
}

void
__wrap_server_conn_reserve(struct conn *c, size_t len)
{
	c->owed++;
	c->owed_bytes += len;
}

void
__wrap_server_conn_release(struct conn *c, size_t len)
{
	ck_assert_uint_gt(c->owed, 0);
	ck_assert_uint_ge(c->owed_bytes, len);
	c->owed--;
	c->owed_bytes -= len;
}

void
__wrap_server_conn_close(struct conn *c)
{
	c->closed = true;
}

size_t
__wrap_server_max_frame(const struct server *srv)
{
	return cur->max_frame;
}

int64_t
__wrap_clock_now_ms(void)
{
	return cur != NULL ? cur->d.now : 0;
}

const char *
__wrap_repl_leader_rpc(struct repl *r, char *buf, size_t len)
{
	if (cur->leader == NULL)
		return NULL;
	snprintf(buf, len, "%s", cur->leader);
	return buf;
}

/* ---- The world -------------------------------------------------------- */

static struct queues *
rpcfix_queues(void)
{
	char *a_users[] = { "alice", "bob", "carol" };
	char *a_admins[] = { "carol" };
	char *b_users[] = { "alice", "bob" }, *b_admins[] = { "dave" };
	struct queue_def d[2];
	struct queues *qs;
	struct cerr err;
	size_t i;

	memset(d, 0, sizeof(d));
	d[0].name = "ateam";
	d[0].users = a_users;
	d[0].nusers = 3;
	d[0].admins = a_admins;
	d[0].nadmins = 1;
	d[1].name = "bteam";
	d[1].users = b_users;
	d[1].nusers = 2;
	d[1].admins = b_admins;
	d[1].nadmins = 1;
	for (i = 0; i < 2; i++) {
		d[i].gpus = 8;
		d[i].borrow_limit = d[i].lend_limit = SCHED_UNLIMITED;
		d[i].weight = 1;
	}
	qs = queues_create(d, 2, 3600000, &err);
	ck_assert_msg(qs != NULL, "%s", err.text);
	return qs;
}

static void
rpcfix_peer(struct peer *p, const char *name, enum role role)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->role = role;
}

static uint64_t
rpcfix_submit(struct rpcfix *f, const char *queue, bool hold)
{
	struct domain_spec ds = { .queue = queue };
	struct peer alice;
	struct cerr err;
	uint64_t id;

	id = domain_submit(&f->d, "alice", 1, 1, domain_spec_apply, &ds,
	    &err);
	ck_assert_msg(id != 0, "%s", err.text);
	if (hold) {
		rpcfix_peer(&alice, "alice", ROLE_USER);
		ck_assert_msg(jobs_hold(f->d.js, &alice, id, false, f->d.now,
		    &err) == 1, "%s", err.text);
	}
	domain_commit(&f->d);
	return id;
}

static void rpcfix_free_replies(struct conn *);

/* Nothing reaches an agent through agentcmd here (the domain's outbox
 * records its commands): a send that does is a test's mistake. */
static int
rpcfix_agent_send(void *ctx, uint64_t conn_id, Cohort__V1__Envelope *env)
{
	ck_abort_msg("agentcmd sent '%s' to conn %" PRIu64,
	    wire_body_name(env->body_case), conn_id);
	return -1;
}

/* Start step 0 of run as alice's srun does, and see it launched. */
static void
rpcfix_start_step(struct rpcfix *f)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__StepCreateRequest q =
	    COHORT__V1__STEP_CREATE_REQUEST__INIT;
	const Cohort__V1__Envelope *r;
	char *argv[] = { "hostname" };
	uint8_t cred[STEPCRED_LEN];
	struct conn *c = rpcfix_conn(f, "alice", ROLE_USER, true);

	rpcfix_cred(f, cred);
	q.job_id = f->run;
	q.cred.data = cred;
	q.cred.len = sizeof(cred);
	q.n_argv = 1;
	q.argv = argv;
	q.has_ntasks = true;
	q.ntasks = 1;
	env.id = 1;
	env.body_case = COHORT__V1__ENVELOPE__BODY_STEP_CREATE;
	env.step_create = &q;
	r = rpcfix_call(f, c, &env);
	ck_assert_ptr_nonnull(r);
	ck_assert_msg(r->body_case ==
	    COHORT__V1__ENVELOPE__BODY_STEP_CREATE_REPLY, "step create: %s",
	    r->body_case == COHORT__V1__ENVELOPE__BODY_ERROR ?
	    r->error->text : wire_body_name(r->body_case));
	f->step = r->step_create_reply->step->step_id;
	ck_assert_uint_eq(domain_answer_job(&f->d, f->run, NULL, NULL), 1);
	domain_commit(&f->d);
	ck_assert_int_eq(steps_get(f->d.cl, f->run, f->step)->state,
	    JOB_RUNNING);
	/* The world's connections are not the tests'. */
	rpcfix_free_replies(c);
	f->nconns = 0;
	memset(f->conns, 0, sizeof(f->conns));
}

void
rpcfix_open(struct rpcfix *f)
{
	struct cluster_opts o = {
		.node_timeout_ms = 10000,
		.heartbeat_ms = 2000,
		.stop_timeout_ms = 60000,
		.accept_unknown_nodes = true,
	};
	const struct job *job;
	struct cerr err;

	memset(f, 0, sizeof(*f));
	cur = f;
	f->next_id = 1000;
	f->max_frame = FRAME_DEFAULT_MAX;
	f->qs = rpcfix_queues();
	o.queues = f->qs;
	ck_assert_msg(domain_open(&f->d, &o, &err) == 0, "%s", err.text);
	ck_assert_msg(domain_add_node(&f->d, "node01", 4, false, &err) != 0,
	    "%s", err.text);
	ck_assert_msg(domain_add_node(&f->d, "node02", 4, false, &err) != 0,
	    "%s", err.text);
	ck_assert_msg(domain_add_node(&f->d, "node03", 4, false, &err) != 0,
	    "%s", err.text);
	/* node03's agent went away: DOWN once its heartbeats are missed. */
	domain_disconnect(&f->d, "node03");
	domain_run_for(&f->d, 30000, 2000);
	ck_assert_int_eq(nodes_get(f->d.ns, "node03")->state, NODE_DOWN);

	f->ac = agentcmd_create(rpcfix_agent_send, f, 60000);
	f->sc = stepcred_create(f->d.st);
	ck_assert(f->ac != NULL && f->sc != NULL);
	agentcmd_set_stepcred(f->ac, f->sc);
	f->rpc.srv = (struct server *)f;
	f->rpc.jobs = f->d.js;
	f->rpc.nodes = f->d.ns;
	f->rpc.cluster = f->d.cl;
	f->rpc.agentcmd = f->ac;
	f->rpc.stepcred = f->sc;
	f->rpc.txq = f->d.q;
	f->rpc.queues = f->qs;
	f->rpc.store = f->d.st;
	f->rpc.heartbeat_ms = 2000;
	f->rpc.page_size = 100;
	f->rpc.private_data = true;
	f->rpc.serving = true;

	f->run = rpcfix_submit(f, "ateam", false);
	domain_pass(&f->d);
	ck_assert_uint_eq(domain_answer_job(&f->d, f->run, NULL, NULL), 1);
	domain_commit(&f->d);
	job = domain_job(&f->d, f->run);
	ck_assert_int_eq(job->state, JOB_RUNNING);
	f->run_attempt = job->attempt;
	snprintf(f->run_node, sizeof(f->run_node), "%s",
	    domain_rank_node(job, 0));
	snprintf(f->other_node, sizeof(f->other_node), "%s",
	    strcmp(f->run_node, "node01") == 0 ? "node02" : "node01");
	f->pending = rpcfix_submit(f, "ateam", false);
	f->bjob = rpcfix_submit(f, "bteam", true);
	rpcfix_start_step(f);
}

static void
rpcfix_free_replies(struct conn *c)
{
	size_t i;

	for (i = 0; i < c->nreplies; i++)
		cohort__v1__envelope__free_unpacked(c->replies[i], NULL);
	c->nreplies = 0;
}

void
rpcfix_close(struct rpcfix *f)
{
	struct cerr err;
	size_t i;

	/* As cohortd's teardown: waiting requests answered, then the
	 * domain (whose launches still owed are answered as it closes). */
	rpc_steps_waits_free(&f->rpc);
	rpc_backup_free(&f->rpc);
	cerr_set(&err, ERR_UNAVAILABLE, "the controller is shutting down");
	for (i = 0; i < f->d.ncmds; i++)
		if (f->d.cmds[i].kind == DOMAIN_READ_LOG &&
		    !f->d.cmds[i].answered) {
			f->d.cmds[i].answered = true;
			f->d.cmds[i].log_done(f->d.cmds[i].arg, NULL, 0, &err);
		}
	domain_commit(&f->d);
	agentcmd_destroy(f->ac);
	domain_close(&f->d);
	stepcred_destroy(f->sc);
	queues_destroy(f->qs);
	for (i = 0; i < f->nconns; i++) {
		/* Every reply reserved was sent or dropped. */
		ck_assert_msg(f->conns[i].owed == 0, "conn %" PRIu64 " (%s): "
		    "%u replies still reserved", f->conns[i].id,
		    f->conns[i].peer.name, f->conns[i].owed);
		rpcfix_free_replies(&f->conns[i]);
	}
	cur = NULL;
}

struct conn *
rpcfix_conn(struct rpcfix *f, const char *name, enum role role, bool hello)
{
	uint64_t node_conn = role == ROLE_AGENT ? domain_conn(&f->d, name) : 0;
	struct conn *c;
	size_t i;

	/* A node's agent has one connection: the one it registered on. */
	for (i = 0; node_conn != 0 && i < f->nconns; i++)
		if (f->conns[i].id == node_conn && !f->conns[i].closed) {
			rpcfix_free_replies(&f->conns[i]);
			return &f->conns[i];
		}
	ck_assert_uint_lt(f->nconns, RPCFIX_CONNS);
	c = &f->conns[f->nconns++];
	memset(c, 0, sizeof(*c));
	rpcfix_peer(&c->peer, name, role);
	c->hello = hello;
	c->id = f->next_id++;
	if (node_conn != 0)
		c->id = node_conn;
	return c;
}

/* Log reads the domain sent to an agent: answered with a line. */
static void
rpcfix_answer_logs(struct rpcfix *f)
{
	static const uint8_t line[] = "hello\n";
	size_t i;

	for (i = 0; i < f->d.ncmds; i++)
		if (f->d.cmds[i].kind == DOMAIN_READ_LOG &&
		    !f->d.cmds[i].answered) {
			f->d.cmds[i].answered = true;
			f->log_reads++;
			f->d.cmds[i].log_done(f->d.cmds[i].arg, line,
			    sizeof(line) - 1, NULL);
		}
}

const Cohort__V1__Envelope *
rpcfix_call_raw(struct rpcfix *f, struct conn *c, const uint8_t *body,
    size_t len, bool *undecodable)
{
	Cohort__V1__Envelope *env;

	rpcfix_free_replies(c);
	*undecodable = false;
	if ((env = frame_decode(body, len)) == NULL) {
		*undecodable = true;
		return NULL;
	}
	rpc_dispatch(c, env, &f->rpc);
	frame_free(env);
	/* The end of the loop round: the commit, then its replies. */
	domain_commit(&f->d);
	rpcfix_answer_logs(f);
	domain_commit(&f->d);
	return c->nreplies > 0 ? c->replies[0] : NULL;
}

const Cohort__V1__Envelope *
rpcfix_call(struct rpcfix *f, struct conn *c, const Cohort__V1__Envelope *env)
{
	const Cohort__V1__Envelope *r;
	uint8_t *buf;
	size_t len;
	bool bad;

	len = cohort__v1__envelope__get_packed_size(env);
	buf = malloc(len + 1);
	ck_assert_ptr_nonnull(buf);
	cohort__v1__envelope__pack(env, buf);
	r = rpcfix_call_raw(f, c, buf, len, &bad);
	free(buf);
	ck_assert_msg(!bad, "a request that does not decode");
	return r;
}

static void
rpcfix_append(char **p, size_t *left, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
rpcfix_append(char **p, size_t *left, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(*p, *left, fmt, ap);
	va_end(ap);
	ck_assert_msg(n >= 0 && (size_t)n < *left, "state text too long");
	*p += n;
	*left -= (size_t)n;
}

void
rpcfix_state(struct rpcfix *f, char *buf, size_t len)
{
	const struct jobs_filter all = { .all = true };
	const struct job **tab;
	const struct step *s;
	struct node **nodes;
	struct cerr err;
	int64_t last = 0;
	size_t i, n;
	uint32_t k;

	buf[0] = '\0';
	ck_assert_int_eq(jobs_list(f->d.js, &all, &tab, &n), 0);
	for (i = 0; i < n; i++)
		rpcfix_append(&buf, &len, "job %" PRIu64 " %s %s q=%s p=%d "
		    "t=%" PRIu64 " h=%d a=%u r=%u n=%s\n", tab[i]->id,
		    job_state_name(tab[i]->state), tab[i]->user,
		    tab[i]->spec.queue != NULL ? tab[i]->spec.queue : "-",
		    tab[i]->spec.priority, tab[i]->spec.time_limit_s,
		    (int)tab[i]->hold, tab[i]->attempt, tab[i]->restarts,
		    tab[i]->spec.name);
	free(tab);
	nodes = nodes_all(f->d.ns, &n);
	for (i = 0; i < n; i++)
		rpcfix_append(&buf, &len, "node %s %d drained=%d\n",
		    nodes[i]->name, (int)nodes[i]->state,
		    (int)nodes[i]->drained);
	for (k = 0; k < 4; k++)
		if ((s = steps_get(f->d.cl, f->run, k)) != NULL)
			rpcfix_append(&buf, &len, "step %u %s\n", k,
			    job_state_name(s->state));
	ck_assert_int_eq(store_events_last_id(f->d.st, &last, &err), 0);
	rpcfix_append(&buf, &len, "commands %zu events %" PRId64 "\n",
	    f->d.ncmds, last);
}

void
rpcfix_cred(struct rpcfix *f, uint8_t out[32])
{
	const struct job *job = domain_job(&f->d, f->run);

	ck_assert_int_eq(stepcred_make(f->sc, job->id, job->attempt,
	    job->user, out), 0);
}
