/* The controller's orchestration: scheduling passes, launching a gang on
 * its nodes all or nothing, following task exits to the job's outcome,
 * stopping gangs (failure, cancel, time limit, node down), reconciling
 * what agents report after either side restarts, and fetching task logs.
 * Domain code: no clock, no event loop, no protobuf. Time comes in as
 * `now` with every call; the event layer (driver.c) calls cluster_pass
 * when the domain asks for one and cluster_tick on a timer; commands go
 * out through an outbox (outbox.h). Fault recovery is in recovery.h. */
#ifndef COHORT_CONTROLLER_CLUSTER_H
#define COHORT_CONTROLLER_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/controller/domain/outbox.h"
#include "lib/err.h"
#include "lib/inventory.h"
#include "lib/job.h"
#include "daemon/controller/domain/reports.h"
#include "daemon/controller/domain/straggler.h"

struct jobs;
struct nodes;
struct txq;
struct cluster;

struct topo;
struct queues;

struct cluster_opts {
	const struct topo *topo;	/* NULL: one flat domain */
	int64_t node_timeout_ms;	/* heartbeats missed → DOWN */
	uint32_t heartbeat_ms;		/* told to agents */
	uint64_t default_limit_s;	/* for jobs without --time */
	/* Tasks told to stop that are still there after this long drain
	 * their node (their GPUs are held meanwhile). */
	int64_t stop_timeout_ms;
	int queue_order;		/* enum sched_order */
	uint32_t queue_aging;		/* thousandths */
	/* Nodes allowed to register besides those in topo: sorted by
	 * strcmp, borrowed (NULL when none); or any name at all. */
	const char *const *known_nodes;
	size_t nknown_nodes;
	bool accept_unknown_nodes;
	/* The queue tree (queues.h), borrowed; NULL: one unlimited queue.
	 * Fair-share usage is charged to it as jobs run. */
	struct queues *queues;
	int64_t starve_s;		/* sched_config.starve_s */
	uint32_t starve_min_gpus;	/* sched_config.starve_min_gpus */
	/* Failures attributed to nodes (suspect.h), borrowed; NULL: none
	 * kept, no node drained for them. */
	struct suspect *suspect;
	struct straggler_opts straggler;	/* [straggler] */
	/* An interactive job's salloc unheard of this long ends it
	 * (alloc.h); 0: ALLOC_GRACE_DEFAULT_MS. */
	int64_t interactive_grace_ms;
	/* A --pty step no client has asked about this long (srun's and
	 * cohort attach's polls) ends (steps.h); 0: STEPS_IDLE_DEFAULT_MS. */
	int64_t interactive_idle_ms;
};

/* Jobs caught launching by a controller restart start over. out is
 * copied; its ops must outlive the cluster. */
struct cluster *cluster_create(struct jobs *js, struct nodes *ns,
    const struct outbox *out, const struct cluster_opts *o, int64_t now_ms,
    struct cerr *err);
/* Frees what is in flight; accepts NULL. */
void cluster_destroy(struct cluster *cl);

/* Something changed (a submit, an end, a node): a pass is due, asked for
 * through the outbox's pass_wanted once until cluster_pass runs. */
void cluster_changed(struct cluster *cl);
/* A scheduling pass: place what waits, launch what was placed. When the
 * pass itself changed something, pass_wanted is asked again. */
void cluster_pass(struct cluster *cl, int64_t now_ms);
/* Time passed (every tick_ms or so): node timeouts, time limits,
 * evacuation deadlines, hangs, tasks that would not stop. */
void cluster_tick(struct cluster *cl, int64_t now_ms);

/* An agent message begins: what judging its reports may search is
 * bounded per message (REPORTS_SCANS_MAX). */
void cluster_reports_begin(struct cluster *cl);
/* May node name register (in the topology, in the nodes list, or any
 * name with accept_unknown_nodes)? */
bool cluster_node_known(const struct cluster *cl, const char *name);
/* The same, refused (ERR_DENIED), counted and logged when it may not. */
int cluster_check_node(struct cluster *cl, const char *name, int64_t now_ms,
    struct cerr *err);
/* A message from node (ngpus GPUs) whose longest list holds longest
 * entries: 0, or -1 with ERR_LIMIT when the node could not hold that
 * many tasks (refused, counted and logged). */
int cluster_check_lists(struct cluster *cl, const char *node, unsigned ngpus,
    size_t longest, int64_t now_ms, struct cerr *err);
/* An agent registered on conn_id, reporting the tasks it supervises.
 * ERR_DENIED for a node that is not known; ERR_LIMIT for more tasks than
 * it could hold. */
int cluster_register(struct cluster *cl, uint64_t conn_id, const char *name,
    const char *address, const struct inventory *inv, bool spare,
    const struct task_report *tasks, size_t ntasks, int64_t now_ms,
    struct cerr *err);
/* A heartbeat; ended tasks in it are handled as exits. */
void cluster_heartbeat(struct cluster *cl, uint64_t conn_id,
    const struct task_report *tasks, size_t ntasks, int64_t now_ms);
/* A task ended. 0 when recorded or when there is nothing to record (an
 * old attempt, an ended or unknown job): the caller acknowledges it after
 * the commit. -1 with err: ERR_DENIED when the reporting node does not
 * hold that rank of the job's current attempt (nothing changes). */
int cluster_task_exit(struct cluster *cl, uint64_t conn_id,
    const struct task_report *r, int64_t now_ms, struct cerr *err);
/* Cancel a job for who (owner or admin), stopping its gang if it runs. */
int cluster_cancel(struct cluster *cl, const struct peer *who, uint64_t id,
    int64_t now_ms, enum job_state *state, struct cerr *err);
/* cohort requeue: a running job (jobs_requeue says who may) is
 * checkpointed and stopped as a preemption is, and goes back to PENDING
 * to resume from its checkpoint, its restarts untouched. ERR_CONFLICT
 * also when it is already being checkpointed to move. */
int cluster_requeue(struct cluster *cl, const struct peer *who, uint64_t id,
    int64_t now_ms, struct cerr *err);
/* Cancel every unfinished task of array array_id for who
 * (jobs_array_cancel), stopping the gangs of those that run. 0 with
 * *ncancelled, or -1 with err. */
int cluster_cancel_array(struct cluster *cl, const struct peer *who,
    uint64_t array_id, int64_t now_ms, size_t *ncancelled, struct cerr *err);
/* The agent's connection closed (its commands fail in agentcmd). */
void cluster_conn_closed(struct cluster *cl, uint64_t conn_id);

/* A read of a task's log (cohort logs), in cluster_logs.c. */
struct log_read {
	uint64_t job_id;
	unsigned rank;
	uint32_t attempt;	/* launch attempt; 0: the latest. Set to the
				 * attempt read. */
	bool is_stderr;		/* the stderr stream, else stdout */
	bool has_step;		/* task rank of job step `step` */
	uint32_t step;
	uint64_t offset;
	uint32_t max;
	char node[PEER_NAME_MAX + 1];	/* set to the node asked */
};

/* Read a task's log through the agent of the node that holds the rank
 * (an earlier attempt's too: it is asked of the node that holds the
 * rank now, where it is, unless the restart moved the rank). cb runs
 * later (or not at all if this returns -1 with err). A stream the job
 * writes to a file (-o/-e) is not in the spool: ERR_NOT_FOUND, with err
 * saying which file on which node. */
int cluster_read_log(struct cluster *cl, struct log_read *r, int64_t now_ms,
    outbox_log_done cb, void *arg, struct cerr *err);
/* srun's input for task 0 of a running step of the job's current run,
 * created with input: bytes offset.. of it, written by the agent of
 * task 0's node (len at most 64 KiB; eof: the input ends after them).
 * cb runs later with the bytes taken (or not at all if this returns -1
 * with err: ERR_NOT_FOUND, ERR_CONFLICT when the step does not run or
 * reads no input, ERR_UNAVAILABLE when the node cannot be reached).
 * The caller checked who may. */
int cluster_step_input(struct cluster *cl, uint64_t job_id, uint32_t step,
    const struct step_input *in, int64_t now_ms, outbox_input_done cb,
    void *arg, struct cerr *err);
/* Admin: remove a DOWN node that no job holds (ERR_CONFLICT otherwise),
 * from memory and from the store. */
int cluster_delete_node(struct cluster *cl, const struct peer *who,
    const char *node, int64_t now_ms, struct cerr *err);

/* Counters for metrics and tests. */
struct cluster_stats {
	unsigned long passes;
	unsigned long started;
	unsigned long backfilled;
	unsigned long failures;		/* failures detected */
	unsigned long restarts;		/* jobs running again after one */
	uint64_t recovery_ms_sum;	/* failure → running again */
	uint64_t recovery_ms_p50;
	uint64_t recovery_ms_p99;
	uint64_t lost_work_ms;		/* summed over failures */
	unsigned long preemptions;	/* jobs preempted for others */
	uint64_t preempt_lost_ms;	/* work those lost */
	unsigned long reports_rejected[REPORT_KINDS];	/* by kind */
	unsigned long stragglers;	/* ranks named slower than peers */
	size_t steps_running;		/* job steps running now */
	size_t sessions;		/* of them, --pty ones */
	unsigned long sessions_idle_ended;	/* ended for silence */
	uint64_t input_bytes;		/* offered to tasks' inputs */
	size_t stopping;	/* (node, job, attempt) still to stop */
};
void cluster_stats(const struct cluster *cl, struct cluster_stats *st);
/* For the status page: the topology the cluster was created with
 * (borrowed; NULL: none), and when it was created (the controller's
 * start). */
const struct topo *cluster_topo(const struct cluster *cl);
/* cluster_opts.suspect (borrowed; NULL: none), in cluster_suspect.c. */
struct suspect *cluster_suspect(const struct cluster *cl);
int64_t cluster_started_ms(const struct cluster *cl);

#endif
