/* Fixed-bound histograms for the Prometheus exposition (histogram.h). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lib/histogram.h"

#define HISTOGRAM_LINE_MAX 512

const double HISTOGRAM_LATENCY[] = {
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10,
};
const size_t HISTOGRAM_LATENCY_N =
    sizeof(HISTOGRAM_LATENCY) / sizeof(HISTOGRAM_LATENCY[0]);

int
histogram_init(struct histogram *h, const double *bounds, size_t n)
{
	size_t i;

	if (bounds == NULL || n == 0 || n > HISTOGRAM_MAX_BOUNDS) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < n; i++)
		if (!isfinite(bounds[i]) ||
		    (i > 0 && bounds[i] <= bounds[i - 1])) {
			errno = EINVAL;
			return -1;
		}
	memset(h, 0, sizeof(*h));
	h->bounds = bounds;
	h->nbounds = n;
	return 0;
}

size_t
histogram_nbounds(const struct histogram *h)
{
	return h->bounds != NULL ? h->nbounds : HISTOGRAM_LATENCY_N;
}

double
histogram_bound(const struct histogram *h, size_t i)
{
	return h->bounds != NULL ? h->bounds[i] : HISTOGRAM_LATENCY[i];
}

void
histogram_observe(struct histogram *h, double v)
{
	size_t i, n = histogram_nbounds(h);

	if (isnan(v))
		return;
	if (v < 0)
		v = 0;
	/* Few bounds: a linear scan is as fast as a bisection. le is
	 * "less or equal": a value on a bound belongs to that bucket. */
	for (i = 0; i < n && v > histogram_bound(h, i); i++)
		;
	h->counts[i]++;
	h->count++;
	h->sum += v;
}

uint64_t
histogram_cumulative(const struct histogram *h, size_t i)
{
	uint64_t c = 0;
	size_t k, n = histogram_nbounds(h);

	if (i >= n)
		return h->count;
	for (k = 0; k <= i; k++)
		c += h->counts[k];
	return c;
}

int
histogram_merge(struct histogram *a, const struct histogram *b)
{
	size_t i, n = histogram_nbounds(a);

	if (histogram_nbounds(b) != n) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < n; i++)
		if (histogram_bound(a, i) != histogram_bound(b, i)) {
			errno = EINVAL;
			return -1;
		}
	for (i = 0; i <= n; i++)
		a->counts[i] += b->counts[i];
	a->count += b->count;
	a->sum += b->sum;
	return 0;
}

int
histogram_lines(const struct histogram *h, const char *name,
    const char *labels, void (*line)(void *arg, const char *text), void *arg)
{
	char text[HISTOGRAM_LINE_MAX];
	const char *sep = labels[0] != '\0' ? "," : "";
	size_t i, n = histogram_nbounds(h);

	/* The longest line is the +Inf bucket's or a bound's; both are
	 * bounded by the name, the labels and 40 bytes of numbers. */
	if (strlen(name) + strlen(labels) + 64 > sizeof(text)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (i = 0; i <= n; i++) {
		/* %.15g: the shortest text that reads back as the bound
		 * (0.00025, not 0.00025000000000000001), the same label
		 * on every scrape. */
		if (i < n)
			snprintf(text, sizeof(text),
			    "%s_bucket{%s%sle=\"%.15g\"} %llu", name, labels,
			    sep, histogram_bound(h, i),
			    (unsigned long long)histogram_cumulative(h, i));
		else
			snprintf(text, sizeof(text),
			    "%s_bucket{%s%sle=\"+Inf\"} %llu", name, labels,
			    sep, (unsigned long long)h->count);
		line(arg, text);
	}
	if (labels[0] != '\0') {
		snprintf(text, sizeof(text), "%s_sum{%s} %.6f", name, labels,
		    h->sum);
		line(arg, text);
		snprintf(text, sizeof(text), "%s_count{%s} %llu", name, labels,
		    (unsigned long long)h->count);
	} else {
		snprintf(text, sizeof(text), "%s_sum %.6f", name, h->sum);
		line(arg, text);
		snprintf(text, sizeof(text), "%s_count %llu", name,
		    (unsigned long long)h->count);
	}
	line(arg, text);
	return 0;
}
