/* The event layer under the controller's domain: it owns the timers and
 * the clock, runs cluster_pass when the domain asks for one (paced) and
 * cluster_tick on a timer, and fills the domain's outbox with agentcmd.c
 * (commands to agents), mailer.c (mail) and its own pass_wanted. */
#ifndef COHORT_CONTROLLER_DRIVER_H
#define COHORT_CONTROLLER_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/controller/domain/outbox.h"
#include "lib/err.h"
#include "lib/histogram.h"

struct event_base;
struct agentcmd;
struct cluster;
struct driver;
struct mailer;

struct driver_stats {
	uint64_t last_pass_us;		/* duration of the latest pass */
	uint64_t total_pass_us;
	struct histogram pass;		/* every pass's duration, seconds */
};

struct driver *driver_create(struct event_base *base, struct agentcmd *ac,
    int64_t tick_ms, struct cerr *err);
/* The outbox to give cluster_create: valid as long as the driver. */
void driver_outbox(struct driver *d, struct outbox *out);
/* Where the outbox's mail goes (borrowed; it outlives the driver's
 * use); NULL, the default: mail is dropped. */
void driver_set_mailer(struct driver *d, struct mailer *m);
/* Who is told that a job step ended (rpc_steps.c's waiting status
 * requests); NULL, the default: nobody. */
typedef void (*driver_step_ended_fn)(void *arg, uint64_t job_id,
    uint32_t step);
void driver_on_step_ended(struct driver *d, driver_step_ended_fn fn,
    void *arg);
/* Start driving cl: its pass (if one was asked for) and the tick. */
int driver_start(struct driver *d, struct cluster *cl, struct cerr *err);
/* hold: no pass until released (what was asked for meanwhile runs at
 * the release); the tick goes on. A new leader holds its first pass
 * until its agents have reported their tasks. */
void driver_hold(struct driver *d, bool hold);
/* Accepts NULL. */
void driver_destroy(struct driver *d);
void driver_stats(const struct driver *d, struct driver_stats *st);

#endif
