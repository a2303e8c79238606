/* The Prometheus text exposition served at /metrics: counts of jobs,
 * nodes and GPUs, the scheduler's and the server's counters. Bounded
 * label sets only (states, reasons, queues), never a label per job or
 * per user. */
#ifndef COHORT_CONTROLLER_METRICS_H
#define COHORT_CONTROLLER_METRICS_H

struct evbuffer;
struct http_sources;

/* Append the exposition to b. 0, or -1 (ENOMEM). */
int metrics_render(const struct http_sources *src, struct evbuffer *b);

#endif
