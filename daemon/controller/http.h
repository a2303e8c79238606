/* Prometheus text exposition at /metrics (and a one-screen status page at
 * /), served by libevent's evhttp on the controller's event loop. Plain
 * HTTP on a separate listener: bind it to loopback or a management
 * network; it exposes counts, never job contents. */
#ifndef COHORT_CONTROLLER_HTTP_H
#define COHORT_CONTROLLER_HTTP_H

#include <stdint.h>

#include "lib/err.h"

/* HTTP connections open at once at most (Prometheus and a few browsers
 * need a handful): at the cap the listener stops accepting and the rest
 * wait in the kernel's backlog, holding none of the controller's
 * descriptors, until one closes (evhttp closes an idle one after 10 s). */
#define HTTP_MAX_CONNS 64

struct event_base;
struct cluster;
struct jobs;
struct nodes;
struct server;
struct txq;
struct queues;
struct store;
struct http;
struct rpc;

struct http_sources {
	struct jobs *jobs;
	struct nodes *nodes;
	struct cluster *cluster;
	struct driver *driver;
	struct server *server;
	struct txq *txq;
	struct queues *queues;	/* configured queues (never NULL) */
	struct store *store;	/* for recent events; read only */
	const struct rpc *rpc;	/* RPC latency by request type */
	struct repl *repl;	/* replication counters; NULL: single */
	const struct http *http; /* the listener itself (http_create) */
	const struct mailer *mailer; /* mail counters; NULL: none */
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
