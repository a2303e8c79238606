/* Pure functions over a node's health (lib/inventory.h): parsing one
 * run of the check program, and the few steps the verdict merges with.
 * No I/O, no clock, no allocation: the fuzz target links this alone. */
#ifndef COHORT_AGENT_HEALTH_PARSE_H
#define COHORT_AGENT_HEALTH_PARSE_H

#include <stddef.h>

#include "lib/inventory.h"

/* Parse one run of the check program: its stdout and wait status, for a
 * node with ngpus GPUs, into h (pure). A non-zero exit without a FAILED
 * line makes the node FAILED with the exit status as the reason; lines
 * that do not parse are reported in h->reason, not ignored. 0, or -1
 * (EINVAL) only for impossible arguments. */
int health_parse(const char *out, size_t len, int wait_status,
    unsigned ngpus, struct node_health *h);

/* The entry of GPU idx in h, added (OK) when missing; NULL when h
 * already lists INV_MAX_GPUS. */
struct gpu_health *health_parse_gpu(struct node_health *h, unsigned idx);

/* *cur becomes h with reason r (rlen bytes, cut to fit) when h is
 * worse; on a tie the first reason stays. */
void health_parse_worse(enum health_state *cur, char *reason,
    enum health_state h, const char *r, size_t rlen);

/* Keep only the GPUs that are not OK, sorted by index. */
void health_parse_tidy(struct node_health *h);

#endif
