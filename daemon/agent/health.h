/* The node's health as the agent sees it (docs/SPEC.md, "Health"): the
 * configured check program, run every health_interval in the NHC
 * convention (exit 0 healthy; stdout lines "gpu N OK|DEGRADED|FAILED
 * [key=value …]" and "node OK|DEGRADED|FAILED reason…"; a program that
 * hangs is killed after health_timeout and counts as a failed check), and
 * where NVML is loaded: XID events mapped to an action by the XID policy,
 * ECC error counts and temperatures. Runs on the agent's event loop; the
 * program is a child process watched with a pidfd and a timer.
 *
 * The functions below are grouped by the file that defines them; the
 * pure parser is in health_parse.h, the files' shared internals in
 * health_int.h. */
#ifndef COHORT_AGENT_HEALTH_H
#define COHORT_AGENT_HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/inventory.h"

struct event_base;
struct agent_config;
struct nvml;
struct health;

enum xid_action {
	XID_IGNORE = 0,
	XID_FAIL_JOB,		/* the job on that GPU restarts */
	XID_DRAIN,		/* the GPU is FAILED, the node drained */
};

struct xid_event {
	unsigned gpu;
	unsigned xid;
	enum xid_action action;
	int64_t time_ms;
};

/* ---- health.c: the verdict ---- */

/* changed(h, arg) runs whenever the verdict changes. nv may be NULL (no
 * NVML). cfg and nv are borrowed. */
struct health *health_create(struct event_base *base,
    const struct agent_config *cfg, struct nvml *nv, unsigned ngpus,
    void (*changed)(const struct node_health *h, void *arg), void *arg,
    struct cerr *err);
void health_destroy(struct health *hl);

/* The current verdict (borrowed). */
const struct node_health *health_current(const struct health *hl);

/* ---- health_nvml.c ---- */

/* The action the policy gives an XID code (defaults from NVIDIA's XID
 * catalogue, overridden by the agent config's [xid] section). */
enum xid_action health_nvml_xid_action(const struct agent_config *cfg,
    unsigned xid);

/* Move up to max XID events not yet reported into out; returns how many
 * (fail-job and drain events only; ignored ones are only logged). */
size_t health_nvml_take_xids(struct health *hl, struct xid_event *out,
    size_t max);

/* ---- health_check.c ---- */

/* Run the check once, synchronously, bounded by health_timeout: the
 * agent does this before it registers. */
void health_check_now(struct health *hl);

#endif
