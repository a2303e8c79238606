/* A blocking connection from the CLI to the controller, speaking frames
 * of cohort.v1.Envelope. The CLI does one request at a time, so plain
 * blocking sockets are the simple choice. Two ways there: through the
 * user's cohort-mux, which keeps one mutually-authenticated TLS
 * connection open for every CLI process of that identity (mux.c; what
 * the commands use), or TLS straight to the controller (conn_tls.c; what
 * cohort-mux itself and the benchmarks use). */
#ifndef COHORT_CLIENT_CONN_H
#define COHORT_CLIENT_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"
#include "proto/cohort.pb-c.h"

struct cconn;

struct cconn_opts {
	/* HOST:PORT, or a comma-separated list of them (the replicas of a
	 * replicated controller: cconn_open_tls finds the leader). */
	const char *server;
	const char *cert;
	const char *key;
	const char *ca;
	int timeout_ms;		/* per connect/read/write; 0: 30 s */
	/* CRLs the controller's certificate is checked against (revocation);
	 * NULL: none. The CLI takes it from COHORT_CRL. */
	const char *crl;
};

/* Connect and exchange Hello. NULL with err set on failure: err->code is
 * ERR_UNAVAILABLE when the controller cannot be reached or authenticated
 * (the CLI's exit code 3), ERR_VERSION on a version mismatch,
 * ERR_INVALID for bad settings (unreadable files).
 * cconn_open goes through cohort-mux, starting it when none runs for
 * these settings (mux.c; COHORT_MUX tunes or disables its persistence);
 * cconn_open_tls makes its own TLS connection (conn_tls.c). */
struct cconn *cconn_open(const struct cconn_opts *opts, struct cerr *err);
struct cconn *cconn_open_tls(const struct cconn_opts *opts,
    struct cerr *err);
void cconn_close(struct cconn *c);

/* Who the controller says we are (valid after cconn_open). */
const char *cconn_identity(const struct cconn *c);
const char *cconn_role(const struct cconn *c);
/* The controller's address connected to: with a list, the leader found
 * (through the mux: the list as configured). */
const char *cconn_where(const struct cconn *c);
/* The largest request frame the controller accepts (its hello says). */
uint32_t cconn_max_frame(const struct cconn *c);

/* Send req (its id is set here) and wait for the reply with the same id.
 * Returns the reply, which the caller frees with frame_free, or NULL with
 * err set: ERR_UNAVAILABLE for transport failures. An Error reply is
 * returned as a reply, not as a failure. */
Cohort__V1__Envelope *cconn_call(struct cconn *c, Cohort__V1__Envelope *req,
    struct cerr *err);

/* At most this many requests go out together in one cconn_call_many:
 * what cohort-mux reads of one client before replies catch up. */
#define CCONN_BATCH_MAX 16

/* Send reqs[0..n) (n <= CCONN_BATCH_MAX; their ids are set here) in one
 * write and wait for all their replies: reps[i] answers reqs[i] (each
 * freed with frame_free by the caller; an Error reply is a reply). For
 * the requests a poller repeats (srun: a step's status and its tasks'
 * output), whose round trips would otherwise add up. Returns 0, or -1
 * with err set as cconn_call does and every reps[i] NULL; nothing is
 * sent again on a new connection. */
int cconn_call_many(struct cconn *c, Cohort__V1__Envelope **reqs, size_t n,
    Cohort__V1__Envelope **reps, struct cerr *err);

#endif
