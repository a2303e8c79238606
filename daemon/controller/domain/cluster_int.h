/* Internals shared by the controller domain's orchestration files:
 * cluster.c (passes, registration, task outcomes, cancels, limits),
 * gang.c (launching, stopping and restarting gangs), recovery.c
 * (health, drains, checkpoints, hangs, elastic growth) and cluster_logs.c
 * (task logs through the agents). The call graph
 * has no cycle: cluster.c and recovery.c use gang.c; cluster.c uses
 * recovery.c's tick and growth; gang.c uses neither. */
#ifndef COHORT_CONTROLLER_CLUSTER_INT_H
#define COHORT_CONTROLLER_CLUSTER_INT_H

#include <sys/queue.h>
#include <stdbool.h>
#include <stdint.h>

#include "daemon/controller/domain/goodput.h"
#include "daemon/controller/domain/cluster.h"
#include "daemon/controller/domain/outbox.h"
#include "daemon/controller/domain/reports.h"

struct gang;
struct stopping;
struct step_job;
struct alloc_table;

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
	bool preempt;		/* preempted: back to PENDING, not moved */
	char cause[256];
	TAILQ_ENTRY(evac) entry;
};

/* A job waiting for the jobs it preempted to checkpoint and stop: it is
 * ordered first until it starts, or until the deadline passes (then it
 * may choose victims again). */
struct preemption {
	uint64_t job_id;
	int64_t deadline_ms;
	/* A pass has run since every victim let go of its allocation:
	 * if the job still did not start (a job of higher priority took
	 * the GPUs), the next pass lets it choose again. */
	bool victims_gone;
	size_t nvictims;
	uint64_t *victims;
	TAILQ_ENTRY(preemption) entry;
};

#define CLUSTER_RECOVERY_SAMPLES 1024
#define CLUSTER_GROW_MEMORY 32

struct cluster {
	struct jobs *js;
	struct nodes *ns;
	struct outbox out;
	struct cluster_opts o;
	bool dirty;		/* a pass is due */
	bool in_pass;		/* cluster_pass is running */
	TAILQ_HEAD(, gang) gangs;
	TAILQ_HEAD(, stopping) stopping;
	TAILQ_HEAD(, evac) evacs;
	TAILQ_HEAD(, preemption) preemptions;
	TAILQ_HEAD(, step_job) step_jobs;	/* steps.c */
	int64_t charged_ms;		/* fair share charged up to */
	struct cluster_stats stats;
	int64_t created_ms;		/* this controller's start */
	int64_t limits_ms;		/* time limits checked up to (mail) */
	struct reports reports;		/* refused agent reports */
	/* Searches of a gang's placement by node name left for the agent
	 * message being handled (cluster_reports_begin). */
	unsigned scans_left;
	/* The latest failure-to-running times, for quantiles. */
	uint64_t recovery_ms[CLUSTER_RECOVERY_SAMPLES];
	size_t nrecovery;
	/* Elastic growth already tried at this size with this many idle
	 * nodes (so a job that could not grow is not restarted again and
	 * again). */
	struct {
		uint64_t job_id;
		size_t nodes;
		size_t idle;
	} grown[CLUSTER_GROW_MEMORY];
	size_t ngrown;
	/* Node failures over a window, for checkpoint advice. */
	struct goodput_rates rates;
	struct stragglers *sg;		/* straggler.c */
	/* alloc.c: when interactive jobs' sallocs were last heard of. */
	struct alloc_table *allocs;
};

/* Something changed: a pass is due. During a pass the wish is kept and
 * asked for once the pass has ended (cluster_pass). */
static inline void
cluster_wake(struct cluster *cl)
{
	if (cl->dirty)
		return;
	cl->dirty = true;
	if (!cl->in_pass)
		cl->out.ops->pass_wanted(cl->out.ctx);
}

/* gang.c */
/* Launch a freshly allocated job on all its nodes; it waits (holding its
 * allocation) while tasks being stopped hold any of its GPUs. */
void gang_launch(struct cluster *cl, const struct job *job, int64_t now);
/* Has the launch of job's current attempt gone out (or is it older than
 * this controller)? */
bool gang_launch_sent(const struct cluster *cl, const struct job *job);
/* Stop every node's tasks of job's current attempt; their GPUs are held
 * for later launches until they are seen gone. */
void gang_stop(struct cluster *cl, const struct job *job, const char *reason,
    int64_t now);
/* Stop the gang and restart the job (jobs_fail_over). */
void gang_fail_over(struct cluster *cl, const struct job *job,
    const char *cause, bool counted, int64_t failure_ms, int64_t now);
/* Stop the gang and requeue the job PENDING (jobs_preempt). */
void gang_preempt(struct cluster *cl, const struct job *job,
    const char *cause, int64_t failure_ms, int64_t now);
/* Fail over every active job placed on node (all its GPUs), or only
 * those holding GPU gpu (gpu >= 0). -1 (ENOMEM) when the jobs could not
 * be listed: nothing was done. */
int gang_fail_over_node(struct cluster *cl, const char *node, int gpu,
    const char *cause, bool counted, int64_t now);
/* A task of (job, attempt) on node ended; or the node's full list of
 * running tasks (a heartbeat or registration): what is not in it is
 * gone; or the node is lost (DOWN). */
void gang_task_gone(struct cluster *cl, const char *node, uint64_t job_id,
    uint32_t attempt, int64_t now);
void gang_node_tasks(struct cluster *cl, const char *node,
    const struct task_report *tasks, size_t ntasks, int64_t now);
void gang_node_lost(struct cluster *cl, const char *node, int64_t now);
/* A task the controller does not want there, told to stop: it holds the
 * whole node for launches until it is gone. */
void gang_unwanted(struct cluster *cl, const char *node, uint64_t job_id,
    uint32_t attempt, int64_t now);
/* Tasks past stop_timeout drain their node; launches waiting for them
 * start over. */
void gang_tick(struct cluster *cl, int64_t now);
size_t gang_stopping_count(const struct cluster *cl);
void gang_destroy_all(struct cluster *cl);

/* recovery.c */
/* Grow a running elastic job whose size is below its maximum when whole
 * nodes stand idle and nothing waits: checkpoint, then restart bigger. */
void recovery_grow(struct cluster *cl, int64_t now);
void recovery_tick(struct cluster *cl, int64_t now);
void recovery_evac_destroy_all(struct cluster *cl);
/* Preempt job (cause: "Preempted by …"): its checkpoint signal, up to
 * grace_s for a newer LATEST, then gang_preempt. */
void recovery_preempt(struct cluster *cl, const struct job *job,
    const char *cause, uint32_t grace_s, int64_t now);
/* Move job (cause: "straggler: …") as drain --now does: its checkpoint
 * signal, then a restart once LATEST is newer (or at its SECS), not
 * counted; the node it must leave is set with jobs_avoid_node first. */
void recovery_replace(struct cluster *cl, const struct job *job,
    const char *cause, int64_t now);
/* Job's run failed early, its failing rank on node (not the hardware's
 * doing): when its previous run failed early on node too, the restart
 * leaves node out (jobs_avoid_node) if another node could take its
 * share; an event says which. Nothing is drained. */
void recovery_early_again(struct cluster *cl, const struct job *job,
    const char *node, unsigned rank, int64_t now);
/* need nodes that could each take node's share of the gang place[0 ..
 * n): up, connected, in service, healthy, not the gang's, with as many
 * free GPUs (a hot spare counts: that is what it is kept for). Topology
 * and constraints are the pass's to judge. (straggler.c) */
bool cluster_room_elsewhere(struct cluster *cl,
    const struct placement *place, size_t nplace, const char *node,
    unsigned need);
/* Is job being checkpointed to move or to be preempted? */
bool recovery_evacuating(const struct cluster *cl, uint64_t job_id);
/* The jobs being checkpointed, sorted, in a malloc'd array. 0 or -1. */
int recovery_evac_ids(const struct cluster *cl, uint64_t **ids, size_t *n);

/* cluster_suspect.c */
enum suspect_kind;
/* A hardware failure of kind on node: evidence, and a drain when it
 * crosses the node's threshold. */
void cluster_suspect_hw(struct cluster *cl, const char *node,
    enum suspect_kind kind, uint64_t job_id, const char *detail, int64_t now);
/* Would a task of job failing now be an early failure? */
bool cluster_suspect_early(const struct cluster *cl, const struct job *job,
    int64_t now);
/* A task of job on node ended, leaving the job in state after: an early
 * failure waits for the job to run fine elsewhere, a completion
 * confirms the failures before it, a job that ended otherwise clears
 * them. */
void cluster_suspect_exit(struct cluster *cl, const struct job *job,
    const char *node, bool early, enum job_state after, int64_t now);
/* Confirm the early failures of jobs now past the window elsewhere. */
void cluster_suspect_tick(struct cluster *cl, int64_t now);
/* An admin resumed node: its suspicion goes. */
void cluster_suspect_resumed(struct cluster *cl, const char *node,
    int64_t now);

/* preemption.c */
/* Preempt the victims the pass chose for pp->job_id. */
struct placement_preemption;
void preemption_apply(struct cluster *cl,
    const struct placement_preemption *pp, int64_t now);
/* The preemptors still waiting, sorted, in a malloc'd array. 0 or -1. */
int preemption_ids(const struct cluster *cl, uint64_t **ids, size_t *n);
/* Job started, ended or was cancelled: it waits for nothing now. */
void preemption_forget(struct cluster *cl, uint64_t job_id);
/* After a pass: preemptors whose victims are all gone and that did not
 * start in two passes since choose again. */
void preemption_after_pass(struct cluster *cl);
void preemption_tick(struct cluster *cl, int64_t now);
void preemption_destroy_all(struct cluster *cl);

#endif
