/* TLS straight to the controller (see conn.h): a non-blocking socket
 * driven by poll, so every step honours the timeout, under OpenSSL in
 * blocking style. cohort-mux connects this way and hands the session to
 * its event loop; the benchmarks use it as it is. */
#include "config.h"

#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/x509.h>

#include "client/conn_int.h"
#include "client/conn_tls.h"
#include "lib/clock.h"
#include "lib/tls.h"
#include "lib/tls_words.h"

/* TCP connect to one address of a list, at most: a host that drops our
 * SYNs must leave time for the others. TLS and hello get the rest of the
 * command's deadline (a busy leader is slow there, not at TCP). */
#define TLS_CONNECT_CAP_MS 5000

struct conn_tls {
	SSL_CTX *ctx;
	SSL *ssl;
	int refused;		/* the controller rejected our certificate */
	/* This address failed in a way every replica would repeat (its
	 * certificate, ours): no use trying the others. */
	int fatal;
	char host[CONF_HOST_MAX + 1];	/* the controller's, for messages */
	char why[160];		/* the failure in a few words, for the list */
};

/* The leader this process last reached (cohort-mux, the benchmarks):
 * tried first next time. */
static struct addrlist_addr tls_leader;
static bool tls_has_leader;

/* An alert the controller sent that means it did not accept our
 * certificate. OpenSSL reports a received alert as reason
 * SSL_AD_REASON_OFFSET + alert. */
static int
tls_cert_alert(int alert)
{
	switch (alert) {
	case SSL_AD_BAD_CERTIFICATE:
	case SSL_AD_UNSUPPORTED_CERTIFICATE:
	case SSL_AD_CERTIFICATE_REVOKED:
	case SSL_AD_CERTIFICATE_EXPIRED:
	case SSL_AD_CERTIFICATE_UNKNOWN:
	case SSL_AD_UNKNOWN_CA:
	case SSL_AD_ACCESS_DENIED:
	case SSL_AD_CERTIFICATE_REQUIRED:
		return 1;
	}
	return 0;
}

/* Turn a failed SSL call into a sentence for the user. With TLS 1.3 the
 * controller's verdict on our certificate arrives after the handshake,
 * on the first read (the handshake itself reports CONNECTED), so this
 * is used for every call, not only SSL_connect. */
static int
tls_fail(struct cconn *c, int rc, const char *doing, struct cerr *err)
{
	struct conn_tls *t = c->tls;
	int sslerr = SSL_get_error(t->ssl, rc), saved = errno, reason, alert;
	unsigned long e = ERR_peek_last_error();
	long vr = SSL_get_verify_result(t->ssl);
	char buf[512];

	c->broken = 1;
	t->fatal = 1;
	if (vr == X509_V_ERR_APPLICATION_VERIFICATION) {
		/* Our own check refused it: a server of another role. */
		cerr_set(err, ERR_UNAVAILABLE, "%s", tls_server_verify_error(
		    t->ssl, t->host, buf, sizeof(buf)));
		goto out;
	}
	if (vr != X509_V_OK) {
		cerr_set(err, ERR_UNAVAILABLE, "cannot verify the controller's "
		    "certificate: %s (controller %s)",
		    tls_peer_error(t->ssl, buf, sizeof(buf)), c->where);
		goto out;
	}
	if (e != 0 && ERR_GET_LIB(e) == ERR_LIB_SSL) {
		reason = ERR_GET_REASON(e);
		alert = reason - SSL_AD_REASON_OFFSET;
		if (alert >= 0 && alert < 256 && tls_cert_alert(alert)) {
			t->refused = 1;
			cerr_set(err, ERR_UNAVAILABLE, "controller %s: %s "
			    "(%s)", c->where, tls_words_alert(e) != NULL ?
			    tls_words_alert(e) : "the peer refused our "
			    "certificate", ERR_reason_error_string(e));
			goto out;
		}
	}
	/* The stream broke: another replica may do better. */
	t->fatal = 0;
	if (sslerr == SSL_ERROR_ZERO_RETURN ||
	    (sslerr == SSL_ERROR_SYSCALL && e == 0 && saved == 0)) {
		c->eof = 1;
		cerr_set(err, ERR_UNAVAILABLE, "controller %s closed the "
		    "connection while %s", c->where, doing);
		snprintf(t->why, sizeof(t->why), "closed the connection "
		    "while %s", doing);
	} else if (sslerr == SSL_ERROR_SYSCALL && e == 0) {
		cerr_set(err, ERR_UNAVAILABLE, "controller %s: %s while %s",
		    c->where, strerror(saved), doing);
		snprintf(t->why, sizeof(t->why), "%s while %s",
		    strerror(saved), doing);
	} else
		cerr_set(err, ERR_UNAVAILABLE, "controller %s: TLS error "
		    "while %s: %s", c->where, doing,
		    tls_error_string(buf, sizeof(buf)));
out:
	ERR_clear_error();
	return -1;
}

/* Run one SSL operation (connect, read or write) to completion. Returns
 * its positive result, or -1 with err set. */
static int
tls_io(struct cconn *c, int op, void *buf, int len, const char *doing,
    struct cerr *err)
{
	struct conn_tls *t = c->tls;
	int rc, sslerr;

	for (;;) {
		ERR_clear_error();
		errno = 0;
		if (op == 'c')
			rc = SSL_connect(t->ssl);
		else if (op == 'r')
			rc = SSL_read(t->ssl, buf, len);
		else
			rc = SSL_write(t->ssl, buf, len);
		if (rc > 0)
			return rc;
		sslerr = SSL_get_error(t->ssl, rc);
		if (sslerr != SSL_ERROR_WANT_READ &&
		    sslerr != SSL_ERROR_WANT_WRITE)
			return tls_fail(c, rc, doing, err);
		if (cconn_poll(c, sslerr == SSL_ERROR_WANT_READ ? POLLIN :
		    POLLOUT, err) == -1) {
			/* A timeout mid-frame leaves the stream unusable. */
			c->broken = 1;
			return -1;
		}
	}
}

/* A write can fail because the controller has just rejected our
 * certificate and closed: its alert may still be waiting to be read, and
 * it is the reason the user needs to see. */
static void
tls_write_failed(struct cconn *c, struct cerr *err)
{
	struct conn_tls *t = c->tls;
	struct cerr alert;
	uint8_t byte;

	if (t->refused || t->ssl == NULL)
		return;
	c->broken = 0;
	c->deadline = (int64_t)(clock_mono_us() / 1000) + 1000;
	if (tls_io(c, 'r', &byte, 1, "reading", &alert) == -1 &&
	    t->refused && err != NULL)
		*err = alert;
	c->broken = 1;
}

static void
tls_close(struct cconn *c)
{
	struct conn_tls *t = c->tls;

	if (t == NULL)
		return;
	if (t->ssl != NULL) {
		/* A polite close_notify when the stream is sound; never wait
		 * for the controller's. */
		if (!c->broken && SSL_is_init_finished(t->ssl))
			SSL_shutdown(t->ssl);
		SSL_free(t->ssl);
	}
	SSL_CTX_free(t->ctx);
	free(t);
	c->tls = NULL;
}

static const struct cconn_transport tls_transport = {
	tls_io, tls_write_failed, tls_close,
};

/* TCP connect to one address within the deadline. The fd, or -1 with
 * errno set. */
static int
tls_tcp(struct cconn *c, const struct addrinfo *ai)
{
	struct pollfd pfd;
	socklen_t sl = sizeof(int);
	int fd, soerr = 0, one = 1, n;
	int64_t left;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, ai->ai_protocol);
	if (fd == -1)
		return -1;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == -1) {
		if (errno != EINPROGRESS)
			goto fail;
		pfd.fd = fd;
		pfd.events = POLLOUT;
		do {
			if ((left = c->deadline - (int64_t)(clock_mono_us() / 1000)) <= 0) {
				errno = ETIMEDOUT;
				goto fail;
			}
			n = poll(&pfd, 1, (int)left);
		} while (n == -1 && errno == EINTR);
		if (n == -1)
			goto fail;
		/* The connect cap passed with the socket still connecting
		 * (an address cut off): not connected. */
		if (n == 0) {
			errno = ETIMEDOUT;
			goto fail;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == -1)
			goto fail;
		if (soerr != 0) {
			errno = soerr;
			goto fail;
		}
	}
	/* Small request/reply frames: don't let Nagle hold them back. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
fail:
	soerr = errno;
	close(fd);
	errno = soerr;
	return -1;
}

static int
tls_connect(struct cconn *c, const char *host, uint16_t port,
    struct cerr *err)
{
	struct addrinfo hints, *res, *ai;
	char portstr[8], *why;
	int rc, lasterr = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | AI_ADDRCONFIG;
	snprintf(portstr, sizeof(portstr), "%u", port);
	if ((rc = getaddrinfo(host, portstr, &hints, &res)) != 0) {
		snprintf(((struct conn_tls *)c->tls)->why,
		    sizeof(((struct conn_tls *)c->tls)->why), "cannot "
		    "resolve: %s", rc == EAI_SYSTEM ? strerror(errno) :
		    gai_strerror(rc));
		return cerr_set(err, ERR_UNAVAILABLE, "cannot resolve "
		    "controller host '%s': %s", host, rc == EAI_SYSTEM ?
		    strerror(errno) : gai_strerror(rc));
	}
	for (ai = res; ai != NULL && c->fd == -1; ai = ai->ai_next)
		if ((c->fd = tls_tcp(c, ai)) == -1)
			lasterr = errno;
	freeaddrinfo(res);
	if (c->fd == -1) {
		/* "connection refused", as in a sentence. */
		why = ((struct conn_tls *)c->tls)->why;
		snprintf(why, sizeof(((struct conn_tls *)c->tls)->why), "%s",
		    lasterr == ETIMEDOUT ? "timed out" : strerror(lasterr));
		why[0] = (char)tolower((unsigned char)why[0]);
		return cerr_set(err, ERR_UNAVAILABLE, "cannot connect to "
		    "controller %s: %s", c->where, lasterr == ETIMEDOUT ?
		    "timed out" : strerror(lasterr));
	}
	return 0;
}

/* Load the certificates before connecting: a connection that stays
 * silent while files are read looks like a flood's to the controller,
 * which drops the oldest silent handshakes first. */
static int
tls_prepare(struct cconn *c, const struct cconn_opts *o, struct cerr *err)
{
	struct conn_tls *t;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	c->tls = t;
	c->tr = &tls_transport;
	cerr_clear(err);
	if ((t->ctx = tls_client_ctx(o->ca, o->crl, o->cert, o->key,
	    err)) == NULL) {
		if (err != NULL && err->code == ERR_NONE)
			err->code = ERR_INVALID;
		return -1;
	}
	return 0;
}

static int
tls_handshake(struct cconn *c, const char *host, struct cerr *err)
{
	struct conn_tls *t = c->tls;
	struct in6_addr a;

	snprintf(t->host, sizeof(t->host), "%s", host);
	if ((t->ssl = SSL_new(t->ctx)) == NULL ||
	    SSL_set_fd(t->ssl, c->fd) != 1 ||
	    tls_client_expect_host(t->ssl, host) == -1)
		return cerr_set(err, ERR_INTERNAL, "cannot set up TLS for "
		    "controller %s", c->where);
	/* SNI only for names: RFC 6066 forbids address literals. */
	if (inet_pton(AF_INET, host, &a) != 1 &&
	    inet_pton(AF_INET6, host, &a) != 1)
		SSL_set_tlsext_host_name(t->ssl, host);
	return tls_io(c, 'c', NULL, 0, "setting up TLS", err) == -1 ? -1 : 0;
}

/* What one address said, for the final message. */
struct tls_tried {
	struct addrlist_addr a;
	char why[160];
};

struct tls_walk {
	struct tls_tried tried[ADDRLIST_MAX + ADDRLIST_MAX_REDIRECTS];
	size_t n;
};

static void
tls_note(struct tls_walk *tw, const struct addrlist_addr *a, const char *why)
{
	size_t i;

	for (i = 0; i < tw->n; i++)
		if (addrlist_addr_eq(&tw->tried[i].a, a))
			break;
	if (i == tw->n) {
		if (tw->n == sizeof(tw->tried) / sizeof(tw->tried[0]))
			return;
		tw->tried[tw->n++].a = *a;
	}
	snprintf(tw->tried[i].why, sizeof(tw->tried[i].why), "%.159s", why);
}

/* "no leader among a:1, b:2 (a:1: connection refused; b:2: ...)". */
static int
tls_no_leader(const struct addrlist *l, const struct tls_walk *tw,
    struct cerr *err)
{
	char buf[sizeof(err->text)], a[ADDRLIST_ADDR_TEXT];
	size_t i, n = 0;

	n += snprintf(buf + n, sizeof(buf) - n, "no leader among ");
	for (i = 0; i < l->n && n < sizeof(buf); i++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? ", " : "",
		    addrlist_addr_format(&l->a[i], a, sizeof(a)));
	for (i = 0; i < tw->n && n < sizeof(buf); i++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s%s: %s",
		    i ? "; " : " (", addrlist_addr_format(&tw->tried[i].a, a,
		    sizeof(a)), tw->tried[i].why);
	if (tw->n > 0 && n < sizeof(buf))
		snprintf(buf + n, sizeof(buf) - n, ")");
	return cerr_set(err, ERR_UNAVAILABLE, "%s", buf);
}

/* Forget the previous address's socket and session, keep the context. */
static void
tls_reset(struct cconn *c)
{
	struct conn_tls *t = c->tls;

	if (t->ssl != NULL) {
		SSL_free(t->ssl);
		t->ssl = NULL;
	}
	if (c->fd != -1) {
		close(c->fd);
		c->fd = -1;
	}
	free(c->identity);
	free(c->role);
	c->identity = c->role = NULL;
	c->broken = c->eof = 0;
	c->leader[0] = '\0';
	t->refused = t->fatal = 0;
	t->why[0] = '\0';
}

enum tls_outcome { TLS_OK, TLS_NEXT, TLS_FATAL };

/* One address, until end (ms, monotonic): TCP (capped when others wait),
 * TLS, hello. TLS_NEXT when another replica may do better (nothing
 * listens, the connection broke, a follower), with err and, for the
 * list, t->why. */
static enum tls_outcome
tls_attempt(struct cconn *c, const struct addrlist_addr *a, int64_t end,
    bool others, struct cerr *err)
{
	struct conn_tls *t = c->tls;
	int64_t now = (int64_t)(clock_mono_us() / 1000);
	int timeout_ms = c->timeout_ms, rc;

	tls_reset(c);
	addrlist_addr_format(a, c->where, sizeof(c->where));
	c->deadline = others && end - now > TLS_CONNECT_CAP_MS ?
	    now + TLS_CONNECT_CAP_MS : end;
	if (tls_connect(c, a->host, a->port, err) == -1)
		return TLS_NEXT;
	c->deadline = end;
	if (tls_handshake(c, a->host, err) == -1)
		return t->fatal ? TLS_FATAL : TLS_NEXT;
	/* Hello's call starts its own clock: give it what is left. */
	now = (int64_t)(clock_mono_us() / 1000);
	c->timeout_ms = end - now > 1 ? (int)(end - now) : 1;
	rc = cconn_hello(c, err);
	c->timeout_ms = timeout_ms;
	if (rc == 0)
		return TLS_OK;
	if (t->fatal || t->refused)
		return TLS_FATAL;
	if (err->code == ERR_NOT_LEADER) {
		if (c->leader[0] != '\0')
			snprintf(t->why, sizeof(t->why), "not the leader, "
			    "leader is %.100s", c->leader);
		else
			snprintf(t->why, sizeof(t->why), "not the leader, no "
			    "leader known");
		return TLS_NEXT;
	}
	/* A transport failure, or a controller shutting down. */
	return err->code == ERR_UNAVAILABLE ? TLS_NEXT : TLS_FATAL;
}

/* Sleep ms, at most until end. */
static void
tls_pause(uint64_t ms, int64_t end)
{
	int64_t left = end - (int64_t)(clock_mono_us() / 1000);
	struct timespec ts;

	if (left <= 0)
		return;
	if ((int64_t)ms > left)
		ms = (uint64_t)left;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Find the leader among the listed addresses (see addrlist.h for the
 * order): a server counts only once it answers hello with a HelloReply.
 * One address is tried once, as before replication; a list is walked
 * round after round until the deadline. */
struct cconn *
cconn_open_tls(const struct cconn_opts *o, struct cerr *err)
{
	static struct tls_walk tw;
	struct addrlist list;
	struct addrlist_walk w;
	struct addrlist_addr a, to;
	struct cconn *c;
	struct cerr why, last;
	enum tls_outcome out;
	uint64_t pause;
	int64_t end;
	unsigned tries = 0;

	if (cconn_check_opts(o, &list, err) == -1 ||
	    (c = cconn_new(o, err)) == NULL)
		return NULL;
	cconn_start_op(c);
	end = c->deadline;
	if (tls_prepare(c, o, err) == -1)
		goto fail;
	memset(&tw, 0, sizeof(tw));
	cerr_clear(&last);
	addrlist_walk_init(&w, &list, tls_has_leader &&
	    addrlist_find(&list, &tls_leader) >= 0 ? &tls_leader : NULL);
	for (;;) {
		while (addrlist_walk_next(&w, &a)) {
			cerr_clear(&why);
			tries++;
			out = tls_attempt(c, &a, end, list.n > 1, &why);
			if (out == TLS_OK) {
				tls_leader = a;
				tls_has_leader = true;
				return c;
			}
			if (out == TLS_FATAL) {
				*err = why;
				goto fail;
			}
			last = why;
			tls_note(&tw, &a, ((struct conn_tls *)c->tls)->why[0] !=
			    '\0' ? ((struct conn_tls *)c->tls)->why : why.text);
			if (why.code == ERR_NOT_LEADER && c->leader[0] != '\0' &&
			    addrlist_addr_parse(c->leader, &to, NULL) == 0)
				addrlist_walk_redirect(&w, &to);
			if ((int64_t)(clock_mono_us() / 1000) >= end)
				break;
		}
		/* One address and nobody sent us elsewhere: its own words,
		 * as before there were lists. */
		if (list.n == 1 && tries == 1) {
			*err = last;
			if (err->code == ERR_NOT_LEADER)
				err->code = ERR_UNAVAILABLE;
			goto fail;
		}
		if (list.n == 1 || (int64_t)(clock_mono_us() / 1000) >= end)
			break;
		pause = addrlist_walk_round(&w);
		tls_pause(pause, end);
		if ((int64_t)(clock_mono_us() / 1000) >= end)
			break;
	}
	tls_no_leader(&list, &tw, err);
fail:
	cconn_close(c);
	return NULL;
}

int
cconn_tls_release(struct cconn *c, int *fd, SSL **ssl)
{
	struct conn_tls *t = c->tls;

	if (t == NULL || t->ssl == NULL || c->broken) {
		errno = EINVAL;
		return -1;
	}
	*fd = c->fd;
	*ssl = t->ssl;
	SSL_CTX_free(t->ctx);	/* the session keeps its own reference */
	free(t);
	c->tls = NULL;
	c->tr = NULL;
	c->fd = -1;
	cconn_close(c);
	return 0;
}
