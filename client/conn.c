/* The CLI's connection to the controller (see conn.h): a non-blocking
 * socket driven by poll, so every step honours the timeout, under
 * OpenSSL in blocking style. SIGPIPE must be ignored by the program (the
 * CLI's main and the benchmark do): a write to a controller that went
 * away then fails with EPIPE instead of killing us. */
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
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/x509.h>

#include "lib/clock.h"
#include "client/conn.h"
#include "lib/conf.h"
#include "lib/frame.h"
#include "lib/tls.h"
#include "lib/wire.h"

#define CONN_DEFAULT_TIMEOUT_MS 30000
/* Replies can be long listings; anything above this is a broken peer. */
#define CONN_REPLY_MAX (64u * 1024 * 1024)
/* What we send: a job spec with its script stays far below this, and the
 * controller enforces its own (smaller) limit with a clear error. */
#define CONN_REQUEST_MAX (64u * 1024 * 1024)

struct cconn {
	int fd;
	SSL_CTX *ctx;
	SSL *ssl;
	int timeout_ms;
	int64_t deadline;	/* of the current operation, in ms */
	uint64_t next_id;
	int broken;		/* the stream is unusable after a failure */
	int refused;		/* the controller rejected our certificate */
	char where[CONF_HOST_MAX + 16];	/* "HOST:PORT" as configured */
	char *identity;
	char *role;
};

static void
conn_start_op(struct cconn *c)
{
	c->deadline = (int64_t)(clock_mono_us() / 1000) + c->timeout_ms;
}

/* Wait until fd is ready for events or the operation's deadline passes.
 * 0, or -1 with err set. */
static int
conn_poll(struct cconn *c, short events, struct cerr *err)
{
	struct pollfd pfd = { .fd = c->fd, .events = events };
	int64_t left;
	int n;

	for (;;) {
		if ((left = c->deadline - (int64_t)(clock_mono_us() / 1000)) <= 0)
			return cerr_set(err, ERR_UNAVAILABLE,
			    "controller %s did not answer within %d s",
			    c->where, (c->timeout_ms + 999) / 1000);
		n = poll(&pfd, 1, left > INT32_MAX ? INT32_MAX : (int)left);
		if (n > 0)
			return 0;
		if (n == -1 && errno != EINTR)
			return cerr_set(err, ERR_UNAVAILABLE, "poll: %s",
			    strerror(errno));
	}
}

/* An alert the controller sent that means it did not accept our
 * certificate. OpenSSL reports a received alert as reason
 * SSL_AD_REASON_OFFSET + alert. */
static int
conn_cert_alert(int alert)
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
conn_ssl_fail(struct cconn *c, int rc, const char *doing, struct cerr *err)
{
	int sslerr = SSL_get_error(c->ssl, rc), saved = errno, reason, alert;
	unsigned long e = ERR_peek_last_error();
	long vr = SSL_get_verify_result(c->ssl);
	char buf[256];

	c->broken = 1;
	if (vr != X509_V_OK) {
		cerr_set(err, ERR_UNAVAILABLE, "cannot verify the controller's "
		    "certificate: %s (controller %s)",
		    X509_verify_cert_error_string(vr), c->where);
		goto out;
	}
	if (e != 0 && ERR_GET_LIB(e) == ERR_LIB_SSL) {
		reason = ERR_GET_REASON(e);
		alert = reason - SSL_AD_REASON_OFFSET;
		if (alert >= 0 && alert < 256 && conn_cert_alert(alert)) {
			c->refused = 1;
			cerr_set(err, ERR_UNAVAILABLE, "controller %s refused "
			    "our certificate (%s)", c->where,
			    ERR_reason_error_string(e));
			goto out;
		}
	}
	if (sslerr == SSL_ERROR_ZERO_RETURN ||
	    (sslerr == SSL_ERROR_SYSCALL && e == 0 && saved == 0))
		cerr_set(err, ERR_UNAVAILABLE, "controller %s closed the "
		    "connection while %s", c->where, doing);
	else if (sslerr == SSL_ERROR_SYSCALL && e == 0)
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
conn_ssl_op(struct cconn *c, int op, void *buf, int len, const char *doing,
    struct cerr *err)
{
	int rc, sslerr;

	for (;;) {
		ERR_clear_error();
		errno = 0;
		if (op == 'c')
			rc = SSL_connect(c->ssl);
		else if (op == 'r')
			rc = SSL_read(c->ssl, buf, len);
		else
			rc = SSL_write(c->ssl, buf, len);
		if (rc > 0)
			return rc;
		sslerr = SSL_get_error(c->ssl, rc);
		if (sslerr != SSL_ERROR_WANT_READ &&
		    sslerr != SSL_ERROR_WANT_WRITE)
			return conn_ssl_fail(c, rc, doing, err);
		if (conn_poll(c, sslerr == SSL_ERROR_WANT_READ ? POLLIN :
		    POLLOUT, err) == -1) {
			/* A timeout mid-frame leaves the stream unusable. */
			c->broken = 1;
			return -1;
		}
	}
}

static int
conn_read_full(struct cconn *c, uint8_t *buf, size_t len, struct cerr *err)
{
	size_t got = 0;
	int n;

	while (got < len) {
		n = conn_ssl_op(c, 'r', buf + got,
		    len - got > INT32_MAX ? INT32_MAX : (int)(len - got),
		    "waiting for a reply", err);
		if (n == -1)
			return -1;
		got += n;
	}
	return 0;
}

static int
conn_write_full(struct cconn *c, const uint8_t *buf, size_t len,
    struct cerr *err)
{
	size_t put = 0;
	int n;

	while (put < len) {
		n = conn_ssl_op(c, 'w', (void *)(buf + put),
		    len - put > INT32_MAX ? INT32_MAX : (int)(len - put),
		    "sending a request", err);
		if (n == -1)
			return -1;
		put += n;
	}
	return 0;
}

static Cohort__V1__Envelope *
conn_read_frame(struct cconn *c, struct cerr *err)
{
	Cohort__V1__Envelope *env;
	uint8_t hdr[FRAME_HDR], *body;
	uint32_t len;

	if (conn_read_full(c, hdr, sizeof(hdr), err) == -1)
		return NULL;
	if ((len = frame_header_len(hdr)) > CONN_REPLY_MAX) {
		c->broken = 1;
		cerr_set(err, ERR_PROTOCOL, "controller %s sent a reply of "
		    "%u bytes (the limit is %u)", c->where, len,
		    CONN_REPLY_MAX);
		return NULL;
	}
	if ((body = malloc(len ? len : 1)) == NULL) {
		c->broken = 1;
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	if (conn_read_full(c, body, len, err) == -1) {
		free(body);
		return NULL;
	}
	env = frame_decode(body, len);
	free(body);
	if (env == NULL) {
		c->broken = 1;
		cerr_set(err, ERR_PROTOCOL, "controller %s sent a reply that "
		    "does not decode", c->where);
	}
	return env;
}

/* A write can fail because the controller has just rejected our
 * certificate and closed: its alert may still be waiting to be read, and
 * it is the reason the user needs to see. */
static void
conn_write_failed(struct cconn *c, struct cerr *err)
{
	struct cerr alert;
	uint8_t byte;

	if (c->refused || c->ssl == NULL)
		return;
	c->broken = 0;
	c->deadline = (int64_t)(clock_mono_us() / 1000) + 1000;
	if (conn_ssl_op(c, 'r', &byte, 1, "reading", &alert) == -1 &&
	    c->refused && err != NULL)
		*err = alert;
	c->broken = 1;
}

Cohort__V1__Envelope *
cconn_call(struct cconn *c, Cohort__V1__Envelope *req, struct cerr *err)
{
	Cohort__V1__Envelope *rep;
	uint8_t *frame;
	size_t len;
	int rc;

	if (c->broken) {
		cerr_set(err, ERR_UNAVAILABLE, "connection to controller %s "
		    "already failed", c->where);
		return NULL;
	}
	req->id = c->next_id++;
	if ((frame = frame_pack(req, CONN_REQUEST_MAX, &len)) == NULL) {
		cerr_set(err, errno == EMSGSIZE ? ERR_TOO_LARGE : ERR_INTERNAL,
		    "cannot encode the request: %s", strerror(errno));
		return NULL;
	}
	conn_start_op(c);
	rc = conn_write_full(c, frame, len, err);
	free(frame);
	if (rc == -1) {
		conn_write_failed(c, err);
		return NULL;
	}
	for (;;) {
		if ((rep = conn_read_frame(c, err)) == NULL)
			return NULL;
		/* Id 0 carries errors about the connection as a whole, such as
		 * the controller shutting down; others are stale replies. */
		if (rep->id == req->id || (rep->id == 0 &&
		    rep->body_case == COHORT__V1__ENVELOPE__BODY_ERROR))
			return rep;
		frame_free(rep);
	}
}

/* TCP connect to one address within the deadline. The fd, or -1 with
 * errno set. */
static int
conn_tcp(struct cconn *c, const struct addrinfo *ai)
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
conn_connect(struct cconn *c, const char *host, uint16_t port,
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
		if ((c->fd = conn_tcp(c, ai)) == -1)
			lasterr = errno;
	freeaddrinfo(res);
	if (c->fd == -1)
		return cerr_set(err, ERR_UNAVAILABLE, "cannot connect to "
		    "controller %s: %s", c->where, lasterr == ETIMEDOUT ?
		    "timed out" : strerror(lasterr));
	return 0;
}

static int
conn_tls(struct cconn *c, const struct cconn_opts *o, const char *host,
    struct cerr *err)
{
	struct in6_addr a;

	cerr_clear(err);
	if ((c->ctx = tls_client_ctx(o->ca, o->cert, o->key, err)) == NULL) {
		if (err != NULL && err->code == ERR_NONE)
			err->code = ERR_INVALID;
		return -1;
	}
	if ((c->ssl = SSL_new(c->ctx)) == NULL ||
	    SSL_set_fd(c->ssl, c->fd) != 1 ||
	    tls_client_expect_host(c->ssl, host) == -1)
		return cerr_set(err, ERR_INTERNAL, "cannot set up TLS for "
		    "controller %s", c->where);
	/* SNI only for names: RFC 6066 forbids address literals. */
	if (inet_pton(AF_INET, host, &a) != 1 &&
	    inet_pton(AF_INET6, host, &a) != 1)
		SSL_set_tlsext_host_name(c->ssl, host);
	if (conn_ssl_op(c, 'c', NULL, 0, "setting up TLS", err) == -1)
		return -1;
	return 0;
}

static int
conn_hello(struct cconn *c, struct cerr *err)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__Hello hello = COHORT__V1__HELLO__INIT;
	Cohort__V1__HelloReply *hr;
	int rc = -1;

	hello.major = WIRE_MAJOR;
	hello.minor = WIRE_MINOR;
	hello.software = "cohort " PACKAGE_VERSION;
	req.body_case = COHORT__V1__ENVELOPE__BODY_HELLO;
	req.hello = &hello;
	if ((rep = cconn_call(c, &req, err)) == NULL)
		return -1;
	if (rep->body_case == COHORT__V1__ENVELOPE__BODY_ERROR) {
		cerr_set(err, wire_err_from_pb(rep->error->code), "controller "
		    "%s refused the connection: %s", c->where,
		    rep->error->text);
	} else if (rep->body_case != COHORT__V1__ENVELOPE__BODY_HELLO_REPLY) {
		cerr_set(err, ERR_PROTOCOL, "controller %s answered hello "
		    "with '%s'", c->where, wire_body_name(rep->body_case));
	} else if ((hr = rep->hello_reply)->major != WIRE_MAJOR) {
		cerr_set(err, ERR_VERSION, "controller %s speaks protocol "
		    "%u.%u, this client %d.%d", c->where, hr->major,
		    hr->minor, WIRE_MAJOR, WIRE_MINOR);
	} else if ((c->identity = strdup(hr->identity)) == NULL ||
	    (c->role = strdup(hr->role)) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
	} else
		rc = 0;
	frame_free(rep);
	return rc;
}

/* OpenSSL's own words for a missing file are obscure ("system lib");
 * name the file and the reason before handing it over. */
static int
conn_check_files(const struct cconn_opts *o, struct cerr *err)
{
	const char *what[3] = { "certificate", "key", "CA certificate" };
	const char *path[3] = { o->cert, o->key, o->ca };
	int i;

	for (i = 0; i < 3; i++)
		if (access(path[i], R_OK) == -1)
			return cerr_set(err, ERR_INVALID, "cannot read %s "
			    "'%s': %s", what[i], path[i], strerror(errno));
	return 0;
}

struct cconn *
cconn_open(const struct cconn_opts *o, struct cerr *err)
{
	struct cconn *c;
	struct cerr why;
	char host[CONF_HOST_MAX + 1];
	uint16_t port;

	if (o->server == NULL || o->cert == NULL || o->key == NULL ||
	    o->ca == NULL) {
		cerr_set(err, ERR_INVALID, "incomplete connection settings");
		return NULL;
	}
	if (conn_check_files(o, err) == -1)
		return NULL;
	cerr_clear(&why);
	if (conf_parse_hostport(o->server, host, sizeof(host), &port, false,
	    &why) == -1) {
		cerr_set(err, ERR_INVALID, "bad controller address: %s",
		    why.text);
		return NULL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	c->fd = -1;
	c->next_id = 1;
	c->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms :
	    CONN_DEFAULT_TIMEOUT_MS;
	snprintf(c->where, sizeof(c->where), "%s", o->server);
	conn_start_op(c);
	if (conn_connect(c, host, port, err) == -1 ||
	    conn_tls(c, o, host, err) == -1 || conn_hello(c, err) == -1) {
		cconn_close(c);
		return NULL;
	}
	return c;
}

void
cconn_close(struct cconn *c)
{
	if (c == NULL)
		return;
	if (c->ssl != NULL) {
		/* A polite close_notify when the stream is sound; never wait
		 * for the controller's. */
		if (!c->broken && SSL_is_init_finished(c->ssl))
			SSL_shutdown(c->ssl);
		SSL_free(c->ssl);
	}
	SSL_CTX_free(c->ctx);
	if (c->fd != -1)
		close(c->fd);
	free(c->identity);
	free(c->role);
	free(c);
}

const char *
cconn_identity(const struct cconn *c)
{
	return c->identity;
}

const char *
cconn_role(const struct cconn *c)
{
	return c->role;
}
