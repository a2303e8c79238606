/* The RPC edge of the controller: a dispatch table of (message, handler,
 * roles allowed), the Hello/version exchange, and the translation from
 * protobuf requests to calls on the domain modules and back. Every reply
 * leaves through txq_defer, so none is sent before the writes it reports
 * (or that it may have seen) are durable. */
#ifndef COHORT_CONTROLLER_RPC_H
#define COHORT_CONTROLLER_RPC_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/histogram.h"
#include "lib/ratelim.h"

#include "proto/cohort.pb-c.h"

struct agentcmd;
struct logs_wait;
struct input_wait;
struct step_wait;
struct event_base;
struct cluster;
struct conn;
struct jobs;
struct nodes;
struct queues;
struct repl;
struct server;
struct store;
struct topo;
struct txq;

/* Request types, timed from the decoded frame to the reply queued (after
 * the commit it waits for): the entries of rpc.c's handler table. */
#define RPC_NTYPES 28

/* The request whose reply is being built: its type (1 + its index among
 * the RPC_NTYPES; 0: none, nothing is timed) and when it was decoded. */
struct rpc_timing {
	unsigned type;
	uint64_t t0_us;
};

struct stepcred;

struct rpc {
	struct server *srv;	/* set once the server exists */
	struct jobs *jobs;
	struct nodes *nodes;
	struct cluster *cluster;
	struct agentcmd *agentcmd;
	struct stepcred *stepcred;	/* NULL: srun cannot start steps */
	struct txq *txq;
	struct queues *queues;	/* `cohort queues`; NULL: none shown */
	struct store *store;	/* events are read straight from it */
	uint32_t heartbeat_ms;	/* told to agents */
	const struct topo *topo; /* for nodes' switch names; may be NULL */
	uint32_t page_size;	/* most jobs, nodes or events per listing */
	bool private_data;	/* env, argv, scripts, logs: owner + admins */
	struct ratelim refusal_log;	/* lines about refused requests */
	struct logs_wait *logs_waits;	/* log reads waiting on agents */
	struct input_wait *input_waits;	/* srun input waiting on agents */
	/* Step status requests waiting for their step to end
	 * (rpc_steps.c), and the loop their timers run on. */
	struct step_wait *step_waits;
	size_t nstep_waits;
	struct event_base *base;
	struct rpc_timing cur;		/* taken by the first reply */
	struct histogram latency[RPC_NTYPES];	/* zeroed: default bounds */
	/* Replicated (repl.h): serving once this replica leads and the
	 * controller is up; until then every request is answered
	 * ERROR_NOT_LEADER. NULL: a single controller. */
	struct repl *repl;
	bool serving;
	/* cohortd --backup through the leader (rpc_repl.c): one image at a
	 * time, freed once its last piece is sent or a new one starts. */
	unsigned char *backup_img;
	size_t backup_len;
	uint64_t backup_id;
};

/* The server_msg_cb of server.h; arg is a struct rpc. */
void rpc_dispatch(struct conn *c, const Cohort__V1__Envelope *env,
    void *arg);
/* Type i's name (the Envelope body's: "submit", "list_jobs", ...), for
 * i < RPC_NTYPES; and its latency histogram. */
const char *rpc_type_name(size_t i);
const struct histogram *rpc_latency(const struct rpc *rpc, size_t i);
/* A job step ended: the status requests waiting for it are answered
 * (driver_on_step_ended's callback; arg is a struct rpc). */
void rpc_steps_ended(void *arg, uint64_t job_id, uint32_t step);
/* Answer and free every waiting step status request (at shutdown). */
void rpc_steps_waits_free(struct rpc *rpc);
/* The server's close callback; arg is a struct rpc. */
void rpc_conn_closed(uint64_t conn_id, void *arg);

#endif
