/* daemon/agent/link.c through its operations table, against a small
 * controller in the same event loop (TLS 1.3, certificates minted in
 * memory): the link registers with the owner's inventory, hands a Launch
 * to ops->launch and reports the owner's tasks in heartbeats until the
 * exit is acknowledged (ops->exit_acked); events come in order; an
 * owner's may_connect holds attempts back; a controller that accepts the
 * connection but never answers is given up at the handshake deadline
 * (the link once waited for it forever). */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>

#include "daemon/agent/link.h"
#include "lib/frame.h"
#include "lib/tls.h"
#include "lib/wire.h"
#include "tests/unit/pki_fixture.h"

static struct pki pki;

static void
setup_pki(void)
{
	pki_make(&pki, "clientAuth", "DNS:node01");
}

static void
teardown_pki(void)
{
	pki_free(&pki);
}

static SSL_CTX *
ctx_new(const SSL_METHOD *m)
{
	SSL_CTX *ctx = SSL_CTX_new(m);

	ck_assert_ptr_nonnull(ctx);
	SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
	X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), pki.ca);
	return ctx;
}

/* ---- a controller ------------------------------------------------------ */

struct ctl {
	struct event_base *base;
	SSL_CTX *ctx;
	struct evconnlistener *lis;
	struct bufferevent *bev;
	evutil_socket_t held;		/* silent: a TCP peer that says nothing */
	bool silent;
	struct sockaddr_in addr;
	char hello_software[64];
	char reg_name[32];
	unsigned reg_gpus;
	bool launch_replied;
	bool prepare;			/* send a prepare_image launch */
	bool image_replied;		/* its answer came */
	uint64_t image_ms;
	bool image_cached;
	unsigned hb_with_exit;		/* heartbeats reporting the ended task */
	bool acked;
};

static void
ctl_send(struct ctl *c, Cohort__V1__Envelope *env)
{
	ck_assert_int_eq(frame_write(bufferevent_get_output(c->bev), env,
	    1u << 20), 0);
}

static void
ctl_launch(struct ctl *c)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__LaunchRequest lr = COHORT__V1__LAUNCH_REQUEST__INIT;
	Cohort__V1__JobSpec spec = COHORT__V1__JOB_SPEC__INIT;
	char *nodes[1] = { "node01" };
	char *argv[1] = { "train" };

	spec.n_argv = 1;
	spec.argv = argv;
	lr.job_id = 7;
	lr.restart = 1;
	lr.user = "alice";
	lr.spec = &spec;
	lr.node_rank = 0;
	lr.n_nodelist = 1;
	lr.nodelist = nodes;
	lr.master_addr = "127.0.0.1";
	lr.master_port = 29500;
	/* An array task: its array and index reach the owner. */
	lr.has_array_id = lr.has_array_task = 1;
	lr.array_id = 5;
	lr.array_task = 2;
	lr.has_prepare_image = lr.prepare_image = c->prepare;
	env.id = 100;
	env.body_case = COHORT__V1__ENVELOPE__BODY_LAUNCH;
	env.launch = &lr;
	ctl_send(c, &env);
}

static void
ctl_on_message(struct ctl *c, const Cohort__V1__Envelope *in)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__HelloReply hr = COHORT__V1__HELLO_REPLY__INIT;
	Cohort__V1__RegisterReply rr = COHORT__V1__REGISTER_REPLY__INIT;
	Cohort__V1__TaskExitAck ack = COHORT__V1__TASK_EXIT_ACK__INIT;
	size_t i;

	env.id = in->id;
	switch (in->body_case) {
	case COHORT__V1__ENVELOPE__BODY_HELLO:
		snprintf(c->hello_software, sizeof(c->hello_software), "%s",
		    in->hello->software);
		hr.major = WIRE_MAJOR;
		hr.minor = WIRE_MINOR;
		env.body_case = COHORT__V1__ENVELOPE__BODY_HELLO_REPLY;
		env.hello_reply = &hr;
		ctl_send(c, &env);
		return;
	case COHORT__V1__ENVELOPE__BODY_REGISTER:
		snprintf(c->reg_name, sizeof(c->reg_name), "%s",
		    in->register_->name);
		c->reg_gpus = (unsigned)in->register_->inventory->n_gpus;
		rr.heartbeat_ms = 100;
		env.body_case = COHORT__V1__ENVELOPE__BODY_REGISTER_REPLY;
		env.register_reply = &rr;
		ctl_send(c, &env);
		ctl_launch(c);
		return;
	case COHORT__V1__ENVELOPE__BODY_LAUNCH_REPLY:
		c->launch_replied = true;
		if (in->launch_reply->image != NULL) {
			c->image_replied = true;
			c->image_ms = in->launch_reply->image->ms;
			c->image_cached = in->launch_reply->image->cached;
			event_base_loopbreak(c->base);
		}
		return;
	case COHORT__V1__ENVELOPE__BODY_HEARTBEAT:
		for (i = 0; i < in->heartbeat->n_tasks; i++) {
			const Cohort__V1__TaskStatus *t =
			    in->heartbeat->tasks[i];

			if (t->job_id != 7 || t->running)
				continue;
			/* The second report of the exit: acknowledge. */
			if (++c->hb_with_exit == 2) {
				ack.job_id = 7;
				ack.restart = 1;
				ack.rank = t->rank;
				env.body_case =
				    COHORT__V1__ENVELOPE__BODY_TASK_EXIT_ACK;
				env.task_exit_ack = &ack;
				ctl_send(c, &env);
			}
		}
		return;
	default:
		return;
	}
}

static void
ctl_read_cb(struct bufferevent *bev, void *arg)
{
	struct ctl *c = arg;
	Cohort__V1__Envelope *env;

	while (frame_read(bufferevent_get_input(bev), 1u << 20, &env) ==
	    FRAME_OK) {
		ctl_on_message(c, env);
		frame_free(env);
	}
}

static void
ctl_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct ctl *c = arg;

	if (!(what & BEV_EVENT_CONNECTED)) {
		bufferevent_free(c->bev);
		c->bev = NULL;
	}
}

static void
ctl_accept_cb(struct evconnlistener *lis, evutil_socket_t fd,
    struct sockaddr *sa, int len, void *arg)
{
	struct ctl *c = arg;

	if (c->silent) {
		c->held = fd;		/* accepted, never answered */
		return;
	}
	ck_assert_ptr_null(c->bev);
	c->bev = bufferevent_openssl_socket_new(c->base, fd, SSL_new(c->ctx),
	    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
	ck_assert_ptr_nonnull(c->bev);
	bufferevent_setcb(c->bev, ctl_read_cb, NULL, ctl_event_cb, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

static void
ctl_start(struct ctl *c, struct event_base *base, bool silent)
{
	socklen_t len = sizeof(c->addr);

	memset(c, 0, sizeof(*c));
	c->base = base;
	c->held = -1;
	c->silent = silent;
	c->ctx = ctx_new(TLS_server_method());
	ck_assert_int_eq(SSL_CTX_use_certificate(c->ctx, pki.ctl), 1);
	ck_assert_int_eq(SSL_CTX_use_PrivateKey(c->ctx, pki.ctl_key), 1);
	SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER |
	    SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	c->addr.sin_family = AF_INET;
	c->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->lis = evconnlistener_new_bind(base, ctl_accept_cb, c,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 16,
	    (struct sockaddr *)&c->addr, sizeof(c->addr));
	ck_assert_ptr_nonnull(c->lis);
	ck_assert_int_eq(getsockname(evconnlistener_get_fd(c->lis),
	    (struct sockaddr *)&c->addr, &len), 0);
}

static void
ctl_stop(struct ctl *c)
{
	if (c->bev != NULL)
		bufferevent_free(c->bev);
	if (c->held != -1)
		close(c->held);
	evconnlistener_free(c->lis);
	SSL_CTX_free(c->ctx);
}

/* ---- the owner ------------------------------------------------------- */

struct owner {
	struct event_base *base;
	struct link *link;
	struct inventory inv;
	enum link_event events[16];
	unsigned nevents;
	unsigned inventory_calls;
	unsigned may_connect_calls, refuse_first;
	bool launched, ended, acked;
	uint64_t launch_job;
	uint64_t prepare_token;		/* 0: none asked */
	char last_notice[512];
};

static const struct inventory *
op_inventory(void *arg, struct cerr *err)
{
	struct owner *o = arg;

	o->inventory_calls++;
	return &o->inv;
}

static struct task_report *
op_tasks(void *arg, size_t *n)
{
	struct owner *o = arg;
	struct task_report *r;

	*n = 0;
	if (!o->launched || o->acked)
		return NULL;
	ck_assert_ptr_nonnull(r = calloc(1, sizeof(*r)));
	r->job_id = o->launch_job;
	r->restart = 1;
	r->rank = 0;
	/* Ended at once, with status 3: reported until acknowledged. */
	r->running = false;
	r->wait_status = 3 << 8;
	*n = 1;
	return r;
}

static int
op_launch(void *arg, const struct launch *l, struct cerr *err)
{
	struct owner *o = arg;

	ck_assert_uint_eq(l->nnodes, 1);
	ck_assert_str_eq(l->user, "alice");
	ck_assert_str_eq(l->spec->argv[0], "train");
	ck_assert_uint_eq(l->array_id, 5);
	ck_assert_uint_eq(l->array_task, 2);
	o->launched = true;
	o->launch_job = l->job_id;
	return 0;
}

static int
op_prepare(void *arg, const struct launch *l, uint64_t token,
    struct cerr *err)
{
	struct owner *o = arg;

	ck_assert_uint_eq(l->job_id, 7);
	ck_assert_uint_ne(token, 0);
	o->prepare_token = token;
	event_base_loopbreak(o->base);
	return 0;
}

static void
op_exit_acked(void *arg, uint64_t job_id, uint32_t restart, const uint32_t *step,
    unsigned rank)
{
	struct owner *o = arg;

	ck_assert_uint_eq(job_id, 7);
	ck_assert_uint_eq(restart, 1);
	o->acked = true;
	event_base_loopbreak(o->base);
}

static bool
op_may_connect(void *arg)
{
	struct owner *o = arg;

	return ++o->may_connect_calls > o->refuse_first;
}

static void
op_event(void *arg, enum link_event ev)
{
	struct owner *o = arg;

	if (o->nevents < 16)
		o->events[o->nevents++] = ev;
	if (ev == LINK_EV_DOWN)
		event_base_loopbreak(o->base);
}

static void
op_log(void *arg, enum link_log level, const char *text)
{
	struct owner *o = arg;

	if (level == LINK_LOG_NOTICE)
		snprintf(o->last_notice, sizeof(o->last_notice), "%s", text);
}

static const struct link_ops ops = {
	.inventory = op_inventory,
	.tasks = op_tasks,
	.launch = op_launch,
	.prepare = op_prepare,
	.exit_acked = op_exit_acked,
	.may_connect = op_may_connect,
	.event = op_event,
	.log = op_log,
};

static void
owner_start(struct owner *o, struct event_base *base, SSL_CTX *ctx,
    struct ctl *c, uint64_t handshake_ms)
{
	struct link_params lp = {
		.host = "127.0.0.1",
		.port = ntohs(c->addr.sin_port),
		.name = "node01",
		.address = "127.0.0.1",
		.software = "check_link 1",
		.heartbeat_ms = 1000,
		.cert = pki.agent,
		.key = pki.agent_key,
		.handshake_ms = handshake_ms,
	};
	struct cerr err;

	memset(o, 0, sizeof(*o));
	o->base = base;
	o->inv.ngpus = 2;
	o->inv.gpus[0].index = 0;
	o->inv.gpus[1].index = 1;
	o->link = link_create(base, &lp, ctx, &ops, o, &err);
	ck_assert_msg(o->link != NULL, "%s", err.text);
}

static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	event_base_loopbreak(arg);
}

static void
run_for(struct event_base *base, long ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
	struct event *t = evtimer_new(base, timeout_cb, base);

	evtimer_add(t, &tv);
	event_base_dispatch(base);
	event_free(t);
}

static SSL_CTX *
client_ctx(void)
{
	SSL_CTX *ctx = ctx_new(TLS_client_method());

	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	ck_assert_int_eq(tls_ctx_expect_controller(ctx), 0);
	return ctx;
}

START_TEST(test_register_launch_ack)
{
	struct event_base *base = event_base_new();
	SSL_CTX *ctx;
	struct ctl c;
	struct owner o;

	ck_assert_ptr_nonnull(base);
	ctl_start(&c, base, false);
	ctx = client_ctx();
	owner_start(&o, base, ctx, &c, 0);
	ck_assert(!link_ready(o.link));
	link_start(o.link, 0);
	run_for(base, 5000);
	ck_assert_str_eq(c.hello_software, "check_link 1");
	ck_assert_str_eq(c.reg_name, "node01");
	ck_assert_uint_eq(c.reg_gpus, 2);
	ck_assert_uint_eq(o.inventory_calls, 1);
	ck_assert(o.launched);
	ck_assert_uint_eq(o.launch_job, 7);
	ck_assert(c.launch_replied);
	/* The exit rode along in heartbeats until acknowledged. */
	ck_assert_uint_ge(c.hb_with_exit, 2);
	ck_assert(o.acked);
	ck_assert(link_ready(o.link));
	ck_assert_uint_eq(o.nevents, 2);
	ck_assert_int_eq(o.events[0], LINK_EV_CONNECTING);
	ck_assert_int_eq(o.events[1], LINK_EV_READY);
	/* Stopped by the owner: no callback, no retry. */
	link_stop(o.link);
	ck_assert(!link_ready(o.link));
	run_for(base, 300);
	ck_assert_uint_eq(o.nevents, 2);
	link_destroy(o.link);
	ctl_stop(&c);
	SSL_CTX_free(ctx);
	event_base_free(base);
}
END_TEST

/* A launch with prepare_image is the owner's to answer later: nothing
 * starts, and link_prepared sends the answer (an unknown token none). */
START_TEST(test_prepare_answered_later)
{
	struct event_base *base = event_base_new();
	struct agent_prepared r;
	SSL_CTX *ctx;
	struct ctl c;
	struct owner o;

	ck_assert_ptr_nonnull(base);
	ctl_start(&c, base, false);
	c.prepare = true;
	ctx = client_ctx();
	owner_start(&o, base, ctx, &c, 0);
	link_start(o.link, 0);
	run_for(base, 5000);
	ck_assert_uint_ne(o.prepare_token, 0);
	ck_assert(!o.launched);
	ck_assert(!c.launch_replied);
	memset(&r, 0, sizeof(r));
	r.job_id = 7;
	r.restart = 1;
	r.cached = true;
	r.ms = 1234;
	link_prepared(o.link, o.prepare_token + 1, &r);
	link_prepared(o.link, o.prepare_token, &r);
	run_for(base, 5000);
	ck_assert(c.image_replied);
	ck_assert_uint_eq(c.image_ms, 1234);
	ck_assert(c.image_cached);
	ck_assert(!o.launched);
	link_destroy(o.link);
	ctl_stop(&c);
	SSL_CTX_free(ctx);
	event_base_free(base);
}
END_TEST

START_TEST(test_handshake_deadline)
{
	struct event_base *base = event_base_new();
	SSL_CTX *ctx;
	struct ctl c;
	struct owner o;

	ck_assert_ptr_nonnull(base);
	ctl_start(&c, base, true);
	ctx = client_ctx();
	owner_start(&o, base, ctx, &c, 300);
	o.refuse_first = 2;
	link_start(o.link, 0);
	/* Held back twice (20-100 ms each), then connected: the silent
	 * controller accepts and says nothing. */
	run_for(base, 3000);
	ck_assert_uint_eq(o.may_connect_calls, 3);
	ck_assert_int_ne(c.held, -1);
	ck_assert_uint_eq(o.nevents, 2);
	ck_assert_int_eq(o.events[0], LINK_EV_CONNECTING);
	ck_assert_int_eq(o.events[1], LINK_EV_DOWN);
	ck_assert_msg(strstr(o.last_notice, "no answer from the controller") !=
	    NULL, "notice: %s", o.last_notice);
	link_destroy(o.link);
	ctl_stop(&c);
	SSL_CTX_free(ctx);
	event_base_free(base);
}
END_TEST


/* The agent's way through the replicas: a failure moves to the next
 * listed address within a round (no back-off), the end of the list ends
 * the round (back off); ERR_NOT_LEADER's leader is tried next, listed or
 * not, a bad or missing one is not followed. */
START_TEST(test_replica_choice)
{
	struct addrlist l;
	struct addrlist_walk w;
	struct addrlist_addr a;
	struct cerr err;
	bool listed;
	char buf[ADDRLIST_ADDR_TEXT];

	ck_assert_int_eq(addrlist_parse("c1:1, c2:2, c3:3", &l, &err), 0);
	addrlist_walk_init(&w, &l, NULL);
	ck_assert(!link_next_addr(&w, &a) || true);	/* the first: c1 */
	ck_assert_str_eq(addrlist_addr_format(&a, buf, sizeof(buf)), "c1:1");
	ck_assert(link_next_addr(&w, &a));
	ck_assert_str_eq(addrlist_addr_format(&a, buf, sizeof(buf)), "c2:2");
	/* c2 says c3 leads. */
	ck_assert_int_eq(link_follow(&w, "c3:3", &listed, &err), 0);
	ck_assert(listed);
	ck_assert(link_next_addr(&w, &a));
	ck_assert_str_eq(addrlist_addr_format(&a, buf, sizeof(buf)), "c3:3");
	/* c3 refused too: the round is over, c1 after the back-off. */
	ck_assert(!link_next_addr(&w, &a));
	ck_assert_str_eq(addrlist_addr_format(&a, buf, sizeof(buf)), "c1:1");
	/* A leader outside the list is followed and said to be. */
	ck_assert_int_eq(link_follow(&w, "[::1]:9", &listed, &err), 0);
	ck_assert(!listed);
	ck_assert(link_next_addr(&w, &a));
	ck_assert_str_eq(addrlist_addr_format(&a, buf, sizeof(buf)),
	    "[::1]:9");
	/* No leader (an election), or one that is no address. */
	ck_assert_int_eq(link_follow(&w, NULL, &listed, &err), -1);
	ck_assert_int_eq(err.code, ERR_NOT_FOUND);
	ck_assert_int_eq(link_follow(&w, "", &listed, &err), -1);
	ck_assert_int_eq(link_follow(&w, "c9", &listed, &err), -1);
	ck_assert_int_eq(err.code, ERR_PROTOCOL);
	ck_assert(link_next_addr(&w, &a));
	ck_assert_str_eq(addrlist_addr_format(&a, buf, sizeof(buf)), "c2:2");
}
END_TEST

/* One controller: every failure ends a round (the back-off as before). */
START_TEST(test_replica_single)
{
	struct addrlist l;
	struct addrlist_walk w;
	struct addrlist_addr a;
	struct cerr err;

	ck_assert_int_eq(addrlist_parse("ctl:7420", &l, &err), 0);
	addrlist_walk_init(&w, &l, NULL);
	link_next_addr(&w, &a);
	ck_assert(!link_next_addr(&w, &a));
	ck_assert_str_eq(a.host, "ctl");
	ck_assert(!link_next_addr(&w, &a));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("link");
	TCase *tc = tcase_create("link");
	SRunner *sr;
	int failed;

	signal(SIGPIPE, SIG_IGN);
	tcase_add_unchecked_fixture(tc, setup_pki, teardown_pki);
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_register_launch_ack);
	tcase_add_test(tc, test_prepare_answered_later);
	tcase_add_test(tc, test_handshake_deadline);
	tcase_add_test(tc, test_replica_choice);
	tcase_add_test(tc, test_replica_single);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
