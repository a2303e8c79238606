/* Internals shared by cluster.c (scheduling, launching, task outcomes)
 * and recovery.c (health, drains, restarts, checkpoints, hangs). */
#ifndef COHORT_CONTROLLER_CLUSTER_INT_H
#define COHORT_CONTROLLER_CLUSTER_INT_H

#include <sys/queue.h>
#include <stdbool.h>
#include <stdint.h>

#include "cluster.h"
#include "reports.h"

struct gang;

/* A job being checkpointed before it moves (drain --now, a DEGRADED
 * node, growing an elastic job): it stops and restarts once LATEST
 * shows a newer checkpoint, or at the deadline. */
struct evac {
	uint64_t job_id;
	uint32_t attempt;
	int64_t failure_ms;	/* when the move was decided */
	int64_t deadline_ms;
	bool had_ckpt;
	uint64_t step_before;
	char cause[256];
	TAILQ_ENTRY(evac) entry;
};

#define CLUSTER_RECOVERY_SAMPLES 1024
#define CLUSTER_GROW_MEMORY 32

struct cluster {
	struct event_base *base;
	struct jobs *js;
	struct nodes *ns;
	struct agentcmd *ac;
	struct cluster_opts o;
	struct event *pass_ev;
	struct event *tick_ev;
	struct event *check_ev;		/* the tick's work, a round later */
	bool dirty;		/* a pass is due (pass_ev active or timed) */
	bool in_pass;		/* cluster_pass is running */
	uint64_t pass_end_us;	/* when the latest pass ended (monotonic) */
	TAILQ_HEAD(, gang) gangs;
	TAILQ_HEAD(, evac) evacs;
	struct cluster_stats stats;
	struct reports reports;		/* refused agent reports */
	/* Searches of a gang's placement by node name left for the agent
	 * message being handled (cluster_reports_begin). */
	unsigned scans_left;
	/* The latest failure-to-running times, for quantiles. */
	uint64_t recovery_ms[CLUSTER_RECOVERY_SAMPLES];
	size_t nrecovery;
	/* Elastic growth already tried with this many idle nodes (so a
	 * job that could not grow is not restarted again and again). */
	struct {
		uint64_t job_id;
		size_t idle;
	} grown[CLUSTER_GROW_MEMORY];
	size_t ngrown;
};

/* Stop every node's tasks of job's current attempt. */
void cluster_stop_gang(struct cluster *cl, const struct job *job,
    const char *reason);
/* Stop the gang and restart the job (jobs_fail_over). */
void cluster_fail_over(struct cluster *cl, const struct job *job,
    const char *cause, bool counted, int64_t failure_ms);
/* Fail over every active job placed on node (all its GPUs), or only
 * those holding GPU gpu (gpu >= 0). */
void cluster_fail_over_node(struct cluster *cl, const char *node, int gpu,
    const char *cause, bool counted);

/* recovery.c */
/* Grow a running elastic job whose size is below its maximum when whole
 * nodes stand idle and nothing waits: checkpoint, then restart bigger. */
void recovery_grow(struct cluster *cl);
void recovery_tick(struct cluster *cl, int64_t now);
void recovery_evac_destroy_all(struct cluster *cl);
/* A job reached RUNNING: record its failure-to-running time. */
void recovery_job_running(struct cluster *cl, const struct job *job);

#endif
