/* Internals shared by the files of the node's health (the public
 * contract is in health.h and health_parse.h), grouped by the file that
 * defines them:
 *
 *   health.c        the verdict: life, merging the check's result with
 *                   NVML's, telling the agent when it changes
 *   health_parse.c  pure: the check program's output into a verdict
 *   health_nvml.c   NVML: XID events and their policy, ECC, temperature
 *   health_check.c  running the check program on the event loop */
#ifndef COHORT_AGENT_HEALTH_INT_H
#define COHORT_AGENT_HEALTH_INT_H

#include <sys/time.h>
#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/agent/health.h"
#include "daemon/agent/nvml.h"
#include "lib/inventory.h"

#define HEALTH_OUT_MAX (64 * 1024)	/* stdout kept from one run */
#define HEALTH_XID_POLL_MS 1000		/* NVML events polled this often */
#define HEALTH_REAP_POLL_MS 100		/* exit checks without a pidfd */
#define HEALTH_XID_QUEUE 64		/* events kept for the heartbeat */
#define HEALTH_XID_BURST 64		/* events taken per poll */

struct event;

struct health {
	struct event_base *base;
	const struct agent_config *cfg;
	struct nvml *nv;
	unsigned ngpus;
	void (*changed)(const struct node_health *, void *);
	void *arg;

	/* The check program, one run at a time. */
	struct event *tick_ev;		/* every health_interval */
	struct event *out_ev;		/* its stdout is readable */
	struct event *exit_ev;		/* its pidfd, or a polling timer */
	struct event *kill_ev;		/* health_timeout */
	pid_t pid;			/* 0: not running */
	int pidfd;
	int outfd;
	bool out_eof;
	bool timed_out;
	char *out;
	size_t outlen;
	struct node_health prog;	/* its last verdict */

	/* NVML. */
	nvml_event_set_t set;		/* NULL: no XID events */
	struct event *xid_ev;
	unsigned ndev;
	nvml_device_t dev[INV_MAX_GPUS];
	unsigned xid_drain[INV_MAX_GPUS]; /* the XID that failed it, 0 */
	struct node_health nvh;		/* NVML's verdict */
	struct xid_event xq[HEALTH_XID_QUEUE];
	size_t nxq;

	struct node_health cur;		/* the two merged */
};

/* ---- health.c ---- */

/* cur = prog merged with nvh; tell the callback when it changed. */
void health_update(struct health *hl);

/* ms as a timeval, for libevent's timers. */
void health_ms_tv(uint64_t ms, struct timeval *tv);

/* ---- health_nvml.c ---- */

/* Handles and an event set for XIDs, where the library can (logged). */
void health_nvml_setup(struct health *hl);

/* Poll the XID event set on a timer, if there is one. 0, or -1. */
int health_nvml_watch(struct health *hl);

/* NVML's verdict into hl->nvh: drained XIDs, ECC counts and
 * temperatures. */
void health_nvml_read(struct health *hl);

/* Take what events NVML has, without waiting. true when a GPU was
 * drained. */
bool health_nvml_poll(struct health *hl);

/* ---- health_check.c ---- */

/* The timer that kills a run past health_timeout. 0, or -1. */
int health_check_init(struct health *hl);

/* Start a run on the event loop; its end updates the verdict. */
void health_check_start(struct health *hl);

/* Kill a run still going, and free what watches it. */
void health_check_stop(struct health *hl);

#endif
