/* The listener and its connections. Callbacks stay short: read → decode
 * frames → hand each envelope to the dispatcher; write → resume reading or
 * finish a close; event → identify the peer or drop the connection. */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <openssl/err.h>

#include "lib/frame.h"
#include "lib/log.h"
#include "lib/tls.h"
#include "lib/wire.h"
#include "server.h"

/* Replies may be larger than requests (a long job listing); the CLI
 * accepts up to this much. */
#define SERVER_REPLY_MAX (64u * 1024 * 1024)
/* Stop reading from a peer that does not read its replies. */
#define SERVER_OUT_HIGH (16u * 1024 * 1024)
#define SERVER_OUT_LOW (1u * 1024 * 1024)
/* A peer must finish TLS and Hello within this time. */
#define SERVER_HELLO_TIMEOUT_S 15

struct conn {
	uint64_t id;
	struct server *srv;
	struct bufferevent *bev;
	struct peer peer;
	bool identified;
	bool hello;
	bool closing;
	bool throttled;
	TAILQ_ENTRY(conn) entry;
	LIST_ENTRY(conn) by_id;		/* in srv->ids[id & mask] */
};

struct server {
	struct event_base *base;
	SSL_CTX *ctx;
	struct evconnlistener *listener;
	struct event *reaper;
	TAILQ_HEAD(, conn) conns;
	/* Connections by id: every reply and command looks one up, and at
	 * 10,000 agents a list walk per heartbeat reply was a quarter of
	 * the controller's time. Ids are sequential, so id & mask spreads
	 * them evenly over a table sized for max_conns. */
	LIST_HEAD(conn_ids, conn) *ids;
	uint64_t ids_mask;
	unsigned nconns;
	uint64_t next_id;
	uint16_t port;
	size_t max_frame;
	unsigned max_conns;
	server_msg_cb cb;
	void *arg;
	void (*close_cb)(uint64_t, void *);
	void *close_arg;
};

void
server_set_close_cb(struct server *srv, void (*cb)(uint64_t, void *),
    void *arg)
{
	srv->close_cb = cb;
	srv->close_arg = arg;
}

static void conn_read_cb(struct bufferevent *bev, void *arg);

static void
conn_free(struct conn *c)
{
	struct server *srv = c->srv;
	SSL *ssl;

	TAILQ_REMOVE(&srv->conns, c, entry);
	LIST_REMOVE(c, by_id);
	srv->nconns--;
	if (srv->close_cb != NULL)
		srv->close_cb(c->id, srv->close_arg);
	/* libevent 2.1 has no TLS shutdown call: say goodbye ourselves. */
	ssl = bufferevent_openssl_get_ssl(c->bev);
	if (ssl != NULL && c->identified)
		SSL_shutdown(ssl);
	bufferevent_free(c->bev);
	free(c);
}

static void
server_reap_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server *srv = arg;
	struct conn *c, *next;

	for (c = TAILQ_FIRST(&srv->conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->closing &&
		    evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
			conn_free(c);
	}
}

uint64_t
conn_id(const struct conn *c)
{
	return c->id;
}

const struct peer *
conn_peer(const struct conn *c)
{
	return &c->peer;
}

bool
conn_hello_done(const struct conn *c)
{
	return c->hello;
}

void
conn_set_hello_done(struct conn *c)
{
	c->hello = true;
	bufferevent_set_timeouts(c->bev, NULL, NULL);
}

struct conn *
server_conn(struct server *srv, uint64_t id)
{
	struct conn *c;

	LIST_FOREACH(c, &srv->ids[id & srv->ids_mask], by_id) {
		if (c->id == id)
			return c->closing ? NULL : c;
	}
	return NULL;
}

int
conn_send_frame(struct conn *c, const uint8_t *frame, size_t len)
{
	if (c->closing)
		return 0;
	if (bufferevent_write(c->bev, frame, len) == -1) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

int
conn_send(struct conn *c, const Cohort__V1__Envelope *env)
{
	uint8_t *buf;
	size_t len;
	int rc;

	if ((buf = frame_pack(env, SERVER_REPLY_MAX, &len)) == NULL)
		return -1;
	rc = conn_send_frame(c, buf, len);
	free(buf);
	return rc;
}

void
conn_send_error(struct conn *c, uint64_t req_id, enum err_code code,
    const char *text)
{
	Cohort__V1__Envelope env;
	Cohort__V1__Error e;

	wire_error(&env, &e, req_id, code, text);
	if (conn_send(c, &env) == -1)
		log_warn("conn %llu (%s): cannot queue error reply",
		    (unsigned long long)c->id, c->peer.name);
}

void
conn_close(struct conn *c)
{
	if (c->closing)
		return;
	c->closing = true;
	bufferevent_disable(c->bev, EV_READ);
	/* Freed by the reaper once the output has drained (the write
	 * callback activates it), never inside the caller's stack. */
	event_active(c->srv->reaper, EV_TIMEOUT, 0);
}

static void
conn_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	Cohort__V1__Envelope *env;
	char text[128];
	uint8_t hdr[FRAME_HDR];

	while (!c->closing && !c->throttled) {
		switch (frame_read(in, c->srv->max_frame, &env)) {
		case FRAME_NEED:
			return;
		case FRAME_OK:
			c->srv->cb(c, env, c->srv->arg);
			frame_free(env);
			break;
		case FRAME_TOO_LARGE:
			evbuffer_copyout(in, hdr, FRAME_HDR);
			snprintf(text, sizeof(text),
			    "frame of %u bytes exceeds the limit of %zu",
			    frame_header_len(hdr), c->srv->max_frame);
			log_warnx("conn %llu (%s): %s; closing",
			    (unsigned long long)c->id, c->peer.name, text);
			conn_send_error(c, 0, ERR_TOO_LARGE, text);
			conn_close(c);
			return;
		case FRAME_BAD:
			log_warnx("conn %llu (%s): undecodable frame; closing",
			    (unsigned long long)c->id, c->peer.name);
			conn_send_error(c, 0, ERR_PROTOCOL,
			    "frame is not a valid cohort.v1.Envelope");
			conn_close(c);
			return;
		}
		if (evbuffer_get_length(bufferevent_get_output(bev)) >
		    SERVER_OUT_HIGH) {
			/* The peer is not reading its replies: stop reading
			 * its requests until it has caught up. */
			c->throttled = true;
			bufferevent_disable(bev, EV_READ);
			bufferevent_setwatermark(bev, EV_WRITE,
			    SERVER_OUT_LOW, 0);
		}
	}
}

static void
conn_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	if (c->closing) {
		event_active(c->srv->reaper, EV_TIMEOUT, 0);
		return;
	}
	if (c->throttled) {
		c->throttled = false;
		bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
		bufferevent_enable(bev, EV_READ);
		/* Requests already buffered raise no new read event. */
		conn_read_cb(bev, c);
	}
}

static void
conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	struct cerr err;
	char ebuf[256];

	if (what & BEV_EVENT_CONNECTED) {
		if (tls_peer_identity(bufferevent_openssl_get_ssl(bev),
		    &c->peer, &err) == -1) {
			log_warnx("conn %llu: refused: %s",
			    (unsigned long long)c->id, err.text);
			conn_send_error(c, 0, ERR_DENIED, err.text);
			conn_close(c);
			return;
		}
		c->identified = true;
		log_debug("conn %llu: %s (%s) connected",
		    (unsigned long long)c->id, c->peer.name,
		    role_name(c->peer.role));
		return;
	}
	if (what & BEV_EVENT_ERROR) {
		if (!c->identified)
			log_info("conn %llu: TLS handshake failed: %s",
			    (unsigned long long)c->id,
			    tls_bufferevent_error(bev, what, ebuf, sizeof(ebuf)));
		else
			log_debug("conn %llu (%s): error",
			    (unsigned long long)c->id, c->peer.name);
	} else if (what & BEV_EVENT_TIMEOUT) {
		log_info("conn %llu (%s): no hello within %d s; closing",
		    (unsigned long long)c->id, c->peer.name,
		    SERVER_HELLO_TIMEOUT_S);
	}
	/* EOF, error or timeout: nothing more can be sent either. */
	ERR_clear_error();
	conn_free(c);
}

static void
server_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct server *srv = arg;
	struct conn *c;
	SSL *ssl;
	struct timeval tv = { SERVER_HELLO_TIMEOUT_S, 0 };

	if (srv->nconns >= srv->max_conns) {
		log_warnx("connection limit (%u) reached; refusing a peer",
		    srv->max_conns);
		evutil_closesocket(fd);
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (ssl = SSL_new(srv->ctx)) == NULL) {
		log_warnx("out of memory accepting a connection");
		free(c);
		evutil_closesocket(fd);
		return;
	}
	/* On failure libevent has already freed ssl (and with it the
	 * socket): free nothing more. */
	c->bev = bufferevent_openssl_socket_new(srv->base, fd, ssl,
	    BUFFEREVENT_SSL_ACCEPTING,
	    BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
	if (c->bev == NULL) {
		log_warnx("cannot set up TLS for a connection");
		free(c);
		return;
	}
	c->srv = srv;
	c->id = ++srv->next_id;
	snprintf(c->peer.name, sizeof(c->peer.name), "?");
	TAILQ_INSERT_TAIL(&srv->conns, c, entry);
	LIST_INSERT_HEAD(&srv->ids[c->id & srv->ids_mask], c, by_id);
	srv->nconns++;
	bufferevent_setcb(c->bev, conn_read_cb, conn_write_cb, conn_event_cb,
	    c);
	bufferevent_set_timeouts(c->bev, &tv, &tv);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

static int
server_bind(struct server *srv, const struct server_opts *opts,
    struct cerr *err)
{
	struct addrinfo hints, *res;
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	char portstr[8];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	snprintf(portstr, sizeof(portstr), "%u", opts->port);
	if ((rc = getaddrinfo(opts->host, portstr, &hints, &res)) != 0)
		return cerr_set(err, ERR_INVALID, "listen address %s: %s",
		    opts->host, gai_strerror(rc));
	srv->listener = evconnlistener_new_bind(srv->base, server_accept_cb,
	    srv, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE |
	    LEV_OPT_CLOSE_ON_EXEC, 128, res->ai_addr, (int)res->ai_addrlen);
	freeaddrinfo(res);
	if (srv->listener == NULL)
		return cerr_set(err, ERR_INVALID, "cannot listen on %s:%u: %s",
		    opts->host, opts->port, strerror(errno));
	if (getsockname(evconnlistener_get_fd(srv->listener),
	    (struct sockaddr *)&ss, &sslen) == -1)
		return cerr_set(err, ERR_INTERNAL, "getsockname: %s",
		    strerror(errno));
	srv->port = ntohs(ss.ss_family == AF_INET6 ?
	    ((struct sockaddr_in6 *)&ss)->sin6_port :
	    ((struct sockaddr_in *)&ss)->sin_port);
	return 0;
}

struct server *
server_create(struct event_base *base, SSL_CTX *ctx,
    const struct server_opts *opts, server_msg_cb cb, void *arg,
    struct cerr *err)
{
	struct server *srv;
	uint64_t n;

	if ((srv = calloc(1, sizeof(*srv))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	srv->base = base;
	srv->ctx = ctx;
	srv->max_frame = opts->max_frame;
	srv->max_conns = opts->max_conns;
	srv->cb = cb;
	srv->arg = arg;
	TAILQ_INIT(&srv->conns);
	for (n = 64; n < srv->max_conns && n < (1u << 20); n <<= 1)
		;
	srv->ids_mask = n - 1;
	srv->ids = calloc(n, sizeof(*srv->ids));	/* all-zero: empty lists */
	srv->reaper = event_new(base, -1, 0, server_reap_cb, srv);
	if (srv->reaper == NULL || srv->ids == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto fail;
	}
	if (server_bind(srv, opts, err) == -1)
		goto fail;
	return srv;
fail:
	server_destroy(srv);
	return NULL;
}

void
server_destroy(struct server *srv)
{
	struct conn *c;

	if (srv == NULL)
		return;
	if (srv->listener != NULL)
		evconnlistener_free(srv->listener);
	while ((c = TAILQ_FIRST(&srv->conns)) != NULL)
		conn_free(c);
	if (srv->reaper != NULL)
		event_free(srv->reaper);
	free(srv->ids);
	free(srv);
}

uint16_t
server_port(const struct server *srv)
{
	return srv->port;
}

size_t
server_max_frame(const struct server *srv)
{
	return srv->max_frame;
}

unsigned
server_conn_count(const struct server *srv)
{
	return srv->nconns;
}

unsigned
server_drop_revoked(struct server *srv)
{
	struct conn *c;
	struct cerr err;
	char text[sizeof(err.text) + 128];
	SSL *ssl;
	unsigned n = 0;

	TAILQ_FOREACH(c, &srv->conns, entry) {
		if (!c->identified || c->closing ||
		    (ssl = bufferevent_openssl_get_ssl(c->bev)) == NULL ||
		    tls_cert_recheck(srv->ctx, SSL_get0_peer_certificate(ssl),
		    SSL_get_peer_cert_chain(ssl), &err) == 0)
			continue;
		snprintf(text, sizeof(text), "certificate of %s %s: %s",
		    role_name(c->peer.role), c->peer.name, err.text);
		log_warnx("conn %llu: %s; closing", (unsigned long long)c->id,
		    text);
		conn_send_error(c, 0, ERR_DENIED, text);
		conn_close(c);
		n++;
	}
	return n;
}
