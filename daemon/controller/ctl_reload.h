/* SIGHUP for cohortd: read the configuration file again and apply what
 * can change while running, without dropping a connection. */
#ifndef COHORT_CONTROLLER_CTL_RELOAD_H
#define COHORT_CONTROLLER_CTL_RELOAD_H

#include <stdbool.h>

#include <openssl/ssl.h>

#include "daemon/controller/ctl_config.h"

struct cluster;
struct jobs;
struct queues;
struct repl;
struct server;

/* What a reload may change: the running daemon's parts. cfg is the
 * configuration in use; the fields applied are updated in it. */
struct ctl_reload_target {
	struct ctl_config *cfg;
	struct jobs *jobs;
	struct queues *queues;
	struct cluster *cluster;
	struct server *srv;
	SSL_CTX *ctx;		/* the RPC port's and the Raft listener's */
	SSL_CTX *cli_ctx;	/* to the other replicas; NULL: none */
	struct repl *repl;	/* NULL: a single controller */
	bool verbose;		/* -v: the log level stays debug */
	/* The ports bound for listen = ...:0 (a file rewritten with the
	 * bound port, as cohort-local does, is no change). */
	unsigned port, http_port;
};

/* Re-read path and apply, all or nothing: the log level, the per-user
 * limits ([tenants] max_pending_per_user, submit_rate, submit_burst;
 * [limits] max_script), the queues' quotas, limits and weights (queues
 * added, removed, renamed or moved, and new gpus.MODEL keys, need a
 * restart: refused), the CA and CRL of every TLS context, Raft's both
 * ways too (RPC port peers and Raft streams whose certificate the new
 * CRL revokes are cut off). Logs one line per change ("SIGHUP: queue a
 * nominal 16 -> 32"), one per key that changed but needs a restart, or
 * why nothing changed (a file that does not load, queues that cannot be
 * changed so, a CA or CRL that does not load). 0 when applied, -1 when
 * nothing changed. */
int ctl_reload(const char *path, struct ctl_reload_target *t);

#endif
