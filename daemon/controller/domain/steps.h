/* Job steps: srun inside a running job's allocation. A step
 * is a set of tasks on some of the job's nodes, with some of its GPUs,
 * started by the agents of those nodes under the job's current attempt.
 * Steps without --overlap never share a GPU; --exclusive steps share no
 * node. A step that does not fit beside the running ones now is refused
 * with ERR_BUSY (srun retries), one that never could with ERR_INVALID.
 *
 * Domain code (no clock, no event loop, no protobuf): steps live in
 * memory while their job's attempt runs, and each is recorded in the
 * store when it starts and when it ends (sacct's J.S rows). A job whose
 * attempt ends (completed, failed, cancelled, failed over) ends its
 * running steps with it; its agents stop their tasks with the job's. */
#ifndef COHORT_CONTROLLER_STEPS_H
#define COHORT_CONTROLLER_STEPS_H

#include <sys/queue.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/job.h"

struct cluster;
struct node;

/* Running steps of one job at once; srun beyond it waits (ERR_BUSY). */
#define STEPS_RUNNING_MAX 64
/* Ended steps kept in memory per job (the store keeps all of them). */
#define STEPS_ENDED_KEPT 128
/* Tasks of one step: as a job's. */
#define STEPS_TASKS_MAX (JOB_TASKS_PER_NODE_LIMIT * 64)

/* What srun asks for (StepCreateRequest), strings borrowed. */
struct step_req {
	uint64_t job_id;
	const char *name;		/* NULL: argv[0]'s base name */
	char *const *argv;
	size_t argc;
	char *const *env;
	size_t nenv;
	const char *workdir;		/* NULL: the job's */
	uint32_t nodes;			/* -N; 0: as the tasks need */
	uint32_t ntasks;		/* -n; 0: per node x nodes */
	uint32_t ntasks_per_node;	/* 0: the job's, or -n spread */
	const char *nodelist;		/* -w hostlist or NULL */
	const char *exclude;		/* -x hostlist or NULL */
	uint32_t cpus_per_task;
	uint32_t gpus_per_task;
	uint32_t gpus_per_node;
	uint32_t gpus;			/* -G, in all */
	bool no_gpus;
	bool overlap;
	bool exclusive;
	bool kill_on_bad_exit;
	bool input;			/* srun forwards its input to task 0 */
	bool pty;			/* task 0 on a pseudo-terminal */
	uint16_t rows, cols;		/* its window at the start */
	struct job_container ctr;	/* srun --container-* (borrowed);
					 * image NULL: the job's */
};

/* One node of a step: the job's placement index, its tasks and GPUs. */
struct step_node {
	unsigned place;			/* index into job->place */
	unsigned ntasks;
	unsigned first_rank;
	unsigned ngpus;
	unsigned gpus[PLACE_MAX_GPUS];	/* node-local indices */
};

struct step {
	uint64_t job_id;
	uint32_t attempt;
	uint32_t id;			/* Slurm's: 0, 1, ... per attempt */
	char *name;
	char *user;
	enum job_state state;		/* RUNNING, COMPLETED, FAILED,
					 * CANCELLED */
	bool node_fail;
	char reason[200];
	int64_t start_ms, end_ms;
	struct step_node *nodes;
	size_t nnodes;
	char **nodenames;		/* the step's nodes, in order */
	unsigned ntasks;
	unsigned ndone;
	int *status;			/* by rank: -1 running, else the
					 * wait status */
	bool has_exit;
	int32_t exit_code;		/* the highest; 128+N for signal N */
	unsigned gpus;			/* in all */
	bool overlap, exclusive, kill_on_bad_exit;
	bool stopping;			/* -K has stopped its tasks */
	bool input;			/* task 0 reads srun's input (its
					 * agent's pipe), else /dev/null */
	bool pty;			/* task 0 on a pseudo-terminal */
	uint16_t rows, cols;
	int64_t seen_ms;		/* a client last asked about it */
	/* For the launches, freed when the step ends. */
	char **argv;
	size_t argc;
	char **env;
	size_t nenv;
	char *workdir;
	struct job_container ctr;	/* the step's own image, or none */
	uint32_t gpus_per_task, cpus_per_task;
	unsigned master_port;
	unsigned launches_out;		/* answers still awaited */
	TAILQ_ENTRY(step) entry;
};

/* Start a step for who, the job's owner (the caller checked the step
 * credential). 0 with *out (valid until the next call that changes
 * steps), or -1 with err: ERR_NOT_FOUND, ERR_DENIED, ERR_CONFLICT (the
 * job does not run), ERR_INVALID (it never fits), ERR_BUSY (not now),
 * ERR_LIMIT (too many running). */
int steps_create(struct cluster *cl, const struct peer *who,
    const struct step_req *r, int64_t now_ms, const struct step **out,
    struct cerr *err);

/* A step of the job's current attempt still in memory, or NULL. */
const struct step *steps_get(const struct cluster *cl, uint64_t job_id,
    uint32_t step_id);

/* Who may see or signal the job's steps: its owner and admins. 0, or -1
 * with err (ERR_NOT_FOUND, ERR_DENIED). */
int steps_may(const struct cluster *cl, const struct peer *who,
    uint64_t job_id, struct cerr *err);

/* Signal a running step's tasks; SIGKILL ends it (CANCELLED) and stops
 * them. ERR_CONFLICT when it has ended. */
int steps_signal(struct cluster *cl, const struct peer *who, uint64_t job_id,
    uint32_t step_id, int sig, int64_t now_ms, struct cerr *err);

/* An agent's report of a step task (r->step != JOB_STEP_NONE) on n. For
 * an exit: 0 when recorded or stale (acknowledge it), -1 with err
 * (ERR_DENIED: n does not hold that task). */
int steps_task_exit(struct cluster *cl, struct node *n,
    const struct task_report *r, int64_t now_ms, struct cerr *err);
/* For a running one: whether it is wanted there (else the caller stops
 * that step on n). */
bool steps_task_wanted(const struct cluster *cl, const struct node *n,
    const struct task_report *r);

/* The job's attempt ends (its gang is being stopped): its running steps
 * end too, as NODE_FAIL (node_fail) or CANCELLED, and are recorded. */
void steps_job_ending(struct cluster *cl, const struct job *job,
    bool node_fail, const char *reason, int64_t now_ms);
/* A node failed under the job: its running steps on that node end as
 * NODE_FAIL. */
void steps_node_failed(struct cluster *cl, const struct job *job,
    const char *node, const char *cause, int64_t now_ms);
/* Running steps of the job's current attempt. */
size_t steps_running(const struct cluster *cl, uint64_t job_id);

/* The node that holds task rank of a step (for its log): 0 with *node
 * (borrowed), or -1 with err. */
int steps_task_node(const struct cluster *cl, uint64_t job_id,
    uint32_t step_id, unsigned rank, const char **node, struct cerr *err);

/* [controller] interactive_idle's default. */
#define STEPS_IDLE_DEFAULT_MS (10 * 60 * 1000)
/* A client asked about the step (srun's rounds, cohort attach's): a
 * --pty step is an interactive session, ended once no one has asked
 * for interactive_idle (steps_tick). */
void steps_heard(struct cluster *cl, uint64_t job_id, uint32_t step_id,
    int64_t now_ms);
/* End the --pty steps no one has asked about for interactive_idle:
 * CANCELLED, their tasks stopped. */
void steps_tick(struct cluster *cl, int64_t now_ms);
/* Steps running now, and how many of them are --pty sessions. */
void steps_counts(const struct cluster *cl, size_t *running,
    size_t *sessions);

/* Free every step (the cluster's destroy). */
void steps_destroy_all(struct cluster *cl);

#endif
