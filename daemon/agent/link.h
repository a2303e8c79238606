/* A node's connection to the controller: mTLS over a libevent
 * bufferevent, Hello then Register (with the inventory, the health
 * verdict and every task the node knows), heartbeats on a timer (tasks,
 * health, XIDs, checkpoints, progress), requests from the controller
 * (launch, stop, signal, read log) handed to the owner, and task exits
 * sent until acknowledged. On any failure it reconnects with capped
 * exponential back-off and jitter; tasks are unaffected.
 *
 * What the link asks of its owner is a table of operations (struct
 * link_ops): cohort-agent is one link whose operations are the real
 * agent (agent.c, health.c; see main.c); cohort-simnodes is N links in
 * one event loop whose operations are simulated tasks
 * (tests/sim/simnode.c). */
#ifndef COHORT_AGENT_LINK_H
#define COHORT_AGENT_LINK_H

#include <sys/socket.h>
#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "daemon/agent/agent.h"
#include "lib/addrlist.h"
#include "lib/err.h"
#include "lib/inventory.h"

struct event_base;
struct link;
struct xid_event;

/* What the link tells its owner about itself. */
enum link_event {
	LINK_EV_CONNECTING,	/* a connection attempt started */
	LINK_EV_READY,		/* registered: requests may come */
	LINK_EV_DOWN,		/* the connection ended; a retry is armed */
};

/* How much a message matters, for an owner that logs its own way. */
enum link_log {
	LINK_LOG_INFO,		/* routine: registered, a request served */
	LINK_LOG_NOTICE,	/* the link went down, and why */
	LINK_LOG_WARN,		/* the controller refused or misbehaved */
};

/* The owner's side. Each function gets the arg given to link_create and
 * is called from the event loop; none may destroy the link. A NULL entry
 * means the owner has nothing of that kind (no health, no XIDs, ...) or,
 * for the requests, that the link answers as if there were nothing to do
 * (no tasks stopped or signalled, no log). */
struct link_ops {
	/* Required. The inventory for Register, borrowed until the next
	 * call; NULL with err: the link retries later. */
	const struct inventory *(*inventory)(void *arg, struct cerr *err);
	/* The health verdict, borrowed until the next call. */
	const struct node_health *(*health)(void *arg);
	/* Up to max XID events not yet reported; taken (not given again). */
	size_t (*take_xids)(void *arg, struct xid_event *out, size_t max);
	/* Required. Every task not yet acknowledged, malloc'd (the link
	 * frees it); NULL with *n = 0 when none. */
	struct task_report *(*tasks)(void *arg, size_t *n);
	/* As agent_checkpoints and agent_progress (agent.h). */
	struct ckpt_report *(*checkpoints)(void *arg, size_t *n);
	struct progress_report *(*progress)(void *arg, size_t *n);
	/* As agent_step_times (agent.h); may be NULL. */
	struct step_time *(*step_times)(void *arg, size_t *n);
	/* Required. As agent_launch: 0 (accepted) or -1 with err (sent
	 * back). */
	int (*launch)(void *arg, const struct launch *l, struct cerr *err);
	/* As agent_prepare_image, its answer through link_prepared; may be
	 * NULL (nothing to prepare: answered at once as ready). */
	int (*prepare)(void *arg, const struct launch *l, uint64_t token,
	    struct cerr *err);
	/* As agent_stop, agent_signal and agent_read_log: step NULL when
	 * the request names no job step. */
	void (*stop)(void *arg, uint64_t job_id, uint32_t restart,
	    const uint32_t *step);
	unsigned (*signal)(void *arg, uint64_t job_id, uint32_t restart,
	    const uint32_t *step, enum agent_scope scope, int sig);
	/* As agent_advise; may be NULL (advice after launch ignored). */
	int (*advise)(void *arg, uint64_t job_id, uint32_t restart,
	    uint32_t advice_s);
	ssize_t (*read_log)(void *arg, uint64_t job_id, uint32_t restart,
	    const uint32_t *step, unsigned rank, bool is_stderr,
	    uint64_t offset, void *buf, size_t max);
	/* As agent_write_stdin; may be NULL (every write: ENOENT). */
	ssize_t (*write_stdin)(void *arg, uint64_t job_id, uint32_t restart,
	    uint32_t step, unsigned rank, uint64_t offset, const void *data,
	    size_t len, bool eof);
	/* As agent_append_stdin and agent_step_window; may be NULL (every
	 * call: ENOENT). */
	ssize_t (*append_stdin)(void *arg, uint64_t job_id, uint32_t restart,
	    uint32_t step, unsigned rank, const void *data, size_t len);
	int (*step_window)(void *arg, uint64_t job_id, uint32_t restart,
	    uint32_t step, unsigned rank, unsigned rows, unsigned cols);
	/* Required. The controller recorded this task's exit (of job step
	 * *step; NULL: of the job's own tasks). */
	void (*exit_acked)(void *arg, uint64_t job_id, uint32_t restart,
	    const uint32_t *step, unsigned rank);
	/* May a connection attempt start now? false: asked again in 20 to
	 * 100 ms (the owner bounds handshakes in flight). */
	bool (*may_connect)(void *arg);
	/* The link's state changed. */
	void (*event)(void *arg, enum link_event ev);
	/* A message about this link (one line, no newline); NULL: log_info
	 * for INFO and NOTICE, log_warnx for WARN. */
	void (*log)(void *arg, enum link_log level, const char *text);
};

/* Where and who: every pointer is borrowed and must outlive the link. */
struct link_params {
	/* The controller's replicas, tried in turn to find the leader
	 * (lib/addrlist.h); each one's certificate must name it. NULL:
	 * host and port alone. */
	const struct addrlist *controllers;
	const char *host;		/* the controller; its certificate
					 * must name it */
	uint16_t port;
	/* Optional: the controller's address resolved once by the caller
	 * (many links); NULL: host is resolved at each attempt. */
	const struct sockaddr *addr;
	socklen_t addrlen;
	const char *name;		/* this node, in Register */
	const char *address;		/* how other nodes reach it */
	bool spare;
	const char *software;		/* Hello: "cohort-agent 1.2" */
	/* The heartbeat interval when the controller names none, or
	 * always with heartbeat_fixed. */
	uint64_t heartbeat_ms;
	bool heartbeat_fixed;
	/* Optional: this link's own certificate and key (many nodes on one
	 * SSL_CTX); NULL: the context's. Borrowed. */
	X509 *cert;
	EVP_PKEY *key;
	/* Output a controller has not read, at most: more drops the
	 * connection. 0: LINK_MAX_QUEUED. */
	size_t max_queued;
	/* From the start of an attempt to the RegisterReply, at most;
	 * then the attempt is given up. 0: LINK_HANDSHAKE_MS. */
	uint64_t handshake_ms;
};

#define LINK_MAX_QUEUED (64u * 1024 * 1024)
/* TCP, TLS, Hello and Register together: a controller that accepts but
 * never answers is left for another try. */
#define LINK_HANDSHAKE_MS 30000

/* A link that is not connected yet (see link_start). params (copied,
 * its pointers borrowed), ctx, ops and arg must outlive it. NULL with
 * err on failure. */
struct link *link_create(struct event_base *base,
    const struct link_params *params, SSL_CTX *ctx,
    const struct link_ops *ops, void *arg, struct cerr *err);
/* Closes the connection; calls nothing of the owner. Accepts NULL. */
void link_destroy(struct link *l);

/* Connect after delay_ms (0: now), with the back-off started afresh. A
 * link already connecting or connected is left as it is. */
void link_start(struct link *l, uint64_t delay_ms);
/* Drop the connection and stay disconnected until link_start; calls
 * nothing of the owner (a simulated crash). */
void link_stop(struct link *l);
bool link_ready(const struct link *l);

/* After the TLS store was reloaded (SIGHUP): verify the controller's
 * certificate on the open connection again; one that no longer verifies
 * (revoked) is dropped, and reconnecting goes through the new store. */
void link_recheck(struct link *l);

/* The choices of the walk through the replicas, pure for the tests.
 * link_next_addr: after a failed attempt, the address to try next in
 * *next; true when the round through the list goes on (try soon), false
 * when a round ended (back off first). link_follow: a replica answered
 * ERR_NOT_LEADER naming leader (NULL or "": none); 0 when the walk goes
 * there next (*listed: whether it is one of the configured addresses),
 * -1 with err: ERR_NOT_FOUND (none named), ERR_PROTOCOL (not a
 * HOST:PORT), ERR_LIMIT (too many redirects in this round). */
bool link_next_addr(struct addrlist_walk *w, struct addrlist_addr *next);
int link_follow(struct addrlist_walk *w, const char *leader, bool *listed,
    struct cerr *err);

/* agent_exit_cb for agent_create (arg: the link): report an ended task
 * now if registered (the next registration carries it otherwise). */
void link_task_exited(const struct task_report *r, void *arg);

/* The changed callback for health_create: a heartbeat now. */
void link_health_changed(const struct node_health *h, void *arg);
/* A callback for agent_set_prepared_cb (arg: the link): answer the
 * controller's preparation request that token stands for. */
void link_prepared(void *arg, uint64_t token, const struct agent_prepared *r);
/* A callback for agent_set_checkpoint_cb: report a new checkpoint now. */
void link_checkpoint_seen(void *arg);

#endif
