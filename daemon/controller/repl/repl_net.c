/* libraft's network between replicas: a raft_uv_transport whose streams
 * are TLS 1.3 connections with the controllers' certificates, driven
 * entirely by libuv (docs/REPLICATION.md). Raft is handed one end of a
 * socketpair as its stream; this file relays the other end through
 * SSL_read/SSL_write on the TCP socket, with a uv_poll on each descriptor.
 *
 * Everything raft needs runs inside uv_run, so the commit wait of
 * repl.c (uv_run while the libevent loop is blocked, as an fsync blocks it
 * in single mode) never waits on libevent.
 *
 * After the handshake, the connecting side sends its server id (8 bytes,
 * little endian), the length of its address (8 bytes, little endian) and
 * the address. Both sides accept only a certificate with role controller,
 * checked here whatever the TLS contexts check.
 *
 * The port serves the replicas only: once the members are known
 * (repl_net_set_members), a connection from any other address is closed
 * as soon as it is accepted, before TLS, and counts against nothing, so
 * a flood from elsewhere drains at the speed of accept. What is left
 * is admitted as the RPC port admits (admit.h): a handshake budget, a
 * cap per source, the oldest silent handshake evicted for a newcomer, a
 * setup deadline. Outbound streams leave from our own Raft address, the
 * one the others know us by. */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <raft.h>
#include <raft/uv.h>
#include <uv.h>

#include "lib/conf.h"
#include "lib/ratelim.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/admit.h"
#include "lib/tls.h"
#include "daemon/controller/repl/repl_int.h"

#define NET_BUF 16384		/* each way: one TLS record */
#define NET_SETUP_MS 5000	/* connect + handshake + preamble */
/* Inbound streams not yet handed to raft: replicas open a couple each;
 * anything beyond this is somebody else's flood, which evicts its own
 * oldest silent handshakes (admit.h). */
#define NET_SETUP_MAX 64
#define NET_SETUP_PER_SOURCE 16
/* Out of descriptors: listen again after this long, not at once (the
 * poll is level-triggered: a pending connection would spin it). */
#define NET_ACCEPT_PAUSE_MS 200
/* Connections from strangers closed in one loop round at most: the whole
 * backlog, without letting a flood hold the loop. */
#define NET_REFUSE_PER_ROUND ADMIT_LISTEN_BACKLOG

enum rconn_state {
	RC_CONNECTING,		/* outbound: TCP connect in progress */
	RC_HANDSHAKE,
	RC_PREAMBLE,		/* inbound: reading id and address */
	RC_RELAY,
	RC_CLOSED,
};

struct rconn {
	struct repl_net *net;
	enum rconn_state state;
	bool outbound;
	int fd;			/* TCP */
	int pfd;		/* our end of the socketpair; -1 before relay */
	SSL *ssl;
	uv_poll_t poll;		/* on fd */
	uv_poll_t ppoll;	/* on pfd */
	uv_timer_t timer;	/* the setup deadline */
	int handles;		/* open uv handles, for the close */
	struct admit_hs hs;	/* inbound: in net->admit while hs.owner */
	struct raft_uv_connect *req;	/* outbound, until reported */
	raft_uv_connect_cb cb;
	char host[CONF_HOST_MAX + 1];
	/* Inbound preamble, then TCP → raft bytes. */
	unsigned char a[NET_BUF];
	size_t alen, aoff;
	/* raft → TCP bytes; outbound, first the preamble. */
	unsigned char b[NET_BUF];
	size_t blen, boff;
	LIST_ENTRY(rconn) entry;
};

struct repl_net {
	uv_loop_t *loop;
	SSL_CTX *srv_ctx, *cli_ctx;
	struct raft_uv_transport *t;
	raft_id id;
	char address[REPL_ADDR_MAX];	/* ours, whole */
	raft_uv_accept_cb accept_cb;
	int lfd;
	uv_poll_t lpoll;
	uv_timer_t lpause;	/* NET_ACCEPT_PAUSE_MS, ADMIT_ACCEPT_BATCH_MS */
	bool listening;
	struct admit admit;		/* inbound, before RC_RELAY */
	/* The members' addresses (admit_addr keys); none: anyone, as
	 * before the first configuration is known. */
	uint8_t (*members)[16];
	size_t nmembers;
	struct sockaddr_storage self;	/* our Raft address, port 0 */
	socklen_t selflen;		/* 0: not known */
	struct ratelim lograte, refuselog;
	struct repl_net_stats stats;
	LIST_HEAD(, rconn) conns;
};

static void rconn_pump(struct rconn *rc);

/* At most 10 lines a minute about refused or failed streams: anyone who
 * reaches the port could make them. */
static bool
net_log_ok(struct repl_net *net)
{
	return ratelim_allow(&net->lograte, (int64_t)(clock_mono_us() / 1000),
	    10, 60000, NULL);
}

/* "RAFTHOST:PORT/RPCHOST:PORT" → the parts; either may be NULL. */
int
repl_addr_split(const char *whole, char *raft, size_t raftlen, char *rpc,
    size_t rpclen)
{
	const char *slash = strchr(whole, '/');
	size_t n;

	if (slash == NULL)
		return -1;
	n = (size_t)(slash - whole);
	if (raft != NULL) {
		if (n >= raftlen)
			return -1;
		memcpy(raft, whole, n);
		raft[n] = '\0';
	}
	if (rpc != NULL && snprintf(rpc, rpclen, "%s", slash + 1) >=
	    (int)rpclen)
		return -1;
	return 0;
}

static int
net_resolve(const char *hostport, struct sockaddr_storage *ss,
    socklen_t *len, char *host, size_t hostlen)
{
	struct addrinfo hints, *res;
	char port[8];
	uint16_t p;
	struct cerr err;

	if (conf_parse_hostport(hostport, host, hostlen, &p, false, &err) ==
	    -1)
		return -1;
	snprintf(port, sizeof(port), "%u", p);
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if (getaddrinfo(host, port, &hints, &res) != 0)
		return -1;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static void
rconn_handle_closed(uv_handle_t *h)
{
	struct rconn *rc = h->data;

	if (--rc->handles > 0)
		return;
	if (rc->ssl != NULL)
		SSL_free(rc->ssl);
	if (rc->fd >= 0)
		close(rc->fd);
	if (rc->pfd >= 0)
		close(rc->pfd);
	free(rc);
}

/* Out of the handshake table, if in it. */
static void
rconn_unadmit(struct rconn *rc)
{
	if (rc->hs.owner != NULL)
		admit_del(&rc->net->admit, &rc->hs);
	rc->hs.owner = NULL;
}

static void
rconn_close(struct rconn *rc, const char *why)
{
	if (rc->state == RC_CLOSED)
		return;
	if (why != NULL)
		log_debug("raft stream %s %s: %s", rc->outbound ? "to" :
		    "from", rc->host, why);
	if (rc->outbound && rc->req != NULL) {
		struct raft_uv_connect *req = rc->req;

		rc->req = NULL;
		rc->cb(req, NULL, RAFT_NOCONNECTION);
	}
	rconn_unadmit(rc);
	rc->state = RC_CLOSED;
	LIST_REMOVE(rc, entry);
	ERR_clear_error();
	uv_close((uv_handle_t *)&rc->poll, rconn_handle_closed);
	uv_close((uv_handle_t *)&rc->timer, rconn_handle_closed);
	if (rc->pfd >= 0)
		uv_close((uv_handle_t *)&rc->ppoll, rconn_handle_closed);
}

static void
rconn_poll_cb(uv_poll_t *p, int status, int events)
{
	struct rconn *rc = p->data;

	if (status < 0) {
		rconn_close(rc, uv_strerror(status));
		return;
	}
	rconn_pump(rc);
}

static void
rconn_timer_cb(uv_timer_t *t)
{
	struct rconn *rc = t->data;

	if (rc->state != RC_RELAY)
		rconn_close(rc, "no handshake within 5 s");
}

static struct rconn *
rconn_new(struct repl_net *net, int fd, bool outbound)
{
	struct rconn *rc;

	if ((rc = calloc(1, sizeof(*rc))) == NULL)
		return NULL;
	rc->net = net;
	rc->fd = fd;
	rc->pfd = -1;
	rc->outbound = outbound;
	if (uv_poll_init(net->loop, &rc->poll, fd) != 0) {
		free(rc);
		return NULL;
	}
	rc->poll.data = rc;
	uv_timer_init(net->loop, &rc->timer);
	rc->timer.data = rc;
	rc->handles = 2;
	uv_timer_start(&rc->timer, rconn_timer_cb, NET_SETUP_MS, 0);
	LIST_INSERT_HEAD(&net->conns, rc, entry);
	return rc;
}

static void
net_pipe_closed(uv_handle_t *h)
{
	raft_free(h);
}

/* The handshake is done: raft gets its end of a socketpair. */
static int
rconn_splice(struct rconn *rc, uv_stream_t **out)
{
	uv_pipe_t *pipe;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0, sv) == -1)
		return -1;
	if ((pipe = raft_malloc(sizeof(*pipe))) == NULL) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (uv_pipe_init(rc->net->loop, pipe, 0) != 0) {
		close(sv[0]);
		close(sv[1]);
		raft_free(pipe);
		return -1;
	}
	if (uv_pipe_open(pipe, sv[0]) != 0 ||
	    uv_poll_init(rc->net->loop, &rc->ppoll, sv[1]) != 0) {
		close(sv[0]);
		close(sv[1]);
		/* Initialised: libuv frees nothing, but must forget it. */
		uv_close((uv_handle_t *)pipe, net_pipe_closed);
		return -1;
	}
	rc->pfd = sv[1];
	rc->ppoll.data = rc;
	rc->handles++;
	rconn_unadmit(rc);
	rc->state = RC_RELAY;
	uv_timer_stop(&rc->timer);
	*out = (uv_stream_t *)pipe;
	return 0;
}

/* Either way, the peer must be another replica: a verified certificate
 * with role controller. Refusals are logged (rate-limited: anyone with a
 * certificate of the CA could make them). */
static bool
rconn_peer_is_controller(struct rconn *rc)
{
	X509 *cert = SSL_get0_peer_certificate(rc->ssl);
	struct peer peer;
	struct cerr err;
	const char *dir = rc->outbound ? "to" : "from";

	if (SSL_get_verify_result(rc->ssl) != X509_V_OK || cert == NULL) {
		if (net_log_ok(rc->net))
			log_warnx("raft stream %s %s refused: no verified "
			    "certificate", dir, rc->host);
		return false;
	}
	if (tls_cert_identity(cert, &peer, &err) == -1) {
		if (net_log_ok(rc->net))
			log_warnx("raft stream %s %s refused: %s", dir,
			    rc->host, err.text);
		return false;
	}
	if (peer.role != ROLE_CONTROLLER) {
		if (net_log_ok(rc->net))
			log_warnx("raft stream %s %s refused: certificate of "
			    "%s has role '%s', not 'controller'", dir,
			    rc->host, peer.name, role_name(peer.role));
		return false;
	}
	return true;
}

/* Inbound: the preamble is in a[0..alen). Hand the stream to raft once
 * it is all there; what came after it stays in a for raft. */
static int
rconn_preamble(struct rconn *rc)
{
	uint64_t id, len;
	char addr[REPL_ADDR_MAX];
	uv_stream_t *s;

	if (rc->alen < 16)
		return 0;
	memcpy(&id, rc->a, 8);
	memcpy(&len, rc->a + 8, 8);
	id = le64toh(id);
	len = le64toh(len);
	if (id == 0 || len == 0 || len >= sizeof(addr)) {
		rconn_close(rc, "bad preamble");
		return -1;
	}
	if (rc->alen < 16 + len)
		return 0;
	memcpy(addr, rc->a + 16, len);
	addr[len] = '\0';
	memmove(rc->a, rc->a + 16 + len, rc->alen - 16 - len);
	rc->alen -= 16 + len;
	rc->aoff = 0;
	if (rconn_splice(rc, &s) == -1) {
		rconn_close(rc, "out of descriptors or memory");
		return -1;
	}
	rc->net->stats.accepted++;
	rc->net->accept_cb(rc->net->t, (raft_id)id, addr, s);
	return 0;
}

/* SSL_get_error → what to poll for; false: the connection is over. */
static bool
rconn_ssl_want(struct rconn *rc, int rv, bool *rd, bool *wr)
{
	switch (SSL_get_error(rc->ssl, rv)) {
	case SSL_ERROR_WANT_READ:
		*rd = true;
		return true;
	case SSL_ERROR_WANT_WRITE:
		*wr = true;
		return true;
	default:
		return false;
	}
}

static void
rconn_set_poll(uv_poll_t *p, bool rd, bool wr)
{
	int ev = (rd ? UV_READABLE : 0) | (wr ? UV_WRITABLE : 0);

	if (ev == 0)
		uv_poll_stop(p);
	else
		uv_poll_start(p, ev, rconn_poll_cb);
}

static void
rconn_setup(struct rconn *rc)
{
	bool rd = false, wr = false;
	uv_stream_t *s;
	int rv, e;
	socklen_t el = sizeof(e);

	if (rc->state == RC_CONNECTING) {
		if (getsockopt(rc->fd, SOL_SOCKET, SO_ERROR, &e, &el) == -1 ||
		    e != 0) {
			rconn_close(rc, strerror(e));
			return;
		}
		rc->state = RC_HANDSHAKE;
	}
	if (rc->state == RC_HANDSHAKE) {
		/* OpenSSL's error queue is the thread's, shared with
		 * libevent's connections: a stale entry would turn WANT_READ
		 * into SSL_ERROR_SSL. */
		ERR_clear_error();
		if ((rv = SSL_do_handshake(rc->ssl)) != 1) {
			if (!rconn_ssl_want(rc, rv, &rd, &wr)) {
				char buf[256];
				const char *why = rc->outbound ?
				    tls_server_verify_error(rc->ssl, rc->host,
				    buf, sizeof(buf)) : NULL;

				if (net_log_ok(rc->net))
					log_warnx("raft stream %s %s: TLS "
					    "handshake failed: %s",
					    rc->outbound ? "to" : "from",
					    rc->host, why != NULL ? why :
					    tls_error_string(buf, sizeof(buf)));
				rconn_close(rc, NULL);
				return;
			}
			rconn_set_poll(&rc->poll, rd, wr);
			return;
		}
		if (!rconn_peer_is_controller(rc)) {
			rconn_close(rc, NULL);
			return;
		}
		if (rc->outbound) {
			if (rconn_splice(rc, &s) == -1) {
				rconn_close(rc, "out of descriptors or memory");
				return;
			}
			rc->net->stats.connected++;
			struct raft_uv_connect *req = rc->req;

			rc->req = NULL;
			rc->cb(req, s, 0);
			return;		/* the relay sends the preamble */
		}
		rc->state = RC_PREAMBLE;
	}
	/* RC_PREAMBLE */
	while (rc->state == RC_PREAMBLE) {
		ERR_clear_error();
		rv = SSL_read(rc->ssl, rc->a + rc->alen, sizeof(rc->a) -
		    rc->alen);
		if (rv <= 0) {
			if (!rconn_ssl_want(rc, rv, &rd, &wr)) {
				rconn_close(rc, "closed in the preamble");
				return;
			}
			rconn_set_poll(&rc->poll, rd, wr);
			return;
		}
		rc->alen += (size_t)rv;
		if (rconn_preamble(rc) == -1)
			return;
	}
}

/* Move bytes both ways until neither can move; then poll for what would
 * let them move again. */
static void
rconn_relay(struct rconn *rc)
{
	bool trd, twr, prd, pwr, progress;
	ssize_t n;
	int rv;

	do {
		progress = false;
		trd = twr = prd = pwr = false;
		/* TCP → raft */
		if (rc->alen == 0) {
			ERR_clear_error();
			rv = SSL_read(rc->ssl, rc->a, sizeof(rc->a));
			if (rv > 0) {
				rc->alen = (size_t)rv;
				rc->aoff = 0;
				progress = true;
			} else if (!rconn_ssl_want(rc, rv, &trd, &twr)) {
				rconn_close(rc, "closed by the peer");
				return;
			}
		}
		if (rc->alen > 0) {
			n = write(rc->pfd, rc->a + rc->aoff, rc->alen -
			    rc->aoff);
			if (n > 0) {
				rc->aoff += (size_t)n;
				if (rc->aoff == rc->alen)
					rc->alen = 0;
				progress = true;
			} else if (n == -1 && (errno == EAGAIN ||
			    errno == EWOULDBLOCK)) {
				pwr = true;
			} else {
				rconn_close(rc, "closed by raft");
				return;
			}
		}
		/* raft → TCP */
		if (rc->blen == 0) {
			n = read(rc->pfd, rc->b, sizeof(rc->b));
			if (n > 0) {
				rc->blen = (size_t)n;
				rc->boff = 0;
				progress = true;
			} else if (n == 0) {
				rconn_close(rc, "closed by raft");
				return;
			} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
				prd = true;
			} else {
				rconn_close(rc, strerror(errno));
				return;
			}
		}
		if (rc->blen > 0) {
			ERR_clear_error();
			rv = SSL_write(rc->ssl, rc->b + rc->boff, (int)(rc->blen -
			    rc->boff));
			if (rv > 0) {
				rc->boff += (size_t)rv;
				if (rc->boff == rc->blen)
					rc->blen = 0;
				progress = true;
			} else if (!rconn_ssl_want(rc, rv, &trd, &twr)) {
				rconn_close(rc, "write failed");
				return;
			}
		}
	} while (progress);
	rconn_set_poll(&rc->poll, trd, twr);
	rconn_set_poll(&rc->ppoll, prd, pwr);
}

static void
rconn_pump(struct rconn *rc)
{
	if (rc->state == RC_CLOSED)
		return;
	if (rc->state != RC_RELAY)
		rconn_setup(rc);
	if (rc->state == RC_RELAY)
		rconn_relay(rc);
}

static int
rconn_tls(struct rconn *rc, SSL_CTX *ctx)
{
	int one = 1;

	/* Raft's messages are small and latency-bound: no Nagle (seen:
	 * 47-192 commits/s with it, 598-834 without). */
	setsockopt(rc->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if ((rc->ssl = SSL_new(ctx)) == NULL ||
	    SSL_set_fd(rc->ssl, rc->fd) != 1)
		return -1;
	SSL_set_mode(rc->ssl, SSL_MODE_ENABLE_PARTIAL_WRITE |
	    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	if (rc->outbound) {
		if (tls_client_expect_host(rc->ssl, rc->host) == -1)
			return -1;
		SSL_set_connect_state(rc->ssl);
	} else
		SSL_set_accept_state(rc->ssl);
	return 0;
}

static void
net_accept_cb(uv_poll_t *p, int status, int events);

static void
net_resume_cb(uv_timer_t *t)
{
	struct repl_net *net = t->data;

	if (net->listening)
		uv_poll_start(&net->lpoll, UV_READABLE, net_accept_cb);
}

/* Stop accepting for ms (out of descriptors, or a full batch). */
static void
net_accept_pause(struct repl_net *net, uint64_t ms)
{
	uv_poll_stop(&net->lpoll);
	uv_timer_start(&net->lpause, net_resume_cb, ms, 0);
}

/* Make room for a newcomer from ss: evict what admit_over names. */
static void
net_admit_room(struct repl_net *net, const struct sockaddr_storage *ss,
    uint8_t addr[16])
{
	struct admit_hs *v;
	enum admit_cap cap;
	char atext[INET6_ADDRSTRLEN];

	admit_addr((const struct sockaddr *)ss, addr, atext, sizeof(atext));
	while ((v = admit_over(&net->admit, addr, &cap)) != NULL) {
		if (net_log_ok(net))
			log_warnx("raft listener: %s: %s of %u handshakes in "
			    "use; dropping the oldest", atext,
			    cap == ADMIT_CAP_SOURCE ? "its cap" : "the budget",
			    cap == ADMIT_CAP_SOURCE ? net->admit.per_source :
			    net->admit.max);
		rconn_close(v->owner, "evicted for a newcomer");
	}
}

static void
net_accept_one(struct repl_net *net, int fd, struct sockaddr_storage *ss,
    socklen_t sl)
{
	struct rconn *rc;
	uint8_t addr[16];

	net_admit_room(net, ss, addr);
	if ((rc = rconn_new(net, fd, false)) == NULL) {
		close(fd);
		return;
	}
	getnameinfo((struct sockaddr *)ss, sl, rc->host, sizeof(rc->host),
	    NULL, 0, NI_NUMERICHOST);
	rc->state = RC_HANDSHAKE;
	if (rconn_tls(rc, net->srv_ctx) == -1) {
		rconn_close(rc, "out of memory");
		return;
	}
	admit_add(&net->admit, &rc->hs, rc, rc->ssl, fd, addr);
	net->stats.handshakes++;
	rconn_pump(rc);
}

static bool
net_is_member(const struct repl_net *net, const struct sockaddr_storage *ss)
{
	uint8_t key[16];
	char text[INET6_ADDRSTRLEN];
	size_t i;

	if (net->nmembers == 0)
		return true;
	admit_addr((const struct sockaddr *)ss, key, text, sizeof(text));
	for (i = 0; i < net->nmembers; i++)
		if (memcmp(net->members[i], key, 16) == 0)
			return true;
	return false;
}

/* Not a replica: close at once, with a reset (nothing is owed to it, and
 * no TIME_WAIT is left behind). At most one line a minute. */
static void
net_refuse(struct repl_net *net, int fd, const struct sockaddr_storage *ss)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	uint8_t key[16];
	char text[INET6_ADDRSTRLEN];

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
	net->stats.refused++;
	if (ratelim_allow(&net->refuselog, (int64_t)(clock_mono_us() / 1000),
	    1, 60000, NULL)) {
		admit_addr((const struct sockaddr *)ss, key, text,
		    sizeof(text));
		log_warnx("raft listener: refused %s: not a replica's address "
		    "(%lu refused so far)", text, net->stats.refused);
	}
}

/* At most ADMIT_ACCEPTS_PER_ROUND admitted, then a pause (see admit.h);
 * strangers are closed on the way and count only against their own,
 * larger bound. */
static void
net_accept_cb(uv_poll_t *p, int status, int events)
{
	struct repl_net *net = p->data;
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd, n = 0, refused = 0;

	while (n < ADMIT_ACCEPTS_PER_ROUND) {
		sl = sizeof(ss);
		fd = accept4(net->lfd, (struct sockaddr *)&ss, &sl,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				if (net_log_ok(net))
					log_warn("raft listener: accept (paused "
					    "%d ms)", NET_ACCEPT_PAUSE_MS);
				net_accept_pause(net, NET_ACCEPT_PAUSE_MS);
			} else if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR && errno != ECONNABORTED &&
			    net_log_ok(net))
				log_warn("raft listener: accept");
			return;
		}
		if (!net_is_member(net, &ss)) {
			net_refuse(net, fd, &ss);
			/* Still readable: the poll calls again next round. */
			if (++refused == NET_REFUSE_PER_ROUND)
				return;
			continue;
		}
		net_accept_one(net, fd, &ss, sl);
		n++;
	}
	net_accept_pause(net, ADMIT_ACCEPT_BATCH_MS);
}

/* ---- the transport's methods ---- */

static int
net_init(struct raft_uv_transport *t, raft_id id, const char *address)
{
	struct repl_net *net = t->impl;

	net->id = id;
	if (snprintf(net->address, sizeof(net->address), "%s", address) >=
	    (int)sizeof(net->address))
		return RAFT_INVALID;
	return 0;
}

static int
net_listen(struct raft_uv_transport *t, raft_uv_accept_cb cb)
{
	struct repl_net *net = t->impl;
	struct sockaddr_storage ss;
	socklen_t sl;
	char raft[REPL_ADDR_MAX], host[CONF_HOST_MAX + 1];
	int one = 1;

	net->accept_cb = cb;
	if (repl_addr_split(net->address, raft, sizeof(raft), NULL, 0) == -1 ||
	    net_resolve(raft, &ss, &sl, host, sizeof(host)) == -1)
		return RAFT_INVALID;
	net->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (net->lfd == -1)
		return RAFT_IOERR;
	setsockopt(net->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(net->lfd, (struct sockaddr *)&ss, sl) == -1 ||
	    listen(net->lfd, ADMIT_LISTEN_BACKLOG) == -1) {
		log_warn("raft listener on %s", raft);
		close(net->lfd);
		net->lfd = -1;
		return RAFT_IOERR;
	}
	net->self = ss;
	net->selflen = sl;
	if (ss.ss_family == AF_INET)
		((struct sockaddr_in *)&net->self)->sin_port = 0;
	else if (ss.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&net->self)->sin6_port = 0;
	uv_poll_init(net->loop, &net->lpoll, net->lfd);
	net->lpoll.data = net;
	uv_timer_init(net->loop, &net->lpause);
	net->lpause.data = net;
	uv_poll_start(&net->lpoll, UV_READABLE, net_accept_cb);
	net->listening = true;
	return 0;
}

static int
net_connect(struct raft_uv_transport *t, struct raft_uv_connect *req,
    raft_id id, const char *address, raft_uv_connect_cb cb)
{
	struct repl_net *net = t->impl;
	struct sockaddr_storage ss;
	socklen_t sl;
	char raft[REPL_ADDR_MAX], host[CONF_HOST_MAX + 1];
	struct rconn *rc;
	uint64_t le;
	size_t alen = strlen(net->address);
	int fd, one = 1;

	if (repl_addr_split(address, raft, sizeof(raft), NULL, 0) == -1 ||
	    net_resolve(raft, &ss, &sl, host, sizeof(host)) == -1)
		return RAFT_NOCONNECTION;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (fd == -1)
		return RAFT_NOCONNECTION;
	/* From the address the others have us as members by, not whatever
	 * the route picks on a host with several: their listeners admit
	 * members' addresses only. A wildcard binds nothing. The port is
	 * left to connect, which may share one between destinations. */
	if (net->selflen > 0 && net->self.ss_family == ss.ss_family) {
#ifdef IP_BIND_ADDRESS_NO_PORT
		setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one,
		    sizeof(one));
#endif
		if (bind(fd, (struct sockaddr *)&net->self, net->selflen) ==
		    -1)
			log_debug("raft stream to %s: binding to our Raft "
			    "address: %s", host, strerror(errno));
	}
	if (connect(fd, (struct sockaddr *)&ss, sl) == -1 &&
	    errno != EINPROGRESS) {
		close(fd);
		return RAFT_NOCONNECTION;
	}
	if ((rc = rconn_new(net, fd, true)) == NULL) {
		close(fd);
		return RAFT_NOMEM;
	}
	snprintf(rc->host, sizeof(rc->host), "%s", host);
	rc->req = req;
	rc->cb = cb;
	rc->state = RC_CONNECTING;
	/* The preamble goes first, in front of raft's own bytes. */
	le = htole64(net->id);
	memcpy(rc->b, &le, 8);
	le = htole64(alen);
	memcpy(rc->b + 8, &le, 8);
	memcpy(rc->b + 16, net->address, alen);
	rc->blen = 16 + alen;
	if (rconn_tls(rc, net->cli_ctx) == -1) {
		rc->req = NULL;		/* refused synchronously */
		rconn_close(rc, "out of memory");
		return RAFT_NOMEM;
	}
	uv_poll_start(&rc->poll, UV_WRITABLE, rconn_poll_cb);
	return 0;
}

static void
net_close(struct raft_uv_transport *t, raft_uv_transport_close_cb cb)
{
	struct repl_net *net = t->impl;

	while (!LIST_EMPTY(&net->conns))
		rconn_close(LIST_FIRST(&net->conns), NULL);
	if (net->listening) {
		uv_close((uv_handle_t *)&net->lpoll, NULL);
		uv_close((uv_handle_t *)&net->lpause, NULL);
		net->listening = false;
	}
	if (net->lfd >= 0)
		close(net->lfd);
	net->lfd = -1;
	if (cb != NULL)
		cb(t);
}

int
repl_net_init(struct raft_uv_transport *t, uv_loop_t *loop, SSL_CTX *srv,
    SSL_CTX *cli)
{
	struct repl_net *net;

	if ((net = calloc(1, sizeof(*net))) == NULL)
		return -1;
	memset(t, 0, sizeof(*t));
	net->loop = loop;
	net->srv_ctx = srv;
	net->cli_ctx = cli;
	net->t = t;
	net->lfd = -1;
	admit_init(&net->admit, NET_SETUP_MAX, NET_SETUP_PER_SOURCE);
	LIST_INIT(&net->conns);
	t->impl = net;
	t->init = net_init;
	t->listen = net_listen;
	t->connect = net_connect;
	t->close = net_close;
	return 0;
}

void
repl_net_free(struct raft_uv_transport *t)
{
	struct repl_net *net = t->impl;

	if (net != NULL)
		free(net->members);
	free(net);
	t->impl = NULL;
}

/* Every address of the Raft host in "RAFTHOST:PORT/RPC" appended to
 * *keys (grown as needed). 0, or -1 when it does not resolve. */
static int
net_member_keys(const char *whole, uint8_t (**keys)[16], size_t *n,
    size_t *cap)
{
	struct addrinfo hints, *res, *ai;
	char raft[REPL_ADDR_MAX], host[CONF_HOST_MAX + 1];
	char text[INET6_ADDRSTRLEN];
	uint16_t port;
	struct cerr err;
	int rv;

	if (repl_addr_split(whole, raft, sizeof(raft), NULL, 0) == -1 ||
	    conf_parse_hostport(raft, host, sizeof(host), &port, false,
	    &err) == -1) {
		log_warnx("raft listener: member address %s does not parse",
		    whole);
		return -1;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if ((rv = getaddrinfo(host, NULL, &hints, &res)) != 0) {
		log_warnx("raft listener: member host %s: %s", host,
		    gai_strerror(rv));
		return -1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if (*n == *cap) {
			size_t ncap = *cap == 0 ? 8 : *cap * 2;
			uint8_t (*nk)[16] = reallocarray(*keys, ncap,
			    sizeof(**keys));

			if (nk == NULL) {
				freeaddrinfo(res);
				return -1;
			}
			*keys = nk;
			*cap = ncap;
		}
		admit_addr(ai->ai_addr, (*keys)[*n], text, sizeof(text));
		(*n)++;
	}
	freeaddrinfo(res);
	return 0;
}

int
repl_net_set_members(struct raft_uv_transport *t,
    const struct raft_configuration *conf)
{
	struct repl_net *net = t->impl;
	uint8_t (*keys)[16] = NULL;
	size_t n = 0, cap = 0;
	unsigned i;
	int rv = 0;

	for (i = 0; i < conf->n; i++)
		if (net_member_keys(conf->servers[i].address, &keys, &n,
		    &cap) == -1)
			rv = -1;
	/* A member that does not resolve is left out, not everyone let
	 * in; with none at all, the port stays as open as before. */
	if (n == 0 && conf->n > 0 && rv == -1) {
		free(keys);
		return -1;
	}
	free(net->members);
	net->members = keys;
	net->nmembers = n;
	return rv;
}

unsigned
repl_net_drop_revoked(struct raft_uv_transport *t)
{
	struct repl_net *net = t->impl;
	struct rconn *rc, *next;
	struct peer peer;
	struct cerr err, ierr;
	X509 *cert;
	unsigned n = 0;

	for (rc = LIST_FIRST(&net->conns); rc != NULL; rc = next) {
		next = LIST_NEXT(rc, entry);
		/* Before the preamble the handshake verifies with the new
		 * store by itself. */
		if (rc->state != RC_PREAMBLE && rc->state != RC_RELAY)
			continue;
		cert = SSL_get0_peer_certificate(rc->ssl);
		if (tls_cert_recheck(rc->outbound ? net->cli_ctx :
		    net->srv_ctx, cert, SSL_get_peer_cert_chain(rc->ssl),
		    &err) == 0)
			continue;
		log_warnx("raft stream %s %s: certificate of %s: %s; closing",
		    rc->outbound ? "to" : "from", rc->host,
		    cert != NULL && tls_cert_identity(cert, &peer, &ierr) ==
		    0 ? peer.name : "?", err.text);
		rconn_close(rc, NULL);
		n++;
	}
	return n;
}

void
repl_net_stats(struct raft_uv_transport *t, struct repl_net_stats *st)
{
	*st = ((struct repl_net *)t->impl)->stats;
}
