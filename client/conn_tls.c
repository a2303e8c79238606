/* TLS straight to the controller (see conn.h): a non-blocking socket
 * driven by poll, so every step honours the timeout, under OpenSSL in
 * blocking style. cohort-mux connects this way and hands the session to
 * its event loop; the benchmarks use it as it is. */
#include "config.h"

#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/x509.h>

#include "client/conn_int.h"
#include "client/conn_tls.h"
#include "lib/clock.h"
#include "lib/tls.h"
#include "lib/tls_words.h"

struct conn_tls {
	SSL_CTX *ctx;
	SSL *ssl;
	int refused;		/* the controller rejected our certificate */
	char host[CONF_HOST_MAX + 1];	/* the controller's, for messages */
};

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
 * on the first read (LIBRARIES.md trap 5), so this is used for every
 * call, not only SSL_connect. */
static int
tls_fail(struct cconn *c, int rc, const char *doing, struct cerr *err)
{
	struct conn_tls *t = c->tls;
	int sslerr = SSL_get_error(t->ssl, rc), saved = errno, reason, alert;
	unsigned long e = ERR_peek_last_error();
	long vr = SSL_get_verify_result(t->ssl);
	char buf[512];

	c->broken = 1;
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
	if (sslerr == SSL_ERROR_ZERO_RETURN ||
	    (sslerr == SSL_ERROR_SYSCALL && e == 0 && saved == 0)) {
		c->eof = 1;
		cerr_set(err, ERR_UNAVAILABLE, "controller %s closed the "
		    "connection while %s", c->where, doing);
	} else if (sslerr == SSL_ERROR_SYSCALL && e == 0)
		cerr_set(err, ERR_UNAVAILABLE, "controller %s: %s while %s",
		    c->where, strerror(saved), doing);
	else
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
	char portstr[8];
	int rc, lasterr = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | AI_ADDRCONFIG;
	snprintf(portstr, sizeof(portstr), "%u", port);
	if ((rc = getaddrinfo(host, portstr, &hints, &res)) != 0)
		return cerr_set(err, ERR_UNAVAILABLE, "cannot resolve "
		    "controller host '%s': %s", host, rc == EAI_SYSTEM ?
		    strerror(errno) : gai_strerror(rc));
	for (ai = res; ai != NULL && c->fd == -1; ai = ai->ai_next)
		if ((c->fd = tls_tcp(c, ai)) == -1)
			lasterr = errno;
	freeaddrinfo(res);
	if (c->fd == -1)
		return cerr_set(err, ERR_UNAVAILABLE, "cannot connect to "
		    "controller %s: %s", c->where, lasterr == ETIMEDOUT ?
		    "timed out" : strerror(lasterr));
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

struct cconn *
cconn_open_tls(const struct cconn_opts *o, struct cerr *err)
{
	struct cconn *c;
	char host[CONF_HOST_MAX + 1];
	uint16_t port;

	if (cconn_check_opts(o, host, sizeof(host), &port, err) == -1 ||
	    (c = cconn_new(o, err)) == NULL)
		return NULL;
	cconn_start_op(c);
	if (tls_prepare(c, o, err) == -1 ||
	    tls_connect(c, host, port, err) == -1 ||
	    tls_handshake(c, host, err) == -1 || cconn_hello(c, err) == -1) {
		cconn_close(c);
		return NULL;
	}
	return c;
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
