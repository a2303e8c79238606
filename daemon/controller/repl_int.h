/* Between repl.c and its network (repl_net.c). */
#ifndef COHORT_CONTROLLER_REPL_INT_H
#define COHORT_CONTROLLER_REPL_INT_H

#include <openssl/ssl.h>
#include <raft.h>
#include <raft/uv.h>
#include <uv.h>

#include "repl.h"

/* A raft_uv_transport over TLS with the controllers' certificates. 0 or
 * -1 (ENOMEM). */
int repl_net_init(struct raft_uv_transport *t, uv_loop_t *loop, SSL_CTX *srv,
    SSL_CTX *cli);
void repl_net_free(struct raft_uv_transport *t);
/* "RAFT/RPC" → its parts (either may be NULL). 0 or -1. */
int repl_addr_split(const char *whole, char *raft, size_t raftlen, char *rpc,
    size_t rpclen);

#endif
