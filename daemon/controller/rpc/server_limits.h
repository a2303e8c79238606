/* Default connection limits, shared by server.c and the configuration
 * (which must not pull in OpenSSL or protobuf headers for them). */
#ifndef COHORT_CONTROLLER_SERVER_LIMITS_H
#define COHORT_CONTROLLER_SERVER_LIMITS_H

#define SERVER_DEFAULT_MAX_HANDSHAKES 256
#define SERVER_DEFAULT_HANDSHAKES_PER_SOURCE 64
#define SERVER_DEFAULT_PER_IDENTITY 32
/* A peer that reads none of its replies this long is dropped (or after
 * idle_timeout, if shorter). */
#define SERVER_STALL_TIMEOUT_MS 60000
#define SERVER_DEFAULT_MAX_INFLIGHT 64
#define SERVER_DEFAULT_HANDSHAKE_TIMEOUT_MS 5000
#define SERVER_DEFAULT_HELLO_TIMEOUT_MS 15000
#define SERVER_DEFAULT_IDLE_TIMEOUT_MS (15 * 60 * 1000)
/* Output buffered or owed to one user's (admin's) connections together,
 * and to every person's: beyond them those connections are not read. */
#define SERVER_DEFAULT_OUTPUT_PER_USER (32u * 1024 * 1024)
#define SERVER_DEFAULT_OUTPUT_TOTAL (512u * 1024 * 1024)
/* Connections one agent identity may hold: its connection and the one it
 * reconnects on before the old one is seen to be gone. */
#define SERVER_AGENT_CONNS_PER_NODE 2
/* Agent connections beyond the nodes known (or agent_reserve): a few new
 * nodes registering at once with accept_unknown_nodes. */
#define SERVER_AGENT_SLACK 16

#endif
