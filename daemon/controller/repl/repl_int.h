/* Between repl.c and its network (repl_net.c). */
#ifndef COHORT_CONTROLLER_REPL_INT_H
#define COHORT_CONTROLLER_REPL_INT_H

#include <openssl/ssl.h>
#include <raft.h>
#include <raft/uv.h>
#include <uv.h>

#include "daemon/controller/repl/repl.h"

/* A raft_uv_transport over TLS with the controllers' certificates. 0 or
 * -1 (ENOMEM). */
int repl_net_init(struct raft_uv_transport *t, uv_loop_t *loop, SSL_CTX *srv,
    SSL_CTX *cli);
void repl_net_free(struct raft_uv_transport *t);
/* The replicas that may open streams to t: the Raft host of each member
 * of conf, resolved now (a name to every address it has). Until the
 * first call, or with an empty conf (a replica joining knows no members
 * yet), anyone may. 0, or -1 when a member's host did not resolve or
 * memory ran out: the members that resolved are in force (none at all:
 * the list stays as it was), and the caller should try again. */
int repl_net_set_members(struct raft_uv_transport *t,
    const struct raft_configuration *conf);
/* Close every stream whose peer's certificate the contexts' current
 * store no longer verifies (after tls_ctx_reload_both: revoked). The
 * closes complete on the loop's next run. Returns how many. */
unsigned repl_net_drop_revoked(struct raft_uv_transport *t);
struct repl_net_stats {
	unsigned long accepted;		/* inbound streams handed to raft */
	unsigned long connected;	/* outbound streams handed to raft */
	unsigned long handshakes;	/* inbound TLS handshakes started */
	unsigned long refused;		/* connections from non-members */
};
void repl_net_stats(struct raft_uv_transport *t, struct repl_net_stats *st);
/* "RAFT/RPC" → its parts (either may be NULL). 0 or -1. */
int repl_addr_split(const char *whole, char *raft, size_t raftlen, char *rpc,
    size_t rpclen);

#endif
