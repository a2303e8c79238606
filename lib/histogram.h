/* A Prometheus histogram with fixed bucket bounds: cumulative counts per
 * upper bound (le), a sum and a count. Pure: no clock, no I/O; the
 * caller observes values (seconds) and renders the exposition lines
 * through a callback. A zero-initialised histogram is empty and uses
 * HISTOGRAM_LATENCY, so one can sit in a zeroed struct. */
#ifndef COHORT_HISTOGRAM_H
#define COHORT_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

/* Most finite bounds a histogram may have (+Inf comes on top). */
#define HISTOGRAM_MAX_BOUNDS 24

struct histogram {
	const double *bounds;	/* strictly increasing; NULL: the default */
	size_t nbounds;
	/* counts[i]: observations <= bounds[i] and > bounds[i-1];
	 * counts[nbounds]: those above every bound. Not cumulative. */
	uint64_t counts[HISTOGRAM_MAX_BOUNDS + 1];
	double sum;
	uint64_t count;
};

/* The default bounds, in seconds: 100 us to 10 s, roughly 1-2.5-5. */
extern const double HISTOGRAM_LATENCY[];
extern const size_t HISTOGRAM_LATENCY_N;

/* An empty histogram with these bounds (borrowed: they must outlive it).
 * 0, or -1 with errno EINVAL (none, more than HISTOGRAM_MAX_BOUNDS, not
 * finite or not strictly increasing); h is then unchanged. */
int histogram_init(struct histogram *h, const double *bounds, size_t n);
/* Count one value. NaN is ignored; a negative value (a clock that went
 * back) counts as 0, so that the sum never decreases. */
void histogram_observe(struct histogram *h, double v);
/* Finite bounds in use (the default when none were given). */
size_t histogram_nbounds(const struct histogram *h);
double histogram_bound(const struct histogram *h, size_t i);
/* Observations <= bound i; i == histogram_nbounds: all (le="+Inf"). */
uint64_t histogram_cumulative(const struct histogram *h, size_t i);
/* Add b's counts to a (same bounds). 0, or -1 with errno EINVAL. */
int histogram_merge(struct histogram *a, const struct histogram *b);

/* Emit the _bucket, _sum and _count lines of name (without "\n"), each
 * through line(arg, text). labels: "" or `k="v",...` (already escaped),
 * put before le. 0, or -1 with errno ENAMETOOLONG when a line would not
 * fit in 512 bytes (nothing emitted then). */
int histogram_lines(const struct histogram *h, const char *name,
    const char *labels, void (*line)(void *arg, const char *text), void *arg);

#endif
