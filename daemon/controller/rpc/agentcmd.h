/* Commands from the controller to agents (launch, stop, signal, read a
 * log), and the matching of their replies. This is an RPC edge: it builds
 * the protobuf requests from the project's structs and implements the
 * domain's outbox (outbox.h), so the domain never sees protobuf. A
 * command whose agent disconnects, or does not answer within the
 * timeout, completes with ERR_UNAVAILABLE. */
#ifndef COHORT_CONTROLLER_AGENTCMD_H
#define COHORT_CONTROLLER_AGENTCMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/job.h"
#include "daemon/controller/domain/outbox.h"
#include "proto/cohort.pb-c.h"

struct agentcmd;

/* How a command reaches the agent on conn_id: 0, or -1 when it is not
 * connected (or the message could not be queued). */
typedef int (*agentcmd_send_fn)(void *ctx, uint64_t conn_id,
    Cohort__V1__Envelope *env);

struct agentcmd *agentcmd_create(agentcmd_send_fn send, void *ctx,
    int64_t timeout_ms);
/* Completes every pending command with ERR_UNAVAILABLE; accepts NULL. */
void agentcmd_destroy(struct agentcmd *ac);

/* The outbox_ops commands (outbox.h). A launch or log read is tracked
 * before it is sent, so that its answer always finds it; when the send
 * fails it is forgotten again and done never runs. */
int agentcmd_launch(struct agentcmd *ac, uint64_t conn_id, const struct launch_cmd *l,
    int64_t now_ms, outbox_done done, void *arg);
/* Only the image of l's job prepared (l->step NULL); never expires: it
 * ends with the answer or the connection. */
int agentcmd_prepare(struct agentcmd *ac, uint64_t conn_id,
    const struct launch_cmd *l, int64_t now_ms, outbox_prepared done,
    void *arg);
int agentcmd_stop(struct agentcmd *ac, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, const char *reason);
int agentcmd_signal(struct agentcmd *ac, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, int sig, int scope);
int agentcmd_advise(struct agentcmd *ac, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, uint32_t advice_s);
int agentcmd_stop_step(struct agentcmd *ac, uint64_t conn_id,
    uint64_t job_id, uint32_t attempt, uint32_t step, const char *reason);
int agentcmd_signal_step(struct agentcmd *ac, uint64_t conn_id,
    uint64_t job_id, uint32_t attempt, uint32_t step, int sig);
int agentcmd_read_log(struct agentcmd *ac, uint64_t conn_id, uint64_t job_id,
    uint32_t attempt, int64_t step, unsigned rank, bool is_stderr,
    uint64_t offset, uint32_t max, int64_t now_ms, outbox_log_done done,
    void *arg);
/* Tracked as a log read: done gets the bytes the pipe took. */
int agentcmd_write_stdin(struct agentcmd *ac, uint64_t conn_id,
    uint64_t job_id, uint32_t attempt, uint32_t step, unsigned rank,
    const struct step_input *in, int64_t now_ms, outbox_input_done done,
    void *arg);
/* The step credentials a launch of a job's own tasks carries
 * (stepcred.h); NULL (the default): none, and srun cannot start steps. */
struct stepcred;
void agentcmd_set_stepcred(struct agentcmd *ac, struct stepcred *sc);
/* Commands waiting for an answer (tests, metrics). */
size_t agentcmd_pending(const struct agentcmd *ac);

/* A message from an agent: true when it answered one of our commands
 * (and was consumed). */
bool agentcmd_on_reply(struct agentcmd *ac, uint64_t conn_id,
    const Cohort__V1__Envelope *env);
/* The connection closed: its pending commands fail. */
void agentcmd_conn_closed(struct agentcmd *ac, uint64_t conn_id);
/* Fail commands older than the timeout. */
void agentcmd_expire(struct agentcmd *ac, int64_t now_ms);

#endif
