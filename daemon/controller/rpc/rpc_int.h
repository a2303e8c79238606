/* Shared by the RPC edge's files (rpc.c: dispatch and user requests,
 * rpc_agent.c: agent messages, rpc_nodes.c: nodes and logs). */
#ifndef COHORT_CONTROLLER_RPC_INT_H
#define COHORT_CONTROLLER_RPC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "proto/cohort.pb-c.h"
#include "daemon/controller/rpc/rpc.h"

struct conn;
struct job;
struct peer;

/* Queue env as the reply, to leave after the current commit (at once when
 * none is open); close_after closes the connection behind it. */
void rpc_send(struct rpc *rpc, struct conn *c,
    const Cohort__V1__Envelope *env, bool close_after);
/* The same by connection id, for replies that complete later. */
void rpc_send_to(struct rpc *rpc, uint64_t conn_id,
    const Cohort__V1__Envelope *env);
void rpc_error(struct rpc *rpc, struct conn *c, uint64_t req_id,
    enum err_code code, const char *text, bool close_after);
void rpc_error_to(struct rpc *rpc, uint64_t conn_id, uint64_t req_id,
    enum err_code code, const char *text);

/* For a reply that completes later: take the current request's timing
 * (rpc->cur, cleared), and put it back as current while that reply is
 * built (rpc_timing_swap returns what was current). */
struct rpc_timing rpc_timing_take(struct rpc *rpc);
struct rpc_timing rpc_timing_swap(struct rpc *rpc, struct rpc_timing t);
/* Whether who may see job's private data (environment values, command
 * line, script body, logs): its owner and admins, or anyone with
 * private_data = no. */
bool rpc_may_see_private(const struct rpc *rpc, const struct peer *who,
    const struct job *job);
/* Items a listing reply may hold: the request's limit (if set and not
 * 0) within the page size. At least 1. */
size_t rpc_page_max(const struct rpc *rpc, bool has_limit, uint32_t limit);
/* A listing page stops growing past this many bytes of items. */
#define RPC_PAGE_BYTES (4u * 1024 * 1024)

/* rpc_agent.c */
void rpc_register(struct rpc *, struct conn *, const Cohort__V1__Envelope *);
void rpc_heartbeat(struct rpc *, struct conn *, const Cohort__V1__Envelope *);
void rpc_task_exit(struct rpc *, struct conn *, const Cohort__V1__Envelope *);

/* rpc_nodes.c */
void rpc_list_nodes(struct rpc *, struct conn *,
    const Cohort__V1__Envelope *);
void rpc_get_node(struct rpc *, struct conn *, const Cohort__V1__Envelope *);
void rpc_logs(struct rpc *, struct conn *, const Cohort__V1__Envelope *);
void rpc_drain(struct rpc *, struct conn *, const Cohort__V1__Envelope *);
void rpc_resume(struct rpc *, struct conn *, const Cohort__V1__Envelope *);
void rpc_delete_node(struct rpc *, struct conn *,
    const Cohort__V1__Envelope *);
void rpc_events(struct rpc *, struct conn *, const Cohort__V1__Envelope *);

/* rpc_control.c */
void rpc_cancel(struct rpc *, struct conn *, const Cohort__V1__Envelope *);
void rpc_hold(struct rpc *, struct conn *, const Cohort__V1__Envelope *);
void rpc_requeue(struct rpc *, struct conn *, const Cohort__V1__Envelope *);
void rpc_update(struct rpc *, struct conn *, const Cohort__V1__Envelope *);
/* rpc_repl.c */
void rpc_not_leader(struct rpc *rpc, struct conn *c, uint64_t req_id);
void rpc_members(struct rpc *, struct conn *, const Cohort__V1__Envelope *);
void rpc_backup(struct rpc *, struct conn *, const Cohort__V1__Envelope *);
/* Free what rpc_backup holds (at shutdown). */
void rpc_backup_free(struct rpc *rpc);
/* rpc_steps.c */
void rpc_step_create(struct rpc *, struct conn *,
    const Cohort__V1__Envelope *);
void rpc_step_status(struct rpc *, struct conn *,
    const Cohort__V1__Envelope *);
void rpc_step_signal(struct rpc *, struct conn *,
    const Cohort__V1__Envelope *);
void rpc_list_steps(struct rpc *, struct conn *,
    const Cohort__V1__Envelope *);
void rpc_step_input(struct rpc *, struct conn *,
    const Cohort__V1__Envelope *);
/* rpc_alloc.c */
void rpc_alloc(struct rpc *, struct conn *, const Cohort__V1__Envelope *);
/* rpc_usage.c */
void rpc_usage(struct rpc *, struct conn *, const Cohort__V1__Envelope *);
struct jobs_filter;
/* The history filters of a listing (ListJobsRequest 6-9) into f, which
 * borrows lr's strings. 0, or -1 with why in text. */
int rpc_list_history(const Cohort__V1__ListJobsRequest *lr,
    struct jobs_filter *f, char *text, size_t len);

#endif
