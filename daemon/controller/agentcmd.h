/* Commands from the controller to agents (launch, stop, read a log), and
 * the matching of their replies. This is an RPC edge: it builds the
 * protobuf requests from the project's structs; its callers (cluster.c)
 * never see protobuf. A command whose agent disconnects, or does not
 * answer within the timeout, completes with ERR_UNAVAILABLE. */
#ifndef COHORT_CONTROLLER_AGENTCMD_H
#define COHORT_CONTROLLER_AGENTCMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/job.h"
#include "proto/cohort.pb-c.h"

struct server;
struct agentcmd;

/* err is NULL on success. */
typedef void (*agentcmd_done)(void *arg, const struct cerr *err);
typedef void (*agentcmd_log_done)(void *arg, const uint8_t *data,
    size_t len, const struct cerr *err);

struct launch_cmd {
	const struct job *job;		/* spec, user, attempt, restarts */
	const struct placement *place;	/* this node's share */
	const char *const *nodelist;	/* rank order */
	size_t nnodes;
	const char *master_addr;
	unsigned master_port;
};

struct agentcmd *agentcmd_create(struct server *srv, int64_t timeout_ms);
/* Completes every pending command with ERR_UNAVAILABLE; accepts NULL. */
void agentcmd_destroy(struct agentcmd *ac);

int agentcmd_launch(struct agentcmd *ac, uint64_t conn_id,
    const struct launch_cmd *l, int64_t now_ms, agentcmd_done cb,
    void *arg);
/* Fire and forget: a stop is idempotent and is re-sent on reconcile. */
int agentcmd_stop(struct agentcmd *ac, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, const char *reason);
/* Fire and forget: send sig to the tasks of (job, attempt). */
int agentcmd_signal(struct agentcmd *ac, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, int sig);
int agentcmd_read_log(struct agentcmd *ac, uint64_t conn_id,
    uint64_t job_id, uint32_t attempt, unsigned rank, uint64_t offset,
    uint32_t max, int64_t now_ms, agentcmd_log_done cb, void *arg);

/* A message from an agent: true when it answered one of our commands
 * (and was consumed). */
bool agentcmd_on_reply(struct agentcmd *ac, uint64_t conn_id,
    const Cohort__V1__Envelope *env);
/* The connection closed: its pending commands fail. */
void agentcmd_conn_closed(struct agentcmd *ac, uint64_t conn_id);
/* Fail commands older than the timeout. */
void agentcmd_expire(struct agentcmd *ac, int64_t now_ms);

#endif
