/* A log-line budget: at most a burst of lines per window, the rest
 * counted so that the next line allowed can say how many were left out.
 * Pure (the caller passes the time), for logs about refused input that
 * a peer could otherwise make as long as it likes. */
#ifndef COHORT_RATELIM_H
#define COHORT_RATELIM_H

#include <stdbool.h>
#include <stdint.h>

struct ratelim {
	int64_t start_ms;		/* the current window's start */
	unsigned used;			/* lines allowed in it */
	unsigned long suppressed;	/* lines left out since the last one
					 * allowed */
};

/* Zero-initialised is a fresh budget. */
#define RATELIM_INIT { 0, 0, 0 }

/* May a line be logged at now_ms, with burst lines per window_ms? When
 * it may, *suppressed (if not NULL) receives how many were left out
 * since the last allowed line, and the count restarts; when it may not,
 * the line is counted as left out. */
bool ratelim_allow(struct ratelim *rl, int64_t now_ms, unsigned burst,
    int64_t window_ms, unsigned long *suppressed);

#endif
