/* A blocking, mutually-authenticated TLS connection from the CLI to the
 * controller, speaking frames of cohort.v1.Envelope. The CLI does one
 * request at a time, so plain blocking sockets are the simple choice. */
#ifndef COHORT_CLIENT_CONN_H
#define COHORT_CLIENT_CONN_H

#include <stdbool.h>

#include "lib/err.h"
#include "proto/cohort.pb-c.h"

struct cconn;

struct cconn_opts {
	const char *server;	/* HOST:PORT */
	const char *cert;
	const char *key;
	const char *ca;
	int timeout_ms;		/* per connect/read/write; 0: 30 s */
};

/* Connect, handshake, and exchange Hello. NULL with err set on failure:
 * err->code is ERR_UNAVAILABLE when the controller cannot be reached or
 * authenticated (the CLI's exit code 3), ERR_VERSION on a version
 * mismatch, ERR_INVALID for bad settings (unreadable files). */
struct cconn *cconn_open(const struct cconn_opts *opts, struct cerr *err);
void cconn_close(struct cconn *c);

/* Who the controller says we are (valid after cconn_open). */
const char *cconn_identity(const struct cconn *c);
const char *cconn_role(const struct cconn *c);

/* Send req (its id is set here) and wait for the reply with the same id.
 * Returns the reply, which the caller frees with frame_free, or NULL with
 * err set: ERR_UNAVAILABLE for transport failures. An Error reply is
 * returned as a reply, not as a failure. */
Cohort__V1__Envelope *cconn_call(struct cconn *c, Cohort__V1__Envelope *req,
    struct cerr *err);

#endif
