/* The agent's connection to the controller: mTLS over a libevent
 * bufferevent, Hello then Register (with the inventory, the health
 * verdict and every task the agent knows), heartbeats on a timer (tasks,
 * health, XIDs, checkpoints, progress), requests from the controller
 * (launch, stop, signal, read log) handed to agent.c, and task exits sent
 * until acknowledged. On any failure it reconnects with capped exponential
 * back-off and jitter; tasks are unaffected. */
#ifndef COHORT_AGENT_LINK_H
#define COHORT_AGENT_LINK_H

#include <openssl/ssl.h>

#include "daemon/agent/agent.h"
#include "lib/err.h"
#include "lib/inventory.h"

struct event_base;
struct agent_config;
struct link;
struct health;

/* Start connecting. cfg, ctx and inv are borrowed and must outlive the
 * link; the agent is set later with link_set_agent. */
struct link *link_create(struct event_base *base,
    const struct agent_config *cfg, SSL_CTX *ctx,
    const struct inventory *inv, struct cerr *err);
void link_set_agent(struct link *l, struct agent *a);
/* Report hl's verdict and XIDs (set before link_set_agent). */
void link_set_health(struct link *l, struct health *hl);
/* After the TLS store was reloaded (SIGHUP): verify the controller's
 * certificate on the open connection again; one that no longer verifies
 * (revoked) is dropped, and reconnecting goes through the new store. */
void link_recheck(struct link *l);
void link_destroy(struct link *l);

/* agent_exit_cb for agent_create: report an ended task now if connected
 * (the registration carries it otherwise). */
void link_task_exited(const struct task_report *r, void *arg);

/* The changed callback for health_create: a heartbeat now. */
void link_health_changed(const struct node_health *h, void *arg);
/* A callback for agent_set_checkpoint_cb: report a new checkpoint now. */
void link_checkpoint_seen(void *arg);

#endif
