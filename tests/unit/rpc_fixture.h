/* The controller's RPC edge (daemon/controller/rpc/rpc*.c) without a
 * socket: rpc_dispatch over the in-memory domain (tests/domain), its
 * peers fake connections. The seam is the linker's: the server's
 * connection calls (server_conn_peer, server_conn_send_frame, ...) are
 * replaced with --wrap by this fixture's, which name the peer and keep
 * the replies, so the library under test is the daemon's own and no
 * production code knows about tests. The clock (clock_now_ms) is the
 * domain's virtual one; repl_leader_rpc is answered here, so that a
 * replica that does not lead can be played without Raft.
 *
 * A request goes through frame_decode, as the server's read path does,
 * then rpc_dispatch; then the commit (the end of the loop round), after
 * which the replies queued behind it are sent; log reads the domain
 * asked of an agent are answered at once. */
#ifndef COHORT_TESTS_RPC_FIXTURE_H
#define COHORT_TESTS_RPC_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/controller/rpc/rpc.h"
#include "lib/job.h"
#include "proto/cohort.pb-c.h"
#include "tests/domain/domain.h"

#define RPCFIX_CONNS 16
#define RPCFIX_REPLIES 8

/* A peer's connection, as the server would hold it. rpc*.c see struct
 * conn only through server.h's functions, so the fixture defines its
 * own (server.c's is private to it, in server_int.h). */
struct conn {
	uint64_t id;
	struct peer peer;
	bool hello;		/* Hello done */
	bool registered;	/* server_conn_set_registered */
	bool closed;		/* server_conn_close */
	unsigned owed;		/* server_conn_reserve minus _release */
	size_t owed_bytes;
	Cohort__V1__Envelope *replies[RPCFIX_REPLIES];
	size_t nreplies;
};

/* The world each test starts from: two queues, three nodes, three jobs
 * of alice's and a running step.
 *   ateam: users alice, bob, carol; admins carol.
 *   bteam: users alice, bob; admins dave.
 *   node01, node02: 4 GPUs each; node03 was known and is DOWN.
 *   run:     alice's job in ateam, RUNNING on one GPU, with step 0
 *            RUNNING (started through StepCreate with its credential);
 *   pending: alice's job in ateam, PENDING (no pass runs unless a
 *            test asks);
 *   bjob:    alice's job in bteam, held.
 * run_node is the node holding run's rank 0; other_node the other. */
struct rpcfix {
	struct domain d;
	struct queues *qs;
	struct agentcmd *ac;
	struct stepcred *sc;
	struct rpc rpc;
	struct conn conns[RPCFIX_CONNS];
	size_t nconns;
	uint64_t next_id;
	const char *leader;	/* repl_leader_rpc's answer; NULL: none */
	size_t max_frame;	/* server_max_frame's */
	uint64_t run, pending, bjob;
	uint32_t run_attempt;
	uint32_t step;
	char run_node[PEER_NAME_MAX + 1];
	char other_node[PEER_NAME_MAX + 1];
	size_t log_reads;	/* answered by the fixture */
};

/* Open the world above (private_data: env, argv, scripts and logs for
 * the owner and admins only). Fails the test on error. */
void rpcfix_open(struct rpcfix *f);
/* Every reply freed, every pending wait answered, the domain closed. */
void rpcfix_close(struct rpcfix *f);

/* A connection of name with role, Hello done or not. An agent's is its
 * node's connection (the one it registered on; the same one again while
 * open), others' a new one. */
struct conn *rpcfix_conn(struct rpcfix *f, const char *name, enum role role,
    bool hello);

/* Send env on c (packed, then decoded as the server does), commit, and
 * return c's first reply to it, or NULL when none came. The replies of
 * an earlier call on c are freed. */
const Cohort__V1__Envelope *rpcfix_call(struct rpcfix *f, struct conn *c,
    const Cohort__V1__Envelope *env);
/* The same with the frame's body as raw bytes; NULL also when they do
 * not decode (*undecodable set). */
const Cohort__V1__Envelope *rpcfix_call_raw(struct rpcfix *f,
    struct conn *c, const uint8_t *body, size_t len, bool *undecodable);

/* What a refused request must leave as it was, as text: every job (state,
 * queue, priority, time limit, hold, name, attempt, restarts), every
 * node (state, drain), every step of run, the commands sent to agents
 * and the jobs' events in the store. */
void rpcfix_state(struct rpcfix *f, char *buf, size_t len);

/* The credential of alice's job run (its current attempt). */
void rpcfix_cred(struct rpcfix *f, uint8_t out[32]);

#endif
