/* What one user may ask of the controller: a cap on the jobs they have
 * waiting (pending or restarting) and a submit rate (a token bucket per
 * user). jobs.c keeps the pending counts up to date at every state
 * change, so a submit checks its limit in O(log users), never by a scan.
 * Pure bookkeeping: no I/O, the caller passes the time. */
#ifndef COHORT_CONTROLLER_QUOTA_H
#define COHORT_CONTROLLER_QUOTA_H

#include <stdint.h>

#include "lib/err.h"

struct quota;

struct quota_opts {
	uint32_t max_pending;	/* jobs waiting per user; 0: no limit */
	uint32_t rate;		/* submits per second per user; 0: no limit */
	uint32_t burst;		/* the bucket's size (>= 1 when rate > 0) */
};

struct quota_stats {
	uint64_t refused_pending;	/* submits refused: max_pending */
	uint64_t refused_rate;		/* submits refused: rate */
};

/* NULL on ENOMEM. */
struct quota *quota_create(const struct quota_opts *o);
/* New limits (SIGHUP): counts stay; each bucket is cut to the new burst,
 * and filled when there was no rate before. */
void quota_set_opts(struct quota *q, const struct quota_opts *o);
void quota_destroy(struct quota *q);

/* May user submit one more job at now_ms? 0, or -1 with err ERR_LIMIT
 * (a text naming the user, the count or rate and the limit; the refusal
 * is counted) or ERR_INTERNAL (ENOMEM for a user not seen before).
 * Takes nothing: call quota_submit_take once the submit is recorded. */
int quota_submit_check(struct quota *q, const char *user, int64_t now_ms,
    struct cerr *err);
/* A submit by user was accepted at now_ms: one token less (the entry
 * exists after a successful quota_submit_check). */
void quota_submit_take(struct quota *q, const char *user, int64_t now_ms);

/* user's waiting jobs changed by delta (+1 or -1; never below 0). 0, or
 * -1 (ENOMEM, only for a user not seen before). */
int quota_pending_add(struct quota *q, const char *user, int delta);
/* user's waiting jobs as counted. */
uint32_t quota_pending(const struct quota *q, const char *user);
/* Forget every pending count (the job table is being reloaded); buckets
 * and statistics stay. */
void quota_pending_reset(struct quota *q);

void quota_stats(const struct quota *q, struct quota_stats *st);

#endif
