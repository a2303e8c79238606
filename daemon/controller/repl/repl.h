/* Replication of the controller's database (docs/REPLICATION.md):
 * SQLite on dqlite's VFS, each commit's WAL frames one libraft entry, with
 * libuv run inside the libevent loop, in the same thread. Only cohortd's
 * main.c and store.c (through its commit hook) use it; without a
 * [replication] section none of it exists.
 *
 * A replica is a follower until raft elects it; then repl runs a barrier
 * (so that every entry of earlier terms is applied) and tells main, which
 * opens the store on the VFS and starts the controller. Losing the
 * leadership is told too: main re-executes the process, which comes back
 * as a follower with nothing of the old term in memory. */
#ifndef COHORT_CONTROLLER_REPL_H
#define COHORT_CONTROLLER_REPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "lib/err.h"

struct event_base;
struct repl;

/* The database's name inside the VFS. */
#define REPL_DB "cohort.db"
/* "RAFTHOST:PORT/RPCHOST:PORT", as stored in the Raft configuration. */
#define REPL_ADDR_MAX 300

struct repl_opts {
	uint64_t id;
	const char *rpc_address;	/* HOST:PORT clients reach us at */
	const char *raft_address;	/* HOST:PORT replicas reach us at */
	const char *data_dir;
	unsigned election_ms;
	unsigned heartbeat_ms;
	unsigned snapshot_threshold;
	SSL_CTX *srv_ctx;		/* borrowed: the controller's */
	SSL_CTX *cli_ctx;		/* borrowed: to reach the others */
};

/* leader true: this replica leads and every earlier entry is applied;
 * false: it led and no longer does (main never returns from that). */
typedef void (*repl_role_cb)(void *arg, bool leader);

/* Register the VFS, create the log in data_dir (made 0700 if missing)
 * and start raft; with bootstrap and an empty data_dir, as a new cluster
 * of this replica alone. NULL with err set. */
struct repl *repl_create(struct event_base *base, const struct repl_opts *o,
    bool bootstrap, repl_role_cb cb, void *arg, struct cerr *err);
/* Whether data_dir held a Raft log when repl_create ran. */
bool repl_had_state(const struct repl *r);
/* The VFS name to open REPL_DB with (sqlite3_open_v2). */
const char *repl_vfs(const struct repl *r);

/* store.c's commit hook: replicate the commit just made on the VFS and
 * wait until a quorum has it and it is applied here. 0; a failure (the
 * leadership lost meanwhile) calls the role callback and does not
 * return. */
int repl_replicate(void *repl, struct cerr *err);

bool repl_is_leader(const struct repl *r);
/* The leader's RPC address into buf, or NULL when none is known (an
 * election) or it is this replica. */
const char *repl_leader_rpc(struct repl *r, char *buf, size_t len);

/* Counters for /metrics and the benchmarks. */
struct repl_stats {
	unsigned long entries;		/* commits replicated */
	unsigned long pages;		/* WAL pages in them */
	uint64_t wait_us;		/* commit → applied, all together */
	unsigned long snapshots_deferred;	/* repl_log_settled said no */
	unsigned long raft_refused;	/* Raft port: not a member's address */
	uint64_t term;
	uint64_t commit_index;
};
void repl_stats(struct repl *r, struct repl_stats *st);

/* Membership (cohort admin members, cohortd --join). */
enum repl_role { REPL_VOTER, REPL_STANDBY, REPL_SPARE };
struct repl_member {
	uint64_t id;
	char rpc[REPL_ADDR_MAX];
	char raft[REPL_ADDR_MAX];
	enum repl_role role;
	bool leader;
};
/* Every member of the current configuration into *out (the caller
 * frees). 0, or -1 (ENOMEM). */
int repl_members(struct repl *r, struct repl_member **out, size_t *n);
uint64_t repl_term(struct repl *r);
/* After a reload of the CA and CRL (tls_ctx_reload_both): close the
 * Raft streams whose peer's certificate is no longer valid (revoked),
 * each logged. Returns how many; raft reconnects, and the new handshake
 * refuses the peer. */
unsigned repl_drop_revoked(struct repl *r);
uint64_t repl_commit_index(struct repl *r);
const char *repl_role_name(enum repl_role role);

enum repl_op { REPL_ADD, REPL_REMOVE, REPL_TRANSFER };
/* done(arg, err) once the change is committed (REPL_ADD: as a spare; the
 * promotion to voter follows by itself once it has caught up), or has
 * failed (err->code set). 0 when started, -1 with err when refused
 * at once (not the leader, a change already in progress, bad id). */
int repl_change(struct repl *r, enum repl_op op, uint64_t id,
    const char *rpc, const char *raft,
    void (*done)(void *arg, const struct cerr *err), void *arg,
    struct cerr *err);

#endif
