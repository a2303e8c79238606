/* The Prometheus text exposition served at /metrics: counts of jobs,
 * nodes and GPUs, the scheduler's and the server's counters. Bounded
 * label sets only (states, reasons, queues), never a label per job or
 * per user. */
#ifndef COHORT_CONTROLLER_METRICS_H
#define COHORT_CONTROLLER_METRICS_H

struct evbuffer;
struct http_sources;
struct node;

/* What GPU g of n counts as in cohort_gpus, each GPU in exactly one:
 * "unavailable" (n DOWN: nothing known of it), "failed" (health FAILED,
 * even while a job still holds it), "allocated" (held by a job, also on
 * a draining node), "unavailable" (idle on a drained or draining node),
 * "spare" (idle on a hot spare), else "free". A static string; for the
 * status page too, so that both show the same thing. */
const char *metrics_gpu_state(const struct node *n, unsigned g);

/* Append the exposition to b. 0, or -1 (ENOMEM). */
int metrics_render(const struct http_sources *src, struct evbuffer *b);

#endif
