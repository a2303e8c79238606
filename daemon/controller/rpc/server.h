/* The controller's listener: TLS connections on libevent, framed
 * envelopes in and out. A connection is named by an id that never gets
 * reused, so replies that are sent later (after a commit) find their
 * connection or learn that it is gone, never touching freed memory. */
#ifndef COHORT_CONTROLLER_SERVER_H
#define COHORT_CONTROLLER_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "daemon/controller/rpc/server_limits.h"
#include "lib/err.h"
#include "lib/job.h"
#include "proto/cohort.pb-c.h"

struct event_base;
struct server;
struct conn;

/* Called for each decoded envelope; env is freed when it returns. */
typedef void (*server_msg_cb)(struct conn *c,
    const Cohort__V1__Envelope *env, void *arg);

/* Admission (see docs/design/security.md, "Connection admission"). Zero in
 * any field but host/port/max_frame/max_conns takes the default below. */
struct server_opts {
	const char *host;
	uint16_t port;		/* 0: any free port */
	size_t max_frame;	/* largest frame accepted */
	unsigned max_conns;	/* every connection, the hard bound */
	unsigned max_handshakes;	/* still in the TLS handshake */
	unsigned max_handshakes_per_source; /* the same, from one address */
	unsigned max_per_identity;	/* users and admins, per name */
	unsigned agent_reserve;	/* slots kept for agents at least */
	unsigned max_inflight;	/* replies owed per connection */
	uint64_t handshake_timeout_ms;	/* accept → TLS done */
	uint64_t hello_timeout_ms;	/* accept → Hello */
	uint64_t idle_timeout_ms;	/* users/admins: no request this long */
	size_t max_output_per_user;	/* output + owed, one person's name */
	size_t max_output_total;	/* the same, every person together */
	/* Replicated: other replicas (certificates with role controller)
	 * may connect, for cohortd --join; rpc.c lets them send only
	 * Hello and Members. */
	bool accept_controllers;
};

/* Why a connection was refused or dropped early; a fixed set, the labels
 * of cohort_connections_refused_total / _closed_total. */
enum server_refusal {
	SERVER_REFUSED_FULL,		/* max_conns, nothing to evict */
	SERVER_REFUSED_HANDSHAKES,	/* evicted: handshake budget */
	SERVER_REFUSED_SOURCE,		/* evicted: per-source cap */
	SERVER_REFUSED_IDENTITY,	/* per-identity cap */
	SERVER_REFUSED_RESERVE,		/* the rest is kept for agents */
	SERVER_REFUSED_AGENTS,		/* the agents' cap, people's room */
	SERVER_NREFUSALS
};
enum server_closure {
	SERVER_CLOSED_HANDSHAKE_TIMEOUT,
	SERVER_CLOSED_HELLO_TIMEOUT,
	SERVER_CLOSED_IDLE_TIMEOUT,
	SERVER_CLOSED_STALLED,		/* read none of its replies */
	SERVER_NCLOSURES
};
const char *server_refusal_name(enum server_refusal r);
const char *server_closure_name(enum server_closure r);

struct server_stats {
	unsigned conns;
	unsigned handshaking;
	unsigned agents;
	unsigned people;		/* users and admins */
	unsigned throttled;		/* not read until replies drain */
	unsigned long refused[SERVER_NREFUSALS];
	unsigned long closed[SERVER_NCLOSURES];
	unsigned long yields;		/* read rounds cut at the frame cap */
};
void server_stats(const struct server *srv, struct server_stats *st);

/* How many agents the controller knows (nodes it has seen or expects);
 * the reserve is at least this, and agents' connections are capped at
 * about it. Called whenever a user, admin or agent is admitted. */
void server_set_known_agents_cb(struct server *srv,
    unsigned (*cb)(void *arg), void *arg);

/* Bind and listen. ctx is borrowed and must outlive the server. */
struct server *server_create(struct event_base *base, SSL_CTX *ctx,
    const struct server_opts *opts, server_msg_cb cb, void *arg,
    struct cerr *err);
/* Close every connection and the listener; accepts NULL. */
void server_destroy(struct server *srv);
/* The port actually bound. */
uint16_t server_port(const struct server *srv);
unsigned server_conn_count(const struct server *srv);
/* The largest frame accepted from a peer. */
size_t server_max_frame(const struct server *srv);

/* Call cb(conn_id, arg) whenever a connection is freed. */
void server_set_close_cb(struct server *srv,
    void (*cb)(uint64_t conn_id, void *arg), void *arg);

/* Verify the certificate of every identified peer again against the
 * context's current store (after tls_ctx_reload, e.g. a new CRL): a peer
 * that no longer verifies (revoked) is sent an Error and closed. Returns
 * how many were closed. */
unsigned server_drop_revoked(struct server *srv);

/* The live connection with this id, or NULL. */
struct conn *server_conn(struct server *srv, uint64_t id);

uint64_t server_conn_id(const struct conn *c);
const struct peer *server_conn_peer(const struct conn *c);
bool server_conn_hello_done(const struct conn *c);
/* Mark the session established: lifts the handshake deadline for people
 * (an agent's deadline runs on until conn_set_registered). */
void server_conn_set_hello_done(struct conn *c);
/* An agent's Register succeeded on c: its deadline is lifted, and any
 * older registered connection of the same node is closed (its binding
 * has moved to c). */
void server_conn_set_registered(struct conn *c);

/* Queue a packed frame (FRAME_HDR + body) for sending. 0 or -1. */
int server_conn_send_frame(struct conn *c, const uint8_t *frame, size_t len);
/* Pack and queue env. 0 or -1 (EMSGSIZE above the reply limit). */
int server_conn_send(struct conn *c, const Cohort__V1__Envelope *env);
/* Send an Error reply to request req_id. */
void server_conn_send_error(struct conn *c, uint64_t req_id, enum err_code code,
    const char *text);
/* A reply of len bytes owed to c will be sent later (it waits for a
 * commit): it counts as a request in flight and toward the output limit
 * until server_conn_release(c, len), called before it is sent or dropped. While
 * too much is owed, c is not read. */
void server_conn_reserve(struct conn *c, size_t len);
void server_conn_release(struct conn *c, size_t len);
/* Stop reading, flush what is queued, then close. Safe inside callbacks:
 * the connection is freed later, outside any of its callbacks. */
void server_conn_close(struct conn *c);

#endif
