/* Prometheus text exposition at /metrics (and a one-screen status page at
 * /), served by libevent's evhttp on the controller's event loop. Plain
 * HTTP on a separate listener: bind it to loopback or a management
 * network; it exposes counts, never job contents. */
#ifndef COHORT_CONTROLLER_HTTP_H
#define COHORT_CONTROLLER_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

/* HTTP connections open at once at most (Prometheus and a few browsers
 * need a handful): at the cap the listener stops accepting and the rest
 * wait in the kernel's backlog, holding none of the controller's
 * descriptors, until one closes (evhttp closes an idle one after 10 s). */
#define HTTP_MAX_CONNS 64

#include "lib/histogram.h"

struct event_base;
struct cluster;
struct jobs;
struct nodes;
struct txq;
struct queues;
struct store;
struct http;

/* Reasons and request types at most in struct http_figures. */
#define HTTP_MAX_REASONS 8
#define HTTP_MAX_RPC_TYPES 32

/* What web shows of the parts above it (the driver, the RPC server,
 * replication, the mailer), copied on each request by the composition
 * root (ctl_figures.c), so that web includes none of their headers and
 * reads the domain only. Names are borrowed static strings. */
struct http_figures {
	/* The driver's scheduling passes. */
	uint64_t last_pass_us;
	struct histogram pass;
	/* The RPC server's connections (rpc/server.h). */
	unsigned conns, handshaking, agents, people, throttled;
	unsigned long yields;
	size_t nrefusals, nclosures;
	const char *refusal_name[HTTP_MAX_REASONS];
	unsigned long refused[HTTP_MAX_REASONS];
	const char *closure_name[HTTP_MAX_REASONS];
	unsigned long closed[HTTP_MAX_REASONS];
	/* Request latency by type; nrpc 0: not timed. */
	size_t nrpc;
	const char *rpc_name[HTTP_MAX_RPC_TYPES];
	const struct histogram *rpc_latency[HTTP_MAX_RPC_TYPES];
	/* Replication; has_repl false: a single controller. */
	bool has_repl;
	unsigned long repl_entries, repl_pages;
	uint64_t repl_wait_us;
	unsigned long repl_snapshots_deferred, repl_raft_refused;
	uint64_t repl_term, repl_commit_index;
	/* Mail: zeros where no mailer runs. */
	uint64_t mail_sent, mail_failed, mail_dropped;
};

/* Fills f (zeroed by the caller). */
typedef void (*http_figures_fn)(void *arg, struct http_figures *f);

struct http_sources {
	struct jobs *jobs;
	struct nodes *nodes;
	struct cluster *cluster;
	struct txq *txq;
	struct queues *queues;	/* configured queues (never NULL) */
	struct store *store;	/* for recent events; read only */
	const struct http *http; /* the listener itself (http_create) */
	http_figures_fn figures; /* the rest; never NULL */
	void *figures_arg;
};

struct http_stats {
	unsigned conns;			/* open now */
	unsigned long accept_pauses;	/* times accepting stopped at the cap */
};

/* Listen on host:port (0: any free port). The sources are borrowed. */
struct http *http_create(struct event_base *base, const char *host,
    uint16_t port, const struct http_sources *src, struct cerr *err);
void http_destroy(struct http *h);
uint16_t http_port(const struct http *h);
void http_stats(const struct http *h, struct http_stats *st);

#endif
