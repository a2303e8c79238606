/* A raft_uv_transport whose connections are carried by libevent: each
 * raft stream is one end of a socketpair handed to libuv (uv_pipe_open);
 * the other end is relayed by libevent bufferevents to the peer's TCP
 * connection, plain or (RELAY_TLS=DIR) a bufferevent_openssl with TLS 1.3
 * and mutual certificates. cohortd would do this on its RPC port with a
 * "controller" certificate.
 * dqlite's node does the same kind of thing: raft connections arrive on
 * its client port (REQUEST_CONNECT with the peer's id and address) and are
 * handed to raft ("raftProxyAccept" in its trace).
 *
 * Preamble on each TCP connection: the connecting server's id (8 bytes,
 * little endian) and address (8 bytes length, then the bytes). */
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/bufferevent_ssl.h>
#include <event2/listener.h>
#include <openssl/ssl.h>
#include <uv.h>
#include <raft.h>
#include <raft/uv.h>

#include "proto-raft/relay.h"

struct relay {
	struct event_base *base;
	uv_loop_t *loop;
	struct raft_uv_transport *t;
	raft_id id;
	char address[64];
	raft_uv_accept_cb accept_cb;
	struct evconnlistener *lst;
	unsigned long relayed;	/* connections */
	SSL_CTX *srv, *cli;	/* NULL: plain TCP */
};

/* RELAY_TLS=DIR: TLS 1.3 both ways with DIR/{ca,cert,key}.pem, the peer's
 * certificate verified against the CA (mutual), as cohortd's RPC port. */
static SSL_CTX *
tls_ctx(const char *dir, int server)
{
	char ca[512], cert[512], key[512];
	SSL_CTX *c = SSL_CTX_new(server ? TLS_server_method() :
	    TLS_client_method());

	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	snprintf(cert, sizeof(cert), "%s/cert.pem", dir);
	snprintf(key, sizeof(key), "%s/key.pem", dir);
	if (c == NULL || !SSL_CTX_set_min_proto_version(c, TLS1_3_VERSION) ||
	    SSL_CTX_use_certificate_chain_file(c, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(c, key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_load_verify_locations(c, ca, NULL) != 1) {
		fprintf(stderr, "relay: TLS setup from %s failed\n", dir);
		exit(1);
	}
	SSL_CTX_set_verify(c, SSL_VERIFY_PEER |
	    SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	return c;
}

/* Two bufferevents glued together: what one reads the other writes. */
struct pair {
	struct bufferevent *a, *b;
};

static void
pair_free(struct pair *p)
{
	bufferevent_free(p->a);
	bufferevent_free(p->b);
	free(p);
}

static void
pair_read(struct bufferevent *bev, void *arg)
{
	struct pair *p = arg;
	struct bufferevent *to = bev == p->a ? p->b : p->a;

	evbuffer_add_buffer(bufferevent_get_output(to),
	    bufferevent_get_input(bev));
}

static void
pair_event(struct bufferevent *bev, short what, void *arg)
{
	if (getenv("RELAY_DEBUG") != NULL)
		fprintf(stderr, "relay: pair event 0x%x, ssl err %lu\n", what,
		    bufferevent_get_openssl_error(bev));
	if (what == BEV_EVENT_CONNECTED)
		return;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		pair_free(arg);	/* both ends close: raft sees EOF */
}

/* Socketpair: [0] for libuv, [1] relayed to tcp. */
static uv_stream_t *
splice(struct relay *r, struct bufferevent *tcp)
{
	int sv[2];
	uv_pipe_t *pipe;
	struct pair *p;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return NULL;
	evutil_make_socket_nonblocking(sv[1]);
	pipe = malloc(sizeof(*pipe));
	p = malloc(sizeof(*p));
	uv_pipe_init(r->loop, pipe, 0);
	if (uv_pipe_open(pipe, sv[0]) != 0)
		return NULL;
	p->a = tcp;
	p->b = bufferevent_socket_new(r->base, sv[1], BEV_OPT_CLOSE_ON_FREE);
	bufferevent_setcb(p->a, pair_read, NULL, pair_event, p);
	bufferevent_setcb(p->b, pair_read, NULL, pair_event, p);
	bufferevent_enable(p->a, EV_READ | EV_WRITE);
	bufferevent_enable(p->b, EV_READ | EV_WRITE);
	/* Bytes that came with the preamble. */
	if (evbuffer_get_length(bufferevent_get_input(tcp)) > 0)
		pair_read(tcp, p);
	r->relayed++;
	return (uv_stream_t *)pipe;
}

/* ---- incoming ---- */
struct inbound {
	struct relay *r;
	struct bufferevent *bev;
};

static void
in_read(struct bufferevent *bev, void *arg)
{
	struct inbound *in = arg;
	struct evbuffer *ib = bufferevent_get_input(bev);
	uint64_t id, len;
	char addr[64];
	unsigned char hdr[16];

	if (evbuffer_copyout(ib, hdr, 16) < 16)
		return;
	memcpy(&id, hdr, 8);
	memcpy(&len, hdr + 8, 8);
	if (len >= sizeof(addr)) {
		bufferevent_free(bev);
		free(in);
		return;
	}
	if (evbuffer_get_length(ib) < 16 + len)
		return;
	evbuffer_drain(ib, 16);
	evbuffer_remove(ib, addr, len);
	addr[len] = '\0';
	struct relay *r = in->r;
	free(in);
	uv_stream_t *s = splice(r, bev);
	if (s == NULL) {
		bufferevent_free(bev);
		return;
	}
	r->accept_cb(r->t, id, addr, s);
}

static void
in_event(struct bufferevent *bev, short what, void *arg)
{
	if (getenv("RELAY_DEBUG") != NULL)
		fprintf(stderr, "relay: inbound event 0x%x, ssl err %lu\n",
		    what, bufferevent_get_openssl_error(bev));
	/* A TLS bufferevent reports the end of its handshake as
	 * CONNECTED, on the accepting side too: not an error. */
	if (what == BEV_EVENT_CONNECTED)
		return;
	bufferevent_free(bev);
	free(arg);
}

static void
on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
    int len, void *arg)
{
	struct inbound *in = malloc(sizeof(*in));
	int one = 1;

	(void)l; (void)sa; (void)len;
	/* Raft's messages are small and latency-bound: no Nagle. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	in->r = arg;
	if (in->r->srv != NULL)
		in->bev = bufferevent_openssl_socket_new(in->r->base, fd,
		    SSL_new(in->r->srv), BUFFEREVENT_SSL_ACCEPTING,
		    BEV_OPT_CLOSE_ON_FREE);
	else
		in->bev = bufferevent_socket_new(in->r->base, fd,
		    BEV_OPT_CLOSE_ON_FREE);
	bufferevent_setcb(in->bev, in_read, NULL, in_event, in);
	bufferevent_enable(in->bev, EV_READ | EV_WRITE);
}

static int
parse(const char *address, struct sockaddr_in *sa)
{
	char host[64];
	const char *c = strrchr(address, ':');

	if (c == NULL || (size_t)(c - address) >= sizeof(host))
		return -1;
	memcpy(host, address, (size_t)(c - address));
	host[c - address] = '\0';
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(c + 1));
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

/* ---- the transport's methods ---- */
static int
t_init(struct raft_uv_transport *t, raft_id id, const char *address)
{
	struct relay *r = t->impl;

	r->id = id;
	snprintf(r->address, sizeof(r->address), "%s", address);
	return 0;
}

static int
t_listen(struct raft_uv_transport *t, raft_uv_accept_cb cb)
{
	struct relay *r = t->impl;
	struct sockaddr_in sa;

	r->accept_cb = cb;
	if (parse(r->address, &sa) != 0)
		return RAFT_INVALID;
	r->lst = evconnlistener_new_bind(r->base, on_accept, r,
	    LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_FREE, 16,
	    (struct sockaddr *)&sa, sizeof(sa));
	return r->lst != NULL ? 0 : RAFT_IOERR;
}

struct outbound {
	struct relay *r;
	struct raft_uv_connect *req;
	raft_uv_connect_cb cb;
};

static void
out_event(struct bufferevent *bev, short what, void *arg)
{
	struct outbound *o = arg;

	if (what & BEV_EVENT_CONNECTED) {
		uint64_t id = o->r->id, len = strlen(o->r->address);
		int one = 1;
		setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY,
		    &one, sizeof(one));
		struct evbuffer *ob = bufferevent_get_output(bev);
		evbuffer_add(ob, &id, 8);
		evbuffer_add(ob, &len, 8);
		evbuffer_add(ob, o->r->address, len);
		uv_stream_t *s = splice(o->r, bev);
		o->cb(o->req, s, s != NULL ? 0 : RAFT_NOCONNECTION);
		free(o);
		return;
	}
	if (getenv("RELAY_DEBUG") != NULL)
		fprintf(stderr, "relay: connect event 0x%x, ssl err %lu\n",
		    what, bufferevent_get_openssl_error(bev));
	bufferevent_free(bev);
	o->cb(o->req, NULL, RAFT_NOCONNECTION);
	free(o);
}

static int
t_connect(struct raft_uv_transport *t, struct raft_uv_connect *req,
    raft_id id, const char *address, raft_uv_connect_cb cb)
{
	struct relay *r = t->impl;
	struct sockaddr_in sa;
	struct outbound *o;
	struct bufferevent *bev;

	(void)id;
	if (parse(address, &sa) != 0)
		return RAFT_NOCONNECTION;
	o = malloc(sizeof(*o));
	o->r = r;
	o->req = req;
	o->cb = cb;
	if (r->cli != NULL)
		bev = bufferevent_openssl_socket_new(r->base, -1,
		    SSL_new(r->cli), BUFFEREVENT_SSL_CONNECTING,
		    BEV_OPT_CLOSE_ON_FREE);
	else
		bev = bufferevent_socket_new(r->base, -1,
		    BEV_OPT_CLOSE_ON_FREE);
	bufferevent_setcb(bev, NULL, NULL, out_event, o);
	if (bufferevent_socket_connect(bev, (struct sockaddr *)&sa,
	    sizeof(sa)) != 0) {
		/* Refused at once: report it later, as an async failure. */
		bufferevent_free(bev);
		free(o);
		return RAFT_NOCONNECTION;
	}
	return 0;
}

static void
t_close(struct raft_uv_transport *t, raft_uv_transport_close_cb cb)
{
	struct relay *r = t->impl;

	if (r->lst != NULL)
		evconnlistener_free(r->lst);
	r->lst = NULL;
	cb(t);
}

int
relay_transport_init(struct raft_uv_transport *t, uv_loop_t *loop,
    struct event_base *base)
{
	struct relay *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return RAFT_NOMEM;
	memset(t, 0, sizeof(*t));
	r->base = base;
	r->loop = loop;
	if (getenv("RELAY_TLS") != NULL) {
		r->srv = tls_ctx(getenv("RELAY_TLS"), 1);
		r->cli = tls_ctx(getenv("RELAY_TLS"), 0);
	}
	r->t = t;
	t->impl = r;
	t->init = t_init;
	t->listen = t_listen;
	t->connect = t_connect;
	t->close = t_close;
	return 0;
}

unsigned long
relay_connections(struct raft_uv_transport *t)
{
	return ((struct relay *)t->impl)->relayed;
}

const char *
relay_mode(struct raft_uv_transport *t)
{
	return ((struct relay *)t->impl)->srv != NULL ? "TLS 1.3, mutual" :
	    "plain TCP";
}
