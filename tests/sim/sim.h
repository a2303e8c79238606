/* cohort-simnodes' process: N simulated nodes (simnode.c) in one event
 * loop against a real controller, their first connections spread at a
 * rate, handshakes in flight bounded, failure injection on signals,
 * counters and a stats line. */
#ifndef COHORT_SIM_SIM_H
#define COHORT_SIM_SIM_H

#include <sys/socket.h>
#include <stdbool.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "daemon/agent/inventory.h"
#include "lib/conf.h"
#include "lib/err.h"
#include "lib/inventory.h"
#include "lib/ratelim.h"

#define SIM_PROG "cohort-simnodes"
#define SIM_MAX_NODES 200000

struct event;
struct event_base;
struct simcert;
struct simnode;

/* What the command line asked for. */
struct sim_opts {
	char host[CONF_HOST_MAX + 1];	/* the controller */
	uint16_t port;
	const char *ca, *ca_key;
	unsigned n;			/* nodes */
	const char *prefix;
	unsigned first, width;		/* names prefix<first..>, digits */
	struct sim_gpus gpus;
	uint64_t heartbeat_ms;		/* 0: the controller's */
	uint64_t task_ms;		/* a task's simulated run time */
	double fail_rate;		/* tasks that exit 1 */
	unsigned rate;			/* first connections a second */
	unsigned max_connecting;	/* handshakes in flight */
	unsigned stats_s;		/* 0: no periodic stats line */
	bool shared_key;
	bool verbose;
	const char *address;		/* reported in Register */
};

struct sim {
	struct sim_opts o;
	struct event_base *base;
	SSL_CTX *ctx;
	struct sockaddr_storage addr;	/* the controller, resolved once */
	socklen_t addrlen;
	struct simnode **nodes;
	/* Built on demand for each Register: a whole inventory per node
	 * would cost ~20 KiB each (simnode.c). */
	struct inventory inv;
	struct node_health health;
	/* state */
	unsigned connecting;		/* handshakes in flight */
	unsigned ready;
	unsigned crashed;
	bool all_ready_said;
	int64_t t0_ms;
	unsigned seed;
	/* counters of the stats line */
	uint64_t connects, resets, launches, exits, stops, acks;
	struct ratelim log_budget;
	struct event *sig_ev[5];
	struct event *stats_ev;
	struct event *first_ev;		/* staggered first connects */
	unsigned next_first;
};

/* Mint every node's certificate (printing "minted N certificates ..."),
 * resolve the controller, set up signals and timers. NULL with err. */
struct sim *sim_create(const struct sim_opts *o, struct cerr *err);
/* Start the nodes and run until SIGINT or SIGTERM; prints a last stats
 * line. 0, or -1 (logged). */
int sim_run(struct sim *s);
void sim_destroy(struct sim *s);

/* For the nodes (simnode.c). */
int64_t sim_mono_ms(void);
/* A per-node message, at most 20 a second (more are counted): 10,000
 * nodes that lose their controller at once must not write 10,000
 * lines. */
void sim_log(struct sim *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A node registered: prints "ready N nodes registered in T s" once all
 * have. */
void sim_node_ready(struct sim *s);

#endif
