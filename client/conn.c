/* The CLI's connection to the controller (see conn.h): frames, calls and
 * hello over a blocking transport, every step within the timeout. The
 * plain transport here is the CLI's socket to cohort-mux; TLS lives in
 * conn_tls.c so that the CLI itself never loads OpenSSL. SIGPIPE must be
 * ignored by the program (the CLI's main and the benchmark do): a write
 * to a peer that went away then fails with EPIPE instead of killing us. */
#include "config.h"

#include <sys/socket.h>

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/conn_int.h"
#include "lib/clock.h"
#include "lib/frame.h"
#include "lib/wire.h"

#define CONN_DEFAULT_TIMEOUT_MS 30000
/* Replies can be long listings; anything above this is a broken peer. */
#define CONN_REPLY_MAX (64u * 1024 * 1024)
/* What we send: a job spec with its script stays far below this, and the
 * controller enforces its own (smaller) limit with a clear error. */
#define CONN_REQUEST_MAX (64u * 1024 * 1024)

void
cconn_start_op(struct cconn *c)
{
	c->deadline = (int64_t)(clock_mono_us() / 1000) + c->timeout_ms;
}

int
cconn_poll(struct cconn *c, short events, struct cerr *err)
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

/* The plain transport: a non-blocking Unix socket to cohort-mux. */
static int
plain_io(struct cconn *c, int op, void *buf, int len, const char *doing,
    struct cerr *err)
{
	ssize_t n;

	for (;;) {
		n = op == 'r' ? read(c->fd, buf, len) :
		    send(c->fd, buf, len, MSG_NOSIGNAL);
		if (n > 0)
			return (int)n;
		if (n == 0) {
			c->broken = c->eof = 1;
			return cerr_set(err, ERR_UNAVAILABLE, "the connection "
			    "to controller %s closed while %s", c->where,
			    doing);
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			c->broken = 1;
			if (errno == ECONNRESET || errno == EPIPE)
				c->eof = 1;
			return cerr_set(err, ERR_UNAVAILABLE, "connection to "
			    "controller %s: %s while %s", c->where,
			    strerror(errno), doing);
		}
		if (cconn_poll(c, op == 'r' ? POLLIN : POLLOUT, err) == -1) {
			c->broken = 1;
			return -1;
		}
	}
}

static const struct cconn_transport plain_transport = {
	plain_io, NULL, NULL,
};

struct cconn *
cconn_new(const struct cconn_opts *o, struct cerr *err)
{
	struct cconn *c;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	c->fd = -1;
	c->tr = &plain_transport;
	c->next_id = 1;
	c->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms :
	    CONN_DEFAULT_TIMEOUT_MS;
	snprintf(c->where, sizeof(c->where), "%s", o->server);
	return c;
}

static int
conn_read_full(struct cconn *c, uint8_t *buf, size_t len, struct cerr *err)
{
	size_t got = 0;
	int n;

	while (got < len) {
		n = c->tr->io(c, 'r', buf + got,
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
		n = c->tr->io(c, 'w', (void *)(buf + put),
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

/* A request that only reads, or a submit with an idempotency key: sent
 * again on a new connection when the first one broke before its reply
 * (a failover). Anything else that changes state is not: its first
 * sending may have committed. A keyed submit that did is answered with
 * the job it made (SubmitReply.existing). */
static bool
conn_idempotent(const Cohort__V1__Envelope *req)
{
	switch (req->body_case) {
	case COHORT__V1__ENVELOPE__BODY_SUBMIT:
		return req->submit->spec != NULL &&
		    req->submit->spec->idempotency_key != NULL &&
		    req->submit->spec->idempotency_key[0] != '\0';
	case COHORT__V1__ENVELOPE__BODY_LIST_JOBS:
	case COHORT__V1__ENVELOPE__BODY_GET_JOB:
	case COHORT__V1__ENVELOPE__BODY_LOGS:
	case COHORT__V1__ENVELOPE__BODY_LIST_NODES:
	case COHORT__V1__ENVELOPE__BODY_GET_NODE:
	case COHORT__V1__ENVELOPE__BODY_EVENTS:
	case COHORT__V1__ENVELOPE__BODY_QUEUES:
	case COHORT__V1__ENVELOPE__BODY_USAGE:
	case COHORT__V1__ENVELOPE__BODY_STEP_STATUS:
	case COHORT__V1__ENVELOPE__BODY_LIST_STEPS:
	/* Its offset makes a repeat harmless: the agent skips what its
	 * pipe has already taken. */
	case COHORT__V1__ENVELOPE__BODY_STEP_INPUT:
		return true;
	case COHORT__V1__ENVELOPE__BODY_MEMBERS:
		return req->members->op == NULL || req->members->op[0] == '\0' ||
		    strcmp(req->members->op, "list") == 0;
	default:
		return false;
	}
}

static Cohort__V1__Envelope *conn_call_once(struct cconn *c,
    Cohort__V1__Envelope *req, struct cerr *err);

Cohort__V1__Envelope *
cconn_call(struct cconn *c, Cohort__V1__Envelope *req, struct cerr *err)
{
	Cohort__V1__Envelope *rep;
	struct cerr first;

	rep = conn_call_once(c, req, err);
	if (c->reopen == NULL || !conn_idempotent(req))
		return rep;
	/* The connection dropped (NULL, ERR_UNAVAILABLE), or the mux said
	 * its controller went (an ERR_UNAVAILABLE reply): once more on a
	 * new one. */
	if (rep == NULL && (err == NULL || err->code != ERR_UNAVAILABLE ||
	    !c->broken))
		return NULL;
	if (rep != NULL && (rep->body_case != COHORT__V1__ENVELOPE__BODY_ERROR
	    || wire_err_from_pb(rep->error->code) != ERR_UNAVAILABLE))
		return rep;
	if (rep != NULL)
		cerr_set(&first, ERR_UNAVAILABLE, "%s", rep->error->text);
	else
		first = *err;
	if (c->reopen(c, err) == -1) {
		/* The first failure says more than the second. */
		if (rep != NULL)
			return rep;
		if (err != NULL)
			*err = first;
		return NULL;
	}
	frame_free(rep);
	return conn_call_once(c, req, err);
}

static Cohort__V1__Envelope *
conn_call_once(struct cconn *c, Cohort__V1__Envelope *req, struct cerr *err)
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
	/* What a person typed is sent as typed or refused, never changed
	 * (frame_pack would repair it). */
	if (!frame_text_ok(req)) {
		cerr_set(err, ERR_INVALID, "an argument is not valid UTF-8 "
		    "text");
		return NULL;
	}
	req->id = c->next_id++;
	if ((frame = frame_pack(req, CONN_REQUEST_MAX, &len)) == NULL) {
		cerr_set(err, errno == EMSGSIZE ? ERR_TOO_LARGE : ERR_INTERNAL,
		    "cannot encode the request: %s", strerror(errno));
		return NULL;
	}
	/* Over the controller's limit: say so here, rather than have the
	 * connection closed on us mid-write. */
	if (c->max_frame != 0 && len - FRAME_HDR > c->max_frame) {
		free(frame);
		cerr_set(err, ERR_TOO_LARGE, "the request is %zu bytes; the "
		    "controller accepts at most %u", len - FRAME_HDR,
		    c->max_frame);
		return NULL;
	}
	cconn_start_op(c);
	rc = conn_write_full(c, frame, len, err);
	free(frame);
	if (rc == -1) {
		if (c->tr->write_failed != NULL)
			c->tr->write_failed(c, err);
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

int
cconn_call_many(struct cconn *c, Cohort__V1__Envelope **reqs, size_t n,
    Cohort__V1__Envelope **reps, struct cerr *err)
{
	Cohort__V1__Envelope *rep;
	uint8_t *frames[CCONN_BATCH_MAX];
	size_t lens[CCONN_BATCH_MAX], i, got = 0;
	uint64_t first;
	bool sent = false;
	int rc = -1;

	for (i = 0; i < n; i++)
		reps[i] = NULL;
	if (n == 0)
		return 0;
	if (n > CCONN_BATCH_MAX)
		return cerr_set(err, ERR_INTERNAL, "%zu requests at once (at "
		    "most %d)", n, CCONN_BATCH_MAX);
	if (c->broken)
		return cerr_set(err, ERR_UNAVAILABLE, "connection to "
		    "controller %s already failed", c->where);
	memset(frames, 0, sizeof(frames));
	first = c->next_id;
	for (i = 0; i < n; i++) {
		if (!frame_text_ok(reqs[i])) {
			cerr_set(err, ERR_INVALID, "an argument is not valid "
			    "UTF-8 text");
			goto out;
		}
		reqs[i]->id = c->next_id++;
		if ((frames[i] = frame_pack(reqs[i], CONN_REQUEST_MAX,
		    &lens[i])) == NULL) {
			cerr_set(err, ERR_INTERNAL, "cannot encode the "
			    "request: %s", strerror(errno));
			goto out;
		}
	}
	cconn_start_op(c);
	sent = true;
	for (i = 0; i < n; i++)
		if (conn_write_full(c, frames[i], lens[i], err) == -1) {
			if (c->tr->write_failed != NULL)
				c->tr->write_failed(c, err);
			goto out;
		}
	while (got < n) {
		if ((rep = conn_read_frame(c, err)) == NULL)
			goto out;
		if (rep->id == 0 &&
		    rep->body_case == COHORT__V1__ENVELOPE__BODY_ERROR) {
			/* About the connection as a whole: it is over. */
			cerr_set(err, wire_err_from_pb(rep->error->code),
			    "%s", rep->error->text);
			c->broken = 1;
			frame_free(rep);
			goto out;
		}
		if (rep->id < first || rep->id >= first + n ||
		    reps[rep->id - first] != NULL) {
			frame_free(rep);	/* stale */
			continue;
		}
		reps[rep->id - first] = rep;
		got++;
	}
	rc = 0;
out:
	for (i = 0; i < n; i++)
		free(frames[i]);
	/* Once anything went out, replies may still be due: the stream is
	 * out of step. */
	if (rc == -1 && sent)
		c->broken = 1;
	if (rc == -1)
		for (i = 0; i < n; i++) {
			frame_free(reps[i]);
			reps[i] = NULL;
		}
	return rc;
}

int
cconn_hello(struct cconn *c, struct cerr *err)
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
	if (rep->body_case == COHORT__V1__ENVELOPE__BODY_ERROR &&
	    wire_err_from_pb(rep->error->code) == ERR_NOT_LEADER) {
		/* A follower replica: where the leader is, if it knows. */
		snprintf(c->leader, sizeof(c->leader), "%s",
		    rep->error->leader != NULL ? rep->error->leader : "");
		if (c->leader[0] != '\0')
			cerr_set(err, ERR_NOT_LEADER, "controller %s is not the "
			    "leader; the leader is %s", c->where, c->leader);
		else
			cerr_set(err, ERR_NOT_LEADER, "controller %s is not the "
			    "leader and knows no leader (an election?)",
			    c->where);
	} else if (rep->body_case == COHORT__V1__ENVELOPE__BODY_ERROR) {
		cerr_set(err, wire_err_from_pb(rep->error->code),
		    "controller %s refused the connection: %s", c->where,
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
	} else {
		c->max_frame = hr->has_max_frame ? hr->max_frame : 0;
		rc = 0;
	}
	frame_free(rep);
	return rc;
}

/* OpenSSL's own words for a missing file are obscure ("system lib");
 * name the file and the reason before handing it over. */
int
cconn_check_opts(const struct cconn_opts *o, struct addrlist *list,
    struct cerr *err)
{
	const char *what[3] = { "certificate", "key", "CA certificate" };
	const char *path[3] = { o->cert, o->key, o->ca };
	struct cerr why;
	int i;

	if (o->server == NULL || o->cert == NULL || o->key == NULL ||
	    o->ca == NULL)
		return cerr_set(err, ERR_INVALID, "incomplete connection "
		    "settings");
	for (i = 0; i < 3; i++)
		if (access(path[i], R_OK) == -1)
			return cerr_set(err, ERR_INVALID, "cannot read %s "
			    "'%s': %s", what[i], path[i], strerror(errno));
	if (o->crl != NULL && access(o->crl, R_OK) == -1)
		return cerr_set(err, ERR_INVALID, "cannot read CRL file '%s' "
		    "(COHORT_CRL): %s", o->crl, strerror(errno));
	cerr_clear(&why);
	if (addrlist_parse(o->server, list, &why) == -1)
		return cerr_set(err, ERR_INVALID, "bad controller address: %s",
		    why.text);
	return 0;
}

void
cconn_close(struct cconn *c)
{
	if (c == NULL)
		return;
	if (c->tr != NULL && c->tr->close != NULL)
		c->tr->close(c);
	if (c->fd != -1)
		close(c->fd);
	if (c->reopen_free != NULL)
		c->reopen_free(c->reopen_arg);
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

uint32_t
cconn_max_frame(const struct cconn *c)
{
	return c->max_frame;
}

const char *
cconn_where(const struct cconn *c)
{
	return c->where;
}
