/* The RPC edge of the controller: a dispatch table of (message, handler,
 * roles allowed), the Hello/version exchange, and the translation from
 * protobuf requests to calls on the domain modules and back. Every reply
 * leaves through txq_defer, so none is sent before the writes it reports
 * (or that it may have seen) are durable. */
#ifndef COHORT_CONTROLLER_RPC_H
#define COHORT_CONTROLLER_RPC_H

#include "proto/cohort.pb-c.h"

struct conn;
struct jobs;
struct server;
struct txq;

struct rpc {
	struct server *srv;	/* set once the server exists */
	struct jobs *jobs;
	struct txq *txq;
};

/* The server_msg_cb of server.h; arg is a struct rpc. */
void rpc_dispatch(struct conn *c, const Cohort__V1__Envelope *env,
    void *arg);

#endif
