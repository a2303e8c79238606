/* Slow ranks (fail-slow): a rank may write "STEP COMPUTE_MS" to its
 * $COHORT_STEP_FILE; the agents report each rank's latest, and this
 * file compares a gang's ranks. A rank whose median compute time over
 * its last `window` reports is above `factor` times the median of its
 * peers' medians, for `windows` windows in a row, is a straggler: an
 * event "straggler" naming job, rank, node and evidence, a count on
 * /metrics, a line in cohort show; with --on-straggler=replace its
 * node's ranks move at the job's next checkpoint (the evacuation of
 * drain --now), the other nodes kept. A slowdown of every rank moves
 * the peers' median with it and flags nobody.
 *
 * Domain code like cluster.h: no clock, `now` comes in with every call.
 * What it keeps is memory only: the events keep the findings across a
 * controller restart. */
#ifndef COHORT_CONTROLLER_STRAGGLER_H
#define COHORT_CONTROLLER_STRAGGLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/job.h"

struct cluster;

/* [straggler] in cohortd.conf; 0 in a field: its default. */
struct straggler_opts {
	uint32_t window;	/* reports per rank per window */
	uint32_t windows;	/* slow windows in a row to name a rank */
	uint32_t factor_pct;	/* slower than its peers by this, in % */
};

#define STRAGGLER_DEFAULT_WINDOW 8
#define STRAGGLER_DEFAULT_WINDOWS 3
#define STRAGGLER_DEFAULT_FACTOR_PCT 150
#define STRAGGLER_WINDOW_MAX 256
#define STRAGGLER_WINDOWS_MAX 1000
/* Findings kept per job for cohort show (the oldest go first). */
#define STRAGGLER_FOUND_MAX 16
/* Ranks of a job compared: the samples cost window × 4 bytes each. */
#define STRAGGLER_RANKS_MAX 65536

/* A rank's latest step time, as the agent of its node reports it. */
struct step_time_report {
	uint64_t job_id;
	uint32_t attempt;
	uint32_t rank;
	uint64_t step;
	uint32_t compute_ms;
};

/* A rank found slower than its peers. */
#define STRAGGLER_DUE_MAX 16	/* ranks one comparison names */

struct straggler_found {
	uint32_t rank;
	uint32_t attempt;
	char node[PEER_NAME_MAX + 1];
	uint32_t median_ms;	/* its median over the last window */
	uint32_t peers_ms;	/* the median of its peers' medians */
	uint32_t windows;	/* slow windows in a row */
	int64_t time_ms;
	bool replaced;		/* its node's ranks are being moved */
};

struct stragglers;

/* NULL (ENOMEM) or the table; o is copied, zeros become defaults. */
struct stragglers *straggler_create(const struct straggler_opts *o);
/* Accepts NULL. */
void straggler_destroy(struct stragglers *s);

/* The pure part, for the cluster and its tests: take one accepted
 * report of job (RUNNING, its current attempt). A report of a step the
 * rank already reported counts once. Fills *found and returns true when
 * this report completes a window that names ranks (each rank at most
 * once per attempt): the first; straggler_take gives the others. */
bool straggler_sample(struct stragglers *s, const struct job *job,
    uint32_t rank, uint64_t step, uint32_t compute_ms, int64_t now_ms,
    struct straggler_found *found);
/* The next rank the job's last comparison named and nobody took yet. */
bool straggler_take(struct stragglers *s, uint64_t job_id,
    struct straggler_found *found);

/* The reports of one heartbeat from the node on conn_id: judged like
 * every report (only the node holding that rank in the job's current
 * attempt; refused otherwise and counted as step_time), then sampled;
 * a straggler found is written as an event, counted and, with
 * --on-straggler=replace, moved. */
void straggler_reports(struct cluster *cl, uint64_t conn_id,
    const struct step_time_report *r, size_t n, int64_t now_ms);

/* Drop what is kept for jobs that are no longer active (their findings
 * stay while the job is in the table). */
void straggler_tick(struct cluster *cl, int64_t now_ms);

/* The findings for job_id, oldest first, borrowed until the next call
 * into this table; *n 0 when none. */
const struct straggler_found *straggler_list(const struct cluster *cl,
    uint64_t job_id, size_t *n);

#endif
