/* daemon/controller/repl/repl_net.c, transports in one libuv loop with
 * certificates minted in memory: a Raft stream, either way, reaches raft
 * only when the peer's certificate has role controller, and a refusal is
 * logged with the role. The TLS contexts here check the chain only, so
 * the transport's own check is what is tested (the daemon's client
 * context checks the role too). The listener serves the members'
 * addresses only, before any TLS; a reload's CRL closes open streams to
 * revoked replicas. */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <check.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <raft.h>
#include <raft/uv.h>
#include <uv.h>

#include "daemon/controller/repl/repl_int.h"
#include "lib/clock.h"
#include "lib/tls.h"
#include "tests/unit/ctl_fixture.h"
#include "tests/unit/pki_fixture.h"

static struct pki pki;

static void
setup_pki(void)
{
	/* An agent's certificate good for a server's end too: only the
	 * role tells it from a replica's. */
	pki_make(&pki, "serverAuth,clientAuth", "IP:127.0.0.1");
}

static void
teardown_pki(void)
{
	pki_free(&pki);
}

/* TLS 1.3 with cert and key, verifying the peer's chain and nothing
 * more. */
static SSL_CTX *
ctx_new(const SSL_METHOD *m, X509 *cert, EVP_PKEY *key)
{
	SSL_CTX *ctx = SSL_CTX_new(m);

	ck_assert_ptr_nonnull(ctx);
	SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
	X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), pki.ca);
	ck_assert_int_eq(SSL_CTX_use_certificate(ctx, cert), 1);
	ck_assert_int_eq(SSL_CTX_use_PrivateKey(ctx, key), 1);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER |
	    SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	return ctx;
}

/* "HOST:PORT/HOST:1" with a port of host (IPv4) free a moment ago. */
static void
free_address(const char *host, char *buf, size_t len)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(inet_pton(AF_INET, host, &sin.sin_addr), 1);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sin, &sl), 0);
	snprintf(buf, len, "%s:%u/%s:1", host, ntohs(sin.sin_port), host);
	close(fd);
}

/* A stream raft was handed and the test keeps open (keep_streams), to
 * see it end or carry bytes. */
struct kept {
	uv_stream_t *stream;	/* NULL once ended */
	raft_id id;		/* the peer's */
	size_t got;		/* bytes read from it */
	bool ended;
};

/* One replica's transport, with what raft was handed. */
struct side {
	struct raft_uv_transport t;
	SSL_CTX *srv, *cli;
	char address[64];
	int accepted;		/* streams handed to accept_cb */
	int connected;		/* connect callbacks with a stream */
	int refused;		/* connect callbacks without */
	struct kept kept[4];
	int nkept;
};

static uv_loop_t loop;
/* Wakes uv_run(UV_RUN_ONCE) now and then, so that run_until's bound is
 * looked at even when nothing happens. */
static uv_timer_t tick;
/* c: up in the tests that need a third; d: the daemon's own contexts,
 * up in the reload tests only. */
static struct side a, b, c, d;
/* Streams handed to raft stay open (else they are closed at once). */
static bool keep_streams;

static void
stream_closed(uv_handle_t *h)
{
	raft_free(h);
}

static void
kept_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	static char space[4096];

	*buf = uv_buf_init(space, sizeof(space));
}

static void
kept_read(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf)
{
	struct kept *k = stream->data;

	if (n > 0)
		k->got += (size_t)n;
	else if (n < 0) {
		k->ended = true;
		k->stream = NULL;
		uv_close((uv_handle_t *)stream, stream_closed);
	}
}

/* Keep stream (handed to raft for the peer id) open in s, or close it. */
static void
handed(struct side *s, raft_id id, uv_stream_t *stream)
{
	struct kept *k;

	if (!keep_streams) {
		uv_close((uv_handle_t *)stream, stream_closed);
		return;
	}
	ck_assert_int_lt(s->nkept, 4);
	k = &s->kept[s->nkept++];
	k->stream = stream;
	k->id = id;
	stream->data = k;
	ck_assert_int_eq(uv_read_start(stream, kept_alloc, kept_read), 0);
}

static void
accept_cb(struct raft_uv_transport *t, raft_id id, const char *address,
    struct uv_stream_s *stream)
{
	struct side *s = t == &a.t ? &a : t == &b.t ? &b : t == &c.t ? &c :
	    &d;

	s->accepted++;
	handed(s, id, stream);
}

/* A connect request (req.data points back to it) with the side that
 * makes it and the peer's id. */
struct conn_req {
	struct raft_uv_connect req;
	struct side *s;
	raft_id id;
};

static void
connect_cb(struct raft_uv_connect *req, struct uv_stream_s *stream,
    int status)
{
	struct conn_req *cr = req->data;
	struct side *s = cr->s;

	if (stream != NULL) {
		s->connected++;
		handed(s, cr->id, stream);
	} else
		s->refused++;
}

/* from opens a stream to to (as id). */
static void
connect_to(struct side *from, struct conn_req *cr, raft_id id,
    struct side *to)
{
	cr->req.data = cr;
	cr->s = from;
	cr->id = id;
	ck_assert_int_eq(from->t.connect(&from->t, &cr->req, id, to->address,
	    connect_cb), 0);
}

static void
side_close_kept(struct side *s)
{
	int i;

	for (i = 0; i < s->nkept; i++)
		if (s->kept[i].stream != NULL) {
			uv_close((uv_handle_t *)s->kept[i].stream,
			    stream_closed);
			s->kept[i].stream = NULL;
		}
}

/* A transport with id over s->srv and s->cli, listening on host. */
static void
side_start_on(struct side *s, raft_id id, const char *host)
{
	free_address(host, s->address, sizeof(s->address));
	ck_assert_int_eq(repl_net_init(&s->t, &loop, s->srv, s->cli), 0);
	ck_assert_int_eq(s->t.init(&s->t, id, s->address), 0);
	ck_assert_int_eq(s->t.listen(&s->t, accept_cb), 0);
}

static void
side_start(struct side *s, raft_id id)
{
	side_start_on(s, id, "127.0.0.1");
}

static void
side_up_on(struct side *s, raft_id id, X509 *cert, EVP_PKEY *key,
    const char *host)
{
	s->srv = ctx_new(TLS_server_method(), cert, key);
	s->cli = ctx_new(TLS_client_method(), cert, key);
	side_start_on(s, id, host);
}

static void
side_up(struct side *s, raft_id id, X509 *cert, EVP_PKEY *key)
{
	side_up_on(s, id, cert, key, "127.0.0.1");
}

/* Its handles are closed on the loop's next run: free it after. */
static void
side_close(struct side *s)
{
	side_close_kept(s);
	if (s->t.impl != NULL)
		s->t.close(&s->t, NULL);
}

static void
side_free(struct side *s)
{
	if (s->t.impl != NULL)
		repl_net_free(&s->t);
	SSL_CTX_free(s->srv);
	SSL_CTX_free(s->cli);
	memset(s, 0, sizeof(*s));
}

static void
tick_cb(uv_timer_t *t)
{
}

/* Run the loop until done() or a bound that only a hang reaches; the
 * tick makes sure the bound is reached even when the loop is idle. */
static bool
run_until(bool (*done)(void))
{
	uint64_t bound = clock_mono_us() + 30 * 1000000ULL;

	uv_timer_start(&tick, tick_cb, 100, 100);
	while (!done() && clock_mono_us() < bound)
		uv_run(&loop, UV_RUN_ONCE);
	uv_timer_stop(&tick);
	return done();
}

static void
setup(void)
{
	ck_assert_int_eq(uv_loop_init(&loop), 0);
	ck_assert_int_eq(uv_timer_init(&loop, &tick), 0);
	keep_streams = false;
	ctl_log_clear();
	/* A replica (1) and a peer with an agent's certificate (2). */
	side_up(&a, 1, pki.ctl, pki.ctl_key);
	side_up(&b, 2, pki.agent, pki.agent_key);
}

static void
teardown(void)
{
	side_close(&a);
	side_close(&b);
	side_close(&c);
	side_close(&d);
	uv_close((uv_handle_t *)&tick, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	side_free(&a);
	side_free(&b);
	side_free(&c);
	side_free(&d);
	ck_assert_int_eq(uv_loop_close(&loop), 0);
}

static bool
a_answered(void)
{
	return a.connected + a.refused > 0;
}

START_TEST(outbound_refuses_other_roles)
{
	struct conn_req req;

	connect_to(&a, &req, 2, &b);
	ck_assert(run_until(a_answered));
	ck_assert_msg(a.connected == 0 && a.refused == 1,
	    "a stream to an agent's certificate was handed to raft");
	ck_assert_msg(ctl_logged("raft stream to 127.0.0.1 refused: "
	    "certificate of node01 has role 'agent', not 'controller'"),
	    "not logged: %s", ctl_log());
	ck_assert_int_eq(b.accepted, 0);
}
END_TEST

static bool
a_refused_inbound(void)
{
	return ctl_logged("raft stream from 127.0.0.1 refused: certificate "
	    "of node01 has role 'agent', not 'controller'");
}

START_TEST(inbound_refuses_other_roles)
{
	struct conn_req req;

	connect_to(&b, &req, 1, &a);
	ck_assert_msg(run_until(a_refused_inbound), "not logged: %s",
	    ctl_log());
	ck_assert_int_eq(a.accepted, 0);
}
END_TEST

/* The control: between two replicas the stream is handed over. */
static bool
a_accepted(void)
{
	return a.accepted > 0;
}

START_TEST(controllers_connect)
{
	struct conn_req req;

	side_up(&c, 3, pki.ctl, pki.ctl_key);
	connect_to(&c, &req, 1, &a);
	ck_assert(run_until(a_accepted));
	ck_assert_int_eq(c.connected, 1);
}
END_TEST

/* a's members: the Raft addresses in addrs (NULL-terminated). */
static void
a_members(const char *const *addrs)
{
	struct raft_configuration conf;
	raft_id id = 10;

	raft_configuration_init(&conf);
	for (; *addrs != NULL; addrs++)
		ck_assert_int_eq(raft_configuration_add(&conf, id++, *addrs,
		    RAFT_VOTER), 0);
	ck_assert_int_eq(repl_net_set_members(&a.t, &conf), 0);
	raft_configuration_close(&conf);
}

static bool
c_answered(void)
{
	return c.connected + c.refused > 0;
}

static bool
a_accepted_or_c_refused(void)
{
	return a.accepted > 0 || c.refused > 0;
}

/* a's members are elsewhere (127.0.0.2): a replica's certificate from
 * 127.0.0.1 is closed on accept, before any TLS (no handshake started,
 * the connecting side's handshake fails), counted and logged. Made a
 * member, by name, the same replica connects. */
START_TEST(strangers_refused_before_tls)
{
	static const char *const elsewhere[] = {
		"127.0.0.2:1/127.0.0.2:2", NULL };
	static const char *const by_name[] = {
		"127.0.0.2:1/127.0.0.2:2", "localhost:1/localhost:2", NULL };
	struct repl_net_stats st;
	struct conn_req req;

	side_up(&c, 3, pki.ctl, pki.ctl_key);
	a_members(elsewhere);
	connect_to(&c, &req, 1, &a);
	ck_assert_msg(run_until(c_answered), "no answer: %s", ctl_log());
	repl_net_stats(&a.t, &st);
	ck_assert_msg(c.refused == 1 && a.accepted == 0, "a stream from a "
	    "non-member's address was handed to raft (c connected %d "
	    "refused %d, a accepted %d): %s", c.connected, c.refused,
	    a.accepted, ctl_log());
	ck_assert_msg(st.refused == 1 && st.handshakes == 0, "refused %lu, "
	    "handshakes started %lu: not closed before TLS", st.refused,
	    st.handshakes);
	ck_assert_msg(ctl_logged("raft listener: refused 127.0.0.1: not a "
	    "replica's address"), "not logged: %s", ctl_log());

	a_members(by_name);
	c.refused = 0;
	connect_to(&c, &req, 1, &a);
	ck_assert_msg(run_until(a_accepted_or_c_refused), "no answer: %s",
	    ctl_log());
	repl_net_stats(&a.t, &st);
	ck_assert_msg(c.connected == 1 && a.accepted == 1, "a member named "
	    "by host name was refused (c connected %d refused %d, a accepted "
	    "%d, refused %lu): %s", c.connected, c.refused, a.accepted,
	    st.refused, ctl_log());
	repl_net_stats(&a.t, &st);
	ck_assert_int_eq(st.refused, 1);
}
END_TEST

/* A replica's streams leave from its Raft address (c on 127.0.0.2), not
 * from whatever the route to a picks (127.0.0.1), which a's list of
 * members does not hold. */
START_TEST(members_connect_from_their_address)
{
	const char *members[2] = { NULL, NULL };
	struct conn_req req;

	side_up_on(&c, 3, pki.ctl, pki.ctl_key, "127.0.0.2");
	members[0] = c.address;
	a_members(members);
	connect_to(&c, &req, 1, &a);
	ck_assert_msg(run_until(a_accepted_or_c_refused), "no answer: %s",
	    ctl_log());
	ck_assert_msg(a.accepted == 1 && c.connected == 1, "a stream from a "
	    "member's Raft address was refused (c connected %d refused %d): "
	    "%s", c.connected, c.refused, ctl_log());
}
END_TEST

/* The daemon's contexts (tls_server_ctx, tls_client_ctx) on d, from
 * files in a fresh folder; c: another replica, whose certificate (serial
 * 4) revoke_c then revokes, reloading d's contexts as ctl_reload does. */
static char dir[64];

static const char *
file(const char *name)
{
	static char buf[4][128];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static void
reload_up(void)
{
	EVP_PKEY *key;
	X509 *own;
	X509_CRL *crl;
	struct cerr err;

	snprintf(dir, sizeof(dir), "/tmp/check_repl_net.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	pki_write_cert(file("ca.pem"), pki.ca);
	pki_write_cert(file("ctl.crt"), pki.ctl);
	pki_write_key(file("ctl.key"), pki.ctl_key);
	crl = pki_mint_crl(pki.ca, pki.ca_key, NULL, 0, -60, 3600);
	pki_write_crl(file("ctl.crl"), crl, "w");
	X509_CRL_free(crl);
	d.srv = tls_server_ctx(file("ca.pem"), file("ctl.crl"),
	    file("ctl.crt"), file("ctl.key"), &err);
	ck_assert_msg(d.srv != NULL, "%s", err.text);
	d.cli = tls_client_ctx(file("ca.pem"), file("ctl.crl"),
	    file("ctl.crt"), file("ctl.key"), &err);
	ck_assert_msg(d.cli != NULL, "%s", err.text);
	side_start(&d, 4);
	ck_assert_ptr_nonnull(key = EVP_EC_gen("P-256"));
	own = pki_mint(key, "controller", "controller", 4, pki.ca, pki.ca_key,
	    "serverAuth,clientAuth", "IP:127.0.0.1");
	side_up(&c, 3, own, key);
	X509_free(own);
	EVP_PKEY_free(key);
}

static void
revoke_c(void)
{
	static const long revoked[] = { 4 };
	X509_CRL *crl;
	struct cerr err;

	crl = pki_mint_crl(pki.ca, pki.ca_key, revoked, 1, -60, 3600);
	pki_write_crl(file("ctl.crl"), crl, "w");
	X509_CRL_free(crl);
	ck_assert_msg(tls_ctx_reload_both(d.srv, d.cli, file("ca.pem"),
	    file("ctl.crl"), &err) == 0, "%s", err.text);
}

static void
reload_down(void)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static bool
c_d_settled(void)
{
	return d.accepted == 1 && c.connected + c.refused == 1 &&
	    d.connected + d.refused == 1;
}

static bool
d_refused_both(void)
{
	return d.refused == 1 && ctl_logged("raft stream from 127.0.0.1: "
	    "TLS handshake failed");
}

/* After the reload, a new stream is refused either way: the Raft client
 * context once kept the CRL read at start. */
START_TEST(reload_reaches_raft)
{
	struct conn_req req_c, req_d;

	reload_up();
	/* The control: before the reload both ways connect. */
	connect_to(&c, &req_c, 4, &d);
	connect_to(&d, &req_d, 3, &c);
	ck_assert_msg(run_until(c_d_settled), "d accepted %d, c connected %d "
	    "refused %d, d connected %d refused %d: %s", d.accepted,
	    c.connected, c.refused, d.connected, d.refused, ctl_log());
	ck_assert_int_eq(d.connected, 1);

	revoke_c();
	ctl_log_clear();
	connect_to(&d, &req_d, 3, &c);
	connect_to(&c, &req_c, 4, &d);
	d.refused = 0;
	ck_assert_msg(run_until(d_refused_both), "d connected %d refused %d, "
	    "accepted %d: %s", d.connected, d.refused, d.accepted, ctl_log());
	ck_assert_msg(d.connected == 1, "a stream to a revoked replica was "
	    "handed to raft after the reload");
	ck_assert_msg(d.accepted == 1, "a stream from a revoked replica was "
	    "handed to raft after the reload");
	ck_assert_msg(ctl_logged("revoked"), "not said why: %s", ctl_log());
	reload_down();
}
END_TEST

static bool
all_up(void)
{
	return d.accepted == 2 && c.connected == 1 && d.connected == 1 &&
	    a.connected == 1;
}

/* Of d's streams, those with peer id ended / not ended. */
static int
d_kept(raft_id id, bool ended)
{
	int i, n = 0;

	for (i = 0; i < d.nkept; i++)
		if (d.kept[i].id == id && d.kept[i].ended == ended)
			n++;
	return n;
}

static bool
d_c_ended(void)
{
	return d_kept(3, true) == 2;
}

static struct kept *
d_from_a(void)
{
	int i;

	for (i = 0; i < d.nkept; i++)
		if (d.kept[i].id == 1)
			return &d.kept[i];
	return NULL;
}

static bool
d_got_bytes(void)
{
	return d_from_a()->got == 5;
}

static void
wrote(uv_write_t *w, int status)
{
	ck_assert_int_eq(status, 0);
}

/* Open streams, both ways, between d and c, and from a (serial 2) to
 * d; revoke c and reload: repl_net_drop_revoked closes d's two streams
 * with c (raft sees them end), and the stream from a still carries
 * bytes. */
START_TEST(reload_drops_revoked_streams)
{
	struct conn_req req_c, req_d, req_a;
	uv_write_t w;
	uv_buf_t buf = uv_buf_init("hello", 5);

	keep_streams = true;
	reload_up();
	connect_to(&c, &req_c, 4, &d);
	connect_to(&d, &req_d, 3, &c);
	connect_to(&a, &req_a, 4, &d);
	ck_assert_msg(run_until(all_up), "d accepted %d connected %d, c "
	    "connected %d, a connected %d: %s", d.accepted, d.connected,
	    c.connected, a.connected, ctl_log());

	revoke_c();
	ctl_log_clear();
	ck_assert_int_eq(repl_net_drop_revoked(&d.t), 2);
	ck_assert_msg(run_until(d_c_ended), "d's streams with the revoked "
	    "replica did not end: %s", ctl_log());
	ck_assert_msg(ctl_logged("raft stream from 127.0.0.1: certificate of "
	    "controller: certificate revoked; closing"), "not logged: %s",
	    ctl_log());
	ck_assert_msg(ctl_logged("raft stream to 127.0.0.1: certificate of "
	    "controller: certificate revoked; closing"), "not logged: %s",
	    ctl_log());

	/* The stream from a, still valid, is open and carries bytes. */
	ck_assert_int_eq(d_kept(1, false), 1);
	ck_assert_int_eq(a.nkept, 1);
	ck_assert_int_eq(uv_write(&w, a.kept[0].stream, &buf, 1, wrote), 0);
	ck_assert_msg(run_until(d_got_bytes), "the stream from a valid "
	    "replica did not carry bytes after the reload");
	ck_assert_int_eq(d_kept(1, false), 1);
	ck_assert_int_eq(repl_net_drop_revoked(&d.t), 0);
	reload_down();
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("repl_net");
	TCase *tc = tcase_create("roles");
	SRunner *sr;
	int failed;

	/* As the daemon: a peer that closes is an error return, not a
	 * signal. */
	signal(SIGPIPE, SIG_IGN);
	tcase_add_unchecked_fixture(tc, setup_pki, teardown_pki);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, outbound_refuses_other_roles);
	tcase_add_test(tc, inbound_refuses_other_roles);
	tcase_add_test(tc, controllers_connect);
	tcase_add_test(tc, strangers_refused_before_tls);
	tcase_add_test(tc, members_connect_from_their_address);
	tcase_add_test(tc, reload_reaches_raft);
	tcase_add_test(tc, reload_drops_revoked_streams);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
