/* Suspect nodes: the failures attributed to each node across jobs and
 * users, and the verdict that a node fails whatever lands on it (a "black
 * hole": a broken mount or library) or keeps failing after a repair (a
 * "lemon").
 *
 * Evidence comes in two classes. Hardware evidence (an XID, a FAILED
 * health verdict, the node going DOWN, tasks that would not stop) counts
 * as it happens. An early failure (a task failing within the early-fail
 * window of its run's start) only waits: it counts against the node once
 * the same job later runs fine elsewhere (completes, or outlasts the
 * window on nodes that do not include this one). A job that fails
 * everywhere is its owner's bug: when it ends without running fine, its
 * early failures are dropped and count against no node.
 *
 * A node crosses its threshold with early_jobs distinct jobs confirmed
 * within early_period, or with hardware_failures hardware failures within
 * hardware_period. An admin's resume clears the suspicion and the early
 * evidence; hardware evidence is kept across it, so that a node repaired
 * and resumed that fails again within the period is caught (a lemon).
 * An exempt node is scored but never reported as crossing.
 *
 * Domain code: no clock (now comes in), no libevent, SQLite or protobuf.
 * Each change is written (store.h, in the open transaction) before memory
 * changes, so a controller restart keeps every node's evidence. */
#ifndef COHORT_CONTROLLER_SUSPECT_H
#define COHORT_CONTROLLER_SUSPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/job.h"

struct store;
struct txq;
struct suspect;

/* Evidence kept per node; the oldest goes first. */
#define SUSPECT_EVIDENCE_MAX 16
#define SUSPECT_DETAIL_MAX 95
#define SUSPECT_REASON_MAX 479
#define SUSPECT_TEXT_MAX 767
/* The prefix of every reason this module gives a drain, and its actor. */
#define SUSPECT_PREFIX "suspect:"
#define SUSPECT_ACTOR "suspect"

enum suspect_kind {
	SUSPECT_EARLY = 0,	/* a job failed early here, ran fine elsewhere */
	SUSPECT_XID,		/* a fail-job XID */
	SUSPECT_HEALTH,		/* a FAILED verdict (node or GPU) */
	SUSPECT_DOWN,		/* heartbeats stopped */
	SUSPECT_STOP,		/* tasks did not stop within stop_timeout */
	SUSPECT_SLOW,		/* a rank here named a straggler: scored and
				 * avoided by placement, never a drain */
	SUSPECT_KINDS
};

struct suspect_opts {
	/* Drain a node that crosses a threshold; off: score only. */
	bool drain;
	/* A task failing within this long of its run's start failed
	 * early ([controller] early_fail_window); 0: no early evidence. */
	int64_t early_fail_ms;
	uint32_t early_jobs;		/* distinct jobs; 0: off */
	/* ... of at least this many distinct users: one user's jobs that
	 * fail their first try anywhere (or that fail on purpose) never
	 * drain a node alone. */
	uint32_t early_users;
	int64_t early_period_ms;
	uint32_t hardware_failures;	/* 0: off */
	int64_t hardware_period_ms;
	/* How long an early failure waits for its job to run fine
	 * elsewhere before it is forgotten. */
	int64_t confirm_ms;
	/* Placement: nodes with evidence this recent (confirmed or
	 * waiting) come last for restarts and for gangs of at least
	 * large_gang_nodes nodes. */
	int64_t recent_ms;
	uint32_t large_gang_nodes;
};

struct suspect_evidence {
	uint32_t seq;			/* per node, increasing */
	int64_t time_ms;
	enum suspect_kind kind;
	uint64_t job_id;		/* 0: none */
	char user[PEER_NAME_MAX + 1];	/* the job's owner, or "" */
	/* Hardware: always. Early: once its job ran fine elsewhere. */
	bool confirmed;
	char detail[SUSPECT_DETAIL_MAX + 1];
};

struct suspect_node {
	char name[PEER_NAME_MAX + 1];
	bool exempt;			/* never reported as crossing */
	int64_t cleared_ms;		/* the last admin resume; 0: never */
	/* "suspect: ..." from the crossing until a resume; "" else. */
	char reason[SUSPECT_REASON_MAX + 1];
	int64_t drained_ms;		/* when it crossed */
	uint32_t seq;			/* the next evidence's */
	size_t nev;
	struct suspect_evidence ev[SUSPECT_EVIDENCE_MAX];	/* oldest first */
	/* The evidence as one line, newest first (suspect_describe),
	 * kept current with it. */
	char text[SUSPECT_TEXT_MAX + 1];
};

/* Defaults: drain on; 3 jobs within 1 h; 2 hardware failures within
 * 72 h; early failures wait 24 h; placement looks back 1 h and treats
 * gangs of 16 nodes or more as large; early_fail_ms 60 s. */
void suspect_opts_default(struct suspect_opts *o);
const char *suspect_kind_name(enum suspect_kind kind);

/* Load every node's suspicion and evidence from st. NULL with err. */
struct suspect *suspect_create(struct store *st, struct txq *q,
    const struct suspect_opts *o, struct cerr *err);
void suspect_destroy(struct suspect *s);
const struct suspect_opts *suspect_get_opts(const struct suspect *s);
void suspect_set_opts(struct suspect *s, const struct suspect_opts *o);

/* A hardware failure of kind on node (job_id 0: none). Returns 1 when
 * the node crossed its threshold now (reason set, reason_out filled with
 * it), 0 when not, -1 with err when it could not be recorded. */
int suspect_hardware(struct suspect *s, const char *node,
    enum suspect_kind kind, uint64_t job_id, const char *detail,
    int64_t now_ms, char *reason_out, size_t len, struct cerr *err);
/* Job job_id of user failed early on node: kept, not counted, until the
 * job runs fine elsewhere (suspect_job_ran). 0 or -1 with err. */
int suspect_early(struct suspect *s, const char *node, uint64_t job_id,
    const char *user, const char *detail, int64_t now_ms, struct cerr *err);
/* Job job_id ran fine (completed, or outlasted the early-fail window) on
 * nodes[0..n): its early failures on those nodes are dropped, the rest
 * confirmed. crossed(arg, node, reason) runs for each node that crossed
 * its threshold. 0, or -1 when some node's change could not be
 * written (logged; the others went on). */
typedef void (*suspect_crossed_fn)(void *arg, const char *node,
    const char *reason);
int suspect_job_ran(struct suspect *s, uint64_t job_id,
    const char *const *nodes, size_t n, int64_t now_ms,
    suspect_crossed_fn crossed, void *arg);
/* Job job_id ended without running fine: its early failures count
 * against no node. */
void suspect_job_lost(struct suspect *s, uint64_t job_id, int64_t now_ms);
/* Up to max distinct jobs with early failures still waiting, into ids;
 * how many. */
size_t suspect_waiting_jobs(const struct suspect *s, uint64_t *ids,
    size_t max);
/* Forget early failures that waited longer than confirm_ms. */
void suspect_expire(struct suspect *s, int64_t now_ms);

/* An admin resumed node: the suspicion and early evidence go. 0 or -1. */
int suspect_resume(struct suspect *s, const char *node, int64_t now_ms,
    struct cerr *err);
/* Exempt node from drains (on), or no longer. 0 or -1. */
int suspect_exempt(struct suspect *s, const char *node, bool on,
    int64_t now_ms, struct cerr *err);

/* The node's record (borrowed), or NULL when it has none. */
const struct suspect_node *suspect_get(const struct suspect *s,
    const char *node);
/* Every record, by name (borrowed, *n of them). */
struct suspect_node *const *suspect_all(const struct suspect *s, size_t *n);
/* Evidence that counts now: confirmed early failures (distinct jobs)
 * within early_period and hardware failures within hardware_period,
 * both since the last resume. */
uint32_t suspect_score(const struct suspect *s, const char *node,
    int64_t now_ms);
/* Any evidence (confirmed or waiting) within recent_ms and since the
 * last resume? (An exempt node too: exemption stops drains, not the
 * preference of placement.) */
bool suspect_recent(const struct suspect *s, const char *node,
    int64_t now_ms);
/* Did job_id fail early on node, still waiting to be confirmed? */
bool suspect_failed_here(const struct suspect *s, uint64_t job_id,
    const char *node);
/* The node's evidence as one line ("early job 12 (alice) at
 * 2026-01-02T03:04:05Z, xid at ..."), newest first, into buf. */
void suspect_describe(const struct suspect *s, const char *node,
    char *buf, size_t len);
/* Nodes that crossed a threshold since the controller started. */
unsigned long suspect_crossings(const struct suspect *s);

#endif
